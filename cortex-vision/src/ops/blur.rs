//! `blur_detector`: variance of the Laplacian, and a sharp/blurry decision.

use super::border::{check_frame, contiguous, reflect101};
use super::simd::multiversion;
use super::types::{GrayImage, OpsError};
use crate::registry::declare::{self, registry_op};
use cortex_core::dynamic::OpDesc;

/// Parameters of [`blur_detector_with`].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BlurParams {
    /// A frame whose Laplacian variance is below this is blurry. Must be
    /// finite and non-negative. Default `100.0`, the usual value for 8-bit
    /// frames of a few hundred pixels a side.
    pub threshold: f64,
}

impl BlurParams {
    /// The documented defaults, as a constant: a pipeline node can pass
    /// `&BlurParams::DEFAULT` without building a value per frame.
    pub const DEFAULT: BlurParams = BlurParams { threshold: 100.0 };
}

impl Default for BlurParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl BlurParams {
    /// Checks the fields.
    ///
    /// # Errors
    /// [`OpsError::InvalidParam`] for a negative or non-finite threshold.
    pub fn validate(&self) -> Result<(), OpsError> {
        if !self.threshold.is_finite() || self.threshold < 0.0 {
            return Err(OpsError::InvalidParam {
                name: "threshold",
                reason: format!("must be finite and >= 0, got {}", self.threshold),
            });
        }
        Ok(())
    }
}

/// What [`blur_detector`] measured.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BlurReport {
    /// Population variance of the Laplacian over all pixels.
    pub variance: f64,
    /// `variance < threshold`.
    pub is_blurry: bool,
}

/// Variance of the Laplacian with default [`BlurParams`].
///
/// # Errors
/// [`OpsError::Empty`] for an image without pixels.
pub fn blur_detector(gray: &GrayImage) -> Result<BlurReport, OpsError> {
    blur_detector_with(gray, &BlurParams::default())
}

/// Variance of the Laplacian, decided against `params.threshold`.
///
/// # Errors
/// [`OpsError::Empty`] for an image without pixels, [`OpsError::InvalidParam`]
/// for a bad threshold.
pub fn blur_detector_with(gray: &GrayImage, params: &BlurParams) -> Result<BlurReport, OpsError> {
    params.validate()?;
    let variance = laplacian_variance(gray)?;
    Ok(BlurReport {
        variance,
        is_blurry: variance < params.threshold,
    })
}

/// Population variance of the 3×3 Laplacian `[[0,1,0],[1,-4,1],[0,1,0]]`
/// under a reflect-101 border: what `cv::Laplacian(src, dst, CV_64F)` followed
/// by `cv::meanStdDev` gives, squared.
///
/// The Laplacian of 8-bit data is an integer in `[-1020, 1020]`, so its sum
/// and sum of squares are accumulated exactly in integers and the variance
/// `(n·Σl² − (Σl)²) / n²` is formed exactly in `i128` before a single rounding
/// to `f64`: no cancellation, no order dependence, and no full-size `f64`
/// Laplacian image as OpenCV needs.
///
/// # Errors
/// [`OpsError::Empty`] for an image without pixels, [`OpsError::TooLarge`]
/// for one over the frame limits.
pub fn laplacian_variance(gray: &GrayImage) -> Result<f64, OpsError> {
    let (h, w) = gray.dim();
    check_frame("gray", h, w)?;
    let px = contiguous(gray.view());
    let mut sum: i64 = 0;
    let mut sum_sq: u64 = 0;
    for y in 0..h {
        let up = reflect101(y as isize - 1, h);
        let down = reflect101(y as isize + 1, h);
        let row = &px[y * w..(y + 1) * w];
        let (s, q) = laplacian_row_sums(
            &px[up * w..(up + 1) * w],
            row,
            &px[down * w..(down + 1) * w],
        );
        sum += s;
        sum_sq += q;
    }
    let n = (h * w) as i128;
    let num = n * i128::from(sum_sq) - i128::from(sum) * i128::from(sum);
    Ok(num as f64 / (n as f64 * n as f64))
}

/// Sum and sum of squares of one row's Laplacian.
pub(crate) fn laplacian_row_sums(up: &[u8], row: &[u8], down: &[u8]) -> (i64, u64) {
    let w = row.len();
    let at = |x: isize| i32::from(row[reflect101(x, w)]);
    let lap = |x: usize| {
        i32::from(up[x]) + i32::from(down[x]) + at(x as isize - 1) + at(x as isize + 1)
            - 4 * i32::from(row[x])
    };
    // The two border columns by the general formula, the interior by the
    // vectorized loop.
    let mut sum = 0i64;
    let mut sum_sq = 0u64;
    let mut edge = |x: usize| {
        let l = lap(x);
        sum += i64::from(l);
        sum_sq += u64::from(l.unsigned_abs() * l.unsigned_abs());
    };
    edge(0);
    if w > 1 {
        edge(w - 1);
    }
    if w > 2 {
        let (s, q) = interior_sums(up, row, down);
        sum += s;
        sum_sq += q;
    }
    (sum, sum_sq)
}

multiversion! {
    /// Laplacian sums over columns `1..w-1` (`w >= 3`).
    fn interior_sums(up: &[u8], row: &[u8], down: &[u8]) -> (i64, u64) {
        let w = row.len();
        let (up, down) = (&up[1..w - 1], &down[1..w - 1]);
        let (left, mid, right) = (&row[..w - 2], &row[1..w - 1], &row[2..]);
        let mut sum = 0i64;
        let mut sum_sq = 0u64;
        // |l| <= 1020, so l^2 <= 1_040_400 and a block of 4096 squares stays
        // below 2^32: accumulate blocks in 32 bits (vectorizes), then widen.
        const BLOCK: usize = 4096;
        let mut start = 0;
        while start < mid.len() {
            let end = (start + BLOCK).min(mid.len());
            let mut s = 0i32;
            let mut q = 0u32;
            for i in start..end {
                let l = i32::from(up[i]) + i32::from(down[i]) + i32::from(left[i]) + i32::from(right[i])
                    - 4 * i32::from(mid[i]);
                s += l;
                q += (l * l) as u32;
            }
            sum += i64::from(s);
            sum_sq += u64::from(q);
            start = end;
        }
        (sum, sum_sq)
    }
}

registry_op! {
    /// `blur_detector` in the kernel registry: variance of the Laplacian
    /// and the blur decision, at the default parameters.
    BlurDetector = "blur_detector", for<'a> &'a GrayImage => BlurReport;
    shape |g| gray_shape(g);
    layout |g| layout_of(g.is_standard_layout());
    kernels {
        pure(|g, out| set(out, blur_detector(g))),
        #[cfg(feature = "opencv")]
        opencv(|g, out| set(out, crate::ops::opencv::blur_detector(g, &BlurParams::default()))),
    }
}

/// `vision.blur_detector`: the op as graph files, the runner and Python
/// name it.
pub fn descriptor() -> OpDesc {
    OpDesc::builder::<BlurParams>(
        "vision.blur_detector",
        "variance of the Laplacian, and whether it is under a threshold",
    )
    .calls(&["blur_detector"])
    .kernels(&declare::kernel_labels::<BlurDetector>())
    .input::<GrayImage>("gray")
    .param("threshold", "blurry below this variance; finite, >= 0")
    .strip(|p: &BlurParams| Some(crate::ops::strip::BlurForm(*p)))
    .returns(|i, p| Ok(blur_detector_with(i.arg(0)?, p)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute(img: &GrayImage) -> f64 {
        let (h, w) = img.dim();
        let mut v = Vec::new();
        for y in 0..h {
            for x in 0..w {
                let p = |dy: isize, dx: isize| {
                    f64::from(
                        img[[
                            reflect101(y as isize + dy, h),
                            reflect101(x as isize + dx, w),
                        ]],
                    )
                };
                v.push(p(-1, 0) + p(1, 0) + p(0, -1) + p(0, 1) - 4.0 * p(0, 0));
            }
        }
        let n = v.len() as f64;
        let m = v.iter().sum::<f64>() / n;
        v.iter().map(|l| (l - m) * (l - m)).sum::<f64>() / n
    }

    #[test]
    fn matches_brute_force_on_all_small_sizes() {
        let mut seed = 12345u32;
        for h in 1..7 {
            for w in 1..9 {
                let img = GrayImage::from_shape_fn((h, w), |_| {
                    seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    (seed >> 16) as u8
                });
                let got = laplacian_variance(&img).unwrap();
                let want = brute(&img);
                assert!(
                    (got - want).abs() <= 1e-9 * want.max(1.0),
                    "{h}x{w}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn flat_image_is_blurry_and_bad_params_rejected() {
        let r = blur_detector(&GrayImage::from_elem((5, 5), 7)).unwrap();
        assert_eq!(r.variance, 0.0);
        assert!(r.is_blurry);
        let bad = BlurParams {
            threshold: f64::NAN,
        };
        assert!(blur_detector_with(&GrayImage::zeros((5, 5)), &bad).is_err());
        assert!(blur_detector(&GrayImage::zeros((0, 5))).is_err());
    }
}
