//! `run --graph FILE`: the L2 graph file run by the L2 program gives, frame
//! by frame, what the compiled L2 gives on the same frames (in every mode,
//! sequential, parallel and pipelined, and with weights), and a mistake in the file is
//! one line per problem with the file's line and the node, exit code 2.

use crate::l2;
use crate::support::run;

const FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/graphs/l2.json");

/// The fields the compiled program's record shows, from the graph run's
/// outputs, in the same order.
fn from_graph(line: &serde_json::Value) -> Vec<serde_json::Value> {
    let o = &line["outputs"];
    vec![
        o["blur"]["sharpness"].clone(),
        o["blur"]["baseline"].clone(),
        o["blur"]["blurry"].clone(),
        o["blur"]["below_100"].clone(),
        o["scene"]["ssim"].clone(),
        o["scene"]["cut"].clone(),
        o["roi"]["roi"].clone(),
        o["roi"]["score"].clone(),
        o["roi"]["jpeg_bytes"].clone(),
    ]
}

fn from_compiled(line: &serde_json::Value) -> Vec<serde_json::Value> {
    let o = &line["outputs"];
    [
        "sharpness",
        "baseline",
        "blurry",
        "below_100",
        "ssim",
        "cut",
        "roi",
        "score",
        "jpeg_bytes",
    ]
    .iter()
    .map(|k| o[*k].clone())
    .collect()
}

#[test]
fn the_l2_file_gives_what_the_compiled_l2_gives() {
    for extra in [
        &["--mode", "BALANCED"][..],
        &["--mode", "POWER_SAVE"],
        &["--mode", "TEXT_FOCUS", "--engine", "parallel"],
        &[
            "--mode",
            "POWER_SAVE",
            "--engine",
            "pipelined",
            "--in-flight",
            "2",
        ],
        &["--weights", "ws=0,wm=0.3"],
    ] {
        let mut base = vec!["run", "--json", "--frames", "9", "--size", "128x96", "-q"];
        base.extend_from_slice(extra);
        let compiled = run(l2::app(), &base, Vec::new());
        let mut with_file = base.clone();
        with_file.extend_from_slice(&["--graph", FILE]);
        let graph = run(l2::app(), &with_file, Vec::new());
        graph.ok();
        let (a, b) = (compiled.json_lines(), graph.json_lines());
        assert_eq!(a.len(), 9, "{extra:?}");
        assert_eq!(b.len(), 9, "{extra:?}");
        for (x, y) in a.iter().zip(&b) {
            assert!(x["outputs"]["score"].is_number(), "{x}");
            assert_eq!(from_graph(y), from_compiled(x), "{extra:?}");
        }
    }
}

#[test]
fn a_mistake_in_the_file_names_its_line_and_node() {
    let text = std::fs::read_to_string(FILE).expect("the example file");
    let bad = text.replace(r#""op": "blur_verdict""#, r#""op": "blur_verdic""#);
    let dir = std::env::temp_dir().join(format!("cortex-graph-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("bad.json");
    std::fs::write(&path, bad).expect("write");
    let p = path.to_str().expect("UTF-8 path");
    let out = run(
        l2::app(),
        &["run", "--graph", p, "--frames", "1"],
        Vec::new(),
    );
    assert_eq!(out.result.as_ref().unwrap_err().exit_code(), 2);
    let line = text
        .lines()
        .position(|l| l.contains(r#""op": "blur_verdict""#))
        .expect("in file")
        + 1;
    let e = out.error();
    assert!(
        e.starts_with(&format!("{p}:{line}: node `blur`: no op `blur_verdic`")),
        "{e}"
    );
    assert!(e.contains("did you mean `blur_verdict`"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}
