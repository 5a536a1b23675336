//! The entry points' bodies: each API function's dispatch to the mode's,
//! the parallel or the plan-driven function, the private functions they
//! call, and the stream functions.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

use super::forms::Forms;
use super::plans::Plans;
use super::run_with::run_with_fn;
use crate::ast::PipelineAst;
use crate::names::{local, ItemNames};

/// The bodies [`Forms`] made: per mode its straight-line, parallel and
/// pipelined functions', and the plan-driven ones.
pub(super) struct Made {
    pub(super) mode: Vec<TokenStream>,
    pub(super) parallel: Vec<TokenStream>,
    pub(super) stream: Vec<TokenStream>,
    pub(super) masked: TokenStream,
    pub(super) masked_parallel: Option<TokenStream>,
    pub(super) cut_stream: Option<TokenStream>,
}

/// What every entry point's emitter names: the engine crate's path, the
/// pipeline's items, its inputs as parameters and arguments, and each
/// mode's functions.
pub(super) struct Emit<'a> {
    pub(super) c: &'a TokenStream,
    pub(super) n: &'a ItemNames,
    pub(super) ast: &'a PipelineAst,
    pub(super) variants: Vec<Ident>,
    pub(super) mode_fns: Vec<Ident>,
    pub(super) par_fns: Vec<Ident>,
    pub(super) stream_fns: Vec<Ident>,
    pub(super) params: TokenStream,
    pub(super) args: TokenStream,
    /// `Sink<'_, Outputs>`, the type every run function fills.
    pub(super) sink: TokenStream,
    /// The tuple of the inputs' types.
    pub(super) in_tuple: TokenStream,
}

impl<'a> Emit<'a> {
    pub(super) fn new(
        c: &'a TokenStream,
        n: &'a ItemNames,
        ast: &'a PipelineAst,
        forms: Forms<'_>,
    ) -> Self {
        let Forms {
            variants,
            mode_fns,
            par_fns,
            stream_fns,
            params,
            args,
            ..
        } = forms;
        let outputs_ty = &n.outputs;
        let input_tys: Vec<&syn::Type> = ast.inputs.iter().map(|i| &i.ty).collect();
        Emit {
            c,
            n,
            ast,
            variants,
            mode_fns,
            par_fns,
            stream_fns,
            params,
            args,
            sink: quote!(#c::__private::Sink<'_, #outputs_ty>),
            in_tuple: quote!((#(#input_tys,)*)),
        }
    }

    /// A fresh run's sink: the outputs made in `__slot`.
    pub(super) fn fresh_sink(&self) -> TokenStream {
        let c = self.c;
        quote!(#c::__private::Sink::Fresh(&mut __slot))
    }

    /// The sink of a run into every output of the caller's `outputs`.
    pub(super) fn sink_all(&self) -> TokenStream {
        let c = self.c;
        quote!(#c::__private::Sink::into_all(outputs))
    }

    /// `call` into a fresh `__slot`, returning the outputs it made.
    pub(super) fn fresh(&self, call: TokenStream) -> TokenStream {
        let c = self.c;
        quote! {
            let mut __slot = ::core::option::Option::None;
            #call?;
            match __slot {
                ::core::option::Option::Some(__outputs) => ::core::result::Result::Ok(__outputs),
                ::core::option::Option::None => ::core::result::Result::Err(#c::PipelineError::Internal("a run returned no outputs")),
            }
        }
    }

    /// `run`, after checking the weights and the plan it is given against
    /// the pipeline.
    pub(super) fn checked_plan(&self, run: TokenStream) -> TokenStream {
        quote! {
            weights.zero_pattern(&Self::ir().weight_keys)?;
            plan.validate(Self::ir())?;
            #run
        }
    }

    /// The mode's function of `fns` into `sink`, per mode.
    pub(super) fn mode_match(&self, fns: &[Ident], sink: TokenStream) -> TokenStream {
        let (mode_ty, variants, args) = (&self.n.mode, &self.variants, &self.args);
        quote! {
            match mode {
                #(#mode_ty::#variants => self.#fns(observer, #sink, #mode_ty::#variants.weights(), #args),)*
            }
        }
    }

    /// The plan-driven function `f` with `given` (weights, or a plan and
    /// weights), observed, into `sink`.
    pub(super) fn call_with(&self, f: &str, given: TokenStream, sink: TokenStream) -> TokenStream {
        let (f, args) = (format_ident!("{}", f), &self.args);
        quote!(self.#f(#given, observer, #sink, #args))
    }

    /// `run_stream`: the mode's pipelined function.
    pub(super) fn run_stream(&self) -> TokenStream {
        let (mode_ty, variants, fns) = (&self.n.mode, &self.variants, &self.stream_fns);
        quote! {
            match mode {
                #(#mode_ty::#variants => self.#fns(__observer, frames, options, on_result),)*
            }
        }
    }

    /// `run_with`: the `Run`'s observer taken out.
    pub(super) fn run_with_entry(&self) -> TokenStream {
        let (c, args) = (self.c, &self.args);
        quote! {
            let (__select, __engine, __read) = (run.select, run.engine, run.outputs);
            match run.observer() {
                ::core::option::Option::Some(observer) => self.__run_with(__select, __engine, __read, observer, outputs, #args),
                ::core::option::Option::None => self.__run_with(__select, __engine, __read, &mut #c::NoopObserver, outputs, #args),
            }
        }
    }

    /// `run_stream_with`'s dispatch: every output (or a rated mode) runs
    /// the mode's own stages, a set of outputs the mode's plan cut down to
    /// them.
    pub(super) fn stream_with(&self) -> TokenStream {
        let (c, mode_ty) = (self.c, &self.n.mode);
        let run_stream = self.run_stream();
        quote! {
            let __ir = Self::ir();
            if __read.covers(__ir) || <#mode_ty as #c::PipelineMode>::phase_plans(mode).len() > 1 {
                #run_stream
            } else {
                let __mode_plan = <#mode_ty as #c::PipelineMode>::plan(mode);
                let __plan = self.__plans.get_for(__mode_plan.zero_pattern, __read);
                self.__run_stream_cut(&__plan, __mode_plan, <#mode_ty as #c::PipelineMode>::weights(mode), __read, __observer, frames, options, on_result)
            }
        }
    }

    /// `__run_with`, given whether the pipeline runs sequentially only.
    pub(super) fn run_with_fn(&self, sequential_only: bool) -> TokenStream {
        run_with_fn(
            self.c,
            self.ast,
            &self.mode_fns,
            &self.variants,
            self.n,
            (&self.params, &self.args),
            sequential_only,
        )
    }

    /// The function running weights chosen at run time: a declared mode's
    /// pattern through that mode's function (one of `fns`), any other
    /// through the plan-driven function `run_plan`.
    pub(super) fn run_weights_fn(
        &self,
        plans: &Plans,
        name: &str,
        observer: TokenStream,
        fns: &[Ident],
        run_plan: &str,
    ) -> TokenStream {
        let (c, sink, params, args) = (self.c, &self.sink, &self.params, &self.args);
        let arms = plans
            .program
            .weight_modes
            .iter()
            .filter_map(|(pattern, m)| {
                let f = fns.get(*m)?;
                Some(quote!(#pattern => return self.#f(observer, __sink, weights, #args),))
            });
        let (name, run_plan) = (format_ident!("{}", name), format_ident!("{}", run_plan));
        quote! {
            fn #name<__O: #observer>(&mut self, weights: &#c::Weights, observer: &mut __O, __sink: #sink, #params) -> ::core::result::Result<(), #c::PipelineError> {
                let __pattern = weights.zero_pattern(&Self::ir().weight_keys)?;
                match __pattern {
                    #(#arms)*
                    _ => {}
                }
                let __plan = self.__pattern_plan_checked(__pattern)?;
                self.#run_plan(&__plan, weights, observer, __sink, #args)
            }
        }
    }

    /// The private functions of `#[parallel]` pipelines: the cut stream,
    /// and weights and plans on the pool (empty otherwise).
    pub(super) fn parallel_private(&self, plans: &Plans, made: &Made) -> TokenStream {
        let Some(body) = &made.masked_parallel else {
            return TokenStream::new();
        };
        let (c, sink, params) = (self.c, &self.sink, &self.params);
        let cut_stream = self.cut_stream(made.cut_stream.as_ref());
        let run_weights_parallel = self.run_weights_fn(
            plans,
            "__run_weights_parallel",
            quote!(#c::Observer + ::core::marker::Send),
            &self.par_fns,
            "__run_plan_parallel",
        );
        quote! {
            #cut_stream

            /// [`Self::__run_weights`] on the worker pool.
            #run_weights_parallel

            /// [`Self::__run_plan`] on the worker pool, wave by wave.
            #[allow(unused_variables, unused_mut)]
            fn __run_plan_parallel<__O: #c::Observer + ::core::marker::Send>(&mut self, __plan: &#c::plan::Plan, __weights: &#c::Weights, __observer: &mut __O, mut __sink: #sink, #params) -> ::core::result::Result<(), #c::PipelineError> {
                #body
            }
        }
    }

    /// `__run_stream_cut`, the stream of some outputs only.
    pub(super) fn cut_stream(&self, body: Option<&TokenStream>) -> TokenStream {
        let Some(body) = body else {
            return TokenStream::new();
        };
        let (c, in_tuple, outputs_ty) = (self.c, &self.in_tuple, &self.n.outputs);
        let in_tuple_out = quote!(#c::stream::StreamFrame<#in_tuple, #outputs_ty, __T>);
        quote! {
            /// A stream of `__read` only: the mode's plan cut down to them
            /// (`__plan`), over the full graph's two stages.
            #[allow(unused_variables, unused_mut, clippy::type_complexity, clippy::too_many_arguments)]
            fn __run_stream_cut<__O: #c::Observer + ::core::marker::Send, __T: ::core::marker::Send, __I, __F>(&mut self, __plan: &#c::plan::Plan, __mode_plan: &#c::plan::Plan, __weights: &#c::Weights, __read: #c::OutputSet, __observer: ::core::option::Option<&mut __O>, frames: __I, options: &#c::stream::StreamOptions, on_result: __F) -> ::core::result::Result<#c::stream::StreamReport, #c::stream::StreamError>
            where
                __I: ::core::iter::Iterator<Item = (__T, #in_tuple)> + ::core::marker::Send,
                __F: ::core::ops::FnMut(#in_tuple_out) -> (::core::ops::ControlFlow<()>, ::core::option::Option<#outputs_ty>),
            {
                #body
            }
        }
    }

    /// The private functions, in two parts around `__run_with` (which
    /// comes after the parallel ones), and whether the pipeline runs
    /// sequentially only.
    pub(super) fn private(&self, plans: &Plans, made: Made) -> (TokenStream, bool, TokenStream) {
        let (c, sink, params, in_tuple) = (self.c, &self.sink, &self.params, &self.in_tuple);
        let (outputs_ty, mode_fns, par_fns) = (&self.n.outputs, &self.mode_fns, &self.par_fns);
        let stream_fns = &self.stream_fns;
        let obs = local("__obs", Span::call_site());
        let parallel_private = self.parallel_private(plans, &made);
        let sequential_only = parallel_private.is_empty();
        let run_weights = self.run_weights_fn(
            plans,
            "__run_weights",
            quote!(#c::Observer),
            mode_fns,
            "__run_plan",
        );
        let Made {
            mode: mode_bodies,
            parallel: par_fn_bodies,
            stream: stream_bodies,
            masked: masked_body,
            ..
        } = made;
        let head = quote! {
            #(
                #[inline]
                #[allow(unused_variables, unused_mut)]
                fn #mode_fns<__O: #c::Observer>(&mut self, #obs: &mut __O, __sink: #sink, __weights: &#c::Weights, #params) -> ::core::result::Result<(), #c::PipelineError> {
                    #mode_bodies
                }
            )*

            #(
                #[inline]
                #[allow(unused_variables, unused_mut)]
                fn #par_fns<__O: #c::Observer + ::core::marker::Send>(&mut self, __observer: &mut __O, mut __sink: #sink, __weights: &#c::Weights, #params) -> ::core::result::Result<(), #c::PipelineError> {
                    #par_fn_bodies
                }
            )*

            #(
                #[allow(unused_variables, unused_mut, clippy::type_complexity)]
                fn #stream_fns<__O: #c::Observer + ::core::marker::Send, __T: ::core::marker::Send, __I, __F>(&mut self, __observer: ::core::option::Option<&mut __O>, frames: __I, options: &#c::stream::StreamOptions, on_result: __F) -> ::core::result::Result<#c::stream::StreamReport, #c::stream::StreamError>
                where
                    __I: ::core::iter::Iterator<Item = (__T, #in_tuple)> + ::core::marker::Send,
                    __F: ::core::ops::FnMut(#c::stream::StreamFrame<#in_tuple, #outputs_ty, __T>) -> (::core::ops::ControlFlow<()>, ::core::option::Option<#outputs_ty>),
                {
                    #stream_bodies
                }
            )*

            #parallel_private
        };
        let tail = quote! {
            /// Runs with weights chosen at run time, through the plan of
            /// their zero pattern.
            #run_weights

            /// The plan of a zero pattern from the cache; an error if it
            /// eliminates an output.
            fn __pattern_plan_checked(&mut self, __pattern: u64) -> ::core::result::Result<::std::sync::Arc<#c::plan::Plan>, #c::PipelineError> {
                let __plan = self.__plans.get(__pattern);
                if let ::core::option::Option::Some(&__missing) = __plan.missing_outputs.first() {
                    let output: &'static str = Self::ir().nodes.get(__missing as usize).map_or("?", |n| n.name.as_ref());
                    return ::core::result::Result::Err(#c::PipelineError::OutputEliminated { output });
                }
                ::core::result::Result::Ok(__plan)
            }

            /// Runs a plan already validated against this pipeline.
            #[allow(unused_variables, unused_mut)]
            fn __run_plan<__O: #c::Observer>(&mut self, __plan: &#c::plan::Plan, __weights: &#c::Weights, #obs: &mut __O, __sink: #sink, #params) -> ::core::result::Result<(), #c::PipelineError> {
                #masked_body
            }
        };
        (head, sequential_only, tail)
    }
}
