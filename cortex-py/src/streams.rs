//! `cortex_rs.run_streams`: several built pipelines, each with its own
//! frames, on one `cortex::streams::StreamPool` of a fixed number of
//! threads. The pool's rules hold as they do for compiled pipelines:
//! streams take turns (round robin over the streams with a frame to run,
//! one frame in flight per stream), a stream's frames run in order, and a
//! failing frame fails alone; its statistics are returned on request.
//!
//! The pool owns the pipelines it runs, so each stream's `DynPipeline` is
//! lent to it ([`Lease`]) for the call and comes back to its Python object
//! when the pool lets go of it: the state a stream reached stays the
//! pipeline's, as after `Pipeline.run`.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, PoisonError};

use cortex_core::dynamic::{DynOutputs, DynPipeline, Value};
use cortex_core::hold::Hold;
use cortex_core::profile::Profiler;
use cortex_core::run::{Run, Select};
use cortex_core::streams::{Delivery, StreamEnd, StreamPool, StreamStats};
use cortex_core::{GraphIr, Observer, Pipeline, PipelineError, Plan, Weights};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyIterator, PyList, PyTuple};

use crate::errors::{interruption, pipeline_error};
use crate::graph::PyPipeline;

/// The identity of the next `run_streams` call (0 is none).
static NEXT_CALL: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The `run_streams` call whose frame this thread is running, 0 for
    /// none.
    static CALL: Cell<u64> = const { Cell::new(0) };
}

/// Whether this thread is running a frame of `run_streams` call `call`:
/// a pipeline lent to that call is locked until the call ends, so a
/// Python node of one of its frames that waited for it would wait forever.
pub(crate) fn in_call(call: u64) -> bool {
    CALL.with(|c| c.get() == call)
}

/// Marks this thread as running a frame of a call until dropped.
struct InCall(u64);

impl InCall {
    fn enter(call: u64) -> InCall {
        InCall(CALL.with(|c| c.replace(call)))
    }
}

impl Drop for InCall {
    fn drop(&mut self) {
        CALL.with(|c| c.set(self.0));
    }
}

/// A stream's pipeline, lent to the pool: it behaves as the pipeline it
/// holds and, when the pool drops it, sends it home (stream `k`).
struct Lease {
    pipeline: DynPipeline,
    /// The pipeline's profiler, lent with it: the pool's frames of a
    /// declared mode are profiled as `Pipeline.run`'s are.
    profiler: Option<Profiler<'static>>,
    /// The `run_streams` call it is lent to.
    call: u64,
    k: usize,
    home: mpsc::Sender<Returned>,
}

/// A lease sent home: its stream, its pipeline and its profiler.
type Returned = (usize, DynPipeline, Option<Profiler<'static>>);

impl Lease {
    /// `run` observed by the profiler, if there is one and `run` is a
    /// declared mode's frame nobody else observes.
    fn profiled<O: Observer>(&mut self, run: &mut Run<'_, usize, O>) -> Option<usize> {
        let unobserved = run.observer().is_none();
        match (&run.select, &self.profiler) {
            (Select::Mode(m), Some(_)) if unobserved => Some(*m),
            _ => None,
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let fresh = self.pipeline.fresh();
        let pipeline = std::mem::replace(&mut self.pipeline, fresh);
        // The receiver waits for every lease; a closed channel means the
        // call already failed and nothing is waiting for the state.
        let _ = self.home.send((self.k, pipeline, self.profiler.take()));
    }
}

impl Pipeline for Lease {
    type Mode = usize;
    type Inputs<'a> = &'a [Value];
    type Outputs = DynOutputs;
    type State = Vec<Value>;

    fn graph(&self) -> &'static GraphIr {
        self.pipeline.graph()
    }
    fn mode(&self, index: usize) -> Option<usize> {
        self.pipeline.mode(index)
    }
    fn mode_index(&self, mode: usize) -> usize {
        self.pipeline.mode_index(mode)
    }
    fn mode_weights(&self, mode: usize) -> Option<&Weights> {
        self.pipeline.mode_weights(mode)
    }
    fn mode_plan(&self, mode: usize) -> Option<&Plan> {
        self.pipeline.mode_plan(mode)
    }
    fn mode_named(&self, name: &str) -> Option<usize> {
        self.pipeline.mode_named(name)
    }
    fn state(&self) -> &Vec<Value> {
        self.pipeline.state()
    }
    fn reset(&mut self) {
        self.pipeline.reset();
    }
    fn run_with<O: Observer + Send>(
        &mut self,
        run: &mut Run<'_, usize, O>,
        inputs: &[Value],
        outputs: &mut DynOutputs,
    ) -> Result<(), PipelineError> {
        let _in = InCall::enter(self.call);
        match (self.profiled(run), self.profiler.as_mut()) {
            (Some(m), Some(p)) => {
                let own = Run::mode(m).engine(run.engine).outputs(run.outputs);
                self.pipeline
                    .run_with(&mut own.observed(p), inputs, outputs)
            }
            _ => self.pipeline.run_with(run, inputs, outputs),
        }
    }
    fn run_with_fresh<O: Observer + Send>(
        &mut self,
        run: &mut Run<'_, usize, O>,
        inputs: &[Value],
    ) -> Result<DynOutputs, PipelineError> {
        let _in = InCall::enter(self.call);
        match (self.profiled(run), self.profiler.as_mut()) {
            (Some(m), Some(p)) => {
                let own = Run::mode(m).engine(run.engine).outputs(run.outputs);
                self.pipeline.run_with_fresh(&mut own.observed(p), inputs)
            }
            _ => self.pipeline.run_with_fresh(run, inputs),
        }
    }
    fn pattern_plan(&mut self, pattern: u64) -> Arc<Plan> {
        self.pipeline.pattern_plan(pattern)
    }
    fn buffer_bytes(&self) -> Vec<(&'static str, u32, usize)> {
        self.pipeline.buffer_bytes()
    }
    fn frame_index(&self) -> u64 {
        self.pipeline.frame_index()
    }
    fn set_rates(&mut self, on: bool) {
        self.pipeline.set_rates(on);
    }
    fn holds(&self) -> &[Hold] {
        self.pipeline.holds()
    }
    fn set_fusion(&mut self, on: bool) {
        self.pipeline.set_fusion(on);
    }
}

/// What a stream's source and callback share with the caller: the results
/// in order, the error that ended the stream early, and whether it must
/// stop (a `KeyboardInterrupt` from a node: no further frame is read).
#[derive(Default)]
struct Outcome {
    results: Mutex<Vec<Py<PyAny>>>,
    error: Mutex<Option<PyErr>>,
    stop: AtomicBool,
}

impl Outcome {
    /// Keeps the first error and stops the stream.
    fn fail(&self, e: PyErr) {
        let mut slot = self.error.lock().unwrap_or_else(PoisonError::into_inner);
        slot.get_or_insert(e);
        self.stop.store(true, Ordering::Release);
    }
}

/// Runs each stream — a `(pipeline, frames)` or `(pipeline, frames, mode)`
/// tuple; `frames` an iterable of what `Pipeline.run` takes — on one
/// `StreamPool` of `threads` workers (0: one per core; never more than the
/// streams), streams taking turns a frame at a time. Returns each stream's
/// results in order (a failed frame's `PipelineError` in its place, not
/// raised); with `stats=True`, a pair of those results and each stream's
/// statistics (a dict: `received`, `processed`, `failed`, `dropped`,
/// `discarded`, `latency_p50_ms`, `latency_p99_ms`, `frames_per_second`,
/// `end`). The GIL is released except to read a frame, to run a Python
/// node and to make a result.
///
/// Raises `ValueError` for a pipeline given twice (a pipeline's frames run
/// in order: one stream each) or an unknown mode; a frame that cannot be
/// read ends its stream and is raised once every stream has ended.
#[pyfunction]
#[pyo3(signature = (streams, threads = 0, *, stats = false))]
pub fn run_streams<'py>(
    py: Python<'py>,
    streams: Vec<Bound<'py, PyTuple>>,
    threads: usize,
    stats: bool,
) -> PyResult<Bound<'py, PyAny>> {
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
    let mut modes = Vec::with_capacity(parsed.len());
    for (pipe, _, mode) in &parsed {
        let p: &PyPipeline = pipe.get();
        p.not_reentered()?;
        modes.push(p.mode_index(mode.as_deref())?);
    }
    // One frame in flight per stream: threads beyond the streams would
    // only wait, and an absurd count must not start that many threads.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = match threads {
        0 => cores,
        n => n,
    }
    .min(parsed.len())
    .max(1);
    // Each pipeline's lock is held for the whole call (another Python
    // thread using one of them waits, as it would for a frame), and its
    // pipeline lent to the pool, a fresh one of the same graph standing in.
    // The locks are taken in the pipelines' creation order, so two calls
    // sharing pipelines (from two Python threads) never wait for each
    // other in a cycle.
    let mut order: Vec<usize> = (0..parsed.len()).collect();
    order.sort_by_key(|&k| parsed[k].0.get().id);
    let mut taken: Vec<Option<_>> = (0..parsed.len()).map(|_| None).collect();
    for k in order {
        taken[k] = Some(parsed[k].0.get().lock(py)?);
    }
    let mut guards: Vec<_> = taken.into_iter().flatten().collect();
    let pool = StreamPool::<Lease, Vec<Value>>::new(threads, |f| f.as_slice())
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the pool: {e}")))?;
    let call = NEXT_CALL.fetch_add(1, Ordering::Relaxed);
    let (home, back) = mpsc::channel();
    let mut outcomes = Vec::with_capacity(parsed.len());
    for (k, ((pipe, frames, _), guard)) in parsed.iter().zip(&mut guards).enumerate() {
        let fresh = guard.pipeline.fresh();
        let pipeline = std::mem::replace(&mut guard.pipeline, fresh);
        let first = pipeline.frame_index();
        let lease = Lease {
            pipeline,
            profiler: guard.profiler.take(),
            call,
            k,
            home: home.clone(),
        };
        let outcome = Arc::new(Outcome::default());
        let source = source(pipe.clone().unbind(), frames.clone_ref(py), &outcome);
        let on_result = deliver(pipe.clone().unbind(), first, &outcome);
        pipe.get().lent_to.store(call, Ordering::Release);
        pool.add_source(lease, modes[k], source, on_result);
        outcomes.push(outcome);
    }
    drop(home);
    let (all, leases) = py.detach(move || {
        let all = pool.wait_all();
        drop(pool);
        // Every lease comes back once the pool has let go of its stream.
        let leases: Vec<Returned> = back.iter().collect();
        (all, leases)
    });
    for (k, pipeline, profiler) in leases {
        guards[k].pipeline = pipeline;
        guards[k].profiler = profiler;
    }
    for (pipe, ..) in &parsed {
        pipe.get().lent_to.store(0, Ordering::Release);
    }
    drop(guards);
    let out = PyList::empty(py);
    for outcome in outcomes {
        let outcome = Arc::try_unwrap(outcome).unwrap_or_else(|shared| {
            // Still held by a source the pool has not dropped: take what
            // it gathered.
            Outcome {
                results: Mutex::new(std::mem::take(
                    &mut shared
                        .results
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner),
                )),
                error: Mutex::new(
                    shared
                        .error
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .take(),
                ),
                stop: AtomicBool::new(true),
            }
        });
        if let Some(e) = outcome
            .error
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
        {
            return Err(e);
        }
        let results = outcome
            .results
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        out.append(PyList::new(py, results)?)?;
    }
    if !stats {
        return Ok(out.into_any());
    }
    let stats = PyList::empty(py);
    for s in &all {
        stats.append(stats_dict(py, s)?)?;
    }
    Ok(PyTuple::new(py, [out.into_any(), stats.into_any()])?.into_any())
}

/// A stream's frames: each read under the GIL into the pipeline's input
/// values, until the frames end, one cannot be read (kept in `outcome`,
/// ending the stream) or the stream was told to stop.
fn source(
    pipe: Py<PyPipeline>,
    frames: Py<PyIterator>,
    outcome: &Arc<Outcome>,
) -> impl Iterator<Item = Result<Vec<Value>, String>> + Send + 'static {
    let outcome = Arc::clone(outcome);
    let mut slots: Vec<Option<Value>> = vec![None; pipe.get().input_kinds.len()];
    std::iter::from_fn(move || {
        if outcome.stop.load(Ordering::Acquire) {
            return None;
        }
        let read = Python::attach(|py| -> PyResult<Option<Vec<Value>>> {
            let Some(item) = frames.bind(py).clone().next() else {
                return Ok(None);
            };
            pipe.get().read_inputs(&item?, &mut slots)?;
            Ok(Some(slots.iter().flatten().cloned().collect()))
        });
        match read {
            Ok(values) => values.map(Ok),
            Err(e) => {
                outcome.fail(e);
                None
            }
        }
    })
}

/// A stream's result callback: each frame's outputs as `Pipeline.run`'s
/// dict (its `frame` counting on from `first`, the pipeline's frames
/// before the call), a failed frame's `PipelineError` in its place; an
/// interruption stops the stream and is raised.
fn deliver(
    pipe: Py<PyPipeline>,
    first: u64,
    outcome: &Arc<Outcome>,
) -> impl FnMut(Delivery<'_, Vec<Value>, DynOutputs>) + Send + 'static {
    let outcome = Arc::clone(outcome);
    let mut index = first;
    move |mut d| {
        if outcome.stop.load(Ordering::Acquire) {
            return;
        }
        let result = d.take_result();
        Python::attach(|py| {
            let item = match result {
                Ok(out) => {
                    index += 1;
                    pipe.get()
                        .results(py, &out, index - 1)
                        .map(|d| d.into_any().unbind())
                }
                Err(e) => match interruption(&e) {
                    Some(stop) => Err(stop),
                    None => Ok(pipeline_error(e).into_value(py).into_any()),
                },
            };
            match item {
                Ok(item) => outcome
                    .results
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(item),
                Err(e) => outcome.fail(e),
            }
        });
    }
}

/// A stream's statistics as a dict (latencies in milliseconds, `None`
/// before a frame finished; `end` a short text).
fn stats_dict<'py>(py: Python<'py>, s: &StreamStats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("received", s.received)?;
    d.set_item("processed", s.processed)?;
    d.set_item("failed", s.failed)?;
    d.set_item("dropped", s.dropped)?;
    d.set_item("discarded", s.discarded)?;
    let ms = |l: Option<std::time::Duration>| l.map(|l| l.as_secs_f64() * 1e3);
    d.set_item("latency_p50_ms", ms(s.latency_p50))?;
    d.set_item("latency_p99_ms", ms(s.latency_p99))?;
    d.set_item("frames_per_second", s.frames_per_second)?;
    let end = match &s.end {
        None => "running".to_string(),
        Some(StreamEnd::Finished) => "finished".to_string(),
        Some(StreamEnd::Removed) => "removed".to_string(),
        Some(StreamEnd::SourceFailed(why)) => format!("source failed: {why}"),
        Some(StreamEnd::SourcePanicked(why)) => format!("source panicked: {why}"),
        Some(StreamEnd::CallbackPanicked(why)) => format!("callback panicked: {why}"),
        Some(other) => format!("{other:?}"),
    };
    d.set_item("end", end)?;
    Ok(d)
}
