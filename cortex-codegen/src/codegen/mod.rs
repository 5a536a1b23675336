//! Code generation for a valid pipeline: the bodies of the run functions in
//! the API of [`crate::api`] — one straight-line function per mode with its
//! plan's dead nodes already gone, one plan-driven function for weights and
//! plans chosen at run time, and for `#[parallel]` pipelines the parallel
//! and pipelined forms. The plans they follow are core's lowered program,
//! read in [`plans`]; each form's functions come from [`forms`]; what every
//! emitter reads is [`shape`] and [`site`]; a run function's body is
//! [`body`], one emitter per kind of step: calls on the calling thread
//! ([`calls`]), fused groups ([`groups`], their blocks in [`fused`]),
//! parallel waves of jobs ([`jobs`], the wave statements in [`waves`]);
//! what crosses threads is checked by [`checks`]; where buffers live is
//! [`layout`]; pipelined stages are [`stages`].

mod body;
mod calls;
mod checks;
mod commit;
mod forms;
mod fused;
mod groups;
mod jobs;
mod layout;
mod node;
mod plans;
mod shape;
mod site;
mod stages;
mod stream_cut;
mod waves;

use cortex_core::ir::{GraphIr, NodeId};
use cortex_core::plan::Plan;
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

use crate::ast::PipelineAst;
use crate::names::{local, ItemNames};

pub(crate) use checks::{parallel_check, Check, Probe};
use forms::Forms;
use layout::BufferLayout;
use plans::Plans;
use shape::Cx;
pub use shape::Real;

/// The real bodies of the API's run functions, and the private functions
/// they call.
pub struct Bodies {
    pub run_observed: TokenStream,
    pub run_into_observed: TokenStream,
    pub run_weights_observed: TokenStream,
    pub run_plan_observed: TokenStream,
    /// `__run_parallel`, a mode on the parallel engine (`#[parallel]`
    /// pipelines only).
    pub run_parallel_observed: TokenStream,
    /// `run_stream` (`#[parallel]` pipelines only).
    pub run_stream: TokenStream,
    /// `run_stream_with`'s dispatch after the mode, the outputs read and the
    /// observer are taken out of its `Run` (`#[parallel]` pipelines only).
    pub run_stream_with: TokenStream,
    /// Weights and a plan on the parallel engine, into `__sink`
    /// (`#[parallel]` pipelines only).
    pub run_weights_parallel: TokenStream,
    pub run_plan_parallel: TokenStream,
    /// `run_with`: a `Run` value's selection, engine, observer and outputs.
    pub run_with: TokenStream,
    pub private: TokenStream,
    /// The types of the buffers the pipeline owns (a tuple field).
    pub buffer_types: Vec<syn::Type>,
    /// Per buffer field: its type's text and index among that type's.
    pub buffer_keys: Vec<(String, u32)>,
    /// How many fused groups the modes' plans hold (one slot each).
    pub fusion_slots: usize,
    /// Per rated node (each once): its id and declared type, the pipeline's
    /// held values.
    pub holds: Vec<(NodeId, syn::Type)>,
}

/// The bodies of a valid pipeline's run functions.
pub fn bodies(ast: &PipelineAst, r: &Real<'_>, n: &ItemNames, c: &TokenStream) -> Bodies {
    let plans = Plans::new(ast, r);
    let holds: Vec<(NodeId, syn::Type)> = plans
        .hold_slots()
        .iter()
        .map(|&id| {
            let ty = ast.nodes[id as usize].ty.clone();
            (id, ty.unwrap_or_else(|| syn::parse_quote!(())))
        })
        .collect();
    let layout = BufferLayout::new(ast, r.ir, &plans.all_bufs());
    let buffer_types = layout.types.clone();
    let buffer_keys = layout.keys();
    let cx = Cx {
        ast,
        ir: r.ir,
        c,
        layout,
    };
    let forms = Forms::new(&cx, &plans, r, n);
    let made = Made {
        mode: forms.mode_bodies(),
        parallel: forms.parallel_bodies(),
        stream: forms.stream_bodies(),
        masked: forms.masked_body(),
        masked_parallel: forms.masked_parallel_body(),
        cut_stream: forms.cut_stream_body(),
    };
    let e = Emit::new(c, n, ast, forms);
    let (head, sequential_only, tail) = e.private(&plans, made);
    let run_with = e.run_with_fn(sequential_only);
    let args = &e.args;
    Bodies {
        run_with: e.run_with_entry(),
        run_weights_parallel: quote! {
            self.__run_weights_parallel(weights, observer, __sink, #args)
        },
        run_plan_parallel: e.checked_plan(quote! {
            self.__run_plan_parallel(plan, weights, observer, __sink, #args)
        }),
        run_stream_with: e.stream_with(),
        run_stream: e.run_stream(),
        run_parallel_observed: e.mode_match(&e.par_fns, quote!(__sink)),
        run_observed: e.fresh(e.mode_match(&e.mode_fns, e.fresh_sink())),
        run_into_observed: e.mode_match(&e.mode_fns, e.sink_all()),
        run_weights_observed: e.fresh(e.call_with(
            "__run_weights",
            quote!(weights),
            e.fresh_sink(),
        )),
        run_plan_observed: e.checked_plan(e.fresh(e.call_with(
            "__run_plan",
            quote!(plan, weights),
            e.fresh_sink(),
        ))),
        private: quote! {
            #head
            #run_with
            #tail
        },
        buffer_types,
        buffer_keys,
        fusion_slots: plans.fusion_slots,
        holds,
    }
}

/// The bodies [`Forms`] made: per mode its straight-line, parallel and
/// pipelined functions', and the plan-driven ones.
struct Made {
    mode: Vec<TokenStream>,
    parallel: Vec<TokenStream>,
    stream: Vec<TokenStream>,
    masked: TokenStream,
    masked_parallel: Option<TokenStream>,
    cut_stream: Option<TokenStream>,
}

/// What every entry point's emitter names: the engine crate's path, the
/// pipeline's items, its inputs as parameters and arguments, and each
/// mode's functions.
struct Emit<'a> {
    c: &'a TokenStream,
    n: &'a ItemNames,
    ast: &'a PipelineAst,
    variants: Vec<Ident>,
    mode_fns: Vec<Ident>,
    par_fns: Vec<Ident>,
    stream_fns: Vec<Ident>,
    params: TokenStream,
    args: TokenStream,
    /// `Sink<'_, Outputs>`, the type every run function fills.
    sink: TokenStream,
    /// The tuple of the inputs' types.
    in_tuple: TokenStream,
}

impl<'a> Emit<'a> {
    fn new(c: &'a TokenStream, n: &'a ItemNames, ast: &'a PipelineAst, forms: Forms<'_>) -> Self {
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
    fn fresh_sink(&self) -> TokenStream {
        let c = self.c;
        quote!(#c::__private::Sink::Fresh(&mut __slot))
    }

    /// The sink of a run into every output of the caller's `outputs`.
    fn sink_all(&self) -> TokenStream {
        let c = self.c;
        quote!(#c::__private::Sink::into_all(outputs))
    }

    /// `call` into a fresh `__slot`, returning the outputs it made.
    fn fresh(&self, call: TokenStream) -> TokenStream {
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
    fn checked_plan(&self, run: TokenStream) -> TokenStream {
        quote! {
            weights.zero_pattern(&Self::ir().weight_keys)?;
            plan.validate(Self::ir())?;
            #run
        }
    }

    /// The mode's function of `fns` into `sink`, per mode.
    fn mode_match(&self, fns: &[Ident], sink: TokenStream) -> TokenStream {
        let (mode_ty, variants, args) = (&self.n.mode, &self.variants, &self.args);
        quote! {
            match mode {
                #(#mode_ty::#variants => self.#fns(observer, #sink, #mode_ty::#variants.weights(), #args),)*
            }
        }
    }

    /// The plan-driven function `f` with `given` (weights, or a plan and
    /// weights), observed, into `sink`.
    fn call_with(&self, f: &str, given: TokenStream, sink: TokenStream) -> TokenStream {
        let (f, args) = (format_ident!("{}", f), &self.args);
        quote!(self.#f(#given, observer, #sink, #args))
    }

    /// `run_stream`: the mode's pipelined function.
    fn run_stream(&self) -> TokenStream {
        let (mode_ty, variants, fns) = (&self.n.mode, &self.variants, &self.stream_fns);
        quote! {
            match mode {
                #(#mode_ty::#variants => self.#fns(__observer, frames, options, on_result),)*
            }
        }
    }

    /// `run_with`: the `Run`'s observer taken out.
    fn run_with_entry(&self) -> TokenStream {
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
    fn stream_with(&self) -> TokenStream {
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
    fn run_with_fn(&self, sequential_only: bool) -> TokenStream {
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
    fn run_weights_fn(
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
    fn parallel_private(&self, plans: &Plans, made: &Made) -> TokenStream {
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
    fn cut_stream(&self, body: Option<&TokenStream>) -> TokenStream {
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
    fn private(&self, plans: &Plans, made: Made) -> (TokenStream, bool, TokenStream) {
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

/// `__run_with` and `__run_plan_on`: a `Run`'s selection on its engine,
/// into the caller's outputs. Every output (or a rated mode, whose phases
/// only its own functions know) runs the selection's own function; a set
/// of outputs runs the selection's plan cut down to them, from the
/// pipeline's plan cache, through the plan-driven function.
fn run_with_fn(
    c: &TokenStream,
    ast: &PipelineAst,
    mode_fns: &[Ident],
    variants: &[Ident],
    n: &ItemNames,
    (input_params, args): (&TokenStream, &TokenStream),
    sequential_only: bool,
) -> TokenStream {
    let (mode_ty, outputs_ty) = (&n.mode, &n.outputs);
    let name = ast.name.to_string();
    let not_parallel = quote! {
        ::core::result::Result::Err(#c::PipelineError::NotParallel { pipeline: #name })
    };
    let bound = if sequential_only {
        quote!(#c::Observer)
    } else {
        quote!(#c::Observer + ::core::marker::Send)
    };
    let sink = quote!(#c::__private::Sink::Into(outputs, __read));
    let (par_mode, par_weights, par_plan) = if sequential_only {
        (not_parallel.clone(), not_parallel.clone(), not_parallel)
    } else {
        (
            quote!(self.__run_parallel(mode, observer, #sink, #args)),
            quote!(self.__run_weights_parallel(weights, observer, #sink, #args)),
            quote!(self.__run_plan_parallel(plan, weights, observer, sink, #args)),
        )
    };
    let engine = quote!(#c::run::Engine);
    let select = quote!(#c::run::Select);
    quote! {
        /// A `Run` with its observer taken out (see `run_with`).
        #[allow(clippy::too_many_arguments)]
        fn __run_with<__O: #bound>(&mut self, __select: #select<'_, #mode_ty>, __engine: #engine, __read: #c::OutputSet, observer: &mut __O, outputs: &mut #outputs_ty, #input_params) -> ::core::result::Result<(), #c::PipelineError> {
            let __ir = Self::ir();
            let __all = __read.covers(__ir);
            match __select {
                #select::Mode(mode) => {
                    if __all || <#mode_ty as #c::PipelineMode>::phase_plans(mode).len() > 1 {
                        return match __engine {
                            #engine::Sequential => match mode {
                                #(#mode_ty::#variants => self.#mode_fns(observer, #sink, #mode_ty::#variants.weights(), #args),)*
                            },
                            #engine::Parallel => #par_mode,
                        };
                    }
                    let __plan = self.__plans.get_for(<#mode_ty as #c::PipelineMode>::plan(mode).zero_pattern, __read);
                    self.__run_plan_on(__engine, &__plan, <#mode_ty as #c::PipelineMode>::weights(mode), observer, #sink, #args)
                }
                #select::Weights(weights) => {
                    if __all {
                        return match __engine {
                            #engine::Sequential => self.__run_weights(weights, observer, #sink, #args),
                            #engine::Parallel => #par_weights,
                        };
                    }
                    let __pattern = weights.zero_pattern(&__ir.weight_keys)?;
                    let __plan = self.__plans.get_for(__pattern, __read);
                    if let ::core::option::Option::Some(&__missing) = __plan.missing_outputs.first() {
                        let output: &'static str = __ir.nodes.get(__missing as usize).map_or("?", |n| n.name.as_ref());
                        return ::core::result::Result::Err(#c::PipelineError::OutputEliminated { output });
                    }
                    self.__run_plan_on(__engine, &__plan, weights, observer, #sink, #args)
                }
                #select::Plan(plan, weights) => {
                    weights.zero_pattern(&__ir.weight_keys)?;
                    plan.validate_for(__ir, __read)?;
                    self.__run_plan_on(__engine, plan, weights, observer, #sink, #args)
                }
            }
        }

        /// A plan already validated (or computed by the DCE pass) on
        /// `engine`.
        #[allow(clippy::too_many_arguments)]
        fn __run_plan_on<__O: #bound>(&mut self, engine: #engine, plan: &#c::plan::Plan, weights: &#c::Weights, observer: &mut __O, sink: #c::__private::Sink<'_, #outputs_ty>, #input_params) -> ::core::result::Result<(), #c::PipelineError> {
            match engine {
                #engine::Sequential => self.__run_plan(plan, weights, observer, sink, #args),
                #engine::Parallel => #par_plan,
            }
        }
    }
}

/// The doc comment of a mode variant: its weights and its plan.
pub fn mode_doc(ir: &GraphIr, plan: &Plan) -> String {
    let names = |ids: &mut dyn Iterator<Item = NodeId>| {
        ids.map(|i| format!("`{}`", ir.nodes[i as usize].name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let runs = names(&mut plan.order.iter().copied());
    let gone = plan
        .eliminated
        .iter()
        .map(|e| {
            format!(
                "`{}` ({})",
                ir.nodes[e.node as usize].name,
                e.reason.describe(ir)
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "Mode `{}`. Runs {}.{}",
        plan.label,
        if runs.is_empty() {
            "nothing".into()
        } else {
            runs
        },
        if gone.is_empty() {
            String::new()
        } else {
            format!(" Eliminates {gone}.")
        }
    )
}
