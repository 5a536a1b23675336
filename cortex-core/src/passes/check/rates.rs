//! Rules about rates (`mode M { … } where text every 4 or scene.is_cut;`):
//! each names a node of the graph once per mode, at a rate of at least 1,
//! on a node the mode runs and whose value can be kept; its trigger is a
//! graph value computed on every frame of the mode, and not from the node
//! it decides about.

use super::names::{unknown_name, Namespace};
use super::{article, kind_word, Resolved};
use crate::model::ir::{Endpoint, GraphIr, NodeId, RateIr, TriggerIr};
use crate::model::plan::Plan;
use crate::model::spec::{ArgSpec, GraphSpec};
use crate::passes::dce::{mode_plan_holding, MAX_RATES_PER_MODE};
use crate::passes::diag::{did_you_mean, Diagnostic, Diagnostics, Loc};

/// Resolves each mode's rates to nodes and triggers to graph values.
pub(crate) fn resolve(
    spec: &GraphSpec,
    ns: &Namespace<'_>,
    r: &mut Resolved,
    diags: &mut Diagnostics,
) {
    r.rates = spec
        .modes
        .iter()
        .enumerate()
        .map(|(m, mode)| {
            let mut rated: Vec<RateIr> = Vec::new();
            for (i, rate) in mode.rates.iter().enumerate() {
                let at = Loc::ModeRate { mode: m, rate: i };
                let node = match ns.get(rate.node.as_str()) {
                    Some(&Endpoint::Node(n)) => n,
                    Some(&other) => {
                        diags.push(
                            Diagnostic::error(
                                at,
                                format!(
                                    "a rate is given to a node, but `{}` is {} {}",
                                    rate.node,
                                    article(other),
                                    kind_word(other)
                                ),
                            )
                            .note("note: inputs arrive with every frame and states are last frame's values"),
                        );
                        continue;
                    }
                    None => {
                        let nodes = spec.nodes.iter().map(|n| n.name.as_str());
                        let d = Diagnostic::error(at, format!("no node named `{}`", rate.node));
                        diags.push(match did_you_mean(&rate.node, nodes) {
                            Some(s) => d.note(format!("help: did you mean `{s}`?")),
                            None => d.note("help: a rate names a node of the graph"),
                        });
                        continue;
                    }
                };
                if rated.iter().any(|x| x.node == node) {
                    diags.push(Diagnostic::error(
                        at,
                        format!("`{}` has two rates in mode `{}`", rate.node, mode.name),
                    ));
                    continue;
                }
                if rated.len() == MAX_RATES_PER_MODE {
                    diags.push(
                        Diagnostic::error(
                            at,
                            format!(
                                "mode `{}` rates more than {MAX_RATES_PER_MODE} nodes",
                                mode.name
                            ),
                        )
                        .note("note: each combination of held nodes is a phase plan of its own"),
                    );
                    continue;
                }
                if rate.every == 0 {
                    diags.push(
                        Diagnostic::error(
                            Loc::ModeRateEvery { mode: m, rate: i },
                            "a rate of 0: `every k` runs the node on every k-th frame, so k is at least 1",
                        ),
                    );
                    continue;
                }
                let n = &spec.nodes[node as usize];
                let fills = n.args.iter().any(|a| matches!(a, ArgSpec::Buffer));
                if n.ty.is_none() && !fills {
                    diags.push(
                        Diagnostic::error(
                            at,
                            format!(
                                "a rated node's value is kept between frames, so `{}` needs its type declared",
                                rate.node
                            ),
                        )
                        .note(format!("help: write `node {}: T = …;`", rate.node)),
                    );
                    continue;
                }
                let trigger = match &rate.trigger {
                    None => None,
                    Some((source, fields)) => match ns.get(source.as_str()) {
                        Some(&e) => Some(TriggerIr {
                            source: e,
                            fields: fields
                                .iter()
                                .map(|f| f.clone().into())
                                .collect::<Vec<_>>()
                                .into(),
                        }),
                        None => {
                            diags.push(unknown_name(
                                ns,
                                Loc::ModeRateTrigger { mode: m, rate: i },
                                source,
                                "input, state or node",
                            ));
                            continue;
                        }
                    },
                };
                rated.push(RateIr {
                    node,
                    every: rate.every,
                    trigger,
                });
            }
            rated
        })
        .collect();
}

/// Checks the rates against the modes' plans: a rated node runs in its mode
/// (else its held value would be read by nothing), and each trigger is
/// computed on every frame of the mode, not from the node it decides about.
pub(crate) fn check_plans(spec: &GraphSpec, ir: &GraphIr, plans: &[Plan], diags: &mut Diagnostics) {
    for (m, (mode, plan)) in ir.modes.iter().zip(plans).enumerate() {
        // Where each resolved rate was written (resolution skipped bad ones).
        let written = |node: NodeId| {
            spec.modes
                .get(m)
                .and_then(|sm| sm.rates.iter().position(|r| r.node == *ir.node(node).name))
        };
        let all_held: Vec<NodeId> = mode.rates.iter().map(|r| r.node).collect();
        let every_frame = mode_plan_holding(ir, m, &all_held, "");
        for rate in mode.rates.iter() {
            let Some(i) = written(rate.node) else {
                continue;
            };
            let name = &ir.node(rate.node).name;
            if let Some(reason) = plan.reason(rate.node) {
                diags.push(
                    Diagnostic::error(
                        Loc::ModeRate { mode: m, rate: i },
                        format!(
                            "`{name}` does not run in mode `{}` ({}): its held value would be read by nothing",
                            mode.name,
                            reason.describe(ir)
                        ),
                    )
                    .note("help: remove the rate, or give it in a mode that runs the node"),
                );
                continue;
            }
            let Some(Endpoint::Node(t)) = rate.trigger.as_ref().map(|t| t.source) else {
                continue;
            };
            let at = Loc::ModeRateTrigger { mode: m, rate: i };
            let trigger = &ir.node(t).name;
            if t == rate.node || ir.upstream(t).contains(&rate.node) {
                diags.push(
                    Diagnostic::error(
                        at,
                        format!("`{trigger}` is computed from `{name}`, so it cannot decide whether `{name}` runs"),
                    )
                    .note(format!(
                        "help: trigger on a value computed without `{name}`, e.g. from what `{name}` reads"
                    )),
                );
            } else if !every_frame.is_live(t) {
                let why = match plan.reason(t) {
                    Some(r) => r.describe(ir),
                    None => "only rated nodes need it".into(),
                };
                diags.push(
                    Diagnostic::error(
                        at,
                        format!(
                            "trigger `{trigger}` is not computed on every frame of mode `{}` ({why})",
                            mode.name
                        ),
                    )
                    .note("note: a trigger is read before the rated node would run, on every frame"),
                );
            }
        }
    }
}
