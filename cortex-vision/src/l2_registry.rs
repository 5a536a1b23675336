//! The L2 pipeline with every node calling its op through the kernel
//! registry (`registry::ops::…`): the same graph as [`crate::l2::L2`], each
//! op's kernel chosen per shape by the thread's (or the process's)
//! [`crate::registry::Registry`]. Used by `examples/l2_registry.rs` and
//! `tests/registry_l2.rs`.

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

        #[compilable] node gray = registry::ops::to_gray(frame)?;
        #[compilable] node laplacian = registry::ops::blur_detector(gray)?;
        #[compilable] node scene = registry::ops::scene_change(gray, _prev_gray)?;
        #[compilable] node blur = blur_verdict(laplacian, scene, _sharpness);
        #[compilable] #[weight_key = "wc"] node center = registry::ops::center_crop(gray)?;
        #[weight_key = "wt"] node text = registry::ops::text_map(gray)?;
        #[compilable] #[weight_key = "ws"] node saliency = registry::ops::saliency_dft(gray)?;
        #[compilable] #[weight_key = "wm"] node motion = registry::ops::motion_map(gray, _prev_gray)?;
        #[compilable] node fused = registry::ops::score_fusion(center, text, saliency, motion, weights)?;
        #[external_call] node roi = registry::ops::encode_roi(frame, fused)?;
        gray -> _prev_gray;
        blur -> _sharpness;

        output blur: BlurVerdict, scene: SceneChange, fused: ScoreMap, roi: EncodedRoi;
    }
}
