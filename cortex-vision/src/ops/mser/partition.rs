//! Partition-parallel MSER: the image's interior is cut into horizontal
//! strips, each strip's component tree is flooded on its own worker
//! (rayon's pool), the trees are merged into the whole image's tree across
//! the cuts (`merge`), and the stable regions are selected and extracted
//! from the merged tree.
//!
//! The merged tree is the flooded tree: same regions, levels, sizes and
//! parents. Only two things the flood's order decides are not reproduced:
//! - which of several children of equal largest size is the `main_child`
//!   the variation walks down. That choice can change the selection only
//!   when `max_variation ≥ 0.5`, or in one narrow case that `stability`
//!   detects for every region; the pass then runs the plain flood instead,
//!   so the regions are always the flood's — and hence OpenCV's;
//! - the order of the regions and of each region's pixels: regions come by
//!   level, then in an order fixed by the partition count; pixels strip by
//!   strip, each strip's in its flood order.

use ndarray::{s, ArrayView2};
use rayon::prelude::*;

use super::extract::{
    corners_box, join_corners, push_pixels, sweep_spans, BoxScratch, Span, EMPTY_CORNERS,
};
use super::flood::{build_tree_with, JoinHook};
use super::merge::Forest;
use super::regions::{Region, RegionBox, Regions};
use super::tree::NONE;
use super::workspace::{keep_headroom, MserWorkspace};
use super::{checked_view, Mser, Polarity};
use crate::ops::fastdiv::RowSplitter;
use crate::ops::{GrayImage, OpsError};

/// Largest `max_variation` the partitioned pass supports exactly (see the
/// module docs); above it, passes run the plain flood.
const MAX_EXACT_VARIATION: f64 = 0.5;

/// Scratch memory of the partitioned detector: one flood workspace per
/// strip, the merge forest and the merged tree. Reuse it across frames.
#[derive(Debug, Default, Clone)]
pub struct PartitionWorkspace {
    /// The strips; the first `active` are the last pass's.
    strips: Vec<Strip>,
    active: usize,
    forest: Forest,
    selected: Vec<u32>,
    /// Output slot of each merged node (`NONE` when not selected).
    slot_of: Vec<u32>,
    /// `(slot, strip, span)` of every piece of every selected region.
    pieces: Vec<(u32, u32, Span)>,
    /// The plain flood, for passes whose ties the merged tree cannot settle.
    fallback: MserWorkspace,
    fallbacks: usize,
}

impl PartitionWorkspace {
    /// An empty workspace; buffers grow on first use.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many polarity passes of the last call ran the plain flood
    /// instead of the partitions (see the module docs).
    pub fn fallbacks(&self) -> usize {
        self.fallbacks
    }

    /// Heap bytes held by the buffers (capacities): what a detector keeps
    /// between frames.
    pub fn heap_bytes(&self) -> usize {
        use crate::ops::scratch::vec_bytes;
        let strips = self.strips.iter().fold(vec_bytes(&self.strips), |a, s| {
            a.saturating_add(s.heap_bytes())
        });
        [
            strips,
            self.forest.heap_bytes(),
            vec_bytes(&self.selected),
            vec_bytes(&self.slot_of),
            vec_bytes(&self.pieces),
            self.fallback.heap_bytes(),
        ]
        .iter()
        .fold(0usize, |a, &b| a.saturating_add(b))
    }
}

/// One strip: rows `row0 .. row0 + rows` of the image, whose first and
/// last rows are walls (the neighbouring strips' rows, or the image frame).
#[derive(Debug, Default, Clone)]
struct Strip {
    ws: MserWorkspace,
    row0: usize,
    rows: usize,
    /// Lineage start of each pixel of the first and of the last interior
    /// row (`2 × cols`), recorded while flooding.
    cut: Vec<u32>,
    /// Element number of the strip's node 0 in the forest.
    base: u32,
    boxes: BoxScratch,
    /// Box corners `[x0, y0, x1, y1]` of this strip's part of each selected
    /// region (strip rows; empty as `x0 > x1`).
    corners: Vec<[u32; 4]>,
}

impl Strip {
    fn heap_bytes(&self) -> usize {
        use crate::ops::scratch::vec_bytes;
        self.ws
            .heap_bytes()
            .saturating_add(vec_bytes(&self.cut))
            .saturating_add(self.boxes.heap_bytes())
            .saturating_add(vec_bytes(&self.corners))
    }

    /// Floods the strip and prepares the leaf lookup of its cut rows.
    fn flood(&mut self, gray: ArrayView2<'_, u8>, mask: u8) {
        let view = gray.slice(s![self.row0..self.row0 + self.rows, ..]);
        let cols = view.ncols();
        self.cut.resize(2 * cols, NONE);
        let mut hook = CutRows {
            cols: cols as u32,
            last: ((self.rows - 2) * cols) as u32,
            cut: &mut self.cut,
        };
        build_tree_with(&mut self.ws, view, mask, &mut hook);

        // All nodes with one `start` lie on one ancestor chain (see
        // `flood::Comp`); keep the deepest, indexed by `start`, in the
        // boundary heap's memory, which the flood no longer needs (it has a
        // slot per interior pixel, and `start` is a flood position). Entries
        // left from the flood or earlier frames are only trusted when they
        // name a node of this tree with that `start`, so it needs no
        // clearing.
        let nodes = &self.ws.nodes;
        let deepest = &mut self.ws.heap;
        for (i, n) in nodes.iter().enumerate() {
            let Some(slot) = deepest.get_mut(n.start as usize) else {
                continue;
            };
            let keep = nodes
                .get(*slot as usize)
                .is_some_and(|h| h.start == n.start && h.level <= n.level);
            if !keep {
                *slot = i as u32;
            }
        }
    }

    /// The strip node of the pixel in column `x` of its first (`last =
    /// false`) or last interior row: the node of the pixel's lineage at the
    /// pixel's level.
    fn leaf(&self, x: usize, last: bool) -> u32 {
        let cols = self.cut.len() / 2;
        let (row, at) = if last {
            (self.rows - 2, cols + x)
        } else {
            (1, x)
        };
        let level = self.ws.px.get(row * cols + x).map_or(0, |&v| v as u8);
        let nodes = &self.ws.nodes;
        let start = self.cut.get(at).copied().unwrap_or(NONE);
        let mut n = self.ws.heap.get(start as usize).copied().unwrap_or(NONE);
        while let Some(node) = nodes.get(n as usize) {
            if node.level >= level {
                break;
            }
            n = node.parent;
        }
        n
    }
}

/// Records the lineage start of the pixels of a strip's first and last
/// interior rows.
struct CutRows<'a> {
    cols: u32,
    /// Index of the last interior row's first pixel.
    last: u32,
    cut: &'a mut [u32],
}

impl JoinHook for CutRows<'_> {
    #[inline(always)]
    fn joined(&mut self, pixel: u32, start: u32) {
        let first = pixel.wrapping_sub(self.cols);
        if first < self.cols {
            if let Some(c) = self.cut.get_mut(first as usize) {
                *c = start;
            }
        }
        let last = pixel.wrapping_sub(self.last);
        if last < self.cols {
            if let Some(c) = self.cut.get_mut((self.cols + last) as usize) {
                *c = start;
            }
        }
    }
}

impl Mser {
    /// Regions of the given polarity with their pixels, each polarity's
    /// tree built on `partitions` strips in parallel (see the module docs
    /// of `partition`: the same regions as [`Mser::detect`], in another
    /// order). Allocates; see [`Mser::detect_partitioned_into`].
    pub fn detect_partitioned(
        &self,
        gray: &GrayImage,
        polarity: Polarity,
        partitions: usize,
    ) -> Result<Vec<Region>, OpsError> {
        let mut ws = PartitionWorkspace::new();
        let mut out = Regions::new();
        self.detect_partitioned_into(&mut ws, gray, polarity, partitions, &mut out)?;
        Ok(out.to_vec())
    }

    /// [`Mser::detect_partitioned`] into `out` (cleared first), reusing
    /// `ws`. Fails when `partitions` is 0; more partitions than interior
    /// rows use one per row.
    pub fn detect_partitioned_into(
        &self,
        ws: &mut PartitionWorkspace,
        gray: &GrayImage,
        polarity: Polarity,
        partitions: usize,
        out: &mut Regions,
    ) -> Result<(), OpsError> {
        out.clear();
        ws.fallbacks = 0;
        let Some(view) = checked_partitions(gray, partitions)? else {
            return Ok(());
        };
        for &pass in polarity.passes() {
            if self.partitioned_tree(ws, view, pass, partitions) {
                extract_regions(ws, view.ncols(), pass, out);
            } else {
                ws.fallbacks += 1;
                self.pass_regions(&mut ws.fallback, view, pass, out);
            }
        }
        Ok(())
    }

    /// Boxes and areas of the regions, each polarity's tree built on
    /// `partitions` strips in parallel: the same regions as
    /// [`Mser::detect_boxes`], in another order. Allocates.
    pub fn detect_boxes_partitioned(
        &self,
        gray: &GrayImage,
        polarity: Polarity,
        partitions: usize,
    ) -> Result<Vec<RegionBox>, OpsError> {
        let mut ws = PartitionWorkspace::new();
        let mut out = Vec::new();
        self.detect_boxes_partitioned_into(&mut ws, gray, polarity, partitions, &mut out)?;
        Ok(out)
    }

    /// [`Mser::detect_boxes_partitioned`] into `out` (cleared first),
    /// reusing `ws`.
    pub fn detect_boxes_partitioned_into(
        &self,
        ws: &mut PartitionWorkspace,
        gray: &GrayImage,
        polarity: Polarity,
        partitions: usize,
        out: &mut Vec<RegionBox>,
    ) -> Result<(), OpsError> {
        out.clear();
        ws.fallbacks = 0;
        let Some(view) = checked_partitions(gray, partitions)? else {
            return Ok(());
        };
        // Sized from the frame, not its content (see `Mser::region_room`).
        out.reserve(self.region_room(view) * polarity.passes().len());
        for &pass in polarity.passes() {
            if self.partitioned_tree(ws, view, pass, partitions) {
                extract_boxes(ws, view.ncols(), pass, out);
            } else {
                ws.fallbacks += 1;
                self.pass_boxes(&mut ws.fallback, view, pass, out);
            }
        }
        Ok(())
    }

    /// Builds the merged tree of one polarity and selects its stable
    /// regions into `ws.selected`; `false` when the selection could differ
    /// from the flood's (the caller then floods instead).
    fn partitioned_tree(
        &self,
        ws: &mut PartitionWorkspace,
        view: ArrayView2<'_, u8>,
        pass: Polarity,
        partitions: usize,
    ) -> bool {
        if self.params.max_variation >= MAX_EXACT_VARIATION {
            return false;
        }
        let (rows, cols) = view.dim();
        let interior = rows - 2;
        let count = partitions.min(interior);
        ws.strips
            .resize_with(count.max(ws.strips.len()), Strip::default);
        ws.active = count;
        let strips = &mut ws.strips[..count];
        for (k, strip) in strips.iter_mut().enumerate() {
            let first = 1 + k * interior / count;
            let end = 1 + (k + 1) * interior / count;
            strip.row0 = first - 1;
            strip.rows = end - first + 2;
        }
        let mask = pass.level_mask();
        strips.par_iter_mut().for_each(|s| s.flood(view, mask));

        let forest = &mut ws.forest;
        forest.clear();
        for strip in strips.iter_mut() {
            strip.base = forest.add_tree(&strip.ws.nodes);
        }
        for pair in strips.windows(2) {
            let (upper, lower) = (&pair[0], &pair[1]);
            let mut last = (NONE, NONE);
            for x in 1..cols - 1 {
                let a = upper.base + upper.leaf(x, true);
                let b = lower.base + lower.leaf(x, false);
                if (a, b) != last {
                    forest.connect(a, b);
                    last = (a, b);
                }
            }
        }
        forest.finish();
        keep_headroom(&mut forest.nodes);
        ws.selected.reserve(self.region_room(view));
        super::stability::select_stable(&mut forest.nodes, &self.params, &mut ws.selected)
    }
}

/// Checks the image like the plain detector, and that there is at least
/// one partition.
fn checked_partitions(
    gray: &GrayImage,
    partitions: usize,
) -> Result<Option<ArrayView2<'_, u8>>, OpsError> {
    if partitions == 0 {
        return Err(OpsError::InvalidParam {
            name: "partitions",
            reason: "must be at least 1".into(),
        });
    }
    checked_view(gray)
}

/// Numbers the selected nodes (output slots) and lists, per strip, the
/// strip nodes that make up each selected region (on the strips' workers):
/// a strip node belongs to the regions from its own merged node up to, not
/// including, the level of its strip parent, and these pieces of one region
/// are disjoint. With `boxes`, each strip also sweeps its pieces into its
/// own box corners per slot.
fn collect_pieces(ws: &mut PartitionWorkspace, cols: usize, boxes: bool) {
    let PartitionWorkspace {
        strips,
        active,
        forest,
        selected,
        slot_of,
        ..
    } = ws;
    let nodes = &forest.nodes;
    // Sized like the tree's buffer (which keeps headroom) and the selection
    // (reserved from the frame size), so steady-state frames reuse them.
    slot_of.clear();
    slot_of.reserve(nodes.capacity());
    slot_of.resize(nodes.len(), NONE);
    let room = selected.capacity();
    for (slot, &f) in selected.iter().enumerate() {
        if let Some(s) = slot_of.get_mut(f as usize) {
            *s = slot as u32;
        }
    }
    let (forest, slot_of, count) = (&*forest, &*slot_of, selected.len());
    strips[..*active].par_iter_mut().for_each(|strip| {
        strip.boxes.spans.clear();
        let tree = &strip.ws.nodes;
        for (i, n) in tree.iter().enumerate() {
            let above = tree
                .get(n.parent as usize)
                .map_or(u16::MAX, |p| u16::from(p.level));
            let mut f = forest.final_of(strip.base + i as u32);
            while let Some(merged) = forest.nodes.get(f as usize) {
                if u16::from(merged.level) >= above {
                    break;
                }
                if let Some(&slot) = slot_of.get(f as usize).filter(|&&s| s != NONE) {
                    strip.boxes.spans.push(Span::new(n.start, n.size, slot));
                }
                f = merged.parent;
            }
        }
        keep_headroom(&mut strip.boxes.spans);
        if boxes {
            let corners = &mut strip.corners;
            corners.clear();
            corners.reserve(room);
            corners.resize(count, EMPTY_CORNERS);
            sweep_spans(&strip.ws.order, cols as u32, &mut strip.boxes, |slot, c| {
                if let Some(s) = corners.get_mut(slot as usize) {
                    *s = join_corners(*s, c);
                }
            });
        }
    });
}

/// Appends the selected regions' boxes: each strip's pieces swept once
/// (`extract::sweep_spans`), the strips' boxes joined per region.
fn extract_boxes(
    ws: &mut PartitionWorkspace,
    cols: usize,
    polarity: Polarity,
    out: &mut Vec<RegionBox>,
) {
    collect_pieces(ws, cols, true);
    let PartitionWorkspace {
        strips,
        active,
        forest,
        selected,
        ..
    } = ws;
    let nodes = &forest.nodes;
    out.reserve(selected.len());
    for (slot, &f) in selected.iter().enumerate() {
        let mut c = EMPTY_CORNERS;
        for strip in &strips[..*active] {
            let Some(s) = strip.corners.get(slot).filter(|s| s[0] <= s[2]) else {
                continue;
            };
            let dy = strip.row0 as u32;
            c = join_corners(c, [s[0], s[1] + dy, s[2], s[3] + dy]);
        }
        out.push(RegionBox {
            bbox: corners_box(c),
            area: nodes.get(f as usize).map_or(0, |n| n.size),
            polarity,
        });
    }
}

/// Appends the selected regions with their pixels, strip by strip.
fn extract_regions(
    ws: &mut PartitionWorkspace,
    cols: usize,
    polarity: Polarity,
    out: &mut Regions,
) {
    collect_pieces(ws, cols, false);
    let PartitionWorkspace {
        strips,
        active,
        forest,
        selected,
        pieces,
        ..
    } = ws;
    let nodes = &forest.nodes;
    pieces.clear();
    for (k, strip) in strips.iter().enumerate().take(*active) {
        pieces.extend(strip.boxes.spans.iter().map(|s| (s.slot(), k as u32, *s)));
    }
    pieces.sort_unstable_by_key(|&(slot, k, s)| (slot, k, s.range().start));
    let split = RowSplitter::new(cols as u32);
    let total: usize = pieces.iter().map(|(_, _, s)| s.range().len()).sum();
    out.reserve_regions(selected.len());
    out.reserve_pixels(total);
    let mut rest = &pieces[..];
    for (slot, &f) in selected.iter().enumerate() {
        let n = rest
            .iter()
            .position(|&(s, _, _)| s as usize != slot)
            .unwrap_or(rest.len());
        let (mine, tail) = rest.split_at(n);
        rest = tail;
        out.begin_region();
        let mut corners = EMPTY_CORNERS;
        for &(_, k, span) in mine {
            let Some(strip) = strips.get(k as usize) else {
                continue;
            };
            let pixels = strip.ws.order.get(span.range()).unwrap_or(&[]);
            push_pixels(out, pixels, &split, strip.row0 as u32, &mut corners);
        }
        out.finish_region(RegionBox {
            bbox: corners_box(corners),
            area: nodes.get(f as usize).map_or(0, |n| n.size),
            polarity,
        });
    }
}
