//! The L2 region-of-interest pipeline, declared with `cortex_graph!`
//! over the vision kernels of [`crate::ops`].

use crate::clip::SyntheticClip;
use crate::ops::qp_map::{QpMap, QpMapParams};
use crate::ops::roi_regions::{RegionParams, RoiRegions};
use crate::ops::text_roi::TextRoiParams;
use crate::ops::{
    self, BlurParams, CenterParams, EncodedRoi, EncoderParams, GrayImage, MotionParams, RgbFrame,
    SaliencyParams, SceneChange, SceneParams, ScoreMap,
};
use cortex_macros::cortex_graph;

// The blur decision is a kernel of its own; it stays nameable here, where
// the pipeline that carries it as state is declared.
pub use crate::ops::blur_verdict::{
    blur_verdict, BlurVerdict, ABSOLUTE_BLUR_THRESHOLD, BASELINE_ALPHA, BLUR_RATIO,
};

cortex_graph! {
    /// The L2 pipeline: blur and scene-change checks, four score maps
    /// fused with per-mode weights, the JPEG of the top region, and what an
    /// encoder takes: up to four separate regions by importance
    /// ([`ops::roi_regions`]) and a per-block quantiser-offset map
    /// ([`ops::qp_map`], neutral on blurry frames).
    ///
    /// Blur is decided against the clip's own sharpness ([`blur_verdict`]):
    /// a frame is blurry when its Laplacian variance falls far below the
    /// running baseline of recent frames, so a soft but in-focus film is not
    /// called blurry throughout; the classic fixed threshold is kept beside
    /// it as [`BlurVerdict::below_threshold`].
    ///
    /// Modes: `BALANCED` runs everything; `POWER_SAVE` zeroes the saliency
    /// and motion weights, so its plan runs neither `saliency_dft` nor
    /// `motion_map`, and computes the text map (two thirds of a frame's
    /// time) on every 4th frame and on a scene cut, holding it in between —
    /// and the regions with it, since with the text map held the fused map
    /// they are computed from does not change; `TEXT_FOCUS` weights the text
    /// map most and drops motion.
    ///
    /// The maps are filled into buffers the pipeline owns (`&mut center`),
    /// so `run_into` reuses them frame after frame; `#[parallel]` adds
    /// `run_parallel`, which runs independent nodes at once.
    #[parallel]
    pub pipeline L2 {
        input frame: RgbFrame;
        state _prev_gray: GrayImage = GrayImage::zeros((0, 0));
        state _sharpness: BlurVerdict = BlurVerdict::INITIAL;

        mode BALANCED   { wc: 0.4, wt: 0.3, ws: 0.2, wm: 0.1 }
        mode POWER_SAVE { wc: 0.7, wt: 0.3, ws: 0.0, wm: 0.0 }
            where text every 4 or scene.changed, regions every 4 or scene.changed;
        mode TEXT_FOCUS { wc: 0.2, wt: 0.6, ws: 0.2, wm: 0.0 }

        #[compilable(strip = ops::strip::GrayStrip)]
        node gray: GrayImage = ops::to_gray_into(frame, &mut gray)?;
        #[compilable(reduce = ops::strip::BlurForm(BlurParams::DEFAULT))]
        node laplacian = ops::blur_detector(gray)?;
        #[compilable(reduce = ops::strip::SceneForm(SceneParams::DEFAULT))]
        node scene = ops::scene_change(gray, _prev_gray)?;
        #[compilable] node blur = blur_verdict(laplacian, scene, _sharpness);
        #[compilable(strip = ops::strip::CenterForm(CenterParams::DEFAULT))] #[weight_key = "wc"]
        node center: ScoreMap = ops::center_crop_into(gray, &CenterParams::DEFAULT, &mut center)?;
        #[weight_key = "wt"]
        node text: ScoreMap = ops::text_roi::text_map_into(gray, &TextRoiParams::DEFAULT, &mut text)?;
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

        output blur: BlurVerdict, scene: SceneChange, fused: ScoreMap, roi: EncodedRoi, regions: RoiRegions, qp_map: QpMap;
    }
}

/// The first `count` frames of the built-in synthetic clip
/// ([`SyntheticClip`]) at `width × height`: text, a moving object, a blurred
/// stretch from frame 10 and a cut at frame 24.
pub fn demo_clip(count: usize, width: usize, height: usize) -> Vec<RgbFrame> {
    let clip = SyntheticClip::new(width, height);
    (0..count as u64).map(|f| clip.frame(f)).collect()
}
