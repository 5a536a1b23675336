//! numpy frames in: an `H×W×3` `uint8` array of any strides, checked
//! against the frame limits from its shape, then copied once into a frame
//! buffer the pipeline keeps (the pipeline's input is an owned array, so a
//! view of numpy's memory cannot be handed over as it is).

use cortex_core::limits::FrameLimits;
use cortex_vision::ops::RgbFrame;
use numpy::{PyArray3, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::errors::limit_error;

/// Copies `frame` into `buffer`, reusing its memory when the size is the
/// same as the last frame's (a steady stream allocates nothing here).
///
/// # Errors
/// `TypeError` for anything but a `uint8` numpy array, `ValueError` for a
/// shape other than `H×W×3`, `cortex_rs.PipelineError` for a frame beyond
/// the frame limits in effect ([`FrameLimits::current`]); `buffer` is left
/// as it was on every error.
pub fn copy_into(frame: &Bound<'_, PyAny>, buffer: &mut RgbFrame) -> PyResult<()> {
    let array = frame.cast::<PyUntypedArray>().map_err(|_| {
        PyTypeError::new_err(format!(
            "a frame must be a numpy array (H×W×3, uint8), not {}",
            type_name(frame)
        ))
    })?;
    let shape = array.shape();
    if shape.len() != 3 || shape[2] != 3 {
        return Err(PyValueError::new_err(format!(
            "a frame must have the shape H×W×3 (RGB), not {shape:?}"
        )));
    }
    let typed = array.cast::<PyArray3<u8>>().map_err(|_| {
        PyTypeError::new_err(format!(
            "a frame must be a uint8 array, not {}",
            array.dtype()
        ))
    })?;
    // The limits are checked on the shape alone, before anything is copied
    // or allocated: numpy's shape need not be backed by memory (a broadcast
    // array, stride 0, claims any size over three bytes), and the copy of
    // an oversized one would abort the interpreter on a failed allocation
    // rather than raise. The nodes check the same limits, but only on the
    // copy. Zero sides pass: an empty frame is a node's error, as in Rust.
    FrameLimits::current()
        .check(shape[1], shape[0])
        .map_err(limit_error)?;
    let readonly = typed
        .try_readonly()
        .map_err(|e| PyValueError::new_err(format!("the frame is being written elsewhere: {e}")))?;
    let view = readonly.as_array();
    if buffer.dim() == view.dim() {
        buffer.assign(&view);
    } else {
        *buffer = view.to_owned();
    }
    Ok(())
}

/// An RGB frame as a new numpy array.
pub fn to_numpy<'py>(py: Python<'py>, frame: &RgbFrame) -> Bound<'py, PyArray3<u8>> {
    PyArray3::from_array(py, frame)
}

fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "an unknown type".to_string())
}
