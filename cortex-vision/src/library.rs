//! The vision op library: every op of [`crate::ops`] by its descriptor
//! (declared beside its kernel, one registration line each here), the
//! types graph files name with their initial values and views, the values
//! fused groups read as planes, and the `bool` fields rates trigger on.

use cortex_core::dynamic::{Ops, Params};

use crate::l2::BlurVerdict;
use crate::ops::qp_map::{self, QpMap};
use crate::ops::roi_regions::{self, RoiRegions};
use crate::ops::{
    self, text_roi, BlurReport, EncodedRoi, GrayImage, RgbFrame, SceneChange, ScoreMap,
};
use crate::views;

/// The vision ops' parameters are checked by their own `validate`, the
/// rule the kernels apply.
macro_rules! checked_by_validate {
    ($($params:ty),* $(,)?) => {$(
        impl Params for $params {
            fn check(&self) -> Result<(), String> {
                self.validate().map_err(|e| e.to_string())
            }
        }
    )*};
}

checked_by_validate!(
    ops::BlurParams,
    ops::SceneParams,
    ops::CenterParams,
    text_roi::TextRoiParams,
    ops::SaliencyParams,
    ops::MotionParams,
    ops::EncoderParams,
    roi_regions::RegionParams,
    qp_map::QpMapParams,
);

/// Every vision op, type, view and trigger field.
pub fn vision_ops() -> Ops {
    let mut o = Ops::new();
    register_vision_ops(&mut o);
    o
}

/// Adds every vision op, type, view and trigger field to `o`.
pub fn register_vision_ops(o: &mut Ops) {
    o.describe(ops::gray::descriptor())
        .describe(ops::blur::descriptor())
        .describe(ops::ssim::descriptor())
        .describe(ops::ssim::ssim_descriptor())
        .describe(ops::blur_verdict::descriptor())
        .describe(ops::center::descriptor())
        .describe(text_roi::descriptor())
        .describe(ops::saliency::descriptor())
        .describe(ops::motion::descriptor())
        .describe(ops::score_fusion::descriptor())
        .describe(ops::encoder::descriptor())
        .describe(roi_regions::descriptor())
        .describe(qp_map::descriptor())
        .describe(ops::resize::gray_descriptor())
        .describe(ops::resize::map_descriptor());
    register_vision_types(o);
}

/// The types vision ops read and give: their names in graph files, the
/// initial value of a state of each, their JSON views, the planes fused
/// groups read and the trigger fields.
pub fn register_vision_types(o: &mut Ops) {
    o.ty("RgbFrame", RgbFrame::zeros((0, 0, 3)))
        .ty("GrayImage", GrayImage::zeros((0, 0)))
        .ty("ScoreMap", ScoreMap::zeros((0, 0)))
        .ty("BlurReport", BlurReport::default())
        .ty("SceneChange", SceneChange::default())
        .ty("BlurVerdict", BlurVerdict::INITIAL)
        .ty("EncodedRoi", EncodedRoi::default())
        .ty("RoiRegions", RoiRegions::default())
        .ty("QpMap", QpMap::default())
        .ty("f64", 0.0f64)
        .ty("bool", false)
        .show(views::blur_verdict)
        .show(views::blur_report)
        .show(views::scene_change)
        .show(views::encoded_roi)
        .show(views::roi_regions)
        .show(views::score_map)
        .show(views::qp_map)
        .payload(views::encoded_roi_payload)
        .payload(views::qp_map_payload)
        .flag::<SceneChange>("changed", |s| s.changed)
        .flag::<BlurReport>("is_blurry", |b| b.is_blurry)
        .flag::<BlurVerdict>("is_blurry", |b| b.is_blurry)
        .plane::<RgbFrame>()
        .plane::<GrayImage>()
        .plane::<ScoreMap>();
}
