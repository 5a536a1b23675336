//! cortex's errors as Python exceptions: what the caller passed wrong is a
//! `ValueError` (or `TypeError` for a wrong type), a frame that fails in a
//! node, or that is beyond the frame limits, is a `cortex_rs.PipelineError`,
//! with cortex's own message.

use cortex_core::limits::LimitError;
use cortex_core::runtime::error::PipelineError as RustPipelineError;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::PyErr;

pyo3::create_exception!(
    cortex_rs,
    PipelineError,
    PyRuntimeError,
    "A frame failed in one of the pipeline's nodes; the pipeline's state is as it was before the frame."
);

/// The Python exception for a pipeline's error.
pub fn pipeline_error(e: RustPipelineError) -> PyErr {
    match e {
        RustPipelineError::Weights(_)
        | RustPipelineError::Plan(_)
        | RustPipelineError::OutputEliminated { .. } => PyValueError::new_err(e.to_string()),
        other => PipelineError::new_err(other.to_string()),
    }
}

/// The Python exception for a frame beyond the frame limits, refused before
/// it reached a node: the same `PipelineError` a node's own limit check
/// raises, so callers catch one exception for "this frame is too large".
pub fn limit_error(e: LimitError) -> PyErr {
    PipelineError::new_err(e.to_string())
}
