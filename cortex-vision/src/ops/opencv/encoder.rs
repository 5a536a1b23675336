//! JPEG encoding and `encode_roi` on OpenCV: `cv::imencode`.

use opencv::core::{self, Mat};
use opencv::prelude::*;
use opencv::{imgcodecs, imgproc};

use super::{cv_err, rgb_as_mat};
use crate::ops::encoder::{EncodedRoi, EncoderParams};
use crate::ops::types::{OpsError, RgbFrame, ScoreMap};

/// JPEG-encodes an RGB image with `cv::imencode` (after `RGB2BGR`, as OpenCV
/// expects BGR), for comparing the encoder's cost.
///
/// # Errors
/// Empty frame or OpenCV's error.
pub fn encode_jpeg(rgb: &RgbFrame, quality: u8) -> Result<Vec<u8>, OpsError> {
    let (h, w, _) = rgb.dim();
    crate::ops::border::check_nonempty("frame", h, w)?;
    let src = rgb_as_mat(rgb)?;
    let mut bgr = Mat::default();
    imgproc::cvt_color(&src, &mut bgr, imgproc::COLOR_RGB2BGR, 0).map_err(cv_err)?;
    let mut buf = core::Vector::<u8>::new();
    let params =
        core::Vector::<i32>::from_slice(&[imgcodecs::IMWRITE_JPEG_QUALITY, i32::from(quality)]);
    imgcodecs::imencode(".jpg", &bgr, &mut buf, &params).map_err(cv_err)?;
    Ok(buf.to_vec())
}

/// `encode_roi` on OpenCV, into a caller-owned result: the region and the
/// checks every `encode_roi` kernel makes ([`crate::ops::encoder::roi_of`]),
/// the crop copied out and encoded by `cv::imencode` ([`encode_jpeg`]: RGB
/// to BGR, then libjpeg(-turbo) inside OpenCV).
///
/// # Errors
/// As [`crate::ops::encode_roi_with`], or OpenCV's error; `out` is unspecified
/// after an error.
pub fn encode_roi_into(
    frame: &RgbFrame,
    score: &ScoreMap,
    params: &EncoderParams,
    out: &mut EncodedRoi,
) -> Result<(), OpsError> {
    let (bbox, peak) = crate::ops::encoder::roi_of(frame, score, params)?;
    let crop = frame
        .slice(ndarray::s![
            bbox.y..bbox.y + bbox.height,
            bbox.x..bbox.x + bbox.width,
            ..
        ])
        .to_owned();
    out.jpeg = encode_jpeg(&crop, params.quality)?;
    out.bbox = bbox;
    out.score = peak;
    Ok(())
}

/// [`encode_roi_into`] returning a new result.
///
/// # Errors
/// As [`encode_roi_into`].
pub fn encode_roi_with(
    frame: &RgbFrame,
    score: &ScoreMap,
    params: &EncoderParams,
) -> Result<EncodedRoi, OpsError> {
    let mut out = EncodedRoi::default();
    encode_roi_into(frame, score, params, &mut out)?;
    Ok(out)
}
