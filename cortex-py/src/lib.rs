//! `cortex_rs._native`: the Python extension module. Pipelines built at
//! run time from the op library and Python callables (`cortex_rs.L2` is
//! one, built in Python), many streams on one pool, their results as
//! plain Python objects, sources and tools; the GIL is released while a
//! frame runs.

mod bench;
mod engine;
mod errors;
mod frame;
mod graph;
mod lend;
mod library;
mod pyop;
mod sources;
mod streams;
mod values;

use pyo3::prelude::*;

/// The extension module behind the `cortex_rs` package.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("PipelineError", m.py().get_type::<errors::PipelineError>())?;
    m.add("GraphError", m.py().get_type::<errors::GraphError>())?;
    m.add_class::<graph::PyPipeline>()?;
    m.add_class::<sources::PySource>()?;
    m.add_function(wrap_pyfunction!(sources::demo_clip, m)?)?;
    m.add_function(wrap_pyfunction!(sources::open, m)?)?;
    m.add_function(wrap_pyfunction!(library::ops, m)?)?;
    m.add_function(wrap_pyfunction!(library::inspect, m)?)?;
    m.add_function(wrap_pyfunction!(streams::run_streams, m)?)?;
    m.add_function(wrap_pyfunction!(bench::_time_frames, m)?)?;
    m.add("MODELS", cfg!(feature = "models"))?;
    Ok(())
}
