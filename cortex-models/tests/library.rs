//! Model ops from the op library, in graph files: a model node gives ONNX
//! Runtime's output (the committed tiny model and its reference); L2 with
//! its text node by a detector, written as a substitution of L2's graph
//! (`examples/graphs/l2_dnn.json`), gives its references bit for bit (the
//! detector's boxes, their map, L2's fusion and L2's other outputs); a
//! model's path is found from the graph file's folder; a model file or
//! parameter that is wrong is one error at the node's line.

mod support;

use std::path::PathBuf;
use std::sync::Arc;

use cortex_core::dynamic::{GraphFile, Ops, Value};
use cortex_core::runtime::run::Run;
use cortex_core::{ParallelPipeline, Pipeline};
use cortex_models::library::model_ops;
use cortex_models::text::{self, TextBox, TextDetector};
use cortex_models::Output;
use cortex_vision::clip::SyntheticClip;
use cortex_vision::library::vision_ops;
use cortex_vision::ops::{EncodedRoi, ScoreMap};
use support::{max_abs_diff, testdata, tiny_expected, tiny_input, H, W};

fn library() -> Ops {
    let mut ops = vision_ops();
    ops.extend(&model_ops());
    ops
}

/// A graph file reading a tensor and running `model` on it.
fn infer_graph(model: &str, input: &str) -> String {
    format!(
        r#"{{
  "name": "Tiny",
  "inputs": [ {{ "name": "x", "type": "Tensor4" }} ],
  "nodes": [
    {{ "name": "y", "op": "model.infer", "inputs": ["x"],
      "params": {{ "path": {model:?}, "input": {input} }} }}
  ],
  "outputs": [ {{ "name": "y", "type": "Tensor" }} ]
}}"#
    )
}

#[test]
fn a_model_node_gives_onnx_runtimes_output() {
    let path = testdata("tiny.onnx").display().to_string();
    let graph = infer_graph(&path, &format!("[1, 3, {H}, {W}]"));
    let mut p = GraphFile::parse(&graph)
        .expect("reads")
        .build(&library())
        .expect("builds");
    let x: Value = Arc::new(tiny_input(H, W));
    let out = p.run(0, &[x]).expect("runs");
    let y = out.get::<Output>("y").expect("a tensor");
    // tract against ONNX Runtime, as the tiny model's own tests allow.
    let d = max_abs_diff(y, &tiny_expected());
    assert!(d <= 1e-5, "graph file's model node vs onnxruntime: {d}");
}

#[test]
fn a_wrong_model_file_or_parameter_is_one_error_at_the_node() {
    let graph = infer_graph("no/such/model.onnx", "[1, 3, 24, 40]");
    let err = GraphFile::parse(&graph)
        .expect("reads")
        .build(&library())
        .expect_err("refused");
    assert_eq!(err.problems.len(), 1, "{err}");
    let (line, m) = &err.problems[0];
    assert_eq!(*line, 5, "{err}");
    assert!(
        m.starts_with("node `y`: params of `model.infer`: ") && m.contains("no/such/model.onnx"),
        "{err}"
    );
    let graph = infer_graph("x.onnx", "[1, 3, 24, 40]").replace("\"input\"", "\"inptu\"");
    let err = GraphFile::parse(&graph)
        .expect("reads")
        .build(&library())
        .expect_err("refused");
    assert!(
        err.to_string()
            .contains("unknown field `inptu`, expected one of `path`, `input`, `threads`"),
        "{err}"
    );
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The crate's copy of L2 with the DNN text map (`L2_DNN_FILE`, built
/// into the crate so it packages alone) is the example users read and run,
/// byte for byte.
#[test]
fn the_crate_s_l2_dnn_file_is_the_example() {
    let path = repo().join("examples/graphs/l2_dnn.json");
    let example = std::fs::read_to_string(&path).expect("the example graph file");
    assert!(
        example == cortex_models::l2::L2_DNN_FILE,
        "{} and cortex-models/src/l2_dnn.json differ: edit one, copy it over the other",
        path.display()
    );
}

/// `examples/graphs/l2_dnn.json` read from its path names PP-OCR's model
/// from its own folder (`../../models/`), whatever the working directory;
/// with the model there, it runs as `l2_dnn_graph` over the compiled L2's
/// graph with that model does, bit for bit.
#[test]
fn the_l2_dnn_file_finds_its_model_from_its_own_folder() {
    let path = repo().join("examples/graphs/l2_dnn.json");
    let file = GraphFile::load(&path).expect("reads");
    let model = text::model_path(&repo());
    if !model.is_file() {
        // The file is looked for beside the graph file, not in the
        // working directory (this test's is `cortex-models/`).
        let e = file.build(&library()).expect_err("no model");
        let m = e.to_string();
        assert!(
            m.contains("examples/graphs/../../models/ch_PP-OCRv4_det_infer.onnx"),
            "{m}"
        );
        println!(
            "skipped: no model at {} (run scripts/fetch-models.sh)",
            model.display()
        );
        return;
    }
    let ops = cortex_models::l2::l2_dnn_ops();
    let mut from_file = file.build(&ops).expect("builds");
    let mut from_ir = cortex_models::l2::l2_dnn_graph(&model, 640, 480)
        .unwrap()
        .build(&ops)
        .unwrap();
    let clip = SyntheticClip::new(640, 480);
    for f in 0..4u64 {
        let input: Value = Arc::new(clip.frame(f));
        let mode = from_file.mode_named("BALANCED_AT_RATE").unwrap();
        let a = from_file.run(mode, std::slice::from_ref(&input)).unwrap();
        let b = from_ir.run(mode, &[input]).unwrap();
        for name in a.names() {
            let (x, y) = (a.value(name).unwrap(), b.value(name).unwrap());
            assert_eq!(ops.to_json(x), ops.to_json(y), "frame {f}: {name}");
        }
    }
}

/// `examples/graphs/ocr.json` — detect, then read each box — on a
/// photograph, on the sequential, parallel and pipelined engines: the same
/// lines on each, and the words RapidOCR reads there.
#[test]
fn the_ocr_graph_reads_a_photograph_on_every_engine() {
    let test = "the_ocr_graph_reads_a_photograph_on_every_engine";
    let (det, rec) = (
        text::model_path(&repo()),
        text::rec::rec_model_path(&repo()),
    );
    if !det.is_file() || !rec.is_file() {
        println!("{test}: skipped: no models in models/ (run scripts/fetch-models.sh)");
        return;
    }
    let image = "/usr/share/doc/opencv-doc/examples/text/scenetext_segmented_word05.jpg";
    let Ok(img) = image::open(image) else {
        println!("{test}: skipped: no {image} (package opencv-doc)");
        return;
    };
    let rgb = img.to_rgb8();
    let (w, h) = rgb.dimensions();
    assert_eq!((w, h), (640, 480), "the graph runs the detector at 640x480");
    let frame: Value = Arc::new(
        cortex_vision::ops::RgbFrame::from_shape_vec((h as usize, w as usize, 3), rgb.into_raw())
            .unwrap(),
    );
    // The file names its models from its own folder.
    let mut p = GraphFile::load(&repo().join("examples/graphs/ocr.json"))
        .expect("reads")
        .build(&library())
        .expect("builds");
    let texts = |out: &cortex_core::dynamic::DynOutputs| -> Vec<String> {
        out.get::<Vec<text::TextLine>>("lines")
            .expect("lines")
            .iter()
            .map(|l| l.text.clone())
            .collect()
    };
    let sequential = texts(&p.run(0, std::slice::from_ref(&frame)).expect("sequential"));
    let parallel = texts(
        &p.run_with_fresh(
            &mut cortex_core::run::Run::mode(0).parallel(),
            std::slice::from_ref(&frame),
        )
        .expect("parallel"),
    );
    let mut pipelined = Vec::new();
    p.run_stream_with(
        &mut cortex_core::run::Run::mode(0),
        (0..2).map(|_| ((), vec![frame.clone()])),
        &cortex_core::stream::StreamOptions::default(),
        |f| {
            pipelined.push(texts(&f.take_result().expect("pipelined")));
            std::ops::ControlFlow::Continue(())
        },
    )
    .expect("streams");
    println!("{test}: {sequential:?}");
    assert_eq!(parallel, sequential);
    assert_eq!(pipelined, vec![sequential.clone(), sequential.clone()]);
    for word in ["MULTIMEDIA PROJECTOR", "SANYO"] {
        assert!(
            sequential.iter().any(|t| t == word),
            "{word} in {sequential:?}"
        );
    }
}

/// The graph with a model node docs/ops.md shows a user builds, and runs,
/// its detector the committed miniature one.
#[test]
fn the_docs_model_node_graph_builds_and_runs() {
    let doc = std::fs::read_to_string(repo().join("docs/ops.md")).unwrap();
    let at = doc.find("### A model node").expect("the section");
    let start = doc[at..].find("```json\n").unwrap() + at + "```json\n".len();
    let end = doc[start..].find("```").unwrap() + start;
    let text = doc[start..end].replace(
        "\"../../models/ch_PP-OCRv4_det_infer.onnx\"",
        &format!("{:?}", testdata("tiny.onnx").display().to_string()),
    );
    let ops = library();
    let mut p = GraphFile::parse(&text)
        .expect("reads")
        .build(&ops)
        .expect("builds");
    let frame: Value = Arc::new(SyntheticClip::new(160, 128).frame(0));
    let out = p.run(1, &[frame]).expect("runs");
    for name in ["boxes", "text", "sharp"] {
        assert!(out.value(name).is_some(), "{name}");
    }
}

/// L2 with the DNN text map (the substitution over the compiled L2's graph,
/// the committed miniature detector) against references computed apart:
/// its boxes are the detector's on the frame, its text map those boxes
/// drawn, its fused map L2's fusion of its own maps with that text map, and
/// what the text map does not reach (blur, scene) the compiled L2's;
/// sequential and parallel the same.
#[test]
fn l2_dnn_is_l2_with_its_text_node_substituted() {
    use cortex_vision::l2::{L2Mode, L2};
    let (w, h) = (160, 128);
    let model = testdata("tiny.onnx");
    let dnn = cortex_models::l2::l2_dnn_graph(&model, w, h).expect("extends");
    // Every map an output too, each checked against its reference; DB's
    // thresholds low, for the miniature detector to find boxes.
    let path = format!("{:?}", model.display().to_string());
    let file = GraphFile::parse_extending(
        &(r#"{ "extends": "l2_dnn.json",
          "replace": { "boxes": { "op": "model.text_boxes", "inputs": ["frame"], "params": {
            "width": 160, "height": 128, "db.thresh": 0.05, "db.box_thresh": 0.05, "path": "#
            .to_string()
            + &path
            + r#" } } }, "outputs": [
            { "name": "text", "type": "ScoreMap" }, { "name": "center", "type": "ScoreMap" },
            { "name": "saliency", "type": "ScoreMap", "optional": true },
            { "name": "motion", "type": "ScoreMap", "optional": true } ] }"#),
        &dnn,
    )
    .expect("extends");
    let ops = cortex_models::l2::l2_dnn_ops();
    let (mut p, mut par) = (file.build(&ops).unwrap(), file.build(&ops).unwrap());
    let balanced = p.mode_named("BALANCED").unwrap();
    let weights = p.mode_weights(balanced).unwrap().clone();
    let detector = TextDetector::load(&model, w, h)
        .unwrap()
        .with_params(text::DbParams {
            thresh: 0.05,
            box_thresh: 0.05,
            ..text::DbParams::PP_OCR
        });
    let mut l2 = L2::new();
    let clip = SyntheticClip::new(w, h);
    let mut any_box = false;
    for f in 0..6u64 {
        let frame = clip.frame(f);
        let want = l2.run(L2Mode::Balanced, &frame).unwrap();
        let input: Value = Arc::new(frame.clone());
        let got = p.run(balanced, std::slice::from_ref(&input)).unwrap();
        let mut boxes = Vec::new();
        detector.detect_into(&frame, &mut boxes).unwrap();
        any_box |= !boxes.is_empty();
        let got_boxes = got.get::<Vec<TextBox>>("boxes").unwrap();
        assert_eq!(format!("{got_boxes:?}"), format!("{boxes:?}"), "frame {f}");
        let mut text = ScoreMap::zeros((0, 0));
        text::boxes_map_into(&frame, &boxes, &mut text);
        let map = |n: &str| got.get::<ScoreMap>(n).unwrap();
        assert_eq!(map("text"), &text, "frame {f}: text");
        let mut fused = ScoreMap::zeros((0, 0));
        cortex_vision::ops::score_fusion_into(
            Some(map("center")),
            Some(&text),
            Some(map("saliency")),
            Some(map("motion")),
            &weights,
            &mut fused,
        )
        .unwrap();
        let same_bits = |a: &ScoreMap, b: &ScoreMap| {
            a.dim() == b.dim() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
        };
        assert!(same_bits(map("fused"), &fused), "frame {f}: fused");
        assert_eq!(
            format!("{:?}", got.value("blur").map(|v| ops.to_json(v))),
            format!("{:?}", Some(ops.to_json(&(Arc::new(want.blur) as Value)))),
            "frame {f}: blur"
        );
        let scene = got.get::<cortex_vision::ops::SceneChange>("scene").unwrap();
        assert_eq!(
            format!("{scene:?}"),
            format!("{:?}", want.scene),
            "frame {f}"
        );
        let again = par
            .run_with_fresh(&mut Run::mode(balanced).parallel(), &[input])
            .unwrap();
        assert!(same_bits(
            again.get::<ScoreMap>("fused").unwrap(),
            map("fused")
        ));
        assert_eq!(again.get::<EncodedRoi>("roi"), got.get::<EncodedRoi>("roi"));
    }
    assert!(any_box, "the miniature detector finds some box on the clip");
}
