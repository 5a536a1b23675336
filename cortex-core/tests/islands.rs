//! Compilable islands: the L2 partition by hand, and a property test over
//! random graphs checking the partition's definition (cover, purity,
//! connectivity through compilable nodes, maximality).

mod common;

use common::{compile, l2_spec};
use cortex_core::dce::plan_for_pattern;
use cortex_core::ir::{EdgeKind, Endpoint, GraphIr, NodeId};
use cortex_core::passes::islands::{island_index, islands, Island};
use cortex_core::plan::Plan;
use cortex_core::spec::{ArgSpec, GraphSpec};
use proptest::prelude::*;

fn names(ir: &GraphIr, islands: &[Island]) -> Vec<Vec<String>> {
    islands
        .iter()
        .map(|i| {
            i.nodes
                .iter()
                .map(|&n| ir.node(n).name.to_string())
                .collect()
        })
        .collect()
}

#[test]
fn l2_has_one_island_around_the_external_text_and_roi() {
    // gray feeds everything compilable; text (external) sits between gray
    // and fused but gray → center → fused joins them anyway, so the seven
    // compilable nodes form one island; text and roi stay outside.
    let (ir, plans) = compile(&l2_spec());
    let expected = [[
        "gray", "blur", "scene", "center", "saliency", "motion", "fused",
    ]];
    assert_eq!(names(&ir, &islands(&ir, None)), expected);
    assert_eq!(names(&ir, &islands(&ir, Some(&plans[0]))), expected);
    // POWER_SAVE drops saliency and motion from it.
    assert_eq!(plans[1].label, "POWER_SAVE");
    assert_eq!(
        names(&ir, &islands(&ir, Some(&plans[1]))),
        [["gray", "blur", "scene", "center", "fused"]]
    );
    let idx = island_index(&ir, &islands(&ir, None));
    for (id, node) in ir.nodes.iter().enumerate() {
        assert_eq!(idx[id].is_some(), node.is_compilable(), "{}", node.name);
    }
}

#[test]
fn an_external_call_splits_a_chain() {
    // a → b → ext → c → d: two islands, {a, b} and {c, d}.
    let spec = GraphSpec::builder("Chain")
        .input("x", "u8")
        .node("a", "f", ["x"])
        .compilable()
        .node("b", "f", ["a"])
        .compilable()
        .node("ext", "cv::call", ["b"])
        .node("c", "f", ["ext"])
        .compilable()
        .node("d", "f", ["c", "x"])
        .compilable()
        .output("d", "u8")
        .build();
    let (ir, _) = compile(&spec);
    assert_eq!(names(&ir, &islands(&ir, None)), [["a", "b"], ["c", "d"]]);
}

#[test]
fn a_state_edge_does_not_join_islands() {
    // `a` writes `_prev`, which `b` reads: next frame's value, not a
    // within-frame edge, so `a` and `b` are separate islands.
    let spec = GraphSpec::builder("S")
        .input("x", "u8")
        .state("_prev", "u8", "0")
        .node("a", "f", ["x"])
        .compilable()
        .node("ext", "cv::call", ["a"])
        .node("b", "f", ["_prev", "ext"])
        .compilable()
        .write("a", "_prev")
        .output("b", "u8")
        .build();
    let (ir, _) = compile(&spec);
    assert_eq!(names(&ir, &islands(&ir, None)), [["a"], ["b"]]);
}

/// A random valid graph: node `i` reads earlier nodes and maybe the input or
/// a state; every node nobody reads is an output; some nodes are compilable,
/// some weighted.
fn random_spec(shape: &[(u8, u8, u8, bool)], with_state: bool) -> GraphSpec {
    let n = shape.len();
    let mut args: Vec<Vec<String>> = Vec::new();
    for (i, &(a, b, kind, _)) in shape.iter().enumerate() {
        let mut v = Vec::new();
        if i == 0 || kind % 4 == 0 {
            v.push("x".to_string());
        }
        if i > 0 {
            v.push(format!("n{}", a as usize % i));
            if kind % 3 == 1 {
                v.push(format!("n{}", b as usize % i));
            }
        }
        if with_state && kind % 5 == 2 {
            v.push("_s".to_string());
        }
        v.dedup();
        args.push(v);
    }
    let reads = |name: &str| args.iter().flatten().any(|a| a == name);
    let mut b = GraphSpec::builder("R").input("x", "u64");
    if reads("_s") {
        b = b.state("_s", "u64", "0").write(format!("n{}", n / 2), "_s");
    }
    let mut keyed = false;
    for (i, (&(_, _, kind, compilable), a)) in shape.iter().zip(&args).enumerate() {
        b = b.node(format!("n{i}"), "f", a.iter().map(ArgSpec::name));
        if compilable {
            b = b.compilable();
        }
        if kind % 7 == 3 {
            b = b.weight_key("k");
            keyed = true;
        }
    }
    if keyed {
        b = b.mode("ON", [("k", 1.0)]);
    }
    for i in (0..n).filter(|i| !reads(&format!("n{i}"))) {
        b = b.output(format!("n{i}"), "u64");
    }
    b.build()
}

/// Checks the four properties of a partition of `plan`'s running compilable
/// nodes into islands.
fn check_partition(ir: &GraphIr, plan: &Plan, isl: &[Island]) -> Result<(), TestCaseError> {
    let member = |id: NodeId| ir.node(id).is_compilable() && plan.is_live(id);
    // Cover: every running compilable node in exactly one island; purity:
    // nothing else in any island.
    let mut count = vec![0usize; ir.nodes.len()];
    for island in isl {
        prop_assert!(!island.nodes.is_empty());
        for &id in &island.nodes {
            prop_assert!(member(id), "{} is external or eliminated", ir.node(id).name);
            count[id as usize] += 1;
        }
        // Topological order: positions in ir.topo increase.
        let pos = |id: NodeId| ir.topo.iter().position(|&t| t == id).unwrap();
        prop_assert!(island.nodes.windows(2).all(|w| pos(w[0]) < pos(w[1])));
    }
    for id in 0..ir.nodes.len() as NodeId {
        prop_assert_eq!(count[id as usize], usize::from(member(id)));
    }
    // The within-frame edges between member nodes, undirected.
    let joined: Vec<(NodeId, NodeId)> = ir
        .edges
        .iter()
        .filter(|e| e.kind != EdgeKind::State)
        .filter_map(|e| match (e.from, e.to) {
            (Endpoint::Node(a), Endpoint::Node(b)) if member(a) && member(b) => Some((a, b)),
            _ => None,
        })
        .collect();
    let of = island_index(ir, isl);
    // Maximality: no such edge joins two different islands.
    for &(a, b) in &joined {
        prop_assert_eq!(of[a as usize], of[b as usize], "edge {}–{}", a, b);
    }
    // Connectivity: a search from an island's first node over those edges
    // reaches every node of the island (so only compilable nodes connect it).
    for island in isl {
        let mut seen = vec![island.nodes[0]];
        let mut stack = vec![island.nodes[0]];
        while let Some(x) = stack.pop() {
            for &(a, b) in &joined {
                let next = if a == x {
                    b
                } else if b == x {
                    a
                } else {
                    continue;
                };
                if !seen.contains(&next) {
                    seen.push(next);
                    stack.push(next);
                }
            }
        }
        seen.sort_unstable();
        let mut nodes = island.nodes.clone();
        nodes.sort_unstable();
        prop_assert_eq!(seen, nodes);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn islands_partition_the_running_compilable_nodes(
        shape in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>(), any::<bool>()), 1..16),
        with_state in any::<bool>(),
    ) {
        let spec = random_spec(&shape, with_state);
        let c = cortex_core::check::check(&spec);
        prop_assert!(c.diagnostics.is_empty(), "{:#?}\n{:#?}", c.diagnostics, spec);
        let ir = c.ir.unwrap();
        let full = plan_for_pattern(&ir, 0, "full");
        let isl = islands(&ir, None);
        check_partition(&ir, &full, &isl)?;
        prop_assert_eq!(&islands(&ir, Some(&full)), &isl);
        // With the weight zeroed, weighted nodes drop out of the islands.
        if !ir.weight_keys.is_empty() {
            let cut = plan_for_pattern(&ir, 1, "cut");
            check_partition(&ir, &cut, &islands(&ir, Some(&cut)))?;
        }
    }
}
