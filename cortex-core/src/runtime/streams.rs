//! Many streams on one fixed pool of threads: each stream (a camera, a
//! file) has its own pipeline instance and state, and every frame of every
//! stream runs on one rayon pool of a size chosen once (default: the
//! cores), so the threads used are the pool's plus the callers' — not one
//! or more per stream.
//!
//! **Frames in.** A *pull* stream ([`StreamPool::add_source`]) reads its
//! next frame from an iterator on the pool, when its turn comes: a file is
//! read no faster than it is processed (the block policy, with no thread
//! and no queue of its own). A *live* stream ([`StreamPool::add_live`])
//! gets frames pushed from the producer's own thread (a capture callback)
//! through a [`LiveInput`] into a bounded queue whose [`Overflow`] policy
//! says what a full queue does: wait, drop the oldest, or keep only the
//! latest frame (a camera faster than the box: the newest frame is the one
//! worth running, and the latency stays bounded).
//!
//! **Scheduling: round robin over the streams with a frame ready, one frame
//! in flight per stream.** A stream's frames depend on each other through
//! its state, so they run one at a time, in order; different streams are
//! independent, so the pool runs as many streams at once as it has
//! workers. A stream with a frame ready joins the back of one ready queue,
//! and a worker that finishes a stream's frame puts it back at the back if
//! it has another. Between two frames of a stream that stays ready, each
//! other ready stream therefore runs at most one frame: no stream starves,
//! a costly stream takes more time but not more turns, and on a 1-thread
//! pool two always-ready streams alternate exactly. Deadline or
//! oldest-frame-first orders were not chosen: with keep-latest inputs the
//! waiting frame of each stream is already its newest, and equal turns are
//! what "fair" means to N identical cameras; a per-frame deadline would
//! need a cost model the runtime does not have.
//!
//! **Results** reach the stream's callback on the pool worker that ran the
//! frame, in the stream's order, as a [`Delivery`] (the stream, the frame's
//! index, its result, its latency). The callback runs before the stream's
//! next frame starts: keep it short, or take the outputs
//! ([`Delivery::take_result`]) to a channel. It is dropped when its stream
//! ends, so a channel it feeds closes once every stream is over.
//!
//! **Waiting from inside.** Code running on one of the pool's workers (a
//! callback, a source, a node) must not wait for the pool: the worker it
//! would wait for may be its own. The pool's workers know they are (a
//! thread-local holds the pool's identity), so [`StreamPool::wait`],
//! [`StreamPool::try_wait_all`] and a [`LiveInput::try_push`] that would
//! block return [`StreamsError::OnOwnWorker`] there instead of waiting
//! forever, and dropping the pool there ends its streams without waiting
//! for their frames in flight.
//!
//! **Pipelines and observers come back.** The pool owns each stream's
//! pipeline while the stream runs; [`StreamPool::finish`] (one stream) and
//! [`StreamPool::finish_all`] wait for streams to end and hand each one's
//! pipeline back with its final statistics ([`EndedStream`]), its state
//! that of its last good frame, so the caller goes on with it (another
//! run, another pool) as after a sequential run. A stream added with an
//! observer ([`StreamPool::add_source_observed`],
//! [`StreamPool::add_live_observed`]; a [`Profiler`](crate::profile::Profiler)
//! say) owns it and reports each of its frames to it alone, so one stream's
//! timings never mix with another's; it comes back with the pipeline. The
//! observers of a pool are all of one type, its third parameter (none by
//! default, [`NoopObserver`]), so that a frame calls it directly, without a
//! virtual call per node; a stream added without one runs unobserved.
//!
//! **Failures stay in their stream.** A node's error or panic fails that
//! frame alone (the state stays that of the last good frame, as in every
//! run); a source that ends, fails or panics ends its stream alone; a
//! panicking callback ends its stream. [`StreamPool::remove`] stops a
//! stream while the others run, and streams can be added at any time.
//!
//! Fused strip groups inside a frame split with `rayon::join`, which stays
//! on the pool running the frame: a frame uses idle workers when there are
//! fewer ready streams than workers, and none beyond the pool.

mod latency;
mod live;
mod queue;
mod run;
mod stats;
mod worker;

use std::cell::Cell;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::runtime::error::PipelineError;
use crate::runtime::observe::{NoopObserver, Observer};
use crate::runtime::pipeline::Pipeline;
use crate::runtime::stream::{OverBudget, Overflow};

pub use live::{LiveInput, LiveOptions};
use queue::{lock, State, Stream, Work};
pub use run::StreamRun;
pub use stats::{StreamEnd, StreamStats};

/// Identity of the next pool ([`Shared::id`]); 0 is no pool.
static NEXT_POOL_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The identity of the pool this thread is a worker of, 0 for any other
    /// thread; set once when the worker starts.
    static WORKER_OF: Cell<u64> = const { Cell::new(0) };
}

/// A pool's identity, unique in the process: code that runs on a pool's
/// workers (a stream's source, callback or nodes) can tell which pool it
/// serves ([`PoolId::current`]), e.g. to refuse waiting for something the
/// pool's caller holds until the pool's streams end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PoolId(NonZeroU64);

impl PoolId {
    /// The pool the calling thread is a worker of; `None` on any other
    /// thread.
    pub fn current() -> Option<PoolId> {
        NonZeroU64::new(WORKER_OF.with(Cell::get)).map(PoolId)
    }

    /// The identity as a number (never 0), to keep in an atomic.
    pub fn get(self) -> u64 {
        self.0.get()
    }
}

/// Borrows a pipeline's inputs from an owned frame: `|f| (f,)` for a
/// pipeline of one input, for instance.
pub type InputsOf<P, T> = for<'a> fn(&'a T) -> <P as Pipeline>::Inputs<'a>;

/// What a frame's state depends on (e.g. its size): see
/// [`StreamPool::reset_on`].
pub type ResetKeyOf<T> = fn(&T) -> u64;

/// A stream's number in its pool, from 0 in the order streams were added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId(pub u32);

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "stream {}", self.0)
    }
}

/// One frame's result, handed to its stream's callback.
#[derive(Debug)]
pub struct Delivery<'a, T, O> {
    /// The stream.
    pub stream: StreamId,
    /// Position in the stream, counting dropped frames (0-based).
    pub index: u64,
    /// Frames the overflow policy dropped since the previous delivered one.
    pub dropped_before: u64,
    /// The frame, handed back.
    pub frame: T,
    /// From the frame's arrival (pull or push) to its result.
    pub latency: Duration,
    /// When the pipeline started on it.
    pub started: Instant,
    /// When the pipeline finished it.
    pub finished: Instant,
    /// The pool worker that ran it.
    pub worker: Option<usize>,
    /// Which held values the frame read: bit `i` set when hold `i` of the
    /// pipeline (`Pipeline::holds`) was read instead of computed. 0 for a
    /// failed frame and for a pipeline without rates.
    pub held: u64,
    pub(crate) result: Result<(), PipelineError>,
    /// The stream's outputs slot, filled when `result` is `Ok`.
    pub(crate) outputs: &'a mut Option<O>,
}

impl<T, O> Delivery<'_, T, O> {
    /// The outputs, or why the frame failed. The stream's next frame runs
    /// into the same outputs, reusing their memory.
    ///
    /// # Errors
    /// The frame's error.
    pub fn result(&self) -> Result<&O, &PipelineError> {
        match &self.result {
            Ok(()) => self.outputs.as_ref().ok_or(&MISSING),
            Err(e) => Err(e),
        }
    }

    /// The outputs taken out (to send elsewhere), or why the frame failed;
    /// the stream's next frame then allocates new outputs. A second call
    /// returns [`PipelineError::Internal`].
    ///
    /// # Errors
    /// The frame's error.
    pub fn take_result(&mut self) -> Result<O, PipelineError> {
        std::mem::replace(&mut self.result, Err(MISSING_AGAIN))?;
        self.outputs.take().ok_or(MISSING_AGAIN)
    }

    /// Gives the stream outputs to run its next frame into, once
    /// [`Delivery::take_result`] took this frame's: an earlier frame's,
    /// handed back by whoever took them. Their memory is reused, and a
    /// stream reading only some outputs ([`StreamRun::outputs`]) goes on
    /// computing only those (a frame with no outputs to run into makes
    /// every output). While this frame's outputs are still in place,
    /// `outputs` is dropped.
    pub fn recycle(&mut self, outputs: O) {
        if self.outputs.is_none() {
            *self.outputs = Some(outputs);
        }
    }
}

const MISSING_AGAIN: PipelineError = PipelineError::Internal("the outputs were already taken");

static MISSING: PipelineError = PipelineError::Internal("a successful run left no outputs");

/// A stream handed back once it has ended ([`StreamPool::finish`]): its
/// pipeline, in the state its last good frame left, its observer, and its
/// final statistics.
#[derive(Debug)]
pub struct EndedStream<P, O = NoopObserver> {
    /// The stream's final statistics (its `end` is set).
    pub stats: StreamStats,
    /// The pipeline it ran, with the state it reached.
    pub pipeline: P,
    /// The observer it was added with ([`StreamPool::add_source_observed`],
    /// [`StreamPool::add_live_observed`]), having seen each of its frames;
    /// `None` for a stream added without one.
    pub observer: Option<O>,
}

/// Why a pool or a stream could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StreamsError {
    /// [`LiveOptions::queue`] is 0: no frame could ever wait.
    #[error("queue must be at least 1")]
    ZeroQueue,
    /// The worker threads could not be started (the system's message).
    #[error("cannot start the worker pool: {0}")]
    Pool(String),
    /// No stream of this number was ever added to the pool, or it was
    /// handed back ([`StreamPool::finish`]).
    #[error("no {0} in this pool")]
    UnknownStream(StreamId),
    /// A live stream's frames do not fit in the memory budget
    /// ([`LiveOptions::check_memory`]).
    #[error("{0}")]
    OverBudget(OverBudget),
    /// Called on one of the pool's own workers (from a stream's callback,
    /// source or node) where the call would wait for the pool: the worker
    /// it would wait for may be the caller's own, so it could wait forever.
    /// Hand the call to another thread (a channel).
    #[error("cannot wait for the stream pool from one of its own workers")]
    OnOwnWorker,
    /// The stream has ended (removed, or its callback panicked) or its
    /// input was closed: it takes no more frames.
    #[error("{0} takes no more frames")]
    Ended(StreamId),
}

/// What the pool's handle, the live inputs and the running tasks share.
pub(crate) struct Shared<P: Pipeline, T, O> {
    /// This pool's identity, what its workers' [`WORKER_OF`] holds.
    id: PoolId,
    pool: rayon::ThreadPool,
    inputs: InputsOf<P, T>,
    /// Streams with a frame to run, in turn order; one spawned or
    /// deferred task per entry.
    ready: Mutex<VecDeque<Arc<Stream<P, T, O>>>>,
    /// Tasks that found their worker inside a frame (see `worker::run_one`).
    deferred: AtomicUsize,
    /// [`StreamPool::reset_on`]'s key.
    reset_key: std::sync::OnceLock<ResetKeyOf<T>>,
}

impl<P, T, O> Shared<P, T, O>
where
    P: Pipeline + Send + 'static,
    P::Outputs: Send,
    T: Send + 'static,
    O: Observer + Send + 'static,
{
    /// Puts `stream` at the back of the ready queue and spawns the task
    /// that will run the head of the queue.
    pub(crate) fn make_ready(self: &Arc<Self>, stream: Arc<Stream<P, T, O>>) {
        lock(&self.ready).push_back(stream);
        self.spawn_task();
    }

    /// Spawns a task that runs the head of the ready queue.
    pub(crate) fn spawn_task(self: &Arc<Self>) {
        let me = Arc::clone(self);
        self.pool.spawn(move || worker::run_one(&me));
    }
}

impl<P: Pipeline, T, O> Shared<P, T, O> {
    /// Whether the calling thread is one of this pool's workers.
    fn on_own_worker(&self) -> bool {
        WORKER_OF.with(Cell::get) == self.id.get()
    }
}

/// The streams a pool knows, by number (until handed back).
type Streams<P, T, O> = BTreeMap<StreamId, Arc<Stream<P, T, O>>>;

/// N streams, each with its own pipeline, on one worker pool (see the
/// [module docs](self)). `T` is the owned frame a stream carries; `O` the
/// type of the observers streams may be added with (none by default).
///
/// Dropping the pool removes the streams still running and waits for their
/// frames in flight. A stream's callback runs on a pool worker, where
/// waiting for the pool could wait for that worker itself: there,
/// [`wait`](StreamPool::wait), [`try_wait_all`](StreamPool::try_wait_all)
/// and a [`LiveInput::try_push`] that would block return
/// [`StreamsError::OnOwnWorker`], and dropping the pool does not wait for
/// the frames in flight (they finish on their own). Send results to another
/// thread to wait there.
pub struct StreamPool<P: Pipeline, T, O = NoopObserver> {
    shared: Arc<Shared<P, T, O>>,
    threads: usize,
    streams: Mutex<Streams<P, T, O>>,
    next_id: AtomicU32,
}

impl<P: Pipeline, T, O> fmt::Debug for StreamPool<P, T, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamPool")
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

impl<P, T, O> StreamPool<P, T, O>
where
    P: Pipeline + Send + 'static,
    P::Outputs: Send,
    T: Send + 'static,
    O: Observer + Send + 'static,
{
    /// A pool of `threads` workers (0: one per core), whose streams borrow
    /// their pipeline's inputs from a frame with `inputs`.
    ///
    /// # Errors
    /// [`StreamsError::Pool`] if the threads cannot be started.
    pub fn new(threads: usize, inputs: InputsOf<P, T>) -> Result<Self, StreamsError> {
        let threads = if threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            threads
        };
        // Counting from 1, a u64 does not wrap around to 0 in a program's
        // life; were it to, the pool would share the first pool's identity.
        let id = NonZeroU64::new(NEXT_POOL_ID.fetch_add(1, Ordering::Relaxed))
            .map_or(PoolId(NonZeroU64::MIN), PoolId);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("cortex-streams-{i}"))
            // Marks the worker before it runs any job.
            .start_handler(move |_| WORKER_OF.with(|w| w.set(id.get())))
            .build()
            .map_err(|e| StreamsError::Pool(e.to_string()))?;
        Ok(StreamPool {
            shared: Arc::new(Shared {
                id,
                pool,
                inputs,
                ready: Mutex::new(VecDeque::new()),
                deferred: AtomicUsize::new(0),
                reset_key: std::sync::OnceLock::new(),
            }),
            threads,
            streams: Mutex::new(BTreeMap::new()),
            next_id: AtomicU32::new(0),
        })
    }

    /// Resets a stream's pipeline (its state back to the initial values)
    /// before a frame whose `key` differs from the stream's previous
    /// frame's: temporal state computed at one frame size means nothing at
    /// another, so a camera that changes resolution goes on as if its
    /// stream started again, instead of failing or comparing frames of two
    /// sizes. Set once, before or while streams run; later calls are
    /// ignored (returns `false`).
    pub fn reset_on(&self, key: ResetKeyOf<T>) -> bool {
        self.shared.reset_key.set(key).is_ok()
    }

    /// The number of worker threads.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// This pool's identity, what [`PoolId::current`] returns on its
    /// workers.
    pub fn id(&self) -> PoolId {
        self.shared.id
    }

    #[allow(clippy::too_many_arguments)]
    fn add(
        &self,
        pipeline: P,
        run: StreamRun<P::Mode>,
        observer: Option<O>,
        source: Option<queue::Source<T>>,
        capacity: usize,
        overflow: Overflow,
        on_result: queue::OnResult<T, P::Outputs>,
    ) -> Arc<Stream<P, T, O>> {
        let id = StreamId(self.next_id.fetch_add(1, Ordering::Relaxed));
        let pull = source.is_some();
        let stream = Arc::new(Stream {
            id,
            capacity,
            overflow,
            state: Mutex::new(State {
                items: VecDeque::new(),
                scheduled: pull,
                open: true,
                pull,
                end: None,
                closing: None,
                next_index: 0,
                last_index: None,
                counters: Default::default(),
            }),
            changed: Condvar::new(),
            work: Mutex::new(Work {
                pipeline: Some(pipeline),
                run,
                observer,
                outputs: None,
                source,
                on_result: Some(on_result),
                last_key: None,
            }),
        });
        lock(&self.streams).insert(id, Arc::clone(&stream));
        stream
    }

    /// Adds a stream that pulls its frames from `source` on the pool, one
    /// when its turn comes (a file: nothing is dropped, and reading keeps
    /// pace with processing). An `Err` item ends the stream with
    /// [`StreamEnd::SourceFailed`]. `on_result` gets each frame's result in
    /// order, on the worker that ran it.
    ///
    /// The source should not block waiting for frames (it would hold a
    /// worker): a live capture pushes through [`StreamPool::add_live`].
    pub fn add_source<I, E>(
        &self,
        pipeline: P,
        run: impl Into<StreamRun<P::Mode>>,
        source: I,
        on_result: impl FnMut(Delivery<'_, T, P::Outputs>) + Send + 'static,
    ) -> StreamId
    where
        I: IntoIterator<Item = Result<T, E>>,
        I::IntoIter: Send + 'static,
        E: fmt::Display,
    {
        self.add_pull(pipeline, run.into(), None, source, Box::new(on_result))
    }

    /// [`StreamPool::add_source`], each frame of the stream reported to
    /// `observer` (which [`StreamPool::finish`] hands back).
    pub fn add_source_observed<I, E>(
        &self,
        pipeline: P,
        run: impl Into<StreamRun<P::Mode>>,
        observer: O,
        source: I,
        on_result: impl FnMut(Delivery<'_, T, P::Outputs>) + Send + 'static,
    ) -> StreamId
    where
        I: IntoIterator<Item = Result<T, E>>,
        I::IntoIter: Send + 'static,
        E: fmt::Display,
    {
        self.add_pull(
            pipeline,
            run.into(),
            Some(observer),
            source,
            Box::new(on_result),
        )
    }

    fn add_pull<I, E>(
        &self,
        pipeline: P,
        run: StreamRun<P::Mode>,
        observer: Option<O>,
        source: I,
        on_result: queue::OnResult<T, P::Outputs>,
    ) -> StreamId
    where
        I: IntoIterator<Item = Result<T, E>>,
        I::IntoIter: Send + 'static,
        E: fmt::Display,
    {
        let source: queue::Source<T> = Box::new(
            source
                .into_iter()
                .map(|item| item.map_err(|e| e.to_string())),
        );
        let stream = self.add(
            pipeline,
            run,
            observer,
            Some(source),
            1,
            Overflow::Block,
            on_result,
        );
        let id = stream.id;
        self.shared.make_ready(stream);
        id
    }

    /// Adds a live stream: frames are pushed through the returned
    /// [`LiveInput`] (from any thread) into a queue of `options.queue`
    /// frames under `options.overflow`. The stream ends when the input is
    /// dropped or closed and its queue has run.
    ///
    /// # Errors
    /// [`StreamsError::ZeroQueue`].
    pub fn add_live(
        &self,
        pipeline: P,
        run: impl Into<StreamRun<P::Mode>>,
        options: LiveOptions,
        on_result: impl FnMut(Delivery<'_, T, P::Outputs>) + Send + 'static,
    ) -> Result<LiveInput<P, T, O>, StreamsError> {
        self.add_pushed(pipeline, run.into(), None, options, Box::new(on_result))
    }

    /// [`StreamPool::add_live`], each frame of the stream reported to
    /// `observer` (which [`StreamPool::finish`] hands back).
    ///
    /// # Errors
    /// [`StreamsError::ZeroQueue`].
    pub fn add_live_observed(
        &self,
        pipeline: P,
        run: impl Into<StreamRun<P::Mode>>,
        observer: O,
        options: LiveOptions,
        on_result: impl FnMut(Delivery<'_, T, P::Outputs>) + Send + 'static,
    ) -> Result<LiveInput<P, T, O>, StreamsError> {
        self.add_pushed(
            pipeline,
            run.into(),
            Some(observer),
            options,
            Box::new(on_result),
        )
    }

    fn add_pushed(
        &self,
        pipeline: P,
        run: StreamRun<P::Mode>,
        observer: Option<O>,
        options: LiveOptions,
        on_result: queue::OnResult<T, P::Outputs>,
    ) -> Result<LiveInput<P, T, O>, StreamsError> {
        if options.queue == 0 {
            return Err(StreamsError::ZeroQueue);
        }
        let stream = self.add(
            pipeline,
            run,
            observer,
            None,
            options.queue,
            options.overflow,
            on_result,
        );
        Ok(LiveInput {
            shared: Arc::clone(&self.shared),
            stream,
        })
    }

    fn stream(&self, id: StreamId) -> Result<Arc<Stream<P, T, O>>, StreamsError> {
        lock(&self.streams)
            .get(&id)
            .cloned()
            .ok_or(StreamsError::UnknownStream(id))
    }

    /// Stops stream `id` while the others run: its waiting frames are
    /// discarded, its source is not read again, and a frame in flight
    /// finishes (its result is delivered). Removing an ended stream changes
    /// nothing.
    ///
    /// # Errors
    /// [`StreamsError::UnknownStream`].
    pub fn remove(&self, id: StreamId) -> Result<(), StreamsError> {
        let stream = self.stream(id)?;
        let mut s = lock(&stream.state);
        s.end_with(StreamEnd::Removed);
        let idle = !s.scheduled;
        drop(s);
        stream.changed.notify_all();
        if idle {
            stream.release();
        }
        Ok(())
    }

    /// Stream `id`'s statistics so far.
    ///
    /// # Errors
    /// [`StreamsError::UnknownStream`].
    pub fn stats(&self, id: StreamId) -> Result<StreamStats, StreamsError> {
        let stream = self.stream(id)?;
        let s = lock(&stream.state);
        let over = s.end.clone().filter(|_| !s.scheduled);
        Ok(s.counters.stats(id, over))
    }

    /// Every stream's statistics so far, in the order they were added.
    pub fn all_stats(&self) -> Vec<StreamStats> {
        let ids: Vec<StreamId> = lock(&self.streams).keys().copied().collect();
        ids.into_iter()
            .filter_map(|id| self.stats(id).ok())
            .collect()
    }

    /// Waits until stream `id` has ended and its last frame is delivered;
    /// returns its final statistics.
    ///
    /// # Errors
    /// [`StreamsError::UnknownStream`]; [`StreamsError::OnOwnWorker`] when
    /// called on one of the pool's workers (from a callback), where the
    /// frame waited for may need the caller's own worker.
    pub fn wait(&self, id: StreamId) -> Result<StreamStats, StreamsError> {
        if self.shared.on_own_worker() {
            return Err(StreamsError::OnOwnWorker);
        }
        let stream = self.stream(id)?;
        let mut s = lock(&stream.state);
        while s.end.is_none() || s.scheduled {
            s = stream
                .changed
                .wait(s)
                .unwrap_or_else(PoisonError::into_inner);
        }
        Ok(s.counters.stats(id, s.end.clone()))
    }

    /// Waits until stream `id` has ended ([`StreamPool::wait`]), then hands
    /// it back: its pipeline in the state its last good frame left, its
    /// observer and its final statistics. The pool forgets the stream
    /// (its number is then unknown to it); its source and callback are
    /// dropped.
    ///
    /// # Errors
    /// [`StreamsError::UnknownStream`] (also for a stream already handed
    /// back); [`StreamsError::OnOwnWorker`] when called on one of the
    /// pool's workers.
    pub fn finish(&self, id: StreamId) -> Result<EndedStream<P, O>, StreamsError> {
        let stats = self.wait(id)?;
        let stream = lock(&self.streams)
            .remove(&id)
            .ok_or(StreamsError::UnknownStream(id))?;
        // The stream has ended and is not scheduled: no task will run it
        // again, and the one that ran its last frame lets go of `work`
        // once it is done with it.
        let mut work = lock(&stream.work);
        work.source = None;
        work.on_result = None;
        work.outputs = None;
        let pipeline = work.pipeline.take();
        let observer = work.observer.take();
        drop(work);
        // Removed from the pool under its lock by this call alone, so the
        // pipeline is still there.
        let pipeline = pipeline.ok_or(StreamsError::UnknownStream(id))?;
        Ok(EndedStream {
            stats,
            pipeline,
            observer,
        })
    }

    /// Waits until every stream added so far has ended and hands each back
    /// ([`StreamPool::finish`]), in the order they were added. The pool
    /// stays usable for new streams.
    ///
    /// # Errors
    /// [`StreamsError::OnOwnWorker`] when called on one of the pool's
    /// workers (from a callback).
    pub fn finish_all(&self) -> Result<Vec<EndedStream<P, O>>, StreamsError> {
        self.each_stream(|id| self.finish(id))
    }

    /// Waits until every stream added so far has ended (a live stream ends
    /// when its input is dropped); returns their final statistics in the
    /// order they were added. On one of the pool's own workers, where it
    /// cannot wait ([`StreamPool::try_wait_all`]), it returns the
    /// statistics so far ([`StreamPool::all_stats`]) at once.
    pub fn wait_all(&self) -> Vec<StreamStats> {
        self.try_wait_all().unwrap_or_else(|_| self.all_stats())
    }

    /// [`StreamPool::wait_all`], refusing to wait where it could wait
    /// forever.
    ///
    /// # Errors
    /// [`StreamsError::OnOwnWorker`] when called on one of the pool's
    /// workers (from a callback).
    pub fn try_wait_all(&self) -> Result<Vec<StreamStats>, StreamsError> {
        self.each_stream(|id| self.wait(id))
    }

    /// `wait` on each stream added so far, in the order added, off the
    /// pool's own workers (where waiting could never end).
    fn each_stream<R>(
        &self,
        wait: impl Fn(StreamId) -> Result<R, StreamsError>,
    ) -> Result<Vec<R>, StreamsError> {
        if self.shared.on_own_worker() {
            return Err(StreamsError::OnOwnWorker);
        }
        let ids: Vec<StreamId> = lock(&self.streams).keys().copied().collect();
        // A stream another thread finished meanwhile is its caller's.
        Ok(ids.into_iter().filter_map(|id| wait(id).ok()).collect())
    }
}

impl<P: Pipeline, T, O> Drop for StreamPool<P, T, O> {
    fn drop(&mut self) {
        let streams: Vec<_> = lock(&self.streams).values().cloned().collect();
        for stream in &streams {
            lock(&stream.state).end_with(StreamEnd::Removed);
            stream.changed.notify_all();
        }
        // On one of the pool's workers (the last handle dropped by a
        // callback), a stream in flight may be the caller's own: waiting
        // for it would never end, and its `work` lock is held further down
        // this very stack. Ended streams in flight let go of their source
        // and callback themselves when their frame finishes (`run_frame`),
        // so only the idle ones are released here.
        let own_worker = self.shared.on_own_worker();
        for stream in &streams {
            let mut s = lock(&stream.state);
            if own_worker {
                let busy = s.scheduled;
                drop(s);
                if !busy {
                    stream.release();
                }
                continue;
            }
            while s.scheduled {
                s = stream
                    .changed
                    .wait(s)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            drop(s);
            stream.release();
        }
    }
}
