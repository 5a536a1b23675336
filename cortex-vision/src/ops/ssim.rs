//! `scene_change`: SSIM between the current and the previous gray frame, and
//! a changed/unchanged decision.
//!
//! Two SSIM definitions are offered:
//! - [`SsimVariant::Gaussian`] (default): OpenCV's `cv::quality::QualitySSIM`
//!   — 11×11 Gaussian window (σ = 1.5, reflect-101 border), population
//!   statistics, `C1 = 6.5025`, `C2 = 58.5225`, mean of the whole map.
//! - [`SsimVariant::SkImage`]: scikit-image's `structural_similarity` defaults
//!   for 8-bit data — 7×7 uniform window, sample covariance (`N/(N−1)`), the
//!   same constants, mean of the map without its 3-pixel border.
//!
//! OpenCV materializes five full-image `f32` Gaussian blurs and about fifteen
//! full-image temporaries. Here one streaming pass does everything: each
//! input row is turned into four quantities (`a`, `b`, `a²+b²`, `a·b` — the
//! two squares are only ever used as a sum, so one blur serves both), filtered
//! horizontally into a ring of 11 rows, and each output row is filtered
//! vertically, turned into SSIM and summed at once. Working memory is
//! `O(width)` and stays in cache. The uniform window of the scikit-image
//! variant runs on exact integer box sums.

use super::bands;
use super::border::{check_frame, check_limits, check_nonempty, contiguous, reflect101};
use super::scratch::{vec_bytes, with_scratch, Scratch, Slot};
use super::simd::multiversion;
use super::types::{GrayImage, OpsError};
use crate::registry::declare::{self, registry_op};
use cortex_core::dynamic::{OpDesc, Params};
use std::borrow::Cow;

/// `(0.01 · 255)²`.
pub const C1: f64 = 6.5025;
/// `(0.03 · 255)²`.
pub const C2: f64 = 58.5225;

/// Which SSIM definition [`ssim_with`] computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SsimVariant {
    /// OpenCV `QualitySSIM`: 11×11 Gaussian σ = 1.5, whole-map mean.
    #[default]
    Gaussian,
    /// scikit-image defaults: 7×7 uniform, sample covariance, 3 px crop.
    /// Needs frames of at least 7×7 pixels.
    SkImage,
}

/// Parameters of [`scene_change_with`].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SceneParams {
    /// The scene changed when SSIM is below this. Finite, in `[-1, 1]`.
    /// Default `0.5`.
    pub threshold: f64,
    /// SSIM definition. Default [`SsimVariant::Gaussian`].
    pub variant: SsimVariant,
}

impl SceneParams {
    /// The documented defaults, as a constant: a pipeline node can pass
    /// `&SceneParams::DEFAULT` without building a value per frame.
    pub const DEFAULT: SceneParams = SceneParams {
        threshold: 0.5,
        variant: SsimVariant::Gaussian,
    };
}

impl Default for SceneParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl SceneParams {
    /// Checks the fields.
    ///
    /// # Errors
    /// [`OpsError::InvalidParam`] for a threshold outside `[-1, 1]` or NaN.
    pub fn validate(&self) -> Result<(), OpsError> {
        if !(-1.0..=1.0).contains(&self.threshold) {
            return Err(OpsError::InvalidParam {
                name: "threshold",
                reason: format!("must be in [-1, 1], got {}", self.threshold),
            });
        }
        Ok(())
    }
}

/// What [`scene_change`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SceneChange {
    /// Whether this frame starts a new scene.
    pub changed: bool,
    /// SSIM against the previous frame, in `[-1, 1]`; `None` when there was
    /// no comparable previous frame (first frame, or a resolution change).
    pub ssim: Option<f64>,
}

/// Scene change with default [`SceneParams`].
///
/// # Errors
/// As [`scene_change_with`].
pub fn scene_change(cur: &GrayImage, prev: &GrayImage) -> Result<SceneChange, OpsError> {
    scene_change_with(cur, prev, &SceneParams::default())
}

/// Scene change: `ssim(cur, prev) < threshold`.
///
/// First-frame behaviour: when `prev` is empty (the pipeline's initial state)
/// or of another size than `cur` (a resolution change mid-stream), the frame
/// is a scene change with `ssim: None`. Not an error, so that the pipeline's
/// state moves on to the new size. Steady-state calls do not allocate (the
/// working rows live in a per-thread buffer).
///
/// # Errors
/// [`OpsError::Empty`] for an empty `cur`; [`OpsError::TooLarge`] for a
/// `cur` over the frame limits; [`OpsError::InvalidParam`] for a bad
/// threshold, or with [`SsimVariant::SkImage`] for a frame under 7×7.
pub fn scene_change_with(
    cur: &GrayImage,
    prev: &GrayImage,
    params: &SceneParams,
) -> Result<SceneChange, OpsError> {
    params.validate()?;
    check_frame("cur", cur.nrows(), cur.ncols())?;
    if prev.dim() != cur.dim() {
        return Ok(SceneChange {
            changed: true,
            ssim: None,
        });
    }
    let s = with_ssim_scratch(|scratch| ssim_with(cur, prev, params.variant, scratch))?;
    Ok(SceneChange {
        changed: s < params.threshold,
        ssim: Some(s),
    })
}

/// SSIM of two gray images of the same size, OpenCV `QualitySSIM` definition.
///
/// # Errors
/// As [`ssim_with`].
pub fn ssim(a: &GrayImage, b: &GrayImage) -> Result<f64, OpsError> {
    with_ssim_scratch(|scratch| ssim_with(a, b, SsimVariant::Gaussian, scratch))
}

/// SSIM of two gray images of the same size with caller-owned working memory:
/// a value in `[-1, 1]` on every shape (1 for identical images), each value
/// of the SSIM map clamped to that range before the mean (see `ssim_row`).
///
/// # Errors
/// [`OpsError::Empty`] for empty images, [`OpsError::SizeMismatch`] for
/// different sizes, [`OpsError::TooLarge`] over the frame limits, [`OpsError::InvalidParam`] for [`SsimVariant::SkImage`]
/// on an image under 7×7 (the window would not fit; scikit-image refuses too).
pub fn ssim_with(
    a: &GrayImage,
    b: &GrayImage,
    variant: SsimVariant,
    scratch: &mut SsimScratch,
) -> Result<f64, OpsError> {
    let (h, w) = a.dim();
    check_nonempty("a", h, w)?;
    if b.dim() != (h, w) {
        return Err(OpsError::SizeMismatch {
            what: "b",
            got_w: b.ncols(),
            got_h: b.nrows(),
            want_w: w,
            want_h: h,
        });
    }
    check_limits("a", h, w)?;
    if variant == SsimVariant::SkImage && (h < BOX || w < BOX) {
        return Err(OpsError::InvalidParam {
            name: "variant",
            reason: format!("the 7x7 scikit-image window needs at least 7x7 pixels, got {w}x{h}"),
        });
    }
    // Both SSIM definitions are symmetric in x and y (same window, same
    // border rule on both axes), and the kernels pay a fixed cost per row:
    // a tall, narrow frame (one pixel wide, millions high) is computed on its
    // transpose, which costs what the same pixels laid out wide cost.
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    let ((pa, pb), (h, w)) = if w < NARROW && h > w {
        (ta, tb) = (
            std::mem::take(&mut scratch.ta),
            std::mem::take(&mut scratch.tb),
        );
        ta.clear();
        ta.extend(a.t().iter());
        tb.clear();
        tb.extend(b.t().iter());
        ((Cow::Borrowed(&ta[..]), Cow::Borrowed(&tb[..])), (w, h))
    } else {
        ((contiguous(a.view()), contiguous(b.view())), (h, w))
    };
    let r = match variant {
        SsimVariant::Gaussian => gaussian_ssim(&pa, &pb, h, w, scratch),
        SsimVariant::SkImage => box_ssim(&pa, &pb, h, w, scratch),
    };
    drop((pa, pb));
    (scratch.ta, scratch.tb) = (ta, tb);
    Ok(r)
}

/// Frames narrower than this and taller than wide are computed transposed.
const NARROW: usize = 32;

/// Reusable working memory of [`ssim_with`] (a few rows of the frame width).
#[derive(Debug, Default, Clone)]
pub struct SsimScratch {
    /// Horizontally filtered rows, `TAPS` slots × 4 quantities × width.
    ring: Vec<f32>,
    /// One input row's 4 quantities with a 5-pixel reflected margin each side.
    pad: Vec<f32>,
    /// Vertically filtered quantities of one output row, 4 × width.
    vert: Vec<f32>,
    /// SSIM values of one output row.
    row: Vec<f32>,
    /// Box variant: running 7-row column sums, 5 quantities × width.
    cols: Vec<u32>,
    /// Box variant: 7×7 window sums of one output row, 5 quantities.
    win: Vec<u32>,
    /// Transposed copies of tall, narrow frames.
    ta: Vec<u8>,
    tb: Vec<u8>,
    /// Gaussian variant on several threads: each band's working memory.
    bands: Vec<SsimScratch>,
    /// Gaussian variant on several threads: every row's sum per vertical
    /// strip, row-major, folded in the one-thread order at the end.
    sums: Vec<f64>,
}

impl Scratch for SsimScratch {
    fn heap_bytes(&self) -> usize {
        vec_bytes(&self.ring)
            + vec_bytes(&self.pad)
            + vec_bytes(&self.vert)
            + vec_bytes(&self.row)
            + vec_bytes(&self.cols)
            + vec_bytes(&self.win)
            + vec_bytes(&self.ta)
            + vec_bytes(&self.tb)
            + vec_bytes(&self.bands)
            + self.bands.iter().map(Scratch::heap_bytes).sum::<usize>()
            + vec_bytes(&self.sums)
    }
}

fn with_ssim_scratch<R>(f: impl FnOnce(&mut SsimScratch) -> R) -> R {
    thread_local! {
        static SCRATCH: Slot<SsimScratch> = const { Slot::new(None) };
    }
    with_scratch(&SCRATCH, f)
}

const RADIUS: usize = 5;
const TAPS: usize = 2 * RADIUS + 1;

/// Half of OpenCV's 11-tap σ = 1.5 kernel as `f32`, outermost tap first,
/// centre last: `getGaussianKernel(11, 1.5, CV_32F)` (its bit-exact `f64`
/// construction — `exp(x²·(−0.125/σ²))` for `x = 2·offset`, scaled by the
/// reciprocal of the sum — rounded to `f32`, as `GaussianBlur` on `CV_32F`
/// data uses).
fn gaussian_half_kernel() -> [f32; RADIUS + 1] {
    let sigma = 1.5f64;
    let scale2x = -0.125 / (sigma * sigma);
    let mut t = [0f64; RADIUS + 1];
    let mut sum = 0.0;
    for (i, v) in t.iter_mut().take(RADIUS).enumerate() {
        let x = (2 * i) as f64 - (TAPS - 1) as f64;
        *v = (x * x * scale2x).exp();
        sum += *v;
    }
    sum = sum * 2.0 + 1.0;
    let inv = 1.0 / sum;
    let mut k = [0f32; RADIUS + 1];
    for i in 0..RADIUS {
        k[i] = (t[i] * inv) as f32;
    }
    k[RADIUS] = inv as f32;
    k
}

/// Columns per strip: the ring of one strip (11 rows × 4 quantities × 128
/// `f32` = 22 KB) stays in L1; whole 1080p rows would put ~340 KB of ring in
/// L2 and make the vertical pass wait on it.
const STRIP: usize = 128;

/// How many rows ahead a strip asks for its input: a strip reads a short
/// segment of every row, a stride the hardware prefetcher follows poorly.
const PREFETCH_ROWS: usize = 4;

/// Hints the CPU to bring `bytes` into cache (no effect on results).
#[inline(always)]
fn prefetch(bytes: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    for line in bytes.chunks(64) {
        // SAFETY: a prefetch hint never faults and the pointer is in bounds.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                line.as_ptr().cast(),
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}

/// Fewest rows per band when the Gaussian SSIM splits its rows over the
/// pool's threads: each band filters the 10 rows around its own again.
const MIN_BAND_ROWS: usize = 64;

fn gaussian_ssim(a: &[u8], b: &[u8], h: usize, w: usize, s: &mut SsimScratch) -> f64 {
    let bands = bands::bands_for(h, MIN_BAND_ROWS, rayon::current_num_threads());
    let mut total = 0.0f64;
    if bands == 1 {
        let mut x0 = 0;
        while x0 < w {
            let x1 = (x0 + STRIP).min(w);
            total += gaussian_ssim_strip(a, b, (h, w), (x0, x1), s);
            x0 = x1;
        }
        return total / (h * w) as f64;
    }
    // Each band writes its rows' sums per strip; they are then added strip
    // by strip, row by row, as the one-thread loop above adds them, so the
    // result is the same bit for bit.
    let strips = w.div_ceil(STRIP);
    let mut sums = std::mem::take(&mut s.sums);
    sums.clear();
    sums.resize(h * strips, 0.0);
    if s.bands.len() < bands {
        s.bands.resize_with(bands, SsimScratch::default);
    }
    bands::run_bands(
        h,
        &mut s.bands[..bands],
        &mut sums,
        strips,
        &|rows, band, out| {
            let first = rows.start;
            for (strip, x0) in (0..w).step_by(STRIP).enumerate() {
                let x1 = (x0 + STRIP).min(w);
                gaussian_ssim_rows((a, b, 0), (h, w), (x0, x1), rows.clone(), band, |y, sum| {
                    out[(y - first) * strips + strip] = sum;
                });
            }
        },
    );
    for strip in 0..strips {
        let mut strip_total = 0.0f64;
        for row in sums.chunks_exact(strips) {
            strip_total += row[strip];
        }
        total += strip_total;
    }
    s.sums = sums;
    total / (h * w) as f64
}

/// Sum of the SSIM map over columns `x0..x1`. Each vertical strip carries a
/// 5-column halo (real pixels inside the image, reflect-101 at its edges), so
/// it computes exactly what a whole-row pass would.
fn gaussian_ssim_strip(
    a: &[u8],
    b: &[u8],
    (h, w): (usize, usize),
    (x0, x1): (usize, usize),
    s: &mut SsimScratch,
) -> f64 {
    let mut total = 0.0f64;
    gaussian_ssim_rows((a, b, 0), (h, w), (x0, x1), 0..h, s, |_, sum| total += sum);
    total
}

/// Per output row `y` of `rows`, in order: `sink(y, sum)`, the sum of the
/// SSIM map of row `y` over columns `x0..x1`. `a` and `b` hold the image's
/// rows from row `first` on: at least rows `rows.start − 5 .. rows.end + 5`
/// (clamped to the image). A row's sum depends only on the image, never on
/// `rows`, so any partition of the rows gives the same sums.
pub(crate) fn gaussian_ssim_rows(
    (a, b, first): (&[u8], &[u8], usize),
    (h, w): (usize, usize),
    (x0, x1): (usize, usize),
    rows: std::ops::Range<usize>,
    s: &mut SsimScratch,
    mut sink: impl FnMut(usize, f64),
) {
    let k = gaussian_half_kernel();
    let sw = x1 - x0;
    let padw = sw + 2 * RADIUS;
    s.ring.resize(TAPS * 4 * sw, 0.0);
    s.pad.resize(4 * padw, 0.0);
    s.vert.resize(4 * sw, 0.0);
    s.row.resize(sw, 0.0);
    // Pad index `j` holds image column `x0 − 5 + j`; image columns `lo..hi`
    // are real, the others reflections of them.
    let lo = x0.saturating_sub(RADIUS);
    let hi = (x1 + RADIUS).min(w);
    let (jlo, jhi) = (lo + RADIUS - x0, hi + RADIUS - x0);
    let emit = |y: usize, s: &mut SsimScratch| -> f64 {
        // The 11 source rows of output row `y`, reflected at the top and
        // bottom edges; every one of them is in the ring (see `reflect101`:
        // a reflected index never leaves `[y-5, y+5]`).
        let slot = |i: usize| reflect101(y as isize + i as isize - RADIUS as isize, h) % TAPS;
        let slots: [usize; TAPS] = std::array::from_fn(slot);
        for q in 0..4 {
            let rows: [&[f32]; TAPS] = std::array::from_fn(|i| {
                let base = (slots[i] * 4 + q) * sw;
                &s.ring[base..base + sw]
            });
            vertical(&rows, &k, &mut s.vert[q * sw..(q + 1) * sw]);
        }
        let (mu1, rest) = s.vert.split_at(sw);
        let (mu2, rest) = rest.split_at(sw);
        let (sq, prod) = rest.split_at(sw);
        ssim_row(mu1, mu2, sq, prod, &mut s.row);
        sum_f64(&s.row)
    };
    let end = (rows.end + RADIUS).min(h);
    for r in rows.start.saturating_sub(RADIUS)..end {
        let at = |r: usize| (r - first) * w;
        if r + PREFETCH_ROWS < end {
            let p = at(r + PREFETCH_ROWS);
            prefetch(&a[p + lo..p + hi]);
            prefetch(&b[p + lo..p + hi]);
        }
        let row_a = &a[at(r) + lo..at(r) + hi];
        let row_b = &b[at(r) + lo..at(r) + hi];
        {
            let (pa, rest) = s.pad.split_at_mut(padw);
            let (pb, rest) = rest.split_at_mut(padw);
            let (ps, pp) = rest.split_at_mut(padw);
            quantities(
                row_a,
                row_b,
                &mut pa[jlo..jhi],
                &mut pb[jlo..jhi],
                &mut ps[jlo..jhi],
                &mut pp[jlo..jhi],
            );
            for p in [pa, pb, ps, pp] {
                for j in (0..jlo).chain(jhi..padw) {
                    let col = x0 as isize - RADIUS as isize + j as isize;
                    p[j] = p[reflect101(col, w) + RADIUS - x0];
                }
            }
        }
        let slot = r % TAPS;
        for q in 0..4 {
            let base = (slot * 4 + q) * sw;
            horizontal(
                &s.pad[q * padw..(q + 1) * padw],
                &k,
                &mut s.ring[base..base + sw],
            );
        }
        if r >= RADIUS && rows.contains(&(r - RADIUS)) {
            let y = r - RADIUS;
            let sum = emit(y, s);
            sink(y, sum);
        }
    }
    for y in h.saturating_sub(RADIUS).max(rows.start)..rows.end {
        let sum = emit(y, s);
        sink(y, sum);
    }
}

/// Columns per vertical strip of the Gaussian SSIM (its partial sums are
/// kept per strip so that any row partition folds to the same total).
pub(crate) const SSIM_COLUMNS: usize = STRIP;

/// Frames narrower than [`NARROW_SSIM`] and taller than wide are computed
/// transposed by [`ssim_with`].
pub(crate) const NARROW_SSIM: usize = NARROW;

/// Runs `f` with this thread's SSIM working memory.
pub(crate) fn with_scratch_of_thread<R>(f: impl FnOnce(&mut SsimScratch) -> R) -> R {
    with_ssim_scratch(f)
}

multiversion! {
    /// The four per-pixel quantities of one row, exact in `f32` (integers
    /// below 2^24).
    fn quantities(a: &[u8], b: &[u8], qa: &mut [f32], qb: &mut [f32], qs: &mut [f32], qp: &mut [f32]) {
        let n = a.len();
        let (b, qa, qb, qs, qp) = (&b[..n], &mut qa[..n], &mut qb[..n], &mut qs[..n], &mut qp[..n]);
        for x in 0..n {
            let (va, vb) = (f32::from(a[x]), f32::from(b[x]));
            qa[x] = va;
            qb[x] = vb;
            qs[x] = va * va + vb * vb;
            qp[x] = va * vb;
        }
    }
}

multiversion! {
    /// Symmetric 11-tap filter along a row padded by 5 on each side.
    fn horizontal(p: &[f32], k: &[f32; RADIUS + 1], out: &mut [f32]) {
        let n = out.len();
        let s: [&[f32]; TAPS] = std::array::from_fn(|i| &p[i..i + n]);
        for x in 0..n {
            out[x] = k[5] * s[5][x]
                + k[4] * (s[4][x] + s[6][x])
                + k[3] * (s[3][x] + s[7][x])
                + k[2] * (s[2][x] + s[8][x])
                + k[1] * (s[1][x] + s[9][x])
                + k[0] * (s[0][x] + s[10][x]);
        }
    }
}

multiversion! {
    /// Symmetric 11-tap filter down a column of rows.
    fn vertical(r: &[&[f32]; TAPS], k: &[f32; RADIUS + 1], out: &mut [f32]) {
        let n = out.len();
        let s: [&[f32]; TAPS] = std::array::from_fn(|i| &r[i][..n]);
        for x in 0..n {
            out[x] = k[5] * s[5][x]
                + k[4] * (s[4][x] + s[6][x])
                + k[3] * (s[3][x] + s[7][x])
                + k[2] * (s[2][x] + s[8][x])
                + k[1] * (s[1][x] + s[9][x])
                + k[0] * (s[0][x] + s[10][x]);
        }
    }
}

multiversion! {
    /// The SSIM map of one row from the filtered quantities, with OpenCV's
    /// grouping of the `f32` operations:
    /// `(2μ₁μ₂ + C1)(2σ₁₂ + C2) / ((μ₁² + μ₂² + C1)(σ₁² + σ₂² + C2))`,
    /// clamped to `[-1, 1]`. The exact formula never leaves that range, but
    /// in `f32` the variances are differences of two nearly equal numbers
    /// (`E[a²] − μ²`, up to 65 025 with an ulp of 1/128): in a nearly flat
    /// window their rounding is of the order of `C2` itself, and the value
    /// comes out above 1 (1.00025 on a 1×1 frame of two different pixels).
    /// Clamping each value keeps the map's mean in range, since a rounded
    /// sum of values at most 1 is at most their count.
    fn ssim_row(mu1: &[f32], mu2: &[f32], sq: &[f32], prod: &[f32], out: &mut [f32]) {
        let n = out.len();
        let (mu1, mu2, sq, prod) = (&mu1[..n], &mu2[..n], &sq[..n], &prod[..n]);
        let (c1, c2) = (C1 as f32, C2 as f32);
        for x in 0..n {
            let m12 = mu1[x] * mu2[x];
            let m11 = mu1[x] * mu1[x] + mu2[x] * mu2[x];
            let num = (2.0 * m12 + c1) * (2.0 * (prod[x] - m12) + c2);
            let den = (m11 + c1) * ((sq[x] - m11) + c2);
            out[x] = (num / den).clamp(-1.0, 1.0);
        }
    }
}

multiversion! {
    /// Sum of a row in `f64`, 8 independent lanes (vectorizable, and exact
    /// enough: each lane adds at most a few hundred values below 1).
    fn sum_f64(v: &[f32]) -> f64 {
        let mut lanes = [0f64; 8];
        let mut chunks = v.chunks_exact(8);
        for c in &mut chunks {
            for i in 0..8 {
                lanes[i] += f64::from(c[i]);
            }
        }
        let mut t: f64 = chunks.remainder().iter().map(|&x| f64::from(x)).sum();
        for l in lanes {
            t += l;
        }
        t
    }
}

const BOX: usize = 7;
const BOX_R: usize = BOX / 2;

/// scikit-image's SSIM with its defaults for 8-bit data (`win_size = 7`,
/// `use_sample_covariance = True`, `data_range = 255`, mean over the map
/// cropped by 3 pixels). The window sums are exact integers (no border is
/// involved once the crop is applied), so only the final formula rounds.
fn box_ssim(a: &[u8], b: &[u8], h: usize, w: usize, s: &mut SsimScratch) -> f64 {
    // Column sums over the current 7-row window of x, y, x², y², xy (five
    // planes of `w`), then 7-wide window sums of those per output row.
    let ow = w - 2 * BOX_R;
    s.cols.clear();
    s.cols.resize(5 * w, 0);
    s.win.clear();
    s.win.resize(5 * ow, 0);
    let row = |r: usize| (&a[r * w..(r + 1) * w], &b[r * w..(r + 1) * w]);
    for r in 0..BOX {
        let (ra, rb) = row(r);
        box_columns(&mut s.cols, ra, rb, false);
    }
    let mut total = 0.0f64;
    for y in BOX_R..h - BOX_R {
        if y > BOX_R {
            let (ra, rb) = row(y + BOX_R);
            box_columns(&mut s.cols, ra, rb, false);
            let (ra, rb) = row(y - BOX_R - 1);
            box_columns(&mut s.cols, ra, rb, true);
        }
        for (c, o) in s.cols.chunks_exact(w).zip(s.win.chunks_exact_mut(ow)) {
            box_window(c, o);
        }
        total += box_ssim_row(&s.win, ow);
    }
    total / ((h - 2 * BOX_R) * ow) as f64
}

multiversion! {
    /// Adds (or with `sub`, removes) one row's x, y, x², y², xy to the five
    /// column-sum planes. Wrapping arithmetic: a removal always follows the
    /// matching addition, so the sums stay exact.
    fn box_columns(cols: &mut [u32], ra: &[u8], rb: &[u8], sub: bool) {
        let w = ra.len();
        let (c0, rest) = cols.split_at_mut(w);
        let (c1, rest) = rest.split_at_mut(w);
        let (c2, rest) = rest.split_at_mut(w);
        let (c3, c4) = rest.split_at_mut(w);
        let (rb, c4) = (&rb[..w], &mut c4[..w]);
        for x in 0..w {
            let (p, q) = (u32::from(ra[x]), u32::from(rb[x]));
            let v = [p, q, p * p, q * q, p * q];
            if sub {
                c0[x] = c0[x].wrapping_sub(v[0]);
                c1[x] = c1[x].wrapping_sub(v[1]);
                c2[x] = c2[x].wrapping_sub(v[2]);
                c3[x] = c3[x].wrapping_sub(v[3]);
                c4[x] = c4[x].wrapping_sub(v[4]);
            } else {
                c0[x] = c0[x].wrapping_add(v[0]);
                c1[x] = c1[x].wrapping_add(v[1]);
                c2[x] = c2[x].wrapping_add(v[2]);
                c3[x] = c3[x].wrapping_add(v[3]);
                c4[x] = c4[x].wrapping_add(v[4]);
            }
        }
    }
}

multiversion! {
    /// `out[i] = c[i] + … + c[i + 6]` (exact, at most 49·130050 < 2^32).
    fn box_window(c: &[u32], out: &mut [u32]) {
        let n = out.len();
        let s: [&[u32]; BOX] = std::array::from_fn(|d| &c[d..d + n]);
        for (i, o) in out.iter_mut().enumerate() {
            *o = s[0][i] + s[1][i] + s[2][i] + s[3][i] + s[4][i] + s[5][i] + s[6][i];
        }
    }
}

multiversion! {
    /// Sum over one output row of scikit-image's SSIM formula, in `f64`, from
    /// the five window-sum planes of `n` values each.
    fn box_ssim_row(win: &[u32], n: usize) -> f64 {
        let np = (BOX * BOX) as f64;
        let inv = 1.0 / np;
        let cov_norm = np / (np - 1.0);
        let q: [&[u32]; 5] = std::array::from_fn(|k| &win[k * n..(k + 1) * n]);
        let px = |i: usize| {
            let sx = f64::from(q[0][i]) * inv;
            let sy = f64::from(q[1][i]) * inv;
            let sxx = f64::from(q[2][i]) * inv;
            let syy = f64::from(q[3][i]) * inv;
            let sxy = f64::from(q[4][i]) * inv;
            let vx = cov_norm * (sxx - sx * sx);
            let vy = cov_norm * (syy - sy * sy);
            let vxy = cov_norm * (sxy - sx * sy);
            let num = (2.0 * sx * sy + C1) * (2.0 * vxy + C2);
            let den = (sx * sx + sy * sy + C1) * (vx + vy + C2);
            // In range, as the Gaussian map (see `ssim_row`): the variances
            // are differences of rounded means.
            (num / den).clamp(-1.0, 1.0)
        };
        let mut lanes = [0f64; 4];
        let full = n / 4 * 4;
        for i in (0..full).step_by(4) {
            for (l, lane) in lanes.iter_mut().enumerate() {
                *lane += px(i + l);
            }
        }
        for i in full..n {
            lanes[0] += px(i);
        }
        (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
    }
}

registry_op! {
    /// `scene_change` in the kernel registry: SSIM against the previous
    /// frame, at the default parameters.
    SceneChangeOp = "scene_change", for<'a> (&'a GrayImage, &'a GrayImage) => SceneChange;
    shape |(cur, prev)| two_frame_shape(cur, prev);
    layout |(cur, prev)| layout_of(cur.is_standard_layout() && prev.is_standard_layout());
    kernels {
        pure(|(cur, prev), out| set(out, scene_change(cur, prev))),
        #[cfg(feature = "opencv")]
        opencv(|(cur, prev), out| set(out, crate::ops::opencv::scene_change(cur, prev, &SceneParams::default()))),
    }
}

/// `vision.scene_change`: the op as graph files, the runner and Python
/// name it.
pub fn descriptor() -> OpDesc {
    OpDesc::builder::<SceneParams>(
        "vision.scene_change",
        "SSIM against the previous frame, and whether the scene cut",
    )
    .calls(&["scene_change"])
    .kernels(&declare::kernel_labels::<SceneChangeOp>())
    .input::<GrayImage>("gray")
    .input::<GrayImage>("previous")
    .param("threshold", "a cut when SSIM is below this; in [-1, 1]")
    .strip(|p: &SceneParams| Some(crate::ops::strip::SceneForm(*p)))
    .returns(|i, p| Ok(scene_change_with(i.arg(0)?, i.arg(1)?, p)?))
}

/// The parameters of `vision.ssim`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SsimParams {
    /// Which SSIM definition.
    pub variant: SsimVariant,
}

impl Params for SsimParams {}

/// `vision.ssim`: the op as graph files, the runner and Python name it.
pub fn ssim_descriptor() -> OpDesc {
    OpDesc::builder::<SsimParams>(
        "vision.ssim",
        "SSIM of two gray images of one size, in [-1, 1]",
    )
    .calls(&["ssim"])
    .input::<GrayImage>("a")
    .input::<GrayImage>("b")
    .param(
        "variant",
        "\"gaussian\" (OpenCV QualitySSIM) or \"sk_image\" (scikit-image's defaults)",
    )
    .compilable()
    .returns(|i, p: &SsimParams| {
        let (a, b) = (i.arg(0)?, i.arg(1)?);
        Ok(with_ssim_scratch(|s| ssim_with(a, b, p.variant, s))?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(seed: &mut u32) -> u8 {
        *seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (*seed >> 24) as u8
    }

    /// Direct 2-D Gaussian SSIM in f64 (reflect-101), the textbook formula.
    fn brute_gaussian(a: &GrayImage, b: &GrayImage) -> f64 {
        let (h, w) = a.dim();
        let k1: Vec<f64> = gaussian_half_kernel()
            .iter()
            .map(|&v| f64::from(v))
            .collect();
        let k = |d: isize| k1[RADIUS - d.unsigned_abs()];
        let mut total = 0.0;
        for y in 0..h {
            for x in 0..w {
                let (mut m1, mut m2, mut s11, mut s22, mut s12) = (0.0, 0.0, 0.0, 0.0, 0.0);
                for dy in -5isize..=5 {
                    for dx in -5isize..=5 {
                        let yy = reflect101(y as isize + dy, h);
                        let xx = reflect101(x as isize + dx, w);
                        let wgt = k(dy) * k(dx);
                        let (p, q) = (f64::from(a[[yy, xx]]), f64::from(b[[yy, xx]]));
                        m1 += wgt * p;
                        m2 += wgt * q;
                        s11 += wgt * p * p;
                        s22 += wgt * q * q;
                        s12 += wgt * p * q;
                    }
                }
                let (v1, v2, v12) = (s11 - m1 * m1, s22 - m2 * m2, s12 - m1 * m2);
                total += (2.0 * m1 * m2 + C1) * (2.0 * v12 + C2)
                    / ((m1 * m1 + m2 * m2 + C1) * (v1 + v2 + C2));
            }
        }
        total / (h * w) as f64
    }

    fn brute_box(a: &GrayImage, b: &GrayImage) -> f64 {
        let (h, w) = a.dim();
        let mut total = 0.0;
        let np = 49.0;
        for y in 3..h - 3 {
            for x in 3..w - 3 {
                let mut v = [0.0f64; 5];
                for yy in y - 3..=y + 3 {
                    for xx in x - 3..=x + 3 {
                        let (p, q) = (f64::from(a[[yy, xx]]), f64::from(b[[yy, xx]]));
                        v[0] += p;
                        v[1] += q;
                        v[2] += p * p;
                        v[3] += q * q;
                        v[4] += p * q;
                    }
                }
                let [ux, uy, uxx, uyy, uxy] = v.map(|t| t / np);
                let c = np / (np - 1.0);
                let (vx, vy, vxy) = (
                    c * (uxx - ux * ux),
                    c * (uyy - uy * uy),
                    c * (uxy - ux * uy),
                );
                total += (2.0 * ux * uy + C1) * (2.0 * vxy + C2)
                    / ((ux * ux + uy * uy + C1) * (vx + vy + C2));
            }
        }
        total / ((h - 6) * (w - 6)) as f64
    }

    #[test]
    fn gaussian_matches_direct_formula_including_tiny_sizes() {
        let mut seed = 99;
        for &(h, w) in &[
            (1, 1),
            (1, 5),
            (3, 2),
            (6, 6),
            (12, 11),
            (23, 31),
            (13, 261),
        ] {
            let a = GrayImage::from_shape_fn((h, w), |_| lcg(&mut seed));
            // b: a plus noise, so SSIM is neither 0 nor 1.
            let b = a.mapv(|v| v.saturating_add(lcg(&mut seed) / 8));
            let got = ssim(&a, &b).unwrap();
            let want = brute_gaussian(&a, &b);
            assert!((got - want).abs() < 2e-5, "{h}x{w}: {got} vs {want}");
        }
    }

    #[test]
    fn box_matches_direct_formula() {
        let mut seed = 5;
        for &(h, w) in &[(7, 7), (9, 15), (30, 20)] {
            let a = GrayImage::from_shape_fn((h, w), |_| lcg(&mut seed));
            let b = a.mapv(|v| v.saturating_sub(lcg(&mut seed) / 4));
            let mut scratch = SsimScratch::default();
            let got = ssim_with(&a, &b, SsimVariant::SkImage, &mut scratch).unwrap();
            let want = brute_box(&a, &b);
            assert!((got - want).abs() < 1e-12, "{h}x{w}: {got} vs {want}");
        }
        let small = GrayImage::zeros((6, 9));
        let mut scratch = SsimScratch::default();
        assert!(ssim_with(&small, &small, SsimVariant::SkImage, &mut scratch).is_err());
    }

    #[test]
    fn every_one_pixel_pair_stays_in_range() {
        // A 1×1 window is flat: only rounding makes its variances non-zero,
        // and before the clamp it pushed 248 of these 65 536 pairs above 1
        // (up to 1.00046).
        let mut scratch = SsimScratch::default();
        for p in 0..=255u8 {
            for q in 0..=255u8 {
                let (a, b) = (
                    GrayImage::from_elem((1, 1), p),
                    GrayImage::from_elem((1, 1), q),
                );
                let s = ssim_with(&a, &b, SsimVariant::Gaussian, &mut scratch).unwrap();
                assert!((-1.0..=1.0).contains(&s), "{p} vs {q}: {s}");
                if p == q {
                    assert_eq!(s, 1.0);
                }
            }
        }
    }

    #[test]
    fn identical_frames_and_first_frame() {
        let mut seed = 1;
        let a = GrayImage::from_shape_fn((20, 30), |_| lcg(&mut seed));
        let r = scene_change(&a, &a).unwrap();
        assert!((r.ssim.unwrap() - 1.0).abs() < 1e-6);
        assert!(!r.changed);
        let r = scene_change(&a, &GrayImage::zeros((0, 0))).unwrap();
        assert_eq!(
            r,
            SceneChange {
                changed: true,
                ssim: None
            }
        );
        let r = scene_change(&a, &GrayImage::zeros((30, 20))).unwrap();
        assert_eq!(
            r,
            SceneChange {
                changed: true,
                ssim: None
            }
        );
        assert!(scene_change(&GrayImage::zeros((0, 0)), &a).is_err());
        assert!(ssim(&a, &GrayImage::zeros((30, 20))).is_err());
    }

    /// On several threads the rows run in bands; the mean is the one-thread
    /// mean bit for bit, for band counts that do and do not divide the
    /// rows, frames wider than one strip, and the transposed narrow path.
    #[test]
    fn banded_mean_is_the_one_thread_mean_bit_for_bit() {
        let mut seed = 7u32;
        let pool = |n| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap()
        };
        for (h, w) in [
            (128, 40),
            (577, 300),
            (300, 2 * STRIP + 3),
            (1000, 9),
            (200, 1),
            (1080, 1920),
        ] {
            let a = GrayImage::from_shape_fn((h, w), |_| lcg(&mut seed));
            let b = GrayImage::from_shape_fn((h, w), |(y, x)| {
                a[[y, x]].wrapping_add(lcg(&mut seed) % 16)
            });
            let one = pool(1).install(|| ssim(&a, &b).unwrap());
            for threads in [2, 3, 5] {
                let many = pool(threads).install(|| ssim(&a, &b).unwrap());
                assert_eq!(one.to_bits(), many.to_bits(), "{w}x{h}, {threads} threads");
            }
        }
    }
}
