//! Agreement of the pure-Rust MSER with OpenCV 4.6's `cv::MSER` (feature
//! `opencv`), on random textured frames with rendered text and on real
//! scene-text photographs. The targets: region count within 2 % of
//! OpenCV's, and ≥ 95 % of OpenCV's boxes matched by one of ours with
//! IoU ≥ 0.9. We also report how many regions are identical (same box,
//! area and polarity); by construction they all should be.

use crate::support::{agreement, load_gray, text_frame, textured, Lcg};
use cortex_vision::ops::mser::opencv::cv::core::{Point, Scalar};
use cortex_vision::ops::mser::opencv::cv::imgproc;
use cortex_vision::ops::mser::opencv::cv::prelude::*;
use cortex_vision::ops::mser::opencv::{cv, gray_to_mat, OpenCvMser};
use cortex_vision::ops::mser::{Mser, MserParams, Polarity};
use cortex_vision::ops::{GrayImage, OpsError};
use ndarray::Array2;

const MIN_IOU: f64 = 0.9;
const MAX_COUNT_DIFF: f64 = 0.02;
const MIN_MATCHED: f64 = 0.95;

/// Compares both implementations on `img` for every polarity and asserts
/// the targets. Returns the number of OpenCV regions (for sanity checks).
fn compare(name: &str, img: &GrayImage) -> usize {
    cv::core::set_num_threads(1).expect("set_num_threads");
    let params = MserParams::default();
    let ours = Mser::new(params).expect("params");
    let mut cv = OpenCvMser::new(params).expect("cv::MSER");
    let mut total = 0;
    for pol in [Polarity::Dark, Polarity::Bright, Polarity::Both] {
        let a = ours.detect(img, pol).expect("ours");
        let b = cv.detect(img, pol).expect("opencv");
        let ag = agreement(&a, &b, MIN_IOU);
        println!(
            "{name} {pol:?}: ours {} opencv {} count diff {:.2}% matched {:.2}% identical {}",
            ag.ours,
            ag.theirs,
            100.0 * ag.count_diff(),
            100.0 * ag.matched_frac(),
            ag.identical
        );
        assert!(ag.count_diff() <= MAX_COUNT_DIFF, "{name} {pol:?}: {ag:?}");
        assert!(ag.matched_frac() >= MIN_MATCHED, "{name} {pol:?}: {ag:?}");
        if pol == Polarity::Both {
            total = ag.theirs;
        }
    }
    total
}

/// Renders OpenCV Hershey text over a textured frame.
fn put_text_frame(rows: usize, cols: usize, seed: u64) -> GrayImage {
    let base = textured(rows, cols, 24, 6, seed);
    let mut mat = gray_to_mat(&base, false).expect("mat");
    let mut rng = Lcg(seed.wrapping_mul(0x2545_f491_4f6c_dd1d));
    let words = [
        "CORTEX",
        "text_roi",
        "MSER 2008",
        "exit 42",
        "Linear Time",
        "ROI",
        "abcxyz",
    ];
    let fonts = [
        imgproc::FONT_HERSHEY_SIMPLEX,
        imgproc::FONT_HERSHEY_DUPLEX,
        imgproc::FONT_HERSHEY_COMPLEX,
        imgproc::FONT_HERSHEY_TRIPLEX,
    ];
    for i in 0..rows / 40 {
        let word = words[rng.below(words.len() as u32) as usize];
        let font = fonts[rng.below(fonts.len() as u32) as usize];
        let scale = 0.6 + 1.6 * f64::from(rng.unit());
        let value = if i % 2 == 0 { 15.0 } else { 240.0 };
        let thickness = 1 + rng.below(3) as i32;
        let org = Point::new(
            rng.below((cols / 2) as u32) as i32,
            (30 + i * 40 + rng.below(8) as usize) as i32,
        );
        imgproc::put_text(
            &mut mat,
            word,
            org,
            font,
            scale,
            Scalar::all(value),
            thickness,
            imgproc::LINE_8,
            false,
        )
        .expect("put_text");
    }
    let bytes = mat.data_bytes().expect("continuous").to_vec();
    Array2::from_shape_vec((rows, cols), bytes).expect("size")
}

#[test]
fn agrees_on_textured_frames_with_hershey_text() {
    for seed in 0..3 {
        let img = put_text_frame(480, 640, seed);
        assert!(compare(&format!("hershey#{seed}"), &img) > 100);
    }
}

#[test]
fn agrees_on_textured_frames_with_glyph_strokes() {
    for seed in 10..13 {
        let img = text_frame(480, 640, seed);
        assert!(compare(&format!("glyphs#{seed}"), &img) > 100);
    }
}

#[test]
fn agrees_on_noisy_and_odd_sized_frames() {
    // Fine grain, a size that is not a multiple of anything, and pure noise
    // (a deep, bushy component tree with many equal-size ties).
    compare("grain", &textured(333, 517, 9, 20, 77));
    let mut rng = Lcg(5);
    let noise = Array2::from_shape_fn((200, 300), |_| rng.below(256) as u8);
    compare("noise", &noise);
}

#[test]
fn agrees_on_scene_text_photos() {
    for name in ["scenetext01.jpg", "scenetext06.jpg"] {
        let img = load_gray(name);
        assert!(compare(name, &img) > 100);
    }
}

#[test]
fn agrees_at_full_hd() {
    let img = put_text_frame(1080, 1920, 99);
    compare("hershey-1080p", &img);
}

#[test]
fn backend_bad_input() {
    let mut cv = OpenCvMser::new(MserParams::default()).expect("cv::MSER");
    assert!(matches!(
        cv.detect(&GrayImage::zeros((0, 4)), Polarity::Both),
        Err(OpsError::Empty { .. })
    ));
    for dim in [(1, 1), (2, 9), (3, 3)] {
        assert!(cv
            .detect(&GrayImage::zeros(dim), Polarity::Both)
            .expect("ok")
            .is_empty());
    }
    assert!(cv
        .detect(&GrayImage::from_elem((480, 640), 7), Polarity::Both)
        .expect("ok")
        .is_empty());
    let bad = MserParams {
        min_area: 100,
        max_area: 10,
        ..MserParams::default()
    };
    assert!(matches!(
        OpenCvMser::new(bad),
        Err(OpsError::InvalidParam { .. })
    ));
}

#[test]
fn opencv_reports_small_uniform_frames_we_do_not() {
    // The one documented difference: OpenCV returns the whole interior of a
    // small uniform image as a region (in each pass); we never report the
    // root of the component tree.
    let img = GrayImage::from_elem((50, 50), 100);
    let mut cv = OpenCvMser::new(MserParams::default()).expect("cv::MSER");
    let theirs = cv.detect(&img, Polarity::Both).expect("ok");
    assert_eq!(theirs.len(), 2);
    assert!(theirs.iter().all(|r| r.pixels.len() == 48 * 48));
    assert!(Mser::default()
        .detect(&img, Polarity::Both)
        .expect("ok")
        .is_empty());
}

#[test]
fn pixel_lists_match_opencv_exactly_on_a_photo() {
    // Stronger than the targets (which allow for implementation
    // differences): with OpenCV 4.6 every region has exactly the same pixels.
    let img = load_gray("scenetext01.jpg");
    let sorted = |regions: Vec<cortex_vision::ops::mser::Region>| {
        let mut v: Vec<_> = regions
            .into_iter()
            .map(|mut r| {
                r.pixels.sort_unstable();
                (r.polarity, r.bbox, r.pixels)
            })
            .collect();
        v.sort_unstable();
        v
    };
    let ours = sorted(Mser::default().detect(&img, Polarity::Both).expect("ours"));
    let mut cv = OpenCvMser::new(MserParams::default()).expect("cv::MSER");
    let theirs = sorted(cv.detect(&img, Polarity::Both).expect("opencv"));
    assert_eq!(ours.len(), theirs.len());
    assert!(ours == theirs, "pixel lists differ");
    // The partition-parallel path, on 1, 2, 3 and 7 strips.
    for strips in [1, 2, 3, 7] {
        let partitioned = Mser::default()
            .detect_partitioned(&img, Polarity::Both, strips)
            .expect("partitioned");
        assert!(
            sorted(partitioned) == theirs,
            "{strips} strips: pixel lists differ"
        );
    }
}

mod random {
    use super::*;
    use crate::support::random_case;
    use proptest::prelude::*;

    /// Random small images (quantized, so plateaus and equal-size ties are
    /// common) and random parameters: ours must equal OpenCV's regions
    /// exactly, except the whole interior (the tree's root), which OpenCV
    /// may report and we never do.
    fn case() -> impl Strategy<Value = (GrayImage, MserParams)> {
        random_case(3..48, 0..=5, 0..600)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn equals_opencv_on_random_images_and_parameters((img, p) in case()) {
            let (rows, cols) = img.dim();
            let root = (rows - 2) * (cols - 2);
            let key = |r: &cortex_vision::ops::mser::Region| {
                let mut px = r.pixels.clone();
                px.sort_unstable();
                (r.polarity, r.bbox, px)
            };
            let mser = Mser::new(p).expect("valid");
            let mut ours: Vec<_> =
                mser.detect(&img, Polarity::Both).expect("ours").iter().map(key).collect();
            let mut cv = OpenCvMser::new(p).expect("cv::MSER");
            let mut theirs: Vec<_> = cv.detect(&img, Polarity::Both).expect("opencv")
                .iter().filter(|r| r.pixels.len() != root).map(key).collect();
            ours.sort_unstable();
            theirs.sort_unstable();
            // The partition-parallel path on 3 strips (1, 2 and 7 are
            // checked against the flood in `mser_partitioned.rs`).
            let mut partitioned: Vec<_> = mser.detect_partitioned(&img, Polarity::Both, 3)
                .expect("partitioned").iter().map(key).collect();
            partitioned.sort_unstable();
            prop_assert_eq!(&partitioned, &theirs);
            prop_assert_eq!(ours, theirs);
        }
    }
}

/// Interleaved min-of-N timings, a complement to the criterion bench on a
/// shared machine: the minimum over many interleaved runs is what each side
/// achieves when it gets the cores, which medians under foreign load do not
/// show (the two-thread run needs two idle cores). Run with
/// `cargo test -p cortex --release --features opencv --test mser_opencv -- --ignored --nocapture`.
#[test]
#[ignore = "timing, run in release on demand"]
fn interleaved_min_timings() {
    use cortex_vision::ops::mser::{MserWorkspace, Regions};
    use std::time::Instant;
    cv::core::set_num_threads(1).expect("set_num_threads");
    let mser = Mser::default();
    let mut cv = OpenCvMser::new(MserParams::default()).expect("cv::MSER");
    let frames = [
        ("text frame", text_frame(480, 640, 42), 60),
        ("text frame", text_frame(576, 768, 42), 40),
        ("text frame", text_frame(1080, 1920, 42), 15),
        ("scenetext01.jpg", load_gray("scenetext01.jpg"), 40),
    ];
    for (name, img, reps) in frames {
        let (rows, cols) = img.dim();
        let mat = gray_to_mat(&img, false).expect("mat");
        let mut ws = MserWorkspace::new();
        let mut ws2 = [MserWorkspace::new(), MserWorkspace::new()];
        let mut out = Regions::new();
        let mut boxes = Vec::new();
        let mut best = [f64::MAX; 6];
        for _ in 0..reps {
            let mut time = |i: usize, f: &mut dyn FnMut()| {
                let t = Instant::now();
                f();
                best[i] = best[i].min(t.elapsed().as_secs_f64() * 1e3);
            };
            time(0, &mut || {
                mser.detect_into(&mut ws, &img, Polarity::Bright, &mut out)
                    .expect("ok")
            });
            time(1, &mut || {
                mser.detect_boxes_into(&mut ws, &img, Polarity::Bright, &mut boxes)
                    .expect("ok")
            });
            time(2, &mut || {
                mser.detect_into(&mut ws, &img, Polarity::Both, &mut out)
                    .expect("ok")
            });
            time(3, &mut || {
                mser.detect_both_parallel_into(&mut ws2, &img, &mut out)
                    .expect("ok")
            });
            time(4, &mut || {
                drop(cv.detect_regions_raw(&mat, true).expect("ok"))
            });
            time(5, &mut || {
                drop(cv.detect_regions_raw(&mat, false).expect("ok"))
            });
        }
        let [one, boxes_one, both, par, cv_one, cv_both] = best;
        let ns = |ms: f64| ms * 1e6 / (rows * cols) as f64;
        println!(
            "{name} {cols}x{rows} min of {reps}: ours one {one:.2} ms ({:.1} ns/px), boxes one {boxes_one:.2} \
             ({:.1} ns/px), both {both:.2}, both/2 threads {par:.2} | opencv one {cv_one:.2} ({:.1} ns/px), \
             both {cv_both:.2} | one: {:.2}x, boxes one: {:.2}x, both 2 threads vs opencv both: {:.2}x",
            ns(one),
            ns(boxes_one),
            ns(cv_one),
            cv_one / one,
            cv_one / boxes_one,
            cv_both / par
        );
    }
}

#[test]
fn text_roi_on_opencv_equals_text_roi_on_ours() {
    use cortex_vision::ops::text_roi::{text_roi, text_roi_opencv, TextRoiParams};
    for img in [load_gray("scenetext01.jpg"), put_text_frame(480, 640, 3)] {
        let ours = text_roi(&img).expect("ours");
        let theirs = text_roi_opencv(&img, &TextRoiParams::default()).expect("opencv");
        assert!(!ours.boxes.is_empty());
        assert_eq!(ours, theirs);
    }
}
