//! `cortex-l2 --model text=PATH`: L2 with the DNN text map
//! ([`cortex_models::l2::L2Dnn`]) as a program — the text detector loaded
//! from `PATH`, the same columns, pictures and encoder inputs as L2, plus
//! the detector's boxes (`text_boxes`, `[x, y, width, height, score]` in
//! frame pixels) in the table and the JSON lines. The detector runs at the
//! frame's size (rounded to multiples of 32): loaded once before the first
//! frame at `--size`, and again, once, when the frames are of another size.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use cortex_core::pipeline::Pipeline;
use cortex_models::l2::{L2Dnn, L2DnnOutputs};
use cortex_models::text::{stride_multiple, TextBox, TextDetector};

use crate::error::RunnerError;
use crate::model_arg::ModelArg;
use crate::sources::Frame;
use crate::{AdapterError, App, DumpError, DumpSink, FrameAdapter, Record};

/// The node of [`L2Dnn`] that runs the detector.
const DETECTOR_NODE: &str = "boxes";

/// The detector's boxes as a JSON value: `[x, y, width, height, score]`
/// each, strongest first as the detector gives them.
fn boxes_value(boxes: &[TextBox]) -> serde_json::Value {
    boxes
        .iter()
        .map(|b| {
            let r = b.bbox;
            serde_json::json!([r.x, r.y, r.width, r.height, f64::from(b.score)])
        })
        .collect()
}

/// The columns of the results table and the `outputs` of a JSON line: L2's,
/// and the detector's boxes.
pub fn record(out: &L2DnnOutputs) -> Record {
    crate::l2_view::fields(&out.blur, &out.scene, &out.roi)
        .field("text_boxes", boxes_value(&out.boxes))
}

/// `run --dump DIR`: L2's pictures.
///
/// # Errors
/// A picture that cannot be written.
pub fn dump(sink: &DumpSink<'_>, frame: &Frame, out: &L2DnnOutputs) -> Result<(), DumpError> {
    crate::l2_view::dump_maps(sink, frame, &out.fused, &out.roi)
}

/// Hands each frame to the pipeline with the detector, reloading the model
/// at the frame's size when it is not the size the detector runs at; keeps
/// the tools' note on the detector's node up to date.
struct WithDetector {
    path: PathBuf,
    detector: TextDetector,
    note: Arc<Mutex<String>>,
}

/// The tools' note on the detector's node: the file, the backend that ran
/// its last frame and the input shape it is fixed at.
fn detector_note(path: &std::path::Path, detector: &TextDetector) -> String {
    let model = detector.model();
    let [n, c, h, w] = model.input_shape();
    let backend = model
        .last_engine()
        .map_or("backend chosen at the first frame", |e| e.name());
    format!(
        "model {}: {backend}, input {n}x{c}x{h}x{w}, {} threads",
        path.display(),
        model.threads()
    )
}

impl FrameAdapter<L2Dnn> for WithDetector {
    fn with_inputs(
        &mut self,
        frame: &Frame,
        run: &mut dyn FnMut(<L2Dnn as Pipeline>::Inputs<'_>),
    ) -> Result<(), AdapterError> {
        let (h, w, _) = frame.image.dim();
        let [_, _, mh, mw] = self.detector.model().input_shape();
        if (stride_multiple(h), stride_multiple(w)) != (mh, mw) {
            // The file was loaded at `--size` once already: what can fail
            // now is the model at this size (too large, say).
            self.detector = TextDetector::load(&self.path, w, h)?;
        }
        run((&frame.image, &self.detector));
        let note = detector_note(&self.path, &self.detector);
        *self.note.lock().unwrap_or_else(|p| p.into_inner()) = note;
        Ok(())
    }
}

/// The program for the models given on the command line.
///
/// # Errors
/// [`RunnerError::Usage`] (exit 2): a model name the pipeline does not
/// declare, the same name twice, or a file that does not load as the text
/// detector (one line naming the file and the problem).
pub fn app(models: &[ModelArg], size: (usize, usize)) -> Result<App<L2Dnn>, RunnerError> {
    let mut text = None;
    for m in models {
        match m.name.as_str() {
            "text" if text.is_none() => text = Some(&m.path),
            "text" => {
                return Err(RunnerError::Usage(
                    "--model: `text` given twice".to_string(),
                ))
            }
            other => {
                return Err(RunnerError::Usage(format!(
                    "--model {other}=…: this pipeline takes one model, `text` (its text detector)"
                )))
            }
        }
    }
    let path = text
        .ok_or_else(|| RunnerError::Usage("--model: no `text=PATH` given".to_string()))?
        .clone();
    let detector = TextDetector::load(&path, size.0, size.1)
        .map_err(|e| RunnerError::Usage(format!("--model text={}: {e}", path.display())))?;
    let note = Arc::new(Mutex::new(detector_note(&path, &detector)));
    let shown = Arc::clone(&note);
    Ok(App::<L2Dnn>::with_adapter(
        crate::l2_view::NAME,
        record,
        WithDetector {
            path,
            detector,
            note,
        },
    )
    .about("L2 with a DNN text map (--model text=PATH.onnx): blur, scene cuts, text boxes, ROI score and crop")
    .dump(dump)
    .encode_regions(|out: &L2DnnOutputs| out.regions.regions.clone())
    .encode_qp_map(|out: &L2DnnOutputs| &out.qp_map)
    .node_notes(move |ir| {
        let note = shown.lock().unwrap_or_else(|p| p.into_inner()).clone();
        ir.nodes
            .iter()
            .map(|n| (n.name == DETECTOR_NODE).then(|| note.clone()))
            .collect()
    }))
}

/// The frame size the command line asks for (`--size WxH`, else the
/// runner's default), to load the detector at before the first frame.
pub(crate) fn size_arg(args: &[OsString]) -> (usize, usize) {
    let mut it = args.iter().filter_map(|a| a.to_str());
    while let Some(a) = it.next() {
        let v = match a.strip_prefix("--size") {
            Some("") => it.next(),
            Some(v) => v.strip_prefix('='),
            None => None,
        };
        if let Some((w, h)) = v.and_then(|v| v.split_once('x')) {
            if let (Ok(w), Ok(h)) = (w.parse(), h.parse()) {
                return (w, h);
            }
        }
    }
    // The synthetic clip's size when `--size` is not given.
    (640, 480)
}
