//! What an op declares to run on strips: its kind and window, its output
//! geometry from its inputs', and the function that computes a strip.

use super::erased::Inputs;
use super::error::StripError;
use super::geometry::{Element, Geometry};
use super::plane::{Plane, StripMut};
pub use crate::model::access::{Kind, Window};

/// An op that computes any horizontal strip of its output plane.
///
/// The contract that makes fusion exact: the value of an output row depends
/// only on the inputs, never on which strip computes it. A kernel reads its
/// inputs by whole-plane row index ([`Plane::row`]) and applies its own
/// border rule; the executor provides every input row its window reaches,
/// including the rows a reflect-101, reflect or replicate border maps to.
pub trait StripKernel: Send + Sync {
    /// The output's element type.
    type Out: Element;

    /// A name for errors and listings.
    fn name(&self) -> &str;

    /// Pointwise, stencil or resample (never [`Kind::Reduction`]: a
    /// reduction implements [`StripReduction`]).
    fn kind(&self) -> Kind;

    /// The output geometry for inputs of these geometries, checked before
    /// anything runs.
    ///
    /// # Errors
    /// Any [`StripError`] for inputs it does not accept.
    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError>;

    /// `true` when the output depends only on the inputs' geometries and
    /// the kernel's own parameters, never on the inputs' values (a prior, a
    /// coordinate ramp). When its value stays in a fused group, the group
    /// computes the whole plane once per input geometry and its strips read
    /// it, instead of computing it every frame (constant folding). The kernel is then run with its
    /// inputs' values zeroed: if it reads them, its results differ from the
    /// unfused run, which always calls it on the real inputs.
    fn constant_per_geometry(&self) -> bool {
        false
    }

    /// Fills every element of `out`'s rows.
    ///
    /// # Errors
    /// Any [`StripError`]; the whole group run fails and publishes nothing.
    fn run(&self, inputs: &Inputs<'_>, out: &mut StripMut<'_, Self::Out>)
        -> Result<(), StripError>;
}

/// An op that folds every row of its inputs into a value: one partial row
/// per input row (computed in strips, in parallel), folded in row order.
pub trait StripReduction: Send + Sync {
    /// One row's partial (e.g. a sum and a sum of squares).
    type Partial: Element;
    /// The folded result's element type.
    type Out: Element;

    /// A name for errors and listings.
    fn name(&self) -> &str;

    /// The rows of context a row's partial reads.
    fn window(&self) -> Window {
        Window::ZERO
    }

    /// Partials per row (usually 1) for inputs of these geometries; the
    /// partials plane has as many rows as input 0.
    ///
    /// # Errors
    /// Any [`StripError`] for inputs it does not accept.
    fn partial_width(&self, inputs: &[Geometry]) -> Result<usize, StripError>;

    /// The folded result's geometry (`1 × 1` for a scalar).
    ///
    /// # Errors
    /// Any [`StripError`] for inputs it does not accept.
    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError>;

    /// Fills the partials of `out`'s rows.
    ///
    /// # Errors
    /// Any [`StripError`]; the run fails.
    fn partial(
        &self,
        inputs: &Inputs<'_>,
        out: &mut StripMut<'_, Self::Partial>,
    ) -> Result<(), StripError>;

    /// Folds the partials of every row, in row order, into `out` (sized by
    /// [`StripReduction::geometry`]), for inputs of these geometries.
    ///
    /// # Errors
    /// Any [`StripError`]; the run fails.
    fn fold(
        &self,
        inputs: &[Geometry],
        partials: Plane<'_, Self::Partial>,
        out: &mut [Self::Out],
    ) -> Result<(), StripError>;
}
