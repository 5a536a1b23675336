//! Stability of the tree's regions and the choice of the maximally stable
//! ones, with OpenCV 4.6's definitions (it computes them online while
//! flooding; on the finished tree two linear sweeps give the same values).
//!
//! Variation of a node `R` at level `g`:
//! `var(R) = (|R⁺| − |R⁻|) / |R|` where
//! - `R⁺` is the largest ancestor of `R` (or `R`) with level `≤ g + delta`;
//! - `R⁻` is the smallest region on `R`'s main-child chain (or `R`) with
//!   level `≥ g − delta`. Note: OpenCV takes the region *at or above*
//!   `g − delta`, not the one in effect at `g − delta` (which would be the
//!   next one down); we do the same to agree with it.
//!
//! A node is maximally stable when `min_area ≤ |R| ≤ max_area`,
//! `var ≤ max_variation`, no child has a smaller variation, and either
//! `var = 0` or `var` is smaller than its parent's.
//!
//! Deliberate difference: the root (the whole interior of the image) is
//! never reported. OpenCV reports it when it passes the tests above, which
//! only happens for images of at most `max_area` interior pixels, e.g. a
//! uniform 50×50 image yields one "region" per polarity: the frame itself.

use super::params::MserParams;
use super::tree::{Node, NONE};

/// Computes every node's variation and pushes the maximally stable nodes to
/// `out` (cleared first), in node order.
///
/// Returns whether the selection is certainly the one the flood's tree
/// gives. It always is for a flooded tree. For a tree built without the
/// flood's order (the partitioned detector), `main_child` among children
/// tying for the largest size is arbitrary; the selection depends only on
/// each variation *clamped* at `max_variation` (a value above it selects
/// and blocks nothing, whatever its size), and with `max_variation < 0.5`
/// a tie can change a clamped variation in one way only: the tied children
/// lie on both sides of the walk's lower bound, so one choice stops the walk
/// at the tied node and the other goes on (into a child of at most half the
/// region, hence a variation above 0.5). `false` means such a tie decides a
/// variation that would be at most `max_variation` if the walk stopped.
pub(super) fn select_stable(nodes: &mut [Node], p: &MserParams, out: &mut Vec<u32>) -> bool {
    out.clear();
    let delta = i32::from(p.delta);
    let mut exact = true;

    // Variations, each folded into its parent's smallest-child variation
    // (initialised to +∞ when the node was created) in the same sweep.
    for i in 0..nodes.len() {
        let n = nodes[i];
        let var = if n.size < p.min_area {
            f32::INFINITY
        } else {
            let (var, tie_decides) = variation(nodes, i, delta, p.max_variation);
            exact &= !tie_decides;
            var
        };
        nodes[i].var = var;
        if let Some(parent) = nodes.get_mut(n.parent as usize) {
            if var < parent.min_child_var {
                parent.min_child_var = var;
            }
        }
    }

    for (i, n) in nodes.iter().enumerate() {
        if n.parent == NONE || n.size < p.min_area || n.size > p.max_area {
            continue;
        }
        if f64::from(n.var) > p.max_variation || n.var > n.min_child_var {
            continue;
        }
        let parent_var = nodes
            .get(n.parent as usize)
            .map_or(f32::INFINITY, |q| q.var);
        if n.var > 0.0 && n.var >= parent_var {
            continue;
        }
        out.push(i as u32);
    }
    exact
}

/// `var` of node `i` (see the module docs), and whether a tie of the
/// largest children decides it (see [`select_stable`]). Both walks move at
/// least one level per step and stop after `delta` levels, so this is
/// `O(delta)`.
fn variation(nodes: &[Node], i: usize, delta: i32, max_variation: f64) -> (f32, bool) {
    let n = &nodes[i];
    let level = i32::from(n.level);

    let mut up = n;
    while let Some(p) = nodes.get(up.parent as usize) {
        if i32::from(p.level) > level + delta {
            break;
        }
        up = p;
    }

    // Sizes grow towards the root, so the difference is non-negative; the
    // int → float order matches OpenCV's (it matters for ties).
    let var_to = |down: &Node| up.size.saturating_sub(down.size) as f32 / n.size as f32;
    let floor = level - delta;
    let mut tie_decides = false;
    let mut down = n;
    loop {
        let (lo, hi) = down.tie;
        if i32::from(lo) < floor && floor <= i32::from(hi) {
            tie_decides |= f64::from(var_to(down)) <= max_variation;
        }
        match nodes.get(down.main_child as usize) {
            Some(c) if i32::from(c.level) >= floor => down = c,
            _ => break,
        }
    }
    (var_to(down), tie_decides)
}
