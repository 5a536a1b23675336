//! Property tests of the frame sources on hostile input: a Y4M stream with
//! any header (sizes up to `usize::MAX`, any colour space tag, garbage) and
//! any payload, and image files of random or truncated bytes, never panic
//! and never allocate for a frame the resource policy refuses; every frame
//! they do deliver has the size its header declares. `CORTEX_FUZZ_CASES`
//! sets the number of cases (default 64 per target).

use std::io::Cursor;

use cortex_runner::sources::{FrameSource, ImageSource, SourceError, Y4mSource};
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("CORTEX_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

/// A header line: mostly well-formed, with sizes from tiny to absurd and
/// colour-space tags valid and not.
fn header() -> impl Strategy<Value = (String, usize, usize, bool)> {
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
    (size.clone(), size, cs, any::<bool>()).prop_map(|(w, h, cs, rate)| {
        let rate = if rate { " F30:1" } else { "" };
        let four44 = cs == " C444";
        (format!("YUV4MPEG2 W{w} H{h}{rate}{cs}\n"), w, h, four44)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn y4m_streams_never_panic_and_frames_match_their_header(
        (head, w, h, four44) in header(),
        frames in 0usize..3,
        cut in any::<prop::sample::Index>(),
        junk in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        // Payload: `frames` full frames when the size is small, then a cut
        // somewhere, then junk.
        let mut bytes = head.into_bytes();
        if w <= 40 && h <= 40 {
            let p = w * h;
            let chroma = if four44 { 2 * p } else { 2 * w.div_ceil(2) * h.div_ceil(2) };
            for f in 0..frames {
                bytes.extend_from_slice(b"FRAME\n");
                bytes.extend((0..p + chroma).map(|i| (i * 7 + f) as u8));
            }
        }
        let keep = if bytes.is_empty() { 0 } else { cut.index(bytes.len() + 1) };
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
