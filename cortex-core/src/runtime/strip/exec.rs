//! Running a group: fused, strip by strip over rayon's pool with the
//! intermediate values in per-worker scratch; or unfused, each member over
//! whole frames, for comparison. Either way a run that fails publishes
//! nothing: the outputs keep the last successful run's values.

use std::ops::Range;

use smallvec::SmallVec;

use super::erased::{AnyPlane, AnyStripMut, Inputs};
use super::error::StripError;
use super::geometry::{Element, Geometry};
use super::group::{FusedGroup, Node, Value};
use super::member::Store;
use super::plane::Plane;
use super::schedule::{strip_rows, StripRows};
use super::tune::{self, StripPolicy, Tuning};
use std::time::Instant;

/// How a fused run cuts its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strips {
    /// Exactly this many strips (at least 1; more than rows is allowed, the
    /// extra ones are empty).
    Count(usize),
    /// Strips of about this many rows of the tallest output.
    Rows(usize),
    /// The default: strips of [`Strips::AUTO_ROWS`] rows, and at least four
    /// per worker thread so the pool stays balanced.
    Auto,
}

impl Strips {
    /// Rows per strip of [`Strips::Auto`]: the middle of the heights the
    /// `fusion` bench measured fastest on a 2-core machine with 1 MiB of L2
    /// per core (16 to 64 rows; 8-row strips recompute more halo and pay
    /// more per-strip overhead, 128-row strips' scratch leaves L2).
    pub const AUTO_ROWS: usize = 32;

    /// The strip count for `rows` rows.
    ///
    /// # Errors
    /// [`StripError::Group`] for a count or height of 0.
    pub fn count(self, rows: usize) -> Result<usize, StripError> {
        match self {
            Strips::Count(0) | Strips::Rows(0) => {
                Err(StripError::Group("a strip count or height of 0".into()))
            }
            Strips::Count(n) => Ok(n),
            Strips::Rows(r) => Ok(rows.div_ceil(r).max(1)),
            Strips::Auto => Ok(Self::auto_count(rows, Self::AUTO_ROWS)),
        }
    }

    /// [`Strips::Auto`]'s count for a group whose widest member window
    /// spans `window` rows (above plus below): strips at least eight times
    /// that tall, so the halo each strip recomputes stays near an eighth of
    /// its rows (an 11-row SSIM window gets 80-row strips, not 32).
    fn auto_for(rows: usize, window: usize) -> usize {
        Self::auto_count(rows, Self::AUTO_ROWS.max(8 * window))
    }

    fn auto_count(rows: usize, strip_rows: usize) -> usize {
        rows.div_ceil(strip_rows)
            .max(4 * rayon::current_num_threads())
            .min(rows.max(1))
    }
}

impl std::fmt::Display for Strips {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Strips::Auto => f.write_str("default"),
            Strips::Rows(r) => write!(f, "{r}-row strips"),
            Strips::Count(n) => write!(f, "{n} strips"),
        }
    }
}

/// Per member: the geometry of the rows it computes and of its value.
pub(crate) struct Sizes {
    rows: Vec<Geometry>,
    values: Vec<Geometry>,
    /// Per member: its arguments' geometries.
    args: Vec<Vec<Geometry>>,
    /// Per member: whether it declined these inputs alone (it computes
    /// nothing; its rows and value are empty).
    declined: Vec<bool>,
}

impl FusedGroup {
    /// The number of inputs each run takes.
    pub fn input_count(&self) -> usize {
        self.inputs
    }

    /// The number of values leaving the group.
    pub fn output_count(&self) -> usize {
        self.outputs.len()
    }

    /// Runs the group fused: strips of rows spread over rayon's pool, each
    /// computing every member's rows plus the halo its consumers read, the
    /// values that stay in the group in per-worker scratch, those that leave
    /// written to whole-frame outputs; reductions folded in row order at the
    /// end. Bit-identical to [`FusedGroup::run_unfused`] for any strip count
    /// when the kernels keep their contract (a row's value does not depend
    /// on the strip computing it).
    ///
    /// # Errors
    /// A geometry or input error before anything runs; the first failing
    /// strip's error (in strip order) otherwise. On error the outputs keep
    /// the previous run's values.
    pub fn run(&mut self, inputs: &[AnyPlane<'_>], strips: Strips) -> Result<(), StripError> {
        self.prepare(inputs, strips)?;
        let Some(plan) = self.plan.as_ref() else {
            return Err(StripError::Group("no run plan".into()));
        };
        let nodes = &self.nodes;
        // Each output's whole-frame buffer, cut between the strips as they
        // are handed out (no per-run allocation for up to 8 outputs).
        let mut outs: Outs<'_> = SmallVec::new();
        for (k, store) in self.staging.iter_mut().enumerate() {
            let i = self.outputs[k];
            if plan.sizes.declined[i] {
                continue;
            }
            let g = plan.sizes.rows[i];
            outs.push((i, nodes[i].member.strip(store, g, 0..g.height)?));
        }
        let arenas = &self.arenas;
        let count = plan.strips.len();
        run_strips(nodes, plan, 0..count, outs, inputs, arenas)?;
        let sizes = std::mem::take(&mut self.plan);
        let r = match sizes.as_ref() {
            Some(p) => self.fold_and_publish(&p.sizes),
            None => Ok(()),
        };
        self.plan = sizes;
        r
    }

    /// Runs the group fused with the strips the [`tune::policy`] gives: a
    /// forced setting, or the one measured for this group, input size and
    /// thread count (measuring it over the first runs at a new size).
    ///
    /// # Errors
    /// As [`FusedGroup::run`].
    pub fn run_tuned(&mut self, inputs: &[AnyPlane<'_>]) -> Result<(), StripError> {
        if let StripPolicy::Fixed(s) = tune::policy() {
            return self.run(inputs, s);
        }
        let threads = rayon::current_num_threads();
        if let Some((known, t, s)) = &self.chosen {
            let same = known.len() == inputs.len()
                && known.iter().zip(inputs).all(|(g, x)| *g == x.geometry());
            if *t == threads && same {
                let s = *s;
                return self.run(inputs, s);
            }
        }
        // A new size or thread count: a decision the process knows, or
        // measure one.
        let geometries: Vec<Geometry> = inputs.iter().map(|p| p.geometry()).collect();
        if let Some(s) = tune::lookup(&self.signature, &geometries, threads) {
            self.chosen = Some((geometries, threads, s));
            self.tuning = None;
            return self.run(inputs, s);
        }
        let stale = self
            .tuning
            .as_ref()
            .map_or(true, |t| t.threads != threads || t.inputs != geometries);
        if stale {
            self.tuning = Some(Tuning::new(geometries, threads, self.widest_window()));
        }
        let setting = self.tuning.as_ref().map_or(Strips::Auto, Tuning::next);
        let started = Instant::now();
        let r = self.run(inputs, setting);
        let signature = &self.signature;
        if let Some(decision) = self
            .tuning
            .as_mut()
            .and_then(|t| t.record(started, r.is_ok(), signature))
        {
            self.chosen = Some((decision.inputs.clone(), decision.threads, decision.strips));
            self.tuning = None;
            tune::decided(decision);
        }
        r
    }

    /// The strips chosen for the last input size measured or looked up
    /// ([`FusedGroup::run_tuned`]), once chosen.
    pub fn strips_chosen(&self) -> Option<Strips> {
        self.chosen.as_ref().map(|(_, _, s)| *s)
    }

    /// The rows above plus below of its widest member window.
    fn widest_window(&self) -> usize {
        self.nodes
            .iter()
            .map(|n| {
                let w = n.member.kind().window();
                w.above + w.below
            })
            .max()
            .unwrap_or(0)
    }

    /// Computes the sizes and the strips' rows for these inputs, unless the
    /// last run's hold (same input geometries and strip setting): a group
    /// run frame after frame at one size plans once.
    fn prepare(&mut self, inputs: &[AnyPlane<'_>], strips: Strips) -> Result<(), StripError> {
        let same = |known: &[Geometry]| {
            known.len() == inputs.len()
                && known
                    .iter()
                    .zip(inputs)
                    .all(|(g, x)| *g == x.geometry() && x.rows() == (0..g.height))
        };
        if let Some(p) = &self.plan {
            if p.strip_setting == strips
                && same(&p.inputs)
                && p.threads == rayon::current_num_threads()
            {
                return Ok(());
            }
        }
        // A frame size the group cannot take stays refused at no cost, so a
        // stream of such frames runs unfused without allocating.
        if let Some((known, setting)) = &self.refused {
            if *setting == strips && same(known) {
                return Err(StripError::RefusedBefore);
            }
        }
        self.plan = None;
        self.refused = None;
        let sizes = match self.sizes(inputs) {
            Ok(s) => s,
            Err(e) => {
                self.refused = Some((inputs.iter().map(|p| p.geometry()).collect(), strips));
                return Err(e);
            }
        };
        let tallest = self
            .outputs
            .iter()
            .map(|&i| sizes.rows[i].height)
            .max()
            .unwrap_or(1);
        let count = match strips {
            Strips::Auto => Strips::auto_for(tallest, self.widest_window()),
            other => other.count(tallest)?,
        };
        let constants = match fold_constants(&self.nodes, &sizes, inputs) {
            Ok(c) => c,
            Err(e) => {
                self.refused = Some((inputs.iter().map(|p| p.geometry()).collect(), strips));
                return Err(e);
            }
        };
        let folded: Vec<bool> = constants.iter().map(Option::is_some).collect();
        let plans: Vec<StripRows> = (0..count)
            .map(|s| strip_rows(&self.nodes, &sizes.rows, &folded, s, count))
            .collect();
        self.plan = Some(RunPlan {
            inputs: inputs.iter().map(|p| p.geometry()).collect(),
            strip_setting: strips,
            threads: rayon::current_num_threads(),
            sizes,
            strips: plans,
            constants,
        });
        Ok(())
    }

    /// Runs each member over whole frames, one after the other, every
    /// intermediate value a whole-frame buffer: the reference a fused run is
    /// compared with, and the way to run a pipeline without fusion.
    ///
    /// # Errors
    /// As [`FusedGroup::run`].
    pub fn run_unfused(&mut self, inputs: &[AnyPlane<'_>]) -> Result<(), StripError> {
        let sizes = self.sizes(inputs)?;
        if self.internal.len() != self.nodes.len() {
            self.internal = self.nodes.iter().map(|n| n.member.new_store()).collect();
        }
        for i in 0..self.nodes.len() {
            if sizes.declined[i] {
                continue;
            }
            let (done, rest) = self.internal.split_at_mut(i);
            let node = &self.nodes[i];
            let mut args = Vec::with_capacity(node.args.len());
            for a in &node.args {
                args.push(match *a {
                    Value::Input(k) => inputs[k],
                    Value::Node(j) => self.nodes[j].member.view(&done[j], sizes.rows[j])?,
                });
            }
            let g = sizes.rows[i];
            let mut out = node.member.strip(&mut rest[0], g, 0..g.height)?;
            node.member.run(&Inputs::new(&args), &mut out)?;
        }
        // Hand the whole-frame values to the outputs' staging buffers.
        for (k, &i) in self.outputs.iter().enumerate() {
            std::mem::swap(&mut self.staging[k], &mut self.internal[i]);
        }
        self.fold_and_publish(&sizes)
    }

    /// Output `k`'s value from the last successful run, as a plane of `T`.
    ///
    /// # Errors
    /// [`StripError::Group`] before any run or for a missing output;
    /// [`StripError::Type`] for another element type.
    pub fn output<T: Element>(&self, k: usize) -> Result<Plane<'_, T>, StripError> {
        let (store, g) = self
            .published
            .get(k)
            .zip(self.published_geometry.get(k))
            .ok_or_else(|| {
                StripError::Group(format!("no value for output {k} (run the group first)"))
            })?;
        if self.declined.get(k).copied().unwrap_or(false) {
            return Err(StripError::Group(format!(
                "`{}` declined the last run: no value for output {k}",
                self.nodes[self.outputs[k]].member.name()
            )));
        }
        let i = self.outputs[k];
        self.nodes[i].member.view(store, *g)?.typed::<T>()
    }

    /// Whether output `k` has a value from the last run: `false` before any
    /// run and when its member declined that run alone
    /// ([`FusedGroup::declined`]).
    pub fn published(&self, k: usize) -> bool {
        k < self.published_geometry.len() && !self.declined.get(k).copied().unwrap_or(false)
    }

    /// The members that declined the last run alone: their inputs were of a
    /// geometry they refuse (a first frame without a previous one, a size
    /// their parameters do not divide), while the rest of the group ran
    /// fused. Such a member's value leaves the group and none of the others
    /// reads it, so its caller computes it with the member's own call.
    pub fn declined(&self) -> Vec<&str> {
        self.outputs
            .iter()
            .zip(&self.declined)
            .filter(|(_, d)| **d)
            .map(|(&i, _)| self.nodes[i].member.name())
            .collect()
    }

    /// Exchanges output `k`'s buffer with `buf` (no copy): `buf` receives the
    /// value, the group keeps `buf`'s old allocation for a later run.
    ///
    /// # Errors
    /// As [`FusedGroup::output`].
    pub fn swap_output<T: Element>(
        &mut self,
        k: usize,
        buf: &mut Vec<T>,
    ) -> Result<Geometry, StripError> {
        let g = self.output::<T>(k)?.geometry();
        let v = self.published[k]
            .downcast_mut::<Vec<T>>()
            .ok_or_else(|| StripError::Group("buffer of another element type".into()))?;
        v.truncate(g.len());
        std::mem::swap(v, buf);
        self.published_geometry[k] = Geometry::new(0, 0);
        Ok(g)
    }

    /// The geometry of argument `arg` of the member whose value is output
    /// `k`, in the last run planned (e.g. the frame a reduction folded).
    pub fn output_argument_geometry(&self, k: usize, arg: usize) -> Option<Geometry> {
        let i = *self.outputs.get(k)?;
        self.plan.as_ref()?.sizes.args.get(i)?.get(arg).copied()
    }

    /// Bytes of per-worker scratch the fused runs hold (every worker's),
    /// and of the folded members' whole values.
    pub fn scratch_bytes(&self) -> usize {
        let arenas = self.arenas.lock().map(|a| {
            a.iter()
                .map(|arena| {
                    arena
                        .iter()
                        .zip(&self.nodes)
                        .map(|(s, n)| n.member.bytes(s))
                        .sum::<usize>()
                })
                .sum()
        });
        let folded: usize = self.plan.as_ref().map_or(0, |p| {
            p.constants
                .iter()
                .zip(&self.nodes)
                .filter_map(|(c, n)| c.as_ref().map(|s| n.member.bytes(s)))
                .sum()
        });
        arenas.unwrap_or(0) + folded
    }

    /// The members whose values the planned run computes once per input
    /// geometry instead of every run (empty before the first run).
    pub fn folded(&self) -> Vec<&str> {
        let Some(plan) = &self.plan else {
            return Vec::new();
        };
        self.nodes
            .iter()
            .zip(&plan.constants)
            .filter(|(_, c)| c.is_some())
            .map(|(n, _)| n.member.name())
            .collect()
    }

    /// Bytes of the whole-frame intermediate buffers the unfused runs hold
    /// (values that stay in the group; outputs not counted).
    pub fn unfused_intermediate_bytes(&self) -> usize {
        self.internal
            .iter()
            .zip(&self.nodes)
            .filter(|(_, n)| n.output.is_none())
            .map(|(s, n)| n.member.bytes(s))
            .sum()
    }

    /// Checks the inputs and computes every member's geometries.
    fn sizes(&self, inputs: &[AnyPlane<'_>]) -> Result<Sizes, StripError> {
        if inputs.len() != self.inputs {
            return Err(StripError::Group(format!(
                "{} inputs given, the group takes {}",
                inputs.len(),
                self.inputs
            )));
        }
        let mut unusable = Vec::new();
        let mut refusal = None;
        for (k, p) in inputs.iter().enumerate() {
            let g = p.geometry();
            if p.rows() != (0..g.height) {
                return Err(StripError::Group(format!("input {k} is not a whole plane")));
            }
            if let Err(e) = g.check(&format!("input {k}")) {
                // An input only members that may decline alone read (a
                // previous frame that does not exist yet): they decline.
                let readers_may_decline = self
                    .nodes
                    .iter()
                    .enumerate()
                    .all(|(i, n)| self.detachable[i] || !n.args.contains(&Value::Input(k)));
                if !readers_may_decline {
                    return Err(e);
                }
                unusable.push(k);
                refusal.get_or_insert(e);
            }
        }
        let mut rows = Vec::with_capacity(self.nodes.len());
        let mut values = Vec::with_capacity(self.nodes.len());
        let mut all_args = Vec::with_capacity(self.nodes.len());
        let mut declined = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let mut args = Vec::with_capacity(node.args.len());
            for a in &node.args {
                args.push(match *a {
                    Value::Input(k) => inputs[k].geometry(),
                    Value::Node(j) => values[j],
                });
            }
            let reads_unusable = node
                .args
                .iter()
                .any(|a| matches!(a, Value::Input(k) if unusable.contains(k)));
            let geometries = if reads_unusable {
                Err(StripError::Group("reads an unusable input".into()))
            } else {
                node.member.geometries(&args)
            };
            match geometries {
                Ok((r, v)) => {
                    rows.push(r);
                    values.push(v);
                    declined.push(false);
                }
                // A member nothing in the group reads may decline alone;
                // the group runs if anything is left to compute.
                Err(e) if self.detachable[rows.len()] => {
                    refusal.get_or_insert(e);
                    rows.push(Geometry::new(0, 0));
                    values.push(Geometry::new(0, 0));
                    declined.push(true);
                }
                Err(e) => return Err(e),
            }
            all_args.push(args);
        }
        if let Some(e) = refusal {
            if self.outputs.iter().all(|&i| declined[i]) {
                return Err(e);
            }
        }
        Ok(Sizes {
            rows,
            values,
            args: all_args,
            declined,
        })
    }

    /// Folds the reductions' partials and publishes every output, all or
    /// nothing.
    fn fold_and_publish(&mut self, sizes: &Sizes) -> Result<(), StripError> {
        for (k, &i) in self.outputs.iter().enumerate() {
            let m = &self.nodes[i].member;
            if sizes.declined[i] {
                continue;
            }
            if matches!(m.kind(), super::kernel::Kind::Reduction(_)) {
                m.fold(
                    &sizes.args[i],
                    &self.staging[k],
                    sizes.rows[i],
                    &mut self.folded[k],
                    sizes.values[i],
                )?;
            }
        }
        self.published_geometry.clear();
        self.declined.clear();
        for (k, &i) in self.outputs.iter().enumerate() {
            let m = &self.nodes[i].member;
            self.declined.push(sizes.declined[i]);
            if sizes.declined[i] {
                self.published_geometry.push(Geometry::new(0, 0));
                continue;
            }
            if matches!(m.kind(), super::kernel::Kind::Reduction(_)) {
                std::mem::swap(&mut self.folded[k], &mut self.published[k]);
            } else {
                std::mem::swap(&mut self.staging[k], &mut self.published[k]);
            }
            self.published_geometry.push(sizes.values[i]);
        }
        Ok(())
    }
}

/// Each output's whole-frame rows still to hand out, with its member.
type Outs<'a> = SmallVec<[(usize, AnyStripMut<'a>); 8]>;

/// Runs strips `range` (halved with `rayon::join` until one is left), each
/// given the rows it owns of every output; the first error in strip order.
fn run_strips(
    nodes: &[Node],
    plan: &RunPlan,
    range: Range<usize>,
    outs: Outs<'_>,
    inputs: &[AnyPlane<'_>],
    arenas: &std::sync::Mutex<Vec<Vec<Store>>>,
) -> Result<(), StripError> {
    if range.len() <= 1 {
        let Some(strip) = plan.strips.get(range.start) else {
            return Ok(());
        };
        let mut arena = arenas
            .lock()
            .ok()
            .and_then(|mut a| a.pop())
            .unwrap_or_else(|| nodes.iter().map(|n| n.member.new_store()).collect());
        let r = run_strip(nodes, plan, strip, outs, inputs, &mut arena);
        if let Ok(mut a) = arenas.lock() {
            a.push(arena);
        }
        return r;
    }
    let mid = range.start + range.len() / 2;
    let (mut left, mut right): (Outs<'_>, Outs<'_>) = (SmallVec::new(), SmallVec::new());
    for (i, out) in outs {
        let (a, b) = out.split_at_row(plan.strips[mid].own[i].start)?;
        left.push((i, a));
        right.push((i, b));
    }
    let (l, r) = rayon::join(
        || run_strips(nodes, plan, range.start..mid, left, inputs, arenas),
        || run_strips(nodes, plan, mid..range.end, right, inputs, arenas),
    );
    l.and(r)
}

/// One strip: every member that has rows in it, in order; a folded member's
/// value read from its whole plane, computed when the run was planned.
fn run_strip(
    nodes: &[Node],
    run: &RunPlan,
    plan: &StripRows,
    outs: Outs<'_>,
    inputs: &[AnyPlane<'_>],
    arena: &mut [Store],
) -> Result<(), StripError> {
    let sizes = &run.sizes;
    let mut chunks: SmallVec<[Option<AnyStripMut<'_>>; 16]> =
        (0..nodes.len()).map(|_| None).collect();
    for (i, out) in outs {
        chunks[i] = Some(out);
    }
    let mut views: SmallVec<[Option<AnyPlane<'_>>; 16]> = (0..nodes.len()).map(|_| None).collect();
    let mut args: SmallVec<[AnyPlane<'_>; 8]> = SmallVec::new();
    for (i, (node, slot)) in nodes.iter().zip(arena.iter_mut()).enumerate() {
        if let Some(whole) = &run.constants[i] {
            views[i] = Some(node.member.view(whole, sizes.rows[i])?);
            continue;
        }
        let rows = plan.need[i].clone();
        if rows.is_empty() {
            continue;
        }
        args.clear();
        for a in &node.args {
            args.push(match *a {
                Value::Input(k) => inputs[k],
                Value::Node(j) => views[j].ok_or_else(|| {
                    StripError::Group("a producer has no rows in this strip".into())
                })?,
            });
        }
        let chunk = chunks[i].take();
        let view = match chunk {
            // The strip computes exactly the rows it owns: straight into
            // the output, which its consumers then read.
            Some(mut out) if out.rows() == rows => {
                node.member.run(&Inputs::new(&args), &mut out)?;
                out.into_shared()
            }
            chunk => {
                let mut scratch = node.member.strip(slot, sizes.rows[i], rows)?;
                node.member.run(&Inputs::new(&args), &mut scratch)?;
                let view = scratch.into_shared();
                if let Some(mut out) = chunk {
                    if !out.rows().is_empty() {
                        node.member.copy(&view, &mut out)?;
                    }
                }
                view
            }
        };
        views[i] = Some(view);
    }
    Ok(())
}

/// What a run at one input size needs, kept for the next runs.
pub(crate) struct RunPlan {
    inputs: Vec<Geometry>,
    strip_setting: Strips,
    threads: usize,
    sizes: Sizes,
    strips: Vec<StripRows>,
    /// Per member: its whole value when it is constant per geometry
    /// (computed once, when the run was planned).
    constants: Vec<Option<Store>>,
}

/// Computes the whole value of every member whose value depends only on
/// its inputs' geometries ([`super::StripKernel::constant_per_geometry`])
/// and stays in the group, its computed arguments given as zeroed planes of
/// the right geometry (or, for a folded argument, its folded value). A
/// constant that leaves the group is computed each run as before: it would
/// have to be copied into the leaving buffer every run anyway, which costs
/// as much memory traffic as computing it there.
fn fold_constants(
    nodes: &[Node],
    sizes: &Sizes,
    inputs: &[AnyPlane<'_>],
) -> Result<Vec<Option<Store>>, StripError> {
    let mut constants: Vec<Option<Store>> = (0..nodes.len()).map(|_| None).collect();
    for (i, node) in nodes.iter().enumerate() {
        if !node.member.constant() || node.output.is_some() {
            continue;
        }
        let mut stand_ins: Vec<(usize, Store)> = Vec::new();
        for a in &node.args {
            if let Value::Node(j) = *a {
                if constants[j].is_none() && !stand_ins.iter().any(|(k, _)| *k == j) {
                    let g = sizes.rows[j];
                    let mut store = nodes[j].member.new_store();
                    nodes[j].member.strip(&mut store, g, 0..g.height)?;
                    stand_ins.push((j, store));
                }
            }
        }
        let mut store = node.member.new_store();
        {
            let mut args: SmallVec<[AnyPlane<'_>; 8]> = SmallVec::new();
            for a in &node.args {
                args.push(match *a {
                    Value::Input(k) => inputs[k],
                    Value::Node(j) => {
                        let held = match &constants[j] {
                            Some(whole) => whole,
                            None => stand_ins
                                .iter()
                                .find(|(k, _)| *k == j)
                                .map(|(_, s)| s)
                                .ok_or_else(|| StripError::Group("no stand-in".into()))?,
                        };
                        nodes[j].member.view(held, sizes.rows[j])?
                    }
                });
            }
            let g = sizes.rows[i];
            let mut out = node.member.strip(&mut store, g, 0..g.height)?;
            node.member.run(&Inputs::new(&args), &mut out)?;
        }
        constants[i] = Some(store);
    }
    Ok(constants)
}
