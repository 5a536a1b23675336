//! The MSER op calling OpenCV's `cv::MSER` (feature `opencv`): the
//! `external_call` backend, and the reference the pure-Rust detector is
//! tested and benchmarked against. Also reachable as `ops::mser::opencv`.
//!
//! One polarity uses `setPass2Only(true)`, which runs only OpenCV's second
//! (bright-region) pass; dark regions are the bright regions of the inverted
//! image, so [`Polarity::Dark`] inverts while copying into the `Mat`.
//! [`Polarity::Both`] makes the two single-polarity calls so that every
//! region is tagged with its polarity; [`OpenCvMser::detect_regions_raw`] is
//! OpenCV's own two-pass call, for benchmarks.

use opencv::core::{Mat, Point, Ptr, Rect, Scalar, ToInputArray, Vector, CV_8UC1};
use opencv::features2d::MSER;
use opencv::prelude::*;

use super::{cv_err, gray_as_mat};
use crate::ops::mser::{checked_view, MserParams, Polarity, Region};
use crate::ops::types::BBox;
use crate::ops::{GrayImage, OpsError};

/// The `opencv` crate this backend is built with, for callers of
/// [`OpenCvMser::detect_regions_raw`] (which takes and returns its types)
/// who do not depend on it directly, or not on the same version.
pub use ::opencv as cv;

/// OpenCV's MSER with our parameters (its colour-only parameters at their
/// defaults).
pub struct OpenCvMser {
    inner: Ptr<MSER>,
}

impl std::fmt::Debug for OpenCvMser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenCvMser").finish_non_exhaustive()
    }
}

impl OpenCvMser {
    /// Creates `cv::MSER` with `params` (validated as for [`crate::ops::mser::Mser`]).
    pub fn new(params: MserParams) -> Result<Self, OpsError> {
        params.validate()?;
        let to_i32 = |name: &'static str, v: u32| {
            i32::try_from(v).map_err(|_| OpsError::InvalidParam {
                name,
                reason: format!("{v} does not fit OpenCV's int"),
            })
        };
        let inner = MSER::create(
            i32::from(params.delta),
            to_i32("min_area", params.min_area)?,
            to_i32("max_area", params.max_area)?,
            params.max_variation,
            0.2,
            200,
            1.01,
            0.003,
            5,
        )
        .map_err(cv_err)?;
        Ok(Self { inner })
    }

    /// Regions of the given polarity with their pixels, dark ones first.
    /// Empty images are an error and images under 3×3 give no regions, as
    /// for [`crate::ops::mser::Mser`].
    pub fn detect(
        &mut self,
        gray: &GrayImage,
        polarity: Polarity,
    ) -> Result<Vec<Region>, OpsError> {
        if checked_view(gray)?.is_none() {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for &pass in polarity.passes() {
            // Bright regions are OpenCV's pass 2 on the image as it is:
            // share its pixels when the layout allows; otherwise copy.
            let (msers, _) = if pass == Polarity::Bright && gray.is_standard_layout() {
                self.detect_regions_raw(&gray_as_mat(gray)?, true)?
            } else {
                self.detect_regions_raw(&gray_to_mat(gray, pass == Polarity::Dark)?, true)?
            };
            for pts in msers.iter() {
                let pixels: Vec<(u32, u32)> = pts
                    .iter()
                    .map(|p| (p.x.max(0) as u32, p.y.max(0) as u32))
                    .collect();
                out.push(Region {
                    bbox: bbox_of(&pixels),
                    polarity: pass,
                    pixels,
                });
            }
        }
        Ok(out)
    }

    /// OpenCV's `detectRegions` on a prepared 8-bit `Mat` (or `Mat` view):
    /// both passes, dark regions first, or only the bright pass with
    /// `pass2_only`.
    pub fn detect_regions_raw(
        &mut self,
        mat: &impl ToInputArray,
        pass2_only: bool,
    ) -> Result<(Vector<Vector<Point>>, Vector<Rect>), OpsError> {
        self.inner.set_pass2_only(pass2_only).map_err(cv_err)?;
        let mut msers = Vector::<Vector<Point>>::new();
        let mut boxes = Vector::<Rect>::new();
        self.inner
            .detect_regions(mat, &mut msers, &mut boxes)
            .map_err(cv_err)?;
        Ok((msers, boxes))
    }
}

/// Copies a gray image (any layout) into a new `CV_8UC1` `Mat`, optionally
/// inverted (`255 - v`). For a zero-copy view of a standard-layout image see
/// [`crate::ops::opencv::gray_as_mat`].
pub fn gray_to_mat(gray: &GrayImage, invert: bool) -> Result<Mat, OpsError> {
    let (rows, cols) = gray.dim();
    let too_big = |_| OpsError::OpenCv(format!("{cols}x{rows} does not fit a Mat"));
    let mut mat = Mat::new_rows_cols_with_default(
        i32::try_from(rows).map_err(too_big)?,
        i32::try_from(cols).map_err(too_big)?,
        CV_8UC1,
        Scalar::all(0.0),
    )
    .map_err(cv_err)?;
    let mask = if invert { 0xff } else { 0 };
    let dst = mat.data_bytes_mut().map_err(cv_err)?;
    for (d, &s) in dst.iter_mut().zip(gray.iter()) {
        *d = s ^ mask;
    }
    Ok(mat)
}

fn bbox_of(pixels: &[(u32, u32)]) -> BBox {
    let mut c = (u32::MAX, u32::MAX, 0, 0);
    for &(x, y) in pixels {
        c = (c.0.min(x), c.1.min(y), c.2.max(x), c.3.max(y));
    }
    if pixels.is_empty() {
        BBox::default()
    } else {
        BBox::from_corners(c.0 as usize, c.1 as usize, c.2 as usize, c.3 as usize)
    }
}
