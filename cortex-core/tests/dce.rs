//! The dead-node-elimination semantics, pinned: L2's POWER_SAVE case,
//! helper chains, state reads and writes, weighted vs required edges, all
//! zero-weight patterns, and a property test over random graphs checking that
//! every plan's outputs equal the full graph's.

use cortex_core::check::check;
use cortex_core::dce::{plan_for_outputs, plan_for_pattern, plans_for_all_patterns};
use cortex_core::ir::{Arg, Endpoint, GraphIr};
use cortex_core::plan::{Plan, Reason};
use cortex_core::spec::{GraphBuilder, GraphSpec};
use cortex_core::OutputSet;

mod common;
use common::{interpret, mix, random_spec};
use proptest::prelude::*;

fn ir_of(spec: &GraphSpec) -> (GraphIr, Vec<Plan>) {
    let c = check(spec);
    assert!(c.diagnostics.is_empty(), "{:#?}", c.diagnostics);
    (c.ir.unwrap(), c.mode_plans)
}

fn names(ir: &GraphIr, ids: impl IntoIterator<Item = u32>) -> Vec<String> {
    ids.into_iter()
        .map(|i| ir.nodes[i as usize].name.to_string())
        .collect()
}

fn eliminated(ir: &GraphIr, p: &Plan) -> Vec<(String, Reason)> {
    p.eliminated
        .iter()
        .map(|e| (ir.nodes[e.node as usize].name.to_string(), e.reason))
        .collect()
}

/// The L2 graph without its ROI encoder, up to the weighted `text` map;
/// [`l2_tail`] adds the fusion, the write, the modes and the outputs, so a
/// test can vary what lies between.
fn l2_head() -> GraphBuilder {
    GraphSpec::builder("L2")
        .input("frame", "Frame")
        .state("_prev_gray", "Gray", "Gray::default()")
        .node("gray", "ops::gray", ["frame"])
        .node("blur", "ops::blur", ["gray"])
        .node("scene", "ops::scene", ["gray", "_prev_gray"])
        .node("center", "ops::center", ["gray"])
        .weight_key("wc")
        .node("text", "ops::text", ["gray"])
        .weight_key("wt")
}

fn l2_tail(b: GraphBuilder) -> GraphBuilder {
    b.node(
        "fused",
        "ops::fused",
        ["center", "text", "saliency", "motion", "weights"],
    )
    .write("gray", "_prev_gray")
    .mode(
        "BALANCED",
        [("wc", 0.4), ("wt", 0.3), ("ws", 0.2), ("wm", 0.1)],
    )
    .mode(
        "POWER_SAVE",
        [("wc", 0.7), ("wt", 0.3), ("ws", 0.0), ("wm", 0.0)],
    )
    .output("fused", "T")
    .output("scene", "T")
    .output("blur", "T")
}

/// The L2 graph (without the ROI encoder).
fn l2() -> GraphSpec {
    l2_tail(
        l2_head()
            .node("saliency", "ops::saliency", ["gray"])
            .weight_key("ws")
            .node("motion", "ops::motion", ["gray", "_prev_gray"])
            .weight_key("wm"),
    )
    .build()
}

#[test]
fn l2_power_save_eliminates_exactly_saliency_and_motion() {
    let (ir, plans) = ir_of(&l2());
    let ps = &plans[1];
    assert_eq!(ps.label, "POWER_SAVE");
    let ws = ir.weight_keys.iter().position(|k| k == "ws").unwrap() as u32;
    let wm = ir.weight_keys.iter().position(|k| k == "wm").unwrap() as u32;
    assert_eq!(
        eliminated(&ir, ps),
        [
            ("saliency".to_string(), Reason::ZeroWeight { key: ws }),
            ("motion".to_string(), Reason::ZeroWeight { key: wm })
        ]
    );
    assert_eq!(
        names(&ir, ps.order.iter().copied()),
        ["gray", "blur", "scene", "center", "text", "fused"]
    );
    assert!(ps.writes_state(0), "scene still reads _prev_gray");
    assert!(plans[0].eliminated.is_empty());
}

#[test]
fn helper_chain_of_an_eliminated_node_disappears() {
    // saliency now needs two helpers that nothing else uses.
    let spec = l2_tail(
        l2_head()
            .node("pyr", "ops::pyr", ["gray"])
            .node("pyr2", "ops::pyr", ["pyr"])
            .node("saliency", "ops::saliency", ["pyr2"])
            .weight_key("ws")
            .node("motion", "ops::motion", ["gray", "_prev_gray"])
            .weight_key("wm"),
    )
    .build();
    let (ir, plans) = ir_of(&spec);
    let gone = eliminated(&ir, &plans[1]);
    let gone_names: Vec<&str> = gone.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(gone_names, ["pyr", "pyr2", "saliency", "motion"]);
    assert_eq!(gone[0].1, Reason::NoLiveConsumer);
    assert_eq!(gone[1].1, Reason::NoLiveConsumer);
    // `gray` feeds live nodes too, so it stays.
    assert!(plans[1].is_live(ir.node_id("gray").unwrap()));
}

#[test]
fn state_write_nobody_reads_is_dropped_with_its_writer() {
    // `_prev_edges` is read only by `motion`, which POWER_SAVE eliminates: the
    // write is skipped and `edges`, which exists only to write it, goes too.
    let spec = l2_tail(
        l2_head()
            .state("_prev_edges", "E", "E::default()")
            .node("edges", "ops::edges", ["gray"])
            .node("saliency", "ops::saliency", ["gray"])
            .weight_key("ws")
            .node(
                "motion",
                "ops::motion",
                ["gray", "_prev_gray", "_prev_edges"],
            )
            .weight_key("wm")
            .write("edges", "_prev_edges"),
    )
    .build();
    let (ir, plans) = ir_of(&spec);
    let ps = &plans[1];
    assert!(!ps.writes_state(1));
    assert!(ps.writes_state(0));
    assert_eq!(
        ps.reason(ir.node_id("edges").unwrap()),
        Some(Reason::NoLiveConsumer)
    );
    // BALANCED keeps everything.
    assert!(plans[0].writes_state(1) && plans[0].is_live(ir.node_id("edges").unwrap()));
}

#[test]
fn writer_of_a_live_state_stays_even_if_only_the_state_needs_it() {
    let spec = GraphSpec::builder("S")
        .input("x", "u8")
        .state("_prev", "u8", "0")
        .node("a", "ops::a", ["x"])
        .node("keep", "ops::keep", ["x"])
        .node("out", "ops::out", ["a", "_prev"])
        .write("keep", "_prev")
        .output("out", "T")
        .build();
    let (ir, plans) = ir_of(&spec);
    assert_eq!(plans[0].label, "FULL");
    assert!(
        plans[0].is_live(ir.node_id("keep").unwrap()),
        "its state is read by a live node"
    );
    assert!(plans[0].writes_state(0));
}

#[test]
fn zero_weight_node_keeps_running_while_its_state_is_read() {
    // `detail` (ws) feeds `sharpen` through a weighted edge (Option) and
    // writes `_prev_detail`, which `flow` reads unscaled. With ws = 0 the
    // full graph still feeds `flow` detail's real value, so `detail` must
    // keep running; `sharpen` then receives `Some` exactly as in the full graph.
    let w = |with_state: bool| {
        let b = GraphSpec::builder("W").input("x", "u8");
        let b = if with_state {
            b.state("_prev_detail", "u8", "0")
        } else {
            b
        };
        let b = b
            .node("detail", "ops::detail", ["x"])
            .weight_key("ws")
            .node("sharpen", "ops::sharpen", ["detail", "x"]);
        let b = if with_state {
            b.node("flow", "ops::flow", ["x", "_prev_detail"])
                .write("detail", "_prev_detail")
        } else {
            b.node("flow", "ops::flow", ["x"])
        };
        b.node("sum", "ops::sum", ["sharpen", "flow"])
            .mode("ON", [("ws", 1.0)])
            .mode("OFF", [("ws", 0.0)])
            .output("sum", "T")
            .build()
    };
    let spec = w(true);
    let (ir, plans) = ir_of(&spec);
    assert!(plans[1].eliminated.is_empty(), "{:?}", plans[1].eliminated);
    assert!(plans[1].writes_state(0));
    // Without the state reader, ws = 0 cuts `detail` and `sharpen` gets None.
    let no_state = w(false);
    let (ir2, plans2) = ir_of(&no_state);
    assert_eq!(
        eliminated(&ir2, &plans2[1]),
        [("detail".to_string(), Reason::ZeroWeight { key: 0 })]
    );
    assert!(plans2[1].is_live(ir2.node_id("sharpen").unwrap()));
    let _ = ir;
}

#[test]
fn zero_weight_output_is_absent_or_rejected() {
    let o = |detail_optional: bool| {
        let b = GraphSpec::builder("O")
            .input("x", "u8")
            .node("detail", "ops::detail", ["x"])
            .weight_key("ws")
            .node("sum", "ops::sum", ["detail", "x"])
            .mode("ON", [("ws", 1.0)])
            .mode("OFF", [("ws", 0.0)])
            .output("sum", "T");
        if detail_optional {
            b.optional_output("detail", "T")
        } else {
            b.output("detail", "T")
        }
        .build()
    };
    let spec = o(true);
    let (ir, plans) = ir_of(&spec);
    assert!(!plans[1].is_live(ir.node_id("detail").unwrap()));
    assert!(plans[1].missing_outputs.is_empty(), "optional");
    let c = check(&o(false));
    assert!(c.ir.is_none());
    assert!(
        c.diagnostics.iter().any(|d| d
            .message
            .contains("output `detail` is eliminated in mode `OFF`")),
        "{:#?}",
        c.diagnostics
    );
}

#[test]
fn every_zero_pattern_of_l2_keeps_the_fusion_running() {
    let (ir, _) = ir_of(&l2());
    let plans = plans_for_all_patterns(&ir);
    assert_eq!(plans.len(), 16);
    let fused = ir.node_id("fused").unwrap();
    for (p, plan) in plans.iter().enumerate() {
        assert_eq!(plan.zero_pattern, p as u64);
        assert!(plan.is_live(fused), "{}", plan.label);
        assert!(plan.missing_outputs.is_empty());
        // Exactly the weighted nodes whose bit is set are eliminated.
        for (n, node) in ir.nodes.iter().enumerate() {
            let zero = node.weight_key.is_some_and(|k| p & (1 << k) != 0);
            assert_eq!(
                plan.is_live(n as u32),
                !zero,
                "{} in {}",
                node.name,
                plan.label
            );
        }
    }
    // All weights zero: every map is None, yet the fusion and scene run.
    let all_zero = &plans[15];
    assert_eq!(
        names(&ir, all_zero.order.iter().copied()),
        ["gray", "blur", "scene", "fused"]
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// A plan computing only some outputs: a subset of the pattern's plan,
    /// and the outputs it computes equal the pattern plan's over frames
    /// (states included); each node it drops feeds only outputs left out.
    #[test]
    fn a_plan_for_some_outputs_computes_them_as_the_full_plan_does(
        shape in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>()), 1..14),
        keys in 0u8..5,
        n_states in 0u8..3,
        weight_seed in any::<u64>(),
        set_bits in any::<u64>(),
    ) {
        let spec = random_spec(&shape, keys, n_states);
        let c = check(&spec);
        prop_assert!(c.diagnostics.is_empty(), "{:#?}\n{:#?}", c.diagnostics, spec);
        let ir = c.ir.unwrap();
        let k = ir.weight_keys.len();
        let set = (0..ir.outputs.len()).filter(|i| set_bits >> (i % 64) & 1 == 1).fold(OutputSet::NONE, OutputSet::with);
        for pattern in 0..(1u64 << k) {
            let whole = plan_for_pattern(&ir, pattern, "p");
            let part = plan_for_outputs(&ir, pattern, set, "part");
            prop_assert!(part.validate_for(&ir, set).is_ok() || !part.missing_outputs.is_empty());
            for &id in part.order.iter() {
                prop_assert!(whole.is_live(id), "node {} runs only in the part", ir.nodes[id as usize].name);
            }
            let weights: Vec<u64> = (0..k).map(|i| if pattern & (1 << i) != 0 { 0 } else { 1 + mix(weight_seed ^ i as u64) % 7 }).collect();
            let a = interpret(&ir, &whole, &weights, 3);
            let b = interpret(&ir, &part, &weights, 3);
            for (fa, fb) in a.iter().zip(&b) {
                for (o, out) in ir.outputs.iter().enumerate() {
                    if set.contains(o) && !whole.missing_outputs.contains(&out.node) {
                        prop_assert_eq!(fa[o], fb[o], "output {} under pattern {:b}", ir.nodes[out.node as usize].name, pattern);
                    }
                }
            }
            // Every output read: the pattern's plan itself.
            prop_assert_eq!(&plan_for_outputs(&ir, pattern, OutputSet::ALL, "p"), &whole);
        }
    }
}

// ---------------------------------------------------------------------------
// Property test: random graphs, every pattern's plan against the full graph.

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn every_plan_matches_the_full_graph(
        shape in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>()), 1..14),
        keys in 0u8..5,
        n_states in 0u8..3,
        weight_seed in any::<u64>(),
    ) {
        let spec = random_spec(&shape, keys, n_states);
        let c = check(&spec);
        prop_assert!(c.diagnostics.is_empty(), "{:#?}\n{:#?}", c.diagnostics, spec);
        let ir = c.ir.unwrap();
        let k = ir.weight_keys.len();
        let full = plan_for_pattern(&ir, 0, "full");
        prop_assert!(full.eliminated.is_empty(), "every node of a valid graph runs when no weight is zero");
        for pattern in 0..(1u64 << k) {
            let plan = plan_for_pattern(&ir, pattern, "p");
            // Invariants: live nodes have their required inputs and states.
            for &id in plan.order.iter() {
                for arg in ir.nodes[id as usize].args.iter() {
                    match arg {
                        Arg::Value(Endpoint::Node(p)) if ir.nodes[*p as usize].weight_key.is_none() => prop_assert!(plan.is_live(*p)),
                        Arg::Value(Endpoint::State(s)) => prop_assert!(plan.writes_state(*s) && plan.is_live(ir.states[*s as usize].writer)),
                        _ => {}
                    }
                }
            }
            let weights: Vec<u64> = (0..k).map(|i| if pattern & (1 << i) != 0 { 0 } else { 1 + mix(weight_seed ^ i as u64) % 7 }).collect();
            let a = interpret(&ir, &full, &weights, 3);
            let b = interpret(&ir, &plan, &weights, 3);
            for (fa, fb) in a.iter().zip(&b) {
                for (o, out) in ir.outputs.iter().enumerate() {
                    if plan.missing_outputs.contains(&out.node) {
                        prop_assert!(fb[o].is_none());
                    } else {
                        prop_assert_eq!(fa[o], fb[o], "output {} under pattern {:b}", ir.nodes[out.node as usize].name, pattern);
                    }
                }
            }
        }
    }
}
