//! Running a group: fused, strip by strip over rayon's pool with the
//! intermediate values in per-worker scratch; or unfused, each member over
//! whole frames (the reference fused runs are compared with, and the
//! tuner's candidate for a group that gains nothing from fusing). Either
//! way a run that fails publishes nothing: the outputs keep the last
//! successful run's values.

use std::ops::Range;
use std::sync::Mutex;

use smallvec::SmallVec;

use super::dag::{Dag, Node, Sizes, Value};
use super::erased::{AnyPlane, AnyStripMut, Inputs};
use super::error::StripError;
use super::member::Store;
use super::schedule::{RunPlan, StripRows};
use super::state::State;

pub use super::strips::Strips;

/// Runs `plan`'s strips of `dag` on `inputs`, then publishes.
pub(crate) fn fused(
    dag: &Dag,
    plan: &RunPlan,
    state: &mut State,
    inputs: &[AnyPlane<'_>],
) -> Result<(), StripError> {
    let nodes = &dag.nodes;
    // Each output's whole-frame buffer, cut between the strips as they
    // are handed out (no per-run allocation for up to 8 outputs).
    let mut outs: Outs<'_> = SmallVec::new();
    for (k, store) in state.staging.iter_mut().enumerate() {
        let i = dag.outputs[k];
        if plan.sizes.declined[i] {
            continue;
        }
        let g = plan.sizes.rows[i];
        outs.push((i, nodes[i].member.strip(store, g, 0..g.height)?));
    }
    let count = plan.strips.len();
    run_strips(nodes, plan, 0..count, outs, inputs, &state.arenas)?;
    state.fold_and_publish(dag, &plan.sizes)
}

/// Runs each member of `dag` over whole frames of `sizes` (the inputs'),
/// one after the other, every intermediate value a whole-frame buffer,
/// then publishes. Allocates nothing once the buffers have grown to the
/// frame's size.
pub(crate) fn unfused(
    dag: &Dag,
    sizes: &Sizes,
    state: &mut State,
    inputs: &[AnyPlane<'_>],
) -> Result<(), StripError> {
    if state.internal.len() != dag.nodes.len() {
        state.internal = dag.nodes.iter().map(|n| n.member.new_store()).collect();
    }
    for i in 0..dag.nodes.len() {
        if sizes.declined[i] {
            continue;
        }
        let (done, rest) = state.internal.split_at_mut(i);
        let node = &dag.nodes[i];
        let mut args: SmallVec<[AnyPlane<'_>; 8]> = SmallVec::new();
        for a in &node.args {
            args.push(match *a {
                Value::Input(k) => inputs[k],
                Value::Node(j) => dag.nodes[j].member.view(&done[j], sizes.rows[j])?,
            });
        }
        let g = sizes.rows[i];
        let mut out = node.member.strip(&mut rest[0], g, 0..g.height)?;
        node.member.run(&Inputs::new(&args), &mut out)?;
    }
    // Hand the whole-frame values to the outputs' staging buffers.
    for (k, &i) in dag.outputs.iter().enumerate() {
        std::mem::swap(&mut state.staging[k], &mut state.internal[i]);
    }
    state.fold_and_publish(dag, sizes)
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
    arenas: &Mutex<Vec<Vec<Store>>>,
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
