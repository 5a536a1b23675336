//! A model as a registry op: `infer`, whose kernels are the inference
//! backends (tract always, OpenCV DNN with feature `opencv`, ONNX Runtime
//! with feature `onnxruntime`). The registry
//! chooses per model and input shape — the shape's tag carries the model
//! file's hash, so autotune decisions are kept per model — measures when
//! several backends are candidates, and falls back to the next backend when
//! one refuses the model or a frame. The node functions [`infer`] and
//! [`infer_into`] dispatch through the thread's registry, as
//! `registry::ops` does for the vision ops.

use cortex_vision::ops::OpsError;
use cortex_vision::registry::{
    current, Backend, Kernel, KernelFn, Op, RegistryError, Shape, Supports,
};
use ndarray::{Array4, ArrayD};

use crate::model::{Model, ModelBackend};

/// A tensor fed to a model node: f32, `[n, c, h, w]`.
pub type Tensor4 = Array4<f32>;

/// What a model node gives: the model's first output.
pub type Output = ArrayD<f32>;

/// The registry op of a model node.
#[derive(Debug)]
pub struct Infer;

fn kernel(engine: ModelBackend, backend: Backend, run: KernelFn<Infer>) -> Kernel<Infer> {
    Kernel {
        name: engine.name(),
        backend,
        supports: Supports::ANY,
        exact: false,
        run,
    }
}

fn on(
    engine: ModelBackend,
    (model, input): &(&Model, &Tensor4),
    out: &mut Output,
) -> Result<(), OpsError> {
    model
        .run_on(engine, input.view(), out)
        .map_err(|e| OpsError::Model(e.to_string()))
}

impl Op for Infer {
    const NAME: &'static str = "infer";
    type Args<'a> = (&'a Model, &'a Tensor4);
    type Output = Output;

    /// The model's input size, tagged with the model's hash and shape.
    fn shape((model, _): &Self::Args<'_>) -> Shape {
        let [_, _, h, w] = model.input_shape();
        Shape::new(w, h).tagged(model.registry_tag())
    }

    fn kernels() -> Vec<Kernel<Self>> {
        Vec::from([
            kernel(ModelBackend::Tract, Backend::PureRust, |a, out| {
                on(ModelBackend::Tract, a, out)
            }),
            #[cfg(feature = "opencv")]
            kernel(ModelBackend::OpenCvDnn, Backend::OpenCv, |a, out| {
                on(ModelBackend::OpenCvDnn, a, out)
            }),
            #[cfg(feature = "onnxruntime")]
            kernel(
                ModelBackend::OnnxRuntime,
                Backend::Other(ModelBackend::OnnxRuntime.name()),
                |a, out| on(ModelBackend::OnnxRuntime, a, out),
            ),
        ])
    }
}

/// Runs `model` on `input` through the thread's registry (the process's
/// when none is set), into `out`: the node form that reuses the pipeline's
/// buffer.
///
/// ```text
/// node prob: Output = cortex::models::infer_into(model, tensor, &mut prob)?;
/// ```
///
/// # Errors
/// [`RegistryError::Kernel`] when every backend refused (the first one's
/// error, naming the model); `out` is unspecified after an error.
pub fn infer_into(model: &Model, input: &Tensor4, out: &mut Output) -> Result<(), RegistryError> {
    current().call_into::<Infer>(&(model, input), out)
}

/// [`infer_into`] into a new value.
///
/// # Errors
/// As [`infer_into`].
pub fn infer(model: &Model, input: &Tensor4) -> Result<Output, RegistryError> {
    current().call::<Infer>(&(model, input))
}
