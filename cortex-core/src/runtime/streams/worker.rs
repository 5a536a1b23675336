//! What a pool worker does for one ready stream: take its next frame
//! (waiting, or pulled from its source), run it on the stream's pipeline,
//! hand the result to the stream's callback, and put the stream back at the
//! end of the ready queue if it has more to do.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use crate::model::outputs::OutputSet;
use crate::runtime::error::PipelineError;
use crate::runtime::hold::held_mask;
use crate::runtime::observe::Observer;
use crate::runtime::pipeline::Pipeline;
use crate::runtime::run::Run;
use crate::runtime::stream::panic_message;

use super::queue::{lock, Queued, Stream, Work};
use super::stats::StreamEnd;
use super::{Delivery, Shared, StreamRun};

thread_local! {
    /// This worker is running a stream's frame (further down its stack).
    static IN_FRAME: Cell<bool> = const { Cell::new(false) };
}

/// Clears [`IN_FRAME`] on the way out, unwinding included.
struct FrameGuard;

impl Drop for FrameGuard {
    fn drop(&mut self) {
        IN_FRAME.with(|f| f.set(false));
    }
}

/// Runs one frame of the stream at the head of the ready queue. One task is
/// spawned per entry of the ready queue, so there always is one.
///
/// A worker waiting inside a frame for a strip another worker stole runs
/// other pool jobs meanwhile (rayon's `join`); were one of them this task,
/// a whole frame of another stream would run nested on top of the waiting
/// one and hold it back by a frame's time. Such a task only counts itself
/// as deferred; the worker's own frame, once finished, spawns the deferred
/// tasks again.
pub(crate) fn run_one<P, T, O>(shared: &Arc<Shared<P, T, O>>)
where
    P: Pipeline + Send + 'static,
    P::Outputs: Send,
    T: Send + 'static,
    O: Observer + Send + 'static,
{
    if IN_FRAME.with(|f| f.replace(true)) {
        shared.deferred.fetch_add(1, Ordering::AcqRel);
        return;
    }
    let guard = FrameGuard;
    run_frame(shared);
    drop(guard);
    for _ in 0..shared.deferred.swap(0, Ordering::AcqRel) {
        shared.spawn_task();
    }
}

/// [`run_one`]'s frame.
fn run_frame<P, T, O>(shared: &Arc<Shared<P, T, O>>)
where
    P: Pipeline + Send + 'static,
    P::Outputs: Send,
    T: Send + 'static,
    O: Observer + Send + 'static,
{
    let Some(stream) = lock(&shared.ready).pop_front() else {
        return;
    };
    let mut work = lock(&stream.work);
    let next = match stream.pop() {
        Some(next) => Some(next),
        // A stream removed while it waited in the ready queue pulls
        // nothing more.
        None if lock(&stream.state).end.is_some() => None,
        None => pull(&stream, &mut work.source).map(|q| (q, 0)),
    };
    if let Some((queued, dropped_before)) = next {
        let Queued {
            index,
            frame,
            arrived,
        } = queued;
        let started = Instant::now();
        let w = &mut *work;
        let inputs = shared.inputs;
        if let Some(key) = shared.reset_key.get() {
            let k = key(&frame);
            if w.last_key.is_some_and(|last| last != k) {
                if let Some(p) = w.pipeline.as_mut() {
                    p.reset();
                }
                // Outputs of another size would be reshaped anyway.
                w.outputs = None;
            }
            w.last_key = Some(k);
        }
        let ran = catch_unwind(AssertUnwindSafe(|| run_on(w, inputs(&frame))));
        let result = ran.unwrap_or_else(|payload| {
            // A node that panics may have left the recycled outputs half
            // written; the next frame starts from fresh ones. The state is
            // committed only after every node succeeded: it is the last
            // good frame's.
            w.outputs = None;
            Err(PipelineError::Panicked(panic_message(&*payload)))
        });
        let finished = stream.finished(&result, arrived);
        let held = match (&result, &w.pipeline) {
            (Ok(()), Some(p)) => held_mask(p.holds()),
            _ => 0,
        };
        let delivery = Delivery {
            stream: stream.id,
            index,
            dropped_before,
            frame,
            latency: finished.saturating_duration_since(arrived),
            started,
            finished,
            worker: rayon::current_thread_index(),
            held,
            result,
            outputs: &mut w.outputs,
        };
        if let Some(on_result) = w.on_result.as_mut() {
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| on_result(delivery))) {
                stream.end(StreamEnd::CallbackPanicked(panic_message(&*payload)));
            }
        }
    }
    let mut s = lock(&stream.state);
    if s.has_work() {
        drop(s);
        drop(work);
        shared.make_ready(stream);
        return;
    }
    s.scheduled = false;
    if !s.open && s.items.is_empty() {
        s.end_closed();
    }
    let ended = s.end.is_some();
    drop(s);
    if ended {
        // The source (a file, a device) and the callback (and what it
        // holds, a channel's sender say) are let go as soon as the stream
        // is over, not when the pool is.
        work.source = None;
        work.on_result = None;
    }
    drop(work);
    stream.changed.notify_all();
}

/// Runs one frame on the stream's pipeline in its mode, computing the
/// outputs it reads, into the last frame's outputs when there are some,
/// reported to the stream's observer when it has one (a stream reading
/// every output unobserved runs through `run`/`run_into`, which a
/// generated pipeline implements as direct calls of its mode's function).
fn run_on<P: Pipeline, T, O: Observer + Send>(
    w: &mut Work<P, T, O>,
    inputs: P::Inputs<'_>,
) -> Result<(), PipelineError> {
    let Some(pipeline) = w.pipeline.as_mut() else {
        // Only an ended, idle stream is handed back, and such a stream is
        // never scheduled again: no frame can get here.
        return Err(PipelineError::Internal(
            "the stream's pipeline was handed back",
        ));
    };
    let StreamRun { mode, outputs } = w.run;
    let every = outputs == OutputSet::ALL;
    let fresh = match (w.outputs.as_mut(), w.observer.as_mut()) {
        (Some(out), None) if every => return pipeline.run_into(mode, inputs, out),
        (None, None) if every => pipeline.run(mode, inputs),
        (Some(out), None) => {
            return pipeline.run_with(&mut Run::mode(mode).outputs(outputs), inputs, out)
        }
        (None, None) => pipeline.run_with_fresh(&mut Run::mode(mode).outputs(outputs), inputs),
        (Some(out), Some(o)) => {
            let mut run = Run::mode(mode).outputs(outputs).observed(o);
            return pipeline.run_with(&mut run, inputs, out);
        }
        (None, Some(o)) => {
            pipeline.run_with_fresh(&mut Run::mode(mode).outputs(outputs).observed(o), inputs)
        }
    };
    w.outputs = Some(fresh?);
    Ok(())
}

/// The next frame of the stream's pull source; `None` when it is exhausted,
/// failed or panicked (the stream is then ended).
fn pull<P: Pipeline, T, O>(
    stream: &Stream<P, T, O>,
    source: &mut Option<super::queue::Source<T>>,
) -> Option<Queued<T>> {
    let src = source.as_mut()?;
    let end = match catch_unwind(AssertUnwindSafe(|| src.next())) {
        Ok(Some(Ok(frame))) => return Some(stream.pulled(frame)),
        Ok(Some(Err(e))) => StreamEnd::SourceFailed(e),
        Ok(None) => StreamEnd::Finished,
        Err(payload) => StreamEnd::SourcePanicked(panic_message(&*payload)),
    };
    *source = None;
    stream.end(end);
    None
}
