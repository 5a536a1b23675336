//! `cortex_rs._native._time_frames`: the frames of a measurement run by a
//! built pipeline entirely in Rust — read into the pipeline's values once,
//! then timed frame by frame with no Python between them — so a bench
//! compares the Python call with the Rust run-time graph it drives, in one
//! process, on the same frames.

use std::time::Instant;

use cortex_core::dynamic::Value;
use cortex_core::runtime::dispatch::Choice;
use cortex_core::OutputSet;
use pyo3::prelude::*;

use crate::engine;
use crate::errors::pipeline_error;
use crate::graph::PyPipeline;

/// Runs `frames` (a list of what `Pipeline.run` takes) through `pipeline`
/// in declared mode `mode` (the first when not given), sequential or
/// parallel, without the GIL and without building results; returns each
/// frame's time in milliseconds. The pipeline's state moves on as with
/// `run`. Not part of the API: for benches.
///
/// Raises as `Pipeline.run` does.
#[pyfunction]
#[pyo3(signature = (pipeline, frames, mode = None, parallel = false))]
pub fn _time_frames(
    py: Python<'_>,
    pipeline: &Bound<'_, PyPipeline>,
    frames: Vec<Bound<'_, PyAny>>,
    mode: Option<&str>,
    parallel: bool,
) -> PyResult<Vec<f64>> {
    let p = pipeline.get();
    let selection = Choice::Mode(p.mode_index(mode)?);
    let mut read = Vec::with_capacity(frames.len());
    for f in &frames {
        let mut slots = vec![None; p.input_kinds.len()];
        p.read_inputs(f, &mut slots)?;
        read.push(slots.into_iter().flatten().collect::<Vec<Value>>());
    }
    let mut guard = p.lock(py)?;
    let inner = &mut *guard;
    py.detach(|| {
        read.iter()
            .map(|values| {
                let t = Instant::now();
                let out = engine::frame(
                    &mut inner.pipeline,
                    None,
                    (&selection, OutputSet::ALL),
                    parallel,
                    values,
                );
                let ms = t.elapsed().as_secs_f64() * 1e3;
                drop(out?);
                Ok(ms)
            })
            .collect::<Result<Vec<f64>, _>>()
    })
    .map_err(pipeline_error)
}
