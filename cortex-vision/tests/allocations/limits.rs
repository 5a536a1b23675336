//! Bad input costs what it should: frames over the limits are refused before
//! anything is allocated, working memory follows the caller's buffers (not
//! their product), sums do not overflow, extreme parameters give no NaN, and
//! an outsized frame's working memory does not stay with the thread.
//! Peak and live heap bytes are measured with the counting global
//! allocator; the tests take turns so that they measure one at a time.

use std::time::Instant;

use cortex_core::limits::{with_limits, FrameLimits};
use cortex_vision::ops::resize::{resize_linear_exact_u8, resize_linear_f32, ResizeScratch};
use cortex_vision::ops::text_roi::{text_map_with, TextRoiParams, MIN_SATURATION};
use cortex_vision::ops::{
    self, CenterParams, GrayImage, MotionParams, OpsError, SaliencyParams, ScoreMap,
};

/// Runs `f`; returns its result, the peak heap growth during it and the heap
/// growth it left behind (both in bytes, over the live bytes before it).
fn measure<R>(f: impl FnOnce() -> R) -> (R, usize, isize) {
    let before = cortex_testkit::live_bytes();
    cortex_testkit::reset_peak();
    let r = f();
    let peak = cortex_testkit::peak_bytes() - before;
    let after = cortex_testkit::live_bytes() as isize - before as isize;
    (r, peak, after)
}

const MIB: usize = 1 << 20;

fn raised(max_side: usize, max_pixels: usize) -> FrameLimits {
    FrameLimits {
        max_side,
        max_pixels,
        ..FrameLimits::DEFAULT
    }
}

fn is_too_large<T: std::fmt::Debug>(r: Result<T, OpsError>) -> bool {
    matches!(r, Err(OpsError::TooLarge { .. }))
}

/// Refused by the default limits before allocating for the frame (at most
/// 64 KiB: nothing sized by the request); the time is printed, not asserted.
fn refused_quickly<T: std::fmt::Debug>(f: impl FnOnce() -> Result<T, OpsError>) {
    let t = Instant::now();
    let (r, peak, _) = measure(f);
    let took = t.elapsed();
    assert!(is_too_large(r), "expected TooLarge");
    eprintln!("refused in {took:?}, {peak} bytes allocated");
    assert!(peak < 64 * 1024, "refusal allocated {peak} bytes");
}

#[test]
fn resize_to_a_huge_destination_is_refused_by_default_and_bounded_when_allowed() {
    let _g = cortex_testkit::serial();
    // 65536×1 → 1×1048576 (rows × columns): 256 GiB of scratch before.
    let src: Vec<f32> = (0..65536).map(|i| i as f32).collect();
    let mut dst = vec![0f32; 1 << 20];
    let mut s = ResizeScratch::default();
    refused_quickly(|| resize_linear_f32(&src, (65536, 1), &mut dst, (1, 1 << 20), &mut s));
    let ((), peak, _) = measure(|| {
        with_limits(FrameLimits::UNLIMITED, || {
            resize_linear_f32(&src, (65536, 1), &mut dst, (1, 1 << 20), &mut s).unwrap()
        })
    });
    assert!(peak < MIB, "working memory {peak} bytes");
    // The one output row lies halfway between source rows 32767 and 32768
    // (position (0 + 0.5)·65536 − 0.5); the source has one column.
    let want = 0.5 * (32767.0f32 + 32768.0);
    assert!(dst.iter().all(|&v| v == want));

    // 6×65535 ↔ 65535×6 (17 GB of scratch in one direction before).
    for ((sh, sw), (dh, dw)) in [((6, 65535), (65535, 6)), ((65535, 6), (6, 65535))] {
        let src = vec![0.25f32; sh * sw];
        let mut dst = vec![0f32; dh * dw];
        refused_quickly(|| resize_linear_f32(&src, (sh, sw), &mut dst, (dh, dw), &mut s));
        let srcu = vec![9u8; sh * sw];
        let mut dstu = vec![0u8; dh * dw];
        let ((), peak, _) = measure(|| {
            with_limits(FrameLimits::UNLIMITED, || {
                resize_linear_f32(&src, (sh, sw), &mut dst, (dh, dw), &mut s).unwrap();
                resize_linear_exact_u8(&srcu, (sh, sw), &mut dstu, (dh, dw), &mut s).unwrap();
            })
        });
        assert!(
            peak < MIB,
            "{sh}x{sw} -> {dh}x{dw}: working memory {peak} bytes"
        );
        assert!(dst.iter().all(|&v| v == 0.25));
        assert!(dstu.iter().all(|&v| v == 9));
    }
}

#[test]
fn saliency_working_memory_follows_the_working_size_not_the_frame() {
    let _g = cortex_testkit::serial();
    // A 64-wide, 4096-high working size (valid) on a 1-row frame 2 000 000
    // wide: 32.8 GB before.
    let tall_work = SaliencyParams {
        width: 64,
        height: 4096,
    };
    let row = GrayImage::from_shape_fn((1, 2_000_000), |(_, x)| (x % 251) as u8);
    refused_quickly(|| ops::saliency_dft_with(&row, &tall_work));
    let (m, peak, _) = measure(|| {
        with_limits(raised(2_000_000, 2_000_000), || {
            ops::saliency_dft_with(&row, &tall_work).unwrap()
        })
    });
    let out_bytes = m.len() * 4;
    // The engine holds ~61 bytes per working pixel (64×4096: 16 MB).
    assert!(
        peak < out_bytes + 64 * 4096 * 64 + 4 * MIB,
        "peak {peak} bytes for a {out_bytes}-byte map"
    );
    assert!(m.iter().all(|v| v.is_finite() && (0.0..=1.0).contains(v)));
    drop(m);

    // Default params on 1×20 000 000: 5.6 GB at the peak before, kept by the
    // thread afterwards.
    let strip = GrayImage::from_shape_fn((1, 20_000_000), |(_, x)| (x % 253) as u8);
    refused_quickly(|| ops::saliency_dft(&strip));
    let (m, peak, left) = measure(|| {
        with_limits(raised(20_000_000, 20_000_000), || {
            ops::saliency_dft(&strip).unwrap()
        })
    });
    let out_bytes = m.len() * 4;
    assert!(peak < out_bytes + 2 * MIB, "peak {peak} bytes");
    assert!(
        left < (out_bytes + 2 * MIB) as isize,
        "{left} bytes left behind for a {out_bytes}-byte map"
    );
}

#[test]
fn text_roi_params_outside_their_safe_range_are_refused() {
    let _g = cortex_testkit::serial();
    let gray = GrayImage::from_elem((40, 60), 128);
    for p in [
        TextRoiParams {
            smooth_frac: 1e30,
            ..Default::default()
        },
        TextRoiParams {
            smooth_frac: 1.5,
            ..Default::default()
        },
        TextRoiParams {
            saturation: 1e-45,
            ..Default::default()
        },
        TextRoiParams {
            saturation: MIN_SATURATION / 2.0,
            ..Default::default()
        },
    ] {
        assert!(
            matches!(text_map_with(&gray, &p), Err(OpsError::InvalidParam { .. })),
            "{p:?}"
        );
    }
    // The extremes of the valid ranges: a uniform image (no regions) gives
    // an all-zero map, a textured one a map in [0, 1].
    let p = TextRoiParams {
        smooth_frac: 1.0,
        saturation: MIN_SATURATION,
        ..Default::default()
    };
    let m = text_map_with(&gray, &p).unwrap();
    assert!(m.iter().all(|&v| v == 0.0));
    let tex = GrayImage::from_shape_fn(
        (60, 80),
        |(y, x)| {
            if (x / 6 + y / 9) % 2 == 0 {
                30
            } else {
                220
            }
        },
    );
    let m = text_map_with(&tex, &p).unwrap();
    assert!(m.iter().all(|v| (0.0..=1.0).contains(v)));
}

#[test]
fn center_prior_with_a_vanishing_sigma_has_no_nan_and_huge_sizes_are_refused() {
    let _g = cortex_testkit::serial();
    for sigma in [1e-170, 1e-300, f64::MIN_POSITIVE, 5e-324] {
        let p = CenterParams {
            sigma_x: sigma,
            sigma_y: sigma,
        };
        let m = ops::center_crop_with(&GrayImage::zeros((5, 7)), &p).unwrap();
        for ((y, x), &v) in m.indexed_iter() {
            let want = if (y, x) == (2, 3) { 1.0 } else { 0.0 };
            assert_eq!(v, want, "σ {sigma:e} at ({y},{x})");
        }
    }
    let mut out = ScoreMap::zeros((0, 0));
    let p = CenterParams::default();
    for (h, w) in [(usize::MAX, 2), (1 << 20, 1 << 20), (3, usize::MAX / 2)] {
        refused_quickly(|| ops::center_prior_into(h, w, &p, &mut out));
    }
}

#[test]
fn motion_sum_over_a_seventeen_million_pixel_cell_does_not_overflow() {
    let _g = cortex_testkit::serial();
    let n = 17_000_000;
    let cur = GrayImage::from_elem((n, 1), 255);
    let prev = GrayImage::zeros((n, 1));
    let one = MotionParams {
        grid_w: 1,
        grid_h: 1,
    };
    refused_quickly(|| ops::motion_map_with(&cur, &prev, &one));
    let m = with_limits(raised(n, n), || {
        ops::motion_map_with(&cur, &prev, &one).unwrap()
    });
    assert_eq!(m.dim(), (n, 1));
    assert!(m.iter().all(|&v| v == 1.0), "got {}", m[[0, 0]]);
}

#[test]
fn scene_change_on_a_tall_narrow_frame_is_bounded_like_the_wide_one() {
    let _g = cortex_testkit::serial();
    let n = 4_000_000;
    let tall_a = GrayImage::from_shape_fn((n, 1), |(y, _)| (y % 249) as u8);
    let tall_b = GrayImage::from_shape_fn((n, 1), |(y, _)| ((y * 7) % 241) as u8);
    refused_quickly(|| ops::scene_change(&tall_a, &tall_b));
    let (wide_a, wide_b) = (
        tall_a.clone().into_shape_with_order((1, n)).unwrap(),
        tall_b.clone().into_shape_with_order((1, n)).unwrap(),
    );
    with_limits(raised(n, n), || {
        let t = Instant::now();
        let (wide, wide_peak, _) = measure(|| ops::scene_change(&wide_a, &wide_b).unwrap());
        let t_wide = t.elapsed();
        let t = Instant::now();
        let (tall, tall_peak, _) = measure(|| ops::scene_change(&tall_a, &tall_b).unwrap());
        let t_tall = t.elapsed();
        eprintln!(
            "scene_change on {n} pixels: wide {t_wide:?} ({wide_peak} bytes), tall {t_tall:?} ({tall_peak} bytes)"
        );
        // SSIM is symmetric in x and y: the transpose gives the same value.
        assert_eq!(tall.ssim, wide.ssim);
        // A tall, narrow frame is computed on its transpose: its working
        // memory is the wide frame's plus one copy of the two frames, never
        // per-pixel planes of the filtered quantities (8 bytes or more a
        // pixel, what a column-by-column layout would hold).
        assert!(
            tall_peak <= wide_peak + 2 * n + MIB,
            "tall {tall_peak} bytes vs wide {wide_peak}"
        );
    });
}

#[test]
fn an_outsized_frame_leaves_no_working_memory_behind() {
    let _g = cortex_testkit::serial();
    let mut map = ScoreMap::zeros((2000, 2000));
    map[[1000, 1000]] = 1.0;
    let p = ops::EncoderParams::default();
    // Warm up the thread's buffers at a small size, then an outsized frame
    // under a 1 MiB retention budget: its 4 MB fill state is released.
    ops::select_roi(&ScoreMap::from_elem((8, 8), 1.0), &p).unwrap();
    let budget = FrameLimits {
        max_retained_bytes: MIB,
        ..FrameLimits::DEFAULT
    };
    let (_, peak, left) = measure(|| with_limits(budget, || ops::select_roi(&map, &p).unwrap()));
    assert!(peak >= 4_000_000, "the fill state is per pixel: {peak}");
    assert!(left <= 0, "{left} bytes left behind");
    // Within the budget the buffers stay for the next frame.
    let (_, _, left) = measure(|| ops::select_roi(&map, &p).unwrap());
    assert!(left >= 4_000_000, "{left} bytes kept");
}
