//! [`DynPipeline`]: a validated graph whose nodes call registered ops,
//! running the steps of its lowered [`Program`] one frame at a time, with
//! states, held values and the frame count committed only once the whole
//! frame succeeded.

use std::sync::{Arc, OnceLock};

use smallvec::SmallVec;

use crate::lower::{lower, Frame, Program, Step, Unit, When};
use crate::model::ir::{Arg, Endpoint, GraphIr, NodeId};
use crate::model::outputs::OutputSet;
use crate::model::plan::Plan;
use crate::model::spec::GraphSpec;
use crate::model::weights::Weights;
use crate::passes::check::check;
use crate::passes::diag::{did_you_mean, Diagnostic, Loc, Severity};
use crate::runtime::error::PipelineError;
use crate::runtime::hold::Hold;
use crate::runtime::observe::{NoopObserver, Observer};
use crate::runtime::plan_cache::PatternPlans;

use super::fused::{FormFn, GroupStep, Groups, Values};
use super::intern;
use super::ops::{Call, OpFn, Ops, Value};
use super::outputs::DynOutputs;

mod run_with;

/// How a frame's waves run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Waves {
    /// One node after the other.
    InOrder,
    /// Each wave's nodes at once on the pool.
    AtOnce,
    /// At once, each wave after the pool's pending work had a turn: a
    /// pipelined frame's second stage, as the generated code runs it
    /// (`__private::yield_to_first_stage`).
    SecondStage,
}

impl Waves {
    /// At once for the parallel engine, in order otherwise.
    pub(super) fn of(parallel: bool) -> Waves {
        if parallel {
            Waves::AtOnce
        } else {
            Waves::InOrder
        }
    }
}

/// Why a run-time graph cannot be built: the macro's diagnostics (a name
/// that resolves to nothing, a cycle, a mode missing a weight, …) and the
/// registry's (an op, a constant or an initial value it does not know),
/// each at its place in the declaration.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", first_error(.diagnostics))]
pub struct BuildError {
    /// Every diagnostic, errors and warnings, in the order found.
    pub diagnostics: Vec<Diagnostic>,
}

fn first_error(diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .find(|d| d.severity == Severity::Error)
        .map_or_else(|| "invalid graph".to_string(), Diagnostic::render)
}

/// Fails unless `inputs` has as many values as the graph declares inputs.
pub(super) fn check_inputs(sh: &Shared, inputs: &[Value]) -> Result<(), PipelineError> {
    if inputs.len() == sh.ir.inputs.len() {
        Ok(())
    } else {
        Err(PipelineError::Internal(
            "a run-time pipeline was given another number of inputs than it declares",
        ))
    }
}

/// What every frame of one pipeline reads and never changes.
pub(super) struct Shared {
    pub(super) ir: GraphIr,
    pub(super) program: Program,
    pub(super) registry: Ops,
    /// Per node: its op.
    ops: Vec<Arc<OpFn>>,
    /// Per node: its op's strip form, when one is registered.
    pub(super) forms: Vec<Option<Arc<FormFn>>>,
    /// Per node, per argument: the constant's value.
    consts: Vec<Vec<Option<Value>>>,
    /// Per node: its name, for errors.
    names: Vec<&'static str>,
    outputs: Arc<[String]>,
    /// Per mode: its weight table.
    pub(super) mode_weights: Vec<Weights>,
    state_init: Vec<Value>,
    /// The graph as an observer's `frame_begin` takes it, interned the
    /// first time a frame is observed.
    observed_ir: OnceLock<&'static GraphIr>,
}

impl Shared {
    /// The graph, living as long as the program: an observer's
    /// `frame_begin` names it (each distinct graph is kept once, and only
    /// once some frame of it is observed).
    pub(super) fn static_ir(&self) -> &'static GraphIr {
        self.observed_ir.get_or_init(|| super::intern_ir(&self.ir))
    }
}

/// A pipeline built at run time: its graph checked by the macro's rules,
/// lowered to the same [`Program`], its nodes calling the ops of an
/// [`Ops`] registry. Modes, weights chosen at run time (dead nodes
/// eliminated), node rates and state follow the semantics of generated
/// pipelines; outputs are bit-identical to a generated pipeline of the
/// same graph calling the same functions.
pub struct DynPipeline {
    pub(super) shared: Arc<Shared>,
    states: Vec<Value>,
    /// Per state: written since it was last reset to its initial value.
    fresh: Vec<bool>,
    holds: Vec<Hold>,
    held: Vec<Option<Value>>,
    frame: u64,
    rates_on: bool,
    /// Per node: its value of the last frame that computed it (kept so a
    /// filled value's allocation is reused).
    values: Vec<Option<Value>>,
    /// Per node: computed this frame.
    ran: Vec<bool>,
    /// Per node: the held-value slot its consumers read this frame.
    holding: Vec<Option<usize>>,
    /// Plans of weight patterns met at run time.
    plans: PatternPlans,
    /// Whether fused groups run through the strip executor.
    fusion: bool,
    /// The fused groups, built on first use.
    groups: Groups,
}

impl std::fmt::Debug for DynPipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynPipeline")
            .field("name", &self.shared.ir.name)
            .field("frame", &self.frame)
            .finish_non_exhaustive()
    }
}

/// What a frame runs: a declared mode, or a plan chosen at run time.
#[derive(Clone, Copy)]
pub(super) enum Resolved<'a> {
    Mode(usize),
    Plan(&'a Plan),
}

impl DynPipeline {
    /// Checks `spec` with the macro's rules, lowers it and resolves its
    /// ops, constants and initial values in `ops`.
    pub fn new(spec: &GraphSpec, ops: &Ops) -> Result<DynPipeline, BuildError> {
        let checked = check(spec);
        match checked.ir {
            Some(ir)
                if !checked
                    .diagnostics
                    .iter()
                    .any(|d| d.severity == Severity::Error) =>
            {
                DynPipeline::from_ir(ir, &checked.mode_plans, ops)
            }
            _ => Err(BuildError {
                diagnostics: checked.diagnostics,
            }),
        }
    }

    /// A pipeline over a validated IR and its mode plans (for example a
    /// generated pipeline's `ir()` and `MODE_PLANS`), its ops resolved in
    /// `ops`.
    pub fn from_ir(ir: GraphIr, mode_plans: &[Plan], ops: &Ops) -> Result<DynPipeline, BuildError> {
        let mut diagnostics = Vec::new();
        let mut resolved = Vec::with_capacity(ir.nodes.len());
        let mut consts = Vec::with_capacity(ir.nodes.len());
        for (i, node) in ir.nodes.iter().enumerate() {
            match ops.get(&node.op) {
                Some(op) => resolved.push(op),
                None => {
                    let mut d = Diagnostic::error(
                        Loc::Node(i),
                        format!("no op `{}` is registered (node `{}`)", node.op, node.name),
                    );
                    let known: Vec<&str> = ops.names().collect();
                    if let Some(s) = did_you_mean(&node.op, known) {
                        d = d.note(format!("help: did you mean `{s}`?"));
                    }
                    diagnostics.push(d);
                }
            }
            let mut values = Vec::with_capacity(node.args.len());
            for (a, arg) in node.args.iter().enumerate() {
                values.push(match arg {
                    Arg::Const(text) => {
                        let v = ops.constant_value(text);
                        if v.is_none() {
                            diagnostics.push(Diagnostic::error(
                                Loc::NodeArg { node: i, arg: a },
                                format!(
                                    "no constant `{text}` is registered (argument {a} of node `{}`)",
                                    node.name
                                ),
                            ));
                        }
                        v
                    }
                    _ => None,
                });
            }
            consts.push(values);
        }
        let mut state_init = Vec::with_capacity(ir.states.len());
        for (i, s) in ir.states.iter().enumerate() {
            match ops.state_initial(&s.init, &s.ty) {
                Some(v) => state_init.push(v),
                None => diagnostics.push(Diagnostic::error(
                    Loc::State(i),
                    format!(
                        "no constant `{}` is registered (the initial value of state `{}`)",
                        s.init, s.name
                    ),
                )),
            }
        }
        diagnostics.extend(super::typecheck::check_types(&ir, ops));
        if !diagnostics.is_empty() {
            return Err(BuildError { diagnostics });
        }
        let program = lower(&ir, mode_plans, true);
        let mode_weights = ir
            .modes
            .iter()
            .map(|m| {
                ir.weight_keys
                    .iter()
                    .zip(m.weights.iter())
                    .fold(Weights::new(), |w, (k, v)| w.with(k.to_string(), *v))
            })
            .collect();
        let shared = Shared {
            names: ir.nodes.iter().map(|n| intern(&n.name)).collect(),
            outputs: ir
                .outputs
                .iter()
                .map(|o| ir.node(o.node).name.to_string())
                .collect(),
            forms: ir
                .nodes
                .iter()
                .zip(&consts)
                .map(|(n, c)| ops.form(&n.op, c))
                .collect(),
            ops: resolved,
            consts,
            mode_weights,
            state_init,
            registry: ops.clone(),
            observed_ir: OnceLock::new(),
            program,
            ir,
        };
        Ok(DynPipeline::with_shared(Arc::new(shared)))
    }

    /// A pipeline over `shared` before its first frame.
    fn with_shared(shared: Arc<Shared>) -> DynPipeline {
        let n = shared.ir.nodes.len();
        DynPipeline {
            states: shared.state_init.clone(),
            fresh: vec![false; shared.ir.states.len()],
            holds: shared
                .program
                .hold_slots
                .iter()
                .map(|&n| Hold::new(n))
                .collect(),
            held: vec![None; shared.program.hold_slots.len()],
            frame: 0,
            rates_on: true,
            values: vec![None; n],
            ran: vec![false; n],
            holding: vec![None; n],
            plans: PatternPlans::default(),
            fusion: true,
            groups: Groups::default(),
            shared,
        }
    }

    /// The validated graph.
    pub fn ir(&self) -> &GraphIr {
        &self.shared.ir
    }

    /// The program it runs.
    pub fn program(&self) -> &Program {
        &self.shared.program
    }

    /// Whether fused groups run through the strip executor.
    pub fn fusion(&self) -> bool {
        self.fusion
    }

    /// A new pipeline of the same graph and ops, in its state before the
    /// first frame (rates and fusion on): what a pool of streams or a
    /// second camera runs, without building the graph again.
    pub fn fresh(&self) -> DynPipeline {
        DynPipeline::with_shared(self.shared.clone())
    }

    /// Back to the state before the first frame: initial states, nothing
    /// held, frame count 0 (`Pipeline::reset`).
    fn reset_all(&mut self) {
        self.states.clone_from(&self.shared.state_init);
        self.fresh.fill(false);
        self.holds.iter_mut().for_each(Hold::forget);
        self.held.fill(None);
        self.frame = 0;
    }

    /// Runs one frame of `frame`'s steps from the start.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn run_frame(
        &mut self,
        sh: &Shared,
        frame: &Frame,
        sel: Resolved<'_>,
        weights: &Weights,
        inputs: &[Value],
        parallel: bool,
        read: OutputSet,
    ) -> Result<DynOutputs, PipelineError> {
        self.begin_frame(sh, inputs)?;
        let obs = &mut NoopObserver;
        self.steps(
            sh,
            frame,
            sel,
            weights,
            inputs,
            Waves::of(parallel),
            read,
            obs,
        )
    }

    /// Checks the inputs and forgets which nodes ran last frame.
    pub(super) fn begin_frame(
        &mut self,
        sh: &Shared,
        inputs: &[Value],
    ) -> Result<(), PipelineError> {
        check_inputs(sh, inputs)?;
        self.ran.fill(false);
        self.holding.fill(None);
        Ok(())
    }

    /// Runs `frame`'s steps, the values of nodes already run this frame
    /// (a pipelined first stage's) given.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn steps(
        &mut self,
        sh: &Shared,
        frame: &Frame,
        sel: Resolved<'_>,
        weights: &Weights,
        inputs: &[Value],
        waves: Waves,
        read: OutputSet,
        obs: &mut dyn Observer,
    ) -> Result<DynOutputs, PipelineError> {
        let now = self.frame;
        let rated = match sel {
            Resolved::Mode(m) => sh.program.modes[m].rates.as_ref(),
            Resolved::Plan(_) => None,
        };
        let due: SmallVec<[bool; 6]> = rated.map_or_else(SmallVec::new, |r| {
            r.rates
                .iter()
                .map(|x| !self.rates_on || self.holds[x.slot].due(now, x.every))
                .collect()
        });
        let plan: &Plan = match sel {
            Resolved::Mode(m) => &sh.program.modes[m].plan,
            Resolved::Plan(p) => p,
        };
        // A plan chosen at run time runs the full graph's groups.
        let run_time = matches!(sel, Resolved::Plan(_));
        let mut phase = plan;
        let mut mask = 0u64;
        let mut outputs: Vec<Option<Value>> = vec![None; sh.ir.outputs.len()];
        for step in &frame.steps {
            match step {
                Step::Call { node, when } => {
                    if *when == When::Always || phase.is_live(*node) {
                        self.call(sh, *node, weights, inputs, obs)?;
                    }
                }
                Step::Group { group, when } => {
                    let live = |n: NodeId| *when == When::Always || phase.is_live(n);
                    let lives = (&live as &dyn Fn(NodeId) -> bool, plan, run_time);
                    self.group(sh, frame, *group, lives, weights, inputs, obs)?;
                }
                Step::Wave(units) => {
                    if waves == Waves::SecondStage {
                        crate::runtime::generated::yield_to_first_stage();
                    }
                    // A group first (its members read each other), then the
                    // wave's single nodes, which read none of its values.
                    let mut singles: SmallVec<[NodeId; 8]> = SmallVec::new();
                    for unit in units {
                        match unit {
                            Unit::Call(n) if phase.is_live(*n) => singles.push(*n),
                            Unit::Call(_) => {}
                            Unit::Group(g) => {
                                let live = |n: NodeId| phase.is_live(n);
                                let lives = (&live as &dyn Fn(NodeId) -> bool, plan, run_time);
                                self.group(sh, frame, *g, lives, weights, inputs, obs)?;
                            }
                        }
                    }
                    if waves != Waves::InOrder && singles.len() > 1 {
                        self.call_wave(sh, &singles, weights, inputs, obs)?;
                    } else {
                        for &node in &singles {
                            self.call(sh, node, weights, inputs, obs)?;
                        }
                    }
                }
                Step::DecidePhase => {
                    let (Some(r), Resolved::Mode(m)) = (rated, sel) else {
                        continue;
                    };
                    for (i, rate) in r.rates.iter().enumerate() {
                        if due[i] || self.trigger(sh, m, i, inputs)? {
                            continue;
                        }
                        mask |= 1 << i;
                        self.holding[rate.node as usize] = Some(rate.slot);
                    }
                    phase = r
                        .phases
                        .phases
                        .get(mask as usize)
                        .ok_or(PipelineError::Internal(
                            "a phase outside the mode's phase plans",
                        ))?;
                }
                Step::Output { index, .. } if !read.contains(*index) => {}
                Step::Output { index, node } => {
                    let v = self.visible(*node).cloned();
                    if v.is_none() && !sh.ir.outputs[*index].optional {
                        return Err(PipelineError::Internal("an output is missing"));
                    }
                    outputs[*index] = v;
                }
                Step::CommitState {
                    state,
                    node,
                    when,
                    swap,
                } => {
                    if *when == When::Plan && !phase.writes_state(*state) {
                        self.reset_state(sh, *state);
                    } else if let Some(v) = self.visible(*node).cloned() {
                        let s = *state as usize;
                        let old = std::mem::replace(&mut self.states[s], v);
                        self.fresh[s] = true;
                        if *swap && self.ran[*node as usize] {
                            // The state's last value becomes the writer's
                            // buffer for the next frame.
                            self.values[*node as usize] = Some(old);
                        }
                    }
                }
                Step::ResetState { state } => self.reset_state(sh, *state),
                Step::KeepHold { rate } => {
                    if let Some(r) = rated.and_then(|r| r.rates.get(*rate)) {
                        let id = r.node as usize;
                        if self.ran[id] {
                            // The held value and the node's buffer trade
                            // places, as generated code's do: a copy shared
                            // by both would make the node's next fill
                            // allocate anew. Nothing reads the node's value
                            // after this step in the frame.
                            let computed = self.values[id].take();
                            self.values[id] = std::mem::replace(&mut self.held[r.slot], computed);
                            self.holds[r.slot].computed_at = Some(now);
                        }
                        self.holds[r.slot].held_last_frame = mask & (1 << rate) != 0;
                    }
                }
                Step::ForgetHold { slot } => {
                    if let Some(h) = self.holds.get_mut(*slot) {
                        h.forget();
                        self.held[*slot] = None;
                    }
                }
                Step::NextFrame => self.frame = self.frame.wrapping_add(1),
            }
        }
        Ok(DynOutputs {
            names: sh.outputs.clone(),
            values: outputs,
        })
    }

    /// Node `id`'s value, computed this frame by an earlier stage: the
    /// pipeline's last value of it goes back to that stage's buffers.
    pub(super) fn give(&mut self, id: NodeId, value: &mut Option<Value>) {
        let i = id as usize;
        std::mem::swap(&mut self.values[i], value);
        self.ran[i] = true;
    }

    fn reset_state(&mut self, sh: &Shared, state: u32) {
        let s = state as usize;
        if self.fresh[s] {
            self.states[s] = sh.state_init[s].clone();
            self.fresh[s] = false;
        }
    }

    /// Node `id`'s value this frame: computed, or held.
    fn visible(&self, id: NodeId) -> Option<&Value> {
        let i = id as usize;
        if self.ran[i] {
            self.values[i].as_ref()
        } else {
            self.held[self.holding[i]?].as_ref()
        }
    }

    /// Whether rate `rate` of mode `m`'s trigger is true this frame.
    fn trigger(
        &self,
        sh: &Shared,
        m: usize,
        rate: usize,
        inputs: &[Value],
    ) -> Result<bool, PipelineError> {
        let r = &sh.ir.modes[m].rates[rate];
        let Some(t) = &r.trigger else {
            return Ok(false);
        };
        let value = match t.source {
            Endpoint::Node(n) => self.visible(n),
            Endpoint::State(s) => self.states.get(s as usize),
            Endpoint::Input(x) => inputs.get(x as usize),
        };
        let fields: SmallVec<[&str; 2]> = t.fields.iter().map(|f| &**f).collect();
        value
            .and_then(|v| sh.registry.read_flag(&**v, &fields))
            .ok_or_else(|| {
                let path: Vec<&str> = std::iter::once(sh.ir.endpoint_name(t.source))
                    .chain(fields)
                    .collect();
                PipelineError::node(
                    sh.names[r.node as usize],
                    format!(
                        "its trigger `{}` is not a `bool` or a registered `bool` field",
                        path.join(".")
                    ),
                )
            })
    }

    /// Runs fused group `group` of `frame` (or its members' calls), its
    /// members running by `live` and the values outside it planned by
    /// `plan` (computed or held this frame); `run_time`: `frame` is the
    /// full graph's, for a plan chosen at run time.
    #[allow(clippy::too_many_arguments)]
    fn group(
        &mut self,
        sh: &Shared,
        frame: &Frame,
        group: usize,
        (live, plan, run_time): (&dyn Fn(NodeId) -> bool, &Plan, bool),
        weights: &Weights,
        inputs: &[Value],
        obs: &mut dyn Observer,
    ) -> Result<(), PipelineError> {
        let (states, held, holding) = (&self.states, &self.held, &self.holding);
        let outside = |e: Endpoint| match e {
            Endpoint::State(s) => states.get(s as usize),
            Endpoint::Node(p) => held[holding[p as usize]?].as_ref(),
            Endpoint::Input(x) => inputs.get(x as usize),
        };
        let mut vals = Values {
            values: &mut self.values,
            ran: &mut self.ran,
            outside: &outside,
        };
        let planned = |n: NodeId| plan.is_live(n);
        let step = GroupStep {
            sh,
            frame,
            group,
            weights,
            inputs,
            live,
            planned: &planned,
            on: self.fusion,
            run_time,
        };
        self.groups.run(&step, &mut vals, obs)
    }

    /// Calls node `id`'s op; its value is kept only when the op set it.
    fn call(
        &mut self,
        sh: &Shared,
        id: NodeId,
        weights: &Weights,
        inputs: &[Value],
        obs: &mut dyn Observer,
    ) -> Result<(), PipelineError> {
        let i = id as usize;
        let mut out = self.values[i].take();
        obs.node_begin(id);
        let result = self.invoke(sh, id, &mut out, weights, inputs);
        obs.node_end(id);
        self.values[i] = out;
        self.ran[i] = result.is_ok();
        result
    }

    /// Calls node `id`'s op into `out`, reading the values computed so far.
    fn invoke(
        &self,
        sh: &Shared,
        id: NodeId,
        out: &mut Option<Value>,
        weights: &Weights,
        inputs: &[Value],
    ) -> Result<(), PipelineError> {
        invoke(sh, id, out, weights, inputs, |e| match e {
            Endpoint::State(s) => self.states.get(s as usize),
            Endpoint::Node(p) => self.visible(p),
            Endpoint::Input(x) => inputs.get(x as usize),
        })
    }

    /// The single nodes of one wave at once on the worker pool, each into
    /// its own value; the first error in wave order fails the frame.
    fn call_wave(
        &mut self,
        sh: &Shared,
        nodes: &[NodeId],
        weights: &Weights,
        inputs: &[Value],
        obs: &mut dyn Observer,
    ) -> Result<(), PipelineError> {
        use rayon::prelude::*;
        // The observer is not shared between workers: the wave's nodes
        // begin together and end together.
        nodes.iter().for_each(|&n| obs.node_begin(n));
        let mut outs: Vec<(NodeId, Option<Value>)> = nodes
            .iter()
            .map(|&n| (n, self.values[n as usize].take()))
            .collect();
        let this = &*self;
        let results: Vec<Result<(), PipelineError>> = outs
            .par_iter_mut()
            .map(|(n, out)| this.invoke(sh, *n, out, weights, inputs))
            .collect();
        nodes.iter().for_each(|&n| obs.node_end(n));
        let mut first = Ok(());
        for ((n, out), r) in outs.into_iter().zip(results) {
            self.values[n as usize] = out;
            self.ran[n as usize] = r.is_ok();
            if first.is_ok() {
                first = r;
            }
        }
        first
    }
}

/// Calls node `id`'s op into `out`, its value arguments read by `value`
/// (the frame's inputs, states and node values, or a pipelined first
/// stage's own values).
pub(super) fn invoke<'v>(
    sh: &'v Shared,
    id: NodeId,
    out: &mut Option<Value>,
    weights: &Weights,
    inputs: &'v [Value],
    value: impl Fn(Endpoint) -> Option<&'v Value>,
) -> Result<(), PipelineError> {
    let i = id as usize;
    let node = &sh.ir.nodes[i];
    let mut args: SmallVec<[Option<&Value>; 8]> = SmallVec::with_capacity(node.args.len());
    for (a, arg) in node.args.iter().enumerate() {
        args.push(match arg {
            Arg::Value(Endpoint::Input(x)) => inputs.get(*x as usize),
            Arg::Value(e) => value(*e),
            Arg::Const(_) => sh.consts[i][a].as_ref(),
            Arg::Weights | Arg::Buffer => None,
        });
    }
    let mut call = Call {
        node: sh.names[i],
        args: &args,
        weights,
        out,
        set: false,
    };
    let result = (sh.ops[i])(&mut call);
    let set = call.set;
    result
        .and_then(|()| {
            if set {
                Ok(())
            } else {
                Err(format!("op `{}` gave it no value", node.op).into())
            }
        })
        .map_err(|e| PipelineError::node(sh.names[i], e))
}
