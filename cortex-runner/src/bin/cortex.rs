//! `cortex`: run a graph file over the op library (`cortex run --graph
//! FILE`, `cortex ops` lists the ops), or the compiled L2 region-of-interest
//! pipeline on the synthetic clip, a Y4M stream, image files or (features
//! `ffmpeg`, `opencv`) any video. The same program as `cortex-l2`, its
//! older name; `cortex --help` lists the commands and `docs/runner.md` in
//! the repository is the guide.
//!
//! ```text
//! cargo install --path cortex-runner          # or --features "ffmpeg models"
//! cortex ops                                  # the op library
//! cortex run --graph examples/graphs/l2.json --json
//! ```

use std::process::ExitCode;

fn main() -> ExitCode {
    cortex_runner::l2::main()
}
