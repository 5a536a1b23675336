//! The L2 region-of-interest pipeline as a command-line program: the
//! `cortex-l2` command (`cargo install --path cortex-runner`), run here
//! from the facade. The program — its record function, pictures, encoded
//! regions and engines — is `cortex::runner::l2`, a page of code on
//! `cortex::runner::App` like any program of your own.
//!
//! ```text
//! cargo run --release --example l2                        # the tour
//! cargo run --release --example l2 -- run --json
//! cargo run --release --example l2 -- plan --mode POWER_SAVE
//! cargo run --release --example l2 -- run --dump out/ --trace trace.json
//! cargo run --release --example l2 -- run --engine pipelined --overflow drop-oldest
//! cargo run --release --features ffmpeg --example l2 -- run -i clip.mp4 --encode roi.mkv
//! ```

use std::process::ExitCode;

pub use cortex::runner::l2::app;

#[allow(dead_code)]
fn main() -> ExitCode {
    app().main()
}
