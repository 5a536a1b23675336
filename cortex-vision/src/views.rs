//! What each output type means to a reader, as JSON: one view per type,
//! registered with the op library ([`crate::library`]) and read by
//! everything that shows results — the runner's JSON lines and table
//! (graph files and the compiled L2's columns), the GStreamer element's
//! messages and Python's result dicts. Where a view summarises data (a
//! JPEG's size, a QP map's shape), its payload gives the data itself to
//! readers that take it (Python's result dicts: `bytes`, numpy arrays).

use cortex_core::dynamic::Payload;
use serde_json::{json, Value as Json};

use crate::l2::BlurVerdict;
use crate::ops::qp_map::{Neutral, QpMap};
use crate::ops::roi_regions::RoiRegions;
use crate::ops::{BlurReport, EncodedRoi, SceneChange, ScoreMap};

/// A blur verdict: the sharpness, its baseline, their ratio and both rules.
pub fn blur_verdict(b: &BlurVerdict) -> Json {
    json!({ "sharpness": b.variance, "baseline": b.baseline, "ratio": b.ratio, "blurry": b.is_blurry, "below_100": b.below_threshold })
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

/// An encoded region's payload: `jpeg`, the JPEG's bytes.
pub fn encoded_roi_payload(r: &EncodedRoi) -> Vec<(&'static str, Payload<'_>)> {
    vec![("jpeg", Payload::Bytes(&r.jpeg))]
}

/// Regions: their boxes `[x, y, width, height]`, each one's score
/// (its strongest score relative to the peak, in the boxes' order) and the
/// map's peak.
pub fn roi_regions(r: &RoiRegions) -> Json {
    let boxes: Vec<[usize; 4]> = r
        .regions
        .iter()
        .map(|g| [g.bbox.x, g.bbox.y, g.bbox.width, g.bbox.height])
        .collect();
    let scores: Vec<f64> = r.regions.iter().map(|g| f64::from(g.score)).collect();
    json!({ "regions": boxes, "scores": scores, "peak": f64::from(r.peak) })
}

/// A score map: its size `[width, height]` (the values are a picture, see
/// `--dump`).
pub fn score_map(m: &ScoreMap) -> Json {
    json!({ "size": [m.ncols(), m.nrows()] })
}

/// A QP map: its blocks across and down, a block's side in pixels, and
/// why the map is neutral (`null` when its offsets follow the scores).
pub fn qp_map(q: &QpMap) -> Json {
    let neutral = match q.neutral {
        Neutral::No => None,
        Neutral::Blurry => Some("blurry"),
        Neutral::Flat => Some("flat"),
        Neutral::Off => Some("off"),
    };
    json!({ "blocks": [q.cols, q.rows], "block": q.block, "neutral": neutral })
}

/// A QP map's payload: `offsets`, the QP offset of each block (rows down,
/// columns across).
pub fn qp_map_payload(q: &QpMap) -> Vec<(&'static str, Payload<'_>)> {
    vec![(
        "offsets",
        Payload::GridF32 {
            rows: q.rows,
            cols: q.cols,
            data: &q.offsets,
        },
    )]
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use cortex_core::dynamic::{Payload, Value};

    use crate::library::vision_ops;
    use crate::ops::qp_map::QpMap;
    use crate::ops::EncodedRoi;

    #[test]
    fn a_view_shows_the_summary_and_its_payload_the_data() {
        let ops = vision_ops();
        let roi: Value = Arc::new(EncodedRoi {
            jpeg: vec![0xff, 0xd8, 1, 2],
            ..EncodedRoi::default()
        });
        assert_eq!(ops.to_json(&roi)["jpeg_bytes"], 4);
        assert!(
            ops.to_json(&roi).get("jpeg").is_none(),
            "JSON shows the summary"
        );
        assert_eq!(
            ops.payload_of(&roi),
            vec![("jpeg", Payload::Bytes(&[0xff, 0xd8, 1, 2]))]
        );
        let qp: Value = Arc::new(QpMap {
            cols: 3,
            rows: 2,
            offsets: vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
            ..QpMap::default()
        });
        assert_eq!(ops.to_json(&qp)["blocks"], serde_json::json!([3, 2]));
        let [(
            "offsets",
            Payload::GridF32 {
                rows: 2,
                cols: 3,
                data,
            },
        )] = ops.payload_of(&qp)[..]
        else {
            panic!("the QP map's payload is its offsets");
        };
        assert_eq!(data, &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        // A type without a payload has none.
        assert!(ops.payload_of(&(Arc::new(1.5f64) as Value)).is_empty());
    }
}
