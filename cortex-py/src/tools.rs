//! A built graph's IR for the tools that take it for the program's whole
//! life (the profiler, as a compiled pipeline's `'static` graph): each
//! distinct graph kept once, however many pipelines of it are built.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};

use cortex_core::GraphIr;

/// `ir`, kept for the program's life: the copy kept for an equal graph
/// when there is one (found by fingerprint, then compared), else a new one.
pub fn static_ir(ir: &GraphIr) -> &'static GraphIr {
    static KEPT: OnceLock<Mutex<HashMap<u64, Vec<&'static GraphIr>>>> = OnceLock::new();
    let mut kept = KEPT
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let same = kept.entry(ir.fingerprint()).or_default();
    if let Some(&k) = same.iter().find(|&&k| k == ir) {
        return k;
    }
    let leaked: &'static GraphIr = Box::leak(Box::new(ir.clone()));
    same.push(leaked);
    leaked
}
