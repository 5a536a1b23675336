use cortex::{cortex_graph, Run};

#[path = "../differential.rs"]
mod differential;

fn src(x: &u64) -> u64 { *x }
fn term(x: &u64, k: u64) -> u64 { x.wrapping_mul(k) }
#[allow(clippy::too_many_arguments)]
fn sum(
    a: Option<&u64>, b: Option<&u64>, c: Option<&u64>, d: Option<&u64>, e: Option<&u64>,
    f: Option<&u64>, g: Option<&u64>, h: Option<&u64>, i: Option<&u64>,
) -> u64 {
    [a, b, c, d, e, f, g, h, i].iter().flatten().map(|v| **v).sum()
}

// Nine weight keys (512 patterns): run-time weights compute each pattern's
// plan once with the shared DCE pass and cache it, and `pattern_plan` gives
// any pattern's plan, as for fewer keys.
cortex_graph! {
    pipeline Wide {
        input x: u64;
        mode ALL { k1: 1.0, k2: 1.0, k3: 1.0, k4: 1.0, k5: 1.0, k6: 1.0, k7: 1.0, k8: 1.0, k9: 1.0 }
        node s = src(x);
        #[weight_key = "k1"] node t1 = term(s, 1);
        #[weight_key = "k2"] node t2 = term(s, 2);
        #[weight_key = "k3"] node t3 = term(s, 3);
        #[weight_key = "k4"] node t4 = term(s, 4);
        #[weight_key = "k5"] node t5 = term(s, 5);
        #[weight_key = "k6"] node t6 = term(s, 6);
        #[weight_key = "k7"] node t7 = term(s, 7);
        #[weight_key = "k8"] node t8 = term(s, 8);
        #[weight_key = "k9"] node t9 = term(s, 9);
        node total = sum(t1, t2, t3, t4, t5, t6, t7, t8, t9);
        output total: u64;
    }
}

fn main() {
    differential::modes_match_plans::<Wide, _>(&[1u64, 2, 7]);
    let mut p = Wide::new();
    assert_eq!(p.run(WideMode::All, &1).unwrap().total, 45);
    let w: cortex::Weights = (1..=9).map(|i| (format!("k{i}"), if i % 2 == 0 { 0.0 } else { 1.0 })).collect();
    let mut out = WideOutputs::default();
    p.run_with(&mut Run::weights(&w), &1, &mut out).unwrap();
    assert_eq!(out.total, 1 + 3 + 5 + 7 + 9);
    let pattern = w.zero_pattern(&Wide::ir().weight_keys).unwrap();
    let plan = p.pattern_plan(pattern);
    assert_eq!(plan.eliminated.len(), 4);
    p.run_with(&mut Run::plan(&plan, &w), &1, &mut out).unwrap();
    assert_eq!(out.total, 25);
}
