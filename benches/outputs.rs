//! Running only what is read: L2 BALANCED on the same frames, every output
//! computed (`run_into`, `run_parallel_into`, and `run_with` selecting
//! every output) against only the outputs a JSON line shows (`run_with`
//! reading `blur`, `scene` and `roi`: `regions` and `qp_map` do not run),
//! sequential and parallel. Interleaved rounds — each round runs every
//! variant over the frames once, in rotating order — so load from other
//! processes hits them alike; per-frame medians, with the load average
//! before and after.
//!
//! ```text
//! ffmpeg -i vtest.avi -frames:v 60 -pix_fmt yuv420p vtest.y4m
//! CORTEX_BENCH_Y4M=vtest.y4m BENCH_FRAMES=60 BENCH_ROUNDS=7 cargo bench --bench outputs
//! ```

use std::time::Instant;

use cortex::l2::{L2Mode, L2Outputs, L2};
use cortex::ops::RgbFrame;
use cortex::run::OutputSet;
use cortex::run::Run;
/// The outputs of a run that reads some (the blur verdict, scene change and
/// region), as a program printing those three does.
const RECORD_READS: &[&str] = &["blur", "scene", "roi"];

mod clip;

const VARIANTS: [&str; 6] = [
    "run_into, every output",
    "run_with, every output",
    "run_with, JSON outputs",
    "run_with_fresh parallel, every output",
    "run_with parallel, every output",
    "run_with parallel, JSON outputs",
];

/// Runs variant `i` over `frames` into `out`; the per-frame times (ms).
fn round(
    i: usize,
    p: &mut L2,
    out: &mut L2Outputs,
    frames: &[RgbFrame],
    json: OutputSet,
) -> Vec<f64> {
    let mode = L2Mode::Balanced;
    let mut times = Vec::with_capacity(frames.len());
    for f in frames {
        let t = Instant::now();
        match i {
            0 => p.run_into(mode, f, out),
            1 => p.run_with(&mut Run::mode(mode), f, out),
            2 => p.run_with(&mut Run::mode(mode).outputs(json), f, out),
            // New outputs each frame, to compare reusing them against.
            3 => p
                .run_with_fresh(&mut Run::mode(mode).parallel(), f)
                .map(|o| *out = o),
            4 => p.run_with(&mut Run::mode(mode).parallel(), f, out),
            _ => p.run_with(&mut Run::mode(mode).parallel().outputs(json), f, out),
        }
        .expect("a frame");
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn main() {
    // `cargo test --benches` runs a short smoke run.
    let smoke = !std::env::args().any(|a| a == "--bench");
    let rounds = if smoke { 1 } else { env("BENCH_ROUNDS", 7) };
    let n = if smoke { 3 } else { env("BENCH_FRAMES", 30) };
    let (frames, what) = clip::frames(n, (768, 576));
    let json = OutputSet::named(L2::ir(), RECORD_READS).expect("L2's outputs");
    let before = load();
    let mut pipes: Vec<(L2, L2Outputs)> = (0..VARIANTS.len())
        .map(|_| {
            let mut p = L2::new();
            let out = p.run(L2Mode::Balanced, &frames[0]).expect("a frame");
            (p, out)
        })
        .collect();
    // Warm-up round, not counted.
    for (i, (p, out)) in pipes.iter_mut().enumerate() {
        round(i, p, out, &frames, json);
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); VARIANTS.len()];
    for r in 0..rounds {
        for k in 0..VARIANTS.len() {
            let i = (k + r) % VARIANTS.len();
            let (p, out) = &mut pipes[i];
            times[i].extend(round(i, p, out, &frames, json));
        }
    }
    println!(
        "L2 BALANCED, {what}, {} frames x {rounds} interleaved rounds; load average {before} before, {} after",
        frames.len(),
        load()
    );
    println!("| variant | median ms/frame | vs run_into every output |");
    println!("|---|---:|---:|");
    let base = median(&times[0]);
    for (i, t) in times.iter().enumerate() {
        let m = median(t);
        println!("| {} | {m:.2} | {:.2}× |", VARIANTS[i], m / base);
    }
}
