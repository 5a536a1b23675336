//! The component tree the flooding builds: one node per extremal region.
//!
//! A node stands for the connected component of `{p : level(p) ≤ t}` at the
//! lowest threshold `t` where it has exactly its pixels; the threshold is the
//! node's `level`. Its parent is the next larger extremal region containing
//! it. Among a node's children the largest is its `main_child`: the
//! variation walks down that chain (see `stability`).

/// "No node" / "no pixel" marker.
pub(super) const NONE: u32 = u32::MAX;

/// A component being grown by the flood, kept on the workspace's stack. Its `start` also names its lineage: every tree
/// node it closes has that `start`, and all nodes with one `start` contain
/// the pixel at that position of the flood order, so they lie on one
/// ancestor chain.
#[derive(Debug, Clone, Copy)]
pub(super) struct Comp {
    /// Current level (the flood's sentinel level for the sentinel).
    pub level: u32,
    /// Pixels so far.
    pub size: u32,
    /// Where its pixels start in `order`.
    pub start: u32,
    /// Its latest tree node: open (same level) or the one it rose from.
    pub node: u32,
}

impl Comp {
    /// An empty component at `level` whose pixels will start at `start`.
    pub fn new(level: u32, start: u32) -> Self {
        Self {
            level,
            size: 0,
            start,
            node: NONE,
        }
    }
}

/// One extremal region.
#[derive(Debug, Clone, Copy)]
pub(super) struct Node {
    /// Number of pixels.
    pub size: u32,
    /// Enclosing region, or [`NONE`] for the root.
    pub parent: u32,
    /// Largest child (ties go to the one merged last), or [`NONE`].
    pub main_child: u32,
    /// Where the region's pixels start in the flood order.
    pub start: u32,
    /// Variation; `+∞` for regions below `min_area`, which are never
    /// reported and never block a neighbour.
    pub var: f32,
    /// Smallest variation among the children (`+∞` without children).
    pub min_child_var: f32,
    /// Flooding level (the gray value, or `255 - value` for bright regions).
    pub level: u8,
    /// Lowest and highest level among the children that tie for the largest
    /// size ([`NO_TIE`] without a tie). The flood's choice among them is
    /// OpenCV's; in a tree merged from strips it is arbitrary, and
    /// `stability` checks that it cannot change the result.
    pub tie: (u8, u8),
}

/// [`Node::tie`] when no two children tie for the largest size.
pub(super) const NO_TIE: (u8, u8) = (u8::MAX, 0);

/// Offers `parent` a child `id` of `size` pixels at `level`; `main` is the
/// size and level of its current `main_child`, if any. A larger child
/// becomes the main child; an equal one too (the flood merges children in
/// OpenCV's order, and OpenCV keeps the last of equal ones), and the tie's
/// levels are recorded.
pub(super) fn offer_child(
    parent: &mut Node,
    main: Option<(u32, u8)>,
    id: u32,
    size: u32,
    level: u8,
) {
    match main {
        Some((main_size, _)) if main_size > size => {}
        Some((main_size, main_level)) if main_size == size => {
            let (lo, hi) = if parent.tie == NO_TIE {
                (main_level, main_level)
            } else {
                parent.tie
            };
            parent.tie = (lo.min(level), hi.max(level));
            parent.main_child = id;
        }
        _ => {
            parent.main_child = id;
            parent.tie = NO_TIE;
        }
    }
}

impl Node {
    /// A fresh node at `level` whose previous incarnation is `main_child`.
    pub(super) fn new(level: u8, main_child: u32) -> Self {
        Self {
            size: 0,
            parent: NONE,
            main_child,
            start: 0,
            var: f32::INFINITY,
            min_child_var: f32::INFINITY,
            level,
            tie: NO_TIE,
        }
    }
}
