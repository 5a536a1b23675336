//! Rules about dead declarations: every input and node is consumed.

use super::Resolved;
use crate::diag::{Diagnostic, Diagnostics, Loc};
use crate::ir::{Arg, Endpoint};
use crate::spec::GraphSpec;

/// Every input is read by a node; every node is read by a node, written to a
/// state, or returned.
///
/// ```text
/// input depth: DepthMap;              // error: input `depth` is never used
/// node edges = sobel(gray);           // error: node `edges` is never used
/// ```
pub(crate) fn check_consumed(spec: &GraphSpec, r: &Resolved, diags: &mut Diagnostics) {
    let read = |e: Endpoint| {
        r.args
            .iter()
            .flatten()
            .any(|a| matches!(a, Some(Arg::Value(x)) if *x == e))
    };
    for (i, input) in spec.inputs.iter().enumerate() {
        if !read(Endpoint::Input(i as u32)) {
            diags.push(
                Diagnostic::error(Loc::Input(i), format!("input `{}` is never used", input.name))
                    .note("help: pass it to a node, or remove it"),
            );
        }
    }
    for (n, node) in spec.nodes.iter().enumerate() {
        let id = n as u32;
        let written = r.writes.iter().flatten().any(|&(from, _)| from == id);
        let returned = r.outputs.iter().any(|&o| o == Some(id));
        if !read(Endpoint::Node(id)) && !written && !returned {
            diags.push(
                Diagnostic::error(Loc::Node(n), format!("node `{}` is never used", node.name))
                    .note("help: pass it to another node, write it to a state, or add it to `output`"),
            );
        }
    }
}
