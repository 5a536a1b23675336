//! A fused group's DAG: its inputs, its members in order (each reading
//! group inputs or earlier members), the values that leave it, and the
//! geometry every member computes for given input geometries.

use super::erased::AnyPlane;
use super::error::StripError;
use super::geometry::Geometry;
use super::kernel::Kind;
use super::member::Member;

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

/// A checked group's structure; it never changes after building.
pub(crate) struct Dag {
    pub(crate) inputs: usize,
    pub(crate) nodes: Vec<Node>,
    /// Member index of each output.
    pub(crate) outputs: Vec<usize>,
    /// Per member: whether it may decline a frame alone ([`detachable`]).
    pub(crate) detachable: Vec<bool>,
    /// Its members' names joined by `+`: the key of its strip decisions.
    pub(crate) signature: String,
}

/// Per member: the geometry of the rows it computes and of its value.
pub(crate) struct Sizes {
    pub(crate) rows: Vec<Geometry>,
    pub(crate) values: Vec<Geometry>,
    /// Per member: its arguments' geometries.
    pub(crate) args: Vec<Vec<Geometry>>,
    /// Per member: whether it declined these inputs alone (it computes
    /// nothing; its rows and value are empty).
    pub(crate) declined: Vec<bool>,
}

impl Dag {
    /// Checks the rules of a group: every member's value is read by a
    /// later member or leaves the group, and a reduction's result leaves it
    /// (it needs every row, so nothing in the same strip can read it).
    ///
    /// # Errors
    /// [`StripError::Group`] naming the member that breaks a rule.
    pub(crate) fn new(
        inputs: usize,
        nodes: Vec<Node>,
        outputs: Vec<usize>,
    ) -> Result<Dag, StripError> {
        let n = nodes.len();
        let mut read = vec![false; n];
        for node in &nodes {
            for a in &node.args {
                if let Value::Node(j) = *a {
                    read[j] = true;
                    if matches!(nodes[j].member.kind(), Kind::Reduction(_)) {
                        return Err(StripError::Group(format!(
                            "`{}` reads the reduction `{}`, whose result needs every row: run it in a later group",
                            node.member.name(),
                            nodes[j].member.name()
                        )));
                    }
                }
            }
        }
        for (i, node) in nodes.iter().enumerate() {
            if !read[i] && node.output.is_none() {
                return Err(StripError::Group(format!(
                    "the value of `{}` is neither read nor an output",
                    node.member.name()
                )));
            }
        }
        let signature = nodes
            .iter()
            .map(|n| n.member.name())
            .collect::<Vec<_>>()
            .join("+");
        let detachable = detachable(&nodes);
        Ok(Dag {
            inputs,
            nodes,
            outputs,
            detachable,
            signature,
        })
    }

    /// The rows above plus below of its widest member window.
    pub(crate) fn widest_window(&self) -> usize {
        self.nodes
            .iter()
            .map(|n| {
                let w = n.member.kind().window();
                w.above + w.below
            })
            .max()
            .unwrap_or(0)
    }

    /// The name of the member whose value is output `k`.
    pub(crate) fn output_name(&self, k: usize) -> &str {
        self.nodes[self.outputs[k]].member.name()
    }

    /// Checks the inputs and computes every member's geometries.
    pub(crate) fn sizes(&self, inputs: &[AnyPlane<'_>]) -> Result<Sizes, StripError> {
        if inputs.len() != self.inputs {
            return Err(StripError::Group(format!(
                "{} inputs given, the group takes {}",
                inputs.len(),
                self.inputs
            )));
        }
        let mut unusable = Vec::new();
        let mut refusal = None;
        for (k, p) in inputs.iter().enumerate() {
            let g = p.geometry();
            if p.rows() != (0..g.height) {
                return Err(StripError::Group(format!("input {k} is not a whole plane")));
            }
            if let Err(e) = g.check(&format!("input {k}")) {
                // An input only members that may decline alone read (a
                // previous frame that does not exist yet): they decline.
                let readers_may_decline = self
                    .nodes
                    .iter()
                    .enumerate()
                    .all(|(i, n)| self.detachable[i] || !n.args.contains(&Value::Input(k)));
                if !readers_may_decline {
                    return Err(e);
                }
                unusable.push(k);
                refusal.get_or_insert(e);
            }
        }
        let mut rows = Vec::with_capacity(self.nodes.len());
        let mut values = Vec::with_capacity(self.nodes.len());
        let mut all_args = Vec::with_capacity(self.nodes.len());
        let mut declined = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let mut args = Vec::with_capacity(node.args.len());
            for a in &node.args {
                args.push(match *a {
                    Value::Input(k) => inputs[k].geometry(),
                    Value::Node(j) => values[j],
                });
            }
            let reads_unusable = node
                .args
                .iter()
                .any(|a| matches!(a, Value::Input(k) if unusable.contains(k)));
            let geometries = if reads_unusable {
                Err(StripError::Group("reads an unusable input".into()))
            } else {
                node.member.geometries(&args)
            };
            match geometries {
                Ok((r, v)) => {
                    rows.push(r);
                    values.push(v);
                    declined.push(false);
                }
                // A member nothing in the group reads may decline alone;
                // the group runs if anything is left to compute.
                Err(e) if self.detachable[rows.len()] => {
                    refusal.get_or_insert(e);
                    rows.push(Geometry::new(0, 0));
                    values.push(Geometry::new(0, 0));
                    declined.push(true);
                }
                Err(e) => return Err(e),
            }
            all_args.push(args);
        }
        if let Some(e) = refusal {
            if self.outputs.iter().all(|&i| declined[i]) {
                return Err(e);
            }
        }
        Ok(Sizes {
            rows,
            values,
            args: all_args,
            declined,
        })
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
