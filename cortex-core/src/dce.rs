//! Dead-node elimination: from a zero-weight pattern to a [`Plan`].
//!
//! Two passes over the graph, both graph searches with `petgraph`:
//!
//! 1. **Kill** (forward): nodes whose weight is zero are eliminated, and so is
//!    every node that needs a value from an eliminated node through a
//!    required edge — a data edge from a node without a weight key, or a read
//!    of a state whose writer is eliminated. Weighted edges do not propagate:
//!    their consumers receive `None` and keep running.
//! 2. **Liveness** (backward from the outputs): a node runs iff it is a
//!    surviving output, or a running node consumes it, or it writes a state
//!    that a running node reads. Everything else — upstream-only helpers of
//!    eliminated nodes, state writes nobody reads — is dropped.
//!
//! Unlike the seed's forward-only loop, this also removes helpers whose only
//! consumers died, and never removes a writer whose state is still read.

use petgraph::graphmap::DiGraphMap;
use petgraph::visit::{Dfs, Walker};

use crate::ir::{Arg, EdgeKind, Endpoint, GraphIr, NodeId};
use crate::plan::{Eliminated, Plan, Reason};

/// Computes the plan for a zero-weight pattern (bit `i` set: weight key `i`
/// is zero). `label` names the plan (a mode name or the pattern).
pub fn plan_for_pattern(ir: &GraphIr, zero_pattern: u64, label: impl Into<String>) -> Plan {
    let n = ir.nodes.len();
    let killed = kill(ir, zero_pattern);
    let live = liveness(ir, &killed);

    let mut order = Vec::new();
    let mut eliminated = Vec::new();
    for &id in ir.topo.iter() {
        match (&killed[id as usize], live[id as usize]) {
            (None, true) => order.push(id),
            (Some(reason), _) => eliminated.push(Eliminated {
                node: id,
                reason: *reason,
            }),
            (None, false) => eliminated.push(Eliminated {
                node: id,
                reason: Reason::NoLiveConsumer,
            }),
        }
    }
    let live_flags: Vec<bool> = (0..n).map(|i| killed[i].is_none() && live[i]).collect();
    let writes_state = state_reads_live(ir, &live_flags);
    let missing_outputs = ir
        .outputs
        .iter()
        .filter(|o| !o.optional && !live_flags[o.node as usize])
        .map(|o| o.node)
        .collect::<Vec<_>>();
    Plan {
        label: label.into().into(),
        zero_pattern,
        order: order.into(),
        eliminated: eliminated.into(),
        live: live_flags.into(),
        writes_state: writes_state.into(),
        missing_outputs: missing_outputs.into(),
    }
}

/// The plan of declared mode `mode` (an index into `ir.modes`).
pub fn plan_for_mode(ir: &GraphIr, mode: usize) -> Plan {
    let m = &ir.modes[mode];
    plan_for_pattern(ir, GraphIr::zero_pattern(&m.weights), m.name.to_string())
}

/// The plans of every zero pattern `0 .. 2^k` for `k` weight keys.
pub fn plans_for_all_patterns(ir: &GraphIr) -> Vec<Plan> {
    let k = ir.weight_keys.len();
    (0..1u64 << k)
        .map(|p| plan_for_pattern(ir, p, pattern_label(p, k)))
        .collect()
}

/// `pattern 0b0101` (bit `i` set: weight key `i` is zero).
pub fn pattern_label(pattern: u64, keys: usize) -> String {
    format!("pattern 0b{:0width$b}", pattern, width = keys.max(1))
}

/// The producers a node needs to run (required edges only), plus the state
/// writers behind the states it reads.
fn required_producers(ir: &GraphIr, node: NodeId) -> impl Iterator<Item = (Endpoint, NodeId)> + '_ {
    ir.node(node).args.iter().filter_map(move |arg| match arg {
        Arg::Value(e @ Endpoint::Node(p)) if ir.out_edge_kind(*e) == EdgeKind::Data => Some((*e, *p)),
        Arg::Value(e @ Endpoint::State(s)) => Some((*e, ir.states[*s as usize].writer)),
        _ => None,
    })
}

/// Pass 1: the eliminated nodes with the reason, indexed by node.
fn kill(ir: &GraphIr, zero_pattern: u64) -> Vec<Option<Reason>> {
    let n = ir.nodes.len();
    // Edges producer -> consumer along which elimination propagates.
    let mut g = DiGraphMap::<NodeId, ()>::new();
    for id in 0..n as NodeId {
        g.add_node(id);
        for (_, producer) in required_producers(ir, id) {
            g.add_edge(producer, id, ());
        }
    }
    let mut killed: Vec<Option<Reason>> = vec![None; n];
    let seeds: Vec<NodeId> = (0..n as NodeId)
        .filter(|&id| {
            ir.node(id)
                .weight_key
                .is_some_and(|k| zero_pattern & (1u64 << k) != 0)
        })
        .collect();
    for &s in &seeds {
        if let Some(key) = ir.node(s).weight_key {
            killed[s as usize] = Some(Reason::ZeroWeight { key });
        }
    }
    let mut dfs = Dfs::empty(&g);
    dfs.stack.extend(seeds.iter().copied());
    let reached: Vec<NodeId> = dfs.iter(&g).collect();
    let mut dead = vec![false; n];
    for &id in &reached {
        dead[id as usize] = true;
    }
    // Attribute each propagated elimination to its first eliminated producer.
    for &id in &reached {
        if killed[id as usize].is_some() {
            continue;
        }
        let from = required_producers(ir, id)
            .find(|(_, p)| dead[*p as usize])
            .map(|(e, _)| e);
        if let Some(from) = from {
            killed[id as usize] = Some(Reason::RequiredInput { from });
        }
    }
    killed
}

/// Pass 2: whether each node is needed by a surviving output.
fn liveness(ir: &GraphIr, killed: &[Option<Reason>]) -> Vec<bool> {
    let n = ir.nodes.len();
    let alive = |id: NodeId| killed[id as usize].is_none();
    // Edges consumer -> producer over surviving nodes.
    let mut g = DiGraphMap::<NodeId, ()>::new();
    for id in (0..n as NodeId).filter(|&id| alive(id)) {
        g.add_node(id);
        for arg in ir.node(id).args.iter() {
            let producer = match arg {
                Arg::Value(Endpoint::Node(p)) => *p,
                Arg::Value(Endpoint::State(s)) => ir.states[*s as usize].writer,
                _ => continue,
            };
            if alive(producer) {
                g.add_edge(id, producer, ());
            }
        }
    }
    let mut dfs = Dfs::empty(&g);
    dfs.stack.extend(
        ir.outputs
            .iter()
            .map(|o| o.node)
            .filter(|&id| alive(id)),
    );
    let mut live = vec![false; n];
    for id in dfs.iter(&g) {
        live[id as usize] = true;
    }
    live
}

/// Per state: whether a running node reads it (then its writer runs too).
fn state_reads_live(ir: &GraphIr, live: &[bool]) -> Vec<bool> {
    let mut reads = vec![false; ir.states.len()];
    for (id, node) in ir.nodes.iter().enumerate() {
        if !live[id] {
            continue;
        }
        for arg in node.args.iter() {
            if let Arg::Value(Endpoint::State(s)) = arg {
                reads[*s as usize] = true;
            }
        }
    }
    reads
}
