//! Compilable islands: the partition of a plan into maximal connected
//! regions of running `#[compilable]` nodes, separated by `#[external_call]`
//! nodes (as TVM's BYOC partitions a graph between a compiler and the rest,
//! or OpenCV G-API groups a graph into islands per backend).
//!
//! Two running compilable nodes belong to the same island when a chain of
//! data or weighted edges joins them through running compilable nodes only
//! (edge direction does not matter). State edges never join nodes: they
//! carry a value to the *next* frame, so code fused within one frame cannot
//! use them. Each island is a candidate for fusing into one compiled unit;
//! every external call in between stays a call.
//!
//! Nothing here panics on a malformed IR (tools may be handed any IR): ids
//! out of range are skipped.

use crate::model::ir::{Edge, EdgeKind, Endpoint, GraphIr, NodeId};
use crate::model::plan::Plan;

/// One maximal region of running compilable nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Island {
    /// Its nodes, in the graph's topological order (`ir.topo`).
    pub nodes: Vec<NodeId>,
}

impl Island {
    /// Whether node `id` belongs to this island.
    pub fn contains(&self, id: NodeId) -> bool {
        self.nodes.contains(&id)
    }
}

/// The islands of `plan` (or of the full graph when `plan` is `None`): every
/// running compilable node in exactly one island, islands ordered by their
/// first node in topological order.
pub fn islands(ir: &GraphIr, plan: Option<&Plan>) -> Vec<Island> {
    let n = ir.nodes.len();
    let member = |id: NodeId| {
        ir.nodes
            .get(id as usize)
            .is_some_and(|node| node.is_compilable() && plan.is_none_or(|p| p.is_live(id)))
    };
    let mut sets = DisjointSets::new(n);
    for edge in ir.edges.iter() {
        if let Some((a, b)) = joins(edge) {
            if member(a) && member(b) {
                sets.union(a as usize, b as usize);
            }
        }
    }
    // Walk the topological order so each island's nodes, and the islands
    // themselves, come out in that order.
    let mut island_of_root: Vec<Option<usize>> = vec![None; n];
    let mut out: Vec<Island> = Vec::new();
    for id in crate::model::ir::display_order(ir) {
        if !member(id) {
            continue;
        }
        let root = sets.find(id as usize);
        let index = *island_of_root[root].get_or_insert_with(|| {
            out.push(Island { nodes: Vec::new() });
            out.len() - 1
        });
        out[index].nodes.push(id);
    }
    out
}

/// The island of each node (`None` for external, eliminated or unknown
/// nodes), indexed by node id.
pub fn island_index(ir: &GraphIr, islands: &[Island]) -> Vec<Option<usize>> {
    let mut index = vec![None; ir.nodes.len()];
    for (i, island) in islands.iter().enumerate() {
        for &id in &island.nodes {
            if let Some(slot) = index.get_mut(id as usize) {
                *slot = Some(i);
            }
        }
    }
    index
}

/// The two nodes a within-frame edge joins, if it joins two nodes.
fn joins(edge: &Edge) -> Option<(NodeId, NodeId)> {
    match (edge.kind, edge.from, edge.to) {
        (EdgeKind::Data | EdgeKind::Weighted, Endpoint::Node(a), Endpoint::Node(b)) => Some((a, b)),
        _ => None,
    }
}

/// Union-find with path halving; the sets are few and small, so union by
/// size is not worth its bookkeeping.
struct DisjointSets {
    parent: Vec<usize>,
}

impl DisjointSets {
    fn new(n: usize) -> Self {
        DisjointSets {
            parent: (0..n).collect(),
        }
    }

    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        // The smaller root wins, so a set's root is stable and predictable.
        let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
        self.parent[hi] = lo;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::l2_ir;
    use crate::passes::dce::plan_for_mode;

    #[test]
    fn reduced_l2_islands_split_by_liveness() {
        // gray and scene are external; center, saliency, motion, fused are
        // compilable and all feed `fused`: one island in the full graph.
        let ir = l2_ir();
        let names = |isl: &[Island]| -> Vec<Vec<String>> {
            isl.iter()
                .map(|i| {
                    i.nodes
                        .iter()
                        .map(|&n| ir.node(n).name.to_string())
                        .collect()
                })
                .collect()
        };
        let full = islands(&ir, None);
        assert_eq!(names(&full), [["center", "saliency", "motion", "fused"]]);
        // POWER_SAVE eliminates saliency and motion: they leave the island.
        let ps = plan_for_mode(&ir, ir.mode_index("POWER_SAVE").unwrap());
        let isl = islands(&ir, Some(&ps));
        assert_eq!(names(&isl), [["center", "fused"]]);
        let index = island_index(&ir, &isl);
        assert_eq!(index, [None, None, Some(0), None, None, Some(0)]);
    }

    #[test]
    fn malformed_ir_does_not_panic() {
        let mut ir = l2_ir();
        ir.edges.to_mut().push(Edge {
            from: Endpoint::Node(99),
            to: Endpoint::Node(2),
            arg: 0,
            kind: EdgeKind::Data,
        });
        ir.topo = vec![7, 5, 5].into();
        let isl = islands(&ir, None);
        let total: usize = isl.iter().map(|i| i.nodes.len()).sum();
        assert_eq!(total, 4);
    }
}
