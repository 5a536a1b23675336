//! What generated code calls to check a node's strip form
//! (`#[compilable(strip = …)]`, `#[compilable(reduce = …)]`) and to use it
//! in a fused group; not part of the public API (re-exported as
//! `cortex::__private`).
//!
//! Each mistake in a form is one error, at the form's expression: a value
//! that is no form, a form of the other shape, a form whose value is not
//! the node's type. The checks are the bounds of [`map_form`] /
//! [`reduce_form`] (and their `_as` forms, given the node's declared type),
//! which generated code wraps around every use of the expression, so that
//! rustc, seeing the same error at the same place, prints it once. The uses
//! themselves go through [`FormProbe`] and [`StoreProbe`], which pick the
//! form's own methods when it passed the checks and a stand-in otherwise,
//! so a refused form is not reported again by its uses.

use std::marker::PhantomData;

use super::strip::form::{Map, Reduce, StripForm};
use super::strip::group::{GroupBuilder, Value};
use super::strip::{FusedGroup, StripError};
use crate::weights::Weights;

/// What a `#[compilable(strip = …)]` form's shape must be: implemented by
/// [`Map`] only, so a reducing form is one error at the expression.
#[diagnostic::on_unimplemented(
    message = "`{F}` folds every row into one value (a reduction), but `#[compilable(strip = …)]` declares a form that maps rows",
    label = "a reduction, declared as a map",
    note = "declare it `#[compilable(reduce = …)]`, or give `strip = …` a form whose `Shape` is `Map`"
)]
pub trait MapShape<F> {}

impl<F> MapShape<F> for Map {}

/// What a `#[compilable(reduce = …)]` form's shape must be: implemented by
/// [`Reduce`] only.
#[diagnostic::on_unimplemented(
    message = "`{F}` maps rows (a strip form), but `#[compilable(reduce = …)]` declares a form that folds every row into one value",
    label = "a map, declared as a reduction",
    note = "declare it `#[compilable(strip = …)]`, or give `reduce = …` a form whose `Shape` is `Reduce`"
)]
pub trait ReduceShape<F> {}

impl<F> ReduceShape<F> for Reduce {}

/// What a form's value must be: the node's declared type `T`
/// (`StripForm::Value == T`), as one unmet bound in the DSL's words rather
/// than a type mismatch inside the group's code.
///
/// Besides `T: FormValue<T>`, every type is `FormValue` of a type no node
/// has ([`NotAValue`]): with two implementations, rustc does not take `T`
/// from the form's value before it compares it with the node's type.
#[diagnostic::on_unimplemented(
    message = "this strip form makes a `{Self}`, but the node's value is a `{T}`",
    label = "this form's value is not the node's type",
    note = "a form's `StripForm::Value` is the type of the node it is declared on: give the node the form of its own op, or declare the node with the form's type"
)]
pub trait FormValue<T> {
    /// The node's value as the form's.
    fn as_form_value(value: &mut T) -> &mut Self;
}

impl<T> FormValue<T> for T {
    #[inline(always)]
    fn as_form_value(value: &mut T) -> &mut T {
        value
    }
}

/// A type no value has (see [`FormValue`]).
pub struct NotAValue<T>(core::convert::Infallible, PhantomData<T>);

impl<T> FormValue<NotAValue<T>> for T {
    #[inline(always)]
    fn as_form_value(value: &mut NotAValue<T>) -> &mut T {
        match value.0 {}
    }
}

/// A `strip = …` form, checked to be one (a `reduce = …` form here is one
/// error at the expression).
#[inline(always)]
pub fn map_form<F: StripForm>(form: F) -> F
where
    F::Shape: MapShape<F>,
{
    form
}

/// A `reduce = …` form, checked to be one.
#[inline(always)]
pub fn reduce_form<F: StripForm>(form: F) -> F
where
    F::Shape: ReduceShape<F>,
{
    form
}

/// [`map_form`] on a node declared with type `T`: also checks that the
/// form makes a `T`.
#[inline(always)]
pub fn map_form_as<F: StripForm, T>(form: F) -> F
where
    F::Shape: MapShape<F>,
    F::Value: FormValue<T>,
{
    form
}

/// [`reduce_form`] on a node declared with type `T`.
#[inline(always)]
pub fn reduce_form_as<F: StripForm, T>(form: F) -> F
where
    F::Shape: ReduceShape<F>,
    F::Value: FormValue<T>,
{
    form
}

/// A checked form on its way into a group: `(&FormProbe(&form)).add_form(…)`
/// calls [`StripForm::add`] when `form` is one ([`FormAdd`]) and
/// [`FormAddRefused`] otherwise (method lookup tries `FormProbe` before
/// `&FormProbe`, and skips an implementation whose bounds fail).
pub struct FormProbe<'a, F>(pub &'a F);

/// [`FormProbe`] of a form: its own [`StripForm::add`].
pub trait FormAdd {
    /// See [`StripForm::add`].
    ///
    /// # Errors
    /// As [`StripForm::add`].
    fn add_form(
        &self,
        group: &mut GroupBuilder,
        inputs: &[Option<Value>],
        weights: &Weights,
    ) -> Result<Value, StripError>;
}

impl<F: StripForm> FormAdd for FormProbe<'_, F> {
    #[inline(always)]
    fn add_form(
        &self,
        group: &mut GroupBuilder,
        inputs: &[Option<Value>],
        weights: &Weights,
    ) -> Result<Value, StripError> {
        self.0.add(group, inputs, weights)
    }
}

/// [`FormProbe`] of a value that is no form: the check's error is the one
/// reported; this never runs (the crate does not compile).
pub trait FormAddRefused {
    /// Refuses to build the group.
    ///
    /// # Errors
    /// Always.
    fn add_form(
        &self,
        group: &mut GroupBuilder,
        inputs: &[Option<Value>],
        weights: &Weights,
    ) -> Result<Value, StripError>;
}

impl<F> FormAddRefused for &FormProbe<'_, F> {
    fn add_form(
        &self,
        _: &mut GroupBuilder,
        _: &[Option<Value>],
        _: &Weights,
    ) -> Result<Value, StripError> {
        Err(StripError::Group("not a strip form".into()))
    }
}

/// A checked form and the node's value it stores into:
/// `(&mut StoreProbe(&form, &mut value)).store_form(…)` calls
/// [`StripForm::store`] when the form makes the value's type
/// ([`FormStore`]) and [`FormStoreRefused`] otherwise.
pub struct StoreProbe<'a, F, V>(pub &'a F, pub &'a mut V);

/// [`StoreProbe`] of a form making the node's type: its own
/// [`StripForm::store`].
pub trait FormStore {
    /// See [`StripForm::store`].
    ///
    /// # Errors
    /// As [`StripForm::store`].
    fn store_form(&mut self, group: &mut FusedGroup, k: usize) -> Result<(), StripError>;
}

impl<F: StripForm, V> FormStore for StoreProbe<'_, F, V>
where
    F::Value: FormValue<V>,
{
    #[inline(always)]
    fn store_form(&mut self, group: &mut FusedGroup, k: usize) -> Result<(), StripError> {
        self.0
            .store(group, k, <F::Value as FormValue<V>>::as_form_value(self.1))
    }
}

/// [`StoreProbe`] of a refused form (see [`FormAddRefused`]).
pub trait FormStoreRefused {
    /// Stores nothing.
    ///
    /// # Errors
    /// Always.
    fn store_form(&mut self, group: &mut FusedGroup, k: usize) -> Result<(), StripError>;
}

impl<F, V> FormStoreRefused for &mut StoreProbe<'_, F, V> {
    fn store_form(&mut self, _: &mut FusedGroup, _: usize) -> Result<(), StripError> {
        Err(StripError::Group("not a strip form of this node".into()))
    }
}
