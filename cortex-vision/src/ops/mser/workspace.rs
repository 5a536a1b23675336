//! Buffers of one MSER pass, kept between calls so that a detector running
//! on every frame stops allocating once it has seen the largest frame.

use super::extract::BoxScratch;
use super::regions::{RegionBox, Regions};
use super::tree::{Comp, Node};

/// Scratch memory for one polarity pass. Reuse it across frames; use two
/// (see [`super::Mser::detect_both_parallel_into`]) to run both polarities at
/// once.
#[derive(Debug, Default, Clone)]
pub struct MserWorkspace {
    /// Per pixel: flooding level in the low byte, the visited flag above.
    pub(super) px: Vec<u16>,
    /// Pixels in the order they joined a component (pixel mode); every
    /// tree node is a contiguous range of it.
    pub(super) order: Vec<u32>,
    /// Boundary pixels, one LIFO stack per level laid out back to back (a
    /// slot per interior pixel); after the flood, the partitioned detector
    /// reuses it as a table indexed by flood position.
    pub(super) heap: Vec<u32>,
    /// Components waiting below the current one, lowest level on top.
    pub(super) stack: Vec<Comp>,
    /// The component tree.
    pub(super) nodes: Vec<Node>,
    /// Indices of the maximally stable nodes.
    pub(super) selected: Vec<u32>,
    /// Output of this pass when it is the second half of the polarity
    /// split (appended to the caller's output afterwards).
    pub(super) regions: Regions,
    /// Box output of this pass when it is the second half of the split.
    pub(super) boxes: Vec<RegionBox>,
    /// Sort and sweep buffers of the box extraction.
    pub(super) box_scratch: BoxScratch,
}

/// Makes room for twice `v`'s current length. Called on the tree once a
/// pass has built it (its size depends on the image's content, up to one
/// node per pixel, too much to reserve up front): a frame then only
/// reallocates when it needs more than twice what the most complex frame so
/// far needed, instead of whenever it needs a little more (plain doubling
/// can leave no headroom at all), so a video reaches its steady state after
/// a few frames.
pub(super) fn keep_headroom<T>(v: &mut Vec<T>) {
    let want = v.len().saturating_mul(2);
    if v.capacity() < want {
        v.reserve_exact(want - v.len());
    }
}

impl MserWorkspace {
    /// An empty workspace; buffers grow on first use.
    pub fn new() -> Self {
        Self::default()
    }

    /// Heap bytes held by the buffers (capacities): what a detector keeps
    /// between frames (also what the kernels' scratch retention counts).
    pub fn heap_bytes(&self) -> usize {
        use crate::ops::scratch::vec_bytes;
        [
            vec_bytes(&self.px),
            vec_bytes(&self.order),
            vec_bytes(&self.heap),
            vec_bytes(&self.stack),
            vec_bytes(&self.nodes),
            vec_bytes(&self.selected),
            vec_bytes(&self.boxes),
            self.regions.heap_bytes(),
            self.box_scratch.heap_bytes(),
        ]
        .iter()
        .fold(0usize, |a, &b| a.saturating_add(b))
    }

    /// Number of component-tree nodes built by the last pass (a measure of
    /// image complexity, useful in benchmarks).
    pub fn last_tree_size(&self) -> usize {
        self.nodes.len()
    }
}
