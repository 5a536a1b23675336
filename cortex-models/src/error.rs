//! Why a model could not be loaded or run: every error names the model (its
//! file, or the name given to its bytes) and one problem.

use std::fmt;

/// Why a model could not be loaded, or a frame not run through it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("model {model}: {problem}")]
pub struct ModelError {
    /// The model: its path, or the name given to its bytes.
    pub model: String,
    /// What is wrong.
    pub problem: Problem,
}

impl ModelError {
    /// `problem` with the model named `model`.
    pub fn new(model: impl fmt::Display, problem: Problem) -> ModelError {
        ModelError {
            model: model.to_string(),
            problem,
        }
    }
}

/// What is wrong with a model, or with a frame given to it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Problem {
    /// The file could not be opened or read.
    #[error("cannot read it: {0}")]
    Io(String),
    /// The path names something other than a regular file (a FIFO, a
    /// folder, a device, a socket).
    #[error("is {0}, not a regular file")]
    NotAFile(&'static str),
    /// The file is larger than a model file may be.
    #[error("is {bytes} bytes, more than a model file may be ({max} at most)")]
    FileTooLarge {
        /// Its size (or a lower bound, when it grew while read).
        bytes: u64,
        /// The limit.
        max: u64,
    },
    /// The bytes are not an ONNX model (truncated, garbage, another format).
    #[error("is not a valid ONNX model: {0}")]
    Parse(String),
    /// The model uses an operator the backend does not implement.
    #[error("uses operator `{op}`, which {backend} does not implement")]
    UnsupportedOp {
        /// The operator's type (with its domain when not the default one).
        op: String,
        /// The backend that lacks it.
        backend: &'static str,
    },
    /// The model does not have exactly one input and at least one output.
    #[error("has {inputs} inputs and {outputs} outputs; a model node takes one input and gives at least one output")]
    Arity {
        /// Its graph inputs (initializers excluded).
        inputs: usize,
        /// Its graph outputs.
        outputs: usize,
    },
    /// The model's input is not of the node's rank (4: N, C, H, W).
    #[error("input `{input}` has rank {rank}; a model node feeds a rank-4 (NCHW) tensor")]
    Rank {
        /// The input's name.
        input: String,
        /// Its declared rank.
        rank: usize,
    },
    /// The model's input is not of the node's element type (f32).
    #[error("input `{input}` is of type {dtype}; a model node feeds f32")]
    DType {
        /// The input's name.
        input: String,
        /// Its declared ONNX element type.
        dtype: String,
    },
    /// The shape asked for does not fit the shape the model declares.
    #[error("input `{input}` is declared {declared}; it cannot be fixed at {requested}")]
    ShapeMismatch {
        /// The input's name.
        input: String,
        /// The declared shape (`?` for a free dimension).
        declared: String,
        /// The shape asked for.
        requested: String,
    },
    /// A shape (the input's, or a value the model computes from it) is
    /// larger than the limits; refused before anything was allocated for it.
    #[error(
        "{what} is {shape} ({elements} elements), over the limit of {max} elements per tensor"
    )]
    TooLarge {
        /// Which tensor.
        what: String,
        /// Its shape.
        shape: String,
        /// Its element count (saturating).
        elements: u64,
        /// The limit.
        max: u64,
    },
    /// A value tract would compute from the model's constants while loading
    /// it is over the per-tensor limit; refused before tract saw the model.
    #[error("node `{node}` ({op}) would compute a constant of {elements} elements while loading, over the limit of {max} elements per tensor")]
    FoldTooLarge {
        /// The node (its name, else its first output's, else `#index`).
        node: String,
        /// Its operator.
        op: String,
        /// An upper bound on the constant's elements (saturating).
        elements: u64,
        /// The limit.
        max: u64,
    },
    /// A node over the model's constants, which tract would compute while
    /// loading, makes a value whose size the check cannot bound (a size
    /// taken from values it cannot know before tract runs).
    #[error("node `{node}` ({op}) computes a constant of a size the load check cannot bound")]
    FoldUnbounded {
        /// The node.
        node: String,
        /// Its operator.
        op: String,
    },
    /// The constants tract would compute while loading the model add up to
    /// more than the budget.
    #[error("the constants computed while loading reach {bytes} bytes at node `{node}` ({op}), over the budget of {max} bytes")]
    FoldBudget {
        /// The node at which the sum went over.
        node: String,
        /// Its operator.
        op: String,
        /// The sum so far (saturating).
        bytes: u64,
        /// The budget.
        max: u64,
    },
    /// A weight tensor declares more values than the file holds.
    #[error("initializer `{name}` declares shape {shape} but the file holds {bytes} bytes")]
    Initializer {
        /// Its name.
        name: String,
        /// Its declared shape.
        shape: String,
        /// The file's size.
        bytes: usize,
    },
    /// The model keeps weights in external files, which a model node does
    /// not read.
    #[error("keeps initializer `{0}` in an external file; save the model with its weights inside")]
    ExternalData(String),
    /// The backend refused the model while preparing it.
    #[error("{backend} could not prepare it: {message}")]
    Prepare {
        /// The backend.
        backend: &'static str,
        /// Its message.
        message: String,
    },
    /// The backend cannot run the model at the shape asked for, but can
    /// with its height and width rounded up to a multiple of `stride`.
    #[error("cannot run at {requested}: its height and width must be multiples of {stride} (e.g. {nearest}); {backend} said: {message}")]
    SideMultiple {
        /// The shape asked for.
        requested: String,
        /// What the sides must be multiples of.
        stride: usize,
        /// The shape asked for, its sides rounded up.
        nearest: String,
        /// The backend that refused.
        backend: &'static str,
        /// Its message, cut short.
        message: String,
    },
    /// A frame's tensor is not of the shape the model was fixed at.
    #[error("was given a {got} tensor; it runs on {want}")]
    InputShape {
        /// The tensor's shape.
        got: String,
        /// The model's fixed input shape.
        want: String,
    },
    /// The backend failed on a frame.
    #[error("{backend} failed on a frame: {message}")]
    Run {
        /// The backend.
        backend: &'static str,
        /// Its message.
        message: String,
    },
    /// The backend is not built in (its cargo feature is off).
    #[error("backend {0} is not built in")]
    NotBuilt(&'static str),
}

/// A shape as `1x3x24x40`; rank 0 as `scalar`.
pub(crate) fn shape_text(dims: &[usize]) -> String {
    if dims.is_empty() {
        return "scalar".into();
    }
    let parts: Vec<String> = dims.iter().map(usize::to_string).collect();
    parts.join("x")
}

/// The product of `dims`, or `u64::MAX` when it overflows.
pub(crate) fn elements(dims: &[usize]) -> u64 {
    dims.iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d as u64))
        .unwrap_or(u64::MAX)
}

/// The first line of an engine's message, at most 300 characters: engines
/// chain causes over many lines and may quote the model's own strings.
pub(crate) fn brief(message: &str) -> String {
    let line = message.lines().next().unwrap_or("").trim();
    let mut s: String = line.chars().take(300).collect();
    if line.chars().count() > 300 {
        s.push('…');
    }
    s
}
