//! `run --outputs NAMES` on the compiled L2 and on its graph file (only
//! those outputs shown, with the values of a full run), and the options a
//! graph file run takes like the compiled one: `--dump` (its outputs that
//! are pictures), several `--input`s, `--encode --roi map` (its
//! quantiser-offset map output); each refused with one line, exit 2, where
//! the graph lacks what it needs.

use crate::l2;
use crate::support::*;
use cortex::runner::sources::SyntheticClip;
use serde_json::Value;

const FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/graphs/l2.json");

/// A graph of the frame's grey image and its blur report, written in
/// `dir`: no score map, no regions, no quantiser-offset map.
fn small_graph(dir: &std::path::Path, gray_out: bool) -> String {
    let gray = if gray_out {
        r#"{ "name": "gray", "type": "GrayImage" },"#
    } else {
        ""
    };
    let text = format!(
        r#"{{
  "name": "small",
  "inputs": [ {{ "name": "frame", "type": "RgbFrame" }} ],
  "nodes": [
    {{ "name": "gray", "op": "vision.to_gray", "inputs": ["frame"] }},
    {{ "name": "laplacian", "op": "vision.blur_detector", "inputs": ["gray"] }}
  ],
  "outputs": [ {gray} {{ "name": "laplacian", "type": "BlurReport" }} ]
}}"#
    );
    let path = dir.join(if gray_out { "gray.json" } else { "small.json" });
    std::fs::write(&path, text).expect("write the graph");
    path.to_str().expect("UTF-8 path").to_string()
}

/// The JSON lines of L2 (compiled, or its graph file) on the clip.
fn l2_lines(graph: bool, extra: &[&str]) -> Vec<Value> {
    let mut args = vec![
        "run", "--json", "--frames", "6", "--size", "128x96", "-q", "--mode", "BALANCED",
    ];
    if graph {
        args.extend_from_slice(&["--graph", FILE]);
    }
    args.extend_from_slice(extra);
    let out = run(l2::app(), &args, Vec::new());
    out.ok();
    out.json_lines()
}

#[test]
fn outputs_shows_only_those_with_the_values_of_a_full_run() {
    for graph in [false, true] {
        let full = l2_lines(graph, &[]);
        for (ask, keys) in [
            ("roi,blur", &["blur", "roi"][..]),
            ("blur", &["blur"]),
            ("qp_map,scene", &["scene", "qp_map"]),
        ] {
            let some = l2_lines(graph, &["--outputs", ask]);
            assert_eq!(some.len(), full.len(), "{ask}");
            for (s, f) in some.iter().zip(&full) {
                let got: Vec<&String> = s["outputs"].as_object().expect("outputs").keys().collect();
                assert_eq!(got, keys, "graph {graph}, --outputs {ask}");
                for k in keys {
                    assert_eq!(s["outputs"][k], f["outputs"][k], "graph {graph}: {k}");
                }
            }
            if ask == "blur" {
                // Only the blur verdict's producers ran: no text map
                // (a first frame computes every output, to have outputs to
                // run the next frames into).
                for s in some.iter().skip(1) {
                    assert!(
                        s["node_ms"].get("text").is_none_or(Value::is_null),
                        "graph {graph}: {}",
                        s["node_ms"]
                    );
                }
                assert!(full[0]["node_ms"]["text"].is_number(), "{}", full[0]);
            }
        }
    }
}

#[test]
fn an_unknown_output_is_one_line_naming_the_outputs() {
    for graph in [false, true] {
        let mut args = vec!["run", "--frames", "1", "--outputs", "blur,rio"];
        if graph {
            args.extend_from_slice(&["--graph", FILE]);
        }
        let out = run(l2::app(), &args, Vec::new());
        let e = out.result.as_ref().expect_err("refused");
        assert_eq!(e.exit_code(), 2, "{e}");
        let line = out.error();
        assert_eq!(line.lines().count(), 1, "{line}");
        assert!(line.starts_with("--outputs:"), "{line}");
        assert!(line.contains("`rio`"), "{line}");
        assert!(
            line.contains("blur, scene, fused, roi, regions, qp_map"),
            "{line}"
        );
        assert!(out.stdout.is_empty(), "nothing ran: {}", out.stdout);
    }
}

#[test]
fn a_graph_run_dumps_its_pictures() {
    let dir = temp_dir("graph-dump");
    let pics = dir.join("pics");
    let p = pics.to_str().expect("UTF-8 path");
    let out = run(
        l2::app(),
        &[
            "run", "--graph", FILE, "--frames", "2", "--size", "96x64", "--dump", p, "-q",
        ],
        Vec::new(),
    );
    out.ok();
    let mut names: Vec<String> = std::fs::read_dir(&pics)
        .expect("the folder")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    // L2's one picture output, its fused score map, as a heat map.
    assert_eq!(names, ["000000_fused.png", "000001_fused.png"]);
    let img = image::open(pics.join("000001_fused.png")).expect("a PNG");
    assert_eq!((img.width(), img.height()), (96, 64));

    // A grey image output is drawn grey, the same size.
    let gray = small_graph(&dir, true);
    let pics = dir.join("gray");
    let p = pics.to_str().expect("UTF-8 path");
    let out = run(
        l2::app(),
        &[
            "run", "--graph", &gray, "--frames", "1", "--size", "96x64", "--dump", p, "-q",
        ],
        Vec::new(),
    );
    out.ok();
    let img = image::open(pics.join("000000_gray.png"))
        .expect("a PNG")
        .to_rgb8();
    assert_eq!((img.width(), img.height()), (96, 64));
    assert!(img.pixels().all(|p| p[0] == p[1] && p[1] == p[2]));

    // No picture output: refused before anything runs.
    let small = small_graph(&dir, false);
    let out = run(
        l2::app(),
        &["run", "--graph", &small, "--frames", "1", "--dump", p],
        Vec::new(),
    );
    assert_eq!(out.result.as_ref().unwrap_err().exit_code(), 2);
    let e = out.error();
    assert!(e.contains("graph `small`"), "{e}");
    assert!(e.contains("no output that is a picture"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A Y4M file of `n` synthetic frames from `first`, in `dir`.
fn y4m_file(dir: &std::path::Path, name: &str, first: u64, n: u64) -> String {
    let c = SyntheticClip::new(160, 120);
    let frames: Vec<_> = (first..first + n).map(|f| c.frame(f)).collect();
    let path = dir.join(name);
    std::fs::write(&path, y4m(&frames, "420jpeg")).expect("write");
    path.to_str().expect("UTF-8 path").to_string()
}

#[test]
fn a_graph_runs_several_inputs_each_as_alone() {
    let dir = temp_dir("graph-streams");
    let a = y4m_file(&dir, "a.y4m", 0, 9);
    let b = y4m_file(&dir, "b.y4m", 20, 7);
    let base = ["run", "--json", "--mode", "BALANCED", "--graph", FILE];
    let mut args = base.to_vec();
    args.extend_from_slice(&["--threads", "2", "-i", &a, "-i", &b]);
    let out = run(l2::app(), &args, Vec::new());
    out.ok();
    let lines = out.json_lines();
    assert_eq!(lines.len(), 9 + 7);
    for (k, (input, n)) in [(&a, 9), (&b, 7)].into_iter().enumerate() {
        let mut one = base.to_vec();
        one.extend_from_slice(&["-i", input]);
        let alone = run(l2::app(), &one, Vec::new());
        alone.ok();
        let alone = alone.json_lines();
        assert_eq!(alone.len(), n);
        let mine: Vec<&Value> = lines.iter().filter(|l| l["stream"] == k).collect();
        assert_eq!(mine.len(), n, "stream {k}");
        for (got, want) in mine.iter().zip(&alone) {
            assert_eq!(got["frame"], want["frame"], "stream {k}");
            assert_eq!(got["width"], 160);
            assert_eq!(got["outputs"], want["outputs"], "stream {k}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_graph_encodes_with_its_map_or_says_it_has_none() {
    let dir = temp_dir("graph-roi-map");
    let video = dir.join("out.mp4");
    let v = video.to_str().expect("UTF-8 path");
    let small = small_graph(&dir, false);
    let out = run(
        l2::app(),
        &[
            "run", "--graph", &small, "--frames", "2", "--encode", v, "--roi", "map",
        ],
        Vec::new(),
    );
    assert_eq!(out.result.as_ref().unwrap_err().exit_code(), 2);
    let e = out.error();
    assert!(
        e.starts_with("--roi map: graph `small`") && e.contains("names no quantiser-offset map"),
        "{e}"
    );
    // L2's graph names its map: the check passes (this build encodes with
    // it, or says it cannot encode at all).
    let out = run(
        l2::app(),
        &[
            "run", "--graph", FILE, "--frames", "2", "--size", "96x64", "--encode", v, "--roi",
            "map", "-q",
        ],
        Vec::new(),
    );
    if cfg!(feature = "ffmpeg") {
        out.ok();
        assert!(std::fs::metadata(&video).expect("written").len() > 0);
    } else {
        let e = out.error();
        assert!(!e.contains("quantiser-offset"), "{e}");
        assert!(e.contains("ffmpeg"), "{e}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
