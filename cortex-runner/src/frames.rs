//! The frame loop of the sequential and parallel engines: one frame at a
//! time from the source, its inputs built by the program's adapter, run
//! into the previous frame's outputs (computing only the outputs shown),
//! then shown.

use cortex_core::error::PipelineError;
use cortex_core::outputs::OutputSet;
use cortex_core::pipeline::{ParallelPipeline, Pipeline};
use cortex_core::run::{Engine, Run};

use crate::app::{FrameAdapter, ParallelRunFn};
use crate::cli::Selection;
use crate::error::RunnerError;
use crate::observer::RunObserver;
use crate::sink::{FrameOut, Shown};
use crate::sources::{Frame, FrameSource};

/// A sequential or parallel run: the pipeline, how its frames run, and the
/// observer timing them.
pub(crate) struct FrameByFrame<'r, P: Pipeline + 'static> {
    pub(crate) pipeline: &'r mut P,
    pub(crate) selection: &'r Selection<P::Mode>,
    /// The outputs shown: only their producers run, once a frame's outputs
    /// exist to run into.
    pub(crate) reads: OutputSet,
    /// The parallel engine's frame, on `--engine parallel`.
    pub(crate) parallel: Option<ParallelRunFn<P>>,
    pub(crate) adapter: &'r mut dyn FrameAdapter<P>,
    pub(crate) obs: &'r mut RunObserver,
    /// `--keep-going`: a failing frame is reported and skipped.
    pub(crate) keep_going: bool,
}

impl<P: Pipeline + 'static> FrameByFrame<'_, P> {
    /// Frames from `source` until its end or `limit` frames, each shown
    /// through `out`; `done` counts the frames shown (also when a later
    /// one fails). With `keep_going`, a frame the pipeline (or the
    /// adapter) fails on is reported in the output and skipped (the pipeline's state and the last
    /// outputs are as the frame before left them), and the run ends with
    /// [`RunnerError::FramesFailed`] if any did.
    pub(crate) fn run(
        mut self,
        source: &mut dyn FrameSource,
        limit: Option<u64>,
        out: &mut FrameOut<'_, '_, P>,
        done: &mut u64,
    ) -> Result<(), RunnerError> {
        let mut failed = 0u64;
        let mut first_failure = None;
        let mut last_size: Option<(usize, usize)> = None;
        // The previous frame's outputs, which the next frame fills again
        // (`run_into`): no outputs allocated per frame.
        let mut slot: Option<P::Outputs> = None;
        while limit.map_or(true, |l| *done + failed < l) {
            let Some(frame) = source.next_frame() else {
                break;
            };
            let frame = frame?;
            let size = frame.size();
            let reset = last_size.is_some_and(|s| s != size);
            if reset {
                // Temporal state computed at another resolution means
                // nothing here: start over as on a first frame.
                self.pipeline.reset();
            }
            let resized_from = last_size.filter(|_| reset);
            last_size = Some(size);
            let outputs = match self.one(&frame, &mut slot) {
                Ok(outputs) => outputs,
                Err(e @ (RunnerError::Frame { .. } | RunnerError::Adapter { .. }))
                    if self.keep_going =>
                {
                    out.failed(&frame, &e)?;
                    failed += 1;
                    first_failure.get_or_insert(frame.index);
                    continue;
                }
                Err(e) => return Err(e),
            };
            let shown = Shown {
                frame: &frame,
                resized_from,
                dropped_before: 0,
                node_ms: Some(self.obs.node_ms_json()),
                held: crate::sink::held_json(&*self.pipeline),
                stream: None,
            };
            out.frame(&shown, outputs)?;
            *done += 1;
        }
        match first_failure {
            Some(first) => Err(RunnerError::FramesFailed {
                failed,
                frames: *done + failed,
                first,
            }),
            None => Ok(()),
        }
    }

    /// Runs `frame` into `slot` (through the adapter, which builds its
    /// inputs) and returns its outputs.
    fn one<'s>(
        &mut self,
        frame: &Frame,
        slot: &'s mut Option<P::Outputs>,
    ) -> Result<&'s P::Outputs, RunnerError> {
        self.obs.frame = frame.index;
        let (selection, parallel, reads) = (self.selection, self.parallel, self.reads);
        let engine = match parallel {
            Some(_) => Engine::Parallel,
            None => Engine::Sequential,
        };
        let pl = &mut *self.pipeline;
        let o = &mut *self.obs;
        let mut ran = None;
        self.adapter
            .with_inputs(frame, &mut |inputs| {
                ran = Some(match (selection, parallel, slot.as_mut()) {
                    // Later frames: into the last frame's outputs, only
                    // what is shown.
                    (selection, _, Some(outputs)) => {
                        let mut run = Run::of(selection.select())
                            .engine(engine)
                            .outputs(reads)
                            .observed(&mut *o);
                        pl.run_with(&mut run, inputs, outputs)
                    }
                    (selection, Some(run), None) => run(pl, selection, o, inputs, slot),
                    (Selection::Mode(m), None, None) => pl
                        .run_observed(*m, o, inputs)
                        .map(|outputs| *slot = Some(outputs)),
                    (Selection::Weights(w), None, None) => pl
                        .run_weights_observed(w, o, inputs)
                        .map(|outputs| *slot = Some(outputs)),
                    (Selection::Plan(p, w), None, None) => pl
                        .run_plan_observed(p, w, o, inputs)
                        .map(|outputs| *slot = Some(outputs)),
                })
            })
            .map_err(|e| RunnerError::Adapter {
                frame: frame.index,
                why: e.to_string(),
            })?;
        ran.ok_or_else(|| RunnerError::Adapter {
            frame: frame.index,
            why: "the adapter did not run the pipeline".into(),
        })?
        .map_err(|source| RunnerError::Frame {
            frame: frame.index,
            source,
        })?;
        slot.as_ref().ok_or(RunnerError::Frame {
            frame: frame.index,
            source: PipelineError::Internal("a run returned no outputs"),
        })
    }
}

/// The first frame on the parallel engine (new outputs), for a mode,
/// weights or a plan; later frames run into its outputs with `run_with`.
pub(crate) fn run_parallel_slot<P: ParallelPipeline>(
    pipeline: &mut P,
    selection: &Selection<P::Mode>,
    obs: &mut RunObserver,
    inputs: P::Inputs<'_>,
    slot: &mut Option<P::Outputs>,
) -> Result<(), PipelineError> {
    let outputs = match (selection, slot.as_mut()) {
        (Selection::Mode(m), Some(outputs)) => {
            return pipeline.run_parallel_into_observed(*m, obs, inputs, outputs)
        }
        (Selection::Mode(m), None) => pipeline.run_parallel_observed(*m, obs, inputs)?,
        (Selection::Weights(w), _) => pipeline.run_weights_parallel_observed(w, obs, inputs)?,
        (Selection::Plan(p, w), _) => pipeline.run_plan_parallel_observed(p, w, obs, inputs)?,
    };
    *slot = Some(outputs);
    Ok(())
}
