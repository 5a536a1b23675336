//! Pure-Rust MSER: bad input, regions of known synthetic shapes, the
//! extremal and stability properties of every output region, invariants
//! (polarity symmetry, intensity offset), and agreement between the
//! pixel, box-only, parallel and workspace-reusing entry points.

use crate::support::{text_frame, textured, Lcg};
use cortex_vision::ops::mser::{
    BBox, Mser, MserParams, MserWorkspace, Polarity, Region, RegionBox, Regions,
};
use cortex_vision::ops::{GrayImage, OpsError};
use ndarray::Array2;

fn mser() -> Mser {
    Mser::default()
}

fn sorted_boxes(regions: &[Region]) -> Vec<(BBox, usize)> {
    let mut v: Vec<_> = regions.iter().map(|r| (r.bbox, r.area())).collect();
    v.sort_unstable();
    v
}

// ---------------------------------------------------------------- bad input

#[test]
fn empty_image_is_an_error() {
    for dim in [(0, 0), (0, 10), (10, 0)] {
        let img = GrayImage::zeros(dim);
        for pol in [Polarity::Dark, Polarity::Bright, Polarity::Both] {
            assert!(matches!(
                mser().detect(&img, pol),
                Err(OpsError::Empty { .. })
            ));
            assert!(matches!(
                mser().detect_boxes(&img, pol),
                Err(OpsError::Empty { .. })
            ));
        }
        assert!(matches!(
            mser().detect_both_parallel(&img),
            Err(OpsError::Empty { .. })
        ));
    }
}

#[test]
fn tiny_images_have_no_regions() {
    // Under 3×3 there is no interior; at 3×3 the interior is one pixel, the
    // root, which is never reported.
    let m = Mser::new(MserParams {
        min_area: 1,
        ..MserParams::default()
    })
    .expect("valid");
    for dim in [(1, 1), (1, 5), (2, 2), (2, 300), (300, 2), (3, 3)] {
        let mut rng = Lcg(dim.0 as u64 * 31 + dim.1 as u64);
        let img = Array2::from_shape_fn(dim, |_| rng.below(256) as u8);
        assert!(
            m.detect(&img, Polarity::Both).expect("no error").is_empty(),
            "{dim:?}"
        );
        assert!(m
            .detect_boxes(&img, Polarity::Both)
            .expect("no error")
            .is_empty());
        assert!(m.detect_both_parallel(&img).expect("no error").is_empty());
    }
}

#[test]
fn uniform_images_have_no_regions() {
    for (dim, v) in [
        ((480, 640), 0u8),
        ((480, 640), 128),
        ((50, 50), 255),
        ((7, 200), 3),
    ] {
        let img = GrayImage::from_elem(dim, v);
        assert!(mser().detect(&img, Polarity::Both).expect("ok").is_empty());
        assert!(mser().detect_both_parallel(&img).expect("ok").is_empty());
    }
}

#[test]
fn images_smaller_than_min_area_have_no_regions() {
    // 8×8 has 36 interior pixels < min_area = 60.
    let img = textured(8, 8, 2, 40, 1);
    assert!(mser().detect(&img, Polarity::Both).expect("ok").is_empty());
}

#[test]
fn invalid_parameters_are_rejected() {
    let bad = [
        MserParams {
            max_area: 10,
            min_area: 60,
            ..MserParams::default()
        },
        MserParams {
            min_area: 0,
            ..MserParams::default()
        },
        MserParams {
            delta: 0,
            ..MserParams::default()
        },
        MserParams {
            max_variation: f64::NAN,
            ..MserParams::default()
        },
        MserParams {
            max_variation: -1.0,
            ..MserParams::default()
        },
    ];
    for p in bad {
        assert!(
            matches!(Mser::new(p), Err(OpsError::InvalidParam { .. })),
            "{p:?}"
        );
    }
    assert!(Mser::new(MserParams {
        min_area: 60,
        max_area: 60,
        ..MserParams::default()
    })
    .is_ok());
}

#[test]
fn non_contiguous_views_work() {
    // A transposed copy in Fortran layout exercises the strided-row path.
    let img = text_frame(120, 160, 3);
    let t = img.t().to_owned();
    let f = img.t().as_standard_layout().to_owned().reversed_axes();
    assert!(!f.is_standard_layout());
    assert_eq!(f, img);
    let a = sorted_boxes(&mser().detect(&img, Polarity::Both).expect("ok"));
    let b = sorted_boxes(&mser().detect(&f, Polarity::Both).expect("ok"));
    assert_eq!(a, b);
    assert!(!mser().detect(&t, Polarity::Both).expect("ok").is_empty());
}

// ---------------------------------------------------------- known regions

/// A bright, noisy background with a uniform dark rectangle. (With noise
/// inside too, the most stable region is often the rectangle plus a few of
/// the darkest background pixels around it, in OpenCV as here.)
fn rect_on_noise(rect: BBox, dark: u8) -> GrayImage {
    let mut rng = Lcg(7);
    let mut img = Array2::from_shape_fn((120, 160), |_| 200 + rng.below(30) as u8);
    for y in rect.y..rect.bottom() {
        for x in rect.x..rect.right() {
            img[[y, x]] = dark;
        }
    }
    img
}

#[test]
fn dark_rectangle_on_bright_noise_is_found() {
    let rect = BBox {
        x: 40,
        y: 30,
        width: 50,
        height: 20,
    };
    let img = rect_on_noise(rect, 20);
    let regions = mser().detect(&img, Polarity::Dark).expect("ok");
    let hit = regions
        .iter()
        .find(|r| r.bbox == rect)
        .expect("rectangle region");
    assert_eq!(hit.area(), rect.width * rect.height);
    assert_eq!(hit.polarity, Polarity::Dark);
    // Bright pass: the rectangle is a hole, not a region.
    let bright = mser().detect(&img, Polarity::Bright).expect("ok");
    assert!(bright.iter().all(|r| r.bbox != rect));
}

#[test]
fn nested_rectangles_give_nested_regions() {
    let outer = BBox {
        x: 20,
        y: 20,
        width: 80,
        height: 60,
    };
    let inner = BBox {
        x: 50,
        y: 40,
        width: 20,
        height: 15,
    };
    let mut img = rect_on_noise(outer, 120);
    for y in inner.y..inner.bottom() {
        for x in inner.x..inner.right() {
            img[[y, x]] = 10;
        }
    }
    let boxes: Vec<BBox> = mser()
        .detect(&img, Polarity::Dark)
        .expect("ok")
        .iter()
        .map(|r| r.bbox)
        .collect();
    assert!(boxes.contains(&outer), "{boxes:?}");
    assert!(boxes.contains(&inner), "{boxes:?}");
}

#[test]
fn area_limits_are_inclusive() {
    let rect = BBox {
        x: 10,
        y: 10,
        width: 10,
        height: 6,
    }; // 60 pixels
    let img = rect_on_noise(rect, 20);
    let at = |min_area, max_area| {
        let m = Mser::new(MserParams {
            min_area,
            max_area,
            ..MserParams::default()
        })
        .expect("ok");
        m.detect(&img, Polarity::Dark)
            .expect("ok")
            .iter()
            .any(|r| r.bbox == rect)
    };
    assert!(at(60, 60));
    assert!(!at(61, 100));
    assert!(!at(10, 59));
}

#[test]
fn frame_pixels_are_never_part_of_a_region() {
    // A dark square touching the image corner: OpenCV (and we) treat the
    // outermost frame as a wall, so the region stops one pixel in.
    let rect = BBox {
        x: 0,
        y: 0,
        width: 30,
        height: 30,
    };
    let img = rect_on_noise(rect, 20);
    let regions = mser().detect(&img, Polarity::Dark).expect("ok");
    let want = BBox {
        x: 1,
        y: 1,
        width: 29,
        height: 29,
    };
    assert!(regions.iter().any(|r| r.bbox == want));
    for r in &regions {
        assert!(r
            .pixels
            .iter()
            .all(|&(x, y)| x >= 1 && y >= 1 && x < 159 && y < 119));
    }
}

// ------------------------------------------------- properties of regions

/// Every region must be an extremal region: 4-connected, all its levels
/// below every level on its outer boundary (inside the interior), with the
/// area limits and a box that is its pixels' box.
fn check_extremal(img: &GrayImage, regions: &[Region], p: &MserParams) {
    let (rows, cols) = img.dim();
    let mut mark = Array2::<u32>::zeros((rows, cols));
    for (i, r) in regions.iter().enumerate() {
        let stamp = i as u32 + 1;
        let level = |x: u32, y: u32| {
            let v = img[[y as usize, x as usize]];
            if r.polarity == Polarity::Dark {
                v
            } else {
                255 - v
            }
        };
        assert!(r.area() >= p.min_area as usize && r.area() <= p.max_area as usize);
        let (mut x0, mut y0, mut x1, mut y1) = (u32::MAX, u32::MAX, 0, 0);
        let mut max_in = 0u8;
        for &(x, y) in &r.pixels {
            assert_ne!(mark[[y as usize, x as usize]], stamp, "duplicate pixel");
            mark[[y as usize, x as usize]] = stamp;
            (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
            max_in = max_in.max(level(x, y));
        }
        let c = [x0, y0, x1, y1].map(|v| v as usize);
        assert_eq!(r.bbox, BBox::from_corners(c[0], c[1], c[2], c[3]));
        // Outer boundary strictly above, interior only (the frame is a wall).
        let mut seen = 0usize;
        let mut stack = vec![r.pixels[0]];
        let mut visited = std::collections::HashSet::new();
        visited.insert(r.pixels[0]);
        while let Some((x, y)) = stack.pop() {
            seen += 1;
            for (dx, dy) in [(1i64, 0i64), (-1, 0), (0, 1), (0, -1)] {
                let (nx, ny) = (x as i64 + dx, y as i64 + dy);
                if nx < 1 || ny < 1 || nx >= cols as i64 - 1 || ny >= rows as i64 - 1 {
                    continue;
                }
                let (nx, ny) = (nx as u32, ny as u32);
                if mark[[ny as usize, nx as usize]] == stamp {
                    if visited.insert((nx, ny)) {
                        stack.push((nx, ny));
                    }
                } else {
                    assert!(
                        level(nx, ny) > max_in,
                        "boundary pixel not above the region"
                    );
                }
            }
        }
        assert_eq!(seen, r.area(), "region is not 4-connected");
    }
}

#[test]
fn every_region_is_an_extremal_region() {
    for seed in 0..3 {
        let img = text_frame(240, 320, seed);
        let regions = mser().detect(&img, Polarity::Both).expect("ok");
        assert!(regions.len() > 20, "{}", regions.len());
        check_extremal(&img, &regions, mser().params());
    }
}

#[test]
fn polarity_symmetry() {
    for seed in 0..3 {
        let img = text_frame(240, 320, seed);
        let inv = img.mapv(|v| 255 - v);
        let bright = mser().detect(&img, Polarity::Bright).expect("ok");
        let dark_of_inv = mser().detect(&inv, Polarity::Dark).expect("ok");
        assert_eq!(bright.len(), dark_of_inv.len());
        for (a, b) in bright.iter().zip(&dark_of_inv) {
            assert_eq!((a.bbox, &a.pixels), (b.bbox, &b.pixels));
        }
    }
}

#[test]
fn intensity_offset_invariance() {
    // Stability only depends on level differences: shifting every value by
    // a constant (without clipping) must not change any region.
    let img = textured(200, 260, 20, 8, 11).mapv(|v| v / 2 + 20); // 20..=147
    let base = sorted_boxes(&mser().detect(&img, Polarity::Both).expect("ok"));
    assert!(!base.is_empty());
    for c in [1u8, 37, 108] {
        let shifted = img.mapv(|v| v + c);
        assert_eq!(
            base,
            sorted_boxes(&mser().detect(&shifted, Polarity::Both).expect("ok")),
            "+{c}"
        );
    }
}

#[test]
fn disjoint_copies_give_twice_the_regions() {
    // Two copies of a patch separated by a bright wall: each dark region of
    // a copy is found as in the patch alone, shifted. Patch values stay
    // 55 levels under the wall so no stability window reaches it, and the
    // patch exceeds max_area so the copies themselves are never reported.
    let patch = text_frame(132, 130, 5).mapv(|v| v.min(200));
    let framed = |copies: usize| {
        let mut img = GrayImage::from_elem((134, 1 + copies * 131), 255);
        for k in 0..copies {
            let x = 1 + k * 131;
            img.slice_mut(ndarray::s![1..133, x..x + 130])
                .assign(&patch);
        }
        img
    };
    let one = sorted_boxes(&mser().detect(&framed(1), Polarity::Dark).expect("ok"));
    let two = sorted_boxes(&mser().detect(&framed(2), Polarity::Dark).expect("ok"));
    assert!(one.len() > 10);
    let mut expect: Vec<_> = one.clone();
    expect.extend(one.iter().map(|&(b, a)| (BBox { x: b.x + 131, ..b }, a)));
    expect.sort_unstable();
    assert_eq!(two, expect);
}

// ------------------------------------------------------ entry points agree

#[test]
fn boxes_parallel_and_reuse_agree() {
    let m = mser();
    let mut ws = MserWorkspace::new();
    let mut ws2 = [MserWorkspace::new(), MserWorkspace::new()];
    let mut regions = Regions::new();
    let mut boxes: Vec<RegionBox> = Vec::new();
    // Large, small, large again: stale buffer contents must not leak.
    for (rows, cols, seed) in [(300, 400, 1), (60, 80, 2), (300, 400, 1), (97, 131, 3)] {
        let img = text_frame(rows, cols, seed);
        let fresh = m.detect(&img, Polarity::Both).expect("ok");

        m.detect_into(&mut ws, &img, Polarity::Both, &mut regions)
            .expect("ok");
        assert_eq!(regions.to_vec(), fresh);

        m.detect_both_parallel_into(&mut ws2, &img, &mut regions)
            .expect("ok");
        assert_eq!(regions.to_vec(), fresh);
        assert_eq!(m.detect_both_parallel(&img).expect("ok"), fresh);

        let want: Vec<RegionBox> = fresh
            .iter()
            .map(|r| RegionBox {
                bbox: r.bbox,
                area: r.area() as u32,
                polarity: r.polarity,
            })
            .collect();
        m.detect_boxes_into(&mut ws, &img, Polarity::Both, &mut boxes)
            .expect("ok");
        assert_eq!(boxes, want);
        m.detect_boxes_both_parallel_into(&mut ws2, &img, &mut boxes)
            .expect("ok");
        assert_eq!(boxes, want);

        let dark = m.detect(&img, Polarity::Dark).expect("ok");
        let bright = m.detect(&img, Polarity::Bright).expect("ok");
        assert_eq!([dark, bright].concat(), fresh);
    }
}

#[test]
fn regions_accessors() {
    let img = text_frame(120, 160, 4);
    let mut ws = MserWorkspace::new();
    let mut regions = Regions::new();
    mser()
        .detect_into(&mut ws, &img, Polarity::Both, &mut regions)
        .expect("ok");
    assert!(!regions.is_empty());
    assert_eq!(regions.iter().count(), regions.len());
    for (i, (b, px)) in regions.iter().enumerate() {
        assert_eq!(regions.pixels(i), Some(px));
        assert_eq!(b.area as usize, px.len());
    }
    assert_eq!(regions.pixels(regions.len()), None);
    assert!(ws.last_tree_size() > regions.len());
}

#[test]
fn tree_size_is_linear_in_pixels() {
    // The component tree has at most one node per pixel (plus one): the
    // flooding's work is bounded by the pixel count.
    let mut ws = MserWorkspace::new();
    let mut out = Vec::new();
    for (rows, cols) in [(60, 80), (120, 160), (240, 320)] {
        let mut rng = Lcg(rows as u64);
        let img = Array2::from_shape_fn((rows, cols), |_| rng.below(256) as u8);
        mser()
            .detect_boxes_into(&mut ws, &img, Polarity::Dark, &mut out)
            .expect("ok");
        assert!(ws.last_tree_size() <= rows * cols + 1);
    }
}

#[test]
fn very_wide_images_keep_exact_coordinates() {
    // Wider than the default frame limits' 16 384-pixel side: raised here.
    let wide = cortex_core::limits::FrameLimits {
        max_side: 1 << 17,
        ..cortex_core::limits::FrameLimits::DEFAULT
    };
    cortex_core::limits::with_limits(wide, very_wide_image);
}

fn very_wide_image() {
    // Coordinates beyond 16 bits: a dark block far to the right.
    let mut img = GrayImage::from_elem((9, 70_000), 200);
    let block = BBox {
        x: 66_000,
        y: 2,
        width: 40,
        height: 5,
    };
    for y in block.y..block.bottom() {
        for x in block.x..block.right() {
            img[[y, x]] = 10;
        }
    }
    let regions = mser().detect(&img, Polarity::Dark).expect("ok");
    let hit = regions
        .iter()
        .find(|r| r.bbox == block)
        .expect("block region");
    assert!(hit.pixels.contains(&(66_039, 6)));
    let boxes = mser().detect_boxes(&img, Polarity::Dark).expect("ok");
    assert!(boxes.iter().any(|b| b.bbox == block));
}

// ------------------------------------------------------- random inputs

mod random {
    use super::*;
    use crate::support::random_case;
    use proptest::prelude::*;

    /// Small random images (including degenerate sizes), quantized to a few
    /// levels so that plateaus and equal-size ties are common, with random
    /// parameters.
    fn case() -> impl Strategy<Value = (GrayImage, MserParams)> {
        random_case(1..40, 1..=5, 0..400)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn never_panics_and_regions_are_extremal((img, p) in case()) {
            let m = Mser::new(p).expect("valid");
            let regions = m.detect(&img, Polarity::Both).expect("no error");
            check_extremal(&img, &regions, &p);
            let boxes = m.detect_boxes(&img, Polarity::Both).expect("no error");
            prop_assert_eq!(boxes.len(), regions.len());
            for (b, r) in boxes.iter().zip(&regions) {
                prop_assert_eq!((b.bbox, b.area as usize, b.polarity), (r.bbox, r.area(), r.polarity));
            }
            let inv = img.mapv(|v| 255 - v);
            let a = m.detect(&img, Polarity::Bright).expect("ok");
            let b = m.detect(&inv, Polarity::Dark).expect("ok");
            prop_assert_eq!(
                a.iter().map(|r| &r.pixels).collect::<Vec<_>>(),
                b.iter().map(|r| &r.pixels).collect::<Vec<_>>()
            );
        }
    }
}
