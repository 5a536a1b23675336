//! L2 with the DNN text map against L2 with the MSER map, on the same
//! frames, interleaved frame by frame: L2 `BALANCED` (MSER, compiled),
//! L2 with the DNN text map (`l2_dnn_graph`, built at run time) `BALANCED`
//! (the detector every frame) and `BALANCED_AT_RATE` (every 8th frame and
//! on a cut); per-frame median and mean, the mean's ratio to MSER's, and
//! the load average.
//!
//! `cargo bench -p cortex-models --bench l2_dnn`; needs the model
//! (`scripts/fetch-models.sh`). Frames: the PNG files of the folder
//! `CORTEX_BENCH_FRAMES` in name order (e.g. `ffmpeg -i vtest.avi
//! -frames:v 64 dir/f%03d.png`), else 64 frames of the synthetic clip at
//! 768×576.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cortex_core::dynamic::Value;
use cortex_core::Pipeline;
use cortex_models::l2::{l2_dnn_graph, l2_dnn_ops};
use cortex_models::text::{self, TextDetector};
use cortex_vision::l2::{L2Mode, L2};
use cortex_vision::ops::RgbFrame;

fn frames() -> (Vec<RgbFrame>, String) {
    let Some(dir) = std::env::var_os("CORTEX_BENCH_FRAMES") else {
        return (
            cortex_vision::l2::demo_clip(64, 768, 576),
            "synthetic clip".into(),
        );
    };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("CORTEX_BENCH_FRAMES is a folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
        .collect();
    paths.sort();
    let frames = paths
        .iter()
        .map(|p| {
            let rgb = image::open(p).unwrap().to_rgb8();
            let (w, h) = rgb.dimensions();
            RgbFrame::from_shape_vec((h as usize, w as usize, 3), rgb.into_raw()).unwrap()
        })
        .collect();
    (frames, PathBuf::from(dir).display().to_string())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let path = text::model_path(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."));
    if !path.is_file() {
        println!(
            "l2_dnn bench: skipped: no model at {} (scripts/fetch-models.sh)",
            path.display()
        );
        return;
    }
    let (clip, what) = frames();
    let (h, w, _) = clip[0].dim();
    let detector = TextDetector::load(&path, w, h).unwrap();
    let [_, _, mh, mw] = detector.model().input_shape();
    let load0 = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let (file, ops) = (l2_dnn_graph(&path, w, h).unwrap(), l2_dnn_ops());
    let (mut mser, mut every, mut rated) = (
        L2::new(),
        file.build(&ops).unwrap(),
        file.build(&ops).unwrap(),
    );
    let (balanced, at_rate) = (
        every.mode_named("BALANCED").unwrap(),
        every.mode_named("BALANCED_AT_RATE").unwrap(),
    );
    let input = |f: &RgbFrame| -> [Value; 1] { [Arc::new(f.clone())] };
    // Warm-up: the registry's first call at each shape measures.
    mser.run(L2Mode::Balanced, &clip[0]).unwrap();
    every.run(balanced, &input(&clip[0])).unwrap();
    let mut times = [Vec::new(), Vec::new(), Vec::new()];
    for frame in &clip {
        let t = Instant::now();
        mser.run(L2Mode::Balanced, frame).unwrap();
        times[0].push(t.elapsed());
        // The frame's copy into a value is timed too: 1.3 MB at 768x576,
        // a fraction of a millisecond beside the detector.
        let t = Instant::now();
        every.run(balanced, &input(frame)).unwrap();
        times[1].push(t.elapsed());
        let t = Instant::now();
        rated.run(at_rate, &input(frame)).unwrap();
        times[2].push(t.elapsed());
    }
    let load1 = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "{} frames {w}x{h} of {what}; detector at {mw}x{mh}",
        clip.len()
    );
    println!(
        "load average: start {} / end {}",
        load0.trim(),
        load1.trim()
    );
    let mean = |t: &[Duration]| t.iter().map(|d| ms(*d)).sum::<f64>() / t.len() as f64;
    let base = mean(&times[0]);
    println!("| pipeline | median ms/frame | mean ms/frame | mean / MSER BALANCED |");
    println!("|---|---|---|---|");
    let names = [
        "L2 BALANCED (MSER text map)",
        "L2 DNN text BALANCED (detector every frame)",
        "L2 DNN text BALANCED_AT_RATE (every 8 or cut)",
    ];
    for (name, t) in names.iter().zip(&mut times) {
        let m = mean(t);
        t.sort();
        println!(
            "| {name} | {:.1} | {m:.1} | {:.2} |",
            ms(t[t.len() / 2]),
            m / base
        );
    }
}
