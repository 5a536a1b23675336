//! Rules about temporal state: each state is written by exactly one node, from
//! a node, and read by some node.

use super::names::{unknown_name, Namespace};
use super::{article, kind_word, Resolved};
use crate::model::ir::Endpoint;
use crate::model::spec::GraphSpec;
use crate::passes::diag::{Diagnostic, Diagnostics, Loc};

/// Resolves `producer -> state;` writes.
///
/// ```text
/// gray -> prev;          // error if `prev` is a node, not a state
/// frame -> _prev_frame;  // error: only a node can write a state
/// gray -> _prev_gray;
/// blur -> _prev_gray;    // error: `_prev_gray` is written twice
/// ```
pub(crate) fn resolve_writes(
    spec: &GraphSpec,
    ns: &Namespace<'_>,
    r: &mut Resolved,
    diags: &mut Diagnostics,
) {
    r.writes = spec
        .writes
        .iter()
        .enumerate()
        .map(|(w, write)| {
            let from = match ns.get(write.from.as_str()) {
                Some(&Endpoint::Node(n)) => Some(n),
                Some(&other) => {
                    diags.push(
                        Diagnostic::error(
                            Loc::WriteFrom(w),
                            format!("only a node can write a state, but `{}` is {} {}", write.from, article(other), kind_word(other)),
                        )
                        .note(format!(
                            "help: add a node that produces the value, e.g. `node {0}_copy = Clone::clone({0});`, and write that",
                            write.from
                        )),
                    );
                    None
                }
                None => {
                    diags.push(unknown_name(ns, Loc::WriteFrom(w), &write.from, "node"));
                    None
                }
            };
            let to = match ns.get(write.to.as_str()) {
                Some(&Endpoint::State(s)) => Some(s),
                Some(&other) => {
                    diags.push(
                        Diagnostic::error(
                            Loc::WriteTo(w),
                            format!("`{}` is {} {}, not a state: `->` writes a state", write.to, article(other), kind_word(other)),
                        )
                        .note(format!("help: declare `state {}: Type = initial_value;`", write.to)),
                    );
                    None
                }
                None => {
                    diags.push(unknown_name(ns, Loc::WriteTo(w), &write.to, "state"));
                    None
                }
            };
            let (from, to) = (from?, to?);
            match r.writers[to as usize] {
                Some(first) => {
                    diags.push(
                        Diagnostic::error(
                            Loc::WriteTo(w),
                            format!(
                                "state `{}` is written twice: by `{}` and by `{}`",
                                write.to, spec.nodes[first as usize].name, write.from
                            ),
                        )
                        .note("note: a state holds one value per frame, so exactly one node may write it"),
                    );
                    None
                }
                None => {
                    r.writers[to as usize] = Some(from);
                    Some((from, to))
                }
            }
        })
        .collect();
}

/// Every state is written and read.
///
/// ```text
/// state _prev: Gray = Gray::default();   // error: never written (no `x -> _prev;`)
/// ```
pub(crate) fn check_written_and_read(spec: &GraphSpec, r: &Resolved, diags: &mut Diagnostics) {
    let read = super::read_set(r);
    for (s, state) in spec.states.iter().enumerate() {
        if r.writers[s].is_none() {
            diags.push(
                Diagnostic::error(Loc::State(s), format!("state `{}` is never written", state.name))
                    .note(format!(
                        "help: write it from the node whose value the next frame should see, e.g. `gray -> {};`",
                        state.name
                    )),
            );
        }
        if !read.contains(&Endpoint::State(s as u32)) {
            diags.push(
                Diagnostic::error(
                    Loc::State(s),
                    format!("state `{}` is never read", state.name),
                )
                .note("help: pass it to a node as an argument, or remove the state and its write"),
            );
        }
    }
}
