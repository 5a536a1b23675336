//! The runner's engines (`--engine sequential|parallel|pipelined`): the
//! same results line for line on every engine, the pipelined engine's
//! counts and its reset at a resolution change, the parallel and
//! pipelined engines' traces on the pool's threads, and every combination
//! that cannot run
//! refused as one usage line before any frame.

use crate::support::*;
use crate::{l2, state_and_modes};
use cortex::cortex_graph;
use cortex::l2::{L2Mode, L2 as L2Graph};
use cortex::ops::RgbFrame;
use cortex::runner::sources::{Frame, SyntheticClip};
use cortex::runner::{AdapterError, App, FrameAdapter, Record, RunnerError};
use cortex::Pipeline;
use serde_json::Value;

const SIZE: &str = "320x240";

fn json_run(extra: &[&str]) -> (Vec<Value>, String) {
    json_run_of(l2::app(), extra)
}

/// [`json_run`] of `app`.
fn json_run_of(app: App<L2Graph>, extra: &[&str]) -> (Vec<Value>, String) {
    let mut args = vec!["run", "--json", "--size", SIZE];
    args.extend_from_slice(extra);
    let out = run(app, &args, vec![]);
    out.ok();
    (out.json_lines(), out.stderr)
}

/// The L2 command with a record that reads every output: every frame runs
/// the mode's whole plan (fused where the mode fuses), on every engine.
fn l2_reading_everything() -> App<L2Graph> {
    let names = cortex::run::OutputSet::ALL.names(L2Graph::ir());
    l2::app().reads(cortex::runner::Reader::Record, &names)
}

/// An L2 command whose record reads three outputs (the blur verdict, the
/// scene change and the region), shown through their types' views: what
/// the pipelined engine computes when a program reads less than every
/// output.
fn l2_reading_three() -> App<L2Graph> {
    use cortex::views;
    App::<L2Graph>::new("l2-three", |o: &cortex::l2::L2Outputs| {
        Record::new()
            .field("blur", views::blur_verdict(&o.blur))
            .field("scene", views::scene_change(&o.scene))
            .field("roi", views::encoded_roi(&o.roi))
    })
    .reads(cortex::runner::Reader::Record, &["blur", "scene", "roi"])
    .parallel()
}

/// Every field but the node times, which differ from run to run.
fn without_times(lines: &[Value]) -> Vec<Value> {
    lines
        .iter()
        .map(|l| {
            let mut l = l.clone();
            l.as_object_mut().unwrap().remove("node_ms");
            l
        })
        .collect()
}

/// The counts of a pipelined run's summary line: received, processed,
/// failed, dropped.
fn counts(stderr: &str) -> [u64; 4] {
    let line = stderr
        .lines()
        .find(|l| l.contains("pipelined:"))
        .unwrap_or_else(|| panic!("no pipelined summary in {stderr:?}"));
    let n = |what: &str| -> u64 {
        let end = line.find(&format!(" {what}")).unwrap();
        let start = line[..end].rfind([' ', ':']).unwrap() + 1;
        line[start..end].parse().unwrap()
    };
    [n("received"), n("processed"), n("failed"), n("dropped")]
}

#[test]
fn parallel_and_pipelined_print_the_sequential_results() {
    for mode in ["BALANCED", "POWER_SAVE"] {
        let (seq, _) = json_run(&["--mode", mode]);
        assert_eq!(seq.len(), 48);
        let want = without_times(&seq);

        let (par, _) = json_run(&["--mode", mode, "--engine", "parallel"]);
        assert_eq!(without_times(&par), want, "{mode}: parallel");
        // The parallel engine still times every node that ran.
        for (p, s) in par.iter().zip(&seq) {
            let keys = |l: &Value| {
                l["node_ms"]
                    .as_object()
                    .unwrap()
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
            };
            assert_eq!(keys(p), keys(s));
        }

        for in_flight in ["1", "2", "3"] {
            let (pip, stderr) = json_run(&[
                "--mode",
                mode,
                "--engine",
                "pipelined",
                "--in-flight",
                in_flight,
            ]);
            assert_eq!(without_times(&pip), want, "{mode}: pipelined {in_flight}");
            // No node times in a pipelined run: the field says so.
            assert!(pip.iter().all(|l| l["node_ms"].is_null()));
            assert!(pip.iter().all(|l| l.get("dropped_before").is_none()));
            assert_eq!(counts(&stderr), [48, 48, 0, 0], "{stderr}");
            assert!(stderr.starts_with("48 frames in"), "{stderr}");
        }
    }
}

#[test]
fn weights_run_on_the_parallel_engine_as_on_the_sequential_one() {
    // A pattern no mode has (the text map alone off), and POWER_SAVE's
    // pattern with other values (its parallel function, fused groups
    // included, with these weights).
    for weights in ["wt=0", "wc=0.1,wt=0.5,ws=0,wm=0"] {
        let args = ["--weights", weights, "--frames", "12"];
        let (seq, _) = json_run(&args);
        assert_eq!(seq.len(), 12);
        let (par, _) = json_run(&[&args[..], &["--engine", "parallel"]].concat());
        assert_eq!(without_times(&par), without_times(&seq), "{weights}");
        // The same nodes ran, each timed.
        for (p, s) in par.iter().zip(&seq) {
            let keys = |l: &Value| {
                let mut k: Vec<String> =
                    l["node_ms"].as_object().unwrap().keys().cloned().collect();
                k.sort();
                k
            };
            assert_eq!(keys(p), keys(s), "{weights}");
        }
    }
}

#[test]
fn the_table_is_the_same_on_every_engine() {
    let table = |engine: &str, fusion: bool| {
        let mut args = vec!["run", "--size", SIZE, "--frames", "12", "--engine", engine];
        if !fusion {
            args.push("--no-fusion");
        }
        let out = run(l2::app(), &args, vec![]);
        out.ok().to_string()
    };
    let seq = table("sequential", false);
    assert_eq!(seq.lines().count(), 13);
    assert_eq!(table("parallel", false), seq);
    assert_eq!(table("pipelined", false), seq);
    // The fused groups compute the same table on every engine.
    for engine in ["sequential", "parallel", "pipelined"] {
        assert_eq!(table(engine, true), seq, "{engine} fused");
    }
}

#[test]
fn dropping_policies_count_every_frame() {
    for overflow in ["drop-oldest", "keep-latest"] {
        let (lines, stderr) = json_run(&[
            "--engine",
            "pipelined",
            "--overflow",
            overflow,
            "--queue",
            "1",
        ]);
        let [received, processed, failed, dropped] = counts(&stderr);
        assert_eq!(received, 48, "{overflow}: {stderr}");
        assert_eq!(
            received,
            processed + failed + dropped,
            "{overflow}: {stderr}"
        );
        assert_eq!(failed, 0);
        assert_eq!(lines.len() as u64, processed);
        // Frames in source order; the gaps are the dropped frames, each
        // announced on the frame after it.
        let mut next = 0;
        let mut announced = 0;
        for l in &lines {
            let frame = l["frame"].as_u64().unwrap();
            let before = l.get("dropped_before").map_or(0, |d| d.as_u64().unwrap());
            assert!(l.get("dropped_before") != Some(&Value::from(0)));
            assert_eq!(frame, next + before, "{overflow}: {l}");
            next = frame + 1;
            announced += before;
        }
        // Dropped after the last delivered frame: counted, never announced.
        assert!(announced <= dropped && dropped - announced == received - next);
    }
}

#[test]
fn a_resolution_change_resets_the_state_on_the_pipelined_engine_too() {
    let dir = temp_dir("engine-resize");
    let small = SyntheticClip::new(64, 48);
    let large = SyntheticClip::new(80, 60);
    let names = ["a", "b", "c", "d", "e", "f"];
    for (i, name) in names.iter().enumerate() {
        let clip = if (2..4).contains(&i) { &large } else { &small };
        write_png(&dir.join(format!("{name}.png")), &clip.frame(i as u64));
    }
    let input = dir.to_str().unwrap();
    let json = |engine: &str| {
        let out = run(
            l2::app(),
            &["run", "--json", "-i", input, "--engine", engine],
            vec![],
        );
        out.ok();
        (without_times(&out.json_lines()), out.stderr)
    };
    let (seq, _) = json("sequential");
    let resets: Vec<bool> = seq.iter().map(|l| l["reset"].as_bool().unwrap()).collect();
    assert_eq!(resets, [false, false, true, false, true, false]);
    let (pip, stderr) = json("pipelined");
    assert_eq!(pip, seq);
    assert_eq!(counts(&stderr), [6, 6, 0, 0], "{stderr}");
    assert_eq!(json("parallel").0, seq);
    let table = run(
        l2::app(),
        &["run", "-i", input, "--engine", "pipelined"],
        vec![],
    );
    assert!(
        table
            .ok()
            .contains("# frame 2: resolution 64x48 -> 80x60: pipeline state reset"),
        "{}",
        table.stdout
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn y4m_on_stdin_streams_and_a_cut_stream_keeps_the_complete_lines() {
    let c = SyntheticClip::new(96, 64);
    let frames: Vec<_> = (0..6).map(|f| c.frame(f)).collect();
    let stream = y4m(&frames, "420jpeg");
    let lines = |engine: &str, stream: Vec<u8>| {
        run(
            l2::app(),
            &["run", "--json", "-i", "-", "--engine", engine],
            stream,
        )
    };
    let seq = lines("sequential", stream.clone());
    let pip = lines("pipelined", stream.clone());
    assert_eq!(
        without_times(&pip.json_lines()),
        without_times(&seq.json_lines())
    );
    let mut cut = stream;
    cut.truncate(cut.len() - 100);
    let out = lines("pipelined", cut);
    assert_eq!(out.error(), "stdin: truncated at frame 5");
    assert_eq!(out.json_lines().len(), 5);
    assert!(out.stdout.ends_with('\n'));
}

#[test]
fn dump_sees_the_frames_of_a_pipelined_run() {
    let dir = temp_dir("engine-dump");
    let out = run(
        l2::app(),
        &[
            "run",
            "--size",
            SIZE,
            "--frames",
            "2",
            "--engine",
            "pipelined",
            "--dump",
            dir.to_str().unwrap(),
        ],
        vec![],
    );
    out.ok();
    let seq_dir = dir.join("seq");
    run(
        l2::app(),
        &[
            "run",
            "--size",
            SIZE,
            "--frames",
            "2",
            "--dump",
            seq_dir.to_str().unwrap(),
        ],
        vec![],
    )
    .ok();
    for f in 0..2 {
        for name in ["fused", "roi"] {
            let file = format!("{f:06}_{name}.png");
            let got = image::open(dir.join(&file)).unwrap().to_rgb8();
            let want = image::open(seq_dir.join(&file)).unwrap().to_rgb8();
            assert!(got == want, "{file} differs");
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_parallel_trace_has_one_slice_per_node_and_frame_on_the_pool_threads() {
    let dir = temp_dir("engine-trace");
    let path = dir.join("trace.json");
    let out = run(
        l2::app(),
        &[
            "run",
            "--size",
            SIZE,
            "--frames",
            "4",
            "--engine",
            "parallel",
            // Node by node: fused, a group is one slice.
            "--no-fusion",
            "--trace",
            path.to_str().unwrap(),
        ],
        vec![],
    );
    out.ok();
    let trace: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    // The printed results read every output (each under its name, as a
    // graph file's do): every frame runs the mode's whole plan.
    let plan = L2Mode::Balanced.plan();
    let read = l2_record_plan(plan);
    assert_eq!(read.order, plan.order);
    let events = assert_one_slice_per_node_and_frame(&trace, L2Graph::ir(), &[plan, &read], 4);
    let events = &events;
    let nodes: Vec<&Value> = events.iter().filter(|e| e["cat"] == "node").collect();
    assert_eq!(nodes.len(), plan.order.len() + read.order.len() * 3);
    // Frames on the calling thread's track, nodes where they ran.
    assert!(events
        .iter()
        .filter(|e| e["cat"] == "frame")
        .all(|e| e["tid"] == 0));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores > 1 {
        assert!(
            nodes.iter().any(|e| e["tid"] != 0),
            "no node on a pool thread"
        );
    }
    // Every track in use is named.
    for e in &nodes {
        assert!(events
            .iter()
            .any(|m| m["ph"] == "M" && m["name"] == "thread_name" && m["tid"] == e["tid"]));
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A usage error: one line, before any frame ran (`main` exits with 2).
fn usage_error<P: Pipeline + 'static>(app: App<P>, args: &[&str]) -> String {
    let out = run(app, args, vec![]);
    assert!(
        matches!(out.result, Err(RunnerError::Usage(_))),
        "{args:?}: {:?}",
        out.result
    );
    assert!(out.stdout.is_empty(), "{args:?} printed {}", out.stdout);
    let e = out.error();
    assert_eq!(e.lines().count(), 1, "{e}");
    e
}

#[test]
fn a_pipeline_not_declared_parallel_is_refused_in_one_line() {
    for engine in ["parallel", "pipelined"] {
        let e = usage_error(state_and_modes::app(), &["run", "--engine", engine]);
        assert!(
            e.contains("MotionAlarm") && e.contains("#[parallel]"),
            "{engine}: {e}"
        );
    }
    // The sequential engine is every pipeline's.
    run(
        state_and_modes::app(),
        &[
            "run",
            "--engine",
            "sequential",
            "--frames",
            "2",
            "--size",
            SIZE,
        ],
        vec![],
    )
    .ok();
}

/// The node slices of `engine`'s trace of 4 frames, node by node: how many
/// each node has, and the slices themselves.
fn node_slices(engine: &str) -> (std::collections::BTreeMap<String, usize>, Vec<Value>) {
    traced(l2_reading_everything(), engine, 4)
}

/// `app`'s node slices of a trace of `frames` frames on `engine`, unfused.
fn traced(
    app: App<L2Graph>,
    engine: &str,
    frames: u32,
) -> (std::collections::BTreeMap<String, usize>, Vec<Value>) {
    let dir = temp_dir(&format!("engine-trace-{engine}-{frames}"));
    let path = dir.join("trace.json");
    let frames = frames.to_string();
    let out = run(
        app,
        &[
            "run",
            "--size",
            SIZE,
            "--frames",
            &frames,
            "--engine",
            engine,
            "--no-fusion",
            "--trace",
            path.to_str().unwrap(),
        ],
        vec![],
    );
    out.ok();
    let trace: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(dir);
    let events = trace["traceEvents"]
        .as_array()
        .expect("traceEvents")
        .clone();
    let mut counts = std::collections::BTreeMap::new();
    for e in events.iter().filter(|e| e["cat"] == "node") {
        *counts
            .entry(e["name"].as_str().unwrap().to_string())
            .or_insert(0) += 1;
    }
    (counts, events)
}

/// The pipelined engine computes what the JSON lines read and no more: the
/// same lines as the sequential engine, and, for a record that reads less
/// than every output, the encoder's inputs (`regions`, `qp_map`) only on
/// the frames that have no outputs yet to run into (each of those makes
/// every output), never on the later ones.
#[test]
fn a_pipelined_run_of_the_json_fields_skips_the_encoder_inputs() {
    const FRAMES: usize = 8;
    let n = FRAMES.to_string();
    let (seq, _) = json_run_of(l2_reading_three(), &["--frames", &n]);
    let (pip, _) = json_run_of(
        l2_reading_three(),
        &["--frames", &n, "--engine", "pipelined"],
    );
    assert_eq!(pip.len(), FRAMES);
    assert_eq!(without_times(&pip), without_times(&seq));
    let (counts, _) = traced(l2_reading_three(), "pipelined", FRAMES as u32);
    let (all, _) = traced(l2_reading_everything(), "pipelined", FRAMES as u32);
    assert_eq!(all.get("regions"), Some(&FRAMES), "{all:?}");
    assert_eq!(all.get("qp_map"), Some(&FRAMES), "{all:?}");
    // What the JSON lines read runs on every frame that runs into the
    // outputs of an earlier one (a frame that makes every output is
    // counted below through the encoder's inputs).
    for read in ["roi", "blur", "scene"] {
        let ran = counts.get(read).copied().unwrap_or(0);
        assert!(
            ran >= FRAMES - 2,
            "{read} ran on {ran} of {FRAMES} frames: {counts:?}"
        );
    }
    // Two frames in flight: at most those two start without outputs.
    for skipped in ["regions", "qp_map"] {
        let ran = counts.get(skipped).copied().unwrap_or(0);
        assert!(
            ran <= 2,
            "{skipped} ran on {ran} of {FRAMES} frames: {counts:?}"
        );
    }
}

#[test]
fn a_pipelined_trace_has_every_node_of_every_frame_and_one_slice_per_frame() {
    let (want, _) = node_slices("sequential");
    let (got, events) = node_slices("pipelined");
    assert!(!want.is_empty());
    assert_eq!(got, want, "the same nodes, as often, as the sequential run");
    // One slice per frame (its second stage), numbered in order, on the
    // frames' track; node slices name no frame (several are in flight).
    let frames: Vec<&Value> = events.iter().filter(|e| e["cat"] == "frame").collect();
    let numbers: Vec<u64> = frames
        .iter()
        .map(|e| e["args"]["frame"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, [0, 1, 2, 3]);
    assert!(frames.iter().all(|e| e["tid"] == 0));
    let nodes: Vec<&Value> = events.iter().filter(|e| e["cat"] == "node").collect();
    assert!(nodes.iter().all(|e| e["args"]["frame"].is_null()));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores > 1 {
        assert!(
            nodes.iter().any(|e| e["tid"] != 0),
            "no node on a pool thread"
        );
    }
}

/// Each node's row of a profile of 3 frames on `engine`: name and runs.
fn profile_runs(engine: &str) -> Vec<(String, String)> {
    let out = run(
        l2::app(),
        &[
            "profile",
            "--engine",
            engine,
            "--no-fusion",
            "--frames",
            "3",
            "--size",
            SIZE,
        ],
        vec![],
    );
    out.ok();
    let ir = L2Graph::ir();
    out.stdout
        .lines()
        .filter_map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            let name = *cols.first()?;
            ir.node_id(name)?;
            Some((name.to_string(), cols.get(2)?.to_string()))
        })
        .collect()
}

#[test]
fn a_pipelined_profile_times_every_node_as_often_as_a_sequential_one() {
    let want = profile_runs("sequential");
    let got = profile_runs("pipelined");
    let plan = L2Mode::Balanced.plan();
    assert!(want.len() >= plan.order.len(), "{want:?}");
    assert!(want.iter().any(|(_, runs)| runs == "3"), "{want:?}");
    assert_eq!(got, want);
}

#[test]
fn impossible_engine_options_are_usage_errors() {
    for (args, expect) in [
        (
            &["run", "--queue", "2"][..],
            "--queue needs --engine pipelined",
        ),
        (
            &["run", "--engine", "parallel", "--overflow", "block"][..],
            "--overflow",
        ),
        (
            &["run", "--memory-budget", "1000000"][..],
            "--memory-budget needs --engine pipelined",
        ),
        (
            &["run", "--engine", "pipelined", "--weights", "wc=0"][..],
            "--weights",
        ),
        (&["plan", "--engine", "parallel"][..], "sequential engine"),
        (
            &["run", "--engine", "pipelined", "--in-flight", "0"][..],
            "0",
        ),
        (
            &["run", "--engine", "pipelined", "--queue", "100000"][..],
            "100000",
        ),
        (&["run", "--engine", "warp"][..], "warp"),
    ] {
        let e = usage_error(l2::app(), args);
        assert!(e.contains(expect), "{args:?}: {e}");
    }
}

/// The mean brightness of a frame.
fn mean(frame: &RgbFrame) -> f64 {
    frame.iter().map(|&v| f64::from(v)).sum::<f64>() / frame.len().max(1) as f64
}

fn scale(m: &f64, gain: &f64) -> f64 {
    m * gain
}

fn total(x: &f64, prev: &f64) -> f64 {
    x + prev
}

cortex_graph! {
    /// A `#[parallel]` pipeline with an input besides the frame, and state.
    #[parallel]
    pipeline Gain {
        input frame: RgbFrame;
        input gain: f64;
        state _sum: f64 = 0.0;
        node m = mean(frame);
        node s = scale(m, gain);
        node t = total(s, _sum);
        t -> _sum;
        output s: f64;
        output t: f64;
    }
}

struct WithGain(f64);

impl FrameAdapter<Gain> for WithGain {
    fn with_inputs(
        &mut self,
        frame: &mut Frame,
        run: &mut dyn FnMut(<Gain as Pipeline>::Inputs<'_>),
    ) -> Result<(), AdapterError> {
        run((&frame.image, &self.0));
        Ok(())
    }
}

fn gain_app(fail_at: Option<u64>) -> App<Gain> {
    App::with_adapter(
        "gain",
        |o: &GainOutputs| Record::new().field("s", o.s).field("t", o.t),
        WithGain(0.5),
    )
    .parallel_with(move |f: &Frame| {
        if Some(f.index) == fail_at {
            return Err("no gain for this frame".into());
        }
        Ok((f.image.clone(), 0.5))
    })
}

#[test]
fn parallel_with_builds_owned_inputs_for_the_pipelined_engine() {
    let json = |engine: &str, fail_at: Option<u64>| {
        run(
            gain_app(fail_at),
            &[
                "run", "--json", "--size", "64x48", "--frames", "8", "--engine", engine,
            ],
            vec![],
        )
    };
    let seq = json("sequential", None);
    let want = without_times(&seq.json_lines());
    assert_eq!(want.len(), 8);
    // The state carried: the running total grows.
    assert!(want[7]["outputs"]["t"].as_f64() > want[0]["outputs"]["t"].as_f64());
    for engine in ["parallel", "pipelined"] {
        let out = json(engine, None);
        assert_eq!(without_times(&out.json_lines()), want, "{engine}");
    }
    // The owned adapter fails on the producer thread: the frames before it
    // are printed, then its error.
    let out = json("pipelined", Some(3));
    assert_eq!(
        out.error(),
        "frame 3: preparing the inputs: no gain for this frame"
    );
    assert_eq!(without_times(&out.json_lines()), want[..3]);
}

#[test]
fn fused_runs_time_their_groups() {
    let (plain, _) = json_run_of(l2_reading_everything(), &["--frames", "6", "--no-fusion"]);
    let (fused, _) = json_run_of(l2_reading_everything(), &["--frames", "6"]);
    assert_eq!(without_times(&fused), without_times(&plain));
    let group = "[gray+laplacian+scene+center+motion]";
    // The first frame has no previous one: the two members that read it
    // (scene, motion) decline alone and time their own calls, the rest of
    // the group runs fused; every later frame runs the whole group fused.
    let first = fused[0]["node_ms"].as_object().unwrap();
    assert!(
        first.contains_key(group)
            && first.contains_key("scene")
            && first.contains_key("motion")
            && !first.contains_key("gray"),
        "{first:?}"
    );
    for l in &fused[1..] {
        let ms = l["node_ms"].as_object().unwrap();
        assert!(
            ms.contains_key(group) && ms.contains_key("[fused]"),
            "{ms:?}"
        );
        assert!(
            !ms.contains_key("gray") && ms.contains_key("text"),
            "{ms:?}"
        );
    }
    // The trace holds one slice per fused run of the group: the first
    // frame's too, with scene and motion declining alone.
    let dir = temp_dir("fused-trace");
    let path = dir.join("trace.json");
    run(
        l2_reading_everything(),
        &[
            "run",
            "--size",
            SIZE,
            "--frames",
            "4",
            "--trace",
            path.to_str().unwrap(),
        ],
        vec![],
    )
    .ok();
    let trace: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let slices = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "fused group" && e["name"] == group)
        .count();
    assert_eq!(slices, 4, "every frame runs the group fused");
    let _ = std::fs::remove_dir_all(dir);
    let profile = run(
        l2::app(),
        &["profile", "--size", SIZE, "--frames", "4"],
        vec![],
    );
    assert!(
        profile.ok().contains(group) && profile.stdout.contains("[fused group]"),
        "{}",
        profile.stdout
    );
}

fn checked_scale(m: &f64, gain: &f64) -> Result<f64, String> {
    if *gain < 0.0 {
        return Err(format!("negative gain {gain}"));
    }
    Ok(m * gain)
}

cortex_graph! {
    /// A pipeline with state whose node fails on a negative gain.
    #[parallel]
    pipeline Picky {
        input frame: RgbFrame;
        input gain: f64;
        state _sum: f64 = 0.0;
        node m = mean(frame);
        node s = checked_scale(m, gain)?;
        node t = total(s, _sum);
        t -> _sum;
        output t: f64;
    }
}

/// A gain of 0.5, and -1 (which `Picky` refuses) on the listed frames.
struct NegativeAt(Vec<u64>);

impl FrameAdapter<Picky> for NegativeAt {
    fn with_inputs(
        &mut self,
        frame: &mut Frame,
        run: &mut dyn FnMut(<Picky as Pipeline>::Inputs<'_>),
    ) -> Result<(), AdapterError> {
        let gain = if self.0.contains(&frame.index) {
            -1.0
        } else {
            0.5
        };
        run((&frame.image, &gain));
        Ok(())
    }
}

#[test]
fn keep_going_reports_and_skips_failing_frames_with_the_state_of_the_last_good_one() {
    let app = || {
        App::with_adapter(
            "picky",
            |o: &PickyOutputs| Record::new().field("t", o.t),
            NegativeAt(vec![2, 5]),
        )
        .parallel_with(|f: &Frame| {
            let gain = if [2, 5].contains(&f.index) { -1.0 } else { 0.5 };
            Ok((f.image.clone(), gain))
        })
    };
    let clip = SyntheticClip::new(64, 48);
    // The running total over the frames that ran: frames 2 and 5 add nothing.
    let mut sum = 0.0;
    let want: Vec<(u64, f64)> = (0..8u64)
        .filter(|f| ![2, 5].contains(f))
        .map(|f| {
            sum += mean(&clip.frame(f)) * 0.5;
            (f, sum)
        })
        .collect();
    let base = ["run", "--json", "--size", "64x48", "--frames", "8"];
    // Without it, the first failing frame ends the run.
    let out = run(app(), &base, vec![]);
    assert_eq!(out.error(), "frame 2: node `s` failed: negative gain -1");
    assert_eq!(out.json_lines().len(), 2);
    for engine in ["sequential", "parallel", "pipelined"] {
        let mut args = base.to_vec();
        args.extend(["--keep-going", "--engine", engine]);
        let out = run(app(), &args, vec![]);
        assert_eq!(
            out.error(),
            "2 of 8 frames failed (the first: frame 2); the others ran",
            "{engine}"
        );
        let lines = out.json_lines();
        assert_eq!(lines.len(), 8, "{engine}: {lines:?}");
        let mut got = Vec::new();
        for l in &lines {
            let f = l["frame"].as_u64().unwrap();
            match l.get("error") {
                Some(e) => {
                    assert!([2, 5].contains(&f), "{engine}: {l}");
                    assert_eq!(
                        e.as_str().unwrap(),
                        format!("frame {f}: node `s` failed: negative gain -1")
                    );
                }
                None => got.push((f, l["outputs"]["t"].as_f64().unwrap())),
            }
        }
        assert_eq!(got.len(), want.len(), "{engine}");
        for ((f, t), (wf, wt)) in got.iter().zip(&want) {
            assert_eq!(f, wf, "{engine}");
            assert!(
                (t - wt).abs() < 1e-9,
                "{engine} frame {f}: {t} against {wt}"
            );
        }
    }
    // The table says it too.
    let out = run(
        app(),
        &["run", "--size", "64x48", "--frames", "8", "--keep-going"],
        vec![],
    );
    assert!(out
        .stdout
        .contains("# frame 5: failed: frame 5: node `s` failed: negative gain -1"));
    // An encoded video cannot skip a frame.
    let out = run(
        app(),
        &["run", "--keep-going", "--encode", "/tmp/never.mkv"],
        vec![],
    );
    assert!(
        matches!(out.result, Err(RunnerError::Usage(_))),
        "{:?}",
        out.result
    );
}

#[test]
fn pipelined_options_whose_frames_cannot_fit_in_memory_are_refused_before_the_first_frame() {
    // Each value is inside its range; together, at 8192x8192 (192 MiB a
    // frame), they would hold 193 GiB and 12.4 GiB of frames.
    for (extra, frames, held) in [
        (
            ["--queue", "1024"],
            "1027 frames",
            "2 in flight + 1024 waiting + 1 being read",
        ),
        (
            ["--in-flight", "64"],
            "69 frames",
            "64 in flight + 4 waiting + 1 being read",
        ),
    ] {
        let mut args = vec!["run", "--size", "8192x8192", "--engine", "pipelined"];
        args.extend_from_slice(&extra);
        let out = run(l2::app(), &args, vec![]);
        assert_eq!(out.result.as_ref().unwrap_err().exit_code(), 2);
        let e = usage_error(l2::app(), &args);
        assert!(
            e.starts_with("--engine pipelined: 8192x8192 frames do not fit: "),
            "{e}"
        );
        assert!(
            e.contains(&format!("{frames} of 201326592 bytes (192.0 MiB)")),
            "{e}"
        );
        assert!(e.contains(held), "{e}");
        assert!(
            e.contains("over the memory budget of 2147483648 bytes (2.0 GiB)"),
            "{e}"
        );
        assert!(
            e.ends_with("lower --queue or --in-flight, or raise --memory-budget"),
            "{e}"
        );
        // Refused before a frame is drawn: no result was printed.
        assert!(out.stdout.is_empty(), "{}", out.stdout);
    }
    // Many frames in flight and a short queue: 64 in flight, a queue of 1.
    let e = usage_error(
        l2::app(),
        &[
            "run",
            "--size",
            "8192x8192",
            "--engine",
            "pipelined",
            "--in-flight",
            "64",
            "--queue",
            "1",
        ],
    );
    assert!(e.contains("66 frames of 201326592 bytes"), "{e}");
    // The largest options fit at 640x480 (1 GiB).
    run(
        l2::app(),
        &[
            "run",
            "--json",
            "--frames",
            "2",
            "--size",
            "640x480",
            "--engine",
            "pipelined",
            "--in-flight",
            "64",
            "--queue",
            "1024",
        ],
        vec![],
    )
    .ok();
}

#[test]
fn memory_budget_sets_the_bound_and_frames_read_from_a_file_are_checked_too() {
    // 1027 frames of 1024x1024 RGB: 3.0 GiB, over the default, under 4G.
    let big = [
        "run",
        "--json",
        "--frames",
        "1",
        "--size",
        "1024x1024",
        "--engine",
        "pipelined",
        "--queue",
        "1024",
    ];
    let e = usage_error(l2::app(), &big);
    assert!(e.contains("1027 frames of 3145728 bytes"), "{e}");
    let mut raised = big.to_vec();
    raised.extend_from_slice(&["--memory-budget", "4G"]);
    assert_eq!(run(l2::app(), &raised, vec![]).json_lines().len(), 1);
    // Y4M on stdin, 96x64 frames (18432 bytes): with the buffers of the
    // 2 frames in flight and the pipeline's own (measured here as the plan
    // reports them), the default 7 frames fit the budget, 8 do not; the
    // size is known at the first frame, which is refused before it is
    // queued.
    let c = SyntheticClip::new(96, 64);
    let frames: Vec<_> = (0..3).map(|f| c.frame(f)).collect();
    let mut probe = L2Graph::new();
    probe.run(L2Mode::Balanced, &frames[0]).unwrap();
    let buffers: u64 = probe.buffer_bytes().iter().map(|&(_, _, b)| b as u64).sum();
    let budget = (7 * 18432 + 3 * buffers).to_string();
    let stream = y4m(&frames, "420jpeg");
    let args = |queue: &'static str| {
        vec![
            "run",
            "--json",
            "--mode",
            "BALANCED",
            "-i",
            "-",
            "--engine",
            "pipelined",
            "--memory-budget",
            &budget,
            "--queue",
            queue,
        ]
    };
    let fits = run(l2::app(), &args("4"), stream.clone());
    assert_eq!(fits.json_lines().len(), 3);
    let out = run(l2::app(), &args("5"), stream);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    assert_eq!(out.result.as_ref().unwrap_err().exit_code(), 2);
    let e = out.error();
    assert!(
        e.starts_with("--engine pipelined: 96x64 frames do not fit: 8 frames of 18432 bytes"),
        "{e}"
    );
    assert!(e.contains(&format!("{budget} bytes")), "{e}");
}

#[test]
fn a_panicking_record_on_the_pipelined_engine_ends_the_run_with_one_error_line() {
    // The program's record function runs in the stream's result callback:
    // a panic there on the fourth frame stops the stream, the three frames
    // before it are printed, and the run fails (exit 1) naming the frame.
    let calls = std::sync::atomic::AtomicU64::new(0);
    let app = App::with_adapter(
        "gain",
        move |o: &GainOutputs| {
            if calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed) == 3 {
                panic!("record broke");
            }
            Record::new().field("s", o.s).field("t", o.t)
        },
        WithGain(0.5),
    )
    .parallel_with(|f: &Frame| Ok((f.image.clone(), 0.5)));
    let out = run(
        app,
        &[
            "run",
            "--json",
            "--size",
            "64x48",
            "--frames",
            "8",
            "--engine",
            "pipelined",
        ],
        vec![],
    );
    assert_eq!(out.json_lines().len(), 3, "{}", out.stdout);
    assert_eq!(out.result.as_ref().unwrap_err().exit_code(), 1);
    assert_eq!(
        out.error(),
        "--engine pipelined: the result callback panicked on frame 3: record broke"
    );
}

#[test]
fn pipelined_options_whose_frames_in_flight_cannot_hold_their_buffers_are_refused_up_front() {
    // The 8192x8192 case at a test's size: the frames alone fit the budget,
    // the buffers each frame in flight fills do not. What a frame fills is
    // measured here on a pipeline of the test's own, as the plan reports it.
    let (w, h) = (256usize, 192usize);
    let mut probe = L2Graph::new();
    probe
        .run(L2Mode::Balanced, &SyntheticClip::new(w, h).frame(0))
        .unwrap();
    let buffers: u64 = probe.buffer_bytes().iter().map(|&(_, _, b)| b as u64).sum();
    let frame = (w * h * 3) as u64;
    assert!(buffers > 2 * frame, "{buffers}");
    let size = format!("{w}x{h}");
    // 8 in flight and a queue of 1: 10 frames and 9 sets of buffers.
    let needed = 10 * frame + 9 * buffers;
    let args = |budget: u64| -> Vec<String> {
        [
            "run",
            "--json",
            "--mode",
            "BALANCED",
            "--size",
            &size,
            "--frames",
            "12",
            "--engine",
            "pipelined",
            "--in-flight",
            "8",
            "--queue",
            "1",
            "--memory-budget",
            &budget.to_string(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    for budget in [10 * frame, needed - 1] {
        let a = args(budget);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let out = run(l2::app(), &a, vec![]);
        let e = out.error();
        assert_eq!(out.result.as_ref().unwrap_err().exit_code(), 2, "{e}");
        assert!(e.contains(&format!("{size} frames do not fit")), "{e}");
        assert!(
            e.contains(&format!(
                "9 sets of the pipeline's buffers of {buffers} bytes"
            )),
            "{e}"
        );
        assert!(e.contains(&format!("need {needed} bytes")), "{e}");
        // Refused before the stream: no frame ran.
        assert!(out.stdout.is_empty(), "{}", out.stdout);
    }
    // With room for them, the same run goes through, every frame.
    let a = args(needed);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let out = run(l2::app(), &a, vec![]);
    out.ok();
    assert_eq!(out.json_lines().len(), 12);
}
