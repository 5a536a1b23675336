//! What a run-time L2 allocates per frame against the compiled L2, counted
//! by a global allocator on the running thread: in steady state no filled
//! value of a run-time frame is made anew — over a whole pass of the clip
//! it allocates less than one 640×480 gray image, in every mode (held
//! values and states trade buffers with their nodes, as compiled code's
//! do), where a compiled `run` (fresh outputs) allocates a megabyte a
//! frame.
//!
//! One test in its own binary, so no other test allocates meanwhile.

use std::sync::Arc;

use cortex_core::dynamic::{GraphFile, Value};
use cortex_core::Pipeline;
use cortex_testkit::{thread_allocs, thread_bytes};
use cortex_vision::l2::{demo_clip, L2Mode, L2};

#[global_allocator]
static ALLOC: cortex_testkit::CountingAlloc = cortex_testkit::CountingAlloc;

/// Allocation calls and bytes per frame of `run` over `frames` (after one
/// pass of warm-up), the fewest of three passes.
fn per_frame(frames: usize, mut run: impl FnMut(usize)) -> (u64, u64) {
    (0..frames).for_each(&mut run);
    (0..3)
        .map(|_| {
            let (a, b) = (thread_allocs(), thread_bytes());
            (0..frames).for_each(&mut run);
            (
                (thread_allocs() - a) / frames as u64,
                (thread_bytes() - b) / frames as u64,
            )
        })
        .min()
        .expect("three passes")
}

#[test]
fn a_run_time_frame_makes_no_filled_value_anew() {
    let frames = demo_clip(6, 640, 480);
    let inputs: Vec<Value> = frames
        .iter()
        .map(|f| Arc::new(f.clone()) as Value)
        .collect();
    for &mode in L2Mode::ALL {
        let mut compiled = L2::new();
        compiled.set_fusion(false);
        let c = per_frame(frames.len(), |i| {
            drop(compiled.run(mode, &frames[i]).expect("compiled"));
        });
        let mut out = compiled.run(mode, &frames[0]).expect("compiled");
        let c_into = per_frame(frames.len(), |i| {
            compiled
                .run_into(mode, &frames[i], &mut out)
                .expect("compiled");
        });
        let ops = cortex_vision::library::vision_ops();
        let file = GraphFile::from_ir(L2::ir(), &ops).expect("exports");
        let mut dynamic = file.build(&ops).expect("builds");
        let d = per_frame(frames.len(), |i| {
            drop(
                dynamic
                    .run(mode as usize, std::slice::from_ref(&inputs[i]))
                    .expect("run time"),
            );
        });
        eprintln!(
            "{mode:?}: compiled run {} allocs {} bytes; run_into {} allocs {} bytes; run time {} allocs {} bytes",
            c.0, c.1, c_into.0, c_into.1, d.0, d.1
        );
        let pass = d.1 * frames.len() as u64;
        assert!(
            pass < 640 * 480,
            "{mode:?}: run time {pass} bytes over the clip ({} per frame), compiled run {} per frame",
            d.1,
            c.1
        );
    }
}
