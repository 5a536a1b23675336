//! Turns the selected tree nodes into output regions.

use super::regions::{RegionBox, Regions};
use super::tree::Node;
use super::Polarity;
use crate::ops::fastdiv::RowSplitter;
use crate::ops::types::BBox;

/// Appends the selected nodes with their pixels: each node's pixels are the
/// contiguous range `order[start..start + size]` (see `flood`).
pub(super) fn regions_into(
    nodes: &[Node],
    order: &[u32],
    selected: &[u32],
    cols: u32,
    polarity: Polarity,
    out: &mut Regions,
) {
    let split = RowSplitter::new(cols);
    let range = |n: &Node| {
        let start = n.start as usize;
        order.get(start..start + n.size as usize).unwrap_or(&[])
    };
    let total: usize = selected
        .iter()
        .filter_map(|&i| nodes.get(i as usize))
        .map(|n| range(n).len())
        .sum();
    out.reserve_pixels(total);
    for n in selected.iter().filter_map(|&i| nodes.get(i as usize)) {
        out.begin_region();
        let mut corners = EMPTY_CORNERS;
        let pixels = range(n);
        push_pixels(out, pixels, &split, 0, &mut corners);
        out.finish_region(RegionBox {
            bbox: corners_box(corners),
            area: pixels.len() as u32,
            polarity,
        });
    }
}

/// Box corners `[x0, y0, x1, y1]` (inclusive) of nothing: `x0 > x1`.
pub(super) const EMPTY_CORNERS: [u32; 4] = [u32::MAX, u32::MAX, 0, 0];

/// The corners covering both `a` and `b`.
pub(super) fn join_corners(a: [u32; 4], b: [u32; 4]) -> [u32; 4] {
    [
        a[0].min(b[0]),
        a[1].min(b[1]),
        a[2].max(b[2]),
        a[3].max(b[3]),
    ]
}

/// The box of non-empty corners (pixel coordinates are `u32` here to keep
/// the per-pixel buffers small; a `u32` always fits in `usize`).
pub(super) fn corners_box([x0, y0, x1, y1]: [u32; 4]) -> BBox {
    BBox::from_corners(x0 as usize, y0 as usize, x1 as usize, y1 as usize)
}

/// Appends the pixels at the image indices `pixels` (rows moved down by
/// `dy`) to the region being built in `out`, growing `corners` over them.
pub(super) fn push_pixels(
    out: &mut Regions,
    pixels: &[u32],
    split: &RowSplitter,
    dy: u32,
    corners: &mut [u32; 4],
) {
    for &p in pixels {
        let (x, y) = split.split(p);
        let y = y + dy;
        out.push_pixel(x, y);
        *corners = join_corners(*corners, [x, y, x, y]);
    }
}

/// A selected node's pixel range in the flood order and its output slot.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span {
    start: u32,
    end: u32,
    slot: u32,
}

impl Span {
    /// The range `start .. start + size`, reported under `slot`.
    pub(super) fn new(start: u32, size: u32, slot: u32) -> Self {
        Self {
            start,
            end: start.saturating_add(size),
            slot,
        }
    }

    /// The range in the flood order.
    pub(super) fn range(&self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    /// The output slot.
    pub(super) fn slot(&self) -> u32 {
        self.slot
    }
}

/// A range being scanned: its end, the box of what was scanned so far
/// (inclusive corners, empty as `x0 > x1`) and its output slot.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Open {
    end: u32,
    x0: u32,
    y0: u32,
    x1: u32,
    y1: u32,
    slot: u32,
}

impl Open {
    fn merge(&mut self, o: &Open) {
        self.x0 = self.x0.min(o.x0);
        self.y0 = self.y0.min(o.y0);
        self.x1 = self.x1.max(o.x1);
        self.y1 = self.y1.max(o.y1);
    }
}

/// Scratch of [`boxes_into`].
#[derive(Debug, Default, Clone)]
pub(crate) struct BoxScratch {
    /// The ranges to sweep.
    pub(super) spans: Vec<Span>,
    open: Vec<Open>,
}

impl BoxScratch {
    pub(super) fn heap_bytes(&self) -> usize {
        use crate::ops::scratch::vec_bytes;
        vec_bytes(&self.spans).saturating_add(vec_bytes(&self.open))
    }

    /// Room for `regions` selected nodes; the open stack is bounded by the
    /// tree's depth in levels (an enclosing range is an ancestor, strictly
    /// higher), so its reservation is final.
    pub(super) fn reserve(&mut self, regions: usize) {
        self.spans.reserve(regions);
        self.open.reserve(257);
    }
}

/// Appends the boxes of the selected nodes (in `selected`'s order).
pub(super) fn boxes_into(
    nodes: &[Node],
    order: &[u32],
    selected: &[u32],
    cols: u32,
    polarity: Polarity,
    scratch: &mut BoxScratch,
    out: &mut Vec<RegionBox>,
) {
    let first = out.len();
    scratch.spans.clear();
    for n in selected.iter().filter_map(|&i| nodes.get(i as usize)) {
        let slot = (out.len() - first) as u32;
        scratch.spans.push(Span::new(n.start, n.size, slot));
        out.push(RegionBox {
            bbox: BBox::default(),
            area: n.size,
            polarity,
        });
    }
    sweep_spans(order, cols, scratch, |slot, [x0, y0, x1, y1]| {
        if let Some(b) = out.get_mut(first + slot as usize) {
            b.bbox = corners_box([x0, y0, x1, y1]);
        }
    });
}

/// The boxes of the ranges in `scratch.spans` (sorted here), as inclusive
/// corners `[x0, y0, x1, y1]` handed to `emit` with each span's slot.
///
/// Node ranges in the flood order are nested (ancestor) or disjoint, and
/// stable regions often nest several deep, so scanning every range would
/// read the shared pixels once per enclosing region. Instead the ranges are
/// swept once in order of their starts with a stack of open ranges: every
/// pixel updates only the innermost open range, and a range's box is merged
/// into its enclosing one when it closes. Each pixel of the union of the
/// ranges is read once.
pub(super) fn sweep_spans(
    order: &[u32],
    cols: u32,
    scratch: &mut BoxScratch,
    mut emit: impl FnMut(u32, [u32; 4]),
) {
    let split = RowSplitter::new(cols);
    let BoxScratch { spans, open } = scratch;
    open.clear();
    // Enclosing ranges first when two start together.
    spans.sort_unstable_by_key(|s| (s.start, std::cmp::Reverse(s.end)));

    let scan = |o: &mut Open, pixels: &[u32]| {
        for &p in pixels {
            let (x, y) = split.split(p);
            o.x0 = o.x0.min(x);
            o.x1 = o.x1.max(x);
            o.y0 = o.y0.min(y);
            o.y1 = o.y1.max(y);
        }
    };
    // Scans up to `target`, closing the ranges that end by then.
    let mut pos = 0u32;
    let mut advance = |target: u32, open: &mut Vec<Open>| {
        while let Some(top) = open.last_mut() {
            let stop = top.end.min(target);
            if pos < stop {
                scan(top, order.get(pos as usize..stop as usize).unwrap_or(&[]));
                pos = stop;
            }
            if top.end > target {
                return;
            }
            let done = *top;
            open.pop();
            emit(done.slot, [done.x0, done.y0, done.x1, done.y1]);
            if let Some(parent) = open.last_mut() {
                parent.merge(&done);
            }
        }
        pos = pos.max(target);
    };
    for s in spans.iter() {
        advance(s.start, &mut *open);
        open.push(Open {
            end: s.end,
            x0: u32::MAX,
            y0: u32::MAX,
            x1: 0,
            y1: 0,
            slot: s.slot,
        });
    }
    advance(u32::MAX, &mut *open);
}
