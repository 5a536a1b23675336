//! Plane views with their element type checked at run time, so one group
//! can chain kernels of different element types (RGB bytes → gray bytes →
//! `f32` scores) through one executor.
//!
//! A view is a pointer, a length and the element's [`TypeId`]; it turns
//! back into a typed slice only for that same type. That check is what
//! makes the conversion sound: the memory was a `[T]` of exactly that `T`,
//! borrowed for the view's lifetime.

use std::any::{type_name, TypeId};
use std::marker::PhantomData;
use std::ops::Range;

use super::error::StripError;
use super::geometry::{Element, Geometry};
use super::plane::{Plane, StripMut};

/// A [`Plane`] of some element type.
#[derive(Debug, Clone, Copy)]
pub struct AnyPlane<'a> {
    ptr: *const (),
    len: usize,
    ty: TypeId,
    ty_name: &'static str,
    geometry: Geometry,
    first: usize,
    _borrow: PhantomData<&'a ()>,
}

// SAFETY: the view stands for a `&'a [T]` with `T: Element`, which is
// `Send + Sync`, so sharing or sending the view is sharing the slice.
unsafe impl Send for AnyPlane<'_> {}
// SAFETY: as above.
unsafe impl Sync for AnyPlane<'_> {}

impl<'a, T: Element> From<Plane<'a, T>> for AnyPlane<'a> {
    fn from(p: Plane<'a, T>) -> Self {
        let data = p.as_slice();
        AnyPlane {
            ptr: data.as_ptr().cast(),
            len: data.len(),
            ty: TypeId::of::<T>(),
            ty_name: type_name::<T>(),
            geometry: p.geometry(),
            first: p.rows().start,
            _borrow: PhantomData,
        }
    }
}

impl<'a> AnyPlane<'a> {
    /// A whole plane over `data`.
    ///
    /// # Errors
    /// As [`Plane::new`].
    pub fn new<T: Element>(data: &'a [T], geometry: Geometry) -> Result<Self, StripError> {
        Ok(Plane::new(data, geometry)?.into())
    }

    /// The whole plane's geometry.
    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// The rows present.
    pub fn rows(&self) -> Range<usize> {
        let n = self.geometry.row_len().max(1);
        self.first..self.first + self.len / n
    }

    /// The element type's name.
    pub fn type_name(&self) -> &'static str {
        self.ty_name
    }

    /// Whether it holds `T`s.
    pub fn holds<T: Element>(&self) -> bool {
        self.ty == TypeId::of::<T>()
    }

    /// The typed view.
    ///
    /// # Errors
    /// [`StripError::Type`] when it holds another type than `T`.
    pub fn typed<T: Element>(&self) -> Result<Plane<'a, T>, StripError> {
        if !self.holds::<T>() {
            return Err(StripError::Type {
                what: "plane".into(),
                expected: type_name::<T>(),
                found: self.ty_name,
            });
        }
        // SAFETY: the view was made from a `&'a [T]` of this very `T` (the
        // type ids match), with this pointer and length.
        let data = unsafe { std::slice::from_raw_parts(self.ptr.cast::<T>(), self.len) };
        Plane::rows_of(data, self.geometry, self.first)
    }
}

/// A [`StripMut`] of some element type.
#[derive(Debug)]
pub struct AnyStripMut<'a> {
    ptr: *mut (),
    len: usize,
    /// Bytes per element.
    size: usize,
    ty: TypeId,
    ty_name: &'static str,
    geometry: Geometry,
    first: usize,
    _borrow: PhantomData<&'a mut ()>,
}

// SAFETY: the view stands for a `&'a mut [T]` with `T: Element` (`Send`).
unsafe impl Send for AnyStripMut<'_> {}

impl<'a, T: Element> From<StripMut<'a, T>> for AnyStripMut<'a> {
    fn from(mut s: StripMut<'a, T>) -> Self {
        let geometry = s.geometry();
        let first = s.rows().start;
        let data = s.as_mut_slice();
        AnyStripMut {
            ptr: data.as_mut_ptr().cast(),
            len: data.len(),
            size: std::mem::size_of::<T>(),
            ty: TypeId::of::<T>(),
            ty_name: type_name::<T>(),
            geometry,
            first,
            _borrow: PhantomData,
        }
    }
}

impl<'a> AnyStripMut<'a> {
    /// The rows to fill.
    pub fn rows(&self) -> Range<usize> {
        let n = self.geometry.row_len().max(1);
        self.first..self.first + self.len / n
    }

    /// The typed view, borrowed from this one.
    ///
    /// # Errors
    /// [`StripError::Type`] when it holds another type than `T`.
    pub fn typed<T: Element>(&mut self) -> Result<StripMut<'_, T>, StripError> {
        if self.ty != TypeId::of::<T>() {
            return Err(StripError::Type {
                what: "output strip".into(),
                expected: type_name::<T>(),
                found: self.ty_name,
            });
        }
        // SAFETY: made from a `&'a mut [T]` of this `T`; the returned borrow
        // of `self` keeps it exclusive.
        let data = unsafe { std::slice::from_raw_parts_mut(self.ptr.cast::<T>(), self.len) };
        StripMut::new(data, self.geometry, self.first)
    }

    /// The rows before `y` and the rows from `y` on, as two strips.
    ///
    /// # Errors
    /// [`StripError::RowUnavailable`] when `y` is outside its rows (their
    /// end included).
    pub fn split_at_row(self, y: usize) -> Result<(AnyStripMut<'a>, AnyStripMut<'a>), StripError> {
        let rows = self.rows();
        if y < rows.start || y > rows.end {
            return Err(StripError::RowUnavailable {
                row: y,
                available: rows,
            });
        }
        let at = (y - self.first) * self.geometry.row_len();
        let head = AnyStripMut { len: at, ..self };
        let tail = AnyStripMut {
            // SAFETY: `at <= len` elements of `size` bytes: the pointer stays
            // within (or one past the end of) the same allocation, and the
            // two halves do not overlap.
            ptr: unsafe { self.ptr.cast::<u8>().add(at * self.size).cast() },
            len: self.len - at,
            first: y,
            ..self
        };
        Ok((head, tail))
    }

    /// The filled rows, now shared for the kernels that read them.
    pub fn into_shared(self) -> AnyPlane<'a> {
        AnyPlane {
            ptr: self.ptr.cast_const(),
            len: self.len,
            ty: self.ty,
            ty_name: self.ty_name,
            geometry: self.geometry,
            first: self.first,
            _borrow: PhantomData,
        }
    }
}

/// The inputs of one strip of a kernel, in argument order.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    planes: &'a [AnyPlane<'a>],
}

impl<'a> Inputs<'a> {
    /// Inputs over `planes`.
    pub fn new(planes: &'a [AnyPlane<'a>]) -> Self {
        Inputs { planes }
    }

    /// How many.
    pub fn len(&self) -> usize {
        self.planes.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.planes.is_empty()
    }

    /// Input `i` as a plane of `T`.
    ///
    /// # Errors
    /// [`StripError::Group`] when there is no input `i`; [`StripError::Type`]
    /// when it holds another type.
    pub fn plane<T: Element>(&self, i: usize) -> Result<Plane<'a, T>, StripError> {
        self.get(i)?.typed::<T>().map_err(|e| match e {
            StripError::Type {
                expected, found, ..
            } => StripError::Type {
                what: format!("input {i}"),
                expected,
                found,
            },
            e => e,
        })
    }

    /// Input `i`'s whole geometry.
    ///
    /// # Errors
    /// [`StripError::Group`] when there is no input `i`.
    pub fn geometry(&self, i: usize) -> Result<Geometry, StripError> {
        Ok(self.get(i)?.geometry())
    }

    fn get(&self, i: usize) -> Result<&AnyPlane<'a>, StripError> {
        self.planes.get(i).ok_or_else(|| {
            StripError::Group(format!(
                "no input {i} (the kernel has {})",
                self.planes.len()
            ))
        })
    }
}
