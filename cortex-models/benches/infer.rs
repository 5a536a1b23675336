//! Per-inference time at one input size, on the same tensor (a scene-text
//! photograph): PP-OCRv4's detector and the committed tiny model, each on
//! the backend the registry picks, tract on all threads and on one, OpenCV
//! DNN (feature `opencv`, when it accepts the model) and ONNX Runtime
//! (Python, `scripts/ort_run.py`, when `CORTEX_MODELS_PYTHON` or `python3`
//! imports it) on all threads and on one. Interleaved in blocks (five runs
//! of each Rust contender, then a block of five runs of each ONNX Runtime
//! setting, repeated); min, median, the ratio to ONNX Runtime at the same
//! thread count, and the load average.
//!
//! `cargo bench -p cortex-models --bench infer [--features opencv,onnxruntime]`;
//! needs the model (`scripts/fetch-models.sh`); with `onnxruntime`, ONNX
//! Runtime through cortex too (`ORT_DYLIB_PATH`). `CORTEX_BENCH_PROFILE=N`
//! also prints tract's time per operator at one thread (N runs) beside ONNX
//! Runtime's own profiler's at one thread. `CORTEX_BENCH_SIZE=WxH` (default
//! 800x576), `CORTEX_BENCH_ROUNDS` (default 15), `CORTEX_BENCH_THREADS`
//! (default: the cores the process may use).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use cortex_models::prep::{frame_tensor_into, Normalize};
use cortex_models::text::{self, stride_multiple};
use cortex_models::{infer_into, InputShape, Model, ModelBackend, Output, Tensor4};
use cortex_vision::ops::RgbFrame;
use ndarray::{Array4, IxDyn};

fn median(v: &mut [f64]) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[0], v[v.len() / 2])
}

/// One way of running a model, timed.
enum How {
    /// Through the registry, as a pipeline node runs it.
    Registry,
    /// On one backend; the model copy set to its thread count.
    On(ModelBackend),
}

struct Contender {
    label: String,
    model: Model,
    how: How,
    threads: usize,
    times: Vec<f64>,
}

impl Contender {
    fn run(&self, tensor: &Tensor4, out: &mut Output) -> Result<(), String> {
        match self.how {
            How::Registry => infer_into(&self.model, tensor, out).map_err(|e| e.to_string()),
            How::On(e) => self
                .model
                .run_on(e, tensor.view(), out)
                .map_err(|e| e.to_string()),
        }
    }
}

// The paths and sizes one ONNX Runtime block needs, each its own argument.
#[allow(clippy::too_many_arguments)]
fn ort_block(
    python: &str,
    script: &Path,
    model: &Path,
    input: &Path,
    out: &Path,
    [h, w]: [usize; 2],
    threads: usize,
    n: usize,
) -> Option<f64> {
    let out = Command::new(python)
        .arg(script)
        .arg(model)
        .arg(input)
        .args(["1", "3", &h.to_string(), &w.to_string()])
        .arg(out)
        .args(["--threads", &threads.to_string(), "--time", &n.to_string()])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.split("median=")
        .nth(1)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn bench(what: &str, path: &Path, tensor: &Tensor4, threads: usize, rounds: usize, dir: &Path) {
    let [_, _, h, w] = tensor.shape() else {
        unreachable!()
    };
    let (h, w) = (*h, *w);
    let load = |t: usize| {
        let m = Model::load(path, InputShape::image(3, h, w)).unwrap();
        m.set_threads(t);
        m
    };
    let mut all = vec![
        (
            format!("registry's pick, {threads} threads"),
            How::Registry,
            threads,
        ),
        (
            format!("tract, {threads} threads"),
            How::On(ModelBackend::Tract),
            threads,
        ),
        (
            "tract, 1 thread".to_string(),
            How::On(ModelBackend::Tract),
            1,
        ),
    ];
    if cfg!(feature = "opencv") {
        all.push((
            format!("opencv-dnn, {threads} threads"),
            How::On(ModelBackend::OpenCvDnn),
            threads,
        ));
    }
    if cfg!(feature = "onnxruntime") {
        all.push((
            format!("onnxruntime (cortex), {threads} threads"),
            How::On(ModelBackend::OnnxRuntime),
            threads,
        ));
        all.push((
            "onnxruntime (cortex), 1 thread".to_string(),
            How::On(ModelBackend::OnnxRuntime),
            1,
        ));
        all.push(("registry's pick, 1 thread".to_string(), How::Registry, 1));
    }
    #[cfg(feature = "opencv")]
    opencv::core::set_num_threads(threads as i32).unwrap();
    let mut out = Output::zeros(IxDyn(&[0]));
    let mut contenders = Vec::new();
    let mut refused = Vec::new();
    for (label, how, t) in all {
        let c = Contender {
            label,
            model: load(t),
            how,
            threads: t,
            times: Vec::new(),
        };
        // Warm-up; for the registry, its first call measures the backends.
        match c.run(tensor, &mut out) {
            Ok(()) => contenders.push(c),
            Err(e) => refused.push(format!("{}: refused: {e}", c.label)),
        }
    }
    let python = std::env::var("CORTEX_MODELS_PYTHON").unwrap_or_else(|_| "python3".into());
    let input = dir.join("x.f32");
    let bytes: Vec<u8> = tensor.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(&input, bytes).unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/ort_run.py");
    let ort_threads = [threads, 1];
    let mut ort: Vec<Vec<f64>> = vec![Vec::new(); ort_threads.len()];
    let load0 = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    for _ in 0..rounds.div_ceil(5) {
        for _ in 0..5 {
            for c in &mut contenders {
                let t = Instant::now();
                c.run(tensor, &mut out).unwrap();
                c.times.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        // A block's median of 5 ONNX Runtime runs (its session warmed up by
        // the first run, which the script does not time).
        for (t, times) in ort_threads.iter().zip(&mut ort) {
            let y = dir.join("y.f32");
            if let Some(m) = ort_block(&python, &script, path, &input, &y, [h, w], *t, 5) {
                times.push(m);
            }
        }
    }
    let load1 = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!();
    println!(
        "{what}, input 1x3x{h}x{w}, {} runs per contender; load average: start {} / end {}",
        rounds.div_ceil(5) * 5,
        load0.trim(),
        load1.trim()
    );
    let ort_med: Vec<Option<f64>> = ort
        .iter_mut()
        .map(|t| (!t.is_empty()).then(|| median(t).1))
        .collect();
    let ort_at = |t: usize| {
        ort_threads
            .iter()
            .position(|&o| o == t)
            .and_then(|i| ort_med[i])
    };
    println!("| contender | min ms | median ms | median / ONNX Runtime (same threads) |");
    println!("|---|---|---|---|");
    for c in &mut contenders {
        let (min, med) = median(&mut c.times);
        let ratio = ort_at(c.threads).map_or("–".into(), |o| format!("{:.2}", med / o));
        let label = match c.how {
            How::Registry => format!(
                "{} (picked {})",
                c.label,
                c.model.last_backend().map_or("-", |e| e.name())
            ),
            How::On(_) => c.label.clone(),
        };
        println!("| {label} | {min:.1} | {med:.1} | {ratio} |");
    }
    for (t, (times, med)) in ort_threads.iter().zip(ort.iter().zip(&ort_med)) {
        match med {
            Some(m) => println!(
                "| onnxruntime (Python), {t} thread{} | {:.1} | {m:.1} | 1.00 |",
                if *t == 1 { "" } else { "s" },
                times[0]
            ),
            None => println!(
                "onnxruntime, {t} threads: skipped (`{python}` cannot run {})",
                script.display()
            ),
        }
    }
    for r in refused {
        println!("{r}");
    }
    let profile_rounds: usize = std::env::var("CORTEX_BENCH_PROFILE")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(0);
    if profile_rounds > 0 {
        profile(&python, &script, path, &input, dir, tensor, profile_rounds);
    }
}

/// tract's time per operator at one thread against ONNX Runtime's (its
/// profiler, from Python), each op kind's mean ms per run.
fn profile(
    python: &str,
    script: &Path,
    path: &Path,
    input: &Path,
    dir: &Path,
    tensor: &Tensor4,
    rounds: usize,
) {
    let [_, _, h, w] = tensor.shape() else {
        unreachable!()
    };
    let model = Model::load(path, InputShape::image(3, *h, *w)).unwrap();
    model.set_threads(1);
    let ops = model.profile_tract(tensor.view(), rounds).unwrap();
    let total: f64 = ops.iter().map(|o| o.ms).sum();
    println!();
    println!("tract per operator, 1 thread, mean of {rounds} runs (total {total:.1} ms):");
    println!("| tract op | nodes | ms | share |");
    println!("|---|---|---|---|");
    for o in &ops {
        println!(
            "| {} | {} | {:.2} | {:.0} % |",
            o.op,
            o.nodes,
            o.ms,
            o.ms / total * 100.0
        );
    }
    let out = Command::new(python)
        .arg(script)
        .arg(path)
        .arg(input)
        .args(["1", "3", &h.to_string(), &w.to_string()])
        .arg(dir.join("y.f32"))
        .args(["--threads", "1", "--profile", &rounds.to_string()])
        .output();
    let Ok(out) = out else {
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("op ")).collect();
    if lines.is_empty() {
        return;
    }
    println!();
    println!("onnxruntime per operator type, 1 thread, mean of {rounds} runs (its profiler):");
    println!("| onnxruntime op | nodes | ms |");
    println!("|---|---|---|");
    for l in lines {
        let mut it = l.split_whitespace().skip(1);
        let op = it.next().unwrap_or("?");
        let ms = it.next().and_then(|m| m.strip_prefix("ms=")).unwrap_or("?");
        let nodes = it
            .next()
            .and_then(|n| n.strip_prefix("nodes="))
            .unwrap_or("?");
        println!("| {op} | {nodes} | {ms} |");
    }
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
    let threads: usize = std::env::var("CORTEX_BENCH_THREADS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let image = "/usr/share/doc/opencv-doc/examples/text/scenetext01.jpg";
    let frame = match image::open(image) {
        Ok(img) => {
            let rgb = img.to_rgb8();
            let (iw, ih) = rgb.dimensions();
            RgbFrame::from_shape_vec((ih as usize, iw as usize, 3), rgb.into_raw()).unwrap()
        }
        Err(_) => cortex_vision::l2::demo_clip(1, w, h).remove(0),
    };
    let sizing = Model::load(&path, InputShape::image(3, h, w)).unwrap();
    let mut tensor = Array4::zeros((0, 0, 0, 0));
    frame_tensor_into(&frame, &sizing, &Normalize::PP_OCR, &mut tensor).unwrap();
    // The node's own work around the model: the frame to the tensor, and
    // DB's post-processing of the map.
    let mut prep_ms = Vec::new();
    for _ in 0..15 {
        let t = Instant::now();
        frame_tensor_into(&frame, &sizing, &Normalize::PP_OCR, &mut tensor).unwrap();
        prep_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let mut prob = Output::zeros(IxDyn(&[0]));
    sizing
        .run_on(ModelBackend::Tract, tensor.view(), &mut prob)
        .unwrap();
    let map = prob
        .index_axis(ndarray::Axis(0), 0)
        .index_axis_move(ndarray::Axis(0), 0)
        .into_dimensionality::<ndarray::Ix2>()
        .unwrap()
        .to_owned();
    let (mut scratch, mut boxes, mut db_ms) = (text::DbScratch::default(), Vec::new(), Vec::new());
    for _ in 0..15 {
        let t = Instant::now();
        text::db::db_boxes_into(
            map.view(),
            (frame.dim().1, frame.dim().0),
            &text::DbParams::PP_OCR,
            &mut scratch,
            &mut boxes,
        );
        db_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    println!(
        "around the model at {w}x{h}: frame -> tensor median {:.1} ms; DB post-processing median {:.1} ms ({} boxes)",
        median(&mut prep_ms).1,
        median(&mut db_ms).1,
        boxes.len()
    );
    drop(sizing);
    println!("tensor: {image} resized, PP-OCR normalisation");
    let dir = std::env::temp_dir().join(format!("cortex-models-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    bench("PP-OCRv4 det", &path, &tensor, threads, rounds, &dir);
    let tiny = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/tiny.onnx");
    bench("tiny test model", &tiny, &tensor, threads, rounds, &dir);
    let _ = std::fs::remove_dir_all(&dir);
}
