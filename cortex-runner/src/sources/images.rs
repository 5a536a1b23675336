//! PNG and JPEG frames from a directory, a glob or single files, in name
//! order, decoded with the `image` crate under decoder limits.

use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};

use image::{ImageFormat, ImageReader, Limits};
use ndarray::Array3;

use super::{check_frame_size, Frame, FrameSource, SourceError};
use cortex_core::limits::FrameLimits;

mod scan;

/// The largest image file read, in bytes (a compressed frame of the
/// largest accepted size is far smaller).
const MAX_FILE_BYTES: u64 = 1 << 30;

/// Whether a lower-case extension names a frame file.
pub(super) fn is_image_extension(ext: &str) -> bool {
    matches!(ext, "png" | "jpg" | "jpeg")
}

/// Image files read one per frame.
pub struct ImageSource {
    what: String,
    files: Vec<PathBuf>,
    next: usize,
}

impl ImageSource {
    /// Every PNG / JPEG file directly in `dir`, sorted by name; a directory
    /// with none is [`SourceError::NoFrames`].
    pub fn from_dir(dir: &Path) -> Result<Self, SourceError> {
        let files = list(dir, |_| true)?;
        if files.is_empty() {
            return Err(SourceError::NoFrames(dir.to_path_buf()));
        }
        Ok(ImageSource {
            what: dir.display().to_string(),
            files,
            next: 0,
        })
    }

    /// The PNG / JPEG files matching `pattern`, whose last component may
    /// hold `*` (any run of characters) and `?` (one character), e.g.
    /// `shots/frame_*.png`; sorted by name.
    pub fn from_glob(pattern: &str) -> Result<Self, SourceError> {
        let path = Path::new(pattern);
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name_pattern = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        if !dir.is_dir() {
            return Err(SourceError::NotFound(dir));
        }
        let files = list(&dir, |name| wildcard(&name_pattern, name))?;
        if files.is_empty() {
            return Err(SourceError::NoFrames(PathBuf::from(pattern)));
        }
        Ok(ImageSource {
            what: pattern.to_string(),
            files,
            next: 0,
        })
    }

    /// These files, in this order.
    pub fn from_files(files: Vec<PathBuf>) -> Self {
        let what = files
            .first()
            .map_or_else(String::new, |f| f.display().to_string());
        ImageSource {
            what,
            files,
            next: 0,
        }
    }
}

/// Image files in `dir` whose names pass `keep`, sorted by name.
fn list(dir: &Path, keep: impl Fn(&str) -> bool) -> Result<Vec<PathBuf>, SourceError> {
    let io = |source| SourceError::Io {
        what: dir.display().to_string(),
        source,
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let is_image = super::extension(&path).is_some_and(|e| is_image_extension(&e));
        if is_image && path.is_file() && keep(name) {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// `*` and `?` matching over characters.
fn wildcard(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // Classic two-pointer match with backtracking to the last `*`.
    let (mut i, mut j, mut star, mut mark) = (0, 0, None, 0);
    while j < n.len() {
        if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some(i);
            mark = j;
            i += 1;
        } else if let Some(s) = star {
            i = s + 1;
            mark += 1;
            j = mark;
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

/// The fewest bytes a complete JPEG of `width × height` can have.
///
/// The decoder reads Huffman-coded JPEG only (arithmetic coding is refused),
/// which spends at least one bit on the DC coefficient of every 8×8 block
/// of every component. A component's sampling factor is 1 to 4 times
/// smaller than the largest, so even the smallest component covers a
/// quarter of each side: at least one bit per 32×32 pixels.
fn min_jpeg_bytes(width: u64, height: u64) -> u64 {
    width.div_ceil(32) * height.div_ceil(32) / 8
}

/// Decodes one file: size checked from the header before the pixels are
/// decoded; a JPEG without its end-of-image marker, too short for the size
/// its header claims, or whose scans end before all their blocks (cut short
/// and an end marker appended) is refused as truncated: the JPEG decoder
/// would otherwise fill the missing part in silently, at the claimed size.
fn decode(path: &Path) -> Result<Array3<u8>, SourceError> {
    let what = path.display().to_string();
    let io = |source| SourceError::Io {
        what: what.clone(),
        source,
    };
    let len = std::fs::metadata(path).map_err(io)?.len();
    if len > MAX_FILE_BYTES {
        return Err(SourceError::Decode {
            path: path.to_path_buf(),
            why: format!("file of {len} bytes is over the {MAX_FILE_BYTES}-byte limit"),
        });
    }
    // At most the bound even if the file grew since the check.
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_FILE_BYTES).read_to_end(&mut bytes))
        .map_err(io)?;
    let fail = |why: String| SourceError::Decode {
        path: path.to_path_buf(),
        why,
    };
    let format = image::guess_format(&bytes).map_err(|e| fail(e.to_string()))?;
    if format == ImageFormat::Jpeg && !has_jpeg_end(&bytes) {
        return Err(fail("truncated JPEG (no end-of-image marker)".into()));
    }
    let reader = |bytes: &[u8]| {
        let mut r = ImageReader::with_format(Cursor::new(bytes.to_vec()), format);
        let policy = FrameLimits::current();
        let mut limits = Limits::default();
        let side = u32::try_from(policy.max_side).unwrap_or(u32::MAX);
        limits.max_image_width = Some(side);
        limits.max_image_height = Some(side);
        // Decoded RGBA16 is the widest layout: 8 bytes a pixel.
        limits.max_alloc = Some((policy.max_pixels as u64).saturating_mul(8));
        r.limits(limits);
        r
    };
    let (w, h) = reader(&bytes)
        .into_dimensions()
        .map_err(|e| fail(e.to_string()))?;
    check_frame_size(&what, w as usize, h as usize)?;
    let min = min_jpeg_bytes(u64::from(w), u64::from(h));
    if format == ImageFormat::Jpeg && (bytes.len() as u64) < min {
        return Err(fail(format!(
            "truncated JPEG: {} bytes cannot hold the {w}x{h} pixels its header claims (at least {min} bytes)",
            bytes.len()
        )));
    }
    if format == ImageFormat::Jpeg {
        scan::check(&bytes).map_err(fail)?;
    }
    let img = reader(&bytes)
        .decode()
        .map_err(|e| fail(e.to_string()))?
        .into_rgb8();
    let (w, h) = img.dimensions();
    Array3::from_shape_vec((h as usize, w as usize, 3), img.into_raw())
        .map_err(|e| fail(e.to_string()))
}

/// Whether the JPEG ends with its EOI marker (`FF D9`), allowing a little
/// trailing padding as some writers add.
fn has_jpeg_end(bytes: &[u8]) -> bool {
    let tail = &bytes[bytes.len().saturating_sub(64)..];
    tail.windows(2).any(|w| w == [0xFF, 0xD9])
}

impl FrameSource for ImageSource {
    fn next_frame(&mut self) -> Option<Result<Frame, SourceError>> {
        let path = self.files.get(self.next)?;
        let index = self.next as u64;
        self.next += 1;
        Some(decode(path).map(|image| Frame {
            index,
            timestamp: None,
            image,
            missed_before: 0,
        }))
    }

    fn len_hint(&self) -> Option<u64> {
        Some((self.files.len() - self.next) as u64)
    }

    fn describe(&self) -> String {
        format!("{} ({} images)", self.what, self.files.len())
    }
}

#[cfg(test)]
mod tests {
    use super::{decode, wildcard, Array3, ImageFormat, SourceError};

    /// A small JPEG whose header is patched to claim 8000×8000 (64 M
    /// pixels, within the frame limits) decodes in the decoder's lenient
    /// mode as a full-size frame, the missing data filled in gray: refused
    /// instead, before any pixel is decoded.
    #[test]
    fn a_jpeg_too_short_for_its_header_is_an_error() {
        let (w, h) = (64u32, 48u32);
        let rgb: Vec<u8> = (0..w * h * 3).map(|i| (i * 7 % 251) as u8).collect();
        let mut jpeg = Vec::new();
        image::RgbImage::from_raw(w, h, rgb)
            .unwrap()
            .write_to(
                &mut std::io::Cursor::new(&mut jpeg),
                image::ImageFormat::Jpeg,
            )
            .unwrap();
        let dir = std::env::temp_dir().join(format!("cortex-jpeg-claim-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.jpg");
        std::fs::write(&good, &jpeg).unwrap();
        assert_eq!(decode(&good).unwrap().dim(), (48, 64, 3));
        // SOF0: FF C0, length (2), precision (1), height (2), width (2).
        let sof = jpeg.windows(2).position(|m| m == [0xFF, 0xC0]).unwrap();
        jpeg[sof + 5..sof + 9].copy_from_slice(&[0x1F, 0x40, 0x1F, 0x40]);
        let patched = dir.join("patched.jpg");
        std::fs::write(&patched, &jpeg).unwrap();
        let t = std::time::Instant::now();
        let r = decode(&patched);
        let took = t.elapsed();
        let _ = std::fs::remove_dir_all(&dir);
        match r {
            Err(SourceError::Decode { why, .. }) => {
                assert!(
                    why.contains("truncated JPEG") && why.contains("8000x8000"),
                    "{why}"
                )
            }
            Err(e) => panic!("another error: {e}"),
            Ok(frame) => panic!("decoded as a {:?} frame", frame.dim()),
        }
        eprintln!("refused in {took:?}");
    }

    /// A 96×64 frame with detail everywhere, as JPEG (the `image` crate's
    /// baseline encoder).
    fn baseline_jpeg() -> Vec<u8> {
        let (w, h) = (96u32, 64u32);
        let rgb: Vec<u8> = (0..w * h * 3)
            .map(|i| ((i * 37 + (i / 291) * 11) % 253) as u8)
            .collect();
        let mut jpeg = Vec::new();
        image::RgbImage::from_raw(w, h, rgb)
            .unwrap()
            .write_to(
                &mut std::io::Cursor::new(&mut jpeg),
                image::ImageFormat::Jpeg,
            )
            .unwrap();
        jpeg
    }

    /// Where the entropy-coded data of the first scan starts: after the
    /// start-of-scan segment.
    fn first_scan_data(jpeg: &[u8]) -> usize {
        let sos = jpeg.windows(2).position(|m| m == [0xFF, 0xDA]).unwrap();
        sos + 2 + usize::from(u16::from_be_bytes([jpeg[sos + 2], jpeg[sos + 3]]))
    }

    /// `jpeg` cut after `keep` bytes, then (if `eoi`) an end marker.
    fn cut(jpeg: &[u8], keep: usize, eoi: bool) -> Vec<u8> {
        let mut v = jpeg[..keep].to_vec();
        if eoi {
            v.extend_from_slice(&[0xFF, 0xD9]);
        }
        v
    }

    fn decode_bytes(name: &str, bytes: &[u8]) -> Result<Array3<u8>, SourceError> {
        let dir =
            std::env::temp_dir().join(format!("cortex-jpeg-cut-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.jpg");
        std::fs::write(&path, bytes).unwrap();
        let r = decode(&path);
        let _ = std::fs::remove_dir_all(&dir);
        r
    }

    /// Cut short, with or without its end marker put back, at points all
    /// through the data: always an error, though the decoder alone returns
    /// a whole frame for the version with the marker.
    fn assert_cuts_refused(name: &str, jpeg: &[u8]) {
        assert_eq!(
            decode_bytes(name, jpeg).unwrap().dim(),
            (64, 96, 3),
            "{name}"
        );
        let data = first_scan_data(jpeg);
        let end = jpeg.len() - 2;
        for tenth in 1..10 {
            let keep = data + (end - data) * tenth / 10;
            for eoi in [false, true] {
                let bytes = cut(jpeg, keep, eoi);
                if eoi {
                    // The reason for the check: the decoder fills in.
                    let alone = image::load_from_memory_with_format(&bytes, ImageFormat::Jpeg);
                    assert!(
                        alone.is_ok_and(|i| (i.width(), i.height()) == (96, 64)),
                        "{name}: the decoder refused a cut at {keep} itself"
                    );
                }
                match decode_bytes(name, &bytes) {
                    Err(SourceError::Decode { why, .. }) => {
                        assert!(why.contains("truncated JPEG"), "{name} at {keep}: {why}")
                    }
                    Err(e) => panic!("{name} at {keep}: another error: {e}"),
                    Ok(_) => panic!("{name} cut at {keep}/{} (eoi {eoi}) decoded", jpeg.len()),
                }
            }
        }
    }

    #[test]
    fn a_jpeg_cut_short_is_an_error_with_or_without_its_end_marker() {
        let jpeg = baseline_jpeg();
        assert_cuts_refused("baseline", &jpeg);
        // One byte short of the whole data, the marker put back.
        let bytes = cut(&jpeg, jpeg.len() - 3, true);
        let why = decode_bytes("baseline-3", &bytes).unwrap_err().to_string();
        assert!(why.contains("truncated JPEG: scan 1 ends after"), "{why}");
    }

    /// Made with the `jpeg-encoder` crate from a 96×64 gradient: 4:2:0
    /// progressive (spectral selection); 4:2:2 baseline with a restart
    /// marker every 3 MCUs; 4:4:4 progressive with restarts every 2.
    const PROGRESSIVE: &[u8] = include_bytes!("images/progressive.jpg");
    const RESTART: &[u8] = include_bytes!("images/restart.jpg");
    const PROGRESSIVE_RESTART: &[u8] = include_bytes!("images/progressive_restart.jpg");

    #[test]
    fn progressive_and_restart_jpegs_cut_short_are_errors() {
        assert_cuts_refused("progressive", PROGRESSIVE);
        assert_cuts_refused("restart", RESTART);
        assert_cuts_refused("progressive-restart", PROGRESSIVE_RESTART);
    }

    /// Where each scan of `jpeg` starts (its SOS marker).
    fn scan_starts(jpeg: &[u8]) -> Vec<usize> {
        jpeg.windows(2)
            .enumerate()
            .filter(|(_, m)| *m == [0xFF, 0xDA])
            .map(|(i, _)| i)
            .collect()
    }

    #[test]
    fn a_progressive_jpeg_cut_between_its_scans_is_an_error() {
        // Every scan before the cut is whole; the later ones, which carry
        // the finer coefficients of each component, are missing. The
        // decoder shows a blurred whole frame.
        let scans = scan_starts(PROGRESSIVE);
        assert_eq!(scans.len(), 12);
        for &at in &scans[1..] {
            let bytes = cut(PROGRESSIVE, at, true);
            assert!(image::load_from_memory_with_format(&bytes, ImageFormat::Jpeg).is_ok());
            let why = decode_bytes("between", &bytes).unwrap_err().to_string();
            assert!(why.contains("is missing scans"), "cut at {at}: {why}");
        }
    }

    #[test]
    fn a_jpeg_with_hundreds_of_scans_is_refused() {
        // The first scan (DC of the first component) repeated 200 times:
        // each repeat is valid on its own.
        let scans = scan_starts(PROGRESSIVE);
        let first = &PROGRESSIVE[scans[0]..scans[1]];
        let mut bytes = PROGRESSIVE[..scans[1]].to_vec();
        for _ in 0..200 {
            bytes.extend_from_slice(first);
        }
        bytes.extend_from_slice(&PROGRESSIVE[scans[1]..]);
        let why = decode_bytes("scans", &bytes).unwrap_err().to_string();
        assert!(why.contains("more than 128 scans"), "{why}");
        // 100 repeats are a valid file.
        let mut bytes = PROGRESSIVE[..scans[1]].to_vec();
        for _ in 0..100 {
            bytes.extend_from_slice(first);
        }
        bytes.extend_from_slice(&PROGRESSIVE[scans[1]..]);
        assert!(super::scan::check(&bytes).is_ok());
    }

    /// Damaged files (bytes overwritten, cut anywhere) give an answer,
    /// never a panic or a hang.
    #[test]
    fn the_scan_walk_survives_damaged_files() {
        let base = baseline_jpeg();
        let mut x = 0x2545_F491u32;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as usize
        };
        for jpeg in [&base[..], PROGRESSIVE, RESTART, PROGRESSIVE_RESTART] {
            assert_eq!(super::scan::check(jpeg), Ok(()));
            for round in 0..500 {
                let mut bytes = jpeg.to_vec();
                for _ in 0..1 + next() % 4 {
                    let at = next() % bytes.len();
                    bytes[at] = next() as u8;
                }
                if round % 2 == 1 {
                    bytes.truncate(next() % bytes.len());
                }
                // Any answer will do; the test is that there is one.
                let _ = super::scan::check(&bytes);
            }
        }
    }

    /// Every JPEG listed (one path a line) in the file `CORTEX_JPEG_LIST`
    /// that the decoder reads passes the scan check, and the same file cut
    /// in its data with its end marker put back does not.
    #[test]
    #[ignore = "needs CORTEX_JPEG_LIST"]
    fn real_jpegs_pass_and_their_cuts_do_not() {
        let list = std::env::var("CORTEX_JPEG_LIST").expect("CORTEX_JPEG_LIST");
        let (mut checked, mut cuts) = (0, 0);
        for path in std::fs::read_to_string(list).unwrap().lines() {
            let Ok(bytes) = std::fs::read(path) else {
                continue;
            };
            if image::load_from_memory_with_format(&bytes, ImageFormat::Jpeg).is_err() {
                continue;
            }
            if let Err(e) = super::scan::check(&bytes) {
                panic!("{path}: {e}");
            }
            checked += 1;
            let Some(data) = bytes
                .windows(2)
                .position(|m| m == [0xFF, 0xDA])
                .map(|_| first_scan_data(&bytes))
            else {
                continue;
            };
            let end = bytes.len() - 2;
            for tenth in [2, 5, 8] {
                let keep = data + (end - data) * tenth / 10;
                assert!(
                    super::scan::check(&cut(&bytes, keep, true)).is_err(),
                    "{path} cut at {keep} passes"
                );
                cuts += 1;
            }
        }
        eprintln!("{checked} files and {cuts} cuts checked");
    }

    #[test]
    fn wildcards() {
        assert!(wildcard("*.png", "a.png"));
        assert!(wildcard("f_??.png", "f_01.png"));
        assert!(!wildcard("f_??.png", "f_1.png"));
        assert!(wildcard("*_*.jpg", "shot_3.jpg"));
        assert!(!wildcard("*.png", "a.jpg"));
        assert!(wildcard("*", "anything"));
    }
}
