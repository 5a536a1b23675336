//! Behaviour of the pure-Rust kernels that needs no reference library:
//! closed forms, fusion bit-exactness, the encoder's round trip, bad input
//! (empty, mismatched, tiny, non-finite) and buffer reuse.

use crate::common::*;
use cortex_core::Weights;
use cortex_vision::ops::{self, GrayImage, OpsError, RgbFrame, ScoreMap};
use rand::Rng;

#[test]
fn center_prior_matches_closed_form() {
    for &(h, w) in &[(480, 640), (7, 9), (1, 1), (2, 5), (101, 60)] {
        for &(sx, sy) in &[(0.25, 0.25), (0.1, 0.4), (2.0, 0.05)] {
            let p = ops::CenterParams {
                sigma_x: sx,
                sigma_y: sy,
            };
            let m = ops::center_crop_with(&GrayImage::zeros((h, w)), &p).unwrap();
            assert_eq!(m.dim(), (h, w));
            let (cx, cy) = ((w as f64 - 1.0) / 2.0, (h as f64 - 1.0) / 2.0);
            let (gx, gy) = (sx * w as f64, sy * h as f64);
            let mut worst = 0.0f64;
            for ((y, x), &v) in m.indexed_iter() {
                let e = -((x as f64 - cx).powi(2) / (2.0 * gx * gx)
                    + (y as f64 - cy).powi(2) / (2.0 * gy * gy));
                worst = worst.max((f64::from(v) - e.exp()).abs());
            }
            assert!(worst <= 1e-6, "{h}x{w} σ=({sx},{sy}): {worst}");
            if h % 2 == 1 && w % 2 == 1 {
                assert_eq!(
                    m[[h / 2, w / 2]],
                    1.0,
                    "peak of an odd-sized prior is exactly 1"
                );
            }
        }
    }
}

/// The sum the fusion must equal bit for bit: every term present, zero
/// weights included, in the order c, t, s, m, starting from +0.
fn full_sum(maps: &[ScoreMap; 4], w: [f32; 4]) -> ScoreMap {
    let mut out = ScoreMap::zeros(maps[0].dim());
    for (m, wi) in maps.iter().zip(w) {
        out.zip_mut_with(m, |o, &v| *o += wi * v);
    }
    out
}

#[test]
fn fusion_with_eliminated_maps_is_bit_exact() {
    let mut r = rng(11);
    for trial in 0..200 {
        let (h, w) = (r.gen_range(1..40), r.gen_range(1..40));
        let maps: [ScoreMap; 4] =
            std::array::from_fn(|_| ScoreMap::from_shape_fn((h, w), |_| r.gen::<f32>()));
        // Random weights, some exactly zero (eliminated), one always live.
        let mut wv: [f32; 4] = std::array::from_fn(|_| {
            if r.gen_bool(0.4) {
                0.0
            } else {
                r.gen_range(0.0..2.0)
            }
        });
        wv[trial % 4] = r.gen_range(0.01..1.0);
        let weights: Weights = ops::SCORE_KEYS
            .iter()
            .zip(wv)
            .map(|(k, v)| (*k, f64::from(v)))
            .collect();
        let opt = |i: usize| if wv[i] == 0.0 { None } else { Some(&maps[i]) };
        let pruned = ops::score_fusion(opt(0), opt(1), opt(2), opt(3), &weights).unwrap();
        let full = ops::score_fusion(
            Some(&maps[0]),
            Some(&maps[1]),
            Some(&maps[2]),
            Some(&maps[3]),
            &weights,
        )
        .unwrap();
        // Weights are read as f64 and rounded to f32 once, as `full_sum` gets them.
        let wf: [f32; 4] = std::array::from_fn(|i| f64::from(wv[i]) as f32);
        let closed = full_sum(&maps, wf);
        for ((a, b), c) in pruned.iter().zip(&full).zip(&closed) {
            assert_eq!(a.to_bits(), b.to_bits());
            assert_eq!(a.to_bits(), c.to_bits());
        }
    }
}

#[test]
fn fusion_zero_weight_map_with_nan_or_negative_zero_changes_nothing() {
    let a = ScoreMap::from_elem((3, 4), 0.25);
    let bad = ScoreMap::from_shape_fn((3, 4), |(y, _)| [f32::NAN, f32::INFINITY, -0.0][y]);
    let w = Weights::new().with("wc", 0.5).with("ws", 0.0);
    let with_bad = ops::score_fusion(Some(&a), None, Some(&bad), None, &w).unwrap();
    let without = ops::score_fusion(Some(&a), None, None, None, &w).unwrap();
    assert_eq!(with_bad, without);
    // Missing keys weigh 0; a map with no weight key is therefore ignored.
    let only_wc = Weights::new().with("wc", 1.0);
    let r = ops::score_fusion(Some(&a), Some(&bad), None, None, &only_wc).unwrap();
    assert!(r.iter().all(|&v| v == 0.25));
}

#[test]
fn fusion_rejects_bad_weights_and_sizes() {
    let a = ScoreMap::zeros((4, 4));
    for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0] {
        let w = Weights::new().with("wt", v);
        assert!(matches!(
            ops::score_fusion(Some(&a), None, None, None, &w),
            Err(OpsError::InvalidParam { .. })
        ));
    }
    let w = Weights::new().with("wc", 1.0);
    assert!(ops::score_fusion(None, None, None, None, &w).is_err());
    let b = ScoreMap::zeros((4, 5));
    assert!(matches!(
        ops::score_fusion(Some(&a), None, None, Some(&b), &w),
        Err(OpsError::SizeMismatch { .. })
    ));
    let mut out = ScoreMap::zeros((1, 1));
    assert!(ops::fuse_into(&[(Some(&a), f32::NAN)], &mut out).is_err());
    assert!(ops::fuse_into(&[(Some(&ScoreMap::zeros((0, 3))), 1.0)], &mut out).is_err());
}

fn psnr(a: &[u8], b: &[u8]) -> f64 {
    let mse = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| (f64::from(x) - f64::from(y)).powi(2))
        .sum::<f64>()
        / a.len() as f64;
    10.0 * (255.0 * 255.0 / mse).log10()
}

#[test]
fn encoder_round_trips_a_real_photo_above_30_db() {
    for name in ["fruits.jpg", "rubberwhale1.jpg"] {
        let frame = photo(name);
        let gray = ops::to_gray(&frame).unwrap();
        let sal = ops::saliency_dft(&gray).unwrap();
        let center = ops::center_crop(&gray).unwrap();
        let w = Weights::new().with("wc", 0.4).with("ws", 0.6);
        let score = ops::score_fusion(Some(&center), None, Some(&sal), None, &w).unwrap();
        let roi = ops::encode_roi(&frame, &score).unwrap();
        let b = roi.bbox;
        assert!(
            b.width >= 64
                && b.height >= 64
                && b.x + b.width <= frame.dim().1
                && b.y + b.height <= frame.dim().0
        );
        let peak = score.iter().cloned().fold(f32::MIN, f32::max);
        assert_eq!(roi.score, peak);
        assert_eq!(roi.byte_size(), roi.jpeg.len());
        let decoded = image::load_from_memory(&roi.jpeg).unwrap().to_rgb8();
        assert_eq!(
            (decoded.width() as usize, decoded.height() as usize),
            (b.width, b.height)
        );
        let crop: Vec<u8> = (b.y..b.y + b.height)
            .flat_map(|y| (b.x..b.x + b.width).flat_map(move |x| (0..3).map(move |c| (y, x, c))))
            .map(|(y, x, c)| frame[[y, x, c]])
            .collect();
        let p = psnr(&crop, decoded.as_raw());
        eprintln!(
            "encoder {name}: bbox {b:?}, {} bytes, PSNR {p:.1} dB",
            roi.byte_size()
        );
        assert!(p >= 30.0, "{name}: PSNR {p}");
    }
}

#[test]
fn encoder_box_follows_the_score_and_honours_params() {
    let frame = textured_rgb(&mut rng(12), 120, 160);
    let mut score = ScoreMap::zeros((120, 160));
    for y in 80..100 {
        for x in 20..50 {
            score[[y, x]] = 0.9;
        }
    }
    let p = ops::EncoderParams {
        margin: 0,
        min_width: 1,
        min_height: 1,
        quality: 95,
        rel_threshold: 0.5,
    };
    let roi = ops::encode_roi_with(&frame, &score, &p).unwrap();
    assert_eq!(
        roi.bbox,
        ops::BBox {
            x: 20,
            y: 80,
            width: 30,
            height: 20
        }
    );
    for bad in [
        ops::EncoderParams { quality: 0, ..p },
        ops::EncoderParams { quality: 101, ..p },
        ops::EncoderParams {
            rel_threshold: 0.0,
            ..p
        },
        ops::EncoderParams {
            rel_threshold: f32::NAN,
            ..p
        },
        ops::EncoderParams { min_width: 0, ..p },
    ] {
        assert!(ops::encode_roi_with(&frame, &score, &bad).is_err());
    }
    // A reused result keeps working across frames of different sizes.
    let mut out = ops::EncodedRoi::default();
    ops::encode_roi_into(&frame, &score, &p, &mut out).unwrap();
    let small = textured_rgb(&mut rng(13), 5, 7);
    ops::encode_roi_into(
        &small,
        &ScoreMap::from_elem((5, 7), 0.3),
        &ops::EncoderParams::default(),
        &mut out,
    )
    .unwrap();
    assert_eq!(
        out.bbox,
        ops::BBox {
            x: 0,
            y: 0,
            width: 7,
            height: 5
        }
    );
}

#[test]
fn every_kernel_rejects_empty_input_with_a_typed_error() {
    let e = GrayImage::zeros((0, 0));
    let e_wide = GrayImage::zeros((0, 10));
    let g = GrayImage::zeros((4, 4));
    for img in [&e, &e_wide] {
        assert!(matches!(
            ops::blur_detector(img),
            Err(OpsError::Empty { .. })
        ));
        assert!(matches!(ops::center_crop(img), Err(OpsError::Empty { .. })));
        assert!(matches!(
            ops::saliency_dft(img),
            Err(OpsError::Empty { .. })
        ));
        assert!(matches!(
            ops::scene_change(img, &g),
            Err(OpsError::Empty { .. })
        ));
        assert!(matches!(
            ops::motion_map(img, &g),
            Err(OpsError::Empty { .. })
        ));
        assert!(matches!(ops::ssim(img, img), Err(OpsError::Empty { .. })));
    }
    assert!(matches!(
        ops::to_gray(&RgbFrame::zeros((3, 0, 3))),
        Err(OpsError::Empty { .. })
    ));
    assert!(matches!(
        ops::encode_roi(&RgbFrame::zeros((0, 0, 3)), &ScoreMap::zeros((0, 0))),
        Err(OpsError::Empty { .. })
    ));
}

#[test]
fn temporal_ops_treat_missing_or_resized_previous_frame_as_first_frame() {
    let mut r = rng(14);
    let cur = textured_gray(&mut r, 48, 64);
    for prev in [
        GrayImage::zeros((0, 0)),
        textured_gray(&mut r, 64, 48),
        textured_gray(&mut r, 24, 32),
    ] {
        let sc = ops::scene_change(&cur, &prev).unwrap();
        assert!(sc.changed && sc.ssim.is_none());
        let m = ops::motion_map(&cur, &prev).unwrap();
        assert_eq!(m.dim(), cur.dim());
        assert!(m.iter().all(|&v| v == 0.0));
    }
    // ... and a same-size previous frame is compared.
    let prev = next_frame(&mut r, &cur, 1, 1, 4);
    let sc = ops::scene_change(&cur, &prev).unwrap();
    assert!(sc.ssim.is_some());
    assert!(ops::motion_map(&cur, &prev)
        .unwrap()
        .iter()
        .any(|&v| v > 0.0));
    // The plain SSIM function, which has no "first frame", does reject sizes.
    assert!(matches!(
        ops::ssim(&cur, &GrayImage::zeros((48, 63))),
        Err(OpsError::SizeMismatch { .. })
    ));
}

#[test]
fn tiny_frames_smaller_than_every_window_work() {
    let mut r = rng(15);
    for &(h, w) in &[(1, 1), (1, 2), (2, 1), (2, 3), (3, 2), (4, 4), (6, 5)] {
        let a = textured_gray(&mut r, h, w);
        let b = next_frame(&mut r, &a, 0, 1, 10);
        let frame = textured_rgb(&mut r, h, w);
        assert_eq!(ops::to_gray(&frame).unwrap().dim(), (h, w));
        assert!(ops::blur_detector(&a).unwrap().variance.is_finite());
        let s = ops::scene_change(&a, &b).unwrap().ssim.unwrap();
        assert!(
            s.is_finite() && (-1.0..=1.0 + 1e-9).contains(&s),
            "{h}x{w}: {s}"
        );
        // The scikit-image variant needs a 7x7 window: a typed error here.
        let p = ops::SceneParams {
            variant: ops::SsimVariant::SkImage,
            ..Default::default()
        };
        assert!(matches!(
            ops::scene_change_with(&a, &b, &p),
            Err(OpsError::InvalidParam { .. })
        ));
        let sal = ops::saliency_dft(&a).unwrap();
        assert!(sal.dim() == (h, w) && sal.iter().all(|v| v.is_finite()));
        let m = ops::motion_map(&a, &b).unwrap();
        assert!(m.dim() == (h, w) && m.iter().all(|v| (0.0..=1.0).contains(v)));
        assert_eq!(ops::center_crop(&a).unwrap().dim(), (h, w));
        let roi = ops::encode_roi(&frame, &ops::center_crop(&a).unwrap()).unwrap();
        assert_eq!(
            roi.bbox,
            ops::BBox {
                x: 0,
                y: 0,
                width: w,
                height: h
            }
        );
    }
}

#[test]
fn into_variants_reuse_buffers_and_match_allocating_ones() {
    let mut r = rng(16);
    let mut gray_out = GrayImage::zeros((1, 1));
    let mut map_out = ScoreMap::zeros((1, 1));
    for &(h, w) in &[(30, 40), (31, 17), (30, 40)] {
        let frame = textured_rgb(&mut r, h, w);
        ops::to_gray_into(&frame, &mut gray_out).unwrap();
        assert_eq!(gray_out, ops::to_gray(&frame).unwrap());
        let a = gray_out.clone();
        let b = next_frame(&mut r, &a, 2, 0, 5);
        ops::motion_map_into(&a, &b, &ops::MotionParams::default(), &mut map_out).unwrap();
        assert_eq!(map_out, ops::motion_map(&a, &b).unwrap());
        ops::saliency_dft_into(&a, &ops::SaliencyParams::default(), &mut map_out).unwrap();
        assert_eq!(map_out, ops::saliency_dft(&a).unwrap());
        ops::center_crop_into(&a, &ops::CenterParams::default(), &mut map_out).unwrap();
        assert_eq!(map_out, ops::center_crop(&a).unwrap());
    }
}

#[test]
fn non_standard_layouts_give_the_same_results() {
    let mut r = rng(17);
    let a = textured_gray(&mut r, 40, 30);
    let b = next_frame(&mut r, &a, 1, 2, 6);
    // Same pixels, column-major memory.
    let fortran = |img: &GrayImage| {
        let mut t = GrayImage::zeros((img.ncols(), img.nrows()));
        t.assign(&img.t());
        t.reversed_axes()
    };
    let (fa, fb) = (fortran(&a), fortran(&b));
    assert!(!fa.is_standard_layout() && fa == a);
    assert_eq!(
        ops::laplacian_variance(&fa).unwrap(),
        ops::laplacian_variance(&a).unwrap()
    );
    assert_eq!(ops::ssim(&fa, &fb).unwrap(), ops::ssim(&a, &b).unwrap());
    assert_eq!(
        ops::motion_map(&fa, &fb).unwrap(),
        ops::motion_map(&a, &b).unwrap()
    );
    assert_eq!(
        ops::saliency_dft(&fa).unwrap(),
        ops::saliency_dft(&a).unwrap()
    );
    let m = ops::center_crop(&a).unwrap();
    let mut fm = ScoreMap::zeros((30, 40));
    fm.assign(&m.t());
    let fm = fm.reversed_axes();
    let w = Weights::new().with("wc", 0.5).with("wm", 0.25);
    let mm = ops::motion_map(&a, &b).unwrap();
    assert_eq!(
        ops::score_fusion(Some(&fm), None, None, Some(&mm), &w).unwrap(),
        ops::score_fusion(Some(&m), None, None, Some(&mm), &w).unwrap()
    );
}

#[test]
fn scene_change_on_real_frames() {
    let g1 = ops::to_gray(&photo("rubberwhale1.jpg")).unwrap();
    let g2 = ops::to_gray(&photo("rubberwhale2.jpg")).unwrap();
    let same_scene = ops::scene_change(&g2, &g1).unwrap();
    assert!(!same_scene.changed, "{same_scene:?}");
    // A cut: another photograph cropped to the same size.
    let f = ops::to_gray(&photo("fruits.jpg")).unwrap();
    let (h, w) = (g1.nrows().min(f.nrows()), g1.ncols().min(f.ncols()));
    let crop = |g: &GrayImage| g.slice(ndarray::s![..h, ..w]).to_owned();
    let cut = ops::scene_change(&crop(&f), &crop(&g1)).unwrap();
    assert!(cut.changed, "{cut:?}");
    for v in [ops::SsimVariant::Gaussian, ops::SsimVariant::SkImage] {
        let p = ops::SceneParams {
            variant: v,
            ..Default::default()
        };
        let s = ops::scene_change_with(&g2, &g1, &p).unwrap().ssim.unwrap();
        eprintln!(
            "rubberwhale 1→2 SSIM ({v:?}): {s:.4}; cut: {:.4}",
            cut.ssim.unwrap()
        );
    }
}
