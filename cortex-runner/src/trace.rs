//! Chrome trace event files (open in Perfetto or `chrome://tracing`): one
//! complete (`"ph": "X"`) slice per node run and one per frame, on a track
//! per thread: track 0 is the thread that runs the frames (and every node
//! of a sequential run), track `i + 1` the engine pool's worker `i`
//! (`rayon::current_thread_index()`), so a parallel run shows which nodes
//! ran side by side.

use std::collections::BTreeSet;
use std::time::Instant;

use serde_json::{json, Value};

/// Collected trace events, written out once at the end of a run.
#[derive(Debug)]
pub struct TraceLog {
    origin: Instant,
    named: BTreeSet<u64>,
    events: Vec<Value>,
}

impl Default for TraceLog {
    fn default() -> Self {
        TraceLog {
            origin: Instant::now(),
            named: BTreeSet::new(),
            events: Vec::new(),
        }
    }
}

impl TraceLog {
    /// A log whose time 0 is now.
    pub fn new() -> Self {
        TraceLog::default()
    }

    /// The track of the calling thread: its index in the engine's pool
    /// plus one, or 0 outside the pool.
    pub fn current_tid() -> u64 {
        rayon::current_thread_index().map_or(0, |i| i as u64 + 1)
    }

    /// Names track `tid` on first use.
    fn name_track(&mut self, tid: u64) {
        if self.named.insert(tid) {
            let name = match tid {
                0 => "frames (calling thread)".to_string(),
                t => format!("pool worker {}", t - 1),
            };
            self.events.push(json!({
                "name": "thread_name", "ph": "M", "pid": 1, "tid": tid,
                "args": { "name": name }
            }));
        }
    }

    /// Names track `tid` `name` (instead of its default name), e.g. a
    /// stream's track.
    pub fn thread_name(&mut self, tid: u64, name: &str) {
        if self.named.insert(tid) {
            self.events.push(json!({
                "name": "thread_name", "ph": "M", "pid": 1, "tid": tid,
                "args": { "name": name }
            }));
        }
    }

    /// Records a slice `name` of category `cat` from `start` to `end` on
    /// the calling thread's track, of `frame` when it is known (`null`
    /// otherwise: a pipelined run's nodes, whose events do not say which
    /// of the frames in flight they belong to).
    pub fn slice(
        &mut self,
        name: &str,
        cat: &str,
        start: Instant,
        end: Instant,
        frame: Option<u64>,
    ) {
        self.push(Self::current_tid(), name, cat, start, end, frame);
    }

    /// Records a slice on track `tid` (see [`TraceLog::current_tid`]).
    pub fn slice_on(
        &mut self,
        tid: u64,
        name: &str,
        cat: &str,
        start: Instant,
        end: Instant,
        frame: u64,
    ) {
        self.push(tid, name, cat, start, end, Some(frame));
    }

    fn push(
        &mut self,
        tid: u64,
        name: &str,
        cat: &str,
        start: Instant,
        end: Instant,
        frame: Option<u64>,
    ) {
        self.name_track(tid);
        let ts = start.saturating_duration_since(self.origin).as_nanos() as f64 / 1e3;
        let dur = end.saturating_duration_since(start).as_nanos() as f64 / 1e3;
        self.events.push(json!({
            "name": name, "cat": cat, "ph": "X", "pid": 1, "tid": tid,
            "ts": ts, "dur": dur, "args": { "frame": frame }
        }));
    }

    /// The whole file: `{"traceEvents": [...], "displayTimeUnit": "ms"}`.
    pub fn to_json(&self, process: &str) -> Value {
        let mut events = vec![json!({
            "name": "process_name", "ph": "M", "pid": 1, "args": { "name": process }
        })];
        events.extend(self.events.iter().cloned());
        json!({ "traceEvents": events, "displayTimeUnit": "ms" })
    }
}
