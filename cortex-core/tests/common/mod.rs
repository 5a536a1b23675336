//! Graphs shared by the integration tests, built with [`GraphSpec::builder`].

#![allow(dead_code)] // each test crate uses a different subset

use cortex_core::check::check;
use cortex_core::ir::GraphIr;
use cortex_core::plan::Plan;
use cortex_core::spec::GraphSpec;

/// The L2 ROI pipeline's shape (the graph of `cortex::l2`): input `frame`;
/// state `_prev_gray` written by `gray`; `gray`, `blur`, `scene`, the four
/// weighted maps, their fusion and the ROI encoder; `text` and `roi` are
/// external calls, everything else compilable.
pub fn l2_spec() -> GraphSpec {
    GraphSpec::builder("L2")
        .input("frame", "RgbFrame")
        .state("_prev_gray", "GrayImage", "GrayImage::zeros((0, 0))")
        .node("gray", "ops::to_gray", ["frame"])
        .compilable()
        .fallible()
        .node("blur", "ops::blur_detector", ["gray"])
        .compilable()
        .fallible()
        .node("scene", "ops::scene_change", ["gray", "_prev_gray"])
        .compilable()
        .fallible()
        .node("center", "ops::center_crop", ["gray"])
        .compilable()
        .weight_key("wc")
        .fallible()
        .node("text", "ops::text_roi::text_map", ["gray"])
        .weight_key("wt")
        .fallible()
        .node("saliency", "ops::saliency_dft", ["gray"])
        .compilable()
        .weight_key("ws")
        .fallible()
        .node("motion", "ops::motion_map", ["gray", "_prev_gray"])
        .compilable()
        .weight_key("wm")
        .fallible()
        .node(
            "fused",
            "ops::score_fusion",
            ["center", "text", "saliency", "motion", "weights"],
        )
        .compilable()
        .fallible()
        .node("roi", "ops::encode_roi", ["frame", "fused"])
        .external()
        .fallible()
        .write("gray", "_prev_gray")
        .mode(
            "BALANCED",
            [("wc", 0.4), ("wt", 0.3), ("ws", 0.2), ("wm", 0.1)],
        )
        .mode(
            "POWER_SAVE",
            [("wc", 0.7), ("wt", 0.3), ("ws", 0.0), ("wm", 0.0)],
        )
        .output("blur", "BlurReport")
        .output("scene", "SceneChange")
        .output("fused", "ScoreMap")
        .output("roi", "EncodedRoi")
        .build()
}

/// A graph with two states and optional outputs: a running average kept in
/// `_avg`, a weighted `detail` map that is also an optional output, an
/// external `denoise` call, and a `trend` read through `_prev_trend`.
/// Mode `LEAN` zeroes `wd`, eliminating `detail` (and the optional output).
pub fn stateful_spec() -> GraphSpec {
    GraphSpec::builder("Tracker")
        .input("sample", "Vec<f32>")
        .input("gain", "f32")
        .state("_avg", "Vec<f32>", "Vec::new()")
        .state("_prev_trend", "f32", "0.0")
        .node("denoise", "ext::denoise", ["sample"])
        .node("avg", "math::ema", ["denoise", "_avg"])
        .compilable()
        .node("detail", "math::highpass", ["denoise", "gain"])
        .compilable()
        .weight_key("wd")
        .node("trend", "math::slope", ["avg", "_prev_trend"])
        .compilable()
        .fallible()
        .node("score", "math::combine", ["trend", "detail", "weights"])
        .compilable()
        .write("avg", "_avg")
        .write("trend", "_prev_trend")
        .mode("FULL_DETAIL", [("wd", 1.0)])
        .mode("LEAN", [("wd", 0.0)])
        .output("score", "f32")
        .optional_output("detail", "Vec<f32>")
        .optional_output("trend", "f32")
        .build()
}

/// Checks a spec that must be valid: its IR and mode plans.
pub fn compile(spec: &GraphSpec) -> (GraphIr, Vec<Plan>) {
    let c = check(spec);
    assert!(c.diagnostics.is_empty(), "{:#?}", c.diagnostics);
    (c.ir.expect("valid"), c.mode_plans)
}

/// [`l2_spec`] with strip forms declared as the library's L2 declares
/// them: gray, center and fused map rows; blur and scene reduce them.
pub fn l2_fused_spec() -> GraphSpec {
    use cortex_core::access::StripShape;
    let mut spec = l2_spec();
    for node in &mut spec.nodes {
        node.strip = match node.name.as_str() {
            "gray" | "center" | "fused" => Some(StripShape::Map),
            "blur" | "scene" => Some(StripShape::Reduction),
            _ => None,
        };
    }
    spec
}
