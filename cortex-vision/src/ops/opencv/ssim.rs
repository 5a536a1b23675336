//! SSIM and the scene-change decision on OpenCV: `cv::quality::QualitySSIM`.

use opencv::core::{self, Scalar};
use opencv::quality;

use super::{check_gray, cv_err, gray_as_mat};
use crate::ops::ssim::{SceneChange, SceneParams, SsimVariant};
use crate::ops::types::{GrayImage, OpsError};

/// `cv::quality::QualitySSIM::compute(a, b)`, the mean of the SSIM map.
///
/// # Errors
/// Empty or different-size images, or OpenCV's error.
pub fn ssim(a: &GrayImage, b: &GrayImage) -> Result<f64, OpsError> {
    check_gray("a", a)?;
    if a.dim() != b.dim() {
        return Err(OpsError::SizeMismatch {
            what: "b",
            got_w: b.ncols(),
            got_h: b.nrows(),
            want_w: a.ncols(),
            want_h: a.nrows(),
        });
    }
    let ma = gray_as_mat(a)?;
    let mb = gray_as_mat(b)?;
    let s: Scalar =
        quality::QualitySSIM::compute(&ma, &mb, &mut core::no_array()).map_err(cv_err)?;
    Ok(s[0])
}

/// Scene change on `QualitySSIM`, with the same first-frame rule as
/// [`crate::ops::ssim::scene_change_with`]. Only [`SsimVariant::Gaussian`] has an
/// OpenCV counterpart.
///
/// # Errors
/// Empty `cur`, a bad threshold, the scikit-image variant, or OpenCV's error.
pub fn scene_change(
    cur: &GrayImage,
    prev: &GrayImage,
    params: &SceneParams,
) -> Result<SceneChange, OpsError> {
    params.validate()?;
    check_gray("cur", cur)?;
    if params.variant != SsimVariant::Gaussian {
        return Err(OpsError::InvalidParam {
            name: "variant",
            reason: "OpenCV only has the Gaussian (QualitySSIM) variant".into(),
        });
    }
    if prev.dim() != cur.dim() {
        return Ok(SceneChange {
            changed: true,
            ssim: None,
        });
    }
    let s = ssim(cur, prev)?;
    Ok(SceneChange {
        changed: s < params.threshold,
        ssim: Some(s),
    })
}
