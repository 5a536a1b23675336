//! L2 built at run time — its compiled graph (`L2::ir()`) written out as a
//! graph file over the op library and the file in `examples/graphs`, each
//! lowered to a program and run by [`DynPipeline`] — gives bit for bit what the
//! macro-compiled L2 gives, on every mode, on mode switches (held values
//! forgotten and recomputed), on run-time weights and after a failing
//! frame, sequentially and wave by wave; over the synthetic clip, and over the first frames of OpenCV's
//! `vtest.avi` when it and `ffmpeg` are installed.

mod dynamic_common;

use std::sync::Arc;

use cortex_core::dynamic::{DynPipeline, GraphFile, Value};
use cortex_core::model::ir::NodeId;
use cortex_core::profile::Profiler;
use cortex_core::run::Run;
use cortex_core::{Pipeline, Weights};
use cortex_vision::l2::{demo_clip, L2Mode, L2};
use cortex_vision::library::vision_ops;
use cortex_vision::ops::RgbFrame;
use dynamic_common::{assert_same, assert_same_read, compare_streams, vtest_frames, L2_FILE};

/// The compiled L2 written out as a graph file and built over the library.
fn run_time_l2() -> DynPipeline {
    let ops = vision_ops();
    GraphFile::from_ir(L2::ir(), &ops)
        .expect("every L2 call is a library op")
        .build(&ops)
        .expect("builds")
}

/// Runs `modes[i % len]` on frame `i` in both, comparing every frame's
/// outputs, holds and frame count.
fn compare(frames: &[RgbFrame], modes: &[L2Mode]) {
    let mut compiled = L2::new();
    let mut dynamic = run_time_l2();
    let mut parallel = run_time_l2();
    for (i, frame) in frames.iter().enumerate() {
        let mode = modes[i % modes.len()];
        let want = compiled.run(mode, frame).expect("compiled frame");
        let input: Value = Arc::new(frame.clone());
        let got = dynamic
            .run(mode as usize, std::slice::from_ref(&input))
            .expect("run-time frame");
        assert_same(i, &want, &got);
        assert_eq!(dynamic.holds(), compiled.holds(), "frame {i}: holds");
        assert_eq!(dynamic.frame_index(), compiled.frame_index());
        let got = parallel
            .run_with_fresh(&mut Run::mode(mode as usize).parallel(), &[input])
            .expect("parallel frame");
        assert_same(i, &want, &got);
        assert_eq!(parallel.holds(), compiled.holds(), "frame {i}: holds");
    }
}

#[test]
fn every_mode_matches_the_compiled_l2_on_the_synthetic_clip() {
    let frames = demo_clip(14, 160, 120);
    for &mode in L2Mode::ALL {
        compare(&frames, &[mode]);
    }
}

#[test]
fn mode_switches_match_the_compiled_l2() {
    // POWER_SAVE holds `text` and `regions`; the other modes forget them.
    let frames = demo_clip(20, 160, 120);
    let ps = L2Mode::PowerSave;
    compare(
        &frames,
        &[
            L2Mode::Balanced,
            ps,
            ps,
            ps,
            ps,
            ps,
            L2Mode::TextFocus,
            ps,
            ps,
            ps,
        ],
    );
}

#[test]
fn run_time_weights_match_the_compiled_l2() {
    let frames = demo_clip(6, 128, 96);
    let tables = [
        Weights::new()
            .with("wc", 0.5)
            .with("wt", 0.0)
            .with("ws", 0.3)
            .with("wm", 0.2),
        Weights::new()
            .with("wc", 0.25)
            .with("wt", 0.25)
            .with("ws", 0.25)
            .with("wm", 0.25),
    ];
    for w in &tables {
        let mut compiled = L2::new();
        let mut dynamic = run_time_l2();
        for (i, frame) in frames.iter().enumerate() {
            let want = compiled
                .run_with_fresh(&mut Run::weights(w), frame)
                .expect("compiled frame");
            let got = dynamic
                .run_with_fresh(&mut Run::weights(w), &[Arc::new(frame.clone())])
                .expect("run-time frame");
            assert_same(i, &want, &got);
        }
    }
    // A table missing a key is refused before anything runs, as compiled.
    let mut dynamic = run_time_l2();
    let bad = Weights::new().with("wc", 1.0);
    assert!(dynamic
        .run_with_fresh(&mut Run::weights(&bad), &[Arc::new(frames[0].clone())])
        .is_err());
    assert_eq!(dynamic.frame_index(), 0);
}

#[test]
fn a_failing_frame_leaves_the_state_as_it_was() {
    let frames = demo_clip(5, 96, 72);
    let mut compiled = L2::new();
    let mut dynamic = run_time_l2();
    let ps = L2Mode::PowerSave as usize;
    for (i, frame) in frames.iter().enumerate() {
        if i == 2 {
            // A frame with 4 channels: `to_gray` refuses it in both.
            let bad = RgbFrame::zeros((72, 96, 4));
            assert!(compiled.run(L2Mode::PowerSave, &bad).is_err());
            let err = dynamic.run(ps, &[Arc::new(bad)]).expect_err("refused");
            assert!(err.to_string().contains("gray"), "{err}");
            // A frame of another type: refused by the op's downcast.
            let err = dynamic.run(ps, &[Arc::new(3.5f64)]).expect_err("refused");
            assert!(err.to_string().contains("not a"), "{err}");
            assert_eq!(dynamic.holds(), compiled.holds());
        }
        let want = compiled
            .run(L2Mode::PowerSave, frame)
            .expect("compiled frame");
        let got = dynamic
            .run(ps, &[Arc::new(frame.clone())])
            .expect("run-time frame");
        assert_same(i, &want, &got);
        assert_eq!(dynamic.frame_index(), compiled.frame_index());
    }
}

#[test]
fn every_mode_matches_the_compiled_l2_on_vtest() {
    let Some(frames) = vtest_frames(12) else {
        eprintln!("vtest.avi or ffmpeg not installed: only the synthetic clip was compared");
        return;
    };
    for &mode in L2Mode::ALL {
        compare(&frames, &[mode]);
    }
    let ps = L2Mode::PowerSave;
    compare(
        &frames,
        &[L2Mode::Balanced, ps, ps, ps, ps, ps, L2Mode::TextFocus],
    );
}

#[test]
fn the_l2_graph_file_is_written_from_the_compiled_l2() {
    // `examples/graphs/l2.json` is what `cortex graph --format json`
    // writes of the compiled L2, byte for byte: the graph is declared once
    // (the `cortex_graph!` in `cortex-vision/src/l2.rs`) and the file is
    // regenerated from it.
    let written = GraphFile::export(L2::ir(), &vision_ops()).expect("exports");
    assert_eq!(
        written, L2_FILE,
        "examples/graphs/l2.json is stale: regenerate it with \
         `cargo run -p cortex-runner -- graph --format json > examples/graphs/l2.json`"
    );
}

#[test]
fn the_l2_graph_file_is_the_compiled_l2() {
    use cortex_core::lower::lower;
    let file = GraphFile::parse(L2_FILE).expect("reads");
    let mut from_file = file.build(&vision_ops()).expect("builds");
    // The same graph as the macro's — names, types, edges, weight keys,
    // states, outputs — the file's nodes calling the library's ops where
    // the macro's call Rust paths; and the same program (fused groups from
    // the descriptors' strip forms, waves, stages, buffers).
    let (file_ir, macro_ir) = (from_file.ir(), L2::ir());
    assert_eq!(file_ir.edges, macro_ir.edges);
    let states = |ir: &cortex_core::GraphIr| -> Vec<(String, String, u32)> {
        let s = ir.states.iter();
        s.map(|s| (s.name.to_string(), s.ty.to_string(), s.writer))
            .collect()
    };
    assert_eq!(states(file_ir), states(macro_ir));
    assert_eq!(file_ir.outputs, macro_ir.outputs);
    assert_eq!(file_ir.weight_keys, macro_ir.weight_keys);
    for (f, m) in file_ir.nodes.iter().zip(macro_ir.nodes.iter()) {
        assert_eq!(
            (&f.name, f.kind, f.strip, f.weight_key),
            (&m.name, m.kind, m.strip, m.weight_key),
            "node {}",
            m.name
        );
        // The library knows every node's type; the macro the filled ones'.
        assert!(m.ty.is_none() || f.ty == m.ty, "node {}", m.name);
        assert_eq!(f.fills_buffer(), m.fills_buffer(), "node {}", m.name);
    }
    let compiled_program = lower(L2::ir(), &L2::MODE_PLANS, true);
    assert_eq!(
        from_file.program().text(from_file.ir()),
        compiled_program.text(L2::ir())
    );
    let mut compiled = L2::new();
    let ps = L2Mode::PowerSave;
    for (i, frame) in demo_clip(10, 128, 96).iter().enumerate() {
        let mode = [L2Mode::Balanced, ps, ps, ps, ps, ps, L2Mode::TextFocus][i % 7];
        let want = compiled.run(mode, frame).expect("compiled frame");
        let got = from_file
            .run(mode as usize, &[Arc::new(frame.clone())])
            .expect("file frame");
        assert_same(i, &want, &got);
    }
}

#[test]
fn mistakes_in_a_graph_file_name_their_line_and_node() {
    use cortex_core::dynamic::GraphFile;
    let line_of = |needle: &str| {
        L2_FILE
            .lines()
            .position(|l| l.contains(needle))
            .expect("in file")
            + 1
    };
    let refused = |bad: &str| {
        assert_ne!(bad, L2_FILE, "the test's edit applies");
        GraphFile::parse(bad)
            .expect("reads")
            .build(&vision_ops())
            .expect_err("refused")
    };
    // An unknown name: the macro's diagnostic, at the node's line.
    let bad = L2_FILE.replace(
        r#""inputs": ["laplacian", "scene", "_sharpness"]"#,
        r#""inputs": ["laplacian", "scen", "_sharpness"]"#,
    );
    let err = refused(&bad);
    let blur = line_of(r#""name": "blur", "op""#);
    assert_eq!(err.problems.len(), 1, "{err}");
    assert_eq!(err.problems[0].0, blur, "{err}");
    assert!(
        err.problems[0].1.starts_with("node `blur`: ") && err.problems[0].1.contains("`scene`"),
        "{err}"
    );
    // An op the library does not have, with the closest one.
    let err = refused(&L2_FILE.replace("vision.blur_detector", "vision.blur_detect"));
    assert_eq!(err.problems.len(), 1, "{err}");
    assert_eq!(
        err.problems[0].0,
        line_of(r#""name": "laplacian""#),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("did you mean `vision.blur_detector`"),
        "{err}"
    );
    // Parameters: an unknown name (with the valid ones), a wrong type, a
    // value out of the op's range — one error each, at the node's line.
    let text = line_of(r#""name": "text""#);
    for (params, says) in [
        (
            r#"{ "mser.dleta": 3 }"#,
            "unknown field `dleta`, expected one of `delta`",
        ),
        (
            r#"{ "mser": { "delta": "five" } }"#,
            "invalid type: string \"five\"",
        ),
        (r#"{ "mser.delta": 0 }"#, "delta"),
        (r#"{ "saturation": -1 }"#, "saturation"),
    ] {
        let bad = L2_FILE.replace(
            r#""inputs": ["gray"], "weight_key": "wt""#,
            &format!(r#""inputs": ["gray"], "params": {params}, "weight_key": "wt""#),
        );
        let err = refused(&bad);
        assert_eq!(err.problems.len(), 1, "{params}: {err}");
        assert_eq!(err.problems[0].0, text, "{params}: {err}");
        assert!(
            err.problems[0]
                .1
                .starts_with("node `text`: params of `vision.text_map`: ")
                && err.problems[0].1.contains(says),
            "{params}: {err}"
        );
    }
    // Types, at build time, in the library's names: an input of the wrong
    // type, an output declared another type, a state of another type.
    let err = refused(&L2_FILE.replace(
        r#""inputs": ["gray", "_prev_gray"], "weight_key": "wm""#,
        r#""inputs": ["gray", "frame"], "weight_key": "wm""#,
    ));
    assert_eq!(err.problems.len(), 1, "{err}");
    assert_eq!(err.problems[0].0, line_of(r#""name": "motion""#), "{err}");
    assert!(
        err.problems[0].1.contains(
            "input `previous` of op `vision.motion_map` is a `GrayImage`; `frame` is a `RgbFrame`"
        ),
        "{err}"
    );
    let err = refused(&L2_FILE.replace(
        r#"{ "name": "fused", "type": "ScoreMap" }"#,
        r#"{ "name": "fused", "type": "GrayImage" }"#,
    ));
    assert_eq!(err.problems.len(), 1, "{err}");
    assert_eq!(
        err.problems[0].0,
        line_of(r#"{ "name": "fused", "type""#),
        "{err}"
    );
    assert!(err.to_string().contains("gives a `ScoreMap`"), "{err}");
    let err = refused(&L2_FILE.replace(
        r#""type": "BlurVerdict", "from": "blur""#,
        r#""type": "BlurReport", "from": "blur""#,
    ));
    assert_eq!(err.problems.len(), 1, "{err}");
    assert_eq!(
        err.problems[0].0,
        line_of(r#""name": "_sharpness""#),
        "{err}"
    );
    // A weighted node feeding an input read every frame.
    let err = refused(&L2_FILE.replace(
        r#""inputs": ["fused", "blur"]"#,
        r#""inputs": ["text", "blur"]"#,
    ));
    assert!(err.to_string().contains("has a weight key"), "{err}");
    // A field of the wrong kind: the line of the value.
    let bad = L2_FILE.replace(
        r#""every": 4, "trigger": "scene.changed" },"#,
        r#""every": "4", "trigger": "scene.changed" },"#,
    );
    let err = GraphFile::parse(&bad).expect_err("refused");
    assert_eq!(
        err.problems[0].0,
        line_of(r#""node": "text", "every""#),
        "{err}"
    );
    // Not JSON at all.
    let err = GraphFile::parse("{\n  \"name\": \"L2\",\n  oops\n}").expect_err("refused");
    assert_eq!(err.problems[0].0, 3, "{err}");
}

#[test]
fn a_trigger_naming_a_missing_node_or_field_is_refused_at_build() {
    use cortex_core::dynamic::GraphFile;
    let mode = L2_FILE
        .lines()
        .position(|l| l.contains(r#""name": "POWER_SAVE""#))
        .expect("in file")
        + 1;
    let rate = r#"{ "node": "text", "every": 4, "trigger": "scene.changed" }"#;
    for (trigger, says) in [
        ("scen.changed", "`scen`"),
        (
            "scene.chnged",
            "no `bool` field `chnged`; its `bool` fields are `changed`",
        ),
        ("scene", "`scene` is a `SceneChange`, not a `bool`"),
        ("scene.changed.twice", "one field"),
        (
            "blur.changed",
            "`blur` is a `BlurVerdict`, which has no `bool` field `changed`",
        ),
    ] {
        let bad = L2_FILE.replacen(rate, &rate.replace("scene.changed", trigger), 1);
        assert_ne!(bad, L2_FILE, "the test's edit applies");
        let err = GraphFile::parse(&bad)
            .expect("reads")
            .build(&vision_ops())
            .expect_err("refused");
        assert_eq!(err.problems.len(), 1, "{trigger}: {err}");
        assert!(err.problems[0].0 >= mode, "{trigger}: {err}");
        assert!(
            err.problems[0].1.contains(says) && err.problems[0].1.contains("POWER_SAVE"),
            "{trigger}: {err}"
        );
    }
}

#[test]
fn pipelined_streams_match_the_compiled_l2_in_every_mode() {
    let mut frames = demo_clip(12, 160, 120);
    // A frame `to_gray` refuses, mid-stream: it fails alone in both.
    frames[5] = RgbFrame::zeros((120, 160, 4));
    for &mode in L2Mode::ALL {
        for fused in [true, false] {
            compare_streams(&frames, mode, fused);
        }
    }
}

#[test]
fn pipelined_streams_match_the_compiled_l2_on_vtest() {
    let Some(frames) = vtest_frames(10) else {
        eprintln!("vtest.avi or ffmpeg not installed: pipelined streams compared on the synthetic clip only");
        return;
    };
    for &mode in L2Mode::ALL {
        for fused in [true, false] {
            compare_streams(&frames, mode, fused);
        }
    }
}

/// A run-time stream reading some outputs runs only their producers, as a
/// compiled stream does: each frame's outputs read equal the compiled L2's
/// every-output run and the others are absent, at 1 to 3 frames in flight;
/// in a mode without rates no node outside its plan cut down to the
/// outputs read runs; a rated mode runs its own stages.
#[test]
fn a_stream_reading_some_outputs_runs_only_their_producers() {
    use cortex_core::model::outputs::OutputSet;
    use cortex_core::passes::dce::plan_for_outputs;
    use cortex_core::stream::StreamOptions;
    use cortex_core::ParallelPipeline;
    let mut frames = demo_clip(10, 160, 120);
    // A frame `to_gray` refuses, mid-stream: it fails alone.
    frames[4] = RgbFrame::zeros((120, 160, 4));
    let sets: [&[&str]; 4] = [
        &["blur", "scene", "roi"],
        &["scene"],
        &["regions"],
        &["qp_map", "scene"],
    ];
    for mode in [L2Mode::Balanced, L2Mode::PowerSave] {
        let mut compiled = L2::new();
        let want: Vec<_> = frames.iter().map(|f| compiled.run(mode, f)).collect();
        for read in sets {
            for in_flight in 1..=3 {
                let what = format!("{mode:?}, reading {read:?}, {in_flight} in flight");
                let mut p = run_time_l2();
                let ir = p.graph();
                let set = OutputSet::named(ir, read).expect("L2's outputs");
                let cut = plan_for_outputs(ir, mode.plan().zero_pattern, set, "cut");
                let mut profiler = Profiler::new(ir);
                let mut run = Run::mode(mode as usize)
                    .outputs(set)
                    .observed(&mut profiler);
                let options = StreamOptions {
                    in_flight,
                    ..StreamOptions::DEFAULT
                };
                let inputs = frames
                    .iter()
                    .map(|f| ((), vec![Arc::new(f.clone()) as Value]));
                let mut got = Vec::new();
                p.run_stream_with(&mut run, inputs, &options, |f| {
                    got.push(f.take_result());
                    std::ops::ControlFlow::Continue(())
                })
                .expect("stream runs");
                assert_eq!(got.len(), frames.len(), "{what}");
                for (i, (w, g)) in want.iter().zip(&got).enumerate() {
                    match (w, g) {
                        (Ok(w), Ok(g)) => assert_same_read(i, w, g, read),
                        (Err(w), Err(g)) => assert_eq!(w.to_string(), g.to_string(), "{what}"),
                        _ => panic!(
                            "frame {i}, {what}: compiled {:?}, run-time {:?}",
                            w.is_ok(),
                            g.is_ok()
                        ),
                    }
                }
                assert_eq!(p.frame_index(), compiled.frame_index(), "{what}");
                let ran = |id: NodeId| profiler.node_stats(id).map_or(0, |s| s.count);
                let outside: Vec<&str> = (0..ir.nodes.len() as NodeId)
                    .filter(|&id| !cut.is_live(id) && ran(id) > 0)
                    .map(|id| ir.nodes[id as usize].name.as_ref())
                    .collect();
                if mode == L2Mode::Balanced {
                    assert!(
                        outside.is_empty(),
                        "{what}: ran outside the cut: {outside:?}"
                    );
                } else {
                    // A rated mode runs its own stages, every output.
                    assert!(!outside.is_empty(), "{what}");
                }
            }
        }
    }
}
