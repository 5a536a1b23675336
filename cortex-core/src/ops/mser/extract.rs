//! Turns the selected tree nodes into output regions.

use super::fastdiv::RowSplitter;
use super::regions::{BBox, RegionBox, Regions};
use super::tree::Node;
use super::Polarity;

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
        let (mut x0, mut y0, mut x1, mut y1) = (u32::MAX, u32::MAX, 0, 0);
        let pixels = range(n);
        for &p in pixels {
            let (x, y) = split.split(p);
            out.push_pixel(x, y);
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        out.finish_region(RegionBox {
            bbox: BBox::from_corners(x0, y0, x1, y1),
            area: pixels.len() as u32,
            polarity,
        });
    }
}

/// Appends the boxes of the selected nodes, computed from their pixel
/// ranges in the flood order.
pub(super) fn boxes_into(
    nodes: &[Node],
    order: &[u32],
    selected: &[u32],
    cols: u32,
    polarity: Polarity,
    out: &mut Vec<RegionBox>,
) {
    let split = RowSplitter::new(cols);
    out.reserve(selected.len());
    for n in selected.iter().filter_map(|&i| nodes.get(i as usize)) {
        let start = n.start as usize;
        let pixels = order.get(start..start + n.size as usize).unwrap_or(&[]);
        let (mut x0, mut y0, mut x1, mut y1) = (u32::MAX, u32::MAX, 0, 0);
        for &p in pixels {
            let (x, y) = split.split(p);
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        out.push(RegionBox {
            bbox: BBox::from_corners(x0, y0, x1, y1),
            area: pixels.len() as u32,
            polarity,
        });
    }
}
