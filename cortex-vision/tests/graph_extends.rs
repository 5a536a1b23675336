//! Graph files extending another (`"extends"`, `"replace"`): the extended
//! graph with a node replaced builds and runs as the same graph written out
//! whole; each mistake (a replaced name the graph lacks, a name declared
//! twice, a cycle of files, a problem of the extended file) is one error at
//! the line that makes it, naming the file; a file parameter's relative
//! path is taken from the folder of the file that wrote it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cortex_core::dynamic::{GraphFile, NoParams, OpDesc, Ops, Params, Value};
use cortex_core::Pipeline;
use cortex_vision::l2::demo_clip;
use cortex_vision::library::vision_ops;
use cortex_vision::ops::{RgbFrame, ScoreMap};
use serde::{Deserialize, Serialize};

const L2_FILE: &str = include_str!("../../examples/graphs/l2.json");

/// A fresh folder for one test's files.
fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cortex-extends-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The fused map of each frame of a short clip, in every mode of the file.
fn fused_maps(file: &GraphFile, ops: &Ops) -> Vec<ScoreMap> {
    let mut p = file.build(ops).expect("builds");
    let modes = p.ir().modes.len();
    let mut out = Vec::new();
    for (i, frame) in demo_clip(8, 160, 120).into_iter().enumerate() {
        let input: Value = Arc::new(frame);
        let got = p.run(i % modes, &[input]).expect("frame");
        out.push(got.get::<ScoreMap>("fused").expect("fused").clone());
    }
    out
}

#[test]
fn a_replaced_node_runs_as_the_graph_written_whole() {
    let dir = folder("replace");
    write(&dir.join("l2.json"), L2_FILE);
    // MSER with other parameters in place of L2's text map; its weight
    // key is kept, for it is the node's place in the graph.
    let ext = r#"{
  "extends": "l2.json",
  "name": "L2Coarse",
  "replace": {
    "text": { "op": "vision.text_map", "inputs": ["gray"], "params": { "mser.delta": 9, "polarity": "dark" } }
  }
}"#;
    write(&dir.join("coarse.json"), ext);
    let whole = L2_FILE.replace("\"name\": \"L2\"", "\"name\": \"L2Coarse\"").replace(
        r#"{ "name": "text", "op": "vision.text_map", "inputs": ["gray"], "weight_key": "wt" }"#,
        r#"{ "name": "text", "op": "vision.text_map", "inputs": ["gray"], "weight_key": "wt", "params": { "mser.delta": 9, "polarity": "dark" } }"#,
    );
    assert_ne!(whole, L2_FILE, "the text node is written as expected");
    let ops = vision_ops();
    let extended = GraphFile::load(&dir.join("coarse.json")).expect("reads");
    assert_eq!(extended.spec.name, "L2Coarse");
    let text = extended
        .spec
        .nodes
        .iter()
        .find(|n| n.name == "text")
        .unwrap();
    assert_eq!(text.weight_key.as_deref(), Some("wt"));
    let whole = GraphFile::parse(&whole).expect("reads");
    let (built, written) = (
        extended.build(&ops).expect("builds"),
        whole.build(&ops).unwrap(),
    );
    assert_eq!(
        built.program().text(built.ir()),
        written.program().text(written.ir()),
        "the same program"
    );
    let (got, want) = (fused_maps(&extended, &ops), fused_maps(&whole, &ops));
    assert_eq!(got, want);
    // And it is not L2: the replacement is what runs.
    let l2 = GraphFile::parse(L2_FILE).unwrap();
    assert_ne!(
        fused_maps(&l2, &ops),
        got,
        "other parameters change some map"
    );
}

#[test]
fn parse_extending_takes_the_graph_given() {
    let ops = vision_ops();
    let base = GraphFile::parse(L2_FILE).unwrap();
    let ext = r#"{ "extends": "L2", "modes": [
        { "name": "POWER_SAVE", "weights": { "wc": 0.7, "wt": 0.3, "ws": 0.0, "wm": 0.0 },
          "rates": [ { "node": "text", "every": 8 } ] } ] }"#;
    let file = GraphFile::parse_extending(ext, &base).expect("reads");
    assert_eq!(file.spec.name, "L2", "the extended graph's name is kept");
    assert_eq!(
        file.spec.modes.len(),
        3,
        "a mode of the same name is replaced"
    );
    let ps = file
        .spec
        .modes
        .iter()
        .find(|m| m.name == "POWER_SAVE")
        .unwrap();
    assert_eq!(ps.rates.len(), 1);
    assert_eq!(ps.rates[0].every, 8);
    file.build(&ops).expect("builds");
    // Without a graph to extend, text naming one is refused.
    let e = GraphFile::parse(ext).expect_err("nothing to extend");
    assert_eq!(e.problems.len(), 1);
    assert_eq!(e.problems[0].0, 1);
    let e = GraphFile::parse_extending(L2_FILE, &base).expect_err("extends nothing");
    assert!(e.problems[0].1.contains("extends nothing"), "{e}");
}

/// An input, a state or an output the extended file declares already is
/// one error at the new declaration's line, naming where the first is, as
/// a node is.
#[test]
fn every_kind_of_declaration_made_twice_is_one_error_at_its_line() {
    let dir = folder("twice-each");
    write(&dir.join("l2.json"), L2_FILE);
    for (kind, decl, name, first) in [
        (
            "inputs",
            r#"{ "name": "frame", "type": "RgbFrame" }"#,
            "input `frame`",
            4,
        ),
        (
            "states",
            r#"{ "name": "_prev_gray", "type": "GrayImage", "from": "gray" }"#,
            "state `_prev_gray`",
            7,
        ),
        (
            "outputs",
            r#"{ "name": "fused", "type": "ScoreMap" }"#,
            "output `fused`",
            36,
        ),
    ] {
        let path = dir.join(format!("{kind}.json"));
        write(
            &path,
            &format!("{{\n  \"extends\": \"l2.json\",\n  \"{kind}\": [\n    {decl}\n  ]\n}}"),
        );
        let Err(cortex_core::dynamic::LoadError::Problems(e)) = GraphFile::load(&path) else {
            panic!("{kind}: accepted, or not a problem of the file");
        };
        assert_eq!(e.problems.len(), 1, "{kind}: {e}");
        let (line, m) = &e.problems[0];
        assert_eq!(*line, 4, "{m}");
        let want = format!("{name} is declared already, at `l2.json` line {first}");
        assert!(m.contains(&want), "{kind}: want {want:?} in {m}");
    }
}

#[test]
fn each_mistake_is_one_error_at_its_line_naming_the_file() {
    let dir = folder("mistakes");
    write(&dir.join("l2.json"), L2_FILE);
    let one = |name: &str, text: &str| {
        let path = dir.join(name);
        write(&path, text);
        match GraphFile::load(&path) {
            Ok(_) => panic!("{name} was accepted"),
            Err(cortex_core::dynamic::LoadError::Problems(e)) => {
                assert_eq!(e.problems.len(), 1, "{name}: {e}");
                e.problems[0].clone()
            }
            Err(e) => panic!("{name}: {e}"),
        }
    };
    let (line, m) = one(
        "unknown.json",
        "{\n  \"extends\": \"l2.json\",\n  \"replace\": {\n    \"txt\": { \"op\": \"vision.text_map\", \"inputs\": [\"gray\"] }\n  }\n}",
    );
    assert_eq!(line, 4, "{m}");
    assert!(m.contains("`l2.json` declares no node `txt`"), "{m}");
    assert!(m.contains("did you mean `text`"), "{m}");

    let (line, m) = one(
        "twice.json",
        "{\n  \"extends\": \"l2.json\",\n  \"nodes\": [\n    { \"name\": \"gray\", \"op\": \"vision.to_gray\", \"inputs\": [\"frame\"] }\n  ]\n}",
    );
    assert_eq!(line, 4, "{m}");
    assert!(
        m.contains("node `gray` is declared already, at `l2.json` line 20"),
        "{m}"
    );
    assert!(m.contains("`replace`"), "{m}");

    let (line, m) = one(
        "named.json",
        "{\n  \"extends\": \"l2.json\",\n  \"replace\": {\n    \"text\": { \"name\": \"text\", \"op\": \"vision.text_map\" }\n  }\n}",
    );
    assert_eq!(line, 4, "{m}");
    assert!(m.contains("write no `name`"), "{m}");

    write(&dir.join("b.json"), "{ \"extends\": \"a.json\" }");
    let (line, m) = one(
        "a.json",
        "{\n  \"name\": \"A\",\n  \"extends\": \"b.json\"\n}",
    );
    assert_eq!(line, 3, "{m}");
    assert!(m.contains("cycle: a.json → b.json → a.json"), "{m}");

    let (line, m) = one("missing.json", "{\n  \"extends\": \"nowhere.json\"\n}");
    assert_eq!(line, 2, "{m}");
    assert!(m.contains("extends `nowhere.json`"), "{m}");

    // A problem of the extended file: at the `extends` line, naming that
    // file and its line.
    write(
        &dir.join("bad.json"),
        &L2_FILE.replace("\"weight_key\": \"ws\"", "\"weight_kye\": \"ws\""),
    );
    let (line, m) = one(
        "over_bad.json",
        "{\n  \"name\": \"X\",\n  \"extends\": \"bad.json\"\n}",
    );
    assert_eq!(line, 3, "{m}");
    assert!(m.contains("extends `bad.json`, line 26"), "{m}");
    assert!(m.contains("weight_kye"), "{m}");

    // Replacing without extending.
    let (line, m) = one(
        "alone.json",
        "{\n  \"name\": \"X\",\n  \"replace\": {\n    \"text\": { \"op\": \"vision.text_map\" }\n  }\n}",
    );
    assert_eq!(line, 4, "{m}");
    assert!(m.contains("extends none"), "{m}");
}

#[test]
fn a_build_error_in_an_extended_node_names_where_it_was_written() {
    let dir = folder("build");
    write(&dir.join("l2.json"), L2_FILE);
    // `fused` reads `text`, now a grey image: the error is the extended
    // file's node, reported at the `extends` line with its own place.
    let ext = "{\n  \"extends\": \"l2.json\",\n  \"replace\": {\n    \"text\": { \"op\": \"vision.to_gray\", \"inputs\": [\"frame\"] }\n  }\n}";
    write(&dir.join("ext.json"), ext);
    let file = GraphFile::load(&dir.join("ext.json")).expect("reads");
    let e = file.build(&vision_ops()).expect_err("types differ");
    assert!(
        e.problems.iter().any(
            |(line, m)| *line == 2 && m.contains("node `fused` (written at `l2.json` line 28)")
        ),
        "{e}"
    );
}

/// An op naming a file: its value is the file's length, read when the graph
/// is built.
#[derive(Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct LenParams {
    path: String,
    #[serde(skip)]
    len: u64,
}

impl Params for LenParams {
    fn prepare(&mut self) -> Result<(), String> {
        let m = std::fs::metadata(&self.path).map_err(|e| format!("{}: {e}", self.path))?;
        self.len = m.len();
        Ok(())
    }
}

fn file_ops() -> Ops {
    let mut o = vision_ops();
    o.ty("Length", 0u64)
        .describe(
            OpDesc::builder::<LenParams>("test.file_len", "a file's length")
                .input::<RgbFrame>("frame")
                .file("path", "the file, from the graph file's folder")
                .returns(|_, p: &LenParams| Ok(p.len)),
        )
        .describe(
            OpDesc::builder::<NoParams>("test.sum", "a sum")
                .input::<u64>("a")
                .input::<u64>("b")
                .returns(|i, _| Ok(i.arg::<u64>(0)? + i.arg::<u64>(1)?)),
        );
    o
}

fn graph(nodes: &str) -> String {
    format!(
        r#"{{ "name": "Files", "inputs": [ {{ "name": "frame", "type": "RgbFrame" }} ],
  "nodes": [ {nodes} ],
  "outputs": [ {{ "name": "n", "type": "Length" }} ] }}"#
    )
}

fn length_of(file: &GraphFile) -> u64 {
    let mut p = file.build(&file_ops()).expect("builds");
    let frame: Value = Arc::new(demo_clip(1, 16, 16).remove(0));
    *p.run(0, &[frame]).unwrap().get::<u64>("n").unwrap()
}

#[test]
fn file_parameters_are_taken_from_the_folder_of_the_file_that_wrote_them() {
    let dir = folder("paths");
    write(&dir.join("sub/data.bin"), "12345");
    write(&dir.join("top/data.bin"), "1234567");
    let absolute = dir.join("elsewhere.bin");
    write(&absolute, "12");
    // The working directory is the crate's: none of these paths is
    // there, so only the file's folder finds them.
    assert!(!Path::new("data.bin").exists());
    write(
        &dir.join("sub/g.json"),
        &graph(
            r#"{ "name": "n", "op": "test.file_len", "inputs": ["frame"], "params": { "path": "data.bin" } }"#,
        ),
    );
    assert_eq!(
        length_of(&GraphFile::load(&dir.join("sub/g.json")).unwrap()),
        5
    );
    // Absolute stays absolute.
    let abs = absolute.to_str().unwrap().replace('\\', "\\\\");
    write(
        &dir.join("sub/abs.json"),
        &graph(&format!(
            r#"{{ "name": "n", "op": "test.file_len", "inputs": ["frame"], "params": {{ "path": "{abs}" }} }}"#
        )),
    );
    assert_eq!(
        length_of(&GraphFile::load(&dir.join("sub/abs.json")).unwrap()),
        2
    );
    // From text, relative to the working directory: not found.
    let text = std::fs::read_to_string(dir.join("sub/g.json")).unwrap();
    let e = GraphFile::parse(&text)
        .unwrap()
        .build(&file_ops())
        .expect_err("not here");
    assert!(e.to_string().contains("data.bin"), "{e}");
    // Extended from another folder: each node's path from its own file's
    // folder, the base's node from `sub`, the added one from `top`.
    write(
        &dir.join("top/ext.json"),
        r#"{ "extends": "../sub/g.json",
  "nodes": [
    { "name": "m", "op": "test.file_len", "inputs": ["frame"], "params": { "path": "data.bin" } },
    { "name": "sum", "op": "test.sum", "inputs": ["n", "m"] }
  ],
  "outputs": [ { "name": "sum", "type": "Length" } ] }"#,
    );
    let ext = GraphFile::load(&dir.join("top/ext.json")).unwrap();
    let mut p = ext.build(&file_ops()).expect("builds");
    let frame: Value = Arc::new(demo_clip(1, 16, 16).remove(0));
    let out = p.run(0, &[frame]).unwrap();
    assert_eq!(*out.get::<u64>("n").unwrap(), 5);
    assert_eq!(*out.get::<u64>("sum").unwrap(), 12);
    // A replacement's path is from the replacing file's folder.
    write(
        &dir.join("top/re.json"),
        r#"{ "extends": "../sub/g.json",
  "replace": { "n": { "op": "test.file_len", "inputs": ["frame"], "params": { "path": "data.bin" } } } }"#,
    );
    assert_eq!(
        length_of(&GraphFile::load(&dir.join("top/re.json")).unwrap()),
        7
    );
}
