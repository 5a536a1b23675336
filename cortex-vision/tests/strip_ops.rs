//! The strip forms of the kernels, run in fused groups at several strip
//! counts on frames of the synthetic clip, against the whole-frame
//! functions: every output bit-identical.

use cortex_core::strip::{AnyPlane, Geometry, GroupBuilder, StripError, Strips};
use cortex_vision::clip::SyntheticClip;
use cortex_vision::ops::resize::{resize_gray_into, resize_map_into};
use cortex_vision::ops::strip::{
    CenterStrip, GrayStrip, Laplacian, LaplacianVariance, MotionCells, MotionExpand,
    ResizeMapStrip, ResizeStrip, ScoreFusionStrip, SsimReduction,
};
use cortex_vision::ops::{
    center_crop_with, fuse_into, laplacian_variance, motion_map_with, ssim, to_gray, CenterParams,
    GrayImage, MotionParams, RgbFrame, ScoreMap,
};

const SIZES: [(usize, usize); 5] = [(768, 576), (97, 61), (32, 24), (3, 2), (1, 1)];

fn strip_counts(h: usize) -> Vec<Strips> {
    vec![
        Strips::Count(1),
        Strips::Count(2),
        Strips::Count(7),
        Strips::Count(h + 3),
        Strips::Rows(5),
        Strips::Auto,
    ]
}

fn frames(w: usize, h: usize) -> (RgbFrame, RgbFrame) {
    let clip = SyntheticClip::new(w, h);
    // Two frames apart, with the object moving between them.
    (clip.frame(5), clip.frame(3))
}

fn rgb_plane(f: &RgbFrame) -> AnyPlane<'_> {
    let (h, w, _) = f.dim();
    AnyPlane::new(f.as_slice().unwrap(), Geometry::new(w, h).with_channels(3)).unwrap()
}

fn gray_plane(g: &GrayImage) -> AnyPlane<'_> {
    let (h, w) = g.dim();
    AnyPlane::new(g.as_slice().unwrap(), Geometry::new(w, h)).unwrap()
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// gray → Laplacian (a stencil) and its variance (a reduction), with the
/// centre prior, in one group.
#[test]
fn gray_laplacian_variance_and_prior_match_the_whole_frame_ops() {
    for (w, h) in SIZES {
        let (cur, _) = frames(w, h);
        let gray = to_gray(&cur).unwrap();
        let variance = laplacian_variance(&gray).unwrap();
        let prior = center_crop_with(&gray, &CenterParams::DEFAULT).unwrap();
        let mut g = GroupBuilder::new();
        let rgb = g.input();
        let gr = g.kernel(GrayStrip, &[rgb]).unwrap();
        let lap = g.kernel(Laplacian, &[gr]).unwrap();
        let var = g.reduction(LaplacianVariance, &[gr]).unwrap();
        let pri = g
            .kernel(CenterStrip::new(CenterParams::DEFAULT).unwrap(), &[gr])
            .unwrap();
        for v in [gr, lap, var, pri] {
            g.output(v).unwrap();
        }
        let mut group = g.build().unwrap();
        for strips in strip_counts(h) {
            group.run(&[rgb_plane(&cur)], strips).unwrap();
            let ctx = format!("{w}x{h} {strips:?}");
            assert_eq!(
                group.output::<u8>(0).unwrap().as_slice(),
                gray.as_slice().unwrap(),
                "{ctx}"
            );
            assert_eq!(
                group.output::<f64>(2).unwrap().as_slice()[0].to_bits(),
                variance.to_bits(),
                "{ctx}"
            );
            assert_eq!(
                bits(group.output::<f32>(3).unwrap().as_slice()),
                bits(prior.as_slice().unwrap()),
                "{ctx}"
            );
            // The Laplacian plane against its formula, pixel by pixel.
            let lap = group.output::<i16>(1).unwrap();
            let r = |p: isize, n: usize| -> usize {
                if n == 1 {
                    return 0;
                }
                let p = if p < 0 { -p } else { p } as usize;
                if p >= n {
                    2 * (n - 1) - p
                } else {
                    p
                }
            };
            for y in 0..h {
                for x in 0..w {
                    let p = |yy: isize, xx: isize| i16::from(gray[[r(yy, h), r(xx, w)]]);
                    let (yi, xi) = (y as isize, x as isize);
                    let want = p(yi - 1, xi) + p(yi + 1, xi) + p(yi, xi - 1) + p(yi, xi + 1)
                        - 4 * p(yi, xi);
                    assert_eq!(lap.row(y).unwrap()[x], want, "{ctx} ({y}, {x})");
                }
            }
        }
    }
}

/// motion_map as a reduction group (the pooled cells) and a resample group
/// (cells back to frame size) fused with the score fusion.
#[test]
fn motion_and_fusion_match_the_whole_frame_ops() {
    for (w, h, params) in [
        (768, 576, MotionParams::DEFAULT),
        (192, 144, MotionParams::DEFAULT),
        (
            64,
            48,
            MotionParams {
                grid_w: 8,
                grid_h: 6,
            },
        ),
        (5, 3, MotionParams::DEFAULT),
        (1, 1, MotionParams::DEFAULT),
    ] {
        let (cur, prev) = frames(w, h);
        let (cur, prev) = (to_gray(&cur).unwrap(), to_gray(&prev).unwrap());
        let motion = motion_map_with(&cur, &prev, &params).unwrap();
        let prior = center_crop_with(&cur, &CenterParams::DEFAULT).unwrap();
        let weights = [0.3f32, 0.0, 0.7];
        let mut fused = ScoreMap::zeros((0, 0));
        fuse_into(
            &[
                (Some(&prior), 0.3),
                (Some(&prior), 0.0),
                (Some(&motion), 0.7),
            ],
            &mut fused,
        )
        .unwrap();

        let mut pool = GroupBuilder::new();
        let (c, p) = (pool.input(), pool.input());
        let cells = pool
            .reduction(MotionCells::new(params).unwrap(), &[c, p])
            .unwrap();
        pool.output(cells).unwrap();
        let mut pool = pool.build().unwrap();

        let mut expand = GroupBuilder::new();
        let (cells_in, cur_in) = (expand.input(), expand.input());
        let m = expand.kernel(MotionExpand, &[cells_in, cur_in]).unwrap();
        let pri = expand
            .kernel(CenterStrip::new(CenterParams::DEFAULT).unwrap(), &[cur_in])
            .unwrap();
        let s = expand
            .kernel(ScoreFusionStrip::new(&weights).unwrap(), &[pri, pri, m])
            .unwrap();
        expand.output(m).unwrap();
        expand.output(s).unwrap();
        let mut expand = expand.build().unwrap();

        for strips in strip_counts(h) {
            let ctx = format!("{w}x{h} {strips:?}");
            pool.run(&[gray_plane(&cur), gray_plane(&prev)], strips)
                .unwrap();
            let cells = pool.output::<f32>(0).unwrap();
            expand
                .run(&[cells.into(), gray_plane(&cur)], strips)
                .unwrap();
            assert_eq!(
                bits(expand.output::<f32>(0).unwrap().as_slice()),
                bits(motion.as_slice().unwrap()),
                "{ctx}"
            );
            assert_eq!(
                bits(expand.output::<f32>(1).unwrap().as_slice()),
                bits(fused.as_slice().unwrap()),
                "{ctx}"
            );
        }
    }
}

#[test]
fn motion_strip_form_refuses_grids_that_do_not_divide_the_frame() {
    let (cur, prev) = frames(97, 61);
    let (cur, prev) = (to_gray(&cur).unwrap(), to_gray(&prev).unwrap());
    let mut g = GroupBuilder::new();
    let (c, p) = (g.input(), g.input());
    let cells = g
        .reduction(MotionCells::new(MotionParams::DEFAULT).unwrap(), &[c, p])
        .unwrap();
    g.output(cells).unwrap();
    let mut g = g.build().unwrap();
    assert!(matches!(
        g.run(&[gray_plane(&cur), gray_plane(&prev)], Strips::Auto),
        Err(StripError::Geometry { .. })
    ));
    assert!(ScoreFusionStrip::new(&[0.5, -1.0]).is_err());
    assert!(ScoreFusionStrip::new(&[]).is_err());
    // Gray of a one-channel plane is refused before anything runs.
    let mut g = GroupBuilder::new();
    let x = g.input();
    let y = g.kernel(GrayStrip, &[x]).unwrap();
    g.output(y).unwrap();
    let mut g = g.build().unwrap();
    assert!(matches!(
        g.run(&[gray_plane(&cur)], Strips::Auto),
        Err(StripError::Geometry { .. })
    ));
}

/// Two gray frames → their Gaussian SSIM as a reduction (window ±5, 128-column
/// partials): bit-identical to `ssim` at every strip count and size,
/// including frames narrower than one column strip and shorter than the
/// window; the sizes `ssim` transposes are refused (the group declines).
#[test]
fn ssim_reduction_matches_the_whole_frame_ssim() {
    let sizes = [
        (768, 576),
        (300, 17),
        (129, 40),
        (97, 61),
        (32, 24),
        (40, 3),
        (3, 2),
        (1, 1),
    ];
    for (w, h) in sizes {
        let (cur, prev) = frames(w, h);
        let (a, b) = (to_gray(&cur).unwrap(), to_gray(&prev).unwrap());
        let want = ssim(&a, &b).unwrap();
        let mut g = GroupBuilder::new();
        let (ia, ib) = (g.input(), g.input());
        let s = g.reduction(SsimReduction, &[ia, ib]).unwrap();
        g.output(s).unwrap();
        let mut group = g.build().unwrap();
        for strips in strip_counts(h) {
            group
                .run(&[gray_plane(&a), gray_plane(&b)], strips)
                .unwrap();
            assert_eq!(
                group.output::<f64>(0).unwrap().as_slice()[0].to_bits(),
                want.to_bits(),
                "{w}x{h} {strips:?}: {} vs {want}",
                group.output::<f64>(0).unwrap().as_slice()[0]
            );
        }
    }
    // Tall and narrow: the whole-frame function transposes it.
    let (cur, prev) = frames(8, 40);
    let (a, b) = (to_gray(&cur).unwrap(), to_gray(&prev).unwrap());
    let mut g = GroupBuilder::new();
    let (ia, ib) = (g.input(), g.input());
    let s = g.reduction(SsimReduction, &[ia, ib]).unwrap();
    g.output(s).unwrap();
    let mut group = g.build().unwrap();
    assert!(group
        .run(&[gray_plane(&a), gray_plane(&b)], Strips::Auto)
        .is_err());
}

/// gray → resize (8-bit, bit-exact linear) and gray → centre prior → resize
/// (`f32` linear) in one group, down, up, to exactly half, to the same size
/// and to a single pixel: every output equal to the whole-frame resizes.
#[test]
fn resizes_match_the_whole_frame_resizes() {
    for (w, h) in SIZES {
        let (cur, _) = frames(w, h);
        let gray = to_gray(&cur).unwrap();
        let prior = center_crop_with(&gray, &CenterParams::DEFAULT).unwrap();
        let targets = [
            (64, 64),
            (h.div_ceil(2), w.div_ceil(2)),
            (2 * h + 1, 3 * w),
            (h, w),
            (1, 1),
            (h / 3 + 1, 7),
        ];
        for (th, tw) in targets {
            let mut want_gray = GrayImage::default((0, 0));
            resize_gray_into(&gray, (th, tw), &mut want_gray).unwrap();
            let mut want_map = ScoreMap::default((0, 0));
            resize_map_into(&prior, (th, tw), &mut want_map).unwrap();
            let mut g = GroupBuilder::new();
            let rgb = g.input();
            let gr = g.kernel(GrayStrip, &[rgb]).unwrap();
            let small = g.kernel(ResizeStrip::to(th, tw), &[gr]).unwrap();
            let pri = g
                .kernel(CenterStrip::new(CenterParams::DEFAULT).unwrap(), &[gr])
                .unwrap();
            let map = g.kernel(ResizeMapStrip::to(th, tw), &[pri]).unwrap();
            // A stencil reading the resampled rows inside the strip.
            let lap = g.kernel(Laplacian, &[small]).unwrap();
            for v in [small, map, lap] {
                g.output(v).unwrap();
            }
            let mut group = g.build().unwrap();
            let mut lap_ref = GroupBuilder::new();
            let li = lap_ref.input();
            let lo = lap_ref.kernel(Laplacian, &[li]).unwrap();
            lap_ref.output(lo).unwrap();
            let mut lap_ref = lap_ref.build().unwrap();
            lap_ref.run_unfused(&[gray_plane(&want_gray)]).unwrap();
            for strips in strip_counts(th) {
                group.run(&[rgb_plane(&cur)], strips).unwrap();
                let ctx = format!("{w}x{h} -> {tw}x{th} {strips:?}");
                assert_eq!(
                    group.output::<u8>(0).unwrap().as_slice(),
                    want_gray.as_slice().unwrap(),
                    "{ctx}"
                );
                assert_eq!(
                    bits(group.output::<f32>(1).unwrap().as_slice()),
                    bits(want_map.as_slice().unwrap()),
                    "{ctx}"
                );
                assert_eq!(
                    group.output::<i16>(2).unwrap().as_slice(),
                    lap_ref.output::<i16>(0).unwrap().as_slice(),
                    "{ctx}"
                );
            }
        }
    }
}

/// A zero or oversized target is refused when the group plans the run, in
/// the kernel's words, and the whole-frame function leaves its output alone.
#[test]
fn resize_targets_are_checked() {
    let gray = GrayImage::from_elem((4, 4), 9);
    let mut out = GrayImage::from_elem((2, 2), 1);
    assert!(resize_gray_into(&gray, (0, 3), &mut out).is_err());
    assert!(resize_gray_into(&gray, (1 << 20, 1 << 20), &mut out).is_err());
    assert_eq!(out, GrayImage::from_elem((2, 2), 1));
    let mut g = GroupBuilder::new();
    let i = g.input();
    let r = g.kernel(ResizeStrip::to(0, 3), &[i]).unwrap();
    g.output(r).unwrap();
    let mut group = g.build().unwrap();
    let err = group
        .run(&[gray_plane(&gray)], Strips::Auto)
        .expect_err("a zero side");
    assert!(err.to_string().contains("resize"), "{err}");
}
