//! `cortex_rs.Pipeline`: a graph built at run time — from a graph file, or
//! from the description `cortex_rs.Graph` writes in the same form — over
//! the op library and the caller's Python callables, run on every engine
//! (sequential, parallel, pipelined) with the GIL released while Rust runs.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use cortex_core::dynamic::{DynOutputs, DynPipeline, GraphFile, Ops, Value};
use cortex_core::export::{to_dot, to_mermaid};
use cortex_core::runtime::dispatch::Choice;
use cortex_core::runtime::error::PipelineError as RustPipelineError;
use cortex_core::runtime::profile::Profiler;
use cortex_core::runtime::stream::StreamOptions;
use cortex_core::viz::{dce_diff, listing};
use cortex_core::{GraphIr, OutputSet, Pipeline, Plan};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::{PyDict, PyIterator, PyList, PyTuple};

use crate::engine;
use crate::errors::{graph_error, interruption, pipeline_error};
use crate::lend::Lent;
use crate::library::library;
use crate::pyop;
use crate::values::{to_python, Kind};

/// Everything a frame touches, behind the class's lock.
pub(crate) struct Inner {
    pub(crate) pipeline: DynPipeline,
    /// The last frame's inputs, reused while nothing else holds them.
    pub(crate) inputs: Vec<Option<Value>>,
    pub(crate) profiler: Option<Profiler<'static>>,
}

/// A pipeline built at run time from the op library and Python callables.
///
/// One instance keeps its state between frames (use one per video
/// stream). Frames run with the GIL released; a Python node takes the GIL
/// only while its callable runs.
#[pyclass(name = "Pipeline", module = "cortex_rs", frozen)]
pub struct PyPipeline {
    pub(crate) inner: Mutex<Inner>,
    /// How values of the library's types are shown to Python.
    pub(crate) views: Arc<Ops>,
    /// The inputs, in declaration order, and what Python gives for each.
    pub(crate) input_kinds: Vec<(String, Kind)>,
    ir: &'static GraphIr,
    /// Tells its Python nodes' calls apart from other pipelines' (a node
    /// must not run its own pipeline: [`PyPipeline::lock`] refuses it).
    pub(crate) id: u64,
    /// The `run_streams` call its pipeline is lent to, 0 when none (see
    /// [`PyPipeline::lock`]).
    pub(crate) lent_to: AtomicU64,
}

/// The next pipeline's [`PyPipeline::id`].
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

#[pymethods]
impl PyPipeline {
    /// Builds the graph written in `text` (a graph file's JSON; or, with
    /// `path`, the file at `path`), its Python nodes calling `functions`
    /// (op name → callable). `profile=True` times every node of every frame
    /// run in a declared mode (see `profile_report`).
    ///
    /// Raises `cortex_rs.GraphError` (a `ValueError`) listing every
    /// mistake, each naming the node or declaration it is about.
    #[new]
    #[pyo3(signature = (text = None, *, path = None, functions = None, profile = false))]
    fn new(
        py: Python<'_>,
        text: Option<&str>,
        path: Option<&str>,
        functions: Option<&Bound<'_, PyDict>>,
        profile: bool,
    ) -> PyResult<Self> {
        let file = match (text, path) {
            (Some(text), None) => GraphFile::parse(text).map_err(|e| graph_error(&e.problems))?,
            (None, Some(path)) => py
                .detach(|| GraphFile::load(std::path::Path::new(path)))
                .map_err(|e| match e {
                    cortex_core::dynamic::LoadError::Problems(f) => graph_error(&f.problems),
                    other => pyo3::exceptions::PyOSError::new_err(format!("{path}: {other}")),
                })?,
            _ => {
                return Err(PyTypeError::new_err(
                    "give the graph's text or its path (path=...), not both",
                ))
            }
        };
        let views = Arc::new(library());
        let mut ops = (*views).clone();
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        if let Some(functions) = functions {
            for (name, func) in functions.iter() {
                let name: String = name.extract()?;
                if !func.is_callable() {
                    return Err(PyTypeError::new_err(format!(
                        "function `{name}` is not callable"
                    )));
                }
                let returns = returns_of(&file, &name)?;
                pyop::register(&mut ops, &name, func.unbind(), returns, views.clone(), id);
            }
        }
        let pipeline = file.build(&ops).map_err(|e| graph_error(&e.problems))?;
        let ir = pipeline.graph();
        let input_kinds = ir
            .inputs
            .iter()
            .map(|i| {
                let kind = Kind::named(i.ty.trim()).ok_or_else(|| {
                    graph_error(&[(
                        0,
                        format!(
                            "input `{}`: Python feeds {}, not `{}`",
                            i.name,
                            Kind::names(),
                            i.ty
                        ),
                    )])
                })?;
                Ok((i.name.to_string(), kind))
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyPipeline {
            inner: Mutex::new(Inner {
                inputs: vec![None; input_kinds.len()],
                pipeline,
                profiler: profile.then(|| Profiler::new(ir)),
            }),
            views,
            input_kinds,
            ir,
            id,
            lent_to: AtomicU64::new(0),
        })
    }

    /// The graph's name.
    #[getter]
    fn name(&self) -> String {
        self.ir.name.to_string()
    }

    /// The declared modes' names, in order.
    #[getter]
    fn modes(&self) -> Vec<String> {
        self.ir.modes.iter().map(|m| m.name.to_string()).collect()
    }

    /// The inputs' names, in the order `run` takes them.
    #[getter]
    fn inputs(&self) -> Vec<String> {
        self.input_kinds.iter().map(|(n, _)| n.clone()).collect()
    }

    /// The outputs' names, in the order results show them.
    #[getter]
    fn outputs(&self) -> Vec<String> {
        self.ir
            .outputs
            .iter()
            .map(|o| self.ir.node(o.node).name.to_string())
            .collect()
    }

    /// A declared mode's weight table.
    fn mode_weights(&self, mode: &str) -> PyResult<Vec<(String, f64)>> {
        let m = self.mode_index(Some(mode))?;
        let guard = self.inner.lock().map_err(|_| poisoned())?;
        let weights = guard
            .pipeline
            .mode_weights(m)
            .ok_or_else(|| PyValueError::new_err("no such mode"))?;
        Ok(weights.iter().map(|(k, v)| (k.to_string(), v)).collect())
    }

    /// Runs one frame and returns its outputs as a dict (`frame`, the
    /// frame's index, then each output by name: read-only numpy arrays
    /// over the pipeline's values for images and maps, Python objects as
    /// they were returned, every other type as its view).
    ///
    /// An input array in C order, of its type's dtype and aligned is lent
    /// to the frame, not copied (it must not be written by another thread
    /// meanwhile); any other layout is copied.
    ///
    /// `inputs` is the frame (one input), a tuple of the inputs in
    /// declaration order, or a dict by name. `mode` names a declared mode
    /// (the first when not given); `weights` (a dict of every weight key)
    /// runs a table given at run time instead. `parallel=True` runs
    /// independent nodes at once on the worker pool (identical results).
    ///
    /// Raises `ValueError` for an unknown mode or a bad weight table,
    /// `TypeError`/`ValueError` for inputs of the wrong type or shape,
    /// `cortex_rs.PipelineError` when a node fails (a Python node's
    /// exception is its `__cause__`); the state stays as it was.
    #[pyo3(signature = (inputs, mode = None, *, weights = None, parallel = false, outputs = None))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        inputs: &Bound<'py, PyAny>,
        mode: Option<&str>,
        weights: Option<&Bound<'py, PyDict>>,
        parallel: bool,
        outputs: Option<Vec<String>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let read = self.outputs_read(outputs)?;
        let selection = match weights {
            Some(w) => {
                let table: Vec<(String, f64)> = w
                    .iter()
                    .map(|(k, v)| {
                        let k: String = k.extract().map_err(|_| {
                            PyTypeError::new_err("a weight table's keys are weight keys (str)")
                        })?;
                        let v: f64 = if v.is_instance_of::<pyo3::types::PyBool>() {
                            Err(())
                        } else {
                            v.extract().map_err(|_| ())
                        }
                        .map_err(|()| {
                            PyTypeError::new_err(format!(
                                "weight `{k}` must be a number, not {}",
                                crate::frame::type_name(&v)
                            ))
                        })?;
                        Ok((k, v))
                    })
                    .collect::<PyResult<_>>()?;
                Choice::Weights(table.into_iter().collect())
            }
            None => Choice::Mode(self.mode_index(mode)?),
        };
        let mut guard = self.lock(py)?;
        let inner: &mut Inner = &mut guard;
        let given = self.given(inputs)?;
        // Arrays Rust reads as they are are lent for this frame; the rest
        // are copied into the last frame's buffers.
        let mut lent: Vec<Option<Lent<'py>>> = Vec::with_capacity(given.len());
        for ((slot, (_, kind)), value) in inner.inputs.iter_mut().zip(&self.input_kinds).zip(&given)
        {
            let loan = kind.lend(value)?;
            if loan.is_none() {
                kind.read(value, slot)?;
            }
            lent.push(loan);
        }
        let values = lent
            .iter()
            .zip(&inner.inputs)
            .map(|(loan, slot)| match loan {
                Some(loan) => Ok(loan.value().clone()),
                None => slot
                    .clone()
                    .ok_or_else(|| PyRuntimeError::new_err("an input was not read")),
            })
            .collect::<PyResult<Vec<Value>>>()?;
        let out = py.detach(|| inner.run((&selection, read), parallel, &values));
        // The frame's handles on the lent arrays go before the loans end.
        drop(values);
        drop(lent);
        let out = out.map_err(pipeline_error)?;
        let index = inner.pipeline.frame_index().saturating_sub(1);
        self.results(py, &out, index, read)
    }

    /// Runs every frame of `frames` (an iterable of what `run` takes) on
    /// the pipelined engine, in declared mode `mode`: frame k+1's nodes
    /// that read no state run on the pool while frame k finishes. Returns
    /// the results in order — for a frame that failed, its
    /// `cortex_rs.PipelineError` (not raised; the state stays that of the
    /// last good frame) — or, with `on_result`, calls it with each and
    /// returns `None`.
    #[pyo3(signature = (frames, mode = None, *, on_result = None, in_flight = 2, outputs = None))]
    fn stream<'py>(
        &self,
        py: Python<'py>,
        frames: &Bound<'py, PyAny>,
        mode: Option<&str>,
        on_result: Option<Py<PyAny>>,
        in_flight: usize,
        outputs: Option<Vec<String>>,
    ) -> PyResult<Option<Bound<'py, PyList>>> {
        let m = self.mode_index(mode)?;
        let read = self.outputs_read(outputs)?;
        if let Some(f) = &on_result {
            if !f.bind(py).is_callable() {
                return Err(PyTypeError::new_err(format!(
                    "on_result must be callable, not {}",
                    crate::frame::type_name(f.bind(py))
                )));
            }
        }
        let options = StreamOptions {
            in_flight,
            ..StreamOptions::DEFAULT
        };
        let iter = PyIterator::from_object(frames)?.unbind();
        let mut guard = self.lock(py)?;
        let inner: &mut Inner = &mut guard;
        // The source: each frame read under the GIL, then run without it.
        let feed_error: Mutex<Option<PyErr>> = Mutex::new(None);
        let source = std::iter::from_fn(|| {
            Python::attach(|py| {
                let next = match iter.bind(py).clone().next()? {
                    Ok(item) => item,
                    Err(e) => {
                        *feed_error.lock().ok()? = Some(e);
                        return None;
                    }
                };
                let mut slots = vec![None; self.input_kinds.len()];
                match self
                    .read_inputs(&next, &mut slots)
                    .and_then(|()| present(&slots))
                {
                    Ok(values) => Some(values),
                    Err(e) => {
                        *feed_error.lock().ok()? = Some(e);
                        None
                    }
                }
            })
        });
        let results = Mutex::new(Vec::new());
        let callback_error: Mutex<Option<PyErr>> = Mutex::new(None);
        let report = py.detach(|| {
            engine::stream(&mut inner.pipeline, (m, read), source, &options, |frame| {
                Python::attach(|py| {
                    let item = match frame.take_result() {
                        Ok(out) => self
                            .results(py, &out, frame.index, read)
                            .map(|d| d.into_any()),
                        Err(e) => match interruption(&e) {
                            Some(stop) => Err(stop),
                            None => Ok(pipeline_error(e).into_value(py).into_bound(py).into_any()),
                        },
                    };
                    let delivered = item.and_then(|item| match &on_result {
                        Some(f) => f.bind(py).call1((item,)).map(drop),
                        None => {
                            results.lock().map_err(|_| poisoned())?.push(item.unbind());
                            Ok(())
                        }
                    });
                    match delivered {
                        Ok(()) => ControlFlow::Continue(()),
                        Err(e) => {
                            if let Ok(mut slot) = callback_error.lock() {
                                *slot = Some(e);
                            }
                            ControlFlow::Break(())
                        }
                    }
                })
            })
        });
        report.map_err(|e| PyValueError::new_err(e.to_string()))?;
        for slot in [callback_error, feed_error] {
            if let Some(e) = slot.into_inner().map_err(|_| poisoned())? {
                return Err(e);
            }
        }
        if on_result.is_some() {
            return Ok(None);
        }
        let items = results.into_inner().map_err(|_| poisoned())?;
        Ok(Some(PyList::new(py, items)?))
    }

    /// Every state back to its initial value (a new stream).
    fn reset(&self, py: Python<'_>) -> PyResult<()> {
        let mut guard = self.lock(py)?;
        guard.pipeline.reset();
        if let Some(p) = guard.profiler.as_mut() {
            p.reset();
        }
        Ok(())
    }

    /// Frames that succeeded since it was built or reset.
    #[getter]
    fn frame_index(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.lock(py)?.pipeline.frame_index())
    }

    /// `False`: rated nodes run on every frame (for comparisons).
    fn set_rates(&self, py: Python<'_>, on: bool) -> PyResult<()> {
        self.lock(py)?.pipeline.set_rates(on);
        Ok(())
    }

    /// `False`: fused strip groups run node by node (identical results).
    fn set_fusion(&self, py: Python<'_>, on: bool) -> PyResult<()> {
        self.lock(py)?.pipeline.set_fusion(on);
        Ok(())
    }

    /// The graph as text: nodes in order with their tags and, when
    /// profiling, each node's mean time; buffers and islands.
    fn listing(&self, py: Python<'_>) -> PyResult<String> {
        let guard = self.lock(py)?;
        Ok(match &guard.profiler {
            Some(p) => listing(self.ir, p),
            None => listing(self.ir, &()),
        })
    }

    /// What `mode`'s plan removes, why, and (when profiling) what those
    /// nodes cost.
    fn dce_diff(&self, py: Python<'_>, mode: &str) -> PyResult<String> {
        let m = self.mode_index(Some(mode))?;
        let guard = self.lock(py)?;
        let plan = &guard.pipeline.program().modes[m].plan;
        Ok(match &guard.profiler {
            Some(p) => dce_diff(self.ir, plan, p),
            None => dce_diff(self.ir, plan, &()),
        })
    }

    /// The program a frame runs, per mode and engine, as text: calls,
    /// fused groups, waves, commits.
    fn program(&self, py: Python<'_>) -> PyResult<String> {
        let guard = self.lock(py)?;
        Ok(guard.pipeline.program().text(self.ir))
    }

    /// The graph as Graphviz DOT, `mode`'s eliminated nodes greyed out
    /// when given.
    #[pyo3(signature = (mode = None))]
    fn dot(&self, py: Python<'_>, mode: Option<&str>) -> PyResult<String> {
        self.with_plan(py, mode, to_dot)
    }

    /// The graph as a Mermaid flowchart, like `dot`.
    #[pyo3(signature = (mode = None))]
    fn mermaid(&self, py: Python<'_>, mode: Option<&str>) -> PyResult<String> {
        self.with_plan(py, mode, to_mermaid)
    }

    /// The profiler's report (per-node and per-frame times), when built
    /// with `profile=True`.
    fn profile_report(&self, py: Python<'_>) -> PyResult<String> {
        let guard = self.lock(py)?;
        guard
            .profiler
            .as_ref()
            .map(Profiler::report)
            .ok_or_else(|| {
                PyValueError::new_err("this pipeline does not profile: build it with profile=True")
            })
    }

    fn __repr__(&self) -> String {
        format!("cortex_rs.Pipeline({:?})", self.ir.name.as_ref() as &str)
    }
}

impl Inner {
    /// One frame on the engine and selection asked for, observed by the
    /// profiler when there is one (a declared mode's frames).
    fn run(
        &mut self,
        selection: (&Choice<usize>, OutputSet),
        parallel: bool,
        values: &[Value],
    ) -> Result<DynOutputs, RustPipelineError> {
        engine::frame(
            &mut self.pipeline,
            self.profiler.as_mut(),
            selection,
            parallel,
            values,
        )
    }
}

impl PyPipeline {
    /// The class's lock, waited for without holding the GIL (a thread
    /// running a frame may need the GIL for a Python node).
    ///
    /// # Errors
    /// `RuntimeError` when called from one of this pipeline's own Python
    /// nodes (the frame running it holds the lock: waiting would never
    /// end), from a frame of the `run_streams` call the pipeline is lent
    /// to (the call holds the lock until its frames end), or after a frame
    /// panicked.
    pub(crate) fn lock(&self, py: Python<'_>) -> PyResult<MutexGuard<'_, Inner>> {
        self.not_reentered()?;
        let lent_to = self.lent_to.load(Ordering::Acquire);
        if lent_to != 0 && crate::streams::in_call(lent_to) {
            return Err(PyRuntimeError::new_err(format!(
                "{} runs a stream of the run_streams call this frame is part of: \
                 it cannot be used until the call ends (use another pipeline)",
                self.ir.name
            )));
        }
        self.inner.lock_py_attached(py).map_err(|_| poisoned())
    }

    /// Fails when this thread is inside one of this pipeline's own Python
    /// nodes.
    pub(crate) fn not_reentered(&self) -> PyResult<()> {
        if pyop::inside(self.id) {
            return Err(PyRuntimeError::new_err(format!(
                "a Python node of {} cannot use {} itself: it is in the middle of a frame \
                 (use another pipeline)",
                self.ir.name, self.ir.name
            )));
        }
        Ok(())
    }

    /// The outputs a run reads: every one when `names` is `None`.
    ///
    /// # Errors
    /// `ValueError` naming an unknown output and the graph's outputs.
    pub(crate) fn outputs_read(&self, names: Option<Vec<String>>) -> PyResult<OutputSet> {
        match names {
            None => Ok(OutputSet::ALL),
            Some(names) => OutputSet::named(self.ir, &names)
                .map_err(|e| PyValueError::new_err(format!("outputs: {e}"))),
        }
    }

    /// The index of mode `name`, the first mode when `None`.
    pub(crate) fn mode_index(&self, name: Option<&str>) -> PyResult<usize> {
        let modes = &self.ir.modes;
        let found = match name {
            None if !modes.is_empty() => Some(0),
            None => None,
            Some(name) => modes.iter().position(|m| m.name == name),
        };
        found.ok_or_else(|| {
            let names: Vec<&str> = modes.iter().map(|m| m.name.as_ref()).collect();
            PyValueError::new_err(match name {
                Some(name) => format!(
                    "unknown mode `{name}`: {}'s modes are {}",
                    self.ir.name,
                    names.join(", ")
                ),
                None => format!("{} declares no mode", self.ir.name),
            })
        })
    }

    /// Reads a frame's inputs — one value, a tuple in declaration order or
    /// a dict by name — into `slots`, reusing their arrays.
    pub(crate) fn read_inputs(
        &self,
        inputs: &Bound<'_, PyAny>,
        slots: &mut [Option<Value>],
    ) -> PyResult<()> {
        let given = self.given(inputs)?;
        for ((slot, (_, kind)), value) in slots.iter_mut().zip(&self.input_kinds).zip(&given) {
            kind.read(value, slot)?;
        }
        Ok(())
    }

    /// A frame's inputs — one value, a tuple in declaration order or a
    /// dict by name — in declaration order.
    fn given<'py>(&self, inputs: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let n = self.input_kinds.len();
        let given: Vec<Bound<'py, PyAny>> = if let Ok(d) = inputs.cast::<PyDict>() {
            let mut by_name: HashMap<String, Bound<'py, PyAny>> = HashMap::new();
            for (k, v) in d.iter() {
                let k: String = k.extract()?;
                if !self.input_kinds.iter().any(|(name, _)| *name == k) {
                    return Err(PyValueError::new_err(format!(
                        "`{k}` is not an input of {} (its inputs: {})",
                        self.ir.name,
                        self.inputs().join(", ")
                    )));
                }
                by_name.insert(k, v);
            }
            self.input_kinds
                .iter()
                .map(|(name, _)| {
                    by_name
                        .remove(name)
                        .ok_or_else(|| PyValueError::new_err(format!("input `{name}` is missing")))
                })
                .collect::<PyResult<_>>()?
        } else if n != 1 || inputs.is_instance_of::<PyTuple>() {
            let t = inputs.cast::<PyTuple>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "{} takes {n} inputs ({}): pass a tuple or a dict",
                    self.ir.name,
                    self.inputs().join(", ")
                ))
            })?;
            if t.len() != n {
                return Err(PyValueError::new_err(format!(
                    "{} takes {n} inputs ({}), not {}",
                    self.ir.name,
                    self.inputs().join(", "),
                    t.len()
                )));
            }
            t.iter().collect()
        } else {
            vec![inputs.clone()]
        };
        Ok(given)
    }

    /// One frame's outputs as a dict: `frame`, then each output by name.
    pub(crate) fn results<'py>(
        &self,
        py: Python<'py>,
        out: &DynOutputs,
        index: u64,
        read: OutputSet,
    ) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("frame", index)?;
        for (k, name) in out.names().iter().enumerate() {
            if !read.contains(k) {
                continue;
            }
            match out.value(name) {
                Some(v) => d.set_item(name, to_python(py, v, &self.views)?)?,
                None => d.set_item(name, py.None())?,
            }
        }
        Ok(d)
    }

    fn with_plan(
        &self,
        py: Python<'_>,
        mode: Option<&str>,
        show: impl FnOnce(&GraphIr, Option<&Plan>) -> String,
    ) -> PyResult<String> {
        let m = mode.map(|m| self.mode_index(Some(m))).transpose()?;
        let guard = self.lock(py)?;
        let plan = m.map(|m| &guard.pipeline.program().modes[m].plan);
        Ok(show(self.ir, plan))
    }
}

/// The inputs of a frame, every one read.
fn present(slots: &[Option<Value>]) -> PyResult<Vec<Value>> {
    slots
        .iter()
        .map(|s| {
            s.clone()
                .ok_or_else(|| PyRuntimeError::new_err("an input was not read"))
        })
        .collect()
}

/// What the Python callable of op `name` returns: the type its nodes
/// declare (a `PyObject` when they declare none).
fn returns_of(file: &GraphFile, name: &str) -> PyResult<Kind> {
    let nodes: Vec<_> = file.spec.nodes.iter().filter(|n| n.op == name).collect();
    let Some(first) = nodes.first() else {
        return Err(graph_error(&[(
            0,
            format!("function `{name}`: no node calls it"),
        )]));
    };
    let ty = first
        .ty
        .as_deref()
        .map(str::trim)
        .unwrap_or(crate::values::PY_OBJECT);
    if let Some(other) = nodes.iter().find(|n| {
        n.ty.as_deref().map(str::trim) != Some(ty)
            && !(n.ty.is_none() && ty == crate::values::PY_OBJECT)
    }) {
        return Err(graph_error(&[(
            0,
            format!(
                "nodes `{}` and `{}` call function `{name}` with two types",
                first.name, other.name
            ),
        )]));
    }
    Kind::named(ty).ok_or_else(|| {
        graph_error(&[(
            0,
            format!(
                "node `{}`: a Python callable returns one of {}, not `{ty}`",
                first.name,
                Kind::names()
            ),
        )])
    })
}

fn poisoned() -> PyErr {
    PyRuntimeError::new_err("the pipeline is unusable: a frame panicked while running")
}
