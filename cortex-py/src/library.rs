//! The op library as Python sees it: every op a graph may name (the vision
//! library, and the model library in a wheel built with `models`), each
//! described by its descriptor — the same text `cortex-l2 ops` prints.

use cortex_core::dynamic::{OpDesc, Ops};
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::values::{json_to_python, PyValue, PY_OBJECT};

/// Every op a graph built from Python may call, with the types Python
/// nodes read and return.
pub fn library() -> Ops {
    let mut ops = cortex_vision::library::vision_ops();
    #[cfg(feature = "models")]
    ops.extend(&cortex_models::library::model_ops());
    ops.ty(PY_OBJECT, PyValue(None));
    ops
}

/// The op library: one dict per op (`name`, `summary`, `inputs` as
/// `(name, type, optional)`, `output`, `params` as `(name, default, doc)`,
/// `weights`, `fills`, `strip`), sorted by name.
#[pyfunction]
pub fn ops(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let lib = library();
    let list = PyList::empty(py);
    for d in lib.descriptors() {
        list.append(describe(py, &lib, d)?)?;
    }
    Ok(list)
}

/// Op `name` in full, as `cortex-l2 ops NAME` prints it; every op on a
/// line without `name`.
///
/// Raises `KeyError` for an op the library does not have.
#[pyfunction]
#[pyo3(signature = (name = None))]
pub fn inspect(name: Option<&str>) -> PyResult<String> {
    let lib = library();
    match name {
        None => Ok(lib.listing()),
        Some(name) => lib
            .inspect(name)
            .ok_or_else(|| PyKeyError::new_err(format!("no op `{name}`"))),
    }
}

fn describe<'py>(py: Python<'py>, lib: &Ops, d: &OpDesc) -> PyResult<Bound<'py, PyDict>> {
    let type_name = |id, rust: &'static str| lib.name_of(id).unwrap_or(rust).to_string();
    let out = PyDict::new(py);
    out.set_item("name", d.name())?;
    out.set_item("summary", d.summary())?;
    let inputs: Vec<(String, String, bool)> = d
        .inputs()
        .iter()
        .map(|p| (p.name.clone(), type_name(p.ty.id, p.ty.rust), p.optional))
        .collect();
    out.set_item("inputs", inputs)?;
    out.set_item("output", type_name(d.output().id, d.output().rust))?;
    let params = PyList::empty(py);
    for (name, default, doc) in d.params() {
        params.append((name, json_to_python(py, &default)?, doc))?;
    }
    out.set_item("params", params)?;
    out.set_item("weights", d.reads_weights())?;
    out.set_item("fills", d.fills())?;
    out.set_item("strip", d.strip().map(|s| format!("{s:?}").to_lowercase()))?;
    Ok(out)
}
