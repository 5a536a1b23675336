//! A fused group: built from its members ([`GroupBuilder`]), it holds
//! its DAG, its schedule at the current input size, its execution state and
//! its tuning, and runs fused or unfused — as asked, or as its tuning
//! decides.

use std::time::Instant;

use super::dag::{Dag, Node};
use super::erased::AnyPlane;
use super::error::StripError;
use super::exec;
use super::geometry::{Element, Geometry};
use super::kernel::{Kind, StripKernel, StripReduction};
use super::member::{KernelMember, Member, ReductionMember};
use super::plane::Plane;
use super::schedule::Schedule;
use super::state::State;
use super::strips::Strips;
use super::tune::{self, Setting, Tuner};

pub use super::dag::Value;

/// Collects a group's members; [`GroupBuilder::build`] checks and seals it.
///
/// Members can read only values that exist when they are added, so a group
/// is a DAG in the order of its members.
#[derive(Default)]
pub struct GroupBuilder {
    inputs: usize,
    nodes: Vec<Node>,
    outputs: Vec<usize>,
}

impl GroupBuilder {
    /// An empty group.
    pub fn new() -> Self {
        Self::default()
    }

    /// A new input of the group.
    pub fn input(&mut self) -> Value {
        self.inputs += 1;
        Value::Input(self.inputs - 1)
    }

    /// Adds a kernel reading `args`.
    ///
    /// # Errors
    /// [`StripError::Group`] when an argument does not exist yet or the
    /// kernel calls itself a reduction.
    pub fn kernel<K: StripKernel + 'static>(
        &mut self,
        kernel: K,
        args: &[Value],
    ) -> Result<Value, StripError> {
        if matches!(kernel.kind(), Kind::Reduction(_)) {
            return Err(StripError::Group(format!(
                "`{}` says it is a reduction: implement `StripReduction` for it",
                kernel.name()
            )));
        }
        self.push(Box::new(KernelMember(kernel)), args)
    }

    /// Adds a reduction reading `args`. Its result leaves the group: mark it
    /// with [`GroupBuilder::output`].
    ///
    /// # Errors
    /// [`StripError::Group`] when an argument does not exist yet or there
    /// is none.
    pub fn reduction<R: StripReduction + 'static>(
        &mut self,
        reduction: R,
        args: &[Value],
    ) -> Result<Value, StripError> {
        if args.is_empty() {
            return Err(StripError::Group(format!(
                "reduction `{}` needs an input",
                reduction.name()
            )));
        }
        self.push(Box::new(ReductionMember(reduction)), args)
    }

    fn push(&mut self, member: Box<dyn Member>, args: &[Value]) -> Result<Value, StripError> {
        for a in args {
            let exists = match *a {
                Value::Input(i) => i < self.inputs,
                Value::Node(i) => i < self.nodes.len(),
            };
            if !exists {
                return Err(StripError::Group(format!(
                    "`{}` reads {a:?}, which does not exist",
                    member.name()
                )));
            }
        }
        self.nodes.push(Node {
            member,
            args: args.to_vec(),
            output: None,
        });
        Ok(Value::Node(self.nodes.len() - 1))
    }

    /// Marks `value` as leaving the group: it is written to a whole-frame
    /// buffer, read after the run with [`FusedGroup::output`]. Returns its
    /// output index.
    ///
    /// # Errors
    /// [`StripError::Group`] for a group input, a missing member, or a value
    /// marked twice.
    pub fn output(&mut self, value: Value) -> Result<usize, StripError> {
        let Value::Node(i) = value else {
            return Err(StripError::Group(format!(
                "{value:?} is an input, not a computed value"
            )));
        };
        let node = self
            .nodes
            .get_mut(i)
            .ok_or_else(|| StripError::Group(format!("no member {i}")))?;
        if node.output.is_some() {
            return Err(StripError::Group(format!(
                "`{}` is already an output",
                node.member.name()
            )));
        }
        node.output = Some(self.outputs.len());
        self.outputs.push(i);
        Ok(self.outputs.len() - 1)
    }

    /// Checks the group and makes it runnable: every member's value is read
    /// by a later member or leaves the group, and a reduction's result
    /// leaves it (it needs every row, so nothing in the same strip can read
    /// it).
    ///
    /// # Errors
    /// [`StripError::Group`] naming the member that breaks a rule.
    pub fn build(self) -> Result<FusedGroup, StripError> {
        let dag = Dag::new(self.inputs, self.nodes, self.outputs)?;
        Ok(FusedGroup {
            state: State::new(&dag),
            dag,
            schedule: Schedule::default(),
            tuner: Tuner::default(),
        })
    }
}

/// A checked group, ready to run fused ([`FusedGroup::run`]) or each member
/// over whole frames ([`FusedGroup::run_unfused`]). It keeps its buffers
/// between runs, so steady-state runs reuse them.
pub struct FusedGroup {
    /// Its members, inputs and outputs.
    dag: Dag,
    /// The plan of its last run's input size.
    schedule: Schedule,
    /// Its buffers and published values.
    state: State,
    /// Its strip choice.
    tuner: Tuner,
}

impl std::fmt::Debug for FusedGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FusedGroup")
            .field("inputs", &self.dag.inputs)
            .field(
                "members",
                &self
                    .dag
                    .nodes
                    .iter()
                    .map(|n| n.member.name())
                    .collect::<Vec<_>>(),
            )
            .field("outputs", &self.dag.outputs)
            .finish()
    }
}

impl FusedGroup {
    /// The number of inputs each run takes.
    pub fn input_count(&self) -> usize {
        self.dag.inputs
    }

    /// The number of values leaving the group.
    pub fn output_count(&self) -> usize {
        self.dag.outputs.len()
    }

    /// Runs the group fused: strips of rows spread over rayon's pool, each
    /// computing every member's rows plus the halo its consumers read, the
    /// values that stay in the group in per-worker scratch, those that leave
    /// written to whole-frame outputs; reductions folded in row order at the
    /// end. Bit-identical to [`FusedGroup::run_unfused`] for any strip count
    /// when the kernels keep their contract (a row's value does not depend
    /// on the strip computing it).
    ///
    /// # Errors
    /// A geometry or input error before anything runs; the first failing
    /// strip's error (in strip order) otherwise. On error the outputs keep
    /// the previous run's values.
    pub fn run(&mut self, inputs: &[AnyPlane<'_>], strips: Strips) -> Result<(), StripError> {
        let plan = self.schedule.prepare(&self.dag, inputs, strips)?;
        exec::fused(&self.dag, plan, &mut self.state, inputs)
    }

    /// Runs the group as the [`tune::policy`] says: a forced setting, or
    /// the one measured for this group, input size and thread count
    /// (measuring it over the first runs at a new size) — fused with some
    /// strip height, or its members unfused when fusing does not make the
    /// group faster. Either way the same outputs, published the same way.
    ///
    /// # Errors
    /// As [`FusedGroup::run`].
    pub fn run_tuned(&mut self, inputs: &[AnyPlane<'_>]) -> Result<(), StripError> {
        if let Some(setting) = tune::policy().forced() {
            return self.run_setting(inputs, setting);
        }
        let window = self.dag.widest_window();
        let (setting, measured) = self.tuner.next(&self.dag.signature, inputs, window);
        if !measured {
            return self.run_setting(inputs, setting);
        }
        let started = Instant::now();
        let r = self.run_setting(inputs, setting);
        if let Some(chosen) = self.tuner.record(started, r.is_ok(), &self.dag.signature) {
            // The candidate not chosen leaves its buffers behind: the
            // unfused runs' whole frames, or the fused runs' scratch and
            // folded constants.
            let unfused = chosen == Setting::Unfused;
            self.state.release(unfused);
            if unfused {
                self.schedule.release_plan();
            }
        }
        r
    }

    /// Runs the group with `setting`: fused with its strips, or unfused.
    ///
    /// # Errors
    /// As [`FusedGroup::run`].
    pub fn run_setting(
        &mut self,
        inputs: &[AnyPlane<'_>],
        setting: Setting,
    ) -> Result<(), StripError> {
        match setting {
            Setting::Fused(strips) => self.run(inputs, strips),
            Setting::Unfused => self.run_unfused(inputs),
        }
    }

    /// The setting chosen for the last input size measured or looked up
    /// ([`FusedGroup::run_tuned`]), once chosen: strips, or unfused.
    pub fn setting_chosen(&self) -> Option<Setting> {
        self.tuner.chosen()
    }

    /// Runs each member over whole frames, one after the other, every
    /// intermediate value a whole-frame buffer: the reference a fused run is
    /// compared with, and the way to run a pipeline without fusion.
    ///
    /// # Errors
    /// As [`FusedGroup::run`].
    pub fn run_unfused(&mut self, inputs: &[AnyPlane<'_>]) -> Result<(), StripError> {
        let sizes = self.schedule.whole(&self.dag, inputs)?;
        exec::unfused(&self.dag, sizes, &mut self.state, inputs)
    }

    /// Output `k`'s value from the last successful run, as a plane of `T`.
    ///
    /// # Errors
    /// [`StripError::Group`] before any run or for a missing output;
    /// [`StripError::Type`] for another element type.
    pub fn output<T: Element>(&self, k: usize) -> Result<Plane<'_, T>, StripError> {
        self.state.output(&self.dag, k)
    }

    /// Whether output `k` has a value from the last run: `false` before any
    /// run and when its member declined that run alone
    /// ([`FusedGroup::declined`]).
    pub fn published(&self, k: usize) -> bool {
        self.state.published(k)
    }

    /// The members that declined the last run alone: their inputs were of a
    /// geometry they refuse (a first frame without a previous one, a size
    /// their parameters do not divide), while the rest of the group ran
    /// fused. Such a member's value leaves the group and none of the others
    /// reads it, so its caller computes it with the member's own call.
    pub fn declined(&self) -> Vec<&str> {
        self.state.declined(&self.dag)
    }

    /// Exchanges output `k`'s buffer with `buf` (no copy): `buf` receives the
    /// value, the group keeps `buf`'s old allocation for a later run.
    ///
    /// # Errors
    /// As [`FusedGroup::output`].
    pub fn swap_output<T: Element>(
        &mut self,
        k: usize,
        buf: &mut Vec<T>,
    ) -> Result<Geometry, StripError> {
        self.state.swap_output(&self.dag, k, buf)
    }

    /// The geometry of argument `arg` of the member whose value is output
    /// `k`, in the last successful run, fused or unfused (e.g. the frame a
    /// reduction folded).
    pub fn output_argument_geometry(&self, k: usize, arg: usize) -> Option<Geometry> {
        self.state.argument_geometry(k, arg)
    }

    /// Bytes of per-worker scratch the fused runs hold (every worker's),
    /// and of the folded members' whole values.
    pub fn scratch_bytes(&self) -> usize {
        let folded: usize = self.schedule.plan.as_ref().map_or(0, |p| {
            p.constants
                .iter()
                .zip(&self.dag.nodes)
                .filter_map(|(c, n)| c.as_ref().map(|s| n.member.bytes(s)))
                .sum()
        });
        self.state.scratch_bytes(&self.dag) + folded
    }

    /// The members whose values the planned run computes once per input
    /// geometry instead of every run (empty before the first run).
    pub fn folded(&self) -> Vec<&str> {
        let Some(plan) = &self.schedule.plan else {
            return Vec::new();
        };
        self.dag
            .nodes
            .iter()
            .zip(&plan.constants)
            .filter(|(_, c)| c.is_some())
            .map(|(n, _)| n.member.name())
            .collect()
    }

    /// Bytes of the whole-frame intermediate buffers the unfused runs hold
    /// (values that stay in the group; outputs not counted).
    pub fn unfused_intermediate_bytes(&self) -> usize {
        self.state.unfused_intermediate_bytes(&self.dag)
    }
}
