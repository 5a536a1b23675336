//! [`DynPipeline`] as a [`Pipeline`]: what a [`Run`] selects — a mode's
//! own steps, a plan cut down to the outputs read, weights' zero pattern or
//! an explicit plan — mapped onto the frame runner, observed or not; and
//! the accessors tools read through the trait.

use std::sync::Arc;

use crate::lower::Frame;

use crate::model::ir::GraphIr;
use crate::model::outputs::OutputSet;
use crate::model::plan::Plan;
use crate::model::weights::Weights;
use crate::runtime::error::PipelineError;
use crate::runtime::hold::Hold;
use crate::runtime::observe::{NoopObserver, Observer};
use crate::runtime::pipeline::Pipeline;
use crate::runtime::run::{ChoiceRef, Engine, Run};

use super::super::ops::Value;
use super::super::outputs::DynOutputs;
use super::{DynPipeline, Resolved, Walk, Waves};

/// A run-time pipeline's mode is a `usize`, the index of the mode in its
/// graph's modes (what [`Pipeline::mode_named`] returns for a name): the
/// modes are data read at run time, so there is no enum to name them, and
/// a newtype around the index would hold no invariant the index does not
/// (an index of another graph's modes would pass it all the same) while
/// every caller converted to and from it. An index outside the graph's
/// modes fails the frame with [`PipelineError::Internal`].
///
/// Its inputs are a slice of values, one per declared input in
/// declaration order; its outputs a [`DynOutputs`] by name.
impl Pipeline for DynPipeline {
    type Mode = usize;
    type Inputs<'a> = &'a [Value];
    type Outputs = DynOutputs;
    type State = Vec<Value>;

    /// Interned on first use: each distinct graph is kept once for the
    /// program's life, however many pipelines of it are built.
    fn graph(&self) -> &'static GraphIr {
        self.shared.static_ir()
    }

    fn mode(&self, index: usize) -> Option<usize> {
        (index < self.shared.ir.modes.len()).then_some(index)
    }

    fn mode_index(&self, mode: usize) -> usize {
        mode
    }

    fn mode_weights(&self, mode: usize) -> Option<&Weights> {
        self.shared.mode_weights.get(mode)
    }

    fn mode_plan(&self, mode: usize) -> Option<&Plan> {
        self.shared.program.modes.get(mode).map(|m| &m.plan)
    }

    fn mode_named(&self, name: &str) -> Option<usize> {
        self.shared.ir.mode_index(name)
    }

    fn state(&self) -> &Vec<Value> {
        &self.carry.states
    }

    fn reset(&mut self) {
        self.reset_all();
    }

    /// Runs one frame as `run` says — a declared mode, weights chosen at
    /// run time or an explicit plan; sequential or wave by wave on the
    /// worker pool; observed or not; computing only the outputs it reads —
    /// into `outputs` of an earlier frame: the outputs `run` reads are
    /// replaced, the others left as they were (outputs of another graph
    /// are replaced whole). On error the state and `outputs` are left as
    /// they were.
    ///
    /// A mode reading every output, or a rated mode, runs the mode's own
    /// steps (its fused groups and phases); a mode reading fewer runs its
    /// plan cut down to them (the DCE pass's, cached with the weight
    /// patterns' plans); weights run their zero pattern's plan, cut down
    /// the same way; an explicit plan is validated against the graph and
    /// the outputs read before anything runs. The parallel engine runs
    /// the independent nodes of each wave at once (a rated mode decides
    /// its phase mid-frame, so its nodes run one after the other); the
    /// outputs, states and holds are the sequential engine's.
    ///
    /// An observer is told the frame's beginning (with the graph, interned
    /// for the program's life the first time this pipeline is observed,
    /// and the plan run), each node's call, each fused group's begin and
    /// end (whether it ran fused) and the frame's end, as a generated
    /// pipeline's observed run does; the nodes of a wave run at once
    /// begin together and end together.
    fn run_with<O: Observer + Send>(
        &mut self,
        run: &mut Run<'_, usize, O>,
        inputs: &[Value],
        outputs: &mut DynOutputs,
    ) -> Result<(), PipelineError> {
        let read = run.outputs;
        let got = self.frame_of(run, read, inputs)?;
        outputs.merge(got, read);
        Ok(())
    }

    /// [`run_with`](Self::run_with) into new outputs, every output
    /// computed whatever `run` reads (as a generated pipeline's
    /// `run_with_fresh`): for a first frame. Outputs of only the set read
    /// are [`run_with`](Self::run_with) into
    /// [`absent_outputs`](DynPipeline::absent_outputs). On error the state
    /// is left as it was.
    fn run_with_fresh<O: Observer + Send>(
        &mut self,
        run: &mut Run<'_, usize, O>,
        inputs: &[Value],
    ) -> Result<DynOutputs, PipelineError> {
        self.frame_of(run, OutputSet::ALL, inputs)
    }

    fn pattern_plan(&mut self, pattern: u64) -> Arc<Plan> {
        self.plans.get_for(&self.shared.ir, pattern, OutputSet::ALL)
    }

    /// None: a run-time pipeline's values are type-erased, their heap size
    /// unknown.
    fn buffer_bytes(&self) -> Vec<(&'static str, u32, usize)> {
        Vec::new()
    }

    fn frame_index(&self) -> u64 {
        self.carry.frame
    }

    fn set_rates(&mut self, on: bool) {
        self.carry.rates_on = on;
    }

    fn holds(&self) -> &[Hold] {
        &self.carry.holds
    }

    /// `false`: fused strip groups run as their members' calls, one after
    /// the other; `true` (the default): through the strip executor, from
    /// the registered strip forms ([`Ops::strip`](super::super::Ops::strip)).
    fn set_fusion(&mut self, on: bool) {
        self.fusion = on;
    }
}

impl DynPipeline {
    /// Outputs of this graph, every one absent: what a frame that reads
    /// some of them runs into (see [`run_with`](Self::run_with)).
    pub fn absent_outputs(&self) -> DynOutputs {
        DynOutputs {
            names: self.shared.outputs.clone(),
            values: vec![None; self.shared.outputs.len()],
        }
    }

    /// One frame of `run`'s selection and engine, its outputs in `read`
    /// present, reported to `run`'s observer.
    fn frame_of<O: Observer>(
        &mut self,
        run: &mut Run<'_, usize, O>,
        read: OutputSet,
        inputs: &[Value],
    ) -> Result<DynOutputs, PipelineError> {
        let shared = self.shared.clone();
        let sh = &*shared;
        let parallel = run.engine == Engine::Parallel;
        let rt = &sh.program.run_time;
        let on = (parallel, self.fusion);
        let run_time = engine_frame(&rt.sequential, &rt.parallel, &rt.parallel_unfused, on);
        let cut: Arc<Plan>;
        let (frame, sel, weights): (&Frame, Resolved<'_>, &Weights) = match run.select {
            ChoiceRef::Mode(m) => {
                let Some(mode) = sh.program.modes.get(m) else {
                    return Err(PipelineError::Internal("no such mode"));
                };
                let w = &sh.mode_weights[m];
                if mode.rates.is_some() || read.covers(&sh.ir) {
                    let frame =
                        engine_frame(&mode.sequential, &mode.parallel, &mode.parallel_unfused, on);
                    (frame, Resolved::Mode(m), w)
                } else {
                    cut = self.weights_plan(w, read)?;
                    (run_time, Resolved::Plan(&cut), w)
                }
            }
            ChoiceRef::Weights(w) => {
                cut = self.weights_plan(w, read)?;
                (run_time, Resolved::Plan(&cut), w)
            }
            ChoiceRef::Plan(plan, w) => {
                w.zero_pattern(&sh.ir.weight_keys)?;
                plan.validate_for(&sh.ir, read)?;
                (run_time, Resolved::Plan(plan), w)
            }
        };
        let walk = Walk {
            sh,
            frame,
            sel,
            weights,
            inputs,
            waves: Waves::of(parallel),
            fusion: self.fusion,
            read,
        };
        let Some(observer) = run.observer() else {
            return self.walk(&walk, None, &mut NoopObserver);
        };
        observer.frame_begin(sh.static_ir(), sel.plan(sh));
        let r = self.walk(&walk, None, observer);
        observer.frame_end(r.is_ok());
        r
    }

    /// The plan of a weight table's zero pattern computing the outputs in
    /// `read`.
    pub(in crate::runtime::dynamic) fn weights_plan(
        &mut self,
        weights: &Weights,
        read: OutputSet,
    ) -> Result<Arc<Plan>, PipelineError> {
        let ir = &self.shared.ir;
        let pattern = weights.zero_pattern(&ir.weight_keys)?;
        let plan = self.plans.get_for(ir, pattern, read);
        if let Some(&o) = plan.missing_outputs.first() {
            return Err(PipelineError::OutputEliminated {
                output: self.shared.names[o as usize],
            });
        }
        Ok(plan)
    }
}

/// The frame an engine runs (`on`: whether the parallel engine runs, and
/// whether fusion is on): the waves of `parallel` — of `parallel_unfused`,
/// every node its own unit, with fusion off where it was lowered — when
/// the parallel engine runs and they were lowered, else the `sequential`
/// frame.
fn engine_frame<'f>(
    sequential: &'f Frame,
    parallel: &'f Option<Frame>,
    parallel_unfused: &'f Option<Frame>,
    (parallel_on, fusion_on): (bool, bool),
) -> &'f Frame {
    match (parallel, parallel_unfused) {
        (_, Some(unfused)) if parallel_on && !fusion_on => unfused,
        (Some(p), _) if parallel_on => p,
        _ => sequential,
    }
}
