//! `to_gray`: RGB → gray with OpenCV's fixed-point BT.601 weights.

use super::border::{check_frame, prepare_out};
use super::simd::multiversion;
use super::types::{GrayImage, OpsError, RgbFrame};
use crate::registry::declare::{self, registry_op};
use cortex_core::dynamic::{NoParams, OpDesc};

// `cv::cvtColor(COLOR_RGB2GRAY)` on 8-bit data: 0.299 R + 0.587 G + 0.114 B in
// 15-bit fixed point (OpenCV's `RY15`, `GY15`, `BY15`, `gray_shift`; not the
// 14-bit `yuv_shift` weights of its YUV conversions), rounded by adding half
// before the shift. Using the same integers makes the result bit-exact with
// OpenCV rather than merely within ±1.
const R2Y: u32 = 9798;
const G2Y: u32 = 19235;
const B2Y: u32 = 3735;
const SHIFT: u32 = 15;
const HALF: u32 = 1 << (SHIFT - 1);

/// Converts an RGB frame to 8-bit gray (BT.601 luma, as OpenCV's `cvtColor`).
///
/// # Errors
/// [`OpsError::Empty`] for a frame without pixels, [`OpsError::TooLarge`] for
/// one over the frame limits, [`OpsError::Channels`] when the last axis is
/// not 3.
pub fn to_gray(frame: &RgbFrame) -> Result<GrayImage, OpsError> {
    let mut out = GrayImage::zeros((0, 0));
    to_gray_into(frame, &mut out)?;
    Ok(out)
}

/// [`to_gray`] into a caller-owned image, reallocated only when its size differs.
///
/// # Errors
/// As [`to_gray`]; `out` is left unchanged on error.
pub fn to_gray_into(frame: &RgbFrame, out: &mut GrayImage) -> Result<(), OpsError> {
    let (h, w, c) = frame.dim();
    if c != 3 {
        return Err(OpsError::Channels(c));
    }
    check_frame("frame", h, w)?;
    let dst = prepare_out(out, h, w);
    match frame.as_slice() {
        Some(src) => {
            let done = rgb_to_gray_simd(src, dst);
            rgb_to_gray(&src[3 * done..], &mut dst[done..]);
        }
        None => {
            // Non-standard layout (e.g. a permuted view made owned): go pixel by
            // pixel through the indexing API, which is slower but correct.
            for ((y, x), g) in ndarray::indices((h, w)).into_iter().zip(dst.iter_mut()) {
                *g = luma(frame[[y, x, 0]], frame[[y, x, 1]], frame[[y, x, 2]]);
            }
        }
    }
    Ok(())
}

#[inline(always)]
fn luma(r: u8, g: u8, b: u8) -> u8 {
    // The weights sum to 2^15, so the result is at most 255: the cast is exact.
    ((u32::from(r) * R2Y + u32::from(g) * G2Y + u32::from(b) * B2Y + HALF) >> SHIFT) as u8
}

multiversion! {
    /// Interleaved RGB bytes → gray bytes, `dst.len()` pixels.
    pub(crate) fn rgb_to_gray(src: &[u8], dst: &mut [u8]) {
        // Fixed-size blocks let the compiler turn the stride-3 loads into
        // shuffles and vectorize the multiply-adds.
        const BLOCK: usize = 16;
        let mut src_blocks = src.chunks_exact(3 * BLOCK);
        let mut dst_blocks = dst.chunks_exact_mut(BLOCK);
        for (s, d) in (&mut src_blocks).zip(&mut dst_blocks) {
            for i in 0..BLOCK {
                d[i] = luma(s[3 * i], s[3 * i + 1], s[3 * i + 2]);
            }
        }
        let src_rest = src_blocks.remainder();
        for (s, d) in src_rest.chunks_exact(3).zip(dst_blocks.into_remainder()) {
            *d = luma(s[0], s[1], s[2]);
        }
    }
}

/// The AVX2 fast path: 32 pixels per step with the same integer arithmetic
/// as [`luma`] (so bit-identical to it), as OpenCV's own vectorized
/// conversion does. Returns how many leading pixels it converted; the caller
/// finishes the rest. Without AVX2 (or off x86-64) it converts none.
pub(crate) fn rgb_to_gray_simd(src: &[u8], dst: &mut [u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 is available (checked above); the function reads
            // and writes only within the slices (see its loop bound).
            return unsafe { avx2::rgb_to_gray(src, dst) };
        }
    }
    let _ = (src, dst);
    0
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{B2Y, G2Y, HALF, R2Y, SHIFT};
    use std::arch::x86_64::*;

    /// Byte shuffles that gather one channel of 16 interleaved RGB pixels
    /// (48 bytes in three 16-byte registers) into 16 bytes; -1 yields 0.
    /// Both 128-bit lanes use the same pattern.
    const fn masks(first: [i8; 16], second: [i8; 16], third: [i8; 16]) -> [[i8; 32]; 3] {
        let mut out = [[0i8; 32]; 3];
        let src = [first, second, third];
        let mut k = 0;
        while k < 3 {
            let mut i = 0;
            while i < 16 {
                out[k][i] = src[k][i];
                out[k][i + 16] = src[k][i];
                i += 1;
            }
            k += 1;
        }
        out
    }
    const Z: i8 = -1;
    // R of pixel k is byte 3k: k = 0..=5 in the first register, 6..=10 in
    // the second, 11..=15 in the third; G (3k+1) and B (3k+2) likewise.
    const R: [[i8; 32]; 3] = masks(
        [0, 3, 6, 9, 12, 15, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z],
        [Z, Z, Z, Z, Z, Z, 2, 5, 8, 11, 14, Z, Z, Z, Z, Z],
        [Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, 1, 4, 7, 10, 13],
    );
    const G: [[i8; 32]; 3] = masks(
        [1, 4, 7, 10, 13, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z],
        [Z, Z, Z, Z, Z, 0, 3, 6, 9, 12, 15, Z, Z, Z, Z, Z],
        [Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, 2, 5, 8, 11, 14],
    );
    const B: [[i8; 32]; 3] = masks(
        [2, 5, 8, 11, 14, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z],
        [Z, Z, Z, Z, Z, 1, 4, 7, 10, 13, Z, Z, Z, Z, Z, Z],
        [Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, 0, 3, 6, 9, 12, 15],
    );

    #[target_feature(enable = "avx2")]
    unsafe fn gather(v: [__m256i; 3], m: &[[i8; 32]; 3]) -> __m256i {
        // SAFETY (loads): each mask is 32 readable bytes.
        let m0 = _mm256_loadu_si256(m[0].as_ptr().cast());
        let m1 = _mm256_loadu_si256(m[1].as_ptr().cast());
        let m2 = _mm256_loadu_si256(m[2].as_ptr().cast());
        _mm256_or_si256(
            _mm256_or_si256(_mm256_shuffle_epi8(v[0], m0), _mm256_shuffle_epi8(v[1], m1)),
            _mm256_shuffle_epi8(v[2], m2),
        )
    }

    /// Converts `32·k` pixels, `k` as large as both slices allow; returns `32·k`.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn rgb_to_gray(src: &[u8], dst: &mut [u8]) -> usize {
        let blocks = dst.len().min(src.len() / 3) / 32;
        let zero = _mm256_setzero_si256();
        let one = _mm256_set1_epi16(1);
        // (R, G) and (B, 1) pairs against (R2Y, G2Y) and (B2Y, HALF): one
        // multiply-add instruction per pair gives the 32-bit sums.
        let w_rg = _mm256_set1_epi32(((G2Y << 16) | R2Y) as i32);
        let w_b1 = _mm256_set1_epi32(((HALF << 16) | B2Y) as i32);
        for b in 0..blocks {
            // SAFETY: block `b` reads bytes [96b, 96b + 96) of `src` and
            // writes [32b, 32b + 32) of `dst`, within bounds by `blocks`.
            let p = src.as_ptr().add(96 * b);
            // Low lane: pixels 0..16 of the block; high lane: 16..32.
            let v = [
                _mm256_loadu2_m128i(p.add(48).cast(), p.cast()),
                _mm256_loadu2_m128i(p.add(64).cast(), p.add(16).cast()),
                _mm256_loadu2_m128i(p.add(80).cast(), p.add(32).cast()),
            ];
            let (r, g, bl) = (gather(v, &R), gather(v, &G), gather(v, &B));
            let mut sums = [zero; 4];
            let halves = [
                (
                    _mm256_unpacklo_epi8(r, zero),
                    _mm256_unpacklo_epi8(g, zero),
                    _mm256_unpacklo_epi8(bl, zero),
                ),
                (
                    _mm256_unpackhi_epi8(r, zero),
                    _mm256_unpackhi_epi8(g, zero),
                    _mm256_unpackhi_epi8(bl, zero),
                ),
            ];
            for (h, (r16, g16, b16)) in halves.into_iter().enumerate() {
                let lo = _mm256_add_epi32(
                    _mm256_madd_epi16(_mm256_unpacklo_epi16(r16, g16), w_rg),
                    _mm256_madd_epi16(_mm256_unpacklo_epi16(b16, one), w_b1),
                );
                let hi = _mm256_add_epi32(
                    _mm256_madd_epi16(_mm256_unpackhi_epi16(r16, g16), w_rg),
                    _mm256_madd_epi16(_mm256_unpackhi_epi16(b16, one), w_b1),
                );
                sums[2 * h] = _mm256_srli_epi32::<{ SHIFT as i32 }>(lo);
                sums[2 * h + 1] = _mm256_srli_epi32::<{ SHIFT as i32 }>(hi);
            }
            // Lane-wise packing keeps the pixel order: each lane holds 16
            // consecutive pixels.
            let w01 = _mm256_packus_epi32(sums[0], sums[1]);
            let w23 = _mm256_packus_epi32(sums[2], sums[3]);
            let bytes = _mm256_packus_epi16(w01, w23);
            _mm256_storeu_si256(dst.as_mut_ptr().add(32 * b).cast(), bytes);
        }
        32 * blocks
    }
}

registry_op! {
    /// `to_gray` in the kernel registry: RGB frame to 8-bit gray. OpenCV's
    /// `cvtColor` uses the same fixed-point weights, so its kernel is
    /// bit-identical and measurement may choose it.
    ToGray = "to_gray", for<'a> &'a RgbFrame => GrayImage;
    shape |f| frame_shape(f);
    layout |f| layout_of(f.is_standard_layout());
    policy MeasureExact;
    kernels {
        pure(|f, out| to_gray_into(f, out)),
        #[cfg(feature = "opencv")] opencv[exact](|f, out| set(out, crate::ops::opencv::to_gray(f))),
    }
}

/// `vision.to_gray`: the op as graph files, the runner and Python name it.
pub fn descriptor() -> OpDesc {
    OpDesc::builder::<NoParams>(
        "vision.to_gray",
        "the luma of an RGB frame (BT.601, as OpenCV)",
    )
    .calls(&["to_gray", "to_gray_into"])
    .kernels(&declare::kernel_labels::<ToGray>())
    .input::<RgbFrame>("frame")
    .strip(|_| Some(crate::ops::strip::GrayStrip))
    .fills(|i, _, out: &mut GrayImage| Ok(to_gray_into(i.arg(0)?, out)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        let frame = RgbFrame::from_shape_vec(
            (1, 4, 3),
            vec![255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255],
        )
        .unwrap();
        let g = to_gray(&frame).unwrap();
        // round(0.299*255)=76, round(0.587*255)=150, round(0.114*255)=29.
        assert_eq!(g.as_slice().unwrap(), &[76, 150, 29, 255]);
    }

    #[test]
    fn simd_path_is_bit_identical_to_the_formula() {
        let mut seed = 9u32;
        for len in [0usize, 1, 31, 32, 33, 95, 1000] {
            let src: Vec<u8> = (0..3 * len)
                .map(|_| {
                    seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    (seed >> 16) as u8
                })
                .collect();
            let mut dst = vec![0u8; len];
            let done = rgb_to_gray_simd(&src, &mut dst);
            rgb_to_gray(&src[3 * done..], &mut dst[done..]);
            for (i, d) in dst.iter().enumerate() {
                assert_eq!(
                    *d,
                    luma(src[3 * i], src[3 * i + 1], src[3 * i + 2]),
                    "pixel {i} of {len}"
                );
            }
        }
    }

    #[test]
    fn bad_input() {
        assert!(matches!(
            to_gray(&RgbFrame::zeros((0, 4, 3))),
            Err(OpsError::Empty { .. })
        ));
        assert_eq!(
            to_gray(&RgbFrame::zeros((2, 2, 4))),
            Err(OpsError::Channels(4))
        );
    }
}
