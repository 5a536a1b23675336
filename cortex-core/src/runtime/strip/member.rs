//! The object-safe face of a kernel or reduction inside a group: it knows
//! the element types, so it owns the buffers of its values and converts
//! between them and the erased views.

use std::any::Any;
use std::ops::Range;

use super::erased::{AnyPlane, AnyStripMut, Inputs};
use super::error::StripError;
use super::geometry::{Element, Geometry};
use super::kernel::{Kind, StripKernel, StripReduction};
use super::plane::{Plane, StripMut};

/// A buffer of one value: a `Vec<T>` of the member's element type.
pub(crate) type Store = Box<dyn Any + Send + Sync>;

/// A group member, element types erased.
pub(crate) trait Member: Send + Sync {
    fn name(&self) -> &str;
    fn kind(&self) -> Kind;
    /// Its value depends on its inputs' geometries only
    /// ([`StripKernel::constant_per_geometry`]).
    fn constant(&self) -> bool {
        false
    }
    /// The geometry of the rows it computes in strips (a reduction's
    /// partials) and of its final value (the same plane for a kernel).
    fn geometries(&self, inputs: &[Geometry]) -> Result<(Geometry, Geometry), StripError>;
    /// An empty buffer for its rows.
    fn new_store(&self) -> Store;
    /// An empty buffer for its final value.
    fn new_out_store(&self) -> Store;
    /// `store` holding `rows` of `geometry`, as a strip to fill.
    fn strip<'a>(
        &self,
        store: &'a mut Store,
        geometry: Geometry,
        rows: Range<usize>,
    ) -> Result<AnyStripMut<'a>, StripError>;
    /// Computes `out`'s rows.
    fn run(&self, inputs: &Inputs<'_>, out: &mut AnyStripMut<'_>) -> Result<(), StripError>;
    /// Copies the rows of `dst` from `src` (which holds them).
    fn copy(&self, src: &AnyPlane<'_>, dst: &mut AnyStripMut<'_>) -> Result<(), StripError>;
    /// For a reduction: folds the whole partials plane into `out`.
    fn fold(
        &self,
        inputs: &[Geometry],
        partials: &Store,
        geometry: Geometry,
        out: &mut Store,
        out_geometry: Geometry,
    ) -> Result<(), StripError>;
    /// The whole value in `store` as a view.
    fn view<'a>(&self, store: &'a Store, geometry: Geometry) -> Result<AnyPlane<'a>, StripError>;
    /// Bytes `store` holds.
    fn bytes(&self, store: &Store) -> usize;
}

fn vec_of<T: Element>(store: &mut Store) -> Result<&mut Vec<T>, StripError> {
    store
        .downcast_mut::<Vec<T>>()
        .ok_or_else(|| StripError::Group("buffer of another element type".into()))
}

fn vec_ref<T: Element>(store: &Store) -> Result<&Vec<T>, StripError> {
    store
        .downcast_ref::<Vec<T>>()
        .ok_or_else(|| StripError::Group("buffer of another element type".into()))
}

/// `store` grown (never shrunk: steady state does not allocate) to hold
/// `len` elements; the first `len` of them.
fn sized<T: Element>(store: &mut Store, len: usize) -> Result<&mut [T], StripError> {
    let v = vec_of::<T>(store)?;
    if v.len() < len {
        // Exactly: scratch is sized by the tallest strip once, not doubled.
        v.reserve_exact(len - v.len());
        v.resize(len, T::default());
    }
    Ok(&mut v[..len])
}

fn strip_of<'a, T: Element>(
    store: &'a mut Store,
    g: Geometry,
    rows: Range<usize>,
) -> Result<AnyStripMut<'a>, StripError> {
    let data = sized::<T>(store, rows.len() * g.row_len())?;
    Ok(StripMut::new(data, g, rows.start)?.into())
}

fn copy_of<T: Element>(src: &AnyPlane<'_>, dst: &mut AnyStripMut<'_>) -> Result<(), StripError> {
    let rows = dst.rows();
    let from = src.typed::<T>()?.span(rows)?;
    dst.typed::<T>()?.as_mut_slice().copy_from_slice(from);
    Ok(())
}

fn view_of<'a, T: Element>(store: &'a Store, g: Geometry) -> Result<AnyPlane<'a>, StripError> {
    let v = vec_ref::<T>(store)?;
    let data = v
        .get(..g.len())
        .ok_or_else(|| StripError::Group("value not computed".into()))?;
    Ok(Plane::new(data, g)?.into())
}

fn bytes_of<T: Element>(store: &Store) -> usize {
    store
        .downcast_ref::<Vec<T>>()
        .map_or(0, |v| v.capacity() * std::mem::size_of::<T>())
}

/// A [`StripKernel`] as a member.
pub(crate) struct KernelMember<K>(pub K);

impl<K: StripKernel> Member for KernelMember<K> {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn kind(&self) -> Kind {
        self.0.kind()
    }
    fn constant(&self) -> bool {
        self.0.constant_per_geometry()
    }
    fn geometries(&self, inputs: &[Geometry]) -> Result<(Geometry, Geometry), StripError> {
        let g = self.0.geometry(inputs)?;
        g.check(self.0.name())?;
        Ok((g, g))
    }
    fn new_store(&self) -> Store {
        Box::new(Vec::<K::Out>::new())
    }
    fn new_out_store(&self) -> Store {
        Box::new(Vec::<K::Out>::new())
    }
    fn strip<'a>(
        &self,
        store: &'a mut Store,
        g: Geometry,
        rows: Range<usize>,
    ) -> Result<AnyStripMut<'a>, StripError> {
        strip_of::<K::Out>(store, g, rows)
    }
    fn run(&self, inputs: &Inputs<'_>, out: &mut AnyStripMut<'_>) -> Result<(), StripError> {
        self.0.run(inputs, &mut out.typed::<K::Out>()?)
    }
    fn copy(&self, src: &AnyPlane<'_>, dst: &mut AnyStripMut<'_>) -> Result<(), StripError> {
        copy_of::<K::Out>(src, dst)
    }
    fn fold(
        &self,
        _: &[Geometry],
        _: &Store,
        _: Geometry,
        _: &mut Store,
        _: Geometry,
    ) -> Result<(), StripError> {
        Err(StripError::Group(format!(
            "`{}` is not a reduction",
            self.0.name()
        )))
    }
    fn view<'a>(&self, store: &'a Store, g: Geometry) -> Result<AnyPlane<'a>, StripError> {
        view_of::<K::Out>(store, g)
    }
    fn bytes(&self, store: &Store) -> usize {
        bytes_of::<K::Out>(store)
    }
}

/// A [`StripReduction`] as a member.
pub(crate) struct ReductionMember<R>(pub R);

impl<R: StripReduction> Member for ReductionMember<R> {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn kind(&self) -> Kind {
        Kind::Reduction(self.0.window())
    }
    fn geometries(&self, inputs: &[Geometry]) -> Result<(Geometry, Geometry), StripError> {
        let rows = inputs
            .first()
            .map(|g| g.height)
            .ok_or_else(|| StripError::Geometry {
                kernel: self.0.name().into(),
                reason: "a reduction needs an input".into(),
            })?;
        let partials = Geometry::new(self.0.partial_width(inputs)?, rows);
        partials.check(self.0.name())?;
        let out = self.0.geometry(inputs)?;
        out.check(self.0.name())?;
        Ok((partials, out))
    }
    fn new_store(&self) -> Store {
        Box::new(Vec::<R::Partial>::new())
    }
    fn new_out_store(&self) -> Store {
        Box::new(Vec::<R::Out>::new())
    }
    fn strip<'a>(
        &self,
        store: &'a mut Store,
        g: Geometry,
        rows: Range<usize>,
    ) -> Result<AnyStripMut<'a>, StripError> {
        strip_of::<R::Partial>(store, g, rows)
    }
    fn run(&self, inputs: &Inputs<'_>, out: &mut AnyStripMut<'_>) -> Result<(), StripError> {
        self.0.partial(inputs, &mut out.typed::<R::Partial>()?)
    }
    fn copy(&self, src: &AnyPlane<'_>, dst: &mut AnyStripMut<'_>) -> Result<(), StripError> {
        copy_of::<R::Partial>(src, dst)
    }
    fn fold(
        &self,
        inputs: &[Geometry],
        partials: &Store,
        g: Geometry,
        out: &mut Store,
        og: Geometry,
    ) -> Result<(), StripError> {
        let p = vec_ref::<R::Partial>(partials)?;
        let p = Plane::new(p.get(..g.len()).unwrap_or(&[]), g)?;
        let v = vec_of::<R::Out>(out)?;
        v.clear();
        v.resize(og.len(), R::Out::default());
        self.0.fold(inputs, p, v)
    }
    fn view<'a>(&self, store: &'a Store, g: Geometry) -> Result<AnyPlane<'a>, StripError> {
        view_of::<R::Out>(store, g)
    }
    fn bytes(&self, store: &Store) -> usize {
        bytes_of::<R::Partial>(store).max(bytes_of::<R::Out>(store))
    }
}
