//! Helpers shared by the MSER and text-ROI tests: synthetic frames, a tiny
//! glyph rasterizer, photo loading, and the agreement metrics of two region sets.
#![allow(dead_code)] // each test binary uses a different subset

use cortex_vision::ops::mser::{BBox, Region};
use cortex_vision::ops::GrayImage;
use ndarray::Array2;

/// A small deterministic generator (64-bit LCG), so that test images do not
/// depend on `rand`'s algorithm choices.
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next_u32(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) as u32
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u32) -> u32 {
        self.next_u32() % n.max(1)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 / (1u32 << 23) as f32
    }
}

/// Smooth random texture (bilinear value noise on a `cell`-pixel grid) plus
/// ±`grain` uniform pixel noise.
pub fn textured(rows: usize, cols: usize, cell: usize, grain: u32, seed: u64) -> GrayImage {
    let mut rng = Lcg(seed);
    let (gh, gw) = (rows / cell + 2, cols / cell + 2);
    let grid: Vec<f32> = (0..gh * gw).map(|_| rng.below(256) as f32).collect();
    let g = |y: usize, x: usize| grid[y * gw + x];
    Array2::from_shape_fn((rows, cols), |(y, x)| {
        let (fy, fx) = (y as f32 / cell as f32, x as f32 / cell as f32);
        let (iy, ix) = (fy as usize, fx as usize);
        let (ty, tx) = (fy - iy as f32, fx - ix as f32);
        let v = g(iy, ix) * (1.0 - ty) * (1.0 - tx)
            + g(iy, ix + 1) * (1.0 - ty) * tx
            + g(iy + 1, ix) * ty * (1.0 - tx)
            + g(iy + 1, ix + 1) * ty * tx;
        let n = rng.below(2 * grain + 1) as f32 - grain as f32;
        (v + n).clamp(0.0, 255.0) as u8
    })
}

/// Draws a thick segment from `(x0, y0)` to `(x1, y1)`.
pub fn stroke(img: &mut GrayImage, a: (f32, f32), b: (f32, f32), thickness: f32, value: u8) {
    let (rows, cols) = img.dim();
    let r = thickness / 2.0;
    let (xmin, xmax) = (a.0.min(b.0) - r, a.0.max(b.0) + r);
    let (ymin, ymax) = (a.1.min(b.1) - r, a.1.max(b.1) + r);
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len2 = (dx * dx + dy * dy).max(1e-6);
    for y in (ymin.floor().max(0.0) as usize)..=(ymax.ceil().max(0.0) as usize).min(rows - 1) {
        for x in (xmin.floor().max(0.0) as usize)..=(xmax.ceil().max(0.0) as usize).min(cols - 1) {
            let (px, py) = (x as f32 - a.0, y as f32 - a.1);
            let t = ((px * dx + py * dy) / len2).clamp(0.0, 1.0);
            let (ex, ey) = (px - t * dx, py - t * dy);
            if ex * ex + ey * ey <= r * r {
                img[[y, x]] = value;
            }
        }
    }
}

/// Draws `n` glyph-like characters (2–4 random strokes each in a
/// `height × 0.6·height` cell) starting at `(x, y)`, the top-left corner.
/// Returns the box of the text line.
pub fn glyph_line(
    img: &mut GrayImage,
    x: usize,
    y: usize,
    height: usize,
    n: usize,
    value: u8,
    rng: &mut Lcg,
) -> BBox {
    let h = height as f32;
    let w = 0.6 * h;
    let t = (h / 7.0).max(2.0);
    for i in 0..n {
        let ox = x as f32 + i as f32 * (w + 0.35 * h);
        let oy = y as f32;
        let corner = |rng: &mut Lcg| {
            (
                ox + t / 2.0 + rng.unit() * (w - t),
                oy + t / 2.0 + rng.unit() * (h - t),
            )
        };
        // A vertical stem keeps every glyph connected and text-shaped.
        let stem_x = ox + t / 2.0 + rng.unit() * (w - t);
        stroke(
            img,
            (stem_x, oy + t / 2.0),
            (stem_x, oy + h - t / 2.0),
            t,
            value,
        );
        for _ in 0..1 + rng.below(3) {
            let a = (stem_x, oy + t / 2.0 + rng.unit() * (h - t));
            let b = corner(rng);
            stroke(img, a, b, t, value);
        }
    }
    let width = (n as f32 * (w + 0.35 * h)) as usize;
    BBox {
        x,
        y,
        width,
        height,
    }
}

/// A textured 640×480-style frame with lines of dark and bright glyphs.
pub fn text_frame(rows: usize, cols: usize, seed: u64) -> GrayImage {
    let mut img = textured(rows, cols, 24, 6, seed);
    let mut rng = Lcg(seed ^ 0x9e37_79b9_7f4a_7c15);
    let lines = (rows / 60).max(1);
    for l in 0..lines {
        let height = 14 + rng.below(24) as usize;
        let y = l * rows / lines + rng.below(10) as usize;
        if y + height + 2 >= rows {
            continue;
        }
        let x = 4 + rng.below((cols / 4) as u32) as usize;
        let n = ((cols - x) / height).clamp(1, 12);
        let value = if l % 2 == 0 { 10 } else { 245 };
        glyph_line(&mut img, x, y, height, n, value, &mut rng);
    }
    img
}

/// Loads a test photo from `tests/data/` as 8-bit gray (ITU-R 601 luma,
/// the `image` crate's conversion).
pub fn load_gray(name: &str) -> GrayImage {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    let img = image::open(&path)
        .unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
        .to_luma8();
    let (w, h) = img.dimensions();
    Array2::from_shape_vec((h as usize, w as usize), img.into_raw()).expect("buffer matches size")
}

/// How well two region sets agree.
#[derive(Debug, Clone, Copy)]
pub struct Agreement {
    pub ours: usize,
    pub theirs: usize,
    /// Reference boxes matched by one of ours with IoU ≥ the threshold.
    pub matched: usize,
    /// Regions identical in box and area on both sides (multiset).
    pub identical: usize,
}

impl Agreement {
    /// `|ours − theirs| / theirs`.
    pub fn count_diff(&self) -> f64 {
        (self.ours as f64 - self.theirs as f64).abs() / (self.theirs.max(1) as f64)
    }

    /// Fraction of the reference boxes matched.
    pub fn matched_frac(&self) -> f64 {
        if self.theirs == 0 {
            1.0
        } else {
            self.matched as f64 / self.theirs as f64
        }
    }
}

/// Compares our regions with reference regions.
pub fn agreement(ours: &[Region], theirs: &[Region], min_iou: f64) -> Agreement {
    let mut ours_sorted: Vec<BBox> = ours.iter().map(|r| r.bbox).collect();
    ours_sorted.sort_unstable_by_key(|b| b.x);
    let matched = theirs
        .iter()
        .filter(|t| {
            // IoU ≥ 0.9 needs the left edges within 10 % of the wider box.
            let slack = t.bbox.width;
            let lo = ours_sorted.partition_point(|b| b.x + slack < t.bbox.x);
            ours_sorted[lo..]
                .iter()
                .take_while(|b| b.x <= t.bbox.x + slack)
                .any(|b| b.iou(&t.bbox) >= min_iou)
        })
        .count();
    let key = |r: &Region| (r.bbox, r.pixels.len(), r.polarity);
    let mut a: Vec<_> = ours.iter().map(key).collect();
    let mut b: Vec<_> = theirs.iter().map(key).collect();
    a.sort_unstable();
    b.sort_unstable();
    let (mut i, mut j, mut identical) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                identical += 1;
                i += 1;
                j += 1;
            }
        }
    }
    Agreement {
        ours: ours.len(),
        theirs: theirs.len(),
        matched,
        identical,
    }
}

/// A proptest strategy: random small images with sides in `sides`,
/// quantized by a random shift in `shifts` (so plateaus and equal-size ties
/// are common), with random MSER parameters (`max_area = min_area + extra`,
/// `extra` in `extra`).
pub fn random_case(
    sides: std::ops::Range<usize>,
    shifts: std::ops::RangeInclusive<u32>,
    extra: std::ops::Range<u32>,
) -> impl proptest::strategy::Strategy<Value = (GrayImage, cortex_vision::ops::mser::MserParams)> {
    use proptest::prelude::*;
    (
        sides.clone(),
        sides,
        shifts,
        any::<u64>(),
        1u8..12,
        1u32..80,
        extra,
        0.0f64..1.5,
    )
        .prop_map(
            |(rows, cols, shift, seed, delta, min_area, extra, max_variation)| {
                let mut rng = Lcg(seed);
                let img = Array2::from_shape_fn((rows, cols), |_| {
                    ((rng.below(256) >> shift) << shift) as u8
                });
                let p = cortex_vision::ops::mser::MserParams {
                    delta,
                    min_area,
                    max_area: min_area + extra,
                    max_variation,
                };
                (img, p)
            },
        )
}
