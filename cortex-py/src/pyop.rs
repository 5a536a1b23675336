//! A Python callable as an op: each argument converted to a Python object
//! (numpy arrays for images and maps, dicts for the other types' views),
//! the callable called with the GIL held only for that, and what it returns
//! read as the node's declared type into the node's own buffer. An
//! exception it raises becomes the frame's error, the exception itself
//! kept (with its traceback) as the `__cause__` of the `PipelineError`
//! Python sees.

use std::cell::RefCell;
use std::sync::Arc;

use cortex_core::dynamic::{Call, Ops};
use cortex_core::runtime::error::NodeFailure;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::values::{to_python, Kind};

/// The exception a Python node raised, as a node's failure: its message
/// is the exception and its traceback, formatted.
#[derive(Debug)]
pub struct Raised {
    /// The exception, kept for the `PipelineError`'s `__cause__`.
    pub err: PyErr,
    text: String,
}

impl std::fmt::Display for Raised {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::error::Error for Raised {}

impl Raised {
    /// `err` with its traceback formatted (`traceback.format_exception`);
    /// the exception's own line when the traceback cannot be formatted.
    pub fn new(py: Python<'_>, err: PyErr) -> Raised {
        let text = format_exception(py, &err).unwrap_or_else(|_| err.to_string());
        Raised { err, text }
    }
}

fn format_exception(py: Python<'_>, err: &PyErr) -> PyResult<String> {
    // The traceback is kept beside the exception until Python 3.12; put
    // it on the exception, so the `__cause__` Python sees carries it too.
    let value = err.value(py);
    if let Some(tb) = err.traceback(py) {
        value.setattr("__traceback__", tb)?;
    }
    let lines = py.import("traceback")?.call_method1(
        "format_exception",
        (err.get_type(py), value, err.traceback(py)),
    )?;
    let lines: Vec<String> = lines.extract()?;
    Ok(lines.concat().trim_end().to_string())
}

thread_local! {
    /// The pipelines (by [`register`]'s `owner`) whose Python node this
    /// thread is running now, innermost last.
    static RUNNING: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// Whether this thread is inside a Python node of pipeline `owner`: that
/// pipeline is in the middle of a frame, so running it again from here
/// would wait for itself forever.
pub fn inside(owner: u64) -> bool {
    RUNNING.with(|r| r.borrow().contains(&owner))
}

/// Marks this thread as inside a Python node of `owner` until dropped.
struct Running;

impl Running {
    fn enter(owner: u64) -> Running {
        RUNNING.with(|r| r.borrow_mut().push(owner));
        Running
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.with(|r| r.borrow_mut().pop());
    }
}

/// Registers `func` in `ops` as op `name` of pipeline `owner`, a node whose
/// value is a `returns`; `views` shows the arguments of types that are
/// neither arrays nor Python objects.
pub fn register(
    ops: &mut Ops,
    name: &str,
    func: Py<PyAny>,
    returns: Kind,
    views: Arc<Ops>,
    owner: u64,
) {
    let op = move |call: &mut Call<'_>| -> Result<(), NodeFailure> {
        Python::attach(|py| {
            let _running = Running::enter(owner);
            let args = call.args();
            let mut objs = Vec::with_capacity(args.len());
            for i in 0..args.len() {
                objs.push(match args.value(i) {
                    Some(v) => to_python(py, v, &views).map_err(|e| Raised::new(py, e))?,
                    None => py.None(),
                });
            }
            let objs = PyTuple::new(py, objs).map_err(|e| Raised::new(py, e))?;
            let out = func.bind(py).call1(objs).map_err(|e| Raised::new(py, e))?;
            returns
                .put(&out, call)
                .map_err(|e| match e.downcast::<PyErr>() {
                    Ok(err) => {
                        let node = call.node();
                        let err = pyo3::exceptions::PyTypeError::new_err(format!(
                            "the callable of node `{node}` must return {}: {err}",
                            returns.name()
                        ));
                        Box::new(Raised::new(py, err)) as NodeFailure
                    }
                    Err(other) => other,
                })
        })
    };
    ops.op(name, op);
}
