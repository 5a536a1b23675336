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

/// Every public entry point refuses a frame over the default frame limits
/// with `TooLarge`, in microseconds and without allocating: 8193×8192 (over
/// 2²⁶ pixels), 20000×20000 (both limits; its workspaces would need
/// 1.6 GB in one block) and a 20 000 000×3 strip (over the 16 384 side).
/// The inputs are zero-filled arrays, which the system hands out as
/// untouched pages: the test itself costs address space, not memory.
#[test]
fn every_entry_point_refuses_frames_over_the_limits_before_allocating() {
    use cortex_vision::ops::mser::PartitionWorkspace;
    use cortex_vision::ops::{GrayImage, OpsError};
    use std::time::Instant;

    let _serial = cortex_testkit::serial();
    let mser = Mser::default();
    for (rows, cols) in [(8192, 8193), (20_000, 20_000), (3, 20_000_000)] {
        let gray = GrayImage::zeros((rows, cols));
        let mut ws = MserWorkspace::new();
        let mut ws2 = [MserWorkspace::new(), MserWorkspace::new()];
        let mut pws = PartitionWorkspace::new();
        let mut regions = Regions::new();
        let mut boxes: Vec<RegionBox> = Vec::new();
        type Call<'a> = Box<dyn FnMut() -> Result<(), OpsError> + 'a>;
        let calls: Vec<(&str, Call)> = vec![
            (
                "detect",
                Box::new(|| mser.detect(&gray, Polarity::Both).map(drop)),
            ),
            (
                "detect_boxes",
                Box::new(|| mser.detect_boxes(&gray, Polarity::Both).map(drop)),
            ),
            (
                "detect_both_parallel",
                Box::new(|| mser.detect_both_parallel(&gray).map(drop)),
            ),
            (
                "detect_boxes_both_parallel",
                Box::new(|| mser.detect_boxes_both_parallel(&gray).map(drop)),
            ),
            (
                "detect_partitioned",
                Box::new(|| mser.detect_partitioned(&gray, Polarity::Both, 4).map(drop)),
            ),
            (
                "detect_boxes_partitioned",
                Box::new(|| {
                    mser.detect_boxes_partitioned(&gray, Polarity::Both, 4)
                        .map(drop)
                }),
            ),
        ];
        for (name, mut call) in calls {
            let t = Instant::now();
            let (r, n) = cortex_testkit::allocs_during(&mut call);
            let took = t.elapsed();
            assert!(
                matches!(r, Err(OpsError::TooLarge { .. })),
                "{name} {cols}x{rows}: {r:?}"
            );
            assert_eq!(n, 0, "{name} {cols}x{rows}: allocations");
            eprintln!("{name} {cols}x{rows}: refused in {took:?}");
        }
        let t = Instant::now();
        let (r, n) = cortex_testkit::allocs_during(|| {
            [
                mser.detect_into(&mut ws, &gray, Polarity::Both, &mut regions),
                mser.detect_boxes_into(&mut ws, &gray, Polarity::Both, &mut boxes),
                mser.detect_both_parallel_into(&mut ws2, &gray, &mut regions),
                mser.detect_boxes_both_parallel_into(&mut ws2, &gray, &mut boxes),
                mser.detect_partitioned_into(&mut pws, &gray, Polarity::Both, 4, &mut regions),
                mser.detect_boxes_partitioned_into(&mut pws, &gray, Polarity::Both, 4, &mut boxes),
            ]
        });
        let took = t.elapsed();
        eprintln!("{cols}x{rows}: the six _into forms refused in {took:?}, {n} allocations");
        for (i, r) in r.iter().enumerate() {
            assert!(
                matches!(r, Err(OpsError::TooLarge { .. })),
                "_into form {i}, {cols}x{rows}: {r:?}"
            );
        }
        assert_eq!(n, 0, "{cols}x{rows}: allocations of the _into forms");
        assert_eq!(ws.heap_bytes(), 0);
        assert_eq!(pws.heap_bytes(), 0);
    }
}
