//! A wall-time profiler: an [`Observer`] that times every node and every frame.
//!
//! Per node (and for whole frames) it keeps a sample count, the running mean
//! over *all* samples, the last and largest sample, and a bounded window of
//! the most recent samples (default [`DEFAULT_WINDOW`]) from which p50 and p99
//! are computed on demand. The window is a ring buffer: once full, a new sample
//! overwrites the oldest one, so steady-state frames never allocate.
//!
//! **Percentiles** use the nearest-rank definition on the sorted window: for
//! `n` samples sorted ascending, the `p`-th percentile is the sample of rank
//! `⌈p·n/100⌉` (1-based, at least 1). It is always an observed value, never an
//! interpolation, so a p99 over few samples is simply the maximum.
//!
//! **Failed frames** are timed and counted like the others (their nodes did
//! cost that time); [`FrameStats::failed`] says how many there were.

use std::fmt;
use std::time::{Duration, Instant};

use crate::model::ir::{GraphIr, NodeId};
use crate::model::plan::Plan;
use crate::runtime::observe::Observer;
use crate::tools::viz::{display_order, Timings};

/// How many recent samples per node the percentiles look at, by default.
pub const DEFAULT_WINDOW: usize = 1024;

/// Timing statistics of one node (or of whole frames), in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodeStats {
    /// Samples recorded since creation or the last [`Profiler::reset`].
    pub count: u64,
    /// Mean over all `count` samples (not only the window).
    pub mean_ms: f64,
    /// Nearest-rank median of the window.
    pub p50_ms: f64,
    /// Nearest-rank 99th percentile of the window.
    pub p99_ms: f64,
    /// The most recent sample.
    pub last_ms: f64,
    /// The largest sample over all `count` samples.
    pub max_ms: f64,
}

/// Whole-frame statistics.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameStats {
    /// Frames ended (successful or not).
    pub frames: u64,
    /// Frames that ended with a failed node.
    pub failed: u64,
    /// Wall time from `frame_begin` to `frame_end`, if any frame was timed.
    pub time: Option<NodeStats>,
}

/// One timed quantity: totals over all samples plus a ring of recent ones.
#[derive(Debug, Clone, Default)]
struct Series {
    /// Recent samples in nanoseconds; grows to the window size, then wraps.
    ring: Vec<u64>,
    /// Where the next sample goes once the ring is full (the oldest sample).
    next: usize,
    count: u64,
    /// Sum of all samples; `u128` so that no realistic run overflows.
    total_ns: u128,
    last_ns: u64,
    max_ns: u64,
}

impl Series {
    fn record(&mut self, d: Duration, window: usize) {
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        let window = window.max(1);
        if self.ring.len() < window {
            // Reserve the whole window on the first sample so that filling it
            // does not reallocate step by step.
            if self.ring.capacity() < window {
                self.ring.reserve_exact(window - self.ring.len());
            }
            self.ring.push(ns);
            self.next = self.ring.len() % window;
        } else {
            if let Some(slot) = self.ring.get_mut(self.next) {
                *slot = ns;
            }
            self.next = (self.next + 1) % window;
        }
        self.count += 1;
        self.total_ns += u128::from(ns);
        self.last_ns = ns;
        self.max_ns = self.max_ns.max(ns);
    }

    fn stats(&self) -> Option<NodeStats> {
        if self.count == 0 {
            return None;
        }
        // Sorting a copy on demand keeps recording O(1); reports are rare.
        let mut sorted = self.ring.clone();
        sorted.sort_unstable();
        Some(NodeStats {
            count: self.count,
            mean_ms: self.total_ns as f64 / self.count as f64 / 1e6,
            p50_ms: nearest_rank(&sorted, 50).map_or(0.0, ns_to_ms),
            p99_ms: nearest_rank(&sorted, 99).map_or(0.0, ns_to_ms),
            last_ms: ns_to_ms(self.last_ns),
            max_ms: ns_to_ms(self.max_ns),
        })
    }
}

/// The nearest-rank `p`-th percentile of an ascending slice: the element of
/// 1-based rank `⌈p·n/100⌉`, at least rank 1. `None` when empty.
fn nearest_rank(sorted: &[u64], p: u32) -> Option<u64> {
    let n = sorted.len() as u64;
    // Integer ceiling, so that e.g. p50 of 4 samples is exactly rank 2.
    let rank = (u64::from(p) * n).div_ceil(100).max(1);
    sorted.get(usize::try_from(rank - 1).ok()?).copied()
}

fn ns_to_ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// Times every node and frame of a running pipeline.
///
/// Pass it as the observer of a generated `run_observed` (or call the
/// [`Observer`] methods yourself); read the numbers with
/// [`node_stats`](Self::node_stats), [`frame_stats`](Self::frame_stats) or
/// [`report`](Self::report). It also implements [`Timings`] (mean per node),
/// so [`crate::tools::viz::listing`] and [`crate::tools::viz::dce_diff`] can show measured
/// times.
#[derive(Debug, Clone)]
pub struct Profiler<'ir> {
    ir: &'ir GraphIr,
    window: usize,
    nodes: Vec<Series>,
    /// Per node: when its current run began.
    started: Vec<Option<Instant>>,
    frame: Series,
    frame_started: Option<Instant>,
    frames: u64,
    failed: u64,
    /// Fused groups that ran fused: their members (in order) and times.
    groups: Vec<(&'static [NodeId], Series)>,
    /// The group running now and when it began.
    group_started: Option<(&'static [NodeId], Instant)>,
}

impl<'ir> Profiler<'ir> {
    /// A profiler for the nodes of `ir`, with a window of [`DEFAULT_WINDOW`]
    /// samples per node.
    pub fn new(ir: &'ir GraphIr) -> Self {
        let n = ir.nodes.len();
        Profiler {
            ir,
            window: DEFAULT_WINDOW,
            nodes: vec![Series::default(); n],
            started: vec![None; n],
            frame: Series::default(),
            frame_started: None,
            frames: 0,
            failed: 0,
            groups: Vec::new(),
            group_started: None,
        }
    }

    /// Sets the percentile window to the `n` most recent samples per node (at
    /// least 1) and clears everything recorded so far, since old rings have
    /// the old size.
    pub fn with_window(mut self, n: usize) -> Self {
        self.window = n.max(1);
        self.reset();
        self
    }

    /// The percentile window size.
    pub fn window(&self) -> usize {
        self.window
    }

    /// The graph being profiled.
    pub fn ir(&self) -> &'ir GraphIr {
        self.ir
    }

    /// Forgets every sample and count (the window size stays).
    pub fn reset(&mut self) {
        for s in &mut self.nodes {
            *s = Series::default();
        }
        for s in &mut self.started {
            *s = None;
        }
        self.frame = Series::default();
        self.frame_started = None;
        self.frames = 0;
        self.failed = 0;
        self.groups.clear();
        self.group_started = None;
    }

    /// Records one fused run of the group of `members` that took `elapsed`.
    pub fn record_group(&mut self, members: &'static [NodeId], elapsed: Duration) {
        let window = self.window;
        match self.groups.iter_mut().find(|(m, _)| *m == members) {
            Some((_, s)) => s.record(elapsed, window),
            None => {
                let mut s = Series::default();
                s.record(elapsed, window);
                self.groups.push((members, s));
            }
        }
    }

    /// Statistics of each fused group that ran fused: its members (in the
    /// order they run) and its times.
    pub fn group_stats(&self) -> Vec<(&'static [NodeId], NodeStats)> {
        self.groups
            .iter()
            .filter_map(|(m, s)| s.stats().map(|st| (*m, st)))
            .collect()
    }

    /// Records one run of `node` that took `elapsed`. [`Observer::node_end`]
    /// calls this with the measured time; call it directly to feed times
    /// measured elsewhere (or in tests). Unknown node ids are ignored.
    pub fn record(&mut self, node: NodeId, elapsed: Duration) {
        let window = self.window;
        if let Some(s) = self.nodes.get_mut(node as usize) {
            s.record(elapsed, window);
        }
    }

    /// Records one frame that took `elapsed` and ended `ok` or failed.
    /// [`Observer::frame_end`] calls this with the measured time.
    pub fn record_frame(&mut self, elapsed: Duration, ok: bool) {
        self.frames += 1;
        if !ok {
            self.failed += 1;
        }
        self.frame.record(elapsed, self.window);
    }

    /// Statistics of node `id`, or `None` if it never ran (or is unknown).
    pub fn node_stats(&self, id: NodeId) -> Option<NodeStats> {
        self.nodes.get(id as usize)?.stats()
    }

    /// The last recorded time of node `id`, in milliseconds.
    pub fn last_ms(&self, id: NodeId) -> Option<f64> {
        let s = self.nodes.get(id as usize)?;
        (s.count > 0).then(|| ns_to_ms(s.last_ns))
    }

    /// The mean time of node `id` over all its runs, in milliseconds.
    pub fn mean_ms(&self, id: NodeId) -> Option<f64> {
        let s = self.nodes.get(id as usize)?;
        (s.count > 0).then(|| s.total_ns as f64 / s.count as f64 / 1e6)
    }

    /// Whole-frame statistics.
    pub fn frame_stats(&self) -> FrameStats {
        FrameStats {
            frames: self.frames,
            failed: self.failed,
            time: self.frame.stats(),
        }
    }

    /// A table in the spirit of `tract dump --profile`: one row per node in
    /// topological order (not sorted by time, so it reads like the graph and
    /// lines up with [`crate::tools::viz::listing`]; the share column shows the hot
    /// spots), then a row for whole frames.
    ///
    /// Columns: node, kind tag, runs, mean / p50 / p99 / max in ms, and the
    /// node's share of all frame time (its total time over the total frame
    /// time, so a node that runs in only some modes counts for what it cost).
    /// Nodes that never ran show `-`.
    pub fn report(&self) -> String {
        Report(self).to_string()
    }
}

/// [`Profiler::report`] as a `Display` value.
struct Report<'p, 'ir>(&'p Profiler<'ir>);

impl fmt::Display for Report<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.0;
        let ir = p.ir;
        let order = display_order(ir);
        let name_w = order
            .iter()
            .filter_map(|&id| ir.nodes.get(id as usize))
            .map(|n| n.name.chars().count())
            .chain(["node".len(), "(frame)".len()])
            .max()
            .unwrap_or(4);
        let frame_total = p.frame.total_ns;
        let header = format!(
            "{:<name_w$}  {:<15}  {:>7}  {:>9}  {:>9}  {:>9}  {:>9}  {:>7}",
            "node", "kind", "runs", "mean ms", "p50 ms", "p99 ms", "max ms", "share"
        );
        writeln!(f, "Profile: {} ({} frames)", ir.name, p.frames)?;
        writeln!(f, "{header}")?;
        writeln!(f, "{}", "-".repeat(header.chars().count()))?;
        let mut nodes_total: u128 = 0;
        for &id in &order {
            let Some(node) = ir.nodes.get(id as usize) else {
                continue;
            };
            let series = p.nodes.get(id as usize);
            let stats = series.and_then(Series::stats);
            let share = series
                .filter(|s| s.count > 0 && frame_total > 0)
                .map(|s| s.total_ns as f64 / frame_total as f64 * 100.0);
            nodes_total += series.map_or(0, |s| s.total_ns);
            row(f, name_w, &node.name, node.kind.tag(), stats, share)?;
        }
        for (members, series) in &p.groups {
            let names: Vec<&str> = members
                .iter()
                .filter_map(|&m| ir.nodes.get(m as usize))
                .map(|n| n.name.as_ref())
                .collect();
            let share = (series.count > 0 && frame_total > 0)
                .then(|| series.total_ns as f64 / frame_total as f64 * 100.0);
            nodes_total += series.total_ns;
            row(
                f,
                name_w,
                &format!("[{}]", names.join("+")),
                "[fused group]",
                series.stats(),
                share,
            )?;
        }
        writeln!(f, "{}", "-".repeat(header.chars().count()))?;
        let frame_share = (frame_total > 0).then_some(100.0);
        row(f, name_w, "(frame)", "", p.frame.stats(), frame_share)?;
        write!(f, "frames: {} ({} failed)", p.frames, p.failed)?;
        if frame_total > 0 {
            // What the nodes do not account for is the run function's own
            // overhead plus the observer's.
            let covered = nodes_total as f64 / frame_total as f64 * 100.0;
            write!(f, "; nodes account for {covered:.1}% of frame time")?;
        }
        writeln!(f)?;
        // The fused groups' strip heights, as measured in this process.
        if !p.groups.is_empty() {
            for d in crate::runtime::strip::tune::decisions() {
                writeln!(f, "strips: {d}")?;
            }
        }
        Ok(())
    }
}

/// One table row; `-` in every numeric column when there are no samples.
fn row(
    f: &mut fmt::Formatter<'_>,
    name_w: usize,
    name: &str,
    tag: &str,
    stats: Option<NodeStats>,
    share: Option<f64>,
) -> fmt::Result {
    let share = share.map_or_else(|| "-".to_string(), |s| format!("{s:.1}%"));
    match stats {
        Some(s) => writeln!(
            f,
            "{name:<name_w$}  {tag:<15}  {:>7}  {:>9.3}  {:>9.3}  {:>9.3}  {:>9.3}  {share:>7}",
            s.count, s.mean_ms, s.p50_ms, s.p99_ms, s.max_ms
        ),
        None => writeln!(
            f,
            "{name:<name_w$}  {tag:<15}  {:>7}  {:>9}  {:>9}  {:>9}  {:>9}  {share:>7}",
            0, "-", "-", "-", "-"
        ),
    }
}

impl Observer for Profiler<'_> {
    fn frame_begin(&mut self, _ir: &'static GraphIr, _plan: &Plan) {
        self.frame_started = Some(Instant::now());
    }

    fn node_begin(&mut self, node: NodeId) {
        if let Some(slot) = self.started.get_mut(node as usize) {
            *slot = Some(Instant::now());
        }
    }

    fn node_end(&mut self, node: NodeId) {
        let now = Instant::now();
        // A node_end without its node_begin (or for an unknown id) has no
        // duration to record.
        let begun = self.started.get_mut(node as usize).and_then(Option::take);
        if let Some(t) = begun {
            self.record(node, now.saturating_duration_since(t));
        }
    }

    fn group_begin(&mut self, members: &'static [NodeId]) {
        self.group_started = Some((members, Instant::now()));
    }

    fn group_end(&mut self, fused: bool) {
        let now = Instant::now();
        // A declined group's members time themselves as nodes.
        if let (true, Some((members, t))) = (fused, self.group_started.take()) {
            self.record_group(members, now.saturating_duration_since(t));
        }
    }

    fn frame_end(&mut self, ok: bool) {
        let now = Instant::now();
        match self.frame_started.take() {
            Some(t) => self.record_frame(now.saturating_duration_since(t), ok),
            // No frame_begin: count the frame but invent no time for it.
            None => {
                self.frames += 1;
                if !ok {
                    self.failed += 1;
                }
            }
        }
    }
}

/// Mean time per node over all its runs (what a saving estimate should sum).
impl Timings for Profiler<'_> {
    fn node_ms(&self, node: NodeId) -> Option<f64> {
        self.mean_ms(node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::l2_ir;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn nearest_rank_matches_definition() {
        let s: Vec<u64> = (1..=10).collect();
        assert_eq!(nearest_rank(&s, 50), Some(5)); // ⌈5⌉ = 5
        assert_eq!(nearest_rank(&s, 99), Some(10)); // ⌈9.9⌉ = 10
        assert_eq!(nearest_rank(&[7], 50), Some(7));
        assert_eq!(nearest_rank(&[1, 2, 3], 50), Some(2)); // ⌈1.5⌉ = 2
        assert_eq!(nearest_rank(&[], 50), None);
        let hundred: Vec<u64> = (1..=100).collect();
        assert_eq!(nearest_rank(&hundred, 99), Some(99));
        assert_eq!(nearest_rank(&hundred, 50), Some(50));
        let two_hundred: Vec<u64> = (1..=200).collect();
        assert_eq!(nearest_rank(&two_hundred, 99), Some(198));
    }

    #[test]
    fn stats_of_synthetic_samples() {
        let ir = l2_ir();
        let mut p = Profiler::new(&ir);
        let sal = ir.node_id("saliency").unwrap();
        // Unsorted on purpose: percentiles must sort.
        for v in [5, 1, 4, 2, 3] {
            p.record(sal, ms(v));
        }
        let s = p.node_stats(sal).unwrap();
        assert_eq!(s.count, 5);
        assert_eq!(s.mean_ms, 3.0);
        assert_eq!(s.p50_ms, 3.0); // rank ⌈2.5⌉ = 3 of [1,2,3,4,5]
        assert_eq!(s.p99_ms, 5.0); // rank ⌈4.95⌉ = 5
        assert_eq!(s.last_ms, 3.0);
        assert_eq!(s.max_ms, 5.0);
        assert_eq!(p.last_ms(sal), Some(3.0));
        assert_eq!(p.mean_ms(sal), Some(3.0));

        // 1..=100 ms: p50 = 50, p99 = 99, mean = 50.5.
        let gray = ir.node_id("gray").unwrap();
        for v in (1..=100).rev() {
            p.record(gray, ms(v));
        }
        let g = p.node_stats(gray).unwrap();
        assert_eq!(
            (g.count, g.p50_ms, g.p99_ms, g.max_ms),
            (100, 50.0, 99.0, 100.0)
        );
        assert!((g.mean_ms - 50.5).abs() < 1e-9);

        // Sub-millisecond precision survives.
        let center = ir.node_id("center").unwrap();
        p.record(center, Duration::from_micros(1500));
        assert_eq!(p.node_stats(center).unwrap().p50_ms, 1.5);
    }

    #[test]
    fn ring_window_drops_old_samples_but_mean_keeps_all() {
        let ir = l2_ir();
        let mut p = Profiler::new(&ir).with_window(4);
        let id = ir.node_id("motion").unwrap();
        for v in [100, 100, 100, 100, 1, 2, 3, 4] {
            p.record(id, ms(v));
        }
        let s = p.node_stats(id).unwrap();
        assert_eq!(s.count, 8);
        // The window holds only [1,2,3,4]: the 100s are gone.
        assert_eq!(s.p50_ms, 2.0);
        assert_eq!(s.p99_ms, 4.0);
        // Mean and max are over every sample.
        assert_eq!(s.mean_ms, 410.0 / 8.0);
        assert_eq!(s.max_ms, 100.0);
        // Wrapping twice more still keeps the 4 most recent.
        for v in [10, 20, 30, 40, 50, 60] {
            p.record(id, ms(v));
        }
        let s = p.node_stats(id).unwrap();
        assert_eq!((s.p50_ms, s.p99_ms), (40.0, 60.0)); // window [30,40,50,60]
        assert_eq!(p.nodes[id as usize].ring.capacity(), 4);
    }

    #[test]
    fn never_ran_and_unknown_ids() {
        let ir = l2_ir();
        let mut p = Profiler::new(&ir);
        assert_eq!(p.node_stats(0), None);
        assert_eq!(p.node_stats(999), None);
        assert_eq!(p.last_ms(999), None);
        p.record(999, ms(1)); // ignored, no panic
        p.node_end(3); // no node_begin: ignored
        p.node_end(999);
        p.node_begin(999);
        assert_eq!(p.node_stats(3), None);
        assert_eq!(p.frame_stats().time, None);
    }

    #[test]
    fn observer_events_count_frames_and_time_nodes() {
        let ir = l2_ir();
        let plan = crate::passes::dce::plan_for_mode(&ir, 0);
        let mut p = Profiler::new(&ir);
        // frame_begin needs a &'static IR; leak one copy for the test.
        let static_ir: &'static GraphIr = Box::leak(Box::new(ir.clone()));
        for ok in [true, false, true] {
            p.frame_begin(static_ir, &plan);
            for &id in plan.order.iter() {
                p.node_begin(id);
                p.node_end(id);
            }
            p.frame_end(ok);
        }
        let fs = p.frame_stats();
        assert_eq!((fs.frames, fs.failed), (3, 1));
        assert_eq!(fs.time.unwrap().count, 3);
        for &id in plan.order.iter() {
            assert_eq!(p.node_stats(id).unwrap().count, 3);
        }
        p.reset();
        assert_eq!(p.frame_stats().frames, 0);
        assert_eq!(p.node_stats(plan.order[0]), None);
    }

    #[test]
    fn report_lists_nodes_in_topo_order_with_dashes() {
        let ir = l2_ir();
        let mut p = Profiler::new(&ir);
        let gray = ir.node_id("gray").unwrap();
        let fused = ir.node_id("fused").unwrap();
        p.record(gray, ms(2));
        p.record(fused, ms(6));
        p.record_frame(ms(10), true);
        let r = p.report();
        let lines: Vec<&str> = r.lines().collect();
        let body: Vec<&str> = lines[3..3 + ir.nodes.len()].to_vec();
        for (line, &id) in body.iter().zip(ir.topo.iter()) {
            let node = ir.node(id);
            assert!(line.starts_with(node.name.as_ref()), "{line}");
            assert!(line.contains(node.kind.tag()), "{line}");
        }
        let gray_line = body.iter().find(|l| l.starts_with("gray")).unwrap();
        assert!(
            gray_line.contains("2.000") && gray_line.contains("20.0%"),
            "{r}"
        );
        let sal_line = body.iter().find(|l| l.starts_with("saliency")).unwrap();
        assert!(sal_line.split_whitespace().skip(3).all(|c| c == "-"), "{r}");
        assert!(r.contains("frames: 1 (0 failed)"), "{r}");
        assert!(r.contains("nodes account for 80.0%"), "{r}");
    }
}
