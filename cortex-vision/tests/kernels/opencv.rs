//! The pure-Rust kernels against their OpenCV 4.x references (feature
//! `opencv`), on seeded random textured frames, tiny frames and the committed
//! real photographs. Each test prints the agreement it measured.

use crate::common::*;
use cortex_vision::ops::{self, opencv as cv, GrayImage, MotionParams, SceneParams, ScoreMap};

fn setup() {
    cv::single_threaded().expect("OpenCV settings");
}

const SIZES: &[(usize, usize)] = &[
    (480, 640),
    (388, 584),
    (101, 67),
    (33, 17),
    (12, 30),
    (7, 9),
    (3, 3),
    (2, 5),
    (1, 6),
    (5, 1),
    (1, 1),
];

fn photos_gray() -> Vec<(&'static str, GrayImage)> {
    ["fruits.jpg", "rubberwhale1.jpg", "rubberwhale2.jpg"]
        .into_iter()
        .map(|n| (n, ops::to_gray(&photo(n)).unwrap()))
        .collect()
}

#[test]
fn to_gray_matches_cvtcolor() {
    setup();
    let mut r = rng(1);
    let mut frames: Vec<_> = SIZES
        .iter()
        .map(|&(h, w)| textured_rgb(&mut r, h, w))
        .collect();
    frames.push(ops::RgbFrame::from_shape_fn((37, 53, 3), |_| {
        rand::Rng::gen(&mut r)
    }));
    for n in ["fruits.jpg", "rubberwhale1.jpg"] {
        frames.push(photo(n));
    }
    let mut worst = 0;
    let mut differing = 0;
    for f in &frames {
        let ours = ops::to_gray(f).unwrap();
        let theirs = cv::to_gray(f).unwrap();
        for (&a, &b) in ours.iter().zip(&theirs) {
            worst = worst.max(a.abs_diff(b));
            differing += usize::from(a != b);
        }
    }
    eprintln!("to_gray: max |diff| = {worst} level(s), {differing} differing pixels");
    // The registry declares this kernel bit-identical to the pure one (its
    // policy lets measurement choose only such kernels).
    assert_eq!(worst, 0, "{differing} differing pixels");
}

#[test]
fn blur_variance_matches_laplacian_meanstddev() {
    setup();
    let mut r = rng(2);
    let mut imgs: Vec<_> = SIZES
        .iter()
        .map(|&(h, w)| textured_gray(&mut r, h, w))
        .collect();
    imgs.extend(photos_gray().into_iter().map(|(_, g)| g));
    let mut worst = 0.0f64;
    for g in &imgs {
        let ours = ops::laplacian_variance(g).unwrap();
        let theirs = cv::laplacian_variance(g).unwrap();
        let rel = if theirs == 0.0 {
            ours.abs()
        } else {
            ((ours - theirs) / theirs).abs()
        };
        worst = worst.max(rel);
        assert!(rel <= 1e-9, "{:?}: {ours} vs {theirs}", g.dim());
        let p = ops::BlurParams::default();
        if (theirs - p.threshold).abs() > 1e-6 * p.threshold {
            assert_eq!(
                ops::blur_detector(g).unwrap().is_blurry,
                cv::blur_detector(g, &p).unwrap().is_blurry
            );
        }
    }
    eprintln!("blur_detector: max relative error of the variance = {worst:.3e}");
}

#[test]
fn ssim_matches_quality_ssim() {
    setup();
    let mut r = rng(3);
    let mut pairs = Vec::new();
    for &(h, w) in SIZES {
        let a = textured_gray(&mut r, h, w);
        let b = next_frame(&mut r, &a, 1, 2, 12);
        pairs.push((a.clone(), b));
        pairs.push((a, textured_gray(&mut r, h, w)));
    }
    let ph = photos_gray();
    pairs.push((ph[1].1.clone(), ph[2].1.clone()));
    let f = ph[0].1.clone();
    pairs.push((f.clone(), next_frame(&mut r, &f, 0, 0, 20)));
    pairs.push((f.clone(), next_frame(&mut r, &f, 3, -4, 0)));
    let mut worst = 0.0f64;
    for (a, b) in &pairs {
        let ours = ops::ssim(a, b).unwrap();
        let theirs = cv::ssim(a, b).unwrap();
        let d = (ours - theirs).abs();
        worst = worst.max(d);
        assert!(d <= 1e-4, "{:?}: {ours} vs {theirs}", a.dim());
        let p = SceneParams::default();
        if (theirs - p.threshold).abs() > 1e-4 {
            assert_eq!(
                ops::scene_change(a, b).unwrap(),
                cv::scene_change(a, b, &p).unwrap().map_ssim(ours)
            );
        }
    }
    eprintln!(
        "scene_change: max |SSIM − QualitySSIM| = {worst:.3e} over {} pairs",
        pairs.len()
    );
    // First frame and a resolution change: the same rule on both backends.
    let a = &pairs[0].0;
    let empty = GrayImage::zeros((0, 0));
    assert_eq!(
        ops::scene_change(a, &empty).unwrap(),
        cv::scene_change(a, &empty, &SceneParams::default()).unwrap()
    );
}

/// Replaces the SSIM value (so decisions can be compared across backends).
trait MapSsim {
    fn map_ssim(self, s: f64) -> Self;
}
impl MapSsim for ops::SceneChange {
    fn map_ssim(mut self, s: f64) -> Self {
        self.ssim = self.ssim.map(|_| s);
        self
    }
}

#[test]
fn saliency_resizes_match_opencv() {
    setup();
    let mut r = rng(4);
    let mut s = ops::resize::ResizeScratch::default();
    let mut sizes = SIZES.to_vec();
    sizes.extend([(128, 128), (64, 64), (32, 32), (1080, 1920), (200, 7)]);
    for &(h, w) in &sizes {
        let g = textured_gray(&mut r, h, w);
        let theirs = cv::resize_linear_exact_u8(&g, 64, 64).unwrap();
        let mut ours = vec![0u8; 64 * 64];
        ops::resize::resize_linear_exact_u8(
            g.as_slice().unwrap(),
            (h, w),
            &mut ours,
            (64, 64),
            &mut s,
        )
        .unwrap();
        assert_eq!(
            ours.as_slice(),
            theirs.as_slice().unwrap(),
            "{h}x{w} -> 64x64"
        );
        // And back up on f32.
        let small = ScoreMap::from_shape_fn((64, 64), |_| rand::Rng::gen(&mut r));
        let theirs = cv::resize_linear_f32(&small, h, w).unwrap();
        let mut ours = ScoreMap::zeros((h, w));
        ops::resize::resize_linear_f32(
            small.as_slice().unwrap(),
            (64, 64),
            ours.as_slice_mut().unwrap(),
            (h, w),
            &mut s,
        )
        .unwrap();
        let d = max_abs_diff(&ours, &theirs);
        assert!(d <= 1e-6, "64x64 -> {h}x{w}: {d}");
    }
}

#[test]
fn saliency_matches_spectral_residual() {
    setup();
    let mut r = rng(5);
    let mut imgs: Vec<(String, GrayImage)> = [
        (480, 640),
        (388, 584),
        (1080, 1920),
        (128, 128),
        (64, 64),
        (50, 100),
        (20, 30),
        (7, 9),
    ]
    .iter()
    .map(|&(h, w)| (format!("textured {w}x{h}"), textured_gray(&mut r, h, w)))
    .collect();
    imgs.extend(photos_gray().into_iter().map(|(n, g)| (n.to_string(), g)));
    let (mut worst_d, mut worst_r) = (0.0f64, 1.0f64);
    for (name, g) in &imgs {
        let ours = ops::saliency_dft(g).unwrap();
        let theirs = cv::saliency_dft(g).unwrap();
        let d = max_abs_diff(&ours, &theirs);
        let c = pearson(&ours, &theirs);
        eprintln!("saliency {name}: max |diff| = {d:.3e}, Pearson = {c:.8}");
        worst_d = worst_d.max(d);
        worst_r = worst_r.min(c);
    }
    assert!(
        worst_d <= 1e-2 && worst_r >= 0.999,
        "max diff {worst_d}, r {worst_r}"
    );
    eprintln!("saliency_dft: worst max |diff| = {worst_d:.3e}, worst Pearson = {worst_r:.8}");
    // A non-square working size (OpenCV's setImageWidth/Height).
    let p = ops::SaliencyParams {
        width: 80,
        height: 48,
    };
    let g = &imgs[0].1;
    let (ours, theirs) = (
        ops::saliency_dft_with(g, &p).unwrap(),
        cv::saliency_dft_with(g, &p).unwrap(),
    );
    let (d, c) = (max_abs_diff(&ours, &theirs), pearson(&ours, &theirs));
    eprintln!("saliency 80x48 working size: max |diff| = {d:.3e}, Pearson = {c:.8}");
    assert!(d <= 1e-2 && c >= 0.999);
}

#[test]
fn motion_map_matches_absdiff_area_resize() {
    setup();
    let mut r = rng(6);
    let mut pairs = Vec::new();
    let mut sizes = SIZES.to_vec();
    sizes.extend([(1080, 1920), (720, 1280), (37, 53), (5, 200)]);
    for &(h, w) in &sizes {
        let a = textured_gray(&mut r, h, w);
        let b = next_frame(&mut r, &a, 2, -3, 8);
        pairs.push((a, b));
    }
    let ph = photos_gray();
    pairs.push((ph[2].1.clone(), ph[1].1.clone()));
    let mut worst = 0.0f64;
    for p in [
        MotionParams::default(),
        MotionParams {
            grid_w: 7,
            grid_h: 5,
        },
        MotionParams {
            grid_w: 1,
            grid_h: 1,
        },
    ] {
        for (a, b) in &pairs {
            let ours = ops::motion_map_with(a, b, &p).unwrap();
            let theirs = cv::motion_map(a, b, &p).unwrap();
            let d = max_abs_diff(&ours, &theirs);
            worst = worst.max(d);
            assert!(
                d <= 1e-5,
                "{:?} grid {}x{}: {d}",
                a.dim(),
                p.grid_w,
                p.grid_h
            );
        }
    }
    eprintln!("motion_map: max |diff| = {worst:.3e}");
    let a = &pairs[0].0;
    let empty = GrayImage::zeros((0, 0));
    assert_eq!(
        ops::motion_map(a, &empty).unwrap(),
        cv::motion_map(a, &empty, &MotionParams::default()).unwrap()
    );
}

/// The score maps the labelling is checked on: the fused-map-like saliency
/// of textured frames at every test size (including one-row and one-column
/// maps) and of the photographs, and the text map of the photographs, whose
/// regions are many small boxes.
fn region_maps() -> Vec<(String, ScoreMap)> {
    let mut r = rng(9);
    let mut maps: Vec<(String, ScoreMap)> = SIZES
        .iter()
        .map(|&(h, w)| {
            let g = textured_gray(&mut r, h, w);
            let p = ops::SaliencyParams {
                width: w.min(64),
                height: h.min(64),
            };
            (
                format!("saliency {w}x{h}"),
                ops::saliency_dft_with(&g, &p).unwrap(),
            )
        })
        .collect();
    for (name, g) in photos_gray() {
        maps.push((format!("saliency {name}"), ops::saliency_dft(&g).unwrap()));
        let text = ops::text_roi::text_map(&g).unwrap();
        maps.push((format!("text map {name}"), text));
    }
    maps
}

/// Every region of `map` (no area floor, no margin, no count cap): bbox,
/// area, peak-relative score, mass.
fn all_regions(map: &ScoreMap) -> Vec<ops::roi_regions::Region> {
    let p = ops::roi_regions::RegionParams {
        max_regions: map.len() + 1,
        min_area: 0.0,
        margin: 0,
        ..ops::roi_regions::RegionParams::DEFAULT
    };
    ops::roi_regions::roi_regions_with(map, &p).unwrap().regions
}

#[test]
fn regions_match_connected_components_with_stats() {
    use opencv::core::{Mat, Rect};
    use opencv::prelude::*;
    setup();
    let mut checked = 0;
    for (name, map) in region_maps() {
        let (h, w) = map.dim();
        let peak = map
            .iter()
            .copied()
            .filter(|v| v.is_finite())
            .fold(f32::NEG_INFINITY, f32::max);
        let thr = peak * ops::roi_regions::RegionParams::DEFAULT.rel_threshold;
        let mask = GrayImage::from_shape_fn((h, w), |(y, x)| {
            let v = map[[y, x]];
            if v >= thr && v.is_finite() {
                255
            } else {
                0
            }
        });
        let ours = all_regions(&map);
        if peak <= 0.0 || mask.iter().all(|&m| m == 255) {
            assert!(
                ours.is_empty(),
                "{name}: nothing stands out, yet {} regions",
                ours.len()
            );
            continue;
        }
        let (mut labels, mut stats, mut centroids) =
            (Mat::default(), Mat::default(), Mat::default());
        let count = opencv::imgproc::connected_components_with_stats(
            &cv::gray_as_mat(&mask).unwrap(),
            &mut labels,
            &mut stats,
            &mut centroids,
            4,
            opencv::core::CV_32S,
        )
        .unwrap() as usize;
        // Label 0 is the background; each component's mass and maximum
        // summed in row order from OpenCV's label image.
        let mut theirs: Vec<(Rect, usize, f64, f32)> = (1..count)
            .map(|l| {
                let s = |c| *stats.at_2d::<i32>(l as i32, c).unwrap();
                let rect = Rect::new(s(0), s(1), s(2), s(3));
                (rect, s(4) as usize, 0.0, f32::NEG_INFINITY)
            })
            .collect();
        for y in 0..h {
            for x in 0..w {
                let l = *labels.at_2d::<i32>(y as i32, x as i32).unwrap() as usize;
                if l > 0 {
                    let c = &mut theirs[l - 1];
                    c.2 += f64::from(map[[y, x]]);
                    c.3 = c.3.max(map[[y, x]]);
                }
            }
        }
        assert_eq!(ours.len(), theirs.len(), "{name}: component count");
        for o in &ours {
            let b = o.bbox;
            let rect = Rect::new(b.x as i32, b.y as i32, b.width as i32, b.height as i32);
            let t = theirs
                .iter()
                .find(|t| t.0 == rect && t.1 == o.area)
                .unwrap_or_else(|| {
                    panic!(
                        "{name}: no OpenCV component with box {rect:?} and area {}",
                        o.area
                    )
                });
            assert_eq!(o.score, t.3 / peak, "{name}: score of {rect:?}");
            // Summed in another order (flood against rows): equal to f32
            // rounding of the f64 sums.
            let rel = (f64::from(o.mass) - t.2).abs() / t.2.max(f64::MIN_POSITIVE);
            assert!(rel <= 1e-6, "{name}: mass {} against {}", o.mass, t.2);
        }
        checked += ours.len();
    }
    eprintln!("roi_regions: {checked} components equal to connectedComponentsWithStats'");
    assert!(
        checked > 50,
        "too few components to say anything: {checked}"
    );
}
