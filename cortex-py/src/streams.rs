//! `cortex_rs.run_streams`: several built pipelines, each with its own
//! frames, on one pool of a fixed number of threads. Streams take turns
//! (round robin over the streams with a frame to run, one frame in flight
//! per stream, as `cortex::streams` schedules compiled pipelines); a
//! stream's frames run in order, and a failing frame fails alone.
//!
//! `cortex::streams::StreamPool` takes compiled pipelines only (its
//! pipelines implement `Pipeline`, whose graph and modes are `'static`), so
//! run-time graphs get this small scheduler until one run trait serves
//! both; it keeps the pool's rules (turns, order, failures) but none of
//! its live inputs, overflow policies or statistics.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, PoisonError};

use cortex_core::dynamic::Value;
use cortex_core::Pipeline;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyIterator, PyList, PyTuple};

use crate::errors::{interruption, pipeline_error};
use crate::graph::PyPipeline;

/// One stream: its pipeline, its frames, its mode and what it gave so far.
struct Job<'a> {
    pipe: &'a PyPipeline,
    frames: Py<PyIterator>,
    mode: usize,
    slots: Vec<Option<Value>>,
    results: Vec<Py<PyAny>>,
    /// The error that ended the stream's frames early (a frame that could
    /// not be read), raised once every stream has ended.
    error: Option<PyErr>,
}

impl Job<'_> {
    /// Runs the stream's next frame; `false` when it has none left.
    fn step(&mut self) -> bool {
        let read = Python::attach(|py| -> PyResult<Option<Vec<Value>>> {
            let Some(item) = self.frames.bind(py).clone().next() else {
                return Ok(None);
            };
            self.pipe.read_inputs(&item?, &mut self.slots)?;
            Ok(Some(self.slots.iter().flatten().cloned().collect()))
        });
        let values = match read {
            Ok(Some(values)) => values,
            Ok(None) => return false,
            Err(e) => {
                self.error = Some(e);
                return false;
            }
        };
        // Without the GIL: a Python node takes it for its own call. The
        // lock is the stream's alone (each pipeline runs one stream) unless
        // another Python thread runs the same pipeline meanwhile.
        let (out, index) = {
            let mut inner = match self.pipe.inner.lock() {
                Ok(inner) => inner,
                Err(_) => {
                    self.error = Some(PyRuntimeError::new_err(
                        "the pipeline is unusable: a frame panicked while running",
                    ));
                    return false;
                }
            };
            let out = inner.run_mode(self.mode, &values);
            (out, inner.pipeline.frame_index().saturating_sub(1))
        };
        Python::attach(|py| {
            let item = match out {
                Ok(out) => self
                    .pipe
                    .results(py, &out, index)
                    .map(|d| d.into_any().unbind()),
                Err(e) => match interruption(&e) {
                    Some(stop) => Err(stop),
                    None => Ok(pipeline_error(e).into_value(py).into_any()),
                },
            };
            match item {
                Ok(item) => {
                    self.results.push(item);
                    true
                }
                Err(e) => {
                    self.error = Some(e);
                    false
                }
            }
        })
    }
}

/// Streams with a frame to run, in turn order, and how many are running.
struct Turns {
    ready: VecDeque<usize>,
    running: usize,
}

/// Runs each stream — a `(pipeline, frames)` or `(pipeline, frames, mode)`
/// tuple; `frames` an iterable of what `Pipeline.run` takes — on one pool
/// of `threads` workers (0: one per core; never more than the streams),
/// streams taking turns a frame at a time. Returns each stream's results in order (a failed frame's
/// `PipelineError` in its place, not raised). The GIL is released except
/// to read a frame, to run a Python node and to make a result.
///
/// Raises `ValueError` for a pipeline given twice (a pipeline's frames run
/// in order: one stream each) or an unknown mode; a frame that cannot be
/// read ends its stream and is raised once every stream has ended.
#[pyfunction]
#[pyo3(signature = (streams, threads = 0))]
pub fn run_streams<'py>(
    py: Python<'py>,
    streams: Vec<Bound<'py, PyTuple>>,
    threads: usize,
) -> PyResult<Bound<'py, PyList>> {
    let mut parsed: Vec<(Bound<'py, PyPipeline>, Py<PyIterator>, Option<String>)> = Vec::new();
    for s in &streams {
        let (pipe, frames, mode) = match s.len() {
            2 => (s.get_item(0)?, s.get_item(1)?, None),
            3 => (s.get_item(0)?, s.get_item(1)?, s.get_item(2)?.extract()?),
            n => {
                return Err(PyValueError::new_err(format!(
                    "a stream is (pipeline, frames) or (pipeline, frames, mode), not {n} items"
                )))
            }
        };
        let pipe = pipe.cast_into::<PyPipeline>()?;
        if parsed.iter().any(|(p, ..)| p.is(&pipe)) {
            return Err(PyValueError::new_err(
                "a pipeline runs one stream at a time: give each stream its own pipeline",
            ));
        }
        parsed.push((pipe, PyIterator::from_object(&frames)?.unbind(), mode));
    }
    let mut jobs = Vec::with_capacity(parsed.len());
    for (pipe, frames, mode) in &parsed {
        let pipe: &PyPipeline = pipe.get();
        pipe.not_reentered()?;
        let mode = pipe.mode_index(mode.as_deref())?;
        jobs.push(Mutex::new(Job {
            pipe,
            frames: frames.clone_ref(py),
            mode,
            slots: vec![None; pipe.input_kinds.len()],
            results: Vec::new(),
            error: None,
        }));
    }
    // One frame in flight per stream: threads beyond the streams would
    // only wait, and an absurd count must not start that many threads.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = match threads {
        0 => cores,
        n => n,
    }
    .min(jobs.len())
    .max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("cortex-py-streams-{i}"))
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the pool: {e}")))?;
    let workers = pool.current_num_threads();
    let turns = Mutex::new(Turns {
        ready: (0..jobs.len()).collect(),
        running: 0,
    });
    let changed = Condvar::new();
    py.detach(|| {
        pool.scope(|s| {
            for _ in 0..workers {
                s.spawn(|_| work(&jobs, &turns, &changed));
            }
        })
    });
    let out = PyList::empty(py);
    for job in jobs {
        let job = job.into_inner().unwrap_or_else(PoisonError::into_inner);
        if let Some(e) = job.error {
            return Err(e);
        }
        out.append(PyList::new(py, job.results)?)?;
    }
    Ok(out)
}

/// A worker: takes the stream at the head of the turns, runs one frame of
/// it, and puts it at the back if it has more; ends when every stream has.
fn work(jobs: &[Mutex<Job<'_>>], turns: &Mutex<Turns>, changed: &Condvar) {
    let lock = || turns.lock().unwrap_or_else(PoisonError::into_inner);
    loop {
        let mut t = lock();
        let i = loop {
            if let Some(i) = t.ready.pop_front() {
                t.running += 1;
                break i;
            }
            if t.running == 0 {
                return;
            }
            t = changed.wait(t).unwrap_or_else(PoisonError::into_inner);
        };
        drop(t);
        let more = jobs[i]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .step();
        let mut t = lock();
        t.running -= 1;
        if more {
            t.ready.push_back(i);
        }
        drop(t);
        changed.notify_all();
    }
}
