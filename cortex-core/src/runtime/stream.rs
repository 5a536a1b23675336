//! Flow control between a frame source and a pipeline: a producer thread
//! pulls frames into a bounded queue, and what happens when the queue is
//! full is a policy ([`Overflow`]): wait (lose nothing), drop the oldest
//! waiting frame, or keep only the newest one (live video, where a late
//! frame is worth less than a fresh one).
//!
//! [`feed`] runs the producer under [`std::thread::scope`], so the source
//! may borrow from the caller, and hands the frames to the consumer on the
//! calling thread in source order. The counts are exact: every frame pulled
//! from the source is delivered, dropped by the policy, or discarded when
//! the consumer stops early, and each [`Arrival`] says how many frames were
//! dropped just before it.
//!
//! The queue is a `Mutex<VecDeque>` with two condition variables: at one
//! frame per tens of milliseconds the lock is never contended enough to
//! matter, and the policies need to inspect and edit the waiting frames,
//! which a channel does not allow.

use std::collections::VecDeque;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

// What a pipelined run (`runtime::pipelined`, fed by this queue) hands back
// per frame, reachable beside the stream's other types.
pub use super::pipelined::StreamFrame;

/// What happens when a frame arrives and the queue is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Overflow {
    /// The producer waits for room: nothing is lost, and a slow consumer
    /// slows the source down (files, offline batches).
    #[default]
    Block,
    /// The oldest waiting frame is dropped to make room.
    DropOldest,
    /// The queue keeps only the newest waiting frame: every older waiting
    /// frame is dropped when a new one arrives, whatever
    /// [`StreamOptions::queue`] is (live sources, where latency matters
    /// more than completeness).
    KeepLatest,
}

/// How frames flow from a source to the pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamOptions {
    /// Frames being processed at once (≥ 1; 1 = sequential). [`feed`]
    /// hands over one frame at a time; this is for the caller's scheduler,
    /// checked here so that one [`StreamOptions::validate`] covers both.
    pub in_flight: usize,
    /// Frames waiting between the source and the pipeline (≥ 1).
    pub queue: usize,
    /// What happens when the queue is full.
    pub overflow: Overflow,
}

impl StreamOptions {
    /// Two frames in flight, four waiting, [`Overflow::Block`].
    pub const DEFAULT: StreamOptions = StreamOptions {
        in_flight: 2,
        queue: 4,
        overflow: Overflow::Block,
    };

    /// Checks the fields.
    ///
    /// # Errors
    /// [`StreamError::ZeroInFlight`] or [`StreamError::ZeroQueue`].
    pub fn validate(&self) -> Result<(), StreamError> {
        if self.in_flight == 0 {
            return Err(StreamError::ZeroInFlight);
        }
        if self.queue == 0 {
            return Err(StreamError::ZeroQueue);
        }
        Ok(())
    }
}

impl Default for StreamOptions {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The default [`memory_budget`]: 2 GiB for the frames one stream holds at
/// once.
///
/// A fixed figure rather than a share of the machine's memory, so that a
/// command line accepted on one machine is accepted on every other (and the
/// figure is known without reading anything from the system). 2 GiB holds
/// the [default options](StreamOptions::DEFAULT) — 7 frames — at the
/// largest frame the default frame limits accept (8192×8192 RGB, 192 MiB a
/// frame: 1.3 GiB), and the largest options (64 in flight, 1024 waiting) at
/// 640×480 RGB (1 GiB); it refuses e.g. 1031 frames of 8192×8192 (193 GiB),
/// which no machine running this has.
pub const DEFAULT_MEMORY_BUDGET: u64 = 2 << 30;

static MEMORY_BUDGET: AtomicU64 = AtomicU64::new(DEFAULT_MEMORY_BUDGET);

thread_local! {
    /// [`with_memory_budget`]'s budget on this thread.
    static BUDGET_HERE: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// The bytes the frames one stream holds at once may take (process-wide,
/// like the frame limits: a deployment decision taken once, unless
/// [`with_memory_budget`] gives this thread another). Default
/// [`DEFAULT_MEMORY_BUDGET`].
pub fn memory_budget() -> u64 {
    BUDGET_HERE
        .with(std::cell::Cell::get)
        .unwrap_or_else(|| MEMORY_BUDGET.load(Ordering::Relaxed))
}

/// Sets [`memory_budget`] for the whole process.
pub fn set_memory_budget(bytes: u64) {
    MEMORY_BUDGET.store(bytes, Ordering::Relaxed);
}

/// Runs `f` with [`memory_budget`] at `bytes` on this thread (e.g. one run
/// of a program given its budget on the command line), the process's
/// budget untouched; the thread's previous one is back afterwards, also
/// when `f` unwinds.
pub fn with_memory_budget<R>(bytes: u64, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<u64>);
    impl Drop for Restore {
        fn drop(&mut self) {
            BUDGET_HERE.with(|b| b.set(self.0));
        }
    }
    let _restore = Restore(BUDGET_HERE.with(|b| b.replace(Some(bytes))));
    f()
}

/// Why a stream's options cannot fit its frames in the memory budget: the
/// numbers, for a message that says what to change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverBudget {
    /// Bytes of one frame.
    pub frame_bytes: u64,
    /// Frames in flight ([`StreamOptions::in_flight`]).
    pub in_flight: u64,
    /// Frames that can wait in the queue ([`StreamOptions::queue`], 1 with
    /// [`Overflow::KeepLatest`]).
    pub waiting: u64,
    /// The budget they were checked against.
    pub budget: u64,
}

impl OverBudget {
    /// Frames held at once: in flight, waiting, and one in the source's
    /// hand (read, waiting for room).
    pub fn frames(&self) -> u64 {
        self.in_flight
            .saturating_add(self.waiting)
            .saturating_add(1)
    }

    /// Bytes those frames take.
    pub fn needed(&self) -> u64 {
        self.frame_bytes.saturating_mul(self.frames())
    }
}

impl std::fmt::Display for OverBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} frames of {} ({} in flight + {} waiting + 1 being read) need {}, over the memory budget of {}",
            self.frames(),
            bytes_text(self.frame_bytes),
            self.in_flight,
            self.waiting,
            bytes_text(self.needed()),
            bytes_text(self.budget),
        )
    }
}

/// A byte count for people: `201326592 bytes (192.0 MiB)`.
fn bytes_text(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = "";
    for u in UNITS {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = u;
    }
    if unit.is_empty() {
        format!("{bytes} bytes")
    } else {
        format!("{bytes} bytes ({value:.1} {unit})")
    }
}

impl StreamOptions {
    /// Frames a stream with these options holds at once: [`in_flight`],
    /// those waiting in the queue ([`queue`], or 1 with
    /// [`Overflow::KeepLatest`]), and one the source has read and waits to
    /// queue.
    ///
    /// [`in_flight`]: StreamOptions::in_flight
    /// [`queue`]: StreamOptions::queue
    pub fn frames_held(&self) -> u64 {
        self.over(0, 0).frames()
    }

    fn over(&self, frame_bytes: u64, budget: u64) -> OverBudget {
        let waiting = match self.overflow {
            Overflow::KeepLatest => 1,
            _ => self.queue,
        };
        OverBudget {
            frame_bytes,
            in_flight: self.in_flight as u64,
            waiting: waiting as u64,
            budget,
        }
    }

    /// Checks that [`frames_held`](StreamOptions::frames_held) frames of
    /// `frame_bytes` each fit in `budget` bytes (usually
    /// [`memory_budget`]): call it before the first frame, when the frame
    /// size is known (a header, a configured resolution), to refuse options
    /// that would exhaust memory before anything is allocated.
    ///
    /// # Errors
    /// [`StreamError::OverBudget`], with the numbers.
    pub fn check_memory(&self, frame_bytes: u64, budget: u64) -> Result<(), StreamError> {
        let over = self.over(frame_bytes, budget);
        if over.needed() > budget {
            return Err(StreamError::OverBudget(over));
        }
        Ok(())
    }
}

/// Why a stream could not run or ended abnormally.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StreamError {
    /// [`StreamOptions::in_flight`] is 0: no frame could ever be processed.
    #[error("in_flight must be at least 1")]
    ZeroInFlight,
    /// [`StreamOptions::queue`] is 0: no frame could ever wait.
    #[error("queue must be at least 1")]
    ZeroQueue,
    /// The source panicked while producing a frame; the frames before it
    /// were delivered (or dropped) as usual.
    #[error("the frame source panicked: {0}")]
    SourcePanicked(String),
    /// The result callback of a pipelined run (`run_stream`'s `on_result`)
    /// panicked on frame `frame`: the stream stopped there. That frame
    /// was handed to the callback and its state committed; the frames
    /// behind it (staged or waiting) were discarded without touching the
    /// state. `report` counts them all (`received = processed + failed +
    /// dropped + discarded`).
    #[error("the result callback panicked on frame {frame}: {message}")]
    CallbackPanicked {
        /// The frame whose delivery panicked.
        frame: u64,
        /// The panic's message.
        message: String,
        /// The stream's counts up to the stop.
        report: StreamReport,
    },
    /// The frames the options hold at once do not fit in the memory budget
    /// ([`StreamOptions::check_memory`], and [`feed_sized`] for every
    /// frame it reads).
    #[error("{0}")]
    OverBudget(OverBudget),
    /// A stream's `Run` selected weights or a plan chosen at run time: a
    /// stream runs a declared mode (its stages are planned per mode); run
    /// other selections frame by frame with `run_with`.
    #[error("a stream runs a declared mode; run weights or a plan chosen at run time frame by frame with run_with")]
    NotAMode,
}

/// The counts of a whole stream. `received = processed + failed + dropped
/// + discarded`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StreamReport {
    /// Frames pulled from the source.
    pub received: u64,
    /// Frames the pipeline processed successfully.
    pub processed: u64,
    /// Frames the pipeline failed on.
    pub failed: u64,
    /// Frames the overflow policy dropped (never reached the pipeline).
    pub dropped: u64,
    /// Frames pulled but never delivered because the consumer stopped the
    /// stream first (those waiting in the queue, and one in the producer's
    /// hand).
    pub discarded: u64,
}

impl StreamReport {
    /// The report of a stream from [`feed`]'s counts and the number of
    /// delivered frames the caller saw fail.
    pub fn from_feed(feed: &FeedReport, failed: u64) -> StreamReport {
        StreamReport {
            received: feed.received,
            processed: feed.delivered.saturating_sub(failed),
            failed: failed.min(feed.delivered),
            dropped: feed.dropped,
            discarded: feed.discarded,
        }
    }
}

/// What [`feed`] counted. `received = delivered + dropped + discarded`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FeedReport {
    /// Items pulled from the source.
    pub received: u64,
    /// Items handed to the consumer.
    pub delivered: u64,
    /// Items the overflow policy dropped.
    pub dropped: u64,
    /// Items pulled but not delivered because the consumer stopped first.
    pub discarded: u64,
    /// Whether the consumer stopped the stream (returned
    /// [`ControlFlow::Break`]) before the source was exhausted.
    pub stopped: bool,
}

/// One item handed to the consumer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arrival<T> {
    /// Position in the source, counting dropped items (0-based).
    pub index: u64,
    /// The item.
    pub item: T,
    /// Items dropped since the previous delivered one (or since the start).
    pub dropped_before: u64,
}

/// Pulls items from `source` on a producer thread into a bounded queue
/// with `opts`' overflow policy, and hands them to `consume` on the calling
/// thread in source order (minus dropped ones). Returns when the source is
/// exhausted and the queue drained, or when `consume` returns
/// [`ControlFlow::Break`]: the producer then stops pulling (it finishes the
/// `next()` call it may be in) and the waiting items are discarded.
///
/// A panic in `consume` stops the producer and propagates once it has
/// finished; a panic in the source ends the stream with
/// [`StreamError::SourcePanicked`] after the items before it are delivered.
///
/// # Errors
/// [`StreamError::ZeroInFlight`] / [`StreamError::ZeroQueue`] for invalid
/// options (nothing is pulled), [`StreamError::SourcePanicked`].
pub fn feed<T, I>(
    source: I,
    opts: &StreamOptions,
    consume: impl FnMut(Arrival<T>) -> ControlFlow<()>,
) -> Result<FeedReport, StreamError>
where
    T: Send,
    I: Iterator<Item = T> + Send,
{
    feed_sized(source, opts, u64::MAX, |_| 0, consume)
}

/// [`feed`] under a memory budget: each item is sized with `bytes_of` on
/// the producer as soon as it is read, before it is queued, and the first
/// one whose [`frames_held`](StreamOptions::frames_held) copies would not
/// fit in `budget` bytes (usually [`memory_budget`]) ends the stream: it is
/// dropped, nothing more is read, the items before it are delivered, and
/// the result is [`StreamError::OverBudget`]. The first item is checked
/// before anything is queued, so options that cannot fit cost one item.
///
/// # Errors
/// As [`feed`], and [`StreamError::OverBudget`].
pub fn feed_sized<T, I>(
    source: I,
    opts: &StreamOptions,
    budget: u64,
    bytes_of: impl Fn(&T) -> u64 + Send,
    mut consume: impl FnMut(Arrival<T>) -> ControlFlow<()>,
) -> Result<FeedReport, StreamError>
where
    T: Send,
    I: Iterator<Item = T> + Send,
{
    opts.validate()?;
    let queue = &FrameQueue::new(opts.queue, opts.overflow);
    std::thread::scope(|scope| {
        let producer = scope.spawn(move || {
            // Closing on the way out, unwinding included, is what keeps a
            // panicking source from leaving the consumer waiting forever.
            let _close = CloseOnDrop(queue);
            for item in source {
                let over = opts.over(bytes_of(&item), budget);
                if over.needed() > budget {
                    return Err(over);
                }
                if queue.push(item).is_err() {
                    break;
                }
                if queue.is_stopped() {
                    break;
                }
            }
            Ok(())
        });
        // Stopping on the way out, unwinding included, is what keeps a
        // panicking consumer from leaving the producer blocked on a full
        // queue (the scope would then never finish joining it).
        let stop = StopOnDrop(queue);
        let mut last: Option<u64> = None;
        let mut stopped = false;
        while let Some((index, item)) = queue.pop() {
            let dropped_before = index - last.map_or(0, |l| l + 1);
            last = Some(index);
            if consume(Arrival {
                index,
                item,
                dropped_before,
            })
            .is_break()
            {
                stopped = true;
                break;
            }
        }
        drop(stop);
        let joined = producer.join();
        let counts = queue.counts();
        match joined {
            Ok(Ok(())) => Ok(FeedReport {
                received: counts.received,
                delivered: counts.delivered,
                dropped: counts.dropped,
                discarded: counts.discarded,
                stopped,
            }),
            Ok(Err(over)) => Err(StreamError::OverBudget(over)),
            Err(payload) => Err(StreamError::SourcePanicked(panic_message(&*payload))),
        }
    })
}

/// The text of a panic payload (`panic!` with a literal or a format), for
/// code that catches a panic and reports it as an error, as the engines do.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

struct CloseOnDrop<'a, T>(&'a FrameQueue<T>);

impl<T> Drop for CloseOnDrop<'_, T> {
    fn drop(&mut self) {
        self.0.close();
    }
}

struct StopOnDrop<'a, T>(&'a FrameQueue<T>);

impl<T> Drop for StopOnDrop<'_, T> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// The counters of a [`FrameQueue`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueueCounts {
    /// Items pushed (accepted or refused after a stop).
    pub received: u64,
    /// Items popped.
    pub delivered: u64,
    /// Items the overflow policy dropped.
    pub dropped: u64,
    /// Items discarded by [`FrameQueue::stop`] or refused after it.
    pub discarded: u64,
}

/// A bounded multi-producer queue with an [`Overflow`] policy, numbering
/// the items in push order. [`feed`] is built on it; use it directly for
/// other thread layouts.
#[derive(Debug)]
pub struct FrameQueue<T> {
    state: Mutex<QueueState<T>>,
    /// Signalled when an item arrives or the queue closes or stops.
    not_empty: Condvar,
    /// Signalled when room appears or the queue stops.
    not_full: Condvar,
    capacity: usize,
    overflow: Overflow,
}

#[derive(Debug)]
struct QueueState<T> {
    items: VecDeque<(u64, T)>,
    /// No more pushes will come: `pop` drains, then returns `None`.
    closed: bool,
    /// The consumer is gone: pushes are refused and nothing is kept.
    stopped: bool,
    counts: QueueCounts,
}

impl<T> FrameQueue<T> {
    /// A queue holding at most `capacity` waiting items (at least 1; a 0 is
    /// taken as 1) under `overflow`.
    pub fn new(capacity: usize, overflow: Overflow) -> Self {
        let capacity = capacity.max(1);
        FrameQueue {
            state: Mutex::new(QueueState {
                // Never grows beyond the capacity: one allocation, up front.
                items: VecDeque::with_capacity(match overflow {
                    Overflow::KeepLatest => 1,
                    _ => capacity,
                }),
                closed: false,
                stopped: false,
                counts: QueueCounts::default(),
            }),
            not_empty: Condvar::new(),
            not_full: Condvar::new(),
            capacity,
            overflow,
        }
    }

    /// The state, also after a panic elsewhere while it was locked: every
    /// update below leaves it consistent before anything can panic, so a
    /// poisoned lock holds valid counts.
    fn lock(&self) -> MutexGuard<'_, QueueState<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends `item` under the overflow policy (with [`Overflow::Block`],
    /// waits for room) and returns its index.
    ///
    /// # Errors
    /// The item back when the queue was stopped (before or while waiting).
    pub fn push(&self, item: T) -> Result<u64, T> {
        let mut s = self.lock();
        s.counts.received += 1;
        let index = s.counts.received - 1;
        match self.overflow {
            Overflow::Block => {
                while s.items.len() >= self.capacity && !s.stopped {
                    s = self
                        .not_full
                        .wait(s)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            }
            Overflow::DropOldest => {
                while s.items.len() >= self.capacity {
                    s.items.pop_front();
                    s.counts.dropped += 1;
                }
            }
            Overflow::KeepLatest => {
                let n = s.items.len() as u64;
                s.items.clear();
                s.counts.dropped += n;
            }
        }
        if s.stopped {
            s.counts.discarded += 1;
            return Err(item);
        }
        s.items.push_back((index, item));
        drop(s);
        self.not_empty.notify_one();
        Ok(index)
    }

    /// The oldest waiting item and its index; waits while the queue is
    /// empty and open. `None` once it is closed and drained, or stopped.
    pub fn pop(&self) -> Option<(u64, T)> {
        let mut s = self.lock();
        loop {
            if s.stopped {
                return None;
            }
            if let Some(entry) = s.items.pop_front() {
                s.counts.delivered += 1;
                drop(s);
                self.not_full.notify_one();
                return Some(entry);
            }
            if s.closed {
                return None;
            }
            s = self
                .not_empty
                .wait(s)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// No more items will be pushed: [`FrameQueue::pop`] drains what waits,
    /// then returns `None`.
    pub fn close(&self) {
        self.lock().closed = true;
        self.not_empty.notify_all();
    }

    /// The consumer is gone: waiting items are discarded, pushes (also
    /// those waiting for room) are refused, pops return `None`.
    pub fn stop(&self) {
        let mut s = self.lock();
        if !s.stopped {
            s.stopped = true;
            let n = s.items.len() as u64;
            s.items.clear();
            s.counts.discarded += n;
        }
        drop(s);
        self.not_full.notify_all();
        self.not_empty.notify_all();
    }

    /// Whether [`FrameQueue::stop`] was called.
    pub fn is_stopped(&self) -> bool {
        self.lock().stopped
    }

    /// The counters so far.
    pub fn counts(&self) -> QueueCounts {
        self.lock().counts
    }
}

#[cfg(test)]
mod tests;
