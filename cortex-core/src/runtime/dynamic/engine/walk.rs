//! The one walk over a frame's steps: the sequential run, the parallel
//! run's waves and both stages of a pipelined run execute a lowered
//! [`Frame`]'s steps here, a rated mode decides its phase here only, and
//! every call reads its arguments by the one rule of [`Outside::read`].

use smallvec::SmallVec;

use crate::lower::{Frame, RatedMode, Step, Unit, When};
use crate::model::ir::{Arg, Endpoint, NodeId};
use crate::model::outputs::OutputSet;
use crate::model::plan::Plan;
use crate::model::weights::Weights;
use crate::runtime::error::PipelineError;
use crate::runtime::hold::Hold;
use crate::runtime::observe::Observer;

use super::super::fused::{GroupStep, Groups};
use super::super::ops::{Call, Value};
use super::super::outputs::DynOutputs;
use super::{Resolved, Shared, Waves};

/// What a frame's walk fills: per node, its value and whether this frame
/// computed it, the held value its readers read instead, and the fused
/// groups' scratch. A pipeline keeps one; a pipelined run's first stage
/// one per frame in flight.
pub(in crate::runtime::dynamic) struct Work {
    /// Per node: its value of the last frame that computed it (kept so a
    /// filled value's allocation is reused).
    values: Vec<Option<Value>>,
    /// Per node: computed this frame.
    ran: Vec<bool>,
    /// Per node: the held-value slot its consumers read this frame.
    holding: Vec<Option<usize>>,
    /// The fused groups, built on first use.
    groups: Groups,
}

impl Work {
    /// Nothing computed yet for a graph of `nodes` nodes.
    pub(in crate::runtime::dynamic) fn new(nodes: usize) -> Work {
        Work {
            values: vec![None; nodes],
            ran: vec![false; nodes],
            holding: vec![None; nodes],
            groups: Groups::default(),
        }
    }

    /// Checks a frame's inputs and forgets which nodes ran or were held
    /// last frame.
    pub(in crate::runtime::dynamic) fn begin(
        &mut self,
        sh: &Shared,
        inputs: &[Value],
    ) -> Result<(), PipelineError> {
        if inputs.len() != sh.ir.inputs.len() {
            return Err(PipelineError::Internal(
                "a run-time pipeline was given another number of inputs than it declares",
            ));
        }
        self.ran.fill(false);
        self.holding.fill(None);
        Ok(())
    }

    /// Takes the values `earlier` (a pipelined first stage) computed this
    /// frame; this walk's last values of them go back to its buffers, so
    /// their allocations are reused.
    pub(super) fn take_from(&mut self, earlier: &mut Work) {
        for (i, &ran) in earlier.ran.iter().enumerate() {
            if ran {
                std::mem::swap(&mut self.values[i], &mut earlier.values[i]);
                self.ran[i] = true;
            }
        }
    }

    /// The frame's values as calls read and write them, those of earlier
    /// frames read from `carry`; and the groups' scratch.
    fn split<'w>(&'w mut self, carry: Option<&'w Carry>) -> (Values<'w>, &'w mut Groups) {
        let vals = Values {
            values: &mut self.values,
            ran: &mut self.ran,
            outside: Outside::of(&self.holding, carry),
        };
        (vals, &mut self.groups)
    }

    /// Node `id`'s value this frame: computed, or held.
    fn visible<'v>(&'v self, carry: &'v Carry, id: NodeId) -> Option<&'v Value> {
        let outside = Outside::of(&self.holding, Some(carry));
        outside.read(&self.values, &self.ran, Endpoint::Node(id), &[])
    }
}

/// What a pipeline carries from one frame to the next: its states, held
/// values and frame count, changed only by a frame's last steps (commits,
/// holds kept or forgotten, the frame counted).
pub(in crate::runtime::dynamic) struct Carry {
    pub(super) states: Vec<Value>,
    /// Per state: written since it was last reset to its initial value.
    fresh: Vec<bool>,
    pub(super) holds: Vec<Hold>,
    held: Vec<Option<Value>>,
    pub(super) frame: u64,
    pub(super) rates_on: bool,
}

impl Carry {
    /// The state before the first frame: initial states, nothing held.
    pub(super) fn new(sh: &Shared) -> Carry {
        Carry {
            states: sh.state_init.clone(),
            fresh: vec![false; sh.ir.states.len()],
            holds: sh
                .program
                .hold_slots
                .iter()
                .map(|&n| Hold::new(n))
                .collect(),
            held: vec![None; sh.program.hold_slots.len()],
            frame: 0,
            rates_on: true,
        }
    }

    /// Back to the state before the first frame, rates left as they are.
    pub(super) fn reset(&mut self, sh: &Shared) {
        self.states.clone_from(&sh.state_init);
        self.fresh.fill(false);
        (0..self.holds.len()).for_each(|slot| self.forget(slot));
        self.frame = 0;
    }

    /// Forgets held-value slot `slot`: the next frame that needs its node
    /// computes it.
    fn forget(&mut self, slot: usize) {
        if let Some(h) = self.holds.get_mut(slot) {
            h.forget();
            self.held[slot] = None;
        }
    }

    /// State `state` back to its initial value, once after each write.
    fn reset_state(&mut self, sh: &Shared, state: u32) {
        let s = state as usize;
        if self.fresh[s] {
            self.states[s] = sh.state_init[s].clone();
            self.fresh[s] = false;
        }
    }
}

/// The values a frame reads but did not compute: states and held values
/// (none in a pipelined first stage), and per node the held value its
/// readers read this frame.
#[derive(Clone, Copy)]
pub(in crate::runtime::dynamic) struct Outside<'a> {
    holding: &'a [Option<usize>],
    states: &'a [Value],
    held: &'a [Option<Value>],
}

impl<'a> Outside<'a> {
    fn of(holding: &'a [Option<usize>], carry: Option<&'a Carry>) -> Outside<'a> {
        Outside {
            holding,
            states: carry.map_or(&[][..], |c| &c.states),
            held: carry.map_or(&[][..], |c| &c.held),
        }
    }

    /// The value at `e` this frame, `values` and `ran` being the frame's
    /// computed values: an input, a node's value computed this frame or
    /// else held, or a state.
    fn read<'v>(
        &self,
        values: &'v [Option<Value>],
        ran: &[bool],
        e: Endpoint,
        inputs: &'v [Value],
    ) -> Option<&'v Value>
    where
        'a: 'v,
    {
        match e {
            Endpoint::Input(x) => inputs.get(x as usize),
            Endpoint::Node(p) if ran[p as usize] => values[p as usize].as_ref(),
            Endpoint::Node(p) => self.held.get(self.holding[p as usize]?)?.as_ref(),
            Endpoint::State(s) => self.states.get(s as usize),
        }
    }
}

/// Where a call or a group step reads and writes node values.
pub(in crate::runtime::dynamic) struct Values<'a> {
    /// Per node: its value.
    pub(in crate::runtime::dynamic) values: &'a mut [Option<Value>],
    /// Per node: computed this frame.
    pub(in crate::runtime::dynamic) ran: &'a mut [bool],
    outside: Outside<'a>,
}

impl Values<'_> {
    /// The value at `e` this frame ([`Outside::read`]).
    pub(in crate::runtime::dynamic) fn get<'s>(
        &'s self,
        e: Endpoint,
        inputs: &'s [Value],
    ) -> Option<&'s Value> {
        self.outside.read(self.values, self.ran, e, inputs)
    }
}

/// Calls node `id`'s op, its value arguments read from `vals`; its value
/// is kept only when the op set it.
pub(in crate::runtime::dynamic) fn call(
    sh: &Shared,
    weights: &Weights,
    inputs: &[Value],
    vals: &mut Values<'_>,
    id: NodeId,
    obs: &mut dyn Observer,
) -> Result<(), PipelineError> {
    let i = id as usize;
    let mut out = vals.values[i].take();
    obs.node_begin(id);
    let result = {
        let v: &Values<'_> = vals;
        invoke(sh, id, &mut out, weights, inputs, |e| v.get(e, inputs))
    };
    obs.node_end(id);
    vals.values[i] = out;
    vals.ran[i] = result.is_ok();
    result
}

/// Whether a step's node runs this frame: on every frame, or when the
/// frame's phase (or the plan chosen at run time) runs it. A wave's units
/// run by the phase alone.
fn runs(when: When, phase: &Plan, node: NodeId) -> bool {
    when == When::Always || phase.is_live(node)
}

/// One frame's walk over a frame's steps: what it runs, with which weights
/// and inputs, how its waves run, whether its groups fuse and which outputs
/// it hands back.
pub(in crate::runtime::dynamic) struct Walk<'a> {
    pub(in crate::runtime::dynamic) sh: &'a Shared,
    pub(in crate::runtime::dynamic) frame: &'a Frame,
    pub(in crate::runtime::dynamic) sel: Resolved<'a>,
    pub(in crate::runtime::dynamic) weights: &'a Weights,
    pub(in crate::runtime::dynamic) inputs: &'a [Value],
    pub(in crate::runtime::dynamic) waves: Waves,
    /// Whether fused groups run through the strip executor.
    pub(in crate::runtime::dynamic) fusion: bool,
    pub(in crate::runtime::dynamic) read: OutputSet,
}

impl<'a> Walk<'a> {
    /// Runs the frame's steps into `work`, whose values of nodes already
    /// run this frame (a pipelined first stage's) are kept. `carry`: the
    /// pipeline's states and held values, which calls read and the frame's
    /// last steps update; `None` in a pipelined first stage, which reads
    /// neither and may only compute (any other step fails the frame).
    pub(in crate::runtime::dynamic) fn run(
        &self,
        work: &mut Work,
        mut carry: Option<&mut Carry>,
        obs: &mut dyn Observer,
    ) -> Result<DynOutputs, PipelineError> {
        let sh = self.sh;
        let mut phase = self.sel.plan(sh);
        let mut mask = 0u64;
        let n_outputs = if carry.is_some() {
            sh.ir.outputs.len()
        } else {
            0
        };
        let mut outputs: Vec<Option<Value>> = vec![None; n_outputs];
        for step in &self.frame.steps {
            match step {
                Step::Call { node, when } => {
                    if runs(*when, phase, *node) {
                        let (mut vals, _) = work.split(carry.as_deref());
                        call(sh, self.weights, self.inputs, &mut vals, *node, obs)?;
                    }
                }
                Step::Group { group, when } => {
                    let live = |n: NodeId| runs(*when, phase, n);
                    self.group(work, carry.as_deref(), *group, &live, obs)?;
                }
                Step::Wave(units) => self.wave(work, carry.as_deref(), units, phase, obs)?,
                step => {
                    let Some(carry) = carry.as_deref_mut() else {
                        return Err(PipelineError::Internal(
                            "a pipelined first stage holds more than calls",
                        ));
                    };
                    if let Step::DecidePhase = step {
                        if let Some((m, p)) = self.decide_phase(work, carry)? {
                            (mask, phase) = (m, p);
                        }
                    } else {
                        self.finish(step, work, carry, (phase, mask), &mut outputs)?;
                    }
                }
            }
        }
        Ok(DynOutputs {
            names: sh.outputs.clone(),
            values: outputs,
        })
    }

    /// The rates of the mode run, when it has any.
    fn rated(&self) -> Option<&'a RatedMode> {
        match self.sel {
            Resolved::Mode(m) => self.sh.program.modes[m].rates.as_ref(),
            Resolved::Plan(_) => None,
        }
    }

    /// A rated mode's phase this frame, the one place it is decided: per
    /// rate, its node is held (bit set in the mask, its readers reading
    /// the held value) when its held value is younger than its rate (and
    /// rates are on) and its trigger is false. `None` for a frame without
    /// rates.
    fn decide_phase(
        &self,
        work: &mut Work,
        carry: &Carry,
    ) -> Result<Option<(u64, &'a Plan)>, PipelineError> {
        let (Some(r), Resolved::Mode(m)) = (self.rated(), self.sel) else {
            return Ok(None);
        };
        let mut mask = 0u64;
        for (i, rate) in r.rates.iter().enumerate() {
            let due = !carry.rates_on || carry.holds[rate.slot].due(carry.frame, rate.every);
            if due || self.trigger(work, carry, m, i)? {
                continue;
            }
            mask |= 1 << i;
            work.holding[rate.node as usize] = Some(rate.slot);
        }
        let phase = r
            .phases
            .phases
            .get(mask as usize)
            .ok_or(PipelineError::Internal(
                "a phase outside the mode's phase plans",
            ))?;
        Ok(Some((mask, phase)))
    }

    /// Whether rate `rate` of mode `m`'s trigger is true this frame.
    fn trigger(
        &self,
        work: &Work,
        carry: &Carry,
        m: usize,
        rate: usize,
    ) -> Result<bool, PipelineError> {
        let sh = self.sh;
        let r = &sh.ir.modes[m].rates[rate];
        let Some(t) = &r.trigger else {
            return Ok(false);
        };
        let outside = Outside::of(&work.holding, Some(carry));
        let value = outside.read(&work.values, &work.ran, t.source, self.inputs);
        let fields: SmallVec<[&str; 2]> = t.fields.iter().map(|f| &**f).collect();
        value
            .and_then(|v| sh.table.read_flag(&**v, &fields))
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

    /// Runs one wave's units: a group first (its members read each other),
    /// then the wave's single nodes, which read none of its values, at
    /// once or in order as [`Walk::waves`] says.
    fn wave(
        &self,
        work: &mut Work,
        carry: Option<&Carry>,
        units: &[Unit],
        phase: &Plan,
        obs: &mut dyn Observer,
    ) -> Result<(), PipelineError> {
        if self.waves == Waves::SecondStage {
            crate::runtime::generated::yield_to_first_stage();
        }
        let mut singles: SmallVec<[NodeId; 8]> = SmallVec::new();
        for unit in units {
            match unit {
                Unit::Call(n) if phase.is_live(*n) => singles.push(*n),
                Unit::Call(_) => {}
                Unit::Group(g) => {
                    let live = |n: NodeId| phase.is_live(n);
                    self.group(work, carry, *g, &live, obs)?;
                }
            }
        }
        let (mut vals, _) = work.split(carry);
        if self.waves != Waves::InOrder && singles.len() > 1 {
            self.call_wave(&mut vals, &singles, obs)
        } else {
            for &node in &singles {
                call(self.sh, self.weights, self.inputs, &mut vals, node, obs)?;
            }
            Ok(())
        }
    }

    /// Runs fused group `group` of the frame (or its members' calls), its
    /// members running by `live` and the values outside it planned by the
    /// frame's plan (computed or held this frame).
    fn group(
        &self,
        work: &mut Work,
        carry: Option<&Carry>,
        group: usize,
        live: &dyn Fn(NodeId) -> bool,
        obs: &mut dyn Observer,
    ) -> Result<(), PipelineError> {
        let plan = self.sel.plan(self.sh);
        let planned = |n: NodeId| plan.is_live(n);
        let step = GroupStep {
            sh: self.sh,
            frame: self.frame,
            group,
            weights: self.weights,
            inputs: self.inputs,
            live,
            planned: &planned,
            on: self.fusion,
            // A plan chosen at run time runs the full graph's groups.
            run_time: matches!(self.sel, Resolved::Plan(_)),
        };
        let (mut vals, groups) = work.split(carry);
        groups.run(&step, &mut vals, obs)
    }

    /// The single nodes of one wave at once on the worker pool, each into
    /// its own value; the first error in wave order fails the frame.
    fn call_wave(
        &self,
        vals: &mut Values<'_>,
        nodes: &[NodeId],
        obs: &mut dyn Observer,
    ) -> Result<(), PipelineError> {
        use rayon::prelude::*;
        let (sh, weights, inputs) = (self.sh, self.weights, self.inputs);
        // The observer is not shared between workers: the wave's nodes
        // begin together and end together.
        nodes.iter().for_each(|&n| obs.node_begin(n));
        let mut outs: Vec<(NodeId, Option<Value>)> = nodes
            .iter()
            .map(|&n| (n, vals.values[n as usize].take()))
            .collect();
        let v: &Values<'_> = vals;
        let results: Vec<Result<(), PipelineError>> = outs
            .par_iter_mut()
            .map(|(n, out)| invoke(sh, *n, out, weights, inputs, |e| v.get(e, inputs)))
            .collect();
        nodes.iter().for_each(|&n| obs.node_end(n));
        let mut first = Ok(());
        for ((n, out), r) in outs.into_iter().zip(results) {
            vals.values[n as usize] = out;
            vals.ran[n as usize] = r.is_ok();
            if first.is_ok() {
                first = r;
            }
        }
        first
    }

    /// One of a frame's last steps: an output handed back, a state
    /// committed or reset, a held value kept or forgotten, the frame
    /// counted; `phase` and `mask` as the frame's phase decision left them.
    fn finish(
        &self,
        step: &Step,
        work: &mut Work,
        carry: &mut Carry,
        (phase, mask): (&Plan, u64),
        outputs: &mut [Option<Value>],
    ) -> Result<(), PipelineError> {
        let sh = self.sh;
        match step {
            Step::Output { index, .. } if !self.read.contains(*index) => {}
            Step::Output { index, node } => {
                let v = work.visible(carry, *node).cloned();
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
                    carry.reset_state(sh, *state);
                } else if let Some(v) = work.visible(carry, *node).cloned() {
                    let s = *state as usize;
                    let old = std::mem::replace(&mut carry.states[s], v);
                    carry.fresh[s] = true;
                    if *swap && work.ran[*node as usize] {
                        // The state's last value becomes the writer's
                        // buffer for the next frame.
                        work.values[*node as usize] = Some(old);
                    }
                }
            }
            Step::ResetState { state } => carry.reset_state(sh, *state),
            Step::KeepHold { rate } => {
                if let Some(r) = self.rated().and_then(|r| r.rates.get(*rate)) {
                    let id = r.node as usize;
                    if work.ran[id] {
                        // The held value and the node's buffer trade
                        // places, as generated code's do: a copy shared by
                        // both would make the node's next fill allocate
                        // anew. Nothing reads the node's value after this
                        // step in the frame.
                        let computed = work.values[id].take();
                        work.values[id] = std::mem::replace(&mut carry.held[r.slot], computed);
                        carry.holds[r.slot].computed_at = Some(carry.frame);
                    }
                    carry.holds[r.slot].held_last_frame = mask & (1 << rate) != 0;
                }
            }
            Step::ForgetHold { slot } => carry.forget(*slot),
            Step::NextFrame => carry.frame = carry.frame.wrapping_add(1),
            Step::Call { .. } | Step::Group { .. } | Step::Wave(_) | Step::DecidePhase => {}
        }
        Ok(())
    }
}

/// Calls node `id`'s op into `out`, its value arguments read by `value`
/// ([`Values::get`]).
fn invoke<'v>(
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
