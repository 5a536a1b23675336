//! Bilinear resizing exactly as OpenCV's `cv::resize(INTER_LINEAR)` computes
//! it, for the spectral-residual saliency (8-bit down to the working size,
//! `f32` back up to the frame size).
//!
//! Written here rather than taken from `fast_image_resize` or `imageproc`
//! because neither reproduces OpenCV's arithmetic, and the spectral residual
//! amplifies small input differences: OpenCV maps output pixel `d` to source
//! position `(d + 0.5)·scale − 0.5` in `f32`, clamps it horizontally but not
//! vertically (rows are clamped instead), rounds the 8-bit weights to 11-bit
//! fixed point, and combines two rows with a SIMD formula that truncates
//! differently from its own scalar path. Those details are reproduced here,
//! so the 8-bit result is bit-identical (tested against OpenCV).

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

/// OpenCV's `saturate_cast<short>(w · 2048)` of a linear weight.
fn fixed(w: f32) -> i32 {
    (w * 2048.0).round_ties_even() as i32
}

/// Whether OpenCV turns this `INTER_LINEAR` resize into its 2×2 `INTER_AREA`
/// fast path (exactly half size on both axes).
fn is_half(src_h: usize, src_w: usize, dst_h: usize, dst_w: usize) -> bool {
    dst_w * 2 == src_w && dst_h * 2 == src_h
}

/// Rejects empty sizes and buffers whose length is not `rows × cols`.
fn check_buffers(src_len: usize, (sh, sw): (usize, usize), dst_len: usize, (dh, dw): (usize, usize)) -> Result<(), OpsError> {
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
    hi: Vec<i32>,
    hf: Vec<f32>,
}

/// `cv::resize(src, dst, (dst_w, dst_h), INTER_LINEAR)` on 8-bit gray,
/// bit-exact. `src` is `src_h × src_w` row-major; `dst` gets `dst_h × dst_w`.
pub fn resize_linear_u8(
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
    if is_half(src_h, src_w, dst_h, dst_w) {
        for (y, row) in dst.chunks_exact_mut(dst_w).enumerate() {
            let (r0, r1) = (&src[2 * y * src_w..], &src[(2 * y + 1) * src_w..]);
            for (x, d) in row.iter_mut().enumerate() {
                let sum = u32::from(r0[2 * x]) + u32::from(r0[2 * x + 1]) + u32::from(r1[2 * x]) + u32::from(r1[2 * x + 1]);
                *d = ((sum + 2) >> 2) as u8;
            }
        }
        return Ok(());
    }
    linear_taps(src_w, dst_w, true, &mut s.xt);
    linear_taps(src_h, dst_h, false, &mut s.yt);
    s.hi.resize(2 * dst_w, 0);
    let (h0, h1) = s.hi.split_at_mut(dst_w);
    let hrow = |row: &[u8], out: &mut [i32], xt: &[Tap]| {
        for (o, t) in out.iter_mut().zip(xt) {
            let a1 = fixed(t.f);
            let a0 = fixed(1.0 - t.f);
            *o = i32::from(row[t.i0]) * a0 + i32::from(row[t.i1]) * a1;
        }
    };
    for (drow, t) in dst.chunks_exact_mut(dst_w).zip(&s.yt) {
        hrow(&src[t.i0 * src_w..(t.i0 + 1) * src_w], h0, &s.xt);
        hrow(&src[t.i1 * src_w..(t.i1 + 1) * src_w], h1, &s.xt);
        let b0 = fixed(1.0 - t.f);
        let b1 = fixed(t.f);
        for ((d, &p), &q) in drow.iter_mut().zip(h0.iter()).zip(h1.iter()) {
            // OpenCV's SIMD row blend (`VResizeLinearVec_32s8u`): each
            // horizontal sum is shifted down 4 bits, multiplied by its 16-bit
            // weight keeping the high half, and the two are added and rounded
            // down 2 more bits. Output widths that are a multiple of the SIMD
            // width (the 64-pixel working size) go entirely through it.
            let v = (((p >> 4) * b0) >> 16) + (((q >> 4) * b1) >> 16);
            *d = ((v + 2) >> 2).clamp(0, 255) as u8;
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
        assert_eq!(t[0], Tap { i0: 0, i1: 1, f: 0.0 });
        assert_eq!(t[7], Tap { i0: 3, i1: 3, f: 0.0 });
        linear_taps(4, 8, false, &mut t);
        assert_eq!(t[0], Tap { i0: 0, i1: 0, f: 0.75 });
        assert_eq!(t[7].i0, 3);
    }

    #[test]
    fn constant_stays_constant() {
        let mut s = ResizeScratch::default();
        let src = vec![77u8; 30 * 50];
        let mut dst = vec![0u8; 64 * 64];
        resize_linear_u8(&src, (30, 50), &mut dst, (64, 64), &mut s).unwrap();
        assert!(dst.iter().all(|&v| v == 77 || v == 76));
        let srcf = vec![0.5f32; 64 * 64];
        let mut dstf = vec![0f32; 31 * 97];
        resize_linear_f32(&srcf, (64, 64), &mut dstf, (31, 97), &mut s).unwrap();
        assert!(resize_linear_f32(&srcf, (64, 63), &mut dstf, (31, 97), &mut s).is_err());
        assert!(dstf.iter().all(|&v| (v - 0.5).abs() < 1e-6));
    }
}
