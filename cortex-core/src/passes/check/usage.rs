//! Rules about dead declarations: every input and node is consumed (read
//! by a node or, as a trigger, by a mode's rate).

use super::Resolved;
use crate::model::ir::{Endpoint, GraphIr};
use crate::model::spec::GraphSpec;
use crate::passes::dce;
use crate::passes::diag::{Diagnostic, Diagnostics, Loc};

/// Every input is read by a node or a rate's trigger; every node is read by
/// a node or a trigger, written to a state, or returned.
///
/// ```text
/// input depth: DepthMap;              // error: input `depth` is never used
/// node edges = sobel(gray);           // error: node `edges` is never used
/// ```
pub(crate) fn check_consumed(spec: &GraphSpec, r: &Resolved, diags: &mut Diagnostics) {
    let read_set = super::read_set(r);
    let read = |e: Endpoint| read_set.contains(&e);
    let mut kept = vec![false; spec.nodes.len()];
    let written = r.writes.iter().flatten().map(|&(from, _)| from);
    for id in written.chain(r.outputs.iter().flatten().copied()) {
        if let Some(k) = kept.get_mut(id as usize) {
            *k = true;
        }
    }
    for (i, input) in spec.inputs.iter().enumerate() {
        if !read(Endpoint::Input(i as u32)) {
            diags.push(
                Diagnostic::error(
                    Loc::Input(i),
                    format!("input `{}` is never used", input.name),
                )
                .note("help: pass it to a node, or remove it"),
            );
        }
    }
    for (n, node) in spec.nodes.iter().enumerate() {
        let id = n as u32;
        if !read(Endpoint::Node(id)) && !kept[n] {
            diags.push(
                Diagnostic::error(Loc::Node(n), format!("node `{}` is never used", node.name))
                    .note(
                        "help: pass it to another node, write it to a state, or add it to `output`",
                    ),
            );
        }
    }
}

/// Every node contributes to an output when no weight is zero. A node can be
/// "used" and still dead: e.g. it writes a state that only it reads.
///
/// ```text
/// state _acc: u64 = 0;
/// node acc = add(x, _acc);   // error: `acc` reaches no output
/// acc -> _acc;
/// ```
pub(crate) fn check_reaches_output(spec: &GraphSpec, ir: &GraphIr, diags: &mut Diagnostics) {
    // The full graph with every mode's triggers read: a node computing a
    // trigger contributes to the decision of a rate.
    let mut triggers = Vec::new();
    for m in 0..ir.modes.len() {
        triggers.extend(dce::triggers(ir, m));
    }
    let full = dce::plan_reading(
        ir,
        0,
        &triggers,
        crate::model::outputs::OutputSet::ALL,
        "full",
    );
    for e in full.eliminated.iter() {
        let name = &spec.nodes[e.node as usize].name;
        diags.push(
            Diagnostic::error(
                Loc::Node(e.node as usize),
                format!("node `{name}` does not contribute to any output"),
            )
            .note("note: it is used only by nodes, or through states, that no output depends on")
            .note("help: add it (or what it feeds) to `output`, or remove it"),
        );
    }
}
