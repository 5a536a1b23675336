//! The topological order of the within-frame data edges, and cycles that no
//! state breaks.

use petgraph::algo::kosaraju_scc;
use petgraph::graphmap::DiGraphMap;

use super::Resolved;
use crate::model::ir::{Arg, Endpoint};
use crate::model::spec::GraphSpec;
use crate::passes::diag::{Diagnostic, Diagnostics, Loc};

/// Orders the nodes so every producer precedes its consumers (declaration
/// order among independent nodes), or reports each cycle with its path.
///
/// ```text
/// node a = f(b);
/// node b = g(a);   // error: cycle a -> b -> a; read last frame's value
///                  //        through a state to break it
/// ```
pub(crate) fn topological(spec: &GraphSpec, r: &Resolved, diags: &mut Diagnostics) -> Vec<u32> {
    let n = spec.nodes.len() as u32;
    let mut g = DiGraphMap::<u32, ()>::new();
    for id in 0..n {
        g.add_node(id);
    }
    for (consumer, args) in r.args.iter().enumerate() {
        for arg in args.iter().flatten() {
            if let Arg::Value(Endpoint::Node(p)) = arg {
                g.add_edge(*p, consumer as u32, ());
            }
        }
    }
    let mut cyclic = false;
    // Kosaraju's search keeps its own stack, so a chain of a hundred
    // thousand nodes from a graph file cannot overflow the thread's (Tarjan's
    // in petgraph recurses once per node).
    let mut sccs = kosaraju_scc(&g);
    // Reported in declaration order, as the nodes were written.
    sccs.iter_mut().for_each(|scc| scc.sort_unstable());
    sccs.sort_unstable_by_key(|scc| scc[0]);
    for scc in sccs {
        let self_loop = scc.len() == 1 && g.contains_edge(scc[0], scc[0]);
        if scc.len() < 2 && !self_loop {
            continue;
        }
        cyclic = true;
        let path = cycle_path(&g, &scc);
        let names: Vec<&str> = path
            .iter()
            .map(|&i| spec.nodes[i as usize].name.as_str())
            .collect();
        let start = *path.first().unwrap_or(&scc[0]);
        diags.push(
            Diagnostic::error(
                Loc::Node(start as usize),
                format!("cycle: {} -> {}", names.join(" -> "), names[0]),
            )
            .note("note: within a frame every node needs its inputs first, so a cycle can never run")
            .note(format!(
                "help: if `{}` should see the previous frame's value, read it through a state: `state _prev_{0}: T = …;` and `{0} -> _prev_{0};`",
                names.last().copied().unwrap_or_default()
            )),
        );
    }
    if cyclic {
        return Vec::new();
    }
    stable_toposort(&g, n)
}

/// Kahn's algorithm taking the lowest-numbered ready node first, so the
/// order is deterministic and follows the declaration where it can.
fn stable_toposort(g: &DiGraphMap<u32, ()>, n: u32) -> Vec<u32> {
    let mut indegree: Vec<usize> = (0..n)
        .map(|id| g.neighbors_directed(id, petgraph::Incoming).count())
        .collect();
    let mut ready: std::collections::BTreeSet<u32> =
        (0..n).filter(|&i| indegree[i as usize] == 0).collect();
    let mut order = Vec::with_capacity(n as usize);
    while let Some(id) = ready.pop_first() {
        order.push(id);
        for next in g.neighbors_directed(id, petgraph::Outgoing) {
            indegree[next as usize] -= 1;
            if indegree[next as usize] == 0 {
                ready.insert(next);
            }
        }
    }
    order
}

/// A simple cycle inside a strongly connected component (sorted), starting
/// at its first-declared node.
fn cycle_path(g: &DiGraphMap<u32, ()>, scc: &[u32]) -> Vec<u32> {
    let start = scc[0];
    let in_scc = |x: u32| scc.binary_search(&x).is_ok();
    // Depth-first search for a path back to `start` within the component;
    // each node is entered once, so a large component costs its size.
    let mut path = vec![start];
    let mut visited = std::collections::HashSet::from([start]);
    let mut stack = vec![g
        .neighbors(start)
        .filter(|&x| in_scc(x))
        .collect::<Vec<_>>()];
    while let Some(frontier) = stack.last_mut() {
        match frontier.pop() {
            Some(next) if next == start => return path,
            Some(next) if visited.insert(next) => {
                path.push(next);
                stack.push(g.neighbors(next).filter(|&x| in_scc(x)).collect());
            }
            Some(_) => {}
            None => {
                stack.pop();
                path.pop();
            }
        }
    }
    vec![start]
}
