//! The plans a pipeline's run functions follow, read from core's lowered
//! [`Program`] (computed once): per mode its rates, its fused groups, its
//! parallel waves and pipelined stages, each with its buffer plan; the
//! fused groups' slots in the pipeline; and the full graph's frame for
//! weights chosen at run time. Nothing here decides a rule: every schedule
//! is the program's.

use cortex_core::ir::NodeId;
use cortex_core::lower::{lower, Frame, ModeProgram, Program};
use cortex_core::memory::BufferPlan;

use super::shape::{Fused, Real};
use crate::ast::PipelineAst;

/// The lowered program of one valid pipeline, and where its fused groups'
/// slots live.
pub(super) struct Plans {
    pub program: Program,
    /// Per mode: where its groups' slots begin, in its straight-line and
    /// parallel runs, then in its pipelined run.
    slot_bases: Vec<usize>,
    stream_bases: Vec<usize>,
    /// Where the run-time frames' groups' slots begin.
    run_time_base: usize,
    /// Fused-group slots in the pipeline, over every mode and run form.
    pub fusion_slots: usize,
}

impl Plans {
    pub(super) fn new(ast: &PipelineAst, r: &Real<'_>) -> Plans {
        let program = lower(r.ir, r.mode_plans, ast.parallel);
        // Each mode's groups have their own slots; then stage B's groups of
        // each pipelined run (stage A's live in each frame's own buffers).
        let mut next_slot = 0;
        let slot_bases: Vec<usize> = program
            .modes
            .iter()
            .map(|m| {
                let base = next_slot;
                next_slot += m.sequential.fusion.groups.len();
                base
            })
            .collect();
        let stream_bases: Vec<usize> = program
            .modes
            .iter()
            .filter_map(|m| m.pipelined.as_ref())
            .map(|p| {
                let base = next_slot;
                next_slot += stream_fused(&p.first, base, &p.first_stage).self_slots();
                base
            })
            .collect();
        // The run-time frames' groups (their sequential and parallel frames
        // share them).
        let run_time_base = next_slot;
        next_slot += program.run_time.sequential.fusion.groups.len();
        Plans {
            run_time_base,
            program,
            slot_bases,
            stream_bases,
            fusion_slots: next_slot,
        }
    }

    /// The rated nodes, one held-value slot each.
    pub(super) fn hold_slots(&self) -> &[NodeId] {
        &self.program.hold_slots
    }

    /// Mode `m`'s lowered program.
    pub(super) fn mode(&self, m: usize) -> &ModeProgram {
        &self.program.modes[m]
    }

    /// Mode `m`'s fused groups as its straight-line and parallel runs use
    /// them.
    pub(super) fn fused_of(&self, m: usize) -> Fused<'_> {
        Fused {
            plan: &self.program.modes[m].sequential.fusion,
            slot_base: self.slot_bases[m],
            stage_a: None,
        }
    }

    /// Mode `m`'s fused groups in its pipelined run (`#[parallel]`
    /// pipelines).
    pub(super) fn stream_fused_of(&self, m: usize) -> Option<Fused<'_>> {
        let p = self.program.modes[m].pipelined.as_ref()?;
        Some(stream_fused(&p.first, self.stream_bases[m], &p.first_stage))
    }

    /// The full graph's fused groups as the plan-driven functions run
    /// them, when it has some.
    pub(super) fn run_time_fused(&self) -> Option<Fused<'_>> {
        let fusion = &self.program.run_time.sequential.fusion;
        (!fusion.groups.is_empty()).then_some(Fused {
            plan: fusion,
            slot_base: self.run_time_base,
            stage_a: None,
        })
    }

    /// Every buffer plan, for the layout of the buffers they share.
    pub(super) fn all_bufs(&self) -> Vec<&BufferPlan> {
        let modes = &self.program.modes;
        let rt = &self.program.run_time;
        modes
            .iter()
            .map(|m| &m.sequential.buffers)
            .chain(
                modes
                    .iter()
                    .filter_map(|m| m.parallel.as_ref().map(|f| &f.buffers)),
            )
            .chain(
                modes
                    .iter()
                    .filter_map(|m| m.parallel_unfused.as_ref().map(|f| &f.buffers)),
            )
            .chain(
                modes
                    .iter()
                    .filter_map(|m| m.pipelined.as_ref().map(|p| &p.first.buffers)),
            )
            .chain([&rt.sequential.buffers])
            .chain(rt.parallel.as_ref().map(|f| &f.buffers))
            .chain(rt.parallel_unfused.as_ref().map(|f| &f.buffers))
            .chain(rt.pipelined.as_ref().map(|p| &p.first.buffers))
            .collect()
    }
}

fn stream_fused<'a>(frame: &'a Frame, slot_base: usize, stage_a: &'a [bool]) -> Fused<'a> {
    Fused {
        plan: &frame.fusion,
        slot_base,
        stage_a: Some(stage_a),
    }
}
