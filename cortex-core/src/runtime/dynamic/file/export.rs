//! A compiled pipeline written out as a graph file: each node calling a
//! function an op's descriptor names ([`OpDesc::calls`]) becomes a node of
//! the library's form (`"op": "vision.center_crop", "inputs": ["gray"]`),
//! any other node keeps its call as a plain op's `args`; a graph file's own
//! pipeline writes back as it was read. Reading the text back ([`GraphFile::parse`]) and building it over the same ops gives the
//! compiled pipeline's program, so the two forms convert both ways.

use serde_json::{json, Map, Value as Json};

use crate::model::access::StripShape;
use crate::model::ir::{Arg, GraphIr, NodeIr, NodeKind};

use super::super::ops::{Ops, DEFAULT_INIT};
use super::library::params_of_constant;
use super::{FileError, GraphFile};

/// Why a compiled pipeline cannot be written as a graph file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportError {
    /// A node passes its op parameters as a Rust expression other than the
    /// defaults: a file writes parameters by name, and the expression's
    /// value is not known here.
    #[error(
        "node `{node}` passes `{text}` to `{op}`: a graph file writes parameters by name, \
         and only the defaults (`{default}`) can be written out; set them in the file instead"
    )]
    Params {
        /// The node.
        node: String,
        /// Its op.
        op: String,
        /// The expression it passes.
        text: String,
        /// How the defaults are written.
        default: String,
    },
    /// A node passes an op more or fewer graph values than it has inputs.
    #[error("node `{node}` passes {given} values to `{op}`, which takes {takes} inputs")]
    Inputs {
        /// The node.
        node: String,
        /// Its op.
        op: String,
        /// Graph values passed.
        given: usize,
        /// Inputs the descriptor declares.
        takes: usize,
    },
    /// A state starts from a Rust expression rather than its type's initial
    /// value, which is what a file's state starts from.
    #[error(
        "state `{state}` starts from `{init}`: a graph file's state starts from its type's \
         initial value (`{ty}::default()`, `{ty}::INITIAL` or an empty array)"
    )]
    Initial {
        /// The state.
        state: String,
        /// Its type.
        ty: String,
        /// Its initial-value expression.
        init: String,
    },
    /// The written file does not read back (a name no file can hold).
    #[error("the written graph file does not read back: {0}")]
    Reread(#[from] FileError),
}

impl GraphFile {
    /// Writes the compiled pipeline `ir` as a graph file's text over the
    /// ops of `ops`: the form `examples/graphs/l2.json` is written in, one
    /// declaration per line.
    ///
    /// # Errors
    /// [`ExportError`]: a node passes parameters other than the defaults,
    /// or a state starts from a value other than its type's initial one.
    pub fn export(ir: &GraphIr, ops: &Ops) -> Result<String, ExportError> {
        let mut out = String::from("{\n");
        out.push_str(&format!("  \"name\": {},\n", json!(ir.name)));
        let inputs = ir
            .inputs
            .iter()
            .map(|i| spaced(&json!({ "name": i.name, "type": i.ty })));
        list(&mut out, "inputs", inputs);
        let mut states = Vec::new();
        for s in ir.states.iter() {
            if !is_initial(&s.ty, &s.init) {
                return Err(ExportError::Initial {
                    state: s.name.to_string(),
                    ty: s.ty.to_string(),
                    init: s.init.to_string(),
                });
            }
            let from = &ir.node(s.writer).name;
            states.push(spaced(
                &json!({ "name": s.name, "type": s.ty, "from": from }),
            ));
        }
        list(&mut out, "states", states.into_iter());
        let modes = ir.modes.iter().map(|m| {
            let weights: Map<String, Json> = ir
                .weight_keys
                .iter()
                .zip(m.weights.iter())
                .map(|(k, w)| (k.to_string(), json!(w)))
                .collect();
            let mut line = format!(
                "{{ \"name\": {}, \"weights\": {}",
                json!(m.name),
                spaced(&Json::Object(weights))
            );
            if !m.rates.is_empty() {
                let rates: Vec<String> = m
                    .rates
                    .iter()
                    .map(|r| {
                        let mut rate = Map::new();
                        rate.insert("node".into(), json!(ir.node(r.node).name));
                        rate.insert("every".into(), json!(r.every));
                        if let Some(t) = &r.trigger {
                            let mut path = ir.endpoint_name(t.source).to_string();
                            for f in t.fields.iter() {
                                path.push('.');
                                path.push_str(f);
                            }
                            rate.insert("trigger".into(), json!(path));
                        }
                        format!("        {}", spaced(&Json::Object(rate)))
                    })
                    .collect();
                line.push_str(&format!(
                    ",\n      \"rates\": [\n{}\n      ]",
                    rates.join(",\n")
                ));
            }
            line.push_str(" }");
            line
        });
        list(&mut out, "modes", modes);
        let mut nodes = Vec::new();
        for n in ir.nodes.iter() {
            nodes.push(spaced(&node(ir, n, ops)?));
        }
        list(&mut out, "nodes", nodes.into_iter());
        let outputs = ir.outputs.iter().map(|o| {
            let mut m = Map::new();
            m.insert("name".into(), json!(ir.node(o.node).name));
            m.insert("type".into(), json!(o.ty));
            if o.optional {
                m.insert("optional".into(), json!(true));
            }
            spaced(&Json::Object(m))
        });
        list(&mut out, "outputs", outputs);
        // The last list's comma.
        out.truncate(out.len() - 2);
        out.push_str("\n}\n");
        Ok(out)
    }

    /// The compiled pipeline `ir` as a graph file over the ops of `ops`
    /// ([`export`](Self::export), read back): building it gives the
    /// pipeline's own program.
    ///
    /// # Errors
    /// As [`export`](Self::export).
    pub fn from_ir(ir: &GraphIr, ops: &Ops) -> Result<GraphFile, ExportError> {
        Ok(GraphFile::parse(&GraphFile::export(ir, ops)?)?)
    }
}

/// One node as the file writes it.
fn node(ir: &GraphIr, n: &NodeIr, ops: &Ops) -> Result<Json, ExportError> {
    let mut m = Map::new();
    m.insert("name".into(), json!(n.name));
    let values: Vec<&str> = n
        .args
        .iter()
        .filter_map(|a| match a {
            Arg::Value(e) => Some(ir.endpoint_name(*e)),
            _ => None,
        })
        .collect();
    // A node of a graph file calls its op by the library's name; a
    // compiled one, by a Rust function the descriptor names.
    let library = ops.descriptor(&n.op);
    match library.or_else(|| ops.descriptor_calling(&n.op)) {
        Some(d) => {
            m.insert("op".into(), json!(d.name()));
            if values.len() != d.inputs().len() {
                return Err(ExportError::Inputs {
                    node: n.name.to_string(),
                    op: d.name().to_string(),
                    given: values.len(),
                    takes: d.inputs().len(),
                });
            }
            m.insert("inputs".into(), json!(values));
            for a in n.args.iter() {
                let Arg::Const(text) = a else { continue };
                if library.is_some() {
                    let params = params_of_constant(d.name(), text).unwrap_or_default();
                    if !params.is_empty() {
                        m.insert("params".into(), Json::Object(params));
                    }
                } else if !d.is_default_params(text) {
                    return Err(ExportError::Params {
                        node: n.name.to_string(),
                        op: d.name().to_string(),
                        text: text.to_string(),
                        default: format!("&{}::DEFAULT", d.params.type_name),
                    });
                }
            }
        }
        None => {
            m.insert("op".into(), json!(n.op));
            let args: Vec<Json> = n
                .args
                .iter()
                .map(|a| match a {
                    Arg::Value(e) => json!(ir.endpoint_name(*e)),
                    Arg::Weights => json!(crate::model::spec::WEIGHTS_ARG),
                    Arg::Buffer => json!(format!("&mut {}", n.name)),
                    Arg::Const(text) => json!({ "const": text }),
                })
                .collect();
            m.insert("args".into(), json!(args));
            if let Some(ty) = &n.ty {
                m.insert("type".into(), json!(ty));
            }
            let compilable = match (n.kind, n.strip) {
                (NodeKind::ExternalCall, _) => None,
                (NodeKind::Compilable, None) => Some(json!(true)),
                (NodeKind::Compilable, Some(StripShape::Map)) => Some(json!("map")),
                (NodeKind::Compilable, Some(StripShape::Reduction)) => Some(json!("reduce")),
            };
            if let Some(c) = compilable {
                m.insert("compilable".into(), c);
            }
            if n.fallible {
                m.insert("fallible".into(), json!(true));
            }
        }
    }
    if let Some(k) = n.weight_key {
        m.insert("weight_key".into(), json!(ir.weight_keys[k as usize]));
    }
    Ok(Json::Object(m))
}

/// Whether a state's initial value `init` is its type's own: a graph
/// file's [`DEFAULT_INIT`], or as Rust writes it, `T::default()`,
/// `T::INITIAL`, `T::DEFAULT`, `Default::default()` or an empty array
/// (`T::zeros((0, 0))`), spacing aside.
fn is_initial(ty: &str, init: &str) -> bool {
    let init: String = init.split_whitespace().collect();
    let ty: String = ty.split_whitespace().collect();
    let named = ["::default()", "::INITIAL", "::DEFAULT"]
        .iter()
        .any(|s| init == format!("{ty}{s}"));
    let empty = init
        .strip_prefix(&format!("{ty}::zeros(("))
        .and_then(|rest| rest.strip_suffix("))"))
        .and_then(|dims| {
            dims.split(',')
                .map(str::parse::<usize>)
                .collect::<Result<Vec<_>, _>>()
                .ok()
        })
        .is_some_and(|dims| dims.contains(&0));
    named || init == "Default::default()" || init == DEFAULT_INIT || empty
}

/// `v` on one line with a space after each `:` and `,` and inside braces,
/// as the files in `examples/graphs/` are written.
fn spaced(v: &Json) -> String {
    match v {
        Json::Object(m) if m.is_empty() => "{}".into(),
        Json::Object(m) => {
            let fields: Vec<String> = m
                .iter()
                .map(|(k, x)| format!("{}: {}", json!(k), spaced(x)))
                .collect();
            format!("{{ {} }}", fields.join(", "))
        }
        Json::Array(a) => {
            let items: Vec<String> = a.iter().map(spaced).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
    }
}

/// Appends `"key": [` with one item per line and `],`.
fn list(out: &mut String, key: &str, items: impl Iterator<Item = String>) {
    let items: Vec<String> = items.map(|i| format!("    {i}")).collect();
    if items.is_empty() {
        out.push_str(&format!("  \"{key}\": [],\n"));
    } else {
        out.push_str(&format!("  \"{key}\": [\n{}\n  ],\n", items.join(",\n")));
    }
}
