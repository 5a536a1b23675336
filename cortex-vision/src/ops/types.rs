//! Image types shared by the kernels, the pixel box they report regions
//! with, and the error type they return.

use ndarray::{Array2, Array3};

/// An RGB frame, `height × width × 3`, 8 bits per channel, row-major.
pub type RgbFrame = Array3<u8>;

/// An 8-bit gray image, `height × width`.
pub type GrayImage = Array2<u8>;

/// A per-pixel score map, `height × width`, values in `[0, 1]` unless noted.
pub type ScoreMap = Array2<f32>;

/// An axis-aligned box in pixel coordinates: columns `x .. x + width`, rows
/// `y .. y + height`. The one box type of the project: the encoder's crop,
/// the encoder regions, MSER's and the text map's boxes and the GStreamer
/// element's region of interest.
///
/// The fields are `usize`, the type frames are indexed with, so a box
/// indexes a frame without casts; converting to a narrower type (e.g.
/// GStreamer's `guint` fields) is left to the one place that needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct BBox {
    /// Left column.
    pub x: usize,
    /// Top row.
    pub y: usize,
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
}

impl BBox {
    /// The box spanning the inclusive corners `(x0, y0)` and `(x1, y1)`
    /// (a corner past the other gives a 1-pixel side).
    pub fn from_corners(x0: usize, y0: usize, x1: usize, y1: usize) -> Self {
        Self {
            x: x0,
            y: y0,
            width: x1.saturating_sub(x0).saturating_add(1),
            height: y1.saturating_sub(y0).saturating_add(1),
        }
    }

    /// Number of pixels covered (saturating; a `u64` so that the product
    /// of two sides never wraps on 32-bit targets).
    pub fn area(&self) -> u64 {
        (self.width as u64).saturating_mul(self.height as u64)
    }

    /// One past the right column.
    pub fn right(&self) -> usize {
        self.x.saturating_add(self.width)
    }

    /// One past the bottom row.
    pub fn bottom(&self) -> usize {
        self.y.saturating_add(self.height)
    }

    /// Intersection over union with `other`, 0 when either box is empty.
    pub fn iou(&self, other: &BBox) -> f64 {
        let ix = self
            .right()
            .min(other.right())
            .saturating_sub(self.x.max(other.x));
        let iy = self
            .bottom()
            .min(other.bottom())
            .saturating_sub(self.y.max(other.y));
        let inter = (ix as u64).saturating_mul(iy as u64);
        let union = self
            .area()
            .saturating_add(other.area())
            .saturating_sub(inter);
        if union == 0 {
            0.0
        } else {
            inter as f64 / union as f64
        }
    }
}

/// Why a kernel refused its input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum OpsError {
    /// The image has zero rows or columns.
    #[error("{what} is empty ({width}x{height})")]
    Empty {
        /// Which argument.
        what: &'static str,
        /// Width in pixels.
        width: usize,
        /// Height in pixels.
        height: usize,
    },
    /// Two images that must have the same size do not.
    #[error("size mismatch: {what} is {got_w}x{got_h}, expected {want_w}x{want_h}")]
    SizeMismatch {
        /// Which argument.
        what: &'static str,
        /// Its width.
        got_w: usize,
        /// Its height.
        got_h: usize,
        /// Expected width.
        want_w: usize,
        /// Expected height.
        want_h: usize,
    },
    /// A parameter is out of its valid range.
    #[error("invalid parameter {name}: {reason}")]
    InvalidParam {
        /// Parameter name.
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A frame (or a size derived from the parameters) exceeds the frame
    /// limits in effect ([`cortex_core::limits::FrameLimits::current`]); refused
    /// before anything was allocated for it.
    #[error("{what} is {width}x{height}, over the frame limits (at most {max_pixels} pixels and {max_side} per side)")]
    TooLarge {
        /// Which argument.
        what: &'static str,
        /// Width in pixels.
        width: usize,
        /// Height in pixels.
        height: usize,
        /// The pixel limit in effect.
        max_pixels: usize,
        /// The side limit in effect.
        max_side: usize,
    },
    /// An RGB frame does not have 3 channels.
    #[error("expected 3 channels, got {0}")]
    Channels(usize),
    /// Encoding failed.
    #[error("encoding failed: {0}")]
    Encode(String),
    /// The OpenCV backend reported an error.
    #[error("opencv: {0}")]
    OpenCv(String),
    /// A trained model's backend refused the model or the frame (the
    /// message names the model and the backend).
    #[error("{0}")]
    Model(String),
}

#[cfg(test)]
mod tests {
    use super::BBox;

    #[test]
    fn box_geometry() {
        let a = BBox::from_corners(2, 3, 5, 4);
        assert_eq!(
            a,
            BBox {
                x: 2,
                y: 3,
                width: 4,
                height: 2
            }
        );
        assert_eq!((a.right(), a.bottom(), a.area()), (6, 5, 8));
        // Overlap of 2 columns × 2 rows: 4 / (8 + 8 − 4).
        let b = BBox { x: 4, ..a };
        assert!((a.iou(&b) - 4.0 / 12.0).abs() < 1e-12);
        assert_eq!(a.iou(&a), 1.0);
        assert_eq!(a.iou(&BBox { x: 6, ..a }), 0.0);
        assert_eq!(BBox::default().iou(&BBox::default()), 0.0);
        // Sides near the top of the range saturate instead of wrapping.
        let huge = BBox {
            x: usize::MAX - 1,
            y: 0,
            width: 10,
            height: 1,
        };
        assert_eq!(huge.right(), usize::MAX);
    }
}
