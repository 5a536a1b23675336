//! The kernel registry's bench: per L2 op with several kernels, at 640x480
//! and 1920x1080, each kernel alone and what the registry selects (through
//! the registry, so dispatch is included), with an interleaved min-of-N
//! harness: every round times each contender once, so a burst of load from
//! other processes hits them alike. Then the startup costs: tuning on the
//! first frame, and loading a cached decision at a second start.
//!
//! ```text
//! cargo bench --bench registry --features opencv,turbojpeg
//! BENCH_ROUNDS=30 cargo bench --bench registry
//! ```

use std::time::{Duration, Instant};

use cortex_vision::l2::demo_clip;
use cortex_vision::ops::{self, GrayImage, RgbFrame, ScoreMap};
use cortex_vision::registry::ops::{
    BlurDetector, EncodeRoi, MotionMap, SaliencyDft, SceneChangeOp, ToGray,
};
use cortex_vision::registry::{Config, Op, Registry, Shape};

struct Inputs {
    frame: RgbFrame,
    gray: GrayImage,
    prev: GrayImage,
    score: ScoreMap,
}

fn inputs(width: usize, height: usize) -> Inputs {
    let clip = demo_clip(2, width, height);
    let prev = ops::to_gray(&clip[0]).expect("gray");
    let gray = ops::to_gray(&clip[1]).expect("gray");
    let score = ops::saliency_dft(&gray).expect("saliency");
    Inputs {
        frame: clip[1].clone(),
        gray,
        prev,
        score,
    }
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

fn rounds() -> usize {
    std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15)
}

fn quiet_registry(cache: Option<std::path::PathBuf>) -> Registry {
    Registry::new(Config {
        cache_path: cache,
        quiet: true,
        ..Config::default()
    })
}

/// Times each kernel of `O` alone and the registry's choice, interleaved;
/// prints one table row per contender.
fn bench_op<O: Op>(args: &O::Args<'_>) {
    let kernels = O::kernels();
    let reg = quiet_registry(None);
    let t = Instant::now();
    if let Err(e) = reg.call::<O>(args) {
        println!(
            "| {} | {} | registry failed: {e} | | |",
            O::NAME,
            O::shape(args)
        );
        return;
    }
    let tuning = t.elapsed();
    let shape: Shape = O::shape(args);
    let chosen = reg.decision(O::NAME, shape).map_or("?", |d| d.kernel);
    let n = kernels.len() + 1;
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); n];
    // Each contender fills an output of its own, reused round after round,
    // as a pipeline's buffers are.
    let mut outputs: Vec<O::Output> = (0..n).map(|_| O::Output::default()).collect();
    for round in 0..rounds() {
        // The starting contender rotates: a kernel that leaves the caches or
        // the allocator in a bad state must not always tax the same one.
        for j in 0..n {
            let i = (round + j) % n;
            let t = Instant::now();
            let ok = match kernels.get(i) {
                Some(k) => (k.run)(args, &mut outputs[i]).is_ok(),
                None => reg.call_into::<O>(args, &mut outputs[i]).is_ok(),
            };
            let dt = t.elapsed();
            if ok {
                samples[i].push(dt);
            }
        }
    }
    let stat = |s: &mut Vec<Duration>| {
        s.sort();
        (s.first().copied(), s.get(s.len() / 2).copied())
    };
    let stats: Vec<(Option<Duration>, Option<Duration>)> = samples.iter_mut().map(stat).collect();
    let best = stats[..n - 1].iter().filter_map(|s| s.0).min();
    for (i, k) in kernels.iter().enumerate() {
        let (min, med) = stats[i];
        let ratio = match (min, best) {
            (Some(m), Some(b)) => format!("{:.2}", m.as_secs_f64() / b.as_secs_f64()),
            _ => "-".into(),
        };
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            O::NAME,
            shape,
            k.name,
            min.map_or("failed".into(), ms),
            med.map_or("-".into(), ms),
            ratio
        );
    }
    let (min, med) = stats[n - 1];
    let verdict = match (min, best, kernels.iter().position(|k| k.name == chosen)) {
        (Some(m), Some(b), Some(ci)) => {
            let chosen_min = stats[ci].0.unwrap_or(m);
            let within = chosen_min.as_secs_f64() <= b.as_secs_f64() * 1.05;
            format!(
                "{:.2}{}",
                m.as_secs_f64() / b.as_secs_f64(),
                if within {
                    String::new()
                } else {
                    format!(" (not the fastest here: chose {chosen} on the first frame)")
                }
            )
        }
        _ => "-".into(),
    };
    println!(
        "| {} | {} | **registry → {chosen}** (tuning {} ms) | {} | {} | {verdict} |",
        O::NAME,
        shape,
        ms(tuning),
        min.map_or("-".into(), ms),
        med.map_or("-".into(), ms),
    );
}

fn startup(width: usize, height: usize) {
    let inp = inputs(width, height);
    let args = (&inp.frame, &inp.score);
    let dir = std::env::temp_dir().join(format!("cortex-bench-registry-{}", std::process::id()));
    let path = dir.join("autotune.json");
    let _ = std::fs::remove_dir_all(&dir);
    // A kernel call alone, for scale.
    let direct = (0..5)
        .map(|_| {
            let t = Instant::now();
            let _ = ops::encode_roi(&inp.frame, &inp.score);
            t.elapsed()
        })
        .min()
        .unwrap_or_default();
    let t = Instant::now();
    let first = quiet_registry(Some(path.clone()));
    let created = t.elapsed();
    let _ = first.call::<EncodeRoi>(&args);
    let tuned = t.elapsed();
    let t = Instant::now();
    let second = quiet_registry(Some(path.clone()));
    let loaded = t.elapsed();
    let _ = second.call::<EncodeRoi>(&args);
    let cached_first = t.elapsed();
    let why = second
        .decision("encode_roi", Shape::new(width, height))
        .map(|d| d.reason.to_string())
        .unwrap_or_default();
    println!(
        "| encode_roi {width}x{height} | first start (empty cache): {} ms to create, {} ms to the first output (tuning) | second start: {} ms to load the cache, {} ms to the first output | one pure-Rust call {} ms | {} |",
        ms(created),
        ms(tuned),
        ms(loaded),
        ms(cached_first),
        ms(direct),
        why.split(':').next().unwrap_or("")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn main() {
    #[cfg(feature = "opencv")]
    if let Err(e) = ops::opencv::single_threaded() {
        eprintln!("opencv: {e}");
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average at start: {}", load.trim());
    println!(
        "rounds: {} (min and median of interleaved rounds)\n",
        rounds()
    );
    println!("| op | shape | kernel | min ms | median ms | min / fastest kernel |");
    println!("|---|---|---|---|---|---|");
    for (w, h) in [(640, 480), (1920, 1080)] {
        let inp = inputs(w, h);
        bench_op::<ToGray>(&&inp.frame);
        bench_op::<BlurDetector>(&&inp.gray);
        bench_op::<SceneChangeOp>(&(&inp.gray, &inp.prev));
        bench_op::<SaliencyDft>(&&inp.gray);
        bench_op::<MotionMap>(&(&inp.gray, &inp.prev));
        bench_op::<EncodeRoi>(&(&inp.frame, &inp.score));
    }
    println!();
    startup(640, 480);
    startup(1920, 1080);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("\nload average at end: {}", load.trim());
}
