//! Trained ONNX models as nodes of cortex pipelines.
//!
//! A [`Model`] is loaded once — from a path or from bytes — with its input
//! fixed at one NCHW shape ([`InputShape`]); loading checks what the file
//! declares before any engine builds from it, then tract (pure Rust, always
//! built) optimises it. A node runs it with [`infer_into`] (or [`infer`]):
//! an `f32` [`Tensor4`] in, the model's first output ([`Output`]) out,
//! through the kernel registry, whose `infer` op ([`Infer`]) has one kernel
//! per backend — tract, OpenCV's DNN module with feature `opencv`, and
//! ONNX Runtime (loaded at run time, [`onnxruntime`]) with feature
//! `onnxruntime` —
//! chosen per model and input shape, measured when both are candidates,
//! with fallback. [`Model::last_backend`] and the registry's report say which
//! backend ran.
//!
//! Every problem with a model file — unreadable, a FIFO or a folder, too
//! large, not ONNX, an operator the backend lacks, an input that is not a
//! rank-4 `f32` tensor, a declared shape over the limits, a constant the
//! engine would compute at load over the limits ([`MAX_FOLD_BYTES`]) — is
//! one [`ModelError`] naming the file; nothing panics and no size a file
//! declares is allocated before it is checked.
//!
//! [`prep`] turns a frame into a model's tensor (resize, mean/std
//! normalisation, channel order, HWC → NCHW); [`regions`] runs a model on
//! a list of regions of a frame (crop, upright, resize, batch: the second
//! stage of detect → recognise); [`text`] is PP-OCR's text detector on top
//! (DB post-processing to boxes, and a text score map with the MSER map's
//! contract) and its recogniser on the boxes ([`text::rec`]); [`l2`] is L2
//! with that map as its text node.

// The pipelines generated here name the engine as `cortex`, the facade's
// name for it.
extern crate cortex_core as cortex;

mod check;
mod error;
mod file;
mod fold;
pub mod l2;
pub mod library;
mod model;
#[cfg(feature = "onnxruntime")]
pub mod onnxruntime;
mod op;
#[cfg(feature = "opencv")]
mod opencv;
pub mod prep;
pub mod regions;
pub mod text;
mod tract;

pub use check::{InputShape, MAX_TENSOR_ELEMENTS};
pub use error::{ModelError, Problem};
pub use file::MAX_MODEL_BYTES;
pub use fold::MAX_FOLD_BYTES;
pub use model::{Model, ModelBackend, OpTime};
pub use op::{infer, infer_into, Infer, Output, Tensor4};
