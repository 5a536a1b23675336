//! `cortex-l2 --model text=PATH`: L2 with the DNN text map from a file.
//! The JSON lines carry the detector's boxes, which must be what the
//! library's pipeline gives on the same frames in the same mode (rates
//! included); a bad `--model` is one line and exit code 2, before any
//! frame. The committed tiny model stands in for a detector; the real
//! PP-OCRv4 detector runs when it was fetched.

use std::path::PathBuf;
use std::process::Command;

#[cfg(feature = "models")]
mod support;

const BIN: &str = env!("CARGO_BIN_EXE_cortex-l2");

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn tiny() -> PathBuf {
    repo().join("cortex-models/testdata/tiny.onnx")
}

/// Runs the command; (exit code, stdout, stderr).
fn command(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .output()
        .expect("cortex-l2 runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Asserts a command-line mistake: exit 2, one line on stderr saying
/// `what`, nothing on stdout.
fn assert_usage(args: &[&str], what: &[&str]) {
    let (code, out, err) = command(args);
    assert_eq!(code, 2, "{args:?}: stderr {err}");
    assert!(out.is_empty(), "{args:?}: stdout {out}");
    assert_eq!(err.lines().count(), 1, "{args:?}: stderr {err}");
    assert!(err.starts_with("cortex-l2: --model"), "{err}");
    for w in what {
        assert!(err.contains(w), "{args:?}: `{w}` not in {err}");
    }
}

#[cfg(not(feature = "models"))]
#[test]
fn without_the_feature_the_flag_is_a_usage_error() {
    let model = tiny();
    let spec = format!("text={}", model.display());
    assert_usage(&["run", "--model", &spec], &["feature `models`"]);
}

#[cfg(feature = "models")]
mod with_models {
    use super::*;

    use std::path::Path;

    use cortex_models::l2::{L2Dnn, L2DnnMode};
    use cortex_models::text::TextDetector;
    use cortex_runner::sources::SyntheticClip;
    use cortex_runner::ModelArg;
    use serde_json::Value;

    /// The boxes of a JSON line, as `[x, y, w, h]` and scores.
    fn boxes(line: &Value) -> Vec<([u64; 4], f64)> {
        line["outputs"]["text_boxes"]
            .as_array()
            .unwrap_or_else(|| panic!("no text_boxes in {line}"))
            .iter()
            .map(|b| {
                let v = b.as_array().unwrap();
                let n = |i: usize| v[i].as_u64().unwrap();
                ([n(0), n(1), n(2), n(3)], v[4].as_f64().unwrap())
            })
            .collect()
    }

    /// Runs the runner on `frames` of the synthetic clip at `w × h` in
    /// `mode`, and the library's pipeline on the same frames, and compares
    /// every frame's boxes and ROI. Returns the runner's lines.
    fn runner_matches_the_library(model: &Path, mode: L2DnnMode, frames: usize) -> Vec<Value> {
        let (w, h) = (160, 128);
        let models = [ModelArg {
            name: "text".into(),
            path: model.to_path_buf(),
        }];
        let app = cortex_runner::l2_dnn::app(&models, (w, h)).unwrap();
        let size = format!("{w}x{h}");
        let n = frames.to_string();
        let (result, out, _) = support::run_captured(
            app,
            &[
                "run",
                "--json",
                "--size",
                &size,
                "--frames",
                &n,
                "--mode",
                mode.name(),
            ],
        );
        result.unwrap();
        let lines: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), frames);
        let detector = TextDetector::load(model, w, h).unwrap();
        let clip = SyntheticClip::new(w, h);
        let mut l2 = L2Dnn::new();
        for (i, line) in lines.iter().enumerate() {
            let want = l2.run(mode, &clip.frame(i as u64), &detector).unwrap();
            let got = boxes(line);
            assert_eq!(got.len(), want.boxes.len(), "frame {i}: {line}");
            for (g, b) in got.iter().zip(&want.boxes) {
                let r = b.bbox;
                assert_eq!(
                    g.0,
                    [r.x, r.y, r.width, r.height].map(|v| v as u64),
                    "frame {i}"
                );
                assert!((g.1 - f64::from(b.score)).abs() < 1e-6, "frame {i}");
            }
            let r = want.roi.bbox;
            assert_eq!(
                line["outputs"]["roi"],
                serde_json::json!([r.x, r.y, r.width, r.height]),
                "frame {i}"
            );
        }
        lines
    }

    #[test]
    fn json_lines_carry_the_detectors_boxes_every_frame_and_at_a_rate() {
        for mode in [L2DnnMode::Balanced, L2DnnMode::BalancedAtRate] {
            runner_matches_the_library(&tiny(), mode, 10);
        }
    }

    #[test]
    fn the_tools_show_the_detectors_backend_and_input_shape() {
        let models = [ModelArg {
            name: "text".into(),
            path: tiny(),
        }];
        let app = |()| cortex_runner::l2_dnn::app(&models, (160, 128)).unwrap();
        // Before any frame: the shape, and that the backend is chosen then.
        let (result, listing, _) = support::run_captured(app(()), &["graph"]);
        result.unwrap();
        let line = listing
            .lines()
            .find(|l| l.contains("]  boxes "))
            .unwrap_or_else(|| panic!("no boxes node in\n{listing}"));
        assert!(
            line.contains("backend chosen at the first frame, input 1x3x128x160"),
            "{line}"
        );
        let (result, dot, _) = support::run_captured(app(()), &["graph", "--format", "dot"]);
        result.unwrap();
        assert!(dot.contains("input 1x3x128x160"), "{dot}");
        // After a run: the backend that ran.
        let (result, profile, _) =
            support::run_captured(app(()), &["profile", "--size", "160x128", "--frames", "2"]);
        result.unwrap();
        let note = profile
            .lines()
            .find(|l| l.trim_start().starts_with("boxes: model"))
            .unwrap_or_else(|| panic!("no note in\n{profile}"));
        // Whichever the registry measured fastest, ONNX Runtime included
        // when the build has it and its library loads.
        let ran = ["tract", "opencv-dnn", "onnxruntime"];
        assert!(
            ran.iter()
                .any(|b| note.contains(&format!(": {b}, input 1x3x128x160"))),
            "{note}"
        );
    }

    #[test]
    fn the_real_detector_finds_text_through_the_runner() {
        let model = cortex_models::text::model_path(&repo());
        if !model.is_file() {
            println!(
                "skipped: no model at {} (scripts/fetch-models.sh)",
                model.display()
            );
            return;
        }
        let photo = "/usr/share/doc/opencv-doc/examples/text/scenetext01.jpg";
        if !Path::new(photo).is_file() {
            println!("skipped: no {photo} (opencv-doc)");
            return;
        }
        let spec = format!("text={}", model.display());
        let (code, out, err) = command(&["run", "--json", "-q", "-i", photo, "--model", &spec]);
        assert_eq!(code, 0, "{err}");
        let line: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
        let got = boxes(&line);
        // The library's detector on the same photograph, at its size.
        let img = image::open(photo).unwrap().to_rgb8();
        let (w, h) = (img.width() as usize, img.height() as usize);
        let frame = ndarray::Array3::from_shape_vec((h, w, 3), img.into_raw()).unwrap();
        let detector = TextDetector::load(&model, w, h).unwrap();
        let mut want = Vec::new();
        detector.detect_into(&frame, &mut want).unwrap();
        assert!(!want.is_empty(), "the photograph has text");
        assert_eq!(got.len(), want.len());
        for (g, b) in got.iter().zip(&want) {
            let r = b.bbox;
            assert_eq!(g.0, [r.x, r.y, r.width, r.height].map(|v| v as u64));
        }
    }

    #[test]
    fn a_bad_model_is_one_line_and_exit_2_before_any_frame() {
        let dir = std::env::temp_dir().join(format!("cortex-model-flag-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let garbage = dir.join("garbage.onnx");
        std::fs::write(&garbage, b"this is not an ONNX model").unwrap();
        let missing = dir.join("missing.onnx");
        let folder = dir.display().to_string();
        let spec = |p: &Path| format!("text={}", p.display());
        let g = garbage.display().to_string();
        let m = missing.display().to_string();
        assert_usage(&["run", "--model", &spec(&garbage)], &[&g]);
        assert_usage(&["run", "--model", &spec(&missing)], &[&m]);
        assert_usage(&["run", "--model", &format!("text={folder}")], &["folder"]);
        assert_usage(&["run", "--model", "face=x.onnx"], &["`text`"]);
        assert_usage(&["run", "--model", "x.onnx"], &["NAME=PATH"]);
        assert_usage(&["run", "--model"], &["NAME=PATH"]);
        let t = spec(&tiny());
        assert_usage(&["run", "--model", &t, "--model", &t], &["twice"]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
