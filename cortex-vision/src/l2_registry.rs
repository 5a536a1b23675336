//! The L2 pipeline with every node calling its op through the kernel
//! registry (`registry::ops::…`): the graph of [`crate::l2::L2`]'s scoring
//! (blur, scene change, the four maps, their fusion and the encoded region),
//! each op's kernel chosen per shape by the thread's (or the process's)
//! [`crate::registry::Registry`]. The maps and the region are filled into
//! buffers the pipeline owns (`registry::ops::…_into(…, &mut map)`), so
//! `run_into` reuses them frame after frame as [`crate::l2::L2`]'s does.
//! Used by `examples/l2_registry.rs` and `cortex-vision/tests/registry`.

use crate::l2::{blur_verdict, BlurVerdict};
use crate::ops::{EncodedRoi, GrayImage, RgbFrame, SceneChange, ScoreMap};
use crate::registry;
use cortex_macros::cortex_graph;

cortex_graph! {
    /// The L2 pipeline, each op dispatched by the kernel registry.
    pub pipeline RegL2 {
        input frame: RgbFrame;
        state _prev_gray: GrayImage = GrayImage::zeros((0, 0));
        state _sharpness: BlurVerdict = BlurVerdict::INITIAL;

        mode BALANCED   { wc: 0.4, wt: 0.3, ws: 0.2, wm: 0.1 }
        mode POWER_SAVE { wc: 0.7, wt: 0.3, ws: 0.0, wm: 0.0 }
        mode TEXT_FOCUS { wc: 0.2, wt: 0.6, ws: 0.2, wm: 0.0 }

        #[compilable] node gray: GrayImage = registry::ops::to_gray_into(frame, &mut gray)?;
        #[compilable] node laplacian = registry::ops::blur_detector(gray)?;
        #[compilable] node scene = registry::ops::scene_change(gray, _prev_gray)?;
        #[compilable] node blur = blur_verdict(laplacian, scene, _sharpness);
        #[compilable] #[weight_key = "wc"]
        node center: ScoreMap = registry::ops::center_crop_into(gray, &mut center)?;
        #[weight_key = "wt"]
        node text: ScoreMap = registry::ops::text_map_into(gray, &mut text)?;
        #[compilable] #[weight_key = "ws"]
        node saliency: ScoreMap = registry::ops::saliency_dft_into(gray, &mut saliency)?;
        #[compilable] #[weight_key = "wm"]
        node motion: ScoreMap = registry::ops::motion_map_into(gray, _prev_gray, &mut motion)?;
        #[compilable]
        node fused: ScoreMap = registry::ops::score_fusion_into(center, text, saliency, motion, weights, &mut fused)?;
        #[external_call]
        node roi: EncodedRoi = registry::ops::encode_roi_into(frame, fused, &mut roi)?;
        gray -> _prev_gray;
        blur -> _sharpness;

        output blur: BlurVerdict, scene: SceneChange, fused: ScoreMap, roi: EncodedRoi;
    }
}
