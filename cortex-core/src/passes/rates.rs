//! Plans in time: what a mode with rates (`where text every 4 or
//! scene.is_cut`) runs on each frame.
//!
//! A rated mode has one phase plan per combination of held nodes
//! ([`dce::phase_plans`]): the same DCE with each held node's value given.
//! Generated code decides each frame's phase once its triggers are known,
//! so the nodes that compute the triggers run first ([`ModeRates::gate`]),
//! and only the work some phase leaves out ([`ModeRates::conditional`]) is
//! guarded.

use crate::model::ir::{GraphIr, NodeId};
use crate::model::plan::Plan;
use crate::passes::dce;
use crate::passes::fusion::{
    declared_fusion_plan, declared_fusion_plan_in_parts, unit_waves, unit_waves_from, FusionPlan,
};

/// What code generation and the tools need about one rated mode.
#[derive(Debug, Clone, PartialEq)]
pub struct ModeRates {
    /// The phase plans, indexed by held mask (bit `i`: rate `i`'s node is
    /// held); index 0 is the mode's plan.
    pub phases: Vec<Plan>,
    /// Per node: a trigger or something a trigger reads (decided before
    /// any guarded work).
    pub gate: Vec<bool>,
    /// Per node: runs in some phases only (the rated nodes and the work
    /// only they need).
    pub conditional: Vec<bool>,
}

/// The phases of declared mode `mode`, or `None` when it has no rates.
pub fn mode_rates(ir: &GraphIr, mode: usize) -> Option<ModeRates> {
    let m = ir.modes.get(mode)?;
    if m.rates.is_empty() {
        return None;
    }
    let phases = dce::phase_plans(ir, mode);
    let (every, all_held) = (&phases[0], &phases[phases.len() - 1]);
    let n = ir.nodes.len();
    let conditional: Vec<bool> = (0..n as NodeId)
        .map(|id| every.is_live(id) && !all_held.is_live(id))
        .collect();
    let mut gate = vec![false; n];
    for t in m.rates.iter().filter_map(|r| r.trigger.as_ref()) {
        if let crate::model::ir::Endpoint::Node(t) = t.source {
            gate[t as usize] = true;
            for u in ir.upstream(t) {
                gate[u as usize] = true;
            }
        }
    }
    Some(ModeRates {
        phases,
        gate,
        conditional,
    })
}

/// The fused groups generated code runs for `plan`: its declared groups,
/// except that in a rated mode (`rates`) no group mixes the gate (the
/// triggers and what they read) with the rest, and the work only some
/// phases run is not fused; with `stage_a` (a pipelined run's first stage,
/// per node), no group spans the two stages either.
pub fn mode_fusion_plan(
    ir: &GraphIr,
    plan: &Plan,
    rates: Option<&ModeRates>,
    stage_a: Option<&[bool]>,
) -> FusionPlan {
    if rates.is_none() && stage_a.is_none() {
        return declared_fusion_plan(ir, plan);
    }
    let flag = |v: Option<&[bool]>, i: usize| v.is_some_and(|v| v.get(i).copied().unwrap_or(false));
    let gate = rates.map(|r| &r.gate[..]);
    let part: Vec<u8> = (0..ir.nodes.len())
        .map(|i| u8::from(flag(stage_a, i)) * 2 + u8::from(flag(gate, i)))
        .collect();
    let unfused = rates.map_or(&[][..], |r| &r.conditional[..]);
    declared_fusion_plan_in_parts(ir, plan, &part, unfused)
}

/// The fused groups of `plan` as its mode's sequential code runs them
/// ([`mode_fusion_plan`] of the declared mode whose name is the plan's
/// label; a plan of no declared mode gets its declared groups): what the
/// tools show.
pub fn shown_fusion_plan(ir: &GraphIr, plan: &Plan) -> FusionPlan {
    let rates = ir
        .modes
        .iter()
        .position(|m| *m.name == *plan.label)
        .and_then(|m| mode_rates(ir, m));
    mode_fusion_plan(ir, plan, rates.as_ref(), None)
}

/// A rated mode's units in waves ([`unit_waves`] of its gated `plan` and
/// its `fusion`), and the wave before which its phase is decided: the one
/// after the last wave holding gate work (triggers and what they read).
/// Work only some phases run waits for that wave; the rest runs as soon as
/// what it reads is ready, beside the gate if it can.
pub fn rated_unit_waves(
    ir: &GraphIr,
    plan: &Plan,
    fusion: &FusionPlan,
    rates: &ModeRates,
) -> (Vec<Vec<Vec<NodeId>>>, usize) {
    let flag = |v: &[bool], n: NodeId| v.get(n as usize).copied().unwrap_or(false);
    // The gate reads only the gate: its waves are the same with the floor.
    let decide = unit_waves(ir, plan, fusion)
        .iter()
        .rposition(|w| w.iter().flatten().any(|&n| flag(&rates.gate, n)))
        .map_or(0, |w| w + 1);
    let waves = unit_waves_from(ir, plan, fusion, |unit| {
        if unit.iter().any(|&n| flag(&rates.conditional, n)) {
            decide
        } else {
            0
        }
    });
    (waves, decide)
}

/// `plan` with the gate (triggers and what they read) first, each part in
/// its topological order: a valid order, since the gate holds everything it
/// reads.
pub fn gate_first(plan: &Plan, gate: &[bool]) -> Plan {
    let in_gate = |id: NodeId| gate.get(id as usize).copied().unwrap_or(false);
    let order: Vec<NodeId> = plan
        .order
        .iter()
        .copied()
        .filter(|&id| in_gate(id))
        .chain(plan.order.iter().copied().filter(|&id| !in_gate(id)))
        .collect();
    Plan {
        order: order.into(),
        ..plan.clone()
    }
}

/// The rated nodes of every mode, each once, in order of first rating: the
/// pipeline keeps one held value per entry.
pub fn hold_slots(ir: &GraphIr) -> Vec<NodeId> {
    let mut slots = Vec::new();
    for r in ir.modes.iter().flat_map(|m| m.rates.iter()) {
        if !slots.contains(&r.node) {
            slots.push(r.node);
        }
    }
    slots
}

/// The steady cycle of a rated mode when no trigger fires: per frame of the
/// cycle (as long as the least common multiple of the rates, at most 64
/// frames), its held mask. Frame 0 computes every rated node.
pub fn steady_cycle(ir: &GraphIr, mode: usize) -> Vec<u64> {
    let Some(m) = ir.modes.get(mode) else {
        return vec![0];
    };
    let gcd = |mut a: u64, mut b: u64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let len = m
        .rates
        .iter()
        .fold(1u64, |l, r| {
            let k = u64::from(r.every.max(1));
            (l / gcd(l, k) * k).min(64)
        })
        .max(1);
    (0..len)
        .map(|f| {
            m.rates
                .iter()
                .enumerate()
                .filter(|(_, r)| f % u64::from(r.every.max(1)) != 0)
                .fold(0u64, |mask, (i, _)| mask | 1 << i)
        })
        .collect()
}
