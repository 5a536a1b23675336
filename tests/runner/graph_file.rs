//! `run --graph FILE`: the L2 graph file run by the L2 program gives, frame
//! by frame, what the compiled L2 gives on the same frames (in every mode,
//! sequential, parallel and pipelined, and with weights), and a mistake in the file is
//! one line per problem with the file's line and the node, exit code 2.

use crate::l2;
use crate::support::run;

const FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/graphs/l2.json");

/// Both runs of L2 on the same clip, the compiled one and the graph
/// file's, print the same `outputs` object for every frame: each output
/// under its declared name, through its type's view, with the same fields
/// and the same values.
#[test]
fn the_compiled_l2_and_the_l2_file_print_the_same_outputs_object() {
    let base = ["run", "--json", "--frames", "12", "--size", "128x96", "-q"];
    let compiled = run(l2::app(), &base, Vec::new());
    let mut with_file = base.to_vec();
    with_file.extend_from_slice(&["--graph", FILE]);
    let graph = run(l2::app(), &with_file, Vec::new());
    graph.ok();
    let (a, b) = (compiled.json_lines(), graph.json_lines());
    assert_eq!(a.len(), 12);
    assert_eq!(b.len(), 12);
    for (x, y) in a.iter().zip(&b) {
        let (xo, yo) = (&x["outputs"], &y["outputs"]);
        let names: Vec<&String> = xo.as_object().expect("outputs").keys().collect();
        assert_eq!(
            names,
            ["blur", "scene", "fused", "roi", "regions", "qp_map"],
            "{x}"
        );
        assert!(xo["roi"]["score"].is_number(), "{x}");
        assert_eq!(xo, yo, "frame {}", x["frame"]);
    }
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
            assert!(x["outputs"]["roi"]["score"].is_number(), "{x}");
            assert_eq!(x["outputs"], y["outputs"], "{extra:?}");
            // One schema: the same fields around the outputs.
            for key in [
                "frame",
                "timestamp",
                "width",
                "height",
                "reset",
                "mode",
                "held",
            ] {
                assert_eq!(y[key], x[key], "{key} {extra:?}");
            }
            assert_eq!(y.get("weights"), x.get("weights"), "{extra:?}");
            // Node times of sequential runs by mode (pipelined frames
            // overlap; the file's weights run is not observed; the
            // compiled parallel engine's strip tuner may run a group
            // unfused where the file's runs it fused).
            if extra.contains(&"--weights") || extra.contains(&"--engine") {
                continue;
            }
            // Every node the compiled program times, the file's run times
            // too.
            let (xn, yn) = (&x["node_ms"], &y["node_ms"]);
            let timed = xn.as_object().expect("node_ms");
            assert!(
                timed
                    .keys()
                    .all(|k| yn.get(k).is_some_and(|v| v.is_number())),
                "{extra:?}: {xn} vs {yn}"
            );
        }
    }
}

#[test]
fn a_mistake_in_the_file_names_its_line_and_node() {
    let text = std::fs::read_to_string(FILE).expect("the example file");
    let bad = text.replace(
        r#""op": "vision.blur_verdict""#,
        r#""op": "vision.blur_verdic""#,
    );
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
        .position(|l| l.contains(r#""op": "vision.blur_verdict""#))
        .expect("in file")
        + 1;
    let e = out.error();
    assert!(
        e.starts_with(&format!(
            "{p}:{line}: node `blur`: no op `vision.blur_verdic`"
        )),
        "{e}"
    );
    assert!(e.contains("did you mean `vision.blur_verdict`"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_graph_run_writes_a_trace() {
    let dir = scratch("trace");
    let trace = dir.join("t.json");
    let t = trace.to_str().expect("UTF-8 path");
    let out = run(
        l2::app(),
        &[
            "run", "--graph", FILE, "--frames", "3", "--size", "96x64", "--trace", t, "-q",
        ],
        Vec::new(),
    );
    out.ok();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).expect("written")).expect("JSON");
    let events = json["traceEvents"].as_array().expect("events");
    assert!(
        events.iter().any(|e| e["name"] == "text"),
        "a slice per node: {json}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn ops_lists_the_library_and_shows_one_op() {
    let out = run(l2::app(), &["ops"], Vec::new());
    out.ok();
    for op in [
        "vision.to_gray",
        "vision.text_map",
        "vision.resize_gray",
        "vision.score_fusion",
    ] {
        assert!(out.stdout.contains(op), "{op}: {}", out.stdout);
    }
    let out = run(l2::app(), &["ops", "vision.text_map"], Vec::new());
    out.ok();
    assert!(
        out.stdout
            .contains("mser.delta          integer  default 5"),
        "{}",
        out.stdout
    );
    let out = run(l2::app(), &["ops", "vision.txt_map"], Vec::new());
    assert_eq!(out.result.as_ref().unwrap_err().exit_code(), 2);
    assert!(
        out.error().contains("did you mean `vision.text_map`"),
        "{}",
        out.error()
    );
}

/// A scratch folder of this test process.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("cortex-graph-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// `run --graph PATH` for one frame; its one error line and exit code.
fn refused(path: &std::path::Path) -> (String, u8) {
    let p = path.to_str().expect("UTF-8 path");
    let out = run(
        l2::app(),
        &["run", "--graph", p, "--frames", "1", "-q"],
        Vec::new(),
    );
    let code = out.result.as_ref().map_or_else(|e| e.exit_code(), |_| 0);
    (out.error(), code)
}

/// A FIFO (with a writer the test holds open, so a blocking read would wait
/// for ever), a link to a device that never ends and a file past the size
/// limit are each refused at once, before a byte is read.
#[cfg(target_os = "linux")]
#[test]
fn only_a_regular_file_within_the_limit_is_read() {
    use cortex::dynamic::MAX_GRAPH_FILE_BYTES;
    let dir = scratch("kinds");
    let fifo = dir.join("pipe.json");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo")
        .success());
    // Holding both ends open: a reader that blocked would wait for an end
    // of file that never comes.
    let _held = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .expect("open the FIFO");
    let (e, code) = refused(&fifo);
    assert!(e.contains("it is a FIFO, not a regular file"), "{e}");
    assert_eq!(code, 2);

    let zero = dir.join("zero.json");
    std::os::unix::fs::symlink("/dev/zero", &zero).expect("symlink");
    let (e, code) = refused(&zero);
    assert!(
        e.contains("it is a character device, not a regular file"),
        "{e}"
    );
    assert_eq!(code, 2);

    // A sparse file: its length is past the limit without writing it.
    let big = dir.join("big.json");
    std::fs::File::create(&big)
        .and_then(|f| f.set_len(MAX_GRAPH_FILE_BYTES + 1))
        .expect("sparse file");
    let (e, code) = refused(&big);
    assert!(
        e.contains(&format!(
            "more than the {MAX_GRAPH_FILE_BYTES} such a file may have"
        )),
        "{e}"
    );
    assert_eq!(code, 2);
    std::fs::remove_dir_all(&dir).ok();
}

/// What a graph file says is echoed cut short and escaped: a huge op name
/// or one carrying terminal escapes, a bidirectional override or a NUL
/// costs one short line that shows them as escapes.
#[test]
fn text_from_the_file_is_echoed_short_and_escaped() {
    let text = std::fs::read_to_string(FILE).expect("the example file");
    let dir = scratch("echo");
    let path = dir.join("bad.json");
    let huge = "x".repeat(4 << 20);
    let cases = [
        (huge.as_str(), "longer than 256 characters"),
        (
            "gray\\u001b[2J\\u202e\\u0000",
            "holds a control or invisible formatting character",
        ),
    ];
    for (op, why) in cases {
        let bad = text.replace(
            r#""op": "vision.blur_verdict""#,
            &format!(r#""op": "{op}""#),
        );
        assert_ne!(bad, text);
        std::fs::write(&path, bad).expect("write");
        let (e, code) = refused(&path);
        assert_eq!(code, 2);
        assert!(e.contains(why), "{}", &e[..e.len().min(400)]);
        assert!(e.len() < 1000, "{} bytes", e.len());
        assert!(
            !e.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{e:?}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// An empty file, text that is not JSON and bytes that are not text each
/// get a line saying so in the library's words.
#[test]
fn an_empty_or_unreadable_file_says_what_it_is() {
    let dir = scratch("empty");
    let path = dir.join("g.json");
    for (bytes, says) in [
        (&b""[..], "the file is empty: a graph file is a JSON object"),
        (b"  \n", "the file is empty"),
        (b"L2: gray, blur\n", "not a graph file: expected value"),
        (b"{\"name\": \"\xff\"}", "it is not UTF-8 text"),
    ] {
        std::fs::write(&path, bytes).expect("write");
        let (e, code) = refused(&path);
        assert!(e.contains(says), "{e}");
        assert_eq!(code, 2);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A graph of 100 000 nodes is read in one pass: each declaration's line
/// is found by a search, not by counting line breaks from the top (which
/// took 67 s at 10 000 nodes and never ended at 100 000). The last node's
/// mistake names its own line.
#[test]
fn a_long_file_is_read_in_one_pass_and_names_its_last_line() {
    use cortex::dynamic::GraphFile;
    let n = 100_000;
    let mut text = String::from("{\n\"name\": \"Long\",\n\"inputs\": [{\"name\": \"x\", \"type\": \"f64\"}],\n\"nodes\": [\n");
    for i in 0..n {
        let from = if i == 0 {
            "x".to_string()
        } else {
            format!("n{}", i - 1)
        };
        text.push_str(&format!(
            "{{\"name\": \"n{i}\", \"op\": \"neg\", \"args\": [\"{from}\"], \"type\": \"f64\"}},\n"
        ));
    }
    text.push_str("{\"name\": \"last\", \"op\": \"neg\", \"oops\": 1}\n],\n\"outputs\": []\n}\n");
    let e = GraphFile::parse(&text).expect_err("the last node is wrong");
    assert_eq!(e.problems.len(), 1, "{e}");
    let (line, message) = &e.problems[0];
    assert_eq!(*line, n + 5, "{message}");
    assert!(message.contains("unknown field `oops`"), "{message}");
}

/// `--model` is taken out of the arguments before they are parsed; `--help`
/// still shows it in a build that has models.
#[cfg(feature = "models")]
#[test]
fn help_shows_the_model_option() {
    let out = run(l2::app(), &["--help"], Vec::new());
    assert!(out.ok().contains("--model <NAME=PATH>"), "{}", out.stdout);
}

#[test]
fn graph_writes_the_compiled_l2_as_its_graph_file_and_reads_it_back() {
    // The compiled pipeline written out is the file in `examples/graphs`,
    // byte for byte; the file written back out through `--graph` is the
    // file again.
    let want = std::fs::read_to_string(FILE).expect("the L2 file");
    let out = run(l2::app(), &["graph", "--format", "json"], Vec::new());
    out.ok();
    assert_eq!(out.stdout, want);
    let out = run(
        l2::app(),
        &["graph", "--graph", FILE, "--format", "json"],
        Vec::new(),
    );
    out.ok();
    assert_eq!(out.stdout, want);
    // Parameters set by name survive the round trip.
    let dir = scratch("roundtrip");
    let path = dir.join("l2.json");
    let edited = want.replace(
        r#""op": "vision.text_map", "inputs": ["gray"]"#,
        r#""op": "vision.text_map", "inputs": ["gray"], "params": { "mser.delta": 3 }"#,
    );
    assert_ne!(edited, want, "the test's edit applies");
    std::fs::write(&path, &edited).expect("write");
    let p = path.to_str().expect("UTF-8 path");
    let out = run(
        l2::app(),
        &["graph", "--graph", p, "--format", "json"],
        Vec::new(),
    );
    out.ok();
    assert_eq!(out.stdout, edited);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn graph_plan_and_profile_read_a_graph_file_as_the_compiled_pipeline() {
    let size = ["--size", "96x64", "--frames", "4"];
    // The listing and the drawings are the compiled L2's.
    for format in ["listing", "dot", "mermaid"] {
        let args = ["graph", "--format", format, "--mode", "POWER_SAVE"];
        let compiled = run(l2::app(), &args, Vec::new());
        compiled.ok();
        let mut with_file = args.to_vec();
        with_file.extend(["--graph", FILE]);
        let file = run(l2::app(), &with_file, Vec::new());
        file.ok();
        if format == "listing" {
            assert_eq!(file.stdout, compiled.stdout);
        } else {
            // The nodes' labels name the library's ops where the compiled
            // ones name Rust paths; the edges, the plan and the fused
            // groups are the same.
            let shape = |text: &str| -> Vec<String> {
                text.lines()
                    .filter(|l| l.contains("->") || l.contains("group") || l.contains("island"))
                    .map(str::to_string)
                    .collect()
            };
            assert_eq!(shape(&file.stdout), shape(&compiled.stdout), "{format}");
            assert!(shape(&file.stdout).len() > 20, "{format}: {}", file.stdout);
            let removed = |t: &str| t.matches("REMOVED").count();
            assert_eq!(removed(&file.stdout), removed(&compiled.stdout), "{format}");
        }
    }
    // What POWER_SAVE removes, priced on the full graph.
    let mut args = vec!["plan", "--graph", FILE, "--mode", "POWER_SAVE"];
    args.extend(size);
    let out = run(l2::app(), &args, Vec::new());
    out.ok();
    for want in [
        "REMOVED  saliency",
        "REMOVED  motion",
        "its weight `ws` is 0",
        "text every 4 or scene.changed",
        "fused groups (POWER_SAVE)",
    ] {
        assert!(out.stdout.contains(want), "{want}: {}", out.stdout);
    }
    // Per-node times of every node the mode runs.
    let mut args = vec!["profile", "--graph", FILE];
    args.extend(size);
    let out = run(l2::app(), &args, Vec::new());
    out.ok();
    assert!(
        out.stdout.contains("Profile: L2 (4 frames)"),
        "{}",
        out.stdout
    );
    for node in ["text", "saliency", "regions", "qp_map"] {
        assert!(
            out.stdout
                .lines()
                .any(|l| l.starts_with(node) && l.contains(" 4 ")),
            "{node} ran 4 times: {}",
            out.stdout
        );
    }
    // With no command, the tour; `plan` prices weights too: as on the
    // compiled pipeline, the same nodes removed.
    let mut args = vec!["--graph", FILE];
    args.extend(size);
    run(l2::app(), &args, Vec::new()).ok();
    let weights = ["plan", "--weights", "ws=0,wm=0"];
    let compiled = run(l2::app(), &[&weights[..], &size].concat(), Vec::new());
    let file = run(
        l2::app(),
        &[&weights[..], &size, &["--graph", FILE]].concat(),
        Vec::new(),
    );
    let removed = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.contains("REMOVED"))
            .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
            .collect()
    };
    assert_eq!(removed(&file.stdout), removed(&compiled.stdout));
    assert!(!removed(&file.stdout).is_empty(), "{}", file.stdout);
}

#[test]
fn a_file_naming_rust_functions_is_told_the_library_op() {
    let dir = scratch("old-form");
    let path = dir.join("old.json");
    let want = std::fs::read_to_string(FILE).expect("the L2 file");
    let old = want.replace(
        r#""op": "vision.center_crop", "inputs": ["gray"]"#,
        r#""op": "ops::center_crop_into", "args": ["gray", {"const": "&CenterParams::DEFAULT"}, "&mut center"]"#,
    );
    assert_ne!(old, want, "the test's edit applies");
    std::fs::write(&path, &old).expect("write");
    let (e, code) = refused(&path);
    assert_eq!(code, 2);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.contains("node `center`: `ops::center_crop_into` is a Rust function")
            && e.contains("the library's op `vision.center_crop`"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
