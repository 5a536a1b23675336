//! [`DynPipeline`]: a validated graph whose nodes call registered ops,
//! running the steps of its lowered [`Program`] one frame at a time, with
//! states, held values and the frame count committed only once the whole
//! frame succeeded.

use std::sync::{Arc, OnceLock};

use crate::lower::{lower, mode_weights, Program};
use crate::model::ir::{Arg, GraphIr};
use crate::model::plan::Plan;
use crate::model::spec::GraphSpec;
use crate::model::weights::Weights;
use crate::passes::check::check;
use crate::passes::diag::{did_you_mean, Diagnostic, Loc, Severity};
use crate::runtime::error::PipelineError;
use crate::runtime::observe::Observer;
use crate::runtime::plan_cache::PatternPlans;

use super::fused::FormFn;
use super::intern;
use super::ops::{OpFn, Ops, Value};
use super::outputs::DynOutputs;

mod run_with;
mod walk;

use walk::Carry;
pub(super) use walk::{call, Values, Walk, Work};

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
/// op table's (an op, a constant or an initial value it does not know),
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

/// What every frame of one pipeline reads and never changes.
pub(super) struct Shared {
    pub(super) ir: GraphIr,
    pub(super) program: Program,
    pub(super) table: Ops,
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
/// [`Ops`] table. Modes, weights chosen at run time (dead nodes
/// eliminated), node rates and state follow the semantics of generated
/// pipelines; outputs are bit-identical to a generated pipeline of the
/// same graph calling the same functions.
pub struct DynPipeline {
    pub(super) shared: Arc<Shared>,
    /// States, held values and the frame count.
    carry: Carry,
    /// The values of the frame run.
    work: Work,
    /// Plans of weight patterns met at run time.
    plans: PatternPlans,
    /// Whether fused groups run through the strip executor.
    fusion: bool,
}

impl std::fmt::Debug for DynPipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynPipeline")
            .field("name", &self.shared.ir.name)
            .field("frame", &self.carry.frame)
            .finish_non_exhaustive()
    }
}

/// What a frame runs: a declared mode, or a plan chosen at run time.
#[derive(Clone, Copy)]
pub(super) enum Resolved<'a> {
    Mode(usize),
    Plan(&'a Plan),
}

impl<'a> Resolved<'a> {
    /// The plan the frame runs: the mode's (a rated mode's every-frame
    /// plan, its gate first), or the one chosen.
    pub(super) fn plan(self, sh: &'a Shared) -> &'a Plan {
        match self {
            Resolved::Mode(m) => &sh.program.modes[m].plan,
            Resolved::Plan(p) => p,
        }
    }
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
        let mode_weights = (0..ir.modes.len()).map(|m| mode_weights(&ir, m)).collect();
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
            table: ops.clone(),
            observed_ir: OnceLock::new(),
            program,
            ir,
        };
        Ok(DynPipeline::with_shared(Arc::new(shared)))
    }

    /// A pipeline over `shared` before its first frame.
    fn with_shared(shared: Arc<Shared>) -> DynPipeline {
        DynPipeline {
            carry: Carry::new(&shared),
            work: Work::new(shared.ir.nodes.len()),
            plans: PatternPlans::default(),
            fusion: true,
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
        self.carry.reset(&self.shared);
    }

    /// Runs one frame of `walk` from the start; `given`: the values a
    /// pipelined first stage computed this frame, whose buffers take the
    /// pipeline's last values of them.
    pub(super) fn walk(
        &mut self,
        walk: &Walk<'_>,
        given: Option<&mut Work>,
        obs: &mut dyn Observer,
    ) -> Result<DynOutputs, PipelineError> {
        self.work.begin(walk.sh, walk.inputs)?;
        if let Some(earlier) = given {
            self.work.take_from(earlier);
        }
        walk.run(&mut self.work, Some(&mut self.carry), obs)
    }
}
