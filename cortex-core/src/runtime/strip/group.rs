//! Building a fused group: its inputs, its members (kernels and
//! reductions, each reading earlier values), and the values that leave it.

use std::sync::Mutex;

use super::error::StripError;
use super::geometry::Geometry;
use super::kernel::{Kind, StripKernel, StripReduction};
use super::member::{KernelMember, Member, ReductionMember, Store};

/// A value of a group: one of its inputs or one of its members' results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Value {
    /// Input `i` of the group (a whole plane the caller passes to each run).
    Input(usize),
    /// The result of member `i`, in the order they were added.
    Node(usize),
}

/// A member with its arguments.
pub(crate) struct Node {
    pub(crate) member: Box<dyn Member>,
    pub(crate) args: Vec<Value>,
    /// Its index among the group's outputs, when its value leaves the group.
    pub(crate) output: Option<usize>,
}

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
        let n = self.nodes.len();
        let mut read = vec![false; n];
        for node in &self.nodes {
            for a in &node.args {
                if let Value::Node(j) = *a {
                    read[j] = true;
                    if matches!(self.nodes[j].member.kind(), Kind::Reduction(_)) {
                        return Err(StripError::Group(format!(
                            "`{}` reads the reduction `{}`, whose result needs every row: run it in a later group",
                            node.member.name(),
                            self.nodes[j].member.name()
                        )));
                    }
                }
            }
        }
        for (i, node) in self.nodes.iter().enumerate() {
            if !read[i] && node.output.is_none() {
                return Err(StripError::Group(format!(
                    "the value of `{}` is neither read nor an output",
                    node.member.name()
                )));
            }
        }
        let staging: Vec<Store> = self
            .outputs
            .iter()
            .map(|&i| self.nodes[i].member.new_store())
            .collect();
        let folded: Vec<Store> = self
            .outputs
            .iter()
            .map(|&i| self.nodes[i].member.new_out_store())
            .collect();
        let published: Vec<Store> = self
            .outputs
            .iter()
            .map(|&i| self.nodes[i].member.new_out_store())
            .collect();
        let signature = self
            .nodes
            .iter()
            .map(|n| n.member.name())
            .collect::<Vec<_>>()
            .join("+");
        let detachable = detachable(&self.nodes);
        Ok(FusedGroup {
            inputs: self.inputs,
            nodes: self.nodes,
            outputs: self.outputs,
            staging,
            folded,
            published,
            published_geometry: Vec::new(),
            declined: Vec::new(),
            detachable,
            internal: Vec::new(),
            arenas: Mutex::new(Vec::new()),
            signature,
            plan: None,
            refused: None,
            tuning: None,
            chosen: None,
        })
    }
}

/// A checked group, ready to run fused ([`FusedGroup::run`]) or each member
/// over whole frames ([`FusedGroup::run_unfused`]). It keeps its buffers
/// between runs, so steady-state runs reuse them.
pub struct FusedGroup {
    pub(crate) inputs: usize,
    pub(crate) nodes: Vec<Node>,
    /// Member index of each output.
    pub(crate) outputs: Vec<usize>,
    /// Per output: the rows written by the strips (a reduction's partials).
    pub(crate) staging: Vec<Store>,
    /// Per output of a reduction: its folded result before publishing.
    pub(crate) folded: Vec<Store>,
    /// Per output: the last successful run's value.
    pub(crate) published: Vec<Store>,
    /// Per output: that value's geometry (empty before the first run).
    pub(crate) published_geometry: Vec<Geometry>,
    /// Per output: whether its member declined the last run (no value).
    pub(crate) declined: Vec<bool>,
    /// Per member: whether it may decline a frame alone ([`detachable`]).
    pub(crate) detachable: Vec<bool>,
    /// Per member: a whole-frame buffer, used by unfused runs only.
    pub(crate) internal: Vec<Store>,
    /// Per-worker scratch: one buffer per member, of a strip's rows plus halo.
    pub(crate) arenas: Mutex<Vec<Vec<Store>>>,
    /// The sizes and strip rows of the last run's input geometries.
    pub(crate) plan: Option<super::exec::RunPlan>,
    /// The input geometries (and strip setting) the last run refused.
    pub(crate) refused: Option<(Vec<super::geometry::Geometry>, super::exec::Strips)>,
    /// Its members' names joined by `+`: the key of its strip decisions.
    pub(crate) signature: String,
    /// The strip heights being measured at the current input size.
    pub(crate) tuning: Option<super::tune::Tuning>,
    /// The strips chosen for these input geometries and thread count.
    pub(crate) chosen: Option<(Vec<super::geometry::Geometry>, usize, super::exec::Strips)>,
}

impl std::fmt::Debug for FusedGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FusedGroup")
            .field("inputs", &self.inputs)
            .field(
                "members",
                &self
                    .nodes
                    .iter()
                    .map(|n| n.member.name())
                    .collect::<Vec<_>>(),
            )
            .field("outputs", &self.outputs)
            .finish()
    }
}

/// Per member: whether it may decline a frame alone while the rest of its
/// group runs fused ([`crate::model::access::may_decline_alone`], the rule
/// the macro's code generation applies too).
pub(crate) fn detachable(nodes: &[Node]) -> Vec<bool> {
    let leaving: Vec<bool> = nodes.iter().map(|n| n.output.is_some()).collect();
    let reads: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| {
            n.args
                .iter()
                .filter_map(|a| match *a {
                    Value::Node(j) => Some(j),
                    Value::Input(_) => None,
                })
                .collect()
        })
        .collect();
    crate::model::access::may_decline_alone(&leaving, &reads)
}
