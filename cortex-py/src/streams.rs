//! `cortex_rs.run_streams`: several built pipelines, each with its own
//! frames, on one `cortex::streams::StreamPool` of a fixed number of
//! threads. The pool's rules hold as they do for compiled pipelines:
//! streams take turns (round robin over the streams with a frame to run,
//! one frame in flight per stream), a stream's frames run in order, and a
//! failing frame fails alone; its statistics are returned on request.
//!
//! The pool owns the pipelines it runs, so each stream's `DynPipeline`
//! (and its profiler, the stream's observer) goes into the pool for the
//! call and the pool hands both back when the stream ends: the state a
//! stream reached stays the pipeline's, as after `Pipeline.run`, and its
//! frames are profiled as `Pipeline.run`'s are.
//!
//! A stream's frames are pulled on the pool when its turn comes (a file:
//! nothing dropped), or, with an overflow policy, read on a thread of the
//! stream's own and pushed into a bounded live queue (a camera: its
//! blocking read holds no worker, and a full queue waits, drops the oldest
//! frame or keeps only the latest).

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use cortex_core::dynamic::{DynOutputs, DynPipeline, Value};
use cortex_core::profile::Profiler;
use cortex_core::stream::Overflow;
use cortex_core::streams::{
    Delivery, LiveInput, LiveOptions, PoolId, StreamEnd, StreamPool, StreamRun, StreamStats,
};
use cortex_core::{OutputSet, Pipeline};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyIterator, PyList, PyTuple};

use crate::errors::{interruption, pipeline_error};
use crate::graph::PyPipeline;

thread_local! {
    /// The pool (a [`PoolId`]'s number) whose live stream this thread
    /// reads frames for; 0 on any other thread.
    static READER_OF: Cell<u64> = const { Cell::new(0) };
}

/// Whether this thread serves the pool `pool` (a [`PoolId`]'s number) —
/// a worker running a frame, a source or a callback of the `run_streams`
/// call that made it, or a live stream's reader: a pipeline lent to that
/// call is locked until the call ends, so Python code there that waited
/// for it would wait forever.
pub(crate) fn in_call(pool: u64) -> bool {
    PoolId::current().is_some_and(|p| p.get() == pool) || READER_OF.with(Cell::get) == pool
}

/// How a stream's frames come in: pulled on the pool, or pushed by a
/// reader thread of its own into a live queue.
#[derive(Clone, Copy)]
enum Feed {
    Pull,
    Live(LiveOptions),
}

impl Feed {
    /// `overflow` and `queue` as `run_streams` takes them.
    fn parse(overflow: Option<&str>, queue: usize) -> PyResult<Feed> {
        let overflow = match overflow {
            None => return Ok(Feed::Pull),
            Some("block") => Overflow::Block,
            Some("drop_oldest") => Overflow::DropOldest,
            Some("keep_latest") => Overflow::KeepLatest,
            Some(other) => {
                return Err(PyValueError::new_err(format!(
                    "overflow `{other}`: one of `block`, `drop_oldest`, `keep_latest`, or None \
                     (frames pulled on the pool)"
                )))
            }
        };
        if queue == 0 {
            return Err(PyValueError::new_err(
                "queue must be at least 1 (frames waiting for their turn)",
            ));
        }
        Ok(Feed::Live(LiveOptions { queue, overflow }))
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
/// With `overflow` (`"block"`, `"drop_oldest"` or `"keep_latest"`), each
/// stream's frames are read on a thread of its own and pushed into a queue
/// of `queue` frames under that policy, as a live camera's are: a frames
/// iterable that blocks (a capture) holds no pool worker, and frames a
/// full queue drops are counted in the statistics (`dropped`), not run.
///
/// With `outputs` (names), every stream computes only those outputs and
/// its results hold only them, as `Pipeline.run(…, outputs=…)`'s do.
///
/// Raises `ValueError` for a pipeline given twice (a pipeline's frames run
/// in order: one stream each), an unknown mode, output, overflow policy or
/// a queue of 0; a frame that cannot be read ends its stream and is raised
/// once every stream has ended.
#[pyfunction]
#[pyo3(signature = (streams, threads = 0, *, stats = false, overflow = None, queue = 2, outputs = None))]
pub fn run_streams<'py>(
    py: Python<'py>,
    streams: Vec<Bound<'py, PyTuple>>,
    threads: usize,
    stats: bool,
    overflow: Option<&str>,
    queue: usize,
    outputs: Option<Vec<String>>,
) -> PyResult<Bound<'py, PyAny>> {
    let feed = Feed::parse(overflow, queue)?;
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
    let mut runs = Vec::with_capacity(parsed.len());
    for (pipe, _, mode) in &parsed {
        let p: &PyPipeline = pipe.get();
        p.not_reentered()?;
        let read = p.outputs_read(outputs.clone())?;
        runs.push(StreamRun::mode(p.mode_index(mode.as_deref())?).outputs(read));
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
    let pool =
        StreamPool::<DynPipeline, Vec<Value>, Profiler<'static>>::new(threads, |f| f.as_slice())
            .map_err(|e| PyRuntimeError::new_err(format!("cannot start the pool: {e}")))?;
    let lent_to = pool.id().get();
    // Every pipeline is marked lent before any stream starts: a stream's
    // frames iterable may reach for another stream's pipeline at once.
    for (pipe, ..) in &parsed {
        pipe.get().lent_to.store(lent_to, Ordering::Release);
    }
    let mut outcomes = Vec::with_capacity(parsed.len());
    let mut ids = Vec::with_capacity(parsed.len());
    let mut readers = Vec::new();
    for (k, ((pipe, frames, _), guard)) in parsed.iter().zip(&mut guards).enumerate() {
        // The guard keeps a pipeline of the same graph in its place until
        // the pool hands this one back; nothing runs it, the lock being
        // held all along.
        let stand_in = guard.pipeline.fresh();
        let pipeline = std::mem::replace(&mut guard.pipeline, stand_in);
        let first = pipeline.frame_index();
        let outcome = Arc::new(Outcome::default());
        let source = source(pipe.clone().unbind(), frames.clone_ref(py), &outcome);
        let on_result = deliver(pipe.clone().unbind(), (first, runs[k].outputs), &outcome);
        let profiler = guard.profiler.take();
        let id = match feed {
            Feed::Pull => match profiler {
                Some(p) => pool.add_source_observed(pipeline, runs[k], p, source, on_result),
                None => pool.add_source(pipeline, runs[k], source, on_result),
            },
            Feed::Live(options) => {
                let input = match profiler {
                    Some(p) => pool.add_live_observed(pipeline, runs[k], p, options, on_result),
                    None => pool.add_live(pipeline, runs[k], options, on_result),
                }
                // The options were checked before any pipeline was lent.
                .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
                let id = input.stream();
                match spawn_reader(source, input, lent_to) {
                    Ok(reader) => readers.push(reader),
                    Err(e) => outcome.fail(PyRuntimeError::new_err(format!(
                        "cannot start the reader thread of stream {k}: {e}"
                    ))),
                }
                id
            }
        };
        ids.push(id);
        outcomes.push(outcome);
    }
    let ended = py.detach(move || {
        let ended = pool.finish_all();
        // A stream ends once its reader closed its input: the readers are
        // done, or (a stream that ended otherwise) give up at their next
        // frame.
        for reader in readers {
            let _ = reader.join();
        }
        ended
    });
    for (pipe, ..) in &parsed {
        pipe.get().lent_to.store(0, Ordering::Release);
    }
    // Called on no worker of this pool, which is the call's own.
    let ended = ended.map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let mut all = Vec::with_capacity(ended.len());
    for stream in ended {
        if let Some(k) = ids.iter().position(|&id| id == stream.stats.stream) {
            guards[k].pipeline = stream.pipeline;
            guards[k].profiler = stream.observer;
        }
        all.push(stream.stats);
    }
    drop(guards);
    let out = PyList::empty(py);
    for outcome in outcomes {
        // The pool has dropped every stream's source and callback: what
        // they gathered is all there.
        let error = outcome
            .error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(e) = error {
            return Err(e);
        }
        let results = std::mem::take(
            &mut *outcome
                .results
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
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

/// A live stream's reader: a thread pushing each frame `source` reads
/// into `input` (waiting for room, or dropping, as its policy says) until
/// the frames end or the stream no longer takes them; the input is then
/// dropped, which closes the stream.
fn spawn_reader(
    source: impl Iterator<Item = Result<Vec<Value>, String>> + Send + 'static,
    input: LiveInput<DynPipeline, Vec<Value>, Profiler<'static>>,
    pool: u64,
) -> std::io::Result<JoinHandle<()>> {
    let name = format!("cortex-py-reader-{}", input.stream().0);
    std::thread::Builder::new().name(name).spawn(move || {
        READER_OF.with(|r| r.set(pool));
        for frame in source {
            match frame {
                Ok(values) => {
                    if input.push(values).is_err() {
                        return;
                    }
                }
                Err(why) => return input.fail(why),
            }
        }
    })
}

/// A stream's result callback: each frame's outputs in `read` as
/// `Pipeline.run`'s dict (its `frame` counting on from `first`, the
/// pipeline's frames before the call), a failed frame's `PipelineError` in
/// its place; an interruption stops the stream and is raised. The outputs
/// go back to the stream for its next frame to run into (the dict holds
/// its own references to their values).
fn deliver(
    pipe: Py<PyPipeline>,
    (first, read): (u64, OutputSet),
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
                    let item = pipe.get().results(py, &out, index - 1, read);
                    d.recycle(out);
                    item.map(|d| d.into_any().unbind())
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
