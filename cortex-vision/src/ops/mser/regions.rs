//! Output types of the MSER detector: region boxes, owned regions, and a
//! flat region list that reuses its buffers from frame to frame.

use super::Polarity;
use crate::ops::types::BBox;

/// A detected region without its pixels: what the box-only detector returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RegionBox {
    /// Bounding box of the region's pixels.
    pub bbox: BBox,
    /// Number of pixels in the region.
    pub area: u32,
    /// Which pass found it ([`Polarity::Dark`] or [`Polarity::Bright`]).
    pub polarity: Polarity,
}

/// A detected region with its pixels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// Bounding box of `pixels`.
    pub bbox: BBox,
    /// Which pass found it ([`Polarity::Dark`] or [`Polarity::Bright`]).
    pub polarity: Polarity,
    /// The region's pixels as `(x, y)`, each once, in flooding order.
    pub pixels: Vec<(u32, u32)>,
}

impl Region {
    /// Number of pixels in the region.
    pub fn area(&self) -> usize {
        self.pixels.len()
    }
}

/// A list of regions stored flat: one pixel buffer for all regions, so that a
/// detector can refill it every frame without allocating once it has grown.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Regions {
    boxes: Vec<RegionBox>,
    /// `starts[i]..starts[i + 1]` indexes `pixels` for region `i`.
    starts: Vec<usize>,
    pixels: Vec<(u32, u32)>,
}

impl Regions {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Removes every region, keeping the buffers.
    pub fn clear(&mut self) {
        self.boxes.clear();
        self.starts.clear();
        self.pixels.clear();
    }

    /// Number of regions.
    pub fn len(&self) -> usize {
        self.boxes.len()
    }

    /// Whether there is no region.
    pub fn is_empty(&self) -> bool {
        self.boxes.is_empty()
    }

    /// Box, area and polarity of every region, in order.
    pub fn boxes(&self) -> &[RegionBox] {
        &self.boxes
    }

    /// Pixels `(x, y)` of region `i`, or `None` past the end.
    pub fn pixels(&self, i: usize) -> Option<&[(u32, u32)]> {
        let start = *self.starts.get(i)?;
        let end = self.starts.get(i + 1).copied().unwrap_or(self.pixels.len());
        self.pixels.get(start..end)
    }

    /// Iterates over `(box, pixels)` pairs.
    pub fn iter(&self) -> impl Iterator<Item = (&RegionBox, &[(u32, u32)])> + '_ {
        self.boxes
            .iter()
            .enumerate()
            .map(move |(i, b)| (b, self.pixels(i).unwrap_or(&[])))
    }

    /// Converts to owned regions.
    pub fn to_vec(&self) -> Vec<Region> {
        self.iter()
            .map(|(b, px)| Region {
                bbox: b.bbox,
                polarity: b.polarity,
                pixels: px.to_vec(),
            })
            .collect()
    }

    /// Appends every region of `other`.
    pub fn extend_from(&mut self, other: &Regions) {
        for (b, px) in other.iter() {
            self.starts.push(self.pixels.len());
            self.pixels.extend_from_slice(px);
            self.boxes.push(*b);
        }
    }

    /// Starts a new region; its pixels are the ones pushed until the next
    /// call, its box is set by [`Regions::finish_region`].
    pub(super) fn begin_region(&mut self) {
        self.starts.push(self.pixels.len());
    }

    /// Adds a pixel to the region being built.
    #[inline]
    pub(super) fn push_pixel(&mut self, x: u32, y: u32) {
        self.pixels.push((x, y));
    }

    /// Records the box of the region begun last.
    pub(super) fn finish_region(&mut self, b: RegionBox) {
        self.boxes.push(b);
    }

    /// Heap bytes held (capacities).
    pub(super) fn heap_bytes(&self) -> usize {
        use crate::ops::scratch::vec_bytes;
        vec_bytes(&self.boxes)
            .saturating_add(vec_bytes(&self.starts))
            .saturating_add(vec_bytes(&self.pixels))
    }

    /// Reserves room for `n` more regions (their boxes and starts, not
    /// their pixels).
    pub(super) fn reserve_regions(&mut self, n: usize) {
        self.boxes.reserve(n);
        self.starts.reserve(n);
    }

    /// Reserves room for `pixels` more pixels.
    pub(super) fn reserve_pixels(&mut self, pixels: usize) {
        self.pixels.reserve(pixels);
    }
}
