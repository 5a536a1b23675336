//! numpy memory and the pipeline's values shared without a copy, both
//! ways.
//!
//! In: a C-contiguous, aligned array of the right dtype is lent to one
//! frame ([`Lent`]): the frame reads numpy's memory through an owned
//! `ndarray` array built over it, which is never freed, grown or written
//! (the lender keeps a second handle for the whole frame, so no op can
//! take it as its own buffer) and is forgotten, not dropped, once the
//! frame is over. Anything else — another layout, a misaligned buffer, an
//! empty array — is copied, as before.
//!
//! Out: an array value (a node's image or map) becomes a read-only numpy
//! array over the value's own memory, the value kept alive by the numpy
//! array's base object ([`share`]). Read-only because other nodes, states
//! and the next frame read the same value; a caller who wants to write
//! takes a `.copy()`.

use std::any::Any;
use std::collections::HashMap;
use std::mem::ManuallyDrop;
use std::sync::{Arc, Mutex, OnceLock};

use cortex_core::dynamic::Value;
use ndarray::{Array, ArrayBase, Data, Dimension};
use numpy::npyffi::NPY_ARRAY_WRITEABLE;
use numpy::{Element, PyArray, PyArrayMethods, PyReadonlyArray, PyUntypedArrayMethods};
use pyo3::prelude::*;

/// A value lent to one frame over a numpy array's memory, released when
/// dropped (after the frame).
///
/// Safety argument: the `Array` over numpy's memory is an owned array
/// only in type — the ops downcast their arguments to the owned array
/// types — and its buffer is never handed to the allocator: while the
/// frame runs this guard holds a second handle to the value, so an op can
/// neither take it as its buffer (`Call::fill` needs the only handle) nor
/// write it (values are shared immutably); a run-time graph keeps no input
/// after its frame (states and outputs are nodes' values); and on release
/// the array is forgotten. Should anything still hold the value then (an
/// op of another library keeping its argument), the value and the numpy
/// array are leaked rather than freed under it. numpy's memory stays
/// alive and is not written by Rust code for the frame: the guard holds
/// the array and rust-numpy's read-only borrow of it. Python code of
/// another thread writing the array while the frame runs is a data race,
/// as for any extension that releases the GIL over numpy memory.
pub struct Lent<'py> {
    value: Option<Value>,
    /// Unwraps the value as the array type it was made as and forgets it;
    /// gives the value back when something else still holds it.
    release: fn(Value) -> Result<(), Value>,
    /// The numpy array lent (and its read-only borrow, dropped after it).
    owner: Option<Bound<'py, PyAny>>,
    _borrow: Box<dyn Guard + 'py>,
}

/// Anything kept only to be dropped last (a rust-numpy borrow).
trait Guard {}
impl<T> Guard for T {}

impl Lent<'_> {
    /// The value the frame reads.
    pub fn value(&self) -> &Value {
        self.value
            .as_ref()
            .expect("a lent value is present until dropped")
    }
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        let Some(value) = self.value.take() else {
            return;
        };
        let key = key_of(&value);
        if let Err(still_held) = (self.release)(value) {
            // Never freed: the count never reaches zero, and numpy's array
            // is never collected.
            std::mem::forget(still_held);
            if let Some(owner) = self.owner.take() {
                std::mem::forget(owner);
            }
        }
        if let Ok(mut lent) = registry().lock() {
            lent.remove(&key);
        }
    }
}

/// Lends `typed` (already checked for dtype, shape and limits) to a frame
/// when its layout allows: C order, aligned, not empty. `None` when it
/// must be copied.
///
/// # Errors
/// `ValueError` when Rust code elsewhere holds it writable (rust-numpy's
/// borrow).
pub fn lend<'py, T, D>(typed: &Bound<'py, PyArray<T, D>>) -> PyResult<Option<Lent<'py>>>
where
    T: Element + Any + Send + Sync,
    D: Dimension + 'static,
{
    let aligned = (typed.data() as usize).is_multiple_of(std::mem::align_of::<T>());
    if typed.is_empty() || !aligned {
        return Ok(None);
    }
    let borrow: PyReadonlyArray<'py, T, D> = typed.try_readonly().map_err(|e| {
        pyo3::exceptions::PyValueError::new_err(format!(
            "the array is being written elsewhere: {e}"
        ))
    })?;
    let view = borrow.as_array();
    if !view.is_standard_layout() {
        return Ok(None);
    }
    let dim = view.raw_dim();
    let len = view.len();
    let ptr = view.as_ptr() as *mut T;
    // SAFETY: `ptr` points at `len` initialised, aligned `T`s in C order
    // (checked above) that stay alive and unwritten while `borrow` and
    // `owner` are held, which `Lent` holds until after `release`. The Vec
    // is never grown, written or freed: see `Lent`.
    let array: Array<T, D> = unsafe {
        let vec = Vec::from_raw_parts(ptr, len, len);
        Array::from_shape_vec_unchecked(dim, vec)
    };
    let value: Value = Arc::new(array);
    if let Ok(mut lent) = registry().lock() {
        lent.insert(key_of(&value), typed.clone().into_any().unbind());
    }
    Ok(Some(Lent {
        value: Some(value),
        release: forget::<Array<T, D>>,
        owner: Some(typed.clone().into_any()),
        _borrow: Box::new(borrow),
    }))
}

/// Takes back a lent array: forgotten when this was its last handle.
fn forget<A: Any + Send + Sync>(value: Value) -> Result<(), Value> {
    match value.downcast::<A>() {
        Ok(typed) => match Arc::try_unwrap(typed) {
            Ok(array) => {
                // Its buffer is numpy's: never freed here.
                let _ = ManuallyDrop::new(array);
                Ok(())
            }
            Err(typed) => Err(typed),
        },
        Err(other) => Err(other),
    }
}

/// The lent values of the frames running now, by their handle's address,
/// with the numpy array each is over: a Python node reading a lent input
/// gets a read-only view of that array, not one over the lent value (which
/// Python could keep past the frame).
fn registry() -> &'static Mutex<HashMap<usize, Py<PyAny>>> {
    static LENT: OnceLock<Mutex<HashMap<usize, Py<PyAny>>>> = OnceLock::new();
    LENT.get_or_init(Default::default)
}

fn key_of(value: &Value) -> usize {
    Arc::as_ptr(value) as *const () as usize
}

/// What keeps a value alive under the numpy arrays [`share`] makes.
#[pyclass(frozen, module = "cortex_rs")]
pub struct Lease(#[allow(dead_code)] Value);

/// `value` (an `A` held by `value`) as a read-only numpy array over its
/// memory: a view of the numpy array it was lent from when it is a lent
/// input, else an array whose base object keeps `value` alive.
pub fn share<'py, T, D, S>(
    py: Python<'py>,
    value: &Value,
    array: &ArrayBase<S, D>,
) -> PyResult<Bound<'py, PyAny>>
where
    T: Element,
    D: Dimension,
    S: Data<Elem = T>,
{
    let lent = registry()
        .lock()
        .ok()
        .and_then(|r| r.get(&key_of(value)).map(|o| o.clone_ref(py)));
    let shared = match lent {
        Some(original) => original.bind(py).call_method0("view")?,
        None => {
            let lease = Bound::new(py, Lease(value.clone()))?.into_any();
            // SAFETY: `array` is inside the `Arc` the lease holds, which is
            // never mutated (it is shared) nor moved while the lease, the
            // new array's base, lives.
            unsafe { PyArray::<T, D>::borrow_from_array(array, lease) }.into_any()
        }
    };
    read_only(&shared);
    Ok(shared)
}

/// Clears `array`'s `WRITEABLE` flag (it was made just now and nothing
/// else has seen it).
fn read_only(array: &Bound<'_, PyAny>) {
    if let Ok(a) = array.cast::<numpy::PyUntypedArray>() {
        // SAFETY: a valid array object; clearing the flag only forbids
        // writes through it.
        unsafe { (*a.as_array_ptr()).fields.flags &= !NPY_ARRAY_WRITEABLE };
    }
}
