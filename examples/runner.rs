//! Lesson 4 — the runner. `cortex::runner::App` turns any pipeline whose
//! input is the frame into a command-line program: frames from the
//! synthetic clip, a Y4M stream, image files (or, with feature `opencv`,
//! any video); results as a table or JSON lines; the graph, plans and
//! profile. The program gives a record function (which outputs become
//! columns) and may add pictures for `run --dump DIR`.
//!
//! The pipeline here captures documents: it keeps a frame only when it is
//! sharp and text covers enough of it, and then emits the crop around the
//! text as a JPEG — what a scanning app does before OCR. `run --dump DIR`
//! writes each capture's crop.
//!
//! ```text
//! cargo run --release --example runner                  # the tour
//! cargo run --release --example runner -- run --json
//! cargo run --release --example runner -- run -i 'pages/*.png' --dump crops/
//! cargo run --release --example runner -- graph --format mermaid
//! ```
//!
//! Next: `examples/custom_kernel.rs`.

use std::process::ExitCode;

use cortex::cortex_graph;
use cortex::ops::{self, BlurReport, EncodedRoi, RgbFrame, ScoreMap};
use cortex::runner::{App, DumpError, Record};

/// A frame is sharp enough when its Laplacian variance reaches this.
pub const MIN_SHARPNESS: f64 = 300.0;
/// A frame holds a document when at least this fraction of it scores as text.
pub const MIN_TEXT_COVERAGE: f64 = 0.01;

/// What the gate decided, and the crop when it let the frame through.
#[derive(Debug, Clone, PartialEq)]
pub struct Capture {
    /// Laplacian variance of the frame.
    pub sharpness: f64,
    /// Fraction of the frame the text map scores above one half.
    pub coverage: f64,
    /// The crop around the text, when the frame is sharp and has text.
    pub crop: Option<EncodedRoi>,
}

cortex_graph! {
    /// Sharpness and text-coverage gate, then the text crop.
    pub pipeline DocCapture {
        input frame: RgbFrame;

        #[compilable] node gray = ops::to_gray(frame)?;
        #[compilable] node sharp = ops::blur_detector(gray)?;
        node text = ops::text_roi::text_map(gray)?;
        #[compilable] node coverage = text_coverage(text);
        #[compilable] node page = text_box(text);
        node capture = gate(frame, page, sharp, coverage)?;

        output capture: Capture;
    }
}

/// Fraction of the map above one half.
pub fn text_coverage(map: &ScoreMap) -> f64 {
    if map.is_empty() {
        return 0.0;
    }
    map.iter().filter(|&&v| v > 0.5).count() as f64 / map.len() as f64
}

/// The bounding box of everything the text map scores above one half, as
/// a map that is 1 inside the box and 0 outside — so that the ROI encoder,
/// which takes the connected region around the peak, crops all the text
/// rather than the strongest letter.
pub fn text_box(text: &ScoreMap) -> ScoreMap {
    let mut bounds: Option<(usize, usize, usize, usize)> = None;
    for ((y, x), &v) in text.indexed_iter() {
        if v > 0.5 {
            let b = bounds.get_or_insert((x, y, x, y));
            *b = (b.0.min(x), b.1.min(y), b.2.max(x), b.3.max(y));
        }
    }
    let mut out = ScoreMap::zeros(text.dim());
    if let Some((x0, y0, x1, y1)) = bounds {
        out.slice_mut(ndarray::s![y0..=y1, x0..=x1]).fill(1.0);
    }
    out
}

/// Crops and encodes the text region of a sharp frame with enough text; a
/// frame that fails the gate costs no encoding.
pub fn gate(
    frame: &RgbFrame,
    page: &ScoreMap,
    sharp: &BlurReport,
    coverage: &f64,
) -> Result<Capture, ops::OpsError> {
    let pass = sharp.variance >= MIN_SHARPNESS && *coverage >= MIN_TEXT_COVERAGE;
    let crop = if pass {
        Some(ops::encode_roi(frame, page)?)
    } else {
        None
    };
    Ok(Capture {
        sharpness: sharp.variance,
        coverage: *coverage,
        crop,
    })
}

/// The program.
pub fn app() -> App<DocCapture> {
    App::<DocCapture>::new("runner", |out: &DocCaptureOutputs| {
        let c = &out.capture;
        let bbox = c
            .crop
            .as_ref()
            .map(|r| vec![r.bbox.x, r.bbox.y, r.bbox.width, r.bbox.height]);
        Record::new()
            .field("sharpness", c.sharpness)
            .field("text", c.coverage)
            .field("captured", c.crop.is_some())
            .field("crop", bbox)
            .field("jpeg_bytes", c.crop.as_ref().map(|r| r.jpeg.len()))
    })
    .about("Captures sharp frames with text, cropped to the text")
    .dump(|sink, _frame, out| {
        if let Some(crop) = &out.capture.crop {
            let path = sink.path("crop").with_extension("jpg");
            std::fs::write(&path, &crop.jpeg).map_err(|e| DumpError {
                path,
                why: e.to_string(),
            })?;
        }
        Ok(())
    })
}

#[allow(dead_code)]
fn main() -> ExitCode {
    app().main()
}
