//! Pipelined streams of a run-time graph: each mode's lowered
//! [`Pipelined`](crate::lower::Pipelined) split run by the same driver as
//! generated pipelines ([`pipelined`]), so flow control, ordering, failing
//! frames and recycled buffers follow the same rules.

use std::ops::ControlFlow;

use crate::lower::Frame;
use crate::model::ir::NodeId;
use crate::model::outputs::OutputSet;
use crate::runtime::error::PipelineError;
use crate::runtime::generated::{SharedObserver, Sink};
use crate::runtime::observe::{NoopObserver, Observer};
use crate::runtime::pipeline::ParallelPipeline;
use crate::runtime::run::{ChoiceRef, Run};

use crate::runtime::pipelined::{pipelined, BoundedRun, Checked, StreamFrame};
use crate::runtime::stream::{StreamError, StreamOptions, StreamReport};

use super::engine::{Resolved, Shared, Walk, Waves, Work};
use super::ops::Value;
use super::outputs::DynOutputs;
use super::DynPipeline;

/// One frame's inputs, in declaration order.
type Inputs = Vec<Value>;

/// A first stage that succeeded: its values are in the frame's [`Work`].
struct FirstDone;

impl Checked<Inputs, DynPipeline> for FirstDone {
    fn run_bounded<E: BoundedRun<Inputs, DynPipeline>>(run: E) -> E::Out {
        run.run()
    }
}

/// A stream's observer as each stage sees it: node and group events go to
/// the shared observer from the thread that runs them; the driver reports
/// each frame's begin and end around its second stage.
struct Events<'s, 'o, O>(Option<&'s SharedObserver<'o, O>>);

impl<O: Observer> Observer for Events<'_, '_, O> {
    fn node_begin(&mut self, node: NodeId) {
        if let Some(o) = self.0 {
            o.node_begin(node);
        }
    }
    fn node_end(&mut self, node: NodeId) {
        if let Some(o) = self.0 {
            o.node_end(node);
        }
    }
    fn group_begin(&mut self, members: &'static [NodeId]) {
        if let Some(o) = self.0 {
            o.group_begin(members);
        }
    }
    fn group_end(&mut self, fused: bool) {
        if let Some(o) = self.0 {
            o.group_end(fused);
        }
    }
}

/// The walk of `frame` selecting `sel` on `inputs`, with mode `mode`'s
/// weights, its groups fused when `fusion` says.
fn stage_walk<'a>(
    sh: &'a Shared,
    frame: &'a Frame,
    (mode, sel, fusion): (usize, Resolved<'a>, bool),
    inputs: &'a [Value],
    waves: Waves,
    read: OutputSet,
) -> Walk<'a> {
    Walk {
        sh,
        frame,
        sel,
        weights: &sh.mode_weights[mode],
        inputs,
        waves,
        fusion,
        read,
    }
}

/// Stores a frame's outputs where the driver asked: of those handed back,
/// the ones in `read` are replaced.
fn store(sink: Sink<'_, DynOutputs>, outputs: DynOutputs, read: OutputSet) {
    match sink {
        Sink::Into(o, _) => o.merge(outputs, read),
        Sink::Fresh(slot) => *slot = Some(outputs),
    }
}

/// Every run-time pipeline runs streams pipelined, as a generated
/// `#[parallel]` one does; its owned inputs are one value per declared
/// input.
impl ParallelPipeline for DynPipeline {
    type OwnedInputs = Inputs;

    /// Runs a stream of frames pipelined as `run` says, as a generated
    /// `#[parallel]` pipeline's `run_stream_with` does: frame `k + 1`'s
    /// state-free nodes run on the pool while frame `k`'s second stage
    /// runs wave by wave and commits. Results come back in source order;
    /// a failing frame fails alone (the state stays that of the last good
    /// frame). The source yields `(tag, inputs)`; `on_result` borrows each
    /// frame, and the outputs left in it are what a later frame runs into
    /// (keep them with [`StreamFrame::take_result`]). `options` are the
    /// generated streams' (`in_flight`, overflow policy, queue); the
    /// memory budget counts each input as one shared value, since a
    /// run-time value's heap size is not known.
    ///
    /// `run` selects a declared mode (its index, see
    /// [`Pipeline::run_with`]); its engine is the pipelined one
    /// whatever it says. Of the outputs a frame runs into, those `run`
    /// reads are replaced, and new outputs hold only those. Reading every
    /// output, or a rated mode, runs the mode's own stages; reading some
    /// outputs of a mode without rates runs only their producers (the
    /// mode's plan cut down to them, unfused, over the full graph's two
    /// stages), as a generated pipeline's stream does. Its observer sees
    /// each node of both stages from the thread that runs it, and each
    /// frame's begin and end around its second stage; a failing frame's
    /// rerun is not observed.
    ///
    /// # Errors
    /// [`StreamError::NotAMode`] for weights or a plan; otherwise as the
    /// generated `run_stream_with`: invalid options, a panicking source or
    /// callback. An unknown mode fails every frame (with
    /// [`PipelineError::Internal`]), not the stream.
    fn run_stream_with<O, T, I, F>(
        &mut self,
        run: &mut Run<'_, usize, O>,
        frames: I,
        options: &StreamOptions,
        mut on_result: F,
    ) -> Result<StreamReport, StreamError>
    where
        O: Observer + Send,
        T: Send,
        I: IntoIterator<Item = (T, Inputs)>,
        I::IntoIter: Send,
        F: FnMut(&mut StreamFrame<Inputs, DynOutputs, T>) -> ControlFlow<()>,
    {
        let ChoiceRef::Mode(mode) = run.select else {
            return Err(StreamError::NotAMode);
        };
        let read = run.outputs;
        let shared = self.shared.clone();
        let sh = &*shared;
        let n = sh.ir.nodes.len();
        let valid = sh
            .program
            .modes
            .get(mode)
            .and_then(|m| m.pipelined.as_ref().map(|p| (m, p)));
        // Reading only some outputs of a mode without rates runs the
        // mode's plan cut down to them over the full graph's two stages,
        // each node skipped when the cut plan leaves it out, as generated
        // pipelines do. Every output, or a rated mode (whose phases only
        // its own stages know), runs the mode's own stages. A plan that
        // cannot be cut (an output read that the mode eliminates) leaves
        // the mode's stages to report it on every frame.
        let cut = match (valid, &sh.program.run_time.pipelined) {
            (Some((m, _)), Some(_)) if m.rates.is_none() && !read.covers(&sh.ir) => {
                self.weights_plan(&sh.mode_weights[mode], read).ok()
            }
            _ => None,
        };
        let rt = &sh.program.run_time;
        let stages = match (&cut, &rt.pipelined) {
            (Some(cut), Some(p)) => Some((p, Resolved::Plan(cut), &rt.sequential)),
            _ => valid.map(|(m, p)| (p, Resolved::Mode(mode), &m.sequential)),
        };
        let unknown = || PipelineError::Internal("no such mode");
        let fusion = self.fusion();
        let shared_observer = run.observer().map(SharedObserver::new);
        let events = shared_observer.as_ref();
        let plan = stages.map_or(&rt.full, |(_, sel, _)| sel.plan(sh));
        pipelined(
            self,
            frames.into_iter(),
            options,
            |mut frame| {
                let flow = on_result(&mut frame);
                (flow, frame.result.ok())
            },
            |inputs: &Inputs, bufs: &mut Work| {
                let (p, sel, _) = stages.ok_or_else(unknown)?;
                // The state-free calls, reading only the frame's inputs,
                // constants and each other (no state, no held value).
                bufs.begin(sh, inputs)?;
                let on = (mode, sel, fusion);
                let walk = stage_walk(sh, &p.first, on, inputs, Waves::InOrder, read);
                walk.run(bufs, None, &mut Events(events))?;
                Ok(FirstDone)
            },
            |this: &mut DynPipeline,
             inputs: &Inputs,
             FirstDone,
             bufs: &mut Work,
             sink: Sink<'_, DynOutputs>| {
                let (p, sel, _) = stages.ok_or_else(unknown)?;
                let on = (mode, sel, fusion);
                let walk = stage_walk(sh, &p.second, on, inputs, Waves::SecondStage, read);
                let outputs = this.walk(&walk, Some(bufs), &mut Events(events))?;
                store(sink, outputs, read);
                Ok(())
            },
            || Work::new(n),
            |this: &mut DynPipeline, inputs: &Inputs, sink: Sink<'_, DynOutputs>| {
                let (_, sel, frame) = stages.ok_or_else(unknown)?;
                let on = (mode, sel, fusion);
                let walk = stage_walk(sh, frame, on, inputs, Waves::InOrder, read);
                let outputs = this.walk(&walk, None, &mut NoopObserver)?;
                store(sink, outputs, read);
                Ok(())
            },
            |inputs: &Inputs| (std::mem::size_of_val(inputs.as_slice())) as u64,
            events,
            plan,
        )
    }
}
