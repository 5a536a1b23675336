//! The one place the wheel calls `DynPipeline`'s run API: one frame of a
//! declared mode or of a weight table, on the sequential or the parallel
//! engine, observed by the pipeline's profiler when it has one; and a
//! stream of frames on the pipelined engine. Everything else (`run`,
//! `stream`, `run_streams`) goes through these.

use std::ops::ControlFlow;

use cortex_core::dynamic::{DynOutputs, DynPipeline, Value};
use cortex_core::run::{Engine, Run};
use cortex_core::runtime::dispatch::Choice;
use cortex_core::runtime::error::PipelineError;
use cortex_core::runtime::profile::Profiler;
use cortex_core::runtime::stream::{StreamError, StreamFrame, StreamOptions, StreamReport};
use cortex_core::{OutputSet, ParallelPipeline, Pipeline};

/// One frame of `choice` (a declared mode's index, or a weight table) on
/// the engine asked for, computing the outputs in `read` (the others
/// absent), observed by `profiler` when there is one (a declared mode's
/// frames only: a table given at run time has no plan the profile's
/// listing shows).
pub(crate) fn frame(
    pipeline: &mut DynPipeline,
    profiler: Option<&mut Profiler<'static>>,
    (choice, read): (&Choice<usize>, OutputSet),
    parallel: bool,
    values: &[Value],
) -> Result<DynOutputs, PipelineError> {
    let engine = if parallel {
        Engine::Parallel
    } else {
        Engine::Sequential
    };
    let mut run = choice.run().engine(engine).outputs(read);
    // New outputs of every output, or the outputs read run into absent
    // ones (a new frame's outputs are all made otherwise).
    let mut out = pipeline.absent_outputs();
    let every = read == OutputSet::ALL;
    match (choice.mode(), profiler) {
        (Some(_), Some(profiler)) if every => {
            return pipeline.run_with_fresh(&mut run.observed(profiler), values)
        }
        (Some(_), Some(profiler)) => {
            pipeline.run_with(&mut run.observed(profiler), values, &mut out)?
        }
        _ if every => return pipeline.run_with_fresh(&mut run, values),
        _ => pipeline.run_with(&mut run, values, &mut out)?,
    }
    Ok(out)
}

/// Every frame of `source` on the pipelined engine in declared mode
/// `mode`, computing the outputs in `read`, each result handed to
/// `on_result` in order.
pub(crate) fn stream<I, F>(
    pipeline: &mut DynPipeline,
    (mode, read): (usize, OutputSet),
    source: I,
    options: &StreamOptions,
    on_result: F,
) -> Result<StreamReport, StreamError>
where
    I: Iterator<Item = Vec<Value>> + Send,
    F: FnMut(&mut StreamFrame<Vec<Value>, DynOutputs, ()>) -> ControlFlow<()>,
{
    let source = source.map(|values| ((), values));
    pipeline.run_stream_with(
        &mut Run::mode(mode).outputs(read),
        source,
        options,
        on_result,
    )
}
