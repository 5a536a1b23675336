//! Maximally stable extremal regions (MSER) on 8-bit gray images, in pure
//! Rust: the linear-time component-tree algorithm of Nistér & Stewénius
//! (ECCV 2008) with OpenCV 4.6's parameters and stability rules, so that the
//! regions agree with `cv::MSER::detectRegions` on gray input.
//!
//! - [`Mser::detect`] / [`Mser::detect_into`]: regions with their pixels.
//! - [`Mser::detect_boxes`] / [`Mser::detect_boxes_into`]: boxes and areas
//!   only (no pixel lists are output).
//! - `*_both_parallel*`: the two polarities as the two halves of a
//!   `rayon::join` (two cores when the pool has them, no thread per call).
//! - The `_into` variants take a [`MserWorkspace`] and an output buffer and
//!   do not allocate once the buffers have grown.
//! - `opencv` (feature `opencv`): the same op calling OpenCV.
//!
//! Where we differ from OpenCV by design (see also `stability`):
//! - images smaller than 3×3 give no regions (OpenCV raises an error);
//! - the whole interior of the image is never reported as a region;
//! - like OpenCV, the outermost 1-pixel frame never belongs to a region.

mod extract;
mod flood;
mod merge;
mod params;
mod partition;
mod regions;
mod stability;
mod tree;
mod workspace;

/// The same op calling OpenCV (feature `opencv`); it lives with the other
/// OpenCV backends in [`crate::ops::opencv::mser`].
#[cfg(feature = "opencv")]
pub use crate::ops::opencv::mser as opencv;

use ndarray::ArrayView2;

use crate::ops::{GrayImage, OpsError};

pub use crate::ops::types::BBox;
pub use params::{MserParams, Polarity};
pub use partition::PartitionWorkspace;
pub use regions::{Region, RegionBox, Regions};
pub use workspace::MserWorkspace;

/// An MSER detector with validated parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mser {
    params: MserParams,
}

impl Default for Mser {
    /// The detector with OpenCV's default parameters.
    fn default() -> Self {
        Self {
            params: MserParams::default(),
        }
    }
}

impl Mser {
    /// A detector; fails with [`OpsError::InvalidParam`] when the parameters
    /// are out of range (e.g. `max_area < min_area`).
    pub fn new(params: MserParams) -> Result<Self, OpsError> {
        params.validate()?;
        Ok(Self { params })
    }

    /// The parameters.
    pub fn params(&self) -> &MserParams {
        &self.params
    }

    /// Regions of the given polarity with their pixels. Allocates; see
    /// [`Mser::detect_into`] for the reusable form.
    pub fn detect(&self, gray: &GrayImage, polarity: Polarity) -> Result<Vec<Region>, OpsError> {
        let mut ws = MserWorkspace::new();
        let mut out = Regions::new();
        self.detect_into(&mut ws, gray, polarity, &mut out)?;
        Ok(out.to_vec())
    }

    /// Regions of the given polarity with their pixels, into `out` (cleared
    /// first). Dark regions come before bright ones.
    pub fn detect_into(
        &self,
        ws: &mut MserWorkspace,
        gray: &GrayImage,
        polarity: Polarity,
        out: &mut Regions,
    ) -> Result<(), OpsError> {
        out.clear();
        let Some(view) = checked_view(gray)? else {
            return Ok(());
        };
        for &pass in polarity.passes() {
            self.pass_regions(ws, view, pass, out);
        }
        Ok(())
    }

    /// Boxes and areas of the regions of the given polarity. Allocates; see
    /// [`Mser::detect_boxes_into`].
    pub fn detect_boxes(
        &self,
        gray: &GrayImage,
        polarity: Polarity,
    ) -> Result<Vec<RegionBox>, OpsError> {
        let mut ws = MserWorkspace::new();
        let mut out = Vec::new();
        self.detect_boxes_into(&mut ws, gray, polarity, &mut out)?;
        Ok(out)
    }

    /// Boxes and areas of the regions, into `out` (cleared first). The same
    /// regions as [`Mser::detect_into`], in the same order.
    pub fn detect_boxes_into(
        &self,
        ws: &mut MserWorkspace,
        gray: &GrayImage,
        polarity: Polarity,
        out: &mut Vec<RegionBox>,
    ) -> Result<(), OpsError> {
        out.clear();
        let Some(view) = checked_view(gray)? else {
            return Ok(());
        };
        for &pass in polarity.passes() {
            self.pass_boxes(ws, view, pass, out);
        }
        Ok(())
    }

    /// Both polarities with pixels, the two passes on rayon's pool.
    /// Same result as `detect(gray, Polarity::Both)`. Allocates.
    pub fn detect_both_parallel(&self, gray: &GrayImage) -> Result<Vec<Region>, OpsError> {
        let mut ws = [MserWorkspace::new(), MserWorkspace::new()];
        let mut out = Regions::new();
        self.detect_both_parallel_into(&mut ws, gray, &mut out)?;
        Ok(out.to_vec())
    }

    /// Both polarities with pixels into `out`, the dark pass with `ws[0]`
    /// and the bright one with `ws[1]` as the two halves of a
    /// [`rayon::join`] (see the module docs).
    pub fn detect_both_parallel_into(
        &self,
        ws: &mut [MserWorkspace; 2],
        gray: &GrayImage,
        out: &mut Regions,
    ) -> Result<(), OpsError> {
        self.both_parallel_into(ws, gray, out)
    }

    /// Both polarities, boxes only, the two passes on rayon's pool.
    /// Allocates.
    pub fn detect_boxes_both_parallel(&self, gray: &GrayImage) -> Result<Vec<RegionBox>, OpsError> {
        let mut ws = [MserWorkspace::new(), MserWorkspace::new()];
        let mut out = Vec::new();
        self.detect_boxes_both_parallel_into(&mut ws, gray, &mut out)?;
        Ok(out)
    }

    /// Both polarities, boxes only, into `out`; pool and workspaces as in
    /// [`Mser::detect_both_parallel_into`].
    pub fn detect_boxes_both_parallel_into(
        &self,
        ws: &mut [MserWorkspace; 2],
        gray: &GrayImage,
        out: &mut Vec<RegionBox>,
    ) -> Result<(), OpsError> {
        self.both_parallel_into(ws, gray, out)
    }

    /// The two polarities as the two halves of a [`rayon::join`]: dark with
    /// `ws[0]` into `out`, bright with `ws[1]` into that workspace's own
    /// buffer, appended to `out` afterwards (so the order is the same as the
    /// sequential `Both`). The halves run on rayon's persistent pool (the
    /// current one when called from a pool thread, else the global one), so
    /// no thread is created per call, and when the pool is busy with other
    /// work the second half simply runs after the first on the same thread
    /// instead of oversubscribing the cores.
    fn both_parallel_into<O: PassOutput>(
        &self,
        ws: &mut [MserWorkspace; 2],
        gray: &GrayImage,
        out: &mut O,
    ) -> Result<(), OpsError> {
        out.clear();
        let Some(view) = checked_view(gray)? else {
            return Ok(());
        };
        out.reserve_regions(self.region_room(view).saturating_mul(2));
        let [ws_dark, ws_bright] = ws;
        // A panic in either half is a bug in this module; rayon re-raises it
        // on the caller's thread rather than hiding it.
        rayon::join(
            || O::pass(self, ws_dark, view, Polarity::Dark, out),
            || {
                let mut tmp = std::mem::take(O::buffer(ws_bright));
                tmp.clear();
                O::pass(self, ws_bright, view, Polarity::Bright, &mut tmp);
                *O::buffer(ws_bright) = tmp;
            },
        );
        out.append(O::buffer(ws_bright));
        Ok(())
    }

    /// Room reserved for the regions of one pass: as many as `min_area`
    /// regions could be disjoint in the image. Stable regions nest, so more
    /// are possible, but real frames stay far below this (a textured 1080p
    /// photo: about a fifth); reserving it up front makes the region
    /// buffers' size depend on the frame size, not on its content, so
    /// steady-state frames do not allocate whatever they show. Untouched
    /// capacity costs address space, not memory.
    fn region_room(&self, view: ArrayView2<'_, u8>) -> usize {
        view.len() / self.params.min_area.max(1) as usize
    }

    /// One polarity pass with pixel lists, appending to `out`.
    fn pass_regions(
        &self,
        ws: &mut MserWorkspace,
        view: ArrayView2<'_, u8>,
        pass: Polarity,
        out: &mut Regions,
    ) {
        let room = self.region_room(view);
        ws.selected.reserve(room);
        out.reserve_regions(room);
        flood::build_tree(ws, view, pass.level_mask());
        // A flooded tree has no arbitrary ties: the selection is exact.
        let _ = stability::select_stable(&mut ws.nodes, &self.params, &mut ws.selected);
        let cols = view.ncols() as u32;
        extract::regions_into(&ws.nodes, &ws.order, &ws.selected, cols, pass, out);
    }

    /// One polarity pass, boxes only, appending to `out`.
    fn pass_boxes(
        &self,
        ws: &mut MserWorkspace,
        view: ArrayView2<'_, u8>,
        pass: Polarity,
        out: &mut Vec<RegionBox>,
    ) {
        let room = self.region_room(view);
        ws.selected.reserve(room);
        ws.box_scratch.reserve(room);
        out.reserve(room);
        flood::build_tree(ws, view, pass.level_mask());
        // A flooded tree has no arbitrary ties: the selection is exact.
        let _ = stability::select_stable(&mut ws.nodes, &self.params, &mut ws.selected);
        let cols = view.ncols() as u32;
        extract::boxes_into(
            &ws.nodes,
            &ws.order,
            &ws.selected,
            cols,
            pass,
            &mut ws.box_scratch,
            out,
        );
    }
}

/// What one polarity pass produces: full regions or boxes only. Lets the
/// two-thread split be written once for both.
trait PassOutput: Default + Send {
    /// The workspace's own buffer of this kind (the second half's output).
    fn buffer(ws: &mut MserWorkspace) -> &mut Self;
    /// Runs one pass, appending to `out`.
    fn pass(
        m: &Mser,
        ws: &mut MserWorkspace,
        view: ArrayView2<'_, u8>,
        pol: Polarity,
        out: &mut Self,
    );
    /// Empties the buffer, keeping its capacity.
    fn clear(&mut self);
    /// Appends `other`.
    fn append(&mut self, other: &Self);
    /// Reserves room for `n` more regions (not their pixels).
    fn reserve_regions(&mut self, n: usize);
}

impl PassOutput for Regions {
    fn buffer(ws: &mut MserWorkspace) -> &mut Self {
        &mut ws.regions
    }
    fn pass(
        m: &Mser,
        ws: &mut MserWorkspace,
        view: ArrayView2<'_, u8>,
        pol: Polarity,
        out: &mut Self,
    ) {
        m.pass_regions(ws, view, pol, out);
    }
    fn clear(&mut self) {
        Regions::clear(self);
    }
    fn append(&mut self, other: &Self) {
        self.extend_from(other);
    }
    fn reserve_regions(&mut self, n: usize) {
        Regions::reserve_regions(self, n);
    }
}

impl PassOutput for Vec<RegionBox> {
    fn buffer(ws: &mut MserWorkspace) -> &mut Self {
        &mut ws.boxes
    }
    fn pass(
        m: &Mser,
        ws: &mut MserWorkspace,
        view: ArrayView2<'_, u8>,
        pol: Polarity,
        out: &mut Self,
    ) {
        m.pass_boxes(ws, view, pol, out);
    }
    fn clear(&mut self) {
        Vec::clear(self);
    }
    fn append(&mut self, other: &Self) {
        self.extend_from_slice(other);
    }
    fn reserve_regions(&mut self, n: usize) {
        self.reserve(n);
    }
}

/// Checks the image: empty → error; over the frame limits in effect
/// ([`FrameLimits::current`](cortex_core::limits::FrameLimits::current)) →
/// [`OpsError::TooLarge`]; smaller than 3×3 → `None` (no interior, hence no
/// regions); more pixels than the flood's index encoding allows → error.
/// Every public entry point calls it before allocating anything.
pub(crate) fn checked_view(gray: &GrayImage) -> Result<Option<ArrayView2<'_, u8>>, OpsError> {
    let (rows, cols) = gray.dim();
    Ok(check_dims(rows, cols)?.then(|| gray.view()))
}

/// [`checked_view`] on dimensions alone: whether there is anything to flood.
fn check_dims(rows: usize, cols: usize) -> Result<bool, OpsError> {
    if rows == 0 || cols == 0 {
        return Err(OpsError::Empty {
            what: "gray",
            width: cols,
            height: rows,
        });
    }
    // The workspaces grow with the pixel count (about 50 bytes a pixel, in
    // one allocation each): refused here, the caller gets a typed error
    // instead of an allocation failure that aborts the process.
    crate::ops::border::check_limits("gray", rows, cols)?;
    if rows < 3 || cols < 3 {
        return Ok(false);
    }
    if rows.saturating_mul(cols) > flood::MAX_PIXELS {
        return Err(OpsError::InvalidParam {
            name: "gray",
            reason: format!(
                "{cols}x{rows} is too large (at most {} pixels)",
                flood::MAX_PIXELS
            ),
        });
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::{check_dims, OpsError};
    use cortex_core::limits::{with_limits, FrameLimits};

    #[test]
    fn dimension_limits() {
        with_limits(FrameLimits::UNLIMITED, dimension_limits_of_the_flood);
    }

    /// The default frame limits refuse before the flood's own cap.
    #[test]
    fn frame_limits_come_first() {
        for (rows, cols) in [(8192, 8193), (20_000, 20_000), (3, 20_000_000)] {
            assert!(
                matches!(check_dims(rows, cols), Err(OpsError::TooLarge { .. })),
                "{cols}x{rows}"
            );
        }
        assert!(matches!(check_dims(8192, 8192), Ok(true)));
    }

    fn dimension_limits_of_the_flood() {
        assert!(matches!(check_dims(0, 5), Err(OpsError::Empty { .. })));
        assert!(matches!(check_dims(2, 5), Ok(false)));
        assert!(matches!(check_dims(3, 3), Ok(true)));
        assert!(matches!(check_dims(3, 100_000), Ok(true)));
        assert!(matches!(check_dims(1 << 14, 1 << 15), Ok(true)));
        assert!(matches!(
            check_dims(1 << 15, 1 << 15),
            Err(OpsError::InvalidParam { name: "gray", .. })
        ));
        // A pixel count that overflows is over any limit, even "unlimited".
        assert!(matches!(
            check_dims(usize::MAX, usize::MAX),
            Err(OpsError::TooLarge { .. })
        ));
    }
}
