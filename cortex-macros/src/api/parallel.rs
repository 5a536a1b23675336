//! What `#[parallel]` adds: `run_stream` and `run_stream_with`, the
//! deprecated `run_parallel`, `run_weights_parallel` and `run_plan_parallel`
//! (and their `_into` and `_observed` forms) and `run_stream_tagged`,
//! `run_stream_into`, `run_stream_tagged_observed`, and
//! `cortex::ParallelPipeline`; without the attribute, stubs whose call is
//! one error saying to add it.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use super::context::Api;
use crate::codegen::{parallel_check, Check, Probe};

/// The parallel run methods of the inherent impl (or the stubs).
pub(super) fn methods(cx: &Api<'_>) -> TokenStream {
    let (ast, c) = (cx.ast, &cx.c);
    let (mode_ty, outputs_ty) = (&cx.n.mode, &cx.n.outputs);
    let (params, args, params_c, args_c) = (&cx.params, &cx.args, &cx.params_c, &cx.args_c);
    let input_tys = &cx.input_tys;
    if ast.parallel {
        let dispatch = cx.pick(|b| &b.run_parallel_observed);
        let fresh = cx.body(|| {
            quote! {
                let mut __slot = ::core::option::Option::None;
                self.__run_parallel(mode, observer, #c::__private::Sink::Fresh(&mut __slot), #args)?;
                match __slot {
                    ::core::option::Option::Some(__outputs) => ::core::result::Result::Ok(__outputs),
                    ::core::option::Option::None => ::core::result::Result::Err(#c::PipelineError::Internal("a run returned no outputs")),
                }
            }
        });
        let stream = cx.pick(|b| &b.run_stream);
        // One frame's result, untagged and tagged.
        let frame_unit = quote!(#c::stream::StreamFrame<(#(#input_tys,)*), #outputs_ty, ()>);
        let frame_t = quote!(#c::stream::StreamFrame<(#(#input_tys,)*), #outputs_ty, __T>);
        let into = cx.body(
            || quote!(self.__run_parallel(mode, observer, #c::__private::Sink::into_all(outputs), #args)),
        );
        let fresh_of = |f: fn(&crate::codegen::Bodies) -> &TokenStream| {
            let body = cx.pick(f);
            cx.body(|| {
                quote! {
                    let mut __slot = ::core::option::Option::None;
                    {
                        let __sink = #c::__private::Sink::Fresh(&mut __slot);
                        #body
                    }?;
                    match __slot {
                        ::core::option::Option::Some(__outputs) => ::core::result::Result::Ok(__outputs),
                        ::core::option::Option::None => ::core::result::Result::Err(#c::PipelineError::Internal("a run returned no outputs")),
                    }
                }
            })
        };
        let into_of = |f: fn(&crate::codegen::Bodies) -> &TokenStream| {
            let body = cx.pick(f);
            cx.body(|| {
                quote! {
                    let __sink = #c::__private::Sink::into_all(outputs);
                    #body
                }
            })
        };
        // A stream function's body: the frames, the result callback and the
        // observer the engine gets. Wholly a placeholder for an invalid
        // pipeline: a callback whose `None` nothing reads would leave its
        // type to infer, an error of its own.
        let stream_body = |frames: TokenStream, on_result: TokenStream, observer: TokenStream| {
            cx.body(|| {
                quote! {
                    let frames = #frames;
                    let mut on_result = on_result;
                    let on_result = #on_result;
                    let __observer = #observer;
                    #stream
                }
            })
        };
        let no_observer = quote!(::core::option::Option::<&mut #c::NoopObserver>::None);
        let tagged =
            quote!(move |__frame: #frame_t| (on_result(__frame), ::core::option::Option::None));
        let stream_fresh = stream_body(
            quote!(frames.into_iter().map(|__inputs| ((), __inputs))),
            quote!(move |__frame: #frame_unit| (on_result(__frame), ::core::option::Option::None)),
            no_observer.clone(),
        );
        let stream_tagged = stream_body(
            quote!(frames.into_iter()),
            tagged.clone(),
            no_observer.clone(),
        );
        let stream_into = stream_body(
            quote!(frames.into_iter()),
            quote! {
                move |mut __frame: #frame_t| {
                    let __flow = on_result(&mut __frame);
                    (__flow, __frame.result.ok())
                }
            },
            no_observer,
        );
        let stream_observed = stream_body(
            quote!(frames.into_iter()),
            tagged,
            quote!(::core::option::Option::Some(observer)),
        );
        let stream_with_body = cx.pick(|b| &b.run_stream_with);
        let stream_with = cx.body(|| {
            quote! {
                let mode = match run.select {
                    #c::run::Select::Mode(mode) => mode,
                    _ => return ::core::result::Result::Err(#c::stream::StreamError::NotAMode),
                };
                let __read = run.outputs;
                let frames = frames.into_iter();
                let mut on_result = on_result;
                let on_result = move |mut __frame: #frame_t| {
                    let __flow = on_result(&mut __frame);
                    (__flow, __frame.result.ok())
                };
                let __observer = run.observer();
                #stream_with_body
            }
        });
        let dep_run_parallel =
            cx.deprecated("use run_with_fresh(&mut Run::mode(mode).parallel(), inputs…)");
        let dep_run_parallel_observed = cx.deprecated(
            "use run_with_fresh(&mut Run::mode(mode).parallel().observed(observer), inputs…)",
        );
        let dep_run_parallel_into =
            cx.deprecated("use run_with(&mut Run::mode(mode).parallel(), inputs…, outputs)");
        let dep_run_parallel_into_observed = cx.deprecated(
            "use run_with(&mut Run::mode(mode).parallel().observed(observer), inputs…, outputs)",
        );
        let dep_run_weights_parallel =
            cx.deprecated("use run_with_fresh(&mut Run::weights(weights).parallel(), inputs…)");
        let dep_run_weights_parallel_observed = cx.deprecated(
            "use run_with_fresh(&mut Run::weights(weights).parallel().observed(observer), inputs…)",
        );
        let dep_run_weights_parallel_into =
            cx.deprecated("use run_with(&mut Run::weights(weights).parallel(), inputs…, outputs)");
        let dep_run_weights_parallel_into_observed = cx.deprecated("use run_with(&mut Run::weights(weights).parallel().observed(observer), inputs…, outputs)");
        let dep_run_plan_parallel =
            cx.deprecated("use run_with_fresh(&mut Run::plan(plan, weights).parallel(), inputs…)");
        let dep_run_plan_parallel_observed = cx.deprecated("use run_with_fresh(&mut Run::plan(plan, weights).parallel().observed(observer), inputs…)");
        let dep_run_plan_parallel_into = cx
            .deprecated("use run_with(&mut Run::plan(plan, weights).parallel(), inputs…, outputs)");
        let dep_run_plan_parallel_into_observed = cx.deprecated("use run_with(&mut Run::plan(plan, weights).parallel().observed(observer), inputs…, outputs)");
        let dep_run_stream_tagged = cx.deprecated("use run_stream_with(&mut Run::mode(mode), frames, options, |frame| …): on_result gets &mut StreamFrame; keep its outputs with frame.take_result()");
        let dep_run_stream_into = cx.deprecated(
            "use run_stream_with(&mut Run::mode(mode), frames, options, on_result): the same call",
        );
        let dep_run_stream_tagged_observed = cx.deprecated("use run_stream_with(&mut Run::mode(mode).observed(observer), frames, options, |frame| …): on_result gets &mut StreamFrame; keep its outputs with frame.take_result()");
        let weights_fresh = fresh_of(|b| &b.run_weights_parallel);
        let weights_into = into_of(|b| &b.run_weights_parallel);
        let plan_fresh = fresh_of(|b| &b.run_plan_parallel);
        let plan_into = into_of(|b| &b.run_plan_parallel);
        quote! {
            /// Runs one frame in `mode` with independent nodes at once on the
            /// engine's persistent worker pool (a wave of nodes whose inputs
            /// are ready runs together). The outputs and the state are
            /// bit-identical to [`Self::run`]'s. A failing frame leaves the
            /// state as it was and is run again sequentially (unobserved), so
            /// the error is exactly the one [`Self::run`] reports.
            #dep_run_parallel
            pub fn run_parallel(&mut self, mode: #mode_ty, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                self.run_parallel_observed(mode, &mut #c::NoopObserver, #args)
            }

            /// [`Self::run_parallel`], reporting each node to `observer` from
            /// the thread that runs it (one event at a time, under a lock).
            #dep_run_parallel_observed
            pub fn run_parallel_observed<__O: #c::Observer + ::core::marker::Send>(&mut self, mode: #mode_ty, observer: &mut __O, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                #fresh
            }

            /// [`Self::run_parallel`] into `outputs` of an earlier frame,
            /// reusing their memory (see [`Self::run_into`]).
            #dep_run_parallel_into
            pub fn run_parallel_into(&mut self, mode: #mode_ty, #params_c outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
                self.run_parallel_into_observed(mode, &mut #c::NoopObserver, #args_c outputs)
            }

            /// [`Self::run_parallel_into`], reporting each node to `observer`.
            #dep_run_parallel_into_observed
            pub fn run_parallel_into_observed<__O: #c::Observer + ::core::marker::Send>(&mut self, mode: #mode_ty, observer: &mut __O, #params_c outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
                #into
            }

            /// [`Self::run_weights`] with independent nodes at once on the
            /// worker pool: weights whose zero pattern is a declared
            /// mode's run that mode's parallel function (its fused groups
            /// included) with these weights; any other pattern runs its
            /// plan wave by wave over the full graph's waves, each node
            /// skipped when the plan leaves it out. Outputs and state are
            /// bit-identical to [`Self::run_weights`]'s, and a failing frame
            /// is run again sequentially for its error, as in
            /// [`Self::run_parallel`].
            #dep_run_weights_parallel
            pub fn run_weights_parallel(&mut self, weights: &#c::Weights, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                self.run_weights_parallel_observed(weights, &mut #c::NoopObserver, #args)
            }

            /// [`Self::run_weights_parallel`], reporting each node to
            /// `observer` from the thread that runs it.
            #dep_run_weights_parallel_observed
            pub fn run_weights_parallel_observed<__O: #c::Observer + ::core::marker::Send>(&mut self, weights: &#c::Weights, observer: &mut __O, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                #weights_fresh
            }

            /// [`Self::run_weights_parallel`] into `outputs` of an earlier
            /// frame, reusing their memory (see [`Self::run_into`]).
            #dep_run_weights_parallel_into
            pub fn run_weights_parallel_into(&mut self, weights: &#c::Weights, #params_c outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
                self.run_weights_parallel_into_observed(weights, &mut #c::NoopObserver, #args_c outputs)
            }

            /// [`Self::run_weights_parallel_into`], reporting each node to
            /// `observer`.
            #dep_run_weights_parallel_into_observed
            pub fn run_weights_parallel_into_observed<__O: #c::Observer + ::core::marker::Send>(&mut self, weights: &#c::Weights, observer: &mut __O, #params_c outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
                #weights_into
            }

            /// [`Self::run_plan`] with independent nodes at once on the
            /// worker pool, wave by wave over the full graph's waves (each
            /// node skipped when `plan` leaves it out). The plan is validated
            /// first, as in [`Self::run_plan`]; outputs and state are
            /// bit-identical to its.
            #dep_run_plan_parallel
            pub fn run_plan_parallel(&mut self, plan: &#c::plan::Plan, weights: &#c::Weights, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                self.run_plan_parallel_observed(plan, weights, &mut #c::NoopObserver, #args)
            }

            /// [`Self::run_plan_parallel`], reporting each node to
            /// `observer` from the thread that runs it.
            #dep_run_plan_parallel_observed
            pub fn run_plan_parallel_observed<__O: #c::Observer + ::core::marker::Send>(&mut self, plan: &#c::plan::Plan, weights: &#c::Weights, observer: &mut __O, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                #plan_fresh
            }

            /// [`Self::run_plan_parallel`] into `outputs` of an earlier
            /// frame, reusing their memory (see [`Self::run_into`]).
            #dep_run_plan_parallel_into
            pub fn run_plan_parallel_into(&mut self, plan: &#c::plan::Plan, weights: &#c::Weights, #params_c outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
                self.run_plan_parallel_into_observed(plan, weights, &mut #c::NoopObserver, #args_c outputs)
            }

            /// [`Self::run_plan_parallel_into`], reporting each node to
            /// `observer`.
            #dep_run_plan_parallel_into_observed
            pub fn run_plan_parallel_into_observed<__O: #c::Observer + ::core::marker::Send>(&mut self, plan: &#c::plan::Plan, weights: &#c::Weights, observer: &mut __O, #params_c outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
                #plan_into
            }

            /// Runs a stream of frames in `mode`, pipelined: while one frame's
            /// state readers and what follows them run, the next frame's
            /// state-free nodes already run on the pool. Frames come from
            /// `frames`, pulled on a producer thread into a bounded queue
            /// (`options`: frames in flight, queue length, and what to do when
            /// it is full: wait, or drop the oldest waiting frame or all but
            /// the latest, counted). Each result reaches `on_result` in order,
            /// with its inputs, index and the frames dropped before it;
            /// return `ControlFlow::Break(())` to stop. Outputs and state are
            /// bit-identical to [`Self::run`] on the frames that were not
            /// dropped; a failing frame fails alone, and later frames see the
            /// state of the last good one.
            pub fn run_stream<__I, __F>(&mut self, mode: #mode_ty, frames: __I, options: &#c::stream::StreamOptions, on_result: __F) -> ::core::result::Result<#c::stream::StreamReport, #c::stream::StreamError>
            where
                __I: ::core::iter::IntoIterator<Item = (#(#input_tys,)*)>,
                __I::IntoIter: ::core::marker::Send,
                __F: ::core::ops::FnMut(#c::stream::StreamFrame<(#(#input_tys,)*), #outputs_ty>) -> ::core::ops::ControlFlow<()>,
            {
                #stream_fresh
            }

            /// [`Self::run_stream`] with a value of yours carried with each
            /// frame: `frames` yields `(tag, inputs)`, and each frame's tag
            /// comes back with that frame's own result in
            /// [`StreamFrame::tag`](#c::stream::StreamFrame::tag), whether
            /// it succeeded or failed (e.g. a frame's number, timestamp or
            /// the rest of a decoded picture the pipeline does not read).
            /// The tag of a frame that is never delivered (dropped by the
            /// overflow policy, or discarded after `Break` or a panicking
            /// `on_result`) is dropped with its inputs. The memory budget
            /// counts the inputs only.
            #dep_run_stream_tagged
            pub fn run_stream_tagged<__T: ::core::marker::Send, __I, __F>(&mut self, mode: #mode_ty, frames: __I, options: &#c::stream::StreamOptions, on_result: __F) -> ::core::result::Result<#c::stream::StreamReport, #c::stream::StreamError>
            where
                __I: ::core::iter::IntoIterator<Item = (__T, (#(#input_tys,)*))>,
                __I::IntoIter: ::core::marker::Send,
                __F: ::core::ops::FnMut(#c::stream::StreamFrame<(#(#input_tys,)*), #outputs_ty, __T>) -> ::core::ops::ControlFlow<()>,
            {
                #stream_tagged
            }

            /// [`Self::run_stream_tagged`] whose outputs are reused, as
            /// [`Self::run_into`] reuses them: `on_result` borrows each
            /// frame, and the outputs still in its `result` when it returns
            /// are what a later frame runs into (its filled outputs trade
            /// buffers with the pipeline), so a stream allocates no
            /// outputs. Take what you keep: the tag and inputs with
            /// `std::mem::take` or `replace` (what is left is dropped after
            /// the callback), the outputs with
            /// [`StreamFrame::take_result`](#c::stream::StreamFrame::take_result)
            /// (a later frame then makes new ones). Outputs and state are
            /// bit-identical to [`Self::run_stream`]'s.
            #dep_run_stream_into
            pub fn run_stream_into<__T: ::core::marker::Send, __I, __F>(&mut self, mode: #mode_ty, frames: __I, options: &#c::stream::StreamOptions, on_result: __F) -> ::core::result::Result<#c::stream::StreamReport, #c::stream::StreamError>
            where
                __I: ::core::iter::IntoIterator<Item = (__T, (#(#input_tys,)*))>,
                __I::IntoIter: ::core::marker::Send,
                __F: ::core::ops::FnMut(&mut #c::stream::StreamFrame<(#(#input_tys,)*), #outputs_ty, __T>) -> ::core::ops::ControlFlow<()>,
            {
                #stream_into
            }

            /// Runs a stream of frames pipelined as `run` says: its mode
            /// (weights or a plan chosen at run time are refused with
            /// [`StreamError::NotAMode`](#c::stream::StreamError::NotAMode):
            /// run those frame by frame with `run_with`), its observer (as
            /// in [`Self::run_stream_tagged_observed`]) and the outputs it
            /// reads. A stream always runs pipelined: `run`'s engine is not
            /// read. Outputs are reused as in [`Self::run_stream_into`]:
            /// `on_result` borrows each frame, and the outputs left in its
            /// `result` are what a later frame runs into. Reading only some
            /// outputs runs only their producers (the mode's plan cut down
            /// to them, unfused, over the full graph's two stages) and
            /// leaves the others as they were in the outputs a frame runs
            /// into; a frame with none to run into (the first ones, or after
            /// [`StreamFrame::take_result`](#c::stream::StreamFrame::take_result))
            /// makes every output. Reading every output, or a rated mode
            /// (whose phases only its own stages know), runs the mode's own
            /// pipelined stages. Outputs read and state are bit-identical to
            /// [`Self::run`]'s on the frames that were not dropped.
            pub fn run_stream_with<__O: #c::Observer + ::core::marker::Send, __T: ::core::marker::Send, __I, __F>(&mut self, run: &mut #c::run::Run<'_, #mode_ty, __O>, frames: __I, options: &#c::stream::StreamOptions, on_result: __F) -> ::core::result::Result<#c::stream::StreamReport, #c::stream::StreamError>
            where
                __I: ::core::iter::IntoIterator<Item = (__T, (#(#input_tys,)*))>,
                __I::IntoIter: ::core::marker::Send,
                __F: ::core::ops::FnMut(&mut #c::stream::StreamFrame<(#(#input_tys,)*), #outputs_ty, __T>) -> ::core::ops::ControlFlow<()>,
            {
                #stream_with
            }

            /// [`Self::run_stream_tagged`], reporting to `observer` each
            /// node (and fused group) of both stages, from the thread that
            /// runs it, and each frame's `frame_begin` / `frame_end` around
            /// its second stage (which runs one frame at a time, so frames
            /// never overlap; the next frame's first-stage nodes may be
            /// reported meanwhile). Events arrive one at a time, under a
            /// lock, as in [`Self::run_parallel_observed`]; a failing frame's
            /// rerun is not observed.
            #dep_run_stream_tagged_observed
            pub fn run_stream_tagged_observed<__O: #c::Observer + ::core::marker::Send, __T: ::core::marker::Send, __I, __F>(&mut self, mode: #mode_ty, observer: &mut __O, frames: __I, options: &#c::stream::StreamOptions, on_result: __F) -> ::core::result::Result<#c::stream::StreamReport, #c::stream::StreamError>
            where
                __I: ::core::iter::IntoIterator<Item = (__T, (#(#input_tys,)*))>,
                __I::IntoIter: ::core::marker::Send,
                __F: ::core::ops::FnMut(#c::stream::StreamFrame<(#(#input_tys,)*), #outputs_ty, __T>) -> ::core::ops::ControlFlow<()>,
            {
                #stream_observed
            }

            #[allow(clippy::needless_pass_by_value)]
            fn __run_parallel<__O: #c::Observer + ::core::marker::Send>(&mut self, mode: #mode_ty, observer: &mut __O, __sink: #c::__private::Sink<'_, #outputs_ty>, #params) -> ::core::result::Result<(), #c::PipelineError> {
                #dispatch
            }
        }
    } else {
        // Spanned at the pipeline's name, where `#[parallel]` goes.
        let at = ast.name.span();
        quote_spanned! {at=>
            /// Only a `#[parallel]` pipeline runs frames in parallel: calling
            /// this is a compile error saying to add the attribute.
            #[doc(hidden)]
            pub fn run_parallel<__M: #c::__private::DeclaredParallel>(&mut self, mode: __M, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                match mode.never() {}
            }

            /// Only a `#[parallel]` pipeline runs frames in parallel: calling
            /// this is a compile error saying to add the attribute.
            #[doc(hidden)]
            pub fn run_weights_parallel<__W: #c::__private::DeclaredParallel>(&mut self, weights: __W, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                match weights.never() {}
            }

            /// Only a `#[parallel]` pipeline runs frames in parallel: calling
            /// this is a compile error saying to add the attribute.
            #[doc(hidden)]
            pub fn run_plan_parallel<__P: #c::__private::DeclaredParallel>(&mut self, plan: __P, weights: &#c::Weights, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                match plan.never() {}
            }

            /// Only a `#[parallel]` pipeline runs a stream pipelined: calling
            /// this is a compile error saying to add the attribute.
            #[doc(hidden)]
            pub fn run_stream<__M: #c::__private::DeclaredParallel, __I, __F>(&mut self, mode: __M, frames: __I, options: &#c::stream::StreamOptions, on_result: __F) -> ::core::result::Result<#c::stream::StreamReport, #c::stream::StreamError> {
                match mode.never() {}
            }

            /// Only a `#[parallel]` pipeline runs a stream pipelined: calling
            /// this is a compile error saying to add the attribute.
            #[doc(hidden)]
            pub fn run_stream_tagged<__M: #c::__private::DeclaredParallel, __I, __F>(&mut self, mode: __M, frames: __I, options: &#c::stream::StreamOptions, on_result: __F) -> ::core::result::Result<#c::stream::StreamReport, #c::stream::StreamError> {
                match mode.never() {}
            }

            /// Only a `#[parallel]` pipeline runs a stream pipelined: calling
            /// this is a compile error saying to add the attribute.
            #[doc(hidden)]
            pub fn run_stream_tagged_observed<__M: #c::__private::DeclaredParallel, __O, __I, __F>(&mut self, mode: __M, observer: &mut __O, frames: __I, options: &#c::stream::StreamOptions, on_result: __F) -> ::core::result::Result<#c::stream::StreamReport, #c::stream::StreamError> {
                match mode.never() {}
            }

            /// Only a `#[parallel]` pipeline runs a stream pipelined: calling
            /// this is a compile error saying to add the attribute.
            #[doc(hidden)]
            pub fn run_stream_with<__R: #c::__private::DeclaredParallel, __I, __F>(&mut self, run: __R, frames: __I, options: &#c::stream::StreamOptions, on_result: __F) -> ::core::result::Result<#c::stream::StreamReport, #c::stream::StreamError> {
                match run.never() {}
            }

            /// Only a `#[parallel]` pipeline runs a stream pipelined: calling
            /// this is a compile error saying to add the attribute.
            #[doc(hidden)]
            pub fn run_stream_into<__M: #c::__private::DeclaredParallel, __I, __F>(&mut self, mode: __M, frames: __I, options: &#c::stream::StreamOptions, on_result: __F) -> ::core::result::Result<#c::stream::StreamReport, #c::stream::StreamError> {
                match mode.never() {}
            }
        }
    }
}

/// `impl cortex::ParallelPipeline` (`#[parallel]` pipelines only).
pub(super) fn trait_impl(cx: &Api<'_>) -> TokenStream {
    let c = &cx.c;
    let (pipeline, mode_ty, outputs_ty) = (&cx.n.pipeline, &cx.n.mode, &cx.n.outputs);
    let (args, args_c) = (&cx.args, &cx.args_c);
    let (input_names, input_tys) = (&cx.input_names, &cx.input_tys);
    if cx.ast.parallel {
        let owned = owned_inputs(cx);
        quote! {
            // Each method calls the inherent one of the same name,
            // deprecated ones included: that must not warn in the user's crate.
            #[allow(deprecated)]
            impl #c::ParallelPipeline for #pipeline {
                // Rustdoc shows the tuple, which it is.
                #[cfg(doc)]
                type OwnedInputs = (#(#input_tys,)*);
                #[cfg(not(doc))]
                type OwnedInputs = #owned;
                fn run_stream_tagged<__T: ::core::marker::Send, __I, __F>(&mut self, mode: #mode_ty, frames: __I, options: &#c::stream::StreamOptions, on_result: __F) -> ::core::result::Result<#c::stream::StreamReport, #c::stream::StreamError>
                where
                    __I: ::core::iter::IntoIterator<Item = (__T, (#(#input_tys,)*))>,
                    __I::IntoIter: ::core::marker::Send,
                    __F: ::core::ops::FnMut(#c::stream::StreamFrame<(#(#input_tys,)*), #outputs_ty, __T>) -> ::core::ops::ControlFlow<()>,
                {
                    #pipeline::run_stream_tagged(self, mode, frames, options, on_result)
                }
                fn run_stream_into<__T: ::core::marker::Send, __I, __F>(&mut self, mode: #mode_ty, frames: __I, options: &#c::stream::StreamOptions, on_result: __F) -> ::core::result::Result<#c::stream::StreamReport, #c::stream::StreamError>
                where
                    __I: ::core::iter::IntoIterator<Item = (__T, (#(#input_tys,)*))>,
                    __I::IntoIter: ::core::marker::Send,
                    __F: ::core::ops::FnMut(&mut #c::stream::StreamFrame<(#(#input_tys,)*), #outputs_ty, __T>) -> ::core::ops::ControlFlow<()>,
                {
                    #pipeline::run_stream_into(self, mode, frames, options, on_result)
                }
                fn run_stream_tagged_observed<__O: #c::Observer + ::core::marker::Send, __T: ::core::marker::Send, __I, __F>(&mut self, mode: #mode_ty, observer: &mut __O, frames: __I, options: &#c::stream::StreamOptions, on_result: __F) -> ::core::result::Result<#c::stream::StreamReport, #c::stream::StreamError>
                where
                    __I: ::core::iter::IntoIterator<Item = (__T, (#(#input_tys,)*))>,
                    __I::IntoIter: ::core::marker::Send,
                    __F: ::core::ops::FnMut(#c::stream::StreamFrame<(#(#input_tys,)*), #outputs_ty, __T>) -> ::core::ops::ControlFlow<()>,
                {
                    #pipeline::run_stream_tagged_observed(self, mode, observer, frames, options, on_result)
                }
                fn run_stream_with<__O: #c::Observer + ::core::marker::Send, __T: ::core::marker::Send, __I, __F>(&mut self, run: &mut #c::run::Run<'_, #mode_ty, __O>, frames: __I, options: &#c::stream::StreamOptions, on_result: __F) -> ::core::result::Result<#c::stream::StreamReport, #c::stream::StreamError>
                where
                    __I: ::core::iter::IntoIterator<Item = (__T, (#(#input_tys,)*))>,
                    __I::IntoIter: ::core::marker::Send,
                    __F: ::core::ops::FnMut(&mut #c::stream::StreamFrame<(#(#input_tys,)*), #outputs_ty, __T>) -> ::core::ops::ControlFlow<()>,
                {
                    #pipeline::run_stream_with(self, run, frames, options, on_result)
                }
                fn run_parallel_observed<__O: #c::Observer + ::core::marker::Send>(&mut self, mode: #mode_ty, observer: &mut __O, inputs: Self::Inputs<'_>) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                    let (#(#input_names,)*) = inputs;
                    #pipeline::run_parallel_observed(self, mode, observer, #args)
                }
                fn run_parallel_into_observed<__O: #c::Observer + ::core::marker::Send>(&mut self, mode: #mode_ty, observer: &mut __O, inputs: Self::Inputs<'_>, outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
                    let (#(#input_names,)*) = inputs;
                    #pipeline::run_parallel_into_observed(self, mode, observer, #args_c outputs)
                }
                fn run_weights_parallel_observed<__O: #c::Observer + ::core::marker::Send>(&mut self, weights: &#c::Weights, observer: &mut __O, inputs: Self::Inputs<'_>) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                    let (#(#input_names,)*) = inputs;
                    #pipeline::run_weights_parallel_observed(self, weights, observer, #args)
                }
                fn run_plan_parallel_observed<__O: #c::Observer + ::core::marker::Send>(&mut self, plan: &#c::plan::Plan, weights: &#c::Weights, observer: &mut __O, inputs: Self::Inputs<'_>) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                    let (#(#input_names,)*) = inputs;
                    #pipeline::run_plan_parallel_observed(self, plan, weights, observer, #args)
                }
            }
        }
    } else {
        TokenStream::new()
    }
}

/// `ParallelPipeline::OwnedInputs`: the inputs' tuple, through
/// `cortex::__private::Vouched` with each input's check in a constant (see
/// there). The checks are the run functions' own (`codegen::parallel_check`
/// of the input's type, at its name), so that rustc, seeing the same error
/// at the same place, reports it once. They sit in a
/// closure that is never called: a constant may not call them.
fn owned_inputs(cx: &Api<'_>) -> TokenStream {
    let c = &cx.c;
    let input_tys = &cx.input_tys;
    let checks = cx.ast.inputs.iter().map(|i| {
        let ty = &i.ty;
        let check = parallel_check(Probe::Type(quote!(#ty)), Check::Input, i.name.span());
        quote!(let _ = #check;)
    });
    quote! {
        <(#(#input_tys,)*) as #c::__private::Vouched<[(); {
            let _ = || { #(#checks)* };
            0
        }]>>::Is
    }
}
