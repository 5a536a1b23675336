//! The OpenCV backend of the kernels (feature `opencv`), all in this
//! folder: the same ops as the pure-Rust ones, computed by OpenCV 4.x, one
//! file per op family (`gray`, `blur`, `ssim`, `saliency`, `resize`,
//! `motion`, `encoder`, `mser`, `text_roi`). They are the references the
//! pure-Rust kernels are tested against and the `external_call` backends of
//! the same graph nodes. This file holds the `ndarray` ⇄ `Mat` conversions,
//! public so that other kernels can reuse them, and the process-wide
//! settings.

mod blur;
mod encoder;
mod gray;
mod motion;
pub mod mser;
mod resize;
mod saliency;
mod ssim;
mod text_roi;

pub use blur::{blur_detector, laplacian_variance};
pub use encoder::{encode_jpeg, encode_roi_into, encode_roi_with};
pub use gray::to_gray;
pub use motion::motion_map;
pub use mser::{gray_to_mat, OpenCvMser};
pub use resize::{resize_linear_exact_u8, resize_linear_f32};
pub use saliency::{saliency_dft, saliency_dft_with};
pub use ssim::{scene_change, ssim};
pub use text_roi::text_roi_opencv;

use crate::ops::types::{GrayImage, OpsError, RgbFrame, ScoreMap};
use ndarray::Array2;
use opencv::boxed_ref::BoxedRef;
use opencv::core::{self, Mat, Vec3b};
use opencv::prelude::*;

/// The `opencv` crate this backend is built on, re-exported so that callers
/// (benches, other kernels) can call OpenCV on the same `Mat`s without
/// depending on the crate themselves.
pub use ::opencv as sys;

/// Maps an OpenCV error to [`OpsError::OpenCv`].
pub fn cv_err(e: opencv::Error) -> OpsError {
    OpsError::OpenCv(e.to_string())
}

fn dim_i32(v: usize, what: &'static str) -> Result<i32, OpsError> {
    i32::try_from(v).map_err(|_| OpsError::InvalidParam {
        name: what,
        reason: format!("{v} does not fit OpenCV's int"),
    })
}

fn std_layout<'a, T>(
    img: &'a ndarray::ArrayRef<T, ndarray::Ix2>,
    what: &'static str,
) -> Result<&'a [T], OpsError> {
    img.as_slice().ok_or(OpsError::InvalidParam {
        name: what,
        reason: "must be in standard (row-major, contiguous) layout to be shared with OpenCV"
            .into(),
    })
}

/// A `CV_8UC1` `Mat` header over the pixels of `img` (no copy).
///
/// # Errors
/// [`OpsError::InvalidParam`] when `img` is not in standard layout or too big
/// for OpenCV; [`OpsError::OpenCv`] if OpenCV refuses.
pub fn gray_as_mat(img: &GrayImage) -> Result<BoxedRef<'_, Mat>, OpsError> {
    let (h, w) = img.dim();
    let data = std_layout(img, "gray")?;
    Mat::new_rows_cols_with_data::<u8>(dim_i32(h, "height")?, dim_i32(w, "width")?, data)
        .map_err(cv_err)
}

/// A `CV_32FC1` `Mat` header over the values of `map` (no copy).
///
/// # Errors
/// As [`gray_as_mat`].
pub fn score_as_mat(map: &ScoreMap) -> Result<BoxedRef<'_, Mat>, OpsError> {
    let (h, w) = map.dim();
    let data = std_layout(map, "score map")?;
    Mat::new_rows_cols_with_data::<f32>(dim_i32(h, "height")?, dim_i32(w, "width")?, data)
        .map_err(cv_err)
}

/// A `CV_8UC3` `Mat` header over the pixels of `frame` (no copy; channel
/// order stays R, G, B — use `COLOR_RGB2*` codes on it).
///
/// # Errors
/// As [`gray_as_mat`], and [`OpsError::Channels`] when the frame is not 3-channel.
pub fn rgb_as_mat(frame: &RgbFrame) -> Result<BoxedRef<'_, Mat>, OpsError> {
    let (h, w, c) = frame.dim();
    if c != 3 {
        return Err(OpsError::Channels(c));
    }
    let data = frame.as_slice().ok_or(OpsError::InvalidParam {
        name: "frame",
        reason: "must be in standard layout to be shared with OpenCV".into(),
    })?;
    Mat::new_rows_cols_with_bytes::<Vec3b>(dim_i32(h, "height")?, dim_i32(w, "width")?, data)
        .map_err(cv_err)
}

fn mat_to_array<T: core::DataType + Copy + Default>(m: &Mat) -> Result<Array2<T>, OpsError> {
    let (h, w) = (m.rows().max(0) as usize, m.cols().max(0) as usize);
    if m.typ() != T::opencv_type() {
        return Err(OpsError::OpenCv(format!(
            "unexpected Mat type {} (want {})",
            m.typ(),
            T::opencv_type()
        )));
    }
    let mut out = Array2::<T>::default((h, w));
    if h == 0 || w == 0 {
        return Ok(out);
    }
    // Row by row, so that non-continuous Mats (ROIs) convert too.
    for (y, dst) in out.rows_mut().into_iter().enumerate() {
        let src = m.at_row::<T>(y as i32).map_err(cv_err)?;
        for (d, s) in dst.into_iter().zip(src) {
            *d = *s;
        }
    }
    Ok(out)
}

/// Copies a `CV_8UC1` `Mat` into a [`GrayImage`].
///
/// # Errors
/// [`OpsError::OpenCv`] for another type.
pub fn mat_to_gray(m: &Mat) -> Result<GrayImage, OpsError> {
    mat_to_array::<u8>(m)
}

/// Copies a `CV_32FC1` `Mat` into a [`ScoreMap`].
///
/// # Errors
/// [`OpsError::OpenCv`] for another type.
pub fn mat_to_score(m: &Mat) -> Result<ScoreMap, OpsError> {
    mat_to_array::<f32>(m)
}

/// Copies a `CV_64FC1` `Mat` into an `Array2<f64>`.
///
/// # Errors
/// [`OpsError::OpenCv`] for another type.
pub fn mat_to_f64(m: &Mat) -> Result<Array2<f64>, OpsError> {
    mat_to_array::<f64>(m)
}

fn check_gray(what: &'static str, img: &GrayImage) -> Result<(), OpsError> {
    crate::ops::border::check_nonempty(what, img.nrows(), img.ncols())
}

/// Runs OpenCV on one thread without OpenCL, as the comparisons and the
/// benches want (deterministic, and like-for-like with the single-threaded
/// Rust kernels). Process-wide OpenCV settings.
///
/// # Errors
/// OpenCV's error.
pub fn single_threaded() -> Result<(), OpsError> {
    core::set_num_threads(1).map_err(cv_err)?;
    core::set_use_opencl(false).map_err(cv_err)
}
