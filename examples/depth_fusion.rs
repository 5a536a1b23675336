//! Two inputs and an optional output: an RGB frame and a depth map fused
//! into one ROI. The depth map comes from a [`FrameAdapter`] — here a fake
//! depth sensor (brighter = nearer) computed from the frame; a real program
//! would read a second stream. `COLOR_ONLY` zeroes the depth weight, so its
//! plan never runs the `near` node and the `#[optional]` output `near` is
//! `None`.
//!
//! ```text
//! cargo run --release --example depth_fusion -- run
//! cargo run --release --example depth_fusion -- run --mode COLOR_ONLY --json
//! ```

use std::process::ExitCode;

use cortex::cortex_graph;
use cortex::ops::{self, EncodedRoi, RgbFrame, ScoreMap};
use cortex::runner::sources::Frame;
use cortex::runner::{AdapterError, App, FrameAdapter, Record};
use cortex::Weights;
use ndarray::Array2;

/// A depth map in metres, one value per pixel.
pub type DepthMap = Array2<f32>;

cortex_graph! {
    /// Saliency of the colour frame and nearness from the depth map, fused;
    /// the ROI is cut from the colour frame.
    pub pipeline DepthFusion {
        input frame: RgbFrame;
        input depth: DepthMap;

        mode FUSED      { ws: 0.5, wd: 0.5 }
        mode COLOR_ONLY { ws: 1.0, wd: 0.0 }

        #[compilable] node gray = ops::to_gray(frame)?;
        #[compilable] #[weight_key = "ws"] node saliency = ops::saliency_dft(gray)?;
        #[compilable] #[weight_key = "wd"] node near = nearness(depth);
        #[compilable] node fused = fuse(saliency, near, weights)?;
        #[external_call] node roi = ops::encode_roi(frame, fused)?;

        output roi: EncodedRoi, #[optional] near: ScoreMap;
    }
}

/// Nearness in [0, 1]: 1 at 0.5 m and closer, 0 at 5 m and beyond.
pub fn nearness(depth: &DepthMap) -> ScoreMap {
    depth.mapv(|d| ((5.0 - d) / 4.5).clamp(0.0, 1.0))
}

/// `ws·saliency + wd·near` over the maps that run.
pub fn fuse(
    saliency: Option<&ScoreMap>,
    near: Option<&ScoreMap>,
    w: &Weights,
) -> Result<ScoreMap, ops::OpsError> {
    let mut out = ScoreMap::zeros((0, 0));
    ops::fuse_into(
        &[
            (saliency, w.get_or_zero("ws") as f32),
            (near, w.get_or_zero("wd") as f32),
        ],
        &mut out,
    )?;
    Ok(out)
}

/// A stand-in depth sensor: brighter pixels are nearer (0.5 m for white,
/// 5 m for black).
pub struct FakeDepth;

impl FrameAdapter<DepthFusion> for FakeDepth {
    fn with_inputs(
        &mut self,
        frame: &mut Frame,
        run: &mut dyn FnMut(<DepthFusion as cortex::Pipeline>::Inputs<'_>),
    ) -> Result<(), AdapterError> {
        let gray = ops::to_gray(&frame.image)?;
        let depth = gray.mapv(|v| 5.0 - 4.5 * f32::from(v) / 255.0);
        run((&frame.image, &depth));
        Ok(())
    }
}

/// The program.
pub fn app() -> App<DepthFusion> {
    App::<DepthFusion>::with_adapter(
        "depth_fusion",
        |out: &DepthFusionOutputs| {
            let b = &out.roi.bbox;
            Record::new()
                .field("roi", vec![b.x, b.y, b.width, b.height])
                .field("score", f64::from(out.roi.score))
                .field(
                    "near_max",
                    out.near
                        .as_ref()
                        .map(|m| f64::from(m.iter().fold(0f32, |a, &v| a.max(v)))),
                )
        },
        FakeDepth,
    )
    .about("Colour saliency and depth nearness fused into one ROI")
}

#[allow(dead_code)]
fn main() -> ExitCode {
    app().main()
}
