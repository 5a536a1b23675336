//! Planned memory's promise: after a few frames of warm-up, L2 through
//! `run_into` allocates nothing per frame — every node, the outputs and the
//! JPEG encoder included — at 640×480 and 1920×1080, counted by a global
//! allocator over all threads; and the same for `run_parallel_into`.
//!
//! One test in its own binary, so no other test allocates meanwhile.
#![cfg(feature = "runner")]

use cortex::l2::{L2Mode, L2};
use cortex::model::ir::{GraphIr, NodeId};
use cortex::model::plan::Plan;
use cortex::prelude::Observer;
use cortex::runner::sources::SyntheticClip;
use cortex::Run;

#[global_allocator]
static ALLOC: cortex_testkit::CountingAlloc = cortex_testkit::CountingAlloc;

use cortex_testkit::allocs;

/// Allocations seen while each node ran (sequential runs only: in a
/// parallel run other nodes allocate at the same time). Fixed-size, so
/// observing allocates nothing.
struct PerNode {
    started: [u64; 16],
    counts: [u64; 16],
}

impl Observer for PerNode {
    fn frame_begin(&mut self, _: &'static GraphIr, _: &Plan) {}
    fn node_begin(&mut self, node: NodeId) {
        self.started[node as usize] = allocs();
    }
    fn node_end(&mut self, node: NodeId) {
        self.counts[node as usize] += allocs() - self.started[node as usize];
    }
}

const FRAMES: u64 = 20;

/// One steady-state measurement: allocations over the clip, and per node.
fn measure(
    p: &mut L2,
    mode: L2Mode,
    parallel: bool,
    frames: &[cortex::ops::RgbFrame],
) -> (u64, Vec<String>) {
    let mut out = p.run(mode, &frames[0]).unwrap();
    // Past the fused groups' tuning (its candidates allocate their buffers,
    // its decision is recorded), which a fresh pipeline's first group does;
    // a rated mode's plans each hold an instance of a group, the one
    // running on three frames of four deciding first.
    let warm_up = (FRAMES as usize).max(2 * cortex::strip::tune::MEASURED_RUNS);
    for f in frames.iter().cycle().take(warm_up) {
        p.run_into(mode, f, &mut out).unwrap();
    }
    // Three windows of the clip; the fewest allocations any of them saw. A
    // per-frame allocation shows in every window; a one-off of the thread
    // pool's own (its work queues grow or shrink under a burst of jobs,
    // freed later through epoch-based reclamation) in one only.
    let mut best: Option<(u64, PerNode)> = None;
    for _ in 0..3 {
        let mut per_node = PerNode {
            started: [0; 16],
            counts: [0; 16],
        };
        let before = allocs();
        for f in frames {
            if parallel {
                p.run_with(&mut Run::mode(mode).parallel(), f, &mut out)
                    .unwrap();
            } else {
                p.run_with(&mut Run::mode(mode).observed(&mut per_node), f, &mut out)
                    .unwrap();
            }
        }
        let n = allocs() - before;
        if best.as_ref().is_none_or(|(b, _)| n < *b) {
            best = Some((n, per_node));
        }
    }
    let (n, per_node) = best.expect("three windows ran");
    let nodes = L2::ir()
        .nodes
        .iter()
        .enumerate()
        .filter(|(i, _)| per_node.counts[*i] > 0)
        .map(|(i, node)| format!("{} {}", node.name, per_node.counts[i]))
        .collect();
    (n, nodes)
}

#[test]
fn l2_allocates_nothing_per_frame_in_steady_state() {
    let mut report = Vec::new();
    // 200x150: the motion grid does not divide it, so motion declines every
    // frame alone and runs its own call after its group.
    for (w, h) in [(640, 480), (200, 150), (1920, 1080)] {
        let clip = SyntheticClip::new(w, h);
        // Frames made before counting; different content every frame (the
        // moving disc; frames 10–15 blurred).
        let frames: Vec<_> = (0..FRAMES).map(|f| clip.frame(f)).collect();
        // Warm-up: every pool thread runs the clip once in each mode, so
        // each thread's scratch reaches the clip's high-water mark for every
        // node, whichever thread a node lands on later.
        rayon::broadcast(|_| {
            for mode in [L2Mode::Balanced, L2Mode::PowerSave] {
                for fused in [false, true] {
                    let mut p = L2::new();
                    p.set_fusion(fused);
                    let mut out = p.run(mode, &frames[0]).unwrap();
                    for f in &frames {
                        p.run_into(mode, f, &mut out).unwrap();
                    }
                }
            }
        });
        for mode in [L2Mode::Balanced, L2Mode::PowerSave] {
            for (parallel, fused) in [(false, false), (true, false), (false, true), (true, true)] {
                // Driven from a pool thread, as an engine thread would: a
                // call from outside the pool goes through rayon's queue for
                // outside work (see the test below).
                let mut p = L2::new();
                p.set_fusion(fused);
                let (n, nodes) = rayon::scope(|_| measure(&mut p, mode, parallel, &frames));
                report.push(format!(
                    "{w}x{h} {mode:?} {}{}: {n} allocations over {FRAMES} frames {nodes:?}",
                    if parallel {
                        "run_parallel_into"
                    } else {
                        "run_into"
                    },
                    if fused { " fused" } else { "" }
                ));
            }
        }
    }
    let text = report.join("\n");
    println!("{text}");
    assert!(
        report.iter().all(|l| l.contains(": 0 allocations")),
        "{text}"
    );

    // From a thread outside the pool, a parallel frame enters the pool once;
    // a sequential one three times in BALANCED (the text map's two
    // polarities, and each of its two fused groups' strips). Rayon's queue
    // for outside work allocates one block per 63 entries, and nothing else
    // does.
    let clip = SyntheticClip::new(320, 240);
    let frames: Vec<_> = (0..126).map(|f| clip.frame(f % 20)).collect();
    rayon::broadcast(|_| {
        let mut p = L2::new();
        let mut out = p.run(L2Mode::Balanced, &frames[0]).unwrap();
        for f in &frames[..20] {
            p.run_into(L2Mode::Balanced, f, &mut out).unwrap();
        }
    });
    for parallel in [false, true] {
        let mut p = L2::new();
        let mut out = p.run(L2Mode::Balanced, &frames[0]).unwrap();
        for f in &frames[..20] {
            p.run_into(L2Mode::Balanced, f, &mut out).unwrap();
            p.run_with(&mut Run::mode(L2Mode::Balanced).parallel(), f, &mut out)
                .unwrap();
        }
        // The fewest of three windows: with other builds loading the
        // machine, one window counted up to 11 (6 to 8 sequential), the
        // extra allocations inside rayon; the steady cost is the least.
        let n = (0..3)
            .map(|_| {
                let before = allocs();
                for f in &frames {
                    if parallel {
                        p.run_with(&mut Run::mode(L2Mode::Balanced).parallel(), f, &mut out)
                            .unwrap();
                    } else {
                        p.run_into(L2Mode::Balanced, f, &mut out).unwrap();
                    }
                }
                allocs() - before
            })
            .min()
            .unwrap_or(0);
        println!(
            "outside the pool, parallel {parallel}: {n} allocations over {} frames",
            frames.len()
        );
        let entries = if parallel { 1 } else { 3 } * frames.len();
        assert!(
            n as usize <= entries.div_ceil(63) + 1,
            "{n} allocations over {} frames from outside the pool",
            frames.len()
        );
    }
}
