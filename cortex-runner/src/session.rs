//! What a session of several streams is given and gives back, and the
//! function type a pipeline's program keeps to run one (set where the
//! parallel bounds of its pipeline are known).

use std::io::Write;

use cortex_core::pipeline::Pipeline;
use cortex_core::streams::StreamStats;

use crate::error::RunnerError;
use crate::sink::FrameOut;
use crate::sources::{FrameSource, SourceError};
use crate::trace::TraceLog;

/// Opens one input (on its reader thread).
pub(crate) type Opener =
    Box<dyn FnOnce() -> Result<Box<dyn FrameSource + Send>, SourceError> + Send>;

/// What a session runs: the opened inputs (label and source), how.
pub(crate) struct Session<'a> {
    pub(crate) inputs: Vec<(String, Opener)>,
    /// The pipelines' graph.
    pub(crate) ir: &'static cortex_core::ir::GraphIr,
    /// The outputs each frame computes (the others' producers do not run).
    pub(crate) reads: cortex_core::outputs::OutputSet,
    /// Worker threads (0: one per core).
    pub(crate) threads: usize,
    pub(crate) fusion: bool,
    /// Frames per stream at most.
    pub(crate) limit: Option<u64>,
    /// Failed frames are told here as they come.
    pub(crate) stderr: &'a mut dyn Write,
    pub(crate) trace: Option<&'a mut TraceLog>,
}

/// What a session did: each stream's input, statistics and the notes its
/// source left (skipped packets…), and the pool's size.
pub(crate) struct SessionReport {
    pub(crate) streams: Vec<(String, StreamStats, Vec<String>)>,
    pub(crate) threads: usize,
    pub(crate) seconds: f64,
}

/// Runs a session of the pipelines `make` makes in `mode` (captured by `App::parallel`, where the
/// bounds are known).
pub(crate) type SessionFn<P> = fn(
    &dyn Fn() -> P,
    <P as Pipeline>::Mode,
    Session<'_>,
    &mut FrameOut<'_, '_, P>,
) -> Result<SessionReport, RunnerError>;
