//! The plane geometry of DB's boxes: the convex hull of a region's pixels,
//! its minimum-area rectangle (OpenCV's `minAreaRect`, by rotating an
//! edge of the hull), a rectangle's corners in PaddleOCR's order, and the
//! mean of a map over a convex polygon (PaddleOCR's `box_score_fast`).

use ndarray::ArrayView2;

/// A point, `[x, y]`.
pub type Point = [f64; 2];

fn cross(o: Point, a: Point, b: Point) -> f64 {
    (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
}

/// The convex hull of `points` (sorted and deduplicated in place),
/// counter-clockwise in a y-up frame, into `hull` (Andrew's monotone chain;
/// collinear points dropped).
pub(crate) fn convex_hull_into(points: &mut [Point], hull: &mut Vec<Point>) {
    hull.clear();
    points.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
    if points.len() < 3 {
        hull.extend_from_slice(points);
        return;
    }
    for &p in points.iter() {
        while hull.len() >= 2 && cross(hull[hull.len() - 2], hull[hull.len() - 1], p) <= 0.0 {
            hull.pop();
        }
        hull.push(p);
    }
    let lower = hull.len() + 1;
    for &p in points.iter().rev().skip(1) {
        while hull.len() >= lower && cross(hull[hull.len() - 2], hull[hull.len() - 1], p) <= 0.0 {
            hull.pop();
        }
        hull.push(p);
    }
    hull.pop();
}

/// A rotated rectangle: its centre, its side along `axis` and across it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RotatedRect {
    /// Centre.
    pub center: Point,
    /// Unit vector of the first side.
    pub axis: Point,
    /// Length along `axis`.
    pub along: f64,
    /// Length across `axis`.
    pub across: f64,
}

impl RotatedRect {
    /// The shorter side.
    pub fn short_side(&self) -> f64 {
        self.along.min(self.across)
    }

    /// The same rectangle grown by `d` on every side.
    pub fn grown(&self, d: f64) -> RotatedRect {
        RotatedRect {
            along: self.along + 2.0 * d,
            across: self.across + 2.0 * d,
            ..*self
        }
    }

    /// Its four corners, in PaddleOCR's `get_mini_boxes` order: sorted by
    /// x, the left pair top first, then the right pair top first, as
    /// top-left, top-right, bottom-right, bottom-left.
    pub fn corners(&self) -> [Point; 4] {
        let [ux, uy] = self.axis;
        let (a, b) = (self.along / 2.0, self.across / 2.0);
        let [cx, cy] = self.center;
        let mut p = [
            [cx - ux * a + uy * b, cy - uy * a - ux * b],
            [cx + ux * a + uy * b, cy + uy * a - ux * b],
            [cx + ux * a - uy * b, cy + uy * a + ux * b],
            [cx - ux * a - uy * b, cy - uy * a + ux * b],
        ];
        p.sort_by(|a, b| a[0].total_cmp(&b[0]));
        let (tl, bl) = if p[1][1] > p[0][1] {
            (p[0], p[1])
        } else {
            (p[1], p[0])
        };
        let (tr, br) = if p[3][1] > p[2][1] {
            (p[2], p[3])
        } else {
            (p[3], p[2])
        };
        [tl, tr, br, bl]
    }
}

/// The rectangle of least area holding `hull` (a convex polygon): one of
/// its sides lies on an edge of the hull, so each edge is tried. `None`
/// for fewer than two points.
pub(crate) fn min_area_rect(hull: &[Point]) -> Option<RotatedRect> {
    if hull.len() < 2 {
        return hull.first().map(|&c| RotatedRect {
            center: c,
            axis: [1.0, 0.0],
            along: 0.0,
            across: 0.0,
        });
    }
    let mut best: Option<(f64, RotatedRect)> = None;
    for i in 0..hull.len() {
        let (p, q) = (hull[i], hull[(i + 1) % hull.len()]);
        let (dx, dy) = (q[0] - p[0], q[1] - p[1]);
        let len = dx.hypot(dy);
        if len == 0.0 {
            continue;
        }
        let u = [dx / len, dy / len];
        let (mut lo_a, mut hi_a, mut lo_c, mut hi_c) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for &h in hull {
            let a = h[0] * u[0] + h[1] * u[1];
            let c = -h[0] * u[1] + h[1] * u[0];
            (lo_a, hi_a) = (lo_a.min(a), hi_a.max(a));
            (lo_c, hi_c) = (lo_c.min(c), hi_c.max(c));
        }
        let area = (hi_a - lo_a) * (hi_c - lo_c);
        if best.as_ref().is_none_or(|(b, _)| area < *b) {
            let (ma, mc) = ((lo_a + hi_a) / 2.0, (lo_c + hi_c) / 2.0);
            best = Some((
                area,
                RotatedRect {
                    center: [ma * u[0] - mc * u[1], ma * u[1] + mc * u[0]],
                    axis: u,
                    along: hi_a - lo_a,
                    across: hi_c - lo_c,
                },
            ));
        }
    }
    best.map(|(_, r)| r)
}

/// The mean of `map` over the convex polygon `poly` as PaddleOCR's
/// `box_score_fast` takes it: the window of the polygon's bounding box
/// (floored and ceiled, clamped to the map), the polygon's vertices
/// truncated to integers, and the pixels OpenCV's `fillPoly` marks — those
/// whose centre lies inside, and those its 8-connected lines along the
/// edges pass through (for a thin tilted box, a large share). `mask` is
/// working memory. 0 when no pixel is marked.
pub(crate) fn polygon_mean(map: ArrayView2<'_, f32>, poly: &[Point; 4], mask: &mut Vec<u8>) -> f32 {
    let (h, w) = map.dim();
    if h == 0 || w == 0 {
        return 0.0;
    }
    let clamp = |v: f64, hi: usize| v.clamp(0.0, (hi - 1) as f64) as usize;
    let xs = poly.map(|p| p[0]);
    let ys = poly.map(|p| p[1]);
    let min = |v: [f64; 4]| v.iter().copied().fold(f64::MAX, f64::min);
    let max = |v: [f64; 4]| v.iter().copied().fold(f64::MIN, f64::max);
    let (x0, x1) = (clamp(min(xs).floor(), w), clamp(max(xs).ceil(), w));
    let (y0, y1) = (clamp(min(ys).floor(), h), clamp(max(ys).ceil(), h));
    let (mw, mh) = (x1 - x0 + 1, y1 - y0 + 1);
    mask.clear();
    mask.resize(mw * mh, 0);
    // Window coordinates, truncated towards zero as numpy's astype does.
    let v: [[i64; 2]; 4] = poly.map(|p| [(p[0] - x0 as f64) as i64, (p[1] - y0 as f64) as i64]);
    let mut mark = |x: i64, y: i64| {
        if (0..mw as i64).contains(&x) && (0..mh as i64).contains(&y) {
            mask[y as usize * mw + x as usize] = 1;
        }
    };
    let vf = v.map(|p| [p[0] as f64, p[1] as f64]);
    for y in 0..mh {
        let Some((lo, hi)) = row_span(&vf, y as f64) else {
            continue;
        };
        for x in lo.ceil() as i64..=hi.floor() as i64 {
            mark(x, y as i64);
        }
    }
    for i in 0..4 {
        line_8(v[i], v[(i + 1) % 4], &mut mark);
    }
    let (mut sum, mut n) = (0.0f64, 0usize);
    for (i, _) in mask.iter().enumerate().filter(|(_, &m)| m != 0) {
        sum += f64::from(map[[y0 + i / mw, x0 + i % mw]]);
        n += 1;
    }
    if n == 0 {
        0.0
    } else {
        (sum / n as f64) as f32
    }
}

/// The pixels of an 8-connected line from `a` to `b` (Bresenham: one per
/// step of the longer axis, the other rounded).
fn line_8(a: [i64; 2], b: [i64; 2], mark: &mut impl FnMut(i64, i64)) {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let n = dx.abs().max(dy.abs());
    if n == 0 {
        mark(a[0], a[1]);
        return;
    }
    // Rounded half away from the start, in integers.
    let step = |d: i64, t: i64| d.signum() * ((2 * t * d.abs() + n) / (2 * n));
    for t in 0..=n {
        mark(a[0] + step(dx, t), a[1] + step(dy, t));
    }
}

/// Where the horizontal line at `y` meets the convex polygon `v`: the
/// least and greatest x, if it meets it.
fn row_span(v: &[Point; 4], y: f64) -> Option<(f64, f64)> {
    let (mut lo, mut hi) = (f64::MAX, f64::MIN);
    for i in 0..4 {
        let (p, q) = (v[i], v[(i + 1) % 4]);
        if (p[1] - y) * (q[1] - y) > 0.0 {
            continue;
        }
        if p[1] == q[1] {
            (lo, hi) = (lo.min(p[0].min(q[0])), hi.max(p[0].max(q[0])));
        } else {
            let x = p[0] + (y - p[1]) * (q[0] - p[0]) / (q[1] - p[1]);
            (lo, hi) = (lo.min(x), hi.max(x));
        }
    }
    (lo <= hi).then_some((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tilted_square_has_its_own_rectangle() {
        // A diamond: its least rectangle is itself, rotated 45 degrees.
        let mut pts = vec![[0.0, 5.0], [5.0, 0.0], [10.0, 5.0], [5.0, 10.0], [5.0, 5.0]];
        let mut hull = Vec::new();
        convex_hull_into(&mut pts, &mut hull);
        assert_eq!(hull.len(), 4);
        let r = min_area_rect(&hull).unwrap();
        let side = 50f64.sqrt();
        assert!((r.along - side).abs() < 1e-9 && (r.across - side).abs() < 1e-9);
        assert!((r.center[0] - 5.0).abs() < 1e-9 && (r.center[1] - 5.0).abs() < 1e-9);
    }

    #[test]
    fn an_upright_rectangle_scores_its_inside() {
        let mut map = ndarray::Array2::<f32>::zeros((10, 10));
        map.slice_mut(ndarray::s![2..5, 3..8]).fill(1.0);
        let poly = [[3.0, 2.0], [7.0, 2.0], [7.0, 4.0], [3.0, 4.0]];
        let mut mask = Vec::new();
        assert_eq!(polygon_mean(map.view(), &poly, &mut mask), 1.0);
        let wider = [[2.0, 2.0], [8.0, 2.0], [8.0, 4.0], [2.0, 4.0]];
        assert!((polygon_mean(map.view(), &wider, &mut mask) - 15.0 / 21.0).abs() < 1e-6);
    }
}
