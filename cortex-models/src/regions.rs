//! A model on a list of regions — the second stage of detect → recognise
//! (G-API's `infer` on ROIs, DeepStream's secondary `nvinfer`): each region
//! (a quadrilateral of the frame, possibly tilted) cropped, turned upright
//! and resized into one slot of a batch tensor in one resampling pass, the
//! batches run through the registry's `infer`, one output per region.
//!
//! The crop follows PaddleOCR's `get_rotate_crop_image`: the region's sides
//! give the crop's size, a crop at least 1.5 times taller than wide is
//! turned a quarter (vertical text), and the crop is resized to the model's
//! height — keeping its aspect ratio and padding to the model's width when
//! [`RegionPrep::keep_aspect`] (what text recognisers want), or stretched
//! to the model's input otherwise. PaddleOCR warps (bicubic) and then
//! resizes (bilinear); here one bilinear sample per tensor element, from
//! the frame, replicating its border.
//!
//! The batch is the model's first dimension, fixed at load: the batch size
//! limit. Tensors and outputs are reused from frame to frame.

use cortex_vision::ops::{OpsError, RgbFrame};
use ndarray::{Array4, ArrayD, Axis, IxDyn};

use crate::model::Model;
use crate::op::{infer_into, Output, Tensor4};
use crate::prep::{ChannelOrder, Normalize};
use crate::text::Quad;

/// How a region becomes a model's input.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RegionPrep {
    /// Per-channel normalisation and channel order.
    pub norm: Normalize,
    /// Keep the region's aspect ratio: resize to the model's height, at
    /// most its width, and pad the rest with [`RegionPrep::pad`].
    pub keep_aspect: bool,
    /// The value (after normalisation) of the padding.
    pub pad: f32,
}

impl RegionPrep {
    /// PP-OCR's recogniser: BGR, `(x / 255 − 0.5) / 0.5`, aspect kept,
    /// padded with 0.
    pub const PP_OCR_REC: RegionPrep = RegionPrep {
        norm: Normalize {
            order: ChannelOrder::Bgr,
            mean: [0.5; 3],
            std: [0.5; 3],
        },
        keep_aspect: true,
        pad: 0.0,
    };
}

fn dist(a: [f32; 2], b: [f32; 2]) -> f32 {
    (a[0] - b[0]).hypot(a[1] - b[1])
}

/// A region's crop as PaddleOCR sizes it — its longer top or bottom side
/// by its longer left or right side, in whole pixels (at least 1) — and
/// whether it is turned a quarter (at least 1.5 times taller than wide).
fn crop_size(quad: &Quad) -> (f32, f32, bool) {
    let [tl, tr, br, bl] = *quad;
    let cw = dist(tl, tr).max(dist(bl, br)).trunc().max(1.0);
    let ch = dist(tl, bl).max(dist(tr, br)).trunc().max(1.0);
    (cw, ch, ch / cw >= 1.5)
}

/// The width over the height of a region once cropped and upright: what
/// decides the columns it fills at the model's height.
pub fn upright_ratio(quad: &Quad) -> f32 {
    let (cw, ch, turned) = crop_size(quad);
    if turned {
        ch / cw
    } else {
        cw / ch
    }
}

/// Bilinear sample of channel `c` at `(x, y)`, the frame's border
/// replicated.
fn sample(frame: &RgbFrame, x: f32, y: f32, c: usize) -> f32 {
    let (h, w, _) = frame.dim();
    let x = x.clamp(0.0, (w - 1) as f32);
    let y = y.clamp(0.0, (h - 1) as f32);
    let (x0, y0) = (x.floor() as usize, y.floor() as usize);
    let (x1, y1) = ((x0 + 1).min(w - 1), (y0 + 1).min(h - 1));
    let (fx, fy) = (x - x0 as f32, y - y0 as f32);
    let p = |yy: usize, xx: usize| f32::from(frame[[yy, xx, c]]);
    let top = p(y0, x0) + (p(y0, x1) - p(y0, x0)) * fx;
    let bottom = p(y1, x0) + (p(y1, x1) - p(y1, x0)) * fx;
    top + (bottom - top) * fy
}

/// Fills slot `slot` of `tensor` (`[n, 3, h, w]`, `slot < n`) with the
/// region `quad` of `frame`; returns the columns the region fills (the
/// rest is padding).
///
/// # Errors
/// [`OpsError::Empty`] for an empty frame, [`OpsError::Channels`] for a
/// frame or tensor without 3 channels, [`OpsError::InvalidParam`] for a
/// slot outside the batch or a region with a non-finite corner.
pub fn region_into_slot(
    frame: &RgbFrame,
    quad: &Quad,
    prep: &RegionPrep,
    tensor: &mut Tensor4,
    slot: usize,
) -> Result<usize, OpsError> {
    let (fh, fw, ch) = frame.dim();
    let (n, tc, th, tw) = tensor.dim();
    if ch != 3 || tc != 3 {
        return Err(OpsError::Channels(if ch != 3 { ch } else { tc }));
    }
    if fh == 0 || fw == 0 {
        return Err(OpsError::Empty {
            what: "frame",
            width: fw,
            height: fh,
        });
    }
    if slot >= n || th == 0 || tw == 0 {
        return Err(OpsError::InvalidParam {
            name: "slot",
            reason: format!("slot {slot} of a {n}x{tc}x{th}x{tw} tensor"),
        });
    }
    if quad.iter().flatten().any(|v| !v.is_finite()) {
        return Err(OpsError::InvalidParam {
            name: "region",
            reason: format!("{quad:?} has a corner that is not a number"),
        });
    }
    let [tl, tr, br, bl] = *quad;
    let (cw, chh, turned) = crop_size(quad);
    // The upright crop's size.
    let (uw, uh) = if turned { (chh, cw) } else { (cw, chh) };
    let used = if prep.keep_aspect {
        ((th as f32 * uw / uh).ceil() as usize).clamp(1, tw)
    } else {
        tw
    };
    // Crop pixel (x, y) → frame point: the quad's bilinear patch.
    let at = |x: f32, y: f32| {
        let (u, v) = (x / cw, y / chh);
        let top = [tl[0] + (tr[0] - tl[0]) * u, tl[1] + (tr[1] - tl[1]) * u];
        let bot = [bl[0] + (br[0] - bl[0]) * u, bl[1] + (br[1] - bl[1]) * u];
        [
            top[0] + (bot[0] - top[0]) * v,
            top[1] + (bot[1] - top[1]) * v,
        ]
    };
    let src = match prep.norm.order {
        ChannelOrder::Rgb => [0, 1, 2],
        ChannelOrder::Bgr => [2, 1, 0],
    };
    let scale: [f32; 3] = std::array::from_fn(|c| 1.0 / (255.0 * prep.norm.std[c]));
    let offset: [f32; 3] = std::array::from_fn(|c| prep.norm.mean[c] / prep.norm.std[c]);
    let (sx, sy) = (uw / used as f32, uh / th as f32);
    let mut dst = tensor.index_axis_mut(Axis(0), slot);
    for v in 0..th {
        // Upright crop coordinates, pixel centres aligned (INTER_LINEAR).
        let y = ((v as f32 + 0.5) * sy - 0.5).clamp(0.0, uh - 1.0);
        for u in 0..tw {
            if u >= used {
                for c in 0..3 {
                    dst[[c, v, u]] = prep.pad;
                }
                continue;
            }
            let x = ((u as f32 + 0.5) * sx - 0.5).clamp(0.0, uw - 1.0);
            // numpy's rot90 (a quarter counter-clockwise): the upright
            // crop's (x, y) is the crop's (cw − 1 − y, x).
            let (cx, cy) = if turned { (cw - 1.0 - y, x) } else { (x, y) };
            let [px, py] = at(cx, cy);
            for (c, &s) in src.iter().enumerate() {
                dst[[c, v, u]] = sample(frame, px, py, s) * scale[c] - offset[c];
            }
        }
    }
    Ok(used)
}

/// A model run on regions: its batch tensor and output, reused.
#[derive(Debug)]
pub struct RegionRunner {
    tensor: Tensor4,
    batch_out: Output,
    /// Per slot: the columns its region fills.
    used: Vec<usize>,
}

impl Default for RegionRunner {
    fn default() -> Self {
        RegionRunner {
            tensor: Array4::zeros((0, 0, 0, 0)),
            batch_out: ArrayD::zeros(IxDyn(&[0])),
            used: Vec::new(),
        }
    }
}

/// Why a model on regions failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegionError {
    /// A region could not be turned into the model's input.
    #[error("region input: {0}")]
    Region(#[from] OpsError),
    /// Every backend refused a batch.
    #[error("region model: {0}")]
    Infer(#[from] cortex_vision::registry::RegistryError),
    /// The model does not take a batch of 3-channel images, or gives an
    /// output without one row per image.
    #[error("region model {model}: {reason}")]
    Model {
        /// The model.
        model: String,
        /// What does not fit.
        reason: String,
    },
}

impl RegionRunner {
    /// Runs `model` (input `[n, 3, h, w]`: `n` regions a batch) on the
    /// `regions` of `frame`, batch by batch, handing `each` the region's
    /// index, the columns it fills and its output row (the model's output
    /// without its first dimension).
    ///
    /// # Errors
    /// [`RegionError`]; `each` has seen the regions of the batches before.
    pub fn run<'q>(
        &mut self,
        frame: &RgbFrame,
        regions: impl ExactSizeIterator<Item = &'q Quad>,
        model: &Model,
        prep: &RegionPrep,
        mut each: impl FnMut(usize, usize, ndarray::ArrayViewD<'_, f32>) -> Result<(), RegionError>,
    ) -> Result<(), RegionError> {
        let [n, c, h, w] = model.input_shape();
        if c != 3 {
            return Err(RegionError::Model {
                model: model.name().to_string(),
                reason: format!("takes {c} channels; a region is a 3-channel image"),
            });
        }
        if self.tensor.dim() != (n, c, h, w) {
            self.tensor = Array4::zeros((n, c, h, w));
        }
        self.used.resize(n, w);
        let mut regions = regions.enumerate().peekable();
        while regions.peek().is_some() {
            let mut first = None;
            let mut count = 0;
            for slot in 0..n {
                let Some((i, quad)) = regions.next() else {
                    break;
                };
                first.get_or_insert(i);
                let cols = region_into_slot(frame, quad, prep, &mut self.tensor, slot)?;
                self.used[slot] = cols;
                count += 1;
            }
            infer_into(model, &self.tensor, &mut self.batch_out)?;
            if self.batch_out.ndim() == 0 || self.batch_out.shape()[0] != n {
                return Err(RegionError::Model {
                    model: model.name().to_string(),
                    reason: format!(
                        "gave a {:?} output for a batch of {n}; one row per region expected",
                        self.batch_out.shape()
                    ),
                });
            }
            let first = first.unwrap_or(0);
            for slot in 0..count {
                let cols = self.used[slot];
                each(first + slot, cols, self.batch_out.index_axis(Axis(0), slot))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upright_region_is_cropped_resized_and_padded() {
        // A frame whose red channel is the column, blue the row.
        let frame = RgbFrame::from_shape_fn((40, 100, 3), |(y, x, c)| match c {
            0 => x as u8,
            2 => y as u8,
            _ => 0,
        });
        let prep = RegionPrep {
            norm: Normalize {
                order: ChannelOrder::Rgb,
                mean: [0.0; 3],
                std: [1.0 / 255.0; 3],
            },
            keep_aspect: true,
            pad: -1.0,
        };
        // A 40 x 10 region from (20, 10): at height 5, 20 columns of 30.
        let quad = [[20.0, 10.0], [60.0, 10.0], [60.0, 20.0], [20.0, 20.0]];
        let mut t = Tensor4::zeros((2, 3, 5, 30));
        let used = region_into_slot(&frame, &quad, &prep, &mut t, 1).unwrap();
        assert_eq!(used, 20);
        // Halved: column u samples crop x = 2u + 0.5, frame x = 20.5 + 2u.
        for u in 0..20 {
            assert!(
                (t[[1, 0, 2, u]] - (20.5 + 2.0 * u as f32)).abs() < 1e-3,
                "{u}"
            );
        }
        assert!((t[[1, 2, 0, 0]] - 10.5).abs() < 1e-3);
        assert!(t
            .slice(ndarray::s![1, .., .., 20..])
            .iter()
            .all(|&v| v == -1.0));
        assert!(t
            .slice(ndarray::s![0, .., .., ..])
            .iter()
            .all(|&v| v == 0.0));
        // A slot outside the batch is refused.
        assert!(region_into_slot(&frame, &quad, &prep, &mut t, 2).is_err());
    }

    #[test]
    fn a_tall_region_is_turned_a_quarter() {
        let frame =
            RgbFrame::from_shape_fn((100, 40, 3), |(y, _, c)| if c == 0 { y as u8 } else { 0 });
        let prep = RegionPrep {
            norm: Normalize {
                order: ChannelOrder::Rgb,
                mean: [0.0; 3],
                std: [1.0 / 255.0; 3],
            },
            keep_aspect: false,
            pad: 0.0,
        };
        // 10 wide, 60 tall: turned (numpy's rot90), it is 60 wide and its
        // columns are the crop's rows, top first.
        let quad = [[10.0, 20.0], [20.0, 20.0], [20.0, 80.0], [10.0, 80.0]];
        let mut t = Tensor4::zeros((1, 3, 10, 60));
        region_into_slot(&frame, &quad, &prep, &mut t, 0).unwrap();
        // Along the upright width, the frame's rows increase.
        assert!(t[[0, 0, 5, 0]] < t[[0, 0, 5, 59]]);
        assert!((t[[0, 0, 5, 0]] - 20.0).abs() < 1.0 && (t[[0, 0, 5, 59]] - 79.0).abs() < 1.0);
    }
}
