//! A graph file's nodes written in the library's form (`"op":
//! "vision.text_map", "inputs": ["gray"], "params": {"mser.delta": 3}`),
//! resolved against the ops' descriptors when the file is built: the
//! parameters parsed and checked (each mistake one error at the node's
//! line), the call completed as the descriptor says (the parameters as a
//! constant, the weight table, the node's own buffer), and the node's type
//! and strip form taken from the descriptor.

use std::path::Path;

use crate::model::spec::{ArgSpec, GraphSpec};
use crate::passes::diag::did_you_mean;
use crate::runtime::untrusted::echo_cut;

use super::super::ops::Ops;
use super::{FileError, GraphFile, MAX_MESSAGE_CHARS};

impl GraphFile {
    /// The spec with every library-form node's call completed, and `ops`
    /// with each node's parameters registered as the constant its call
    /// passes.
    pub(super) fn resolve(&self, ops: &Ops) -> Result<(GraphSpec, Ops), FileError> {
        let mut spec = self.spec.clone();
        let mut ops = ops.clone();
        let mut problems = Vec::new();
        for (i, node) in spec.nodes.iter_mut().enumerate() {
            let at = self.lines.nodes.get(i);
            let line = at.map_or(1, |a| a.line);
            let written = match at.and_then(|a| a.from.as_ref()) {
                Some(from) => format!(" (written at {from})"),
                None => String::new(),
            };
            let mut problem = |m: String| {
                problems.push((
                    line,
                    echo_cut(
                        &format!("node `{}`{written}: {m}", node.name),
                        MAX_MESSAGE_CHARS,
                    ),
                ))
            };
            let Some(params) = self.params.get(i).and_then(Option::as_ref) else {
                if ops.descriptor(&node.op).is_some() {
                    problem(format!(
                        "op `{}` is described: write its `inputs` and `params`, not `args`",
                        node.op
                    ));
                } else if let Some(d) = ops.descriptor_calling(&node.op) {
                    if !ops.contains(&node.op) {
                        // A file written before the library, naming the
                        // kernel's Rust path.
                        problem(format!(
                            "`{}` is a Rust function: graph files call the library's op `{}` \
                             (`\"op\": \"{}\"` with `inputs` and `params`; `ops {}` shows them)",
                            node.op,
                            d.name(),
                            d.name(),
                            d.name()
                        ));
                    }
                }
                continue;
            };
            let Some(d) = ops.descriptor(&node.op) else {
                if ops.contains(&node.op) && params.is_empty() {
                    // A plain op called with its inputs only.
                    continue;
                }
                let mut m = if ops.contains(&node.op) {
                    format!(
                        "op `{}` has no descriptor, so it takes no `params`: write its `args`",
                        node.op
                    )
                } else {
                    format!("no op `{}` is registered", node.op)
                };
                let names: Vec<&str> = ops.descriptors().map(|d| d.name()).collect();
                if let Some(s) = did_you_mean(&node.op, names) {
                    m.push_str(&format!(" (did you mean `{s}`?)"));
                }
                problem(m);
                continue;
            };
            let dir = self.dirs.get(i).cloned().flatten();
            let resolved = in_folder(d.files(), params, dir.as_deref());
            let value = match d.parse(&resolved) {
                Ok(v) => v,
                Err(e) => {
                    problem(format!("params of `{}`: {e}", d.name()));
                    continue;
                }
            };
            // The parameters as written, so the graph writes back as read;
            // those of a node from an extended file in another folder as
            // resolved, so the same text never stands for two files.
            let text = if dir == self.dir {
                params_constant(d.name(), params)
            } else {
                params_constant(d.name(), &resolved)
            };
            let output = ops
                .name_of(d.output().id)
                .unwrap_or(d.output().rust)
                .to_string();
            node.args.push(ArgSpec::Const(text.clone()));
            if d.reads_weights() {
                node.args.push(ArgSpec::Weights);
            }
            if d.fills() {
                node.args.push(ArgSpec::Buffer);
            }
            node.ty.get_or_insert(output);
            node.compilable = d.compilable;
            node.strip = d.strip();
            node.fallible = true;
            node.source = node.dsl_source();
            ops.constant_erased(&text, value);
        }
        if problems.is_empty() {
            Ok((spec, ops))
        } else {
            Err(FileError { problems })
        }
    }
}

/// `params` with each relative path in a parameter of `files` taken from
/// `dir`, the folder of the file that wrote it (an absolute path, an empty
/// one or one read from text with no folder is kept).
fn in_folder(
    files: &[String],
    params: &serde_json::Map<String, serde_json::Value>,
    dir: Option<&Path>,
) -> serde_json::Map<String, serde_json::Value> {
    let mut out = params.clone();
    let Some(dir) = dir.filter(|d| !d.as_os_str().is_empty()) else {
        return out;
    };
    for name in files {
        if let Some(serde_json::Value::String(path)) = out.get_mut(name) {
            if !path.is_empty() && Path::new(path.as_str()).is_relative() {
                *path = dir.join(path.as_str()).to_string_lossy().into_owned();
            }
        }
    }
    out
}

/// The constant a library node's call passes: the op and its parameters
/// as written, so the same parameters of the same op are one constant.
fn params_constant(op: &str, params: &serde_json::Map<String, serde_json::Value>) -> String {
    format!("{op}{}", serde_json::to_string(params).unwrap_or_default())
}

/// The parameters a library node of `op` was written with, from the
/// constant its call passes ([`params_constant`]).
pub(super) fn params_of_constant(
    op: &str,
    text: &str,
) -> Option<serde_json::Map<String, serde_json::Value>> {
    serde_json::from_str(text.strip_prefix(op)?).ok()
}
