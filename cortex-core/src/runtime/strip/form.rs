//! A node's strip form: how a graph node's op joins a fused group, and how
//! the group's result becomes the node's value. `cortex_graph!` builds one
//! from `#[compilable(strip = …)]` or `#[compilable(reduce = …)]`.

use super::erased::AnyPlane;
use super::error::StripError;
use super::group::{FusedGroup, GroupBuilder, Value};
use crate::model::access::StripShape;
use crate::model::weights::Weights;

/// How a node's op runs inside a fused group.
///
/// The form adds the op's strip kernels to the group (usually one), reading
/// the node's value arguments, and later moves the group's result into the
/// node's value. It must compute exactly what the node's own call computes:
/// the generated code runs the call instead whenever the group declines a
/// frame (a geometry its kernels do not take, any strip error), and the
/// tests compare both.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a strip form",
    label = "not a strip form",
    note = "`#[compilable(strip = …)]` and `#[compilable(reduce = …)]` take a value whose type implements `cortex::strip::StripForm` (e.g. `ops::strip::GrayStrip`); write `#[compilable]` alone for a node without one"
)]
pub trait StripForm: Send + Sync {
    /// The node's value: its declared type, or what its call returns.
    type Value;
    /// [`Map`] (`strip = …`) or [`Reduce`] (`reduce = …`), as the node
    /// declares it.
    type Shape: FormShape;

    /// Adds the kernels computing the node to `group`. `inputs` holds one
    /// entry per value argument of the node, in call order: the group value
    /// it reads, or `None` for a weighted argument whose node the plan does
    /// not run. `weights` is the running mode's weight table.
    ///
    /// # Errors
    /// Any [`StripError`]: the group is not built and the plan runs unfused.
    fn add(
        &self,
        group: &mut GroupBuilder,
        inputs: &[Option<Value>],
        weights: &Weights,
    ) -> Result<Value, StripError>;

    /// Moves the group's output `k` (the node's result of the last run)
    /// into the node's value `into`, reusing its allocation when it can.
    ///
    /// # Errors
    /// Any [`StripError`]: the frame then runs the node's call instead.
    fn store(
        &self,
        group: &mut FusedGroup,
        k: usize,
        into: &mut Self::Value,
    ) -> Result<(), StripError>;
}

/// The shape a [`StripForm`] declares, checked against the DSL key.
pub trait FormShape {
    /// The shape the fusion pass groups by.
    const SHAPE: StripShape;
}

/// A form mapping rows (pointwise, stencil, resample): `strip = …`.
#[derive(Debug, Clone, Copy)]
pub struct Map;

/// A form folding every row: `reduce = …`.
#[derive(Debug, Clone, Copy)]
pub struct Reduce;

impl FormShape for Map {
    const SHAPE: StripShape = StripShape::Map;
}

impl FormShape for Reduce {
    const SHAPE: StripShape = StripShape::Reduction;
}

/// A graph value a fused group can read as a plane, without a copy.
pub trait PlaneValue {
    /// The value's elements as a plane.
    ///
    /// # Errors
    /// [`StripError`] when the value is not one contiguous row-major plane.
    fn as_plane(&self) -> Result<AnyPlane<'_>, StripError>;
}

impl<T: PlaneValue + ?Sized> PlaneValue for &T {
    fn as_plane(&self) -> Result<AnyPlane<'_>, StripError> {
        (**self).as_plane()
    }
}

#[cfg(feature = "ndarray")]
mod arrays {
    use super::{AnyPlane, FusedGroup, PlaneValue, StripError};
    use crate::runtime::strip::geometry::Element;
    use crate::runtime::strip::geometry::Geometry;
    use ndarray::{Array2, Array3};

    fn contiguous<T>(data: Option<&[T]>) -> Result<&[T], StripError> {
        data.ok_or_else(|| StripError::Group("an array that is not contiguous row-major".into()))
    }

    impl<T: Element> PlaneValue for Array2<T> {
        fn as_plane(&self) -> Result<AnyPlane<'_>, StripError> {
            let (h, w) = self.dim();
            AnyPlane::new(contiguous(self.as_slice())?, Geometry::new(w, h))
        }
    }

    impl<T: Element> PlaneValue for Array3<T> {
        fn as_plane(&self) -> Result<AnyPlane<'_>, StripError> {
            let (h, w, c) = self.dim();
            AnyPlane::new(
                contiguous(self.as_slice())?,
                Geometry::new(w, h).with_channels(c),
            )
        }
    }

    /// Moves group output `k`, a one-channel plane, into `into`: the two
    /// trade allocations, so nothing is copied or allocated once both
    /// have grown to the frame's size.
    ///
    /// # Errors
    /// [`StripError`] for a missing output or another element type.
    pub fn store_array2<T: Element>(
        group: &mut FusedGroup,
        k: usize,
        into: &mut Array2<T>,
    ) -> Result<(), StripError> {
        let (mut data, _) = std::mem::take(into).into_raw_vec_and_offset();
        let g = group.swap_output(k, &mut data)?;
        if g.channels != 1 {
            return Err(StripError::Group(format!(
                "output {k} has {} channels, not 1",
                g.channels
            )));
        }
        *into = Array2::from_shape_vec((g.height, g.width), data)
            .map_err(|e| StripError::Group(format!("output {k}: {e}")))?;
        Ok(())
    }
}

#[cfg(feature = "ndarray")]
pub use arrays::store_array2;

/// Runs `group` on `inputs` when fusion is on, as the
/// [`super::tune::policy`] says (fused with its strips, or its members
/// unfused when that measured as fast): `false` (and nothing published)
/// when fusion is off or the group declines the frame, so the caller runs
/// the members' own calls.
pub fn try_run(group: Option<&mut FusedGroup>, inputs: &[AnyPlane<'_>]) -> bool {
    match group {
        Some(g) => g.run_tuned(inputs).is_ok(),
        None => false,
    }
}
