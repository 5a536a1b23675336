//! N independent streams in one process, one `cortexroi` (one L2 instance)
//! per stream, and the element's own overhead against `L2::run` alone on
//! the same frames. Prints the tables of the GStreamer guide's scale
//! section. Every stream gets the same `videotestsrc` pattern (`--pattern`,
//! default `ball`), so N streams cost N times one stream: patterns differ
//! widely in cost for L2 (`snow` noise makes MSER far slower), and mixing
//! them would measure the patterns, not the scaling. `--raw FILE` feeds
//! every stream the frames of a file of packed RGB frames of `--size`
//! instead (real content; `--frames` is then the file's frame count).
//!
//! ```sh
//! cargo run --release --example gst_scale --features gstreamer -- \
//!     [--frames 60] [--streams 1,2,4,8] [--size 640x480] [--mode BALANCED] \
//!     [--pattern ball | --raw frames.rgb]
//! ```

use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cortex_vision::l2::{L2Mode, L2};
use cortex_vision::ops::RgbFrame;
use gst::prelude::*;

struct Args {
    frames: usize,
    streams: Vec<usize>,
    width: usize,
    height: usize,
    mode: L2Mode,
    pattern: String,
    /// Packed RGB frames every stream reads instead of `videotestsrc`.
    raw: Option<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        frames: 60,
        streams: vec![1, 2, 4, 8],
        width: 640,
        height: 480,
        mode: L2Mode::Balanced,
        pattern: "ball".into(),
        raw: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let v = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--frames" => a.frames = v.parse().map_err(|_| format!("bad --frames {v}"))?,
            "--streams" => {
                a.streams = v
                    .split(',')
                    .map(|s| s.trim().parse().map_err(|_| format!("bad --streams {v}")))
                    .collect::<Result<_, _>>()?
            }
            "--size" => {
                let (w, h) = v.split_once('x').ok_or_else(|| format!("bad --size {v}"))?;
                a.width = w.parse().map_err(|_| format!("bad --size {v}"))?;
                a.height = h.parse().map_err(|_| format!("bad --size {v}"))?;
            }
            "--pattern" => a.pattern = v,
            "--raw" => a.raw = Some(v),
            "--mode" => a.mode = L2Mode::from_name(&v).ok_or_else(|| format!("bad --mode {v}"))?,
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    if let Some(raw) = &a.raw {
        let bytes = std::fs::metadata(raw)
            .map_err(|e| format!("--raw {raw}: {e}"))?
            .len();
        a.frames = usize::try_from(bytes).unwrap_or(0) / (a.width * a.height * 3);
    }
    if a.frames == 0 || a.streams.contains(&0) {
        return Err("--frames and --streams must be > 0".into());
    }
    Ok(a)
}

/// One branch per stream: `videotestsrc ! caps ! <element> ! fakesink`.
fn launch_line(a: &Args, streams: usize, element: &str) -> String {
    (0..streams)
        .map(|i| {
            let source = match &a.raw {
                Some(raw) => format!(
                    "filesrc location={raw} ! rawvideoparse format=rgb width={} height={} framerate=30/1",
                    a.width, a.height
                ),
                None => format!(
                    "videotestsrc num-buffers={} pattern={} ! video/x-raw,format=RGB,width={},height={}",
                    a.frames, a.pattern, a.width, a.height
                ),
            };
            format!("{source} ! {element} ! fakesink sync=false name=sink{i}")
        })
        .collect::<Vec<_>>()
        .join("  ")
}

/// Plays `line` to EOS; the wall time from PLAYING to EOS.
fn play(line: &str) -> Result<Duration, String> {
    let p = gst::parse::launch(line)
        .map_err(|e| e.to_string())?
        .downcast::<gst::Pipeline>()
        .map_err(|_| "not a pipeline".to_string())?;
    play_pipeline(&p)
}

fn play_pipeline(p: &gst::Pipeline) -> Result<Duration, String> {
    let bus = p.bus().ok_or("no bus")?;
    // Timed from NULL: start-up is in every number, and cancels in the
    // element − identity difference. (Timing from PAUSED would leave out
    // the prerolled first frame.)
    let t = Instant::now();
    p.set_state(gst::State::Playing)
        .map_err(|e| e.to_string())?;
    let mut result = Err("no EOS".to_string());
    for msg in bus.iter_timed(gst::ClockTime::from_seconds(600)) {
        match msg.view() {
            gst::MessageView::Eos(_) => {
                result = Ok(t.elapsed());
                break;
            }
            gst::MessageView::Error(e) => {
                result = Err(e.error().to_string());
                break;
            }
            _ => {}
        }
    }
    let _ = p.set_state(gst::State::Null);
    result
}

/// The frames one stream sends (the `--pattern`), captured at the sink.
fn capture(a: &Args) -> Result<Vec<RgbFrame>, String> {
    let line = launch_line(a, 1, "identity");
    let p = gst::parse::launch(&line)
        .map_err(|e| e.to_string())?
        .downcast::<gst::Pipeline>()
        .map_err(|_| "not a pipeline".to_string())?;
    let frames: Arc<Mutex<Vec<RgbFrame>>> = Arc::default();
    let f2 = frames.clone();
    let (w, h) = (a.width, a.height);
    // The stride GStreamer uses for these caps (rows padded to 4 bytes).
    let vi = gst_video::VideoInfo::builder(gst_video::VideoFormat::Rgb, w as u32, h as u32)
        .build()
        .map_err(|e| e.to_string())?;
    let stride = usize::try_from(vi.stride()[0]).map_err(|e| e.to_string())?;
    let sink = p.by_name("sink0").ok_or("no sink0")?;
    let pad = sink.static_pad("sink").ok_or("no sink pad")?;
    pad.add_probe(gst::PadProbeType::BUFFER, move |_, info| {
        if let Some(gst::PadProbeData::Buffer(buf)) = &info.data {
            if let Ok(map) = buf.map_readable() {
                let mut f = RgbFrame::zeros((0, 0, 3));
                if gstcortex::meta::copy_frame(
                    map.as_slice(),
                    gst_video::VideoFormat::Rgb,
                    w,
                    h,
                    stride,
                    &mut f,
                )
                .is_ok()
                {
                    f2.lock().unwrap_or_else(|e| e.into_inner()).push(f);
                }
            }
        }
        gst::PadProbeReturn::Ok
    });
    play_pipeline(&p)?;
    let v = std::mem::take(&mut *frames.lock().unwrap_or_else(|e| e.into_inner()));
    Ok(v)
}

fn run() -> Result<(), String> {
    let a = parse_args()?;
    gst::init().map_err(|e| e.to_string())?;
    gstcortex::register(None).map_err(|e| e.to_string())?;
    let element = format!("cortexroi mode={}", a.mode.name());
    println!(
        "cortexroi {} {}x{}, {} frames per stream ({}), {} cores",
        a.mode.name(),
        a.width,
        a.height,
        a.frames,
        a.raw
            .as_deref()
            .map_or_else(|| format!("pattern {}", a.pattern), |r| format!("file {r}")),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!();
    println!("| streams | wall s | frames/s per stream | frames/s total |");
    println!("|---:|---:|---:|---:|");
    for &n in &a.streams {
        let t = play(&launch_line(&a, n, &element))?;
        let s = t.as_secs_f64();
        println!(
            "| {n} | {s:.2} | {:.1} | {:.1} |",
            a.frames as f64 / s,
            (n * a.frames) as f64 / s
        );
    }

    // Overhead, one stream: element pipeline − identity pipeline = what the
    // element costs per frame; against `run` alone on the same frames.
    // The machine is shared: each number is the best of REPS interleaved
    // runs, so a burst of someone else's load hits one run, not the result.
    const REPS: usize = 3;
    let frames = capture(&a)?;
    if frames.is_empty() {
        return Err("captured no frames".into());
    }
    let (mut t_elem, mut t_base, mut t_run) = (Duration::MAX, Duration::MAX, Duration::MAX);
    for _ in 0..REPS {
        t_elem = t_elem.min(play(&launch_line(&a, 1, &element))?);
        t_base = t_base.min(play(&launch_line(&a, 1, "identity"))?);
        // A fresh instance, as the element gets at start.
        let mut l2 = L2::new();
        let t = Instant::now();
        for f in &frames {
            l2.run(a.mode, f).map_err(|e| e.to_string())?;
        }
        t_run = t_run.min(t.elapsed());
    }
    let mut copy_dst = RgbFrame::zeros((0, 0, 3));
    let raw: Vec<u8> = frames[0].iter().copied().collect();
    let t = Instant::now();
    for _ in &frames {
        gstcortex::meta::copy_frame(
            &raw,
            gst_video::VideoFormat::Rgb,
            a.width,
            a.height,
            a.width * 3,
            &mut copy_dst,
        )?;
    }
    let t_copy = t.elapsed();
    let per = |d: Duration, n: usize| d.as_secs_f64() * 1e3 / n as f64;
    let n = a.frames;
    let elem = per(t_elem, n) - per(t_base, n);
    let run_ms = per(t_run, frames.len());
    println!();
    println!("| one stream, per frame | ms |");
    println!("|---|---:|");
    println!(
        "| source + sink alone (`identity`) | {:.3} |",
        per(t_base, n)
    );
    println!("| source + `cortexroi` + sink | {:.3} |", per(t_elem, n));
    println!("| element (difference) | {elem:.3} |");
    println!("| `L2::run` alone, same frames | {run_ms:.3} |");
    println!(
        "| frame copy into `RgbFrame` alone | {:.3} |",
        per(t_copy, n)
    );
    println!(
        "| element overhead (element − run) | {:.3} ({:+.1}% of run) |",
        elem - run_ms,
        100.0 * (elem - run_ms) / run_ms
    );
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gst_scale: {e}");
            ExitCode::FAILURE
        }
    }
}
