//! L2's graph with every node returning a new value, as nodes did before
//! pipelines could own buffers: the reference the planned-memory and fused
//! runs of `cortex::l2::L2` are compared with (outputs bit for bit), and the
//! baseline of the engine bench (`benches/engine.rs` includes this file).
//! A test's reference, declared apart from the library on purpose; the
//! library's L2 is declared once, in `cortex-vision/src/l2.rs`.

use cortex::cortex_graph;
use cortex::l2::{blur_verdict, BlurVerdict};
use cortex::ops::qp_map::QpMap;
use cortex::ops::roi_regions::RoiRegions;
use cortex::ops::{self, EncodedRoi, GrayImage, RgbFrame, SceneChange, ScoreMap};

cortex_graph! {
    /// L2's graph with every node returning a new value: each frame
    /// allocates its maps.
    pub pipeline L2Fresh {
        input frame: RgbFrame;
        state _prev_gray: GrayImage = GrayImage::zeros((0, 0));
        state _sharpness: BlurVerdict = BlurVerdict::INITIAL;

        mode BALANCED   { wc: 0.4, wt: 0.3, ws: 0.2, wm: 0.1 }
        mode POWER_SAVE { wc: 0.7, wt: 0.3, ws: 0.0, wm: 0.0 }
            where text every 4 or scene.changed, regions every 4 or scene.changed;
        mode TEXT_FOCUS { wc: 0.2, wt: 0.6, ws: 0.2, wm: 0.0 }

        #[compilable] node gray = ops::to_gray(frame)?;
        #[compilable] node laplacian = ops::blur_detector(gray)?;
        #[compilable] node scene = ops::scene_change(gray, _prev_gray)?;
        #[compilable] node blur = blur_verdict(laplacian, scene, _sharpness);
        #[compilable] #[weight_key = "wc"] node center = ops::center_crop(gray)?;
        #[weight_key = "wt"] node text: ScoreMap = ops::text_roi::text_map(gray)?;
        #[compilable] #[weight_key = "ws"] node saliency = ops::saliency_dft(gray)?;
        #[compilable] #[weight_key = "wm"] node motion = ops::motion_map(gray, _prev_gray)?;
        #[compilable] node fused = ops::score_fusion(center, text, saliency, motion, weights)?;
        #[external_call] node roi = ops::encode_roi(frame, fused)?;
        node regions: RoiRegions = ops::roi_regions::roi_regions(fused)?;
        node qp_map = ops::qp_map::qp_map(fused, blur)?;
        gray -> _prev_gray;
        blur -> _sharpness;

        output blur: BlurVerdict, scene: SceneChange, fused: ScoreMap, roi: EncodedRoi, regions: RoiRegions, qp_map: QpMap;
    }
}
