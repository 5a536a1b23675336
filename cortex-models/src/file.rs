//! Reading a model file as untrusted input: opened without blocking (a FIFO
//! at the path must not hang the load), read only if it is a regular file
//! and only up to [`MAX_MODEL_BYTES`].

use std::fs;
use std::io::Read;
use std::path::Path;

use cortex_core::autotune::file_kind;

use crate::error::Problem;

/// The largest model file read: 512 MiB. ONNX's protobuf encoding cannot
/// hold more than 2 GiB, and the models a frame pipeline runs are tens of
/// MB; a larger file is refused before it is read.
pub const MAX_MODEL_BYTES: u64 = 512 << 20;

/// The bytes of the model file at `path`.
///
/// # Errors
/// [`Problem::Io`] when it cannot be opened or read (a missing file
/// included), [`Problem::NotAFile`] for anything but a regular file,
/// [`Problem::FileTooLarge`] past [`MAX_MODEL_BYTES`].
pub(crate) fn read_model_file(path: &Path) -> Result<Vec<u8>, Problem> {
    let io = |e: std::io::Error| Problem::Io(e.to_string());
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Opening a FIFO for reading waits for a writer; without blocking the
        // open returns at once and the type check below refuses it.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(io)?;
    // The type of what was opened, not of what the path names now.
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(Problem::NotAFile(file_kind(&meta.file_type())));
    }
    if meta.len() > MAX_MODEL_BYTES {
        return Err(Problem::FileTooLarge {
            bytes: meta.len(),
            max: MAX_MODEL_BYTES,
        });
    }
    // The length can change after the check: read one byte past the bound
    // to tell a file that grew from one that fits.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_MODEL_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_MODEL_BYTES {
        return Err(Problem::FileTooLarge {
            bytes: bytes.len() as u64,
            max: MAX_MODEL_BYTES,
        });
    }
    Ok(bytes)
}
