//! The fusion pass: fused groups of the L2 graph per mode, and of small
//! graphs whose answer follows from the rules (joins through strip forms,
//! convexity, reductions, value roles).

mod common;

use common::{compile, l2_spec};
use cortex_core::ir::{GraphIr, NodeId};
use cortex_core::passes::fusion::{fusion_plan, FusionPlan, ValueRole, WhyUnfused};
use cortex_core::plan::Reason;
use cortex_core::spec::GraphSpec;
use cortex_core::strip::{Kind, Window};

fn names(ir: &GraphIr, ids: &[NodeId]) -> Vec<String> {
    ids.iter().map(|&n| ir.node(n).name.to_string()).collect()
}

fn forms(ir: &GraphIr, known: &[(&str, Kind)]) -> Vec<Option<Kind>> {
    (0..ir.nodes.len() as NodeId)
        .map(|id| {
            known
                .iter()
                .find(|(n, _)| *n == ir.node(id).name)
                .map(|&(_, k)| k)
        })
        .collect()
}

fn groups(ir: &GraphIr, plan: &FusionPlan) -> Vec<Vec<String>> {
    plan.groups.iter().map(|g| names(ir, &g.nodes)).collect()
}

fn role<'a>(ir: &GraphIr, plan: &'a FusionPlan, name: &str) -> &'a ValueRole {
    let id = ir.node_id(name).unwrap();
    let g = plan.groups.iter().find(|g| g.contains(id)).unwrap();
    &g.values[g.nodes.iter().position(|&n| n == id).unwrap()]
}

#[test]
fn l2_groups_per_mode() {
    let (ir, plans) = compile(&l2_spec());
    let known = forms(
        &ir,
        &[
            ("gray", Kind::Pointwise),
            ("blur", Kind::Reduction(Window::symmetric(1))),
            ("center", Kind::Pointwise),
            ("motion", Kind::Reduction(Window::ZERO)),
            ("fused", Kind::Pointwise),
        ],
    );
    let balanced = fusion_plan(&ir, &plans[0], &known);
    // `fused` reads `text` (external) and `saliency` (no strip form), both
    // fed by `gray`: a group holding both would not be convex.
    assert_eq!(
        groups(&ir, &balanced),
        [vec!["gray", "blur", "center", "motion"], vec!["fused"]]
    );
    let why: Vec<(String, WhyUnfused)> = balanced
        .unfused
        .iter()
        .map(|u| (ir.node(u.node).name.to_string(), u.why))
        .collect();
    assert_eq!(
        why,
        [
            ("scene".to_string(), WhyUnfused::NoStripForm),
            ("saliency".to_string(), WhyUnfused::NoStripForm)
        ]
    );
    // Every value of the first group leaves it: gray feeds the outside and
    // the state, blur is an output, center feeds `fused`, motion is a
    // reduction.
    assert!(matches!(
        role(&ir, &balanced, "gray"),
        ValueRole::Leaving {
            state: true,
            output: false,
            ..
        }
    ));
    assert!(matches!(
        role(&ir, &balanced, "blur"),
        ValueRole::Leaving {
            output: true,
            reduction: true,
            ..
        }
    ));
    assert!(matches!(
        role(&ir, &balanced, "motion"),
        ValueRole::Leaving {
            reduction: true,
            ..
        }
    ));
    // POWER_SAVE eliminates saliency and motion: in no group, with the reason.
    let ps = fusion_plan(&ir, &plans[1], &known);
    assert_eq!(
        groups(&ir, &ps),
        [vec!["gray", "blur", "center"], vec!["fused"]]
    );
    let motion = ir.node_id("motion").unwrap();
    let u = ps.unfused.iter().find(|u| u.node == motion).unwrap();
    assert_eq!(
        u.why,
        WhyUnfused::Eliminated(Reason::ZeroWeight {
            key: ir.node(motion).weight_key.unwrap()
        })
    );
    assert!(u.why.describe(&ir).contains("wm"));
}

/// `a → b → c → d`, all compilable, with `c` optionally external.
fn chain(external_c: bool) -> GraphSpec {
    let b = GraphSpec::builder("Chain")
        .input("x", "Img")
        .node("a", "f", ["x"])
        .compilable()
        .node("b", "f", ["a"])
        .compilable()
        .node("c", "f", ["b"]);
    let b = if external_c {
        b.external()
    } else {
        b.compilable()
    };
    b.node("d", "g", ["c", "a"])
        .compilable()
        .output("d", "Img")
        .build()
}

#[test]
fn a_chain_fuses_into_one_group_with_internal_values() {
    let (ir, plans) = compile(&chain(false));
    let known = forms(
        &ir,
        &[
            ("a", Kind::Pointwise),
            ("b", Kind::Stencil(Window::symmetric(1))),
            ("c", Kind::Pointwise),
            ("d", Kind::Pointwise),
        ],
    );
    let plan = fusion_plan(&ir, &plans[0], &known);
    assert_eq!(groups(&ir, &plan), [vec!["a", "b", "c", "d"]]);
    let g = &plan.groups[0];
    assert_eq!(
        names(&ir, &g.internal().collect::<Vec<_>>()),
        ["a", "b", "c"]
    );
    assert!(matches!(
        role(&ir, &plan, "d"),
        ValueRole::Leaving { output: true, .. }
    ));
    assert!(plan.unfused.is_empty());
}

#[test]
fn an_outside_node_on_a_path_splits_the_group() {
    // a → b → c(external) → d and a → d: {a, b} and {d}; b's value leaves
    // (to c), a's leaves (to d, outside its group).
    let (ir, plans) = compile(&chain(true));
    let known = forms(
        &ir,
        &[
            ("a", Kind::Pointwise),
            ("b", Kind::Pointwise),
            ("d", Kind::Pointwise),
        ],
    );
    let plan = fusion_plan(&ir, &plans[0], &known);
    assert_eq!(groups(&ir, &plan), [vec!["a", "b"], vec!["d"]]);
    assert!(matches!(role(&ir, &plan, "a"), ValueRole::Leaving { .. }));
    // Without b's strip form: a and d would sandwich b, so all three alone.
    let known = forms(&ir, &[("a", Kind::Pointwise), ("d", Kind::Pointwise)]);
    let plan = fusion_plan(&ir, &plans[0], &known);
    assert_eq!(groups(&ir, &plan), [vec!["a"], vec!["d"]]);
    assert_eq!(names(&ir, &[plan.unfused[0].node]), ["b"]);
}

#[test]
fn a_reduction_is_not_read_inside_its_group() {
    // a reduction `b` read by `c`, and `c` also reads `a`: {a, b} and {c}.
    let (ir, plans) = compile(&chain(false));
    let known = forms(
        &ir,
        &[
            ("a", Kind::Pointwise),
            ("b", Kind::Reduction(Window::ZERO)),
            ("c", Kind::Pointwise),
            ("d", Kind::Pointwise),
        ],
    );
    let plan = fusion_plan(&ir, &plans[0], &known);
    for g in &plan.groups {
        let ids = &g.nodes;
        let b = ir.node_id("b").unwrap();
        let c = ir.node_id("c").unwrap();
        assert!(
            !(ids.contains(&b) && ids.contains(&c)),
            "{:?}",
            groups(&ir, &plan)
        );
    }
    assert!(matches!(
        role(&ir, &plan, "b"),
        ValueRole::Leaving {
            reduction: true,
            ..
        }
    ));
    let all: usize = plan.groups.iter().map(|g| g.nodes.len()).sum();
    assert_eq!(all, 4);
}

#[test]
fn malformed_knowledge_does_not_panic() {
    let (ir, plans) = compile(&l2_spec());
    // Too short, too long: missing entries mean no strip form.
    let plan = fusion_plan(&ir, &plans[0], &[Some(Kind::Pointwise)]);
    assert_eq!(groups(&ir, &plan), [vec!["gray"]]);
    let long = vec![Some(Kind::Pointwise); 50];
    let plan = fusion_plan(&ir, &plans[0], &long);
    assert!(!plan.groups.is_empty());
}
