//! Rules about modes and weights: every mode gives exactly the weight keys the
//! nodes use, each a finite, non-negative number.

use std::collections::HashSet;

use super::{Resolved, MAX_WEIGHT_KEYS};
use crate::model::ir::{GraphIr, ModeIr};
use crate::model::naming::{is_valid_variant, mode_variant};
use crate::model::plan::Plan;
use crate::model::spec::GraphSpec;
use crate::model::weights::check_weight_value;
use crate::passes::diag::{did_you_mean, Diagnostic, Diagnostics, Loc};

/// The mode of a graph that declares none.
pub const IMPLICIT_MODE: &str = "FULL";

/// Collects the weight keys in first-use order and checks their spelling.
pub(crate) fn collect_keys(spec: &GraphSpec, r: &mut Resolved, diags: &mut Diagnostics) {
    r.node_keys = spec
        .nodes
        .iter()
        .enumerate()
        .map(|(n, node)| {
            let key = node.weight_key.as_ref()?;
            if key.is_empty() || !key.chars().all(|c| c.is_alphanumeric() || c == '_') {
                diags.push(
                    Diagnostic::error(Loc::NodeWeightKey(n), format!("weight key {key:?} is not a valid key"))
                        .note("help: a weight key is a non-empty name of letters, digits and `_`, e.g. `#[weight_key = \"ws\"]`"),
                );
                return None;
            }
            let index = match r.weight_keys.iter().position(|k| k == key) {
                Some(i) => i,
                // A key past the limit is refused before it is recorded, so
                // modes are not also told they lack it.
                None if r.weight_keys.len() >= MAX_WEIGHT_KEYS => {
                    diags.push(Diagnostic::error(
                        Loc::NodeWeightKey(n),
                        format!("too many weight keys: at most {MAX_WEIGHT_KEYS} are supported"),
                    ));
                    return None;
                }
                None => {
                    r.weight_keys.push(key.clone());
                    r.weight_keys.len() - 1
                }
            };
            Some(index as u32)
        })
        .collect();
}

/// Each mode lists every used key once, no unused key, and valid values.
///
/// ```text
/// #[weight_key = "ws"] node saliency = saliency_dft(gray);
/// mode FAST { wc: 1.0 }            // error: mode `FAST` has no weight for `ws`
/// mode SLOW { ws: 1.0, wx: 0.5 }   // error: no node uses weight key `wx`
/// mode BAD  { ws: -1.0 }           // error: weight must be non-negative
/// ```
/// An unused key is an error rather than a warning: a weight nobody reads is
/// almost always a misspelled key.
///
/// A key that nodes use but *no* mode gives is reported once per node, at its
/// `#[weight_key]` annotation, with a did-you-mean against the keys the modes
/// give and no node uses: a typo in the annotation is one mistake, and the
/// "missing in mode" and "unused key" errors it would cause in every mode
/// are left out.
pub(crate) fn check_modes(spec: &GraphSpec, r: &Resolved, diags: &mut Diagnostics) {
    if spec.modes.is_empty() && !r.weight_keys.is_empty() {
        diags.push(
            Diagnostic::error(
                Loc::Pipeline,
                format!(
                    "weight key `{}` is used but no mode gives it a value",
                    r.weight_keys[0]
                ),
            )
            .note("help: declare a mode, e.g. `mode FULL { ws: 1.0 }`"),
        );
    }
    let given = |key: &str| {
        spec.modes
            .iter()
            .any(|m| m.weights.iter().any(|(k, _)| k == key))
    };
    let unused_mode_keys: Vec<&str> = {
        let mut keys: Vec<&str> = spec
            .modes
            .iter()
            .flat_map(|m| m.weights.iter().map(|(k, _)| k.as_str()))
            .filter(|k| !r.weight_keys.iter().any(|w| w == k))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    };
    // Node keys no mode gives, and the unused mode keys they were meant to be.
    let mut typo_keys: Vec<&str> = Vec::new();
    let mut meant: Vec<&str> = Vec::new();
    if !spec.modes.is_empty() {
        for (n, node) in spec.nodes.iter().enumerate() {
            let Some(key) = node.weight_key.as_deref() else {
                continue;
            };
            if given(key) || r.node_keys.get(n).copied().flatten().is_none() {
                continue;
            }
            let d = Diagnostic::error(
                Loc::NodeWeightKey(n),
                format!("no mode gives weight key `{key}`"),
            );
            let d = match did_you_mean(key, unused_mode_keys.iter().copied()) {
                Some(s) => {
                    meant.push(s);
                    d.note(format!(
                        "help: did you mean `{s}`? the modes give `{s}`, which no node uses"
                    ))
                }
                None => d.note(format!(
                    "help: give `{key}` a value in every mode, e.g. `{key}: 1.0` (0.0 eliminates `{}`)",
                    node.name
                )),
            };
            diags.push(d);
            typo_keys.push(key);
        }
    }
    for (m, mode) in spec.modes.iter().enumerate() {
        let mut seen = HashSet::new();
        for (e, (key, value)) in mode.weights.iter().enumerate() {
            if !seen.insert(key.as_str()) {
                diags.push(
                    Diagnostic::error(
                        Loc::ModeKey { mode: m, entry: e },
                        format!("weight `{key}` is given twice in mode `{}`", mode.name),
                    )
                    .label(
                        Loc::ModeKey {
                            mode: m,
                            entry: mode.weights.iter().position(|(k, _)| k == key).unwrap_or(e),
                        },
                        format!("`{key}` is first given here"),
                    ),
                );
                continue;
            }
            let declared = spec
                .nodes
                .iter()
                .any(|n| n.weight_key.as_deref() == Some(key.as_str()));
            if !declared && !meant.contains(&key.as_str()) {
                let d = Diagnostic::error(
                    Loc::ModeKey { mode: m, entry: e },
                    format!("no node uses weight key `{key}`"),
                );
                let d = match did_you_mean(key, r.weight_keys.iter().map(String::as_str)) {
                    Some(s) => d.note(format!("help: did you mean `{s}`?")),
                    None => d.note("help: annotate the node it scales with `#[weight_key = \"…\"]`, or remove this entry"),
                };
                diags.push(d);
            }
            if let Err(why) = check_weight_value(*value) {
                diags.push(Diagnostic::error(
                    Loc::ModeValue { mode: m, entry: e },
                    format!("weight `{key}` in mode `{}` {why}", mode.name),
                ));
            }
        }
        for key in &r.weight_keys {
            if !seen.contains(key.as_str()) && !typo_keys.contains(&key.as_str()) {
                let users: Vec<&str> = spec
                    .nodes
                    .iter()
                    .filter(|n| n.weight_key.as_deref() == Some(key.as_str()))
                    .map(|n| n.name.as_str())
                    .collect();
                diags.push(
                    Diagnostic::error(
                        Loc::Mode(m),
                        format!("mode `{}` has no weight for `{key}`", mode.name),
                    )
                    .note(format!(
                        "note: `{key}` scales node(s) {}",
                        quote_list(&users)
                    ))
                    .note(format!(
                        "help: add `{key}: <value>` to the mode (0.0 eliminates those nodes)"
                    )),
                );
            }
        }
    }
}

/// Every mode becomes a distinct, valid variant of `<Name>Mode`.
///
/// ```text
/// mode SELF { w: 1.0 }      // error: would become the keyword `Self`
/// mode FAST_2X { w: 1.0 }
/// mode Fast2x { w: 0.5 }    // error: both become `Fast2x`
/// ```
pub(crate) fn check_variants(spec: &GraphSpec, diags: &mut Diagnostics) {
    let mut seen: Vec<(String, usize)> = Vec::new();
    for (m, mode) in spec.modes.iter().enumerate() {
        let variant = mode_variant(&mode.name);
        if !is_valid_variant(&variant) {
            diags.push(
                Diagnostic::error(
                    Loc::Mode(m),
                    format!(
                        "mode `{}` would become the variant `{variant}` of `{}Mode`, which is a Rust keyword",
                        mode.name, spec.name
                    ),
                )
                .note("help: rename the mode (variants are the CamelCase of the mode's name)"),
            );
            continue;
        }
        match seen.iter().find(|(v, _)| *v == variant) {
            // The same name twice is reported as a duplicate mode.
            Some(&(_, first)) if spec.modes[first].name != mode.name => diags.push(
                Diagnostic::error(
                    Loc::Mode(m),
                    format!(
                        "modes `{}` and `{}` both become the variant `{variant}` of `{}Mode`",
                        spec.modes[first].name, mode.name, spec.name
                    ),
                )
                .note("help: rename one of them")
                .label(
                    Loc::Mode(first),
                    format!("`{}` is declared here", spec.modes[first].name),
                ),
            ),
            Some(_) => {}
            None => seen.push((variant, m)),
        }
    }
}

/// A node that no declared mode runs is almost certainly a mistake (every
/// mode gives its weight 0, or it only feeds such nodes): a warning, since
/// run-time weights may still run it.
pub(crate) fn check_runs_in_some_mode(
    spec: &GraphSpec,
    ir: &GraphIr,
    plans: &[Plan],
    diags: &mut Diagnostics,
) {
    if spec.modes.is_empty() {
        return;
    }
    for (n, node) in spec.nodes.iter().enumerate() {
        if plans.iter().any(|p| p.is_live(n as u32)) {
            continue;
        }
        let loc = match ir.nodes.get(n).and_then(|x| x.weight_key) {
            Some(_) => Loc::NodeWeightKey(n),
            None => Loc::Node(n),
        };
        diags.push(
            Diagnostic::warning(loc, format!("node `{}` runs in no mode", node.name))
                .note("note: every declared mode eliminates it; only run-time weights can run it"),
        );
    }
}

/// A mode's non-zero weight whose nodes all are eliminated in that mode
/// (they only feed nodes another zero weight removes) changes nothing the
/// mode computes: a warning at the weight, since it is almost always a
/// table written for another graph. Keys whose nodes no mode runs are
/// already reported at the node.
pub(crate) fn check_weights_take_effect(
    spec: &GraphSpec,
    ir: &GraphIr,
    plans: &[Plan],
    diags: &mut Diagnostics,
) {
    for (m, (mode, plan)) in spec.modes.iter().zip(plans).enumerate() {
        for (e, (key, value)) in mode.weights.iter().enumerate() {
            let Some(k) = ir.weight_keys.iter().position(|x| **x == **key) else {
                continue;
            };
            let weighted: Vec<u32> = (0..ir.nodes.len() as u32)
                .filter(|&n| ir.nodes[n as usize].weight_key == Some(k as u32))
                .collect();
            let runs_somewhere = |n: u32| plans.iter().any(|p| p.is_live(n));
            if *value == 0.0
                || weighted.iter().any(|&n| plan.is_live(n))
                || !weighted.iter().any(|&n| runs_somewhere(n))
            {
                continue;
            }
            let why = weighted
                .first()
                .and_then(|&n| plan.reason(n))
                .map_or_else(String::new, |r| format!(" ({})", r.describe(ir)));
            let names: Vec<&str> = weighted
                .iter()
                .map(|&n| ir.nodes[n as usize].name.as_ref())
                .collect();
            diags.push(
                Diagnostic::warning(
                    Loc::ModeValue { mode: m, entry: e },
                    format!(
                        "weight `{key}` changes nothing in mode `{}`: the mode eliminates {}{why}",
                        mode.name,
                        quote_list(&names)
                    ),
                )
                .note(format!(
                    "help: give `{key}` 0 in `{}`, or keep a consumer of its node running",
                    mode.name
                )),
            );
        }
    }
}

/// The modes' weight vectors, indexed like the weight keys.
///
/// A graph without weight keys and without modes gets one mode, `FULL`,
/// which runs every node.
pub(crate) fn build(spec: &GraphSpec, r: &Resolved) -> Vec<ModeIr> {
    if spec.modes.is_empty() {
        return vec![ModeIr {
            name: IMPLICIT_MODE.into(),
            weights: Vec::new().into(),
            rates: Vec::new().into(),
        }];
    }
    spec.modes
        .iter()
        .enumerate()
        .map(|(i, m)| ModeIr {
            name: m.name.clone().into(),
            weights: r
                .weight_keys
                .iter()
                .map(|k| {
                    m.weights
                        .iter()
                        .find(|(key, _)| key == k)
                        .map_or(0.0, |&(_, v)| v)
                })
                .collect::<Vec<_>>()
                .into(),
            rates: r.rates.get(i).cloned().unwrap_or_default().into(),
        })
        .collect()
}

/// `` `a`, `b` ``.
pub(crate) fn quote_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
