//! The rows every member computes in every strip: its own share of the
//! output rows when its value leaves the group, plus every row its
//! consumers in the group read for theirs (the halo, recomputed by each
//! strip that needs it).

use std::ops::Range;

use super::geometry::Geometry;
use super::group::{Node, Value};
use super::rows::{hull, input_rows, part};

/// The rows of one strip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StripRows {
    /// Per member: the rows it computes (empty: it does not run).
    pub need: Vec<Range<usize>>,
    /// Per member: the rows of its value this strip writes to the
    /// whole-frame output (empty for a value that does not leave).
    pub own: Vec<Range<usize>>,
}

/// The rows of strip `s` of `strips`, given each member's row geometry.
/// A `folded` member computes no rows (its whole value is computed once per
/// geometry), so it widens none of its producers'.
pub(crate) fn strip_rows(
    nodes: &[Node],
    rows: &[Geometry],
    folded: &[bool],
    s: usize,
    strips: usize,
) -> StripRows {
    let n = nodes.len();
    let own: Vec<Range<usize>> = nodes
        .iter()
        .zip(rows)
        .map(|(node, g)| match node.output {
            Some(_) => part(s, strips, g.height),
            None => 0..0,
        })
        .collect();
    let mut need = own.clone();
    // Consumers come after their producers: walking backwards, a member's
    // needs are final before it widens its producers'.
    for i in (0..n).rev() {
        if folded.get(i).copied().unwrap_or(false) {
            need[i] = 0..0;
            continue;
        }
        if need[i].is_empty() {
            continue;
        }
        let window = nodes[i].member.kind().window();
        for a in &nodes[i].args {
            if let Value::Node(j) = *a {
                let r = input_rows(need[i].clone(), rows[i].height, rows[j].height, window);
                need[j] = hull(need[j].clone(), r);
            }
        }
    }
    StripRows { need, own }
}
