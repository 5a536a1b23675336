//! Lesson 5 — a kernel of your own. A node is any function taking
//! references; written like the library's kernels it fills a caller's
//! buffer (`*_into`), validates its parameters, checks the frame against
//! the resource policy (`cortex::limits`) before allocating, and returns a
//! typed error instead of panicking. A node's error aborts the frame as
//! `PipelineError::Node` naming the node, and leaves the state untouched.
//!
//! ```text
//! cargo run --release --example custom_kernel
//! ```

use cortex::cortex_graph;
use cortex::limits::{FrameLimits, LimitError};
use cortex::ops::{self, GrayImage, RgbFrame, ScoreMap};
use cortex::PipelineError;

/// Why [`edge_map_into`] refused a call.
#[derive(Debug, thiserror::Error)]
pub enum EdgeError {
    /// The image has no pixels.
    #[error("empty image")]
    Empty,
    /// A parameter is out of its range.
    #[error("edge threshold must be finite and in [0, 255], got {0}")]
    Threshold(f32),
    /// The frame is outside the resource policy.
    #[error(transparent)]
    TooLarge(#[from] LimitError),
}

/// Parameters of [`edge_map_into`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EdgeParams {
    /// Horizontal or vertical step (gray levels) that counts as an edge.
    pub threshold: f32,
}

impl EdgeParams {
    /// A step of 24 gray levels.
    pub const DEFAULT: EdgeParams = EdgeParams { threshold: 24.0 };
}

/// 1.0 where the larger of the right and lower neighbour differences
/// reaches the threshold, else 0.0; the last row and column compare with
/// themselves. Overwrites `out` whatever it held, reusing its allocation.
pub fn edge_map_into(
    gray: &GrayImage,
    params: &EdgeParams,
    out: &mut ScoreMap,
) -> Result<(), EdgeError> {
    if !(params.threshold.is_finite() && (0.0..=255.0).contains(&params.threshold)) {
        return Err(EdgeError::Threshold(params.threshold));
    }
    let (h, w) = gray.dim();
    if h == 0 || w == 0 {
        return Err(EdgeError::Empty);
    }
    FrameLimits::current().check(w, h)?;
    if out.dim() != (h, w) {
        *out = ScoreMap::zeros((h, w));
    }
    for ((y, x), v) in out.indexed_iter_mut() {
        let p = f32::from(gray[(y, x)]);
        let right = f32::from(gray[(y, (x + 1).min(w - 1))]);
        let down = f32::from(gray[((y + 1).min(h - 1), x)]);
        let step = (p - right).abs().max((p - down).abs());
        *v = if step >= params.threshold { 1.0 } else { 0.0 };
    }
    Ok(())
}

/// Fraction of the map at 1.0.
pub fn coverage(map: &ScoreMap) -> f64 {
    map.iter().filter(|&&v| v >= 1.0).count() as f64 / map.len().max(1) as f64
}

cortex_graph! {
    /// How much of a frame is edges, by a kernel of this program.
    pub pipeline Edges {
        input frame: RgbFrame;
        input threshold: EdgeParams;

        node gray: GrayImage = ops::to_gray_into(frame, &mut gray)?;
        node edges: ScoreMap = edge_map_into(gray, threshold, &mut edges)?;
        node share = coverage(edges);

        output share: f64;
    }
}

/// Runs the pipeline on a frame of the synthetic clip, then with a bad
/// parameter, and returns what it printed.
pub fn run() -> Result<String, Box<dyn std::error::Error>> {
    let mut pipeline = Edges::new();
    let frame = &cortex::l2::demo_clip(1, 320, 240)[0];
    let out = pipeline.run(EdgesMode::Full, frame, &EdgeParams::DEFAULT)?;
    let mut report = format!("edges cover {:.1} % of the frame\n", 100.0 * out.share);
    // A bad parameter is the node's typed error, named by the pipeline.
    let bad = EdgeParams {
        threshold: f32::NAN,
    };
    match pipeline.run(EdgesMode::Full, frame, &bad) {
        Err(PipelineError::Node { node, source }) => {
            assert_eq!(node, "edges");
            assert!(source.downcast_ref::<EdgeError>().is_some());
            report += &format!("refused: node `{node}`: {source}\n");
        }
        other => return Err(format!("expected the edges node's error, got {other:?}").into()),
    }
    Ok(report)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    print!("{}", run()?);
    Ok(())
}
