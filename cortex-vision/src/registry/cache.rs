//! The autotune cache: the registry's decisions persisted to a JSON file and
//! reused at the next start without measuring again.
//!
//! One file holds the decisions of one machine and one crate version: the
//! file records the CPU model and features and the crate version, and a file
//! written by another CPU or another version is ignored (with a warning) and
//! replaced at the next save. Entries are keyed by op and problem shape and
//! name the kernel; a user may edit `kernel` and set `"forced": true` to pin
//! a kernel. Writes go to a temporary file in the same folder, renamed over
//! the old one, so a reader never sees half a file.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::op::CpuFeature;

/// The environment variable that overrides the cache file's location; set
/// it to `off` (or empty) to keep decisions in memory only.
pub const CACHE_ENV: &str = "CORTEX_AUTOTUNE_CACHE";

/// The file format this version writes and reads.
pub const FORMAT: u32 = 1;

/// Why the cache could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CacheError {
    /// Reading, writing or renaming the file failed.
    #[error("autotune cache {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a cache this version can read.
    #[error("autotune cache {path} ignored: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
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
            cpu_model: cpu_model(),
            cpu_features: CpuFeature::ALL
                .iter()
                .filter(|f| f.detected())
                .map(|f| f.name().to_string())
                .collect(),
            crate_version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

fn cpu_model() -> String {
    // Linux names the model; elsewhere the features alone key the file.
    fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".to_string())
}

/// One decision: which kernel op `op` runs at problem shape `shape`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheEntry {
    /// The op's name.
    pub op: String,
    /// The problem shape, as the report prints it (`640x480`).
    pub shape: String,
    /// The chosen kernel's name.
    pub kernel: String,
    /// Set by a user to pin `kernel`: the registry then reports it as forced.
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
    /// The decisions, sorted by op and shape.
    pub entries: Vec<CacheEntry>,
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

/// Reads the entries of `path` that belong to `key`.
///
/// A missing file is an empty cache (`Ok`).
///
/// # Errors
/// [`CacheError::Invalid`] for a file that does not parse, has another
/// format, or belongs to another CPU or crate version; [`CacheError::Io`]
/// when it cannot be read. Callers ignore the file then (with a warning).
pub fn load(path: &Path, key: &CacheKey) -> Result<Vec<CacheEntry>, CacheError> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(CacheError::Io {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let invalid = |reason: String| CacheError::Invalid {
        path: path.to_path_buf(),
        reason,
    };
    let file: CacheFile =
        serde_json::from_str(&text).map_err(|e| invalid(format!("not a cache file ({e})")))?;
    if file.format != FORMAT {
        return Err(invalid(format!(
            "format {} (this version reads {FORMAT})",
            file.format
        )));
    }
    if file.key.crate_version != key.crate_version {
        return Err(invalid(format!(
            "written by cortex-core {} (this is {})",
            file.key.crate_version, key.crate_version
        )));
    }
    if file.key.cpu_model != key.cpu_model || file.key.cpu_features != key.cpu_features {
        return Err(invalid(format!(
            "written on another CPU ({} [{}])",
            file.key.cpu_model,
            file.key.cpu_features.join(",")
        )));
    }
    Ok(file.entries)
}

/// Writes `entries` for `key` to `path` atomically: a temporary file in the
/// same folder, flushed, then renamed over `path`. Creates the folder.
///
/// # Errors
/// [`CacheError::Io`] when the folder, the file or the rename fails.
pub fn save(path: &Path, key: &CacheKey, entries: &[CacheEntry]) -> Result<(), CacheError> {
    let io = |source| CacheError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut entries = entries.to_vec();
    entries.sort_by(|a, b| (&a.op, &a.shape).cmp(&(&b.op, &b.shape)));
    let file = CacheFile {
        format: FORMAT,
        key: key.clone(),
        entries,
    };
    let text = serde_json::to_string_pretty(&file).map_err(|e| CacheError::Invalid {
        path: path.to_path_buf(),
        reason: format!("cannot serialize ({e})"),
    })?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(io)?;
    }
    // The pid keeps two processes saving at once from sharing a temp file;
    // the rename is atomic on one file system, hence the same folder.
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp.{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let written = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if written.is_err() {
        // Best effort: a stale temp file is harmless but untidy.
        let _ = fs::remove_file(&tmp);
    }
    written.map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_then_load_round_trips_and_checks_the_key() {
        let dir = std::env::temp_dir().join(format!("cortex-cache-unit-{}", std::process::id()));
        let path = dir.join("a").join("autotune.json");
        let key = CacheKey::current();
        let entries = vec![CacheEntry {
            op: "encode_roi".into(),
            shape: "640x480".into(),
            kernel: "pure-rust".into(),
            forced: false,
            median_ns: [("pure-rust".to_string(), 1000u64)].into_iter().collect(),
        }];
        save(&path, &key, &entries).unwrap();
        assert_eq!(load(&path, &key).unwrap(), entries);
        let other = CacheKey {
            crate_version: "9.9.9".into(),
            ..key.clone()
        };
        assert!(matches!(
            load(&path, &other),
            Err(CacheError::Invalid { .. })
        ));
        assert_eq!(load(&dir.join("missing.json"), &key).unwrap(), Vec::new());
        let _ = fs::remove_dir_all(&dir);
    }
}
