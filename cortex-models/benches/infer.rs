//! Per-inference time of PP-OCRv4's detector on one photograph at one input
//! size: tract, OpenCV DNN (feature `opencv`) and ONNX Runtime (Python,
//! `scripts/ort_run.py`, when `CORTEX_MODELS_PYTHON` or `python3` imports
//! it), all on one thread, interleaved in blocks (a round of tract and
//! OpenCV frames, then a block of ONNX Runtime runs, repeated), with min,
//! median and the ratio to ONNX Runtime, and the load average.
//!
//! `cargo bench -p cortex-models --bench infer [--features opencv]`; needs
//! the model (`scripts/fetch-models.sh`). `CORTEX_BENCH_SIZE=WxH` (default
//! 800x576), `CORTEX_BENCH_ROUNDS` (default 15).

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use cortex_models::prep::{frame_tensor_into, Normalize};
use cortex_models::text::{self, stride_multiple};
use cortex_models::{Engine, InputShape, Model, Output};
use cortex_vision::ops::RgbFrame;
use ndarray::{Array4, IxDyn};

fn median(v: &mut [f64]) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[0], v[v.len() / 2])
}

fn main() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let path = text::model_path(&repo);
    if !path.is_file() {
        println!(
            "infer bench: skipped: no model at {} (scripts/fetch-models.sh)",
            path.display()
        );
        return;
    }
    let size = std::env::var("CORTEX_BENCH_SIZE").unwrap_or_else(|_| "800x576".into());
    let (w, h) = size
        .split_once('x')
        .and_then(|(a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)))
        .expect("CORTEX_BENCH_SIZE=WxH");
    let (w, h) = (stride_multiple(w), stride_multiple(h));
    let rounds: usize = std::env::var("CORTEX_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(15);
    let image = "/usr/share/doc/opencv-doc/examples/text/scenetext01.jpg";
    let frame = match image::open(image) {
        Ok(img) => {
            let rgb = img.to_rgb8();
            let (iw, ih) = rgb.dimensions();
            RgbFrame::from_shape_vec((ih as usize, iw as usize, 3), rgb.into_raw()).unwrap()
        }
        Err(_) => cortex_vision::l2::demo_clip(1, w, h).remove(0),
    };
    let model = Model::load(&path, InputShape::image(3, h, w)).unwrap();
    let mut tensor = Array4::zeros((0, 0, 0, 0));
    frame_tensor_into(&frame, &model, &Normalize::PP_OCR, &mut tensor).unwrap();
    #[cfg(feature = "opencv")]
    opencv::core::set_num_threads(1).unwrap();
    let mut engines = vec![Engine::Tract];
    if cfg!(feature = "opencv") {
        engines.push(Engine::OpenCvDnn);
    }
    let mut out = Output::zeros(IxDyn(&[0]));
    for &e in &engines {
        model.run_on(e, tensor.view(), &mut out).unwrap(); // warm-up
    }
    let python = std::env::var("CORTEX_MODELS_PYTHON").unwrap_or_else(|_| "python3".into());
    let dir = std::env::temp_dir().join(format!("cortex-models-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("x.f32");
    let bytes: Vec<u8> = tensor.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(&input, bytes).unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/ort_run.py");
    let ort_block = |n: usize| -> Option<f64> {
        let out = Command::new(&python)
            .arg(&script)
            .arg(&path)
            .arg(&input)
            .args(["1", "3", &h.to_string(), &w.to_string()])
            .arg(dir.join("y.f32"))
            .args(["--threads", "1", "--time", &n.to_string()])
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout);
        text.split("median=")
            .nth(1)?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    };
    let load0 = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); engines.len()];
    let mut ort: Vec<f64> = Vec::new();
    let blocks = rounds.div_ceil(5);
    for _ in 0..blocks {
        for _ in 0..5 {
            for (i, &e) in engines.iter().enumerate() {
                let t = Instant::now();
                model.run_on(e, tensor.view(), &mut out).unwrap();
                times[i].push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        // A block's median of 5 ONNX Runtime runs (its session warmed up by
        // the first run, which the script does not time).
        if let Some(m) = ort_block(5) {
            ort.push(m);
        }
    }
    let load1 = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "PP-OCRv4 det, input 1x3x{h}x{w}, {image}, one thread each, {} runs per backend",
        blocks * 5
    );
    println!(
        "load average: start {} / end {}",
        load0.trim(),
        load1.trim()
    );
    let ort_med = (!ort.is_empty()).then(|| median(&mut ort).1);
    println!("| backend | min ms | median ms | median / ONNX Runtime |");
    println!("|---|---|---|---|");
    for (e, t) in engines.iter().zip(&mut times) {
        let (min, med) = median(t);
        let ratio = ort_med.map_or("–".into(), |o| format!("{:.2}", med / o));
        println!("| {e} | {min:.1} | {med:.1} | {ratio} |");
    }
    match ort_med {
        Some(o) => println!("| onnxruntime (Python) | {:.1} | {o:.1} | 1.00 |", ort[0]),
        None => println!(
            "onnxruntime: skipped (`{python}` cannot run {})",
            script.display()
        ),
    }
    let _ = std::fs::remove_dir_all(&dir);
}
