//! The L2 ops called through the registry, for `cortex_graph!` nodes: the
//! signatures of the functions of [`crate::ops`] at their default
//! parameters, each dispatching to the kernel the current registry
//! ([`super::current`]) selected for the call's shape. The `…_into` forms
//! fill a buffer the pipeline owns, as the planned-memory graph's nodes do;
//! the others return a new value. The ops themselves (name, shape,
//! kernels, policy) are declared beside their kernels; this module is
//! their face in the DSL.
//!
//! ```text
//! use cortex::registry;
//! node fused: ScoreMap = registry::ops::score_fusion_into(center, text, saliency, motion, weights, &mut fused)?;
//! #[external_call] node roi = registry::ops::encode_roi(frame, fused)?;
//! ```

use super::error::RegistryError;
use super::global::current;
use super::op::Op;
use crate::ops::{BlurReport, EncodedRoi, GrayImage, RgbFrame, SceneChange, ScoreMap};
use cortex_core::weights::Weights;

/// The registry ops, each declared beside its kernels in [`crate::ops`]:
/// the types `Registry::call::<Op>` and `Registry::force::<Op>` name.
pub use crate::ops::{
    blur::BlurDetector,
    center::CenterCrop,
    encoder::EncodeRoi,
    gray::ToGray,
    motion::MotionMap,
    saliency::SaliencyDft,
    score_fusion::{ScoreFusion, ScoreFusionArgs},
    ssim::SceneChangeOp,
    text_roi::TextMap,
};

/// The name of every op with a function here: a node calling
/// `registry::ops::NAME` or `registry::ops::NAME_into` dispatches op `NAME`.
pub(super) const OP_NAMES: [&str; 9] = [
    ToGray::NAME,
    BlurDetector::NAME,
    SceneChangeOp::NAME,
    CenterCrop::NAME,
    TextMap::NAME,
    SaliencyDft::NAME,
    MotionMap::NAME,
    ScoreFusion::NAME,
    EncodeRoi::NAME,
];

/// [`crate::ops::to_gray`] through the registry.
///
/// # Errors
/// [`RegistryError`]: no kernel, or every kernel refused the frame.
pub fn to_gray(frame: &RgbFrame) -> Result<GrayImage, RegistryError> {
    current().call::<ToGray>(&frame)
}

/// [`crate::ops::to_gray_into`] through the registry.
///
/// # Errors
/// As [`to_gray`]; `out` is unspecified after an error.
pub fn to_gray_into(frame: &RgbFrame, out: &mut GrayImage) -> Result<(), RegistryError> {
    current().call_into::<ToGray>(&frame, out)
}

/// [`crate::ops::blur_detector`] through the registry.
///
/// # Errors
/// As [`to_gray`].
pub fn blur_detector(gray: &GrayImage) -> Result<BlurReport, RegistryError> {
    current().call::<BlurDetector>(&gray)
}

/// [`crate::ops::scene_change`] through the registry.
///
/// # Errors
/// As [`to_gray`].
pub fn scene_change(cur: &GrayImage, prev: &GrayImage) -> Result<SceneChange, RegistryError> {
    current().call::<SceneChangeOp>(&(cur, prev))
}

/// [`crate::ops::center_crop`] through the registry.
///
/// # Errors
/// As [`to_gray`].
pub fn center_crop(gray: &GrayImage) -> Result<ScoreMap, RegistryError> {
    current().call::<CenterCrop>(&gray)
}

/// [`crate::ops::center_crop_into`] at the default parameters through the
/// registry.
///
/// # Errors
/// As [`to_gray_into`].
pub fn center_crop_into(gray: &GrayImage, out: &mut ScoreMap) -> Result<(), RegistryError> {
    current().call_into::<CenterCrop>(&gray, out)
}

/// [`crate::ops::text_roi::text_map`] through the registry.
///
/// # Errors
/// As [`to_gray`].
pub fn text_map(gray: &GrayImage) -> Result<ScoreMap, RegistryError> {
    current().call::<TextMap>(&gray)
}

/// [`crate::ops::text_roi::text_map_into`] at the default parameters
/// through the registry.
///
/// # Errors
/// As [`to_gray_into`].
pub fn text_map_into(gray: &GrayImage, out: &mut ScoreMap) -> Result<(), RegistryError> {
    current().call_into::<TextMap>(&gray, out)
}

/// [`crate::ops::saliency_dft`] through the registry.
///
/// # Errors
/// As [`to_gray`].
pub fn saliency_dft(gray: &GrayImage) -> Result<ScoreMap, RegistryError> {
    current().call::<SaliencyDft>(&gray)
}

/// [`crate::ops::saliency_dft_into`] at the default parameters through the
/// registry.
///
/// # Errors
/// As [`to_gray_into`].
pub fn saliency_dft_into(gray: &GrayImage, out: &mut ScoreMap) -> Result<(), RegistryError> {
    current().call_into::<SaliencyDft>(&gray, out)
}

/// [`crate::ops::motion_map`] through the registry.
///
/// # Errors
/// As [`to_gray`].
pub fn motion_map(cur: &GrayImage, prev: &GrayImage) -> Result<ScoreMap, RegistryError> {
    current().call::<MotionMap>(&(cur, prev))
}

/// [`crate::ops::motion_map_into`] at the default parameters through the
/// registry.
///
/// # Errors
/// As [`to_gray_into`].
pub fn motion_map_into(
    cur: &GrayImage,
    prev: &GrayImage,
    out: &mut ScoreMap,
) -> Result<(), RegistryError> {
    current().call_into::<MotionMap>(&(cur, prev), out)
}

/// [`crate::ops::score_fusion`] through the registry.
///
/// # Errors
/// As [`to_gray`].
pub fn score_fusion(
    center: Option<&ScoreMap>,
    text: Option<&ScoreMap>,
    saliency: Option<&ScoreMap>,
    motion: Option<&ScoreMap>,
    weights: &Weights,
) -> Result<ScoreMap, RegistryError> {
    current().call::<ScoreFusion>(&(center, text, saliency, motion, weights))
}

/// [`crate::ops::score_fusion_into`] through the registry.
///
/// # Errors
/// As [`to_gray_into`].
pub fn score_fusion_into(
    center: Option<&ScoreMap>,
    text: Option<&ScoreMap>,
    saliency: Option<&ScoreMap>,
    motion: Option<&ScoreMap>,
    weights: &Weights,
    out: &mut ScoreMap,
) -> Result<(), RegistryError> {
    current().call_into::<ScoreFusion>(&(center, text, saliency, motion, weights), out)
}

/// [`crate::ops::encode_roi`] through the registry.
///
/// # Errors
/// As [`to_gray`].
pub fn encode_roi(frame: &RgbFrame, score: &ScoreMap) -> Result<EncodedRoi, RegistryError> {
    current().call::<EncodeRoi>(&(frame, score))
}

/// [`crate::ops::encode_roi_into`] at the default parameters through the
/// registry.
///
/// # Errors
/// As [`to_gray_into`].
pub fn encode_roi_into(
    frame: &RgbFrame,
    score: &ScoreMap,
    out: &mut EncodedRoi,
) -> Result<(), RegistryError> {
    current().call_into::<EncodeRoi>(&(frame, score), out)
}
