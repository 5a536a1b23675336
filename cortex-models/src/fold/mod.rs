//! What tract may compute from a model's constants while loading it, bounded
//! from the ONNX graph before tract sees the model.
//!
//! tract evaluates every node whose inputs are all known — during its
//! analysis as soon as the facts are known, then again when it optimises —
//! and only afterwards weighs the result: a few bytes of graph
//! (`ConstantOfShape` of 100000×100000, `Range(0, 3e9)`, an `Expand` or a
//! `Tile` of a constant) make it allocate gigabytes at load. So the graph is
//! walked here first, in topological order, tracking which values are known
//! at load (initializers, `Constant` nodes, the `Shape` of a tensor whose
//! shape is known, and the outputs of nodes over known values only), their
//! shapes, and the values of small numeric ones (the shape vectors that
//! feed `ConstantOfShape`, `Expand`, `Reshape`, `Tile`, `Range`, `Resize`,
//! …). Every node over known values gets an upper bound on its output's
//! element count; over [`MAX_TENSOR_ELEMENTS`], or unknown, it is refused,
//! and so is a model whose computed constants add up to more than
//! [`MAX_FOLD_BYTES`]. Shapes of the other values are inferred for the
//! common operators so that a `Shape` of them is known as tract would know
//! it.

mod elementwise;
mod infer;
mod val;

use std::collections::HashMap;

use tract_onnx::pb::{self, attribute_proto::AttributeType};

use infer::infer;
use val::*;

use crate::check::MAX_TENSOR_ELEMENTS;
use crate::error::Problem;

/// The most bytes the constants tract computes while loading a model may
/// add up to (the sum of every computed constant's bound, whether tract
/// keeps it or not): 2³¹, 2 GiB. Weights a model converts at load
/// (a transposition, a cast, a dequantisation) count once per step; a file
/// of at most 512 MiB stays well inside.
pub const MAX_FOLD_BYTES: u64 = 1 << 31;

/// The most characters of a node's name or op quoted in an error: the
/// strings are the file's own.
const MAX_NAME_CHARS: usize = 80;

/// A node's name for errors: its own, else its first output's, else its
/// position; at most [`MAX_NAME_CHARS`] characters, on one line.
fn node_name(node: &pb::NodeProto, index: usize) -> String {
    let raw = if !node.name.is_empty() {
        node.name.as_str()
    } else {
        node.output.first().map_or("", String::as_str)
    };
    if raw.is_empty() {
        return format!("#{index}");
    }
    clean(raw)
}

/// A string of the file, quotable in a one-line message.
fn clean(s: &str) -> String {
    let mut out: String = s
        .chars()
        .take(MAX_NAME_CHARS)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if s.chars().count() > MAX_NAME_CHARS {
        out.push('…');
    }
    out
}

/// The bytes of constants computed so far, against [`MAX_FOLD_BYTES`].
struct Budget {
    bytes: u64,
}

/// The values a graph sees: its own, then its parents' (a control-flow
/// body reads the values around it without copying them).
struct Scope<'a> {
    own: HashMap<String, Val>,
    parent: Option<&'a Scope<'a>>,
}

impl Scope<'_> {
    fn get(&self, name: &str) -> Option<&Val> {
        self.own
            .get(name)
            .or_else(|| self.parent.and_then(|p| p.get(name)))
    }
}

/// Checks everything tract may compute from the constants of `graph` while
/// loading it, `input` being fixed at `shape`.
///
/// # Errors
/// [`Problem::FoldTooLarge`], [`Problem::FoldUnbounded`] or
/// [`Problem::FoldBudget`] for the first node in topological order that
/// breaks the rule.
pub(crate) fn check_folding(
    graph: &pb::GraphProto,
    input: &str,
    shape: [usize; 4],
) -> Result<(), Problem> {
    let mut scope = Scope {
        own: HashMap::new(),
        parent: None,
    };
    let fixed = Val::runtime(1, Some(shape.iter().map(|&d| d as u64).collect()));
    let mut budget = Budget { bytes: 0 };
    walk(graph, &mut scope, &mut budget, Some((input, fixed)))
}

/// Walks `graph` (the main one or a body of a control-flow node, which sees
/// its parents' values in `scope`).
fn walk(
    graph: &pb::GraphProto,
    scope: &mut Scope<'_>,
    budget: &mut Budget,
    fixed: Option<(&str, Val)>,
) -> Result<(), Problem> {
    // A body's own inputs are run-time values; the main graph's one input
    // has its fixed shape. An initializer of the same name stands for it.
    for i in &graph.input {
        let v = match &fixed {
            Some((name, v)) if *name == i.name => v.clone(),
            _ => Val::unknown(),
        };
        scope.own.insert(i.name.clone(), v);
    }
    for init in &graph.initializer {
        scope.own.insert(init.name.clone(), tensor_val(init));
    }
    for s in &graph.sparse_initializer {
        if let Some(v) = &s.values {
            let d: Vec<u64> = s.dims.iter().map(|&d| d.max(0) as u64).collect();
            scope
                .own
                .insert(v.name.clone(), Val::known(v.data_type, d, None));
        }
    }
    // Kahn's order: a hostile file need not list its nodes sorted, and tract
    // sorts them itself.
    let produced: HashMap<&str, usize> = graph
        .node
        .iter()
        .enumerate()
        .flat_map(|(i, n)| n.output.iter().map(move |o| (o.as_str(), i)))
        .collect();
    let mut waiting: Vec<usize> = vec![0; graph.node.len()];
    let mut consumers: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, n) in graph.node.iter().enumerate() {
        for inp in n.input.iter().filter(|s| !s.is_empty()) {
            if let Some(&p) = produced.get(inp.as_str()) {
                if p != i && scope.get(inp).is_none() {
                    waiting[i] += 1;
                    consumers.entry(p).or_default().push(i);
                }
            }
        }
    }
    let mut ready: Vec<usize> = (0..graph.node.len())
        .filter(|&i| waiting[i] == 0)
        .rev()
        .collect();
    while let Some(i) = ready.pop() {
        let node = &graph.node[i];
        visit(node, i, scope, budget)?;
        for &c in consumers.get(&i).map_or(&[][..], Vec::as_slice) {
            waiting[c] -= 1;
            if waiting[c] == 0 {
                ready.push(c);
            }
        }
    }
    // Nodes left waiting are in a cycle, which tract refuses.
    Ok(())
}

/// Checks one node and records its outputs in `scope`.
fn visit(
    node: &pb::NodeProto,
    index: usize,
    scope: &mut Scope<'_>,
    budget: &mut Budget,
) -> Result<(), Problem> {
    let ins: Vec<Option<Val>> = node
        .input
        .iter()
        .map(|n| (!n.is_empty()).then(|| scope.get(n).cloned().unwrap_or_else(Val::unknown)))
        .collect();
    let refs: Vec<Option<&Val>> = ins.iter().map(Option::as_ref).collect();
    let bodies: Vec<&pb::GraphProto> = node
        .attribute
        .iter()
        .filter(|a| {
            a.r#type == AttributeType::Graph as i32
                || a.r#type == AttributeType::Graphs as i32
                || a.g.is_some()
                || !a.graphs.is_empty()
        })
        .flat_map(|a| a.g.iter().chain(&a.graphs))
        .collect();
    let mut outs = if bodies.is_empty() {
        infer(node, &refs)
    } else {
        // Control flow: each body is checked with the values around it; its
        // results are not modelled.
        for body in &bodies {
            let mut inner = Scope {
                own: HashMap::new(),
                parent: Some(scope),
            };
            walk(body, &mut inner, budget, None)?;
        }
        vec![Val::unknown(); node.output.len()]
    };
    // tract evaluates a node as soon as every input is known; `Shape` and
    // `Size` of a tensor of known shape are known whatever its values;
    // `Constant` and the random generators have no inputs at all.
    let present: Vec<&Val> = refs.iter().flatten().copied().collect();
    let konst = match node.op_type.as_str() {
        "Shape" | "Size" => outs.first().is_some_and(|v| v.dims.is_some()),
        "EyeLike" | "ConstantLike" => present.first().is_some_and(|v| v.dims.is_some()),
        "Constant" => true,
        _ => (!present.is_empty() || node.input.is_empty()) && present.iter().all(|v| v.konst),
    };
    if konst {
        let name = || node_name(node, index);
        let op = || clean(&node.op_type);
        for out in &mut outs {
            out.konst = true;
            let sparse = node.attribute.iter().any(|a| a.name == "sparse_value");
            if node.op_type == "Constant" && !sparse {
                // Its values are in the file, which tract reads only when
                // they are all there; nothing is computed. A sparse one is
                // made dense: that is computed.
                continue;
            }
            let Some(n) = out.bound else {
                return Err(Problem::FoldUnbounded {
                    node: name(),
                    op: op(),
                });
            };
            if n > MAX_TENSOR_ELEMENTS {
                return Err(Problem::FoldTooLarge {
                    node: name(),
                    op: op(),
                    elements: n,
                    max: MAX_TENSOR_ELEMENTS,
                });
            }
            budget.bytes = budget
                .bytes
                .saturating_add(n.saturating_mul(esize(out.dtype)));
            if budget.bytes > MAX_FOLD_BYTES {
                return Err(Problem::FoldBudget {
                    node: name(),
                    op: op(),
                    bytes: budget.bytes,
                    max: MAX_FOLD_BYTES,
                });
            }
        }
    } else {
        for out in &mut outs {
            out.konst = false;
            out.values = None;
        }
    }
    for (name, val) in node.output.iter().zip(outs) {
        if !name.is_empty() {
            scope.own.insert(name.clone(), val);
        }
    }
    Ok(())
}
