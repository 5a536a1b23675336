//! Vision kernels of the reference L2 region-of-interest pipeline, in pure
//! Rust on `ndarray` images, with OpenCV as the optional external backend
//! (feature `opencv`).

pub mod mser;
pub mod text_roi;
pub mod types;

pub use types::{GrayImage, OpsError, RgbFrame, ScoreMap};
