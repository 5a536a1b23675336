//! Property tests of the frame sources on hostile input: a Y4M stream with
//! any header (sizes up to `usize::MAX`, any colour space tag, garbage,
//! fields of non-ASCII or non-UTF-8 bytes) and any payload, and image files
//! of random or truncated bytes, never panic and never allocate for a frame
//! the resource policy refuses; every frame they do deliver has the size its
//! header declares. `CORTEX_FUZZ_CASES` sets the number of cases (default 64
//! per target); a long run, e.g. `CORTEX_FUZZ_CASES=100000 cargo test
//! --release -p cortex-runner --test sources_fuzz`, draws new ones.

use std::io::Cursor;

use cortex_runner::sources::{FrameSource, ImageSource, SourceError, Y4mSource};
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("CORTEX_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

/// A header line: mostly well-formed, with sizes from tiny to absurd,
/// colour-space tags valid and not, and a last field of any bytes.
fn header() -> impl Strategy<Value = (Vec<u8>, usize, usize, bool)> {
    let size = prop_oneof![
        1usize..40,
        Just(0usize),
        Just(usize::MAX),
        Just(1usize << 40),
        20_000usize..20_010
    ];
    let cs = prop_oneof![
        Just("".to_string()),
        Just(" C420jpeg".to_string()),
        Just(" C444".to_string()),
        Just(" C420paldv".to_string()),
        Just(" C422".to_string()),
        Just(" Cmono".to_string()),
        Just(" C420p10".to_string()),
        "[ -~]{0,12}".prop_map(|s| format!(" {s}")),
    ];
    // A last field of any bytes but the line's end, starting with a
    // non-ASCII character (a field starting with one once panicked the
    // parser) or byte (not UTF-8 at all), or a comment (`X`) of any bytes.
    // One field (no space, no line end) that never starts with `W` or `H`:
    // the frames' size stays the one drawn.
    let any_bytes = || {
        proptest::collection::vec(
            any::<u8>().prop_filter("one field", |b| !matches!(b, b' ' | b'\n')),
            0..8,
        )
    };
    let extra = prop_oneof![
        Just(Vec::new()),
        "[^\\x00-\\x7F]\\PC{0,3}".prop_map(|s| format!(" {}", s.replace(' ', "")).into_bytes()),
        (0x80u8..=0xff, any_bytes())
            .prop_map(|(first, rest)| [&b" "[..], &[first], &rest].concat()),
        any_bytes().prop_map(|rest| [&b" X"[..], &rest].concat()),
    ];
    (size.clone(), size, cs, any::<bool>(), extra).prop_map(|(w, h, cs, rate, extra)| {
        let rate = if rate { " F30:1" } else { "" };
        let four44 = cs == " C444";
        let mut head = format!("YUV4MPEG2 W{w} H{h}{rate}{cs}").into_bytes();
        head.extend_from_slice(&extra);
        head.push(b'\n');
        (head, w, h, four44)
    })
}

/// The audit's file, kept as a named test beside the property that finds
/// its kind: a header field that starts with a two-byte UTF-8 character
/// (`\xd4\x96`, then `x`) once panicked the header parser (it split the
/// field after its first byte, inside the character). An unknown tag is
/// ignored, so the header is good; the frame after it is cut short.
#[test]
fn y4m_header_field_starting_with_a_non_ascii_byte_is_an_error_not_a_panic() {
    let bytes = b"YUV4MPEG2 W4 H4 \xd4\x96x\nFRAME\n".to_vec();
    let run = std::panic::catch_unwind(move || {
        let mut src = Y4mSource::new("u.y4m", Box::new(Cursor::new(bytes)))?;
        src.next_frame().transpose()
    });
    let result = run.expect("the Y4M source panicked");
    assert!(
        matches!(result, Err(SourceError::Truncated { frame: 0, .. })),
        "{result:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn y4m_streams_never_panic_and_frames_match_their_header(
        (head, w, h, four44) in header(),
        frames in 0usize..3,
        cut in any::<prop::sample::Index>(),
        // Mostly after the header: a header cut short ends every case at
        // its first line, before the fields and the frames are read.
        whole_header in prop::bool::weighted(0.75),
        junk in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        // Payload: `frames` full frames when the size is small, then a cut
        // somewhere, then junk.
        let head_len = head.len();
        let mut bytes = head;
        if w <= 40 && h <= 40 {
            let p = w * h;
            let chroma = if four44 { 2 * p } else { 2 * w.div_ceil(2) * h.div_ceil(2) };
            for f in 0..frames {
                bytes.extend_from_slice(b"FRAME\n");
                bytes.extend((0..p + chroma).map(|i| (i * 7 + f) as u8));
            }
        }
        let keep = if whole_header {
            head_len + cut.index(bytes.len() - head_len + 1)
        } else {
            cut.index(bytes.len() + 1)
        };
        bytes.truncate(keep);
        bytes.extend_from_slice(&junk);
        let run = std::panic::catch_unwind(move || -> Result<Vec<(usize, usize)>, SourceError> {
            let mut src = Y4mSource::new("fuzz", Box::new(Cursor::new(bytes)))?;
            let mut sizes = Vec::new();
            while let Some(frame) = src.next_frame() {
                sizes.push(frame?.size());
                if sizes.len() > 8 {
                    break;
                }
            }
            Ok(sizes)
        });
        let result = run.map_err(|_| TestCaseError::fail("a Y4M source panicked"))?;
        if let Ok(sizes) = result {
            for size in sizes {
                prop_assert_eq!(size, (w, h));
            }
        }
    }

    #[test]
    fn image_files_of_random_or_truncated_bytes_never_panic(
        png in any::<bool>(),
        keep in 0usize..400,
        junk in proptest::collection::vec(any::<u8>(), 0..32),
    ) {
        // A small valid image, truncated and followed by junk.
        let img = image::RgbImage::from_fn(9, 7, |x, y| image::Rgb([x as u8 * 20, y as u8 * 30, 7]));
        let mut bytes = Vec::new();
        let format = if png { image::ImageFormat::Png } else { image::ImageFormat::Jpeg };
        img.write_to(&mut Cursor::new(&mut bytes), format).unwrap();
        let full = bytes.len();
        bytes.truncate(keep.min(full));
        bytes.extend_from_slice(&junk);
        let dir = std::env::temp_dir().join(format!("cortex-fuzz-{}-{keep}-{}", std::process::id(), junk.len()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(if png { "f.png" } else { "f.jpg" });
        std::fs::write(&path, &bytes).unwrap();
        let p = path.clone();
        let run = std::panic::catch_unwind(move || {
            let mut src = ImageSource::from_files(vec![p]);
            src.next_frame().map(|r| r.map(|f| f.size()))
        });
        std::fs::remove_dir_all(&dir).ok();
        let result = run.map_err(|_| TestCaseError::fail("an image source panicked"))?;
        // A frame that decodes has the image's size; a cut file is an error
        // (never a silent partial frame) unless the cut kept every byte.
        match result {
            Some(Ok(size)) => prop_assert_eq!(size, (9, 7)),
            Some(Err(_)) => {}
            None => prop_assert!(false, "one file gives one frame or an error"),
        }
        // Every pixel of a PNG is in before its 12-byte IEND trailer, so a
        // cut there loses nothing; a JPEG must end with its EOI marker.
        let complete = if png { full - 12 } else { full };
        if keep < complete && junk.is_empty() {
            prop_assert!(!matches!(result, Some(Ok(_))), "a file cut at {} of {} bytes decoded", keep, full);
        }
    }
}
