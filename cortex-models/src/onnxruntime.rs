//! The ONNX Runtime backend (feature `onnxruntime`): Microsoft's engine,
//! loaded at run time through the `ort` crate's `load-dynamic` — nothing is
//! linked or downloaded at build time. The library is the file
//! `ORT_DYLIB_PATH` names, else `libonnxruntime.so` on the loader's path;
//! the `onnxruntime` wheel on PyPI ships one
//! (`site-packages/onnxruntime/capi/libonnxruntime.so.1.*`), and so do
//! Microsoft's release archives on GitHub for machines without Python.
//!
//! A session is built from the model's bytes on the model's first frame on
//! this backend, with its intra-op pool at the model's thread count (one
//! thread: ONNX Runtime runs on the caller's thread), and built again when
//! the count changes.

use std::sync::OnceLock;

use ndarray::{ArrayD, ArrayView4, IxDyn};
use ort::environment::Environment;
use ort::session::builder::GraphOptimizationLevel;
use ort::session::Session;
use ort::value::TensorRef;

use crate::error::{brief, shape_text, Problem};
use crate::tract::guarded;

/// The backend's name in errors and reports.
pub const NAME: &str = "onnxruntime";

/// The environment variable naming the library file.
pub const DYLIB_ENV: &str = "ORT_DYLIB_PATH";

/// Loads the library and makes the process's one environment, once: `Err`
/// says why it could not be (every later use gives the same reason, and
/// nothing panics).
fn runtime() -> Result<&'static Environment, Problem> {
    static LOADED: OnceLock<Result<Environment, String>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            let path = std::env::var_os(DYLIB_ENV)
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| "libonnxruntime.so".into());
            guarded(|| {
                ort::init_from(&path)
                    .map_err(|e| format!("{e} (set {DYLIB_ENV} to the library's path)"))?
                    .with_name("cortex")
                    .with_telemetry(false)
                    .build()
                    .map_err(|e| e.to_string())
            })
        })
        .as_ref()
        .map_err(|message| Problem::Prepare {
            backend: NAME,
            message: brief(message),
        })
}

fn refused(e: impl std::fmt::Display) -> Problem {
    let message = brief(&e.to_string());
    // ONNX Runtime's words for an operator it has no kernel for.
    for marker in [
        "No Op registered for ",
        "Could not find an implementation for ",
    ] {
        if let Some(rest) = message.split(marker).nth(1) {
            let op: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
                .collect();
            if !op.is_empty() {
                return Problem::UnsupportedOp { op, backend: NAME };
            }
        }
    }
    Problem::Prepare {
        backend: NAME,
        message,
    }
}

fn failed(e: impl std::fmt::Display) -> Problem {
    Problem::Run {
        backend: NAME,
        message: brief(&e.to_string()),
    }
}

/// An ONNX Runtime session of one model at one thread count.
pub(crate) struct OrtEngine {
    session: Session,
    threads: usize,
    input: String,
}

impl OrtEngine {
    /// Builds a session from the model's bytes with `threads` intra-op
    /// threads (all graph optimisations on, as ONNX Runtime's default).
    ///
    /// # Errors
    /// [`Problem::Prepare`] when the library cannot be loaded or refuses
    /// the model; [`Problem::UnsupportedOp`] for an operator it lacks.
    pub(crate) fn new(bytes: &[u8], input: &str, threads: usize) -> Result<OrtEngine, Problem> {
        let env = runtime()?;
        let threads = threads.max(1);
        let session = guarded(|| {
            let build = || -> Result<Session, String> {
                let s = |e: ort::Error<_>| e.to_string();
                let mut b = Session::builder(env)
                    .map_err(|e| e.to_string())?
                    .with_optimization_level(GraphOptimizationLevel::All)
                    .map_err(s)?
                    .with_intra_threads(threads)
                    .map_err(s)?
                    .with_inter_threads(1)
                    .map_err(s)?;
                b.commit_from_memory(bytes).map_err(|e| e.to_string())
            };
            build()
        })
        .map_err(refused)?;
        Ok(OrtEngine {
            session,
            threads,
            input: input.to_string(),
        })
    }

    /// The intra-op threads of its session.
    pub(crate) fn threads(&self) -> usize {
        self.threads
    }

    /// Runs one frame, the first output into `out` (reused when its shape
    /// is the output's).
    ///
    /// # Errors
    /// [`Problem::Run`] with ONNX Runtime's message.
    pub(crate) fn run(
        &mut self,
        input: ArrayView4<'_, f32>,
        out: &mut ArrayD<f32>,
    ) -> Result<(), Problem> {
        let shape: [usize; 4] = input.dim().into();
        let owned;
        let data = match input.as_slice() {
            Some(s) => s,
            None => {
                owned = input.iter().copied().collect::<Vec<f32>>();
                &owned[..]
            }
        };
        let name = self.input.as_str();
        let session = &mut self.session;
        guarded(|| {
            let tensor = TensorRef::from_array_view((shape, data)).map_err(|e| e.to_string())?;
            let outputs = session
                .run(ort::inputs![name => tensor])
                .map_err(|e| e.to_string())?;
            if outputs.len() == 0 {
                return Err("the model gave no output".into());
            }
            let (dims, values) = outputs[0]
                .try_extract_tensor::<f32>()
                .map_err(|e| e.to_string())?;
            let dims: Vec<usize> = dims.iter().map(|&d| d.max(0) as usize).collect();
            if values.len() != dims.iter().product::<usize>() {
                return Err(format!(
                    "output {} does not hold its values",
                    shape_text(&dims)
                ));
            }
            if out.shape() != dims.as_slice() {
                *out = ArrayD::zeros(IxDyn(&dims));
            }
            match out.as_slice_mut() {
                Some(d) => d.copy_from_slice(values),
                None => out.iter_mut().zip(values).for_each(|(d, s)| *d = *s),
            }
            Ok(())
        })
        .map_err(failed)
    }
}
