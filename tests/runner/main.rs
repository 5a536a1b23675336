//! The runner end to end: the command line on the L2 program (subcommands,
//! sources, JSON, traces, pictures, errors and exit codes), its engines
//! (sequential, parallel, pipelined) and the example programs.
#![cfg(feature = "runner")]

#[allow(dead_code)]
#[path = "../../examples/audio_levels.rs"]
mod audio_levels;
#[allow(dead_code)]
#[path = "../../examples/buffers_and_parallel.rs"]
mod buffers_and_parallel;
#[allow(dead_code)]
#[path = "../../examples/custom_kernel.rs"]
mod custom_kernel;
#[allow(dead_code)]
#[path = "../../examples/depth_fusion.rs"]
mod depth_fusion;
#[allow(dead_code)]
#[path = "../../examples/first.rs"]
mod first;
#[allow(dead_code)]
#[path = "../../examples/l2.rs"]
mod l2;
#[allow(dead_code)]
#[path = "../../examples/runner.rs"]
mod runner_example;
#[allow(dead_code)]
#[path = "../../examples/state_and_modes.rs"]
mod state_and_modes;

mod support;

mod cli;
mod engine;
mod examples;
mod graph_file;
mod graph_options;
#[cfg(feature = "mqtt")]
mod publish;
#[cfg(feature = "ffmpeg")]
mod reconnect;
mod streams;
