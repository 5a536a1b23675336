//! The `cortex_rs.L2` class: one L2 pipeline (its state, its buffers, an
//! optional profiler) driven from Python, a frame at a time or as a stream.

use std::sync::Mutex;

use cortex_core::export::{to_dot, to_mermaid};
use cortex_core::runtime::error::PipelineError;
use cortex_core::runtime::observe::{NoopObserver, Observer};
use cortex_core::runtime::profile::Profiler;
use cortex_core::runtime::run::Run;
use cortex_core::viz::{dce_diff, listing};
use cortex_core::Weights;
use cortex_vision::l2::{L2Mode, L2Outputs, L2};
use cortex_vision::ops::RgbFrame;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::PyDict;

use crate::errors::pipeline_error;
use crate::frame::copy_into;
use crate::results::{outputs, Wanted};
use crate::values::Kind;

/// What one frame runs: a declared mode's `const` plan, or a weight table
/// given at run time.
enum Selection {
    Mode(L2Mode),
    Weights(Weights),
}

/// Everything a run touches, behind the class's lock.
struct Inner {
    pipeline: L2,
    /// The last frame copied from numpy (one whose layout could not be
    /// lent); reused while the size holds.
    frame: RgbFrame,
    /// The last frame's outputs; the next frame runs into them, so a steady
    /// stream reuses their buffers.
    out: Option<L2Outputs>,
    profiler: Option<Profiler<'static>>,
}

/// The L2 region-of-interest pipeline: blur and scene-change checks, four
/// score maps fused with per-mode weights, the JPEG of the top region, the
/// encoder's regions and QP map.
///
/// One instance keeps its state (the previous frame, the sharpness
/// baseline, held values of node rates) between frames; use one per video
/// stream. Frames run with the GIL released, so Python threads can feed
/// several pipelines at once.
#[pyclass(name = "L2", module = "cortex_rs", frozen)]
pub struct PyL2 {
    inner: Mutex<Inner>,
}

#[pymethods]
impl PyL2 {
    /// A pipeline with every state at its initial value. `profile=True`
    /// times every node of every frame (see `profile_report`); `rates=False`
    /// runs rated nodes on every frame; `fusion=False` runs fused strip
    /// groups node by node (the results are identical either way).
    #[new]
    #[pyo3(signature = (*, profile = false, rates = true, fusion = true))]
    fn new(profile: bool, rates: bool, fusion: bool) -> Self {
        let mut pipeline = L2::new();
        pipeline.set_rates(rates);
        pipeline.set_fusion(fusion);
        PyL2 {
            inner: Mutex::new(Inner {
                pipeline,
                frame: RgbFrame::zeros((0, 0, 3)),
                out: None,
                profiler: profile.then(|| Profiler::new(L2::ir())),
            }),
        }
    }

    /// The names of the declared modes.
    #[staticmethod]
    fn modes() -> Vec<&'static str> {
        L2Mode::ALL.iter().map(|m| m.name()).collect()
    }

    /// A declared mode's weight table.
    #[staticmethod]
    fn mode_weights(mode: &str) -> PyResult<Vec<(String, f64)>> {
        Ok(parse_mode(mode)?
            .weights()
            .iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect())
    }

    /// Runs one frame (`H×W×3` `uint8` RGB numpy array) and returns its
    /// results as a dict. `mode` names a declared mode; `weights` (a dict of
    /// every weight key) replaces it with a table given at run time.
    /// `parallel=True` runs independent nodes at once on the worker pool
    /// (bit-identical results). `fused=True` adds the fused score map.
    ///
    /// Raises `ValueError` for an unknown mode, a bad weight table or a
    /// frame of the wrong shape, `TypeError` for a frame that is not a
    /// `uint8` numpy array, `cortex_rs.PipelineError` when a node fails or
    /// the frame is beyond the frame limits (checked from its shape before
    /// it is copied); the state stays as it was.
    #[pyo3(signature = (frame, mode = "BALANCED", *, weights = None, parallel = false, fused = false))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        frame: &Bound<'py, PyAny>,
        mode: &str,
        weights: Option<Vec<(String, f64)>>,
        parallel: bool,
        fused: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let selection = match weights {
            Some(table) => Selection::Weights(table.into_iter().collect()),
            None => Selection::Mode(parse_mode(mode)?),
        };
        let mut guard = self.lock(py)?;
        let inner: &mut Inner = &mut guard;
        // A C-ordered frame is lent to the frame run; any other layout is
        // copied into the frame buffer the pipeline keeps.
        let loan = Kind::Rgb.lend(frame)?;
        if loan.is_none() {
            copy_into(frame, &mut inner.frame)?;
        }
        let lent = loan
            .as_ref()
            .and_then(|l| l.value().downcast_ref::<RgbFrame>());
        let ran = py.detach(|| inner.run(&selection, parallel, lent));
        drop(loan);
        ran.map_err(pipeline_error)?;
        let out = inner
            .out
            .as_ref()
            .ok_or_else(|| PyRuntimeError::new_err("no outputs after a successful frame"))?;
        outputs(
            py,
            out,
            inner.pipeline.frame_index().saturating_sub(1),
            Wanted { fused },
        )
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

    /// Frames run so far (since construction or `reset`).
    #[getter]
    fn frame_index(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.lock(py)?.pipeline.frame_index())
    }

    /// The graph as text: nodes in order with their tags and, when
    /// profiling, each node's mean time; buffers and islands.
    fn listing(&self, py: Python<'_>) -> PyResult<String> {
        let guard = self.lock(py)?;
        Ok(match &guard.profiler {
            Some(p) => listing(L2::ir(), p),
            None => listing(L2::ir(), &()),
        })
    }

    /// What `mode`'s plan removes, why, and (when profiling) the time those
    /// nodes cost.
    fn dce_diff(&self, py: Python<'_>, mode: &str) -> PyResult<String> {
        let plan = parse_mode(mode)?.plan();
        let guard = self.lock(py)?;
        Ok(match &guard.profiler {
            Some(p) => dce_diff(L2::ir(), plan, p),
            None => dce_diff(L2::ir(), plan, &()),
        })
    }

    /// The graph as Graphviz DOT, with `mode`'s eliminated nodes greyed out
    /// when given.
    #[staticmethod]
    #[pyo3(signature = (mode = None))]
    fn dot(mode: Option<&str>) -> PyResult<String> {
        let plan = mode.map(parse_mode).transpose()?.map(|m| m.plan());
        Ok(to_dot(L2::ir(), plan))
    }

    /// The graph as a Mermaid flowchart, like `dot`.
    #[staticmethod]
    #[pyo3(signature = (mode = None))]
    fn mermaid(mode: Option<&str>) -> PyResult<String> {
        let plan = mode.map(parse_mode).transpose()?.map(|m| m.plan());
        Ok(to_mermaid(L2::ir(), plan))
    }

    /// The profiler's report (per-node and per-frame times), when the
    /// pipeline was made with `profile=True`.
    fn profile_report(&self, py: Python<'_>) -> PyResult<String> {
        let guard = self.lock(py)?;
        guard
            .profiler
            .as_ref()
            .map(Profiler::report)
            .ok_or_else(|| {
                PyValueError::new_err(
                    "this pipeline does not profile: make it with L2(profile=True)",
                )
            })
    }

    fn __repr__(&self) -> String {
        "cortex_rs.L2()".to_string()
    }
}

impl PyL2 {
    /// The class's lock, taken without holding the GIL while waiting (a
    /// thread running a frame releases the GIL and needs it back to build
    /// its results).
    fn lock(&self, py: Python<'_>) -> PyResult<std::sync::MutexGuard<'_, Inner>> {
        self.inner.lock_py_attached(py).map_err(|_| {
            PyRuntimeError::new_err("the pipeline is unusable: a frame panicked while running")
        })
    }
}

impl Inner {
    /// Runs `lent`, or else the frame in `self.frame`, into `self.out`,
    /// observed by the profiler when there is one.
    fn run(
        &mut self,
        selection: &Selection,
        parallel: bool,
        lent: Option<&RgbFrame>,
    ) -> Result<(), PipelineError> {
        let frame = lent.unwrap_or(&self.frame);
        match self.profiler.as_mut() {
            Some(profiler) => run_frame(
                &mut self.pipeline,
                selection,
                parallel,
                profiler,
                frame,
                &mut self.out,
            ),
            None => run_frame(
                &mut self.pipeline,
                selection,
                parallel,
                &mut NoopObserver,
                frame,
                &mut self.out,
            ),
        }
    }
}

/// One frame on the engine and selection asked for: into the last frame's
/// outputs when there are some, fresh ones otherwise.
fn run_frame<O: Observer + Send>(
    pipeline: &mut L2,
    selection: &Selection,
    parallel: bool,
    observer: &mut O,
    frame: &RgbFrame,
    out: &mut Option<L2Outputs>,
) -> Result<(), PipelineError> {
    let run = match selection {
        Selection::Mode(m) => Run::mode(*m),
        Selection::Weights(w) => Run::weights(w),
    };
    let run = if parallel { run.parallel() } else { run };
    let mut run = run.observed(observer);
    if let Some(out) = out.as_mut() {
        return pipeline.run_with(&mut run, frame, out);
    }
    *out = Some(pipeline.run_with_fresh(&mut run, frame)?);
    Ok(())
}

/// A declared mode by its name (`"BALANCED"`, `"POWER_SAVE"`, …).
fn parse_mode(name: &str) -> PyResult<L2Mode> {
    L2Mode::from_name(name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown mode `{name}`: L2's modes are {}",
            L2Mode::ALL
                .iter()
                .map(|m| m.name())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })
}
