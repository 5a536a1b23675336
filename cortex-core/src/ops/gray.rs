//! `to_gray`: RGB → gray with OpenCV's fixed-point BT.601 weights.

use super::border::{check_nonempty, prepare_out};
use super::simd::multiversion;
use super::types::{GrayImage, OpsError, RgbFrame};

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
/// [`OpsError::Empty`] for a frame without pixels, [`OpsError::Channels`] when
/// the last axis is not 3.
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
    check_nonempty("frame", h, w)?;
    let dst = prepare_out(out, h, w);
    match frame.as_slice() {
        Some(src) => rgb_to_gray(src, dst),
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
    fn rgb_to_gray(src: &[u8], dst: &mut [u8]) {
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
