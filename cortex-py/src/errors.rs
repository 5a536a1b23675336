//! cortex's errors as Python exceptions: what the caller passed wrong is a
//! `ValueError` (or `TypeError` for a wrong type), a frame that fails in a
//! node is a `cortex_rs.PipelineError`, with cortex's own message.

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
