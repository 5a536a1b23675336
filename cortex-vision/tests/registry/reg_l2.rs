//! The tests' reference for L2 through the kernel registry: L2's scoring
//! graph (blur, scene change, the four maps, their fusion and the encoded
//! region) with every node calling its op through the registry
//! (`registry::ops::…`), buffers owned as L2's are. It left the library
//! (`cortex::l2::registry::RegL2`, a second declaration of L2's graph):
//! here it checks the registry's kernels against `L2` bit for bit under
//! the pure-Rust preference, and that dispatching allocates nothing per
//! frame.

use cortex_macros::cortex_graph;
use cortex_vision::l2::{blur_verdict, BlurVerdict};
use cortex_vision::ops::{EncodedRoi, GrayImage, RgbFrame, SceneChange, ScoreMap};
use cortex_vision::registry;

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
