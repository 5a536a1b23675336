//! Why a strip kernel or a fused group refused to run.

use std::ops::Range;

use crate::limits::LimitError;

/// The error of a strip kernel, a group's construction or its run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StripError {
    /// A kernel refused its input or failed; its message.
    #[error("kernel `{kernel}` failed: {message}")]
    Failed {
        /// The kernel's name.
        kernel: String,
        /// What went wrong.
        message: String,
    },
    /// A kernel's input or output geometry is not one it accepts.
    #[error("kernel `{kernel}`: {reason}")]
    Geometry {
        /// The kernel's (or value's) name.
        kernel: String,
        /// What is wrong.
        reason: String,
    },
    /// A plane holds another element type than the one asked for.
    #[error("{what} holds `{found}`, not `{expected}`")]
    Type {
        /// Which plane.
        what: String,
        /// The type asked for.
        expected: &'static str,
        /// The type it holds.
        found: &'static str,
    },
    /// A kernel read a row outside the rows its strip was given: its declared
    /// window is smaller than what it reads.
    #[error("row {row} is not available (rows {available:?} are)")]
    RowUnavailable {
        /// The row asked for.
        row: usize,
        /// The rows present.
        available: Range<usize>,
    },
    /// A plane is over the frame limits.
    #[error("{what}: {source}")]
    TooLarge {
        /// Which plane.
        what: String,
        /// The limit it broke.
        source: LimitError,
    },
    /// The group is not well formed, or was run with the wrong inputs.
    #[error("fused group: {0}")]
    Group(String),
    /// The inputs have the geometry the last run refused (that run's error
    /// said why); refused again without checking, or allocating, anew.
    #[error("fused group: inputs of a geometry refused before")]
    RefusedBefore,
}

impl StripError {
    /// A kernel's own failure, as kernels report it.
    pub fn failed(kernel: &str, message: impl std::fmt::Display) -> Self {
        StripError::Failed {
            kernel: kernel.to_string(),
            message: message.to_string(),
        }
    }
}
