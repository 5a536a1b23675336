//! Support items that `cortex_graph!`'s generated code calls; not part of
//! the public API (re-exported as `cortex::__private`).

/// What a weighted edge (from a `#[weight_key]` node) may be passed as: only
/// `Option<&T>`. Generated code passes every weighted edge through
/// [`weighted`], so a node function that takes `&T` instead gets this one
/// error, at the argument, in the DSL's words — rather than a type mismatch
/// per generated run function pointing into the macro.
#[diagnostic::on_unimplemented(
    message = "this argument comes from a `#[weight_key]` node, so it arrives as `Option<&{T}>`, not `{Self}`",
    label = "a weighted edge: the function must take `Option<&{T}>` here",
    note = "a `#[weight_key]` node is eliminated when its weight is 0, and its consumers then receive `None`"
)]
pub trait WeightedEdge<'a, T: ?Sized + 'a>: Sized {
    /// The edge's value as the parameter type.
    fn from_edge(value: Option<&'a T>) -> Self;
}

impl<'a, T: ?Sized + 'a> WeightedEdge<'a, T> for Option<&'a T> {
    #[inline(always)]
    fn from_edge(value: Option<&'a T>) -> Self {
        value
    }
}

/// Passes a weighted edge's value to a node function (see [`WeightedEdge`]).
#[inline(always)]
pub fn weighted<'a, T: ?Sized + 'a, A: WeightedEdge<'a, T>>(value: Option<&'a T>) -> A {
    A::from_edge(value)
}
