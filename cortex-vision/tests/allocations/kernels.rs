//! The reusable-output (`_into`) forms of the L2 kernels allocate nothing in
//! steady state: after a few warm-up frames, ≥ 20 frames of varied content
//! (a moving disc, shifting texture, a scene cut) at 640×480 and 1920×1080
//! cost zero heap allocations in every op except `text_map` (owned
//! elsewhere), the JPEG encoder's internals included. Each op is counted on
//! its own so a failure names the op. The results must also equal those of
//! the allocating forms.
//!
//! Allocations are counted per thread; the tests still take turns with the
//! rest of this binary, whose tests read process-wide counters.

use std::collections::BTreeMap;

use cortex_core::Weights;
use cortex_vision::ops::{
    self, BlurParams, CenterParams, EncodedRoi, EncoderParams, GrayImage, MotionParams, RgbFrame,
    SaliencyParams, SceneParams, ScoreMap,
};

/// Allocation calls and bytes on this thread while `f` runs.
fn allocations<R>(f: impl FnOnce() -> R) -> (R, u64, u64) {
    cortex_testkit::thread_allocs_during(f)
}

/// Frame `f` of a synthetic clip: gradient plus hashed texture that shifts
/// with the frame, text-like strokes, a bright moving disc, and from frame
/// 12 on another scene (inverted gradient, disc elsewhere), so consecutive
/// frames differ everywhere and the ROI moves and changes size.
fn frame(f: usize, width: usize, height: usize) -> RgbFrame {
    let (w, h) = (width as f32, height as f32);
    let cut = f >= 12;
    let t = (f % 12) as f32 / 12.0;
    let (cx, cy) = if cut {
        (w * (0.8 - 0.5 * t), h * 0.35)
    } else {
        (w * (0.2 + 0.6 * t), h * 0.6)
    };
    let r = w.min(h) * (0.06 + 0.01 * (f % 5) as f32);
    RgbFrame::from_shape_fn((height, width, 3), |(y, x, c)| {
        let (xf, yf) = (x as f32, y as f32);
        let hash = ((x as u32 + 3 * f as u32).wrapping_mul(73_856_093)
            ^ (y as u32).wrapping_mul(19_349_663))
            >> 27;
        let grad = if cut {
            200.0 - 90.0 * (xf / w) - 50.0 * (yf / h)
        } else {
            60.0 + 80.0 * (xf / w) + 40.0 * (yf / h)
        };
        let mut v = grad + hash as f32;
        let in_band = yf > h * 0.15 && yf < h * 0.25 && xf > w * 0.1 && xf < w * 0.6;
        if in_band && !((x + f) / 3).is_multiple_of(4) && (x / 24) % 5 != 4 {
            v = 20.0;
        }
        if (xf - cx).powi(2) + (yf - cy).powi(2) < r * r {
            v = 235.0;
        }
        (v + c as f32 * 6.0).clamp(0.0, 255.0) as u8
    })
}

/// Buffers a pipeline keeps across frames, starting empty as
/// `Default::default()` leaves them.
#[derive(Default)]
struct Buffers {
    gray: GrayImage,
    prev: GrayImage,
    center: ScoreMap,
    text: ScoreMap,
    saliency: ScoreMap,
    motion: ScoreMap,
    fused: ScoreMap,
    roi: EncodedRoi,
}

const WARM_UP: usize = 3;
const STEADY: usize = 21;

fn weights() -> Weights {
    Weights::new()
        .with("wc", 0.4)
        .with("wt", 0.3)
        .with("ws", 0.2)
        .with("wm", 0.1)
}

/// Runs every op once on `frame`, counting each; returns `(op, calls, bytes)`.
fn step(frame: &RgbFrame, b: &mut Buffers, w: &Weights) -> Vec<(&'static str, u64, u64)> {
    let mut counts = Vec::new();
    let mut note = |name, (res, calls, bytes): (Result<(), ops::OpsError>, u64, u64)| {
        res.unwrap_or_else(|e| panic!("{name}: {e}"));
        counts.push((name, calls, bytes));
    };
    note(
        "to_gray_into",
        allocations(|| ops::to_gray_into(frame, &mut b.gray)),
    );
    note(
        "blur_detector",
        allocations(|| ops::blur_detector_with(&b.gray, &BlurParams::DEFAULT).map(drop)),
    );
    note(
        "scene_change",
        allocations(|| ops::scene_change_with(&b.gray, &b.prev, &SceneParams::DEFAULT).map(drop)),
    );
    note(
        "center_crop_into",
        allocations(|| ops::center_crop_into(&b.gray, &CenterParams::DEFAULT, &mut b.center)),
    );
    note(
        "saliency_dft_into",
        allocations(|| ops::saliency_dft_into(&b.gray, &SaliencyParams::DEFAULT, &mut b.saliency)),
    );
    note(
        "motion_map_into",
        allocations(|| {
            ops::motion_map_into(&b.gray, &b.prev, &MotionParams::DEFAULT, &mut b.motion)
        }),
    );
    // text_map is not under test: a stand-in map of the right size.
    if b.text.dim() != b.gray.dim() {
        b.text = b.gray.mapv(|v| f32::from(v) / 255.0);
    }
    note(
        "score_fusion_into",
        allocations(|| {
            ops::score_fusion_into(
                Some(&b.center),
                Some(&b.text),
                Some(&b.saliency),
                Some(&b.motion),
                w,
                &mut b.fused,
            )
        }),
    );
    note(
        "encode_roi_into",
        allocations(|| ops::encode_roi_into(frame, &b.fused, &EncoderParams::DEFAULT, &mut b.roi)),
    );
    counts
}

/// The allocating forms give the same results as the `_into` ones.
fn check_same(frame: &RgbFrame, b: &Buffers, w: &Weights) {
    assert_eq!(ops::to_gray(frame).unwrap(), b.gray);
    assert_eq!(ops::center_crop(&b.gray).unwrap(), b.center);
    assert_eq!(ops::saliency_dft(&b.gray).unwrap(), b.saliency);
    assert_eq!(ops::motion_map(&b.gray, &b.prev).unwrap(), b.motion);
    let fused = ops::score_fusion(
        Some(&b.center),
        Some(&b.text),
        Some(&b.saliency),
        Some(&b.motion),
        w,
    )
    .unwrap();
    assert_eq!(fused, b.fused);
    assert_eq!(ops::encode_roi(frame, &b.fused).unwrap(), b.roi);
}

fn steady_state_allocates_nothing(width: usize, height: usize) {
    let frames: Vec<RgbFrame> = (0..WARM_UP + STEADY)
        .map(|f| frame(f, width, height))
        .collect();
    let w = weights();
    let mut b = Buffers::default();
    let mut totals: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    let mut roi_sizes = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        let counts = step(f, &mut b, &w);
        check_same(f, &b, &w);
        if i >= WARM_UP {
            for (name, calls, bytes) in counts {
                let t = totals.entry(name).or_default();
                *t = (t.0 + calls, t.1 + bytes);
            }
            roi_sizes.push((b.roi.bbox.width, b.roi.bbox.height));
        }
        // The state moves on without allocating: last frame's gray becomes
        // `prev`, and its buffer serves the next frame's gray.
        std::mem::swap(&mut b.gray, &mut b.prev);
    }
    // The content really varied: the region moved and changed size.
    roi_sizes.dedup();
    assert!(roi_sizes.len() > 3, "ROI barely varied: {roi_sizes:?}");
    let allocating: Vec<_> = totals
        .iter()
        .filter(|(_, &(calls, _))| calls > 0)
        .map(|(name, (calls, bytes))| format!("{name}: {calls} allocations, {bytes} bytes"))
        .collect();
    assert!(
        allocating.is_empty(),
        "{width}x{height}, {STEADY} frames after {WARM_UP} of warm-up:\n{}",
        allocating.join("\n")
    );
}

#[test]
fn steady_state_allocates_nothing_at_640x480() {
    let _serial = cortex_testkit::serial();
    steady_state_allocates_nothing(640, 480);
}

#[test]
fn steady_state_allocates_nothing_at_1920x1080() {
    let _serial = cortex_testkit::serial();
    steady_state_allocates_nothing(1920, 1080);
}

/// A buffer left at another shape (by an earlier frame or another node) is
/// fully overwritten, and one of the right shape keeps its allocation.
#[test]
fn into_forms_overwrite_buffers_of_another_shape() {
    let _serial = cortex_testkit::serial();
    let f = frame(5, 96, 64);
    let mut b = Buffers {
        gray: GrayImage::from_elem((7, 9), 3),
        prev: GrayImage::from_elem((64, 96), 9),
        center: ScoreMap::from_elem((3, 3), f32::NAN),
        text: ScoreMap::from_elem((64, 96), 0.5),
        saliency: ScoreMap::from_elem((100, 2), 7.0),
        motion: ScoreMap::from_elem((1, 1), -1.0),
        fused: ScoreMap::from_elem((64, 96), f32::NAN),
        roi: EncodedRoi {
            jpeg: vec![0xAB; 100_000],
            ..EncodedRoi::default()
        },
    };
    let w = weights();
    step(&f, &mut b, &w);
    check_same(&f, &b, &w);
    let kept = b.fused.as_ptr();
    step(&f, &mut b, &w);
    assert_eq!(b.fused.as_ptr(), kept, "same shape: allocation kept");
}
