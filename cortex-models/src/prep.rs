//! Image → tensor: an RGB frame resized to the model's input size
//! (bilinear, pixel centres aligned as OpenCV's `INTER_LINEAR`), scaled to
//! [0, 1], normalised per channel by mean and standard deviation, in the
//! channel order the model was trained on, and laid out NCHW.

use cortex_vision::ops::{OpsError, RgbFrame};
use ndarray::Array4;

use crate::model::Model;
use crate::op::Tensor4;

/// The channel order a model expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelOrder {
    /// Red, green, blue (the frame's own order).
    Rgb,
    /// Blue, green, red (models trained on images OpenCV decoded).
    Bgr,
}

/// Per-channel normalisation: `(pixel / 255 − mean[c]) / std[c]`, `c` in
/// the model's channel order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Normalize {
    /// The model's channel order.
    pub order: ChannelOrder,
    /// Mean per model channel, on the [0, 1] scale.
    pub mean: [f32; 3],
    /// Standard deviation per model channel, on the [0, 1] scale.
    pub std: [f32; 3],
}

impl Normalize {
    /// PP-OCR's detector: BGR (PaddleOCR decodes with OpenCV) with the
    /// ImageNet statistics, applied in that order (`NormalizeImage` of its
    /// inference configuration).
    pub const PP_OCR: Normalize = Normalize {
        order: ChannelOrder::Bgr,
        mean: [0.485, 0.456, 0.406],
        std: [0.229, 0.224, 0.225],
    };
}

/// One output index's two source indices and the weight of the second.
fn tap(d: usize, src: usize, dst: usize) -> (usize, usize, f32) {
    let scale = src as f32 / dst as f32;
    let f = (d as f32 + 0.5) * scale - 0.5;
    if f <= 0.0 {
        return (0, 0, 0.0);
    }
    let i0 = (f.floor() as usize).min(src - 1);
    let i1 = (i0 + 1).min(src - 1);
    (i0, i1, f - i0 as f32)
}

/// Fills `out` (shape `[1, 3, h, w]`, allocated only when its shape
/// differs) with `frame` resized to `h × w` and normalised by `norm`.
///
/// # Errors
/// [`OpsError::Empty`] for an empty frame, [`OpsError::Channels`] for one
/// without 3 channels, [`OpsError::InvalidParam`] for a zero target side or
/// a zero standard deviation. `out` is left as it was.
pub fn image_to_tensor_into(
    frame: &RgbFrame,
    (h, w): (usize, usize),
    norm: &Normalize,
    out: &mut Tensor4,
) -> Result<(), OpsError> {
    let (fh, fw, ch) = frame.dim();
    if ch != 3 {
        return Err(OpsError::Channels(ch));
    }
    if fh == 0 || fw == 0 {
        return Err(OpsError::Empty {
            what: "frame",
            width: fw,
            height: fh,
        });
    }
    if h == 0 || w == 0 {
        return Err(OpsError::InvalidParam {
            name: "tensor size",
            reason: format!("{w}x{h} has a zero side"),
        });
    }
    if norm.std.iter().any(|s| !s.is_normal()) {
        return Err(OpsError::InvalidParam {
            name: "std",
            reason: format!("{:?} must be finite and non-zero", norm.std),
        });
    }
    if out.dim() != (1, 3, h, w) || !out.is_standard_layout() {
        *out = Array4::zeros((1, 3, h, w));
    }
    // Model channel c reads frame channel `src[c]`.
    let src = match norm.order {
        ChannelOrder::Rgb => [0, 1, 2],
        ChannelOrder::Bgr => [2, 1, 0],
    };
    let scale: [f32; 3] = std::array::from_fn(|c| 1.0 / (255.0 * norm.std[c]));
    let offset: [f32; 3] = std::array::from_fn(|c| norm.mean[c] / norm.std[c]);
    // Rows of the frame as slices (a frame not in standard layout is read
    // through indexing): the per-element bounds checks of 2-D indexing
    // cost more than the arithmetic.
    let Some(pixels) = frame.as_slice() else {
        for y in 0..h {
            let (y0, y1, wy) = tap(y, fh, h);
            for x in 0..w {
                let (x0, x1, wx) = tap(x, fw, w);
                for (c, &s) in src.iter().enumerate() {
                    let p = |yy: usize, xx: usize| f32::from(frame[[yy, xx, s]]);
                    let top = p(y0, x0) + (p(y0, x1) - p(y0, x0)) * wx;
                    let bottom = p(y1, x0) + (p(y1, x1) - p(y1, x0)) * wx;
                    let v = top + (bottom - top) * wy;
                    out[[0, c, y, x]] = v * scale[c] - offset[c];
                }
            }
        }
        return Ok(());
    };
    let Some(dst) = out.as_slice_mut() else {
        // Made in standard layout just above.
        return Ok(());
    };
    let (plane, stride) = (h * w, fw * 3);
    for y in 0..h {
        let (y0, y1, wy) = tap(y, fh, h);
        let (r0, r1) = (
            &pixels[y0 * stride..(y0 + 1) * stride],
            &pixels[y1 * stride..(y1 + 1) * stride],
        );
        for x in 0..w {
            let (x0, x1, wx) = tap(x, fw, w);
            for (c, &s) in src.iter().enumerate() {
                let p = |r: &[u8], xx: usize| f32::from(r[xx * 3 + s]);
                let top = p(r0, x0) + (p(r0, x1) - p(r0, x0)) * wx;
                let bottom = p(r1, x0) + (p(r1, x1) - p(r1, x0)) * wx;
                let v = top + (bottom - top) * wy;
                dst[c * plane + y * w + x] = v * scale[c] - offset[c];
            }
        }
    }
    Ok(())
}

/// [`image_to_tensor_into`] at `model`'s input size: the node that feeds a
/// model.
///
/// ```text
/// node tensor: Tensor4 = models::prep::frame_tensor_into(frame, model, &Normalize::PP_OCR, &mut tensor)?;
/// ```
///
/// # Errors
/// As [`image_to_tensor_into`], and [`OpsError::InvalidParam`] when the
/// model does not take 3 channels.
pub fn frame_tensor_into(
    frame: &RgbFrame,
    model: &Model,
    norm: &Normalize,
    out: &mut Tensor4,
) -> Result<(), OpsError> {
    let [n, c, h, w] = model.input_shape();
    if n != 1 || c != 3 {
        return Err(OpsError::InvalidParam {
            name: "model",
            reason: format!(
                "{} takes {n}x{c}xHxW, not one 3-channel image",
                model.name()
            ),
        });
    }
    image_to_tensor_into(frame, (h, w), norm, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_size_is_a_copy_normalised_in_bgr() {
        let frame = RgbFrame::from_shape_fn((2, 3, 3), |(y, x, c)| (y * 50 + x * 20 + c * 7) as u8);
        let mut t = Tensor4::zeros((0, 0, 0, 0));
        image_to_tensor_into(&frame, (2, 3), &Normalize::PP_OCR, &mut t).unwrap();
        for y in 0..2 {
            for x in 0..3 {
                // Model channel 0 is blue, the frame's channel 2.
                let b = f32::from(frame[[y, x, 2]]) / 255.0;
                let want = (b - 0.485) / 0.229;
                assert!((t[[0, 0, y, x]] - want).abs() < 1e-5);
            }
        }
    }

    #[test]
    fn halving_averages_pairs() {
        // Downscaling by 2 samples between pixel pairs: the mean of each 2x2.
        let frame = RgbFrame::from_shape_fn((4, 4, 3), |(y, x, _)| (y * 40 + x * 10) as u8);
        let norm = Normalize {
            order: ChannelOrder::Rgb,
            mean: [0.0; 3],
            std: [1.0 / 255.0; 3],
        };
        let mut t = Tensor4::zeros((0, 0, 0, 0));
        image_to_tensor_into(&frame, (2, 2), &norm, &mut t).unwrap();
        for (y, x) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            let mean = (0..2)
                .flat_map(|dy| (0..2).map(move |dx| (2 * y + dy, 2 * x + dx)))
                .map(|(yy, xx)| f32::from(frame[[yy, xx, 0]]))
                .sum::<f32>()
                / 4.0;
            assert!((t[[0, 0, y, x]] - mean).abs() < 1e-3, "{y},{x}");
        }
    }

    #[test]
    fn bad_frames_are_errors() {
        let mut t = Tensor4::zeros((0, 0, 0, 0));
        let empty = RgbFrame::zeros((0, 4, 3));
        assert!(image_to_tensor_into(&empty, (2, 2), &Normalize::PP_OCR, &mut t).is_err());
        let gray = RgbFrame::zeros((4, 4, 1));
        assert!(image_to_tensor_into(&gray, (2, 2), &Normalize::PP_OCR, &mut t).is_err());
        let ok = RgbFrame::zeros((4, 4, 3));
        assert!(image_to_tensor_into(&ok, (0, 2), &Normalize::PP_OCR, &mut t).is_err());
        assert_eq!(t.dim(), (0, 0, 0, 0), "left as it was");
    }
}
