//! Rules about modes and weights: every mode gives exactly the weight keys the
//! nodes use, each a finite, non-negative number.

use std::collections::HashSet;

use super::{Resolved, MAX_WEIGHT_KEYS};
use crate::diag::{did_you_mean, Diagnostic, Diagnostics, Loc};
use crate::ir::ModeIr;
use crate::spec::GraphSpec;
use crate::weights::check_weight_value;

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
                None => {
                    r.weight_keys.push(key.clone());
                    r.weight_keys.len() - 1
                }
            };
            if index >= MAX_WEIGHT_KEYS {
                diags.push(Diagnostic::error(
                    Loc::NodeWeightKey(n),
                    format!("too many weight keys: at most {MAX_WEIGHT_KEYS} are supported"),
                ));
                return None;
            }
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
/// almost always a misspelled key, and stable proc macros cannot warn.
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
    for (m, mode) in spec.modes.iter().enumerate() {
        let mut seen = HashSet::new();
        for (e, (key, value)) in mode.weights.iter().enumerate() {
            if !seen.insert(key.as_str()) {
                diags.push(Diagnostic::error(
                    Loc::ModeKey { mode: m, entry: e },
                    format!("weight `{key}` is given twice in mode `{}`", mode.name),
                ));
                continue;
            }
            if !r.weight_keys.contains(key) {
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
            if !seen.contains(key.as_str()) {
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

/// The modes' weight vectors, indexed like the weight keys.
///
/// A graph without weight keys and without modes gets one mode, `FULL`,
/// which runs every node.
pub(crate) fn build(spec: &GraphSpec, r: &Resolved) -> Vec<ModeIr> {
    if spec.modes.is_empty() {
        return vec![ModeIr {
            name: IMPLICIT_MODE.into(),
            weights: Vec::new().into(),
        }];
    }
    spec.modes
        .iter()
        .map(|m| ModeIr {
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
