//! `cortex-l2 --model text=PATH`: L2 with the DNN text map from a file, a
//! substitution of L2's graph run as a graph file is. The JSON lines, on
//! every engine, must be what the library's graph gives on the same frames
//! in the same mode (rates included); a bad `--model` is one line and exit
//! code 2, before any frame. The committed tiny model stands in for a
//! detector; the real PP-OCRv4 detector runs when it was fetched.

use std::path::PathBuf;
use std::process::Command;

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
    use std::sync::Arc;

    use cortex_core::dynamic::Value;
    use cortex_core::Pipeline;
    use cortex_models::l2::{l2_dnn_graph, l2_dnn_ops};
    use cortex_models::text::TextDetector;
    use cortex_runner::sources::SyntheticClip;
    use serde_json::Value as Json;

    /// The boxes of a JSON line (the `boxes` output's view), as
    /// `[x, y, w, h]` and scores.
    fn boxes(line: &Json) -> Vec<([u64; 4], f64)> {
        line["outputs"]["boxes"]["boxes"]
            .as_array()
            .unwrap_or_else(|| panic!("no boxes in {line}"))
            .iter()
            .map(|b| {
                let v = b["box"].as_array().unwrap();
                let n = |i: usize| v[i].as_u64().unwrap();
                ([n(0), n(1), n(2), n(3)], b["score"].as_f64().unwrap())
            })
            .collect()
    }

    /// Runs the command with `--model text=MODEL` on `frames` of the
    /// synthetic clip in `mode` on `engine`, and L2 with the DNN text map
    /// from the library on the same frames: every output of every frame
    /// the same, through the same views.
    fn runner_matches_the_library(model: &Path, mode: &str, engine: &str, frames: usize) {
        let (w, h) = (160, 128);
        let spec = format!("text={}", model.display());
        let n = frames.to_string();
        let args = [
            "run", "--json", "-q", "--size", "160x128", "--frames", &n, "--mode", mode, "--engine",
            engine, "--model", &spec,
        ];
        let (code, out, err) = command(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        let lines: Vec<Json> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), frames, "{engine}");
        let ops = l2_dnn_ops();
        let mut p = l2_dnn_graph(model, w, h).unwrap().build(&ops).unwrap();
        let m = p.mode_named(mode).unwrap();
        let clip = SyntheticClip::new(w, h);
        for (i, line) in lines.iter().enumerate() {
            let input: Value = Arc::new(clip.frame(i as u64));
            let want = p.run(m, &[input]).unwrap();
            assert_eq!(line["mode"], mode, "frame {i}");
            for name in want.names() {
                // Through the same text the line went through (serde_json
                // reads a float's last digit approximately).
                let v = ops.to_json(want.value(name).unwrap());
                let v: Json = serde_json::from_str(&v.to_string()).unwrap();
                assert_eq!(line["outputs"][name], v, "{engine}, frame {i}: {name}");
            }
        }
    }

    #[test]
    fn json_lines_are_the_librarys_on_every_engine_every_frame_and_at_a_rate() {
        for engine in ["sequential", "parallel", "pipelined"] {
            for mode in ["BALANCED", "BALANCED_AT_RATE"] {
                runner_matches_the_library(&tiny(), mode, engine, 10);
            }
        }
    }

    /// A folder of `n` PNG frames of the synthetic clip from `first`.
    fn png_folder(dir: &Path, name: &str, first: u64, n: u64) -> String {
        let folder = dir.join(name);
        std::fs::create_dir_all(&folder).unwrap();
        let clip = SyntheticClip::new(160, 128);
        for i in 0..n {
            let f = clip.frame(first + i);
            let (h, w, _) = f.dim();
            let img =
                image::RgbImage::from_raw(w as u32, h as u32, f.iter().copied().collect()).unwrap();
            img.save(folder.join(format!("{i:03}.png"))).unwrap();
        }
        folder.display().to_string()
    }

    #[test]
    fn several_inputs_run_the_model_each_as_alone() {
        let dir = std::env::temp_dir().join(format!("cortex-model-inputs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let a = png_folder(&dir, "a", 0, 4);
        let b = png_folder(&dir, "b", 20, 3);
        let spec = format!("text={}", tiny().display());
        let base = [
            "run", "--json", "-q", "--size", "160x128", "--mode", "BALANCED", "--model", &spec,
        ];
        let mut args = base.to_vec();
        args.extend_from_slice(&["--threads", "2", "-i", &a, "-i", &b]);
        let (code, out, err) = command(&args);
        assert_eq!(code, 0, "{err}");
        let lines: Vec<Json> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 4 + 3);
        for (k, (input, n)) in [(&a, 4), (&b, 3)].into_iter().enumerate() {
            let mut one = base.to_vec();
            one.extend_from_slice(&["-i", input]);
            let (code, alone, err) = command(&one);
            assert_eq!(code, 0, "{err}");
            let alone: Vec<Json> = alone
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            assert_eq!(alone.len(), n);
            let mine: Vec<&Json> = lines.iter().filter(|l| l["stream"] == k).collect();
            assert_eq!(mine.len(), n, "stream {k}");
            for (got, want) in mine.iter().zip(&alone) {
                assert_eq!(got["frame"], want["frame"], "stream {k}");
                assert!(got["outputs"]["boxes"].is_object(), "{got}");
                assert_eq!(got["outputs"], want["outputs"], "stream {k}");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_tools_show_the_graph_with_the_detector() {
        let spec = format!("text={}", tiny().display());
        let (code, listing, err) = command(&["graph", "--model", &spec]);
        assert_eq!(code, 0, "{err}");
        assert!(listing.contains("Cortex Graph IR: L2Dnn"), "{listing}");
        assert!(listing.contains("boxes: TextBoxes"), "{listing}");
        // The graph written out names the model given.
        let (code, json, err) = command(&["graph", "--format", "json", "--model", &spec]);
        assert_eq!(code, 0, "{err}");
        assert!(json.contains(&tiny().display().to_string()), "{json}");
        let (code, _, err) = command(&["graph", "--graph", "x.json", "--model", &spec]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("its own graph"), "{err}");
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
        let img = image::open(photo).unwrap().to_rgb8();
        let (w, h) = (img.width() as usize, img.height() as usize);
        let spec = format!("text={}", model.display());
        let size = format!("{w}x{h}");
        let (code, out, err) = command(&[
            "run", "--json", "-q", "-i", photo, "--size", &size, "--model", &spec,
        ]);
        assert_eq!(code, 0, "{err}");
        let line: Json = serde_json::from_str(out.lines().next().unwrap()).unwrap();
        let got = boxes(&line);
        // The library's detector on the same photograph, at its size.
        let frame = ndarray::Array3::from_shape_vec((h, w, 3), img.into_raw()).unwrap();
        let detector = TextDetector::load(&model, w, h).unwrap();
        let mut want = Vec::new();
        detector.detect_into(&frame, &mut want).unwrap();
        assert!(!want.is_empty(), "the photograph has text");
        assert_eq!(got.len(), want.len());
        for (g, b) in got.iter().zip(&want) {
            let r = b.bbox;
            assert_eq!(g.0, [r.x, r.y, r.width, r.height].map(|v| v as u64));
            assert!((g.1 - f64::from(b.score)).abs() < 1e-6);
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
