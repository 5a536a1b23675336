//! Running a group: fused, strip by strip over rayon's pool with the
//! intermediate values in per-worker scratch; or unfused, each member over
//! whole frames, for comparison. Either way a run that fails publishes
//! nothing: the outputs keep the last successful run's values.

use std::ops::Range;

use rayon::prelude::*;

use super::erased::{AnyPlane, AnyStripMut, Inputs};
use super::error::StripError;
use super::geometry::{Element, Geometry};
use super::group::{FusedGroup, Node, Value};
use super::member::Store;
use super::plane::Plane;
use super::schedule::{strip_rows, StripRows};

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
            Strips::Auto => Ok(rows
                .div_ceil(Self::AUTO_ROWS)
                .max(4 * rayon::current_num_threads())
                .min(rows.max(1))),
        }
    }
}

/// Per member: the geometry of the rows it computes and of its value.
struct Sizes {
    rows: Vec<Geometry>,
    values: Vec<Geometry>,
    /// Per member: its arguments' geometries.
    args: Vec<Vec<Geometry>>,
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
        let sizes = self.sizes(inputs)?;
        let tallest = self
            .outputs
            .iter()
            .map(|&i| sizes.rows[i].height)
            .max()
            .unwrap_or(1);
        let count = strips.count(tallest)?;
        let plans: Vec<StripRows> = (0..count)
            .map(|s| strip_rows(&self.nodes, &sizes.rows, s, count))
            .collect();
        let nodes = &self.nodes;
        // Cut each output's buffer into the rows each strip owns.
        let mut per_strip: Vec<Vec<Option<AnyStripMut<'_>>>> = (0..count)
            .map(|_| (0..nodes.len()).map(|_| None).collect())
            .collect();
        for (k, store) in self.staging.iter_mut().enumerate() {
            let i = self.outputs[k];
            let parts: Vec<Range<usize>> = plans.iter().map(|p| p.own[i].clone()).collect();
            let chunks = nodes[i].member.split(store, sizes.rows[i], &parts)?;
            for (s, chunk) in chunks.into_iter().enumerate() {
                per_strip[s][i] = Some(chunk);
            }
        }
        let arenas = &self.arenas;
        let results: Vec<Result<(), StripError>> = per_strip
            .into_par_iter()
            .zip(plans.par_iter())
            .map(|(chunks, plan)| {
                let mut arena = arenas
                    .lock()
                    .ok()
                    .and_then(|mut a| a.pop())
                    .unwrap_or_else(|| nodes.iter().map(|n| n.member.new_store()).collect());
                let r = run_strip(nodes, &sizes, plan, chunks, inputs, &mut arena);
                if let Ok(mut a) = arenas.lock() {
                    a.push(arena);
                }
                r
            })
            .collect();
        results.into_iter().collect::<Result<Vec<()>, _>>()?;
        self.fold_and_publish(&sizes)
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
        let i = self.outputs[k];
        self.nodes[i].member.view(store, *g)?.typed::<T>()
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

    /// Bytes of per-worker scratch the fused runs hold (every worker's).
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
        arenas.unwrap_or(0)
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
        for (k, p) in inputs.iter().enumerate() {
            let g = p.geometry();
            if p.rows() != (0..g.height) {
                return Err(StripError::Group(format!("input {k} is not a whole plane")));
            }
            g.check(&format!("input {k}"))?;
        }
        let mut rows = Vec::with_capacity(self.nodes.len());
        let mut values = Vec::with_capacity(self.nodes.len());
        let mut all_args = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let mut args = Vec::with_capacity(node.args.len());
            for a in &node.args {
                args.push(match *a {
                    Value::Input(k) => inputs[k].geometry(),
                    Value::Node(j) => values[j],
                });
            }
            let (r, v) = node.member.geometries(&args)?;
            rows.push(r);
            values.push(v);
            all_args.push(args);
        }
        Ok(Sizes {
            rows,
            values,
            args: all_args,
        })
    }

    /// Folds the reductions' partials and publishes every output, all or
    /// nothing.
    fn fold_and_publish(&mut self, sizes: &Sizes) -> Result<(), StripError> {
        for (k, &i) in self.outputs.iter().enumerate() {
            let m = &self.nodes[i].member;
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
        for (k, &i) in self.outputs.iter().enumerate() {
            let m = &self.nodes[i].member;
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

/// One strip: every member that has rows in it, in order.
fn run_strip(
    nodes: &[Node],
    sizes: &Sizes,
    plan: &StripRows,
    mut chunks: Vec<Option<AnyStripMut<'_>>>,
    inputs: &[AnyPlane<'_>],
    arena: &mut [Store],
) -> Result<(), StripError> {
    let mut views: Vec<Option<AnyPlane<'_>>> = vec![None; nodes.len()];
    let mut args: Vec<AnyPlane<'_>> = Vec::new();
    for (i, (node, slot)) in nodes.iter().zip(arena.iter_mut()).enumerate() {
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
