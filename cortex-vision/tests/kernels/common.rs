//! Shared helpers of the kernels' integration tests: seeded textured frames,
//! the committed real photographs, and agreement metrics.
#![allow(dead_code)]

use cortex_vision::ops::{GrayImage, RgbFrame, ScoreMap};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A seeded RNG so failures reproduce.
pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// A textured gray frame: a gradient, a few oriented sinusoids of random
/// frequency, random flat rectangles (hard edges) and per-pixel noise.
/// Nothing like a constant or all-zero image.
pub fn textured_gray(rng: &mut StdRng, h: usize, w: usize) -> GrayImage {
    let waves: Vec<(f64, f64, f64, f64)> = (0..4)
        .map(|_| {
            let f = rng.gen_range(0.01..0.4);
            let a = rng.gen_range(0.0..std::f64::consts::PI);
            (
                f * a.cos(),
                f * a.sin(),
                rng.gen_range(0.0..std::f64::consts::TAU),
                rng.gen_range(10.0..40.0),
            )
        })
        .collect();
    let rects: Vec<(usize, usize, usize, usize, f64)> = (0..6)
        .map(|_| {
            let (y0, x0) = (rng.gen_range(0..h), rng.gen_range(0..w));
            let (y1, x1) = (rng.gen_range(y0..=h), rng.gen_range(x0..=w));
            (y0, x0, y1, x1, rng.gen_range(-60.0..60.0))
        })
        .collect();
    let base = rng.gen_range(60.0..190.0);
    let noise = rng.gen_range(2.0..25.0);
    GrayImage::from_shape_fn((h, w), |(y, x)| {
        let (yf, xf) = (y as f64, x as f64);
        let mut v = base + 40.0 * (xf / w as f64 - 0.5) + 20.0 * (yf / h as f64 - 0.5);
        for &(fx, fy, ph, amp) in &waves {
            v += amp * (fx * xf + fy * yf + ph).sin();
        }
        for &(y0, x0, y1, x1, d) in &rects {
            if (y0..y1).contains(&y) && (x0..x1).contains(&x) {
                v += d;
            }
        }
        v += rng.gen_range(-noise..noise);
        v.round().clamp(0.0, 255.0) as u8
    })
}

/// A textured RGB frame: three textured planes, partly correlated.
pub fn textured_rgb(rng: &mut StdRng, h: usize, w: usize) -> RgbFrame {
    let r = textured_gray(rng, h, w);
    let g = textured_gray(rng, h, w);
    let b = textured_gray(rng, h, w);
    RgbFrame::from_shape_fn((h, w, 3), |(y, x, c)| match c {
        0 => r[[y, x]],
        1 => ((u16::from(r[[y, x]]) + u16::from(g[[y, x]])) / 2) as u8,
        _ => b[[y, x]],
    })
}

/// `img` shifted by `(dy, dx)` (edge pixels repeated) plus uniform noise of
/// amplitude `noise`: a plausible next video frame.
pub fn next_frame(
    rng: &mut StdRng,
    img: &GrayImage,
    dy: isize,
    dx: isize,
    noise: i16,
) -> GrayImage {
    let (h, w) = img.dim();
    GrayImage::from_shape_fn((h, w), |(y, x)| {
        let sy = (y as isize - dy).clamp(0, h as isize - 1) as usize;
        let sx = (x as isize - dx).clamp(0, w as isize - 1) as usize;
        let n = if noise > 0 {
            rng.gen_range(-noise..=noise)
        } else {
            0
        };
        (i16::from(img[[sy, sx]]) + n).clamp(0, 255) as u8
    })
}

/// Loads a committed test photograph as an RGB frame.
pub fn photo(name: &str) -> RgbFrame {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    let img = image::open(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .to_rgb8();
    let (w, h) = (img.width() as usize, img.height() as usize);
    RgbFrame::from_shape_vec((h, w, 3), img.into_raw()).expect("RGB buffer of the right length")
}

/// Largest absolute difference.
pub fn max_abs_diff(a: &ScoreMap, b: &ScoreMap) -> f64 {
    assert_eq!(a.dim(), b.dim());
    a.iter()
        .zip(b)
        .map(|(&x, &y)| (f64::from(x) - f64::from(y)).abs())
        .fold(0.0, f64::max)
}

/// Pearson correlation of two maps.
pub fn pearson(a: &ScoreMap, b: &ScoreMap) -> f64 {
    cortex_testkit::pearson(a.iter().copied(), b.iter().copied())
}
