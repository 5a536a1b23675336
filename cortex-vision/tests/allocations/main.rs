//! What the kernels allocate: zero allocations in steady state for the
//! reusable-output forms (the L2 kernels, MSER, the text map) and bounded
//! working memory for bad or huge input. One binary with the workspace's
//! counting global allocator; its tests take turns
//! ([`cortex_testkit::serial`]), since the counters are process-wide.

#[global_allocator]
static ALLOC: cortex_testkit::CountingAlloc = cortex_testkit::CountingAlloc;

#[path = "../mser/support/mod.rs"]
mod mser_support;

mod kernels;
mod limits;
mod mser;
mod text;
