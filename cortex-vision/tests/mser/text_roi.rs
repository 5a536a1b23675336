//! `text_roi`: bad input, range and shape of the map, text scoring above
//! plain texture, agreement of its entry points, parameter validation.

use crate::support::{glyph_line, load_gray, textured, Lcg};
use cortex_vision::ops::mser::{BBox, MserParams, Polarity, RegionBox};
use cortex_vision::ops::text_roi::{
    text_map, text_map_with, text_roi, text_roi_with, TextRoiDetector, TextRoiParams,
};
use cortex_vision::ops::{GrayImage, OpsError, ScoreMap};

fn mean_in(map: &ScoreMap, b: BBox) -> f32 {
    let view = map.slice(ndarray::s![b.y..b.bottom(), b.x..b.right()]);
    view.sum() / view.len() as f32
}

/// A smooth background with two lines of glyphs (dark, then bright).
fn frame_with_text() -> (GrayImage, [BBox; 2]) {
    let mut img = textured(480, 640, 48, 2, 3).mapv(|v| v / 2 + 64);
    let mut rng = Lcg(1);
    let a = glyph_line(&mut img, 60, 100, 28, 10, 5, &mut rng);
    let b = glyph_line(&mut img, 80, 300, 22, 12, 250, &mut rng);
    (img, [a, b])
}

#[test]
fn empty_image_is_an_error() {
    for dim in [(0, 0), (0, 5), (5, 0)] {
        let img = GrayImage::zeros(dim);
        assert!(matches!(text_roi(&img), Err(OpsError::Empty { .. })));
        assert!(matches!(text_map(&img), Err(OpsError::Empty { .. })));
    }
}

#[test]
fn tiny_and_uniform_images_give_a_zero_map() {
    for (dim, v) in [
        ((1, 1), 0u8),
        ((2, 7), 9),
        ((3, 3), 200),
        ((9, 9), 1),
        ((480, 640), 128),
    ] {
        let img = GrayImage::from_elem(dim, v);
        let roi = text_roi(&img).expect("ok");
        assert_eq!(roi.map.dim(), dim);
        assert!(roi.map.iter().all(|&s| s == 0.0));
        assert!(roi.boxes.is_empty());
    }
}

#[test]
fn text_scores_above_its_surroundings() {
    let (img, lines) = frame_with_text();
    let roi = text_roi(&img).expect("ok");
    assert_eq!(roi.map.dim(), img.dim());
    assert!(roi.map.iter().all(|&s| (0.0..=1.0).contains(&s)));
    let overall = roi.map.mean().unwrap_or(0.0);
    for line in lines {
        let inside = mean_in(&roi.map, line);
        println!("line {line:?}: mean {inside:.3}, frame mean {overall:.3}");
        // Glyph boxes cover about a third of the line's box.
        assert!(inside > 0.2, "{inside}");
        assert!(inside > 4.0 * overall, "{inside} vs {overall}");
        assert!(roi.boxes.iter().any(|b| b.iou(&line) > 0.0));
    }
    // Away from the text, the texture scores far lower (its extrema do make
    // a few text-like blobs, so not zero).
    let (mut sum, mut n) = (roi.map.sum(), roi.map.len() as f32);
    for line in lines {
        sum -= mean_in(&roi.map, line) * line.area() as f32;
        n -= line.area() as f32;
    }
    let outside = sum / n;
    println!("outside the lines: mean {outside:.3}");
    for line in lines {
        assert!(mean_in(&roi.map, line) > 5.0 * outside);
    }
}

#[test]
fn boxes_are_sorted_unique_and_inside() {
    let (img, _) = frame_with_text();
    let roi = text_roi(&img).expect("ok");
    assert!(!roi.boxes.is_empty());
    assert!(roi.boxes.windows(2).all(|w| w[0] < w[1]));
    for b in &roi.boxes {
        assert!(b.right() <= 640 && b.bottom() <= 480);
        let aspect = b.width as f32 / b.height as f32;
        assert!((0.1..=3.0).contains(&aspect));
        assert!((4.8..=240.0).contains(&(b.height as f32)));
    }
}

#[test]
fn entry_points_agree() {
    let img = load_gray("scenetext01.jpg");
    let roi = text_roi(&img).expect("ok");
    assert!(roi.boxes.len() > 10);
    assert!(roi.map.iter().any(|&s| s > 0.5));
    assert_eq!(text_map(&img).expect("ok"), roi.map);
    let seq = TextRoiParams {
        parallel: false,
        ..TextRoiParams::default()
    };
    assert_eq!(text_roi_with(&img, &seq).expect("ok"), roi);
    let mut det = TextRoiDetector::new(TextRoiParams::default()).expect("ok");
    assert_eq!(det.detect(&img).expect("ok"), roi);
    // Twice: scratch reuse must not change anything.
    assert_eq!(det.detect(&img).expect("ok"), roi);
    // Deref / AsRef give the map (how a score_fusion input takes it).
    let as_map: &ScoreMap = roi.as_ref();
    assert_eq!(as_map.dim(), roi.dim());
    // Concurrent callers each use their own thread-local scratch.
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..3).map(|_| s.spawn(|| text_roi(&img))).collect();
        for h in handles {
            assert_eq!(h.join().expect("no panic").expect("ok"), roi);
        }
    });
}

#[test]
fn single_polarity_only_sees_its_text() {
    let (img, [dark_line, bright_line]) = frame_with_text();
    let dark = TextRoiParams {
        polarity: Polarity::Dark,
        ..TextRoiParams::default()
    };
    let map = text_map_with(&img, &dark).expect("ok");
    assert!(mean_in(&map, dark_line) > 0.2);
    assert!(mean_in(&map, bright_line) < mean_in(&map, dark_line) / 2.0);
}

#[test]
fn filters_follow_the_parameters() {
    let p = TextRoiParams::default();
    let b = |w, h, area| RegionBox {
        bbox: BBox {
            x: 0,
            y: 0,
            width: w,
            height: h,
        },
        area,
        polarity: Polarity::Dark,
    };
    assert!(p.is_text_like(&b(10, 20, 100), 480));
    assert!(!p.is_text_like(&b(70, 20, 700), 480), "aspect 3.5");
    assert!(!p.is_text_like(&b(10, 20, 190), 480), "extent 0.95");
    assert!(!p.is_text_like(&b(10, 20, 30), 480), "extent 0.15");
    assert!(
        !p.is_text_like(&b(100, 300, 10_000), 480),
        "taller than half the frame"
    );
    assert!(!p.is_text_like(&b(3, 4, 6), 480), "shorter than 1 %");
    assert!(!p.is_text_like(&b(0, 4, 0), 480));
}

#[test]
fn invalid_parameters_are_rejected() {
    let img = GrayImage::zeros((20, 20));
    let base = TextRoiParams::default();
    let bad = [
        TextRoiParams {
            min_aspect: 2.0,
            max_aspect: 1.0,
            ..base
        },
        TextRoiParams {
            min_extent: f32::NAN,
            ..base
        },
        TextRoiParams {
            max_height_frac: f32::INFINITY,
            ..base
        },
        TextRoiParams {
            saturation: 0.0,
            ..base
        },
        TextRoiParams {
            smooth_frac: -1.0,
            ..base
        },
        TextRoiParams {
            mser: MserParams {
                min_area: 100,
                max_area: 50,
                ..MserParams::default()
            },
            ..base
        },
    ];
    for p in bad {
        assert!(
            matches!(text_roi_with(&img, &p), Err(OpsError::InvalidParam { .. })),
            "{p:?}"
        );
        assert!(TextRoiDetector::new(p).is_err());
    }
}

#[test]
fn map_is_the_documented_box_density() {
    // Brute force: count the kept boxes per pixel, average over the clipped
    // (2r+1)² window, divide by the saturation, clip at 1.
    use cortex_vision::ops::mser::Mser;
    let (img, _) = frame_with_text();
    let (rows, cols) = img.dim();
    let p = TextRoiParams::default();
    let kept: Vec<RegionBox> = Mser::new(p.mser)
        .expect("ok")
        .detect_boxes(&img, p.polarity)
        .expect("ok")
        .into_iter()
        .filter(|r| p.is_text_like(r, rows))
        .collect();
    let mut count = ndarray::Array2::<f64>::zeros((rows, cols));
    for r in &kept {
        let b = r.bbox;
        count
            .slice_mut(ndarray::s![b.y..b.bottom(), b.x..b.right()])
            .mapv_inplace(|c| c + 1.0);
    }
    let radius = ((p.smooth_frac * rows.min(cols) as f32).round() as usize).max(1);
    let map = text_map(&img).expect("ok");
    for y in (0..rows).step_by(7) {
        for x in (0..cols).step_by(5) {
            let (ya, yb) = (y.saturating_sub(radius), (y + radius + 1).min(rows));
            let (xa, xb) = (x.saturating_sub(radius), (x + radius + 1).min(cols));
            let window = count.slice(ndarray::s![ya..yb, xa..xb]);
            let want = (window.sum() / window.len() as f64 / f64::from(p.saturation)).min(1.0);
            let got = f64::from(map[[y, x]]);
            assert!((got - want).abs() < 1e-5, "({x}, {y}): {got} vs {want}");
        }
    }
}

/// The partition-parallel MSER path gives the same map and boxes as the
/// plain flood: forced strip counts, and the automatic choice on pools of
/// one, two, four and six threads.
#[test]
fn partitioned_mser_gives_the_same_map_and_boxes() {
    let frames = [
        load_gray("scenetext01.jpg"),
        load_gray("scenetext06.jpg"),
        frame_with_text().0,
    ];
    let plain = TextRoiParams {
        partitions: 1,
        ..TextRoiParams::DEFAULT
    };
    for img in &frames {
        let expected = text_roi_with(img, &plain).expect("plain");
        for strips in [2, 3, 7] {
            for polarity in [Polarity::Both, Polarity::Dark] {
                let p = TextRoiParams {
                    partitions: strips,
                    polarity,
                    ..TextRoiParams::DEFAULT
                };
                let reference = TextRoiParams { polarity, ..plain };
                assert_eq!(
                    text_roi_with(img, &p).expect("partitioned"),
                    text_roi_with(img, &reference).expect("plain"),
                    "{strips} strips, {polarity:?}"
                );
            }
        }
        for threads in [1, 2, 4, 6] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("pool");
            let got = pool.install(|| text_roi_with(img, &TextRoiParams::DEFAULT));
            assert_eq!(got.expect("auto"), expected, "{threads} threads");
        }
    }
    let p = TextRoiParams::DEFAULT;
    let budget = 256 << 20;
    let vga = 640 * 480;
    assert_eq!(p.strips_per_polarity(1, vga, budget), 1);
    assert_eq!(p.strips_per_polarity(2, vga, budget), 1);
    assert_eq!(p.strips_per_polarity(4, vga, budget), 2);
    assert_eq!(p.strips_per_polarity(8, vga, budget), 4);
    // 1080p: two partitioned polarities would not fit in half the budget.
    assert_eq!(p.strips_per_polarity(8, 1920 * 1080, budget), 1);
    assert_eq!(p.strips_per_polarity(8, 1920 * 1080, 4 * budget), 4);
    let dark = TextRoiParams {
        polarity: Polarity::Dark,
        ..p
    };
    assert_eq!(dark.strips_per_polarity(2, vga, budget), 2);
    let forced = TextRoiParams { partitions: 3, ..p };
    assert_eq!(forced.strips_per_polarity(2, 1920 * 1080, budget), 3);
    let off = TextRoiParams {
        parallel: false,
        partitions: 4,
        ..p
    };
    assert_eq!(off.strips_per_polarity(8, vga, budget), 1);
}
