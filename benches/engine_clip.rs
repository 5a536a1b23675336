//! The engines on a real clip: L2 BALANCED through `run_into`,
//! `run_parallel_into` and `run_stream` (two frames in flight, queue 1,
//! fresh outputs dropped at once), and L2 POWER_SAVE (rated: the text map
//! and the regions on every 4th frame and on a scene cut) through
//! `run_into` and `run_parallel_into`; then L2 BALANCED reading only what a
//! JSON line shows (`blur`, `scene`, `roi`: `regions` and `qp_map` do not
//! run) through `run_with`, sequential and parallel, and `run_stream_with`
//! (pipelined, outputs reused); last, L2 BALANCED with every output through
//! `run_stream_with`, outputs reused as the parallel variant reuses its
//! own. Each round runs every variant over
//! the clip once, in rotating order, so load from other processes hits
//! them alike; one line per variant and round with its mean frame time.
//! Meant to be run several times, interleaved with a build of another
//! revision, and the medians compared (docs/measurements.md).
//!
//! Input: `BENCH_INPUT`, anything the runner opens (a `.y4m` file in the
//! default build), else the built-in synthetic clip at 768×576.
//!
//! ```text
//! BENCH_INPUT=clip.y4m BENCH_FRAMES=60 BENCH_ROUNDS=3 cargo bench --bench engine_clip
//! ```

use std::ops::ControlFlow;
use std::time::Instant;

use cortex::l2::{L2Mode, L2Outputs, L2};
use cortex::ops::RgbFrame;
use cortex::run::Run;
/// The outputs of a run that reads some (the blur verdict, scene change and
/// region), as a program printing those three does.
const RECORD_READS: &[&str] = &["blur", "scene", "roi"];
use cortex::runner::sources::{self, FrameSource, SyntheticClip};
use cortex::stream::{Overflow, StreamOptions};

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Up to `n` frames of the input (or of the synthetic clip).
fn load(n: usize) -> Vec<RgbFrame> {
    match std::env::var("BENCH_INPUT") {
        Ok(path) => {
            let mut src: Box<dyn FrameSource + Send> =
                sources::open(Some(&path), (0, 0), Box::new(std::io::empty()))
                    .unwrap_or_else(|e| panic!("{path}: {e}"));
            std::iter::from_fn(|| src.next_frame())
                .take(n)
                .map(|f| f.expect("frame decodes").image)
                .collect()
        }
        Err(_) => {
            let clip = SyntheticClip::new(768, 576);
            (0..n as u64).map(|f| clip.frame(f)).collect()
        }
    }
}

const VARIANTS: [&str; 9] = [
    "balanced run_into",
    "balanced run_parallel_into",
    "balanced run_stream",
    "power_save run_into",
    "power_save run_parallel_into",
    "balanced json run_with",
    "balanced json run_with parallel",
    "balanced json run_stream_with",
    "balanced run_stream_with",
];

/// Mean ms per frame of variant `v` over `frames`, on a fresh pipeline
/// warmed by one pass first.
fn round(v: usize, frames: &[RgbFrame]) -> f64 {
    let mut p = L2::new();
    let mode = if v == 3 || v == 4 {
        L2Mode::PowerSave
    } else {
        L2Mode::Balanced
    };
    let json = cortex::run::OutputSet::named(L2::ir(), RECORD_READS).expect("L2's outputs");
    let mut out: Option<L2Outputs> = None;
    let mut pass = |p: &mut L2| {
        let t = Instant::now();
        if v == 7 || v == 8 {
            let opts = StreamOptions {
                in_flight: 2,
                queue: 1,
                overflow: Overflow::Block,
            };
            let source = frames.iter().map(|f| ((), (f.clone(),)));
            let mut run = match v {
                7 => Run::mode(mode).outputs(json),
                _ => Run::mode(mode),
            };
            p.run_stream_with(&mut run, source, &opts, |r| {
                std::hint::black_box(r.result.as_ref().expect("frame"));
                ControlFlow::Continue(())
            })
            .expect("stream");
        } else if v == 2 {
            let opts = StreamOptions {
                in_flight: 2,
                queue: 1,
                overflow: Overflow::Block,
            };
            let source = frames.iter().map(|f| (f.clone(),));
            p.run_stream(mode, source, &opts, |r| {
                std::hint::black_box(r.result.expect("frame"));
                ControlFlow::Continue(())
            })
            .expect("stream");
        } else {
            for f in frames {
                match out.as_mut() {
                    Some(o) if v == 5 => p.run_with(&mut Run::mode(mode).outputs(json), f, o),
                    Some(o) if v == 6 => {
                        p.run_with(&mut Run::mode(mode).parallel().outputs(json), f, o)
                    }
                    Some(o) if v == 1 || v == 4 => {
                        p.run_with(&mut Run::mode(mode).parallel(), f, o)
                    }
                    Some(o) => p.run_into(mode, f, o),
                    None => p.run(mode, f).map(|o| out = Some(o)),
                }
                .expect("frame");
            }
        }
        t.elapsed().as_secs_f64() * 1e3 / frames.len() as f64
    };
    pass(&mut p);
    pass(&mut p)
}

/// Every node and group event with its time and thread.
#[derive(Default)]
struct Trace(Vec<(char, u32, Instant, std::thread::ThreadId)>);

impl cortex::prelude::Observer for Trace {
    fn node_begin(&mut self, node: u32) {
        self.0
            .push(('b', node, Instant::now(), std::thread::current().id()));
    }
    fn node_end(&mut self, node: u32) {
        self.0
            .push(('e', node, Instant::now(), std::thread::current().id()));
    }
    fn group_begin(&mut self, members: &'static [u32]) {
        let first = members.first().copied().unwrap_or(0);
        self.0
            .push(('B', first, Instant::now(), std::thread::current().id()));
    }
    fn group_end(&mut self, _: bool) {
        self.0
            .push(('E', 0, Instant::now(), std::thread::current().id()));
    }
}

/// Per node (and fused group, `group@first`), its mean ms a frame, for the
/// parallel and the pipelined run (`BENCH_TRACE=1`): where a frame's time
/// goes in each.
fn trace(frames: &[RgbFrame]) {
    let ir = L2::ir();
    for v in [1usize, 2] {
        let mut p = L2::new();
        let mut t = Trace::default();
        let t0 = Instant::now();
        if v == 1 {
            for f in frames {
                let mut run = Run::mode(L2Mode::Balanced).parallel().observed(&mut t);
                p.run_with_fresh(&mut run, f).expect("frame");
            }
        } else {
            let opts = StreamOptions {
                in_flight: 2,
                queue: 1,
                overflow: Overflow::Block,
            };
            let source = frames.iter().map(|f| ((), (f.clone(),)));
            let mut run = Run::mode(L2Mode::Balanced).observed(&mut t);
            p.run_stream_with(&mut run, source, &opts, |r| {
                std::hint::black_box(r.take_result().expect("frame"));
                ControlFlow::Continue(())
            })
            .expect("stream");
        }
        let wall = t0.elapsed().as_secs_f64() * 1e3 / frames.len() as f64;
        let mut open: std::collections::HashMap<(char, u32, std::thread::ThreadId), Instant> =
            Default::default();
        let mut group_open: std::collections::HashMap<std::thread::ThreadId, Vec<(u32, Instant)>> =
            Default::default();
        let mut total: std::collections::BTreeMap<String, f64> = Default::default();
        for &(k, n, at, th) in &t.0 {
            match k {
                'b' => {
                    open.insert(('n', n, th), at);
                }
                'e' => {
                    if let Some(b) = open.remove(&('n', n, th)) {
                        *total
                            .entry(ir.nodes[n as usize].name.to_string())
                            .or_default() += (at - b).as_secs_f64() * 1e3;
                    }
                }
                'B' => group_open.entry(th).or_default().push((n, at)),
                _ => {
                    if let Some((first, b)) = group_open.get_mut(&th).and_then(Vec::pop) {
                        let name = format!("group@{}", ir.nodes[first as usize].name);
                        *total.entry(name).or_default() += (at - b).as_secs_f64() * 1e3;
                    }
                }
            }
        }
        println!("{} wall {wall:.3}", VARIANTS[v]);
        for (name, ms) in total {
            println!("  {name:16} {:.3}", ms / frames.len() as f64);
        }
    }
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let frames = load(env("BENCH_FRAMES", 60));
    if std::env::var("BENCH_TRACE").is_ok() {
        trace(&frames);
        return;
    }
    let rounds: usize = env("BENCH_ROUNDS", 3);
    let only: Option<usize> = std::env::var("BENCH_VARIANT")
        .ok()
        .and_then(|s| s.parse().ok());
    for r in 0..rounds {
        for k in 0..VARIANTS.len() {
            let v = (k + r) % VARIANTS.len();
            if only.is_some_and(|o| o != v) {
                continue;
            }
            let ms = round(v, &frames);
            println!("{}\t{:.3}", VARIANTS[v], ms);
        }
    }
}
