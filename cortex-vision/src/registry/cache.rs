//! The registry's part of the autotune cache ([`cortex_core::autotune`]):
//! which kernel runs each op at each problem shape, reused at the next
//! start without measuring again. The file's format, location and the rules
//! for reading and replacing it safely live in the engine, shared with the
//! fused groups' strip settings.

use std::path::Path;

use cortex_core::autotune::Section;

pub use cortex_core::autotune::{
    default_path, echo, CacheEntry, CacheError, CacheFile, CacheKey, CACHE_ENV, FORMAT,
    MAX_ECHO_CHARS, MAX_FILE_BYTES,
};

/// Reads the kernel decisions of `path` that belong to `key`.
///
/// A missing file is an empty cache (`Ok`).
///
/// # Errors
/// As [`cortex_core::autotune::load_file`]'s: callers ignore the file then
/// (with a warning).
pub fn load(path: &Path, key: &CacheKey) -> Result<Vec<CacheEntry>, CacheError> {
    cortex_core::autotune::load(path, key, Section::Kernels)
}

/// Writes the kernel decisions `entries` for `key` to `path` atomically,
/// merged with those the file holds by then (ours win for the same op and
/// shape, except over a kernel pinned in the file); the file's strip
/// settings are kept.
///
/// # Errors
/// As [`cortex_core::autotune::save`]'s.
pub fn save(path: &Path, key: &CacheKey, entries: &[CacheEntry]) -> Result<(), CacheError> {
    cortex_core::autotune::save(path, key, Section::Kernels, entries)
}
