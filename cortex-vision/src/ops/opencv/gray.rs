//! `to_gray` on OpenCV: `cv::cvtColor`.

use opencv::core::Mat;
use opencv::imgproc;

use super::{cv_err, mat_to_gray, rgb_as_mat};
use crate::ops::types::{GrayImage, OpsError, RgbFrame};

/// `cv::cvtColor(COLOR_RGB2GRAY)`.
///
/// # Errors
/// [`OpsError::Empty`], [`OpsError::Channels`], or OpenCV's error.
pub fn to_gray(frame: &RgbFrame) -> Result<GrayImage, OpsError> {
    let (h, w, _) = frame.dim();
    crate::ops::border::check_nonempty("frame", h, w)?;
    let src = rgb_as_mat(frame)?;
    let mut dst = Mat::default();
    imgproc::cvt_color(&src, &mut dst, imgproc::COLOR_RGB2GRAY, 0).map_err(cv_err)?;
    mat_to_gray(&dst)
}
