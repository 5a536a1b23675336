//! The model op library: a trained model as a node of a graph file, by
//! descriptor. `model.text_boxes` loads PP-OCR's text detector named by
//! its `path` once, when the graph is built, and gives the frame's text
//! boxes; `model.read_text` reads each box with PP-OCR's recogniser;
//! `model.boxes_map` draws boxes as a score map with the MSER map's
//! contract; `model.frame_tensor` and `model.infer` run any one-input
//! ONNX model on a frame (normalised per channel, resized to the model's
//! input), `model.infer_regions` on each box of a frame (cropped, resized,
//! batched).
//!
//! A model node runs on its backend's own threads (`threads`: 0 for the
//! cores the process may use), not on the engine's workers: on the
//! parallel and pipelined engines give it fewer when other nodes run
//! beside it.
//!
//! A model's `path` in a graph file is taken from the graph file's folder
//! (an absolute path is kept): `examples/graphs/ocr.json` names
//! `../../models/…`, and runs from any working directory.
//!
//! ```json
//! { "name": "boxes", "op": "model.text_boxes", "inputs": ["frame"],
//!   "params": { "path": "../../models/ch_PP-OCRv4_det_infer.onnx", "width": 800, "height": 608 } }
//! ```

use std::sync::Arc;

use cortex_core::dynamic::{NoParams, OpDesc, Ops, Params};
use cortex_vision::ops::{RgbFrame, ScoreMap};
use ndarray::{Array4, ArrayD, IxDyn};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::check::InputShape;
use crate::model::Model;
use crate::op::{infer_into, Infer, Output, Tensor4};
use crate::prep::{image_to_tensor_into, ChannelOrder, Normalize};
use crate::regions::{RegionPrep, RegionRunner};
use crate::text::{boxes_map_into, DbParams, TextBox, TextDetector, TextLine, TextRecognizer};
use cortex_vision::registry::declare::kernel_labels;

/// Every model op, and the types they give with their views.
pub fn model_ops() -> Ops {
    let mut o = Ops::new();
    register_model_ops(&mut o);
    o
}

/// Adds every model op and type to `o`.
pub fn register_model_ops(o: &mut Ops) {
    o.describe(text_boxes())
        .describe(read_text())
        .describe(boxes_map())
        .describe(frame_tensor())
        .describe(infer())
        .describe(infer_regions());
    o.ty("TextBoxes", Vec::<TextBox>::new())
        .ty("TextLines", Vec::<TextLine>::new())
        .ty("Tensor4", Tensor4::zeros((0, 0, 0, 0)))
        .ty("Tensor", Output::zeros(IxDyn(&[0])))
        .ty("Tensors", Vec::<Output>::new())
        .show(|b: &Vec<TextBox>| {
            let boxes: Vec<_> = b
                .iter()
                .map(|t| json!({ "box": [t.bbox.x, t.bbox.y, t.bbox.width, t.bbox.height], "quad": quad(&t.quad), "score": f64::from(t.score) }))
                .collect();
            json!({ "boxes": boxes })
        })
        .show(|l: &Vec<TextLine>| {
            let lines: Vec<_> = l
                .iter()
                .map(|t| json!({ "box": [t.bbox.x, t.bbox.y, t.bbox.width, t.bbox.height], "quad": quad(&t.quad), "score": f64::from(t.score), "text": t.text, "confidence": f64::from(t.confidence) }))
                .collect();
            json!({ "lines": lines })
        })
        .show(|t: &Output| json!({ "shape": t.shape() }))
        .show(|t: &Vec<Output>| {
            let shapes: Vec<_> = t.iter().map(|o| o.shape().to_vec()).collect();
            json!({ "shapes": shapes })
        });
}

/// A quadrilateral as JSON: four `[x, y]`.
fn quad(q: &crate::text::Quad) -> serde_json::Value {
    q.iter()
        .map(|p| json!([f64::from(p[0]), f64::from(p[1])]))
        .collect()
}

/// A model op's `path` must name a file; loading it says what else is
/// wrong with it.
fn names_a_file(path: &str, whose: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err(format!("`path` names no file: give {whose} ONNX file"));
    }
    Ok(())
}

/// A model's threads: `threads`, or the backend's default for 0.
fn set_threads(model: &Model, threads: usize) {
    if threads > 0 {
        model.set_threads(threads);
    }
}

/// The parameters of `model.text_boxes`: the detector's file, the size it
/// runs at, DB's post-processing.
#[derive(Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TextBoxesParams {
    /// The ONNX file (PP-OCR's `ch_PP-OCRv4_det_infer.onnx`); in a graph
    /// file, a relative path is from the file's folder.
    pub path: String,
    /// Width the detector runs at, rounded up to a multiple of 32.
    pub width: usize,
    /// Height the detector runs at, rounded up to a multiple of 32.
    pub height: usize,
    /// DB's post-processing.
    pub db: DbParams,
    /// Threads the detector runs on (0: the cores the process may use).
    pub threads: usize,
    /// The detector, loaded when the graph is built.
    #[serde(skip)]
    detector: Option<Arc<TextDetector>>,
}

impl Default for TextBoxesParams {
    fn default() -> Self {
        TextBoxesParams {
            path: String::new(),
            width: 800,
            height: 608,
            db: DbParams::PP_OCR,
            threads: 0,
            detector: None,
        }
    }
}

impl Params for TextBoxesParams {
    fn check(&self) -> Result<(), String> {
        names_a_file(&self.path, "the detector's")
    }

    fn prepare(&mut self) -> Result<(), String> {
        let d =
            TextDetector::load(&self.path, self.width, self.height).map_err(|e| e.to_string())?;
        set_threads(d.model(), self.threads);
        self.detector = Some(Arc::new(d.with_params(self.db)));
        Ok(())
    }
}

fn text_boxes() -> OpDesc {
    OpDesc::builder::<TextBoxesParams>(
        "model.text_boxes",
        "text boxes of a frame by PP-OCR's DB detector (loaded once)",
    )
    .input::<RgbFrame>("frame")
    .file(
        "path",
        "the detector's ONNX file, from the graph file's folder",
    )
    .param("width", "width it runs at; rounded up to a multiple of 32")
    .param(
        "height",
        "height it runs at; rounded up to a multiple of 32",
    )
    .param("db.thresh", "probability above which a pixel is text")
    .param("db.box_thresh", "smallest mean probability of a kept box")
    .param("db.unclip_ratio", "how much a box grows")
    .param("db.min_size", "smallest side of a candidate, map pixels")
    .param("db.max_candidates", "most candidates per map")
    .param(
        "threads",
        "threads it runs on (0: the cores the process may use)",
    )
    .kernels(&kernel_labels::<Infer>())
    .fills(|i, p: &TextBoxesParams, out: &mut Vec<TextBox>| {
        let d = p.detector.as_ref().ok_or("the detector was not loaded")?;
        Ok(d.detect_into(i.arg(0)?, out)?)
    })
}

fn boxes_map() -> OpDesc {
    OpDesc::builder::<NoParams>(
        "model.boxes_map",
        "text boxes drawn as a score map of the frame's size (the MSER map's contract)",
    )
    .input::<RgbFrame>("frame")
    .input::<Vec<TextBox>>("boxes")
    .fills(|i, _, out: &mut ScoreMap| {
        boxes_map_into(i.arg(0)?, i.arg::<Vec<TextBox>>(1)?, out);
        Ok(())
    })
}

/// The parameters of `model.frame_tensor`: the size and normalisation a
/// model wants.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TensorParams {
    /// Tensor width.
    pub width: usize,
    /// Tensor height.
    pub height: usize,
    /// Channels in BGR order (models trained on OpenCV-decoded images).
    pub bgr: bool,
    /// Mean per model channel, on the [0, 1] scale.
    pub mean: [f32; 3],
    /// Standard deviation per model channel, on the [0, 1] scale.
    pub std: [f32; 3],
}

impl Default for TensorParams {
    fn default() -> Self {
        let n = Normalize::PP_OCR;
        TensorParams {
            width: 224,
            height: 224,
            bgr: n.order == ChannelOrder::Bgr,
            mean: n.mean,
            std: n.std,
        }
    }
}

impl Params for TensorParams {
    fn check(&self) -> Result<(), String> {
        cortex_core::limits::FrameLimits::DEFAULT
            .check(self.width, self.height)
            .map_err(|e| e.to_string())?;
        if self.std.iter().any(|s| !s.is_finite() || *s <= 0.0) {
            return Err("`std` must be finite and > 0 per channel".into());
        }
        if self.mean.iter().any(|m| !m.is_finite()) {
            return Err("`mean` must be finite".into());
        }
        Ok(())
    }
}

fn frame_tensor() -> OpDesc {
    OpDesc::builder::<TensorParams>(
        "model.frame_tensor",
        "a frame as a model's 1x3xHxW f32 tensor: resized, normalised per channel",
    )
    .input::<RgbFrame>("frame")
    .param("width", "tensor width, pixels")
    .param("height", "tensor height, pixels")
    .param("bgr", "channels in BGR order")
    .param("mean", "mean per model channel, [0, 1] scale")
    .param(
        "std",
        "standard deviation per model channel, [0, 1] scale; > 0",
    )
    .fills(|i, p: &TensorParams, out: &mut Tensor4| {
        let norm = Normalize {
            order: if p.bgr {
                ChannelOrder::Bgr
            } else {
                ChannelOrder::Rgb
            },
            mean: p.mean,
            std: p.std,
        };
        Ok(image_to_tensor_into(
            i.arg(0)?,
            (p.height, p.width),
            &norm,
            out,
        )?)
    })
}

/// The parameters of `model.infer`: the model's file and its input shape.
#[derive(Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct InferParams {
    /// The ONNX file; in a graph file, a relative path is from the file's
    /// folder.
    pub path: String,
    /// The input's shape `[n, c, h, w]`; the one the model declares when
    /// absent.
    pub input: Option<[usize; 4]>,
    /// Threads it runs on (0: the cores the process may use).
    pub threads: usize,
    /// The model, loaded when the graph is built.
    #[serde(skip)]
    model: Option<Arc<Model>>,
}

impl Params for InferParams {
    fn check(&self) -> Result<(), String> {
        names_a_file(&self.path, "the model's")
    }

    fn prepare(&mut self) -> Result<(), String> {
        let shape = self.input.map_or(InputShape::Declared, InputShape::Fixed);
        let model = Model::load(&self.path, shape).map_err(|e| e.to_string())?;
        set_threads(&model, self.threads);
        self.model = Some(Arc::new(model));
        Ok(())
    }
}

fn infer() -> OpDesc {
    OpDesc::builder::<InferParams>(
        "model.infer",
        "an ONNX model's first output for one f32 NCHW tensor (loaded once)",
    )
    .input::<Tensor4>("tensor")
    .file(
        "path",
        "the model's ONNX file, from the graph file's folder",
    )
    .param(
        "input",
        "the input's shape [n, c, h, w] (null: as the model declares)",
    )
    .param(
        "threads",
        "threads it runs on (0: the cores the process may use)",
    )
    .kernels(&kernel_labels::<Infer>())
    .fills(|i, p: &InferParams, out: &mut ArrayD<f32>| {
        let m = p.model.as_ref().ok_or("the model was not loaded")?;
        Ok(infer_into(m, i.arg::<Array4<f32>>(0)?, out)?)
    })
}

/// The parameters of `model.read_text`: the recogniser's file, its batch
/// and width.
#[derive(Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReadTextParams {
    /// The ONNX file (PP-OCR's `ch_PP-OCRv4_rec_infer.onnx`); in a graph
    /// file, a relative path is from the file's folder.
    pub path: String,
    /// Boxes read per run: the batch size limit.
    pub batch: usize,
    /// Least batch width at height 48 (PaddleOCR's 320).
    pub width: usize,
    /// Widest batch at height 48; wider boxes are squeezed.
    pub max_width: usize,
    /// Threads it runs on (0: the cores the process may use).
    pub threads: usize,
    /// The recogniser, loaded when the graph is built.
    #[serde(skip)]
    recognizer: Option<Arc<TextRecognizer>>,
}

impl Default for ReadTextParams {
    fn default() -> Self {
        ReadTextParams {
            path: String::new(),
            batch: 6,
            width: 320,
            max_width: 1600,
            threads: 0,
            recognizer: None,
        }
    }
}

/// The largest batch a region op takes: a batch tensor is allocated once,
/// `batch × 3 × h × w`, and checked against the tensor limit at load.
const MAX_BATCH: usize = 1024;

fn check_batch(batch: usize) -> Result<(), String> {
    if batch == 0 || batch > MAX_BATCH {
        return Err(format!("`batch` is {batch}; give 1 to {MAX_BATCH}"));
    }
    Ok(())
}

impl Params for ReadTextParams {
    fn check(&self) -> Result<(), String> {
        names_a_file(&self.path, "the recogniser's")?;
        check_batch(self.batch)?;
        if self.width < 8 || self.width > 8192 {
            return Err(format!("`width` is {}; give 8 to 8192", self.width));
        }
        if self.max_width < self.width || self.max_width > 8192 {
            return Err(format!(
                "`max_width` is {}; give `width` ({}) to 8192",
                self.max_width, self.width
            ));
        }
        Ok(())
    }

    fn prepare(&mut self) -> Result<(), String> {
        let r = TextRecognizer::load(&self.path, self.batch, self.width, self.max_width)
            .map_err(|e| e.to_string())?;
        if self.threads > 0 {
            r.set_threads(self.threads);
        }
        self.recognizer = Some(Arc::new(r));
        Ok(())
    }
}

fn read_text() -> OpDesc {
    OpDesc::builder::<ReadTextParams>(
        "model.read_text",
        "the string in each text box, by PP-OCR's recogniser (CTC greedy decoding; loaded once)",
    )
    .input::<RgbFrame>("frame")
    .input::<Vec<TextBox>>("boxes")
    .file(
        "path",
        "the recogniser's ONNX file, from the graph file's folder",
    )
    .param(
        "batch",
        "boxes read per run (the batch size limit), 1 to 1024",
    )
    .param(
        "width",
        "widest box at height 48, pixels; wider ones are squeezed",
    )
    .param(
        "threads",
        "threads it runs on (0: the cores the process may use)",
    )
    .kernels(&kernel_labels::<Infer>())
    .fills(|i, p: &ReadTextParams, out: &mut Vec<TextLine>| {
        let r = p
            .recognizer
            .as_ref()
            .ok_or("the recogniser was not loaded")?;
        Ok(r.read_into(i.arg(0)?, i.arg::<Vec<TextBox>>(1)?, out)?)
    })
}

/// The parameters of `model.infer_regions`: the model, its batch input
/// shape, and how a region becomes an image of it.
#[derive(Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RegionsParams {
    /// The ONNX file; in a graph file, a relative path is from the file's
    /// folder.
    pub path: String,
    /// The input's shape `[batch, 3, h, w]`: `batch` regions a run.
    pub input: [usize; 4],
    /// Channels in BGR order.
    pub bgr: bool,
    /// Mean per model channel, on the [0, 1] scale.
    pub mean: [f32; 3],
    /// Standard deviation per model channel, on the [0, 1] scale.
    pub std: [f32; 3],
    /// Keep each region's aspect ratio (resize to the height, pad the
    /// width with 0); else stretch it to the input.
    pub keep_aspect: bool,
    /// Threads it runs on (0: the cores the process may use).
    pub threads: usize,
    /// The model and its buffers, made when the graph is built.
    #[serde(skip)]
    loaded: Option<Arc<(Model, std::sync::Mutex<RegionRunner>)>>,
}

impl Default for RegionsParams {
    fn default() -> Self {
        let n = Normalize::PP_OCR;
        RegionsParams {
            path: String::new(),
            input: [8, 3, 224, 224],
            bgr: n.order == ChannelOrder::Bgr,
            mean: n.mean,
            std: n.std,
            keep_aspect: false,
            threads: 0,
            loaded: None,
        }
    }
}

impl Params for RegionsParams {
    fn check(&self) -> Result<(), String> {
        names_a_file(&self.path, "the model's")?;
        let [n, c, h, w] = self.input;
        check_batch(n)?;
        if c != 3 {
            return Err(format!(
                "`input` has {c} channels; a region is a 3-channel image"
            ));
        }
        cortex_core::limits::FrameLimits::DEFAULT
            .check(w, h)
            .map_err(|e| e.to_string())?;
        if self.std.iter().any(|s| !s.is_finite() || *s <= 0.0) {
            return Err("`std` must be finite and > 0 per channel".into());
        }
        if self.mean.iter().any(|m| !m.is_finite()) {
            return Err("`mean` must be finite".into());
        }
        Ok(())
    }

    fn prepare(&mut self) -> Result<(), String> {
        let model =
            Model::load(&self.path, InputShape::Fixed(self.input)).map_err(|e| e.to_string())?;
        set_threads(&model, self.threads);
        self.loaded = Some(Arc::new((
            model,
            std::sync::Mutex::new(RegionRunner::default()),
        )));
        Ok(())
    }
}

fn infer_regions() -> OpDesc {
    OpDesc::builder::<RegionsParams>(
        "model.infer_regions",
        "an ONNX model's output for each box of a frame: cropped upright, resized, batched (loaded once)",
    )
    .input::<RgbFrame>("frame")
    .input::<Vec<TextBox>>("boxes")
    .file("path", "the model's ONNX file, from the graph file's folder")
    .param("input", "the input's shape [batch, 3, h, w]; batch 1 to 1024")
    .param("bgr", "channels in BGR order")
    .param("mean", "mean per model channel, [0, 1] scale")
    .param("std", "standard deviation per model channel, [0, 1] scale; > 0")
    .param("keep_aspect", "resize to the height and pad, rather than stretch")
    .param("threads", "threads it runs on (0: the cores the process may use)")
    .kernels(&kernel_labels::<Infer>())
    .fills(|i, p: &RegionsParams, out: &mut Vec<Output>| {
        let loaded = p.loaded.as_ref().ok_or("the model was not loaded")?;
        let (model, runner) = &**loaded;
        let prep = RegionPrep {
            norm: Normalize {
                order: if p.bgr { ChannelOrder::Bgr } else { ChannelOrder::Rgb },
                mean: p.mean,
                std: p.std,
            },
            keep_aspect: p.keep_aspect,
            pad: 0.0,
        };
        let boxes = i.arg::<Vec<TextBox>>(1)?;
        out.truncate(boxes.len());
        out.resize_with(boxes.len(), || Output::zeros(IxDyn(&[0])));
        let mut runner = runner.lock().unwrap_or_else(|e| e.into_inner());
        runner.run(i.arg(0)?, boxes.iter().map(|b| &b.quad), model, &prep, |k, _, row| {
            let o = &mut out[k];
            if o.shape() != row.shape() {
                *o = Output::zeros(IxDyn(row.shape()));
            }
            o.assign(&row);
            Ok(())
        })?;
        Ok(())
    })
}
