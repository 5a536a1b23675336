//! A command-line program for any pipeline: frames in from a source
//! ([`crate::sources`]), per-frame results out as a table, JSON lines, a
//! Chrome trace or pictures, plus the graph, plan and profile tools.
//!
//! A pipeline becomes a program with a record function (which outputs to
//! show) and, for pipelines whose inputs are not just the frame, a
//! [`FrameAdapter`]:
//!
//! ```ignore
//! fn record(out: &MyOutputs) -> Record {
//!     Record::new().field("alarm", out.alarm).field("level", out.level)
//! }
//! fn main() -> std::process::ExitCode {
//!     App::<MyPipeline>::new("my_pipeline", record).main()
//! }
//! ```
//!
//! Subcommands: `run` (the default when none is given shows a tour: the
//! results table, the listing with measured times, the DCE diff of every
//! mode that eliminates nodes, and the profile), `graph`, `plan`, `profile`.
//! See the README for options and the JSON schema.
//!
//! A pipeline declared `#[parallel]` can also run on the parallel engine
//! (a frame's independent nodes at once) and the pipelined one (the next
//! frame's state-free nodes beside this frame's rest, fed from the source
//! on a producer thread) when its program opts in with [`App::parallel`]
//! (or [`App::parallel_with`]): `run --engine parallel|pipelined`.

mod app;
mod broker;
mod cli;
mod dispatch;
mod dump;
mod encode;
mod error;
mod frames;
mod graph_file;
pub mod l2;
#[cfg(feature = "models")]
pub mod l2_dnn;
mod l2_view;
mod library;
mod model_arg;
mod notes;
mod observer;
mod pipelined;
#[cfg(feature = "mqtt")]
pub mod publish;
mod reads;
mod record;
mod run;
mod session;
mod sink;
pub mod sources;
mod streams;
mod trace;

pub use app::{AdapterError, App, FrameAdapter, FrameOnly, Io};
pub use cli::parse_weights;
pub use dump::{draw_box, heatmap, DumpError, DumpSink};
pub use error::RunnerError;
pub use model_arg::{take_models, ModelArg, MODEL_FLAG};
pub use reads::Reader;
pub use record::Record;
pub use trace::TraceLog;
