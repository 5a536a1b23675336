//! What a model frame allocates after warm-up, counted by the project's
//! counting allocator: the tiny model through the registry on tract, and
//! the pre-processing node and a model on regions. One test per binary
//! measures at a time.

mod support;

use std::sync::Arc;

use cortex_models::prep::{frame_tensor_into, Normalize};
use cortex_models::regions::{RegionPrep, RegionRunner};
use cortex_models::{infer_into, Infer, InputShape, Model, ModelBackend, Output, Tensor4};
use cortex_testkit::{allocs_during, live_bytes, serial};
use cortex_vision::ops::RgbFrame;
use cortex_vision::registry::{with_registry, Registry};
use ndarray::IxDyn;
use support::{testdata, tiny_input, H, W};

#[global_allocator]
static ALLOC: cortex_testkit::CountingAlloc = cortex_testkit::CountingAlloc;

const FRAMES: u64 = 50;

#[test]
fn preprocessing_allocates_nothing_after_the_first_frame() {
    let _g = serial();
    let model = Model::load(testdata("tiny.onnx"), InputShape::image(3, H, W)).unwrap();
    let frame = RgbFrame::from_shape_fn((120, 160, 3), |(y, x, c)| (y * 3 + x * 5 + c * 11) as u8);
    let mut tensor = Tensor4::zeros((0, 0, 0, 0));
    frame_tensor_into(&frame, &model, &Normalize::PP_OCR, &mut tensor).unwrap();
    let ((), n) = allocs_during(|| {
        for _ in 0..FRAMES {
            frame_tensor_into(&frame, &model, &Normalize::PP_OCR, &mut tensor).unwrap();
        }
    });
    assert_eq!(n, 0);
    regions_allocate_only_what_the_engine_does();
}

/// tract allocates per run: each operator's output is a new tensor (tract
/// 0.23 has no arena for the CPU plan's intermediate values), plus the
/// run's small vectors. What is checked: the count per frame is constant
/// (no growth), the heap does not grow over many frames (nothing leaks,
/// nothing accumulates), and the measured figures are printed for the
/// documentation.
#[test]
fn tract_frames_allocate_a_constant_amount_and_leak_nothing() {
    let _g = serial();
    let reg = Arc::new(Registry::in_memory());
    // With OpenCV built in, measurement may pick OpenCV DNN for this model.
    reg.force::<Infer>("tract").unwrap();
    let model = Model::load(testdata("tiny.onnx"), InputShape::image(3, H, W)).unwrap();
    // On the calling thread: with a pool, rayon's job queue allocates a
    // block now and then (every 63 jobs sent into the pool), which is the
    // pool's, not the frame's; the pool is checked for growth below.
    model.set_threads(1);
    let input = tiny_input(H, W);
    let mut out = Output::zeros(IxDyn(&[0]));
    with_registry(&reg, || {
        for _ in 0..5 {
            infer_into(&model, &input, &mut out).unwrap();
        }
        assert_eq!(model.last_backend(), Some(ModelBackend::Tract));
        // The record of counts is allocated before the heap is read.
        let mut counts = Vec::with_capacity(FRAMES as usize);
        let live = live_bytes();
        for _ in 0..FRAMES {
            let (r, n) = allocs_during(|| infer_into(&model, &input, &mut out));
            r.unwrap();
            counts.push(n);
        }
        let grown = live_bytes() as i64 - live as i64;
        println!(
            "tiny model {}x{} on tract: {} allocations per frame (min {}, max {}); heap {grown:+} bytes over {FRAMES} frames",
            W,
            H,
            counts[counts.len() / 2],
            counts.iter().min().unwrap(),
            counts.iter().max().unwrap()
        );
        assert_eq!(counts.iter().min(), counts.iter().max(), "{counts:?}");
        assert!(grown <= 0, "the heap grew by {grown} bytes");
        // On a pool of two threads: the heap still does not grow.
        model.set_threads(2);
        // A whole window of warm-up: on a loaded machine a pool worker may
        // take its first job (and make its thread-local queues) only after
        // a few frames; that is the pool starting, not a frame growing.
        for _ in 0..FRAMES {
            infer_into(&model, &input, &mut out).unwrap();
        }
        let live = live_bytes();
        for _ in 0..FRAMES {
            infer_into(&model, &input, &mut out).unwrap();
        }
        let grown = live_bytes() as i64 - live as i64;
        assert!(grown <= 0, "on two threads the heap grew by {grown} bytes");
    });
}

/// A model on a list of regions: after warm-up, what a frame allocates is
/// tract's per-run count times the batches, and the region runner's own
/// buffers (the batch tensor, the output, the slots' widths) are reused.
/// (Part of the pre-processing test: a third test would start its thread
/// while another measures the heap.)
fn regions_allocate_only_what_the_engine_does() {
    let reg = Arc::new(Registry::in_memory());
    reg.force::<Infer>("tract").unwrap();
    // Two regions a batch, at 24x40: five regions are three batches.
    let model = Model::load(testdata("tiny.onnx"), InputShape::Fixed([2, 3, H, W])).unwrap();
    model.set_threads(1);
    let frame = RgbFrame::from_shape_fn((120, 160, 3), |(y, x, c)| (y * 3 + x * 5 + c * 11) as u8);
    let quads: Vec<[[f32; 2]; 4]> = (0..5)
        .map(|i| {
            let (x, y) = (10.0 + 20.0 * i as f32, 10.0 + 15.0 * i as f32);
            [
                [x, y],
                [x + 40.0, y + 4.0],
                [x + 38.0, y + 24.0],
                [x - 2.0, y + 20.0],
            ]
        })
        .collect();
    let prep = RegionPrep {
        keep_aspect: true,
        ..RegionPrep::PP_OCR_REC
    };
    let mut runner = RegionRunner::default();
    let mut seen = 0usize;
    let frame_run = |runner: &mut RegionRunner, seen: &mut usize| {
        with_registry(&reg, || {
            runner.run(&frame, quads.iter(), &model, &prep, |_, _, row| {
                *seen += row.len();
                Ok(())
            })
        })
    };
    for _ in 0..3 {
        frame_run(&mut runner, &mut seen).unwrap();
    }
    // One batch alone, for tract's own count per run.
    let single = Tensor4::zeros((2, 3, H, W));
    let mut out = Output::zeros(IxDyn(&[0]));
    with_registry(&reg, || infer_into(&model, &single, &mut out)).unwrap();
    let ((), per_run) = allocs_during(|| {
        with_registry(&reg, || infer_into(&model, &single, &mut out)).unwrap();
    });
    let mut counts = Vec::with_capacity(FRAMES as usize);
    for _ in 0..20 {
        let (r, n) = allocs_during(|| frame_run(&mut runner, &mut seen));
        r.unwrap();
        counts.push(n);
    }
    println!(
        "5 regions in batches of 2 on tract: {} allocations per frame; tract alone {per_run} per run",
        counts[0]
    );
    assert_eq!(counts.iter().min(), counts.iter().max(), "{counts:?}");
    assert_eq!(
        counts[0],
        3 * per_run,
        "three batches, nothing of the runner's own"
    );
    assert!(seen > 0);
}
