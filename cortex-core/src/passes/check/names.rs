//! Rules about names: one namespace for inputs, states and nodes; no
//! duplicates; `weights` is reserved; every argument resolves.

use std::collections::HashMap;

use super::{kind_word, WEIGHTS_ARG};
use crate::model::ir::{Arg, Endpoint};
use crate::model::spec::{ArgSpec, GraphSpec};
use crate::passes::diag::{did_you_mean, Diagnostic, Diagnostics, Loc};

/// Name → what it declares (first declaration wins).
pub(crate) type Namespace<'a> = HashMap<&'a str, Endpoint>;

/// Declares every input, state and node, reporting duplicates (at the second
/// declaration) and use of the reserved name `weights`.
///
/// ```text
/// node gray = to_gray(frame);
/// node gray = blur(frame);   // error: `gray` is declared twice
/// ```
pub(crate) fn declare<'a>(spec: &'a GraphSpec, diags: &mut Diagnostics) -> Namespace<'a> {
    let mut ns = Namespace::new();
    let decls = spec
        .inputs
        .iter()
        .enumerate()
        .map(|(i, x)| (x.name.as_str(), Endpoint::Input(i as u32), Loc::Input(i)))
        .chain(
            spec.states
                .iter()
                .enumerate()
                .map(|(i, x)| (x.name.as_str(), Endpoint::State(i as u32), Loc::State(i))),
        )
        .chain(
            spec.nodes
                .iter()
                .enumerate()
                .map(|(i, x)| (x.name.as_str(), Endpoint::Node(i as u32), Loc::Node(i))),
        );
    for (name, endpoint, loc) in decls {
        if name == WEIGHTS_ARG {
            diags.push(
                Diagnostic::error(loc, format!("`{WEIGHTS_ARG}` is a reserved name"))
                    .note("help: `weights` in a node's arguments means the running mode's weight table; rename this declaration"),
            );
            continue;
        }
        match ns.get(name) {
            Some(&first) => diags.push(
                Diagnostic::error(
                    loc,
                    format!(
                        "`{name}` is declared twice: first as {} `{name}`, again as {} `{name}`",
                        kind_word(first),
                        kind_word(endpoint)
                    ),
                )
                .note("note: inputs, states and nodes share one namespace; give each a unique name")
                .label(
                    endpoint_loc(first),
                    format!("`{name}` is first declared here"),
                ),
            ),
            None => {
                ns.insert(name, endpoint);
            }
        }
    }
    let mut modes: HashMap<&str, usize> = HashMap::new();
    for (i, m) in spec.modes.iter().enumerate() {
        if let Some(first) = modes.insert(m.name.as_str(), i) {
            diags.push(
                Diagnostic::error(Loc::Mode(i), format!("mode `{}` is declared twice", m.name))
                    .label(
                        Loc::Mode(first),
                        format!("mode `{}` is first declared here", m.name),
                    ),
            );
            // Keep pointing at the first declaration for a third one.
            modes.insert(m.name.as_str(), first);
        }
    }
    ns
}

/// Resolves every node argument; an unknown name is a dangling edge.
///
/// ```text
/// node blur = blur_detector(grey);   // error: no input, state or node named `grey`
///                                    //        help: did you mean `gray`?
/// ```
pub(crate) fn resolve_args(
    spec: &GraphSpec,
    ns: &Namespace<'_>,
    diags: &mut Diagnostics,
) -> Vec<Vec<Option<Arg>>> {
    spec.nodes
        .iter()
        .enumerate()
        .map(|(n, node)| {
            node.args
                .iter()
                .enumerate()
                .map(|(a, arg)| match arg {
                    ArgSpec::Weights => Some(Arg::Weights),
                    ArgSpec::Buffer => Some(Arg::Buffer),
                    ArgSpec::Const(text) => Some(Arg::Const(text.clone().into())),
                    ArgSpec::Name(name) => match ns.get(name.as_str()) {
                        Some(&e) => Some(Arg::Value(e)),
                        None => {
                            diags.push(unknown_name(
                                ns,
                                Loc::NodeArg { node: n, arg: a },
                                name,
                                "input, state or node",
                            ));
                            None
                        }
                    },
                })
                .collect()
        })
        .collect()
}

/// "no X named `name`" with a did-you-mean over the namespace.
pub(crate) fn unknown_name(ns: &Namespace<'_>, loc: Loc, name: &str, what: &str) -> Diagnostic {
    let d = Diagnostic::error(loc, format!("no {what} named `{name}`"));
    match did_you_mean(name, ns.keys().copied()) {
        Some(s) => d.note(format!("help: did you mean `{s}`?")),
        None => d.note(
            "help: declare it with `input`, `state` or `node` before using it as an argument",
        ),
    }
}

/// Where an endpoint is declared.
fn endpoint_loc(e: Endpoint) -> Loc {
    match e {
        Endpoint::Input(i) => Loc::Input(i as usize),
        Endpoint::State(i) => Loc::State(i as usize),
        Endpoint::Node(i) => Loc::Node(i as usize),
    }
}
