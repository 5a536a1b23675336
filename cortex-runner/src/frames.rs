//! The frame loop of the sequential and parallel engines: one frame at a
//! time from the source, its inputs built by the program's adapter, run
//! into the previous frame's outputs (computing only the outputs shown),
//! then shown.

use cortex_core::error::PipelineError;
use cortex_core::outputs::OutputSet;
use cortex_core::pipeline::Pipeline;
use cortex_core::run::Engine;
use cortex_core::runtime::dispatch::Choice;

use crate::app::{FrameAdapter, SlotRunFn};
use crate::error::RunnerError;
use crate::observer::RunObserver;
use crate::sink::{FrameOut, Shown};
use crate::sources::{Frame, FrameSource};

/// A sequential or parallel run: the pipeline, how its frames run, and the
/// observer timing them.
pub(crate) struct FrameByFrame<'r, P: Pipeline + 'static> {
    pub(crate) pipeline: &'r mut P,
    pub(crate) choice: &'r Choice<P::Mode>,
    /// The outputs shown: only their producers run, once a frame's outputs
    /// exist to run into.
    pub(crate) reads: OutputSet,
    pub(crate) engine: Engine,
    /// Runs a frame into the last one's outputs, or a first frame: the
    /// parallel engine's on `--engine parallel`.
    pub(crate) run_slot: SlotRunFn<P>,
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
        while limit.is_none_or(|l| *done + failed < l) {
            let Some(frame) = source.next_frame() else {
                break;
            };
            let mut frame = frame?;
            let size = frame.size();
            let reset = last_size.is_some_and(|s| s != size);
            if reset {
                // Temporal state computed at another resolution means
                // nothing here: start over as on a first frame.
                self.pipeline.reset();
            }
            let resized_from = last_size.filter(|_| reset);
            last_size = Some(size);
            let outputs = match self.one(&mut frame, &mut slot) {
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
        frame: &mut Frame,
        slot: &'s mut Option<P::Outputs>,
    ) -> Result<&'s P::Outputs, RunnerError> {
        let index = frame.index;
        self.obs.frame = index;
        let (choice, engine, reads, run_slot) =
            (self.choice, self.engine, self.reads, self.run_slot);
        let pl = &mut *self.pipeline;
        let o = &mut *self.obs;
        let mut ran = None;
        self.adapter
            .with_inputs(frame, &mut |inputs| {
                // Later frames run into the last frame's outputs, only
                // what is shown.
                let mut run = choice.run().engine(engine).outputs(reads).observed(&mut *o);
                ran = Some(run_slot(pl, &mut run, inputs, slot));
            })
            .map_err(|e| RunnerError::Adapter {
                frame: index,
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
