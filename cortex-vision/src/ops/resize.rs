//! Bilinear resizing exactly as OpenCV computes it, for the spectral-residual
//! saliency: 8-bit down to the working size as `cv::resize(INTER_LINEAR_EXACT)`
//! (bit-exact), `f32` back up to the frame size as `cv::resize(INTER_LINEAR)`.
//!
//! Written here rather than taken from `fast_image_resize` or `imageproc`
//! because neither reproduces OpenCV's arithmetic, and the spectral residual
//! amplifies small input differences (a one-level difference in the 64×64
//! image moves the final map by up to 2e-1 on small frames): OpenCV maps
//! output pixel `d` to source position `(d + 0.5)·scale − 0.5`, rounds the
//! weights to fixed point (8-bit path) or `f32`, clamps positions
//! horizontally but only rows vertically (`f32` path). Those details are
//! reproduced here and pinned by tests against OpenCV.

use super::border::{check_frame, check_nonempty, prepare_out};
use super::scratch::{vec_bytes, with_scratch, Scratch, Slot};
use super::types::{GrayImage, OpsError, ScoreMap};
use cortex_core::dynamic::{OpDesc, Params};

thread_local! {
    /// This thread's working rows of the resizes called as nodes.
    pub(crate) static SCRATCH: Slot<ResizeScratch> = const { Slot::new(None) };
}

/// One output index of one axis: source indices and the fraction `f ∈ [0,1)`
/// of the second one, as OpenCV computes them (in `f32`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Tap {
    pub(crate) i0: usize,
    pub(crate) i1: usize,
    pub(crate) f: f32,
}

/// Output columns per strip of the resizers: their working rows hold one
/// strip (a few tens of KB), so working memory does not grow with the
/// destination, however wide.
const STRIP: usize = 4096;

/// OpenCV's `INTER_LINEAR` coordinate of output index `d` of a `src → dst`
/// axis. `clamp_frac` is OpenCV's horizontal rule (fraction forced to 0
/// outside the source); vertically OpenCV keeps the fraction and only clamps
/// the rows.
pub(crate) fn linear_tap(d: usize, src: usize, dst: usize, clamp_frac: bool) -> Tap {
    let scale = 1.0 / (dst as f64 / src as f64);
    let last = src as isize - 1;
    let pos = ((d as f64 + 0.5) * scale - 0.5) as f32;
    let mut s = pos.floor() as isize;
    let mut f = pos - s as f32;
    if clamp_frac {
        if s < 0 {
            f = 0.0;
            s = 0;
        }
        if s >= last {
            f = 0.0;
            s = last;
        }
    }
    Tap {
        i0: s.clamp(0, last) as usize,
        i1: (s + 1).clamp(0, last) as usize,
        f,
    }
}

/// The [`linear_tap`]s of output indices `range` of a `src → dst` axis.
pub(crate) fn linear_taps(
    src: usize,
    dst: usize,
    range: std::ops::Range<usize>,
    clamp_frac: bool,
    taps: &mut Vec<Tap>,
) {
    taps.clear();
    taps.extend(range.map(|d| linear_tap(d, src, dst, clamp_frac)));
}

/// Whether OpenCV turns this `INTER_LINEAR` resize into its 2×2 `INTER_AREA`
/// fast path (exactly half size on both axes).
pub(crate) fn is_half(src_h: usize, src_w: usize, dst_h: usize, dst_w: usize) -> bool {
    dst_w.checked_mul(2) == Some(src_w) && dst_h.checked_mul(2) == Some(src_h)
}

/// Rejects empty sizes and buffers whose length is not `rows × cols`.
fn check_buffers(
    src_len: usize,
    (sh, sw): (usize, usize),
    dst_len: usize,
    (dh, dw): (usize, usize),
) -> Result<(), OpsError> {
    check_nonempty("src", sh, sw)?;
    check_nonempty("dst", dh, dw)?;
    for (what, len, h, w) in [("src", src_len, sh, sw), ("dst", dst_len, dh, dw)] {
        if h.checked_mul(w) != Some(len) {
            return Err(OpsError::InvalidParam {
                name: what,
                reason: format!("buffer of {len} values is not {w}x{h}"),
            });
        }
    }
    Ok(())
}

/// Working memory of the resizers (reuse it across calls to avoid
/// allocating). Its size depends on neither image: one strip of at most
/// 4096 output columns.
#[derive(Debug, Default, Clone)]
pub struct ResizeScratch {
    pub(crate) xt: Vec<Tap>,
    pub(crate) xe: Vec<ExactTap>,
    pub(crate) hi: Vec<u32>,
    pub(crate) hf: Vec<f32>,
}

impl Scratch for ResizeScratch {
    fn heap_bytes(&self) -> usize {
        vec_bytes(&self.xt) + vec_bytes(&self.xe) + vec_bytes(&self.hi) + vec_bytes(&self.hf)
    }
}

/// One axis of OpenCV's bit-exact linear resize (`interpolationLinear` of
/// `resize_bitExact`): for each destination index either a fixed source value
/// (left of the source: index 0; right of it: the last index) or a source
/// index and the 8-bit fixed-point weight of the next one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExactTap {
    /// Take `src[i]` as is.
    Copy(usize),
    /// `src[i]·(256 − w1) + src[i+1]·w1`, in 1/256ths.
    Mix(usize, u32),
}

/// The `ExactTap` of output index `d` of a `src → dst` axis. The position is
/// computed in `f64` as OpenCV does in its correctly rounded `softdouble`
/// (`(d + 0.5)·(1 / (dst/src)) − 0.5`, each operation rounded once), and the
/// weight rounded half-to-even to 8 fractional bits (`ufixedpoint16`).
pub(crate) fn exact_tap(d: usize, src: usize, dst: usize) -> ExactTap {
    let scale = 1.0 / (dst as f64 / src as f64);
    let pos = scale * (d as f64 + 0.5) - 0.5;
    let i = pos.floor();
    if i >= 0.0 && src > 1 {
        let i = i as usize;
        if i < src - 1 {
            ExactTap::Mix(i, ((pos - i as f64) * 256.0).round_ties_even() as u32)
        } else {
            ExactTap::Copy(src - 1)
        }
    } else {
        ExactTap::Copy(0)
    }
}

/// `cv::resize(src, dst, (dst_w, dst_h), INTER_LINEAR_EXACT)` on 8-bit gray,
/// bit-exact — what `StaticSaliencySpectralResidual` uses to shrink the frame
/// (its source says `INTER_LINEAR`; OpenCV 4.6 ships `INTER_LINEAR_EXACT`,
/// which a test pins). Integer arithmetic throughout: each needed source row
/// is resampled horizontally to 8 fractional bits, two rows are blended with
/// 8-bit weights and rounded from 16 fractional bits.
///
/// # Errors
/// [`OpsError::Empty`] for a zero side, [`OpsError::TooLarge`] for a size
/// over the frame limits, [`OpsError::InvalidParam`] when a buffer's length
/// is not `rows × cols`.
pub fn resize_linear_exact_u8(
    src: &[u8],
    src_size: (usize, usize),
    dst: &mut [u8],
    dst_size: (usize, usize),
    s: &mut ResizeScratch,
) -> Result<(), OpsError> {
    check_frame("src", src_size.0, src_size.1)?;
    check_frame("dst", dst_size.0, dst_size.1)?;
    resize_linear_exact_u8_within(src, src_size, dst, dst_size, s)
}

/// [`resize_linear_exact_u8`] without the frame-limit check, for working images whose
/// size the caller has bounded (the spectral residual's thumbnail).
pub(crate) fn resize_linear_exact_u8_within(
    src: &[u8],
    (src_h, src_w): (usize, usize),
    dst: &mut [u8],
    (dst_h, dst_w): (usize, usize),
    s: &mut ResizeScratch,
) -> Result<(), OpsError> {
    check_buffers(src.len(), (src_h, src_w), dst.len(), (dst_h, dst_w))?;
    if (src_h, src_w) == (dst_h, dst_w) {
        dst.copy_from_slice(src);
        return Ok(());
    }
    let mut x0 = 0;
    while x0 < dst_w {
        let x1 = dst_w.min(x0 + STRIP);
        let sw = x1 - x0;
        s.xe.clear();
        s.xe.extend((x0..x1).map(|d| exact_tap(d, src_w, dst_w)));
        s.hi.resize(2 * sw, 0);
        let (h0, h1) = s.hi.split_at_mut(sw);
        for (y, drow) in dst.chunks_exact_mut(dst_w).enumerate() {
            let row = |i: usize| &src[i * src_w..(i + 1) * src_w];
            exact_row(
                exact_tap(y, src_h, dst_h),
                row,
                &s.xe,
                h0,
                h1,
                &mut drow[x0..x1],
            );
        }
        x0 = x1;
    }
    Ok(())
}

/// Source row `row` resampled horizontally through `xt`, in 1/256ths.
fn exact_hrow(row: &[u8], out: &mut [u32], xt: &[ExactTap]) {
    for (o, t) in out.iter_mut().zip(xt) {
        *o = match *t {
            ExactTap::Copy(i) => u32::from(row[i]) << 8,
            ExactTap::Mix(i, w1) => u32::from(row[i]) * (256 - w1) + u32::from(row[i + 1]) * w1,
        };
    }
}

/// One output row of [`resize_linear_exact_u8`]: the source rows vertical tap
/// `tap` names (`row(i)` is source row `i`), each resampled horizontally
/// through `xt` into `h0`/`h1`, then blended and rounded into `drow`. What the
/// fused group's strip form computes for each of its rows, too.
pub(crate) fn exact_row<'a>(
    tap: ExactTap,
    row: impl Fn(usize) -> &'a [u8],
    xt: &[ExactTap],
    h0: &mut [u32],
    h1: &mut [u32],
    drow: &mut [u8],
) {
    match tap {
        ExactTap::Copy(i) => {
            exact_hrow(row(i), h0, xt);
            for (d, &p) in drow.iter_mut().zip(h0.iter()) {
                *d = ((p + 128) >> 8) as u8;
            }
        }
        ExactTap::Mix(i, w1) => {
            exact_hrow(row(i), h0, xt);
            exact_hrow(row(i + 1), h1, xt);
            let w0 = 256 - w1;
            for ((d, &p), &q) in drow.iter_mut().zip(h0.iter()).zip(h1.iter()) {
                // At most 255·2^16: the shifted value fits a byte.
                *d = ((p * w0 + q * w1 + (1 << 15)) >> 16) as u8;
            }
        }
    }
}

/// `cv::resize(src, dst, (dst_w, dst_h), INTER_LINEAR)` on `f32`, with
/// OpenCV's coordinate and weight rules and its operation order (identical
/// up to the last bit in the generic path).
///
/// # Errors
/// As [`resize_linear_exact_u8`].
pub fn resize_linear_f32(
    src: &[f32],
    src_size: (usize, usize),
    dst: &mut [f32],
    dst_size: (usize, usize),
    s: &mut ResizeScratch,
) -> Result<(), OpsError> {
    check_frame("src", src_size.0, src_size.1)?;
    check_frame("dst", dst_size.0, dst_size.1)?;
    resize_linear_f32_within(src, src_size, dst, dst_size, s)
}

/// [`resize_linear_f32`] without the frame-limit check, for working images whose
/// size the caller has bounded (the spectral residual's thumbnail).
pub(crate) fn resize_linear_f32_within(
    src: &[f32],
    (src_h, src_w): (usize, usize),
    dst: &mut [f32],
    (dst_h, dst_w): (usize, usize),
    s: &mut ResizeScratch,
) -> Result<(), OpsError> {
    check_buffers(src.len(), (src_h, src_w), dst.len(), (dst_h, dst_w))?;
    if (src_h, src_w) == (dst_h, dst_w) {
        dst.copy_from_slice(src);
        return Ok(());
    }
    if is_half(src_h, src_w, dst_h, dst_w) {
        for (y, row) in dst.chunks_exact_mut(dst_w).enumerate() {
            let r0 = &src[2 * y * src_w..(2 * y + 1) * src_w];
            let r1 = &src[(2 * y + 1) * src_w..(2 * y + 2) * src_w];
            half_row(r0, r1, row);
        }
        return Ok(());
    }
    // Strip by strip of output columns; within a strip, each source row is
    // resampled horizontally once when the output rows first need it (rows
    // are needed in increasing order) and kept while they do.
    let mut x0 = 0;
    while x0 < dst_w {
        let x1 = dst_w.min(x0 + STRIP);
        let sw = x1 - x0;
        linear_taps(src_w, dst_w, x0..x1, true, &mut s.xt);
        s.hf.resize(2 * sw, 0.0);
        let (mut a, mut b) = s.hf.split_at_mut(sw);
        // Source rows held by `a` and `b`.
        let (mut ra, mut rb) = (usize::MAX, usize::MAX);
        let hrow = |y: usize, out: &mut [f32], xt: &[Tap]| {
            linear_hrow(&src[y * src_w..(y + 1) * src_w], out, xt);
        };
        for (y, drow) in dst.chunks_exact_mut(dst_w).enumerate() {
            let t = linear_tap(y, src_h, dst_h, false);
            if ra != t.i0 {
                if rb == t.i0 {
                    std::mem::swap(&mut a, &mut b);
                    std::mem::swap(&mut ra, &mut rb);
                } else {
                    hrow(t.i0, a, &s.xt);
                    ra = t.i0;
                }
            }
            if rb != t.i1 {
                hrow(t.i1, b, &s.xt);
                rb = t.i1;
            }
            blend(&mut drow[x0..x1], a, b, 1.0 - t.f, t.f);
        }
        x0 = x1;
    }
    Ok(())
}

/// Output row `y` of an exactly-half-size [`resize_linear_f32`] from source
/// rows `2y` and `2y + 1`: OpenCV's 2×2 `INTER_AREA` mean.
pub(crate) fn half_row(r0: &[f32], r1: &[f32], row: &mut [f32]) {
    for (x, d) in row.iter_mut().enumerate() {
        *d = (r0[2 * x] + r0[2 * x + 1] + r1[2 * x] + r1[2 * x + 1]) * 0.25;
    }
}

/// Source row `row` resampled horizontally through `xt` (the first pass of
/// [`resize_linear_f32`]).
pub(crate) fn linear_hrow(row: &[f32], out: &mut [f32], xt: &[Tap]) {
    for (o, t) in out.iter_mut().zip(xt) {
        *o = row[t.i0] * (1.0 - t.f) + row[t.i1] * t.f;
    }
}

super::simd::multiversion! {
    /// `d = a·wa + b·wb`, unfused (as OpenCV's baseline SIMD).
    pub(crate) fn blend(d: &mut [f32], a: &[f32], b: &[f32], wa: f32, wb: f32) {
        for ((o, &p), &q) in d.iter_mut().zip(a).zip(b) {
            *o = p * wa + q * wb;
        }
    }
}

/// `gray` resized to `height × width` into `out` (reshaped as needed) as
/// `cv::resize(INTER_LINEAR_EXACT)`; the whole-frame form of
/// [`crate::ops::strip::ResizeStrip`].
///
/// # Errors
/// [`OpsError::Empty`] for a zero side, [`OpsError::TooLarge`] over the frame
/// limits; `out` is untouched then.
pub fn resize_gray_into(
    gray: &GrayImage,
    (height, width): (usize, usize),
    out: &mut GrayImage,
) -> Result<(), OpsError> {
    check_frame("resize output", height, width)?;
    let src = gray.as_standard_layout();
    let data = src.as_slice().unwrap_or_default();
    let dims = src.dim();
    check_frame("resize input", dims.0, dims.1)?;
    let dst = prepare_out(out, height, width);
    with_scratch(&SCRATCH, |s| {
        resize_linear_exact_u8(data, dims, dst, (height, width), s)
    })
}

/// `map` resized to `height × width` into `out` (reshaped as needed) as
/// `cv::resize(INTER_LINEAR)`; the whole-frame form of
/// [`crate::ops::strip::ResizeMapStrip`].
///
/// # Errors
/// As [`resize_gray_into`].
pub fn resize_map_into(
    map: &ScoreMap,
    (height, width): (usize, usize),
    out: &mut ScoreMap,
) -> Result<(), OpsError> {
    check_frame("resize output", height, width)?;
    let src = map.as_standard_layout();
    let data = src.as_slice().unwrap_or_default();
    let dims = src.dim();
    check_frame("resize input", dims.0, dims.1)?;
    let dst = prepare_out(out, height, width);
    with_scratch(&SCRATCH, |s| {
        resize_linear_f32(data, dims, dst, (height, width), s)
    })
}

/// OpenCV's `computeResizeAreaTab`: for each destination cell of a
/// `ssize → dsize` area downscale (`INTER_AREA`), the source indices it
/// covers and their weights (coverage / cell width), including OpenCV's rule
/// that ignores slivers under 1e-3 of a pixel. Computed in `f64` (OpenCV
/// stores the weights as `f32`; the difference is below 1e-7).
pub(crate) fn area_tab(ssize: usize, dsize: usize, tab: &mut Vec<(usize, usize, f64)>) {
    tab.clear();
    let scale = 1.0 / (dsize as f64 / ssize as f64);
    for d in 0..dsize {
        let f1 = d as f64 * scale;
        let f2 = f1 + scale;
        let cell = scale.min(ssize as f64 - f1);
        let s2 = (f2.floor() as usize).min(ssize - 1);
        let s1 = (f1.ceil() as usize).min(s2);
        if s1 as f64 - f1 > 1e-3 && s1 > 0 {
            tab.push((d, s1 - 1, (s1 as f64 - f1) / cell));
        }
        for sidx in s1..s2 {
            tab.push((d, sidx, 1.0 / cell));
        }
        if f2 - s2 as f64 > 1e-3 {
            tab.push((d, s2, (f2 - s2 as f64).min(1.0).min(cell) / cell));
        }
    }
}

/// Working memory of the area downscales ([`area_exact`], [`area_general`]).
#[derive(Debug, Default, Clone)]
pub(crate) struct AreaScratch {
    /// Per-column integer sums over a band of rows (exact path).
    col_u32: Vec<u32>,
    /// Per-cell sums of one cell row (exact path).
    cell_u64: Vec<u64>,
    /// Per-column weighted sums over a band of rows (general path).
    col_f64: Vec<f64>,
    /// Per-cell sums of one cell row (general path).
    cell_f64: Vec<f64>,
    /// `(cell, source index, weight)` tables of the general path.
    xtab: Vec<(usize, usize, f64)>,
    ytab: Vec<(usize, usize, f64)>,
}

impl AreaScratch {
    /// Heap bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        vec_bytes(&self.col_u32)
            + vec_bytes(&self.cell_u64)
            + vec_bytes(&self.col_f64)
            + vec_bytes(&self.cell_f64)
            + vec_bytes(&self.xtab)
            + vec_bytes(&self.ytab)
    }
}

/// Source rows summed in `u32` per column before they are carried into
/// `u64`: `add_row` adds values of at most 255, so this many rows cannot
/// overflow a `u32`.
const U32_ROWS: usize = (u32::MAX / 255) as usize;

/// `INTER_AREA` downscale of an `h × w` image to `gh × gw` cells that tile it
/// exactly (`h % gh == 0`, `w % gw == 0`), in exact integers: one division
/// per cell. `add_row(y, acc)` adds row `y`'s values (each at most 255) to
/// `acc` (`w` columns); `cells[i]` becomes the cell's mean divided by
/// `value_scale`.
pub(crate) fn area_exact(
    (h, w): (usize, usize),
    (gh, gw): (usize, usize),
    value_scale: f64,
    mut add_row: impl FnMut(usize, &mut [u32]),
    cells: &mut [f32],
    s: &mut AreaScratch,
) {
    let (ch, cw) = (h / gh, w / gw);
    let scale = 1.0 / ((cw * ch) as f64 * value_scale);
    s.col_u32.clear();
    s.col_u32.resize(w, 0);
    s.cell_u64.clear();
    s.cell_u64.resize(gw, 0);
    for (band, out) in cells.chunks_exact_mut(gw).enumerate() {
        s.cell_u64.fill(0);
        let mut y = band * ch;
        let end = y + ch;
        while y < end {
            let stop = end.min(y + U32_ROWS);
            s.col_u32.fill(0);
            for row in y..stop {
                add_row(row, &mut s.col_u32);
            }
            for (acc, cols) in s.cell_u64.iter_mut().zip(s.col_u32.chunks_exact(cw)) {
                *acc += cols.iter().map(|&v| u64::from(v)).sum::<u64>();
            }
            y = stop;
        }
        for (c, &sum) in out.iter_mut().zip(&s.cell_u64) {
            *c = (sum as f64 * scale) as f32;
        }
    }
}

/// `INTER_AREA` downscale of an `h × w` image to `gh × gw` cells of any
/// size: exact area weights ([`area_tab`]), `f64` accumulation.
/// `add_row(y, weight, acc)` adds `weight ×` row `y` to `acc` (`w` columns);
/// `cells[i]` becomes the cell's weighted mean divided by `value_scale`.
pub(crate) fn area_general(
    (h, w): (usize, usize),
    (gh, gw): (usize, usize),
    value_scale: f64,
    mut add_row: impl FnMut(usize, f64, &mut [f64]),
    cells: &mut [f32],
    s: &mut AreaScratch,
) {
    area_tab(w, gw, &mut s.xtab);
    area_tab(h, gh, &mut s.ytab);
    s.col_f64.clear();
    s.col_f64.resize(w, 0.0);
    s.cell_f64.clear();
    s.cell_f64.resize(gw, 0.0);
    let mut i = 0;
    while i < s.ytab.len() {
        let dy = s.ytab[i].0;
        // Weighted column sums over the rows of cell row `dy` ...
        s.col_f64.fill(0.0);
        while i < s.ytab.len() && s.ytab[i].0 == dy {
            let (_, sy, wy) = s.ytab[i];
            add_row(sy, wy, &mut s.col_f64);
            i += 1;
        }
        // ... then weighted sums of those columns per cell.
        s.cell_f64.fill(0.0);
        for &(dx, sx, wx) in &s.xtab {
            s.cell_f64[dx] += wx * s.col_f64[sx];
        }
        for (c, &v) in cells[dy * gw..(dy + 1) * gw].iter_mut().zip(&s.cell_f64) {
            *c = (v / value_scale) as f32;
        }
    }
}

/// Nearest-neighbour resize of `gh × gw` values to `h × w` (no working
/// memory), with OpenCV's `INTER_NEAREST` index rule
/// `min(floor(x · (1 / (w / gw))), gw − 1)` evaluated in the same `f64`
/// operations so that the cell borders fall on the same pixels.
pub(crate) fn resize_nearest_f32(
    cells: &[f32],
    (gh, gw): (usize, usize),
    (h, w): (usize, usize),
    out: &mut [f32],
) {
    let ifx = 1.0 / (w as f64 / gw as f64);
    let ify = 1.0 / (h as f64 / gh as f64);
    let mut last_cy = usize::MAX;
    for y in 0..h {
        let cy = ((y as f64 * ify).floor() as usize).min(gh - 1);
        let (done, rest) = out.split_at_mut(y * w);
        let row = &mut rest[..w];
        if cy == last_cy && y > 0 {
            // Same cell row as the row above: copy it.
            row.copy_from_slice(&done[(y - 1) * w..]);
            continue;
        }
        last_cy = cy;
        let src = &cells[cy * gw..(cy + 1) * gw];
        for (x, v) in row.iter_mut().enumerate() {
            let cx = ((x as f64 * ifx).floor() as usize).min(gw - 1);
            *v = src[cx];
        }
    }
}

/// The parameters of `vision.resize_gray` and `vision.resize_map`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ResizeParams {
    /// Output width, pixels.
    pub width: usize,
    /// Output height, pixels.
    pub height: usize,
}

impl Default for ResizeParams {
    fn default() -> Self {
        ResizeParams {
            width: 320,
            height: 240,
        }
    }
}

impl Params for ResizeParams {
    fn check(&self) -> Result<(), String> {
        check_frame("resize output", self.height, self.width).map_err(|e| e.to_string())
    }
}

/// `vision.resize_gray`: the op as graph files, the runner and Python
/// name it.
pub fn gray_descriptor() -> OpDesc {
    OpDesc::builder::<ResizeParams>(
        "vision.resize_gray",
        "a gray image resized bilinearly (OpenCV INTER_LINEAR_EXACT)",
    )
    .calls(&["resize_gray_into"])
    .input::<GrayImage>("gray")
    .param("width", "output width, pixels; within the frame limits")
    .param("height", "output height, pixels; within the frame limits")
    .fills(|i, p: &ResizeParams, out: &mut GrayImage| {
        Ok(resize_gray_into(i.arg(0)?, (p.height, p.width), out)?)
    })
}

/// `vision.resize_map`: the op as graph files, the runner and Python name
/// it.
pub fn map_descriptor() -> OpDesc {
    OpDesc::builder::<ResizeParams>(
        "vision.resize_map",
        "a score map resized bilinearly (OpenCV INTER_LINEAR)",
    )
    .calls(&["resize_map_into"])
    .input::<ScoreMap>("map")
    .param("width", "output width, pixels; within the frame limits")
    .param("height", "output height, pixels; within the frame limits")
    .fills(|i, p: &ResizeParams, out: &mut ScoreMap| {
        Ok(resize_map_into(i.arg(0)?, (p.height, p.width), out)?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taps_clamp_horizontally_only() {
        let mut t = Vec::new();
        linear_taps(4, 8, 0..8, true, &mut t);
        assert_eq!(
            t[0],
            Tap {
                i0: 0,
                i1: 1,
                f: 0.0
            }
        );
        assert_eq!(
            t[7],
            Tap {
                i0: 3,
                i1: 3,
                f: 0.0
            }
        );
        linear_taps(4, 8, 0..8, false, &mut t);
        assert_eq!(
            t[0],
            Tap {
                i0: 0,
                i1: 0,
                f: 0.75
            }
        );
        assert_eq!(t[7].i0, 3);
    }

    #[test]
    fn constant_stays_constant() {
        let mut s = ResizeScratch::default();
        let src = vec![77u8; 30 * 50];
        let mut dst = vec![0u8; 64 * 64];
        resize_linear_exact_u8(&src, (30, 50), &mut dst, (64, 64), &mut s).unwrap();
        assert!(dst.iter().all(|&v| v == 77));
        // Exactly half size: the mean of each 2x2 block, rounded.
        let src = [0u8, 1, 2, 3, 10, 11, 12, 13];
        let mut dst = [0u8; 2];
        resize_linear_exact_u8(&src, (2, 4), &mut dst, (1, 2), &mut s).unwrap();
        assert_eq!(dst, [6, 8]);
        let srcf = vec![0.5f32; 64 * 64];
        let mut dstf = vec![0f32; 31 * 97];
        resize_linear_f32(&srcf, (64, 64), &mut dstf, (31, 97), &mut s).unwrap();
        assert!(resize_linear_f32(&srcf, (64, 63), &mut dstf, (31, 97), &mut s).is_err());
        assert!(dstf.iter().all(|&v| (v - 0.5).abs() < 1e-6));
    }
}
