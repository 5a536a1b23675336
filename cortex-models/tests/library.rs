//! Model ops from the op library, in graph files: a model node gives ONNX
//! Runtime's output (the committed tiny model and its reference); L2 with
//! its text node by PP-OCR's detector, written as a graph file
//! (`examples/graphs/l2_dnn.json`), gives bit for bit what the compiled
//! `L2Dnn` gives; a model file or parameter that is wrong is one error at
//! the node's line.

mod support;

use std::path::PathBuf;
use std::sync::Arc;

use cortex_core::dynamic::{GraphFile, Ops, Value};
use cortex_models::l2::{L2Dnn, L2DnnMode};
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

#[test]
fn l2_dnn_as_a_graph_file_is_the_compiled_l2_dnn() {
    let model = text::model_path(&repo());
    if !model.is_file() {
        println!(
            "skipped: no model at {} (run scripts/fetch-models.sh)",
            model.display()
        );
        return;
    }
    let (w, h) = (320, 240);
    let file = std::fs::read_to_string(repo().join("examples/graphs/l2_dnn.json")).unwrap();
    // The file names the model from the repository's root and runs it at
    // 640x480; here, from this test's folder and at the clip's size.
    let file = file
        .replace(
            "\"models/ch_PP-OCRv4_det_infer.onnx\"",
            &format!("{:?}", model.display().to_string()),
        )
        .replace(
            "\"width\": 640, \"height\": 480",
            "\"width\": 320, \"height\": 240",
        );
    let mut from_file = GraphFile::parse(&file)
        .expect("reads")
        .build(&library())
        .expect("builds");
    let detector = TextDetector::load(&model, w, h).unwrap();
    let mut compiled = L2Dnn::new();
    let clip = SyntheticClip::new(w, h);
    let modes = [
        L2DnnMode::Balanced,
        L2DnnMode::BalancedAtRate,
        L2DnnMode::BalancedAtRate,
        L2DnnMode::PowerSave,
        L2DnnMode::TextFocus,
    ];
    for f in 0..10u64 {
        let frame = clip.frame(f);
        let mode = modes[f as usize % modes.len()];
        let want = compiled.run(mode, &frame, &detector).expect("compiled");
        let got = from_file
            .run(mode as usize, &[Arc::new(frame)])
            .expect("file");
        let fused = got.get::<ScoreMap>("fused").expect("fused");
        let same_bits = fused
            .iter()
            .zip(want.fused.iter())
            .all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(
            same_bits && fused.dim() == want.fused.dim(),
            "frame {f}: fused"
        );
        let boxes = got.get::<Vec<TextBox>>("boxes").expect("boxes");
        assert_eq!(
            format!("{boxes:?}"),
            format!("{:?}", want.boxes),
            "frame {f}"
        );
        let roi = got.get::<EncodedRoi>("roi").expect("roi");
        assert_eq!(roi, &want.roi, "frame {f}: roi");
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
    let file = std::fs::read_to_string(repo().join("examples/graphs/ocr.json"))
        .unwrap()
        .replace(
            "\"models/ch_PP-OCRv4_det_infer.onnx\"",
            &format!("{:?}", det.display().to_string()),
        )
        .replace(
            "\"models/ch_PP-OCRv4_rec_infer.onnx\"",
            &format!("{:?}", rec.display().to_string()),
        );
    let mut p = GraphFile::parse(&file)
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
