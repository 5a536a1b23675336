//! cortex's errors as Python exceptions: what the caller passed wrong is a
//! `ValueError` (or `TypeError` for a wrong type), a frame that fails in a
//! node, or that is beyond the frame limits, is a `cortex_rs.PipelineError`,
//! with cortex's own message (and a Python node's exception as its
//! `__cause__`).

use cortex_core::limits::LimitError;
use cortex_core::runtime::error::PipelineError as RustPipelineError;
use pyo3::exceptions::{PyException, PyRuntimeError, PyValueError};
use pyo3::prelude::PyAnyMethods;
use pyo3::{PyErr, Python};

use crate::pyop::Raised;

pyo3::create_exception!(
    cortex_rs,
    PipelineError,
    PyRuntimeError,
    "A frame failed in one of the pipeline's nodes; the pipeline's state is as it was before the frame."
);

/// The Python exception for a pipeline's error. A Python node's exception
/// is kept as the `PipelineError`'s `__cause__`, traceback and all; one
/// that is not an `Exception` (`KeyboardInterrupt`, `SystemExit`) is
/// raised as it is ([`interruption`]).
pub fn pipeline_error(e: RustPipelineError) -> PyErr {
    if let Some(raised) = interruption(&e) {
        return raised;
    }
    match e {
        RustPipelineError::Weights(_)
        | RustPipelineError::Plan(_)
        | RustPipelineError::OutputEliminated { .. } => PyValueError::new_err(e.to_string()),
        RustPipelineError::Node { node, source } => {
            let message = format!("node `{node}` failed: {source}");
            let err = PipelineError::new_err(message);
            if let Some(raised) = source.downcast_ref::<Raised>() {
                Python::attach(|py| err.set_cause(py, Some(raised.err.clone_ref(py))));
            }
            err
        }
        other => PipelineError::new_err(other.to_string()),
    }
}

/// The exception a Python node raised when it is not an `Exception` — a
/// `KeyboardInterrupt` (Ctrl-C while the callable ran), a `SystemExit` —
/// which ends the call or the stream as it would in Python, rather than
/// becoming one frame's error.
pub fn interruption(e: &RustPipelineError) -> Option<PyErr> {
    let RustPipelineError::Node { source, .. } = e else {
        return None;
    };
    let raised = source.downcast_ref::<Raised>()?;
    Python::attach(|py| {
        (!raised.err.is_instance_of::<PyException>(py)).then(|| raised.err.clone_ref(py))
    })
}

/// The Python exception for a frame beyond the frame limits, refused before
/// it reached a node: the same `PipelineError` a node's own limit check
/// raises, so callers catch one exception for "this frame is too large".
pub fn limit_error(e: LimitError) -> PyErr {
    PipelineError::new_err(e.to_string())
}

pyo3::create_exception!(
    cortex_rs,
    GraphError,
    PyValueError,
    "A graph that cannot be built: every mistake found, one per line, each naming the node or declaration it is about (and the file's line, for a graph file)."
);

/// The Python exception for a graph that cannot be built: one line per
/// problem, `line N: ` before it when the problem has a line (a graph
/// file's), and the problems as `(line, message)` in its `problems`
/// attribute (line 0: none).
pub fn graph_error(problems: &[(usize, String)]) -> PyErr {
    let lines: Vec<String> = problems
        .iter()
        .map(|(line, m)| match line {
            0 => m.clone(),
            n => format!("line {n}: {m}"),
        })
        .collect();
    let err = GraphError::new_err(lines.join("\n"));
    Python::attach(|py| {
        // The attribute is an addition for callers that map lines back
        // to their own declarations; the message alone is complete.
        let _ = err.value(py).setattr("problems", problems.to_vec());
    });
    err
}
