//! What a stream counted: its frames by fate, latencies and rate, and how
//! it ended.

use std::time::{Duration, Instant};

use super::latency::Histogram;
use super::StreamId;

/// Why a stream ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamEnd {
    /// Its source was exhausted (or its [`LiveInput`](super::LiveInput)
    /// closed) and every frame it gave was finished.
    Finished,
    /// [`StreamPool::remove`](super::StreamPool::remove) stopped it; frames
    /// still waiting were discarded.
    Removed,
    /// Its source returned an error, or its live input was closed with
    /// [`LiveInput::fail`](super::LiveInput::fail) (the text); the frames
    /// before it were finished.
    SourceFailed(String),
    /// Its source panicked (the message); the frames before it were
    /// finished.
    SourcePanicked(String),
    /// Its result callback panicked (the message); frames still waiting
    /// were discarded.
    CallbackPanicked(String),
}

/// A stream's statistics. Once it has ended, `received = processed +
/// failed + dropped + discarded`.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamStats {
    /// The stream.
    pub stream: StreamId,
    /// Frames taken from its source or pushed to its input.
    pub received: u64,
    /// Frames the pipeline processed successfully.
    pub processed: u64,
    /// Frames that failed (a node's error or panic).
    pub failed: u64,
    /// Frames the overflow policy dropped before they ran.
    pub dropped: u64,
    /// Frames waiting when the stream was removed, or pushed after.
    pub discarded: u64,
    /// Median latency of the finished frames, from arrival (pull or push)
    /// to the result, at most about 3 % above the true value.
    pub latency_p50: Option<Duration>,
    /// 99th percentile of that latency, likewise.
    pub latency_p99: Option<Duration>,
    /// Finished frames (processed or failed) per second, from the first
    /// arrival to the last result.
    pub frames_per_second: f64,
    /// How it ended; `None` while it runs.
    pub end: Option<StreamEnd>,
}

/// The running counters behind [`StreamStats`].
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) received: u64,
    pub(crate) processed: u64,
    pub(crate) failed: u64,
    pub(crate) dropped: u64,
    pub(crate) discarded: u64,
    pub(crate) latency: Histogram,
    pub(crate) first_arrival: Option<Instant>,
    pub(crate) last_result: Option<Instant>,
}

impl Counters {
    /// A frame arrived now.
    pub(crate) fn arrived(&mut self, at: Instant) {
        self.received += 1;
        self.first_arrival.get_or_insert(at);
    }

    /// A frame that arrived at `arrived` finished at `at`.
    pub(crate) fn finished(&mut self, ok: bool, arrived: Instant, at: Instant) {
        if ok {
            self.processed += 1;
        } else {
            self.failed += 1;
        }
        self.latency.record(at.saturating_duration_since(arrived));
        self.last_result = Some(at);
    }

    /// The snapshot of stream `stream`.
    pub(crate) fn stats(&self, stream: StreamId, end: Option<StreamEnd>) -> StreamStats {
        let done = self.processed + self.failed;
        let span = match (self.first_arrival, self.last_result) {
            (Some(a), Some(b)) => b.saturating_duration_since(a).as_secs_f64(),
            _ => 0.0,
        };
        StreamStats {
            stream,
            received: self.received,
            processed: self.processed,
            failed: self.failed,
            dropped: self.dropped,
            discarded: self.discarded,
            latency_p50: self.latency.quantile(0.5),
            latency_p99: self.latency.quantile(0.99),
            frames_per_second: if span > 0.0 { done as f64 / span } else { 0.0 },
            end,
        }
    }
}
