//! Schedules of a plan for the engine: the waves of nodes that may run at
//! once (parallel runs), and the nodes that read no state, directly or
//! through other nodes (pipelined runs start them before the previous
//! frame's state is committed).

use crate::model::ir::{Edge, EdgeKind, Endpoint, GraphIr, NodeId};
use crate::model::plan::Plan;

/// The plan's nodes in waves: a node's wave is one more than the latest
/// wave of the nodes it reads (wave 0 reads only inputs and states), so the
/// nodes of one wave are independent and may run at once. Each wave lists
/// its nodes in plan order.
pub fn waves(ir: &GraphIr, plan: &Plan) -> Vec<Vec<NodeId>> {
    let into = ir.edges_into();
    let mut wave = vec![0usize; ir.nodes.len()];
    let mut out: Vec<Vec<NodeId>> = Vec::new();
    for &id in plan.order.iter() {
        let w = producers(&into, id)
            .filter(|&p| plan.is_live(p))
            .map(|p| wave[p as usize] + 1)
            .max()
            .unwrap_or(0);
        wave[id as usize] = w;
        if out.len() <= w {
            out.resize_with(w + 1, Vec::new);
        }
        out[w].push(id);
    }
    out
}

/// The nodes whose values node `id` reads (data and weighted edges), from
/// [`GraphIr::edges_into`].
fn producers<'a>(into: &'a [Vec<&'a Edge>], id: NodeId) -> impl Iterator<Item = NodeId> + 'a {
    into.get(id as usize)
        .into_iter()
        .flatten()
        .filter_map(|e| match (e.from, e.kind) {
            (Endpoint::Node(p), EdgeKind::Data | EdgeKind::Weighted) => Some(p),
            _ => None,
        })
}

/// Per node: whether it runs in `plan` and depends on no state, directly
/// or through the nodes it reads. Such a node of frame `k + 1` may run
/// while frame `k` is still running: nothing it reads is written by frame
/// `k`. The others wait until frame `k` commits its state.
pub fn state_free(ir: &GraphIr, plan: &Plan) -> Vec<bool> {
    let into = ir.edges_into();
    let mut free = vec![false; ir.nodes.len()];
    for &id in plan.order.iter() {
        let mut edges = into.get(id as usize).into_iter().flatten();
        let reads_state = edges.any(|e| match e.from {
            Endpoint::State(_) => true,
            Endpoint::Node(p) => !free[p as usize],
            Endpoint::Input(_) => false,
        });
        free[id as usize] = !reads_state;
    }
    free
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::spec::GraphSpec;

    #[test]
    fn waves_of_a_diamond() {
        let ir = GraphSpec::builder("Diamond")
            .input("x", "u8")
            .node("a", "f", ["x"])
            .node("b", "f", ["a"])
            .node("c", "f", ["a"])
            .node("d", "f", ["b", "c"])
            .output("d", "u8")
            .check()
            .ir
            .expect("valid");
        let plan = crate::passes::dce::plan_for_mode(&ir, 0);
        assert_eq!(waves(&ir, &plan), vec![vec![0], vec![1, 2], vec![3]]);
    }

    #[test]
    fn state_readers_and_their_consumers_wait() {
        let ir = GraphSpec::builder("Stages")
            .input("x", "u8")
            .state("s", "u8", "0")
            .node("a", "f", ["x"])
            .node("b", "f", ["a", "s"])
            .node("c", "f", ["a"])
            .node("d", "f", ["b", "c"])
            .write("a", "s")
            .output("d", "u8")
            .check()
            .ir
            .expect("valid");
        let plan = crate::passes::dce::plan_for_mode(&ir, 0);
        assert_eq!(state_free(&ir, &plan), vec![true, false, true, false]);
    }
}
