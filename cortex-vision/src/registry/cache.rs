//! The autotune cache: the registry's decisions persisted to a JSON file and
//! reused at the next start without measuring again.
//!
//! One file holds the decisions of one machine and one crate version: the
//! file records the CPU model and features and the crate version, and a file
//! written by another CPU or another version is ignored (with a warning) and
//! replaced at the next save. Entries are keyed by op and problem shape and
//! name the kernel; a user may edit `kernel` and set `"forced": true` to pin
//! a kernel.
//!
//! The file is untrusted input (any program of the user can write it): it is
//! opened without blocking, read only if it is a regular file, and read up to
//! [`MAX_FILE_BYTES`]. A save writes a temporary file in the same folder and
//! renames it over the old one — only over a regular file, never over a
//! device, FIFO or folder — so a reader never sees half a file; it first
//! merges the decisions the file holds by then, so that processes tuning at
//! once keep each other's decisions.

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::op::CpuFeature;

/// The environment variable that overrides the cache file's location; set
/// it to `off` (or empty) to keep decisions in memory only.
pub const CACHE_ENV: &str = "CORTEX_AUTOTUNE_CACHE";

/// The file format this version writes and reads.
pub const FORMAT: u32 = 1;

/// The most bytes read from a cache file (1 MiB). A real cache holds one
/// entry per op and problem shape, a few KB; a larger file is not read and
/// counts as a corrupt cache.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// The most characters of a value read from a file or the environment that a
/// warning repeats; longer values are cut and marked with their length.
pub const MAX_ECHO_CHARS: usize = 80;

/// `text` cut to [`MAX_ECHO_CHARS`] characters for a warning, so that a
/// hostile value cannot flood the terminal or the log.
pub(crate) fn echo(text: &str) -> String {
    match text.char_indices().nth(MAX_ECHO_CHARS) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}… ({} bytes)", &text[..cut], text.len()),
    }
}

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

fn kind_of(t: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a folder"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_file() {
        "a regular file"
    } else {
        "something"
    }
}

/// Opens `path` for reading if it is a regular file (following symbolic
/// links); `None` when nothing is there.
fn open_regular(path: &Path) -> Result<Option<(fs::File, u64)>, CacheError> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Opening a FIFO for reading waits for a writer; without blocking
        // the open returns at once and the type check below refuses it.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(CacheError::Io {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    // The type of what was opened, not of what the path names now: a file
    // swapped in between cannot slip through.
    let meta = file.metadata().map_err(|source| CacheError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if !meta.is_file() {
        return Err(CacheError::NotAFile {
            path: path.to_path_buf(),
            kind: kind_of(&meta.file_type()),
        });
    }
    Ok(Some((file, meta.len())))
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

/// The most bytes of `/proc/cpuinfo` read: the first processor's block,
/// which names the model, is a few hundred bytes.
const MAX_CPUINFO_BYTES: u64 = 64 << 10;

fn cpu_model() -> String {
    // Linux names the model; elsewhere the features alone key the file.
    let mut text = Vec::new();
    let read = fs::File::open("/proc/cpuinfo")
        .and_then(|f| f.take(MAX_CPUINFO_BYTES).read_to_end(&mut text));
    if read.is_err() {
        return "unknown".to_string();
    }
    String::from_utf8_lossy(&text)
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().chars().take(256).collect())
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
/// A missing file is an empty cache (`Ok`). The file is opened without
/// blocking and read only if it is a regular file of at most
/// [`MAX_FILE_BYTES`].
///
/// # Errors
/// [`CacheError::NotAFile`] for a FIFO, device, folder or socket;
/// [`CacheError::Invalid`] for a file that is too large, does not parse, has
/// another format, or belongs to another CPU or crate version;
/// [`CacheError::Io`] when it cannot be opened or read. Callers ignore the
/// file then (with a warning).
pub fn load(path: &Path, key: &CacheKey) -> Result<Vec<CacheEntry>, CacheError> {
    let Some((file, len)) = open_regular(path)? else {
        return Ok(Vec::new());
    };
    let invalid = |reason: String| CacheError::Invalid {
        path: path.to_path_buf(),
        reason,
    };
    let too_large = |size: String| {
        invalid(format!(
            "{size} bytes, larger than a cache file ({MAX_FILE_BYTES} at most)"
        ))
    };
    if len > MAX_FILE_BYTES {
        return Err(too_large(len.to_string()));
    }
    // The length can change after the check: read one byte past the bound
    // to tell a file that grew from one that fits.
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| CacheError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(format!("more than {MAX_FILE_BYTES}")));
    }
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
    Ok(file.entries)
}

/// The file a save writes: `path`, or the regular file a symbolic link at
/// `path` points to (the link stays); `path` when nothing is there.
fn save_target(path: &Path) -> Result<PathBuf, CacheError> {
    let io = |source| CacheError::Io {
        path: path.to_path_buf(),
        source,
    };
    let not_a_file = |kind| CacheError::NotAFile {
        path: path.to_path_buf(),
        kind,
    };
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(path.to_path_buf()),
        Err(e) => Err(io(e)),
        Ok(m) if m.is_file() => Ok(path.to_path_buf()),
        Ok(m) if m.file_type().is_symlink() => match fs::metadata(path) {
            Ok(t) if t.is_file() => fs::canonicalize(path).map_err(io),
            Ok(t) => Err(not_a_file(kind_of(&t.file_type()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(not_a_file("a dangling symbolic link"))
            }
            Err(e) => Err(io(e)),
        },
        Ok(m) => Err(not_a_file(kind_of(&m.file_type()))),
    }
}

/// `ours` with the decisions of `theirs` for the op and shapes `ours` does
/// not have; a kernel a user pinned in the file stays pinned.
fn merge(ours: &[CacheEntry], theirs: Vec<CacheEntry>) -> Vec<CacheEntry> {
    let mut out = ours.to_vec();
    for t in theirs {
        match out.iter_mut().find(|e| e.op == t.op && e.shape == t.shape) {
            None => out.push(t),
            Some(e) if t.forced && !e.forced => *e = t,
            Some(_) => {}
        }
    }
    out
}

/// Holds an exclusive advisory lock on a folder while alive, so that the
/// read-merge-rename of two saves does not interleave. Best effort: when the
/// lock cannot be had within a short wait, the save goes on without it (the
/// rename still leaves a whole file; only a decision may be lost).
struct FolderLock {
    #[cfg(unix)]
    _dir: Option<fs::File>,
}

impl FolderLock {
    fn acquire(dir: &Path) -> FolderLock {
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            use std::os::unix::io::AsRawFd;
            let dir = fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECTORY | libc::O_NONBLOCK)
                .open(dir)
                .ok();
            let held = dir.as_ref().is_some_and(|d| {
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
                loop {
                    // SAFETY: `d` is an open descriptor owned by `dir` for the
                    // whole call; flock does not touch memory.
                    if unsafe { libc::flock(d.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                        return true;
                    }
                    if std::time::Instant::now() >= deadline {
                        return false;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
            });
            // Closing the descriptor releases the lock.
            FolderLock {
                _dir: if held { dir } else { None },
            }
        }
        #[cfg(not(unix))]
        {
            let _ = dir;
            FolderLock {}
        }
    }
}

/// Writes `entries` for `key` to `path` atomically, merged with the entries
/// for `key` the file holds by then (ours win for the same op and shape,
/// except over a kernel pinned in the file): a temporary file in the same
/// folder, flushed, then renamed over `path`. Creates the folder. A symbolic
/// link at `path` to a regular file is kept and its target replaced.
///
/// # Errors
/// [`CacheError::NotAFile`] when `path` is a FIFO, a device, a folder, a
/// socket or a dangling link (nothing is written);
/// [`CacheError::Io`] when the folder, the file or the rename fails.
pub fn save(path: &Path, key: &CacheKey, entries: &[CacheEntry]) -> Result<(), CacheError> {
    let io = |source| CacheError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(io)?;
    }
    let target = save_target(path)?;
    let dir = match target.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => d.to_path_buf(),
        None => PathBuf::from("."),
    };
    let _lock = FolderLock::acquire(&dir);
    // A file that is corrupt, foreign or unreadable by now is replaced.
    let entries = match load(&target, key) {
        Ok(theirs) => merge(entries, theirs),
        Err(CacheError::NotAFile { kind, .. }) => {
            return Err(CacheError::NotAFile {
                path: path.to_path_buf(),
                kind,
            })
        }
        Err(_) => entries.to_vec(),
    };
    let mut entries = entries;
    entries.sort_by(|a, b| (&a.op, &a.shape).cmp(&(&b.op, &b.shape)));
    let file = CacheFile {
        format: FORMAT,
        key: key.clone(),
        entries,
    };
    let text = serde_json::to_string_pretty(&file).map_err(|e| CacheError::Invalid {
        path: path.to_path_buf(),
        reason: format!("cannot serialize ({})", echo(&e.to_string())),
    })?;
    // A new temp file every time (`create_new` never follows a link planted
    // at its name nor truncates an existing file); the rename is atomic on
    // one file system, hence the same folder.
    let (tmp, mut f) = (0..16)
        .find_map(|attempt| {
            let mut tmp = target.as_os_str().to_owned();
            tmp.push(format!(".tmp.{}.{attempt}", std::process::id()));
            let tmp = PathBuf::from(tmp);
            match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)
            {
                Ok(f) => Some(Ok((tmp, f))),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => None,
                Err(e) => Some(Err(e)),
            }
        })
        .unwrap_or_else(|| {
            Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "no free temporary file name",
            ))
        })
        .map_err(io)?;
    let written = (|| {
        f.write_all(text.as_bytes())?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        drop(f);
        // Checked again just before the rename: what is at the path now must
        // still be a regular file or nothing.
        match fs::symlink_metadata(&target) {
            Ok(m) if !m.is_file() => Ok(Some(kind_of(&m.file_type()))),
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => fs::rename(&tmp, &target).map(|()| None),
        }
    })();
    if !matches!(written, Ok(None)) {
        // Best effort: a stale temp file is harmless but untidy.
        let _ = fs::remove_file(&tmp);
    }
    match written {
        Ok(None) => Ok(()),
        Ok(Some(kind)) => Err(CacheError::NotAFile {
            path: path.to_path_buf(),
            kind,
        }),
        Err(source) => Err(io(source)),
    }
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
