//! L2 with the DNN text map: the graph of `cortex::l2::L2` with its `text`
//! node computed by PP-OCR's detector ([`crate::text::text_map_into`])
//! instead of MSER. The map keeps the MSER map's contract, so the fusion,
//! the regions, the QP map and the encoder are L2's own nodes, unchanged.
//! The detector is the pipeline's second input, loaded once by the caller;
//! its boxes are a node of their own (and an output), so a rate holds the
//! detector's work and the map is drawn from the held boxes.

use cortex_macros::cortex_graph;
use cortex_vision::l2::{blur_verdict, BlurVerdict};
use cortex_vision::ops::qp_map::{QpMap, QpMapParams};
use cortex_vision::ops::roi_regions::{RegionParams, RoiRegions};
use cortex_vision::ops::{
    self, BlurParams, CenterParams, EncodedRoi, EncoderParams, GrayImage, MotionParams, RgbFrame,
    SaliencyParams, SceneChange, SceneParams, ScoreMap,
};

use crate::text::{self, TextBox, TextDetector};

cortex_graph! {
    /// L2 with the DNN text map. `BALANCED` runs the detector on every
    /// frame; `BALANCED_AT_RATE` has the same weights and runs it on every
    /// 8th frame and on a scene cut, holding the map in between (and the
    /// regions with it), as DeepStream's `interval` does; `POWER_SAVE` and
    /// `TEXT_FOCUS` are L2's, the former at that rate too.
    #[parallel]
    pub pipeline L2Dnn {
        input frame: RgbFrame;
        input detector: TextDetector;
        state _prev_gray: GrayImage = GrayImage::zeros((0, 0));
        state _sharpness: BlurVerdict = BlurVerdict::INITIAL;

        mode BALANCED         { wc: 0.4, wt: 0.3, ws: 0.2, wm: 0.1 }
        mode BALANCED_AT_RATE { wc: 0.4, wt: 0.3, ws: 0.2, wm: 0.1 }
            where boxes every 8 or scene.changed, regions every 8 or scene.changed;
        mode POWER_SAVE       { wc: 0.7, wt: 0.3, ws: 0.0, wm: 0.0 }
            where boxes every 8 or scene.changed, regions every 8 or scene.changed;
        mode TEXT_FOCUS       { wc: 0.2, wt: 0.6, ws: 0.2, wm: 0.0 }

        #[compilable(strip = ops::strip::GrayStrip)]
        node gray: GrayImage = ops::to_gray_into(frame, &mut gray)?;
        #[compilable(reduce = ops::strip::BlurForm(BlurParams::DEFAULT))]
        node laplacian = ops::blur_detector(gray)?;
        #[compilable(reduce = ops::strip::SceneForm(SceneParams::DEFAULT))]
        node scene = ops::scene_change(gray, _prev_gray)?;
        #[compilable] node blur = blur_verdict(laplacian, scene, _sharpness);
        #[compilable(strip = ops::strip::CenterForm(CenterParams::DEFAULT))] #[weight_key = "wc"]
        node center: ScoreMap = ops::center_crop_into(gray, &CenterParams::DEFAULT, &mut center)?;
        #[external_call]
        node boxes: Vec<TextBox> = text::text_boxes_into(frame, detector, &mut boxes)?;
        #[weight_key = "wt"]
        node text: ScoreMap = text::boxes_map_into(frame, boxes, &mut text);
        #[compilable] #[weight_key = "ws"]
        node saliency: ScoreMap = ops::saliency_dft_into(gray, &SaliencyParams::DEFAULT, &mut saliency)?;
        #[compilable(reduce = ops::strip::MotionForm(MotionParams::DEFAULT))] #[weight_key = "wm"]
        node motion: ScoreMap = ops::motion_map_into(gray, _prev_gray, &MotionParams::DEFAULT, &mut motion)?;
        #[compilable(strip = ops::strip::FusionForm)]
        node fused: ScoreMap = ops::score_fusion_into(center, text, saliency, motion, weights, &mut fused)?;
        #[external_call]
        node roi: EncodedRoi = ops::encode_roi_into(frame, fused, &EncoderParams::DEFAULT, &mut roi)?;
        node regions: RoiRegions = ops::roi_regions::roi_regions_into(fused, &RegionParams::DEFAULT, &mut regions)?;
        node qp_map: QpMap = ops::qp_map::qp_map_into(fused, blur, &QpMapParams::DEFAULT, &mut qp_map)?;
        gray -> _prev_gray;
        blur -> _sharpness;

        output blur: BlurVerdict, scene: SceneChange, fused: ScoreMap, roi: EncodedRoi, regions: RoiRegions, qp_map: QpMap, boxes: Vec<TextBox>;
    }
}
