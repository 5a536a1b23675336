//! Every plan a pipeline's run functions follow, computed once: per mode
//! its rates, its fused groups and their order, its pipelined stages and
//! parallel waves, each with its buffer plan; the fused groups' slots in
//! the pipeline; and the full graph's plan for weights chosen at run time.

use cortex_core::ir::{GraphIr, NodeId};
use cortex_core::lower::pipelined_first_stage;
use cortex_core::memory::BufferPlan;
use cortex_core::passes::fusion::{fused_plan, unit_waves, FusionPlan};
use cortex_core::passes::rates::{
    gate_first, hold_slots, mode_fusion_plan, mode_rates, rated_unit_waves, ModeRates,
};
use cortex_core::plan::Plan;

use super::{Fused, Real};
use crate::ast::PipelineAst;

/// The plans of one valid pipeline.
pub(super) struct Plans {
    /// The rated nodes, one held-value slot each.
    pub hold_slots: Vec<NodeId>,
    /// Per mode with rates: its phases and what gates them.
    pub rates: Vec<Option<ModeRates>>,
    /// Per mode: the held-value slots of the nodes it does not rate.
    pub forgets: Vec<Vec<usize>>,
    /// Every held-value slot (forgotten by a frame of a run-time plan).
    pub forget_all: Vec<usize>,
    /// Per mode: its fused groups, its plan in their order, its buffers,
    /// and where its groups' slots begin.
    pub fusion: Vec<FusionPlan>,
    pub fused_plans: Vec<Plan>,
    pub mode_bufs: Vec<BufferPlan>,
    slot_bases: Vec<usize>,
    /// `#[parallel]` pipelines, per mode: its pipelined first stage (per
    /// node), that run's groups, plan, buffers and slot base.
    pub stages: Vec<Vec<bool>>,
    stream_fusion: Vec<FusionPlan>,
    pub stream_plans: Vec<Plan>,
    pub stream_bufs: Vec<BufferPlan>,
    stream_bases: Vec<usize>,
    /// Per mode: the second stage's waves of units, the first stage's
    /// values given (the first stage runs on one thread beside them).
    pub stream_waves: Vec<Vec<Vec<Vec<NodeId>>>>,
    /// `#[parallel]` pipelines, per mode: its waves of units (a fused group
    /// or a node) and their buffers; and with fusion off, a node per unit.
    pub par_waves: Vec<Vec<Vec<Vec<NodeId>>>>,
    pub par_bufs: Vec<BufferPlan>,
    pub plain_par_bufs: Vec<BufferPlan>,
    /// The full graph's plan and buffers, valid for every plan (run-time
    /// plans); and for `#[parallel]` pipelines, its parallel buffers.
    pub full: Plan,
    pub full_bufs: BufferPlan,
    pub full_par_bufs: Option<BufferPlan>,
    /// `#[parallel]` pipelines: a run-time plan's pipelined run (a stream
    /// reading some outputs) over the full graph: its first stage (per
    /// node), its second stage's waves of single nodes, and its buffers.
    pub full_stream: Option<(Vec<bool>, Vec<Vec<Vec<NodeId>>>, BufferPlan)>,
    /// Fused-group slots in the pipeline, over every mode and run form.
    pub fusion_slots: usize,
}

impl Plans {
    pub(super) fn new(ast: &PipelineAst, r: &Real<'_>) -> Plans {
        let ir = r.ir;
        let hold_slots = hold_slots(ir);
        // Rated modes: the nodes computing triggers run first and never
        // share a fused group with the rest, and the work only some phases
        // run is not fused.
        let rates: Vec<Option<ModeRates>> =
            (0..ir.modes.len()).map(|m| mode_rates(ir, m)).collect();
        let forgets: Vec<Vec<usize>> = ir
            .modes
            .iter()
            .map(|m| {
                (0..hold_slots.len())
                    .filter(|&s| !m.rates.iter().any(|x| x.node == hold_slots[s]))
                    .collect()
            })
            .collect();
        let forget_all: Vec<usize> = (0..hold_slots.len()).collect();
        let mode_plans: Vec<Plan> = r
            .mode_plans
            .iter()
            .zip(&rates)
            .map(|(p, info)| match info {
                Some(info) => gate_first(p, &info.gate),
                None => p.clone(),
            })
            .collect();
        let part_fusion = |p: &Plan, m: usize, stage_a: Option<&[bool]>| -> FusionPlan {
            mode_fusion_plan(ir, p, rates[m].as_ref(), stage_a)
        };
        // Each mode's fused groups, and its plan reordered so that each
        // group's members run together; each group has its own slot.
        let fusion: Vec<FusionPlan> = mode_plans
            .iter()
            .enumerate()
            .map(|(m, p)| part_fusion(p, m, None))
            .collect();
        let fused_plans: Vec<Plan> = mode_plans
            .iter()
            .zip(&fusion)
            .map(|(p, f)| fused_plan(ir, p, f))
            .collect();
        let slot_bases: Vec<usize> = fusion
            .iter()
            .scan(0, |next, f| {
                let base = *next;
                *next += f.groups.len();
                Some(base)
            })
            .collect();
        let mode_slots: usize = fusion.iter().map(|f| f.groups.len()).sum();
        // Buffers: each mode's own assignment for its straight-line
        // function (in its fused order).
        let mode_bufs: Vec<BufferPlan> = fused_plans
            .iter()
            .map(|p| BufferPlan::sequential(ir, p))
            .collect();
        let stages: Vec<Vec<bool>> = if ast.parallel {
            mode_plans
                .iter()
                .zip(&rates)
                .enumerate()
                .map(|(m, (p, info))| pipelined_first_stage(ir, m, p, info.as_ref()))
                .collect()
        } else {
            Vec::new()
        };
        let stream_fusion: Vec<FusionPlan> = mode_plans
            .iter()
            .zip(&stages)
            .enumerate()
            .map(|(m, (p, a))| part_fusion(p, m, Some(a)))
            .collect();
        let stream_plans: Vec<Plan> = mode_plans
            .iter()
            .zip(&stream_fusion)
            .map(|(p, f)| fused_plan(ir, p, f))
            .collect();
        // The second stage runs wave by wave, as the parallel engine does:
        // its independent units (the encoder's outputs, the state readers)
        // at once, and the core the first stage leaves idle helps.
        let stream_waves: Vec<Vec<Vec<Vec<NodeId>>>> = mode_plans
            .iter()
            .zip(&stream_fusion)
            .zip(&rates)
            .zip(&stages)
            .map(|(((p, f), info), a)| {
                let waves = match info {
                    Some(info) => rated_unit_waves(ir, p, f, info).0,
                    None => unit_waves(ir, p, f),
                };
                waves
                    .into_iter()
                    .map(|w| {
                        w.into_iter()
                            .filter(|u| !a[u[0] as usize])
                            .collect::<Vec<_>>()
                    })
                    .filter(|w| !w.is_empty())
                    .collect()
            })
            .collect();
        let stream_bufs: Vec<BufferPlan> = stream_plans
            .iter()
            .zip(&stages)
            .zip(&stream_waves)
            .map(|((p, a), waves)| stage_bufs(ir, p, a, waves))
            .collect();
        // Stage A's groups live in each frame's own buffers; stage B's in
        // the pipeline, after the modes' slots.
        let mut next_slot = mode_slots;
        let stream_bases: Vec<usize> = stream_fusion
            .iter()
            .zip(&stages)
            .map(|(f, a)| {
                let base = next_slot;
                next_slot += stream_fused(f, base, a).self_slots();
                base
            })
            .collect();
        let full = cortex_core::dce::plan_for_pattern(ir, 0, "full");
        let full_bufs = BufferPlan::sequential(ir, &full);
        // A run-time plan runs in parallel wave by wave over the full
        // graph's waves: the nodes it leaves out are skipped, and its values
        // live no longer than the full graph's, so these buffers hold.
        let full_par_bufs = ast.parallel.then(|| BufferPlan::parallel(ir, &full));
        // A run-time plan pipelined: the full graph's state-free nodes
        // first, then the others over the full graph's waves; the plan
        // passed in skips the nodes it leaves out, and its values live no
        // longer than the full graph's, so these buffers hold.
        let full_stream = ast.parallel.then(|| {
            let a = pipelined_first_stage(ir, 0, &full, None);
            let waves: Vec<Vec<Vec<NodeId>>> = cortex_core::schedule::waves(ir, &full)
                .into_iter()
                .map(|w| {
                    w.into_iter()
                        .filter(|&id| !a[id as usize])
                        .map(|id| vec![id])
                        .collect::<Vec<_>>()
                })
                .filter(|w| !w.is_empty())
                .collect();
            let bufs = stage_bufs(ir, &full, &a, &waves);
            (a, waves, bufs)
        });
        // Parallel runs: every unit of a wave at once, so values of one
        // wave (a group's members included) never share a buffer.
        // A rated mode's waves follow its gated plan: its phase is decided
        // after the waves of its gate, before the work only some phases run.
        let wave_plans: Vec<&Plan> = r
            .mode_plans
            .iter()
            .zip(&mode_plans)
            .zip(&rates)
            .map(|((p, gated), info)| if info.is_some() { gated } else { p })
            .collect();
        let par_waves: Vec<Vec<Vec<Vec<NodeId>>>> = if ast.parallel {
            wave_plans
                .iter()
                .zip(&fusion)
                .zip(&rates)
                .map(|((p, f), info)| match info {
                    Some(info) => rated_unit_waves(ir, p, f, info).0,
                    None => unit_waves(ir, p, f),
                })
                .collect()
        } else {
            Vec::new()
        };
        let par_bufs: Vec<BufferPlan> = wave_plans
            .iter()
            .zip(&par_waves)
            .map(|(p, waves)| {
                let mut steps = vec![usize::MAX; ir.nodes.len()];
                for (w, wave) in waves.iter().enumerate() {
                    for &id in wave.iter().flatten() {
                        steps[id as usize] = w;
                    }
                }
                BufferPlan::from_steps(ir, p, &steps)
            })
            .collect();
        // With fusion off, a parallel run keeps every node its own unit (a
        // group run unfused would run its members one after the other).
        let plain_par_bufs: Vec<BufferPlan> = if ast.parallel {
            r.mode_plans
                .iter()
                .map(|p| BufferPlan::parallel(ir, p))
                .collect()
        } else {
            Vec::new()
        };
        Plans {
            hold_slots,
            rates,
            forgets,
            forget_all,
            fusion,
            fused_plans,
            mode_bufs,
            slot_bases,
            stages,
            stream_fusion,
            stream_plans,
            stream_bufs,
            stream_bases,
            stream_waves,
            par_waves,
            par_bufs,
            plain_par_bufs,
            full,
            full_bufs,
            full_par_bufs,
            full_stream,
            fusion_slots: next_slot,
        }
    }

    /// Mode `m`'s fused groups as its straight-line and parallel runs use
    /// them.
    pub(super) fn fused_of(&self, m: usize) -> Fused<'_> {
        Fused {
            plan: &self.fusion[m],
            slot_base: self.slot_bases[m],
            stage_a: None,
        }
    }

    /// Mode `m`'s fused groups in its pipelined run.
    pub(super) fn stream_fused_of(&self, m: usize) -> Fused<'_> {
        stream_fused(
            &self.stream_fusion[m],
            self.stream_bases[m],
            &self.stages[m],
        )
    }

    /// Every buffer plan, for the layout of the buffers they share.
    pub(super) fn all_bufs(&self) -> Vec<&BufferPlan> {
        self.mode_bufs
            .iter()
            .chain(&self.par_bufs)
            .chain(&self.plain_par_bufs)
            .chain(&self.stream_bufs)
            .chain([&self.full_bufs])
            .chain(self.full_par_bufs.as_ref())
            .chain(self.full_stream.as_ref().map(|(_, _, b)| b))
            .collect()
    }
}

/// The buffers of a pipelined run of plan `p`: the first stage's nodes
/// (`a`) one step each, in order; then the second stage's waves.
fn stage_bufs(ir: &GraphIr, p: &Plan, a: &[bool], waves: &[Vec<Vec<NodeId>>]) -> BufferPlan {
    let mut steps = vec![usize::MAX; ir.nodes.len()];
    let mut next = 0;
    for &id in p.order.iter().filter(|&&id| a[id as usize]) {
        steps[id as usize] = next;
        next += 1;
    }
    for (w, wave) in waves.iter().enumerate() {
        for &id in wave.iter().flatten() {
            steps[id as usize] = next + w;
        }
    }
    BufferPlan::from_steps(ir, p, &steps)
}

fn stream_fused<'a>(plan: &'a FusionPlan, slot_base: usize, stage_a: &'a [bool]) -> Fused<'a> {
    Fused {
        plan,
        slot_base,
        stage_a: Some(stage_a),
    }
}
