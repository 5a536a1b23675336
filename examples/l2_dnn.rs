//! L2 with PP-OCR's text detector as its text map
//! (`cortex::models::l2::l2_dnn_graph`: L2's graph with its text node
//! substituted, built at run time), the detector run every 8th frame and on
//! a scene cut (`BALANCED_AT_RATE`), on a clip; with `--compare`, the same
//! frames through L2 with the MSER map (`BALANCED`), the DNN text map every
//! frame and at the rate, interleaved frame by frame, with the per-frame
//! medians and means and the load average.
//!
//! ```sh
//! scripts/fetch-models.sh
//! cargo run --release --example l2_dnn --features models -- [INPUT] [--frames N] [--compare]
//! ```
//!
//! INPUT is anything the runner reads (a Y4M file, a folder of images; a
//! video with the `opencv` or `ffmpeg` feature); without it, the synthetic
//! clip at 768×576.

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cortex::dynamic::{DynPipeline, Value};
use cortex::l2::{L2Mode, L2};
use cortex::models::l2::{l2_dnn_graph, l2_dnn_ops};
use cortex::models::text::{self, TextDetector};
use cortex::ops::{EncodedRoi, RgbFrame};
use cortex::Pipeline;

/// One frame of L2 with the DNN text map in `mode`: the ROI.
fn dnn(p: &mut DynPipeline, mode: usize, frame: &RgbFrame) -> Result<EncodedRoi, String> {
    let input: Value = Arc::new(frame.clone());
    let out = p.run(mode, &[input]).map_err(|e| e.to_string())?;
    out.get::<EncodedRoi>("roi")
        .cloned()
        .ok_or_else(|| "no roi".to_string())
}

struct Args {
    input: Option<String>,
    frames: usize,
    compare: bool,
}

fn parse() -> Result<Args, String> {
    let mut args = Args {
        input: None,
        frames: 48,
        compare: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--compare" => args.compare = true,
            "--frames" => {
                let n = it.next().ok_or("--frames needs a number")?;
                args.frames = n
                    .parse()
                    .map_err(|_| format!("--frames: `{n}` is not a number"))?;
            }
            s if s.starts_with('-') => return Err(format!("unknown option `{s}`")),
            s => args.input = Some(s.to_string()),
        }
    }
    Ok(args)
}

fn frames(input: Option<&str>, n: usize) -> Result<Vec<RgbFrame>, String> {
    let stdin: Box<dyn Read + Send> = Box::new(std::io::empty());
    let mut source =
        cortex::runner::sources::open(input, (768, 576), stdin).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    while out.len() < n {
        match source.next_frame() {
            Some(Ok(f)) => out.push(f.image),
            Some(Err(e)) => return Err(e.to_string()),
            None => break,
        }
    }
    if out.is_empty() {
        return Err("the input has no frame".into());
    }
    Ok(out)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Median and mean of per-frame times, in ms.
fn stats(times: &mut [Duration]) -> (f64, f64) {
    times.sort();
    let mean = times.iter().map(|d| ms(*d)).sum::<f64>() / times.len() as f64;
    (ms(times[times.len() / 2]), mean)
}

fn run() -> Result<(), String> {
    let args = parse()?;
    let clip = frames(args.input.as_deref(), args.frames)?;
    let (h, w, _) = clip[0].dim();
    let path = text::model_path(Path::new(env!("CARGO_MANIFEST_DIR")));
    let detector = TextDetector::load(&path, w, h)
        .map_err(|e| format!("{e} (run scripts/fetch-models.sh)"))?;
    let [_, _, mh, mw] = detector.model().input_shape();
    let file = l2_dnn_graph(&path, w, h).map_err(|e| e.to_string())?;
    let ops = l2_dnn_ops();
    let build = || file.build(&ops).map_err(|e| e.to_string());
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "{} frames {w}x{h}; detector at {mw}x{mh}; load average {}",
        clip.len(),
        load.trim()
    );
    if !args.compare {
        let mut l2 = build()?;
        let at_rate = l2
            .mode_named("BALANCED_AT_RATE")
            .ok_or("no BALANCED_AT_RATE")?;
        println!("frame  ms      text_held  roi");
        for (i, frame) in clip.iter().enumerate() {
            let t = Instant::now();
            let roi = dnn(&mut l2, at_rate, frame)?;
            let held = l2.holds().first().is_some_and(|h| h.held_last_frame);
            println!("{i:5}  {:6.1}  {held:9}  {:?}", ms(t.elapsed()), roi.bbox);
        }
        println!("{}", cortex::registry::report());
        return Ok(());
    }
    let (mut mser, mut every, mut rated) = (L2::new(), build()?, build()?);
    let balanced = every.mode_named("BALANCED").ok_or("no BALANCED")?;
    let at_rate = every
        .mode_named("BALANCED_AT_RATE")
        .ok_or("no BALANCED_AT_RATE")?;
    let (mut t_mser, mut t_every, mut t_rated) = (Vec::new(), Vec::new(), Vec::new());
    // One warm-up frame each (the registry's first call measures).
    mser.run(L2Mode::Balanced, &clip[0])
        .map_err(|e| e.to_string())?;
    dnn(&mut every, balanced, &clip[0])?;
    for frame in &clip {
        let t = Instant::now();
        mser.run(L2Mode::Balanced, frame)
            .map_err(|e| e.to_string())?;
        t_mser.push(t.elapsed());
        let t = Instant::now();
        dnn(&mut every, balanced, frame)?;
        t_every.push(t.elapsed());
        let t = Instant::now();
        dnn(&mut rated, at_rate, frame)?;
        t_rated.push(t.elapsed());
    }
    let (m_med, m_mean) = stats(&mut t_mser);
    println!("| pipeline | median ms/frame | mean ms/frame | mean / MSER BALANCED |");
    println!("|---|---|---|---|");
    for (name, times) in [
        ("L2 BALANCED (MSER text map)", &mut t_mser),
        ("L2 DNN text BALANCED (detector every frame)", &mut t_every),
        (
            "L2 DNN text BALANCED_AT_RATE (every 8 or cut)",
            &mut t_rated,
        ),
    ] {
        let (med, mean) = stats(times);
        println!("| {name} | {med:.1} | {mean:.1} | {:.2} |", mean / m_mean);
    }
    let _ = m_med;
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average at the end: {}", load.trim());
    println!("{}", cortex::registry::report());
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("l2_dnn: {e}");
            ExitCode::from(2)
        }
    }
}
