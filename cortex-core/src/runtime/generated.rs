//! Support items that `cortex_graph!`'s generated code calls; not part of
//! the public API (re-exported as `cortex::__private`).

/// What a weighted edge (from a `#[weight_key]` node) may be passed as: only
/// `Option<&T>`. Generated code passes every weighted edge through
/// [`weighted`], so a node function that takes `&T` instead gets one error,
/// at the argument, in the DSL's words. The trait names no type of the
/// value, so the error reads the same whether the producer runs in a mode
/// (`Some(&v)`) or is eliminated (`None`), and rustc reports it once for all
/// the generated run functions.
#[diagnostic::on_unimplemented(
    message = "this argument comes from a `#[weight_key]` node, so it arrives as an `Option<&T>`, not as `{Self}`",
    label = "a weighted edge: the function must take `Option<&T>` here",
    note = "a `#[weight_key]` node is eliminated when its weight is 0, and its consumers then receive `None`"
)]
pub trait WeightedEdge<'a>: Sized {
    /// The type of the producer's value.
    type Value: ?Sized + 'a;
    /// The edge's value as the parameter type.
    fn from_edge(value: Option<&'a Self::Value>) -> Self;
}

impl<'a, T: ?Sized + 'a> WeightedEdge<'a> for Option<&'a T> {
    type Value = T;
    #[inline(always)]
    fn from_edge(value: Option<&'a T>) -> Self {
        value
    }
}

/// Passes a weighted edge's value to a node function (see [`WeightedEdge`]).
/// The value's type is its own parameter, tied to the trait by an
/// associated-type binding rather than a projection, so a wrong parameter
/// type is one unmet bound, not also an ill-formed argument type.
#[inline(always)]
pub fn weighted<'a, V: ?Sized + 'a, A: WeightedEdge<'a, Value = V>>(value: Option<&'a V>) -> A {
    A::from_edge(value)
}

/// What a buffer-filling call may return: `()` (it writes the node's
/// value into its `&mut` buffer). Generated code passes a filling call's
/// result through [`filled`], so any other return type is one error at the
/// call.
#[diagnostic::on_unimplemented(
    message = "a buffer-filling call writes its value into its `&mut` buffer and returns `()`, but this one returns `{Self}`",
    label = "returns `{Self}`, not `()`",
    note = "a filling function looks like `fn f(…, out: &mut T)` or, when it can fail, `fn f(…, out: &mut T) -> Result<(), E>` with `?` after the node's call"
)]
pub trait FillReturn {}

impl FillReturn for () {}

/// Accepts what a buffer-filling call returned (see [`FillReturn`]).
#[inline(always)]
pub fn filled<R: FillReturn>(_: R) {}

/// What a call with `?` after it in a node may return: a `Result`.
/// Generated code passes such a call through [`fallible`], so a call that
/// returns anything else is one error at the call.
#[diagnostic::on_unimplemented(
    message = "`?` after a node's call means it returns `Result<_, E>`, but this call returns `{Self}`",
    label = "returns `{Self}`, not a `Result`",
    note = "remove the `?`, or make the function return a `Result`"
)]
pub trait FallibleCall {
    /// The value of a call that succeeded.
    type Ok;
    /// The error of a call that failed.
    type Err;
    /// The call's result.
    fn into_result(self) -> Result<Self::Ok, Self::Err>;
}

impl<T, E> FallibleCall for Result<T, E> {
    type Ok = T;
    type Err = E;
    #[inline(always)]
    fn into_result(self) -> Result<T, E> {
        self
    }
}

/// A `?` node's call as a `Result` (see [`FallibleCall`]).
#[inline(always)]
pub fn fallible<R: FallibleCall>(r: R) -> Result<R::Ok, R::Err> {
    r.into_result()
}

/// What only a `#[parallel]` pipeline has. A pipeline without the
/// attribute still has `run_stream` and `run_stream_with`, bounded on their
/// first argument's type implementing this trait, which nothing does: calling them is one
/// error, at the call, saying to add `#[parallel]` — instead of rustc's
/// "no method named `run_stream`".
#[diagnostic::on_unimplemented(
    message = "this pipeline is not declared `#[parallel]`, so it has no pipelined run methods (`run_stream`, `run_stream_with`)",
    label = "needs `#[parallel]` on the pipeline",
    note = "add `#[parallel]` above `pipeline …` in its `cortex_graph!` block (every node value, input and state must then be `Send + Sync`)"
)]
pub trait DeclaredParallel {
    /// A value of the mode type, which cannot exist for this bound.
    fn never(self) -> core::convert::Infallible;
}

/// Where a run function puts its outputs: into the caller's outputs of an
/// earlier frame (`run_into`, reusing their buffers), or into a new value.
pub enum Sink<'a, T> {
    /// Update these outputs in place: those in the set; the others are left
    /// as they were (the caller does not read them).
    Into(&'a mut T, crate::model::outputs::OutputSet),
    /// Store new outputs here.
    Fresh(&'a mut Option<T>),
}

impl<'a, T> Sink<'a, T> {
    /// Every output into `outputs`.
    #[inline]
    pub fn into_all(outputs: &'a mut T) -> Self {
        Sink::Into(outputs, crate::model::outputs::OutputSet::ALL)
    }

    /// The same sink for one more attempt at the frame.
    #[inline]
    pub fn reborrow(&mut self) -> Sink<'_, T> {
        match self {
            Sink::Into(o, read) => Sink::Into(o, *read),
            Sink::Fresh(s) => Sink::Fresh(s),
        }
    }
}

/// An output that is the last use of a filled value: the caller's old value
/// and the pipeline's buffer trade places, so neither side allocates.
#[inline(always)]
pub fn swap_into<T>(dst: &mut T, buffer: &mut T) {
    core::mem::swap(dst, buffer);
}

/// An output of a filled value that is used again (e.g. also a state): a
/// copy into the caller's value, reusing its allocation.
#[inline(always)]
pub fn copy_into<T: Clone>(dst: &mut T, value: &T) {
    dst.clone_from(value);
}

/// An optional output: fills the value in place when there is one, else
/// starts from `T::default()` (once; later frames reuse it).
#[inline(always)]
pub fn into_option<T: Default>(dst: &mut Option<T>, fill: impl FnOnce(&mut T)) {
    fill(dst.get_or_insert_with(T::default));
}

/// The observer of a parallel run: node events arrive from the pool's
/// worker threads, one at a time under a lock, so any [`Observer`] that is
/// `Send` works unchanged (the profiler keeps one start time per node, so
/// interleaved nodes are timed correctly).
///
/// [`Observer`]: crate::runtime::observe::Observer
pub struct SharedObserver<'a, O>(std::sync::Mutex<&'a mut O>);

impl<'a, O: crate::runtime::observe::Observer> SharedObserver<'a, O> {
    /// Shares `observer` with the workers of one frame.
    #[inline]
    pub fn new(observer: &'a mut O) -> Self {
        SharedObserver(std::sync::Mutex::new(observer))
    }

    #[inline]
    fn with(&self, f: impl FnOnce(&mut O)) {
        // A node that panicked poisons nothing we rely on: the observer
        // only records events.
        let mut guard = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut guard);
    }

    /// See [`Observer::frame_begin`](crate::runtime::observe::Observer::frame_begin).
    #[inline]
    pub fn frame_begin(
        &self,
        ir: &'static crate::model::ir::GraphIr,
        plan: &crate::model::plan::Plan,
    ) {
        self.with(|o| o.frame_begin(ir, plan));
    }

    /// See [`Observer::node_begin`](crate::runtime::observe::Observer::node_begin).
    #[inline]
    pub fn node_begin(&self, node: crate::model::ir::NodeId) {
        self.with(|o| o.node_begin(node));
    }

    /// See [`Observer::node_end`](crate::runtime::observe::Observer::node_end).
    #[inline]
    pub fn node_end(&self, node: crate::model::ir::NodeId) {
        self.with(|o| o.node_end(node));
    }

    /// See [`Observer::frame_end`](crate::runtime::observe::Observer::frame_end).
    #[inline]
    pub fn frame_end(&self, ok: bool) {
        self.with(|o| o.frame_end(ok));
    }

    /// See [`Observer::group_begin`](crate::runtime::observe::Observer::group_begin).
    #[inline]
    pub fn group_begin(&self, members: &'static [crate::model::ir::NodeId]) {
        self.with(|o| o.group_begin(members));
    }

    /// See [`Observer::group_end`](crate::runtime::observe::Observer::group_end).
    #[inline]
    pub fn group_end(&self, fused: bool) {
        self.with(|o| o.group_end(fused));
    }
}

/// Runs two jobs of a wave at once on the engine's pool (rayon's global
/// pool: its threads persist across frames, and a node that itself joins
/// work, like the text map's two polarities, shares the same threads
/// instead of adding more).
#[inline]
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    rayon::join(a, b)
}

/// Before each wave of a pipelined frame's second stage: the thread first
/// runs one unit of the pool's pending work, if there is one. That work is
/// the next frame's first stage, which hands out long jobs (a text map's
/// two polarities); without this turn, a job pushed while this thread runs
/// the second stage waits until the whole stage is done, and its core idles
/// meanwhile at the end of the frame.
#[inline]
pub fn yield_to_first_stage() {
    let _ = rayon::yield_now();
}

/// Runs a parallel frame on the engine's pool: from a thread outside it,
/// the frame enters the pool once (rayon's queue for outside work takes one
/// job per frame, and allocates a block of 63 slots every 63 jobs), and its
/// waves' joins then run inside, without allocating.
#[inline]
pub fn in_pool<R: Send>(frame: impl FnOnce() -> R + Send) -> R {
    if rayon::current_thread_index().is_some() {
        frame()
    } else {
        rayon::scope(|_| frame())
    }
}

/// A node value on its way through the parallel check: `(&ParallelProbe(&v))
/// .parallel_value()` picks [`ParallelOk::parallel_value`] when the value is
/// `Send + Sync` and [`ParallelRefused::parallel_value`] otherwise (method
/// lookup tries `ParallelProbe` before `&ParallelProbe`, and skips an impl
/// whose bounds fail). The refused path's one unsatisfiable bound is the one
/// error a value that cannot cross threads gets: a direct `T: Send + Sync`
/// bound would be two (rustc reports `Send` and `Sync` apart).
pub struct ParallelProbe<'a, T: ?Sized>(pub &'a T);

/// [`ParallelProbe`] for a type rather than a value: a state's type is
/// checked where no state is at hand (a pipelined run's first stage).
pub struct TypeProbe<T: ?Sized>(PhantomData<fn(&T) -> &T>);

impl<T: ?Sized> TypeProbe<T> {
    /// The probe of `T`.
    #[inline(always)]
    pub const fn new() -> Self {
        TypeProbe(PhantomData)
    }
}

impl<T: ?Sized> Default for TypeProbe<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Evidence that `T` is `Send + Sync`: only [`ParallelOk`] makes one in a
/// program that compiles. Invariant in `T`, so evidence for one lifetime is
/// never taken for another.
pub struct Proof<T: ?Sized>(PhantomData<fn(&T) -> &T>);

impl<T> Proof<T> {
    /// Wraps `value` so that it may cross to another thread.
    #[inline(always)]
    pub fn cross(self, value: T) -> Crossing<T> {
        Crossing(value)
    }

    /// This evidence followed by `rest` (more evidence), for [`carried`].
    #[inline(always)]
    pub fn and<C>(self, rest: C) -> (Self, C) {
        (self, rest)
    }
}

/// The check's path for a `Send + Sync` value (a node's value, an input,
/// a state).
///
/// The methods have no default bodies, and each implementation below
/// writes its own: a default would let any other type implementing this
/// public trait make a [`Proof`] of a type that is not `Send + Sync`,
/// whereas a body outside this module cannot build one (its field is
/// private).
pub trait ParallelOk<T: ?Sized> {
    /// Evidence that the node value may cross threads.
    fn parallel_value(&self) -> Proof<T>;
    /// Evidence that the input may cross threads.
    fn parallel_input(&self) -> Proof<T>;
    /// Evidence that the state may cross threads.
    fn parallel_state(&self) -> Proof<T>;
}

impl<T: ?Sized + Send + Sync> ParallelOk<T> for ParallelProbe<'_, T> {
    #[inline(always)]
    fn parallel_value(&self) -> Proof<T> {
        Proof(PhantomData)
    }
    #[inline(always)]
    fn parallel_input(&self) -> Proof<T> {
        Proof(PhantomData)
    }
    #[inline(always)]
    fn parallel_state(&self) -> Proof<T> {
        Proof(PhantomData)
    }
}

impl<T: ?Sized + Send + Sync> ParallelOk<T> for TypeProbe<T> {
    #[inline(always)]
    fn parallel_value(&self) -> Proof<T> {
        Proof(PhantomData)
    }
    #[inline(always)]
    fn parallel_input(&self) -> Proof<T> {
        Proof(PhantomData)
    }
    #[inline(always)]
    fn parallel_state(&self) -> Proof<T> {
        Proof(PhantomData)
    }
}

/// The check's path for any other value: a compile error, said once.
///
/// An input's or state's refusal has no type of its own (`X` is never
/// inferred): the generated code calls a method on it, which makes it the
/// error type, and the pipelined engine's bounds, which a pipelined run's
/// first stage reaches through its returned [`Carried`] values, are then
/// not reported again at the whole invocation.
pub trait ParallelRefused<T: ?Sized> {
    /// Never compiles: `T` is not `Send + Sync`, and [`ParallelValue`] has
    /// no implementation.
    #[inline(always)]
    fn parallel_value(&self) -> Proof<T>
    where
        T: ParallelValue,
    {
        Proof(PhantomData)
    }

    /// Never compiles: `T` is not `Send + Sync`, and [`ParallelInput`] has
    /// no implementation.
    #[inline(always)]
    fn parallel_input<X>(&self) -> X
    where
        T: ParallelInput,
    {
        T::refused()
    }

    /// Never compiles: `T` is not `Send + Sync`, and [`ParallelState`] has
    /// no implementation.
    #[inline(always)]
    fn parallel_state<X>(&self) -> X
    where
        T: ParallelState,
    {
        T::refused()
    }
}

impl<T: ?Sized> ParallelRefused<T> for &ParallelProbe<'_, T> {}

impl<T: ?Sized> ParallelRefused<T> for &TypeProbe<T> {}

mod sealed {
    /// Keeps [`super::ParallelValue`] without implementations outside.
    pub trait Sealed {}
}

/// What a node value must be to cross the threads of a `#[parallel]`
/// pipeline. Implemented by no type (it is sealed): it is only ever asked
/// of a value that is not `Send + Sync`, to say so in the pipeline's words.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be shared between the threads of a `#[parallel]` pipeline",
    label = "this node's value is `{Self}`, which is not `Send + Sync`",
    note = "`#[parallel]` runs independent nodes on worker threads, so every node value must be `Send + Sync`: hold shared data in an `Arc` (and mutable data in a `Mutex`) instead of an `Rc` or `RefCell`, or remove `#[parallel]`"
)]
pub trait ParallelValue: sealed::Sealed {}

/// What an input must be to cross the threads of a `#[parallel]` pipeline
/// (see [`ParallelValue`]): implemented by no type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be shared between the threads of a `#[parallel]` pipeline",
    label = "this input's type is `{Self}`, which is not `Send + Sync`",
    note = "`#[parallel]` runs independent nodes on worker threads that all read the inputs, and a pipelined stream moves each frame's inputs between threads, so every input must be `Send + Sync`: pass shared data in an `Arc` (and mutable data in a `Mutex`) instead of an `Rc` or `RefCell`, or remove `#[parallel]`"
)]
pub trait ParallelInput: sealed::Sealed {
    /// Unreachable: no type implements the trait.
    fn refused<X>() -> X;
}

/// What a state must be to cross the threads of a `#[parallel]` pipeline
/// (see [`ParallelValue`]): implemented by no type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be shared between the threads of a `#[parallel]` pipeline",
    label = "this state's type is `{Self}`, which is not `Send + Sync`",
    note = "`#[parallel]` runs independent nodes on worker threads that read the states, and a pipelined stream runs each frame's state readers on another thread, so every state must be `Send + Sync`: hold shared data in an `Arc` (and mutable data in a `Mutex`) instead of an `Rc` or `RefCell`, or remove `#[parallel]`"
)]
pub trait ParallelState: sealed::Sealed {
    /// Unreachable: no type implements the trait.
    fn refused<X>() -> X;
}

/// A pipelined run's first-stage values on their way to its second stage,
/// with the evidence that the pipeline's inputs and states are
/// `Send + Sync` (`C`, a chain of [`Proof`]s). The engine's own bounds on
/// the inputs and the pipeline are asked of this type (see
/// `runtime::pipelined::Checked`), so when an input's or a state's check
/// failed — its one error, at its declaration — `C` is the error type and
/// nothing more is reported.
pub struct Carried<V, C> {
    values: V,
    _checks: C,
}

/// The first stage's `values`, with the inputs' and states' `checks`.
#[inline(always)]
pub fn carried<V, C>(values: V, checks: C) -> Carried<V, C> {
    Carried {
        values,
        _checks: checks,
    }
}

impl<V, C> Carried<V, C> {
    /// The first stage's values, in the second stage.
    #[inline(always)]
    pub fn values(self) -> V {
        self.values
    }
}

/// `Self`, once `C` is well-formed: a `#[parallel]` pipeline's
/// `ParallelPipeline::OwnedInputs` is its inputs' tuple seen through an
/// array whose length is a constant block holding the inputs' checks. When
/// a check fails (its one error, at the input) that constant, and so the
/// whole type, is the error type, and the trait's `Send + Sync` bound on it
/// is not reported again at the invocation; otherwise the type is exactly
/// the tuple (which is what rustdoc shows: the generated impl gives it as
/// the plain tuple under `cfg(doc)`).
pub trait Vouched<C: ?Sized> {
    /// `Self`.
    type Is: ?Sized;
}

impl<T: ?Sized, C: ?Sized> Vouched<C> for T {
    type Is = T;
}

/// A checked node value on its way from a pipelined run's first stage to
/// its second, on another thread.
pub struct Crossing<T>(T);

// SAFETY: a `Crossing<T>` is only made by `Proof::cross`, and a `Proof<T>`
// (its field is private) only by `ParallelProbe`'s `ParallelOk` impl, which
// requires `T: Send + Sync`, or by `ParallelRefused`'s method, which requires
// `T: ParallelValue`, a sealed trait no type implements.
unsafe impl<T> Send for Crossing<T> {}

impl<T> Crossing<T> {
    /// The value, on the thread it crossed to.
    #[inline(always)]
    pub fn into_inner(self) -> T {
        self.0
    }
}

/// The observer of a pipelined run's stages: the nodes' and fused groups'
/// events, from the thread running each stage, to the run's shared
/// observer (if any). A frame's own events are the engine's
/// (`runtime::pipelined`): it reports them around each frame's second
/// stage, one frame at a time, whereas the stages of two frames interleave.
pub struct StageObserver<'a, O>(Option<&'a SharedObserver<'a, O>>);

// Copied into both stages' closures; only a reference inside.
impl<O> Clone for StageObserver<'_, O> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<O> Copy for StageObserver<'_, O> {}

impl<'a, O: crate::runtime::observe::Observer> StageObserver<'a, O> {
    /// Reports the stages' node events to `shared`, or nothing.
    #[inline]
    pub fn new(shared: Option<&'a SharedObserver<'a, O>>) -> Self {
        StageObserver(shared)
    }

    /// Does nothing: the engine reports frames.
    #[inline(always)]
    pub fn frame_begin(
        &self,
        _ir: &'static crate::model::ir::GraphIr,
        _plan: &crate::model::plan::Plan,
    ) {
    }

    /// Does nothing: the engine reports frames.
    #[inline(always)]
    pub fn frame_end(&self, _ok: bool) {}

    /// See [`Observer::node_begin`](crate::runtime::observe::Observer::node_begin).
    #[inline]
    pub fn node_begin(&self, node: crate::model::ir::NodeId) {
        if let Some(o) = self.0 {
            o.node_begin(node);
        }
    }

    /// See [`Observer::node_end`](crate::runtime::observe::Observer::node_end).
    #[inline]
    pub fn node_end(&self, node: crate::model::ir::NodeId) {
        if let Some(o) = self.0 {
            o.node_end(node);
        }
    }

    /// See [`Observer::group_begin`](crate::runtime::observe::Observer::group_begin).
    #[inline]
    pub fn group_begin(&self, members: &'static [crate::model::ir::NodeId]) {
        if let Some(o) = self.0 {
            o.group_begin(members);
        }
    }

    /// See [`Observer::group_end`](crate::runtime::observe::Observer::group_end).
    #[inline]
    pub fn group_end(&self, fused: bool) {
        if let Some(o) = self.0 {
            o.group_end(fused);
        }
    }
}

pub use super::heap::{Probe, ViaHeapBytes, ViaInlineSize};
pub use super::strip::form::{try_run, PlaneValue, StripForm};
pub use super::strip::group::Value as GroupValue;
pub use super::strip::GroupBuilder;

use super::strip::{FusedGroup, StripError};
use crate::weights::Weights;
use std::marker::PhantomData;

/// What a buffer-filling node's declared type must be: the pipeline creates
/// its buffers with `Default::default()`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is the type of a buffer the pipeline owns (a node filling `&mut name`), and buffers are created with `Default::default()`: it must implement `Default`",
    label = "this buffer type has no `Default`"
)]
pub trait BufferType: Sized {
    /// The empty buffer.
    fn new_buffer() -> Self;
}

impl<T: Default> BufferType for T {
    #[inline]
    fn new_buffer() -> Self {
        T::default()
    }
}

/// A new, empty buffer of a declared type.
#[inline]
pub fn new_buffer<T: BufferType>() -> T {
    T::new_buffer()
}

/// The type of a rated node's value (`where node every k`), which the
/// pipeline keeps between frames in a slot of its own. A rated node that
/// fills a buffer is checked as a buffer ([`BufferType`]), so its type
/// without `Default` is one error.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is the type of a rated node, whose value the pipeline keeps between frames in a slot created with `Default::default()`: it must implement `Default`",
    label = "this rated node's type has no `Default`",
    note = "derive or implement `Default` for it, or remove the node's rate (`where … every k`)"
)]
pub trait HeldType: Sized {
    /// The empty slot.
    fn new_held() -> Self;
}

impl<T: Default> HeldType for T {
    #[inline]
    fn new_held() -> Self {
        T::default()
    }
}

/// A new, empty slot for a rated node's value.
#[inline]
pub fn new_held<T: HeldType>() -> T {
    T::new_held()
}

/// One fused group of one plan in a pipeline: built on its first fused
/// run, kept (with its worker scratch) for the next frames; built again
/// when the weights it was built with change (a weighted member, such as
/// score fusion, takes them when it joins the group).
#[derive(Debug, Default)]
pub struct FusionSlot {
    group: Option<FusedGroup>,
    /// The weights the group (or the refusal) was built with.
    weights: Option<Weights>,
    /// Building failed: the plan runs this group unfused until the weights
    /// change.
    refused: bool,
}

impl FusionSlot {
    /// The group, built by `build` with `weights` on first use or when the
    /// weights differ from the last build's; `None` when fusion is off or
    /// building failed. A mode's weights never change, so its groups are
    /// built once; weights given at run time rebuild them only on a change.
    pub fn get(
        &mut self,
        on: bool,
        weights: &Weights,
        build: impl FnOnce(&mut GroupBuilder) -> Result<(), StripError>,
    ) -> Option<&mut FusedGroup> {
        if !on {
            return None;
        }
        if self.weights.as_ref() != Some(weights) {
            self.group = None;
            self.refused = false;
            self.weights = Some(weights.clone());
        }
        if self.refused {
            return None;
        }
        if self.group.is_none() {
            let mut b = GroupBuilder::new();
            match build(&mut b).and_then(|()| b.build()) {
                Ok(g) => self.group = Some(g),
                Err(_) => {
                    self.refused = true;
                    return None;
                }
            }
        }
        self.group.as_mut()
    }
}
