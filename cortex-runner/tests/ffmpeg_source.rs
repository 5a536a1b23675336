//! The FFmpeg source on video made in the test with FFmpeg's own encoders:
//! decoded frames against the Y4M path's frames of the same content, pts,
//! damaged packets, a size change mid-stream, inputs FFmpeg cannot open, a
//! file cut short, and `-i file.mkv` through the runner, alone and beside
//! other inputs.

#![cfg(feature = "ffmpeg")]

mod support;

use std::path::{Path, PathBuf};

use cortex_runner::sources::{self, FfmpegSource, FrameSource, SourceError, Y4mSource};
use cortex_vision::clip::SyntheticClip;
use cortex_vision::ops::RgbFrame;
use ffmpeg_next as ff;

/// A fresh directory under the target dir for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cortex-ffmpeg-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// BT.601 limited-range RGB → YCbCr, rounded (the inverse of the Y4M
/// source's conversion).
fn rgb_to_yuv(p: &[u8]) -> [u8; 3] {
    let (r, g, b) = (f64::from(p[0]), f64::from(p[1]), f64::from(p[2]));
    let y = 16.0 + (65.481 * r + 128.553 * g + 24.966 * b) / 255.0;
    let cb = 128.0 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255.0;
    let cr = 128.0 + (112.0 * r - 93.786 * g - 18.214 * b) / 255.0;
    [y, cb, cr].map(|v| v.round().clamp(0.0, 255.0) as u8)
}

/// The 4:4:4 planes of a frame.
fn yuv444(frame: &RgbFrame) -> [Vec<u8>; 3] {
    let px: Vec<[u8; 3]> = frame
        .as_slice()
        .unwrap()
        .chunks_exact(3)
        .map(rgb_to_yuv)
        .collect();
    [0, 1, 2].map(|c| px.iter().map(|p| p[c]).collect())
}

/// A 4:4:4 Y4M stream of `frames` at 30 fps.
fn y4m_444(frames: &[RgbFrame]) -> Vec<u8> {
    let (h, w, _) = frames[0].dim();
    let mut out = format!("YUV4MPEG2 W{w} H{h} F30:1 Ip A1:1 C444\n").into_bytes();
    for f in frames {
        out.extend_from_slice(b"FRAME\n");
        for plane in yuv444(f) {
            out.extend(plane);
        }
    }
    out
}

/// The frames of the Y4M path: `frames` written as 4:4:4 Y4M and read back
/// through the runner's Y4M source.
fn through_y4m(frames: &[RgbFrame]) -> Vec<RgbFrame> {
    let bytes = y4m_444(frames);
    let mut src = Y4mSource::new("t.y4m", Box::new(std::io::Cursor::new(bytes))).unwrap();
    std::iter::from_fn(|| src.next_frame())
        .map(|f| f.unwrap().image)
        .collect()
}

fn clip(n: u64, w: usize, h: usize) -> Vec<RgbFrame> {
    let c = SyntheticClip::new(w, h);
    (0..n).map(|f| c.frame(f)).collect()
}

/// Copies `rows` of `width` bytes into plane `i` of `frame` (which has its
/// own stride).
fn fill_plane(frame: &mut ff::frame::Video, i: usize, width: usize, data: &[u8]) {
    let stride = frame.stride(i);
    let dst = frame.data_mut(i);
    for (y, row) in data.chunks_exact(width).enumerate() {
        dst[y * stride..y * stride + width].copy_from_slice(row);
    }
}

/// How a test frame becomes the encoder's input.
enum Fill {
    /// The frame's own RGB24 samples (lossless with PNG).
    Rgb24,
    /// The 4:4:4 planes of [`yuv444`] (the Y4M's samples).
    Yuv444,
    /// swscale's RGB24 → YUVJ420P (for MJPEG).
    Yuvj420,
}

/// One encoded stream to write: the frames, and per packet whether to
/// replace its payload with junk.
struct Video<'a> {
    codec: &'a str,
    fill: Fill,
    frames: &'a [RgbFrame],
    corrupt: &'a dyn Fn(usize) -> bool,
}

/// Encodes each group of frames (of one size each) with its own encoder and
/// writes all their packets, in order, as one stream of `path`. The stream
/// is declared with the first group's size; later groups of another size
/// make a stream whose size changes mid-way.
fn write_video(path: &Path, groups: &[Video<'_>]) {
    ff::init().unwrap();
    let mut octx = ff::format::output(&path).unwrap();
    let first = &groups[0];
    let codec = ff::encoder::find_by_name(first.codec).unwrap();
    let mut ost = octx.add_stream(codec).unwrap();
    ost.set_time_base((1, 30));
    let mut encoders = Vec::new();
    for g in groups {
        let (h, w, _) = g.frames[0].dim();
        let codec = ff::encoder::find_by_name(g.codec).unwrap();
        let mut enc = ff::codec::context::Context::new_with_codec(codec)
            .encoder()
            .video()
            .unwrap();
        enc.set_width(w as u32);
        enc.set_height(h as u32);
        enc.set_format(match g.fill {
            Fill::Rgb24 => ff::format::Pixel::RGB24,
            Fill::Yuv444 => ff::format::Pixel::YUV444P,
            Fill::Yuvj420 => ff::format::Pixel::YUVJ420P,
        });
        enc.set_time_base((1, 30));
        enc.set_frame_rate(Some((30, 1)));
        if octx
            .format()
            .flags()
            .contains(ff::format::flag::Flags::GLOBAL_HEADER)
        {
            enc.set_flags(ff::codec::flag::Flags::GLOBAL_HEADER);
        }
        encoders.push(enc.open().unwrap());
    }
    octx.stream_mut(0)
        .unwrap()
        .set_parameters(ff::codec::Parameters::from(&encoders[0]));
    // An MP4's index first (as streaming MP4s have it): a cut file keeps
    // it. Other muxers leave the option unused.
    let mut opts = ff::Dictionary::new();
    opts.set("movflags", "+faststart");
    octx.write_header_with(opts).unwrap();
    let tb = octx.stream(0).unwrap().time_base();
    let mut pts = 0i64;
    let mut written = 0usize;
    for (g, enc) in groups.iter().zip(encoders.iter_mut()) {
        let mut drain = |enc: &mut ff::encoder::Video, octx: &mut ff::format::context::Output| {
            let mut packet = ff::Packet::empty();
            while enc.receive_packet(&mut packet).is_ok() {
                if (g.corrupt)(written) {
                    let mut junk = ff::Packet::copy(&vec![0x5a; packet.size().max(16)]);
                    junk.set_pts(packet.pts());
                    junk.set_dts(packet.dts());
                    packet = junk;
                }
                written += 1;
                packet.set_stream(0);
                packet.rescale_ts((1, 30), tb);
                packet.write_interleaved(octx).unwrap();
                packet = ff::Packet::empty();
            }
        };
        for f in g.frames {
            let (h, w, _) = f.dim();
            let mut frame = match g.fill {
                Fill::Rgb24 => {
                    let mut frame =
                        ff::frame::Video::new(ff::format::Pixel::RGB24, w as u32, h as u32);
                    fill_plane(&mut frame, 0, w * 3, f.as_slice().unwrap());
                    frame
                }
                Fill::Yuv444 => {
                    let mut frame =
                        ff::frame::Video::new(ff::format::Pixel::YUV444P, w as u32, h as u32);
                    for (i, plane) in yuv444(f).iter().enumerate() {
                        fill_plane(&mut frame, i, w, plane);
                    }
                    frame
                }
                Fill::Yuvj420 => {
                    let mut rgb =
                        ff::frame::Video::new(ff::format::Pixel::RGB24, w as u32, h as u32);
                    fill_plane(&mut rgb, 0, w * 3, f.as_slice().unwrap());
                    let mut sws = ff::software::scaling::Context::get(
                        ff::format::Pixel::RGB24,
                        w as u32,
                        h as u32,
                        ff::format::Pixel::YUVJ420P,
                        w as u32,
                        h as u32,
                        ff::software::scaling::Flags::BILINEAR,
                    )
                    .unwrap();
                    let mut out = ff::frame::Video::empty();
                    sws.run(&rgb, &mut out).unwrap();
                    out
                }
            };
            frame.set_pts(Some(pts));
            pts += 1;
            enc.send_frame(&frame).unwrap();
            drain(enc, &mut octx);
        }
        enc.send_eof().unwrap();
        drain(enc, &mut octx);
    }
    octx.write_trailer().unwrap();
}

fn never(_: usize) -> bool {
    false
}

fn decode_all(path: &Path) -> (FfmpegSource, Vec<Result<sources::Frame, SourceError>>) {
    let mut src = FfmpegSource::open(path.to_str().unwrap()).unwrap();
    let frames = std::iter::from_fn(|| src.next_frame()).collect();
    (src, frames)
}

#[test]
fn lossless_rgb_png_decodes_to_the_y4m_paths_frames_exactly() {
    let dir = scratch("gbrp");
    let y4m_frames = through_y4m(&clip(12, 96, 64));
    let path = dir.join("clip.mkv");
    write_video(
        &path,
        &[Video {
            codec: "png",
            fill: Fill::Rgb24,
            frames: &y4m_frames,
            corrupt: &never,
        }],
    );
    let (src, frames) = decode_all(&path);
    assert_eq!(frames.len(), y4m_frames.len());
    for (i, (got, want)) in frames.into_iter().zip(&y4m_frames).enumerate() {
        let got = got.unwrap();
        assert_eq!(got.index, i as u64);
        assert_eq!(&got.image, want, "frame {i}");
        // pts carried: frame i at i/30 s.
        let t = got.timestamp.expect("a timestamp");
        assert!((t - i as f64 / 30.0).abs() < 1e-3, "frame {i} at {t}");
    }
    assert_eq!(src.decode_errors(), 0);
}

#[test]
fn yuv444_decodes_within_one_level_of_the_y4m_path() {
    // The same 4:4:4 samples as the Y4M file, converted to RGB by swscale
    // (fixed-point BT.601) instead of the Y4M source's own conversion: the
    // two round differently, by at most one level.
    let dir = scratch("yuv444");
    let frames = clip(6, 96, 64);
    let y4m_frames = through_y4m(&frames);
    let path = dir.join("clip.mkv");
    write_video(
        &path,
        &[Video {
            codec: "ffv1",
            fill: Fill::Yuv444,
            frames: &frames,
            corrupt: &never,
        }],
    );
    let (_, decoded) = decode_all(&path);
    assert_eq!(decoded.len(), frames.len());
    let mut max = 0u8;
    let mut differ = 0usize;
    for (got, want) in decoded.into_iter().zip(&y4m_frames) {
        let got = got.unwrap();
        for (a, b) in got.image.iter().zip(want.iter()) {
            max = max.max(a.abs_diff(*b));
            differ += usize::from(a != b);
        }
    }
    assert!(max <= 1, "largest difference {max}");
    // Most samples agree exactly.
    let total = frames.len() * 96 * 64 * 3;
    assert!(differ * 10 < total, "{differ} of {total} samples differ");
}

#[test]
fn damaged_packets_are_counted_and_skipped() {
    let dir = scratch("corrupt");
    let frames = clip(10, 96, 64);
    let path = dir.join("clip.mkv");
    let damaged = |i: usize| i == 3 || i == 6;
    write_video(
        &path,
        &[Video {
            codec: "mjpeg",
            fill: Fill::Yuvj420,
            frames: &frames,
            corrupt: &damaged,
        }],
    );
    let (src, decoded) = decode_all(&path);
    assert_eq!(src.packets(), 10);
    assert_eq!(src.decode_errors(), 2);
    assert_eq!(decoded.len(), 8);
    assert!(decoded.iter().all(Result::is_ok));
    let notes = src.notes();
    assert_eq!(notes.len(), 1);
    assert!(notes[0].contains("2 of 10 packets failed"), "{}", notes[0]);
}

#[test]
fn a_stream_of_only_damaged_packets_fails() {
    let dir = scratch("all-corrupt");
    let frames = clip(4, 96, 64);
    let path = dir.join("clip.mkv");
    write_video(
        &path,
        &[Video {
            codec: "mjpeg",
            fill: Fill::Yuvj420,
            frames: &frames,
            corrupt: &|_| true,
        }],
    );
    let (_, decoded) = decode_all(&path);
    assert_eq!(decoded.len(), 1);
    let e = decoded[0].as_ref().unwrap_err().to_string();
    assert!(
        e.contains("no packet of the video stream decodes (4 of 4 failed"),
        "{e}"
    );
}

#[test]
fn a_size_change_mid_stream_is_refused() {
    let dir = scratch("resize");
    let a = clip(3, 96, 64);
    let b = clip(3, 64, 48);
    let path = dir.join("clip.mkv");
    write_video(
        &path,
        &[
            Video {
                codec: "mjpeg",
                fill: Fill::Yuvj420,
                frames: &a,
                corrupt: &never,
            },
            Video {
                codec: "mjpeg",
                fill: Fill::Yuvj420,
                frames: &b,
                corrupt: &never,
            },
        ],
    );
    let (_, decoded) = decode_all(&path);
    assert_eq!(decoded.len(), 4, "three frames, then the error");
    assert!(decoded[..3].iter().all(Result::is_ok));
    match &decoded[3] {
        Err(
            e @ SourceError::SizeChanged {
                frame, from, to, ..
            },
        ) => {
            assert_eq!((*frame, *from, *to), (3, (96, 64), (64, 48)));
            assert!(e
                .to_string()
                .contains("frame 3 is 64x48, the stream started at 96x64"));
        }
        other => panic!("expected a size change, got {other:?}"),
    }
}

#[test]
fn oversized_frames_are_refused_before_conversion() {
    let dir = scratch("limits");
    let frames = clip(2, 96, 64);
    let path = dir.join("clip.mkv");
    write_video(
        &path,
        &[Video {
            codec: "png",
            fill: Fill::Rgb24,
            frames: &frames,
            corrupt: &never,
        }],
    );
    let small = cortex_core::limits::FrameLimits {
        max_side: 64,
        ..cortex_core::limits::FrameLimits::DEFAULT
    };
    let first = cortex_core::limits::with_limits(small, || decode_all(&path).1.remove(0));
    assert!(
        matches!(
            first,
            Err(SourceError::TooLarge {
                width: 96,
                height: 64,
                ..
            })
        ),
        "{first:?}"
    );
}

#[test]
fn inputs_ffmpeg_cannot_open() {
    let dir = scratch("bad");
    let junk = dir.join("junk.mkv");
    std::fs::write(&junk, b"this is not a video file at all").unwrap();
    let e = FfmpegSource::open(junk.to_str().unwrap())
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.starts_with(&format!("{}: FFmpeg cannot open it", junk.display())),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1);
    let empty = dir.join("empty.mp4");
    std::fs::write(&empty, b"").unwrap();
    assert!(FfmpegSource::open(empty.to_str().unwrap()).is_err());
    // Through `open`: a missing file is still "no such file", a URL goes to
    // FFmpeg.
    let missing = sources::open(
        Some("/nonexistent/x.mkv"),
        (64, 64),
        Box::new(std::io::empty()),
    );
    assert!(matches!(missing, Err(SourceError::NotFound(_))));
    let url = sources::open(
        Some("file:///nonexistent/x.mkv"),
        (64, 64),
        Box::new(std::io::empty()),
    );
    assert!(matches!(url, Err(SourceError::Video { .. })));
}

#[test]
fn open_picks_ffmpeg_for_video_files() {
    let dir = scratch("open");
    let frames = clip(3, 96, 64);
    let path = dir.join("clip.mkv");
    write_video(
        &path,
        &[Video {
            codec: "png",
            fill: Fill::Rgb24,
            frames: &frames,
            corrupt: &never,
        }],
    );
    let src = sources::open(path.to_str(), (64, 64), Box::new(std::io::empty())).unwrap();
    assert!(src.describe().ends_with("(FFmpeg)"), "{}", src.describe());
}

/// An MP4 of `n` frames (its index first) and the same file cut at `keep`
/// of its length.
fn mp4_and_cut(dir: &Path, n: u64, keep: f64) -> (PathBuf, PathBuf) {
    let frames = clip(n, 96, 64);
    let path = dir.join("clip.mp4");
    write_video(
        &path,
        &[Video {
            // B-frames: the MP4 gets an edit list, which must not read as
            // missing frames.
            codec: "libx264",
            fill: Fill::Yuv444,
            frames: &frames,
            corrupt: &never,
        }],
    );
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.join("cut.mp4");
    std::fs::write(&cut, &bytes[..(bytes.len() as f64 * keep) as usize]).unwrap();
    (path, cut)
}

#[test]
fn a_file_cut_short_is_an_error_after_the_frames_before_the_cut() {
    let dir = scratch("cut");
    let (whole, cut) = mp4_and_cut(&dir, 30, 0.6);
    let (_, decoded) = decode_all(&whole);
    assert_eq!(decoded.len(), 30);
    assert!(
        decoded.iter().all(Result::is_ok),
        "the whole file is not cut"
    );
    let (_, decoded) = decode_all(&cut);
    let (last, before) = decoded.split_last().unwrap();
    assert!(before.iter().all(Result::is_ok));
    assert!(!before.is_empty() && before.len() < 30, "{}", before.len());
    let e = last.as_ref().unwrap_err().to_string();
    assert!(
        e.contains("truncated") && e.contains("of the 30 its index lists"),
        "{e}"
    );
}

mod runner {
    use super::*;
    use cortex_runner::{App, Record, RunnerError};
    use cortex_vision::l2::{L2Outputs, L2};

    fn run(args: &[&str]) -> (Result<(), RunnerError>, String, String) {
        let app = App::<L2>::new("l2", |o: &L2Outputs| {
            Record::new().field("score", o.roi.score)
        })
        .parallel();
        crate::support::run_captured(app, args)
    }

    fn frames_of(stdout: &str, stream: u64) -> usize {
        stdout
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|v| v["stream"] == stream)
            .count()
    }

    #[test]
    fn a_cut_file_alone_prints_its_frames_then_fails() {
        let dir = scratch("cut-run");
        let (_, cut) = mp4_and_cut(&dir, 30, 0.6);
        let (result, stdout, _) = run(&["run", "--json", "-i", cut.to_str().unwrap()]);
        let e = result.unwrap_err();
        assert!(e.to_string().contains("truncated"), "{e}");
        assert_eq!(e.exit_code(), 1);
        let n = stdout.lines().count();
        assert!(n > 0 && n < 30, "{n}");
    }

    #[test]
    fn beside_a_good_input_damaged_cut_and_garbage_inputs_each_say_so() {
        let dir = scratch("streams");
        let frames = clip(10, 96, 64);
        let damaged = dir.join("damaged.mkv");
        write_video(
            &damaged,
            &[Video {
                codec: "mjpeg",
                fill: Fill::Yuvj420,
                frames: &frames,
                corrupt: &|i| i == 3 || i == 6,
            }],
        );
        let good = dir.join("good.mkv");
        write_video(
            &good,
            &[Video {
                codec: "mjpeg",
                fill: Fill::Yuvj420,
                frames: &frames,
                corrupt: &never,
            }],
        );
        let (good, damaged) = (good.to_str().unwrap(), damaged.to_str().unwrap());
        // Damaged packets: skipped and reported per stream, as one input's
        // run reports them; the run succeeds.
        let (result, stdout, stderr) = run(&["run", "--json", "-i", good, "-i", damaged]);
        result.unwrap();
        assert_eq!(frames_of(&stdout, 0), 10);
        assert_eq!(frames_of(&stdout, 1), 8);
        let (_, _, alone) = run(&["run", "--json", "-i", damaged]);
        let note = alone
            .lines()
            .find(|l| l.contains("packets failed to decode"))
            .unwrap_or_else(|| panic!("{alone}"));
        assert!(note.contains("2 of 10 packets failed"), "{note}");
        assert!(stderr.lines().any(|l| l == note), "{stderr}");
        // A file that is not a video and one cut short: their streams fail,
        // the good one runs to its end, the run exits 1.
        let garbage = dir.join("text.mp4");
        std::fs::write(&garbage, "not a video, only text\n").unwrap();
        let (_, cut) = mp4_and_cut(&dir, 30, 0.6);
        let (result, stdout, stderr) = run(&[
            "run",
            "--json",
            "-i",
            garbage.to_str().unwrap(),
            "-i",
            good,
            "-i",
            cut.to_str().unwrap(),
        ]);
        let e = result.unwrap_err();
        let msg = e.to_string();
        assert_eq!(e.exit_code(), 1);
        assert!(
            msg.contains("stream 0") && msg.contains("FFmpeg cannot open it"),
            "{msg}"
        );
        assert!(
            msg.contains("stream 2") && msg.contains("truncated"),
            "{msg}"
        );
        assert_eq!(frames_of(&stdout, 0), 0);
        assert_eq!(frames_of(&stdout, 1), 10, "the good input ran to its end");
        let cut_frames = frames_of(&stdout, 2);
        assert!(cut_frames > 0 && cut_frames < 30, "{cut_frames}");
        assert_eq!(
            stderr
                .lines()
                .filter(|l| l.contains("input failed"))
                .count(),
            2,
            "{stderr}"
        );
    }
}
