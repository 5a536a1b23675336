//! `text_roi`'s opt-in half-resolution mode: shape and bounds of its output
//! on odd sizes and views, determinism, and its quality against the
//! full-resolution map on the committed scene-text photos (map correlation,
//! share of full-resolution text boxes found again).

use crate::support::{glyph_line, load_gray, textured, Lcg};
use cortex_vision::ops::mser::BBox;
use cortex_vision::ops::text_roi::{text_roi_with, TextRoi, TextRoiDetector, TextRoiParams};
use cortex_vision::ops::GrayImage;

fn half() -> TextRoiParams {
    TextRoiParams {
        half_resolution: true,
        ..TextRoiParams::default()
    }
}

/// Share of `full`'s boxes that some box of `half` overlaps with IoU ≥ `iou`.
fn found_again(full: &[BBox], half: &[BBox], iou: f64) -> f64 {
    if full.is_empty() {
        return 1.0;
    }
    let hit = full
        .iter()
        .filter(|f| half.iter().any(|h| f.iou(h) >= iou))
        .count();
    hit as f64 / full.len() as f64
}

fn check_shape(img: &GrayImage, roi: &TextRoi) {
    let (rows, cols) = img.dim();
    assert_eq!(roi.map.dim(), (rows, cols));
    assert!(roi.map.iter().all(|&s| (0.0..=1.0).contains(&s)));
    assert!(roi.boxes.windows(2).all(|w| w[0] < w[1]));
    for b in &roi.boxes {
        assert!(b.width > 0 && b.height > 0);
        assert!(b.right() <= cols && b.bottom() <= rows, "{b:?}");
    }
}

#[test]
fn output_is_frame_sized_and_inside_on_odd_sizes_and_views() {
    let mut img = textured(241, 323, 30, 2, 5).mapv(|v| v / 2 + 64);
    let mut rng = Lcg(9);
    glyph_line(&mut img, 20, 60, 30, 8, 5, &mut rng);
    glyph_line(&mut img, 30, 150, 26, 8, 250, &mut rng);
    let roi = text_roi_with(&img, &half()).expect("ok");
    check_shape(&img, &roi);
    assert!(!roi.boxes.is_empty());
    // A non-contiguous view gives the same result as its copy.
    let column_major = img.t().as_standard_layout().to_owned().reversed_axes();
    assert!(!column_major.is_standard_layout());
    assert_eq!(column_major, img);
    assert_eq!(text_roi_with(&column_major, &half()).expect("ok"), roi);
    // Tiny frames (no half-resolution interior) still work.
    for dim in [(1, 1), (5, 40), (6, 6), (7, 9)] {
        let img = GrayImage::from_shape_fn(dim, |(y, x)| ((x * 37 + y * 91) % 256) as u8);
        check_shape(&img, &text_roi_with(&img, &half()).expect("ok"));
    }
}

#[test]
fn detector_and_free_function_agree_and_are_deterministic() {
    let img = load_gray("scenetext06.jpg");
    let roi = text_roi_with(&img, &half()).expect("ok");
    let mut det = TextRoiDetector::new(half()).expect("ok");
    assert_eq!(det.detect(&img).expect("ok"), roi);
    assert_eq!(det.detect(&img).expect("ok"), roi);
    let seq = TextRoiParams {
        parallel: false,
        ..half()
    };
    assert_eq!(text_roi_with(&img, &seq).expect("ok"), roi);
}

/// Quality of the half-resolution map against the full-resolution one on
/// the scene-text photos; prints the README's table rows. The floors are
/// loose sanity bounds (a broken scaling gives ≈ 0), not expected values.
#[test]
fn quality_against_full_resolution_on_photos() {
    for name in ["scenetext01.jpg", "scenetext06.jpg"] {
        let img = load_gray(name);
        let full = text_roi_with(&img, &TextRoiParams::default()).expect("ok");
        let red = text_roi_with(&img, &half()).expect("ok");
        check_shape(&img, &red);
        let corr = cortex_testkit::pearson(full.map.iter().copied(), red.map.iter().copied());
        let f50 = found_again(&full.boxes, &red.boxes, 0.5);
        let f70 = found_again(&full.boxes, &red.boxes, 0.7);
        // Where the full map says "text" (≥ 0.5), how much of it the reduced
        // map also marks.
        let (mut hot, mut both) = (0usize, 0usize);
        for (&a, &b) in full.map.iter().zip(red.map.iter()) {
            if a >= 0.5 {
                hot += 1;
                both += usize::from(b >= 0.5);
            }
        }
        let recall = both as f64 / hot.max(1) as f64;
        println!(
            "| `{name}` | {} | {} | {corr:.3} | {:.1} % | {:.1} % | {:.1} % |",
            full.boxes.len(),
            red.boxes.len(),
            100.0 * f50,
            100.0 * f70,
            100.0 * recall
        );
        assert!(corr > 0.5, "{name}: correlation {corr}");
        assert!(f50 > 0.5, "{name}: found again {f50}");
    }
}

/// Interleaved min-of-N timings of the text node, full and half resolution,
/// one and two threads, on a 768×576 and a 1920×1080 text frame and a photo.
/// `cargo test -p cortex --release --test text_roi_half -- --ignored --nocapture`.
#[test]
#[ignore = "timing, run in release on demand"]
fn interleaved_min_timings() {
    use std::time::Instant;
    let frames = [
        ("text frame", crate::support::text_frame(576, 768, 42), 40),
        ("text frame", crate::support::text_frame(1080, 1920, 42), 12),
        ("scenetext01.jpg", load_gray("scenetext01.jpg"), 30),
    ];
    let variants = [
        ("full, 1 thread", false, false),
        ("full, 2 threads", false, true),
        ("half, 1 thread", true, false),
        ("half, 2 threads", true, true),
    ];
    for (name, img, reps) in frames {
        let (rows, cols) = img.dim();
        let mut dets: Vec<TextRoiDetector> = variants
            .iter()
            .map(|&(_, half_resolution, parallel)| {
                TextRoiDetector::new(TextRoiParams {
                    half_resolution,
                    parallel,
                    ..TextRoiParams::default()
                })
                .expect("params")
            })
            .collect();
        let mut best = [f64::MAX; 4];
        for _ in 0..reps {
            for (det, b) in dets.iter_mut().zip(best.iter_mut()) {
                let t = Instant::now();
                let roi = det.detect(&img).expect("ok");
                *b = b.min(t.elapsed().as_secs_f64() * 1e3);
                drop(roi);
            }
        }
        let cells: Vec<String> = variants
            .iter()
            .zip(best)
            .map(|((v, ..), ms)| format!("{v} {ms:.2} ms"))
            .collect();
        println!(
            "text node {name} {cols}x{rows} min of {reps}: {}",
            cells.join(", ")
        );
    }
}
