//! Rules about nodes that fill their own buffer (`&mut name`): the buffer
//! is passed once, and its type is declared so the pipeline can own it.

use crate::model::spec::{ArgSpec, GraphSpec};
use crate::passes::diag::{Diagnostic, Diagnostics, Loc};

/// Checks every node passing its own buffer.
///
/// ```text
/// node c = ops::center_into(gray, &mut c)?;           // error: needs its type
/// node c: ScoreMap = ops::center_into(&mut c, &mut c)?; // error: passed twice
/// ```
pub(crate) fn check_buffers(spec: &GraphSpec, diags: &mut Diagnostics) {
    for (n, node) in spec.nodes.iter().enumerate() {
        let mut seen = None;
        for (a, arg) in node.args.iter().enumerate() {
            if !matches!(arg, ArgSpec::Buffer) {
                continue;
            }
            let loc = Loc::NodeArg { node: n, arg: a };
            match seen {
                Some(first) => diags.push(
                    Diagnostic::error(loc, format!("`&mut {}` is passed twice", node.name))
                        .note("help: a node fills one buffer, its own; pass it once")
                        .label(
                            Loc::NodeArg {
                                node: n,
                                arg: first,
                            },
                            "first passed here",
                        ),
                ),
                None if node.ty.is_none() => {
                    seen = Some(a);
                    diags.push(
                        Diagnostic::error(
                            loc,
                            format!(
                                "`&mut {0}` fills a buffer the pipeline owns, so node `{0}` needs its type",
                                node.name
                            ),
                        )
                        .note(format!(
                            "help: declare it: `node {}: Type = {}(…)`",
                            node.name, node.op
                        )),
                    );
                }
                None => seen = Some(a),
            }
        }
    }
}
