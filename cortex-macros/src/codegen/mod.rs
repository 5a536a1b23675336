//! Code generation for a valid pipeline: the bodies of the run functions in
//! the API of [`crate::api`] — one straight-line function per mode with its
//! plan's dead nodes already gone, one plan-driven function for weights and
//! plans chosen at run time, and for `#[parallel]` pipelines the parallel
//! and pipelined forms. A run function's body is [`body`]; where buffers
//! live is [`layout`]; parallel waves are [`waves`]; pipelined stages are
//! [`stages`].

mod body;
mod fused;
mod layout;
mod stages;
mod waves;

use cortex_core::ir::{GraphIr, NodeId};
use cortex_core::memory::BufferPlan;
use cortex_core::passes::fusion::{fused_plan, unit_waves, FusionPlan};
use cortex_core::passes::rates::{gate_first, hold_slots, mode_fusion_plan, mode_rates, ModeRates};
use cortex_core::plan::Plan;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};

use crate::ast::PipelineAst;
use crate::names::{input_params, local, variant, ItemNames};

use body::run_body;
use layout::BufferLayout;
use stages::{rename_self, stage_a_fills, Part};

/// What the real bodies are computed from: the validated graph.
pub struct Real<'a> {
    pub ir: &'a GraphIr,
    pub mode_plans: &'a [Plan],
}

/// The real bodies of the API's run functions, and the private functions
/// they call.
pub struct Bodies {
    pub run_observed: TokenStream,
    pub run_into_observed: TokenStream,
    pub run_weights_observed: TokenStream,
    pub run_plan_observed: TokenStream,
    pub run_weights_into_observed: TokenStream,
    pub run_plan_into_observed: TokenStream,
    /// `run_parallel_into_observed` (`#[parallel]` pipelines only).
    pub run_parallel_observed: TokenStream,
    /// `run_stream` (`#[parallel]` pipelines only).
    pub run_stream: TokenStream,
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

/// Everything the generator needs.
pub(super) struct Cx<'a> {
    pub ast: &'a PipelineAst,
    pub ir: &'a GraphIr,
    /// The facade crate's path.
    pub c: &'a TokenStream,
    /// Where the buffers live.
    pub layout: BufferLayout,
}

/// The bodies of a valid pipeline's run functions.
pub fn bodies(ast: &PipelineAst, r: &Real<'_>, n: &ItemNames, c: &TokenStream) -> Bodies {
    let mode_ty = &n.mode;
    let variants: Vec<proc_macro2::Ident> =
        r.ir.modes
            .iter()
            .map(|m| variant(&m.name).unwrap_or_else(|| format_ident!("Invalid")))
            .collect();
    // Rated modes: their phases; the nodes computing triggers run first and
    // never share a fused group with the rest, and the work only some
    // phases run is not fused.
    let slots = hold_slots(r.ir);
    let holds: Vec<(NodeId, syn::Type)> = slots
        .iter()
        .map(|&id| {
            let ty = ast.nodes[id as usize].ty.clone();
            (id, ty.unwrap_or_else(|| syn::parse_quote!(())))
        })
        .collect();
    let rates: Vec<Option<ModeRates>> =
        (0..r.ir.modes.len()).map(|m| mode_rates(r.ir, m)).collect();
    let rated_modes: Vec<Option<RatedMode<'_>>> = rates
        .iter()
        .enumerate()
        .map(|(m, info)| {
            let info = info.as_ref()?;
            let rates = &r.ir.modes[m].rates;
            let v = &variants[m];
            Some(RatedMode {
                rates,
                slots: rates
                    .iter()
                    .map(|x| slots.iter().position(|&s| s == x.node).unwrap_or(0))
                    .collect(),
                info,
                decls: &ast.modes[m].rates,
                phases: quote!(#mode_ty::#v.phase_plans()),
            })
        })
        .collect();
    let forgets: Vec<Vec<usize>> =
        r.ir.modes
            .iter()
            .map(|m| {
                (0..slots.len())
                    .filter(|&s| !m.rates.iter().any(|x| x.node == slots[s]))
                    .collect()
            })
            .collect();
    let forget_all: Vec<usize> = (0..slots.len()).collect();
    let mode_plans: Vec<Plan> = r
        .mode_plans
        .iter()
        .zip(&rates)
        .map(|(p, info)| match info {
            Some(info) => gate_first(p, &info.gate),
            None => p.clone(),
        })
        .collect();
    let part_fusion = |p: &Plan, m: usize, stage_a: Option<&[bool]>| -> FusionPlan {
        mode_fusion_plan(r.ir, p, rates[m].as_ref(), stage_a)
    };
    // Each mode's fused groups, and its plan reordered so that each group's
    // members run together; each group has its own slot in the pipeline.
    let fusion: Vec<FusionPlan> = mode_plans
        .iter()
        .enumerate()
        .map(|(m, p)| part_fusion(p, m, None))
        .collect();
    let fused_plans: Vec<Plan> = mode_plans
        .iter()
        .zip(&fusion)
        .map(|(p, f)| fused_plan(r.ir, p, f))
        .collect();
    let slot_bases: Vec<usize> = fusion
        .iter()
        .scan(0, |next, f| {
            let base = *next;
            *next += f.groups.len();
            Some(base)
        })
        .collect();
    let fusion_slots = fusion.iter().map(|f| f.groups.len()).sum();
    let fused_of = |m: usize| Fused {
        plan: &fusion[m],
        slot_base: slot_bases[m],
        stage_a: None,
    };
    // Buffers: each mode's own assignment for its straight-line function
    // (in its fused order); the full graph's for the plan-driven one, which
    // is valid for every plan (a plan's values live no longer than in the
    // full graph).
    let mode_bufs: Vec<BufferPlan> = fused_plans
        .iter()
        .map(|p| BufferPlan::sequential(r.ir, p))
        .collect();
    // Pipelined runs: per mode, its state-free first stage, its groups
    // (none spanning the two stages, which run on different frames) and its
    // plan in that fused order. Stage A's groups live in each frame's own
    // buffers; stage B's in the pipeline, after the modes' slots.
    // A rated mode's first stage leaves out its rated work and every
    // reader of a rated value: phases and held values are decided on the
    // committed frame, in the second stage.
    let stages: Vec<Vec<bool>> = if ast.parallel {
        mode_plans
            .iter()
            .zip(&rates)
            .enumerate()
            .map(|(m, (p, info))| {
                let mut a = cortex_core::schedule::state_free(r.ir, p);
                if let Some(info) = info {
                    let rated = &r.ir.modes[m].rates;
                    let p_live = |id: NodeId| p.is_live(id);
                    // In topological order, so what reads a second-stage
                    // value is in the second stage too.
                    for &id in r.ir.topo.iter() {
                        let reads_late = r.ir.nodes[id as usize].args.iter().any(|arg| match arg {
                            cortex_core::ir::Arg::Value(cortex_core::ir::Endpoint::Node(p)) => {
                                rated.iter().any(|x| x.node == *p)
                                    || (p_live(*p) && !a[*p as usize])
                            }
                            _ => false,
                        });
                        if info.conditional[id as usize] || reads_late {
                            a[id as usize] = false;
                        }
                    }
                }
                a
            })
            .collect()
    } else {
        Vec::new()
    };
    let stream_fusion: Vec<FusionPlan> = mode_plans
        .iter()
        .zip(&stages)
        .enumerate()
        .map(|(m, (p, a))| part_fusion(p, m, Some(a)))
        .collect();
    let stream_plans: Vec<Plan> = mode_plans
        .iter()
        .zip(&stream_fusion)
        .map(|(p, f)| fused_plan(r.ir, p, f))
        .collect();
    let stream_bufs: Vec<BufferPlan> = stream_plans
        .iter()
        .map(|p| BufferPlan::sequential(r.ir, p))
        .collect();
    let mut next_slot: usize = fusion_slots;
    let stream_fused: Vec<Fused<'_>> = stream_fusion
        .iter()
        .zip(&stages)
        .map(|(f, a)| {
            let fused = Fused {
                plan: f,
                slot_base: next_slot,
                stage_a: Some(a),
            };
            next_slot += fused.self_slots();
            fused
        })
        .collect();
    let fusion_slots = next_slot;
    let full = cortex_core::dce::plan_for_pattern(r.ir, 0, "full");
    let full_bufs = BufferPlan::sequential(r.ir, &full);
    // Parallel runs: every unit of a wave at once, so values of one wave
    // (a group's members included) never share a buffer.
    let par_waves: Vec<Vec<Vec<Vec<NodeId>>>> = if ast.parallel {
        r.mode_plans
            .iter()
            .zip(&fusion)
            .map(|(p, f)| unit_waves(r.ir, p, f))
            .collect()
    } else {
        Vec::new()
    };
    let par_bufs: Vec<BufferPlan> = r
        .mode_plans
        .iter()
        .zip(&par_waves)
        .map(|(p, waves)| {
            let mut steps = vec![usize::MAX; r.ir.nodes.len()];
            for (w, wave) in waves.iter().enumerate() {
                for &id in wave.iter().flatten() {
                    steps[id as usize] = w;
                }
            }
            BufferPlan::from_steps(r.ir, p, &steps)
        })
        .collect();
    // With fusion off, a parallel run keeps every node its own unit (a
    // group run unfused would run its members one after the other).
    let plain_par_bufs: Vec<BufferPlan> = if ast.parallel {
        r.mode_plans
            .iter()
            .map(|p| BufferPlan::parallel(r.ir, p))
            .collect()
    } else {
        Vec::new()
    };
    let all: Vec<&BufferPlan> = mode_bufs
        .iter()
        .chain(&par_bufs)
        .chain(&plain_par_bufs)
        .chain(&stream_bufs)
        .chain([&full_bufs])
        .collect();
    let layout = BufferLayout::new(ast, r.ir, &all);
    let buffer_types = layout.types.clone();
    let buffer_keys = layout.keys();
    let cx = Cx {
        ast,
        ir: r.ir,
        c,
        layout,
    };
    let outputs_ty = &n.outputs;
    let (params, args) = input_params(ast);
    let mode_fns: Vec<proc_macro2::Ident> = (0..variants.len())
        .map(|i| format_ident!("__run_mode_{}", i))
        .collect();
    let mode_bodies: Vec<TokenStream> = fused_plans
        .iter()
        .zip(&variants)
        .zip(&mode_bufs)
        .enumerate()
        .map(|(m, ((p, v), b))| {
            run_body(
                &cx,
                n,
                Shape {
                    flavor: Flavor::Mode(p),
                    bufs: b,
                    parallel: None,
                    part: Part::Whole,
                    fusion: Some(fused_of(m)),
                    rated: rated_modes[m].as_ref(),
                    forget: &forgets[m],
                },
                quote!(#mode_ty::#v.plan()),
                quote!(#mode_ty::#v.weights()),
            )
        })
        .collect();
    let par_fns: Vec<proc_macro2::Ident> = (0..par_bufs.len())
        .map(|i| format_ident!("__run_parallel_mode_{}", i))
        .collect();
    let par_seq_fns = &mode_fns[..par_fns.len()];
    let par_bodies: Vec<TokenStream> = fused_plans
        .iter()
        .zip(&variants)
        .zip(&par_bufs)
        .zip(&par_waves)
        .enumerate()
        .map(|(m, (((p, v), b), waves))| {
            run_body(
                &cx,
                n,
                Shape {
                    flavor: Flavor::Mode(p),
                    bufs: b,
                    parallel: Some(waves.clone()),
                    part: Part::Whole,
                    fusion: Some(fused_of(m)),
                    rated: None,
                    forget: &forgets[m],
                },
                quote!(#mode_ty::#v.plan()),
                quote!(#mode_ty::#v.weights()),
            )
        })
        .collect();
    let plain_par_bodies: Vec<TokenStream> = r
        .mode_plans
        .iter()
        .zip(&variants)
        .zip(&plain_par_bufs)
        .enumerate()
        .map(|(m, ((p, v), b))| {
            let waves = cortex_core::schedule::waves(r.ir, p)
                .into_iter()
                .map(|wave| wave.into_iter().map(|id| vec![id]).collect())
                .collect();
            run_body(
                &cx,
                n,
                Shape {
                    flavor: Flavor::Mode(p),
                    bufs: b,
                    parallel: Some(waves),
                    part: Part::Whole,
                    fusion: None,
                    rated: None,
                    forget: &forgets[m],
                },
                quote!(#mode_ty::#v.plan()),
                quote!(#mode_ty::#v.weights()),
            )
        })
        .collect();
    let obs = local("__obs", Span::call_site());
    let sink = quote!(#c::__private::Sink<'_, #outputs_ty>);
    // A rated mode runs its frames in order, one node at a time (its fused
    // groups still use every core): its phase is decided mid-frame.
    let par_fn_bodies: Vec<TokenStream> = par_bodies
        .iter()
        .zip(&plain_par_bodies)
        .zip(par_seq_fns)
        .enumerate()
        .map(|(m, ((fused, plain), seq_fn))| {
            if rated_modes[m].is_some() {
                return quote!(self.#seq_fn(__observer, __sink, #args));
            }
            quote! {
                let __parallel = {
                    let #obs = &#c::__private::SharedObserver::new(__observer);
                    let __sink = __sink.reborrow();
                    let __fused = self.__fusion_on;
                    #c::__private::in_pool(|| if __fused { #fused } else { #plain })
                };
                match __parallel {
                    ::core::result::Result::Ok(()) => ::core::result::Result::Ok(()),
                    // Nodes of later waves may precede the failing one in
                    // plan order: the frame runs again, sequentially and
                    // unobserved (the state is as it was), so the error is
                    // the one `run` reports.
                    ::core::result::Result::Err(_) => self.#seq_fn(&mut #c::NoopObserver, __sink, #args),
                }
            }
        })
        .collect();
    // Pipelined runs: per mode, the state-free stage and the rest.
    let stream_fns: Vec<proc_macro2::Ident> = (0..par_bufs.len())
        .map(|i| format_ident!("__stream_mode_{}", i))
        .collect();
    let (input_names, input_tys): (Vec<proc_macro2::Ident>, Vec<&syn::Type>) = ast
        .inputs
        .iter()
        .map(|i| (crate::names::local_like(&i.name), &i.ty))
        .unzip();
    let stream_bodies: Vec<TokenStream> = stream_plans
        .iter()
        .zip(&variants)
        .zip(&stream_bufs)
        .zip(&mode_fns)
        .zip(stream_fused.iter().zip(&stages))
        .enumerate()
        .map(|(m, ((((p, v), b), seq_fn), (fused, a)))| {
            let stage = |part| {
                run_body(
                    &cx,
                    n,
                    Shape {
                        flavor: Flavor::Mode(p),
                        bufs: b,
                        parallel: None,
                        part,
                        fusion: Some(*fused),
                        rated: rated_modes[m].as_ref(),
                        forget: &forgets[m],
                    },
                    quote!(#mode_ty::#v.plan()),
                    quote!(#mode_ty::#v.weights()),
                )
            };
            let a_body = stage(Part::StreamA(a));
            let b_body = rename_self(stage(Part::StreamB(a)));
            let slot_ty: syn::Type = syn::parse_quote!(#c::__private::FusionSlot);
            let a_tys: Vec<syn::Type> = stage_a_fills(r.ir, b, Some(a))
                .iter()
                .filter_map(|&id| ast.nodes[id as usize].ty.clone())
                .chain((0..fused.a_slots()).map(|_| slot_ty.clone()))
                .collect();
            quote! {
                let __fusion_on = self.__fusion_on;
                #c::__private::pipelined(
                    self,
                    frames,
                    options,
                    on_result,
                    |__inputs: &(#(#input_tys,)*), __a_bufs: &mut (#(#a_tys,)*)| {
                        let (#(#input_names,)*) = __inputs;
                        let #obs = #c::__private::SilentObserver;
                        #a_body
                    },
                    |__this: &mut Self, __inputs: &(#(#input_tys,)*), __a_values, __a_bufs: &mut (#(#a_tys,)*), __sink: #sink| -> ::core::result::Result<(), #c::PipelineError> {
                        let (#(#input_names,)*) = __inputs;
                        let #obs = #c::__private::SilentObserver;
                        #b_body
                    },
                    || (#(#c::__private::new_buffer::<#a_tys>(),)*),
                    |__this: &mut Self, __inputs: &(#(#input_tys,)*), __sink: #sink| -> ::core::result::Result<(), #c::PipelineError> {
                        let (#(#input_names,)*) = __inputs;
                        __this.#seq_fn(&mut #c::NoopObserver, __sink, #(#input_names),*)
                    },
                )
            }
        })
        .collect();
    let masked_body = run_body(
        &cx,
        n,
        Shape {
            flavor: Flavor::Masked,
            bufs: &full_bufs,
            parallel: None,
            part: Part::Whole,
            fusion: None,
            rated: None,
            forget: &forget_all,
        },
        quote!(__plan),
        quote!(__weights),
    );
    let fresh = |call: TokenStream| {
        quote! {
            let mut __slot = ::core::option::Option::None;
            #call?;
            match __slot {
                ::core::option::Option::Some(__outputs) => ::core::result::Result::Ok(__outputs),
                ::core::option::Option::None => ::core::result::Result::Err(#c::PipelineError::Internal("a run returned no outputs")),
            }
        }
    };
    let fresh_sink = quote!(#c::__private::Sink::Fresh(&mut __slot));
    let run_observed = fresh(quote! {
        match mode {
            #(#mode_ty::#variants => self.#mode_fns(observer, #fresh_sink, #args),)*
        }
    });
    let weights_call = fresh(quote!(self.__run_weights(weights, observer, #fresh_sink, #args)));
    let plan_call = fresh(quote!(self.__run_plan(plan, weights, observer, #fresh_sink, #args)));
    let run_parallel_observed = quote! {
        match mode {
            #(#mode_ty::#variants => self.#par_fns(observer, __sink, #args),)*
        }
    };
    let in_tuple = quote!((#(#input_tys,)*));
    let run_stream = quote! {
        match mode {
            #(#mode_ty::#variants => self.#stream_fns(frames, options, on_result),)*
        }
    };
    Bodies {
        run_stream,
        run_parallel_observed,
        run_observed,
        run_into_observed: quote! {
            match mode {
                #(#mode_ty::#variants => self.#mode_fns(observer, #c::__private::Sink::Into(outputs), #args),)*
            }
        },
        run_weights_observed: weights_call,
        run_plan_observed: quote! {
            weights.zero_pattern(&Self::ir().weight_keys)?;
            plan.validate(Self::ir())?;
            #plan_call
        },
        run_weights_into_observed: quote! {
            self.__run_weights(weights, observer, #c::__private::Sink::Into(outputs), #args)
        },
        run_plan_into_observed: quote! {
            weights.zero_pattern(&Self::ir().weight_keys)?;
            plan.validate(Self::ir())?;
            self.__run_plan(plan, weights, observer, #c::__private::Sink::Into(outputs), #args)
        },
        private: quote! {
            #(
                #[inline]
                #[allow(unused_variables, unused_mut)]
                fn #mode_fns<__O: #c::Observer>(&mut self, #obs: &mut __O, __sink: #sink, #params) -> ::core::result::Result<(), #c::PipelineError> {
                    #mode_bodies
                }
            )*

            #(
                #[inline]
                #[allow(unused_variables, unused_mut)]
                fn #par_fns<__O: #c::Observer + ::core::marker::Send>(&mut self, __observer: &mut __O, mut __sink: #sink, #params) -> ::core::result::Result<(), #c::PipelineError> {
                    #par_fn_bodies
                }
            )*

            #(
                #[allow(unused_variables, unused_mut, clippy::type_complexity)]
                fn #stream_fns<__I, __F>(&mut self, frames: __I, options: &#c::stream::StreamOptions, on_result: __F) -> ::core::result::Result<#c::stream::StreamReport, #c::stream::StreamError>
                where
                    __I: ::core::iter::Iterator<Item = #in_tuple> + ::core::marker::Send,
                    __F: ::core::ops::FnMut(#c::stream::StreamFrame<#in_tuple, #outputs_ty>) -> ::core::ops::ControlFlow<()>,
                {
                    #stream_bodies
                }
            )*

            /// Runs with weights chosen at run time, through the plan of
            /// their zero pattern.
            fn __run_weights<__O: #c::Observer>(&mut self, weights: &#c::Weights, observer: &mut __O, __sink: #sink, #params) -> ::core::result::Result<(), #c::PipelineError> {
                let __pattern = weights.zero_pattern(&Self::ir().weight_keys)?;
                let __plan = self.__plans.get(__pattern);
                if let ::core::option::Option::Some(&__missing) = __plan.missing_outputs.first() {
                    let output: &'static str = Self::ir().nodes.get(__missing as usize).map_or("?", |n| n.name.as_ref());
                    return ::core::result::Result::Err(#c::PipelineError::OutputEliminated { output });
                }
                self.__run_plan(&__plan, weights, observer, __sink, #args)
            }

            /// Runs a plan already validated against this pipeline.
            #[allow(unused_variables, unused_mut)]
            fn __run_plan<__O: #c::Observer>(&mut self, __plan: &#c::plan::Plan, __weights: &#c::Weights, #obs: &mut __O, __sink: #sink, #params) -> ::core::result::Result<(), #c::PipelineError> {
                #masked_body
            }
        },
        buffer_types,
        buffer_keys,
        fusion_slots,
        holds,
    }
}

/// What kind of run function to emit.
pub(super) struct Shape<'a> {
    /// Which nodes run, and how it is decided.
    pub flavor: Flavor<'a>,
    /// The plan's buffers.
    pub bufs: &'a BufferPlan,
    /// `Some(waves)`: each wave's units at once (parallel runs).
    pub parallel: Option<Vec<Vec<Vec<NodeId>>>>,
    /// The whole plan, or a stage of a pipelined run.
    pub part: Part<'a>,
    /// The plan's fused groups, when it runs fused.
    pub fusion: Option<Fused<'a>>,
    /// The mode's rates, when it has some.
    pub rated: Option<&'a RatedMode<'a>>,
    /// The holds of nodes the plan does not rate: forgotten by each frame.
    pub forget: &'a [usize],
}

/// A rated mode's phases, as its run functions need them.
pub(super) struct RatedMode<'a> {
    pub rates: &'a [cortex_core::ir::RateIr],
    /// Per rate: its node's held-value slot in the pipeline.
    pub slots: Vec<usize>,
    pub info: &'a ModeRates,
    /// The rates as written (for the triggers' spans).
    pub decls: &'a [crate::ast::RateDecl],
    /// The mode's phase plans (an expression of type `&'static [Plan]`).
    pub phases: TokenStream,
}

/// A plan's fused groups and where their slots live: in the pipeline from
/// `slot_base` on, or, for the groups of a pipelined run's first stage, in
/// each frame's own buffers.
#[derive(Clone, Copy)]
pub(super) struct Fused<'a> {
    pub plan: &'a FusionPlan,
    pub slot_base: usize,
    /// Per node: in a pipelined run's first stage.
    pub stage_a: Option<&'a [bool]>,
}

impl Fused<'_> {
    /// Whether group `k` runs in a pipelined run's first stage.
    fn in_stage_a(&self, k: usize) -> bool {
        let first = self.plan.groups.get(k).and_then(|g| g.nodes.first());
        match (self.stage_a, first) {
            (Some(a), Some(&n)) => a.get(n as usize).copied().unwrap_or(false),
            _ => false,
        }
    }

    /// Group `k`'s index among the first stage's groups.
    pub fn a_slot_of(&self, k: usize) -> usize {
        (0..k).filter(|&j| self.in_stage_a(j)).count()
    }

    /// Group `k`'s index among the groups whose slots are the pipeline's.
    pub fn self_slot_of(&self, k: usize) -> usize {
        (0..k).filter(|&j| !self.in_stage_a(j)).count()
    }

    /// How many of its groups run in the first stage.
    pub fn a_slots(&self) -> usize {
        (0..self.plan.groups.len())
            .filter(|&j| self.in_stage_a(j))
            .count()
    }

    /// How many of its groups keep their slots in the pipeline.
    pub fn self_slots(&self) -> usize {
        self.plan.groups.len() - self.a_slots()
    }
}

/// How a run function chooses which nodes to run.
pub(super) enum Flavor<'a> {
    /// A declared mode: only the plan's nodes are emitted, in order.
    Mode(&'a Plan),
    /// Weights chosen at run time: every node is emitted, guarded by the
    /// plan passed in, with node values held in `Option`s.
    Masked,
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

/// The local holding node `id`'s value, reported at `at`.
pub(super) fn node_local(ir: &GraphIr, id: NodeId, at: Span) -> proc_macro2::Ident {
    local(&format!("__node_{}", ir.nodes[id as usize].name), at)
}

/// A constant argument as it is passed: a block holding one expression
/// (`{ None }`, the DSL's escape for a bare name) is passed as that
/// expression, so rustc's `unused_braces` lint has nothing to say.
pub(super) fn const_arg(e: &syn::Expr) -> TokenStream {
    if let syn::Expr::Block(b) = e {
        if let ([syn::Stmt::Expr(inner, None)], true, None) =
            (b.block.stmts.as_slice(), b.attrs.is_empty(), &b.label)
        {
            return quote!(#inner);
        }
    }
    quote!(#e)
}

pub(super) fn state_written(flavor: &Flavor<'_>, state: usize) -> bool {
    match flavor {
        Flavor::Mode(p) => p.writes_state(state as u32),
        Flavor::Masked => true,
    }
}
