//! The tiny test model on the pure-Rust backend (and on OpenCV's DNN with
//! feature `opencv`): loading from a path and from bytes, fixing the free
//! dimensions at two shapes, outputs against ONNX Runtime's, the registry's
//! choice and report, and a frame of the wrong shape.

mod support;

use std::sync::Arc;

use cortex_models::{infer_into, Engine, InputShape, Model, Output, Problem};
use cortex_vision::registry::{with_registry, Config, Preference, Registry};
use ndarray::IxDyn;
use support::{max_abs_diff, testdata, tiny_expected, tiny_input, H, W};

/// tract against ONNX Runtime: two convolutions in f32, summed in another
/// order; the script's reference was computed single-threaded.
const TOLERANCE: f32 = 1e-5;

fn tiny() -> Model {
    Model::load(testdata("tiny.onnx"), InputShape::image(3, H, W)).unwrap()
}

#[test]
fn model_is_shared_across_threads() {
    fn sync<T: Send + Sync>() {}
    sync::<Model>();
}

#[test]
fn tract_matches_onnx_runtime() {
    let model = tiny();
    assert_eq!(model.input_shape(), [1, 3, H, W]);
    assert_eq!(model.input_name(), "x");
    let mut out = Output::zeros(IxDyn(&[0]));
    model
        .run_on(Engine::Tract, tiny_input(H, W).view(), &mut out)
        .unwrap();
    let d = max_abs_diff(&out, &tiny_expected());
    assert!(d <= TOLERANCE, "tract vs onnxruntime: {d}");
    assert_eq!(model.last_engine(), Some(Engine::Tract));
    // The same buffer again: same values.
    let first = out.clone();
    model
        .run_on(Engine::Tract, tiny_input(H, W).view(), &mut out)
        .unwrap();
    assert_eq!(out, first);
}

#[test]
fn bytes_and_path_load_the_same_model() {
    let bytes = std::fs::read(testdata("tiny.onnx")).unwrap();
    let a = Model::from_bytes("tiny (bytes)", bytes, InputShape::image(3, H, W)).unwrap();
    let b = tiny();
    assert_eq!(a.sha256(), b.sha256());
    assert_eq!(a.registry_tag(), b.registry_tag());
    assert_eq!(a.name(), "tiny (bytes)");
    let (mut oa, mut ob) = (Output::zeros(IxDyn(&[0])), Output::zeros(IxDyn(&[0])));
    a.run_on(Engine::Tract, tiny_input(H, W).view(), &mut oa)
        .unwrap();
    b.run_on(Engine::Tract, tiny_input(H, W).view(), &mut ob)
        .unwrap();
    assert_eq!(oa, ob);
}

#[test]
fn free_dimensions_take_the_shape_asked_for() {
    let model = Model::load(testdata("tiny.onnx"), InputShape::image(3, 32, 64)).unwrap();
    let mut out = Output::zeros(IxDyn(&[0]));
    model
        .run_on(Engine::Tract, tiny_input(32, 64).view(), &mut out)
        .unwrap();
    assert_eq!(out.shape(), &[1, 1, 32, 64]);
    // The input is one function of (c, y, x) at any size, and the model two
    // 3x3 convolutions: a pixel two or more away from the smaller input's
    // borders sees the same 5x5 neighbourhood in both, so the reference's
    // interior must reappear in the larger output.
    let expected = tiny_expected();
    for y in 2..H - 2 {
        for x in 2..W - 2 {
            let (a, b) = (out[[0, 0, y, x]], expected[[0, 0, y, x]]);
            assert!((a - b).abs() <= TOLERANCE, "({y},{x}): {a} vs {b}");
        }
    }
    // Another size than the fixed one is refused, naming both.
    let err = model
        .run_on(Engine::Tract, tiny_input(H, W).view(), &mut out)
        .unwrap_err();
    assert_eq!(
        err.problem,
        Problem::InputShape {
            got: format!("1x3x{H}x{W}"),
            want: "1x3x32x64".into()
        }
    );
    assert!(err.to_string().contains("tiny.onnx"), "{err}");
}

#[test]
fn the_registry_runs_the_model_and_says_which_backend() {
    let reg = Arc::new(Registry::in_memory());
    let model = tiny();
    let input = tiny_input(H, W);
    let mut out = Output::zeros(IxDyn(&[0]));
    with_registry(&reg, || infer_into(&model, &input, &mut out)).unwrap();
    assert!(max_abs_diff(&out, &tiny_expected()) <= TOLERANCE);
    let decision = reg
        .decisions()
        .into_iter()
        .find(|d| d.op == "infer")
        .expect("a decision for the model");
    // The decision is keyed by the model's hash and shape.
    assert!(decision.shape.tag.contains(&model.sha256_hex()[..16]));
    assert_eq!(
        decision.shape.to_string(),
        format!("{W}x{H} {}", model.registry_tag())
    );
    let ran = model.last_engine().unwrap();
    assert_eq!(decision.kernel, ran.name());
    let report = reg.report();
    assert!(report.contains("infer"), "{report}");
    // Without OpenCV, tract is the only candidate.
    #[cfg(not(feature = "opencv"))]
    assert_eq!(ran, Engine::Tract);
}

#[test]
fn pure_rust_preference_runs_tract() {
    let config = Config {
        preference: Preference::PureRustOnly,
        ..Config::default()
    };
    let reg = Arc::new(Registry::new(config));
    let model = tiny();
    let mut out = Output::zeros(IxDyn(&[0]));
    with_registry(&reg, || infer_into(&model, &tiny_input(H, W), &mut out)).unwrap();
    assert_eq!(model.last_engine(), Some(Engine::Tract));
}

#[test]
fn a_frame_of_another_shape_is_refused_by_every_backend() {
    let reg = Arc::new(Registry::in_memory());
    let model = tiny();
    let mut out = Output::zeros(IxDyn(&[0]));
    let err =
        with_registry(&reg, || infer_into(&model, &tiny_input(H + 1, W), &mut out)).unwrap_err();
    assert!(err.to_string().contains("tiny.onnx"), "{err}");
    assert!(err.to_string().contains("1x3x25x40"), "{err}");
    // The input was at fault: no backend is disabled, the next frame runs.
    with_registry(&reg, || infer_into(&model, &tiny_input(H, W), &mut out)).unwrap();
    assert!(max_abs_diff(&out, &tiny_expected()) <= TOLERANCE);
}
