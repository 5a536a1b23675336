//! A group's execution state: the buffers its runs write (the leaving
//! values' staging rows, reductions' folded results, the unfused runs'
//! whole frames, the workers' scratch) and the values of the last
//! successful run, published all or nothing, fused or unfused alike.

use std::sync::Mutex;

use super::dag::{Dag, Sizes};
use super::error::StripError;
use super::geometry::{Element, Geometry};
use super::kernel::Kind;
use super::member::Store;
use super::plane::Plane;

/// The buffers of one group, reused from run to run.
pub(crate) struct State {
    /// Per output: the rows written by the strips (a reduction's partials).
    pub(crate) staging: Vec<Store>,
    /// Per output of a reduction: its folded result before publishing.
    folded: Vec<Store>,
    /// Per output: the last successful run's value.
    published: Vec<Store>,
    /// Per output: that value's geometry (empty before the first run).
    published_geometry: Vec<Geometry>,
    /// Per output: its member's arguments' geometries in that run (e.g.
    /// the frame a reduction folded), kept with their allocations.
    published_args: Vec<Vec<Geometry>>,
    /// Per output: whether its member declined the last run (no value).
    declined: Vec<bool>,
    /// Per member: a whole-frame buffer, used by unfused runs only.
    pub(crate) internal: Vec<Store>,
    /// Per-worker scratch: one buffer per member, of a strip's rows plus halo.
    pub(crate) arenas: Mutex<Vec<Vec<Store>>>,
}

impl State {
    /// Empty buffers for `dag`'s outputs.
    pub(crate) fn new(dag: &Dag) -> State {
        let stores = |out: bool| -> Vec<Store> {
            dag.outputs
                .iter()
                .map(|&i| {
                    let m = &dag.nodes[i].member;
                    if out {
                        m.new_out_store()
                    } else {
                        m.new_store()
                    }
                })
                .collect()
        };
        State {
            staging: stores(false),
            folded: stores(true),
            published: stores(true),
            published_geometry: Vec::new(),
            published_args: vec![Vec::new(); dag.outputs.len()],
            declined: Vec::new(),
            internal: Vec::new(),
            arenas: Mutex::new(Vec::new()),
        }
    }

    /// Folds the reductions' partials and publishes every output, all or
    /// nothing.
    pub(crate) fn fold_and_publish(&mut self, dag: &Dag, sizes: &Sizes) -> Result<(), StripError> {
        for (k, &i) in dag.outputs.iter().enumerate() {
            let m = &dag.nodes[i].member;
            if sizes.declined[i] {
                continue;
            }
            if matches!(m.kind(), Kind::Reduction(_)) {
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
        for (k, &i) in dag.outputs.iter().enumerate() {
            let m = &dag.nodes[i].member;
            self.declined.push(sizes.declined[i]);
            if sizes.declined[i] {
                self.published_geometry.push(Geometry::new(0, 0));
                continue;
            }
            if matches!(m.kind(), Kind::Reduction(_)) {
                std::mem::swap(&mut self.folded[k], &mut self.published[k]);
            } else {
                std::mem::swap(&mut self.staging[k], &mut self.published[k]);
            }
            self.published_geometry.push(sizes.values[i]);
            let args = &mut self.published_args[k];
            args.clear();
            args.extend_from_slice(&sizes.args[i]);
        }
        Ok(())
    }

    /// The geometry of argument `arg` of output `k`'s member in the last
    /// successful run (`None` before it).
    pub(crate) fn argument_geometry(&self, k: usize, arg: usize) -> Option<Geometry> {
        self.published_args.get(k)?.get(arg).copied()
    }

    /// Output `k`'s published value, as a plane of `T`.
    pub(crate) fn output<T: Element>(
        &self,
        dag: &Dag,
        k: usize,
    ) -> Result<Plane<'_, T>, StripError> {
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
                dag.output_name(k)
            )));
        }
        let i = dag.outputs[k];
        dag.nodes[i].member.view(store, *g)?.typed::<T>()
    }

    /// Whether output `k` has a published value.
    pub(crate) fn published(&self, k: usize) -> bool {
        k < self.published_geometry.len() && !self.declined.get(k).copied().unwrap_or(false)
    }

    /// The names of the members that declined the last run alone.
    pub(crate) fn declined<'a>(&self, dag: &'a Dag) -> Vec<&'a str> {
        dag.outputs
            .iter()
            .zip(&self.declined)
            .filter(|(_, d)| **d)
            .map(|(&i, _)| dag.nodes[i].member.name())
            .collect()
    }

    /// Exchanges output `k`'s buffer with `buf`; the output has no value
    /// afterwards.
    pub(crate) fn swap_output<T: Element>(
        &mut self,
        dag: &Dag,
        k: usize,
        buf: &mut Vec<T>,
    ) -> Result<Geometry, StripError> {
        let g = self.output::<T>(dag, k)?.geometry();
        let v = self.published[k]
            .downcast_mut::<Vec<T>>()
            .ok_or_else(|| StripError::Group("buffer of another element type".into()))?;
        v.truncate(g.len());
        std::mem::swap(v, buf);
        self.published_geometry[k] = Geometry::new(0, 0);
        Ok(g)
    }

    /// Frees the buffers only the candidate not chosen uses: the workers'
    /// scratch once the group runs unfused, the whole-frame intermediates
    /// once it runs fused.
    pub(crate) fn release(&mut self, unfused: bool) {
        if unfused {
            if let Ok(mut a) = self.arenas.lock() {
                a.clear();
            }
        } else {
            self.internal.clear();
        }
    }

    /// Bytes of per-worker scratch (every worker's).
    pub(crate) fn scratch_bytes(&self, dag: &Dag) -> usize {
        self.arenas
            .lock()
            .map(|a| {
                a.iter()
                    .map(|arena| {
                        arena
                            .iter()
                            .zip(&dag.nodes)
                            .map(|(s, n)| n.member.bytes(s))
                            .sum::<usize>()
                    })
                    .sum()
            })
            .unwrap_or(0)
    }

    /// Bytes of the unfused runs' whole-frame intermediate buffers (values
    /// that stay in the group).
    pub(crate) fn unfused_intermediate_bytes(&self, dag: &Dag) -> usize {
        self.internal
            .iter()
            .zip(&dag.nodes)
            .filter(|(_, n)| n.output.is_none())
            .map(|(s, n)| n.member.bytes(s))
            .sum()
    }
}
