//! The kernel registry and the L2 pipeline: selection and measurement, the
//! autotune cache, L2 through the registry against L2 direct, and L2's
//! modes and outputs. The cache tests also run this binary as a child
//! process (two writers racing; settings from the environment).

// Counts the bytes each test's thread asks for (the hostile cache files).
#[global_allocator]
static ALLOC: cortex_testkit::CountingAlloc = cortex_testkit::CountingAlloc;

// `cortex_graph!` names the engine `::cortex`.
extern crate cortex_core as cortex;

mod cache;
mod l2;
mod l2_pipeline;
mod reg_l2;
mod select;
