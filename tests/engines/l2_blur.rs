//! L2's blur decision against the clip's own sharpness baseline: a soft but
//! in-focus clip is not called blurry (the fixed threshold of 100 calls it
//! blurry throughout), and a sharp clip's blurred stretch is flagged
//! exactly.
#![cfg(feature = "runner")]

use cortex::l2::{L2Mode, BLUR_RATIO, L2};
use cortex::ops::RgbFrame;
use cortex::runner::sources::{SyntheticClip, SyntheticLayout};

const W: usize = 320;
const H: usize = 240;

/// A soft, dark film: every frame of the synthetic scene defocused (three
/// passes of a 3×3 box) and at 40 % brightness — in focus as much as it
/// will ever be, with no blurred stretch of its own.
fn soft(frame: &RgbFrame) -> RgbFrame {
    let (h, w, _) = frame.dim();
    let mut cur = frame.mapv(|v| f32::from(v) * 0.4);
    for _ in 0..3 {
        let prev = cur.clone();
        for y in 0..h {
            for x in 0..w {
                for c in 0..3 {
                    let mut s = 0.0;
                    for dy in 0..3 {
                        for dx in 0..3 {
                            let yy = (y + dy).saturating_sub(1).min(h - 1);
                            let xx = (x + dx).saturating_sub(1).min(w - 1);
                            s += prev[(yy, xx, c)];
                        }
                    }
                    cur[(y, x, c)] = s / 9.0;
                }
            }
        }
    }
    cur.mapv(|v| v.round() as u8)
}

#[test]
fn a_soft_clip_is_not_blurry_but_the_fixed_threshold_says_it_is() {
    let clip = SyntheticClip::new(W, H);
    let mut p = L2::new();
    let layout = SyntheticLayout::DEFAULT;
    let (mut relative, mut absolute) = (0, 0);
    // Skip the clip's own blurred stretch: this film is uniformly soft.
    let frames = (0..layout.len).filter(|&f| !layout.is_blurred(f));
    let mut n = 0;
    for f in frames {
        let out = p.run(L2Mode::PowerSave, &soft(&clip.frame(f))).unwrap();
        relative += usize::from(out.blur.is_blurry);
        absolute += usize::from(out.blur.below_threshold);
        n += 1;
    }
    assert_eq!(
        relative, 0,
        "the relative rule calls no frame of a soft clip blurry"
    );
    assert_eq!(
        absolute, n,
        "the fixed threshold of 100 calls every frame blurry"
    );
}

#[test]
fn a_sharp_clip_flags_exactly_its_blurred_stretch() {
    let clip = SyntheticClip::new(W, H);
    let layout = SyntheticLayout::DEFAULT;
    let mut p = L2::new();
    for f in 0..layout.len {
        let out = p.run(L2Mode::PowerSave, &clip.frame(f)).unwrap();
        assert_eq!(
            out.blur.is_blurry,
            layout.is_blurred(f),
            "frame {f}: {:?}",
            out.blur
        );
        if out.blur.is_blurry {
            assert!(out.blur.ratio < BLUR_RATIO);
        }
    }
}

#[test]
fn a_long_blurred_stretch_stays_flagged_and_a_cut_starts_a_new_baseline() {
    let clip = SyntheticClip::new(W, H).with_layout(SyntheticLayout {
        len: 40,
        blur_start: 5,
        blur_end: 30,
        cut: 35,
    });
    let mut p = L2::new();
    let mut baseline_before_cut = None;
    for f in 0..40 {
        let out = p.run(L2Mode::PowerSave, &clip.frame(f)).unwrap();
        assert_eq!(
            out.blur.is_blurry,
            (5..30).contains(&f),
            "frame {f}: {:?}",
            out.blur
        );
        if f == 34 {
            baseline_before_cut = out.blur.next_baseline;
        }
        if f == 35 {
            assert!(
                out.scene.changed && out.blur.baseline.is_none(),
                "{:?}",
                out.blur
            );
            assert_eq!(out.blur.next_baseline, Some(out.blur.variance));
        }
    }
    assert!(baseline_before_cut.is_some());
}
