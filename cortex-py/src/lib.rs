//! `cortex_rs._native`: the Python extension module. L2 on numpy frames,
//! its results as plain Python objects, sources and tools; the GIL is
//! released while a frame runs.

mod errors;
mod frame;
mod l2;
mod results;
mod sources;

use pyo3::prelude::*;

/// The extension module behind the `cortex_rs` package.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("PipelineError", m.py().get_type::<errors::PipelineError>())?;
    m.add_class::<l2::PyL2>()?;
    m.add_class::<sources::PySource>()?;
    m.add_function(wrap_pyfunction!(sources::demo_clip, m)?)?;
    m.add_function(wrap_pyfunction!(sources::open, m)?)?;
    Ok(())
}
