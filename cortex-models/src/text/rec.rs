//! A text recogniser on the detector's boxes: PP-OCR's CRNN recogniser
//! (`ch_PP-OCRv4_rec_infer.onnx`) run on each box ([`crate::regions`]:
//! cropped upright, height 48, aspect kept, padded to the batch's width,
//! batched by aspect ratio), its per-column character probabilities decoded by CTC greedy
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
use crate::regions::{upright_ratio, RegionError, RegionPrep, RegionRunner};
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

/// Widths between the model's buckets: a batch runs at the narrowest
/// multiple of this (from the least width) that holds its widest box.
pub const WIDTH_STEP: usize = 160;

/// A CTC recogniser: the model fixed at `[batch, 3, 48, width]` for each
/// width a batch needs (from the least width, in steps of
/// [`WIDTH_STEP`], up to the greatest; each loaded on its first batch),
/// its character list, and the buffers every frame reuses.
pub struct TextRecognizer {
    base: Model,
    max_width: usize,
    /// Class index → character: blank, the model's list, space.
    chars: Vec<String>,
    prep: RegionPrep,
    work: Mutex<Work>,
}

/// One width's model (none: the base model) and buffers.
struct Run {
    width: usize,
    model: Option<Model>,
    runner: RegionRunner,
}

struct Work {
    runs: Vec<Run>,
    /// The boxes' indices, by upright aspect ratio.
    order: Vec<usize>,
    threads: Option<usize>,
}

impl std::fmt::Debug for TextRecognizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextRecognizer")
            .field("model", &self.base)
            .field("max_width", &self.max_width)
            .field("classes", &self.chars.len())
            .finish_non_exhaustive()
    }
}

impl TextRecognizer {
    /// Loads the recogniser at `path` to read `batch` boxes a run (the
    /// batch size limit), each `min_width` to `max_width` pixels wide at
    /// height 48: a batch runs as wide as its widest box needs (PaddleOCR
    /// sizes its batches so, from 320), and boxes wider than `max_width`
    /// are squeezed.
    ///
    /// # Errors
    /// As [`Model::load`], and [`Problem::Prepare`] when the model has no
    /// `character` list in its metadata.
    pub fn load(
        path: impl AsRef<Path>,
        batch: usize,
        min_width: usize,
        max_width: usize,
    ) -> Result<TextRecognizer, ModelError> {
        let shape = InputShape::Fixed([batch, 3, REC_HEIGHT, min_width]);
        Ok(TextRecognizer::new(Model::load(path, shape)?)?.with_max_width(max_width))
    }

    /// A recogniser over a loaded model (`[n, 3, h, w]` in, `[n, columns,
    /// classes]` out, its character list in the metadata's `character`),
    /// at its input's width only.
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
        let width = model.input_shape()[3];
        Ok(TextRecognizer {
            base: model,
            max_width: width,
            chars,
            prep: RegionPrep::PP_OCR_REC,
            work: Mutex::new(Work {
                runs: vec![Run {
                    width,
                    model: None,
                    runner: RegionRunner::default(),
                }],
                order: Vec::new(),
                threads: None,
            }),
        })
    }

    /// The same recogniser running batches up to `max_width` wide (at
    /// least its model's width).
    pub fn with_max_width(mut self, max_width: usize) -> TextRecognizer {
        self.max_width = max_width.max(self.base.input_shape()[3]);
        self
    }

    /// Its model at the least width.
    pub fn model(&self) -> &Model {
        &self.base
    }

    /// Runs every width's model on `threads` threads (see
    /// [`Model::set_threads`]).
    pub fn set_threads(&self, threads: usize) {
        self.base.set_threads(threads);
        let mut work = self.work.lock().unwrap_or_else(|p| p.into_inner());
        work.threads = Some(threads);
        for r in work.runs.iter().filter_map(|r| r.model.as_ref()) {
            r.set_threads(threads);
        }
    }

    /// The classes it decodes (blank and space included).
    pub fn classes(&self) -> usize {
        self.chars.len()
    }

    /// The width a batch whose widest box has upright aspect `ratio` runs
    /// at.
    fn width_for(&self, ratio: f32) -> usize {
        let least = self.base.input_shape()[3];
        let need = (REC_HEIGHT as f32 * ratio).ceil() as usize;
        let steps = need.saturating_sub(least).div_ceil(WIDTH_STEP);
        (least + steps * WIDTH_STEP).min(self.max_width)
    }

    /// Reads each of `boxes` in `frame` into `out` (one line per box, in
    /// order; its strings' allocations reused). Boxes are batched by
    /// aspect ratio, as PaddleOCR does.
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
        let mut guard = self.work.lock().unwrap_or_else(|p| p.into_inner());
        let work = &mut *guard;
        work.order.clear();
        work.order.extend(0..boxes.len());
        let ratio = |i: usize| upright_ratio(&boxes[i].quad);
        work.order.sort_by(|&a, &b| ratio(a).total_cmp(&ratio(b)));
        let batch = self.base.input_shape()[0].max(1);
        for chunk in work.order.chunks(batch) {
            let widest = chunk.iter().map(|&i| ratio(i)).fold(0.0, f32::max);
            let width = self.width_for(widest);
            let k = match work.runs.iter().position(|r| r.width == width) {
                Some(k) => k,
                None => {
                    let [n, c, h, _] = self.base.input_shape();
                    let model = self
                        .base
                        .with_shape(InputShape::Fixed([n, c, h, width]))
                        .map_err(|e| RegionError::Model {
                            model: self.base.name().to_string(),
                            reason: e.problem.to_string(),
                        })?;
                    if let Some(t) = work.threads {
                        model.set_threads(t);
                    }
                    work.runs.push(Run {
                        width,
                        model: Some(model),
                        runner: RegionRunner::default(),
                    });
                    work.runs.len() - 1
                }
            };
            let run = &mut work.runs[k];
            let model = run.model.as_ref().unwrap_or(&self.base);
            run.runner.run(
                frame,
                chunk.iter().map(|&i| &boxes[i].quad),
                model,
                &self.prep,
                |j, _, row| {
                    let i = chunk[j];
                    let line = &mut out[i];
                    let b = &boxes[i];
                    (line.bbox, line.quad, line.score) = (b.bbox, b.quad, b.score);
                    line.confidence = self.decode(row, &mut line.text)?;
                    Ok(())
                },
            )?;
        }
        Ok(())
    }

    /// CTC greedy decoding of one `[columns, classes]` row into `text`;
    /// its confidence.
    fn decode(&self, row: ArrayViewD<'_, f32>, text: &mut String) -> Result<f32, RegionError> {
        let shape = row.shape();
        if shape.len() != 2 || shape[1] != self.chars.len() {
            return Err(RegionError::Model {
                model: self.base.name().to_string(),
                reason: format!(
                    "gives {shape:?} per box; a CTC recogniser over its {} classes gives [columns, {}]",
                    self.chars.len(),
                    self.chars.len()
                ),
            });
        }
        Ok(ctc_greedy(row, &self.chars, text))
    }
}

/// CTC greedy decoding of `[columns, classes]` probabilities over `chars`
/// (class 0 the blank) into `text`: the most probable class per column (the
/// first on a tie), a class repeated in the next column merged, blanks
/// dropped; the mean probability of the kept characters (0 for none).
fn ctc_greedy(row: ArrayViewD<'_, f32>, chars: &[String], text: &mut String) -> f32 {
    text.clear();
    let (mut sum, mut n, mut prev) = (0.0f32, 0usize, usize::MAX);
    for col in row.outer_iter() {
        let (best, p) =
            col.iter().enumerate().fold(
                (0, f32::MIN),
                |(bi, bp), (i, &p)| if p > bp { (i, p) } else { (bi, bp) },
            );
        if best != 0 && best != prev {
            if let Some(c) = chars.get(best) {
                text.push_str(c);
            }
            sum += p;
            n += 1;
        }
        prev = best;
    }
    if n == 0 {
        0.0
    } else {
        sum / n as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_decoding_merges_repeats_and_drops_blanks() {
        let chars: Vec<String> = ["", "a", "b", " "].iter().map(|s| s.to_string()).collect();
        // Columns: a a blank a b b space blank → "aab ".
        let best = [1, 1, 0, 1, 2, 2, 3, 0];
        let row = ndarray::Array2::from_shape_fn((best.len(), 4), |(t, c)| {
            if c == best[t] {
                0.7 + 0.01 * t as f32
            } else {
                0.1
            }
        });
        let mut text = String::from("old");
        let conf = ctc_greedy(row.view().into_dyn(), &chars, &mut text);
        assert_eq!(text, "aab ");
        // Kept: columns 0, 3, 4, 6.
        let want = (0.70 + 0.73 + 0.74 + 0.76) / 4.0;
        assert!((conf - want).abs() < 1e-6, "{conf}");
        let blank = ndarray::Array2::from_shape_fn((3, 4), |(_, c)| if c == 0 { 0.9 } else { 0.0 });
        assert_eq!(ctc_greedy(blank.view().into_dyn(), &chars, &mut text), 0.0);
        assert_eq!(text, "");
    }
}
