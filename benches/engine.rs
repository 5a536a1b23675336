//! The execution engine's bench: L2 BALANCED on the same frames through
//! today's value-returning graph (`L2Fresh::run`, every map allocated each
//! frame), planned memory (`L2::run_into`), parallel nodes within a frame
//! (`L2::run_parallel_into`) and pipelined frames (`L2::run_stream`, two in
//! flight); and weights chosen at run time whose zero pattern no mode has
//! (BALANCED with the saliency weight at zero: the plan-driven function),
//! sequential (`run_weights_into`) and parallel
//! (`run_weights_parallel_into`). Interleaved rounds — each round runs every variant over the
//! clip once, in rotating order — so load from other processes hits them
//! alike. Reports per-frame latency (median, p99), throughput (median
//! round), allocations per frame (a counting allocator) and peak resident
//! memory (each variant alone in a child process).
//!
//! ```text
//! cargo bench --bench engine
//! BENCH_ROUNDS=9 BENCH_FRAMES=24 cargo bench --bench engine
//! ```

use std::ops::ControlFlow;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use cortex::l2::{L2Mode, L2};
use cortex::ops::RgbFrame;
use cortex::run::{Engine, Run};
use cortex::runner::sources::SyntheticClip;
use cortex::stream::{Overflow, StreamOptions};
use l2_fresh::{L2Fresh, L2FreshMode};

// The value-returning L2, the tests' reference.
#[path = "../tests/engines/common/l2_fresh.rs"]
mod l2_fresh;

#[global_allocator]
static ALLOC: cortex_testkit::CountingAlloc = cortex_testkit::CountingAlloc;

use cortex_testkit::allocs;

const VARIANTS: [&str; 6] = [
    "fresh run",
    "planned run_into",
    "parallel",
    "pipelined",
    "weights run_weights_into",
    "weights parallel",
];

/// One variant's pipeline, kept across rounds (its state and buffers warm).
enum Runner {
    Fresh(L2Fresh),
    Planned(L2, Option<cortex::l2::L2Outputs>),
    Parallel(L2, Option<cortex::l2::L2Outputs>),
    Pipelined(L2),
    /// Run-time weights, sequential or parallel.
    Weights(L2, Option<cortex::l2::L2Outputs>, cortex::Weights, bool),
}

/// BALANCED's weights with saliency's at zero: a pattern no mode has.
fn run_time_weights() -> cortex::Weights {
    L2Mode::Balanced
        .weights()
        .iter()
        .fold(cortex::Weights::new(), |w, (k, v)| {
            w.with(k.to_string(), if k == "ws" { 0.0 } else { v })
        })
}

#[derive(Default)]
struct Samples {
    latency_ms: Vec<f64>,
    round_fps: Vec<f64>,
    allocs: u64,
    frames: u64,
}

impl Runner {
    fn new(i: usize) -> Runner {
        match i {
            0 => Runner::Fresh(L2Fresh::new()),
            1 => Runner::Planned(L2::new(), None),
            2 => Runner::Parallel(L2::new(), None),
            3 => Runner::Pipelined(L2::new()),
            4 => Runner::Weights(L2::new(), None, run_time_weights(), false),
            _ => Runner::Weights(L2::new(), None, run_time_weights(), true),
        }
    }

    /// Runs the clip once; per-frame latencies and the round's wall time.
    fn round(&mut self, frames: &[RgbFrame], s: &mut Samples) {
        let a0 = allocs();
        let t0 = Instant::now();
        match self {
            Runner::Fresh(p) => {
                for f in frames {
                    let t = Instant::now();
                    std::hint::black_box(p.run(L2FreshMode::Balanced, f).expect("frame"));
                    s.latency_ms.push(ms(t.elapsed()));
                }
            }
            Runner::Planned(p, out) => Self::reusing(p, out, false, frames, s),
            Runner::Parallel(p, out) => Self::reusing(p, out, true, frames, s),
            Runner::Weights(p, out, w, parallel) => {
                for f in frames {
                    let t = Instant::now();
                    let engine = if *parallel {
                        Engine::Parallel
                    } else {
                        Engine::Sequential
                    };
                    let mut run = Run::weights(w).engine(engine);
                    match out.as_mut() {
                        Some(o) => p.run_with(&mut run, f, o).expect("frame"),
                        None => *out = Some(p.run_with_fresh(&mut run, f).expect("frame")),
                    }
                    s.latency_ms.push(ms(t.elapsed()));
                }
            }
            Runner::Pipelined(p) => {
                // The stream takes owned frames: the source copies each one
                // as the producer pulls it (as a decoder would make it; one
                // allocation per frame, counted) and stamps it, so latency
                // runs from the pull to the result, the wait in a full
                // queue included.
                let pulled = Mutex::new(vec![t0; frames.len()]);
                let a1 = allocs();
                let t1 = Instant::now();
                let source = frames.iter().enumerate().map(|(i, f)| {
                    pulled.lock().expect("stamps")[i] = Instant::now();
                    (f.clone(),)
                });
                let opts = StreamOptions {
                    in_flight: 2,
                    queue: 1,
                    overflow: Overflow::Block,
                };
                p.run_stream(L2Mode::Balanced, source, &opts, |r| {
                    let at = pulled.lock().expect("stamps")[r.index as usize];
                    s.latency_ms.push(ms(at.elapsed()));
                    std::hint::black_box(r.result.expect("frame"));
                    ControlFlow::Continue(())
                })
                .expect("stream");
                s.round_fps
                    .push(frames.len() as f64 / t1.elapsed().as_secs_f64());
                s.allocs += allocs() - a1;
                s.frames += frames.len() as u64;
                return;
            }
        }
        s.round_fps
            .push(frames.len() as f64 / t0.elapsed().as_secs_f64());
        s.allocs += allocs() - a0;
        s.frames += frames.len() as u64;
    }
}

impl Runner {
    /// `run_into` or `run_parallel_into`, reusing the outputs.
    fn reusing(
        p: &mut L2,
        out: &mut Option<cortex::l2::L2Outputs>,
        parallel: bool,
        frames: &[RgbFrame],
        s: &mut Samples,
    ) {
        for f in frames {
            let t = Instant::now();
            match (out.as_mut(), parallel) {
                (Some(o), false) => p.run_into(L2Mode::Balanced, f, o).expect("frame"),
                (Some(o), true) => p
                    .run_with(&mut Run::mode(L2Mode::Balanced).parallel(), f, o)
                    .expect("frame"),
                (None, _) => *out = Some(p.run(L2Mode::Balanced, f).expect("frame")),
            }
            s.latency_ms.push(ms(t.elapsed()));
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn quantile(v: &[f64], q: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn clip(w: usize, h: usize, n: usize) -> Vec<RgbFrame> {
    let c = SyntheticClip::new(w, h);
    (0..n as u64).map(|f| c.frame(f)).collect()
}

/// Peak resident memory of one variant alone: this binary again, in a
/// child process that runs only that variant.
fn peak_rss_mb(variant: usize, w: usize, h: usize, frames: usize) -> Option<f64> {
    let exe = std::env::current_exe().ok()?;
    let out = std::process::Command::new(exe)
        .env("ENGINE_BENCH_CHILD", format!("{variant},{w},{h},{frames}"))
        .output()
        .ok()?;
    String::from_utf8(out.stdout).ok()?.trim().parse().ok()
}

fn child(spec: &str) {
    let v: Vec<usize> = spec.split(',').filter_map(|x| x.parse().ok()).collect();
    let [variant, w, h, n] = v[..] else { return };
    let frames = clip(w, h, n);
    let mut r = Runner::new(variant);
    let mut s = Samples::default();
    r.round(&frames, &mut s);
    r.round(&frames, &mut s);
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let hwm_kb: f64 = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|x| x.parse().ok())
        .unwrap_or(0.0);
    println!("{:.1}", hwm_kb / 1024.0);
}

fn main() {
    if let Ok(spec) = std::env::var("ENGINE_BENCH_CHILD") {
        child(&spec);
        return;
    }
    // `cargo bench` passes `--bench`; `cargo test --benches` does not, and
    // then a short smoke run is enough.
    let smoke = !std::env::args().any(|a| a == "--bench");
    let rounds = if smoke { 1 } else { env("BENCH_ROUNDS", 7) };
    let n = if smoke { 3 } else { env("BENCH_FRAMES", 24) };
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    println!(
        "L2 BALANCED, {n} synthetic frames per round, {rounds} interleaved rounds, {cores} cores"
    );
    for (w, h) in [(640, 480), (1920, 1080)] {
        let frames = clip(w, h, n);
        let mut runners: Vec<Runner> = (0..VARIANTS.len()).map(Runner::new).collect();
        let mut samples: Vec<Samples> = (0..VARIANTS.len()).map(|_| Samples::default()).collect();
        // Warm-up round, not counted: buffers, scratch, the pool's threads.
        for r in runners.iter_mut() {
            r.round(&frames, &mut Samples::default());
        }
        for round in 0..rounds {
            for k in 0..VARIANTS.len() {
                let i = (k + round) % VARIANTS.len();
                runners[i].round(&frames, &mut samples[i]);
            }
        }
        println!("\n{w}x{h}");
        println!(
            "| variant | latency median (ms) | latency p99 (ms) | throughput (fps) | vs fresh run | allocations / frame | peak RSS (MB) |"
        );
        println!("|---|---:|---:|---:|---:|---:|---:|");
        let base = quantile(&samples[0].round_fps, 0.5);
        for (i, s) in samples.iter().enumerate() {
            let fps = quantile(&s.round_fps, 0.5);
            let rss = if smoke { None } else { peak_rss_mb(i, w, h, n) };
            println!(
                "| {} | {:.2} | {:.2} | {:.1} | {:.2}× | {:.1} | {} |",
                VARIANTS[i],
                quantile(&s.latency_ms, 0.5),
                quantile(&s.latency_ms, 0.99),
                fps,
                fps / base,
                s.allocs as f64 / s.frames.max(1) as f64,
                rss.map_or_else(|| "-".to_string(), |r| format!("{r:.0}")),
            );
        }
    }
}
