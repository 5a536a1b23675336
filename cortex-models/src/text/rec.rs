//! A text recogniser on the detector's boxes: PP-OCR's CRNN recogniser
//! (`ch_PP-OCRv4_rec_infer.onnx`) run on each box ([`crate::regions`]:
//! cropped upright, height 48, aspect kept, padded to the model's width,
//! batched), its per-column character probabilities decoded by CTC greedy
//! decoding — the most probable class per column, repeats merged, blanks
//! dropped — into a string and a confidence (the mean probability of the
//! kept characters), as PaddleOCR's `CTCLabelDecode` does. The character
//! list is the model's own, from its metadata (`character`), with CTC's
//! blank first and a space last (`use_space_char`).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use cortex_vision::ops::{BBox, RgbFrame};
use ndarray::ArrayViewD;

use crate::check::InputShape;
use crate::error::{ModelError, Problem};
use crate::model::Model;
use crate::regions::{RegionError, RegionPrep, RegionRunner};
use crate::text::{Quad, TextBox};

/// The file name of PP-OCRv4's recogniser, as `scripts/fetch-models.sh`
/// places it.
pub const PP_OCR_REC: &str = "ch_PP-OCRv4_rec_infer.onnx";

/// The environment variable naming the recogniser's file, over the
/// default `models/ch_PP-OCRv4_rec_infer.onnx` of the repository.
pub const REC_MODEL_ENV: &str = "CORTEX_REC_MODEL";

/// Where the recogniser is looked for: `$CORTEX_REC_MODEL`, else
/// `models/ch_PP-OCRv4_rec_infer.onnx` under `root`.
pub fn rec_model_path(root: &Path) -> PathBuf {
    std::env::var_os(REC_MODEL_ENV)
        .map_or_else(|| root.join("models").join(PP_OCR_REC), PathBuf::from)
}

/// PP-OCR's recogniser input height.
pub const REC_HEIGHT: usize = 48;

/// A text box with what it reads.
#[derive(Debug, Clone, PartialEq)]
pub struct TextLine {
    /// The box, axis-aligned, in frame pixels.
    pub bbox: BBox,
    /// The box as detected (possibly tilted).
    pub quad: Quad,
    /// The detector's score of the box.
    pub score: f32,
    /// The string read.
    pub text: String,
    /// Mean probability of its characters, in [0, 1] (0 for no character).
    pub confidence: f32,
}

/// A CTC recogniser: the model fixed at `[batch, 3, 48, width]`, its
/// character list, and the buffers every frame reuses.
pub struct TextRecognizer {
    model: Model,
    /// Class index → character: blank, the model's list, space.
    chars: Vec<String>,
    prep: RegionPrep,
    runner: Mutex<RegionRunner>,
}

impl std::fmt::Debug for TextRecognizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextRecognizer")
            .field("model", &self.model)
            .field("classes", &self.chars.len())
            .finish_non_exhaustive()
    }
}

impl TextRecognizer {
    /// Loads the recogniser at `path` to read `batch` boxes a run (the
    /// batch size limit), each at most `width` pixels wide at height 48
    /// (wider boxes are squeezed; PaddleOCR's default is 320).
    ///
    /// # Errors
    /// As [`Model::load`], and [`Problem::Prepare`] when the model has no
    /// `character` list in its metadata.
    pub fn load(
        path: impl AsRef<Path>,
        batch: usize,
        width: usize,
    ) -> Result<TextRecognizer, ModelError> {
        let shape = InputShape::Fixed([batch, 3, REC_HEIGHT, width]);
        TextRecognizer::new(Model::load(path, shape)?)
    }

    /// A recogniser over a loaded model (`[n, 3, h, w]` in, `[n, columns,
    /// classes]` out, its character list in the metadata's `character`).
    ///
    /// # Errors
    /// [`Problem::Prepare`] when the metadata has no character list.
    pub fn new(model: Model) -> Result<TextRecognizer, ModelError> {
        let list = model.metadata("character").ok_or_else(|| {
            ModelError::new(
                model.name(),
                Problem::Prepare {
                    backend: "text recogniser",
                    message: "its metadata has no `character` list; a CTC recogniser names its classes there".into(),
                },
            )
        })?;
        let mut chars = vec![String::new()];
        chars.extend(list.lines().map(str::to_string));
        chars.push(" ".into());
        Ok(TextRecognizer {
            model,
            chars,
            prep: RegionPrep::PP_OCR_REC,
            runner: Mutex::new(RegionRunner::default()),
        })
    }

    /// Its model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The classes it decodes (blank and space included).
    pub fn classes(&self) -> usize {
        self.chars.len()
    }

    /// Reads each of `boxes` in `frame` into `out` (one line per box, in
    /// order; its strings' allocations reused).
    ///
    /// # Errors
    /// [`RegionError`]; `out` is then unspecified.
    pub fn read_into(
        &self,
        frame: &RgbFrame,
        boxes: &[TextBox],
        out: &mut Vec<TextLine>,
    ) -> Result<(), RegionError> {
        out.truncate(boxes.len());
        while out.len() < boxes.len() {
            out.push(TextLine {
                bbox: BBox::default(),
                quad: [[0.0; 2]; 4],
                score: 0.0,
                text: String::new(),
                confidence: 0.0,
            });
        }
        let mut runner = self.runner.lock().unwrap_or_else(|p| p.into_inner());
        runner.run(
            frame,
            boxes.iter().map(|b| &b.quad),
            &self.model,
            &self.prep,
            |i, _, row| {
                let line = &mut out[i];
                let b = &boxes[i];
                (line.bbox, line.quad, line.score) = (b.bbox, b.quad, b.score);
                line.confidence = self.decode(row, &mut line.text)?;
                Ok(())
            },
        )
    }

    /// CTC greedy decoding of one `[columns, classes]` row into `text`;
    /// its confidence.
    fn decode(&self, row: ArrayViewD<'_, f32>, text: &mut String) -> Result<f32, RegionError> {
        let shape = row.shape();
        if shape.len() != 2 || shape[1] != self.chars.len() {
            return Err(RegionError::Model {
                model: self.model.name().to_string(),
                reason: format!(
                    "gives {shape:?} per box; a CTC recogniser over its {} classes gives [columns, {}]",
                    self.chars.len(),
                    self.chars.len()
                ),
            });
        }
        text.clear();
        let (mut sum, mut n, mut prev) = (0.0f32, 0usize, usize::MAX);
        for col in row.outer_iter() {
            let (best, p) =
                col.iter().enumerate().fold(
                    (0, f32::MIN),
                    |(bi, bp), (i, &p)| if p > bp { (i, p) } else { (bi, bp) },
                );
            if best != 0 && best != prev {
                text.push_str(&self.chars[best]);
                sum += p;
                n += 1;
            }
            prev = best;
        }
        Ok(if n == 0 { 0.0 } else { sum / n as f32 })
    }
}
