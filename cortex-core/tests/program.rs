//! Snapshots (insta) of the lowered program's text form: per mode and
//! engine, the steps of a frame and its buffers, for the library's L2
//! graph (rates, fused groups, buffers, two states), the stateful graph of
//! the tool snapshots, and a diamond. Each `.snap` file was read by eye
//! against the graph before it was committed. Beside them, properties that
//! hold for any graph: every frame calls exactly its plan's nodes.

mod common;

use common::{compile, stateful_spec};
use cortex_core::access::StripShape;
use cortex_core::lower::{lower, Step, When};
use cortex_core::spec::{ArgSpec, GraphSpec};

/// The library's L2 as `cortex_vision::l2` declares it: ten nodes filling
/// their buffers, two states, three modes, POWER_SAVE rating `text` and
/// `regions`, strip forms on gray, center and fused (maps) and laplacian,
/// scene and motion (reductions).
pub fn l2_library_spec() -> GraphSpec {
    let c = ArgSpec::constant;
    let b = ArgSpec::buffer;
    let n = ArgSpec::from;
    GraphSpec::builder("L2")
        .input("frame", "RgbFrame")
        .state("_prev_gray", "GrayImage", "GrayImage::zeros((0, 0))")
        .state("_sharpness", "BlurVerdict", "BlurVerdict::INITIAL")
        .mode(
            "BALANCED",
            [("wc", 0.4), ("wt", 0.3), ("ws", 0.2), ("wm", 0.1)],
        )
        .mode(
            "POWER_SAVE",
            [("wc", 0.7), ("wt", 0.3), ("ws", 0.0), ("wm", 0.0)],
        )
        .rate("text", 4)
        .trigger("scene.changed")
        .rate("regions", 4)
        .trigger("scene.changed")
        .mode(
            "TEXT_FOCUS",
            [("wc", 0.2), ("wt", 0.6), ("ws", 0.2), ("wm", 0.0)],
        )
        .node("gray", "ops::to_gray_into", [n("frame"), b()])
        .ty("GrayImage")
        .compilable()
        .strip(StripShape::Map)
        .fallible()
        .node("laplacian", "ops::blur_detector", ["gray"])
        .compilable()
        .strip(StripShape::Reduction)
        .fallible()
        .node("scene", "ops::scene_change", ["gray", "_prev_gray"])
        .compilable()
        .strip(StripShape::Reduction)
        .fallible()
        .node("blur", "blur_verdict", ["laplacian", "scene", "_sharpness"])
        .compilable()
        .node(
            "center",
            "ops::center_crop_into",
            [n("gray"), c("&CenterParams::DEFAULT"), b()],
        )
        .ty("ScoreMap")
        .compilable()
        .strip(StripShape::Map)
        .weight_key("wc")
        .fallible()
        .node(
            "text",
            "ops::text_roi::text_map_into",
            [n("gray"), c("&TextRoiParams::DEFAULT"), b()],
        )
        .ty("ScoreMap")
        .weight_key("wt")
        .fallible()
        .node(
            "saliency",
            "ops::saliency_dft_into",
            [n("gray"), c("&SaliencyParams::DEFAULT"), b()],
        )
        .ty("ScoreMap")
        .compilable()
        .weight_key("ws")
        .fallible()
        .node(
            "motion",
            "ops::motion_map_into",
            [n("gray"), n("_prev_gray"), c("&MotionParams::DEFAULT"), b()],
        )
        .ty("ScoreMap")
        .compilable()
        .strip(StripShape::Reduction)
        .weight_key("wm")
        .fallible()
        .node(
            "fused",
            "ops::score_fusion_into",
            [
                n("center"),
                n("text"),
                n("saliency"),
                n("motion"),
                n("weights"),
                b(),
            ],
        )
        .ty("ScoreMap")
        .compilable()
        .strip(StripShape::Map)
        .fallible()
        .node(
            "roi",
            "ops::encode_roi_into",
            [n("frame"), n("fused"), c("&EncoderParams::DEFAULT"), b()],
        )
        .ty("EncodedRoi")
        .external()
        .fallible()
        .node(
            "regions",
            "ops::roi_regions::roi_regions_into",
            [n("fused"), c("&RegionParams::DEFAULT"), b()],
        )
        .ty("RoiRegions")
        .fallible()
        .node(
            "qp_map",
            "ops::qp_map::qp_map_into",
            [n("fused"), n("blur"), c("&QpMapParams::DEFAULT"), b()],
        )
        .ty("QpMap")
        .fallible()
        .write("gray", "_prev_gray")
        .write("blur", "_sharpness")
        .output("blur", "BlurVerdict")
        .output("scene", "SceneChange")
        .output("fused", "ScoreMap")
        .output("roi", "EncodedRoi")
        .output("regions", "RoiRegions")
        .output("qp_map", "QpMap")
        .build()
}

fn diamond() -> GraphSpec {
    GraphSpec::builder("Diamond")
        .input("x", "u8")
        .node("a", "f", ["x"])
        .node("b", "f", ["a"])
        .node("c", "f", ["a"])
        .node("d", "f", ["b", "c"])
        .output("d", "u8")
        .build()
}

#[test]
fn l2_program() {
    let (ir, plans) = compile(&l2_library_spec());
    insta::assert_snapshot!(lower(&ir, &plans, true).text(&ir));
}

#[test]
fn stateful_program() {
    let (ir, plans) = compile(&stateful_spec());
    insta::assert_snapshot!(lower(&ir, &plans, false).text(&ir));
}

#[test]
fn diamond_program() {
    let (ir, plans) = compile(&diamond());
    insta::assert_snapshot!(lower(&ir, &plans, true).text(&ir));
}

/// Every frame of every mode calls each node its plan runs exactly once
/// (the pipelined stages together), and nothing else; the run-time frame
/// calls every node of the full graph, each guarded by the plan.
#[test]
fn every_frame_calls_exactly_its_plan() {
    for spec in [l2_library_spec(), stateful_spec(), diamond()] {
        let (ir, plans) = compile(&spec);
        let program = lower(&ir, &plans, true);
        let sorted = |mut v: Vec<u32>| {
            v.sort_unstable();
            v
        };
        for (mode, plan) in program.modes.iter().zip(&plans) {
            let want = sorted(plan.order.to_vec());
            assert_eq!(sorted(mode.sequential.calls()), want, "{}", mode.name);
            let par = mode.parallel.as_ref().expect("parallel lowered");
            assert_eq!(sorted(par.calls()), want, "{}", mode.name);
            let p = mode.pipelined.as_ref().expect("pipelined lowered");
            let mut both = p.first.calls();
            both.extend(p.second.calls());
            assert_eq!(sorted(both), want, "{}", mode.name);
            // The first stage reads no state and commits nothing.
            assert!(p.first.calls().iter().all(|&n| p.first_stage[n as usize]));
            assert!(!p
                .first
                .steps
                .iter()
                .any(|s| matches!(s, Step::CommitState { .. } | Step::NextFrame)));
        }
        let rt = &program.run_time.sequential;
        assert_eq!(rt.calls().len(), ir.nodes.len());
        assert!(rt
            .steps
            .iter()
            .all(|s| !matches!(s, Step::Call { when, .. } if *when != When::Plan)));
    }
}

/// A plan chosen at run time runs a group of the full graph whole only
/// when it runs every member and every node whose value they read: L2's
/// JSON fields under BALANCED keep both groups whole; TEXT_FOCUS (no
/// `motion`) breaks the big group, which has it as a member, and `fused`'s,
/// which reads it.
#[test]
fn a_run_time_plan_runs_a_group_whole_only_with_its_members_and_reads() {
    use cortex_core::passes::dce::plan_for_outputs;
    use cortex_core::OutputSet;
    let (ir, plans) = compile(&l2_library_spec());
    let program = lower(&ir, &plans, true);
    let groups = &program.run_time.sequential.fusion.groups;
    let names = |ids: &[u32]| -> Vec<String> {
        ids.iter()
            .map(|&n| ir.nodes[n as usize].name.to_string())
            .collect()
    };
    assert_eq!(groups.len(), 2);
    assert_eq!(
        names(&groups[0].nodes),
        ["gray", "laplacian", "scene", "center", "motion"]
    );
    assert_eq!(names(&groups[0].read_nodes(&ir)), Vec::<String>::new());
    assert_eq!(names(&groups[1].nodes), ["fused"]);
    assert_eq!(
        names(&groups[1].read_nodes(&ir)),
        ["center", "text", "saliency", "motion"]
    );
    let json = OutputSet::named(&ir, &["blur", "scene", "roi"]).unwrap();
    let cut = |mode: usize| plan_for_outputs(&ir, plans[mode].zero_pattern, json, "json");
    let (balanced, text_focus) = (cut(0), cut(2));
    assert!(!balanced.is_live(ir.node_id("regions").unwrap()));
    for g in groups {
        assert!(g.runs_whole(&ir, |n| balanced.is_live(n)));
        assert!(!g.runs_whole(&ir, |n| text_focus.is_live(n)));
    }
    // Every member of `fused`'s group runs under TEXT_FOCUS; what it reads
    // does not.
    assert!(groups[1].nodes.iter().all(|&n| text_focus.is_live(n)));
}
