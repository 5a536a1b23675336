//! The program a pipeline runs, as data: per mode and per engine, the steps
//! of one frame (node calls in order, fused strip groups, parallel waves,
//! the point where a rated mode decides its phase, outputs, state commits,
//! held values) and the buffers they fill.
//!
//! Computed by ordinary Rust from the IR and the mode plans, with the
//! passes that decide each part ([`dce`](crate::passes::dce),
//! [`rates`](crate::passes::rates), [`fusion`](crate::passes::fusion),
//! [`schedule`](crate::passes::schedule), [`memory`](crate::passes::memory)):
//! nothing here decides a rule of its own. The same [`Program`] is what an
//! engine interprets for a graph built at run time and what code generation
//! emits code from, one step kind at a time; [`Program::text`] prints it
//! for review and snapshot tests. Like tract's `SimplePlan` kept apart from
//! its `SimpleState`, a program holds no values: the engine that runs it
//! owns the states, held values and buffers.

mod build;
mod text;

pub use build::{lower, mode_weights, pipelined_first_stage};

use crate::model::ir::NodeId;
use crate::model::plan::Plan;
use crate::passes::fusion::FusionPlan;
use crate::passes::memory::BufferPlan;
use crate::passes::rates::ModeRates;

/// Everything a pipeline runs, per mode and engine.
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    /// The pipeline's name.
    pub name: String,
    /// [`GraphIr::fingerprint`](crate::model::ir::GraphIr::fingerprint) of
    /// the graph it was lowered from.
    pub graph: u64,
    /// Whether the parallel and pipelined engines were lowered too (a
    /// `#[parallel]` pipeline).
    pub parallel: bool,
    /// The rated nodes of every mode, each once: one held value each
    /// ([`rates::hold_slots`](crate::passes::rates::hold_slots)).
    pub hold_slots: Vec<NodeId>,
    /// One per declared mode, in declaration order.
    pub modes: Vec<ModeProgram>,
    /// Weights chosen at run time whose zero pattern is a declared mode's
    /// run that mode's frames (its plan is the pattern's, by the same
    /// DCE): each pattern once, with the first mode without rates that has
    /// it (a rated mode's frames skip work its weights do not).
    pub weight_modes: Vec<(u64, usize)>,
    /// Weights or a plan chosen at run time: the full graph's frame, each
    /// call skipped when the frame's plan does not run it.
    pub run_time: RunTimeProgram,
}

/// What one declared mode runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ModeProgram {
    /// The mode's name as declared.
    pub name: String,
    /// The mode's plan; in a rated mode, its every-frame plan with the
    /// gate (the triggers and what they read) first.
    pub plan: Plan,
    /// The mode's rates, when it has any.
    pub rates: Option<RatedMode>,
    /// The held-value slots ([`Program::hold_slots`]) this mode does not
    /// rate: a frame of this mode forgets them.
    pub forgets: Vec<usize>,
    /// The frame run by one thread, fused groups spreading their strips
    /// over the pool.
    pub sequential: Frame,
    /// The frame run wave by wave (`#[parallel]` pipelines). A rated mode
    /// decides its phase between waves: after the waves of its gate, before
    /// the first wave holding work only some phases run.
    pub parallel: Option<Frame>,
    /// The frame run wave by wave with fusion off (`#[parallel]` pipelines,
    /// modes without rates): every node its own unit, so a wave never runs
    /// a group's members one after the other. A rated mode runs its
    /// `parallel` frame either way, its groups unfused inside their steps.
    pub parallel_unfused: Option<Frame>,
    /// The frame split in two stages for pipelined runs (`#[parallel]`
    /// pipelines).
    pub pipelined: Option<Pipelined>,
}

/// A rated mode's phases and rates.
#[derive(Debug, Clone, PartialEq)]
pub struct RatedMode {
    /// Its phase plans, what gates them and what only some phases run.
    pub phases: ModeRates,
    /// Per rate, in declaration order: the rated node, its held-value slot
    /// and how often it runs at least.
    pub rates: Vec<RateStep>,
}

/// One rate of a mode, as a frame applies it.
#[derive(Debug, Clone, PartialEq)]
pub struct RateStep {
    /// The rated node.
    pub node: NodeId,
    /// Its slot in [`Program::hold_slots`].
    pub slot: usize,
    /// It runs when its held value is this many frames old.
    pub every: u32,
}

/// Weights or a plan chosen at run time.
#[derive(Debug, Clone, PartialEq)]
pub struct RunTimeProgram {
    /// The full graph's plan: any plan runs a subset of it.
    pub full: Plan,
    /// Its frame, every call and group guarded by the frame's plan: a
    /// group runs fused when the plan runs it whole
    /// ([`Group::runs_whole`](crate::passes::fusion::Group::runs_whole)).
    pub sequential: Frame,
    /// Its frame wave by wave (`#[parallel]` pipelines).
    pub parallel: Option<Frame>,
    /// Its frame wave by wave with fusion off (`#[parallel]` pipelines):
    /// every node its own unit.
    pub parallel_unfused: Option<Frame>,
    /// Its frame in two stages for pipelined runs (`#[parallel]`
    /// pipelines): a stream reading only some outputs runs its mode's plan
    /// cut down to them here.
    pub pipelined: Option<Pipelined>,
    /// Per group of its frames' fusion (the sequential and parallel frames
    /// share it): the nodes the frame's plan must run for the group to run
    /// fused ([`Group::whole_needs`](crate::passes::fusion::Group::whole_needs)).
    pub whole: Vec<Vec<NodeId>>,
}

/// A pipelined run's two stages: the first runs ahead on the next frame
/// (it reads no state, directly or through other nodes), the second in
/// frame order once the previous frame committed.
#[derive(Debug, Clone, PartialEq)]
pub struct Pipelined {
    /// Per node: whether it runs in the first stage.
    pub first_stage: Vec<bool>,
    /// The first stage's steps (calls and groups only).
    pub first: Frame,
    /// The second stage's steps, ending with the commits.
    pub second: Frame,
}

/// One frame of one engine: its fused groups, its steps and its buffers.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// The plan it runs, its nodes in the order of its units (a fused
    /// group's members together).
    pub plan: Plan,
    /// The fused groups its [`Step::Group`]s index.
    pub fusion: FusionPlan,
    /// The steps, in the order they run.
    pub steps: Vec<Step>,
    /// The buffers its filled values are written to.
    pub buffers: BufferPlan,
}

/// When a call runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum When {
    /// On every frame of the mode.
    Always,
    /// When the frame's phase plan runs it (decided by
    /// [`Step::DecidePhase`] before it).
    Phase,
    /// When the plan chosen at run time runs it.
    Plan,
}

/// A unit of a parallel wave: a node or a fused group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unit {
    /// One node's call.
    Call(NodeId),
    /// A fused group (index into the frame's [`Frame::fusion`]), run alone
    /// since its strips use every core.
    Group(usize),
}

/// One step of a frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Calls a node's function.
    Call {
        /// The node.
        node: NodeId,
        /// When it runs.
        when: When,
    },
    /// Runs a fused group strip by strip (index into
    /// [`Frame::fusion`]'s groups); with fusion off, its members' calls in
    /// order.
    Group {
        /// The group.
        group: usize,
        /// When it runs.
        when: When,
    },
    /// Runs the units of one wave at once; every value they read comes
    /// from earlier waves.
    Wave(Vec<Unit>),
    /// Decides the frame's phase of a rated mode: per rate, held when its
    /// value is younger than its rate and its trigger is false.
    DecidePhase,
    /// Hands a node's value to output `index` (absent when it did not run).
    Output {
        /// Index into the IR's outputs.
        index: usize,
        /// The node returned.
        node: NodeId,
    },
    /// Stores a writer's value into a state for the next frame.
    CommitState {
        /// The state.
        state: u32,
        /// Its writer.
        node: NodeId,
        /// When the write happens: `Always`, `Phase` (when the writer ran
        /// or is held), `Plan` (when the run-time plan writes the state,
        /// else [`Step::ResetState`]'s rule applies).
        when: When,
        /// Double-buffering: the state takes the writer's value itself and
        /// gives its last value back as the writer's buffer for the next
        /// frame (when the writer ran this frame). Set on the value's last
        /// sink only: no later commit of this frame stores the same
        /// writer's value and the mode holds no value of it (a held value
        /// takes the buffer instead); an earlier sink takes a copy.
        swap: bool,
    },
    /// A state this frame does not write goes back to its initial value
    /// (once), so a later frame never reads a stale value.
    ResetState {
        /// The state.
        state: u32,
    },
    /// Keeps what rate `rate`'s node computed this frame as its held value.
    KeepHold {
        /// Index into the mode's rates.
        rate: usize,
    },
    /// Forgets a held value this mode does not rate.
    ForgetHold {
        /// The slot in [`Program::hold_slots`].
        slot: usize,
    },
    /// Counts the frame as done.
    NextFrame,
}

impl Frame {
    /// The nodes this frame's steps call, in step order (groups and waves
    /// expanded).
    pub fn calls(&self) -> Vec<NodeId> {
        let mut out = Vec::new();
        for step in &self.steps {
            match step {
                Step::Call { node, .. } => out.push(*node),
                Step::Group { group, .. } => out.extend(self.unit_nodes(&Unit::Group(*group))),
                Step::Wave(units) => out.extend(units.iter().flat_map(|u| self.unit_nodes(u))),
                _ => {}
            }
        }
        out
    }

    /// The nodes of a unit: a group's members in topological order, or the
    /// one node called.
    pub fn unit_nodes(&self, unit: &Unit) -> Vec<NodeId> {
        match unit {
            Unit::Call(n) => vec![*n],
            Unit::Group(g) => self
                .fusion
                .groups
                .get(*g)
                .map(|g| g.nodes.clone())
                .unwrap_or_default(),
        }
    }

    /// The frame's waves, each a list of its units' nodes (empty for a
    /// frame that runs on one thread).
    pub fn waves(&self) -> Vec<Vec<Vec<NodeId>>> {
        self.steps
            .iter()
            .filter_map(|step| match step {
                Step::Wave(units) => Some(units.iter().map(|u| self.unit_nodes(u)).collect()),
                _ => None,
            })
            .collect()
    }
}
