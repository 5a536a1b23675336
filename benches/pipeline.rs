//! Generated code vs hand-written: a `cortex_graph!` pipeline of 20 cheap
//! nodes against the same functions called by hand in the same order. The
//! generated run function should cost nothing on top of the calls.

use std::hint::black_box;

use cortex::Run;
use criterion::{criterion_group, criterion_main, Criterion};

mod chain;

use chain::{input, Chain, ChainMode, Hand};

fn bench(c: &mut Criterion) {
    let x = input();
    let mut g = c.benchmark_group("pipeline_20_nodes");
    let mut generated = Chain::new();
    let mut hand = Hand { prev: Vec::new() };
    // Same result, so the comparison is of the same work.
    assert_eq!(
        generated.run(ChainMode::Full, &x).unwrap().n19.to_bits(),
        hand.run(&x).to_bits()
    );
    g.bench_function("generated", |b| {
        b.iter(|| generated.run(ChainMode::Full, black_box(&x)).map(|o| o.n19))
    });
    g.bench_function("hand_written", |b| b.iter(|| hand.run(black_box(&x))));
    g.bench_function("generated_run_weights", |b| {
        let w = ChainMode::Full.weights();
        b.iter(|| {
            let mut o = Default::default();
            let r = generated.run_with(&mut Run::weights(w), black_box(&x), &mut o);
            r.map(|()| o.n19)
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
