//! A fixed loop over one variant of the benchmark pipeline, to count
//! instructions with callgrind — repeatable on a busy machine where wall
//! time is not:
//!
//! ```text
//! cargo build --release --bench pipeline_count
//! valgrind --tool=callgrind target/release/deps/pipeline_count-* generated
//! valgrind --tool=callgrind target/release/deps/pipeline_count-* hand
//! ```

use std::hint::black_box;
use std::process::ExitCode;

use cortex::Run;

mod chain;

use chain::{input, Chain, ChainMode, Hand};

const FRAMES: usize = 20_000;

fn main() -> ExitCode {
    let x = input();
    let mut generated = Chain::new();
    let mut hand = Hand { prev: Vec::new() };
    let mut acc = 0.0f32;
    match std::env::args().nth(1).as_deref() {
        Some("generated") => {
            for _ in 0..FRAMES {
                acc += generated
                    .run(ChainMode::Full, black_box(&x))
                    .map_or(0.0, |o| o.n19);
            }
        }
        Some("run_weights") => {
            for _ in 0..FRAMES {
                let mut o = Default::default();
                let mut run = Run::weights(ChainMode::Full.weights());
                let r = generated.run_with(&mut run, black_box(&x), &mut o);
                acc += r.map_or(0.0, |()| o.n19);
            }
        }
        Some("hand") => {
            for _ in 0..FRAMES {
                acc += hand.run(black_box(&x));
            }
        }
        // `cargo bench` runs every bench target with `--bench`: nothing to do.
        Some("--bench") => return ExitCode::SUCCESS,
        _ => {
            eprintln!("pipeline_count: expected one of: generated, run_weights, hand");
            return ExitCode::FAILURE;
        }
    }
    println!("{acc}");
    ExitCode::SUCCESS
}
