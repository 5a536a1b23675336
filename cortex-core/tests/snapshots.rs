//! Snapshots (insta) of what the tools print for the L2-shaped graph and for
//! a graph with states and optional outputs: DOT and Mermaid (plain, with the
//! POWER_SAVE plan, with islands), the listing and the DCE diff. Each `.snap`
//! file under `tests/snapshots/` was read by eye against the graph before it
//! was committed; a change to the output shows up as a reviewable diff.

mod common;

use common::{compile, l2_fused_spec, l2_spec, stateful_spec};
use cortex_core::export::{to_dot, to_dot_with, to_mermaid, to_mermaid_with, Overlay};
use cortex_core::passes::fusion::declared_fusion_plan;
use cortex_core::passes::islands::islands;
use cortex_core::viz::{dce_diff, fusion_section, listing};

/// Per-node times for the L2 graph in declaration order (gray, blur, scene,
/// center, text, saliency, motion, fused, roi), in ms.
const L2_MS: [f64; 9] = [0.4, 0.6, 9.5, 0.7, 35.0, 3.1, 1.2, 0.9, 2.6];

#[test]
fn l2_dot() {
    let (ir, _) = compile(&l2_spec());
    insta::assert_snapshot!(to_dot(&ir, None));
}

#[test]
fn l2_dot_power_save_with_islands() {
    let (ir, plans) = compile(&l2_spec());
    let ps = &plans[1];
    let isl = islands(&ir, Some(ps));
    let overlay = Overlay {
        plan: Some(ps),
        islands: Some(&isl),
        fusion: None,
        notes: None,
    };
    insta::assert_snapshot!(to_dot_with(&ir, &overlay));
}

#[test]
fn l2_mermaid() {
    let (ir, _) = compile(&l2_spec());
    insta::assert_snapshot!(to_mermaid(&ir, None));
}

#[test]
fn l2_mermaid_power_save_with_islands() {
    let (ir, plans) = compile(&l2_spec());
    let ps = &plans[1];
    let isl = islands(&ir, Some(ps));
    let overlay = Overlay {
        plan: Some(ps),
        islands: Some(&isl),
        fusion: None,
        notes: None,
    };
    insta::assert_snapshot!(to_mermaid_with(&ir, &overlay));
}

#[test]
fn l2_listing() {
    let (ir, _) = compile(&l2_spec());
    insta::assert_snapshot!(listing(&ir, &L2_MS));
}

#[test]
fn l2_dce_diff_power_save() {
    let (ir, plans) = compile(&l2_spec());
    insta::assert_snapshot!(dce_diff(&ir, &plans[1], &L2_MS));
}

#[test]
fn stateful_dot_lean_with_islands() {
    let (ir, plans) = compile(&stateful_spec());
    let lean = &plans[1];
    let isl = islands(&ir, Some(lean));
    insta::assert_snapshot!(to_dot_with(
        &ir,
        &Overlay {
            plan: Some(lean),
            islands: Some(&isl),
            fusion: None,
            notes: None,
        }
    ));
}

#[test]
fn stateful_mermaid_lean() {
    let (ir, plans) = compile(&stateful_spec());
    insta::assert_snapshot!(to_mermaid(&ir, Some(&plans[1])));
}

#[test]
fn stateful_listing() {
    let (ir, _) = compile(&stateful_spec());
    insta::assert_snapshot!(listing(&ir, &()));
}

#[test]
fn stateful_dce_diff_lean() {
    let (ir, plans) = compile(&stateful_spec());
    insta::assert_snapshot!(dce_diff(&ir, &plans[1], &()));
}

/// L2 with strip forms in BALANCED: the fused groups framed inside their
/// island, and the listing's section naming each group and each compilable
/// node left unfused with the reason.
#[test]
fn l2_fused_groups_in_dot_mermaid_and_listing() {
    let (ir, plans) = compile(&l2_fused_spec());
    let balanced = &plans[0];
    let isl = islands(&ir, Some(balanced));
    let fusion = declared_fusion_plan(&ir, balanced);
    let overlay = Overlay {
        plan: Some(balanced),
        islands: Some(&isl),
        fusion: Some(&fusion),
        notes: None,
    };
    insta::assert_snapshot!("l2_fused_dot", to_dot_with(&ir, &overlay));
    insta::assert_snapshot!("l2_fused_mermaid", to_mermaid_with(&ir, &overlay));
    insta::assert_snapshot!("l2_fused_section", fusion_section(&ir, balanced));
    insta::assert_snapshot!(
        "l2_fused_section_power_save",
        fusion_section(&ir, &plans[1])
    );
}
