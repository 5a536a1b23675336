//! Rates in the shared model: the checks a graph built in code gets (the
//! same as the macro's), phase plans as DCE with held values given, the
//! steady cycle and what the tools print.

use cortex_core::dce::phase_plans;
use cortex_core::plan::Reason;
use cortex_core::rates::{mode_rates, steady_cycle};
use cortex_core::spec::{ArgSpec, GraphBuilder, GraphSpec};
use cortex_core::viz::{dce_diff, listing};

/// `frame → gray → {text (rated), edges} → fused`, `gray → cut`.
fn graph(rate: &str, every: u32, trigger: Option<&str>) -> GraphBuilder {
    let mut b = GraphSpec::builder("G")
        .input("frame", "Frame")
        .node("gray", "to_gray", [ArgSpec::name("frame")])
        .node("prep", "prep", [ArgSpec::name("gray")])
        .ty("P")
        .node("text", "text_map", [ArgSpec::name("prep")])
        .ty("Map")
        .node("cut", "is_cut", [ArgSpec::name("gray")])
        .node(
            "fused",
            "fuse",
            [ArgSpec::name("gray"), ArgSpec::name("text")],
        )
        .output("fused", "Map")
        .output("cut", "bool")
        .mode("FULL", Vec::<(&str, f64)>::new())
        .mode("SAVE", Vec::<(&str, f64)>::new())
        .rate(rate, every);
    if let Some(t) = trigger {
        b = b.trigger(t);
    }
    b
}

fn errors(b: GraphBuilder) -> Vec<String> {
    b.check()
        .diagnostics
        .iter()
        .map(|d| d.message.clone())
        .collect()
}

#[test]
fn a_rated_mode_has_a_phase_plan_per_held_combination() {
    let checked = graph("text", 4, Some("cut")).check();
    let ir = checked.ir.expect("valid");
    let save = ir.mode_index("SAVE").unwrap();
    let phases = phase_plans(&ir, save);
    assert_eq!(phases.len(), 2);
    assert_eq!(phases[0], checked.mode_plans[save]);
    let id = |n: &str| ir.node_id(n).unwrap();
    assert_eq!(
        phases[1].reason(id("text")),
        Some(Reason::Held { rated: id("text") })
    );
    assert_eq!(
        phases[1].reason(id("prep")),
        Some(Reason::Held { rated: id("text") })
    );
    assert!(phases[1].is_live(id("gray")) && phases[1].is_live(id("fused")));
    assert_eq!(phases[1].held().collect::<Vec<_>>(), vec![id("text")]);
    let info = mode_rates(&ir, save).unwrap();
    assert!(info.gate[id("cut") as usize] && info.gate[id("gray") as usize]);
    assert!(info.conditional[id("text") as usize] && info.conditional[id("prep") as usize]);
    assert!(!info.conditional[id("fused") as usize]);
    assert!(mode_rates(&ir, ir.mode_index("FULL").unwrap()).is_none());
}

#[test]
fn the_steady_cycle_is_the_least_common_multiple_of_the_rates() {
    let ir = graph("text", 4, None).check().ir.unwrap();
    assert_eq!(steady_cycle(&ir, 1), vec![0, 1, 1, 1]);
    assert_eq!(steady_cycle(&ir, 0), vec![0]);
    let two = graph("text", 2, None).rate("prep", 3).check().ir.unwrap();
    let cycle = steady_cycle(&two, 1);
    assert_eq!(cycle.len(), 6);
    assert_eq!(cycle[0], 0);
    assert_eq!(cycle[2], 0b10, "frame 2: text runs, prep held");
    assert_eq!(cycle[3], 0b01, "frame 3: text held, prep due");
}

#[test]
fn the_tools_show_rates_and_their_average_saving() {
    let checked = graph("text", 4, Some("cut")).check();
    let ir = checked.ir.unwrap();
    assert!(listing(&ir, &()).contains("SAVE {} where text every 4 or cut"));
    let times = |n: &str| match n {
        "text" => 8.0,
        "prep" => 2.0,
        _ => 1.0,
    };
    let t: Vec<f64> = ir.nodes.iter().map(|n| times(&n.name)).collect();
    let diff = dce_diff(&ir, &checked.mode_plans[1], &t);
    // 3 frames of 4 skip text and prep: 10 ms × 3/4.
    assert!(
        diff.contains("rates: text every 4 or cut — 3 of 4 frames hold a value; saves ~7.5 ms a frame on average"),
        "{diff}"
    );
    let dot = cortex_core::export::to_dot(&ir, Some(&checked.mode_plans[1]));
    assert!(dot.contains("runs every 4 or cut"), "{dot}");
}

#[test]
fn rate_mistakes_are_one_error_each() {
    assert_eq!(
        errors(graph("text", 0, None)),
        ["a rate of 0: `every k` runs the node on every k-th frame, so k is at least 1"]
    );
    assert_eq!(errors(graph("txt", 4, None)), ["no node named `txt`"]);
    assert_eq!(
        errors(graph("frame", 4, None)),
        ["a rate is given to a node, but `frame` is an input"]
    );
    assert_eq!(
        errors(graph("text", 4, Some("fused"))),
        ["`fused` is computed from `text`, so it cannot decide whether `text` runs"]
    );
    assert_eq!(
        errors(graph("text", 4, Some("nope"))),
        ["no input, state or node named `nope`"]
    );
    // A trigger whose weight is zero in the mode is never computed there.
    let e = errors(
        GraphSpec::builder("G")
            .input("frame", "Frame")
            .node("text", "text_map", [ArgSpec::name("frame")])
            .ty("Map")
            .node("cut", "is_cut", [ArgSpec::name("frame")])
            .weight_key("wc")
            .output("text", "Map")
            .mode("FULL", [("wc", 1.0)])
            .rate("text", 4)
            .trigger("cut")
            .mode("SAVE", [("wc", 0.0)])
            .rate("text", 4)
            .trigger("cut"),
    );
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].starts_with(
            "trigger `cut` is not computed on every frame of mode `SAVE` (its weight `wc` is 0)"
        ),
        "{e:?}"
    );
    // A node without a declared type (and not filling a buffer).
    assert_eq!(
        errors(graph("cut", 4, None)),
        ["a rated node's value is kept between frames, so `cut` needs its type declared"]
    );
    assert_eq!(
        errors(graph("text", 4, None).rate("text", 2)),
        ["`text` has two rates in mode `SAVE`"]
    );
}

#[test]
fn a_trigger_runs_on_every_frame_of_its_mode_whatever_else_reads_it() {
    // `prep` only feeds `text`: as `text`'s trigger it runs on the frames
    // that hold `text` too.
    let checked = graph("text", 4, Some("prep")).check();
    let ir = checked.ir.expect("valid");
    let id = |n: &str| ir.node_id(n).unwrap();
    let phases = phase_plans(&ir, 1);
    assert_eq!(
        phases[1].reason(id("text")),
        Some(Reason::Held { rated: id("text") })
    );
    assert!(phases[1].is_live(id("prep")) && phases[1].is_live(id("gray")));
    // A node read by nothing but a trigger: the rated mode runs it, the
    // mode without the rate does not, and no rule calls it unused.
    let only = GraphSpec::builder("G")
        .input("frame", "Frame")
        .input("flag", "bool")
        .state("_was", "bool", "false")
        .node("text", "text_map", [ArgSpec::name("frame")])
        .ty("Map")
        .node("cut", "is_cut", [ArgSpec::name("frame")])
        .node("was", "copy", [ArgSpec::name("flag")])
        .write("was", "_was")
        .output("text", "Map")
        .mode("FULL", Vec::<(&str, f64)>::new())
        .mode("SAVE", Vec::<(&str, f64)>::new())
        .rate("text", 4)
        .trigger("cut")
        .mode("LATE", Vec::<(&str, f64)>::new())
        .rate("text", 2)
        .trigger("_was");
    let checked = only.check();
    assert!(checked.diagnostics.is_empty(), "{:?}", checked.diagnostics);
    let ir = checked.ir.unwrap();
    let (full, save, late) = (
        &checked.mode_plans[0],
        &checked.mode_plans[1],
        &checked.mode_plans[2],
    );
    assert!(!full.is_live(id_of(&ir, "cut")) && !full.is_live(id_of(&ir, "was")));
    assert!(save.is_live(id_of(&ir, "cut")) && !save.is_live(id_of(&ir, "was")));
    // A state read as a trigger is written, so the next frame reads it.
    assert!(late.is_live(id_of(&ir, "was")) && late.writes_state[0]);
    assert!(!save.writes_state[0]);
    for p in phase_plans(&ir, 2) {
        assert!(
            p.is_live(id_of(&ir, "was")) && p.writes_state[0],
            "{}",
            p.label
        );
    }
}

fn id_of(ir: &cortex_core::ir::GraphIr, name: &str) -> u32 {
    ir.node_id(name).unwrap()
}
