//! A model loaded once for a node: its bytes checked, its input shape fixed,
//! the pure-Rust engine built and optimised; the OpenCV engine (feature
//! `opencv`) built from the same bytes on its first use.

use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock};

use ndarray::{ArrayD, ArrayView4};
use sha2::{Digest, Sha256};
use tract_onnx::prelude::Framework;

use crate::check::{check, InputShape};
use crate::error::{brief, shape_text, ModelError, Problem};
use crate::file::read_model_file;
use crate::tract::{guarded, TractEngine};

/// An inference backend of a model node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModelBackend {
    /// tract, the pure-Rust ONNX engine (always built).
    Tract,
    /// OpenCV's DNN module (feature `opencv`).
    OpenCvDnn,
    /// ONNX Runtime, loaded at run time (feature `onnxruntime`).
    OnnxRuntime,
}

impl ModelBackend {
    /// Its name in reports, errors and the registry (the kernel's name).
    pub const fn name(self) -> &'static str {
        match self {
            ModelBackend::Tract => crate::tract::NAME,
            ModelBackend::OpenCvDnn => "opencv-dnn",
            ModelBackend::OnnxRuntime => "onnxruntime",
        }
    }

    fn code(self) -> u8 {
        match self {
            ModelBackend::Tract => 1,
            ModelBackend::OpenCvDnn => 2,
            ModelBackend::OnnxRuntime => 3,
        }
    }

    fn from_code(c: u8) -> Option<ModelBackend> {
        match c {
            1 => Some(ModelBackend::Tract),
            2 => Some(ModelBackend::OpenCvDnn),
            3 => Some(ModelBackend::OnnxRuntime),
            _ => None,
        }
    }
}

impl fmt::Display for ModelBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The time tract spends in one kind of operator per run
/// ([`Model::profile_tract`]).
#[derive(Debug, Clone, PartialEq)]
pub struct OpTime {
    /// The operator, as tract names it once optimised (a convolution is a
    /// matrix product over im2col patches, `OptMatMul`, and its helpers).
    pub op: String,
    /// Mean milliseconds a run spends in it.
    pub ms: f64,
    /// How many nodes of the plan it is.
    pub nodes: usize,
}

/// An ONNX model ready to run as a node: one f32 NCHW input fixed at one
/// shape, the first output returned. Load it once (at pipeline construction
/// or before the first frame) and pass it to the node by reference; it is
/// `Sync`, and runs one frame at a time per backend.
pub struct Model {
    name: String,
    sha256: [u8; 32],
    input_name: String,
    shape: [usize; 4],
    /// The file's `metadata_props`, key and value.
    metadata: Vec<(String, String)>,
    tag: &'static str,
    tract: TractEngine,
    /// The model's bytes, for the backends built on first use and the
    /// model at other shapes.
    bytes: Vec<u8>,
    #[cfg(feature = "opencv")]
    opencv: OnceLock<Result<Mutex<crate::opencv::OpenCvEngine>, Problem>>,
    /// The ONNX Runtime session at the model's thread count, or why there
    /// is none (kept: a refusal is not retried every frame).
    #[cfg(feature = "onnxruntime")]
    ort: Mutex<Option<Result<crate::onnxruntime::OrtEngine, Problem>>>,
    last: AtomicU8,
}

impl fmt::Debug for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Model")
            .field("name", &self.name)
            .field("sha256", &self.sha256_hex())
            .field("input", &self.input_name)
            .field("shape", &self.shape)
            .finish_non_exhaustive()
    }
}

/// The registry's shape tags of the loaded models, one per model file and
/// input shape: a [`cortex_vision::registry::Shape`] carries a `'static`
/// tag, and a process loads few distinct models, so each is interned once.
fn intern(tag: String) -> &'static str {
    static TAGS: OnceLock<Mutex<Vec<&'static str>>> = OnceLock::new();
    let mut tags = TAGS
        .get_or_init(|| Mutex::new(Vec::new()))
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(t) = tags.iter().find(|t| **t == tag) {
        return t;
    }
    let t: &'static str = Box::leak(tag.into_boxed_str());
    tags.push(t);
    t
}

impl Model {
    /// Loads the ONNX model at `path` and fixes its input at `shape`.
    ///
    /// # Errors
    /// [`ModelError`] naming the file and the problem: unreadable, not a
    /// regular file (a FIFO or a folder is refused without blocking), too
    /// large, not ONNX, an operator tract lacks, an input not of rank 4 or
    /// not f32, a shape that does not fit or is over the limits.
    pub fn load(path: impl AsRef<Path>, shape: InputShape) -> Result<Model, ModelError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let bytes = read_model_file(path).map_err(|p| ModelError::new(&name, p))?;
        Model::from_bytes(name, bytes, shape)
    }

    /// Loads a model from its bytes, calling it `name` in errors and
    /// reports.
    ///
    /// # Errors
    /// As [`Model::load`], less the file's own problems.
    pub fn from_bytes(
        name: impl Into<String>,
        bytes: Vec<u8>,
        shape: InputShape,
    ) -> Result<Model, ModelError> {
        let name = name.into();
        let err = |p: Problem| ModelError::new(&name, p);
        let proto = guarded(|| {
            tract_onnx::onnx()
                .proto_model_for_read(&mut &bytes[..])
                .map_err(|e| format!("{e:#}"))
        })
        .map_err(|m| err(Problem::Parse(brief(&m))))?;
        let (declared, fixed) = check(&proto, bytes.len(), shape).map_err(err)?;
        let tract = TractEngine::new(&proto, fixed)
            .map_err(|p| side_multiple(&proto, bytes.len(), fixed, p))
            .map_err(err)?;
        let sha256: [u8; 32] = Sha256::digest(&bytes).into();
        let hex = hex(&sha256);
        let tag = intern(format!("model {} {}", &hex[..16], shape_text(&fixed)));
        let metadata = proto
            .metadata_props
            .iter()
            .map(|p| (p.key.clone(), p.value.clone()))
            .collect();
        Ok(Model {
            name,
            sha256,
            input_name: declared.name,
            shape: fixed,
            metadata,
            tag,
            tract,
            bytes,
            #[cfg(feature = "opencv")]
            opencv: OnceLock::new(),
            #[cfg(feature = "onnxruntime")]
            ort: Mutex::new(None),
            last: AtomicU8::new(0),
        })
    }

    /// The same model fixed at another input shape (a recogniser's wider
    /// batch), from the bytes it was loaded from, at the same thread count.
    ///
    /// # Errors
    /// As [`Model::from_bytes`].
    pub fn with_shape(&self, shape: InputShape) -> Result<Model, ModelError> {
        let m = Model::from_bytes(self.name.clone(), self.bytes.clone(), shape)?;
        m.set_threads(self.threads());
        Ok(m)
    }

    /// Its name: the file's path, or the name given to its bytes.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The SHA-256 of its bytes.
    pub fn sha256(&self) -> [u8; 32] {
        self.sha256
    }

    /// The SHA-256 of its bytes, in hexadecimal.
    pub fn sha256_hex(&self) -> String {
        hex(&self.sha256)
    }

    /// The fixed input shape, `[n, c, h, w]`.
    pub fn input_shape(&self) -> [usize; 4] {
        self.shape
    }

    /// The value the file's metadata gives `key` (e.g. a recogniser's
    /// `character` list), if any.
    pub fn metadata(&self, key: &str) -> Option<&str> {
        self.metadata
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The input's name in the model.
    pub fn input_name(&self) -> &str {
        &self.input_name
    }

    /// The tag of this model's registry shape: the model file's hash and
    /// the input shape, so that autotune decisions are kept per model.
    pub fn registry_tag(&self) -> &'static str {
        self.tag
    }

    /// The threads tract and ONNX Runtime run a frame on: the cores the
    /// process may use unless [`Model::set_threads`] said otherwise.
    pub fn threads(&self) -> usize {
        self.tract.threads()
    }

    /// Runs tract and ONNX Runtime on `threads` threads from the next frame
    /// on (0 or 1: on the calling thread only, e.g. when frames already run
    /// in parallel; ONNX Runtime's session is built again at the new
    /// count). OpenCV DNN keeps OpenCV's own, process-wide setting.
    pub fn set_threads(&self, threads: usize) {
        self.tract.set_threads(threads);
    }

    /// tract's time per operator on `input` (of the fixed shape), the mean
    /// of `rounds` runs after one unmeasured, at the model's thread count:
    /// where the pure-Rust backend's time goes.
    ///
    /// # Errors
    /// [`Problem::InputShape`] for a tensor of another shape, and tract's
    /// failure on the frame.
    pub fn profile_tract(
        &self,
        input: ArrayView4<'_, f32>,
        rounds: usize,
    ) -> Result<Vec<OpTime>, ModelError> {
        self.check_input(&input)?;
        self.tract
            .profile(input, rounds)
            .map_err(|p| ModelError::new(&self.name, p))
    }

    /// The backend that ran the last frame, if any ran.
    pub fn last_backend(&self) -> Option<ModelBackend> {
        ModelBackend::from_code(self.last.load(Ordering::Relaxed))
    }

    fn check_input(&self, input: &ArrayView4<'_, f32>) -> Result<(), ModelError> {
        if input.shape() != self.shape {
            return Err(ModelError::new(
                &self.name,
                Problem::InputShape {
                    got: shape_text(input.shape()),
                    want: shape_text(&self.shape),
                },
            ));
        }
        Ok(())
    }

    /// Runs one frame on `backend`: `input` in (of the fixed shape), the
    /// model's first output into `out`, whose buffer is reused when its
    /// shape is already the output's.
    ///
    /// # Errors
    /// [`Problem::InputShape`] for a tensor of another shape (nothing runs);
    /// [`Problem::NotBuilt`] for a backend whose feature is off; the
    /// backend's refusal of the model ([`Problem::Prepare`],
    /// [`Problem::UnsupportedOp`]) or of the frame ([`Problem::Run`]).
    pub fn run_on(
        &self,
        backend: ModelBackend,
        input: ArrayView4<'_, f32>,
        out: &mut ArrayD<f32>,
    ) -> Result<(), ModelError> {
        self.check_input(&input)?;
        let err = |p: Problem| ModelError::new(&self.name, p);
        match backend {
            ModelBackend::Tract => self.tract.run(input, out).map_err(err)?,
            ModelBackend::OpenCvDnn => self.run_opencv(input, out).map_err(err)?,
            ModelBackend::OnnxRuntime => self.run_ort(input, out).map_err(err)?,
        }
        self.last.store(backend.code(), Ordering::Relaxed);
        Ok(())
    }

    #[cfg(feature = "opencv")]
    fn run_opencv(&self, input: ArrayView4<'_, f32>, out: &mut ArrayD<f32>) -> Result<(), Problem> {
        let engine = self.opencv.get_or_init(|| {
            crate::opencv::OpenCvEngine::new(&self.bytes, self.shape).map(Mutex::new)
        });
        let engine = engine.as_ref().map_err(Clone::clone)?;
        engine
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .run(input, out)
    }

    #[cfg(feature = "onnxruntime")]
    fn run_ort(&self, input: ArrayView4<'_, f32>, out: &mut ArrayD<f32>) -> Result<(), Problem> {
        use crate::onnxruntime::OrtEngine;
        let threads = self.threads();
        let mut slot = self.ort.lock().unwrap_or_else(|p| p.into_inner());
        let stale = matches!(&*slot, Some(Ok(e)) if e.threads() != threads);
        if slot.is_none() || stale {
            *slot = Some(OrtEngine::new(&self.bytes, &self.input_name, threads));
        }
        match slot.as_mut() {
            Some(Ok(engine)) => engine.run(input, out),
            Some(Err(p)) => Err(p.clone()),
            None => Err(Problem::NotBuilt(ModelBackend::OnnxRuntime.name())),
        }
    }

    #[cfg(not(feature = "onnxruntime"))]
    fn run_ort(&self, _: ArrayView4<'_, f32>, _: &mut ArrayD<f32>) -> Result<(), Problem> {
        Err(Problem::NotBuilt(ModelBackend::OnnxRuntime.name()))
    }

    #[cfg(not(feature = "opencv"))]
    fn run_opencv(&self, _: ArrayView4<'_, f32>, _: &mut ArrayD<f32>) -> Result<(), Problem> {
        Err(Problem::NotBuilt(ModelBackend::OpenCvDnn.name()))
    }
}

/// A model that tract cannot prepare at `shape` but can with its sides
/// rounded up to a multiple of a power of two (a network whose stages
/// halve and double the image, as PP-OCR's detector by 32) is told in
/// those terms; any other refusal is `problem` unchanged. Probing builds
/// the model again (each candidate checked as a load is), only on this
/// error path.
fn side_multiple(
    proto: &tract_onnx::pb::ModelProto,
    len: usize,
    shape: [usize; 4],
    problem: Problem,
) -> Problem {
    let Problem::Prepare { backend, message } = &problem else {
        return problem;
    };
    let [n, c, h, w] = shape;
    for stride in [2, 4, 8, 16, 32, 64, 128] {
        let (h2, w2) = (h.div_ceil(stride) * stride, w.div_ceil(stride) * stride);
        if (h2, w2) == (h, w) {
            continue;
        }
        let candidate = [n, c, h2, w2];
        let fits = check(proto, len, InputShape::Fixed(candidate)).is_ok()
            && TractEngine::new(proto, candidate).is_ok();
        if fits {
            return Problem::SideMultiple {
                requested: shape_text(&shape),
                stride,
                nearest: shape_text(&candidate),
                backend,
                // The engine's internals matter less once the rule is said.
                message: brief(&message.chars().take(120).collect::<String>()),
            };
        }
    }
    problem
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
