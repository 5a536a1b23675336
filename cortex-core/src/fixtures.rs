//! Graphs shared by the unit tests of several modules.

use crate::model::ir::GraphIr;
use crate::model::spec::GraphSpec;
use crate::passes::check::check;

/// A reduced L2 ROI graph: gray, scene, three weighted maps and their
/// fusion; modes BALANCED and POWER_SAVE (which zeroes `ws` and `wm`).
pub(crate) fn l2_spec() -> GraphSpec {
    GraphSpec::builder("L2")
        .input("frame", "Frame")
        .state("_prev_gray", "GrayImage", "GrayImage::default()")
        .node("gray", "ops::to_gray", ["frame"])
        .node("scene", "ops::scene_change", ["gray", "_prev_gray"])
        .node("center", "ops::center_prior", ["gray"])
        .compilable()
        .weight_key("wc")
        .node("saliency", "ops::saliency_dft", ["gray"])
        .compilable()
        .weight_key("ws")
        .node("motion", "ops::motion_map", ["gray", "_prev_gray"])
        .compilable()
        .weight_key("wm")
        .node(
            "fused",
            "ops::fuse",
            ["center", "saliency", "motion", "weights"],
        )
        .compilable()
        .write("gray", "_prev_gray")
        .mode("BALANCED", [("wc", 0.5), ("ws", 0.3), ("wm", 0.2)])
        .mode("POWER_SAVE", [("wc", 1.0), ("ws", 0.0), ("wm", 0.0)])
        .output("fused", "ScoreMap")
        .output("scene", "bool")
        .build()
}

/// Checks a spec that must be valid and returns its IR.
pub(crate) fn ir_of(spec: &GraphSpec) -> GraphIr {
    let checked = check(spec);
    match checked.ir {
        Some(ir) => ir,
        None => panic!("fixture invalid: {:#?}", checked.diagnostics),
    }
}

/// The IR of [`l2_spec`].
pub(crate) fn l2_ir() -> GraphIr {
    ir_of(&l2_spec())
}

/// Times per node of [`l2_ir`] in ms, in declaration order: gray 0.5,
/// scene 12.3, center 0.8, saliency 3.1, motion 1.4, fused 0.01.
pub(crate) const L2_MS: [f64; 6] = [0.5, 12.3, 0.8, 3.1, 1.4, 0.01];
