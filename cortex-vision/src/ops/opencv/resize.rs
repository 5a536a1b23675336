//! Resizes on OpenCV (`cv::resize`), to pin the pure-Rust resizes against.

use opencv::core::{Mat, Size};
use opencv::imgproc;

use super::{check_gray, cv_err, dim_i32, gray_as_mat, mat_to_gray, mat_to_score, score_as_mat};
use crate::ops::types::{GrayImage, OpsError, ScoreMap};

/// `cv::resize(gray, (width, height), INTER_LINEAR_EXACT)`: the first step of
/// the spectral residual, exposed to pin the fixed-point resize.
///
/// # Errors
/// [`OpsError::Empty`] or OpenCV's error.
pub fn resize_linear_exact_u8(
    gray: &GrayImage,
    height: usize,
    width: usize,
) -> Result<GrayImage, OpsError> {
    check_gray("gray", gray)?;
    let src = gray_as_mat(gray)?;
    let mut dst = Mat::default();
    let size = Size::new(dim_i32(width, "width")?, dim_i32(height, "height")?);
    imgproc::resize(&src, &mut dst, size, 0.0, 0.0, imgproc::INTER_LINEAR_EXACT).map_err(cv_err)?;
    mat_to_gray(&dst)
}

/// `cv::resize(map, size, INTER_LINEAR)` on `f32`.
///
/// # Errors
/// Empty map or OpenCV's error.
pub fn resize_linear_f32(
    map: &ScoreMap,
    height: usize,
    width: usize,
) -> Result<ScoreMap, OpsError> {
    crate::ops::border::check_nonempty("map", map.nrows(), map.ncols())?;
    let src = score_as_mat(map)?;
    let mut dst = Mat::default();
    let size = Size::new(dim_i32(width, "width")?, dim_i32(height, "height")?);
    imgproc::resize(&src, &mut dst, size, 0.0, 0.0, imgproc::INTER_LINEAR).map_err(cv_err)?;
    mat_to_score(&dst)
}
