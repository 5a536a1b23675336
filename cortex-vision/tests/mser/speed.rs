//! Timings of the MSER flood and of the `text_roi` node, as interleaved
//! min-of-N runs (each variant once per round, the minimum over rounds: the
//! time a variant takes when it gets its cores on a shared machine). Not
//! run by default:
//! `cargo test -p cortex --release --test mser_speed -- --ignored --nocapture --test-threads 1`.

use std::time::Instant;

use crate::support::{load_gray, text_frame};
use cortex_vision::ops::mser::{Mser, MserWorkspace, Polarity, RegionBox};
use cortex_vision::ops::text_roi::{text_map_into, TextRoiParams};
use cortex_vision::ops::{GrayImage, ScoreMap};

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// Runs every variant once per round for `rounds` rounds; returns each
/// variant's minimum time in milliseconds by `clock` (nanoseconds).
fn interleaved_min(
    rounds: usize,
    clock: fn() -> u64,
    variants: &mut [&mut dyn FnMut()],
) -> Vec<f64> {
    // `ROUNDS=1` for profiling runs (valgrind, perf).
    let rounds = std::env::var("ROUNDS").map_or(rounds, |r| r.parse().unwrap_or(rounds));
    let mut best = vec![f64::MAX; variants.len()];
    for _ in 0..rounds {
        for (b, f) in best.iter_mut().zip(variants.iter_mut()) {
            let t = clock();
            f();
            *b = b.min(clock().saturating_sub(t) as f64 * 1e-6);
        }
    }
    best
}

/// Wall-clock nanoseconds since the first call: for work spread over
/// threads.
fn wall_ns() -> u64 {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// CPU time of the calling thread in ns (`CLOCK_THREAD_CPUTIME_ID`): what
/// a single-thread kernel costs when it runs, whatever else holds the
/// cores (cache interference from other processes still counts).
fn thread_cpu_ns() -> u64 {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `ts` is a valid, writable `struct timespec` (64-bit Linux
    // layout); the call only writes it.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime");
    ts.sec as u64 * 1_000_000_000 + ts.nsec as u64
}

fn frames() -> Vec<(String, GrayImage, usize)> {
    vec![
        ("text frame 640×480".into(), text_frame(480, 640, 42), 30),
        ("text frame 768×576".into(), text_frame(576, 768, 42), 25),
        ("text frame 1920×1080".into(), text_frame(1080, 1920, 42), 8),
        (
            "scenetext01.jpg 800×600".into(),
            load_gray("scenetext01.jpg"),
            25,
        ),
        (
            "scenetext06.jpg 640×480".into(),
            load_gray("scenetext06.jpg"),
            30,
        ),
    ]
}

/// The two polarities split as before rayon: the bright pass on a thread
/// spawned for the call (what `Mser::detect_boxes_both_parallel_into` did
/// with `std::thread::scope`), the dark one on the caller.
fn split_with_spawn(
    mser: &Mser,
    ws: &mut [MserWorkspace; 2],
    img: &GrayImage,
    out: &mut [Vec<RegionBox>; 2],
) {
    let [ws_dark, ws_bright] = ws;
    let [out_dark, out_bright] = out;
    std::thread::scope(|s| {
        let h = s.spawn(|| {
            mser.detect_boxes_into(ws_bright, img, Polarity::Bright, out_bright)
                .expect("ok")
        });
        mser.detect_boxes_into(ws_dark, img, Polarity::Dark, out_dark)
            .expect("ok");
        h.join().expect("bright pass");
    });
}

/// Polarity split: thread per call against `rayon::join` (called from a
/// plain thread, as the L2 pipeline calls nodes today: the join runs on
/// rayon's global pool), and the whole `text_roi` node (map only, as
/// `text_map_into`) on rayon, sequential, and at half resolution.
#[test]
#[ignore = "timing, run in release on demand"]
fn polarity_split_and_text_node() {
    let mser = Mser::default();
    println!("load average before: {}", load_average());
    println!("| frame | boxes both, spawn | boxes both, rayon::join | boxes both, sequential | node, rayon::join | node, sequential | node, half resolution, rayon::join | spawn ÷ rayon |");
    println!("|---|---|---|---|---|---|---|---|");
    for (name, img, rounds) in frames() {
        let mut ws_spawn = [MserWorkspace::new(), MserWorkspace::new()];
        let mut ws_join = [MserWorkspace::new(), MserWorkspace::new()];
        let mut ws_seq = MserWorkspace::new();
        let mut outs: [Vec<RegionBox>; 2] = Default::default();
        let (mut boxes_join, mut boxes_seq) = (Vec::new(), Vec::new());
        let (mut map_join, mut map_seq) = (ScoreMap::zeros((0, 0)), ScoreMap::zeros((0, 0)));
        let mut map_half = ScoreMap::zeros((0, 0));
        let half = TextRoiParams {
            half_resolution: true,
            ..TextRoiParams::DEFAULT
        };
        let seq = TextRoiParams {
            parallel: false,
            ..TextRoiParams::DEFAULT
        };
        let t = interleaved_min(
            rounds,
            wall_ns,
            &mut [
                &mut || split_with_spawn(&mser, &mut ws_spawn, &img, &mut outs),
                &mut || {
                    mser.detect_boxes_both_parallel_into(&mut ws_join, &img, &mut boxes_join)
                        .expect("ok")
                },
                &mut || {
                    mser.detect_boxes_into(&mut ws_seq, &img, Polarity::Both, &mut boxes_seq)
                        .expect("ok")
                },
                &mut || text_map_into(&img, &TextRoiParams::DEFAULT, &mut map_join).expect("ok"),
                &mut || text_map_into(&img, &seq, &mut map_seq).expect("ok"),
                &mut || text_map_into(&img, &half, &mut map_half).expect("ok"),
            ],
        );
        println!(
            "| {name} | {:.2} ms | {:.2} ms | {:.2} ms | {:.2} ms | {:.2} ms | {:.2} ms | {:.3} |",
            t[0],
            t[1],
            t[2],
            t[3],
            t[4],
            t[5],
            t[0] / t[1]
        );
    }
    println!("load average after: {}", load_average());
}

/// One polarity, boxes only, one thread: ns per pixel of thread CPU time
/// (min over interleaved rounds).
#[test]
#[ignore = "timing, run in release on demand"]
fn one_polarity_ns_per_pixel() {
    let mser = Mser::default();
    println!("load average before: {}", load_average());
    println!("| frame | dark | bright | nodes / pixel (dark) |");
    println!("|---|---|---|---|");
    for (name, img, rounds) in frames() {
        let px = img.len() as f64;
        let (mut ws_dark, mut ws_bright) = (MserWorkspace::new(), MserWorkspace::new());
        let (mut dark, mut bright) = (Vec::new(), Vec::new());
        let t = interleaved_min(
            rounds,
            thread_cpu_ns,
            &mut [
                &mut || {
                    mser.detect_boxes_into(&mut ws_dark, &img, Polarity::Dark, &mut dark)
                        .expect("ok")
                },
                &mut || {
                    mser.detect_boxes_into(&mut ws_bright, &img, Polarity::Bright, &mut bright)
                        .expect("ok")
                },
            ],
        );
        println!(
            "| {name} | {:.1} ns | {:.1} ns | {:.3} |",
            t[0] * 1e6 / px,
            t[1] * 1e6 / px,
            ws_dark.last_tree_size() as f64 / px
        );
    }
    println!("load average after: {}", load_average());
}

/// The cost of the polarity split itself: both polarities on a 32×32 frame
/// (a few µs of work), with a thread spawned per call against a
/// `rayon::join` from a plain thread (the join is injected into the global
/// pool and waits for a pool thread), against sequential.
#[test]
#[ignore = "timing, run in release on demand"]
fn polarity_split_overhead() {
    let mser = Mser::default();
    let img = text_frame(32, 32, 5);
    let mut ws_spawn = [MserWorkspace::new(), MserWorkspace::new()];
    let mut ws_join = [MserWorkspace::new(), MserWorkspace::new()];
    let mut ws_seq = MserWorkspace::new();
    let mut outs: [Vec<RegionBox>; 2] = Default::default();
    let (mut boxes_join, mut boxes_seq) = (Vec::new(), Vec::new());
    println!("load average before: {}", load_average());
    let t = interleaved_min(
        2000,
        wall_ns,
        &mut [
            &mut || split_with_spawn(&mser, &mut ws_spawn, &img, &mut outs),
            &mut || {
                mser.detect_boxes_both_parallel_into(&mut ws_join, &img, &mut boxes_join)
                    .expect("ok")
            },
            &mut || {
                mser.detect_boxes_into(&mut ws_seq, &img, Polarity::Both, &mut boxes_seq)
                    .expect("ok")
            },
        ],
    );
    println!("| 32×32, both polarities | spawn | rayon::join | sequential |");
    println!("|---|---|---|---|");
    println!(
        "| min of 2000 interleaved | {:.1} µs | {:.1} µs | {:.1} µs |",
        t[0] * 1e3,
        t[1] * 1e3,
        t[2] * 1e3
    );
    println!("load average after: {}", load_average());
}

/// One polarity, boxes only: the flood against the partitioned tree with
/// 1, 2, 3 and 4 strips (wall time; the strips run on rayon's global pool,
/// as many threads as cores unless `RAYON_NUM_THREADS` says otherwise),
/// and both polarities: the flood's two passes on `rayon::join` against
/// each polarity partitioned in two.
#[test]
#[ignore = "timing, run in release on demand"]
fn partitioned_scaling() {
    use cortex_vision::ops::mser::PartitionWorkspace;
    let mser = Mser::default();
    println!(
        "load average before: {}, pool threads: {}",
        load_average(),
        rayon::current_num_threads()
    );
    println!("| frame | flood | 1 strip | 2 strips | 3 strips | 4 strips | flood ÷ 2 strips | both: flood on join | both: 2 strips each | fallbacks |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut memory = Vec::new();
    for (name, img, rounds) in frames() {
        let mut ws = MserWorkspace::new();
        let mut ws_both = [MserWorkspace::new(), MserWorkspace::new()];
        let mut parts: Vec<PartitionWorkspace> =
            (0..5).map(|_| PartitionWorkspace::new()).collect();
        let mut outs: Vec<Vec<RegionBox>> = vec![Vec::new(); 7];
        let mut fallbacks = 0;
        let [o0, o1, o2, o3, o4, o5, o6] = &mut outs[..] else {
            unreachable!()
        };
        let [p1, p2, p3, p4, pb] = &mut parts[..] else {
            unreachable!()
        };
        let t = interleaved_min(
            rounds,
            wall_ns,
            &mut [
                &mut || {
                    mser.detect_boxes_into(&mut ws, &img, Polarity::Dark, o0)
                        .expect("ok")
                },
                &mut || {
                    mser.detect_boxes_partitioned_into(p1, &img, Polarity::Dark, 1, o1)
                        .expect("ok");
                    fallbacks += p1.fallbacks();
                },
                &mut || {
                    mser.detect_boxes_partitioned_into(p2, &img, Polarity::Dark, 2, o2)
                        .expect("ok")
                },
                &mut || {
                    mser.detect_boxes_partitioned_into(p3, &img, Polarity::Dark, 3, o3)
                        .expect("ok")
                },
                &mut || {
                    mser.detect_boxes_partitioned_into(p4, &img, Polarity::Dark, 4, o4)
                        .expect("ok")
                },
                &mut || {
                    mser.detect_boxes_both_parallel_into(&mut ws_both, &img, o5)
                        .expect("ok")
                },
                &mut || {
                    mser.detect_boxes_partitioned_into(pb, &img, Polarity::Both, 2, o6)
                        .expect("ok")
                },
            ],
        );
        assert_eq!(o0.len(), o2.len(), "{name}: same region count");
        memory.push(format!(
            "| {name} | {:.1} MB | {:.1} MB | {:.1} MB |",
            ws.heap_bytes() as f64 / 1e6,
            p2.heap_bytes() as f64 / 1e6,
            p4.heap_bytes() as f64 / 1e6
        ));
        println!(
            "| {name} | {:.2} ms | {:.2} ms | {:.2} ms | {:.2} ms | {:.2} ms | {:.2}× | {:.2} ms | {:.2} ms | {fallbacks} |",
            t[0], t[1], t[2], t[3], t[4], t[0] / t[2], t[5], t[6]
        );
    }
    println!("\nWorkspace memory after the runs (one polarity):\n");
    println!("| frame | flood | 2 strips | 4 strips |");
    println!("|---|---|---|---|");
    for line in memory {
        println!("{line}");
    }
    println!("load average after: {}", load_average());
}
