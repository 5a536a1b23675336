//! A text detector as nodes: PP-OCR's DB detector
//! (`ch_PP-OCRv4_det_infer.onnx`), its pre-processing ([`crate::prep`] with
//! [`Normalize::PP_OCR`]) and DB post-processing ([`db`]), giving text boxes
//! or a text score map with the MSER map's contract — a [`ScoreMap`] of the
//! frame's size, values in [0, 1], high where text is — so that L2's
//! fusion, regions, QP map and encoder take it unchanged.
//!
//! The map is the union of the detected boxes, each filled with its score
//! (the highest where boxes overlap).

pub mod db;
mod geom;
pub mod rec;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use cortex_vision::ops::{OpsError, RgbFrame, ScoreMap};
use cortex_vision::registry::RegistryError;
use ndarray::{Array4, ArrayD, IxDyn};

use crate::check::InputShape;
use crate::error::{shape_text, ModelError, Problem};
use crate::model::Model;
use crate::op::{infer_into, Output, Tensor4};
use crate::prep::{frame_tensor_into, Normalize};
pub use db::{DbParams, DbScratch, Quad, TextBox};
pub use rec::{TextLine, TextRecognizer};

/// The file name of PP-OCRv4's detector, as `scripts/fetch-models.sh`
/// places it.
pub const PP_OCR_DET: &str = "ch_PP-OCRv4_det_infer.onnx";

/// The environment variable naming the detector's file, over the default
/// `models/ch_PP-OCRv4_det_infer.onnx` of the repository.
pub const MODEL_ENV: &str = "CORTEX_TEXT_MODEL";

/// Where the detector is looked for: `$CORTEX_TEXT_MODEL`, else
/// `models/ch_PP-OCRv4_det_infer.onnx` under `root` (the repository).
pub fn model_path(root: &Path) -> PathBuf {
    std::env::var_os(MODEL_ENV).map_or_else(|| root.join("models").join(PP_OCR_DET), PathBuf::from)
}

/// DB's input sides must be multiples of 32 (five stride-2 stages).
pub const STRIDE: usize = 32;

/// `side` rounded to the nearest multiple of [`STRIDE`] (at least one).
pub fn stride_multiple(side: usize) -> usize {
    ((side + STRIDE / 2) / STRIDE).max(1) * STRIDE
}

/// Why a text node failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TextError {
    /// The frame could not be turned into the model's tensor.
    #[error("text detector input: {0}")]
    Frame(#[from] OpsError),
    /// Every backend refused the frame.
    #[error("text detector: {0}")]
    Infer(#[from] RegistryError),
    /// The model's output is not a probability map of its input's size.
    #[error("{0}")]
    Output(#[from] ModelError),
}

struct Work {
    tensor: Tensor4,
    prob: Output,
    scratch: DbScratch,
    boxes: Vec<TextBox>,
}

/// A DB text detector: the model fixed at one input size, its parameters,
/// and the working buffers every frame reuses (behind a lock, so that a
/// pipeline can share it by reference).
pub struct TextDetector {
    model: Model,
    norm: Normalize,
    params: DbParams,
    work: Mutex<Work>,
}

impl std::fmt::Debug for TextDetector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextDetector")
            .field("model", &self.model)
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

impl TextDetector {
    /// Loads the detector at `path` to run at `width × height`, each rounded
    /// to a multiple of 32 (frames of another size are resized to it), with
    /// PP-OCR's normalisation and DB parameters.
    ///
    /// # Errors
    /// As [`Model::load`].
    pub fn load(
        path: impl AsRef<Path>,
        width: usize,
        height: usize,
    ) -> Result<TextDetector, ModelError> {
        let shape = InputShape::image(3, stride_multiple(height), stride_multiple(width));
        Ok(TextDetector::new(Model::load(path, shape)?))
    }

    /// A detector over a loaded model (one 3-channel image in, a
    /// probability map of the input's size out).
    pub fn new(model: Model) -> TextDetector {
        TextDetector {
            model,
            norm: Normalize::PP_OCR,
            params: DbParams::PP_OCR,
            work: Mutex::new(Work {
                tensor: Array4::zeros((0, 0, 0, 0)),
                prob: ArrayD::zeros(IxDyn(&[0])),
                scratch: DbScratch::default(),
                boxes: Vec::new(),
            }),
        }
    }

    /// The same detector with other DB parameters.
    pub fn with_params(mut self, params: DbParams) -> TextDetector {
        self.params = params;
        self
    }

    /// Its model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Its DB parameters.
    pub fn params(&self) -> &DbParams {
        &self.params
    }

    /// Runs the detector on `frame` and hands `f` the probability map
    /// (`h × w` of the model's input) and the boxes in frame pixels.
    fn detect_with<R>(
        &self,
        frame: &RgbFrame,
        f: impl FnOnce(ndarray::ArrayView2<'_, f32>, &[TextBox]) -> R,
    ) -> Result<R, TextError> {
        let mut guard = self.work.lock().unwrap_or_else(|p| p.into_inner());
        let work = &mut *guard;
        frame_tensor_into(frame, &self.model, &self.norm, &mut work.tensor)?;
        infer_into(&self.model, &work.tensor, &mut work.prob)?;
        let [_, _, h, w] = self.model.input_shape();
        let prob = work
            .prob
            .view()
            .into_dimensionality::<ndarray::Ix4>()
            .ok()
            .filter(|p| p.dim() == (1, 1, h, w))
            .ok_or_else(|| {
                ModelError::new(
                    self.model.name(),
                    Problem::Run {
                        backend: "text detector",
                        message: format!(
                            "gave a {} output; a DB detector gives 1x1x{h}x{w}",
                            shape_text(work.prob.shape())
                        ),
                    },
                )
            })?;
        let prob = prob
            .index_axis_move(ndarray::Axis(0), 0)
            .index_axis_move(ndarray::Axis(0), 0);
        let (fh, fw, _) = frame.dim();
        db::db_boxes_into(
            prob,
            (fw, fh),
            &self.params,
            &mut work.scratch,
            &mut work.boxes,
        );
        Ok(f(prob, &work.boxes))
    }

    /// The text boxes of `frame`, in frame pixels, into `out`.
    ///
    /// # Errors
    /// [`TextError`]; `out` is left as it was.
    pub fn detect_into(&self, frame: &RgbFrame, out: &mut Vec<TextBox>) -> Result<(), TextError> {
        self.detect_with(frame, |_, boxes| {
            out.clear();
            out.extend_from_slice(boxes);
        })
    }

    /// The probability map of `frame` at the model's input size, into
    /// `out` (reused when of that size).
    ///
    /// # Errors
    /// [`TextError`]; `out` is left as it was.
    pub fn probability_into(
        &self,
        frame: &RgbFrame,
        out: &mut ndarray::Array2<f32>,
    ) -> Result<(), TextError> {
        self.detect_with(frame, |prob, _| {
            if out.dim() != prob.dim() {
                *out = ndarray::Array2::zeros(prob.dim());
            }
            out.assign(&prob);
        })
    }
}

/// The DNN text score map of `frame` into `out` (of the frame's size,
/// reused): the node L2 runs in place of the MSER map.
///
/// ```text
/// node text: ScoreMap = models::text::text_map_into(frame, detector, &mut text)?;
/// ```
///
/// # Errors
/// [`TextError`]; `out` is left as it was.
pub fn text_map_into(
    frame: &RgbFrame,
    detector: &TextDetector,
    out: &mut ScoreMap,
) -> Result<(), TextError> {
    detector.detect_with(frame, |_, boxes| boxes_map_into(frame, boxes, out))
}

/// The text score map of `boxes` (in frame pixels) into `out`, of the
/// frame's size (reused): each box filled with its score, the stronger box
/// where two overlap — the MSER map's contract. The node that draws a
/// detector's held boxes each frame.
///
/// ```text
/// node text: ScoreMap = models::text::boxes_map_into(frame, boxes, &mut text);
/// ```
pub fn boxes_map_into(frame: &RgbFrame, boxes: &[TextBox], out: &mut ScoreMap) {
    let (fh, fw, _) = frame.dim();
    if out.dim() != (fh, fw) {
        *out = ScoreMap::zeros((fh, fw));
    } else {
        out.fill(0.0);
    }
    for b in boxes {
        // Boxes come from a detector run on this frame size; clamped all
        // the same, so that a box from a frame of another size cannot index
        // outside the map.
        let (y0, y1) = (b.bbox.y.min(fh), b.bbox.bottom().min(fh));
        let (x0, x1) = (b.bbox.x.min(fw), b.bbox.right().min(fw));
        let mut area = out.slice_mut(ndarray::s![y0..y1, x0..x1]);
        area.mapv_inplace(|v| v.max(b.score));
    }
}

/// The text boxes of `frame` into `out`: the node form of
/// [`TextDetector::detect_into`].
///
/// # Errors
/// As [`TextDetector::detect_into`].
pub fn text_boxes_into(
    frame: &RgbFrame,
    detector: &TextDetector,
    out: &mut Vec<TextBox>,
) -> Result<(), TextError> {
    detector.detect_into(frame, out)
}
