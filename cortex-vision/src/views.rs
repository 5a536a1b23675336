//! What each output type means to a reader, as JSON: one view per type,
//! registered with the op library ([`crate::library`]) and read by
//! everything that shows results — the runner's JSON lines and table
//! (graph files and the compiled L2's columns), the GStreamer element's
//! messages and Python's result dicts.

use serde_json::{json, Value as Json};

use crate::l2::BlurVerdict;
use crate::ops::qp_map::QpMap;
use crate::ops::roi_regions::RoiRegions;
use crate::ops::{BlurReport, EncodedRoi, SceneChange, ScoreMap};

/// A blur verdict: the sharpness, its baseline and both rules.
pub fn blur_verdict(b: &BlurVerdict) -> Json {
    json!({ "sharpness": b.variance, "baseline": b.baseline, "blurry": b.is_blurry, "below_100": b.below_threshold })
}

/// A blur report: the Laplacian's variance and the threshold rule.
pub fn blur_report(b: &BlurReport) -> Json {
    json!({ "sharpness": b.variance, "blurry": b.is_blurry })
}

/// A scene change: SSIM to the previous frame and whether the scene cut (a
/// first frame has nothing to compare with: not a cut).
pub fn scene_change(s: &SceneChange) -> Json {
    json!({ "ssim": s.ssim, "cut": s.changed && s.ssim.is_some() })
}

/// An encoded region: its box `[x, y, width, height]`, score and size.
pub fn encoded_roi(r: &EncodedRoi) -> Json {
    let b = &r.bbox;
    json!({ "roi": [b.x, b.y, b.width, b.height], "score": f64::from(r.score), "jpeg_bytes": r.jpeg.len() })
}

/// Regions: their boxes `[x, y, width, height]` and the map's peak.
pub fn roi_regions(r: &RoiRegions) -> Json {
    let boxes: Vec<[usize; 4]> = r
        .regions
        .iter()
        .map(|g| [g.bbox.x, g.bbox.y, g.bbox.width, g.bbox.height])
        .collect();
    json!({ "regions": boxes, "peak": f64::from(r.peak) })
}

/// A score map: its size `[width, height]` (the values are a picture, see
/// `--dump`).
pub fn score_map(m: &ScoreMap) -> Json {
    json!({ "size": [m.ncols(), m.nrows()] })
}

/// A QP map: its blocks across and down.
pub fn qp_map(q: &QpMap) -> Json {
    json!({ "blocks": [q.cols, q.rows] })
}
