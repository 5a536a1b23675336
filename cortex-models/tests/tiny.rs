//! The tiny test model on the pure-Rust backend (and on OpenCV's DNN with
//! feature `opencv`, on ONNX Runtime with feature `onnxruntime`): loading from a path and from bytes, fixing the free
//! dimensions at two shapes, outputs against ONNX Runtime's, the registry's
//! choice and report, and a frame of the wrong shape.

mod support;

use std::sync::Arc;

use cortex_models::{infer_into, InputShape, Model, ModelBackend, Output, Problem};
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
        .run_on(ModelBackend::Tract, tiny_input(H, W).view(), &mut out)
        .unwrap();
    let d = max_abs_diff(&out, &tiny_expected());
    assert!(d <= TOLERANCE, "tract vs onnxruntime: {d}");
    assert_eq!(model.last_backend(), Some(ModelBackend::Tract));
    // The same buffer again: same values.
    let first = out.clone();
    model
        .run_on(ModelBackend::Tract, tiny_input(H, W).view(), &mut out)
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
    a.run_on(ModelBackend::Tract, tiny_input(H, W).view(), &mut oa)
        .unwrap();
    b.run_on(ModelBackend::Tract, tiny_input(H, W).view(), &mut ob)
        .unwrap();
    assert_eq!(oa, ob);
}

#[test]
fn free_dimensions_take_the_shape_asked_for() {
    let model = Model::load(testdata("tiny.onnx"), InputShape::image(3, 32, 64)).unwrap();
    let mut out = Output::zeros(IxDyn(&[0]));
    model
        .run_on(ModelBackend::Tract, tiny_input(32, 64).view(), &mut out)
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
        .run_on(ModelBackend::Tract, tiny_input(H, W).view(), &mut out)
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
    // With more than one backend the measuring call ran every candidate
    // (the last one timed need not be the winner); the next call of this
    // shape runs the chosen kernel.
    with_registry(&reg, || infer_into(&model, &input, &mut out)).unwrap();
    assert!(max_abs_diff(&out, &tiny_expected()) <= TOLERANCE);
    let ran = model.last_backend().unwrap();
    assert_eq!(decision.kernel, ran.name());
    let report = reg.report();
    assert!(report.contains("infer"), "{report}");
    // Without another backend, tract is the only candidate.
    #[cfg(not(any(feature = "opencv", feature = "onnxruntime")))]
    assert_eq!(ran, ModelBackend::Tract);
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
    assert_eq!(model.last_backend(), Some(ModelBackend::Tract));
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

/// ONNX Runtime through cortex (feature `onnxruntime`), when its library is
/// found (`ORT_DYLIB_PATH`, or `libonnxruntime.so` on the loader's path);
/// each test says why it skips otherwise.
#[cfg(feature = "onnxruntime")]
mod onnxruntime {
    use super::*;

    /// The backend's output of the tiny model, or `None` (printed) when
    /// the library cannot be loaded.
    fn run_or_skip(test: &str, model: &Model, out: &mut Output) -> Option<()> {
        match model.run_on(ModelBackend::OnnxRuntime, tiny_input(H, W).view(), out) {
            Ok(()) => Some(()),
            Err(e) if std::env::var_os("ORT_DYLIB_PATH").is_none() => {
                println!("{test}: skipped: {e}");
                None
            }
            Err(e) => panic!("{test}: ORT_DYLIB_PATH is set but: {e}"),
        }
    }

    #[test]
    fn onnxruntime_through_cortex_matches_its_python_output_and_tract() {
        let test = "onnxruntime_through_cortex_matches_its_python_output_and_tract";
        let model = tiny();
        let (mut ort, mut tr) = (Output::zeros(IxDyn(&[0])), Output::zeros(IxDyn(&[0])));
        let Some(()) = run_or_skip(test, &model, &mut ort) else {
            return;
        };
        assert_eq!(model.last_backend(), Some(ModelBackend::OnnxRuntime));
        model
            .run_on(ModelBackend::Tract, tiny_input(H, W).view(), &mut tr)
            .unwrap();
        // The same library, single-threaded from Python when the reference
        // was written: the same sums in the same order.
        let d_ref = max_abs_diff(&ort, &tiny_expected());
        let d_tract = max_abs_diff(&ort, &tr);
        println!("{test}: vs onnxruntime (Python) {d_ref:.1e}, vs tract {d_tract:.1e}");
        assert!(d_ref <= TOLERANCE && d_tract <= TOLERANCE);
        // Another thread count builds the session again; same output.
        let first = ort.clone();
        model.set_threads(1);
        run_or_skip(test, &model, &mut ort).unwrap();
        assert!(max_abs_diff(&ort, &first) <= TOLERANCE);
        // A frame of another shape is refused before the library sees it.
        let err = model
            .run_on(
                ModelBackend::OnnxRuntime,
                tiny_input(H + 1, W).view(),
                &mut ort,
            )
            .unwrap_err();
        assert!(matches!(err.problem, Problem::InputShape { .. }), "{err}");
    }

    #[test]
    fn the_registry_measures_onnxruntime_with_the_others() {
        let test = "the_registry_measures_onnxruntime_with_the_others";
        let probe = tiny();
        if run_or_skip(test, &probe, &mut Output::zeros(IxDyn(&[0]))).is_none() {
            return;
        }
        let reg = Arc::new(Registry::in_memory());
        let model = tiny();
        let mut out = Output::zeros(IxDyn(&[0]));
        with_registry(&reg, || infer_into(&model, &tiny_input(H, W), &mut out)).unwrap();
        assert!(max_abs_diff(&out, &tiny_expected()) <= TOLERANCE);
        let d = reg
            .decisions()
            .into_iter()
            .find(|d| d.op == "infer")
            .unwrap();
        assert!(
            matches!(d.reason, cortex_vision::registry::Reason::Measured(_)),
            "{:?}",
            d.reason
        );
        // The measuring call ran every candidate (the last one timed is
        // not the winner); the next call of this shape runs the chosen
        // kernel.
        with_registry(&reg, || infer_into(&model, &tiny_input(H, W), &mut out)).unwrap();
        assert!(max_abs_diff(&out, &tiny_expected()) <= TOLERANCE);
        assert_eq!(Some(d.kernel), model.last_backend().map(ModelBackend::name));
        let report = reg.report();
        assert!(report.contains("onnxruntime"), "{report}");
        println!("{test}: picked {}\n{report}", d.kernel);
    }
}
