//! `cortex-l2`: the L2 region-of-interest pipeline on the synthetic clip, a
//! Y4M stream, image files or (features `ffmpeg`, `opencv`) any video —
//! results as a table, JSON lines, a Chrome trace, pictures or an encoded
//! video with its regions of interest; with `--model text=PATH.onnx`
//! (feature `models`), L2 with the DNN text map from that file. `cortex-l2 --help` lists the
//! commands; `docs/runner.md` in the repository is the guide.
//!
//! ```text
//! cargo install --path cortex-runner                    # or --features ffmpeg
//! cortex-l2                                             # the tour
//! ffmpeg -i clip.mp4 -f yuv4mpegpipe - | cortex-l2 run -i - --json
//! ```

use std::process::ExitCode;

fn main() -> ExitCode {
    cortex_runner::l2::main()
}
