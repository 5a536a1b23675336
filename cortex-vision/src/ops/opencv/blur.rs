//! The blur detector on OpenCV: the variance of `cv::Laplacian`.

use opencv::core::{self, Mat};
use opencv::imgproc;
use opencv::prelude::*;

use super::{check_gray, cv_err, gray_as_mat};
use crate::ops::blur::{BlurParams, BlurReport};
use crate::ops::types::{GrayImage, OpsError};

/// Variance of `cv::Laplacian(CV_64F, ksize = 1)` from `cv::meanStdDev`.
///
/// # Errors
/// [`OpsError::Empty`] or OpenCV's error.
pub fn laplacian_variance(gray: &GrayImage) -> Result<f64, OpsError> {
    check_gray("gray", gray)?;
    let src = gray_as_mat(gray)?;
    let mut lap = Mat::default();
    imgproc::laplacian(
        &src,
        &mut lap,
        core::CV_64F,
        1,
        1.0,
        0.0,
        core::BORDER_DEFAULT,
    )
    .map_err(cv_err)?;
    let mut mean = Mat::default();
    let mut stddev = Mat::default();
    core::mean_std_dev(&lap, &mut mean, &mut stddev, &core::no_array()).map_err(cv_err)?;
    let sd = *stddev.at::<f64>(0).map_err(cv_err)?;
    Ok(sd * sd)
}

/// Blur decision on the OpenCV variance.
///
/// # Errors
/// As [`laplacian_variance`], or a bad threshold.
pub fn blur_detector(gray: &GrayImage, params: &BlurParams) -> Result<BlurReport, OpsError> {
    params.validate()?;
    let variance = laplacian_variance(gray)?;
    Ok(BlurReport {
        variance,
        is_blurry: variance < params.threshold,
    })
}
