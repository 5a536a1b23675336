//! Chrome trace event files (open in Perfetto or `chrome://tracing`): one
//! complete (`"ph": "X"`) slice per node run and one per frame, on a track
//! per thread.

use std::collections::HashMap;
use std::thread::ThreadId;
use std::time::Instant;

use serde_json::{json, Value};

/// Collected trace events, written out once at the end of a run.
#[derive(Debug)]
pub struct TraceLog {
    origin: Instant,
    threads: HashMap<ThreadId, u64>,
    events: Vec<Value>,
}

impl Default for TraceLog {
    fn default() -> Self {
        TraceLog {
            origin: Instant::now(),
            threads: HashMap::new(),
            events: Vec::new(),
        }
    }
}

impl TraceLog {
    /// A log whose time 0 is now.
    pub fn new() -> Self {
        TraceLog::default()
    }

    /// The track of the calling thread (named on first use).
    fn tid(&mut self) -> u64 {
        let id = std::thread::current().id();
        let next = self.threads.len() as u64 + 1;
        let tid = *self.threads.entry(id).or_insert(next);
        if tid == next {
            let name = std::thread::current()
                .name()
                .map_or_else(|| format!("thread {tid}"), str::to_string);
            self.events.push(json!({
                "name": "thread_name", "ph": "M", "pid": 1, "tid": tid,
                "args": { "name": name }
            }));
        }
        tid
    }

    /// Records a slice `name` of category `cat` from `start` to `end`.
    pub fn slice(&mut self, name: &str, cat: &str, start: Instant, end: Instant, frame: u64) {
        let tid = self.tid();
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
