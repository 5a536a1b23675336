//! What `#[parallel]` adds: `run_stream` and `run_stream_with`, the private
//! parallel functions `run_with_fresh` calls for `Run::parallel()`, and
//! `cortex::ParallelPipeline`; without the attribute, stubs whose call is
//! one error saying to add it.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use super::context::Api;
use crate::codegen::{parallel_check, Check, Probe};

/// The parallel run methods of the inherent impl (or the stubs).
pub(super) fn methods(cx: &Api<'_>) -> TokenStream {
    if cx.ast.parallel {
        let stream = stream_methods(cx);
        let fresh = fresh_fns(cx);
        quote! {
            #stream
            #fresh
        }
    } else {
        stubs(cx)
    }
}

/// A fresh form's body: the run into a new outputs slot by `body` (which
/// sends its outputs to `__sink`), then the outputs.
fn fresh_of(cx: &Api<'_>, f: fn(&crate::codegen::Bodies) -> &TokenStream) -> TokenStream {
    let c = &cx.c;
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
}

/// `run_stream`'s body: the frames, the result callback and the observer
/// the engine gets. Wholly a placeholder for an invalid pipeline: a
/// callback whose `None` nothing reads would leave its type to infer, an
/// error of its own.
fn stream_fresh(cx: &Api<'_>) -> TokenStream {
    let c = &cx.c;
    let (outputs_ty, input_tys) = (&cx.n.outputs, &cx.input_tys);
    let stream = cx.pick(|b| &b.run_stream);
    // One frame's result, untagged.
    let frame_unit = quote!(#c::stream::StreamFrame<(#(#input_tys,)*), #outputs_ty, ()>);
    cx.body(|| {
        quote! {
            let frames = frames.into_iter().map(|__inputs| ((), __inputs));
            let mut on_result = on_result;
            let on_result = move |__frame: #frame_unit| (on_result(__frame), ::core::option::Option::None);
            let __observer = ::core::option::Option::<&mut #c::NoopObserver>::None;
            #stream
        }
    })
}

/// `run_stream_with`'s body: `run`'s mode (a stream runs declared modes
/// only), the outputs it reads, the tagged result callback and its observer.
fn stream_with(cx: &Api<'_>) -> TokenStream {
    let c = &cx.c;
    let (outputs_ty, input_tys) = (&cx.n.outputs, &cx.input_tys);
    // One frame's result, tagged.
    let frame_t = quote!(#c::stream::StreamFrame<(#(#input_tys,)*), #outputs_ty, __T>);
    let stream_with_body = cx.pick(|b| &b.run_stream_with);
    cx.body(|| {
        quote! {
            let mode = match run.select {
                #c::run::ChoiceRef::Mode(mode) => mode,
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
    })
}

/// `run_stream` and `run_stream_with`.
fn stream_methods(cx: &Api<'_>) -> TokenStream {
    let c = &cx.c;
    let (mode_ty, outputs_ty) = (&cx.n.mode, &cx.n.outputs);
    let input_tys = &cx.input_tys;
    let stream_fresh = stream_fresh(cx);
    let stream_with = stream_with(cx);
    quote! {
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

        /// Runs a stream of frames pipelined as `run` says: its mode
        /// (weights or a plan chosen at run time are refused with
        /// [`StreamError::NotAMode`](#c::stream::StreamError::NotAMode):
        /// run those frame by frame with `run_with`), its observer and the
        /// outputs it reads. The source yields `(tag, inputs)`: each
        /// frame's tag comes back with its own result in
        /// [`StreamFrame::tag`](#c::stream::StreamFrame::tag). The
        /// observer sees each node (and fused group) of both stages from
        /// the thread that runs it, one event at a time under a lock,
        /// and each frame's `frame_begin` / `frame_end` around its
        /// second stage; a failing frame's rerun is not observed. A
        /// stream always runs pipelined: `run`'s engine is not read.
        /// Outputs are reused as [`Self::run_into`] reuses them:
        /// `on_result` borrows each frame, and the outputs left in its
        /// `result` are what a later frame runs into (take what you
        /// keep: the outputs with
        /// [`StreamFrame::take_result`](#c::stream::StreamFrame::take_result),
        /// the tag and inputs with `std::mem::take`). Reading only some
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

    }
}

/// The private parallel functions `run_with_fresh` and `run_with` call.
fn fresh_fns(cx: &Api<'_>) -> TokenStream {
    let c = &cx.c;
    let (mode_ty, outputs_ty) = (&cx.n.mode, &cx.n.outputs);
    let (params, args) = (&cx.params, &cx.args);
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
    let weights_fresh = fresh_of(cx, |b| &b.run_weights_parallel);
    let plan_fresh = fresh_of(cx, |b| &b.run_plan_parallel);
    quote! {
        /// A declared mode's frame with independent nodes at once on the
        /// engine's persistent worker pool (a wave of nodes whose inputs
        /// are ready runs together), into new outputs. The outputs and
        /// the state are bit-identical to [`Self::run`]'s. A failing
        /// frame leaves the state as it was and is run again
        /// sequentially (unobserved), so the error is exactly the one
        /// [`Self::run`] reports.
        fn __run_parallel_fresh<__O: #c::Observer + ::core::marker::Send>(&mut self, mode: #mode_ty, observer: &mut __O, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
            #fresh
        }

        /// Weights chosen at run time with independent nodes at once:
        /// weights whose zero pattern is a declared mode's run that
        /// mode's parallel function (its fused groups included) with
        /// these weights; any other pattern runs its plan wave by wave
        /// over the full graph's waves, each node skipped when the plan
        /// leaves it out.
        fn __run_weights_parallel_fresh<__O: #c::Observer + ::core::marker::Send>(&mut self, weights: &#c::Weights, observer: &mut __O, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
            #weights_fresh
        }

        /// An explicit plan with independent nodes at once, wave by
        /// wave over the full graph's waves, validated first.
        fn __run_plan_parallel_fresh<__O: #c::Observer + ::core::marker::Send>(&mut self, plan: &#c::plan::Plan, weights: &#c::Weights, observer: &mut __O, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
            #plan_fresh
        }

        #[allow(clippy::needless_pass_by_value)]
        fn __run_parallel<__O: #c::Observer + ::core::marker::Send>(&mut self, mode: #mode_ty, observer: &mut __O, __sink: #c::__private::Sink<'_, #outputs_ty>, #params) -> ::core::result::Result<(), #c::PipelineError> {
            #dispatch
        }
    }
}

/// Without `#[parallel]`: stubs whose call is one error saying to add it.
fn stubs(cx: &Api<'_>) -> TokenStream {
    let c = &cx.c;
    // Spanned at the pipeline's name, where `#[parallel]` goes.
    let at = cx.ast.name.span();
    quote_spanned! {at=>
        /// Only a `#[parallel]` pipeline runs a stream pipelined: calling
        /// this is a compile error saying to add the attribute.
        #[doc(hidden)]
        pub fn run_stream<__M: #c::__private::DeclaredParallel, __I, __F>(&mut self, mode: __M, frames: __I, options: &#c::stream::StreamOptions, on_result: __F) -> ::core::result::Result<#c::stream::StreamReport, #c::stream::StreamError> {
            match mode.never() {}
        }

        /// Only a `#[parallel]` pipeline runs a stream pipelined: calling
        /// this is a compile error saying to add the attribute.
        #[doc(hidden)]
        pub fn run_stream_with<__R: #c::__private::DeclaredParallel, __I, __F>(&mut self, run: __R, frames: __I, options: &#c::stream::StreamOptions, on_result: __F) -> ::core::result::Result<#c::stream::StreamReport, #c::stream::StreamError> {
            match run.never() {}
        }
    }
}

/// `impl cortex::ParallelPipeline` (`#[parallel]` pipelines only).
pub(super) fn trait_impl(cx: &Api<'_>) -> TokenStream {
    let c = &cx.c;
    let (pipeline, mode_ty, outputs_ty) = (&cx.n.pipeline, &cx.n.mode, &cx.n.outputs);
    let input_tys = &cx.input_tys;
    if cx.ast.parallel {
        let owned = owned_inputs(cx);
        quote! {
            // Each method calls the inherent one of the same name.
            impl #c::ParallelPipeline for #pipeline {
                // Rustdoc shows the tuple, which it is.
                #[cfg(doc)]
                type OwnedInputs = (#(#input_tys,)*);
                #[cfg(not(doc))]
                type OwnedInputs = #owned;
                fn run_stream_with<__O: #c::Observer + ::core::marker::Send, __T: ::core::marker::Send, __I, __F>(&mut self, run: &mut #c::run::Run<'_, #mode_ty, __O>, frames: __I, options: &#c::stream::StreamOptions, on_result: __F) -> ::core::result::Result<#c::stream::StreamReport, #c::stream::StreamError>
                where
                    __I: ::core::iter::IntoIterator<Item = (__T, (#(#input_tys,)*))>,
                    __I::IntoIter: ::core::marker::Send,
                    __F: ::core::ops::FnMut(&mut #c::stream::StreamFrame<(#(#input_tys,)*), #outputs_ty, __T>) -> ::core::ops::ControlFlow<()>,
                {
                    #pipeline::run_stream_with(self, run, frames, options, on_result)
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
