//! Rules about outputs: each names a node once, and no mode eliminates a
//! non-optional one.

use std::collections::HashSet;

use super::modes::quote_list;
use super::names::{unknown_name, Namespace};
use super::{kind_word, Resolved};
use crate::model::ir::{Endpoint, GraphIr, OutputIr};
use crate::model::plan::Plan;
use crate::model::spec::GraphSpec;
use crate::passes::diag::{Diagnostic, Diagnostics, Loc};

/// Resolves outputs to nodes.
pub(crate) fn resolve(
    spec: &GraphSpec,
    ns: &Namespace<'_>,
    r: &mut Resolved,
    diags: &mut Diagnostics,
) {
    if spec.outputs.is_empty() {
        diags.push(
            Diagnostic::error(Loc::Pipeline, "the pipeline has no outputs")
                .note("help: declare what `run` returns, e.g. `output fused: ScoreMap;`"),
        );
    }
    let mut seen = HashSet::new();
    r.outputs = spec
        .outputs
        .iter()
        .enumerate()
        .map(|(o, out)| {
            if !seen.insert(out.name.as_str()) {
                diags.push(Diagnostic::error(
                    Loc::Output(o),
                    format!("`{}` is declared as an output twice", out.name),
                ));
                return None;
            }
            match ns.get(out.name.as_str()) {
                Some(&Endpoint::Node(n)) => Some(n),
                Some(&other) => {
                    diags.push(
                        Diagnostic::error(
                            Loc::Output(o),
                            format!("an output must be a node, but `{}` is {} {}", out.name, super::article(other), kind_word(other)),
                        )
                        .note("help: inputs are the caller's already; to return a state, output the node that writes it"),
                    );
                    None
                }
                None => {
                    diags.push(unknown_name(ns, Loc::Output(o), &out.name, "node"));
                    None
                }
            }
        })
        .collect();
}

/// A declared mode must not eliminate a non-optional output.
///
/// ```text
/// #[weight_key = "ws"] node saliency = saliency_dft(gray);
/// mode POWER_SAVE { ws: 0.0 }
/// output saliency: ScoreMap;   // error: POWER_SAVE eliminates it
/// ```
pub(crate) fn check_not_eliminated(
    spec: &GraphSpec,
    ir: &GraphIr,
    plans: &[Plan],
    diags: &mut Diagnostics,
) {
    for (o, out) in spec.outputs.iter().enumerate() {
        let Some(node) = ir.node_id(&out.name) else {
            continue;
        };
        let modes: Vec<&str> = plans
            .iter()
            .filter(|p| p.missing_outputs.contains(&node))
            .map(|p| p.label.as_ref())
            .collect();
        if modes.is_empty() {
            continue;
        }
        let why = plans
            .iter()
            .find_map(|p| p.reason(node))
            .map(|r| r.describe(ir))
            .unwrap_or_default();
        diags.push(
            Diagnostic::error(
                Loc::Output(o),
                format!("output `{}` is eliminated in mode {}", out.name, quote_list(&modes)),
            )
            .note(format!("note: {why}"))
            .note(format!(
                "help: mark it `#[optional] output {}: …;` to receive it as an `Option`, or give the mode a non-zero weight",
                out.name
            )),
        );
    }
}

/// The IR's outputs (all resolved once validation passed).
pub(crate) fn build(spec: &GraphSpec, r: &Resolved) -> Vec<OutputIr> {
    spec.outputs
        .iter()
        .zip(&r.outputs)
        .filter_map(|(o, n)| {
            Some(OutputIr {
                node: (*n)?,
                ty: o.ty.clone().into(),
                optional: o.optional,
            })
        })
        .collect()
}
