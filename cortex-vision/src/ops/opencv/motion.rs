//! The motion map on OpenCV: `cv::absdiff` pooled with `cv::resize`.

use opencv::core::{self, Mat, Size};
use opencv::imgproc;
use opencv::prelude::*;

use super::{check_gray, cv_err, gray_as_mat, mat_to_score};
use crate::ops::motion::MotionParams;
use crate::ops::types::{GrayImage, OpsError, ScoreMap};

/// Motion map: `cv::absdiff`, to `f64` in `[0, 1]`, `cv::resize(INTER_AREA)`
/// to the grid, `cv::resize(INTER_NEAREST)` back; same first-frame rule and
/// grid clamping as [`crate::ops::motion::motion_map_with`].
///
/// # Errors
/// Empty `cur`, a zero grid side, or OpenCV's error.
pub fn motion_map(
    cur: &GrayImage,
    prev: &GrayImage,
    params: &MotionParams,
) -> Result<ScoreMap, OpsError> {
    params.validate()?;
    check_gray("cur", cur)?;
    let (h, w) = cur.dim();
    if prev.dim() != (h, w) {
        return Ok(ScoreMap::zeros((h, w)));
    }
    let (gh, gw) = params.effective_grid(h, w);
    let a = gray_as_mat(cur)?;
    let b = gray_as_mat(prev)?;
    let mut diff = Mat::default();
    core::absdiff(&a, &b, &mut diff).map_err(cv_err)?;
    // Pooled in `f64`: OpenCV's `INTER_AREA` sums a cell in the working type,
    // and an `f32` sum over large cells (a 1×1 grid on a 1080p frame sums two
    // million pixels) drifts by ~2e-5, more than the 1e-5 this reference is
    // held to. The 8-bit cell average would be quantized to 1/255.
    let mut diff_f = Mat::default();
    diff.convert_to(&mut diff_f, core::CV_64F, 1.0 / 255.0, 0.0)
        .map_err(cv_err)?;
    let mut cells = Mat::default();
    imgproc::resize(
        &diff_f,
        &mut cells,
        Size::new(gw as i32, gh as i32),
        0.0,
        0.0,
        imgproc::INTER_AREA,
    )
    .map_err(cv_err)?;
    let mut cells_f = Mat::default();
    cells
        .convert_to(&mut cells_f, core::CV_32F, 1.0, 0.0)
        .map_err(cv_err)?;
    let mut out = Mat::default();
    imgproc::resize(
        &cells_f,
        &mut out,
        Size::new(w as i32, h as i32),
        0.0,
        0.0,
        imgproc::INTER_NEAREST,
    )
    .map_err(cv_err)?;
    mat_to_score(&out)
}
