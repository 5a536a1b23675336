//! The L2 program (examples/l2.rs, on `cortex::runner`) as a user meets it:
//! the synthetic clip and Y4M on stdin flag the cut and the blurred stretch
//! where they are, the ROI follows the moving object, POWER_SAVE matches
//! the full graph, the trace and the pictures are what they claim, and bad
//! input is one readable error with nothing half-written.

use crate::l2;
use crate::support::*;
use cortex::l2::{L2Mode, L2 as L2Graph};
use cortex::runner::sources::{FrameSource, SyntheticClip, SyntheticLayout};
use cortex::Run;
use serde_json::Value;

/// Frame size of the tests: small enough for a quick debug run.
const W: usize = 320;
const H: usize = 240;
const SIZE: &str = "320x240";

fn clip() -> SyntheticClip {
    SyntheticClip::new(W, H)
}

fn frames(n: u64) -> Vec<cortex::ops::RgbFrame> {
    let c = clip();
    (0..n).map(|f| c.frame(f)).collect()
}

/// Field `name` of output `output`'s view in a JSON line.
fn field<'a>(line: &'a Value, output: &str, name: &str) -> &'a Value {
    &line["outputs"][output][name]
}

/// The checks a user makes on the clip's results.
fn assert_clip_results(lines: &[Value]) {
    let layout = SyntheticLayout::DEFAULT;
    assert_eq!(lines.len() as u64, layout.len);
    let c = clip();
    for (i, line) in lines.iter().enumerate() {
        let f = i as u64;
        assert_eq!(line["frame"], f);
        // The cut is flagged exactly once, at the cut.
        assert_eq!(
            field(line, "scene", "cut"),
            &Value::Bool(f == layout.cut),
            "frame {f}: {line}"
        );
        // The blurred stretch is blurry, no sharp frame is.
        assert_eq!(
            field(line, "blur", "blurry"),
            &Value::Bool(layout.is_blurred(f)),
            "frame {f}: {line}"
        );
        // The ROI box holds the moving object's centre — except at the cut,
        // where the motion map compares two unrelated scenes and lights up
        // everywhere, so nothing singles the object out.
        if f == layout.cut {
            continue;
        }
        let roi: Vec<f32> = field(line, "roi", "roi")
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap() as f32)
            .collect();
        let (cx, cy) = c.object_center(f);
        assert!(
            cx >= roi[0] && cx < roi[0] + roi[2] && cy >= roi[1] && cy < roi[1] + roi[3],
            "frame {f}: object at ({cx},{cy}) outside ROI {roi:?}"
        );
    }
}

#[test]
fn synthetic_clip_flags_cut_blur_and_follows_the_object() {
    let out = run(l2::app(), &["run", "--json", "--size", SIZE], vec![]);
    out.ok();
    let lines = out.json_lines();
    assert_clip_results(&lines);
    // The schema: every node of BALANCED timed, metadata present.
    let first = &lines[0];
    assert_eq!(first["mode"], "BALANCED");
    assert_eq!(
        (first["width"].as_u64(), first["height"].as_u64()),
        (Some(W as u64), Some(H as u64))
    );
    assert_eq!(first["reset"], false);
    assert!((first["timestamp"].as_f64().unwrap() - 0.0).abs() < 1e-12);
    // Each node timed alone, or with its fused group (a key `[a+b+c]`).
    let timed = first["node_ms"].as_object().unwrap();
    for node in L2Graph::ir().nodes.iter() {
        let name = node.name.as_ref();
        let in_group = |k: &String| {
            k.strip_prefix('[')
                .and_then(|k| k.strip_suffix(']'))
                .is_some_and(|k| k.split('+').any(|m| m == name))
        };
        assert!(
            timed.contains_key(name) || timed.keys().any(in_group),
            "{name} untimed: {timed:?}"
        );
    }
    assert!(out.stderr.contains("48 frames"), "{}", out.stderr);
}

#[test]
fn y4m_on_stdin_gives_the_same_verdicts() {
    let n = SyntheticLayout::DEFAULT.len;
    let stream = y4m(&frames(n), "420jpeg");
    let out = run(l2::app(), &["run", "--json", "-i", "-"], stream);
    out.ok();
    let lines = out.json_lines();
    assert_clip_results(&lines);
    // Timestamps come from the stream's 30 fps.
    assert!((lines[3]["timestamp"].as_f64().unwrap() - 0.1).abs() < 1e-9);
}

#[test]
fn y4m_444_round_trips_the_pixels() {
    use cortex::runner::sources::Y4mSource;
    let original = frames(1);
    let bytes = y4m(&original, "444");
    let mut src = Y4mSource::new("t", Box::new(std::io::Cursor::new(bytes))).unwrap();
    let decoded = src.next_frame().unwrap().unwrap();
    assert!(src.next_frame().is_none());
    // RGB → limited-range YCbCr → RGB loses a little to rounding: at most
    // 2 levels a channel (measured by the test; the ranges squeeze 256
    // levels into 220 and 225).
    let worst = original[0]
        .iter()
        .zip(decoded.image.iter())
        .map(|(&a, &b)| a.abs_diff(b))
        .max()
        .unwrap();
    assert!(worst <= 2, "worst channel error {worst}");
}

#[test]
fn power_save_equals_the_full_graph_with_its_weights() {
    let mut a = L2Graph::new();
    let full = a.pattern_plan(0);
    let mut b = L2Graph::new();
    let mut computed = 0;
    for f in frames(SyntheticLayout::DEFAULT.len).iter().step_by(3) {
        let x = a
            .run_with_fresh(&mut Run::plan(&full, L2Mode::PowerSave.weights()), f)
            .unwrap();
        let y = b.run(L2Mode::PowerSave, f).unwrap();
        assert_eq!(x.blur, y.blur);
        // POWER_SAVE holds the text map on 3 frames of 4: the frames that
        // compute it equal the full graph.
        if b.holds()[0].held_last_frame {
            continue;
        }
        computed += 1;
        assert!(x
            .fused
            .iter()
            .zip(y.fused.iter())
            .all(|(p, q)| p.to_bits() == q.to_bits()));
        assert_eq!(x.roi, y.roi);
    }
    assert!(computed >= 2, "{computed} frames computed the text map");
    // Through the program: the mode and the same table as run-time weights
    // give the same results.
    let by_mode = run(
        l2::app(),
        &[
            "run",
            "--json",
            "--size",
            SIZE,
            "--frames",
            "6",
            "--mode",
            "POWER_SAVE",
        ],
        vec![],
    );
    let by_weights = run(
        l2::app(),
        &[
            "run",
            "--json",
            "--size",
            SIZE,
            "--frames",
            "6",
            "--weights",
            "wc=0.7,wt=0.3,ws=0,wm=0",
        ],
        vec![],
    );
    let (m, w) = (by_mode.json_lines(), by_weights.json_lines());
    assert_eq!(m.len(), 6);
    let mut computed = 0;
    for (p, q) in m.iter().zip(&w) {
        // POWER_SAVE holds the text map between the frames that compute
        // it (the JSON names what a frame held); run-time weights compute
        // every frame.
        assert_eq!(q.get("held"), Some(&serde_json::json!([])));
        if p["held"] == serde_json::json!([]) {
            computed += 1;
            assert_eq!(p["outputs"], q["outputs"]);
        } else {
            assert_eq!(p["held"], serde_json::json!(["text", "regions"]));
            assert_eq!(p["outputs"]["blur"], q["outputs"]["blur"]);
        }
        // Neither ran the eliminated nodes.
        for gone in ["saliency", "motion"] {
            assert!(p["node_ms"].get(gone).is_none() && q["node_ms"].get(gone).is_none());
        }
    }
    assert_eq!(w[0]["weights"]["ws"], 0.0);
    assert!(
        (2..6).contains(&computed),
        "{computed} of 6 frames computed the text map"
    );
    // `--no-rates`: the mode's every-frame plan, equal to the weights on
    // every frame.
    let every = run(
        l2::app(),
        &[
            "run",
            "--json",
            "--size",
            SIZE,
            "--frames",
            "6",
            "--mode",
            "POWER_SAVE",
            "--no-rates",
        ],
        vec![],
    )
    .json_lines();
    assert_eq!(every.len(), 6);
    for (p, q) in every.iter().zip(&w) {
        assert_eq!(p["held"], serde_json::json!([]));
        assert_eq!(p["outputs"], q["outputs"]);
    }
}

#[test]
fn trace_has_one_slice_per_node_and_frame() {
    let dir = temp_dir("trace");
    let path = dir.join("trace.json");
    let out = run(
        l2::app(),
        &[
            "run",
            "--size",
            SIZE,
            "--frames",
            "5",
            "--mode",
            "TEXT_FOCUS",
            // Node by node: fused, a group is one slice.
            "--no-fusion",
            "--trace",
            path.to_str().unwrap(),
        ],
        vec![],
    );
    out.ok();
    let trace: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    // The first frame computes every output; later ones what the printed
    // results read (every output too).
    let plan = L2Mode::TextFocus.plan();
    let read = l2_record_plan(plan);
    let events = assert_one_slice_per_node_and_frame(&trace, L2Graph::ir(), &[plan, &read], 5);
    let events = &events;
    let node_slices = events.iter().filter(|e| e["cat"] == "node").count();
    assert_eq!(node_slices, plan.order.len() + read.order.len() * 4);
    for e in events.iter().filter(|e| e["ph"] == "X") {
        assert!(e["ts"].as_f64().unwrap() >= 0.0 && e["dur"].as_f64().unwrap() >= 0.0);
        assert_eq!(e["tid"], 0, "one thread, one track: the calling thread's");
    }
    assert!(events
        .iter()
        .any(|e| e["ph"] == "M" && e["name"] == "thread_name"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn dump_writes_heat_map_and_boxed_frame() {
    let dir = temp_dir("dump");
    let pics = dir.join("pics");
    let out = run(
        l2::app(),
        &[
            "run",
            "--size",
            SIZE,
            "--frames",
            "2",
            "--dump",
            pics.to_str().unwrap(),
        ],
        vec![],
    );
    out.ok();
    for f in 0..2 {
        for name in ["fused", "roi"] {
            let img = image::open(pics.join(format!("{f:06}_{name}.png"))).unwrap();
            assert_eq!((img.width(), img.height()), (W as u32, H as u32));
        }
    }
    // The box is drawn in red where the ROI is.
    let lines = run(
        l2::app(),
        &["run", "--json", "--size", SIZE, "--frames", "1"],
        vec![],
    )
    .json_lines();
    let roi = field(&lines[0], "roi", "roi")
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as u32)
        .collect::<Vec<_>>();
    let boxed = image::open(pics.join("000000_roi.png")).unwrap().to_rgb8();
    assert_eq!(
        boxed.get_pixel(roi[0], roi[1] + roi[3] / 2).0,
        [255, 40, 40]
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn resolution_change_resets_the_state_and_says_so() {
    let dir = temp_dir("resize");
    let small = SyntheticClip::new(64, 48);
    let large = SyntheticClip::new(80, 60);
    write_png(&dir.join("a.png"), &small.frame(0));
    write_png(&dir.join("b.png"), &small.frame(1));
    write_png(&dir.join("c.png"), &large.frame(2));
    let input = dir.to_str().unwrap();
    let out = run(l2::app(), &["run", "--json", "-i", input], vec![]);
    let lines = out.json_lines();
    let resets: Vec<bool> = lines
        .iter()
        .map(|l| l["reset"].as_bool().unwrap())
        .collect();
    assert_eq!(resets, [false, false, true]);
    // After the reset the frame is a first frame again: no SSIM, no cut.
    assert_eq!(field(&lines[2], "scene", "ssim"), &Value::Null);
    assert_eq!(field(&lines[2], "scene", "cut"), &Value::Bool(false));
    assert_eq!(lines[2]["width"], 80);
    let table = run(l2::app(), &["run", "-i", input], vec![]);
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
fn graph_plan_profile_and_tour() {
    let listing = run(l2::app(), &["graph"], vec![]);
    assert!(listing.ok().contains("[compilable]") && listing.stdout.contains("roi"));
    // L2 declares strip forms: the listing names its fused groups.
    assert!(
        listing.stdout.contains("fused groups (full graph):")
            && listing.stdout.contains("unfused  saliency: no strip form"),
        "{}",
        listing.stdout
    );
    let mermaid = run(
        l2::app(),
        &["graph", "--format", "mermaid", "--mode", "POWER_SAVE"],
        vec![],
    );
    assert!(mermaid.ok().contains("saliency"));
    // A mode's drawing frames its islands and, inside them, the fused
    // groups its code runs (POWER_SAVE's rate keeps `{gray, scene}`, which
    // its trigger needs, apart from the rest).
    let (ir, plan) = (L2Graph::ir(), L2Mode::PowerSave.plan());
    let islands = cortex::passes::islands::islands(ir, Some(plan));
    let fusion = cortex::passes::rates::shown_fusion_plan(ir, plan);
    assert_eq!(fusion.groups.len(), 3);
    assert_eq!(
        mermaid.stdout,
        cortex::tools::export::to_mermaid_with(
            ir,
            &cortex::tools::export::Overlay {
                plan: Some(plan),
                islands: Some(&islands),
                fusion: Some(&fusion),
                notes: None,
            }
        )
    );
    assert!(mermaid.stdout.contains("subgraph group_0"));
    let dot = run(l2::app(), &["graph", "--format", "dot"], vec![]);
    assert!(dot.ok().starts_with("digraph"));

    let plan = run(
        l2::app(),
        &[
            "plan",
            "--mode",
            "POWER_SAVE",
            "--size",
            SIZE,
            "--frames",
            "3",
        ],
        vec![],
    );
    assert!(
        plan.ok().contains("removed: saliency, motion"),
        "{}",
        plan.stdout
    );
    // Priced with measured times: the removed nodes' cost is shown in ms.
    assert!(plan.stdout.contains("ms"), "{}", plan.stdout);
    let by_weights = run(
        l2::app(),
        &["plan", "--weights", "wt=0", "--size", SIZE, "--frames", "2"],
        vec![],
    );
    assert!(by_weights.ok().contains("text"), "{}", by_weights.stdout);

    let profile = run(
        l2::app(),
        &["profile", "--size", SIZE, "--frames", "3"],
        vec![],
    );
    assert!(
        profile.ok().contains("Profile: L2 (3 frames)"),
        "{}",
        profile.stdout
    );

    let tour = run(l2::app(), &["--size", "160x120", "--frames", "4"], vec![]);
    let text = tour.ok();
    assert!(text.contains("sharpness") && text.contains("Cortex Graph IR: L2"));
    assert!(text.contains("removed: saliency, motion") && text.contains("Profile: L2 (4 frames)"));
}

/// A failure before the first frame: one line, nothing on stdout, no trace,
/// no dump directory.
fn assert_fails_cleanly(args: &[&str], stdin: Vec<u8>, expect: &str) {
    let dir = temp_dir(&format!("fail-{}", expect.len()));
    let trace = dir.join("t.json");
    let dump = dir.join("d");
    let mut full: Vec<&str> = args.to_vec();
    let (t, d) = (
        trace.to_str().unwrap().to_string(),
        dump.to_str().unwrap().to_string(),
    );
    if args.first() == Some(&"run") {
        full.extend(["--json", "--trace", &t, "--dump", &d]);
    }
    let out = run(l2::app(), &full, stdin);
    let msg = out.error();
    assert!(msg.contains(expect), "{args:?}: `{msg}` lacks `{expect}`");
    assert!(!msg.contains('\n'), "one line: {msg}");
    assert_eq!(out.stdout, "", "{args:?}");
    assert!(!trace.exists() && !dump.exists(), "{args:?} wrote files");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bad_input_is_one_readable_line() {
    let dir = temp_dir("bad");
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("notes.txt"), "not a frame").unwrap();
    let corrupt = dir.join("corrupt");
    std::fs::create_dir_all(&corrupt).unwrap();
    std::fs::write(corrupt.join("0.png"), b"\x89PNG\r\n\x1a\nthis is not a png").unwrap();
    let truncated = dir.join("truncated");
    std::fs::create_dir_all(&truncated).unwrap();
    write_png(&truncated.join("0.png"), &frames(1)[0]);
    let bytes = std::fs::read(truncated.join("0.png")).unwrap();
    std::fs::write(truncated.join("0.png"), &bytes[..bytes.len() / 2]).unwrap();
    let jpeg_dir = dir.join("jpeg");
    std::fs::create_dir_all(&jpeg_dir).unwrap();
    let mut jpeg = Vec::new();
    image::RgbImage::from_raw(W as u32, H as u32, frames(1)[0].iter().copied().collect())
        .unwrap()
        .write_to(
            &mut std::io::Cursor::new(&mut jpeg),
            image::ImageFormat::Jpeg,
        )
        .unwrap();
    std::fs::write(jpeg_dir.join("0.jpg"), &jpeg[..jpeg.len() * 2 / 3]).unwrap();
    let s = |p: &std::path::Path| p.to_str().unwrap().to_string();

    assert_fails_cleanly(&["run", "-i", "/no/such/clip.y4m"], vec![], "no such file");
    assert_fails_cleanly(&["run", "-i", &s(&empty)], vec![], "no frames");
    assert_fails_cleanly(
        &["run", "-i", &format!("{}/*.png", s(&empty))],
        vec![],
        "no frames",
    );
    assert_fails_cleanly(&["run", "-i", "-"], vec![], "empty input");
    assert_fails_cleanly(
        &["run", "-i", "-"],
        b"YUV4MPEG2 W4 H4 C422\nFRAME\n".to_vec(),
        "unsupported Y4M colour space `422`",
    );
    assert_fails_cleanly(
        &["run", "-i", "-"],
        b"YUV4MPEG2 W4 H4 C420p10\n".to_vec(),
        "`420p10`",
    );
    assert_fails_cleanly(
        &["run", "-i", "-"],
        b"YUV4MPEG2 W100000 H100000\n".to_vec(),
        "exceeds the limit",
    );
    assert_fails_cleanly(
        &["run", "-i", "-"],
        b"GIF89a".to_vec(),
        "not a valid YUV4MPEG2",
    );
    assert_fails_cleanly(&["run", "-i", &s(&corrupt)], vec![], "cannot decode image");
    assert_fails_cleanly(
        &["run", "-i", &s(&truncated)],
        vec![],
        "cannot decode image",
    );
    assert_fails_cleanly(&["run", "-i", &s(&jpeg_dir)], vec![], "truncated JPEG");
    assert_fails_cleanly(
        &["run", "--mode", "TURBO"],
        vec![],
        "unknown mode `TURBO` (modes: BALANCED, POWER_SAVE, TEXT_FOCUS)",
    );
    assert_fails_cleanly(
        &["run", "--weights", "ws=abc"],
        vec![],
        "`abc` is not a number",
    );
    assert_fails_cleanly(&["run", "--weights", "ws=-1"], vec![], "negative");
    assert_fails_cleanly(
        &["run", "--weights", "wz=1"],
        vec![],
        "unknown weight key `wz` (keys: wc, wt, ws, wm)",
    );
    assert_fails_cleanly(&["run", "--frames", "0"], vec![], "--frames");
    assert_fails_cleanly(&["run", "--frames", "0"], vec![], "at least 1");
    assert_fails_cleanly(&["run", "--frames=-3"], vec![], "at least 1");
    assert_fails_cleanly(&["run", "--size", "0x10"], vec![], "--size");
    assert_fails_cleanly(
        &["plan", "--weights", "ws=x"],
        vec![],
        "`x` is not a number",
    );
    assert_fails_cleanly(&["profile", "-i", "/no/such/dir"], vec![], "no such file");
    assert_fails_cleanly(&["frobnicate"], vec![], "frobnicate");
    let _ = std::fs::remove_dir_all(dir);
}

/// The exit code `main` returns and the one line it prints for `args`.
fn failure(app: cortex::runner::App<L2Graph>, args: &[&str]) -> (u8, String) {
    let out = run(app, args, vec![]);
    assert_eq!(out.stdout, "", "{args:?} printed to stdout");
    let line = out.error();
    assert!(!line.contains('\n'), "one line: {line}");
    match out.result {
        Err(e) => (e.exit_code(), line),
        Ok(()) => unreachable!("error() fails the test on success"),
    }
}

#[test]
fn every_value_typed_wrong_exits_2_naming_flag_and_value() {
    for (args, flag, value) in [
        (&["run", "--mode", "NOPE"][..], "--mode", "`NOPE`"),
        (
            &["profile", "--mode", "balanced"][..],
            "--mode",
            "`balanced`",
        ),
        (&["run", "--weights", "wc=abc"][..], "--weights", "`abc`"),
        (&["run", "--weights", "wq=1"][..], "--weights", "`wq`"),
        (&["run", "--weights", "wc=-2"][..], "--weights", "`wc`"),
        (&["plan", "--weights", "wq=1"][..], "--weights", "`wq`"),
        (&["run", "--frames", "0"][..], "--frames", "'0'"),
        (&["run", "--size", "10"][..], "--size", "'10'"),
        (&["run", "--engine", "warp"][..], "--engine", "'warp'"),
    ] {
        let (code, line) = failure(l2::app(), args);
        assert_eq!(code, 2, "{args:?}: {line}");
        assert!(
            line.contains(flag) && line.contains(value),
            "{args:?}: `{line}` names neither {flag} nor {value}"
        );
    }
    // A well-formed command whose input fails is not a usage error.
    let (code, line) = failure(l2::app(), &["run", "-i", "/no/such/clip.y4m"]);
    assert_eq!(code, 1, "{line}");
}

#[test]
fn dump_is_refused_by_a_program_that_cannot_dump() {
    let dir = temp_dir("no-dump");
    let pics = dir.join("pics");
    let out = run(
        crate::state_and_modes::app(),
        &[
            "run",
            "--size",
            "64x48",
            "--frames",
            "2",
            "--dump",
            pics.to_str().unwrap(),
        ],
        vec![],
    );
    let line = out.error();
    assert!(
        line.contains("--dump") && line.contains("cannot dump"),
        "{line}"
    );
    assert!(matches!(&out.result, Err(e) if e.exit_code() == 2));
    assert_eq!(out.stdout, "");
    assert!(!pics.exists(), "a refused run made the dump directory");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_clip_plays_as_many_frames_as_asked() {
    let layout = SyntheticLayout::DEFAULT;
    let asked = layout.len + 12;
    let n = asked.to_string();
    let args = ["run", "--json", "--size", "64x48", "--frames", &n];
    let out = run(l2::app(), &args, vec![]);
    let lines = out.json_lines();
    assert_eq!(lines.len() as u64, asked, "{}", out.stderr);
    for (f, line) in (0u64..).zip(&lines) {
        assert_eq!(line["frame"], f);
        assert!((line["timestamp"].as_f64().unwrap() - f as f64 / 30.0).abs() < 1e-9);
        // Past its scripted events the clip goes on: no second cut, no
        // blur.
        assert_eq!(
            field(line, "scene", "cut"),
            &Value::Bool(f == layout.cut),
            "{f}"
        );
        assert_eq!(
            field(line, "blur", "blurry"),
            &Value::Bool(layout.is_blurred(f)),
            "{f}"
        );
    }
    assert!(
        out.stderr.contains(&format!("{asked} frames")),
        "{}",
        out.stderr
    );
    // The pipelined engine reads the same longer clip.
    let mut piped: Vec<&str> = args.to_vec();
    piped.extend(["--engine", "pipelined"]);
    let piped = run(l2::app(), &piped, vec![]).json_lines();
    assert_eq!(piped.len() as u64, asked);
    for (a, b) in lines.iter().zip(&piped) {
        assert_eq!(a["outputs"], b["outputs"], "frame {}", a["frame"]);
    }
    // Without --frames the clip is its scripted length.
    let whole = run(l2::app(), &["run", "--json", "--size", "64x48"], vec![]);
    assert_eq!(whole.json_lines().len() as u64, layout.len);
}

#[test]
fn a_stream_cut_short_keeps_the_complete_lines() {
    let mut stream = y4m(&frames(3), "420");
    stream.truncate(stream.len() - 100);
    let out = run(l2::app(), &["run", "--json", "-i", "-"], stream);
    assert_eq!(out.error(), "stdin: truncated at frame 2");
    // Two whole frames were printed, each a complete JSON line.
    assert_eq!(out.json_lines().len(), 2);
    assert!(out.stdout.ends_with('\n'));
}

/// Any video OpenCV opens: an MJPEG AVI written here is read back frame by
/// frame through `VideoCapture`.
#[cfg(feature = "opencv")]
#[test]
fn opencv_reads_a_video_file() {
    use cortex::ops::opencv::sys::core::{Mat, Size, Vec3b, CV_8UC3};
    use cortex::ops::opencv::sys::prelude::*;
    use cortex::ops::opencv::sys::videoio::VideoWriter;

    let dir = temp_dir("video");
    let path = dir.join("clip.avi");
    let fourcc = VideoWriter::fourcc('M', 'J', 'P', 'G').unwrap();
    let mut writer = VideoWriter::new(
        path.to_str().unwrap(),
        fourcc,
        30.0,
        Size::new(W as i32, H as i32),
        true,
    )
    .unwrap();
    assert!(
        writer.is_opened().unwrap(),
        "OpenCV cannot write MJPEG here"
    );
    for f in frames(5) {
        let mut mat =
            Mat::new_rows_cols_with_default(H as i32, W as i32, CV_8UC3, 0.into()).unwrap();
        for y in 0..H {
            for x in 0..W {
                // OpenCV frames are BGR.
                *mat.at_2d_mut::<Vec3b>(y as i32, x as i32).unwrap() =
                    Vec3b::from([f[(y, x, 2)], f[(y, x, 1)], f[(y, x, 0)]]);
            }
        }
        writer.write(&mat).unwrap();
    }
    writer.release().unwrap();
    let out = run(
        l2::app(),
        &["run", "--json", "-i", path.to_str().unwrap()],
        vec![],
    );
    let lines = out.json_lines();
    assert_eq!(lines.len(), 5);
    assert_eq!(
        (lines[0]["width"].as_u64(), lines[0]["height"].as_u64()),
        (Some(W as u64), Some(H as u64))
    );
    // The object moves from frame to frame: the ROI follows it.
    let c = clip();
    for (f, line) in lines.iter().enumerate() {
        let roi: Vec<f32> = field(line, "roi", "roi")
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap() as f32)
            .collect();
        let (cx, cy) = c.object_center(f as u64);
        assert!(
            cx >= roi[0] && cx < roi[0] + roi[2] && cy >= roi[1] && cy < roi[1] + roi[3],
            "frame {f}: {roi:?}"
        );
    }
    let missing = run(
        l2::app(),
        &["run", "-i", dir.join("none.mp4").to_str().unwrap()],
        vec![],
    );
    assert!(missing.error().contains("no such file"));
    let _ = std::fs::remove_dir_all(dir);
}

/// `--trace` to a path that cannot be written is refused before the first
/// frame (a usage error, one line, no rows printed), not after the last
/// frame with the trace lost; an existing trace file is kept when a run
/// fails, and replaced when it succeeds.
#[test]
fn an_unwritable_trace_path_is_refused_before_the_first_frame() {
    let dir = temp_dir("trace-unwritable");
    std::fs::create_dir_all(&dir).unwrap();
    let args = |trace: &str| -> Vec<String> {
        ["run", "--size", SIZE, "--frames", "3", "--trace", trace]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    for path in [dir.join("no/such/folder/t.json"), dir.clone()] {
        let a = args(path.to_str().unwrap());
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let out = run(l2::app(), &a, vec![]);
        let msg = out.error();
        assert!(msg.starts_with("--trace"), "{msg}");
        assert!(!msg.contains('\n'), "{msg}");
        let code = out.result.as_ref().map_err(|e| e.exit_code()).unwrap_err();
        assert_eq!(code, 2, "{msg}");
        assert_eq!(out.stdout, "", "rows were printed before the refusal");
    }
    let existing = dir.join("old.json");
    std::fs::write(&existing, "old").unwrap();
    let mut a = args(existing.to_str().unwrap());
    a.extend(["-i".to_string(), "/no/such/clip.y4m".to_string()]);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    run(l2::app(), &a, vec![]).error();
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "old");
    let a = args(existing.to_str().unwrap());
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    run(l2::app(), &a, vec![]).ok();
    let trace: Value = serde_json::from_slice(&std::fs::read(&existing).unwrap()).unwrap();
    assert!(
        trace["traceEvents"]
            .as_array()
            .is_some_and(|e| !e.is_empty()),
        "{trace}"
    );
    let _ = std::fs::remove_dir_all(dir);
}
