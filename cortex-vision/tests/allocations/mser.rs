//! The reusable-buffer entry points of the MSER detector do not allocate in
//! steady state: once a workspace and an output buffer have seen a frame,
//! further frames of at most that size cost no allocation. Checked with a
//! counting global allocator (this binary's tests take turns).

use crate::mser_support::text_frame;
use cortex_vision::ops::mser::{Mser, MserWorkspace, Polarity, RegionBox, Regions};

fn allocations_during(f: impl FnOnce()) -> usize {
    cortex_testkit::allocs_during(f).1 as usize
}

#[test]
fn steady_state_detection_does_not_allocate() {
    let _serial = cortex_testkit::serial();
    let mser = Mser::default();
    let frames: Vec<_> = (0..4).map(|s| text_frame(240, 320, s)).collect();
    let mut ws = MserWorkspace::new();
    let mut regions = Regions::new();
    let mut boxes: Vec<RegionBox> = Vec::new();

    // Warm-up: every frame once, so that buffers reach their high-water mark.
    for f in &frames {
        mser.detect_into(&mut ws, f, Polarity::Both, &mut regions)
            .expect("ok");
        mser.detect_boxes_into(&mut ws, f, Polarity::Both, &mut boxes)
            .expect("ok");
    }
    let n = allocations_during(|| {
        for f in &frames {
            mser.detect_into(&mut ws, f, Polarity::Both, &mut regions)
                .expect("ok");
            mser.detect_boxes_into(&mut ws, f, Polarity::Both, &mut boxes)
                .expect("ok");
        }
    });
    assert_eq!(n, 0, "allocations in steady state");
    // A smaller frame fits in the same buffers.
    let small = text_frame(60, 80, 9);
    let n = allocations_during(|| {
        mser.detect_into(&mut ws, &small, Polarity::Bright, &mut regions)
            .expect("ok");
    });
    assert_eq!(n, 0);
}
