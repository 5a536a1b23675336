//! Frames for Python: the built-in synthetic clip, and any input the
//! runner opens (Y4M, PNG/JPEG files or globs, and with the `ffmpeg`
//! feature any video FFmpeg reads) as an iterator of numpy arrays.

use cortex_core::limits::FrameLimits;
use cortex_core::runtime::stream::memory_budget;
use cortex_runner::sources::{self, FrameSource};
use cortex_vision::clip::SyntheticClip;
use numpy::PyArray3;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

use crate::frame::to_numpy;

/// The first `count` frames of the built-in synthetic clip at
/// `width × height` (text, a moving object, a blurred stretch from frame
/// 10, a cut at frame 24), as `H×W×3` `uint8` arrays.
///
/// Raises `ValueError` when a frame of that size is outside cortex's frame
/// limits, or the clip would not fit in memory.
#[pyfunction]
#[pyo3(signature = (count = 48, width = 320, height = 240))]
pub fn demo_clip(
    py: Python<'_>,
    count: usize,
    width: usize,
    height: usize,
) -> PyResult<Vec<Bound<'_, PyArray3<u8>>>> {
    FrameLimits::current()
        .check(width, height)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    // The whole clip is made at once: refuse one beyond the memory budget
    // of a stream (the same bound frames in flight are held to) before
    // allocating it.
    let budget = memory_budget();
    let bytes = (count as u64).saturating_mul((width * height * 3) as u64);
    if bytes > budget {
        return Err(PyValueError::new_err(format!(
            "{count} frames of {width}×{height} need {bytes} bytes, over the memory budget of {budget} bytes"
        )));
    }
    let clip = SyntheticClip::new(width, height);
    Ok((0..count as u64)
        .map(|i| to_numpy(py, clip.frame(i)))
        .collect())
}

/// Opens `path` as a source of frames: a Y4M file, a PNG/JPEG file or glob
/// (`"frames/*.png"`), and, when the wheel is built with FFmpeg, any video
/// file, URL or device FFmpeg reads.
///
/// Raises `OSError` when the input cannot be opened.
#[pyfunction]
pub fn open(py: Python<'_>, path: &str) -> PyResult<PySource> {
    if path == "-" {
        return Err(PyValueError::new_err(
            "standard input is not a source from Python: pass a path, or feed numpy frames",
        ));
    }
    let source = py
        .detach(|| sources::open(Some(path), (0, 0), Box::new(std::io::empty())))
        .map_err(|e| PyOSError::new_err(e.to_string()))?;
    Ok(PySource {
        source: std::sync::Mutex::new(Some(source)),
    })
}

/// An iterator of frames (`H×W×3` `uint8` numpy arrays) read from a file;
/// decoding runs with the GIL released. Made by `cortex_rs.open`.
#[pyclass(name = "Source", module = "cortex_rs", frozen)]
pub struct PySource {
    /// `None` once the source ended or failed.
    source: std::sync::Mutex<Option<Box<dyn FrameSource + Send>>>,
}

#[pymethods]
impl PySource {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyArray3<u8>>>> {
        use pyo3::sync::MutexExt;
        let mut guard = self
            .source
            .lock_py_attached(py)
            .map_err(|_| PyOSError::new_err("the source is unusable after a panic"))?;
        let Some(source) = guard.as_mut() else {
            return Ok(None);
        };
        match py.detach(|| source.next_frame()) {
            Some(Ok(frame)) => Ok(Some(to_numpy(py, frame.image))),
            Some(Err(e)) => {
                *guard = None;
                Err(PyOSError::new_err(e.to_string()))
            }
            None => {
                *guard = None;
                Ok(None)
            }
        }
    }

    /// How many frames remain, when the source knows.
    fn len_hint(&self, py: Python<'_>) -> Option<u64> {
        use pyo3::sync::MutexExt;
        let guard = self.source.lock_py_attached(py).ok()?;
        guard.as_ref().and_then(|s| s.len_hint())
    }
}
