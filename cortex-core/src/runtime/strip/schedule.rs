//! A group's schedule at one input size: the strips and the rows every
//! member computes in each (its own share of the output rows when its
//! value leaves the group, plus every row its consumers in the group read
//! for theirs: the halo, recomputed by each strip that needs it), and the
//! members whose value is constant per geometry, computed once. Planned
//! once per input geometry and strip setting, kept for the next runs; and
//! for an unfused run, every member's geometries, kept the same way.

use std::ops::Range;

use smallvec::SmallVec;

use super::dag::{Dag, Node, Sizes, Value};
use super::erased::{AnyPlane, Inputs};
use super::error::StripError;
use super::geometry::Geometry;
use super::member::Store;
use super::rows::{hull, input_rows, part};
use super::strips::Strips;

/// The rows of one strip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StripRows {
    /// Per member: the rows it computes (empty: it does not run).
    pub need: Vec<Range<usize>>,
    /// Per member: the rows of its value this strip writes to the
    /// whole-frame output (empty for a value that does not leave).
    pub own: Vec<Range<usize>>,
}

/// The rows of strip `s` of `strips`, given each member's row geometry.
/// A `folded` member computes no rows (its whole value is computed once per
/// geometry), so it widens none of its producers'.
pub(crate) fn strip_rows(
    nodes: &[Node],
    rows: &[Geometry],
    folded: &[bool],
    s: usize,
    strips: usize,
) -> StripRows {
    let n = nodes.len();
    let own: Vec<Range<usize>> = nodes
        .iter()
        .zip(rows)
        .map(|(node, g)| match node.output {
            Some(_) => part(s, strips, g.height),
            None => 0..0,
        })
        .collect();
    let mut need = own.clone();
    // Consumers come after their producers: walking backwards, a member's
    // needs are final before it widens its producers'.
    for i in (0..n).rev() {
        if folded.get(i).copied().unwrap_or(false) {
            need[i] = 0..0;
            continue;
        }
        if need[i].is_empty() {
            continue;
        }
        let window = nodes[i].member.kind().window();
        for a in &nodes[i].args {
            if let Value::Node(j) = *a {
                let r = input_rows(need[i].clone(), rows[i].height, rows[j].height, window);
                need[j] = hull(need[j].clone(), r);
            }
        }
    }
    StripRows { need, own }
}

/// What a run at one input size needs, kept for the next runs.
pub(crate) struct RunPlan {
    inputs: Vec<Geometry>,
    strip_setting: Strips,
    threads: usize,
    pub(crate) sizes: Sizes,
    pub(crate) strips: Vec<StripRows>,
    /// Per member: its whole value when it is constant per geometry
    /// (computed once, when the run was planned).
    pub(crate) constants: Vec<Option<Store>>,
}

/// The plan of the last run, or the inputs the last run refused.
#[derive(Default)]
pub(crate) struct Schedule {
    /// The sizes and strip rows of the last run's input geometries.
    pub(crate) plan: Option<RunPlan>,
    /// The input geometries (and strip setting) the last run refused.
    refused: Option<(Vec<Geometry>, Strips)>,
    /// The last unfused run's input geometries and every member's sizes
    /// for them (`None`: they were refused).
    whole: Option<(Vec<Geometry>, Option<Sizes>)>,
}

/// Whether `inputs` are whole planes of the geometries `known`.
fn same_inputs(known: &[Geometry], inputs: &[AnyPlane<'_>]) -> bool {
    known.len() == inputs.len()
        && known
            .iter()
            .zip(inputs)
            .all(|(g, x)| *g == x.geometry() && x.rows() == (0..g.height))
}

impl Schedule {
    /// Every member's geometries for an unfused run on `inputs`, unless the
    /// last unfused run's hold: a group run unfused frame after frame at one
    /// size computes them once, and a size it refused stays refused at no
    /// cost, so such runs allocate nothing.
    ///
    /// # Errors
    /// As [`Dag::sizes`]; [`StripError::RefusedBefore`] for inputs refused
    /// before.
    pub(crate) fn whole(
        &mut self,
        dag: &Dag,
        inputs: &[AnyPlane<'_>],
    ) -> Result<&Sizes, StripError> {
        let held = self
            .whole
            .as_ref()
            .is_some_and(|(known, _)| same_inputs(known, inputs));
        if !held {
            let geometries = inputs.iter().map(|p| p.geometry()).collect();
            match dag.sizes(inputs) {
                Ok(sizes) => self.whole = Some((geometries, Some(sizes))),
                Err(e) => {
                    self.whole = Some((geometries, None));
                    return Err(e);
                }
            }
        }
        match &self.whole {
            Some((_, Some(sizes))) => Ok(sizes),
            _ => Err(StripError::RefusedBefore),
        }
    }

    /// Drops the fused plan and its folded constants (the group runs
    /// unfused from now on); a later fused run plans again.
    pub(crate) fn release_plan(&mut self) {
        self.plan = None;
    }

    /// Computes the sizes and the strips' rows for these inputs, unless the
    /// last run's hold (same input geometries and strip setting): a group
    /// run frame after frame at one size plans once.
    pub(crate) fn prepare(
        &mut self,
        dag: &Dag,
        inputs: &[AnyPlane<'_>],
        strips: Strips,
    ) -> Result<&RunPlan, StripError> {
        let same = |known: &[Geometry]| same_inputs(known, inputs);
        let threads = rayon::current_num_threads();
        let held = self
            .plan
            .as_ref()
            .is_some_and(|p| p.strip_setting == strips && same(&p.inputs) && p.threads == threads);
        if !held {
            // A frame size the group cannot take stays refused at no cost,
            // so a stream of such frames runs unfused without allocating.
            if let Some((known, setting)) = &self.refused {
                if *setting == strips && same(known) {
                    return Err(StripError::RefusedBefore);
                }
            }
            // Another strip setting at the same size (the tuner trying
            // heights) computes the folded constants into the last plan's
            // buffers, so trying heights does not allocate whole frames.
            let same_size = self
                .plan
                .take()
                .filter(|p| same(&p.inputs) && p.threads == threads);
            self.refused = None;
            match plan(dag, inputs, strips, same_size) {
                Ok(p) => self.plan = Some(p),
                Err((e, refusal)) => {
                    if refusal {
                        self.refused =
                            Some((inputs.iter().map(|p| p.geometry()).collect(), strips));
                    }
                    return Err(e);
                }
            }
        }
        self.plan
            .as_ref()
            .ok_or_else(|| StripError::Group("no run plan".into()))
    }
}

/// The plan of a run of `dag` on `inputs` cut into `strips`, reusing the
/// buffers of another setting's plan at the same size when there is one;
/// an error says whether the inputs are refused (kept, so the same inputs
/// fail at no cost) or only the strip setting is invalid.
fn plan(
    dag: &Dag,
    inputs: &[AnyPlane<'_>],
    strips: Strips,
    same_size: Option<RunPlan>,
) -> Result<RunPlan, (StripError, bool)> {
    let refused = |e| (e, true);
    let sizes = dag.sizes(inputs).map_err(refused)?;
    let buffers = same_size.map(|p| p.constants);
    let tallest = dag
        .outputs
        .iter()
        .map(|&i| sizes.rows[i].height)
        .max()
        .unwrap_or(1);
    let count = match strips {
        Strips::Auto => Strips::auto_for(tallest, dag.widest_window()),
        other => other.count(tallest).map_err(|e| (e, false))?,
    };
    let constants = fold_constants(&dag.nodes, &sizes, inputs, buffers).map_err(refused)?;
    let folded: Vec<bool> = constants.iter().map(Option::is_some).collect();
    let plans: Vec<StripRows> = (0..count)
        .map(|s| strip_rows(&dag.nodes, &sizes.rows, &folded, s, count))
        .collect();
    Ok(RunPlan {
        inputs: inputs.iter().map(|p| p.geometry()).collect(),
        strip_setting: strips,
        threads: rayon::current_num_threads(),
        sizes,
        strips: plans,
        constants,
    })
}

/// Computes the whole value of every member whose value depends only on
/// its inputs' geometries ([`super::StripKernel::constant_per_geometry`])
/// and stays in the group, its computed arguments given as zeroed planes of
/// the right geometry (or, for a folded argument, its folded value). A
/// constant that leaves the group is computed each run as before: it would
/// have to be copied into the leaving buffer every run anyway, which costs
/// as much memory traffic as computing it there.
///
/// `buffers` (a plan's constants at the same size) are written over
/// rather than allocated anew.
fn fold_constants(
    nodes: &[Node],
    sizes: &Sizes,
    inputs: &[AnyPlane<'_>],
    mut buffers: Option<Vec<Option<Store>>>,
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
        let reused = buffers.as_mut().and_then(|b| b.get_mut(i)?.take());
        let mut store = reused.unwrap_or_else(|| node.member.new_store());
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
