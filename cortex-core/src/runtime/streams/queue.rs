//! One stream's side of the pool: its waiting frames under the overflow
//! policy, whether it is scheduled, its counters, and the part only the
//! frame in flight touches (pipeline, observer, outputs, source, result
//! callback).
//!
//! Two locks per stream: `state`, held for a few instructions by pushes,
//! the scheduler and statistics readers; `work`, held by the one task that
//! runs the stream's frame. A task takes `work` before `state`, never the
//! other way round.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use crate::runtime::error::PipelineError;
use crate::runtime::pipeline::Pipeline;
use crate::runtime::stream::Overflow;

use super::stats::{Counters, StreamEnd};
use super::{Delivery, StreamId};

/// A frame waiting to run.
pub(crate) struct Queued<T> {
    pub(crate) index: u64,
    pub(crate) frame: T,
    pub(crate) arrived: Instant,
}

/// The pull source of a stream: frames or the text of an error.
pub(crate) type Source<T> = Box<dyn Iterator<Item = Result<T, String>> + Send>;

/// The result callback of a stream.
pub(crate) type OnResult<T, O> = Box<dyn FnMut(Delivery<'_, T, O>) + Send>;

/// What the scheduler and pushes share.
pub(crate) struct State<T> {
    pub(crate) items: VecDeque<Queued<T>>,
    /// In the ready queue or running: at most one frame of a stream is in
    /// flight, since each frame needs the state the one before it left.
    pub(crate) scheduled: bool,
    /// More frames may come (an open input, or a source not exhausted).
    pub(crate) open: bool,
    /// Frames come from the source in `Work` (pulled when the stream runs)
    /// rather than from pushes.
    pub(crate) pull: bool,
    pub(crate) end: Option<StreamEnd>,
    /// How the stream ends once its input is closed and its waiting frames
    /// have run: [`StreamEnd::Finished`] unless the input said it failed
    /// (`LiveInput::fail`).
    pub(crate) closing: Option<StreamEnd>,
    pub(crate) next_index: u64,
    pub(crate) last_index: Option<u64>,
    pub(crate) counters: Counters,
}

impl<T> State<T> {
    /// Whether the stream has a frame to run now (or a source to pull one
    /// from).
    pub(crate) fn has_work(&self) -> bool {
        self.end.is_none() && (!self.items.is_empty() || (self.pull && self.open))
    }

    /// Ends a closed stream whose waiting frames have run: as its input
    /// said when it closed, [`StreamEnd::Finished`] by default.
    pub(crate) fn end_closed(&mut self) {
        let why = self.closing.take().unwrap_or(StreamEnd::Finished);
        self.end_with(why);
    }

    /// Ends the stream with `why` (the first reason wins), discarding the
    /// frames still waiting.
    pub(crate) fn end_with(&mut self, why: StreamEnd) {
        self.open = false;
        self.counters.discarded += self.items.len() as u64;
        self.items.clear();
        self.end.get_or_insert(why);
    }
}

/// What the frame in flight uses.
pub(crate) struct Work<P: Pipeline, T, O> {
    /// `None` once handed back (`StreamPool::finish`), which only an ended
    /// stream with no frame in flight is: no frame runs after that.
    pub(crate) pipeline: Option<P>,
    /// The mode each frame runs and the outputs it reads.
    pub(crate) run: super::StreamRun<P::Mode>,
    /// The stream's own observer, told about each of its frames; handed
    /// back with the pipeline.
    pub(crate) observer: Option<O>,
    /// The last frame's outputs, recycled by `run_into`; `None` before the
    /// first frame and after a panic (which may have left them half
    /// written).
    pub(crate) outputs: Option<P::Outputs>,
    pub(crate) source: Option<Source<T>>,
    /// `None` once the stream has ended.
    pub(crate) on_result: Option<OnResult<T, P::Outputs>>,
    /// The reset key of the last frame run (`StreamPool::reset_on`).
    pub(crate) last_key: Option<u64>,
}

/// One stream.
pub(crate) struct Stream<P: Pipeline, T, O> {
    pub(crate) id: StreamId,
    pub(crate) capacity: usize,
    pub(crate) overflow: Overflow,
    pub(crate) state: Mutex<State<T>>,
    /// Signalled when room appears in the queue or the stream ends.
    pub(crate) changed: Condvar,
    pub(crate) work: Mutex<Work<P, T, O>>,
}

/// Locks `m`, also after a panic elsewhere while it was held: the runtime
/// catches panics of nodes, sources and callbacks before they can leave a
/// guarded value half updated, so a poisoned lock holds valid data.
pub(crate) fn lock<X>(m: &Mutex<X>) -> MutexGuard<'_, X> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What [`Stream::push`] did with a frame.
pub(crate) enum Pushed<T> {
    /// Queued; `true` if the stream must be scheduled now.
    Queued(bool),
    /// The stream no longer takes frames.
    Refused(T),
    /// The queue is full under [`Overflow::Block`] and the caller is one
    /// of the pool's workers, which must not wait for room.
    WouldWaitOnWorker(T),
}

impl<P: Pipeline, T, O> Stream<P, T, O> {
    /// Queues `frame` under the overflow policy (with [`Overflow::Block`],
    /// waiting for room, unless `on_worker`: the caller is one of the
    /// pool's workers, and the room would have to come from a worker).
    pub(crate) fn push(&self, frame: T, on_worker: bool) -> Pushed<T> {
        let now = Instant::now();
        let mut s = lock(&self.state);
        if s.end.is_none() && s.open {
            match self.overflow {
                Overflow::Block => {
                    if on_worker && s.items.len() >= self.capacity {
                        s.counters.arrived(now);
                        s.counters.discarded += 1;
                        return Pushed::WouldWaitOnWorker(frame);
                    }
                    while s.items.len() >= self.capacity && s.end.is_none() && s.open {
                        s = self.changed.wait(s).unwrap_or_else(PoisonError::into_inner);
                    }
                }
                Overflow::DropOldest => {
                    while s.items.len() >= self.capacity {
                        s.items.pop_front();
                        s.counters.dropped += 1;
                    }
                }
                Overflow::KeepLatest => {
                    s.counters.dropped += s.items.len() as u64;
                    s.items.clear();
                }
            }
        }
        s.counters.arrived(now);
        if s.end.is_some() || !s.open {
            s.counters.discarded += 1;
            return Pushed::Refused(frame);
        }
        let index = s.next_index;
        s.next_index += 1;
        s.items.push_back(Queued {
            index,
            frame,
            arrived: now,
        });
        let schedule = !s.scheduled;
        s.scheduled = true;
        Pushed::Queued(schedule)
    }

    /// The next waiting frame and the number dropped just before it.
    pub(crate) fn pop(&self) -> Option<(Queued<T>, u64)> {
        let mut s = lock(&self.state);
        let q = s.items.pop_front()?;
        let dropped_before = q.index - s.last_index.map_or(0, |l| l + 1);
        s.last_index = Some(q.index);
        drop(s);
        self.changed.notify_all();
        Some((q, dropped_before))
    }

    /// A frame pulled from the source just now, numbered.
    pub(crate) fn pulled(&self, frame: T) -> Queued<T> {
        let now = Instant::now();
        let mut s = lock(&self.state);
        s.counters.arrived(now);
        let index = s.next_index;
        s.next_index += 1;
        s.last_index = Some(index);
        Queued {
            index,
            frame,
            arrived: now,
        }
    }

    /// Records the fate of a finished frame.
    pub(crate) fn finished(&self, result: &Result<(), PipelineError>, arrived: Instant) -> Instant {
        let now = Instant::now();
        lock(&self.state)
            .counters
            .finished(result.is_ok(), arrived, now);
        now
    }

    /// Lets go of the source and the callback of a stream that has ended
    /// and has no frame in flight.
    pub(crate) fn release(&self) {
        let mut work = lock(&self.work);
        work.source = None;
        work.on_result = None;
    }

    /// Ends the stream with `why` if it is not already over.
    pub(crate) fn end(&self, why: StreamEnd) {
        lock(&self.state).end_with(why);
        self.changed.notify_all();
    }
}
