//! L2 read from `examples/graphs/l2.json` and run at run time with its
//! fused groups on the strip executor (the forms the op library's descriptors declare)
//! gives bit for bit what the macro-compiled L2 gives with fusion on — in
//! every mode, sequentially, wave by wave and pipelined, over the
//! synthetic clip and over OpenCV's `vtest.avi` (768×576) when it and
//! `ffmpeg` are installed — and reports the same group and node events to
//! an observer: fused groups, members that decline a frame alone (no
//! previous frame yet), and a group that declines a whole frame (an input
//! it cannot read as a plane) while the others stay fused.

mod dynamic_common;

use ndarray::ShapeBuilder;
use std::sync::Arc;

use cortex_core::dynamic::{DynOutputs, DynPipeline, GraphFile, Value};
use cortex_core::ir::{GraphIr, NodeId};
use cortex_core::observe::Observer;
use cortex_core::plan::Plan;
use cortex_core::run::Run;
use cortex_core::Pipeline;
use cortex_vision::l2::{demo_clip, BlurVerdict, L2Mode, L2Outputs, L2};
use cortex_vision::library::vision_ops;
use cortex_vision::ops::{EncodedRoi, RgbFrame, SceneChange, ScoreMap};
use dynamic_common::{assert_same, compare_streams, vtest_frames, L2_FILE};

fn from_file() -> DynPipeline {
    GraphFile::parse(L2_FILE)
        .expect("reads")
        .build(&vision_ops())
        .expect("builds")
}

/// Outputs for `run_with` to overwrite (from a pipeline of their own, so
/// the one compared starts fresh).
fn outputs_to_fill(frame: &RgbFrame) -> L2Outputs {
    L2::new()
        .run(L2Mode::Balanced, frame)
        .expect("a frame of the clip")
}

/// Runs `modes[i % len]` on frame `i` in the compiled L2 (fusion on) and
/// in the L2 from the file (fusion on), sequentially and wave by wave,
/// comparing every frame's outputs, holds and frame count.
fn compare(frames: &[RgbFrame], modes: &[L2Mode]) {
    let mut compiled = L2::new();
    let mut compiled_par = L2::new();
    assert!(compiled.fusion());
    let mut dynamic = from_file();
    let mut parallel = from_file();
    assert!(dynamic.fusion());
    let mut par_out = outputs_to_fill(&frames[0]);
    for (i, frame) in frames.iter().enumerate() {
        let mode = modes[i % modes.len()];
        let want = compiled.run(mode, frame).expect("compiled frame");
        let input: Value = Arc::new(frame.clone());
        let got = dynamic
            .run(mode as usize, std::slice::from_ref(&input))
            .expect("run-time frame");
        assert_same(i, &want, &got);
        compiled_par
            .run_with(&mut Run::mode(mode).parallel(), frame, &mut par_out)
            .expect("compiled parallel frame");
        let got = parallel
            .run_with_fresh(
                &mut Run::mode(mode as usize).parallel(),
                std::slice::from_ref(&input),
            )
            .expect("run-time parallel frame");
        let label = |o: &L2Outputs| {
            format!(
                "{:?} {:?}",
                o.blur,
                o.fused.iter().fold(0u64, |h, v| h
                    .wrapping_mul(31)
                    .wrapping_add(u64::from(v.to_bits())))
            )
        };
        assert_eq!(
            label(&want),
            label(&par_out),
            "frame {i}: the compiled engines agree"
        );
        assert_same(i, &par_out, &got);
    }
    assert_eq!(dynamic.holds(), compiled.holds());
    assert_eq!(parallel.holds(), compiled_par.holds());
    assert_eq!(dynamic.frame_index(), compiled.frame_index());
}

/// Every mode alone, then mode switches through the rated mode.
fn every_mode(frames: &[RgbFrame]) {
    for &mode in L2Mode::ALL {
        compare(frames, &[mode]);
    }
    let ps = L2Mode::PowerSave;
    compare(
        frames,
        &[L2Mode::Balanced, ps, ps, ps, ps, ps, L2Mode::TextFocus],
    );
}

#[test]
fn fused_every_mode_matches_the_compiled_l2_on_the_synthetic_clip() {
    every_mode(&demo_clip(14, 160, 120));
}

#[test]
fn fused_every_mode_matches_the_compiled_l2_on_vtest() {
    let Some(frames) = vtest_frames(10) else {
        eprintln!("vtest.avi or ffmpeg not installed: only the synthetic clip was compared");
        return;
    };
    every_mode(&frames);
}

#[test]
fn fused_pipelined_streams_match_the_compiled_l2() {
    let mut frames = demo_clip(12, 160, 120);
    // A frame `to_gray` refuses, mid-stream: it fails alone in both.
    frames[5] = RgbFrame::zeros((120, 160, 4));
    for &mode in L2Mode::ALL {
        compare_streams(&frames, mode, true);
    }
    if let Some(frames) = vtest_frames(8) {
        for &mode in L2Mode::ALL {
            compare_streams(&frames, mode, true);
        }
    }
}

/// The events an observer sees, in order.
#[derive(Default, Debug)]
struct Events(Vec<String>);

impl Observer for Events {
    fn frame_begin(&mut self, ir: &'static GraphIr, plan: &Plan) {
        let live: Vec<NodeId> = (0..ir.nodes.len() as NodeId)
            .filter(|&n| plan.is_live(n))
            .collect();
        self.0
            .push(format!("frame {} {} live {live:?}", ir.name, plan.label));
    }
    fn frame_end(&mut self, ok: bool) {
        self.0.push(format!("frame end ok={ok}"));
    }
    fn node_begin(&mut self, node: NodeId) {
        self.0.push(format!("node {node}"));
    }
    fn group_begin(&mut self, members: &'static [NodeId]) {
        self.0.push(format!("group {members:?}"));
    }
    fn group_end(&mut self, fused: bool) {
        self.0.push(format!("end fused={fused}"));
    }
}

/// The events of a sequential frame of the compiled L2 and of the L2 from
/// the file, and both frames' outputs compared.
fn events_of(
    compiled: &mut L2,
    dynamic: &mut DynPipeline,
    mode: L2Mode,
    frame: &RgbFrame,
    i: usize,
) -> (Vec<String>, Vec<String>) {
    let mut want = Events::default();
    let mut out = outputs_to_fill(frame);
    compiled
        .run_with(&mut Run::mode(mode).observed(&mut want), frame, &mut out)
        .expect("compiled frame");
    let mut got = Events::default();
    let input: Value = Arc::new(frame.clone());
    let outputs = dynamic
        .run_with_fresh(
            &mut Run::mode(mode as usize).observed(&mut got),
            std::slice::from_ref(&input),
        )
        .expect("run-time frame");
    assert_same(i, &out, &outputs);
    (want.0, got.0)
}

#[test]
fn the_observer_sees_the_compiled_group_events() {
    let frames = demo_clip(6, 160, 120);
    for &mode in L2Mode::ALL {
        let mut compiled = L2::new();
        let mut dynamic = from_file();
        for (i, frame) in frames.iter().enumerate() {
            let (want, got) = events_of(&mut compiled, &mut dynamic, mode, frame, i);
            assert_eq!(got, want, "{mode:?} frame {i}");
            // Every group of every frame runs fused.
            assert!(
                !got.iter().any(|e| e == "end fused=false"),
                "{mode:?} frame {i}: {got:?}"
            );
            assert!(
                got.iter().any(|e| e == "end fused=true"),
                "{mode:?} frame {i}"
            );
        }
    }
    let mut compiled = L2::new();
    let mut dynamic = from_file();
    let mut fused_groups = 0;
    let mut alone = 0;
    for (i, frame) in frames.iter().enumerate() {
        let (want, got) = events_of(&mut compiled, &mut dynamic, L2Mode::Balanced, frame, i);
        assert_eq!(got, want, "frame {i}");
        fused_groups += got.iter().filter(|e| *e == "end fused=true").count();
        // Members called after a fused group ended: they declined alone.
        if i == 0 {
            let end = got.iter().position(|e| e == "end fused=true");
            let after = end.map_or(0, |e| {
                got[e + 1..]
                    .iter()
                    .take_while(|x| x.starts_with("node"))
                    .count()
            });
            alone += after;
        }
    }
    assert!(
        fused_groups >= frames.len(),
        "every frame ran a fused group"
    );
    // The first frame has no previous gray image: scene and motion
    // decline alone and run their own calls after the group.
    assert!(alone >= 2, "members declining alone on the first frame");
}

#[test]
fn a_group_declining_a_frame_falls_back_alone() {
    let frames = demo_clip(5, 160, 120);
    let mut compiled = L2::new();
    let mut dynamic = from_file();
    for (i, frame) in frames.iter().enumerate() {
        // Frame 2 in column-major order: the same pixels, but not a plane a
        // group can read without a copy, so the group reading the frame
        // declines it and its members run their own calls, while a group
        // reading only computed maps still runs fused.
        let frame = if i == 2 {
            let (h, w, _) = frame.dim();
            let mut f = RgbFrame::zeros((h, w, 3).f());
            f.assign(frame);
            f
        } else {
            frame.clone()
        };
        let (want, got) = events_of(&mut compiled, &mut dynamic, L2Mode::Balanced, &frame, i);
        assert_eq!(got, want, "frame {i}");
        if i == 2 {
            assert!(got.contains(&"end fused=false".to_string()), "{got:?}");
        } else {
            assert!(!got.contains(&"end fused=false".to_string()), "{got:?}");
        }
    }
}

#[test]
fn fusion_off_runs_the_members_calls_with_the_same_results() {
    let frames = demo_clip(6, 128, 96);
    let mut on = from_file();
    let mut off = from_file();
    off.set_fusion(false);
    for (i, frame) in frames.iter().enumerate() {
        let input: Value = Arc::new(frame.clone());
        let mut ev = Events::default();
        let a = on
            .run(0, std::slice::from_ref(&input))
            .expect("fused frame");
        let b = off
            .run_with_fresh(
                &mut Run::mode(0).observed(&mut ev),
                std::slice::from_ref(&input),
            )
            .expect("unfused frame");
        assert!(!ev.0.contains(&"end fused=true".to_string()), "frame {i}");
        for name in ["fused", "blur", "scene", "roi"] {
            let show = |o: &DynOutputs| format!("{:?}", on_value(o, name));
            assert_eq!(show(&a), show(&b), "frame {i}: {name}");
        }
    }
}

/// With fusion off, the parallel engine runs the waves lowered for it
/// (every node its own unit), for a declared mode and for weights chosen
/// at run time, with the fused sequential run's results.
#[test]
fn fusion_off_runs_the_unfused_waves_in_parallel_with_the_same_results() {
    let frames = demo_clip(6, 128, 96);
    let mut on = from_file();
    let mut off_mode = from_file();
    let mut off_weights = from_file();
    off_mode.set_fusion(false);
    off_weights.set_fusion(false);
    let weights = on.mode_weights(0).expect("mode 0's weights").clone();
    for (i, frame) in frames.iter().enumerate() {
        let input: Value = Arc::new(frame.clone());
        let a = on
            .run(0, std::slice::from_ref(&input))
            .expect("fused frame");
        let mut ev = Events::default();
        let b = off_mode
            .run_with_fresh(
                &mut Run::mode(0).parallel().observed(&mut ev),
                std::slice::from_ref(&input),
            )
            .expect("unfused parallel frame");
        let c = off_weights
            .run_with_fresh(
                &mut Run::weights(&weights).parallel().observed(&mut ev),
                std::slice::from_ref(&input),
            )
            .expect("unfused parallel frame, weights at run time");
        assert!(
            !ev.0.iter().any(|e| e.starts_with("end fused=")),
            "frame {i}: {:?}",
            ev.0
        );
        for name in ["fused", "blur", "scene", "roi"] {
            let show = |o: &DynOutputs| format!("{:?}", on_value(o, name));
            assert_eq!(show(&a), show(&b), "frame {i}: {name} (mode)");
            assert_eq!(show(&a), show(&c), "frame {i}: {name} (weights)");
        }
    }
}

/// Output `name` as text that keeps every bit of its floats.
fn on_value(o: &DynOutputs, name: &str) -> String {
    let v = o.value(name).expect("present");
    if let Some(m) = v.downcast_ref::<ScoreMap>() {
        return format!("{:?}", m.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    }
    if let Some(b) = v.downcast_ref::<BlurVerdict>() {
        return format!("{b:?}");
    }
    if let Some(s) = v.downcast_ref::<SceneChange>() {
        return format!("{s:?}");
    }
    if let Some(r) = v.downcast_ref::<EncodedRoi>() {
        return format!("{r:?}");
    }
    "?".into()
}
