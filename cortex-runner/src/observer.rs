//! Watching a run: the observer that times each node and frame (for the
//! profile, JSON's `node_ms` and the trace), the progress bar and the
//! summary line.

use std::io::Write;
use std::time::Instant;

use cortex_core::ir::{GraphIr, NodeId};
use cortex_core::observe::Observer;
use cortex_core::plan::Plan;
use cortex_core::profile::Profiler;
use cortex_core::stream::StreamReport;
use serde_json::{json, Map, Value};

use crate::error::RunnerError;
use crate::trace::TraceLog;

/// The observer of a run: the profiler, this frame's node times and the
/// optional trace. On the parallel engine its events come from the pool's
/// threads, one at a time under a lock: it is `Send`, and keeps one start
/// time per node so that nodes running side by side are timed apart.
pub(crate) struct RunObserver {
    pub(crate) profiler: Profiler<'static>,
    ir: &'static GraphIr,
    begun: Vec<Option<Instant>>,
    frame_ms: Vec<Option<f64>>,
    frame_start: Option<Instant>,
    /// This frame's fused groups that ran fused, with their times.
    frame_groups: Vec<(&'static [NodeId], f64)>,
    group_start: Option<(&'static [NodeId], Instant)>,
    pub(crate) frame: u64,
    /// Each frame's end moves [`RunObserver::frame`] to the next (the
    /// pipelined engine, whose frames are not handed over one by one).
    pub(crate) count_frames: bool,
    pub(crate) trace: Option<TraceLog>,
}

impl RunObserver {
    pub(crate) fn new(ir: &'static GraphIr, trace: bool) -> Self {
        RunObserver {
            profiler: Profiler::new(ir),
            ir,
            begun: vec![None; ir.nodes.len()],
            frame_ms: vec![None; ir.nodes.len()],
            frame_start: None,
            frame_groups: Vec::new(),
            group_start: None,
            frame: 0,
            count_frames: false,
            trace: trace.then(TraceLog::new),
        }
    }

    /// The frame a node event belongs to: the current one, except on the
    /// pipelined engine, where the next frames' first stages run beside a
    /// frame's second stage and no event says which frame is whose.
    fn node_frame(&self) -> Option<u64> {
        (!self.count_frames).then_some(self.frame)
    }

    /// This frame's node times as a JSON object, in topological order, then
    /// each fused group's as `"[a+b+c]"` (its members run together).
    pub(crate) fn node_ms_json(&self) -> Value {
        let mut m = Map::new();
        for &id in self.ir.topo.iter() {
            if let Some(ms) = self.frame_ms.get(id as usize).copied().flatten() {
                m.insert(self.ir.node(id).name.to_string(), json!(round_ms(ms)));
            }
        }
        for (members, ms) in &self.frame_groups {
            m.insert(group_name(self.ir, members), json!(round_ms(*ms)));
        }
        Value::Object(m)
    }
}

/// A fused group's name in the outputs: `[gray+laplacian+scene]`.
fn group_name(ir: &GraphIr, members: &[NodeId]) -> String {
    let names: Vec<&str> = members.iter().map(|&m| ir.node(m).name.as_ref()).collect();
    format!("[{}]", names.join("+"))
}

/// Microsecond resolution is plenty and keeps JSON lines short.
fn round_ms(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}

impl Observer for RunObserver {
    fn frame_begin(&mut self, ir: &'static GraphIr, plan: &Plan) {
        self.frame_ms.iter_mut().for_each(|t| *t = None);
        self.frame_groups.clear();
        self.frame_start = Some(Instant::now());
        self.profiler.frame_begin(ir, plan);
    }

    fn node_begin(&mut self, node: NodeId) {
        if let Some(b) = self.begun.get_mut(node as usize) {
            *b = Some(Instant::now());
        }
        self.profiler.node_begin(node);
    }

    fn node_end(&mut self, node: NodeId) {
        let end = Instant::now();
        self.profiler.node_end(node);
        let Some(start) = self.begun.get_mut(node as usize).and_then(Option::take) else {
            return;
        };
        if let Some(t) = self.frame_ms.get_mut(node as usize) {
            *t = Some(end.saturating_duration_since(start).as_secs_f64() * 1e3);
        }
        let frame = self.node_frame();
        if let Some(trace) = &mut self.trace {
            let name = &self.ir.node(node).name;
            trace.slice(name, "node", start, end, frame);
        }
    }

    fn group_begin(&mut self, members: &'static [NodeId]) {
        self.group_start = Some((members, Instant::now()));
        self.profiler.group_begin(members);
    }

    fn group_end(&mut self, fused: bool) {
        let end = Instant::now();
        self.profiler.group_end(fused);
        let Some((members, start)) = self.group_start.take() else {
            return;
        };
        if !fused {
            return;
        }
        let ms = end.saturating_duration_since(start).as_secs_f64() * 1e3;
        self.frame_groups.push((members, ms));
        let frame = self.node_frame();
        if let Some(trace) = &mut self.trace {
            trace.slice(
                &group_name(self.ir, members),
                "fused group",
                start,
                end,
                frame,
            );
        }
    }

    fn frame_end(&mut self, ok: bool) {
        let end = Instant::now();
        self.profiler.frame_end(ok);
        if let (Some(trace), Some(start)) = (&mut self.trace, self.frame_start.take()) {
            // On the frames' track, whichever pool thread ends a parallel
            // frame.
            trace.slice_on(
                0,
                &format!("frame {}", self.frame),
                "frame",
                start,
                end,
                self.frame,
            );
        }
        if self.count_frames {
            self.frame += 1;
        }
    }
}

/// What a run produced.
pub(crate) struct RunSummary {
    pub(crate) frames: u64,
    pub(crate) seconds: f64,
    /// The pipeline's buffers after the last frame (see `Pipeline::buffer_bytes`).
    pub(crate) buffer_bytes: Vec<(&'static str, u32, usize)>,
    /// The counts of a pipelined run.
    pub(crate) stream: Option<StreamReport>,
    /// What the source reported about the input (skipped packets…).
    pub(crate) notes: Vec<String>,
}

/// The one-line summary of a run on stderr: frames, time, rate, and the
/// counts of a pipelined run.
pub(crate) fn summarize(
    err: &mut dyn Write,
    obs: &RunObserver,
    s: &RunSummary,
) -> Result<(), RunnerError> {
    let fps = if s.seconds > 0.0 {
        s.frames as f64 / s.seconds
    } else {
        0.0
    };
    let line = match &s.stream {
        None => {
            let mean = obs.profiler.frame_stats().time.map_or(0.0, |t| t.mean_ms);
            format!(
                "{} frames in {:.2} s ({fps:.1} frames/s; pipeline {mean:.2} ms a frame)",
                s.frames, s.seconds
            )
        }
        Some(r) => {
            let discarded = if r.discarded > 0 {
                format!(", {} discarded", r.discarded)
            } else {
                String::new()
            };
            format!(
                "{} frames in {:.2} s ({fps:.1} frames/s; pipelined: {} received, {} processed, {} failed, {} dropped{discarded})",
                s.frames, s.seconds, r.received, r.processed, r.failed, r.dropped
            )
        }
    };
    for line in s.notes.iter().chain(std::iter::once(&line)) {
        writeln!(err, "{line}").map_err(|source| RunnerError::Io {
            what: "stderr".into(),
            source,
        })?;
    }
    Ok(())
}

/// The progress bar on stderr (hidden unless `show`), of `total` frames
/// when known.
pub(crate) fn progress_bar(show: bool, total: Option<u64>) -> indicatif::ProgressBar {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    if !show {
        return ProgressBar::hidden();
    }
    let (bar, template) = match total {
        Some(n) => (
            ProgressBar::new(n),
            "{spinner} {pos}/{len} frames [{bar:30}] {per_sec} {elapsed}",
        ),
        None => (
            ProgressBar::no_length(),
            "{spinner} {pos} frames {per_sec} {elapsed}",
        ),
    };
    bar.set_draw_target(ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}
