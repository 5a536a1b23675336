//! DB post-processing (Differentiable Binarization, the decoder of PP-OCR's
//! detector), as PaddleOCR's `DBPostProcess` documents it: the probability
//! map thresholded (`thresh`), each connected region of the bitmap a
//! candidate, scored by the mean probability over its box (`box_thresh`),
//! too-small boxes dropped (`min_size`), and the kept box grown by the
//! "unclip" offset `area × unclip_ratio / perimeter` — the network predicts
//! shrunk text kernels, and unclipping restores the text's extent — then
//! scaled to the frame.
//!
//! The boxes here are axis-aligned (PaddleOCR fits a rotated rectangle to
//! each region's contour): an L2 score map and the encoder's regions are
//! axis-aligned, and for upright scene text the two agree.

use cortex_vision::ops::BBox;
use ndarray::ArrayView2;

/// DB's parameters; [`DbParams::PP_OCR`] are PaddleOCR's inference defaults.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DbParams {
    /// Probability above which a pixel is text.
    pub thresh: f32,
    /// Smallest mean probability of a kept box.
    pub box_thresh: f32,
    /// How much a box grows: `area × unclip_ratio / perimeter` per side.
    pub unclip_ratio: f32,
    /// Smallest side, in map pixels, of a candidate before unclipping.
    pub min_size: usize,
    /// Most candidates considered per map (PaddleOCR's `max_candidates`).
    pub max_candidates: usize,
}

impl DbParams {
    /// PaddleOCR's `DBPostProcess` defaults for PP-OCR's detector.
    pub const PP_OCR: DbParams = DbParams {
        thresh: 0.3,
        box_thresh: 0.6,
        unclip_ratio: 1.5,
        min_size: 3,
        max_candidates: 1000,
    };
}

impl Default for DbParams {
    fn default() -> Self {
        DbParams::PP_OCR
    }
}

/// A detected text box, in frame pixels, with its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TextBox {
    /// The unclipped box, clipped to the frame.
    pub bbox: BBox,
    /// Mean probability inside the candidate's box, in [0, 1].
    pub score: f32,
}

/// Working memory of [`db_boxes_into`], reused between frames.
#[derive(Debug, Default)]
pub struct DbScratch {
    /// Per map pixel: 1 once visited.
    seen: Vec<u8>,
    /// The flood's stack of pixel indices.
    stack: Vec<u32>,
}

/// The boxes of a `map_h × map_w` probability map, scaled to a
/// `frame_w × frame_h` frame, into `out` (cleared first; its allocation and
/// the scratch's are reused).
pub fn db_boxes_into(
    prob: ArrayView2<'_, f32>,
    (frame_w, frame_h): (usize, usize),
    params: &DbParams,
    scratch: &mut DbScratch,
    out: &mut Vec<TextBox>,
) {
    out.clear();
    let (h, w) = prob.dim();
    if h == 0 || w == 0 || frame_w == 0 || frame_h == 0 {
        return;
    }
    scratch.seen.clear();
    scratch.seen.resize(h * w, 0);
    let text = |y: usize, x: usize| prob[[y, x]] > params.thresh;
    let mut candidates = 0;
    for y0 in 0..h {
        for x0 in 0..w {
            if scratch.seen[y0 * w + x0] != 0 || !text(y0, x0) {
                continue;
            }
            candidates += 1;
            if candidates > params.max_candidates {
                return;
            }
            // One 8-connected region: its bounding box.
            let (mut bx0, mut by0, mut bx1, mut by1) = (x0, y0, x0, y0);
            scratch.seen[y0 * w + x0] = 1;
            scratch.stack.clear();
            scratch.stack.push((y0 * w + x0) as u32);
            while let Some(i) = scratch.stack.pop() {
                let (y, x) = (i as usize / w, i as usize % w);
                (bx0, by0, bx1, by1) = (bx0.min(x), by0.min(y), bx1.max(x), by1.max(y));
                for ny in y.saturating_sub(1)..=(y + 1).min(h - 1) {
                    for nx in x.saturating_sub(1)..=(x + 1).min(w - 1) {
                        let j = ny * w + nx;
                        if scratch.seen[j] == 0 && text(ny, nx) {
                            scratch.seen[j] = 1;
                            scratch.stack.push(j as u32);
                        }
                    }
                }
            }
            let (bw, bh) = (bx1 - bx0 + 1, by1 - by0 + 1);
            if bw.min(bh) < params.min_size {
                continue;
            }
            let sum: f32 = prob.slice(ndarray::s![by0..=by1, bx0..=bx1]).iter().sum();
            let score = sum / (bw * bh) as f32;
            if score < params.box_thresh {
                continue;
            }
            // Unclip: grow each side by area × ratio / perimeter.
            let (fw, fh) = (bw as f32, bh as f32);
            let d = fw * fh * params.unclip_ratio / (2.0 * (fw + fh));
            if (fw.min(fh) + 2.0 * d) < (params.min_size + 2) as f32 {
                continue;
            }
            let sx = frame_w as f32 / w as f32;
            let sy = frame_h as f32 / h as f32;
            let left = ((bx0 as f32 - d) * sx).floor().max(0.0) as usize;
            let top = ((by0 as f32 - d) * sy).floor().max(0.0) as usize;
            let right = (((bx1 + 1) as f32 + d) * sx).ceil().min(frame_w as f32) as usize;
            let bottom = (((by1 + 1) as f32 + d) * sy).ceil().min(frame_h as f32) as usize;
            if right > left && bottom > top {
                out.push(TextBox {
                    bbox: BBox {
                        x: left,
                        y: top,
                        width: right - left,
                        height: bottom - top,
                    },
                    score: score.clamp(0.0, 1.0),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    #[test]
    fn one_region_is_scored_and_unclipped() {
        let mut prob = Array2::<f32>::zeros((40, 60));
        // A 6 x 20 text kernel at probability 0.9, a faint blob at 0.35.
        prob.slice_mut(ndarray::s![10..16, 20..40]).fill(0.9);
        prob.slice_mut(ndarray::s![30..34, 5..9]).fill(0.35);
        let mut out = Vec::new();
        db_boxes_into(
            prob.view(),
            (120, 80),
            &DbParams::PP_OCR,
            &mut DbScratch::default(),
            &mut out,
        );
        // The faint blob passes `thresh` but not `box_thresh`.
        assert_eq!(out.len(), 1);
        let b = out[0];
        assert!((b.score - 0.9).abs() < 1e-6);
        // d = 6·20·1.5 / (2·26) ≈ 3.46 map pixels, then ×2 to the frame.
        let d = 6.0 * 20.0 * 1.5 / 52.0;
        assert_eq!(b.bbox.x, ((20.0 - d) * 2.0f32).floor() as usize);
        assert_eq!(b.bbox.y, ((10.0 - d) * 2.0f32).floor() as usize);
        assert_eq!(b.bbox.right(), ((40.0 + d) * 2.0f32).ceil() as usize);
        assert_eq!(b.bbox.bottom(), ((16.0 + d) * 2.0f32).ceil() as usize);
    }

    #[test]
    fn small_and_empty_maps_give_no_box() {
        let mut prob = Array2::<f32>::zeros((10, 10));
        prob[[5, 5]] = 1.0; // one pixel: under min_size
        let mut out = vec![TextBox {
            bbox: BBox::default(),
            score: 0.0,
        }];
        db_boxes_into(
            prob.view(),
            (10, 10),
            &DbParams::PP_OCR,
            &mut DbScratch::default(),
            &mut out,
        );
        assert!(out.is_empty());
        db_boxes_into(
            Array2::zeros((0, 0)).view(),
            (10, 10),
            &DbParams::PP_OCR,
            &mut DbScratch::default(),
            &mut out,
        );
        assert!(out.is_empty());
    }
}
