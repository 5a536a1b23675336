//! The runner end to end: the command line on the L2 program (subcommands,
//! sources, JSON, traces, pictures, errors and exit codes), its engines
//! (sequential, parallel, pipelined) and the example programs.
#![cfg(feature = "runner")]

#[path = "../../examples/audio_levels.rs"]
mod audio_levels;
#[path = "../../examples/depth_fusion.rs"]
mod depth_fusion;
#[path = "../../examples/doc_capture.rs"]
mod doc_capture;
#[path = "../../examples/l2.rs"]
mod l2;
#[path = "../../examples/motion_alarm.rs"]
mod motion_alarm;

mod support;

mod cli;
mod engine;
mod examples;
