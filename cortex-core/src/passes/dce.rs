//! Dead-node elimination: from a zero-weight pattern to a [`Plan`].
//!
//! A plan must give bit-identical outputs to the full graph run with the same
//! weights. A zero weight on node `w` means `w`'s *weighted* contributions
//! are zero, so its weighted edges can be cut (consumers receive `None`,
//! which they treat like a zero-weighted value). Its value is still needed
//! unscaled wherever it is read through a state. Hence one backward pass,
//! a `petgraph` depth-first search from the outputs over the edges that
//! still carry a needed value:
//!
//! * a required (data) edge always;
//! * a weighted edge only from a producer whose weight is non-zero;
//! * a state read always, to the state's writer (last frame's value is
//!   needed, zero weight or not).
//!
//! A rated mode's plans also start the search from its triggers (`where
//! text every 4 or cut`): a trigger is read on every frame of the mode, so
//! it, what it reads and (for a state) its writer run whatever the outputs
//! need.
//!
//! The search starts from every output, or from the outputs a caller reads
//! ([`plan_for_outputs`]): a node that feeds only outputs nobody reads is
//! dead like any other.
//!
//! Nodes the search does not reach are eliminated: `ZeroWeight` when their
//! weight is zero, `NoLiveConsumer` otherwise (upstream-only helpers of cut
//! nodes, nodes whose only use is a state that nothing running reads). A
//! state is written iff a running node reads it.
//!
//! A simpler forward rule — also eliminate every node downstream of a
//! zero-weight node through a required edge — is wrong when that edge is a
//! state read: the full graph still feeds the reader the zero-weight node's
//! real value, so eliminating the reader changes results (found by the
//! property test in `tests/dce.rs`). Here the zero-weight writer keeps
//! running for its state instead.

use petgraph::graphmap::DiGraphMap;
use petgraph::visit::{Dfs, Walker};

use crate::model::ir::{Arg, Endpoint, GraphIr, NodeId};
use crate::model::outputs::OutputSet;
use crate::model::plan::{Eliminated, Plan, Reason};

/// Computes the plan for a zero-weight pattern (bit `i` set: weight key `i`
/// is zero). `label` names the plan (a mode name or the pattern).
pub fn plan_for_pattern(ir: &GraphIr, zero_pattern: u64, label: impl Into<String>) -> Plan {
    plan_reading(ir, zero_pattern, &[], OutputSet::ALL, label)
}

/// [`plan_for_pattern`] computing only the outputs in `outputs`: the
/// pattern's plan intersected with the ancestors of those outputs (the
/// liveness search starts from them alone, through every edge whose
/// producer the pattern's plan runs), so a node that only feeds outputs
/// left out is eliminated (`NoLiveConsumer`), every node that runs sees the
/// inputs it sees in the pattern's plan, and a state that no running node
/// reads is not written (it restarts from its initial value, as in any plan
/// that does not keep it). Only a requested non-optional output the weights
/// eliminate is a missing output.
pub fn plan_for_outputs(
    ir: &GraphIr,
    zero_pattern: u64,
    outputs: OutputSet,
    label: impl Into<String>,
) -> Plan {
    plan_reading(ir, zero_pattern, &[], outputs, label)
}

/// [`plan_for_pattern`] with the values of `reads` read besides the
/// outputs (a rated mode's triggers): each runs, with what it needs, and a
/// state among them is written.
pub(crate) fn plan_reading(
    ir: &GraphIr,
    zero_pattern: u64,
    reads: &[Endpoint],
    outputs: OutputSet,
    label: impl Into<String>,
) -> Plan {
    let zero_key = |id: NodeId| {
        ir.nodes
            .get(id as usize)
            .and_then(|n| n.weight_key)
            .filter(|&k| k < 64 && zero_pattern & (1u64 << k) != 0)
    };
    let zero = |id: NodeId| zero_key(id).is_some();
    let mut live = liveness(ir, &zero, &|_| false, reads, OutputSet::ALL);
    if !outputs.covers(ir) {
        // The full plan cut down to what the outputs read need: the same
        // search from fewer roots, through every edge whose producer the
        // full plan runs — a zero-weight node kept running for a state
        // still reaches its weighted consumers, so a consumer sees the
        // same value in both plans.
        let full = live;
        let cut = |id: NodeId| zero(id) && !full[id as usize];
        live = liveness(ir, &cut, &|_| false, reads, outputs);
    }

    let mut order = Vec::new();
    let mut eliminated = Vec::new();
    for &id in ir.topo.iter() {
        if live[id as usize] {
            order.push(id);
        } else {
            let reason = match zero_key(id) {
                Some(key) => Reason::ZeroWeight { key },
                None => Reason::NoLiveConsumer,
            };
            eliminated.push(Eliminated { node: id, reason });
        }
    }
    let writes_state = state_reads_live(ir, &live, reads);
    let missing_outputs = ir
        .outputs
        .iter()
        .enumerate()
        .filter(|&(i, o)| outputs.contains(i) && !o.optional && !live[o.node as usize])
        .map(|(_, o)| o)
        .map(|o| o.node)
        .collect::<Vec<_>>();
    Plan {
        label: label.into().into(),
        graph: ir.fingerprint(),
        zero_pattern,
        order: order.into(),
        eliminated: eliminated.into(),
        live: live.into(),
        writes_state: writes_state.into(),
        missing_outputs: missing_outputs.into(),
    }
}

/// The plan of declared mode `mode` (an index into `ir.modes`).
/// A rated mode's plan also runs its triggers (see [`triggers`]).
pub fn plan_for_mode(ir: &GraphIr, mode: usize) -> Plan {
    let m = &ir.modes[mode];
    plan_reading(
        ir,
        GraphIr::zero_pattern(&m.weights),
        &triggers(ir, mode),
        OutputSet::ALL,
        m.name.to_string(),
    )
}

/// The values declared mode `mode`'s rates read as triggers, each once:
/// its plans compute them on every frame, whether an output needs them or
/// not.
pub fn triggers(ir: &GraphIr, mode: usize) -> Vec<Endpoint> {
    let mut out = Vec::new();
    for t in ir.modes.get(mode).into_iter().flat_map(|m| m.rates.iter()) {
        if let Some(t) = &t.trigger {
            if !out.contains(&t.source) {
                out.push(t.source);
            }
        }
    }
    out
}

/// The phase plans of declared mode `mode`, indexed by held mask (bit `i`
/// set: the node of the mode's rate `i` is held this frame, its consumers
/// reading its value from an earlier frame). Mask 0 is the mode's plan; the
/// others are the same DCE with each held node's value given, so the work
/// only held nodes needed is eliminated too ([`Reason::Held`]). A mode
/// without rates has one phase.
pub fn phase_plans(ir: &GraphIr, mode: usize) -> Vec<Plan> {
    let m = &ir.modes[mode];
    let rates = m.rates.len().min(MAX_RATES_PER_MODE);
    let zero_pattern = GraphIr::zero_pattern(&m.weights);
    let reads = triggers(ir, mode);
    (0..1u64 << rates)
        .map(|mask| {
            let held: Vec<NodeId> = (0..rates)
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| m.rates[i].node)
                .collect();
            let label = if held.is_empty() {
                m.name.to_string()
            } else {
                let names: Vec<&str> = held.iter().map(|&h| ir.node(h).name.as_ref()).collect();
                format!("{} holding {}", m.name, names.join(", "))
            };
            holding(ir, zero_pattern, &held, &reads, label)
        })
        .collect()
}

/// The most rated nodes one mode may have: its phase plans number
/// `2^rates`, each a `const` in the generated code.
pub const MAX_RATES_PER_MODE: usize = 6;

/// [`plan_for_pattern`] with the nodes of `held` held: they do not run, and
/// neither does anything only they needed.
pub fn plan_holding(
    ir: &GraphIr,
    zero_pattern: u64,
    held: &[NodeId],
    label: impl Into<String>,
) -> Plan {
    holding(ir, zero_pattern, held, &[], label)
}

/// Declared mode `mode`'s plan with the nodes of `held` held: its phase
/// plan for them ([`plan_holding`] with the mode's triggers read).
pub fn mode_plan_holding(
    ir: &GraphIr,
    mode: usize,
    held: &[NodeId],
    label: impl Into<String>,
) -> Plan {
    let zero_pattern = ir
        .modes
        .get(mode)
        .map_or(0, |m| GraphIr::zero_pattern(&m.weights));
    holding(ir, zero_pattern, held, &triggers(ir, mode), label)
}

/// [`plan_holding`] with the values of `reads` read besides the outputs.
fn holding(
    ir: &GraphIr,
    zero_pattern: u64,
    held: &[NodeId],
    reads: &[Endpoint],
    label: impl Into<String>,
) -> Plan {
    let base = plan_reading(ir, zero_pattern, reads, OutputSet::ALL, label);
    if held.is_empty() {
        return base;
    }
    let zero = |id: NodeId| {
        ir.nodes
            .get(id as usize)
            .and_then(|n| n.weight_key)
            .is_some_and(|k| k < 64 && zero_pattern & (1u64 << k) != 0)
    };
    let live = liveness(ir, &zero, &|id| held.contains(&id), reads, OutputSet::ALL);
    // Which held node a newly idle node worked for: the first (in `held`'s
    // order) that it feeds.
    let feeds = |id: NodeId, h: NodeId| id == h || ir.upstream(h).contains(&id);
    let mut order = Vec::new();
    let mut eliminated = Vec::new();
    for &id in ir.topo.iter() {
        if live[id as usize] {
            order.push(id);
        } else if let Some(r) = base.reason(id) {
            eliminated.push(Eliminated {
                node: id,
                reason: r,
            });
        } else {
            let rated = held.iter().copied().find(|&h| feeds(id, h)).unwrap_or(id);
            eliminated.push(Eliminated {
                node: id,
                reason: Reason::Held { rated },
            });
        }
    }
    Plan {
        order: order.into(),
        eliminated: eliminated.into(),
        writes_state: state_reads_live(ir, &live, reads).into(),
        live: live.into(),
        ..base
    }
}

/// The plans of every zero pattern `0 .. 2^k` for `k` weight keys.
pub fn plans_for_all_patterns(ir: &GraphIr) -> Vec<Plan> {
    let k = ir.weight_keys.len().min(63);
    (0..1u64 << k)
        .map(|p| plan_for_pattern(ir, p, pattern_label(p, k)))
        .collect()
}

/// `pattern 0b0101` (bit `i` set: weight key `i` is zero).
pub fn pattern_label(pattern: u64, keys: usize) -> String {
    format!("pattern 0b{:0width$b}", pattern, width = keys.max(1))
}

/// Whether each node is needed by an output or by one of the values of
/// `reads` (see the module doc) and runs: a `held` node's value is given
/// (it was computed on an earlier frame), so it does not run and what it
/// reads is not needed for it. Only the outputs in `outputs` are roots.
fn liveness(
    ir: &GraphIr,
    zero: &dyn Fn(NodeId) -> bool,
    held: &dyn Fn(NodeId) -> bool,
    reads: &[Endpoint],
    outputs: OutputSet,
) -> Vec<bool> {
    let n = ir.nodes.len();
    // Edges consumer -> producer that carry a needed value.
    let mut g = DiGraphMap::<NodeId, ()>::new();
    for (id, node) in ir.nodes.iter().enumerate() {
        let id = id as NodeId;
        g.add_node(id);
        if held(id) {
            continue;
        }
        for arg in node.args.iter() {
            let needed = match arg {
                Arg::Value(Endpoint::Node(p)) if ir.node(*p).weight_key.is_none() || !zero(*p) => {
                    Some(*p)
                }
                Arg::Value(Endpoint::State(s)) => ir.states.get(*s as usize).map(|s| s.writer),
                _ => None,
            };
            if let Some(p) = needed {
                g.add_edge(id, p, ());
            }
        }
    }
    let mut dfs = Dfs::empty(&g);
    // Outputs whose own weight is zero are not roots: a zero weight removes
    // the node, and the output is absent (or the mode is rejected).
    let read = reads.iter().filter_map(|e| match *e {
        Endpoint::Node(id) => Some(id),
        Endpoint::State(s) => ir.states.get(s as usize).map(|s| s.writer),
        Endpoint::Input(_) => None,
    });
    dfs.stack.extend(
        ir.outputs
            .iter()
            .enumerate()
            .filter(|&(i, _)| outputs.contains(i))
            .map(|(_, o)| o.node)
            .chain(read)
            .filter(|&id| !zero(id)),
    );
    let mut live = vec![false; n];
    for id in dfs.iter(&g) {
        if let Some(l) = live.get_mut(id as usize) {
            *l = !held(id);
        }
    }
    live
}

/// Per state: whether a running node reads it, or it is one of the values
/// of `read` (then its writer runs too).
fn state_reads_live(ir: &GraphIr, live: &[bool], read: &[Endpoint]) -> Vec<bool> {
    let mut reads = vec![false; ir.states.len()];
    for e in read {
        if let Endpoint::State(s) = *e {
            if let Some(r) = reads.get_mut(s as usize) {
                *r = true;
            }
        }
    }
    for (id, node) in ir.nodes.iter().enumerate() {
        if !live[id] {
            continue;
        }
        for arg in node.args.iter() {
            if let Arg::Value(Endpoint::State(s)) = arg {
                if let Some(r) = reads.get_mut(*s as usize) {
                    *r = true;
                }
            }
        }
    }
    reads
}
