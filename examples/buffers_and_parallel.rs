//! Lesson 3 — buffers and `#[parallel]`. Nodes written `node v: T = f(…,
//! &mut v)` fill a buffer the pipeline owns instead of returning a new
//! value; the macro plans at compile time which values share a buffer, and
//! `run_into` hands the previous frame's outputs back in, so a steady
//! stream of same-size frames allocates nothing. `#[parallel]` also
//! generates `run_parallel_into` (a frame's independent nodes at once, here
//! `center` beside `motion`) and `run_stream` (pipelined frames). Every
//! engine gives the same bits; this program checks it on the synthetic clip
//! and prints the buffers the pipeline holds.
//!
//! ```text
//! cargo run --release --example buffers_and_parallel
//! ```
//!
//! Next: `examples/runner.rs`.

use cortex::cortex_graph;
use cortex::ops::{self, CenterParams, GrayImage, MotionParams, OpsError, RgbFrame, ScoreMap};
use cortex::{Run, Weights};

cortex_graph! {
    /// A centre prior and a motion map, fused with per-mode weights.
    #[parallel]
    pub pipeline Attention {
        input frame: RgbFrame;
        state _prev: GrayImage = GrayImage::zeros((0, 0));

        mode BALANCED { wc: 0.5, wm: 0.5 }
        mode STILL    { wc: 1.0, wm: 0.0 }

        node gray: GrayImage = ops::to_gray_into(frame, &mut gray)?;
        #[weight_key = "wc"]
        node center: ScoreMap = ops::center_crop_into(gray, &CenterParams::DEFAULT, &mut center)?;
        #[weight_key = "wm"]
        node motion: ScoreMap = ops::motion_map_into(gray, _prev, &MotionParams::DEFAULT, &mut motion)?;
        node fused: ScoreMap = fuse_into(center, motion, weights, &mut fused)?;
        gray -> _prev;

        output fused: ScoreMap;
    }
}

/// `wc·center + wm·motion` into `out`; a map its mode eliminated is `None`.
pub fn fuse_into(
    center: Option<&ScoreMap>,
    motion: Option<&ScoreMap>,
    w: &Weights,
    out: &mut ScoreMap,
) -> Result<(), OpsError> {
    let wc = w.get_or_zero("wc") as f32;
    let wm = w.get_or_zero("wm") as f32;
    ops::fuse_into(&[(center, wc), (motion, wm)], out)
}

/// Runs both modes on `frames` frames of the synthetic clip with the
/// sequential and the parallel engine, checks they agree, and returns a
/// report: each mode's peak fused score and the buffers the pipeline holds.
pub fn run(frames: usize) -> Result<String, cortex::PipelineError> {
    let clip = cortex::l2::demo_clip(frames.max(1), 320, 240);
    let mut report = String::new();
    for mode in [AttentionMode::Balanced, AttentionMode::Still] {
        let (mut seq, mut par) = (Attention::new(), Attention::new());
        // The first frame's outputs come from `run`; later frames are run
        // into them, trading buffers with the pipeline.
        let mut a = seq.run(mode, &clip[0])?;
        let mut b = AttentionOutputs::default();
        // One `Run` for every frame: it holds no buffer.
        let mut parallel = Run::mode(mode).parallel();
        par.run_with(&mut parallel, &clip[0], &mut b)?;
        for frame in &clip[1..] {
            seq.run_into(mode, frame, &mut a)?;
            par.run_with(&mut parallel, frame, &mut b)?;
            assert_eq!(a, b, "the engines agree bit for bit");
        }
        let peak = a.fused.iter().fold(0.0f32, |m, &v| m.max(v));
        report += &format!("{}: peak fused score {peak:.3}\n", mode.name());
        for (ty, index, bytes) in seq.buffer_bytes() {
            report += &format!("  buffer {index} {ty:<10} {bytes} bytes\n");
        }
    }
    Ok(report)
}

fn main() -> Result<(), cortex::PipelineError> {
    print!("{}", run(12)?);
    Ok(())
}
