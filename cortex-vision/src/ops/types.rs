//! Image types shared by the kernels and the error type they return.

use ndarray::{Array2, Array3};

/// An RGB frame, `height × width × 3`, 8 bits per channel, row-major.
pub type RgbFrame = Array3<u8>;

/// An 8-bit gray image, `height × width`.
pub type GrayImage = Array2<u8>;

/// A per-pixel score map, `height × width`, values in `[0, 1]` unless noted.
pub type ScoreMap = Array2<f32>;

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
}
