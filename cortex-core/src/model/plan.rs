//! Execution plans: which nodes a mode (or a zero-weight pattern) runs, in
//! which order, which it eliminates and why.

use std::borrow::Cow;

use crate::model::ir::{Arg, Endpoint, GraphIr, KeyId, List, NodeId, Str};
use crate::model::outputs::OutputSet;

/// Why a plan does not run a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reason {
    /// The node's weight key is zero in this mode (and no running node reads
    /// a state it writes).
    ZeroWeight {
        /// The key.
        key: KeyId,
    },
    /// Nothing that runs needs its value: it only fed eliminated nodes or
    /// wrote a state that no running node reads.
    NoLiveConsumer,
    /// A phase of a rated mode: `rated` (this node, or one it feeds) is
    /// held this frame, so its consumers read its value from an earlier
    /// frame and the work only it needed does not run.
    Held {
        /// The held rated node.
        rated: NodeId,
    },
}

impl Reason {
    /// The reason in words, as diagnostics and tools print it. Tolerates ids
    /// out of range, since tools may be handed any IR.
    pub fn describe(self, ir: &GraphIr) -> String {
        match self {
            Reason::ZeroWeight { key } => {
                let key = ir.weight_keys.get(key as usize).map_or("?", |k| k.as_ref());
                format!("its weight `{key}` is 0")
            }
            Reason::NoLiveConsumer => "nothing that runs consumes it".to_string(),
            Reason::Held { rated } => {
                let name = ir
                    .nodes
                    .get(rated as usize)
                    .map_or("?", |n| n.name.as_ref());
                format!("held: `{name}` reads its value from an earlier frame")
            }
        }
    }
}

/// An eliminated node and the reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Eliminated {
    /// The node.
    pub node: NodeId,
    /// Why it does not run.
    pub reason: Reason,
}

/// What to run for one mode or zero-weight pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The mode's name, or `pattern 0b…` for a zero-weight pattern.
    pub label: Str,
    /// [`GraphIr::fingerprint`] of the graph this plan was computed for.
    pub graph: u64,
    /// Bit `i` set: weight key `i` is zero.
    pub zero_pattern: u64,
    /// The nodes to run, in topological order.
    pub order: List<NodeId>,
    /// The nodes not run, in topological order, with the reason.
    pub eliminated: List<Eliminated>,
    /// Per node: whether it runs.
    pub live: List<bool>,
    /// Per state: whether it is written (and read) in this plan.
    pub writes_state: List<bool>,
    /// Non-optional outputs this plan eliminates. A declared mode with any is
    /// a compile-time error; a run-time weight pattern with any is refused.
    pub missing_outputs: List<NodeId>,
}

impl Plan {
    /// A plan that runs nothing: what the macro emits beside the errors of an
    /// invalid pipeline, so the rest of the crate still type-checks.
    pub const fn empty(label: &'static str) -> Plan {
        Plan {
            label: Cow::Borrowed(label),
            graph: 0,
            zero_pattern: 0,
            order: Cow::Borrowed(&[]),
            eliminated: Cow::Borrowed(&[]),
            live: Cow::Borrowed(&[]),
            writes_state: Cow::Borrowed(&[]),
            missing_outputs: Cow::Borrowed(&[]),
        }
    }

    /// Checks that this plan can run on `ir` without breaking its rules,
    /// before anything runs or any state is touched: it was computed for this
    /// graph, its lists have the graph's sizes, its order is the live nodes in
    /// topological order, every running node has its required inputs (a
    /// running producer or a written state), and every written state has a
    /// running writer. `Plan`'s fields are public, so a hand-made or
    /// mismatched plan is refused here rather than failing halfway through a
    /// frame. An eliminated non-optional output is reported as
    /// [`PlanError::OutputEliminated`].
    pub fn validate(&self, ir: &GraphIr) -> Result<(), PlanError> {
        self.validate_for(ir, OutputSet::ALL)
    }

    /// [`Plan::validate`] for a run that reads only the outputs in
    /// `outputs`: an output left out may be eliminated (the run does not
    /// compute it), a requested non-optional one may not.
    pub fn validate_for(&self, ir: &GraphIr, outputs: OutputSet) -> Result<(), PlanError> {
        let malformed = |what: String| PlanError::Malformed {
            label: self.label.to_string(),
            what,
        };
        let expected = ir.fingerprint();
        if self.graph != expected {
            return Err(PlanError::OtherPipeline {
                label: self.label.to_string(),
                pipeline: ir.name.to_string(),
                found: self.graph,
                expected,
            });
        }
        if self.live.len() != ir.nodes.len() || self.writes_state.len() != ir.states.len() {
            return Err(malformed(format!(
                "{} node and {} state flags for {} nodes and {} states",
                self.live.len(),
                self.writes_state.len(),
                ir.nodes.len(),
                ir.states.len()
            )));
        }
        let mut order = ir.topo.iter().copied().filter(|&n| self.is_live(n));
        if !self.order.iter().copied().eq(order.by_ref()) {
            return Err(malformed(
                "its order is not the running nodes in topological order".into(),
            ));
        }
        for (id, node) in ir.nodes.iter().enumerate() {
            if !self.live[id] {
                continue;
            }
            for arg in node.args.iter() {
                match *arg {
                    Arg::Value(Endpoint::Node(p))
                        if ir
                            .nodes
                            .get(p as usize)
                            .is_some_and(|n| n.weight_key.is_none())
                            && !self.is_live(p) =>
                    {
                        return Err(malformed(format!(
                            "`{}` runs without its input `{}`",
                            node.name,
                            ir.endpoint_name(Endpoint::Node(p))
                        )));
                    }
                    Arg::Value(Endpoint::State(s)) if !self.writes_state(s) => {
                        return Err(malformed(format!(
                            "`{}` reads state `{}`, which the plan does not keep",
                            node.name,
                            ir.endpoint_name(Endpoint::State(s))
                        )));
                    }
                    _ => {}
                }
            }
        }
        for (s, state) in ir.states.iter().enumerate() {
            if self.writes_state[s] && !self.is_live(state.writer) {
                return Err(malformed(format!(
                    "state `{}` is written but its writer `{}` does not run",
                    state.name,
                    ir.endpoint_name(Endpoint::Node(state.writer))
                )));
            }
        }
        if let Some((_, o)) = ir
            .outputs
            .iter()
            .enumerate()
            .find(|&(i, o)| outputs.contains(i) && !o.optional && !self.is_live(o.node))
        {
            return Err(PlanError::OutputEliminated {
                output: ir.endpoint_name(Endpoint::Node(o.node)).to_string(),
            });
        }
        Ok(())
    }

    /// Whether node `id` runs.
    #[inline(always)]
    pub fn is_live(&self, id: NodeId) -> bool {
        self.live.get(id as usize).copied().unwrap_or(false)
    }

    /// Whether this plan runs every node of `other` that `among` marks (per
    /// node): e.g. whether a plan cut down to some outputs computes all of
    /// its mode's first-stage work, so that a pipelined frame can go on
    /// with the whole mode from the cut plan's first-stage values.
    pub fn runs_all_of(&self, other: &Plan, among: &[bool]) -> bool {
        among
            .iter()
            .enumerate()
            .all(|(id, &m)| !m || !other.is_live(id as NodeId) || self.is_live(id as NodeId))
    }

    /// Whether state `id` is written after the frame.
    #[inline(always)]
    pub fn writes_state(&self, id: u32) -> bool {
        self.writes_state.get(id as usize).copied().unwrap_or(false)
    }

    /// The rated nodes this plan holds (a phase of a rated mode): their
    /// consumers read their value from an earlier frame.
    pub fn held(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.eliminated.iter().filter_map(|e| match e.reason {
            Reason::Held { rated } if rated == e.node => Some(rated),
            _ => None,
        })
    }

    /// The reason node `id` is eliminated, if it is.
    pub fn reason(&self, id: NodeId) -> Option<Reason> {
        self.eliminated
            .iter()
            .find(|e| e.node == id)
            .map(|e| e.reason)
    }
}

/// Why a plan cannot run on a pipeline (see [`Plan::validate`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// The plan was computed for another graph.
    #[error("plan `{label}` was computed for another graph than `{pipeline}` (fingerprint {found:#018x}, expected {expected:#018x})")]
    OtherPipeline {
        /// The plan's label.
        label: String,
        /// The pipeline it was handed to.
        pipeline: String,
        /// The plan's fingerprint.
        found: u64,
        /// The pipeline's.
        expected: u64,
    },
    /// The plan's lists contradict the graph.
    #[error("plan `{label}` does not fit the graph: {what}")]
    Malformed {
        /// The plan's label.
        label: String,
        /// What is wrong.
        what: String,
    },
    /// The plan eliminates an output that is not optional.
    #[error("the plan eliminates output `{output}`, which is not optional")]
    OutputEliminated {
        /// The output's node name.
        output: String,
    },
}
