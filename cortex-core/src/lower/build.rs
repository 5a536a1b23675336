//! Lowering: the [`Program`] of a validated graph, from its IR and mode
//! plans, each part decided by the pass that owns its rule.

use crate::model::ir::{Arg, Endpoint, GraphIr, NodeId};
use crate::model::plan::Plan;
use crate::model::weights::Weights;
use crate::passes::dce::plan_for_pattern;
use crate::passes::fusion::{fused_plan, unit_waves, units, FusionPlan};
use crate::passes::memory::BufferPlan;
use crate::passes::rates::{
    gate_first, hold_slots, mode_fusion_plan, mode_rates, rated_unit_waves, ModeRates,
};
use crate::passes::schedule::{state_free, waves};

use super::{
    Frame, ModeProgram, Pipelined, Program, RateStep, RatedMode, RunTimeProgram, Step, Unit, When,
};

/// Lowers a validated graph: `mode_plans` are its declared modes' plans
/// (as [`check`](crate::passes::check::check) returns them), `parallel`
/// whether to lower the parallel and pipelined frames too.
pub fn lower(ir: &GraphIr, mode_plans: &[Plan], parallel: bool) -> Program {
    let slots = hold_slots(ir);
    let modes = mode_plans
        .iter()
        .enumerate()
        .take(ir.modes.len())
        .map(|(m, p)| lower_mode(ir, m, p, &slots, parallel))
        .collect();
    Program {
        name: ir.name.to_string(),
        graph: ir.fingerprint(),
        parallel,
        hold_slots: slots.clone(),
        weight_modes: weight_modes(ir),
        modes,
        run_time: lower_run_time(ir, &slots, parallel),
    }
}

/// Declared mode `m`'s weight table: its weights under the graph's keys
/// (empty for a mode it does not declare).
pub fn mode_weights(ir: &GraphIr, m: usize) -> Weights {
    let Some(mode) = ir.modes.get(m) else {
        return Weights::new();
    };
    ir.weight_keys
        .iter()
        .zip(mode.weights.iter())
        .fold(Weights::new(), |w, (k, v)| w.with(k.clone(), *v))
}

/// Each zero pattern of a declared mode without rates, with the first such
/// mode that has it.
fn weight_modes(ir: &GraphIr) -> Vec<(u64, usize)> {
    let mut out: Vec<(u64, usize)> = Vec::new();
    for (m, mode) in ir.modes.iter().enumerate() {
        if !mode.rates.is_empty() {
            continue;
        }
        let Ok(pattern) = mode_weights(ir, m).zero_pattern(&ir.weight_keys) else {
            continue;
        };
        if !out.iter().any(|&(p, _)| p == pattern) {
            out.push((pattern, m));
        }
    }
    out
}

fn lower_mode(
    ir: &GraphIr,
    m: usize,
    mode_plan: &Plan,
    slots: &[NodeId],
    parallel: bool,
) -> ModeProgram {
    let mode = &ir.modes[m];
    let phases = mode_rates(ir, m);
    let plan = match &phases {
        Some(r) => gate_first(mode_plan, &r.gate),
        None => mode_plan.clone(),
    };
    let rated = phases.map(|phases| RatedMode {
        rates: mode
            .rates
            .iter()
            .map(|r| RateStep {
                node: r.node,
                slot: slots.iter().position(|&s| s == r.node).unwrap_or(0),
                every: r.every,
            })
            .collect(),
        phases,
    });
    let forgets: Vec<usize> = (0..slots.len())
        .filter(|&s| !mode.rates.iter().any(|r| r.node == slots[s]))
        .collect();
    let info = rated.as_ref().map(|r| &r.phases);
    let commits = commits(ir, &plan, rated.as_ref(), &forgets);

    // One thread: the mode's groups, its units in order, the phase decided
    // before the first work only some phases run.
    let fusion = mode_fusion_plan(ir, &plan, info, None);
    let seq_plan = fused_plan(ir, &plan, &fusion);
    let buffers = BufferPlan::sequential(ir, &seq_plan);
    let mut steps = unit_steps(&units(ir, &plan, &fusion), &fusion, info, |_| true);
    steps.extend(commits.iter().cloned());
    let sequential = Frame {
        plan: seq_plan,
        fusion,
        steps,
        buffers,
    };

    // Waves of units at once; a rated mode's phase decided after the
    // waves of its gate, before those of the work only some phases run.
    let parallel_frame = parallel.then(|| {
        let (fusion, wave_plan) = match info {
            Some(r) => (mode_fusion_plan(ir, &plan, Some(r), None), &plan),
            None => (mode_fusion_plan(ir, mode_plan, None, None), mode_plan),
        };
        let waves = mode_waves(ir, wave_plan, &fusion, info);
        let mut at = vec![usize::MAX; ir.nodes.len()];
        for (w, wave) in waves.iter().enumerate() {
            for &id in wave.iter().flatten() {
                at[id as usize] = w;
            }
        }
        let buffers = BufferPlan::from_steps(ir, wave_plan, &at);
        let mut steps = wave_steps(&waves, &fusion, info);
        steps.extend(commits.iter().cloned());
        Frame {
            plan: fused_plan(ir, wave_plan, &fusion),
            fusion,
            steps,
            buffers,
        }
    });

    // With fusion off, every node its own unit in the waves of the mode's
    // plan (a rated mode runs its phased frame either way).
    let parallel_unfused = (parallel && rated.is_none()).then(|| {
        let waves: Vec<Vec<Vec<NodeId>>> = waves(ir, mode_plan)
            .into_iter()
            .map(|w| w.into_iter().map(|id| vec![id]).collect())
            .collect();
        let fusion = FusionPlan::default();
        let mut steps = wave_steps(&waves, &fusion, None);
        steps.extend(commits.iter().cloned());
        Frame {
            plan: mode_plan.clone(),
            fusion,
            steps,
            buffers: BufferPlan::parallel(ir, mode_plan),
        }
    });

    let pipelined = parallel.then(|| {
        let first_stage = pipelined_first_stage(ir, m, &plan, info);
        let fusion = mode_fusion_plan(ir, &plan, info, Some(&first_stage));
        let stream_plan = fused_plan(ir, &plan, &fusion);
        let all = units(ir, &plan, &fusion);
        let in_a = |u: &Vec<NodeId>| first_stage[u[0] as usize];
        let first = unit_steps(&all, &fusion, None, in_a);
        // The second stage wave by wave, the first stage's values given.
        let second_waves: Vec<Vec<Vec<NodeId>>> = mode_waves(ir, &plan, &fusion, info)
            .into_iter()
            .map(|w| w.into_iter().filter(|u| !in_a(u)).collect::<Vec<_>>())
            .filter(|w| !w.is_empty())
            .collect();
        let buffers = stage_buffers(ir, &stream_plan, &first_stage, &second_waves);
        let mut second = wave_steps(&second_waves, &fusion, info);
        second.extend(commits.iter().cloned());
        Pipelined {
            first: Frame {
                plan: stream_plan.clone(),
                fusion: fusion.clone(),
                steps: first,
                buffers: buffers.clone(),
            },
            second: Frame {
                plan: stream_plan,
                fusion,
                steps: second,
                buffers,
            },
            first_stage,
        }
    });

    ModeProgram {
        name: mode.name.to_string(),
        plan,
        rates: rated,
        forgets,
        sequential,
        parallel: parallel_frame,
        parallel_unfused,
        pipelined,
    }
}

/// The buffers of a pipelined run: the first stage's nodes one step each,
/// in the plan's order; then the second stage's waves, whose units run at
/// once and so never share a buffer within a wave.
fn stage_buffers(
    ir: &GraphIr,
    plan: &Plan,
    first_stage: &[bool],
    second_waves: &[Vec<Vec<NodeId>>],
) -> BufferPlan {
    let mut at = vec![usize::MAX; ir.nodes.len()];
    let mut next = 0;
    for &id in plan.order.iter().filter(|&&id| first_stage[id as usize]) {
        at[id as usize] = next;
        next += 1;
    }
    for (w, wave) in second_waves.iter().enumerate() {
        for &id in wave.iter().flatten() {
            at[id as usize] = next + w;
        }
    }
    BufferPlan::from_steps(ir, plan, &at)
}

/// The units of `plan` in waves; in a rated mode (`rates`), the work only
/// some phases run after the waves of the gate.
fn mode_waves(
    ir: &GraphIr,
    plan: &Plan,
    fusion: &FusionPlan,
    rates: Option<&ModeRates>,
) -> Vec<Vec<Vec<NodeId>>> {
    match rates {
        Some(r) => rated_unit_waves(ir, plan, fusion, r).0,
        None => unit_waves(ir, plan, fusion),
    }
}

/// One step per wave; in a rated mode (`rates`), the phase decided before
/// the first wave holding work only some phases run (or at the end).
fn wave_steps(
    waves: &[Vec<Vec<NodeId>>],
    fusion: &FusionPlan,
    rates: Option<&ModeRates>,
) -> Vec<Step> {
    let phased = conditional(rates);
    let steps = waves.iter().map(|wave| {
        let units = wave.iter().map(|u| unit_of(u, fusion)).collect();
        (Step::Wave(units), wave.iter().flatten().any(|&n| phased(n)))
    });
    decide_phase(steps, rates.is_some())
}

/// The unit a wave runs: a group when `unit` is one, else its node.
fn unit_of(unit: &[NodeId], fusion: &FusionPlan) -> Unit {
    match unit.first().and_then(|&n| fusion.group_of(n)) {
        Some(g) => Unit::Group(g),
        None => Unit::Call(unit.first().copied().unwrap_or_default()),
    }
}

/// The calls and groups of the units `keep` selects, in order; in a rated
/// mode (`rates`), the phase decided before the first work only some
/// phases run (or after the last call when there is none).
fn unit_steps(
    all: &[Vec<NodeId>],
    fusion: &FusionPlan,
    rates: Option<&ModeRates>,
    keep: impl Fn(&Vec<NodeId>) -> bool,
) -> Vec<Step> {
    let phased = conditional(rates);
    let steps = all.iter().filter(|u| keep(u)).map(|unit| {
        let guarded = unit.iter().any(|&n| phased(n));
        let when = if guarded { When::Phase } else { When::Always };
        let step = match unit_of(unit, fusion) {
            Unit::Group(group) => Step::Group { group, when },
            Unit::Call(node) => Step::Call { node, when },
        };
        (step, guarded)
    });
    decide_phase(steps, rates.is_some())
}

/// Per node: whether a rated mode (`rates`) runs it in some phases only.
fn conditional(rates: Option<&ModeRates>) -> impl Fn(NodeId) -> bool + '_ {
    move |n: NodeId| rates.is_some_and(|r| r.conditional.get(n as usize).copied().unwrap_or(false))
}

/// `steps` with a rated mode's (`rated`) phase decision placed where it
/// belongs: before the first step running work only some phases run (each
/// step comes with whether it does), or after the last step when none
/// does. Every frame's steps place it by this rule; the engine and the
/// generated code decide the phase there.
fn decide_phase(steps: impl Iterator<Item = (Step, bool)>, rated: bool) -> Vec<Step> {
    let mut decided = !rated;
    let mut out = Vec::new();
    for (step, guarded) in steps {
        if guarded && !decided {
            out.push(Step::DecidePhase);
            decided = true;
        }
        out.push(step);
    }
    if !decided {
        out.push(Step::DecidePhase);
    }
    out
}

/// The end of a mode's frame: outputs, state commits, held values,
/// forgotten holds, the frame count.
fn commits(ir: &GraphIr, plan: &Plan, rated: Option<&RatedMode>, forgets: &[usize]) -> Vec<Step> {
    let conditional = conditional(rated.map(|r| &r.phases));
    let mut steps: Vec<Step> = outputs(ir);
    for (s, state) in ir.states.iter().enumerate() {
        let state_id = s as u32;
        steps.push(if plan.writes_state(state_id) {
            let when = if conditional(state.writer) {
                When::Phase
            } else {
                When::Always
            };
            Step::CommitState {
                state: state_id,
                node: state.writer,
                when,
                swap: false,
            }
        } else {
            Step::ResetState { state: state_id }
        });
    }
    let held: Vec<NodeId> =
        rated.map_or_else(Vec::new, |r| r.rates.iter().map(|x| x.node).collect());
    mark_swaps(&mut steps, &held);
    if let Some(r) = rated {
        steps.extend((0..r.rates.len()).map(|rate| Step::KeepHold { rate }));
    }
    steps.extend(forgets.iter().map(|&slot| Step::ForgetHold { slot }));
    steps.push(Step::NextFrame);
    steps
}

/// Marks the commits that trade buffers with their writer: per writer, its
/// last commit, unless the frame keeps the writer's value as a held value
/// (`held`: the mode's rated nodes), which takes the buffer instead.
fn mark_swaps(steps: &mut [Step], held: &[NodeId]) {
    let mut taken: Vec<NodeId> = held.to_vec();
    for step in steps.iter_mut().rev() {
        if let Step::CommitState { node, swap, .. } = step {
            *swap = !taken.contains(node);
            taken.push(*node);
        }
    }
}

fn outputs(ir: &GraphIr) -> Vec<Step> {
    ir.outputs
        .iter()
        .enumerate()
        .map(|(index, o)| Step::Output {
            index,
            node: o.node,
        })
        .collect()
}

/// The full graph's frames for plans chosen at run time: every call and
/// group guarded by the frame's plan, every hold forgotten. A group of the
/// full graph runs fused on a frame whose plan runs it whole
/// ([`Group::runs_whole`](crate::passes::fusion::Group::runs_whole)), and
/// as its live members' own calls otherwise.
fn lower_run_time(ir: &GraphIr, slots: &[NodeId], parallel: bool) -> RunTimeProgram {
    let full = plan_for_pattern(ir, 0, "full");
    let mut commits = outputs(ir);
    commits.extend((0..ir.states.len()).map(|s| Step::CommitState {
        state: s as u32,
        node: ir.states[s].writer,
        when: When::Plan,
        swap: false,
    }));
    mark_swaps(&mut commits, &[]);
    commits.extend((0..slots.len()).map(|slot| Step::ForgetHold { slot }));
    commits.push(Step::NextFrame);
    let fusion = mode_fusion_plan(ir, &full, None, None);
    let seq_plan = fused_plan(ir, &full, &fusion);
    let mut steps: Vec<Step> = units(ir, &full, &fusion)
        .iter()
        .map(|unit| match unit_of(unit, &fusion) {
            Unit::Group(group) => Step::Group {
                group,
                when: When::Plan,
            },
            Unit::Call(node) => Step::Call {
                node,
                when: When::Plan,
            },
        })
        .collect();
    steps.extend(commits.iter().cloned());
    let sequential = Frame {
        buffers: BufferPlan::sequential(ir, &seq_plan),
        plan: seq_plan,
        fusion: fusion.clone(),
        steps,
    };
    let parallel_frame = parallel.then(|| {
        let waves = unit_waves(ir, &full, &fusion);
        let mut at = vec![usize::MAX; ir.nodes.len()];
        for (w, wave) in waves.iter().enumerate() {
            for &id in wave.iter().flatten() {
                at[id as usize] = w;
            }
        }
        let mut steps = wave_steps(&waves, &fusion, None);
        steps.extend(commits.iter().cloned());
        Frame {
            plan: sequential.plan.clone(),
            buffers: BufferPlan::from_steps(ir, &full, &at),
            fusion: fusion.clone(),
            steps,
        }
    });
    // With fusion off, every node its own unit, as a mode's frame.
    let parallel_unfused = parallel.then(|| {
        let mut steps: Vec<Step> = waves(ir, &full)
            .into_iter()
            .map(|w| Step::Wave(w.into_iter().map(Unit::Call).collect()))
            .collect();
        steps.extend(commits.iter().cloned());
        Frame {
            plan: full.clone(),
            fusion: FusionPlan::default(),
            steps,
            buffers: BufferPlan::parallel(ir, &full),
        }
    });
    // Pipelined: the full graph's state-free nodes first, then the others
    // over the full graph's waves; the frame's plan skips what it leaves
    // out, and its values live no longer than the full graph's, so these
    // buffers hold.
    let pipelined = parallel.then(|| {
        let first_stage = pipelined_first_stage(ir, 0, &full, None);
        let first_steps: Vec<Step> = full
            .order
            .iter()
            .filter(|&&node| first_stage[node as usize])
            .map(|&node| Step::Call {
                node,
                when: When::Plan,
            })
            .collect();
        let second_waves: Vec<Vec<Vec<NodeId>>> = waves(ir, &full)
            .into_iter()
            .map(|w| {
                w.into_iter()
                    .filter(|&id| !first_stage[id as usize])
                    .map(|id| vec![id])
                    .collect::<Vec<_>>()
            })
            .filter(|w| !w.is_empty())
            .collect();
        let buffers = stage_buffers(ir, &full, &first_stage, &second_waves);
        let mut second: Vec<Step> = second_waves
            .iter()
            .map(|w| Step::Wave(w.iter().map(|u| Unit::Call(u[0])).collect()))
            .collect();
        second.extend(commits.iter().cloned());
        let frame = |steps| Frame {
            plan: full.clone(),
            fusion: FusionPlan::default(),
            steps,
            buffers: buffers.clone(),
        };
        Pipelined {
            first: frame(first_steps),
            second: frame(second),
            first_stage,
        }
    });
    RunTimeProgram {
        whole: fusion.groups.iter().map(|g| g.whole_needs(ir)).collect(),
        full,
        sequential,
        parallel: parallel_frame,
        parallel_unfused,
        pipelined,
    }
}

/// A pipelined run's first stage in mode `m` (per node): the plan's
/// state-free work ([`state_free`]). A rated mode's first stage leaves out
/// its rated work and every reader of a rated value: phases and held
/// values are decided on the committed frame, in the second stage.
pub fn pipelined_first_stage(
    ir: &GraphIr,
    m: usize,
    plan: &Plan,
    rates: Option<&ModeRates>,
) -> Vec<bool> {
    let mut a = state_free(ir, plan);
    let (Some(info), Some(mode)) = (rates, ir.modes.get(m)) else {
        return a;
    };
    // In topological order, so what reads a second-stage value is in the
    // second stage too.
    for &id in ir.topo.iter() {
        let reads_late = ir.nodes[id as usize].args.iter().any(|arg| match arg {
            Arg::Value(Endpoint::Node(n)) => {
                mode.rates.iter().any(|x| x.node == *n) || (plan.is_live(*n) && !a[*n as usize])
            }
            _ => false,
        });
        if info.conditional.get(id as usize).copied().unwrap_or(false) || reads_late {
            a[id as usize] = false;
        }
    }
    a
}
