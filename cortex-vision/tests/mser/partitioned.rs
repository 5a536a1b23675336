//! Partition-parallel MSER against the plain flood: with 1, 2, 3 and 7
//! strips (and more strips than rows), the same regions — boxes, areas and
//! pixel sets — on photos, textured frames with text, noise, and random
//! images with random parameters. The flood itself equals OpenCV 4.6
//! (`mser_opencv.rs`), so these are OpenCV's regions too; with the `opencv`
//! feature, `mser_opencv.rs` also compares the partitioned path directly.

use crate::support::{load_gray, random_case, text_frame, textured, Lcg};
use cortex_vision::ops::mser::{
    BBox, Mser, MserParams, PartitionWorkspace, Polarity, Region, Regions,
};
use cortex_vision::ops::{GrayImage, OpsError};
use ndarray::Array2;

const PARTITIONS: [usize; 4] = [1, 2, 3, 7];

type Key = (Polarity, BBox, usize, Vec<(u32, u32)>);

/// Regions as a sorted list of (polarity, box, area, sorted pixels).
fn keys(regions: &[Region]) -> Vec<Key> {
    let mut v: Vec<Key> = regions
        .iter()
        .map(|r| {
            let mut px = r.pixels.clone();
            px.sort_unstable();
            (r.polarity, r.bbox, r.area(), px)
        })
        .collect();
    v.sort_unstable();
    v
}

fn box_keys(m: &Mser, img: &GrayImage, partitions: Option<usize>) -> Vec<(Polarity, BBox, u32)> {
    let boxes = match partitions {
        None => m.detect_boxes(img, Polarity::Both),
        Some(p) => m.detect_boxes_partitioned(img, Polarity::Both, p),
    };
    let mut v: Vec<_> = boxes
        .expect("no error")
        .iter()
        .map(|b| (b.polarity, b.bbox, b.area))
        .collect();
    v.sort_unstable();
    v
}

/// Every partition count gives the flood's regions, with pixels and boxes
/// only, through fresh and reused workspaces; returns how many passes fell
/// back to the flood.
fn assert_same(name: &str, m: &Mser, img: &GrayImage) -> usize {
    let expected = keys(&m.detect(img, Polarity::Both).expect("flood"));
    let expected_boxes = box_keys(m, img, None);
    let mut ws = PartitionWorkspace::new();
    let mut out = Regions::new();
    let mut fallbacks = 0;
    for p in PARTITIONS {
        let got = keys(
            &m.detect_partitioned(img, Polarity::Both, p)
                .expect("partitioned"),
        );
        assert_eq!(got.len(), expected.len(), "{name}: {p} partitions, count");
        assert!(got == expected, "{name}: {p} partitions, regions differ");
        assert_eq!(
            box_keys(m, img, Some(p)),
            expected_boxes,
            "{name}: {p} boxes"
        );
        m.detect_partitioned_into(&mut ws, img, Polarity::Both, p, &mut out)
            .expect("partitioned");
        assert!(
            keys(&out.to_vec()) == expected,
            "{name}: {p} reused workspace"
        );
        fallbacks += ws.fallbacks();
    }
    fallbacks
}

#[test]
fn same_regions_as_the_flood_on_photos() {
    let m = Mser::default();
    for name in [
        "scenetext01.jpg",
        "scenetext06.jpg",
        "fruits.jpg",
        "rubberwhale1.jpg",
        "rubberwhale2.jpg",
    ] {
        let img = load_gray(name);
        let fallbacks = assert_same(name, &m, &img);
        // Real photos never need the flood (see the closing note's probe):
        // a fallback here would mean the tie check is too cautious.
        assert_eq!(fallbacks, 0, "{name}: fell back");
    }
}

#[test]
fn same_regions_as_the_flood_on_text_frames_and_noise() {
    let m = Mser::default();
    for (rows, cols, seed) in [(480, 640, 1), (576, 768, 2), (97, 131, 3), (5, 300, 4)] {
        assert_same("text frame", &m, &text_frame(rows, cols, seed));
        assert_same("texture", &m, &textured(rows, cols, 9, 20, seed));
    }
    let mut rng = Lcg(7);
    let noise = Array2::from_shape_fn((240, 320), |_| rng.below(256) as u8);
    assert_same("noise", &m, &noise);
}

#[test]
fn more_partitions_than_rows_and_thin_images() {
    let m = Mser::new(MserParams {
        min_area: 3,
        ..MserParams::default()
    })
    .expect("valid");
    for (rows, cols) in [(3, 50), (4, 40), (9, 3), (12, 12)] {
        let img = textured(rows, cols, 3, 30, rows as u64);
        let expected = keys(&m.detect(&img, Polarity::Both).expect("flood"));
        for p in [1, 2, 7, 64] {
            let got = keys(&m.detect_partitioned(&img, Polarity::Both, p).expect("ok"));
            assert!(got == expected, "{rows}x{cols}, {p} partitions");
        }
    }
}

#[test]
fn bad_input() {
    let m = Mser::default();
    let img = GrayImage::zeros((10, 10));
    assert!(matches!(
        m.detect_partitioned(&img, Polarity::Both, 0),
        Err(OpsError::InvalidParam {
            name: "partitions",
            ..
        })
    ));
    assert!(matches!(
        m.detect_boxes_partitioned(&GrayImage::zeros((0, 4)), Polarity::Dark, 2),
        Err(OpsError::Empty { .. })
    ));
    assert!(m
        .detect_partitioned(&GrayImage::zeros((2, 9)), Polarity::Both, 3)
        .expect("no regions")
        .is_empty());
}

#[test]
fn large_variations_run_the_flood() {
    // With `max_variation ≥ 0.5` a tie of largest children can change a
    // selection in ways the merged tree does not check: the flood runs.
    let m = Mser::new(MserParams {
        max_variation: 0.8,
        ..MserParams::default()
    })
    .expect("valid");
    let img = text_frame(120, 160, 5);
    let mut ws = PartitionWorkspace::new();
    let mut out = Vec::new();
    m.detect_boxes_partitioned_into(&mut ws, &img, Polarity::Both, 3, &mut out)
        .expect("ok");
    assert_eq!(ws.fallbacks(), 2);
    assert_same("max_variation 0.8", &m, &img);
}

mod random {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Random quantized images (plateaus and equal-size ties are
        /// common) and random parameters: every partition count gives the
        /// flood's regions.
        #[test]
        fn equals_the_flood((img, p) in random_case(3..48, 0..=5, 0..600), parts in 1usize..9) {
            let m = Mser::new(p).expect("valid");
            let expected = keys(&m.detect(&img, Polarity::Both).expect("flood"));
            for n in [1, 2, 3, 7, parts] {
                let got = keys(&m.detect_partitioned(&img, Polarity::Both, n).expect("ok"));
                prop_assert!(got == expected, "{} partitions", n);
            }
        }
    }
}
