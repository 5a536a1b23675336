//! What a graph built at run time costs against the compiled pipeline of
//! the same graph: the 20-node chain of cheap nodes (`benches/chain`), the
//! per-node overhead of type-erased values and interpreted steps; and L2 in
//! BALANCED on a recorded clip (`CORTEX_BENCH_Y4M`, see `benches/clip`) or
//! the synthetic one at 640×480, its graph file (`examples/graphs/l2.json`, over the
//! op library, parameters set by name) against the compiled L2, each with fusion off
//! (the same whole-frame calls) and on (the same fused groups on the strip
//! executor), sequential and parallel. Rounds interleave the variants,
//! after a warm-up long enough for every group's strip height to be
//! chosen; medians and ratios are printed with the load average.
//!
//! ```text
//! cargo bench --bench dynamic --features runner
//! CORTEX_BENCH_Y4M=vtest.y4m BENCH_FRAMES=60 cargo bench --bench dynamic
//! ```

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use cortex::dynamic::{Call, DynPipeline, GraphFile, Ops, Value};
use cortex::l2::{L2Mode, L2};
use cortex::library::vision_ops;
use cortex::run::error::NodeFailure;
use cortex::Pipeline;
use cortex::Run;

// The hand-written chain is `pipeline_count`'s, not this bench's.
#[allow(dead_code)]
mod chain;
mod clip;

use chain::{Chain, ChainMode, V};

type Done = Result<(), NodeFailure>;

/// The chain's functions as ops; constants are `f64` literals, cast to the
/// `f32` the functions take.
fn chain_ops() -> Ops {
    let mut o = Ops::new();
    o.constant("Vec::new()", V::new());
    o.op("load", |c: &mut Call<'_>| -> Done {
        let v = chain::load(c.arg::<V>(0)?);
        c.put(v);
        Ok(())
    });
    o.op("scale", |c: &mut Call<'_>| -> Done {
        let v = chain::scale(c.arg::<V>(0)?, *c.arg::<f64>(1)? as f32);
        c.put(v);
        Ok(())
    });
    o.op("add", |c: &mut Call<'_>| -> Done {
        let v = chain::add(c.arg::<V>(0)?, c.arg::<V>(1)?);
        c.put(v);
        Ok(())
    });
    o.op("mul", |c: &mut Call<'_>| -> Done {
        let v = chain::mul(c.arg::<V>(0)?, c.arg::<V>(1)?);
        c.put(v);
        Ok(())
    });
    o.op("blend", |c: &mut Call<'_>| -> Done {
        let v = chain::blend(c.opt::<V>(0)?, c.opt::<V>(1)?, c.arg::<V>(2)?);
        c.put(v);
        Ok(())
    });
    o.op("total", |c: &mut Call<'_>| -> Done {
        let v = chain::total(c.arg::<V>(0)?);
        c.put(v);
        Ok(())
    });
    o
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs each variant `reps` times per round, `rounds` rounds interleaved;
/// the median of each variant's per-call time, in µs.
fn measure(rounds: usize, reps: usize, variants: &mut [(&str, &mut dyn FnMut())]) -> Vec<f64> {
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    for _ in 0..rounds {
        for (i, (_, f)) in variants.iter_mut().enumerate() {
            let t = Instant::now();
            for _ in 0..reps {
                f();
            }
            times[i].push(t.elapsed().as_secs_f64() * 1e6 / reps as f64);
        }
    }
    times.iter_mut().map(|t| median(t)).collect()
}

fn main() {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load average: {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );

    // The chain: 20 cheap nodes on 256 samples.
    let x = chain::input();
    let xv: Value = Arc::new(x.clone());
    let mut compiled = Chain::new();
    let mut dynamic = DynPipeline::from_ir(Chain::ir().clone(), &Chain::MODE_PLANS, &chain_ops())
        .expect("chain ops");
    let a = compiled.run(ChainMode::Full, &x).expect("runs").n19;
    let b = *dynamic
        .run(0, std::slice::from_ref(&xv))
        .expect("runs")
        .get::<f32>("n19")
        .expect("f32");
    assert_eq!(
        a.to_bits(),
        b.to_bits(),
        "the run-time chain computes what the compiled one does"
    );
    let m = measure(
        31,
        2000,
        &mut [
            ("compiled", &mut || {
                black_box(
                    compiled
                        .run(ChainMode::Full, black_box(&x))
                        .map(|o| o.n19)
                        .ok(),
                );
            }),
            ("run time", &mut || {
                black_box(dynamic.run(0, std::slice::from_ref(&xv)).is_ok());
            }),
        ],
    );
    println!("\nchain, 20 nodes on 256 samples (median µs per frame)");
    println!("  compiled   {:8.2}", m[0]);
    println!("  run time   {:8.2}   ×{:.2}", m[1], m[1] / m[0]);
    println!("  overhead per node: {:.0} ns", (m[1] - m[0]) * 1e3 / 20.0);

    // L2 in BALANCED: a recorded clip's frames (CORTEX_BENCH_Y4M) or the
    // synthetic clip's at 640×480.
    let (frames, what) = clip::frames(
        std::env::var("BENCH_FRAMES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(8),
        (640, 480),
    );
    let inputs: Vec<Value> = frames
        .iter()
        .map(|f| Arc::new(f.clone()) as Value)
        .collect();
    let mut unfused = L2::new();
    unfused.set_fusion(false);
    let mut fused = L2::new();
    let mut fused_par = L2::new();
    // The run-time L2 is the graph file, over the op library, with two
    // parameters of its text node set by name (to their defaults).
    let file = include_str!("../examples/graphs/l2.json").replace(
        r#""op": "vision.text_map", "inputs": ["gray"],"#,
        r#""op": "vision.text_map", "inputs": ["gray"], "params": { "mser.delta": 5, "mser.min_area": 60 },"#,
    );
    let ops = vision_ops();
    let l2 = || {
        GraphFile::parse(&file)
            .expect("reads")
            .build(&ops)
            .expect("builds")
    };
    let mut dyn_unfused = l2();
    dyn_unfused.set_fusion(false);
    let mut dyn_seq = l2();
    let mut dyn_par = l2();
    let bal = L2Mode::Balanced;
    // Each variant walks the clip on its own.
    let k: [std::cell::Cell<usize>; 6] = Default::default();
    let n = frames.len();
    let next = |i: usize| {
        k[i].set((k[i].get() + 1) % n);
        k[i].get()
    };
    let names = [
        "compiled, fusion off",
        "run time, fusion off",
        "compiled, fused",
        "run time, fused",
        "compiled, parallel",
        "run time, parallel",
    ];
    let mut variants: [(&str, &mut dyn FnMut()); 6] = [
        (names[0], &mut || {
            let f = next(0);
            black_box(unfused.run(bal, &frames[f]).is_ok());
        }),
        (names[1], &mut || {
            let f = next(1);
            let x = std::slice::from_ref(&inputs[f]);
            black_box(dyn_unfused.run(bal as usize, x).is_ok());
        }),
        (names[2], &mut || {
            let f = next(2);
            black_box(fused.run(bal, &frames[f]).is_ok());
        }),
        (names[3], &mut || {
            let f = next(3);
            black_box(
                dyn_seq
                    .run(bal as usize, std::slice::from_ref(&inputs[f]))
                    .is_ok(),
            );
        }),
        (names[4], &mut || {
            let f = next(4);
            let mut run = Run::mode(bal).parallel();
            black_box(fused_par.run_with_fresh(&mut run, &frames[f]).is_ok());
        }),
        (names[5], &mut || {
            let f = next(5);
            let x = std::slice::from_ref(&inputs[f]);
            let mut run = Run::mode(bal as usize).parallel();
            black_box(dyn_par.run_with_fresh(&mut run, x).is_ok());
        }),
    ];
    // Warm-up: buffers grown, every group's strip height measured.
    measure(1, 40, &mut variants);
    let m = measure(15, 4, &mut variants);
    println!("\nL2 BALANCED, {what}, 12 nodes (median ms per frame)");
    for (i, (n, v)) in names.iter().zip(&m).enumerate() {
        // Run time against compiled of the same engine and fusion.
        let pair = if i % 2 == 1 {
            format!("   run time / compiled ×{:.3}", v / m[i - 1])
        } else {
            String::new()
        };
        println!(
            "  {n:<22} {:8.2}   ×{:.3} of compiled, fusion off{pair}",
            v / 1e3,
            v / m[0]
        );
    }
    println!(
        "  overhead per node (run time − compiled, fusion off): {:.1} µs",
        (m[1] - m[0]) / 12.0
    );
}
