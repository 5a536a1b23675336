//! The L2 graph in the DSL with stand-in ops: the generated code
//! runs, carries state, and each mode's plan matches the DCE semantics.

use crate::common::*;
use cortex::cortex_graph;
use cortex::Run;

cortex_graph! {
    /// The L2 ROI-scoring graph, with stand-in ops.
    pub pipeline L2 {
        input frame: Frame;
        state _prev_gray: Gray = Gray::new();

        mode BALANCED   { wc: 0.4, wt: 0.3, ws: 0.2, wm: 0.1 }
        mode POWER_SAVE { wc: 0.7, wt: 0.3, ws: 0.0, wm: 0.0 }

        node gray = to_gray(frame)?;
        node scene = scene_change(gray, _prev_gray);
        #[compilable] #[weight_key = "wc"] node center = center(gray);
        #[external_call] #[weight_key = "wt"] node text = text(gray);
        #[compilable] #[weight_key = "ws"] node saliency = saliency(gray);
        #[compilable] #[weight_key = "wm"] node motion = motion(gray, _prev_gray);
        #[compilable] node fused = fusion(center, text, saliency, motion, weights);
        gray -> _prev_gray;

        output fused: Map, scene: f32;
    }
}

fn names(ids: &[u32]) -> Vec<&'static str> {
    ids.iter()
        .map(|&i| L2::ir().nodes[i as usize].name.as_ref())
        .collect()
}

#[test]
fn power_save_eliminates_exactly_saliency_and_motion() {
    let plan = L2Mode::PowerSave.plan();
    let gone: Vec<u32> = plan.eliminated.iter().map(|e| e.node).collect();
    assert_eq!(names(&gone), ["saliency", "motion"]);
    assert_eq!(
        names(&plan.order),
        ["gray", "scene", "center", "text", "fused"]
    );
    // `_prev_gray` is still read by `scene`, so it is still written.
    assert!(plan.writes_state(0));
    assert!(L2Mode::Balanced.plan().eliminated.is_empty());
}

#[test]
fn power_save_fused_score_is_bit_identical_to_full_graph() {
    let full_plan = L2::new().pattern_plan(0);
    assert!(full_plan.eliminated.is_empty());
    let mut full = L2::new();
    let mut saver = L2::new();
    let mut masked = L2::new();
    for frame in frames(6, 64) {
        // Every node runs, with POWER_SAVE's weights (zero contributions
        // computed and added) ...
        let a = full
            .run_with_fresh(
                &mut Run::plan(&full_plan, L2Mode::PowerSave.weights()),
                &frame,
            )
            .unwrap();
        // ... versus POWER_SAVE's straight-line code without those nodes,
        let b = saver.run(L2Mode::PowerSave, &frame).unwrap();
        // ... and the run-time-weights path selecting the same plan.
        let c = masked
            .run_with_fresh(&mut Run::weights(L2Mode::PowerSave.weights()), &frame)
            .unwrap();
        let bits = |m: &Map| m.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a.fused), bits(&b.fused));
        assert_eq!(bits(&a.fused), bits(&c.fused));
        assert_eq!(a.scene.to_bits(), b.scene.to_bits());
        assert!(
            a.fused.iter().any(|v| *v > 0.0),
            "textured frames give a non-trivial score"
        );
    }
}

#[test]
fn state_carries_the_previous_frame() {
    let mut p = L2::new();
    let fs = frames(3, 32);
    assert!(p.state()._prev_gray.is_empty());
    let first = p.run(L2Mode::Balanced, &fs[0]).unwrap();
    assert_eq!(first.scene, 1.0, "no previous frame: a scene change");
    assert_eq!(p.state()._prev_gray, to_gray(&fs[0]).unwrap());
    let second = p.run(L2Mode::Balanced, &fs[1]).unwrap();
    assert_eq!(
        second.scene,
        scene_change(&to_gray(&fs[1]).unwrap(), &to_gray(&fs[0]).unwrap())
    );
}

#[test]
fn failing_frame_leaves_state_as_it_was() {
    let mut p = L2::new();
    let fs = frames(2, 16);
    p.run(L2Mode::Balanced, &fs[0]).unwrap();
    let before = p.state()._prev_gray.clone();
    let err = p
        .run(L2Mode::Balanced, &Vec::new())
        .expect_err("empty frame fails");
    assert!(
        err.to_string().contains("node `gray` failed: empty frame"),
        "{err}"
    );
    assert_eq!(p.state()._prev_gray, before);
}

#[test]
fn run_time_weights_select_the_precomputed_plan() {
    let w = cortex::Weights::new()
        .with("wc", 1.0)
        .with("wt", 0.0)
        .with("ws", 0.5)
        .with("wm", 0.0);
    let pattern = w.zero_pattern(&L2::ir().weight_keys).unwrap();
    let plan = L2::new().pattern_plan(pattern);
    assert_eq!(
        names(&plan.eliminated.iter().map(|e| e.node).collect::<Vec<_>>()),
        ["text", "motion"]
    );
    let mut p = L2::new();
    let out = p
        .run_with_fresh(&mut Run::weights(&w), &frames(1, 16)[0])
        .unwrap();
    assert_eq!(out.fused.len(), 16);
    // Bad tables are refused with a typed error.
    let bad = cortex::Weights::new()
        .with("wc", f64::NAN)
        .with("wt", 0.0)
        .with("ws", 0.5)
        .with("wm", 0.0);
    assert!(matches!(
        p.run_with_fresh(&mut Run::weights(&bad), &frames(1, 16)[0]),
        Err(cortex::PipelineError::Weights(_))
    ));
    let missing = cortex::Weights::new().with("wc", 1.0);
    assert!(matches!(
        p.run_with_fresh(&mut Run::weights(&missing), &frames(1, 16)[0]),
        Err(cortex::PipelineError::Weights(_))
    ));
}

/// Records the observer events of a run.
#[derive(Default)]
struct Recorder {
    events: Vec<String>,
}

impl cortex::prelude::Observer for Recorder {
    fn frame_begin(
        &mut self,
        _ir: &'static cortex::model::ir::GraphIr,
        plan: &cortex::prelude::Plan,
    ) {
        self.events.push(format!("begin {}", plan.label));
    }
    fn node_begin(&mut self, node: u32) {
        self.events
            .push(format!("> {}", L2::ir().nodes[node as usize].name));
    }
    fn node_end(&mut self, node: u32) {
        self.events
            .push(format!("< {}", L2::ir().nodes[node as usize].name));
    }
    fn frame_end(&mut self, ok: bool) {
        self.events.push(format!("end {ok}"));
    }
}

#[test]
fn observer_sees_exactly_the_plan_in_order() {
    let mut p = L2::new();
    let mut rec = Recorder::default();
    p.run_with_fresh(
        &mut Run::mode(L2Mode::PowerSave).observed(&mut rec),
        &frames(1, 8)[0],
    )
    .unwrap();
    let mut expected = vec!["begin POWER_SAVE".to_string()];
    for name in names(&L2Mode::PowerSave.plan().order) {
        expected.push(format!("> {name}"));
        expected.push(format!("< {name}"));
    }
    expected.push("end true".into());
    assert_eq!(rec.events, expected);

    // A failing node ends its own event and the frame.
    let mut rec = Recorder::default();
    assert!(p
        .run_with_fresh(
            &mut Run::mode(L2Mode::Balanced).observed(&mut rec),
            &Vec::new()
        )
        .is_err());
    assert_eq!(
        rec.events,
        ["begin BALANCED", "> gray", "< gray", "end false"]
    );
}
