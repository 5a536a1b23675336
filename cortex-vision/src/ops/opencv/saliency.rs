//! Spectral-residual saliency on OpenCV:
//! `cv::saliency::StaticSaliencySpectralResidual`.

use opencv::core::Mat;
use opencv::saliency;

use super::{check_gray, cv_err, dim_i32, gray_as_mat, mat_to_score};
use crate::ops::saliency::SaliencyParams;
use crate::ops::types::{GrayImage, OpsError, ScoreMap};

/// `cv::saliency::StaticSaliencySpectralResidual::computeSaliency`.
///
/// # Errors
/// [`OpsError::Empty`] or OpenCV's error.
pub fn saliency_dft(gray: &GrayImage) -> Result<ScoreMap, OpsError> {
    saliency_dft_with(gray, &SaliencyParams::default())
}

/// [`saliency_dft`] with another working size (`setImageWidth`/`Height`).
///
/// # Errors
/// [`OpsError::Empty`], a bad working size, or OpenCV's error.
pub fn saliency_dft_with(gray: &GrayImage, params: &SaliencyParams) -> Result<ScoreMap, OpsError> {
    params.validate()?;
    check_gray("gray", gray)?;
    let src = gray_as_mat(gray)?;
    let mut sr = saliency::StaticSaliencySpectralResidual::create().map_err(cv_err)?;
    saliency::StaticSaliencySpectralResidualTrait::set_image_width(
        &mut sr,
        dim_i32(params.width, "width")?,
    )
    .map_err(cv_err)?;
    saliency::StaticSaliencySpectralResidualTrait::set_image_height(
        &mut sr,
        dim_i32(params.height, "height")?,
    )
    .map_err(cv_err)?;
    let mut out = Mat::default();
    saliency::StaticSaliencySpectralResidualTrait::compute_saliency(&mut sr, &src, &mut out)
        .map_err(cv_err)?;
    mat_to_score(&out)
}
