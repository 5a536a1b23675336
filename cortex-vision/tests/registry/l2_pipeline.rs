//! The L2 pipeline on the real kernels: POWER_SAVE's plan runs
//! neither saliency nor motion, and its fused score is bit-identical to the
//! full graph's on the same frames; the visualizer and DCE diff print.

use cortex_core::run::Run;
use cortex_core::viz::{dce_diff, listing};
use cortex_core::Profiler;
use cortex_vision::l2::{demo_clip, L2Mode, L2};

#[test]
fn power_save_is_bit_identical_to_the_full_graph() {
    let full_plan = L2::new().pattern_plan(0);
    let mut full = L2::new();
    let mut saver = L2::new();
    let mut profiler = Profiler::new(L2::ir());
    let mut computed = 0;
    for frame in demo_clip(5, 160, 120) {
        let mut whole = Run::plan(&full_plan, L2Mode::PowerSave.weights());
        let a = full.run_with_fresh(&mut whole, &frame).unwrap();
        let mut observed = Run::mode(L2Mode::PowerSave).observed(&mut profiler);
        let b = saver.run_with_fresh(&mut observed, &frame).unwrap();
        // POWER_SAVE holds the text map between the frames that compute it;
        // those equal the full graph.
        if saver.holds()[0].held_last_frame {
            continue;
        }
        computed += 1;
        assert_eq!(a.fused.shape(), b.fused.shape());
        assert!(a
            .fused
            .iter()
            .zip(b.fused.iter())
            .all(|(x, y)| x.to_bits() == y.to_bits()));
        assert!(a.fused.iter().any(|&v| v > 0.1), "a textured clip scores");
        assert_eq!(a.roi, b.roi);
        assert_eq!(a.scene, b.scene);
    }
    let ir = L2::ir();
    let ran = |name: &str| {
        profiler
            .node_stats(ir.node_id(name).unwrap())
            .map_or(0, |s| s.count)
    };
    assert_eq!(ran("saliency"), 0);
    assert_eq!(ran("motion"), 0);
    assert_eq!(ran("text"), computed);
    assert!(computed >= 2, "frame 0 and frame 4 compute the text map");
    println!("{}", listing(ir, &profiler));
    let diff = dce_diff(ir, L2Mode::PowerSave.plan(), &profiler);
    println!("{diff}");
    assert!(diff.contains("removed: saliency, motion"), "{diff}");
}

#[test]
fn a_failing_frame_keeps_the_previous_state() {
    let mut p = L2::new();
    let clip = demo_clip(2, 64, 48);
    p.run(L2Mode::Balanced, &clip[0]).unwrap();
    let before = p.state()._prev_gray.clone();
    let empty = cortex_vision::ops::RgbFrame::zeros((0, 0, 3));
    let err = p
        .run(L2Mode::Balanced, &empty)
        .expect_err("an empty frame fails");
    assert!(err.to_string().starts_with("node `gray` failed"), "{err}");
    assert_eq!(p.state()._prev_gray, before);
    // A resolution change mid-stream is a scene change, not an error.
    let out = p.run(L2Mode::Balanced, &demo_clip(1, 80, 60)[0]).unwrap();
    assert!(out.scene.changed);
}
