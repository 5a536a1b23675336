//! Reading and replacing the cache file safely: the file is untrusted input
//! (any program of the user can write it), so it is opened without blocking,
//! read only if it is a regular file and only up to [`MAX_FILE_BYTES`]; a
//! save writes a temporary file in the same folder and renames it over the
//! old one — only over a regular file, never over a device, FIFO or folder —
//! so a reader never sees half a file, while holding a lock on the folder so
//! that two processes' read-merge-write steps do not interleave.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{CacheError, MAX_FILE_BYTES};
use crate::runtime::untrusted::{kind_of, read_regular, ReadError};

fn io(path: &Path) -> impl Fn(std::io::Error) -> CacheError + '_ {
    move |source| CacheError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The bytes of `path` (at most [`MAX_FILE_BYTES`]); `None` when nothing is
/// there.
pub(super) fn read(path: &Path) -> Result<Option<Vec<u8>>, CacheError> {
    match read_regular(path, MAX_FILE_BYTES) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(ReadError::Io(e)) => Err(io(path)(e)),
        Err(ReadError::NotAFile(kind)) => Err(CacheError::NotAFile {
            path: path.to_path_buf(),
            kind,
        }),
        Err(ReadError::TooLarge { bytes, max }) => Err(CacheError::Invalid {
            path: path.to_path_buf(),
            reason: format!("{bytes} bytes, larger than a cache file ({max} at most)"),
        }),
    }
}

/// The file a save writes: `path`, or the regular file a symbolic link at
/// `path` points to (the link stays); `path` when nothing is there.
fn save_target(path: &Path) -> Result<PathBuf, CacheError> {
    let not_a_file = |kind| CacheError::NotAFile {
        path: path.to_path_buf(),
        kind,
    };
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(path.to_path_buf()),
        Err(e) => Err(io(path)(e)),
        Ok(m) if m.is_file() => Ok(path.to_path_buf()),
        Ok(m) if m.file_type().is_symlink() => match fs::metadata(path) {
            Ok(t) if t.is_file() => fs::canonicalize(path).map_err(io(path)),
            Ok(t) => Err(not_a_file(kind_of(&t.file_type()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(not_a_file("a dangling symbolic link"))
            }
            Err(e) => Err(io(path)(e)),
        },
        Ok(m) => Err(not_a_file(kind_of(&m.file_type()))),
    }
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

/// Replaces the file at `path` with the text `render` makes from the file
/// the save will replace (it reads that file itself, under the folder's
/// lock, to merge what other processes saved meanwhile). Creates the folder;
/// a symbolic link at `path` to a regular file is kept and its target
/// replaced.
pub(super) fn replace(
    path: &Path,
    render: impl FnOnce(&Path) -> Result<String, CacheError>,
) -> Result<(), CacheError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(io(path))?;
    }
    let target = save_target(path)?;
    let dir = match target.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => d.to_path_buf(),
        None => PathBuf::from("."),
    };
    let _lock = FolderLock::acquire(&dir);
    let text = render(&target)?;
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
        .map_err(io(path))?;
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
        Err(source) => Err(io(path)(source)),
    }
}
