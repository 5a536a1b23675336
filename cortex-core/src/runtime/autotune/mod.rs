//! The autotune cache: decisions measured on this machine — which kernel
//! the registry runs for an op at a problem shape, which strips a fused
//! group runs at an input size — persisted to a JSON file and reused at the
//! next start without measuring again.
//!
//! One file holds the decisions of one machine and one build: the file
//! records the CPU model and features and the crate version, and a file
//! written by another CPU or another version is ignored (with a warning) and
//! replaced at the next save. Each section's entries are keyed by a name (an
//! op, a fused group's members) and a shape, and name the choice; a user may
//! edit `kernel` and set `"forced": true` to pin a choice.
//!
//! The file is untrusted input: see [`file`](self) for how it is read and
//! replaced. A save first merges the decisions the file holds by then, so
//! processes tuning at once keep each other's decisions.

mod cpu;
mod file;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use crate::runtime::untrusted::{echo, kind_of as file_kind, MAX_ECHO_CHARS};
pub use cpu::CpuFeature;

/// The environment variable that overrides the cache file's location; set
/// it to `off` (or empty) to keep decisions in memory only.
pub const CACHE_ENV: &str = "CORTEX_AUTOTUNE_CACHE";

/// The file format this version writes and reads.
pub const FORMAT: u32 = 1;

/// The most bytes read from a cache file (1 MiB). A real cache holds one
/// entry per op and problem shape, a few KB; a larger file is not read and
/// counts as a corrupt cache.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

fn shown(path: &Path) -> String {
    echo(&path.to_string_lossy())
}

/// Why the cache could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CacheError {
    /// Reading, writing or renaming the file failed.
    #[error("autotune cache {}: {source}", shown(.path))]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a cache this version can read.
    #[error("autotune cache {} ignored: {reason}", shown(.path))]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong with it (values from the file cut to
        /// [`MAX_ECHO_CHARS`]).
        reason: String,
    },
    /// The path names something other than a regular file (a FIFO, a
    /// device, a folder, a socket): it is neither read nor replaced.
    #[error("autotune cache {} ignored: {kind}, not a regular file", shown(.path))]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it is (`a FIFO`, `a character device`, …).
        kind: &'static str,
    },
}

/// The machine and build a cache file belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheKey {
    /// The CPU model (`model name` of `/proc/cpuinfo`, or `unknown`).
    pub cpu_model: String,
    /// The CPU features the kernels care about that this CPU has.
    pub cpu_features: Vec<String>,
    /// The version of `cortex-core` that measured.
    pub crate_version: String,
}

impl CacheKey {
    /// This machine and this build.
    pub fn current() -> CacheKey {
        CacheKey {
            cpu_model: cpu::cpu_model(),
            cpu_features: CpuFeature::ALL
                .iter()
                .filter(|f| f.detected())
                .map(|f| f.name().to_string())
                .collect(),
            crate_version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

/// One decision: which choice (`kernel`) runs `op` at problem shape `shape`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheEntry {
    /// What was tuned: an op's name, or a fused group's members
    /// (`gray+laplacian+center`).
    pub op: String,
    /// The problem shape, as reports print it (`640x480`; a group's input
    /// sizes and threads, `768x576, 2 threads`).
    pub shape: String,
    /// The choice: a kernel's name, or a strip setting (`rows:160`, `auto`).
    pub kernel: String,
    /// Set by a user to pin `kernel`: it is then used as forced.
    #[serde(default)]
    pub forced: bool,
    /// The measured median time of each candidate, in nanoseconds (empty
    /// when the decision was not measured).
    #[serde(default)]
    pub median_ns: BTreeMap<String, u64>,
}

/// The cache file's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheFile {
    /// [`FORMAT`].
    pub format: u32,
    /// The machine and build it belongs to.
    #[serde(flatten)]
    pub key: CacheKey,
    /// The kernel registry's decisions, sorted by op and shape.
    pub entries: Vec<CacheEntry>,
    /// The fused groups' strip settings, sorted by group and shape.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub strips: Vec<CacheEntry>,
}

/// A part of the file, each kept by its own tuner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// The kernel registry's decisions ([`CacheFile::entries`]).
    Kernels,
    /// The fused groups' strip settings ([`CacheFile::strips`]).
    Strips,
}

impl CacheFile {
    /// The entries of `section`.
    pub fn section(&self, section: Section) -> &[CacheEntry] {
        match section {
            Section::Kernels => &self.entries,
            Section::Strips => &self.strips,
        }
    }

    fn section_mut(&mut self, section: Section) -> &mut Vec<CacheEntry> {
        match section {
            Section::Kernels => &mut self.entries,
            Section::Strips => &mut self.strips,
        }
    }
}

/// The default location: `$CORTEX_AUTOTUNE_CACHE` when set (`off` or empty
/// for none), else `$XDG_CACHE_HOME/cortex/autotune.json`, else
/// `$HOME/.cache/cortex/autotune.json`, else none.
pub fn default_path() -> Option<PathBuf> {
    if let Some(v) = std::env::var_os(CACHE_ENV) {
        if v.is_empty() || v == "off" {
            return None;
        }
        return Some(PathBuf::from(v));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })?;
    Some(base.join("cortex").join("autotune.json"))
}

/// Reads the cache at `path` if it belongs to `key`; `None` when there is
/// no file.
///
/// # Errors
/// [`CacheError::NotAFile`] for a FIFO, device, folder or socket;
/// [`CacheError::Invalid`] for a file that is too large, does not parse, has
/// another format, or belongs to another CPU or crate version;
/// [`CacheError::Io`] when it cannot be opened or read. Callers ignore the
/// file then (with a warning).
pub fn load_file(path: &Path, key: &CacheKey) -> Result<Option<CacheFile>, CacheError> {
    let Some(bytes) = file::read(path)? else {
        return Ok(None);
    };
    let invalid = |reason: String| CacheError::Invalid {
        path: path.to_path_buf(),
        reason,
    };
    // serde_json refuses nesting deeper than 128 levels, so a deeply nested
    // value is an error, not a stack overflow; its message can quote the
    // input, hence `echo`.
    let file: CacheFile = serde_json::from_slice(&bytes)
        .map_err(|e| invalid(format!("not a cache file ({})", echo(&e.to_string()))))?;
    if file.format != FORMAT {
        return Err(invalid(format!(
            "format {} (this version reads {FORMAT})",
            file.format
        )));
    }
    if file.key.crate_version != key.crate_version {
        return Err(invalid(format!(
            "written by cortex-core {} (this is {})",
            echo(&file.key.crate_version),
            key.crate_version
        )));
    }
    if file.key.cpu_model != key.cpu_model || file.key.cpu_features != key.cpu_features {
        return Err(invalid(format!(
            "written on another CPU ({} [{}])",
            echo(&file.key.cpu_model),
            echo(&file.key.cpu_features.join(","))
        )));
    }
    Ok(Some(file))
}

/// The entries of `section` in the cache at `path` that belongs to `key`
/// (none when there is no file); errors as [`load_file`]'s.
pub fn load(path: &Path, key: &CacheKey, section: Section) -> Result<Vec<CacheEntry>, CacheError> {
    Ok(load_file(path, key)?
        .map(|f| f.section(section).to_vec())
        .unwrap_or_default())
}

/// `ours` with the decisions of `theirs` for the names and shapes `ours`
/// does not have; a choice a user pinned in the file stays pinned.
fn merge(ours: &[CacheEntry], theirs: &[CacheEntry]) -> Vec<CacheEntry> {
    let mut out = ours.to_vec();
    for t in theirs {
        match out.iter_mut().find(|e| e.op == t.op && e.shape == t.shape) {
            None => out.push(t.clone()),
            Some(e) if t.forced && !e.forced => *e = t.clone(),
            Some(_) => {}
        }
    }
    out.sort_by(|a, b| (&a.op, &a.shape).cmp(&(&b.op, &b.shape)));
    out
}

/// Writes `entries` as `section` of the cache at `path` for `key`,
/// atomically, merged with that section of the file as it is by then (ours
/// win for the same name and shape, except over a choice pinned in the
/// file); the other section is kept as the file holds it. A file that is
/// corrupt, foreign or unreadable by then is replaced.
///
/// # Errors
/// [`CacheError::NotAFile`] when `path` is a FIFO, a device, a folder, a
/// socket or a dangling link (nothing is written);
/// [`CacheError::Io`] when the folder, the file or the rename fails.
pub fn save(
    path: &Path,
    key: &CacheKey,
    section: Section,
    entries: &[CacheEntry],
) -> Result<(), CacheError> {
    file::replace(path, |target| {
        let mut file = match load_file(target, key) {
            Ok(Some(file)) => file,
            Err(CacheError::NotAFile { kind, .. }) => {
                return Err(CacheError::NotAFile {
                    path: path.to_path_buf(),
                    kind,
                })
            }
            Ok(None) | Err(_) => CacheFile {
                format: FORMAT,
                key: key.clone(),
                entries: Vec::new(),
                strips: Vec::new(),
            },
        };
        let merged = merge(entries, file.section(section));
        *file.section_mut(section) = merged;
        serde_json::to_string_pretty(&file).map_err(|e| CacheError::Invalid {
            path: path.to_path_buf(),
            reason: format!("cannot serialize ({})", echo(&e.to_string())),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(op: &str, shape: &str, kernel: &str) -> CacheEntry {
        CacheEntry {
            op: op.into(),
            shape: shape.into(),
            kernel: kernel.into(),
            forced: false,
            median_ns: [(kernel.to_string(), 1000u64)].into_iter().collect(),
        }
    }

    #[test]
    fn sections_round_trip_and_keep_each_other() {
        let dir = std::env::temp_dir().join(format!("cortex-autotune-unit-{}", std::process::id()));
        let path = dir.join("a").join("autotune.json");
        let key = CacheKey::current();
        let kernels = vec![entry("encode_roi", "640x480", "pure-rust")];
        let strips = vec![entry("gray+center", "64x48, 2 threads", "rows:32")];
        save(&path, &key, Section::Kernels, &kernels).unwrap();
        save(&path, &key, Section::Strips, &strips).unwrap();
        assert_eq!(load(&path, &key, Section::Kernels).unwrap(), kernels);
        assert_eq!(load(&path, &key, Section::Strips).unwrap(), strips);
        // A second save of one section merges, and leaves the other alone.
        let more = vec![entry("gray+center", "80x60, 2 threads", "auto")];
        save(&path, &key, Section::Strips, &more).unwrap();
        assert_eq!(load(&path, &key, Section::Strips).unwrap().len(), 2);
        assert_eq!(load(&path, &key, Section::Kernels).unwrap(), kernels);
        let other = CacheKey {
            crate_version: "9.9.9".into(),
            ..key.clone()
        };
        assert!(matches!(
            load(&path, &other, Section::Strips),
            Err(CacheError::Invalid { .. })
        ));
        assert_eq!(
            load(&dir.join("missing.json"), &key, Section::Kernels).unwrap(),
            Vec::new()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_pinned_choice_in_the_file_wins_the_merge() {
        let ours = vec![entry("g", "s", "rows:8")];
        let mut pinned = entry("g", "s", "rows:64");
        pinned.forced = true;
        assert_eq!(merge(&ours, &[pinned.clone()]), vec![pinned]);
        assert_eq!(merge(&ours, &[entry("g", "s", "auto")]), ours);
    }
}
