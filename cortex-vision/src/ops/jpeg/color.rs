//! RGB → level-shifted YCbCr rows (JFIF, BT.601 full range) and the 2×2
//! chroma averaging of 4:2:0, in `f32`: the planes are never rounded to
//! 8 bits between conversion, subsampling and the DCT.

use super::super::simd::multiversion;

multiversion! {
    /// Converts `y.len()` interleaved RGB pixels of `rgb` into Y − 128, Cb − 128
    /// and Cr − 128 (the DCT's input range).
    pub(super) fn rgb_row_to_ycbcr(rgb: &[u8], y: &mut [f32], cb: &mut [f32], cr: &mut [f32]) {
        let n = y.len();
        let (rgb, cb, cr) = (&rgb[..3 * n], &mut cb[..n], &mut cr[..n]);
        for i in 0..n {
            let (r, g, b) = (
                f32::from(rgb[3 * i]),
                f32::from(rgb[3 * i + 1]),
                f32::from(rgb[3 * i + 2]),
            );
            y[i] = 0.299 * r + 0.587 * g + 0.114 * b - 128.0;
            cb[i] = -0.168_736 * r - 0.331_264 * g + 0.5 * b;
            cr[i] = 0.5 * r - 0.418_688 * g - 0.081_312 * b;
        }
    }
}

multiversion! {
    /// `out[i]` = mean of the 2×2 pixels `top[2i..2i+2]`, `bottom[2i..2i+2]`.
    pub(super) fn average_2x2(top: &[f32], bottom: &[f32], out: &mut [f32]) {
        let n = out.len();
        let (top, bottom) = (&top[..2 * n], &bottom[..2 * n]);
        for i in 0..n {
            out[i] = 0.25 * ((top[2 * i] + top[2 * i + 1]) + (bottom[2 * i] + bottom[2 * i + 1]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primaries_and_grey() {
        let rgb = [255, 255, 255, 0, 0, 0, 255, 0, 0, 128, 128, 128];
        let (mut y, mut cb, mut cr) = ([0f32; 4], [0f32; 4], [0f32; 4]);
        rgb_row_to_ycbcr(&rgb, &mut y, &mut cb, &mut cr);
        assert!((y[0] - 127.0).abs() < 1e-3 && cb[0].abs() < 1e-3 && cr[0].abs() < 1e-3);
        assert!((y[1] + 128.0).abs() < 1e-3);
        assert!((y[2] - (0.299 * 255.0 - 128.0)).abs() < 1e-3 && (cr[2] - 127.5).abs() < 1e-3);
        assert!(y[3].abs() < 1e-3 && cb[3].abs() < 1e-3);
        let mut out = [0f32; 2];
        average_2x2(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0], &mut out);
        assert_eq!(out, [3.5, 5.5]);
    }
}
