//! The OpenCV backend of the kernels (feature `opencv`): the same ops as the
//! pure-Rust ones, computed by OpenCV 4.x. They are the references the
//! pure-Rust kernels are tested against and the `external_call` backends of
//! the same graph nodes. Also the `ndarray` ⇄ `Mat` conversions, public so
//! that other kernels can reuse them.

use super::blur::{BlurParams, BlurReport};
use super::encoder::{EncodedRoi, EncoderParams};
use super::motion::MotionParams;
use super::ssim::{SceneChange, SceneParams, SsimVariant};
use super::types::{GrayImage, OpsError, RgbFrame, ScoreMap};
use ndarray::Array2;
use opencv::boxed_ref::BoxedRef;
use opencv::core::{self, Mat, Scalar, Size, Vec3b};
use opencv::prelude::*;
use opencv::{imgcodecs, imgproc, quality, saliency};

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
    super::border::check_nonempty(what, img.nrows(), img.ncols())
}

/// `cv::cvtColor(COLOR_RGB2GRAY)`.
///
/// # Errors
/// [`OpsError::Empty`], [`OpsError::Channels`], or OpenCV's error.
pub fn to_gray(frame: &RgbFrame) -> Result<GrayImage, OpsError> {
    let (h, w, _) = frame.dim();
    super::border::check_nonempty("frame", h, w)?;
    let src = rgb_as_mat(frame)?;
    let mut dst = Mat::default();
    imgproc::cvt_color(&src, &mut dst, imgproc::COLOR_RGB2GRAY, 0).map_err(cv_err)?;
    mat_to_gray(&dst)
}

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
/// [`super::ssim::scene_change_with`]. Only [`SsimVariant::Gaussian`] has an
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

/// `cv::saliency::StaticSaliencySpectralResidual::computeSaliency`.
///
/// # Errors
/// [`OpsError::Empty`] or OpenCV's error.
pub fn saliency_dft(gray: &GrayImage) -> Result<ScoreMap, OpsError> {
    saliency_dft_with(gray, &super::saliency::SaliencyParams::default())
}

/// [`saliency_dft`] with another working size (`setImageWidth`/`Height`).
///
/// # Errors
/// [`OpsError::Empty`], a bad working size, or OpenCV's error.
pub fn saliency_dft_with(
    gray: &GrayImage,
    params: &super::saliency::SaliencyParams,
) -> Result<ScoreMap, OpsError> {
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
    super::border::check_nonempty("map", map.nrows(), map.ncols())?;
    let src = score_as_mat(map)?;
    let mut dst = Mat::default();
    let size = Size::new(dim_i32(width, "width")?, dim_i32(height, "height")?);
    imgproc::resize(&src, &mut dst, size, 0.0, 0.0, imgproc::INTER_LINEAR).map_err(cv_err)?;
    mat_to_score(&dst)
}

/// Motion map: `cv::absdiff`, to `f64` in `[0, 1]`, `cv::resize(INTER_AREA)`
/// to the grid, `cv::resize(INTER_NEAREST)` back; same first-frame rule and
/// grid clamping as [`super::motion::motion_map_with`].
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

/// JPEG-encodes an RGB image with `cv::imencode` (after `RGB2BGR`, as OpenCV
/// expects BGR), for comparing the encoder's cost.
///
/// # Errors
/// Empty frame or OpenCV's error.
pub fn encode_jpeg(rgb: &RgbFrame, quality: u8) -> Result<Vec<u8>, OpsError> {
    let (h, w, _) = rgb.dim();
    super::border::check_nonempty("frame", h, w)?;
    let src = rgb_as_mat(rgb)?;
    let mut bgr = Mat::default();
    imgproc::cvt_color(&src, &mut bgr, imgproc::COLOR_RGB2BGR, 0).map_err(cv_err)?;
    let mut buf = core::Vector::<u8>::new();
    let params =
        core::Vector::<i32>::from_slice(&[imgcodecs::IMWRITE_JPEG_QUALITY, i32::from(quality)]);
    imgcodecs::imencode(".jpg", &bgr, &mut buf, &params).map_err(cv_err)?;
    Ok(buf.to_vec())
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

/// `encode_roi` on OpenCV, into a caller-owned result: the region and the
/// checks every `encode_roi` kernel makes ([`super::encoder::roi_of`]),
/// the crop copied out and encoded by `cv::imencode` ([`encode_jpeg`]: RGB
/// to BGR, then libjpeg(-turbo) inside OpenCV).
///
/// # Errors
/// As [`super::encode_roi_with`], or OpenCV's error; `out` is unspecified
/// after an error.
pub fn encode_roi_into(
    frame: &RgbFrame,
    score: &ScoreMap,
    params: &EncoderParams,
    out: &mut EncodedRoi,
) -> Result<(), OpsError> {
    let (bbox, peak) = super::encoder::roi_of(frame, score, params)?;
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
