//! Execution plans: which nodes a mode (or a zero-weight pattern) runs, in
//! which order, which it eliminates and why.

use crate::ir::{GraphIr, KeyId, List, NodeId, Str};

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
    /// Whether node `id` runs.
    #[inline(always)]
    pub fn is_live(&self, id: NodeId) -> bool {
        self.live.get(id as usize).copied().unwrap_or(false)
    }

    /// Whether state `id` is written after the frame.
    #[inline(always)]
    pub fn writes_state(&self, id: u32) -> bool {
        self.writes_state.get(id as usize).copied().unwrap_or(false)
    }

    /// The reason node `id` is eliminated, if it is.
    pub fn reason(&self, id: NodeId) -> Option<Reason> {
        self.eliminated
            .iter()
            .find(|e| e.node == id)
            .map(|e| e.reason)
    }
}
