//! `run_plan` validates the plan against the pipeline before anything runs:
//! a plan of another pipeline, or a plan whose lists contradict the graph,
//! is an error and leaves the state exactly as it was. `run_weights` keeps a
//! bounded cache of pattern plans.

use cortex::model::plan::{Plan, PlanError};
use cortex::Run;
use cortex::{cortex_graph, PipelineError, Weights};

fn src(x: &f32) -> f32 {
    *x
}
fn add(a: &f32, b: &f32) -> f32 {
    a + b
}
fn plus(a: Option<&f32>, b: Option<&f32>) -> f32 {
    a.copied().unwrap_or(0.0) + b.copied().unwrap_or(0.0)
}
fn acc(a: &f32, b: Option<&f32>) -> f32 {
    a + b.copied().unwrap_or(0.0)
}

cortex_graph! {
    pipeline Acc {
        input x: f32;
        state last: f32 = 0.0;
        node cur = src(x);
        cur -> last;
        node sum = add(cur, last);
        output sum: f32;
    }
}

cortex_graph! {
    pipeline Other {
        input x: f32;
        state prev: f32 = 0.0;
        node a = src(x);
        a -> prev;
        node b = add(a, prev);
        output b: f32;
    }
}

// Twenty weight keys: more zero patterns than the plan cache keeps.
cortex_graph! {
    pipeline Many {
        input x: f32;
        #[weight_key = "k0"] node k0 = src(x);
        #[weight_key = "k1"] node k1 = src(x);
        #[weight_key = "k2"] node k2 = src(x);
        #[weight_key = "k3"] node k3 = src(x);
        #[weight_key = "k4"] node k4 = src(x);
        #[weight_key = "k5"] node k5 = src(x);
        #[weight_key = "k6"] node k6 = src(x);
        #[weight_key = "k7"] node k7 = src(x);
        #[weight_key = "k8"] node k8 = src(x);
        #[weight_key = "k9"] node k9 = src(x);
        #[weight_key = "k10"] node k10 = src(x);
        #[weight_key = "k11"] node k11 = src(x);
        #[weight_key = "k12"] node k12 = src(x);
        #[weight_key = "k13"] node k13 = src(x);
        #[weight_key = "k14"] node k14 = src(x);
        #[weight_key = "k15"] node k15 = src(x);
        #[weight_key = "k16"] node k16 = src(x);
        #[weight_key = "k17"] node k17 = src(x);
        #[weight_key = "k18"] node k18 = src(x);
        #[weight_key = "k19"] node k19 = src(x);
        node c1 = plus(k0, k1);
        node c2 = acc(c1, k2);
        node c3 = acc(c2, k3);
        node c4 = acc(c3, k4);
        node c5 = acc(c4, k5);
        node c6 = acc(c5, k6);
        node c7 = acc(c6, k7);
        node c8 = acc(c7, k8);
        node c9 = acc(c8, k9);
        node c10 = acc(c9, k10);
        node c11 = acc(c10, k11);
        node c12 = acc(c11, k12);
        node c13 = acc(c12, k13);
        node c14 = acc(c13, k14);
        node c15 = acc(c14, k15);
        node c16 = acc(c15, k16);
        node c17 = acc(c16, k17);
        node c18 = acc(c17, k18);
        node c19 = acc(c18, k19);
        mode ALL_ON { k0: 1.0, k1: 1.0, k2: 1.0, k3: 1.0, k4: 1.0, k5: 1.0, k6: 1.0, k7: 1.0, k8: 1.0, k9: 1.0, k10: 1.0, k11: 1.0, k12: 1.0, k13: 1.0, k14: 1.0, k15: 1.0, k16: 1.0, k17: 1.0, k18: 1.0, k19: 1.0 }
        output c19: f32;
    }
}

#[test]
fn a_plan_of_another_pipeline_is_refused_before_any_state_changes() {
    let mut p = Acc::new();
    p.run(AccMode::Full, &2.0).unwrap();
    let before = p.state().last;
    let foreign = Other::new().pattern_plan(0);
    // Same shape (two nodes, one state, one output): only the fingerprint
    // tells them apart.
    assert_eq!(foreign.live.len(), Acc::ir().nodes.len());
    let err = p
        .run_with_fresh(&mut Run::plan(&foreign, &Weights::new()), &5.0)
        .unwrap_err();
    assert!(
        matches!(err, PipelineError::Plan(PlanError::OtherPipeline { .. })),
        "{err}"
    );
    assert_eq!(p.state().last, before, "state untouched");
    // The next frame still sees the last good frame's state.
    assert_eq!(p.run(AccMode::Full, &1.0).unwrap().sum, 1.0 + before);
}

#[test]
fn a_plan_with_an_output_marked_dead_is_refused_before_any_state_changes() {
    let mut p = Acc::new();
    p.run(AccMode::Full, &3.0).unwrap();
    let mut plan: Plan = (*p.pattern_plan(0)).clone();
    let sum = Acc::ir().node_id("sum").unwrap();
    plan.live.to_mut()[sum as usize] = false;
    plan.order = plan
        .order
        .iter()
        .copied()
        .filter(|&n| n != sum)
        .collect::<Vec<_>>()
        .into();
    let err = p
        .run_with_fresh(&mut Run::plan(&plan, &Weights::new()), &7.0)
        .unwrap_err();
    assert!(
        matches!(err, PipelineError::Plan(PlanError::OutputEliminated { .. })),
        "{err}"
    );
    assert_eq!(p.state().last, 3.0, "state neither advanced nor reset");
}

#[test]
fn a_plan_running_a_node_without_its_input_is_refused() {
    let mut p = Acc::new();
    let mut plan: Plan = (*p.pattern_plan(0)).clone();
    let cur = Acc::ir().node_id("cur").unwrap();
    plan.live.to_mut()[cur as usize] = false;
    plan.order = plan
        .order
        .iter()
        .copied()
        .filter(|&n| n != cur)
        .collect::<Vec<_>>()
        .into();
    let err = p
        .run_with_fresh(&mut Run::plan(&plan, &Weights::new()), &7.0)
        .unwrap_err();
    assert!(
        matches!(err, PipelineError::Plan(PlanError::Malformed { .. })),
        "{err}"
    );
    assert_eq!(p.state().last, 0.0);
}

#[test]
fn a_valid_plan_runs() {
    let mut p = Acc::new();
    let plan = p.pattern_plan(0);
    assert_eq!(
        p.run_with_fresh(&mut Run::plan(&plan, &Weights::new()), &2.0)
            .unwrap()
            .sum,
        2.0
    );
    assert_eq!(
        p.run_with_fresh(&mut Run::plan(&plan, &Weights::new()), &3.0)
            .unwrap()
            .sum,
        5.0
    );
}

#[test]
fn run_weights_keeps_a_bounded_cache_of_pattern_plans() {
    let mut p = Many::new();
    let keys: Vec<String> = (0..20).map(|i| format!("k{i}")).collect();
    // 2000 distinct zero patterns, key 0 always on so the output lives.
    for pattern in 0..2000u32 {
        let w: Weights = keys
            .iter()
            .enumerate()
            .map(|(i, k)| {
                let zero = i > 0 && (pattern >> (i - 1)) & 1 == 1;
                (k.clone(), if zero { 0.0 } else { 1.0 })
            })
            .collect();
        // Eliminated keys contribute nothing, running ones 2.0 each.
        let running = 1 + (1..20).filter(|i| (pattern >> (i - 1)) & 1 == 0).count();
        assert_eq!(
            p.run_with_fresh(&mut Run::weights(&w), &2.0).unwrap().c19,
            2.0 * running as f32
        );
    }
    // Every pattern's plan is what the DCE pass computes, and the cache
    // holds at most its capacity.
    let plan = p.pattern_plan(0b10);
    assert_eq!(
        *plan,
        cortex::passes::dce::plan_for_pattern(
            Many::ir(),
            0b10,
            cortex::passes::dce::pattern_label(0b10, 20)
        )
    );
}
