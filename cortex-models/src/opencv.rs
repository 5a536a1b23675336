//! The OpenCV backend: the model's bytes read by `cv::dnn::readNetFromONNX`
//! (OpenCV's own ONNX importer and layers), built on a model's first use on
//! this backend; frames go in and out as 4-D `Mat`s over copies of the
//! tensors.

use ndarray::{ArrayD, ArrayView4, IxDyn};
use opencv::core::{Mat, MatTraitConst, MatTraitConstManual, Vector};
use opencv::dnn::{self, NetTrait, NetTraitConst};
use opencv::prelude::MatTraitManual;

use crate::error::{brief, shape_text, Problem};
use crate::tract::guarded;

/// The backend's name in errors and reports.
pub const NAME: &str = "opencv-dnn";

/// An OpenCV network for one input shape.
pub(crate) struct OpenCvEngine {
    net: dnn::Net,
    /// The input blob, reused between frames.
    blob: Mat,
}

// SAFETY: `cv::dnn::Net` is a reference-counted handle whose methods are
// not safe to call from two threads at once; the engine is only ever used
// behind the model's mutex, one frame at a time, and OpenCV does not tie a
// network to the thread that created it.
unsafe impl Send for OpenCvEngine {}

fn refused(e: impl std::fmt::Display) -> Problem {
    Problem::Prepare {
        backend: NAME,
        message: brief(&e.to_string()),
    }
}

fn failed(e: impl std::fmt::Display) -> Problem {
    Problem::Run {
        backend: NAME,
        message: brief(&e.to_string()),
    }
}

impl OpenCvEngine {
    /// Reads the model and fixes its input shape.
    ///
    /// # Errors
    /// [`Problem::Prepare`] when OpenCV refuses the model (an operator its
    /// importer lacks included), or a shape side over `i32`.
    pub(crate) fn new(bytes: &[u8], shape: [usize; 4]) -> Result<OpenCvEngine, Problem> {
        let dims: Vec<i32> = shape
            .iter()
            .map(|&d| i32::try_from(d).map_err(|_| refused(format!("side {d} over i32"))))
            .collect::<Result<_, _>>()?;
        guarded(|| {
            let buffer = Vector::<u8>::from_slice(bytes);
            let mut net = dnn::read_net_from_onnx_buffer(&buffer).map_err(|e| e.to_string())?;
            if net.empty().map_err(|e| e.to_string())? {
                return Err("OpenCV read an empty network".into());
            }
            net.set_preferable_backend(dnn::DNN_BACKEND_OPENCV)
                .map_err(|e| e.to_string())?;
            net.set_preferable_target(dnn::DNN_TARGET_CPU)
                .map_err(|e| e.to_string())?;
            let blob = Mat::new_nd_with_default(&dims, opencv::core::CV_32F, 0.into())
                .map_err(|e| e.to_string())?;
            Ok(OpenCvEngine { net, blob })
        })
        .map_err(refused)
    }

    /// Runs one frame, the first output into `out`.
    ///
    /// # Errors
    /// [`Problem::Run`] with OpenCV's message.
    pub(crate) fn run(
        &mut self,
        input: ArrayView4<'_, f32>,
        out: &mut ArrayD<f32>,
    ) -> Result<(), Problem> {
        let dst = self.blob.data_typed_mut::<f32>().map_err(failed)?;
        match input.as_slice() {
            Some(src) => dst.copy_from_slice(src),
            None => dst.iter_mut().zip(input.iter()).for_each(|(d, s)| *d = *s),
        }
        let result = guarded(|| {
            self.net
                .set_input_def(&self.blob)
                .map_err(|e| e.to_string())?;
            self.net.forward_single_def().map_err(|e| e.to_string())
        })
        .map_err(failed)?;
        let dims: Vec<usize> = result
            .mat_size()
            .iter()
            .map(|&d| usize::try_from(d).unwrap_or(0))
            .collect();
        if result.typ() != opencv::core::CV_32F || !result.is_continuous() {
            return Err(failed(format!(
                "output {} is not a continuous f32 blob",
                shape_text(&dims)
            )));
        }
        let src = result.data_typed::<f32>().map_err(failed)?;
        if out.shape() != dims.as_slice() {
            *out = ArrayD::zeros(IxDyn(&dims));
        }
        match out.as_slice_mut() {
            Some(d) if d.len() == src.len() => d.copy_from_slice(src),
            _ => return Err(failed("output size does not match its shape")),
        }
        Ok(())
    }
}
