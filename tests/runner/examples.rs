//! The custom pipelines in examples/ run and do what their headers say.

use crate::support::*;
use crate::{
    audio_levels, buffers_and_parallel, custom_kernel, depth_fusion, first, runner_example,
    state_and_modes,
};
use cortex::runner::sources::SyntheticLayout;
use serde_json::Value;

const SIZE: &str = "320x240";

fn outputs(lines: &[Value], name: &str) -> Vec<Value> {
    lines.iter().map(|l| l["outputs"][name].clone()).collect()
}

#[test]
fn motion_alarm_raises_with_hold_off_and_modes_differ() {
    let out = run(
        state_and_modes::app(),
        &["run", "--json", "--size", SIZE],
        vec![],
    );
    out.ok();
    let lines = out.json_lines();
    let raised: Vec<u64> = lines
        .iter()
        .filter(|l| l["outputs"]["alarm"] == true)
        .map(|l| l["frame"].as_u64().unwrap())
        .collect();
    // The object moves in every frame: alarms fire, each followed by a
    // hold-off of HOLD_OFF frames without a new one.
    assert!(raised.len() >= 2, "{raised:?}");
    assert_eq!(raised[0], 1, "the first frame has nothing to compare with");
    for w in raised.windows(2) {
        assert!(
            w[1] - w[0] > u64::from(state_and_modes::HOLD_OFF),
            "{raised:?}"
        );
    }
    // MOTION_ONLY never runs the brightness node; SENSITIVE does.
    let only = run(
        state_and_modes::app(),
        &[
            "run",
            "--json",
            "--size",
            SIZE,
            "--frames",
            "3",
            "--mode",
            "MOTION_ONLY",
        ],
        vec![],
    );
    for l in only.json_lines() {
        assert!(l["node_ms"].get("brightness").is_none());
        assert!(l["node_ms"].get("motion").is_some());
    }
    assert!(lines[1]["node_ms"].get("brightness").is_some());
    // At the cut the brightness jump adds to the score in SENSITIVE only.
    let cut = SyntheticLayout::DEFAULT.cut as usize;
    let only_all = run(
        state_and_modes::app(),
        &["run", "--json", "--size", SIZE, "--mode", "MOTION_ONLY"],
        vec![],
    )
    .json_lines();
    let s = |ls: &[Value], i: usize| ls[i]["outputs"]["score"].as_f64().unwrap();
    assert!(s(&lines, cut) > s(&only_all, cut));
}

#[test]
fn doc_capture_takes_sharp_text_frames_only() {
    let dir = temp_dir("doc");
    let crops = dir.join("crops");
    let out = run(
        runner_example::app(),
        &[
            "run",
            "--json",
            "--size",
            SIZE,
            "--dump",
            crops.to_str().unwrap(),
        ],
        vec![],
    );
    out.ok();
    let lines = out.json_lines();
    let layout = SyntheticLayout::DEFAULT;
    let captured = outputs(&lines, "captured");
    for (f, c) in captured.iter().enumerate() {
        // Blurred frames are never captured; the sharp ones (all with the
        // text plate in view) are.
        assert_eq!(
            c,
            &Value::Bool(!layout.is_blurred(f as u64)),
            "frame {f}: {}",
            lines[f]
        );
    }
    // Each capture's crop is on disk and decodes to the box's size.
    let first = &lines[0]["outputs"];
    let bbox: Vec<u32> = first["crop"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as u32)
        .collect();
    let jpeg = image::open(crops.join("000000_crop.jpg")).unwrap();
    assert_eq!((jpeg.width(), jpeg.height()), (bbox[2], bbox[3]));
    // The crop holds the start of the line of text (scene A writes from
    // (8 %, 10 %) of the frame) and is far smaller than the frame. The text
    // map also answers to the moving disc's rim, so the box may reach it.
    let (x, y) = (320 * 8 / 100 + 4, 240 * 10 / 100 + 4);
    assert!(
        x >= bbox[0] && x < bbox[0] + bbox[2] && y >= bbox[1] && y < bbox[1] + bbox[3],
        "({x},{y}) not in {bbox:?}"
    );
    assert!(bbox[2] * bbox[3] < 320 * 240 / 2, "{bbox:?}");
    assert!(!crops
        .join(format!("{:06}_crop.jpg", layout.blur_start))
        .exists());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn audio_levels_modes_and_runtime_weights() {
    let arg = |s: &[&str]| s.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    let (speech, report) = audio_levels::run(&arg(&[])).unwrap();
    assert_eq!(speech.len(), 2 * audio_levels::RATE / audio_levels::BLOCK);
    // Hiss first, then the tone: the level rises.
    assert!(
        speech[40].0 > speech[5].0 + 0.2,
        "{:?} vs {:?}",
        speech[40],
        speech[5]
    );
    assert!(report.contains("Profile: AudioLevels"));
    // CHEAP runs loudness only.
    let (_, cheap) = audio_levels::run(&arg(&["--mode", "CHEAP"])).unwrap();
    assert!(cheap.contains("removed: crest, noisiness"), "{cheap}");
    // Run-time weights equal to MUSIC give MUSIC's levels, bit for bit.
    let (music, _) = audio_levels::run(&arg(&["--mode", "MUSIC"])).unwrap();
    let (custom, custom_report) =
        audio_levels::run(&arg(&["--weights", "wr=0.5,wp=0.5,wz=0"])).unwrap();
    assert_eq!(music, custom);
    assert!(
        custom_report.contains("removed: noisiness"),
        "{custom_report}"
    );
    // Bad weights are refused with the runner's messages.
    let e = audio_levels::run(&arg(&["--weights", "wr=abc"])).unwrap_err();
    assert!(e.contains("`abc` is not a number"), "{e}");
    let e = audio_levels::run(&arg(&["--weights", "wq=1"])).unwrap_err();
    assert!(
        e.contains("unknown weight key `wq` (keys: wr, wp, wz)"),
        "{e}"
    );
}

#[test]
fn depth_fusion_two_inputs_and_optional_output() {
    let fused = run(
        depth_fusion::app(),
        &["run", "--json", "--size", SIZE, "--frames", "4"],
        vec![],
    );
    let lines = fused.json_lines();
    assert_eq!(lines.len(), 4);
    for l in &lines {
        // The fake sensor makes the bright disc the nearest thing: 1.0.
        assert!(l["outputs"]["near_max"].as_f64().unwrap() > 0.9, "{l}");
        assert!(l["node_ms"].get("near").is_some());
    }
    let color = run(
        depth_fusion::app(),
        &[
            "run",
            "--json",
            "--size",
            SIZE,
            "--frames",
            "4",
            "--mode",
            "COLOR_ONLY",
        ],
        vec![],
    );
    for l in color.json_lines() {
        assert_eq!(
            l["outputs"]["near_max"],
            Value::Null,
            "optional output eliminated"
        );
        assert!(l["node_ms"].get("near").is_none());
    }
}

#[test]
fn buffers_and_parallel_engines_agree_in_both_modes() {
    // `run` asserts that the sequential and parallel engines give the same
    // outputs on every frame; here: it ran both modes and listed buffers.
    let report = buffers_and_parallel::run(4).unwrap();
    assert!(report.contains("BALANCED: peak fused score"), "{report}");
    assert!(report.contains("STILL: peak fused score"), "{report}");
    assert!(report.contains("ScoreMap"), "{report}");
}

#[test]
fn custom_kernel_measures_edges_and_refuses_a_bad_parameter() {
    let report = custom_kernel::run().unwrap();
    let share: f64 = report
        .strip_prefix("edges cover ")
        .and_then(|r| r.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no share in {report}"));
    // The synthetic frame has text and a disc on a texture: some edges,
    // far from all of it.
    assert!(share > 0.0 && share < 50.0, "{report}");
    assert!(
        report.contains("refused: node `edges`: edge threshold must be finite"),
        "{report}"
    );
}

fn manifest_file(path: &str) -> String {
    std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// The Rust code of a file from its first `use` line on.
fn code_from_first_use(text: &str) -> &str {
    &text[text.find("use cortex").unwrap()..]
}

#[test]
fn readme_pipeline_is_examples_first() {
    let readme = manifest_file("README.md");
    let block = readme
        .split("```rust\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("README has a rust block");
    let first = manifest_file("examples/first.rs");
    assert_eq!(
        code_from_first_use(block),
        code_from_first_use(&first),
        "README's first pipeline and examples/first.rs differ"
    );
}

#[test]
fn examples_guide_shows_each_example_graph_as_generated() {
    let guide = manifest_file("docs/examples.md");
    let graphs = [
        first::FirstLook::ir(),
        state_and_modes::MotionAlarm::ir(),
        buffers_and_parallel::Attention::ir(),
        runner_example::DocCapture::ir(),
        custom_kernel::Edges::ir(),
        audio_levels::AudioLevels::ir(),
        depth_fusion::DepthFusion::ir(),
    ];
    let stale: Vec<String> = graphs
        .into_iter()
        .map(|ir| {
            (
                ir.name.to_string(),
                cortex::tools::export::to_mermaid(ir, None),
            )
        })
        .filter(|(_, graph)| !guide.contains(&format!("```mermaid\n{graph}```")))
        .map(|(name, graph)| format!("{name}:\n```mermaid\n{graph}```"))
        .collect();
    assert!(
        stale.is_empty(),
        "docs/examples.md's graphs are stale:\n{}",
        stale.join("\n")
    );
}

#[test]
fn macro_rustdoc_example_is_the_grammar_guides_first_block() {
    let source = manifest_file("cortex-macros/src/lib.rs");
    let doc: String = source
        .lines()
        .filter_map(|l| l.strip_prefix("///"))
        .map(|l| format!("{}\n", l.strip_prefix(' ').unwrap_or(l)))
        .collect();
    let example = doc
        .split("```rust,ignore\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the macro's rustdoc has an example");
    let guide = manifest_file("docs/grammar.md");
    let compiled = guide
        .split("```rust\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("docs/grammar.md has a rust block");
    assert_eq!(
        example, compiled,
        "cortex_graph!'s rustdoc example and docs/grammar.md differ"
    );
}
