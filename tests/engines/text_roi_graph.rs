//! `text_roi` as a node of a `cortex_graph!` pipeline: its map feeds a
//! weighted fusion-like consumer as `Option<&ScoreMap>`, its boxes a
//! counter as `Option<&TextRoi>`, and a zero weight eliminates it.
#![cfg(feature = "ops")]

use crate::mser_support::text_frame;
use cortex::cortex_graph;
use cortex::ops::text_roi::{text_map, text_roi, TextRoi};
use cortex::ops::{GrayImage, ScoreMap};

/// What a `score_fusion` node does with an eliminated input: count it as 0.
fn mean_score(map: Option<&ScoreMap>) -> f32 {
    map.and_then(|m| m.mean()).unwrap_or(0.0)
}

fn count_boxes(roi: Option<&TextRoi>) -> usize {
    roi.map_or(0, |r| r.boxes.len())
}

cortex_graph! {
    /// Text ROI alone: the map and the boxes, switched off by `wt = 0`.
    pub pipeline TextOnly {
        input gray: GrayImage;

        mode ON  { wt: 1.0, wb: 1.0 }
        mode OFF { wt: 0.0, wb: 0.0 }

        #[external_call] #[weight_key = "wt"] node map = text_map(gray)?;
        #[external_call] #[weight_key = "wb"] node roi = text_roi(gray)?;
        #[compilable] node score = mean_score(map);
        #[compilable] node boxes = count_boxes(roi);

        output score: f32, boxes: usize;
    }
}

#[test]
fn text_roi_runs_as_a_node_and_is_eliminated_at_zero_weight() {
    let frame = text_frame(240, 320, 8);
    let mut p = TextOnly::new();

    let on = p.run(TextOnlyMode::On, &frame).expect("frame runs");
    let direct = text_roi(&frame).expect("direct call");
    assert_eq!(on.boxes, direct.boxes.len());
    assert!(on.boxes > 0);
    assert_eq!(on.score, direct.map.mean().unwrap_or(0.0));
    assert!(on.score > 0.0);

    let off = p.run(TextOnlyMode::Off, &frame).expect("frame runs");
    assert_eq!((off.score, off.boxes), (0.0, 0));
    let plan = TextOnlyMode::Off.plan();
    let gone: Vec<&str> = plan
        .eliminated
        .iter()
        .map(|e| TextOnly::ir().nodes[e.node as usize].name.as_ref())
        .collect();
    assert!(gone.contains(&"map") && gone.contains(&"roi"), "{gone:?}");
}

#[test]
fn node_errors_abort_the_frame() {
    let mut p = TextOnly::new();
    let err = p
        .run(TextOnlyMode::On, &GrayImage::zeros((0, 0)))
        .expect_err("an empty frame fails");
    assert!(err.to_string().contains("empty"), "{err}");
}
