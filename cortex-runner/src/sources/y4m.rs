//! YUV4MPEG2 frames (what `ffmpeg -f yuv4mpegpipe` writes) from a file or
//! stdin, converted to RGB with the BT.601 limited-range formula.
//!
//! The stream header is parsed here first — so that the frame size is
//! checked against the resource policy before the `y4m` decoder allocates
//! its frame buffer, and an unsupported colour space is refused with its
//! name — then handed to the `y4m` crate for the frames.

use std::io::{BufReader, Cursor, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ndarray::Array3;

use super::{check_frame_size, Frame, FrameSource, SourceError};

/// The longest stream header accepted, in bytes (real ones are < 100).
const MAX_HEADER: usize = 1024;

/// Chroma layouts the runner converts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chroma {
    /// 4:2:0: one chroma sample per 2×2 block (any siting; nearest).
    C420,
    /// 4:4:4: full-resolution chroma.
    C444,
}

type Decoder =
    y4m::Decoder<Counting<BufReader<std::io::Chain<Cursor<Vec<u8>>, Box<dyn Read + Send>>>>>;

/// Counts the bytes read through it. The `y4m` crate reports a stream that
/// ends cleanly between frames and one cut inside a frame alike (`EOF`);
/// the count tells them apart.
struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// A Y4M stream, decoded one frame at a time.
pub struct Y4mSource {
    what: String,
    decoder: Decoder,
    /// Bytes the decoder has read.
    read: Arc<AtomicU64>,
    chroma: Chroma,
    width: usize,
    height: usize,
    /// Frames per second from the `F` tag, for timestamps.
    fps: Option<f64>,
    next: u64,
    done: bool,
}

impl Y4mSource {
    /// Reads and checks the stream header of `reader` (`what` names it in
    /// messages). An empty stream, a malformed header, an unsupported colour
    /// space or an oversized frame is an error here, before any frame.
    pub fn new(what: &str, mut reader: Box<dyn Read + Send>) -> Result<Self, SourceError> {
        let header = read_header(what, &mut reader)?;
        let info = parse_header(what, &header)?;
        check_frame_size(what, info.width, info.height)?;
        // The crate re-parses the header we consumed; chain it back in front.
        let chained = Cursor::new(header).chain(reader);
        let read = Arc::new(AtomicU64::new(0));
        let counting = Counting {
            inner: BufReader::with_capacity(1 << 16, chained),
            count: Arc::clone(&read),
        };
        let decoder = y4m::Decoder::new(counting).map_err(|e| SourceError::Y4m {
            what: what.to_string(),
            why: e.to_string(),
        })?;
        Ok(Y4mSource {
            what: what.to_string(),
            decoder,
            read,
            chroma: info.chroma,
            width: info.width,
            height: info.height,
            fps: info.fps,
            next: 0,
            done: false,
        })
    }
}

struct HeaderInfo {
    width: usize,
    height: usize,
    chroma: Chroma,
    fps: Option<f64>,
}

/// The header line including its `\n`, read byte by byte so that nothing
/// past it is consumed.
fn read_header(what: &str, reader: &mut dyn Read) -> Result<Vec<u8>, SourceError> {
    let mut header = Vec::with_capacity(128);
    let mut byte = [0u8; 1];
    loop {
        let n = reader.read(&mut byte).map_err(|source| SourceError::Io {
            what: what.to_string(),
            source,
        })?;
        if n == 0 {
            let why = if header.is_empty() {
                "empty input".to_string()
            } else {
                "the stream header is cut short".to_string()
            };
            return Err(SourceError::Y4m {
                what: what.to_string(),
                why,
            });
        }
        header.push(byte[0]);
        if byte[0] == b'\n' {
            return Ok(header);
        }
        if header.len() >= MAX_HEADER {
            return Err(SourceError::Y4m {
                what: what.to_string(),
                why: format!("no end of the stream header in its first {MAX_HEADER} bytes"),
            });
        }
    }
}

/// The stream header's fields that matter here: the size, the colour space
/// and the frame rate.
///
/// Parsed as bytes, as the `y4m` crate that re-reads it does: the spec
/// leaves the encoding open, a tag is the first *byte* of a field, and
/// unknown tags (comments `X…`, or any byte at all) are skipped. Working on
/// bytes means no field is ever split inside a multi-byte character (a
/// field that started with one once panicked this parser), and a header the
/// crate accepts is not refused here for being other than UTF-8.
fn parse_header(what: &str, header: &[u8]) -> Result<HeaderInfo, SourceError> {
    let bad = |why: String| SourceError::Y4m {
        what: what.to_string(),
        why,
    };
    let line = header.strip_suffix(b"\n").unwrap_or(header);
    let mut fields = line.split(|&b| b == b' ');
    if fields.next() != Some(&b"YUV4MPEG2"[..]) {
        return Err(bad("it does not start with `YUV4MPEG2`".into()));
    }
    let (mut width, mut height, mut fps, mut colorspace) = (None, None, None, None);
    for field in fields {
        // Empty fields (doubled spaces) are skipped, as by the crate.
        let Some((&tag, value)) = field.split_first() else {
            continue;
        };
        match tag {
            b'W' => {
                width = Some(
                    parse_dim(value).ok_or_else(|| bad(format!("bad width `{}`", shown(value))))?,
                )
            }
            b'H' => {
                height = Some(
                    parse_dim(value)
                        .ok_or_else(|| bad(format!("bad height `{}`", shown(value))))?,
                )
            }
            b'F' => fps = parse_rate(value),
            b'C' => colorspace = Some(value),
            _ => {}
        }
    }
    let width = width.ok_or_else(|| bad("no width (W)".into()))?;
    let height = height.ok_or_else(|| bad("no height (H)".into()))?;
    // The spec's default colour space is 4:2:0.
    let chroma = match colorspace.unwrap_or(b"420") {
        b"420" | b"420jpeg" | b"420mpeg2" | b"420paldv" => Chroma::C420,
        b"444" => Chroma::C444,
        other => {
            return Err(SourceError::UnsupportedColorspace {
                what: what.to_string(),
                colorspace: shown(other),
            })
        }
    };
    Ok(HeaderInfo {
        width,
        height,
        chroma,
        fps,
    })
}

/// A header value for a message: its bytes as text, any that are not UTF-8
/// shown as `�`.
fn shown(value: &[u8]) -> String {
    String::from_utf8_lossy(value).into_owned()
}

/// A frame rate `N:D` as frames per second, when both are positive numbers
/// (a rate is only used for timestamps, so a bad one means none).
fn parse_rate(value: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(value).ok()?;
    let (n, d) = text.split_once(':')?;
    let (n, d) = (n.parse::<f64>().ok()?, d.parse::<f64>().ok()?);
    (n > 0.0 && d > 0.0).then_some(n / d)
}

/// A dimension: decimal digits only, at most 9 of them (so it cannot
/// overflow anything downstream before the size check).
fn parse_dim(s: &[u8]) -> Option<usize> {
    if s.is_empty() || s.len() > 9 || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // At most 999 999 999: no overflow in usize (32 bits or more).
    Some(s.iter().fold(0, |n, &d| n * 10 + usize::from(d - b'0')))
}

/// BT.601 limited-range ("studio swing") YCbCr to RGB, one pixel:
///
/// ```text
/// R = 255/219·(Y−16)                              + 255/224·1.402·(Cr−128)
/// G = 255/219·(Y−16) − 255/224·1.772·0.114/0.587·(Cb−128) − 255/224·1.402·0.299/0.587·(Cr−128)
/// B = 255/219·(Y−16) + 255/224·1.772·(Cb−128)
/// ```
///
/// rounded to nearest and clamped to 0..=255. Computed in 16.16 fixed point
/// (coefficients rounded to 1/65536; the result differs from the exact
/// formula by less than 0.01 before rounding).
#[inline]
pub fn yuv_to_rgb_bt601(y: u8, u: u8, v: u8) -> [u8; 3] {
    // Coefficients × 65536, rounded.
    const KY: i32 = 76_309; // 255/219
    const KRV: i32 = 104_597; // 255/224 · 1.402
    const KGU: i32 = 25_675; // 255/224 · 1.772 · 0.114 / 0.587
    const KGV: i32 = 53_279; // 255/224 · 1.402 · 0.299 / 0.587
    const KBU: i32 = 132_201; // 255/224 · 1.772
    const HALF: i32 = 1 << 15;
    let c = KY * (y as i32 - 16);
    let (d, e) = (u as i32 - 128, v as i32 - 128);
    let clamp = |x: i32| ((x + HALF) >> 16).clamp(0, 255) as u8;
    [
        clamp(c + KRV * e),
        clamp(c - KGU * d - KGV * e),
        clamp(c + KBU * d),
    ]
}

impl FrameSource for Y4mSource {
    fn next_frame(&mut self) -> Option<Result<Frame, SourceError>> {
        if self.done {
            return None;
        }
        let index = self.next;
        let before = self.read.load(Ordering::Relaxed);
        let frame = match self.decoder.read_frame() {
            Ok(f) => f,
            Err(y4m::Error::EOF) => {
                self.done = true;
                if self.read.load(Ordering::Relaxed) == before {
                    return None;
                }
                return Some(Err(SourceError::Truncated {
                    what: self.what.clone(),
                    frame: index,
                }));
            }
            Err(e) => {
                self.done = true;
                let err = match e {
                    y4m::Error::IoError(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
                        SourceError::Truncated {
                            what: self.what.clone(),
                            frame: index,
                        }
                    }
                    y4m::Error::IoError(source) => SourceError::Io {
                        what: self.what.clone(),
                        source,
                    },
                    other => SourceError::Y4m {
                        what: self.what.clone(),
                        why: format!("frame {index}: {other}"),
                    },
                };
                return Some(Err(err));
            }
        };
        let (w, h) = (self.width, self.height);
        let (yp, up, vp) = (
            frame.get_y_plane(),
            frame.get_u_plane(),
            frame.get_v_plane(),
        );
        // The crate sized the planes from the header we checked (the same
        // `W`, `H` and `C`): `w·h` luma samples and, per chroma plane,
        // `w·h` (4:4:4) or `⌈w/2⌉·⌈h/2⌉` (4:2:0). Iterators and `get` keep a
        // plane of any other size from panicking: it is an error below.
        let mut rgb = Vec::with_capacity(w * h * 3);
        match self.chroma {
            Chroma::C444 => {
                for ((&y, &u), &v) in yp.iter().zip(up).zip(vp).take(w * h) {
                    rgb.extend_from_slice(&yuv_to_rgb_bt601(y, u, v));
                }
            }
            Chroma::C420 => {
                let cw = w.div_ceil(2);
                // `w > 0`: `new` refused an empty frame.
                for (row, ys) in yp.chunks_exact(w).take(h).enumerate() {
                    let cs = (row / 2) * cw;
                    for (x, &y) in ys.iter().enumerate() {
                        let c = cs + x / 2;
                        let (Some(&u), Some(&v)) = (up.get(c), vp.get(c)) else {
                            break;
                        };
                        rgb.extend_from_slice(&yuv_to_rgb_bt601(y, u, v));
                    }
                }
            }
        }
        let rgb = match Array3::from_shape_vec((h, w, 3), rgb) {
            Ok(rgb) => rgb,
            Err(_) => {
                self.done = true;
                return Some(Err(SourceError::Y4m {
                    what: self.what.clone(),
                    why: format!("frame {index}: its planes do not hold a {w}x{h} frame"),
                }));
            }
        };
        self.next += 1;
        Some(Ok(Frame {
            index,
            timestamp: self.fps.map(|f| index as f64 / f),
            image: rgb,
            missed_before: 0,
        }))
    }

    fn describe(&self) -> String {
        format!("{} (Y4M {}x{})", self.what, self.width, self.height)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bt601_matches_hand_computed_values() {
        // Y=100, Cb=90, Cr=200 by the formula in the doc comment:
        //   c = 255/219·84 = 97.808
        //   R = 97.808 + 1.596027·72            = 212.722 → 213
        //   G = 97.808 + 0.391762·38 − 0.812968·72 = 54.161 → 54
        //   B = 97.808 − 2.017232·38            = 21.153  → 21
        assert_eq!(yuv_to_rgb_bt601(100, 90, 200), [213, 54, 21]);
        // Limited-range black and white, and grey with neutral chroma.
        assert_eq!(yuv_to_rgb_bt601(16, 128, 128), [0, 0, 0]);
        assert_eq!(yuv_to_rgb_bt601(235, 128, 128), [255, 255, 255]);
        // Y=126: 255/219·110 = 128.082 → 128.
        assert_eq!(yuv_to_rgb_bt601(126, 128, 128), [128, 128, 128]);
        // Out of range clamps, never wraps.
        // Y=Cb=Cr=255: c = 255/219·239 = 278.288; R and B clamp to 255,
        // G = 278.288 − 0.391762·127 − 0.812968·127 = 125.287 → 125.
        assert_eq!(yuv_to_rgb_bt601(255, 255, 255), [255, 125, 255]);
        // Y=0, Cb=Cr=0: G = −18.630 + 0.391762·128 + 0.812968·128 = 135.575 → 136.
        assert_eq!(yuv_to_rgb_bt601(0, 0, 0), [0, 136, 0]);
    }

    #[test]
    fn header_checks() {
        let info = parse_header("t", b"YUV4MPEG2 W4 H2 F30:1 C444\n").unwrap();
        assert_eq!((info.width, info.height, info.chroma), (4, 2, Chroma::C444));
        assert_eq!(info.fps, Some(30.0));
        assert!(matches!(
            parse_header("t", b"YUV4MPEG2 W4 H2 C422\n"),
            Err(SourceError::UnsupportedColorspace { .. })
        ));
        assert!(matches!(
            parse_header("t", b"YUV4MPEG2 W4 H2 C420p10\n"),
            Err(SourceError::UnsupportedColorspace { .. })
        ));
        assert!(parse_header("t", b"YUV4MPEG2 W99999999999999999999 H2\n").is_err());
        assert!(parse_header("t", b"P6 4 2\n").is_err());
    }

    /// A tag is a field's first byte; fields of other bytes are skipped
    /// whatever they hold. Splitting a field after its first byte as text
    /// once panicked on a non-ASCII first character (the audit's
    /// `\xd4\x96x`).
    #[test]
    fn header_fields_of_any_bytes_never_panic() {
        for header in [
            &b"YUV4MPEG2 W4 H4 \xd4\x96x\n"[..],
            b"YUV4MPEG2 W4 H4 \xe2\x82\xac\n",
            b"YUV4MPEG2 \xc3\xa9 W4 H4 \xf0\x9f\x98\x80\n",
            b"YUV4MPEG2 W4 H4 XCOMMENT=caf\xe9 \xff\n",
            b"YUV4MPEG2  W4   H4 \n",
        ] {
            let info = parse_header("t", header).unwrap();
            assert_eq!((info.width, info.height, info.chroma), (4, 4, Chroma::C420));
        }
        for header in [
            &b"YUV4MPEG2 W\xd4\x96 H4\n"[..],
            b"YUV4MPEG2 W4 H\xff\n",
            b"YUV4MPEG2 W4\n",
            b"\xd4\x96 W4 H4\n",
            b"",
            b"\n",
        ] {
            assert!(matches!(
                parse_header("t", header),
                Err(SourceError::Y4m { .. })
            ));
        }
        assert!(matches!(
            parse_header("t", b"YUV4MPEG2 W4 H4 C\xd4\x96\n"),
            Err(SourceError::UnsupportedColorspace { colorspace, .. }) if colorspace == "\u{516}"
        ));
        assert_eq!(
            parse_header("t", b"YUV4MPEG2 W4 H4 F\xd4:1\n").unwrap().fps,
            None
        );
    }
}
