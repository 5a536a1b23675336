//! Reading a model file as untrusted input: opened without blocking (a FIFO
//! at the path must not hang the load), read only if it is a regular file
//! and only up to [`MAX_MODEL_BYTES`].

use std::path::Path;

use cortex_core::untrusted::{read_regular, ReadError};

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
    read_regular(path, MAX_MODEL_BYTES).map_err(|e| match e {
        ReadError::Io(e) => Problem::Io(e.to_string()),
        ReadError::NotAFile(kind) => Problem::NotAFile(kind),
        ReadError::TooLarge { bytes, max } => Problem::FileTooLarge { bytes, max },
    })
}
