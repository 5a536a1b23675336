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

use super::border::check_nonempty;
use super::types::OpsError;

/// One output index of one axis: source indices and the fraction `f ∈ [0,1)`
/// of the second one, as OpenCV computes them (in `f32`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Tap {
    pub(crate) i0: usize,
    pub(crate) i1: usize,
    pub(crate) f: f32,
}

/// OpenCV's `INTER_LINEAR` coordinate table for a `src → dst` axis.
/// `clamp_frac` is OpenCV's horizontal rule (fraction forced to 0 outside the
/// source); vertically OpenCV keeps the fraction and only clamps the rows.
pub(crate) fn linear_taps(src: usize, dst: usize, clamp_frac: bool, taps: &mut Vec<Tap>) {
    taps.clear();
    let scale = 1.0 / (dst as f64 / src as f64);
    let last = src as isize - 1;
    for d in 0..dst {
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
        taps.push(Tap {
            i0: s.clamp(0, last) as usize,
            i1: (s + 1).clamp(0, last) as usize,
            f,
        });
    }
}

/// Whether OpenCV turns this `INTER_LINEAR` resize into its 2×2 `INTER_AREA`
/// fast path (exactly half size on both axes).
fn is_half(src_h: usize, src_w: usize, dst_h: usize, dst_w: usize) -> bool {
    dst_w * 2 == src_w && dst_h * 2 == src_h
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

/// Working memory of the resizers (reuse it across calls to avoid allocating).
#[derive(Debug, Default, Clone)]
pub struct ResizeScratch {
    xt: Vec<Tap>,
    yt: Vec<Tap>,
    xe: Vec<ExactTap>,
    ye: Vec<ExactTap>,
    hi: Vec<u32>,
    hf: Vec<f32>,
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

/// The `ExactTap` table of a `src → dst` axis. The position is computed in
/// `f64` as OpenCV does in its correctly rounded `softdouble`
/// (`(d + 0.5)·(1 / (dst/src)) − 0.5`, each operation rounded once), and the
/// weight rounded half-to-even to 8 fractional bits (`ufixedpoint16`).
pub(crate) fn exact_taps(src: usize, dst: usize, taps: &mut Vec<ExactTap>) {
    taps.clear();
    let scale = 1.0 / (dst as f64 / src as f64);
    for d in 0..dst {
        let pos = scale * (d as f64 + 0.5) - 0.5;
        let i = pos.floor();
        taps.push(if i >= 0.0 && src > 1 {
            let i = i as usize;
            if i < src - 1 {
                ExactTap::Mix(i, ((pos - i as f64) * 256.0).round_ties_even() as u32)
            } else {
                ExactTap::Copy(src - 1)
            }
        } else {
            ExactTap::Copy(0)
        });
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
/// [`OpsError::Empty`] for a zero side, [`OpsError::InvalidParam`] when a
/// buffer's length is not `rows × cols`.
pub fn resize_linear_exact_u8(
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
    exact_taps(src_w, dst_w, &mut s.xe);
    exact_taps(src_h, dst_h, &mut s.ye);
    s.hi.resize(2 * dst_w, 0);
    let (h0, h1) = s.hi.split_at_mut(dst_w);
    let hrow = |row: &[u8], out: &mut [u32], xt: &[ExactTap]| {
        for (o, t) in out.iter_mut().zip(xt) {
            *o = match *t {
                ExactTap::Copy(i) => u32::from(row[i]) << 8,
                ExactTap::Mix(i, w1) => u32::from(row[i]) * (256 - w1) + u32::from(row[i + 1]) * w1,
            };
        }
    };
    for (drow, t) in dst.chunks_exact_mut(dst_w).zip(&s.ye) {
        match *t {
            ExactTap::Copy(i) => {
                hrow(&src[i * src_w..(i + 1) * src_w], h0, &s.xe);
                for (d, &p) in drow.iter_mut().zip(h0.iter()) {
                    *d = ((p + 128) >> 8) as u8;
                }
            }
            ExactTap::Mix(i, w1) => {
                hrow(&src[i * src_w..(i + 1) * src_w], h0, &s.xe);
                hrow(&src[(i + 1) * src_w..(i + 2) * src_w], h1, &s.xe);
                let w0 = 256 - w1;
                for ((d, &p), &q) in drow.iter_mut().zip(h0.iter()).zip(h1.iter()) {
                    // At most 255·2^16: the shifted value fits a byte.
                    *d = ((p * w0 + q * w1 + (1 << 15)) >> 16) as u8;
                }
            }
        }
    }
    Ok(())
}

/// `cv::resize(src, dst, (dst_w, dst_h), INTER_LINEAR)` on `f32`, with
/// OpenCV's coordinate and weight rules and its operation order (identical
/// up to the last bit in the generic path).
pub fn resize_linear_f32(
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
            let (r0, r1) = (&src[2 * y * src_w..], &src[(2 * y + 1) * src_w..]);
            for (x, d) in row.iter_mut().enumerate() {
                *d = (r0[2 * x] + r0[2 * x + 1] + r1[2 * x] + r1[2 * x + 1]) * 0.25;
            }
        }
        return Ok(());
    }
    linear_taps(src_w, dst_w, true, &mut s.xt);
    linear_taps(src_h, dst_h, false, &mut s.yt);
    // Every source row resampled horizontally once (the source is the small
    // working image, so this is cheap), then each output row is one blend.
    s.hf.resize(src_h * dst_w, 0.0);
    for (y, out) in s.hf.chunks_exact_mut(dst_w).enumerate() {
        let row = &src[y * src_w..(y + 1) * src_w];
        for (o, t) in out.iter_mut().zip(&s.xt) {
            *o = row[t.i0] * (1.0 - t.f) + row[t.i1] * t.f;
        }
    }
    for (drow, t) in dst.chunks_exact_mut(dst_w).zip(&s.yt) {
        let r0 = &s.hf[t.i0 * dst_w..(t.i0 + 1) * dst_w];
        let r1 = &s.hf[t.i1 * dst_w..(t.i1 + 1) * dst_w];
        blend(drow, r0, r1, 1.0 - t.f, t.f);
    }
    Ok(())
}

super::simd::multiversion! {
    /// `d = a·wa + b·wb`, unfused (as OpenCV's baseline SIMD).
    fn blend(d: &mut [f32], a: &[f32], b: &[f32], wa: f32, wb: f32) {
        for ((o, &p), &q) in d.iter_mut().zip(a).zip(b) {
            *o = p * wa + q * wb;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taps_clamp_horizontally_only() {
        let mut t = Vec::new();
        linear_taps(4, 8, true, &mut t);
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
        linear_taps(4, 8, false, &mut t);
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
