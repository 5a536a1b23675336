//! Allocations per frame of a pipelined run (`run_stream`, and
//! `run_stream_into`, which reuses the outputs), counted by the
//! testkit's global allocator over all threads: the stream's own costs
//! (its producer thread, its queues) are paid once per stream, so the
//! per-frame figure is the difference between a long and a short stream
//! over the extra frames.
//!
//! One test in its own binary, so no other test allocates meanwhile.
#![cfg(feature = "runner")]

use std::ops::ControlFlow;

use cortex::l2::{L2Mode, L2};
use cortex::ops::RgbFrame;
use cortex::runner::sources::SyntheticClip;
use cortex::stream::{Overflow, StreamOptions};
use cortex::Run;

#[global_allocator]
static ALLOC: cortex_testkit::CountingAlloc = cortex_testkit::CountingAlloc;

use cortex_testkit::allocs;

/// Frames of the short stream; the long one has twice as many.
const SHORT: usize = 40;

/// Allocations of one `run_stream` over `frames` (moved in: handing a
/// frame over allocates nothing), outputs dropped in the callback.
fn stream_allocs(p: &mut L2, mode: L2Mode, opts: &StreamOptions, frames: Vec<RgbFrame>) -> u64 {
    let n = frames.len() as u64;
    let before = allocs();
    let report = p
        .run_stream(mode, frames.into_iter().map(|f| (f,)), opts, |r| {
            assert!(r.result.is_ok());
            ControlFlow::Continue(())
        })
        .unwrap();
    let spent = allocs() - before;
    assert_eq!(report.processed, n);
    spent
}

/// Allocations of one `run_stream_into` over `frames`, every output left
/// for a later frame to run into.
fn stream_into_allocs(
    p: &mut L2,
    mode: L2Mode,
    opts: &StreamOptions,
    frames: Vec<RgbFrame>,
) -> u64 {
    let n = frames.len() as u64;
    let before = allocs();
    let report = p
        .run_stream_with(
            &mut Run::mode(mode),
            frames.into_iter().map(|f| ((), (f,))),
            opts,
            |r| {
                assert!(r.result.is_ok());
                ControlFlow::Continue(())
            },
        )
        .unwrap();
    let spent = allocs() - before;
    assert_eq!(report.processed, n);
    spent
}

/// Allocations per extra frame: (long stream − short stream) / SHORT, the
/// fewest of three tries (a one-off of the thread pool's own shows in one
/// try only; a per-frame allocation in all).
fn per_frame(
    mode: L2Mode,
    opts: &StreamOptions,
    frames: &[RgbFrame],
    run: impl Fn(&mut L2, L2Mode, &StreamOptions, Vec<RgbFrame>) -> u64,
) -> f64 {
    let mut p = L2::new();
    // Warm-up: the pipeline's buffers and the stream's first-stage buffers.
    run(&mut p, mode, opts, frames.to_vec());
    (0..3)
        .map(|_| {
            let short = run(&mut p, mode, opts, frames[..SHORT].to_vec());
            let long = run(&mut p, mode, opts, frames.to_vec());
            long.saturating_sub(short) as f64 / SHORT as f64
        })
        .fold(f64::INFINITY, f64::min)
}

#[test]
fn pipelined_allocations_per_frame() {
    let clip = SyntheticClip::new(160, 120);
    let frames: Vec<RgbFrame> = (0..2 * SHORT as u64).map(|f| clip.frame(f % 20)).collect();
    // Every pool thread runs the clip once in each mode, so that the
    // kernels' per-thread scratch has reached its high-water mark.
    rayon::broadcast(|_| {
        for mode in [L2Mode::Balanced, L2Mode::PowerSave] {
            let mut p = L2::new();
            let mut out = p.run(mode, &frames[0]).unwrap();
            for f in &frames[..20] {
                p.run_into(mode, f, &mut out).unwrap();
            }
        }
    });
    let mut lines = Vec::new();
    let mut failures = Vec::new();
    for from_pool in [true, false] {
        for mode in [L2Mode::Balanced, L2Mode::PowerSave] {
            for in_flight in [1, 2, 4] {
                let opts = StreamOptions {
                    in_flight,
                    queue: 4,
                    overflow: Overflow::Block,
                };
                let measure = || {
                    (
                        per_frame(mode, &opts, &frames, stream_allocs),
                        per_frame(mode, &opts, &frames, stream_into_allocs),
                    )
                };
                // Called from a pool thread (as an engine thread would), the
                // stream's joins stay inside the pool; called from outside,
                // each enters it through rayon's queue for outside work.
                let (fresh, reused) = if from_pool {
                    rayon::scope(|_| measure())
                } else {
                    measure()
                };
                let case = format!(
                    "{mode:?}, {in_flight} in flight, from {}",
                    if from_pool {
                        "a pool thread"
                    } else {
                        "outside the pool"
                    }
                );
                lines.push(format!(
                    "{case}: run_stream {fresh:.3}, run_stream_into {reused:.3} allocations per frame"
                ));
                // Reusing the outputs leaves nothing per frame: from a pool
                // thread, not one allocation over the extra frames. From
                // outside, rayon's own queues allocate now and then (its
                // queue for outside work a block per 63 entries, at most
                // three entries a frame; its workers' deques when a burst
                // grows them): a few over the extra frames, never one a
                // frame — anything the engine allocated per frame (an
                // output, a box, a channel node) would count ≥ 1.
                let bound = if from_pool { 0.0 } else { 0.25 };
                if reused > bound {
                    failures.push(format!("{case}: {reused} > {bound}"));
                }
                // `run_stream` hands each frame's outputs over: new ones
                // every frame (L2's filled outputs: the fused map, the JPEG,
                // the regions, the QP map).
                if fresh < reused + 1.0 {
                    failures.push(format!("{case}: run_stream {fresh}"));
                }
            }
        }
    }
    let text = lines.join("\n");
    println!("{text}");
    assert!(failures.is_empty(), "{failures:?}\n{text}");
}
