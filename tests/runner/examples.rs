//! The custom pipelines in examples/ run and do what their headers say.

use crate::support::*;
use crate::{audio_levels, depth_fusion, doc_capture, motion_alarm};
use cortex::sources::SyntheticLayout;
use serde_json::Value;

const SIZE: &str = "320x240";

fn outputs(lines: &[Value], name: &str) -> Vec<Value> {
    lines.iter().map(|l| l["outputs"][name].clone()).collect()
}

#[test]
fn motion_alarm_raises_with_hold_off_and_modes_differ() {
    let out = run(
        motion_alarm::app(),
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
            w[1] - w[0] > u64::from(motion_alarm::HOLD_OFF),
            "{raised:?}"
        );
    }
    // MOTION_ONLY never runs the brightness node; SENSITIVE does.
    let only = run(
        motion_alarm::app(),
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
        motion_alarm::app(),
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
        doc_capture::app(),
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
fn readme_shows_each_example_graph_as_generated() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let graphs = [
        motion_alarm::MotionAlarm::ir(),
        doc_capture::DocCapture::ir(),
        audio_levels::AudioLevels::ir(),
        depth_fusion::DepthFusion::ir(),
    ];
    for ir in graphs {
        let block = format!("```mermaid\n{}```", cortex::export::to_mermaid(ir, None));
        assert!(
            readme.contains(&block),
            "README's graph of {} is stale:\n{block}",
            ir.name
        );
    }
}
