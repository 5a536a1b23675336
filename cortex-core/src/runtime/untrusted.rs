//! Input the user does not control, handled so that it costs what it
//! should: files named on a command line, in an environment variable or in
//! a cache (graph files, model files, the autotune cache) are opened
//! without blocking, read only when they are regular files and only up to a
//! bound; text taken from them is echoed in messages cut short and with
//! control characters escaped.

use std::fs;
use std::io::Read;
use std::path::Path;

/// The most characters of a value read from a file or the environment that
/// a message repeats; longer values are cut and marked with their length.
pub const MAX_ECHO_CHARS: usize = 80;

/// `text` as a message may repeat it: cut to [`MAX_ECHO_CHARS`] characters
/// (marked with its length in bytes), and every control character,
/// bidirectional override and other invisible formatting character written
/// as an escape (`\u{202e}`), so that a hostile value can neither flood the
/// terminal or the log nor rewrite what it shows.
pub fn echo(text: &str) -> String {
    echo_cut(text, MAX_ECHO_CHARS)
}

/// [`echo`] with room for `max` characters: for a whole message that
/// repeats values from outside.
pub fn echo_cut(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (shown, c) in text.chars().enumerate() {
        if shown == max {
            out.push_str(&format!("… ({} bytes)", text.len()));
            return out;
        }
        if is_hidden(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// Characters a terminal does not show as themselves: C0 and C1 controls
/// (escape sequences, NUL, line breaks) and the Unicode format characters
/// that reorder or hide text (bidirectional embeddings, overrides and
/// isolates, zero-width characters, the byte-order mark).
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2069}'
                | '\u{feff}'
        )
}

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Opening or reading failed (a missing file included).
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The path names something other than a regular file.
    #[error("it is {0}, not a regular file")]
    NotAFile(&'static str),
    /// The file holds more than the bound.
    #[error("it holds {bytes} bytes, more than the {max} such a file may have")]
    TooLarge {
        /// Its size as seen (at least `max + 1`).
        bytes: u64,
        /// The bound.
        max: u64,
    },
}

/// What a file type is, for messages that refuse anything but a regular
/// file ("a FIFO", "a folder", …).
pub fn kind_of(t: &fs::FileType) -> &'static str {
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
/// links), with its length.
///
/// # Errors
/// [`ReadError::Io`] when it cannot be opened, [`ReadError::NotAFile`] for
/// a FIFO, device, folder or socket.
pub fn open_regular(path: &Path) -> Result<(fs::File, u64), ReadError> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Opening a FIFO for reading waits for a writer; without blocking
        // the open returns at once and the type check below refuses it.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    // The type of what was opened, not of what the path names now: a file
    // swapped in between cannot slip through.
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(ReadError::NotAFile(kind_of(&meta.file_type())));
    }
    Ok((file, meta.len()))
}

/// The bytes of the regular file at `path`, at most `max` of them.
///
/// # Errors
/// As [`open_regular`], and [`ReadError::TooLarge`] past `max` (checked
/// before reading, and again while reading a file that grew).
pub fn read_regular(path: &Path, max: u64) -> Result<Vec<u8>, ReadError> {
    let (file, len) = open_regular(path)?;
    if len > max {
        return Err(ReadError::TooLarge { bytes: len, max });
    }
    // The length can change after the check: read one byte past the bound
    // to tell a file that grew from one that fits.
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(ReadError::TooLarge {
            bytes: bytes.len() as u64,
            max,
        });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_escapes_what_a_terminal_would_act_on_and_cuts_long_text() {
        assert_eq!(echo("gray"), "gray");
        assert_eq!(echo("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(echo("x\u{202e}y\0"), "x\\u{202e}y\\u{0}");
        let long = "n".repeat(10_000);
        let shown = echo(&long);
        assert!(shown.starts_with(&"n".repeat(MAX_ECHO_CHARS)));
        assert!(shown.ends_with("… (10000 bytes)"), "{shown}");
    }

    #[test]
    fn only_regular_files_are_read_and_only_up_to_the_bound() {
        let dir = std::env::temp_dir().join(format!("cortex-untrusted-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("f");
        fs::write(&file, b"12345").unwrap();
        assert_eq!(read_regular(&file, 5).unwrap(), b"12345");
        assert!(matches!(
            read_regular(&file, 4),
            Err(ReadError::TooLarge { bytes: 5, max: 4 })
        ));
        assert!(matches!(
            read_regular(&dir, 100),
            Err(ReadError::NotAFile("a folder"))
        ));
        #[cfg(unix)]
        assert!(matches!(
            read_regular(Path::new("/dev/zero"), 100),
            Err(ReadError::NotAFile("a character device"))
        ));
        fs::remove_dir_all(&dir).unwrap();
    }
}
