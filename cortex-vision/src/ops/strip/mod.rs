//! Strip forms of the kernels: the same arithmetic as the whole-frame
//! functions, computed on any horizontal strip of rows so a fused group can
//! run them strip by strip ([`crate::strip`]). Each is bit-identical to its
//! whole-frame function, which its tests check.

pub mod center;
mod check;
pub mod forms;
pub mod gray;
pub mod laplacian;
pub mod motion;
pub mod resize;
pub mod score_fusion;
pub mod ssim;

pub use center::CenterStrip;
pub use forms::{BlurForm, CenterForm, FusionForm, MotionForm};
pub use gray::GrayStrip;
pub use laplacian::{Laplacian, LaplacianVariance};
pub use motion::{MotionCells, MotionExpand};
pub use resize::{ResizeMapStrip, ResizeStrip};
pub use score_fusion::ScoreFusionStrip;
pub use ssim::{SceneForm, SsimReduction};
