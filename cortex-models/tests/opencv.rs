//! The OpenCV DNN backend (feature `opencv`): against ONNX Runtime's
//! reference and against tract on the tiny model, the registry measuring
//! both and reporting which ran, and fallback when OpenCV refuses a model
//! tract runs.
#![cfg(feature = "opencv")]

mod support;

use std::sync::Arc;

use cortex_models::{infer_into, Infer, InputShape, Model, ModelBackend, Output};
use cortex_vision::registry::{with_registry, Reason, Registry};
use ndarray::{Array4, IxDyn};
use support::{max_abs_diff, testdata, tiny_expected, tiny_input, H, W};

/// Both backends against ONNX Runtime and each other: f32 convolutions
/// summed in different orders.
const TOLERANCE: f32 = 1e-5;

fn zeros() -> Output {
    Output::zeros(IxDyn(&[0]))
}

#[test]
fn opencv_matches_onnx_runtime_and_tract() {
    let model = Model::load(testdata("tiny.onnx"), InputShape::image(3, H, W)).unwrap();
    let (mut cv, mut tr) = (zeros(), zeros());
    model
        .run_on(ModelBackend::OpenCvDnn, tiny_input(H, W).view(), &mut cv)
        .unwrap();
    assert_eq!(model.last_backend(), Some(ModelBackend::OpenCvDnn));
    model
        .run_on(ModelBackend::Tract, tiny_input(H, W).view(), &mut tr)
        .unwrap();
    let (d_ref, d_tract) = (max_abs_diff(&cv, &tiny_expected()), max_abs_diff(&cv, &tr));
    println!("opencv-dnn vs onnxruntime {d_ref:.1e}, vs tract {d_tract:.1e}");
    assert!(d_ref <= TOLERANCE && d_tract <= TOLERANCE);
    // A second frame reuses OpenCV's network and the output buffer.
    let first = cv.clone();
    model
        .run_on(ModelBackend::OpenCvDnn, tiny_input(H, W).view(), &mut cv)
        .unwrap();
    assert_eq!(cv, first);
}

#[test]
fn the_registry_measures_both_backends_and_reports_the_choice() {
    let reg = Arc::new(Registry::in_memory());
    let model = Model::load(testdata("tiny.onnx"), InputShape::image(3, H, W)).unwrap();
    let mut out = zeros();
    with_registry(&reg, || infer_into(&model, &tiny_input(H, W), &mut out)).unwrap();
    assert!(max_abs_diff(&out, &tiny_expected()) <= TOLERANCE);
    let d = reg
        .decisions()
        .into_iter()
        .find(|d| d.op == "infer")
        .unwrap();
    assert!(matches!(d.reason, Reason::Measured(_)), "{:?}", d.reason);
    // The measuring call ran every candidate (the last one timed is not
    // the winner); the next call of this shape runs the chosen kernel.
    with_registry(&reg, || infer_into(&model, &tiny_input(H, W), &mut out)).unwrap();
    assert!(max_abs_diff(&out, &tiny_expected()) <= TOLERANCE);
    assert_eq!(Some(d.kernel), model.last_backend().map(ModelBackend::name));
    let report = reg.report();
    assert!(
        report.contains("tract") && report.contains("opencv-dnn"),
        "{report}"
    );
    println!("{report}");
}

#[test]
fn a_model_opencv_refuses_falls_back_to_tract() {
    let reg = Arc::new(Registry::in_memory());
    reg.force::<Infer>("opencv-dnn").unwrap();
    let model = Model::load(testdata("trilu.onnx"), InputShape::Declared).unwrap();
    // Refused by OpenCV directly: one error naming the model and backend.
    let mut out = zeros();
    let input = Array4::from_shape_fn((1, 3, 8, 8), |(_, c, y, x)| (c * 64 + y * 8 + x) as f32);
    let err = model
        .run_on(ModelBackend::OpenCvDnn, input.view(), &mut out)
        .unwrap_err();
    assert!(
        err.to_string().contains("trilu.onnx") && err.to_string().contains("opencv-dnn"),
        "{err}"
    );
    // Through the registry, forced to OpenCV: tract computes the frame.
    with_registry(&reg, || infer_into(&model, &input, &mut out)).unwrap();
    assert_eq!(model.last_backend(), Some(ModelBackend::Tract));
    // Trilu(upper): the upper triangle of each 8x8 plane, zero below.
    for ((_, c, y, x), &v) in out
        .view()
        .into_dimensionality::<ndarray::Ix4>()
        .unwrap()
        .indexed_iter()
    {
        let want = if x >= y {
            (c * 64 + y * 8 + x) as f32
        } else {
            0.0
        };
        assert_eq!(v, want);
    }
    let d = reg
        .decisions()
        .into_iter()
        .find(|d| d.op == "infer")
        .unwrap();
    assert_eq!(d.failures.len(), 1, "{d:?}");
    assert!(reg.report().contains("FAILED"), "{}", reg.report());
}
