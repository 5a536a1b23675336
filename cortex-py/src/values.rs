//! Values between Python and a built pipeline: numpy arrays for the image
//! types (`RgbFrame`, `GrayImage`, `ScoreMap`), Python numbers for `f64`
//! and `bool`, any Python object as a `PyObject`, and every other type as
//! the dict its JSON view gives (the view the runner's JSON lines show,
//! registered with the type in the op library) with its payload (the
//! JPEG's bytes, the QP map's offsets) beside the summary.

use std::any::Any;
use std::sync::Arc;

use cortex_core::dynamic::{Call, Ops, Payload, Value};
use cortex_core::runtime::error::NodeFailure;
use cortex_vision::ops::{GrayImage, RgbFrame, ScoreMap};
use ndarray::{ArrayView2, Ix2, Ix3};
use numpy::PyArray2;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyList};

use crate::frame::{checked, copy_array, type_name, Wanted, FRAME};
use crate::lend::{lend, share, Lent};

/// Any Python object, carried between nodes as it is (`None` for the
/// initial value of a state of this type).
#[derive(Debug, Default)]
pub struct PyValue(pub Option<Py<PyAny>>);

/// The name graph files and `returns=` give [`PyValue`].
pub const PY_OBJECT: &str = "PyObject";

/// A value type Python can give: what a callable node returns, or what a
/// pipeline's input is fed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `RgbFrame`: an `H×W×3` `uint8` array.
    Rgb,
    /// `GrayImage`: an `H×W` `uint8` array.
    Gray,
    /// `ScoreMap`: an `H×W` `float32` array.
    Map,
    /// `f64`: a Python number.
    F64,
    /// `bool`: a Python `bool`.
    Bool,
    /// `PyObject`: anything.
    Object,
}

const GRAY: Wanted = Wanted {
    what: "a GrayImage",
    shape: "H×W",
    dtype: "uint8",
    rgb: false,
};

const MAP: Wanted = Wanted {
    what: "a ScoreMap",
    shape: "H×W",
    dtype: "float32",
    rgb: false,
};

impl Kind {
    /// Every kind, in the order messages list them.
    pub const ALL: [Kind; 6] = [
        Kind::Rgb,
        Kind::Gray,
        Kind::Map,
        Kind::F64,
        Kind::Bool,
        Kind::Object,
    ];

    /// The kind of the type registered as `name`.
    pub fn named(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Its registered name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Rgb => "RgbFrame",
            Kind::Gray => "GrayImage",
            Kind::Map => "ScoreMap",
            Kind::F64 => "f64",
            Kind::Bool => "bool",
            Kind::Object => PY_OBJECT,
        }
    }

    /// The names of every kind, for messages.
    pub fn names() -> String {
        let names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
        names.join(", ")
    }

    /// Reads `obj` as a value of this kind into `slot`, reusing the
    /// array `slot` holds when nothing else shares it.
    ///
    /// # Errors
    /// `TypeError` or `ValueError` naming what was expected;
    /// `cortex_rs.PipelineError` for an array beyond the frame limits.
    /// `slot` is left as it was.
    pub fn read(self, obj: &Bound<'_, PyAny>, slot: &mut Option<Value>) -> PyResult<()> {
        match self {
            Kind::Rgb => fill::<RgbFrame>(slot, |b| copy_array(obj, FRAME, b)),
            Kind::Gray => fill::<GrayImage>(slot, |b| copy_array(obj, GRAY, b)),
            Kind::Map => fill::<ScoreMap>(slot, |b| copy_array(obj, MAP, b)),
            Kind::F64 => {
                *slot = Some(Arc::new(as_f64(obj)?));
                Ok(())
            }
            Kind::Bool => {
                *slot = Some(Arc::new(as_bool(obj)?));
                Ok(())
            }
            Kind::Object => {
                *slot = Some(Arc::new(PyValue(Some(obj.clone().unbind()))));
                Ok(())
            }
        }
    }

    /// Lends `obj` to one frame without a copy when it is an array of this
    /// kind in a layout Rust reads as it is (C order, aligned); `None`
    /// when it must be read (copied) instead, as for every other kind.
    ///
    /// # Errors
    /// As [`read`](Self::read), for an array of the wrong type, shape or
    /// size.
    pub fn lend<'py>(self, obj: &Bound<'py, PyAny>) -> PyResult<Option<Lent<'py>>> {
        match self {
            Kind::Rgb => lend(&checked::<u8, Ix3>(obj, FRAME)?),
            Kind::Gray => lend(&checked::<u8, Ix2>(obj, GRAY)?),
            Kind::Map => lend(&checked::<f32, Ix2>(obj, MAP)?),
            Kind::F64 | Kind::Bool | Kind::Object => Ok(None),
        }
    }

    /// Sets a node's value from `obj`, as [`read`](Self::read) does,
    /// filling the node's own buffer for an array (the last frame's, when
    /// nothing else holds it).
    pub fn put(self, obj: &Bound<'_, PyAny>, call: &mut Call<'_>) -> Result<(), NodeFailure> {
        let as_failure = |e: PyErr| -> NodeFailure { Box::new(e) };
        match self {
            Kind::Rgb => copy_array(obj, FRAME, call.fill::<RgbFrame>()?).map_err(as_failure),
            Kind::Gray => copy_array(obj, GRAY, call.fill::<GrayImage>()?).map_err(as_failure),
            Kind::Map => copy_array(obj, MAP, call.fill::<ScoreMap>()?).map_err(as_failure),
            Kind::F64 => as_f64(obj).map(|x| call.put(x)).map_err(as_failure),
            Kind::Bool => as_bool(obj).map(|b| call.put(b)).map_err(as_failure),
            Kind::Object => {
                call.put(PyValue(Some(obj.clone().unbind())));
                Ok(())
            }
        }
    }
}

/// A Python number (not a `bool`) as an `f64`.
fn as_f64(obj: &Bound<'_, PyAny>) -> PyResult<f64> {
    if obj.is_instance_of::<PyBool>() {
        return Err(wrong(obj, "a number (f64)"));
    }
    obj.extract().map_err(|_| wrong(obj, "a number (f64)"))
}

/// A Python `bool`, or numpy's (what `(a > 0).any()` returns).
fn as_bool(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(b.is_true());
    }
    let ty = obj.get_type();
    let numpy_bool = ty.module().is_ok_and(|m| m == "numpy")
        && ty.name().is_ok_and(|n| n == "bool" || n == "bool_");
    if numpy_bool {
        return obj.is_truthy();
    }
    Err(wrong(obj, "a bool"))
}

/// Runs `copy` on the array in `slot` when it is a `T` nothing else holds
/// (its memory reused), on a new one otherwise; `slot` changes only when
/// the copy succeeds.
fn fill<T: Any + Send + Sync + Default>(
    slot: &mut Option<Value>,
    copy: impl FnOnce(&mut T) -> PyResult<()>,
) -> PyResult<()> {
    if let Some(buffer) = slot
        .as_mut()
        .and_then(Arc::get_mut)
        .and_then(|v| v.downcast_mut::<T>())
    {
        // A failed copy leaves the buffer as it was (`copy_array`).
        return copy(buffer);
    }
    let mut fresh = T::default();
    copy(&mut fresh)?;
    *slot = Some(Arc::new(fresh));
    Ok(())
}

fn wrong(obj: &Bound<'_, PyAny>, expected: &str) -> PyErr {
    // The qualified name: numpy's `bool` is not Python's.
    let ty = obj.get_type();
    let name = match (ty.module(), ty.name()) {
        (Ok(m), Ok(n)) if m != "builtins" => format!("{m}.{n}"),
        _ => type_name(obj),
    };
    PyTypeError::new_err(format!("expected {expected}, got {name}"))
}

/// `value` as a Python object: a read-only numpy array over the value's
/// own memory for the image types ([`share`]),
/// the object itself for a `PyObject`, a number or `bool`, and otherwise
/// the JSON view `ops` registers for its type (`None` for a type without
/// one) with its payload's fields beside the view's (`bytes`, a numpy
/// array of its own).
pub fn to_python(py: Python<'_>, value: &Value, ops: &Ops) -> PyResult<Py<PyAny>> {
    let v: &(dyn Any + Send + Sync) = &**value;
    if let Some(a) = v.downcast_ref::<RgbFrame>() {
        return Ok(share(py, value, a)?.unbind());
    }
    if let Some(a) = v.downcast_ref::<GrayImage>() {
        return Ok(share(py, value, a)?.unbind());
    }
    if let Some(a) = v.downcast_ref::<ScoreMap>() {
        return Ok(share(py, value, a)?.unbind());
    }
    if let Some(o) = v.downcast_ref::<PyValue>() {
        return Ok(match &o.0 {
            Some(o) => o.clone_ref(py),
            None => py.None(),
        });
    }
    let view = json_to_python(py, &ops.to_json(value))?;
    let payload = ops.payload_of(value);
    if payload.is_empty() {
        return Ok(view);
    }
    // The view's summary keys stay; each payload field joins them whole.
    let d = view.bind(py).cast::<PyDict>().map_err(|_| {
        PyValueError::new_err("a type with a payload must be shown as a JSON object")
    })?;
    for (name, field) in payload {
        match field {
            Payload::Bytes(b) => d.set_item(name, PyBytes::new(py, b))?,
            Payload::GridF32 { rows, cols, data } => {
                let grid = ArrayView2::from_shape((rows, cols), data)
                    .map_err(|e| PyValueError::new_err(format!("payload `{name}`: {e}")))?;
                d.set_item(name, PyArray2::from_array(py, &grid))?
            }
        }
    }
    Ok(view)
}

/// A JSON value as the Python object `json.loads` would give.
pub fn json_to_python(py: Python<'_>, json: &serde_json::Value) -> PyResult<Py<PyAny>> {
    use serde_json::Value as J;
    Ok(match json {
        J::Null => py.None(),
        J::Bool(b) => PyBool::new(py, *b).to_owned().into_any().unbind(),
        J::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.into_pyobject(py)?.into_any().unbind(),
            (_, Some(u), _) => u.into_pyobject(py)?.into_any().unbind(),
            (_, _, Some(f)) => f.into_pyobject(py)?.into_any().unbind(),
            _ => return Err(PyValueError::new_err(format!("the number {n}"))),
        },
        J::String(s) => s.into_pyobject(py)?.into_any().unbind(),
        J::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(json_to_python(py, item)?)?;
            }
            list.into_any().unbind()
        }
        J::Object(map) => {
            let d = PyDict::new(py);
            for (k, v) in map {
                d.set_item(k, json_to_python(py, v)?)?;
            }
            d.into_any().unbind()
        }
    })
}
