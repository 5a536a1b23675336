//! `saliency_dft`: spectral-residual saliency (Hou & Zhang, CVPR 2007), step
//! for step as OpenCV contrib's `cv::saliency::StaticSaliencySpectralResidual`.
//!
//! 1. resize the gray frame to 64×64 (`INTER_LINEAR_EXACT`, bit-exact, see
//!    [`super::resize`]);
//! 2. complex 2-D DFT in `f64` (rustfft; rows, then columns);
//! 3. log amplitude `ln(|F| + 1)` minus its 3×3 box mean (reflect-101
//!    border). Older OpenCV sources take `log(|F|)`; the 4.6 library uses
//!    `|F| + 1`, which a test pins (the difference is ~2e-4 in the map);
//! 4. `exp(residual) · e^{i·phase}`, unscaled complex inverse DFT (the
//!    residual spectrum is not Hermitian, so the inverse must stay complex);
//! 5. magnitude, 5×5 Gaussian σ = 8 (reflect-101), squared, divided by its
//!    maximum;
//! 6. resize back to the frame size (`INTER_LINEAR` on `f32`).
//!
//! OpenCV's phase goes through its fast `f32` `atan2` (error up to 1.7e-4
//! rad) and a table `sin`/`cos`; both are reproduced (4096 evaluations per
//! frame), which brings the map from ~5e-5 to ~1e-7 of OpenCV's. The column FFTs run on a transposed copy, and the
//! log-amplitude/residual steps stay in that transposed layout (the 3×3 box
//! is symmetric), which saves two transposes.

use super::border::{check_frame, contiguous, prepare_out, reflect101};
use super::resize::{resize_linear_exact_u8_within, resize_linear_f32_within, ResizeScratch};
use super::scratch::{vec_bytes, with_scratch, Scratch, Slot};
use super::simd::multiversion;
use super::types::{GrayImage, OpsError, ScoreMap};
use crate::registry::declare::{self, registry_op};
use cortex_core::dynamic::OpDesc;
use rustfft::num_complex::Complex;
use rustfft::{Fft, FftPlanner};
use std::sync::Arc;

/// Parameters of [`saliency_dft_with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SaliencyParams {
    /// Working width (OpenCV's `setImageWidth`). 1..=4096. Default 64.
    pub width: usize,
    /// Working height (OpenCV's `setImageHeight`). 1..=4096. Default 64.
    /// `width × height` is at most [`MAX_WORK_PIXELS`].
    pub height: usize,
}

impl SaliencyParams {
    /// The documented defaults, as a constant: a pipeline node can pass
    /// `&SaliencyParams::DEFAULT` without building a value per frame.
    pub const DEFAULT: SaliencyParams = SaliencyParams {
        width: 64,
        height: 64,
    };
}

impl Default for SaliencyParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Most pixels of the working image: the engine holds about 61 bytes per
/// working pixel (complex spectra, `f64` planes), so 2²⁰ pixels (e.g.
/// 1024×1024) cost 61 MiB; a 4096×4096 working size would cost 1 GiB for a
/// method designed for a 64×64 thumbnail.
pub const MAX_WORK_PIXELS: usize = 1 << 20;

impl SaliencyParams {
    /// Checks the fields.
    ///
    /// # Errors
    /// [`OpsError::InvalidParam`] for a working side outside `1..=4096` or a
    /// working size over [`MAX_WORK_PIXELS`].
    pub fn validate(&self) -> Result<(), OpsError> {
        for (name, v) in [("width", self.width), ("height", self.height)] {
            if !(1..=4096).contains(&v) {
                return Err(OpsError::InvalidParam {
                    name,
                    reason: format!("working size must be in 1..=4096, got {v}"),
                });
            }
        }
        if self.width * self.height > MAX_WORK_PIXELS {
            return Err(OpsError::InvalidParam {
                name: "width/height",
                reason: format!(
                    "working size {}x{} is over {MAX_WORK_PIXELS} pixels",
                    self.width, self.height
                ),
            });
        }
        Ok(())
    }
}

/// Spectral-residual saliency with default [`SaliencyParams`] (64×64).
///
/// # Errors
/// [`OpsError::Empty`] for an image without pixels.
pub fn saliency_dft(gray: &GrayImage) -> Result<ScoreMap, OpsError> {
    saliency_dft_with(gray, &SaliencyParams::default())
}

/// Spectral-residual saliency map sized like `gray`, values in `[0, 1]`.
///
/// A frame whose spectrum is degenerate (e.g. all pixels equal, where every
/// non-DC coefficient vanishes) gives whatever finite map the arithmetic
/// yields, and an all-zero map if the result has no positive maximum; it
/// never yields NaN.
///
/// # Errors
/// [`OpsError::Empty`] for an image without pixels, [`OpsError::TooLarge`]
/// for one over the frame limits, [`OpsError::InvalidParam`] for a bad
/// working size.
pub fn saliency_dft_with(gray: &GrayImage, params: &SaliencyParams) -> Result<ScoreMap, OpsError> {
    let mut out = ScoreMap::zeros((0, 0));
    saliency_dft_into(gray, params, &mut out)?;
    Ok(out)
}

/// [`saliency_dft_with`] into a caller-owned map. The FFT plans and working
/// buffers live in a per-thread engine, so steady-state calls do not allocate.
///
/// # Errors
/// As [`saliency_dft_with`].
pub fn saliency_dft_into(
    gray: &GrayImage,
    params: &SaliencyParams,
    out: &mut ScoreMap,
) -> Result<(), OpsError> {
    params.validate()?;
    check_frame("gray", gray.nrows(), gray.ncols())?;
    thread_local! {
        static RESIDUAL: Slot<Residual> = const { Slot::new(None) };
    }
    with_scratch(&RESIDUAL, |Residual(slot)| {
        let engine = match slot {
            Some(e) if e.params == *params => e,
            _ => slot.insert(SpectralResidual::new(params)?),
        };
        engine.compute_into(gray, out)
    })
}

/// The per-thread engine of [`saliency_dft_into`] (planned on first use and
/// on a change of working size).
#[derive(Default)]
struct Residual(Option<SpectralResidual>);

impl Scratch for Residual {
    fn heap_bytes(&self) -> usize {
        self.0.as_ref().map_or(0, SpectralResidual::heap_bytes)
    }
}

/// A reusable spectral-residual engine: FFT plans for the working size and
/// every working buffer.
pub struct SpectralResidual {
    params: SaliencyParams,
    fft_w: Arc<dyn Fft<f64>>,
    ifft_w: Arc<dyn Fft<f64>>,
    fft_h: Arc<dyn Fft<f64>>,
    ifft_h: Arc<dyn Fft<f64>>,
    scratch: Vec<Complex<f64>>,
    spec: Vec<Complex<f64>>,
    tspec: Vec<Complex<f64>>,
    small: Vec<u8>,
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
    smallf: Vec<f32>,
    resize: ResizeScratch,
    /// Reflect-101 neighbours at offsets −2..=2 of every column / row index.
    refl_w: Vec<[usize; 5]>,
    refl_h: Vec<[usize; 5]>,
    /// OpenCV's 64-entry sine table of `SinCos_32f`.
    sin_table: [f64; 64],
}

impl std::fmt::Debug for SpectralResidual {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpectralResidual")
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

impl SpectralResidual {
    /// Plans the FFTs for `params`' working size.
    ///
    /// # Errors
    /// [`OpsError::InvalidParam`] for a bad working size.
    pub fn new(params: &SaliencyParams) -> Result<Self, OpsError> {
        params.validate()?;
        let (w, h) = (params.width, params.height);
        let mut planner = FftPlanner::new();
        let fft_w = planner.plan_fft_forward(w);
        let ifft_w = planner.plan_fft_inverse(w);
        let fft_h = planner.plan_fft_forward(h);
        let ifft_h = planner.plan_fft_inverse(h);
        let scratch_len = [&fft_w, &ifft_w, &fft_h, &ifft_h]
            .iter()
            .map(|f| f.get_inplace_scratch_len())
            .max()
            .unwrap_or(0);
        let n = w * h;
        Ok(SpectralResidual {
            params: *params,
            fft_w,
            ifft_w,
            fft_h,
            ifft_h,
            scratch: vec![Complex::default(); scratch_len],
            spec: vec![Complex::default(); n],
            tspec: vec![Complex::default(); n],
            small: vec![0; n],
            a: vec![0.0; n],
            b: vec![0.0; n],
            c: vec![0.0; n],
            smallf: vec![0.0; n],
            resize: ResizeScratch::default(),
            refl_w: reflect_table(w),
            refl_h: reflect_table(h),
            sin_table: std::array::from_fn(|i| {
                (2.0 * std::f64::consts::PI * i as f64 / 64.0).sin()
            }),
        })
    }

    /// Heap bytes held by the buffers (not counting the FFT plans).
    fn heap_bytes(&self) -> usize {
        vec_bytes(&self.scratch)
            + vec_bytes(&self.spec)
            + vec_bytes(&self.tspec)
            + vec_bytes(&self.small)
            + vec_bytes(&self.a)
            + vec_bytes(&self.b)
            + vec_bytes(&self.c)
            + vec_bytes(&self.smallf)
            + self.resize.heap_bytes()
            + vec_bytes(&self.refl_w)
            + vec_bytes(&self.refl_h)
    }

    /// The saliency map of `gray` into `out` (resized to `gray`'s size).
    /// Working memory does not depend on the frame size.
    ///
    /// # Errors
    /// [`OpsError::Empty`] for an image without pixels, [`OpsError::TooLarge`]
    /// for one over the frame limits.
    pub fn compute_into(&mut self, gray: &GrayImage, out: &mut ScoreMap) -> Result<(), OpsError> {
        let (h, w) = gray.dim();
        check_frame("gray", h, w)?;
        let (nw, nh) = (self.params.width, self.params.height);
        let px = contiguous(gray.view());
        resize_linear_exact_u8_within(&px, (h, w), &mut self.small, (nh, nw), &mut self.resize)?;

        // Forward DFT: rows, transpose, rows (= columns). `tspec` is nw × nh.
        for (c, &v) in self.spec.iter_mut().zip(&self.small) {
            *c = Complex::new(f64::from(v), 0.0);
        }
        self.fft_w
            .process_with_scratch(&mut self.spec, &mut self.scratch);
        transpose(&self.spec, &mut self.tspec, nh, nw);
        self.fft_h
            .process_with_scratch(&mut self.tspec, &mut self.scratch);

        // Log amplitude `ln(|F| + 1)` (finite even where `|F| = 0`) and its
        // 3×3 box mean, in the transposed layout.
        for (l, c) in self.a.iter_mut().zip(&self.tspec) {
            *l = ((c.re * c.re + c.im * c.im).sqrt() + 1.0).ln();
        }
        // `tspec` is `nw` rows by `nh` columns.
        box3(
            &self.a,
            &mut self.b,
            &mut self.c,
            &self.refl_w,
            &self.refl_h,
        );
        residual_spectrum(&mut self.tspec, &self.a, &self.b, &self.sin_table);

        // Inverse DFT (unscaled, complex): columns, transpose back, rows.
        self.ifft_h
            .process_with_scratch(&mut self.tspec, &mut self.scratch);
        transpose(&self.tspec, &mut self.spec, nw, nh);
        self.ifft_w
            .process_with_scratch(&mut self.spec, &mut self.scratch);

        for (m, c) in self.a.iter_mut().zip(&self.spec) {
            *m = (c.re * c.re + c.im * c.im).sqrt();
        }
        gaussian5(&mut self.a, &mut self.b, &self.refl_w, &self.refl_h);
        let mut max = 0.0f64;
        for v in self.a.iter_mut() {
            *v *= *v;
            max = max.max(*v);
        }
        if max.is_finite() && max > 0.0 {
            for (d, &v) in self.smallf.iter_mut().zip(&self.a) {
                *d = (v / max) as f32;
            }
        } else {
            self.smallf.fill(0.0);
        }
        let dst = prepare_out(out, h, w);
        resize_linear_f32_within(&self.smallf, (nh, nw), dst, (h, w), &mut self.resize)
    }
}

multiversion! {
    /// `exp(log amplitude − its box mean) · e^{i·phase}` in place, with the
    /// phase and its sine and cosine computed as OpenCV's `cartToPolar` and
    /// `polarToCart` do. (Built for AVX2 too: rounding is then one
    /// instruction instead of a library call.)
    fn residual_spectrum(spec: &mut [Complex<f64>], log_amp: &[f64], mean: &[f64], table: &[f64; 64]) {
        for ((c, &l), &m) in spec.iter_mut().zip(log_amp).zip(mean) {
            let r = (l - m).exp();
            let (sin, cos) = opencv_sincos(opencv_fast_atan(c.im as f32, c.re as f32), table);
            *c = Complex::new(f64::from(cos) * r, f64::from(sin) * r);
        }
    }
}

/// OpenCV's `fastAtan2` in radians (`cartToPolar` on `f64` data goes through
/// it in `f32`): a 7th-order polynomial good to about 1.7e-4 rad. Reproduced
/// so that the map follows OpenCV's to ~1e-7 instead of ~5e-5.
#[inline(always)]
fn opencv_fast_atan(y: f32, x: f32) -> f32 {
    // OpenCV's coefficients: `f32` literals scaled by `(float)(180/CV_PI)`.
    const DEG: f32 = (180.0 / std::f64::consts::PI) as f32;
    const P1: f32 = 0.999_787_841_279_480_7_f64 as f32 * DEG;
    const P3: f32 = -0.325_808_397_464_097_5_f64 as f32 * DEG;
    const P5: f32 = 0.155_578_651_846_328_1_f64 as f32 * DEG;
    const P7: f32 = -0.044_326_555_547_921_28_f64 as f32 * DEG;
    let (ax, ay) = (x.abs(), y.abs());
    let c = ax.min(ay) / (ax.max(ay) + f64::EPSILON as f32);
    let cc = c * c;
    let mut a = (((P7 * cc + P5) * cc + P3) * cc + P1) * c;
    if ax < ay {
        a = 90.0 - a;
    }
    if x < 0.0 {
        a = 180.0 - a;
    }
    if y < 0.0 {
        a = 360.0 - a;
    }
    a * (std::f64::consts::PI / 180.0) as f32
}

/// OpenCV's `SinCos_32f` (used by `polarToCart`): a 64-entry sine table
/// plus a short polynomial, rounded to `f32`. Returns `(sin, cos)`.
#[inline(always)]
fn opencv_sincos(angle: f32, table: &[f64; 64]) -> (f32, f32) {
    const N: i64 = 64;
    let k2 = 2.0 * std::f64::consts::PI / N as f64;
    let sin_a0 = -0.166_630_293_345_647 * k2 * k2 * k2;
    let sin_a2 = k2;
    let cos_a0 = -0.499_818_138_450_326 * k2 * k2;
    let k1 = N as f64 / (2.0 * std::f64::consts::PI);
    let mut t = f64::from(angle) * k1;
    let it = t.round_ties_even() as i64;
    t -= it as f64;
    let sin_idx = it & (N - 1);
    let cos_idx = (N / 4 - sin_idx) & (N - 1);
    let sin_b = (sin_a0 * t * t + sin_a2) * t;
    let cos_b = cos_a0 * t * t + 1.0;
    let (sin_a, cos_a) = (table[sin_idx as usize], table[cos_idx as usize]);
    (
        (sin_a * cos_b + cos_a * sin_b) as f32,
        (cos_a * cos_b - sin_a * sin_b) as f32,
    )
}

/// `dst` (cols × rows) = transpose of `src` (rows × cols).
fn transpose(src: &[Complex<f64>], dst: &mut [Complex<f64>], rows: usize, cols: usize) {
    for (r, row) in src.chunks_exact(cols).enumerate() {
        for (c, &v) in row.iter().enumerate() {
            dst[c * rows + r] = v;
        }
    }
}

/// For each index of a side of `n`, its reflect-101 neighbours at offsets
/// −2..=2 (small filters on the small working image index through this).
fn reflect_table(n: usize) -> Vec<[usize; 5]> {
    (0..n)
        .map(|i| std::array::from_fn(|k| reflect101(i as isize + k as isize - 2, n)))
        .collect()
}

/// Normalized 3×3 box filter with reflect-101 border (`cv::blur`,
/// `BORDER_DEFAULT`): row sums, then column sums of those, times 1/9 — the
/// order OpenCV's separable box filter adds in. `src` is `rows × cols` with
/// `rr`/`rc` the reflect tables of its rows and columns.
fn box3(src: &[f64], dst: &mut [f64], tmp: &mut [f64], rr: &[[usize; 5]], rc: &[[usize; 5]]) {
    let cols = rc.len();
    for (srow, trow) in src.chunks_exact(cols).zip(tmp.chunks_exact_mut(cols)) {
        for (t, r) in trow.iter_mut().zip(rc) {
            *t = srow[r[1]] + srow[r[2]] + srow[r[3]];
        }
    }
    for (y, drow) in dst.chunks_exact_mut(cols).enumerate() {
        let r = rr[y];
        let (a, b, c) = (
            &tmp[r[1] * cols..][..cols],
            &tmp[r[2] * cols..][..cols],
            &tmp[r[3] * cols..][..cols],
        );
        for (x, d) in drow.iter_mut().enumerate() {
            *d = (a[x] + b[x] + c[x]) * (1.0 / 9.0);
        }
    }
}

/// `cv::GaussianBlur(ksize 5×5, σ = 8, BORDER_DEFAULT)` on `f64`, in place on
/// `img` (`rows × cols`, reflect tables `rc`/`rr`), `tmp` as scratch: rows
/// first, then columns, as OpenCV's separable filter. The kernel is OpenCV's
/// `getGaussianKernel(5, 8)`.
fn gaussian5(img: &mut [f64], tmp: &mut [f64], rc: &[[usize; 5]], rr: &[[usize; 5]]) {
    let sigma = 8.0f64;
    let scale2x = -0.125 / (sigma * sigma);
    let t = [(16.0 * scale2x).exp(), (4.0 * scale2x).exp()];
    let inv = 1.0 / ((t[0] + t[1]) * 2.0 + 1.0);
    let k = [t[0] * inv, t[1] * inv, inv, t[1] * inv, t[0] * inv];
    let cols = rc.len();
    for (row, trow) in img.chunks_exact(cols).zip(tmp.chunks_exact_mut(cols)) {
        for (t, r) in trow.iter_mut().zip(rc) {
            *t = k[0] * row[r[0]]
                + k[1] * row[r[1]]
                + k[2] * row[r[2]]
                + k[3] * row[r[3]]
                + k[4] * row[r[4]];
        }
    }
    for (y, drow) in img.chunks_exact_mut(cols).enumerate() {
        let r = rr[y];
        let src: [&[f64]; 5] = std::array::from_fn(|i| &tmp[r[i] * cols..][..cols]);
        for (x, d) in drow.iter_mut().enumerate() {
            *d = k[0] * src[0][x]
                + k[1] * src[1][x]
                + k[2] * src[2][x]
                + k[3] * src[3][x]
                + k[4] * src[4][x];
        }
    }
}

registry_op! {
    /// `saliency_dft` in the kernel registry: spectral-residual saliency,
    /// at the default working size.
    SaliencyDft = "saliency_dft", for<'a> &'a GrayImage => ScoreMap;
    shape |g| gray_shape(g);
    layout |g| layout_of(g.is_standard_layout());
    kernels {
        pure(|g, out| saliency_dft_into(g, &SaliencyParams::DEFAULT, out)),
        #[cfg(feature = "opencv")] opencv(|g, out| set(out, crate::ops::opencv::saliency_dft(g))),
    }
}

/// `vision.saliency_dft`: the op as graph files, the runner and Python
/// name it.
pub fn descriptor() -> OpDesc {
    OpDesc::builder::<SaliencyParams>(
        "vision.saliency_dft",
        "spectral-residual saliency (OpenCV's StaticSaliencySpectralResidual)",
    )
    .calls(&["saliency_dft", "saliency_dft_into"])
    .kernels(&declare::kernel_labels::<SaliencyDft>())
    .input::<GrayImage>("gray")
    .param("width", "working width; 1..=4096")
    .param("height", "working height; 1..=4096")
    .compilable()
    .fills(|i, p, out: &mut ScoreMap| Ok(saliency_dft_into(i.arg(0)?, p, out)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_finite_in_unit_range_for_odd_inputs() {
        for &(h, w) in &[(1, 1), (1, 7), (5, 3), (64, 64), (128, 128), (37, 200)] {
            for fill in [0u8, 128] {
                let flat = GrayImage::from_elem((h, w), fill);
                let m = saliency_dft(&flat).unwrap();
                assert_eq!(m.dim(), (h, w));
                assert!(m.iter().all(|v| v.is_finite() && (0.0..=1.0).contains(v)));
            }
            let tex = GrayImage::from_shape_fn((h, w), |(y, x)| ((x * 37 + y * 11) % 251) as u8);
            let m = saliency_dft(&tex).unwrap();
            assert!(m
                .iter()
                .all(|v| v.is_finite() && (0.0..=1.0 + 1e-6).contains(v)));
        }
        assert!(saliency_dft(&GrayImage::zeros((0, 3))).is_err());
        let bad = SaliencyParams {
            width: 0,
            height: 64,
        };
        assert!(saliency_dft_with(&GrayImage::zeros((3, 3)), &bad).is_err());
    }
}
