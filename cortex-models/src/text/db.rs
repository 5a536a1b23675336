//! DB post-processing (Differentiable Binarization, the decoder of PP-OCR's
//! detector), as PaddleOCR's `DBPostProcess` writes it (box type "quad",
//! score mode "fast"): the probability map thresholded (`thresh`); each
//! 8-connected region of the bitmap a candidate, fitted with its
//! minimum-area rectangle (OpenCV's `minAreaRect` of its contour: the
//! convex hull of its pixels is the contour's), dropped when its short side
//! is under `min_size`; scored by the mean probability over that rectangle
//! (`box_score_fast`: the region's own, possibly tilted, extent — not its
//! axis-aligned bounding box, under which tilted lines fall below
//! `box_thresh`); grown by the "unclip" offset `area × unclip_ratio /
//! perimeter` on every side (the network predicts shrunk text kernels;
//! PaddleOCR offsets the rectangle with round joins and fits a rectangle
//! again, which is the rectangle grown by the offset) and dropped when its
//! short side is then under `min_size + 2`; scaled to the frame and
//! rounded; ordered clockwise and dropped when a side is 3 pixels or less
//! (`filter_tag_det_res`).
//!
//! OpenCV's `RETR_LIST` also lists the inner contours of regions with
//! holes; a hole's rectangle lies inside its region's, so it is not a
//! candidate here (on OpenCV's scene-text photographs no hole's box passes
//! `box_thresh` either). PaddleOCR's integer offsetting (pyclipper rounds
//! the rectangle's corners) moves a corner by at most a map pixel.
//!
//! Each box is kept as its quadrilateral ([`TextBox::quad`]) and as the
//! axis-aligned box around it ([`TextBox::bbox`]), which L2's score map and
//! the encoder's regions take.

use cortex_vision::ops::BBox;
use ndarray::ArrayView2;

use super::geom::{convex_hull_into, min_area_rect, polygon_mean, Point};

/// DB's parameters; [`DbParams::PP_OCR`] are PaddleOCR's inference defaults.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DbParams {
    /// Probability above which a pixel is text.
    pub thresh: f32,
    /// Smallest mean probability over a candidate's rectangle.
    pub box_thresh: f32,
    /// How much a box grows: `area × unclip_ratio / perimeter` per side.
    pub unclip_ratio: f32,
    /// Smallest short side, in map pixels, of a candidate's rectangle
    /// (and `min_size + 2` after unclipping).
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

/// A quadrilateral in frame pixels: top-left, top-right, bottom-right,
/// bottom-left, each `[x, y]`.
pub type Quad = [[f32; 2]; 4];

/// A detected text box, in frame pixels, with its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TextBox {
    /// The axis-aligned box around [`TextBox::quad`] (its corners' pixels
    /// included).
    pub bbox: BBox,
    /// Mean probability over the candidate's rectangle, in [0, 1].
    pub score: f32,
    /// The unclipped rectangle, possibly tilted, with integer corners
    /// inside the frame, clockwise from the top-left.
    pub quad: Quad,
}

impl TextBox {
    /// An upright box: its quadrilateral is `bbox`'s corner pixels.
    pub fn upright(bbox: BBox, score: f32) -> TextBox {
        let (x0, y0) = (bbox.x as f32, bbox.y as f32);
        let (x1, y1) = (
            bbox.right().saturating_sub(1) as f32,
            bbox.bottom().saturating_sub(1) as f32,
        );
        TextBox {
            bbox,
            score,
            quad: [[x0, y0], [x1, y0], [x1, y1], [x0, y1]],
        }
    }

    /// The lengths of its top and left sides.
    pub fn sides(&self) -> (f32, f32) {
        let d = |a: [f32; 2], b: [f32; 2]| (a[0] - b[0]).hypot(a[1] - b[1]);
        (d(self.quad[0], self.quad[1]), d(self.quad[0], self.quad[3]))
    }
}

/// Working memory of [`db_boxes_into`], reused between frames.
#[derive(Debug, Default)]
pub struct DbScratch {
    /// Per map pixel: 1 once visited.
    seen: Vec<u8>,
    /// The flood's stack of pixel indices.
    stack: Vec<u32>,
    /// Per map row: the region's least and greatest column there.
    rows: Vec<(u32, u32)>,
    /// The region's outline points, then its hull.
    points: Vec<Point>,
    hull: Vec<Point>,
    /// The scored rectangle's pixels.
    mask: Vec<u8>,
}

/// PaddleOCR's `order_points_clockwise`: top-left has the least `x + y`,
/// bottom-right the greatest; of the other two, top-right has the least
/// `y − x`.
fn clockwise(p: [Point; 4]) -> [Point; 4] {
    let sum = |q: &Point| q[0] + q[1];
    let first_min = |f: &dyn Fn(&Point) -> f64, idx: &[usize]| {
        let mut best = idx[0];
        for &i in idx {
            if f(&p[i]) < f(&p[best]) {
                best = i;
            }
        }
        best
    };
    let all = [0, 1, 2, 3];
    let tl = first_min(&sum, &all);
    let br = first_min(&|q: &Point| -sum(q), &all);
    let rest: Vec<usize> = all.into_iter().filter(|&i| i != tl && i != br).collect();
    let (tr, bl) = if rest.len() == 2 {
        let tr = first_min(&|q: &Point| q[1] - q[0], &rest);
        (tr, if tr == rest[0] { rest[1] } else { rest[0] })
    } else {
        // Corners tie (a degenerate box): keep the rectangle's order.
        (1, 3)
    };
    [p[tl], p[tr], p[br], p[bl]]
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
    scratch.rows.clear();
    scratch.rows.resize(h, (u32::MAX, 0));
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
            // One 8-connected region: its extent per row.
            let (mut top, mut bottom) = (y0, y0);
            scratch.seen[y0 * w + x0] = 1;
            scratch.stack.clear();
            scratch.stack.push((y0 * w + x0) as u32);
            while let Some(i) = scratch.stack.pop() {
                let (y, x) = (i as usize / w, i as usize % w);
                (top, bottom) = (top.min(y), bottom.max(y));
                let r = &mut scratch.rows[y];
                *r = (r.0.min(x as u32), r.1.max(x as u32));
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
            // The hull of the region's pixel centres: of its rows' ends.
            scratch.points.clear();
            for y in top..=bottom {
                let (a, b) = std::mem::replace(&mut scratch.rows[y], (u32::MAX, 0));
                scratch.points.push([f64::from(a), y as f64]);
                if b != a {
                    scratch.points.push([f64::from(b), y as f64]);
                }
            }
            convex_hull_into(&mut scratch.points, &mut scratch.hull);
            if let Some(b) = region_box(
                prob,
                &scratch.hull,
                (frame_w, frame_h),
                params,
                &mut scratch.mask,
            ) {
                out.push(b);
            }
        }
    }
}

/// A region's box from its hull, or `None` when a rule drops it.
fn region_box(
    prob: ArrayView2<'_, f32>,
    hull: &[Point],
    (frame_w, frame_h): (usize, usize),
    params: &DbParams,
    mask: &mut Vec<u8>,
) -> Option<TextBox> {
    let (h, w) = prob.dim();
    let rect = min_area_rect(hull)?;
    let min_size = params.min_size as f64;
    if rect.short_side() < min_size {
        return None;
    }
    let score = polygon_mean(prob, &rect.corners(), mask);
    if score < params.box_thresh {
        return None;
    }
    // Unclip: the rectangle's area × ratio / perimeter on every side.
    let d = rect.along * rect.across * f64::from(params.unclip_ratio)
        / (2.0 * (rect.along + rect.across));
    let grown = rect.grown(d);
    if grown.short_side() < min_size + 2.0 {
        return None;
    }
    let (sx, sy) = (frame_w as f64 / w as f64, frame_h as f64 / h as f64);
    let scaled = grown.corners().map(|[x, y]| {
        [
            (x * sx).round_ties_even().clamp(0.0, frame_w as f64),
            (y * sy).round_ties_even().clamp(0.0, frame_h as f64),
        ]
    });
    let quad = clockwise(scaled).map(|[x, y]| {
        [
            x.min((frame_w - 1) as f64) as f32,
            y.min((frame_h - 1) as f64) as f32,
        ]
    });
    let sides = TextBox {
        bbox: BBox::default(),
        score: 0.0,
        quad,
    }
    .sides();
    // `filter_tag_det_res`: sides truncated to whole pixels, over 3.
    if sides.0.trunc() <= 3.0 || sides.1.trunc() <= 3.0 {
        return None;
    }
    let xs = quad.map(|p| p[0] as usize);
    let ys = quad.map(|p| p[1] as usize);
    let bbox = BBox::from_corners(
        *xs.iter().min()?,
        *ys.iter().min()?,
        *xs.iter().max()?,
        *ys.iter().max()?,
    );
    Some(TextBox {
        bbox,
        score: score.clamp(0.0, 1.0),
        quad,
    })
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
        // The pixel centres span 19 x 5; d = 19·5·1.5 / (2·24) = 2.96875
        // map pixels, so x 17.03..41.97 and y 7.03..17.97, then ×2 to the
        // frame and rounded.
        assert_eq!(
            b.quad,
            [[34.0, 14.0], [84.0, 14.0], [84.0, 36.0], [34.0, 36.0]]
        );
        assert_eq!(
            (b.bbox.x, b.bbox.y, b.bbox.right(), b.bbox.bottom()),
            (34, 14, 85, 37)
        );
    }

    #[test]
    fn a_tilted_line_is_scored_over_its_own_rectangle() {
        // A line one in three steps down: its bounding box is mostly
        // background, its rectangle is mostly text.
        let mut prob = Array2::<f32>::zeros((60, 100));
        for x in 10..90 {
            let y = 10 + x / 3;
            prob.slice_mut(ndarray::s![y..y + 5, x]).fill(0.9);
        }
        let mut out = Vec::new();
        db_boxes_into(
            prob.view(),
            (100, 60),
            &DbParams::PP_OCR,
            &mut DbScratch::default(),
            &mut out,
        );
        assert_eq!(out.len(), 1, "{out:?}");
        let b = out[0];
        assert!(b.score > 0.6, "{}", b.score);
        let bbox_mean = prob.slice(ndarray::s![13..44, 10..90]).mean().unwrap();
        assert!(
            bbox_mean < 0.6,
            "the bounding box would drop it: {bbox_mean}"
        );
        // Tilted: the top edge climbs about a third of its run.
        let [tl, tr, ..] = b.quad;
        let slope = (tr[1] - tl[1]) / (tr[0] - tl[0]);
        assert!((slope - 1.0 / 3.0).abs() < 0.05, "{slope}");
    }

    #[test]
    fn small_and_empty_maps_give_no_box() {
        let mut prob = Array2::<f32>::zeros((10, 10));
        prob[[5, 5]] = 1.0; // one pixel: under min_size
        let mut out = vec![TextBox::upright(BBox::default(), 0.0)];
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
