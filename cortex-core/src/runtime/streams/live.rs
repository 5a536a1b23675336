//! A live stream's side of the pool: how its queue takes pushed frames
//! ([`LiveOptions`]) and the handle a producer pushes them through
//! ([`LiveInput`]).

use std::fmt;
use std::sync::Arc;

use super::queue::{lock, Pushed, Stream};
use super::{Shared, StreamEnd, StreamId, StreamsError};
use crate::runtime::observe::{NoopObserver, Observer};
use crate::runtime::pipeline::Pipeline;
use crate::runtime::stream::{Overflow, StreamError, StreamOptions};

/// How a live stream queues pushed frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveOptions {
    /// Frames waiting for their turn (≥ 1).
    pub queue: usize,
    /// What a push into a full queue does.
    pub overflow: Overflow,
}

impl LiveOptions {
    /// A live camera: one waiting frame, replaced by each newer one.
    pub const LATEST: LiveOptions = LiveOptions {
        queue: 1,
        overflow: Overflow::KeepLatest,
    };
}

impl LiveOptions {
    /// Checks that the frames a live stream holds at once fit in `budget`
    /// bytes (usually [`memory_budget`](crate::runtime::stream::memory_budget)):
    /// one running, those waiting ([`LiveOptions::queue`], 1 with
    /// [`Overflow::KeepLatest`]) and one the producer is pushing. The pool
    /// cannot see inside `T`: call it before adding the stream, with the
    /// frame size the camera or file announces.
    ///
    /// # Errors
    /// [`StreamsError::OverBudget`], with the numbers.
    pub fn check_memory(&self, frame_bytes: u64, budget: u64) -> Result<(), StreamsError> {
        let as_stream = StreamOptions {
            in_flight: 1,
            queue: self.queue,
            overflow: self.overflow,
        };
        match as_stream.check_memory(frame_bytes, budget) {
            Err(StreamError::OverBudget(over)) => Err(StreamsError::OverBudget(over)),
            _ => Ok(()),
        }
    }
}

impl Default for LiveOptions {
    fn default() -> Self {
        Self::LATEST
    }
}

/// The push side of a live stream (see [`StreamPool::add_live`]). Dropping
/// it closes the stream: the frames already pushed still run.
pub struct LiveInput<P, T, O = NoopObserver>
where
    P: Pipeline + Send + 'static,
    P::Outputs: Send,
    T: Send + 'static,
    O: Observer + Send + 'static,
{
    pub(super) shared: Arc<Shared<P, T, O>>,
    pub(super) stream: Arc<Stream<P, T, O>>,
}

impl<P, T, O> fmt::Debug for LiveInput<P, T, O>
where
    P: Pipeline + Send + 'static,
    P::Outputs: Send,
    T: Send + 'static,
    O: Observer + Send + 'static,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LiveInput")
            .field("stream", &self.stream.id)
            .finish_non_exhaustive()
    }
}

impl<P, T, O> LiveInput<P, T, O>
where
    P: Pipeline + Send + 'static,
    P::Outputs: Send,
    T: Send + 'static,
    O: Observer + Send + 'static,
{
    /// The stream this input feeds.
    pub fn stream(&self) -> StreamId {
        self.stream.id
    }

    /// Queues `frame` under the stream's overflow policy (with
    /// [`Overflow::Block`], waits for room).
    ///
    /// # Errors
    /// The frame back when [`LiveInput::try_push`] refuses it (it is
    /// counted as discarded).
    pub fn push(&self, frame: T) -> Result<(), T> {
        self.try_push(frame).map_err(|(frame, _)| frame)
    }

    /// [`LiveInput::push`], saying why a frame was refused.
    ///
    /// # Errors
    /// The frame back (counted as discarded) with
    /// [`StreamsError::Ended`] when the stream has ended (removed, or its
    /// callback panicked), or [`StreamsError::OnOwnWorker`] when, with
    /// [`Overflow::Block`], the queue is full and the caller is one of the
    /// pool's workers (a callback): room would come from a worker, maybe
    /// the caller's own, so waiting for it could never end.
    pub fn try_push(&self, frame: T) -> Result<(), (T, StreamsError)> {
        match self.stream.push(frame, self.shared.on_own_worker()) {
            Pushed::Queued(true) => {
                self.shared.make_ready(Arc::clone(&self.stream));
                Ok(())
            }
            Pushed::Queued(false) => Ok(()),
            Pushed::Refused(frame) => Err((frame, StreamsError::Ended(self.stream.id))),
            Pushed::WouldWaitOnWorker(frame) => Err((frame, StreamsError::OnOwnWorker)),
        }
    }

    /// No more frames: the stream ends once those pushed have run.
    pub fn close(self) {}

    /// No more frames because the producer failed (a camera that went
    /// away, a file that broke off): the frames already pushed still run,
    /// then the stream ends with [`StreamEnd::SourceFailed`]`(why)` — what
    /// a pull stream's source reports by returning an error.
    pub fn fail(self, why: impl Into<String>) {
        let mut s = lock(&self.stream.state);
        if s.end.is_none() {
            s.closing = Some(StreamEnd::SourceFailed(why.into()));
        }
    }
}

impl<P, T, O> Drop for LiveInput<P, T, O>
where
    P: Pipeline + Send + 'static,
    P::Outputs: Send,
    T: Send + 'static,
    O: Observer + Send + 'static,
{
    fn drop(&mut self) {
        let mut s = lock(&self.stream.state);
        s.open = false;
        let idle = !s.scheduled && s.items.is_empty();
        if idle {
            s.end_closed();
        }
        drop(s);
        self.stream.changed.notify_all();
        if idle {
            self.stream.release();
        }
    }
}
