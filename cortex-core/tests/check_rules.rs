//! One test per validation rule of `cortex_core::check`: the graph with
//! exactly that mistake, the location the diagnostic points at, and its
//! message. The macro turns each `Loc` into a span, so a wrong `Loc` is a
//! compile error pointing at the wrong token.

use cortex_core::check::check;
use cortex_core::diag::{Diagnostic, Loc};
use cortex_core::spec::{ArgSpec, GraphBuilder, GraphSpec};

/// A small valid graph: `x` → `a` (writes `_prev`, reads it) → weighted `w`
/// → `out`, mode `ON`. Tests add the mistake they need.
fn valid() -> GraphBuilder {
    GraphSpec::builder("P")
        .input("x", "u8")
        .state("_prev", "u8", "0")
        .node("a", "f", ["x", "_prev"])
        .node("w", "g", ["a"])
        .weight_key("k")
        .node("out", "h", ["a", "w", "weights"])
        .write("a", "_prev")
        .mode("ON", [("k", 1.0)])
}

/// The diagnostics of `spec`, which must be rejected.
fn errors(spec: &GraphSpec) -> Vec<Diagnostic> {
    let c = check(spec);
    assert!(c.ir.is_none(), "accepted: {spec:#?}");
    assert!(c.mode_plans.is_empty());
    assert!(!c.diagnostics.is_empty());
    c.diagnostics
}

/// Asserts `spec` yields exactly one diagnostic, at `loc`, whose message
/// contains `message`; returns it for further checks.
fn single(spec: &GraphSpec, loc: Loc, message: &str) -> Diagnostic {
    let diags = errors(spec);
    assert_eq!(diags.len(), 1, "{diags:#?}");
    let d = diags.into_iter().next().unwrap();
    assert_eq!(d.loc, loc, "{d:#?}");
    assert!(
        d.message.contains(message),
        "{:?} lacks {message:?}",
        d.message
    );
    d
}

fn has_note(d: &Diagnostic, text: &str) -> bool {
    d.notes.iter().any(|n| n.contains(text))
}

#[test]
fn the_base_graph_is_valid() {
    let c = check(&valid().output("out", "u8").build());
    assert!(c.diagnostics.is_empty(), "{:#?}", c.diagnostics);
    assert!(c.ir.is_some());
    assert_eq!(c.mode_plans.len(), 1);
}

#[test]
fn dangling_edge_points_at_the_argument() {
    let spec = valid()
        .node("b", "f", ["x", "outt"])
        .output("b", "u8")
        .output("out", "u8")
        .build();
    let d = single(
        &spec,
        Loc::NodeArg { node: 3, arg: 1 },
        "no input, state or node named `outt`",
    );
    assert!(has_note(&d, "did you mean `out`?"), "{d:#?}");
}

#[test]
fn duplicate_name_points_at_the_second_declaration() {
    let spec = valid().node("a", "f2", ["x"]).output("out", "u8").build();
    single(
        &spec,
        Loc::Node(3),
        "`a` is declared twice: first as node `a`, again as node `a`",
    );
    // Inputs, states and nodes share one namespace.
    let spec = valid().state("x", "u8", "0").output("out", "u8").build();
    let diags = errors(&spec);
    assert_eq!(diags[0].loc, Loc::State(1), "{diags:#?}");
    assert!(diags[0]
        .message
        .contains("first as input `x`, again as state `x`"));
}

#[test]
fn duplicate_mode() {
    let spec = valid().mode("ON", [("k", 0.5)]).output("out", "u8").build();
    single(&spec, Loc::Mode(1), "mode `ON` is declared twice");
}

#[test]
fn reserved_name() {
    let spec = GraphSpec::builder("P")
        .input("weights", "u8")
        .input("x", "u8")
        .node("out", "f", ["x"])
        .output("out", "u8")
        .build();
    let d = single(&spec, Loc::Input(0), "`weights` is a reserved name");
    assert!(has_note(&d, "rename this declaration"));
}

#[test]
fn cycle_points_at_its_first_declared_node() {
    let spec = GraphSpec::builder("P")
        .input("x", "u8")
        .node("src", "f", ["x"])
        .node("a", "f", ["src", "c"])
        .node("b", "f", ["a"])
        .node("c", "f", ["b"])
        .output("c", "u8")
        .build();
    let d = single(&spec, Loc::Node(1), "cycle: a -> b -> c -> a");
    assert!(has_note(&d, "state _prev_c"), "{d:#?}");
    // A node reading itself is a cycle too.
    let spec = GraphSpec::builder("P")
        .input("x", "u8")
        .node("a", "f", ["x", "a"])
        .output("a", "u8")
        .build();
    single(&spec, Loc::Node(0), "cycle: a -> a");
}

#[test]
fn a_state_read_breaks_a_cycle() {
    let spec = GraphSpec::builder("P")
        .input("x", "u8")
        .state("_prev_b", "u8", "0")
        .node("a", "f", ["x", "_prev_b"])
        .node("b", "f", ["a"])
        .write("b", "_prev_b")
        .output("b", "u8")
        .build();
    let c = check(&spec);
    assert!(c.diagnostics.is_empty(), "{:#?}", c.diagnostics);
}

#[test]
fn state_never_written() {
    let spec = GraphSpec::builder("P")
        .input("x", "u8")
        .state("_prev", "u8", "0")
        .node("a", "f", ["x", "_prev"])
        .output("a", "u8")
        .build();
    let d = single(&spec, Loc::State(0), "state `_prev` is never written");
    assert!(has_note(&d, "-> _prev;"));
}

#[test]
fn state_written_twice_points_at_the_second_write() {
    let spec = valid().write("out", "_prev").output("out", "u8").build();
    single(
        &spec,
        Loc::WriteTo(1),
        "state `_prev` is written twice: by `a` and by `out`",
    );
}

#[test]
fn state_never_read() {
    let spec = GraphSpec::builder("P")
        .input("x", "u8")
        .state("_prev", "u8", "0")
        .node("a", "f", ["x"])
        .write("a", "_prev")
        .output("a", "u8")
        .build();
    single(&spec, Loc::State(0), "state `_prev` is never read");
}

#[test]
fn write_to_a_non_state() {
    let spec = valid().write("a", "w").output("out", "u8").build();
    let d = single(
        &spec,
        Loc::WriteTo(1),
        "`w` is a node, not a state: `->` writes a state",
    );
    assert!(has_note(&d, "declare `state w: Type"));
}

#[test]
fn write_from_a_non_node() {
    let spec = valid()
        .state("_prev_x", "u8", "0")
        .node("b", "f", ["_prev_x"])
        .write("x", "_prev_x")
        .output("out", "u8")
        .output("b", "u8")
        .build();
    // The unwritten state is not reported too: usage rules wait for a clean
    // resolution, so one mistake gives one diagnostic.
    single(
        &spec,
        Loc::WriteFrom(1),
        "only a node can write a state, but `x` is an input",
    );
}

#[test]
fn write_with_unknown_names() {
    let spec = valid().write("aa", "_prevv").output("out", "u8").build();
    let diags = errors(&spec);
    let locs: Vec<Loc> = diags.iter().map(|d| d.loc).collect();
    assert_eq!(locs, [Loc::WriteFrom(1), Loc::WriteTo(1)], "{diags:#?}");
    assert!(diags[0].message.contains("no node named `aa`"));
    assert!(diags[1].message.contains("no state named `_prevv`"));
    assert!(has_note(&diags[1], "did you mean `_prev`?"));
}

#[test]
fn mode_key_missing_points_at_the_mode() {
    let spec = valid()
        .mode("OFF", Vec::<(&str, f64)>::new())
        .output("out", "u8")
        .build();
    let d = single(&spec, Loc::Mode(1), "mode `OFF` has no weight for `k`");
    assert!(has_note(&d, "`k` scales node(s) `w`"), "{d:#?}");
}

#[test]
fn mode_key_unused_points_at_the_entry() {
    let spec = valid()
        .mode("OFF", [("k", 0.0), ("kk", 1.0)])
        .optional_output("out", "u8")
        .build();
    let d = single(
        &spec,
        Loc::ModeKey { mode: 1, entry: 1 },
        "no node uses weight key `kk`",
    );
    assert!(has_note(&d, "did you mean `k`?"));
}

#[test]
fn mode_key_given_twice() {
    let spec = valid()
        .mode("TWICE", [("k", 1.0), ("k", 0.5)])
        .output("out", "u8")
        .build();
    single(
        &spec,
        Loc::ModeKey { mode: 1, entry: 1 },
        "weight `k` is given twice in mode `TWICE`",
    );
}

#[test]
fn malformed_weight_values_point_at_the_value() {
    for (value, what) in [
        (-0.5, "is negative"),
        (f64::NAN, "is NaN"),
        (f64::INFINITY, "is infinite"),
    ] {
        let spec = valid()
            .mode("BAD", [("k", value)])
            .output("out", "u8")
            .build();
        single(
            &spec,
            Loc::ModeValue { mode: 1, entry: 0 },
            &format!("weight `k` in mode `BAD` {what}"),
        );
    }
}

#[test]
fn malformed_weight_key_points_at_the_annotation() {
    let spec = GraphSpec::builder("P")
        .input("x", "u8")
        .node("a", "f", ["x"])
        .weight_key("w-1")
        .node("out", "f", ["a"])
        .output("out", "u8")
        .build();
    single(
        &spec,
        Loc::NodeWeightKey(0),
        "weight key \"w-1\" is not a valid key",
    );
}

#[test]
fn too_many_weight_keys() {
    let mut b = GraphSpec::builder("P").input("x", "u8");
    let mut args = Vec::new();
    for i in 0..65 {
        b = b
            .node(format!("m{i}"), "f", ["x"])
            .weight_key(format!("k{i}"));
        args.push(format!("m{i}"));
    }
    // The mode gives all 65 keys: the refused 65th key is still recorded as
    // used, so a mode without it would add a second diagnostic.
    let mode: Vec<(String, f64)> = (0..65).map(|i| (format!("k{i}"), 1.0)).collect();
    let spec = b
        .node("out", "f", args.iter().map(ArgSpec::name))
        .mode("ALL", mode)
        .output("out", "u8")
        .build();
    single(
        &spec,
        Loc::NodeWeightKey(64),
        "too many weight keys: at most 64",
    );
}

#[test]
fn weight_keys_without_any_mode() {
    let spec = GraphSpec::builder("P")
        .input("x", "u8")
        .node("a", "f", ["x"])
        .weight_key("k")
        .node("out", "f", ["a"])
        .output("out", "u8")
        .build();
    single(
        &spec,
        Loc::Pipeline,
        "weight key `k` is used but no mode gives it a value",
    );
}

#[test]
fn output_eliminated_by_a_mode() {
    let spec = valid()
        .mode("OFF", [("k", 0.0)])
        .output("out", "u8")
        .output("w", "u8")
        .build();
    let d = single(
        &spec,
        Loc::Output(1),
        "output `w` is eliminated in mode `OFF`",
    );
    assert!(has_note(&d, "its weight `k` is 0"), "{d:#?}");
    assert!(has_note(&d, "#[optional] output w"), "{d:#?}");
    // Optional, it is accepted and the plan drops it.
    let c = check(
        &valid()
            .mode("OFF", [("k", 0.0)])
            .output("out", "u8")
            .optional_output("w", "u8")
            .build(),
    );
    assert!(c.diagnostics.is_empty(), "{:#?}", c.diagnostics);
    assert!(!c.mode_plans[1].is_live(1), "`w` is node 1");
}

#[test]
fn no_outputs() {
    let spec = GraphSpec::builder("P")
        .input("x", "u8")
        .node("a", "f", ["x"])
        .build();
    let diags = errors(&spec);
    assert_eq!(diags[0].loc, Loc::Pipeline, "{diags:#?}");
    assert!(diags[0].message.contains("the pipeline has no outputs"));
}

#[test]
fn output_declared_twice() {
    let spec = valid().output("out", "u8").output("out", "u8").build();
    single(
        &spec,
        Loc::Output(1),
        "`out` is declared as an output twice",
    );
}

#[test]
fn output_that_is_not_a_node() {
    let spec = valid().output("out", "u8").output("x", "u8").build();
    single(
        &spec,
        Loc::Output(1),
        "an output must be a node, but `x` is an input",
    );
    let spec = valid().output("outt", "u8").build();
    let diags = errors(&spec);
    let d = diags.iter().find(|d| d.loc == Loc::Output(0)).unwrap();
    assert!(d.message.contains("no node named `outt`"), "{diags:#?}");
}

#[test]
fn unused_input() {
    let spec = valid().input("y", "u8").output("out", "u8").build();
    let d = single(&spec, Loc::Input(1), "input `y` is never used");
    assert!(has_note(&d, "pass it to a node, or remove it"));
}

#[test]
fn unused_node() {
    let spec = valid()
        .node("edges", "sobel", ["x"])
        .output("out", "u8")
        .build();
    single(&spec, Loc::Node(3), "node `edges` is never used");
}

#[test]
fn node_reaching_no_output() {
    // `acc` is used (it writes `_acc`), but only `acc` reads `_acc`.
    let spec = valid()
        .state("_acc", "u64", "0")
        .node("acc", "add", ["x", "_acc"])
        .write("acc", "_acc")
        .output("out", "u8")
        .build();
    single(
        &spec,
        Loc::Node(3),
        "node `acc` does not contribute to any output",
    );
}

#[test]
fn every_problem_is_reported_at_once() {
    // Three independent mistakes, three diagnostics, in rule order.
    let spec = valid()
        .node("b", "f", ["grey"])
        .mode("OFF", [("k", -1.0)])
        .output("out", "u8")
        .output("b", "u8")
        .output("nope", "u8")
        .build();
    let locs: Vec<Loc> = errors(&spec).iter().map(|d| d.loc).collect();
    assert_eq!(
        locs,
        [
            Loc::NodeArg { node: 3, arg: 0 },
            Loc::ModeValue { mode: 1, entry: 0 },
            Loc::Output(2)
        ]
    );
}
