//! numpy arrays in: an `H×W×3` `uint8` frame, an `H×W` `uint8` gray image
//! or an `H×W` `float32` score map, of any strides, checked against the
//! frame limits from its shape, then copied once into a buffer the
//! pipeline keeps — or, for a built pipeline's `run`, lent without a copy
//! when the layout allows ([`crate::lend`]).

use cortex_core::limits::FrameLimits;
use cortex_vision::ops::RgbFrame;
use ndarray::{Array, Dimension};
use numpy::{Element, PyArray, PyArray3, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::errors::limit_error;

/// What an array must be: its element type and its shape's rule, in the
/// words its errors use.
#[derive(Debug, Clone, Copy)]
pub struct Wanted {
    /// What the value is, for messages (`"a frame"`).
    pub what: &'static str,
    /// The shape it must have, for messages (`"H×W×3"`).
    pub shape: &'static str,
    /// The element type, for messages (`"uint8"`).
    pub dtype: &'static str,
    /// Whether the array is a colour frame (three dimensions, three
    /// channels) rather than a plane (two dimensions).
    pub rgb: bool,
}

/// An RGB frame: `H×W×3` `uint8`.
pub const FRAME: Wanted = Wanted {
    what: "a frame",
    shape: "H×W×3",
    dtype: "uint8",
    rgb: true,
};

/// Copies the numpy array `value`, which must be as `wanted` says, into
/// `buffer`, reusing its memory when the shape is the same (a steady
/// stream allocates nothing here).
///
/// # Errors
/// `TypeError` for anything but a numpy array of `wanted`'s dtype,
/// `ValueError` for another shape, `cortex_rs.PipelineError` for an array
/// beyond the frame limits in effect ([`FrameLimits::current`]); `buffer`
/// is left as it was on every error.
pub fn copy_array<T, D>(
    value: &Bound<'_, PyAny>,
    wanted: Wanted,
    buffer: &mut Array<T, D>,
) -> PyResult<()>
where
    T: Element + Copy,
    D: Dimension,
{
    let typed = checked::<T, D>(value, wanted)?;
    let readonly = typed.try_readonly().map_err(|e| {
        PyValueError::new_err(format!("{} is being written elsewhere: {e}", wanted.what))
    })?;
    let view = readonly.as_array();
    if buffer.dim() == view.dim() {
        buffer.assign(&view);
    } else {
        *buffer = view.to_owned();
    }
    Ok(())
}

/// `value` as the numpy array `wanted` says, its shape within the frame
/// limits: what both a copy and a loan ([`crate::lend`]) start from.
///
/// # Errors
/// As [`copy_into`], in `wanted`'s words.
pub fn checked<'py, T, D>(
    value: &Bound<'py, PyAny>,
    wanted: Wanted,
) -> PyResult<Bound<'py, PyArray<T, D>>>
where
    T: Element,
    D: Dimension,
{
    let Wanted {
        what,
        shape: rule,
        dtype,
        rgb,
    } = wanted;
    let array = value.cast::<PyUntypedArray>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what} must be a numpy array ({rule}, {dtype}), not {}",
            type_name(value)
        ))
    })?;
    let shape = array.shape();
    let fits = match rgb {
        true => shape.len() == 3 && shape[2] == 3,
        false => shape.len() == 2,
    };
    if !fits || shape.len() != D::NDIM.unwrap_or(0) {
        return Err(PyValueError::new_err(format!(
            "{what} must have the shape {rule}, not {shape:?}"
        )));
    }
    let typed = array.cast::<PyArray<T, D>>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what} must be a {dtype} array, not {}",
            array.dtype()
        ))
    })?;
    // The limits are checked on the shape alone, before anything is copied
    // or allocated: numpy's shape need not be backed by memory (a broadcast
    // array, stride 0, claims any size over a few bytes), and the copy of
    // an oversized one would abort the interpreter on a failed allocation
    // rather than raise. The nodes check the same limits, but only on the
    // copy. Zero sides pass: an empty frame is a node's error, as in Rust.
    FrameLimits::current()
        .check(shape[1], shape[0])
        .map_err(limit_error)?;
    Ok(typed.clone())
}

/// An RGB frame as a numpy array, its buffer handed over (no copy).
pub fn to_numpy(py: Python<'_>, frame: RgbFrame) -> Bound<'_, PyArray3<u8>> {
    PyArray3::from_owned_array(py, frame)
}

/// The name of `value`'s type, for messages.
pub fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "an unknown type".to_string())
}
