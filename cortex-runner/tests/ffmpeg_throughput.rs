//! Throughput of decode → L2 → encode at 1080p (or `CORTEX_THROUGHPUT_SIZE`), the whole chain and each
//! stage alone (an ignored test: run it in release with `--nocapture`).
//!
//! Debian ships no 1080p recording, so a real clip (default
//! `vtest.avi` of `opencv-doc`, 768×576) is upscaled to 1920×1080
//! (bicubic, stretched to 16:9) and written as H.264 (x264 CRF 18,
//! veryfast) once; every stage then reads or reuses that 1080p clip:
//!
//! - decode: the runner's FFmpeg source over the 1080p file (H.264 decode
//!   on FFmpeg's threads and the conversion to RGB);
//! - L2: the decoded frames, held in memory, through L2 (`BALANCED`) on the
//!   sequential engine and on the pipelined stream (the engine the chain
//!   uses; each frame cloned into the stream);
//! - encode: the frames in memory through libx264 with the runner's
//!   settings (RGB → 4:2:0 by swscale, CRF 23, `aq-mode` 1, Matroska), at
//!   preset medium and veryfast, with L2's regions as side data and without;
//! - chain: the runner itself, `run -i clip1080.mkv --engine E --encode
//!   out.mkv --roi off|regions|map` (x264 preset medium, the runner's), on
//!   each engine with ROI off and on the pipelined one with each `--roi`.
//!
//! Stages run in interleaved rounds (the order rotating each round); each
//! row gives the median over the rounds and the best round (on a shared
//! machine the best is the least disturbed).
//!
//! `[CORTEX_THROUGHPUT_CLIP=clip] [CORTEX_THROUGHPUT_FRAMES=60]
//! [CORTEX_THROUGHPUT_ROUNDS=3] cargo test --release -p cortex-runner
//! --features ffmpeg --test ffmpeg_throughput -- --ignored --nocapture`

#![cfg(feature = "ffmpeg")]

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::Instant;

use cortex_core::stream::StreamOptions;
use cortex_runner::sources::{FfmpegSource, FrameSource};
use cortex_runner::{App, Io, Record};
use cortex_vision::l2::{L2Mode, L2Outputs, L2};
use cortex_vision::ops::roi_regions::{Region, DEFAULT_QP_STRENGTH};
use cortex_vision::ops::RgbFrame;
use ff::format::Pixel;
use ffmpeg_next as ff;

/// The measured size: `CORTEX_THROUGHPUT_SIZE=WxH`, default 1920x1080.
fn dims() -> (u32, u32) {
    static DIMS: std::sync::OnceLock<(u32, u32)> = std::sync::OnceLock::new();
    *DIMS.get_or_init(|| {
        std::env::var("CORTEX_THROUGHPUT_SIZE")
            .ok()
            .and_then(|s| {
                let (w, h) = s.split_once('x')?;
                Some((w.parse().ok()?, h.parse().ok()?))
            })
            .unwrap_or((1920, 1080))
    })
}

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A libx264 encode into a Matroska file with the runner's settings.
struct X264 {
    octx: ff::format::context::Output,
    enc: ff::encoder::Video,
    scaler: ff::software::scaling::Context,
    rgb: ff::frame::Video,
    stream_tb: ff::Rational,
    pts: i64,
}

impl X264 {
    fn open(path: &Path, preset: &str, crf: u32) -> X264 {
        let codec = ff::encoder::find_by_name("libx264").expect("libx264");
        let mut octx = ff::format::output(&path).unwrap();
        let global = octx
            .format()
            .flags()
            .contains(ff::format::flag::Flags::GLOBAL_HEADER);
        octx.add_stream(codec).unwrap();
        let mut enc = ff::codec::context::Context::new_with_codec(codec)
            .encoder()
            .video()
            .unwrap();
        enc.set_width(dims().0);
        enc.set_height(dims().1);
        enc.set_format(Pixel::YUV420P);
        enc.set_time_base((1, 1000));
        enc.set_frame_rate(Some((30, 1)));
        if global {
            enc.set_flags(ff::codec::flag::Flags::GLOBAL_HEADER);
        }
        let mut opts = ff::Dictionary::new();
        opts.set("crf", &crf.to_string());
        opts.set("preset", preset);
        opts.set("aq-mode", "1");
        let enc = enc.open_with(opts).unwrap();
        let mut st = octx.stream_mut(0).unwrap();
        st.set_parameters(ff::codec::Parameters::from(&enc));
        st.set_time_base((1, 1000));
        octx.write_header().unwrap();
        let stream_tb = octx.stream(0).unwrap().time_base();
        let scaler = ff::software::scaling::Context::get(
            Pixel::RGB24,
            dims().0,
            dims().1,
            Pixel::YUV420P,
            dims().0,
            dims().1,
            ff::software::scaling::Flags::BILINEAR | ff::software::scaling::Flags::ACCURATE_RND,
        )
        .unwrap();
        X264 {
            octx,
            enc,
            scaler,
            rgb: ff::frame::Video::new(Pixel::RGB24, dims().0, dims().1),
            stream_tb,
            pts: 0,
        }
    }

    fn frame(&mut self, image: &RgbFrame, regions: &[Region]) {
        let stride = self.rgb.stride(0);
        let row = dims().0 as usize * 3;
        let dst = self.rgb.data_mut(0);
        for (y, line) in image.as_slice().unwrap().chunks_exact(row).enumerate() {
            dst[y * stride..y * stride + row].copy_from_slice(line);
        }
        let mut yuv = ff::frame::Video::empty();
        self.scaler.run(&self.rgb, &mut yuv).unwrap();
        yuv.set_pts(Some(self.pts));
        self.pts += 33;
        if !regions.is_empty() {
            let rois: Vec<ff::ffi::AVRegionOfInterest> = regions
                .iter()
                .map(|r| ff::ffi::AVRegionOfInterest {
                    self_size: std::mem::size_of::<ff::ffi::AVRegionOfInterest>() as u32,
                    top: r.bbox.y.min(dims().1 as usize) as i32,
                    bottom: (r.bbox.y + r.bbox.height).min(dims().1 as usize) as i32,
                    left: r.bbox.x.min(dims().0 as usize) as i32,
                    right: (r.bbox.x + r.bbox.width).min(dims().0 as usize) as i32,
                    qoffset: ff::ffi::AVRational {
                        num: (r.qp_offset(DEFAULT_QP_STRENGTH) * 1000.0).round() as i32,
                        den: 1000,
                    },
                })
                .collect();
            let bytes = std::mem::size_of_val(rois.as_slice());
            let mut sd = yuv
                .new_side_data(ff::frame::side_data::Type::REGIONS_OF_INTEREST, bytes)
                .unwrap();
            // SAFETY: FFmpeg allocated `bytes` bytes for the side data
            // (checked); the source is a live slice of that many bytes.
            unsafe {
                let sd = sd.as_mut_ptr();
                assert!(!(*sd).data.is_null() && (*sd).size as usize >= bytes);
                std::ptr::copy_nonoverlapping(rois.as_ptr().cast::<u8>(), (*sd).data, bytes);
            }
        }
        self.enc.send_frame(&yuv).unwrap();
        self.drain();
    }

    fn drain(&mut self) {
        let mut packet = ff::Packet::empty();
        while self.enc.receive_packet(&mut packet).is_ok() {
            packet.set_stream(0);
            packet.rescale_ts((1, 1000), self.stream_tb);
            packet.write_interleaved(&mut self.octx).unwrap();
        }
    }

    fn finish(mut self) {
        self.enc.send_eof().unwrap();
        self.drain();
        self.octx.write_trailer().unwrap();
    }
}

/// The first `n` frames of `clip`, upscaled to 1920×1080 (bicubic) and
/// written as H.264 to `out`.
fn make_1080p(clip: &str, n: usize, out: &Path) {
    let mut src = FfmpegSource::open(clip).unwrap();
    let mut enc = X264::open(out, "veryfast", 18);
    let mut scaler: Option<ff::software::scaling::Context> = None;
    for _ in 0..n {
        let Some(frame) = src.next_frame() else {
            break;
        };
        let frame = frame.unwrap();
        let (w, h) = frame.size();
        let scaler = scaler.get_or_insert_with(|| {
            ff::software::scaling::Context::get(
                Pixel::RGB24,
                w as u32,
                h as u32,
                Pixel::RGB24,
                dims().0,
                dims().1,
                ff::software::scaling::Flags::BICUBIC,
            )
            .unwrap()
        });
        let mut small = ff::frame::Video::new(Pixel::RGB24, w as u32, h as u32);
        let stride = small.stride(0);
        for (y, line) in frame
            .image
            .as_slice()
            .unwrap()
            .chunks_exact(w * 3)
            .enumerate()
        {
            small.data_mut(0)[y * stride..y * stride + w * 3].copy_from_slice(line);
        }
        let mut big = ff::frame::Video::empty();
        scaler.run(&small, &mut big).unwrap();
        let mut image = RgbFrame::zeros((dims().1 as usize, dims().0 as usize, 3));
        let stride = big.stride(0);
        let row = dims().0 as usize * 3;
        for (y, line) in image
            .as_slice_mut()
            .unwrap()
            .chunks_exact_mut(row)
            .enumerate()
        {
            line.copy_from_slice(&big.data(0)[y * stride..y * stride + row]);
        }
        enc.frame(&image, &[]);
    }
    enc.finish();
}

fn app() -> App<L2> {
    App::<L2>::new("l2", |o: &L2Outputs| {
        Record::new().field("regions", o.regions.regions.len())
    })
    .encode_regions(|o: &L2Outputs| o.regions.regions.clone())
    .encode_qp_map(|o: &L2Outputs| &o.qp_map)
    .parallel()
}

/// Seconds for the runner's whole chain on `clip`.
fn chain(clip: &Path, n: usize, engine: &str, roi: &str, out: &Path) -> f64 {
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let io = Io {
        stdin: Box::new(std::io::empty()),
        stdout: &mut stdout,
        stderr: &mut stderr,
        progress: false,
    };
    let frames = n.to_string();
    let t = Instant::now();
    let args = [
        "l2",
        "run",
        "-q",
        "-i",
        clip.to_str().unwrap(),
        "--frames",
        &frames,
        "--engine",
        engine,
        "--encode",
        out.to_str().unwrap(),
        "--codec",
        "libx264",
        "--roi",
        roi,
    ];
    app().run_with(args, io).unwrap();
    t.elapsed().as_secs_f64()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
#[ignore = "a measurement: run in release with --ignored --nocapture"]
fn throughput_1080p() {
    ff::init().unwrap();
    ff::log::set_level(ff::log::Level::Quiet);
    let clip = std::env::var("CORTEX_THROUGHPUT_CLIP")
        .unwrap_or_else(|_| "/usr/share/doc/opencv-doc/examples/data/vtest.avi".into());
    if !Path::new(&clip).exists() {
        eprintln!("{clip}: no such clip");
        return;
    }
    let n = env_or("CORTEX_THROUGHPUT_FRAMES", 60);
    let rounds = env_or("CORTEX_THROUGHPUT_ROUNDS", 3).max(1);
    let dir: PathBuf =
        std::env::temp_dir().join(format!("cortex-throughput-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("clip1080.mkv");
    make_1080p(&clip, n, &big);
    // The decoded 1080p frames and their regions, for the stages alone.
    let mut src = FfmpegSource::open(big.to_str().unwrap()).unwrap();
    let frames: Vec<RgbFrame> = std::iter::from_fn(|| src.next_frame())
        .map(|f| f.unwrap().image)
        .collect();
    let n = frames.len();
    assert!(n > 0);
    assert_eq!(frames[0].shape(), [dims().1 as usize, dims().0 as usize, 3]);
    let mut l2 = L2::new();
    let regions: Vec<Vec<Region>> = frames
        .iter()
        .map(|f| l2.run(L2Mode::Balanced, f).unwrap().regions.regions.clone())
        .collect();
    let with_regions = regions.iter().filter(|r| !r.is_empty()).count();
    println!(
        "{clip} scaled to {}x{}: {n} frames, {with_regions} with regions",
        dims().0,
        dims().1
    );

    type Stage<'a> = (&'a str, Box<dyn Fn() -> f64 + 'a>);
    let timed = |f: &dyn Fn()| {
        let t = Instant::now();
        f();
        t.elapsed().as_secs_f64()
    };
    let encode = |preset: &'static str, roi: bool| {
        let (frames, regions, dir) = (&frames, &regions, &dir);
        move || {
            let path = dir.join(format!("enc-{preset}-{roi}.mkv"));
            timed(&|| {
                let mut enc = X264::open(&path, preset, 23);
                for (f, r) in frames.iter().zip(regions) {
                    enc.frame(f, if roi { r } else { &[] });
                }
                enc.finish();
            })
        }
    };
    let stages: Vec<Stage> = vec![
        (
            "decode (FFmpeg source, H.264 → RGB)",
            Box::new(|| {
                timed(&|| {
                    let mut src = FfmpegSource::open(big.to_str().unwrap()).unwrap();
                    let got = std::iter::from_fn(|| src.next_frame()).count();
                    assert_eq!(got, n);
                })
            }),
        ),
        (
            "L2 BALANCED, sequential engine",
            Box::new(|| {
                timed(&|| {
                    let mut l2 = L2::new();
                    for f in &frames {
                        l2.run(L2Mode::Balanced, f).unwrap();
                    }
                })
            }),
        ),
        (
            "L2 BALANCED, pipelined stream",
            Box::new(|| {
                timed(&|| {
                    let mut l2 = L2::new();
                    let report = l2
                        .run_stream(
                            L2Mode::Balanced,
                            frames.iter().map(|f| (f.clone(),)),
                            &StreamOptions::DEFAULT,
                            |_| ControlFlow::Continue(()),
                        )
                        .unwrap();
                    assert_eq!(report.processed, n as u64);
                })
            }),
        ),
        (
            "encode x264 medium, ROI off",
            Box::new(encode("medium", false)),
        ),
        (
            "encode x264 medium, ROI regions",
            Box::new(encode("medium", true)),
        ),
        (
            "encode x264 veryfast, ROI off",
            Box::new(encode("veryfast", false)),
        ),
        (
            "encode x264 veryfast, ROI regions",
            Box::new(encode("veryfast", true)),
        ),
        (
            "chain: run --engine sequential --encode (medium), ROI off",
            Box::new(|| chain(&big, n, "sequential", "off", &dir.join("chain.mkv"))),
        ),
        (
            "chain: run --engine parallel --encode (medium), ROI off",
            Box::new(|| chain(&big, n, "parallel", "off", &dir.join("chain.mkv"))),
        ),
        (
            "chain: run --engine pipelined --encode (medium), ROI off",
            Box::new(|| chain(&big, n, "pipelined", "off", &dir.join("chain.mkv"))),
        ),
        (
            "chain: run --engine pipelined --encode (medium), ROI regions",
            Box::new(|| chain(&big, n, "pipelined", "regions", &dir.join("chain.mkv"))),
        ),
        (
            "chain: run --engine pipelined --encode (medium), ROI map",
            Box::new(|| chain(&big, n, "pipelined", "map", &dir.join("chain.mkv"))),
        ),
    ];
    let mut secs = vec![Vec::new(); stages.len()];
    for round in 0..rounds {
        for k in 0..stages.len() {
            let i = (k + round) % stages.len();
            secs[i].push((stages[i].1)());
        }
    }
    println!(
        "| stage | frames/s (median of {rounds}) | ms/frame (median) | frames/s (best round) | rounds, s |"
    );
    println!("|---|---|---|---|---|");
    for ((name, _), s) in stages.iter().zip(&mut secs) {
        let all = s
            .iter()
            .map(|v| format!("{v:.1}"))
            .collect::<Vec<_>>()
            .join(", ");
        let m = median(s);
        let best = s.iter().copied().fold(f64::INFINITY, f64::min);
        println!(
            "| {name} | {:.1} | {:.0} | {:.1} | {all} |",
            n as f64 / m,
            m * 1e3 / n as f64,
            n as f64 / best
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
