//! The runner end to end: the command line on the L2 program (subcommands,
//! sources, JSON, traces, pictures, errors and exit codes), its engines
//! (sequential, parallel, pipelined) and the example programs.
#![cfg(feature = "runner")]

#[allow(dead_code)]
#[path = "../../examples/audio_levels.rs"]
mod audio_levels;
#[allow(dead_code)]
#[path = "../../examples/depth_fusion.rs"]
mod depth_fusion;
#[allow(dead_code)]
#[path = "../../examples/doc_capture.rs"]
mod doc_capture;
#[allow(dead_code)]
#[path = "../../examples/l2.rs"]
mod l2;
#[allow(dead_code)]
#[path = "../../examples/motion_alarm.rs"]
mod motion_alarm;

mod support;

mod cli;
mod engine;
mod examples;
