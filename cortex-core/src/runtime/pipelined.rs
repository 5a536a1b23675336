//! Pipelined runs: a stream of frames through a pipeline in two stages, so
//! that frame `k + 1`'s state-free nodes run on the pool while frame `k`'s
//! state readers and what follows them finish and commit its state.
//!
//! The generated `run_stream` supplies the two stages as closures (their
//! value types are the pipeline's node types, which only the compiler
//! knows); this loop, written once, does the overlapping, the ordering, the
//! counting and the recycling of the first stage's buffers.
//!
//! Panics: a node that panics in either stage fails its frame alone
//! ([`PipelineError::Panicked`]; nothing of the frame was committed, so the
//! state stays that of the last good frame), and a source that panics ends
//! the stream only after every frame already pulled has been finished and
//! delivered. A panic in the caller's `on_result` stops the stream: the
//! frame it was handed counts as delivered (its state is committed), the
//! frames staged behind it (first stage only, nothing committed) and those
//! waiting are discarded, and the run returns
//! [`StreamError::CallbackPanicked`] with the counts.
//!
//! Observing: the stages report their nodes (and fused groups) from the
//! threads running them; this loop reports each frame's begin and end
//! around its second stage, so frame events never overlap.
//!
//! Tags: each frame travels with the caller's value ([`StreamFrame::tag`]),
//! which comes back with that frame's result, processed or failed. A frame
//! that is never delivered — dropped by the overflow policy, or discarded
//! (waiting, staged, or in the source's hand) after a `Break` or a
//! callback panic — drops its tag together with its inputs, once: a tag
//! that owns something (a channel's sender, a buffer) is released, never
//! leaked, and the report counts that frame.

use std::collections::VecDeque;
use std::marker::PhantomData;
use std::ops::ControlFlow;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::model::plan::Plan;
use crate::runtime::error::PipelineError;
use crate::runtime::generated::{Carried, SharedObserver, Sink};
use crate::runtime::hold::held_mask;
use crate::runtime::observe::Observer;
use crate::runtime::pipeline::Pipeline;
use crate::runtime::stream::{
    feed_sized, memory_budget, panic_message, Arrival, StreamError, StreamOptions, StreamReport,
};

/// One frame's result from a pipelined run, in source order.
///
/// `T` is the caller's value carried with the frame (`run_stream_tagged`:
/// the source yields `(tag, inputs)`); `()` for `run_stream`.
#[derive(Debug)]
pub struct StreamFrame<In, Out, T = ()> {
    /// The caller's value that came with this frame from the source,
    /// handed back with the frame's own result (success or failure).
    pub tag: T,
    /// Position in the source, counting dropped frames (0-based).
    pub index: u64,
    /// Frames the overflow policy dropped since the previous delivered one.
    pub dropped_before: u64,
    /// The frame's inputs, handed back (to show, save or reuse).
    pub inputs: In,
    /// The outputs, or why the frame failed (the state was then left as it
    /// was, and later frames saw the state of the last good one).
    pub result: Result<Out, PipelineError>,
    /// Which held values the frame read: bit `i` set when hold `i` of the
    /// pipeline (`Pipeline::holds`, in that order) was read instead of
    /// computed. 0 for a failed frame and for a pipeline without rates.
    pub held: u64,
}

impl<In, Out, T> StreamFrame<In, Out, T> {
    /// The outputs taken out (to keep them), or why the frame failed: with
    /// `run_stream_into`, a later frame then makes new outputs instead of
    /// running into these. A second call returns
    /// [`PipelineError::Internal`].
    ///
    /// # Errors
    /// The frame's error.
    pub fn take_result(&mut self) -> Result<Out, PipelineError> {
        std::mem::replace(&mut self.result, Err(TAKEN))
    }
}

const TAKEN: PipelineError = PipelineError::Internal("the outputs were already taken");

/// A frame between the stages: its first stage done.
struct Staged<T, In, AV, AB> {
    arrival: Arrival<(T, In)>,
    values: Result<AV, PipelineError>,
    bufs: AB,
}

/// Runs `f`, turning a panic into the frame's error. The stages only
/// compute into the frame's own values and buffers until every node has
/// succeeded, and commit the state last, so an unwound stage leaves nothing
/// half-done that a later frame could see (its buffers are replaced all the
/// same).
fn guarded<T>(f: impl FnOnce() -> Result<T, PipelineError>) -> Result<T, PipelineError> {
    catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|payload| Err(PipelineError::Panicked(panic_message(&*payload))))
}

/// Where a frame's second stage puts its outputs: into `reuse`, outputs
/// of an earlier frame handed back (`run_into`), or else into `slot`.
fn sink_of<'a, Out>(reuse: &'a mut Option<Out>, slot: &'a mut Option<Out>) -> Sink<'a, Out> {
    match reuse {
        Some(outputs) => Sink::into_all(outputs),
        None => Sink::Fresh(slot),
    }
}

fn panicked<T>(r: &Result<T, PipelineError>) -> bool {
    matches!(r, Err(PipelineError::Panicked(_)))
}

/// Runs `frames` through `pipeline` in two overlapping stages (see the
/// module docs). With `options.in_flight == 1` the stages run one after the
/// other; with 2 or more, frame `k`'s second stage runs beside frame
/// `k + in_flight - 1`'s first stage (more than 2 deepens the look-ahead,
/// not the parallelism: there are two stages).
///
/// `events`, when given, sees each frame's `frame_begin` and `frame_end`
/// (with `plan`) around its second stage, on the thread running it: the
/// second stages run one frame at a time, so frames never interleave there
/// (the first-stage nodes of a later frame are reported meanwhile, by the
/// stages themselves, from another thread). A failing frame's rerun is not
/// observed, as in `run_parallel`.
///
/// `on_result` returns the stream's flow and, when it gives them back, the
/// frame's outputs: the next frame runs into them (`run_into`), so a
/// stream whose consumer hands every output back allocates none.
///
/// The inputs (`In`) must be `Send + Sync` and the pipeline (`P`) `Send`:
/// the first stage's values (`AV`, a [`Carried`]) ask it of them through
/// [`Checked`], so that an input or state whose own check failed in the
/// first stage (one error, at its declaration) is not reported again here.
///
/// Not public API: called by the generated `run_stream`.
#[allow(clippy::too_many_arguments)]
pub fn pipelined<P, O, T, In, Out, AV, AB, I, F, FA, FB, NB, FR, FS>(
    pipeline: &mut P,
    frames: I,
    options: &StreamOptions,
    on_result: F,
    stage_a: FA,
    stage_b: FB,
    new_bufs: NB,
    rerun: FR,
    bytes_of: FS,
    events: Option<&SharedObserver<'_, O>>,
    plan: &Plan,
) -> Result<StreamReport, StreamError>
where
    P: Pipeline,
    O: Observer + Send,
    T: Send,
    Out: Send,
    AV: Send + Checked<In, P>,
    AB: Send,
    I: Iterator<Item = (T, In)> + Send,
    F: FnMut(StreamFrame<In, Out, T>) -> (ControlFlow<()>, Option<Out>),
    FA: Fn(&In, &mut AB) -> Result<AV, PipelineError> + Sync,
    FB: Fn(&mut P, &In, AV, &mut AB, Sink<'_, Out>) -> Result<(), PipelineError> + Sync,
    NB: Fn() -> AB,
    FR: Fn(&mut P, &In, Sink<'_, Out>) -> Result<(), PipelineError> + Sync,
    FS: Fn(&In) -> u64 + Send,
{
    AV::run_bounded(Pipelined {
        outputs: PhantomData,
        pipeline,
        frames,
        options,
        on_result,
        stage_a,
        stage_b,
        new_bufs,
        rerun,
        bytes_of,
        events,
        plan,
    })
}

/// What a pipelined run's first-stage values vouch for: that the inputs
/// (`In`) are `Send + Sync` and the pipeline (`P`) is `Send`. Implemented
/// by [`Carried`] under exactly these bounds, so the run's bounds are
/// asked of the values' type: when that type is the error type (an input's
/// or state's check failed), they are not reported. Another implementation
/// cannot run one without the bounds either: [`BoundedRun::run`] asks for
/// them, and nothing else makes an `E::Out`.
pub trait Checked<In, P> {
    /// Runs `run`, whose bounds hold.
    fn run_bounded<E: BoundedRun<In, P>>(run: E) -> E::Out;
}

impl<In: Send + Sync, P: Send, V, C> Checked<In, P> for Carried<V, C> {
    #[inline]
    fn run_bounded<E: BoundedRun<In, P>>(run: E) -> E::Out {
        run.run()
    }
}

/// A run that needs its inputs `Send + Sync` and its pipeline `Send`.
pub trait BoundedRun<In, P> {
    /// What the run returns.
    type Out;
    /// Runs, given the bounds.
    fn run(self) -> Self::Out
    where
        In: Send + Sync,
        P: Send;
}

/// The arguments of [`pipelined`], run by [`run`] once [`Checked`] has
/// established its bounds.
struct Pipelined<'a, 'o, P, O, Out, I, F, FA, FB, NB, FR, FS> {
    /// The outputs' type, named by `on_result`'s argument only.
    outputs: PhantomData<fn() -> Out>,
    pipeline: &'a mut P,
    frames: I,
    options: &'a StreamOptions,
    on_result: F,
    stage_a: FA,
    stage_b: FB,
    new_bufs: NB,
    rerun: FR,
    bytes_of: FS,
    events: Option<&'a SharedObserver<'o, O>>,
    plan: &'a Plan,
}

impl<P, O, T, In, Out, AV, AB, I, F, FA, FB, NB, FR, FS> BoundedRun<In, P>
    for Pipelined<'_, '_, P, O, Out, I, F, FA, FB, NB, FR, FS>
where
    P: Pipeline,
    O: Observer + Send,
    T: Send,
    Out: Send,
    AV: Send,
    AB: Send,
    I: Iterator<Item = (T, In)> + Send,
    F: FnMut(StreamFrame<In, Out, T>) -> (ControlFlow<()>, Option<Out>),
    FA: Fn(&In, &mut AB) -> Result<AV, PipelineError> + Sync,
    FB: Fn(&mut P, &In, AV, &mut AB, Sink<'_, Out>) -> Result<(), PipelineError> + Sync,
    NB: Fn() -> AB,
    FR: Fn(&mut P, &In, Sink<'_, Out>) -> Result<(), PipelineError> + Sync,
    FS: Fn(&In) -> u64 + Send,
{
    type Out = Result<StreamReport, StreamError>;

    fn run(self) -> Self::Out
    where
        In: Send + Sync,
        P: Send,
    {
        run(
            self.pipeline,
            self.frames,
            self.options,
            self.on_result,
            self.stage_a,
            self.stage_b,
            self.new_bufs,
            self.rerun,
            self.bytes_of,
            self.events,
            self.plan,
        )
    }
}

/// [`pipelined`], its bounds established.
#[allow(clippy::too_many_arguments)]
fn run<P, O, T, In, Out, AV, AB, I, F, FA, FB, NB, FR, FS>(
    pipeline: &mut P,
    frames: I,
    options: &StreamOptions,
    mut on_result: F,
    stage_a: FA,
    stage_b: FB,
    new_bufs: NB,
    rerun: FR,
    bytes_of: FS,
    events: Option<&SharedObserver<'_, O>>,
    plan: &Plan,
) -> Result<StreamReport, StreamError>
where
    P: Pipeline + Send,
    O: Observer + Send,
    T: Send,
    In: Send + Sync,
    Out: Send,
    AV: Send,
    AB: Send,
    I: Iterator<Item = (T, In)> + Send,
    F: FnMut(StreamFrame<In, Out, T>) -> (ControlFlow<()>, Option<Out>),
    FA: Fn(&In, &mut AB) -> Result<AV, PipelineError> + Sync,
    FB: Fn(&mut P, &In, AV, &mut AB, Sink<'_, Out>) -> Result<(), PipelineError> + Sync,
    NB: Fn() -> AB,
    FR: Fn(&mut P, &In, Sink<'_, Out>) -> Result<(), PipelineError> + Sync,
    FS: Fn(&In) -> u64 + Send,
{
    let mut pending: VecDeque<Staged<T, In, AV, AB>> = VecDeque::new();
    let mut spare: Vec<AB> = Vec::new();
    // Outputs the callback handed back, for the next frame to run into
    // (one at a time: a frame's outputs exist from its second stage to the
    // end of its delivery).
    let mut spare_out: Option<Out> = None;
    let mut failed = 0u64;
    let mut stopped = false;

    // The second stage of a staged frame, then its delivery, run into
    // `reuse` (outputs of an earlier frame handed back) when there are
    // some. The buffers and the outputs come back unless a stage panicked:
    // a panic may have left them half-written, and the next frame takes
    // fresh ones instead. Outputs of a frame that failed cleanly are as
    // they were (a failed run leaves its sink untouched): they come back
    // for the next frame.
    let finish = |pipeline: &mut P,
                  staged: Staged<T, In, AV, AB>,
                  mut reuse: Option<Out>|
     -> (StreamFrame<In, Out, T>, Option<AB>, Option<Out>) {
        let Staged {
            arrival,
            values,
            mut bufs,
        } = staged;
        let (tag, inputs) = arrival.item;
        if let Some(o) = events {
            o.frame_begin(pipeline.graph(), plan);
        }
        let mut slot = None;
        let mut clean = !panicked(&values);
        // Whether a rerun (which uses the outputs, not the buffers) left
        // the outputs whole.
        let mut reuse_clean = true;
        let (staged, second_ran) = match values {
            Ok(values) => (
                guarded(|| {
                    let sink = sink_of(&mut reuse, &mut slot);
                    stage_b(pipeline, &inputs, values, &mut bufs, sink)
                }),
                true,
            ),
            Err(e) => (Err(e), false),
        };
        clean &= !panicked(&staged);
        // A failing frame runs again, whole and in plan order, on the
        // state of the last good frame (nothing was committed): the first
        // stage may have failed at a node that comes after a failing
        // second-stage node, and the error must be the one `run` reports.
        // A second-stage panic is already the first failure in plan order
        // (every first-stage node succeeded): it is not run again.
        let result = match staged {
            Err(e @ PipelineError::Panicked(_)) if second_ran => Err(e),
            staged => staged.or_else(|_| {
                slot = None;
                let result = guarded(|| rerun(pipeline, &inputs, sink_of(&mut reuse, &mut slot)));
                reuse_clean = !panicked(&result);
                result
            }),
        }
        .and_then(|()| {
            reuse
                .take()
                .or_else(|| slot.take())
                .ok_or(PipelineError::Internal("a run returned no outputs"))
        });
        if let Some(o) = events {
            o.frame_end(result.is_ok());
        }
        let held = match &result {
            Ok(_) => held_mask(pipeline.holds()),
            Err(_) => 0,
        };
        let frame = StreamFrame {
            tag,
            index: arrival.index,
            dropped_before: arrival.dropped_before,
            inputs,
            result,
            held,
        };
        if clean {
            (frame, Some(bufs), reuse.filter(|_| reuse_clean))
        } else {
            (frame, None, None)
        }
    };
    // The callback's panic, caught: it stops the stream like a `Break`.
    let mut callback_panic: Option<(u64, String)> = None;
    // The outputs the callback hands back (if any) go to `spare_out`, or
    // those of a failed frame that were not used.
    let mut deliver = |frame: StreamFrame<In, Out, T>,
                       unused: Option<Out>,
                       spare_out: &mut Option<Out>,
                       failed: &mut u64| {
        if frame.result.is_err() {
            *failed += 1;
        }
        let index = frame.index;
        let (flow, back) =
            catch_unwind(AssertUnwindSafe(|| on_result(frame))).unwrap_or_else(|payload| {
                callback_panic = Some((index, panic_message(&*payload)));
                (ControlFlow::Break(()), None)
            });
        *spare_out = back.or(unused);
        flow
    };

    // Every frame is sized before it is queued: options whose frames
    // cannot fit in the process's memory budget end the stream at its
    // first frame (`StreamError::OverBudget`), not at an allocation failure.
    // A tag is the caller's: the budget counts the inputs.
    let bytes_of = move |item: &(T, In)| bytes_of(&item.1);
    let fed = feed_sized(frames, options, memory_budget(), bytes_of, |arrival| {
        let mut bufs = spare.pop().unwrap_or_else(&new_bufs);
        if pending.len() + 1 < options.in_flight {
            let values = guarded(|| stage_a(&arrival.item.1, &mut bufs));
            pending.push_back(Staged {
                arrival,
                values,
                bufs,
            });
            return ControlFlow::Continue(());
        }
        let flow = match pending.pop_front() {
            // One frame in flight: the stages one after the other.
            None => {
                let values = guarded(|| stage_a(&arrival.item.1, &mut bufs));
                let staged = Staged {
                    arrival,
                    values,
                    bufs,
                };
                let (frame, bufs, unused) = finish(pipeline, staged, spare_out.take());
                spare.extend(bufs);
                return deliver(frame, unused, &mut spare_out, &mut failed);
            }
            Some(oldest) => {
                // Neither half unwinds (both are guarded): the older frame
                // is delivered whatever happens to the newer one.
                let reuse = spare_out.take();
                let ((frame, old_bufs, unused), values) = rayon::join(
                    || finish(pipeline, oldest, reuse),
                    || guarded(|| stage_a(&arrival.item.1, &mut bufs)),
                );
                spare.extend(old_bufs);
                pending.push_back(Staged {
                    arrival,
                    values,
                    bufs,
                });
                deliver(frame, unused, &mut spare_out, &mut failed)
            }
        };
        if flow.is_break() {
            stopped = true;
        }
        flow
    });
    // The source is exhausted, panicked (`fed` is then that error, returned
    // below), or the consumer stopped: finish what is in flight, in order,
    // unless the consumer asked to stop.
    while !stopped {
        let Some(staged) = pending.pop_front() else {
            break;
        };
        let (frame, bufs, unused) = finish(pipeline, staged, spare_out.take());
        spare.extend(bufs);
        if deliver(frame, unused, &mut spare_out, &mut failed).is_break() {
            stopped = true;
        }
    }
    let fed = fed?;
    let mut report = StreamReport::from_feed(&fed, failed);
    // Frames staged but never finished because the consumer stopped are
    // discarded, not processed.
    let unfinished = pending.len() as u64;
    report.discarded += unfinished;
    report.processed = report.processed.saturating_sub(unfinished);
    match callback_panic {
        Some((frame, message)) => Err(StreamError::CallbackPanicked {
            frame,
            message,
            report,
        }),
        None => Ok(report),
    }
}
