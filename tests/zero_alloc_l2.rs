//! Planned memory's promise: after a few frames of warm-up, L2 through
//! `run_into` allocates nothing per frame — every node, the outputs and the
//! JPEG encoder included — at 640×480 and 1920×1080, counted by a global
//! allocator over all threads; and the same for `run_parallel_into`.
//!
//! One test in its own binary, so no other test allocates meanwhile.
#![cfg(feature = "runner")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use cortex::ir::{GraphIr, NodeId};
use cortex::l2::{L2Mode, L2};
use cortex::plan::Plan;
use cortex::sources::SyntheticClip;
use cortex::Observer;

/// Counts allocations (and reallocations) on every thread.
struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded as is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded as is.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded as is.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocs() -> u64 {
    ALLOCS.load(Ordering::Relaxed)
}

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

const WARM_UP: u64 = 3;
const FRAMES: u64 = 20;

#[test]
fn l2_allocates_nothing_per_frame_in_steady_state() {
    let mut report = Vec::new();
    for (w, h) in [(640, 480), (1920, 1080)] {
        let clip = SyntheticClip::new(w, h);
        // Frames made before counting; different content every frame (the
        // moving disc, the cut at 24 is beyond these, blurred 10–15).
        let frames: Vec<_> = (0..WARM_UP + FRAMES).map(|f| clip.frame(f)).collect();
        for mode in [L2Mode::Balanced, L2Mode::PowerSave] {
            for parallel in [false, true] {
                let mut p = L2::new();
                let mut out = p.run(mode, &frames[0]).unwrap();
                for f in &frames[1..WARM_UP as usize] {
                    p.run_into(mode, f, &mut out).unwrap();
                }
                if parallel {
                    p.run_parallel_into(mode, &frames[0], &mut out).unwrap();
                }
                let mut per_node = PerNode {
                    started: [0; 16],
                    counts: [0; 16],
                };
                let before = allocs();
                for f in &frames[WARM_UP as usize..] {
                    if parallel {
                        p.run_parallel_into(mode, f, &mut out).unwrap();
                    } else {
                        p.run_into_observed(mode, &mut per_node, f, &mut out).unwrap();
                    }
                }
                let n = allocs() - before;
                let nodes: Vec<String> = L2::ir()
                    .nodes
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| per_node.counts[*i] > 0)
                    .map(|(i, node)| format!("{} {}", node.name, per_node.counts[i]))
                    .collect();
                report.push(format!(
                    "{w}x{h} {mode:?} {}: {n} allocations over {FRAMES} frames {nodes:?}",
                    if parallel { "run_parallel_into" } else { "run_into" }
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
}
