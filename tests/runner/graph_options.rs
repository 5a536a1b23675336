//! `run --outputs NAMES` on the compiled L2 and on its graph file: only
//! those outputs shown, with the values of a full run; an unknown name is
//! one line naming the outputs, exit 2.

use crate::l2;
use crate::support::*;
use serde_json::Value;

const FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/graphs/l2.json");

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
