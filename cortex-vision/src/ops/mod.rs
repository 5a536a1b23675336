//! Vision kernels of the reference L2 region-of-interest pipeline, in pure
//! Rust on `ndarray` images, with OpenCV as the optional external backend
//! (feature `opencv`).

pub mod mser;
pub mod text_roi;
pub mod types;

// The L2 kernels, one module each.
pub(crate) mod bands;
pub mod blur;
pub mod blur_verdict;
pub(crate) mod border;
pub mod center;
pub mod encoder;
pub(crate) mod fastdiv;
pub mod gray;
pub(crate) mod jpeg;
pub mod motion;
#[cfg(feature = "opencv")]
pub mod opencv;
pub mod qp_map;
pub mod resize;
pub mod roi_regions;
pub mod saliency;
pub mod score_fusion;
pub(crate) mod scratch;
pub(crate) mod simd;
pub mod ssim;
pub mod strip;

pub use types::{BBox, GrayImage, OpsError, RgbFrame, ScoreMap};

pub use blur::{blur_detector, blur_detector_with, laplacian_variance, BlurParams, BlurReport};
pub use center::{
    center_crop, center_crop_into, center_crop_with, center_prior_into, CenterParams,
};
pub use encoder::{
    encode_roi, encode_roi_into, encode_roi_with, select_roi, EncodedRoi, EncoderParams,
};
pub use gray::{to_gray, to_gray_into};
pub use motion::{motion_map, motion_map_into, motion_map_with, MotionParams};
pub use saliency::{
    saliency_dft, saliency_dft_into, saliency_dft_with, SaliencyParams, SpectralResidual,
};
pub use score_fusion::{fuse_into, score_fusion, score_fusion_into, SCORE_KEYS};
pub use ssim::{
    scene_change, scene_change_with, ssim, ssim_with, SceneChange, SceneParams, SsimScratch,
    SsimVariant,
};
