//! Types checked when a run-time graph is built: every node calling a
//! described op ([`OpDesc`]) receives the inputs it declares, in number,
//! type and presence, and every output and state holds the type of the
//! node behind it, and every rate's trigger reads a `bool` or a registered
//! `bool` field — so a wrong graph is refused before its first frame, in
//! the registered type names (`GrayImage`), not Rust's.

use std::any::TypeId;

use crate::model::ir::{Arg, Endpoint, GraphIr};
use crate::passes::diag::{Diagnostic, Loc};

use super::desc::{OpDesc, TypeRef};
use super::ops::Ops;

/// The type errors of `ir` over `ops`; none when no node calls a
/// described op and no declared type is registered.
pub(crate) fn check_types(ir: &GraphIr, ops: &Ops) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let named = |ty: &str| ops.type_named(ty.trim());
    // Each node's value type, when it is known: from its op's descriptor,
    // else from its declared type.
    let node_ty: Vec<Option<TypeId>> = ir
        .nodes
        .iter()
        .map(|n| match ops.descriptor(&n.op) {
            Some(d) => Some(d.output.id),
            None => n.ty.as_deref().and_then(named),
        })
        .collect();
    let show = |id: TypeId, rust: &str| -> String {
        ops.name_of(id)
            .map_or_else(|| rust.to_string(), str::to_string)
    };
    let known_types = || ops.type_names().collect::<Vec<_>>().join(", ");
    // A state declared with another type than its writer gives: one
    // error, at the state; its readers are not blamed for it again.
    let mut bad_states = vec![false; ir.states.len()];
    for (s, state) in ir.states.iter().enumerate() {
        let (Some(have), Some(want)) = (node_ty[state.writer as usize], named(&state.ty)) else {
            continue;
        };
        if have != want {
            bad_states[s] = true;
            out.push(Diagnostic::error(
                Loc::State(s),
                format!(
                    "state `{}` is a `{}`, but node `{}`, written into it, gives a `{}`",
                    state.name,
                    state.ty,
                    ir.nodes[state.writer as usize].name,
                    ops.name_of(have).unwrap_or("value of another type")
                ),
            ));
        }
    }
    for (i, n) in ir.nodes.iter().enumerate() {
        let Some(d) = ops.descriptor(&n.op) else {
            continue;
        };
        if let Some(declared) = n.ty.as_deref() {
            match named(declared) {
                Some(id) if id == d.output.id => {}
                Some(_) => out.push(Diagnostic::error(
                    Loc::Node(i),
                    format!(
                        "node `{}` declares type `{declared}`, but op `{}` gives a `{}`",
                        n.name,
                        d.name,
                        show(d.output.id, d.output.rust)
                    ),
                )),
                // A fill node's type is written for the buffer plan; a
                // Rust path nobody registered is checked by its op only.
                None if declared == d.output.rust => {}
                None => out.push(Diagnostic::error(
                    Loc::Node(i),
                    format!(
                        "node `{}` declares type `{declared}`, which is not a known type ({})",
                        n.name,
                        known_types()
                    ),
                )),
            }
        }
        let values: Vec<(usize, Endpoint)> = n
            .args
            .iter()
            .enumerate()
            .filter_map(|(a, arg)| match arg {
                Arg::Value(e) => Some((a, *e)),
                _ => None,
            })
            .collect();
        if values.len() != d.inputs.len() {
            out.push(Diagnostic::error(
                Loc::Node(i),
                format!(
                    "op `{}` takes {} input{} ({}); node `{}` gives {}",
                    d.name,
                    d.inputs.len(),
                    if d.inputs.len() == 1 { "" } else { "s" },
                    signature(d, ops),
                    n.name,
                    values.len()
                ),
            ));
            continue;
        }
        for ((a, e), port) in values.into_iter().zip(&d.inputs) {
            let (from, ty, weighted) = match e {
                Endpoint::Input(x) => {
                    let input = &ir.inputs[x as usize];
                    (input.name.to_string(), Typed::Named(&input.ty), false)
                }
                Endpoint::State(x) if bad_states[x as usize] => continue,
                Endpoint::State(x) => {
                    let state = &ir.states[x as usize];
                    (state.name.to_string(), Typed::Named(&state.ty), false)
                }
                Endpoint::Node(x) => {
                    let p = &ir.nodes[x as usize];
                    let ty = node_ty[x as usize].map_or(Typed::Unknown, Typed::Id);
                    (p.name.to_string(), ty, p.weight_key.is_some())
                }
            };
            let loc = Loc::NodeArg { node: i, arg: a };
            let got = match ty {
                Typed::Id(id) => Some(id),
                Typed::Named(name) => match named(name) {
                    Some(id) => Some(id),
                    None => {
                        out.push(Diagnostic::error(
                            loc,
                            format!(
                                "`{from}` is declared a `{name}`, which is not a known type ({})",
                                known_types()
                            ),
                        ));
                        continue;
                    }
                },
                Typed::Unknown => None,
            };
            if let Some(got) = got.filter(|&g| g != port.ty.id) {
                out.push(Diagnostic::error(
                    loc,
                    format!(
                        "input `{}` of op `{}` is a `{}`; `{from}` is a `{}`",
                        port.name,
                        d.name,
                        show(port.ty.id, port.ty.rust),
                        ops.name_of(got).unwrap_or("value of another type")
                    ),
                ));
            }
            if weighted && !port.optional {
                out.push(Diagnostic::error(
                    loc,
                    format!(
                        "input `{}` of op `{}` is read every frame, but `{from}` has a weight \
                         key and does not run when its weight is 0",
                        port.name, d.name
                    ),
                ));
            }
        }
    }
    for (o, output) in ir.outputs.iter().enumerate() {
        let node = &ir.nodes[output.node as usize];
        let (Some(have), Some(d)) = (node_ty[output.node as usize], ops.descriptor(&node.op))
        else {
            continue;
        };
        let msg = match named(&output.ty) {
            Some(id) if id == have => continue,
            Some(_) => format!(
                "output `{}` is declared a `{}`, but op `{}` gives a `{}`",
                node.name,
                output.ty,
                d.name,
                show(have, d.output.rust)
            ),
            None => format!(
                "output `{}` is declared a `{}`, which is not a known type ({})",
                node.name,
                output.ty,
                known_types()
            ),
        };
        out.push(Diagnostic::error(Loc::Output(o), msg));
    }
    check_triggers(ir, ops, &node_ty, &mut out);
    out
}

/// Each rate's trigger against the type of the value it reads: the value
/// itself must be a `bool`, or its one field a `bool` field registered for
/// its type ([`Ops::flag`]). A value of no known type is checked when the
/// frame reads it.
fn check_triggers(ir: &GraphIr, ops: &Ops, node_ty: &[Option<TypeId>], out: &mut Vec<Diagnostic>) {
    for (m, mode) in ir.modes.iter().enumerate() {
        for (r, rate) in mode.rates.iter().enumerate() {
            let Some(t) = &rate.trigger else {
                continue;
            };
            let ty = match t.source {
                Endpoint::Node(x) => node_ty[x as usize],
                Endpoint::Input(x) => ops.type_named(ir.inputs[x as usize].ty.trim()),
                Endpoint::State(x) => ops.type_named(ir.states[x as usize].ty.trim()),
            };
            let source = ir.endpoint_name(t.source);
            let path: Vec<&str> = std::iter::once(source)
                .chain(t.fields.iter().map(|f| &**f))
                .collect();
            let fields = ty.map(|id| ops.flag_fields(id)).unwrap_or_default();
            let type_name = ty.and_then(|id| ops.name_of(id)).unwrap_or("value");
            let problem = match (&*t.fields, ty) {
                ([], Some(id)) if id == TypeId::of::<bool>() => continue,
                ([], Some(_)) if fields.is_empty() => {
                    format!("`{source}` is a `{type_name}`, not a `bool`")
                }
                ([], Some(_)) => format!(
                    "`{source}` is a `{type_name}`, not a `bool`; its `bool` fields are {}",
                    quoted(&fields)
                ),
                ([], None) => continue,
                ([field], Some(_)) if fields.contains(&&**field) => continue,
                ([field], Some(_)) if fields.is_empty() => format!(
                    "`{source}` is a `{type_name}`, which has no `bool` field `{field}` (none is registered)"
                ),
                ([field], Some(_)) => format!(
                    "`{source}` is a `{type_name}`, which has no `bool` field `{field}`; its `bool` fields are {}",
                    quoted(&fields)
                ),
                ([_], None) => continue,
                (_, _) => "a trigger reads a value or one field of it".to_string(),
            };
            out.push(Diagnostic::error(
                Loc::ModeRateTrigger { mode: m, rate: r },
                format!(
                    "mode `{}`: the trigger `{}` of `{}`'s rate: {problem}",
                    mode.name,
                    path.join("."),
                    ir.nodes[rate.node as usize].name
                ),
            ));
        }
    }
}

/// `` `a`, `b` ``.
fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a producer is known to give.
enum Typed<'a> {
    /// A registered type.
    Id(TypeId),
    /// A type name as declared, to resolve.
    Named(&'a str),
    /// A node with neither a descriptor nor a registered declared type.
    Unknown,
}

/// `gray: GrayImage, motion: GrayImage?`: an op's inputs in the
/// registered type names (`?` for an optional one).
pub(crate) fn signature(d: &OpDesc, ops: &Ops) -> String {
    let name = |t: &TypeRef| ops.name_of(t.id).unwrap_or(t.rust).to_string();
    d.inputs
        .iter()
        .map(|p| {
            format!(
                "{}: {}{}",
                p.name,
                name(&p.ty),
                if p.optional { "?" } else { "" }
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}
