//! One generator per run form: each mode's straight-line function, its
//! parallel function (fused and plain), its pipelined stream, and the
//! plan-driven function for weights and plans chosen at run time.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

use super::body::run_body;
use super::plans::Plans;
use super::shape::{Cx, Flavor, Fused, RatedMode, Real, Shape};
use super::stages::{pipelined_call, stage_a_fills, Driven, Part};
use crate::names::{input_params, local, variant, ItemNames};
use cortex_core::lower::Frame;

/// What every form's generator reads.
pub(super) struct Forms<'a> {
    pub cx: &'a Cx<'a>,
    pub plans: &'a Plans,
    pub r: &'a Real<'a>,
    pub n: &'a ItemNames,
    /// The mode enum's variants, in declaration order.
    pub variants: Vec<Ident>,
    /// Per mode: its rates, when it has some.
    pub rated: Vec<Option<RatedMode<'a>>>,
    pub params: TokenStream,
    pub args: TokenStream,
    /// Per mode: its straight-line, parallel and pipelined functions.
    pub mode_fns: Vec<Ident>,
    pub par_fns: Vec<Ident>,
    pub stream_fns: Vec<Ident>,
}

impl<'a> Forms<'a> {
    pub(super) fn new(cx: &'a Cx<'a>, plans: &'a Plans, r: &'a Real<'a>, n: &'a ItemNames) -> Self {
        let ast = cx.ast;
        let mode_ty = &n.mode;
        let variants: Vec<Ident> =
            r.ir.modes
                .iter()
                .map(|m| variant(&m.name).unwrap_or_else(|| format_ident!("Invalid")))
                .collect();
        let rated = (0..r.ir.modes.len())
            .map(|m| {
                let rated = plans.mode(m).rates.as_ref()?;
                let v = &variants[m];
                Some(RatedMode {
                    rates: &r.ir.modes[m].rates,
                    slots: rated.rates.iter().map(|x| x.slot).collect(),
                    info: &rated.phases,
                    decls: &ast.modes[m].rates,
                    phases: quote!(#mode_ty::#v.phase_plans()),
                })
            })
            .collect();
        let (params, args) = input_params(ast);
        let parallel_modes = if plans.program.parallel {
            variants.len()
        } else {
            0
        };
        Forms {
            cx,
            plans,
            r,
            n,
            rated,
            params,
            args,
            mode_fns: (0..variants.len())
                .map(|i| format_ident!("__run_mode_{}", i))
                .collect(),
            par_fns: (0..parallel_modes)
                .map(|i| format_ident!("__run_parallel_mode_{}", i))
                .collect(),
            stream_fns: (0..parallel_modes)
                .map(|i| format_ident!("__stream_mode_{}", i))
                .collect(),
            variants,
        }
    }

    /// Each mode's straight-line function body.
    pub(super) fn mode_bodies(&self) -> Vec<TokenStream> {
        let mode_ty = &self.n.mode;
        self.variants
            .iter()
            .enumerate()
            .map(|(m, v)| {
                let shape = Shape {
                    fusion: Some(self.plans.fused_of(m)),
                    rated: self.rated[m].as_ref(),
                    ..self.shape(&self.plans.mode(m).sequential)
                };
                run_body(
                    self.cx,
                    self.n,
                    shape,
                    quote!(#mode_ty::#v.plan()),
                    quote!(__weights),
                )
            })
            .collect()
    }

    /// Each mode's parallel function body: its fused waves, or with fusion
    /// off every node its own unit; a rated mode decides its phase between
    /// its waves.
    pub(super) fn parallel_bodies(&self) -> Vec<TokenStream> {
        let (c, args) = (self.cx.c, &self.args);
        // A rated mode decides its phase between waves; with fusion off its
        // groups run their members' own calls, one after the other.
        (0..self.par_fns.len())
            .filter_map(|m| {
                let (mode, v, seq_fn) = (self.plans.mode(m), &self.variants[m], &self.mode_fns[m]);
                let frame = mode.parallel.as_ref()?;
                let shape = Shape {
                    parallel: true,
                    fusion: Some(self.plans.fused_of(m)),
                    rated: self.rated[m].as_ref(),
                    ..self.shape(frame)
                };
                let fused = self.of_mode(v, shape, quote!(__weights));
                let body = match &mode.parallel_unfused {
                    Some(frame) => {
                        let shape = Shape {
                            parallel: true,
                            ..self.shape(frame)
                        };
                        let plain = self.of_mode(v, shape, quote!(__weights));
                        quote!(if __fused { #fused } else { #plain })
                    }
                    None => fused,
                };
                Some(in_pool_or_rerun(
                    c,
                    body,
                    quote!(self.#seq_fn(&mut #c::NoopObserver, __sink, __weights, #args)),
                ))
            })
            .collect()
    }

    /// The parallel plan-driven function's body (weights and plans chosen at
    /// run time, `#[parallel]` pipelines): the full graph's waves, each unit
    /// skipped when the plan leaves it out, a group fused when the plan
    /// runs all its members; with fusion off every node its own unit.
    pub(super) fn masked_parallel_body(&self) -> Option<TokenStream> {
        let (c, args) = (self.cx.c, &self.args);
        let rt = &self.plans.program.run_time;
        let frame = rt.parallel.as_ref()?;
        let groups = self.plans.run_time_fused();
        let fused = self.masked(frame, true, Part::Whole, groups);
        // Without groups, both frames' waves are the same.
        let body = match (&rt.parallel_unfused, groups) {
            (Some(plain), Some(_)) => {
                let plain = self.masked(plain, true, Part::Whole, None);
                quote!(if __fused { #fused } else { #plain })
            }
            _ => fused,
        };
        Some(in_pool_or_rerun(
            c,
            body,
            quote!(self.__run_plan(__plan, __weights, &mut #c::NoopObserver, __sink, #args)),
        ))
    }

    /// Each mode's pipelined stream body: the state-free stage and the rest.
    pub(super) fn stream_bodies(&self) -> Vec<TokenStream> {
        let (ast, c, mode_ty) = (self.cx.ast, self.cx.c, &self.n.mode);
        (0..self.stream_fns.len())
        .filter_map(|m| {
            let (v, seq_fn) = (&self.variants[m], &self.mode_fns[m]);
            let piped = self.plans.mode(m).pipelined.as_ref()?;
            let fused = self.plans.stream_fused_of(m)?;
            let (a, b) = (&piped.first_stage[..], &piped.first.buffers);
            let stage = |part, parallel| {
                // Each stage walks its own steps; the second ends the frame.
                let shape = Shape {
                    part,
                    parallel,
                    fusion: Some(fused),
                    rated: self.rated[m].as_ref(),
                    steps: match part {
                        Part::StreamA(_) => &piped.first.steps,
                        _ => &piped.second.steps,
                    },
                    ..self.shape(&piped.first)
                };
                self.of_mode(v, shape, quote!(#mode_ty::#v.weights()))
            };
            let a_body = stage(Part::StreamA(a), false);
            let b_body = stage(Part::StreamB(a), true);
            let slot_ty: syn::Type = syn::parse_quote!(#c::__private::FusionSlot);
            let a_tys: Vec<syn::Type> = stage_a_fills(self.r.ir, b, Some(a))
                .iter()
                .filter_map(|&id| ast.nodes[id as usize].ty.clone())
                .chain((0..fused.a_slots()).map(|_| slot_ty.clone()))
                .collect();
            let input_names = ast.inputs.iter().map(|i| crate::names::local_like(&i.name));
            Some(pipelined_call(
                c,
                ast,
                &self.n.outputs,
                Driven {
                    a_tys,
                    a_body,
                    b_body,
                    rerun: quote!(__this.#seq_fn(&mut #c::NoopObserver, __sink, #mode_ty::#v.weights(), #(#input_names),*)),
                    plan: quote!(#mode_ty::#v.plan()),
                },
            ))
        })
        .collect()
    }

    /// A mode's run of `frame` (its plan, buffers and steps): whole, unfused,
    /// sequential and without rates until the caller says otherwise.
    fn shape<'s>(&'s self, frame: &'s Frame) -> Shape<'s> {
        Shape {
            flavor: Flavor::Mode(&frame.plan),
            bufs: &frame.buffers,
            parallel: false,
            part: Part::Whole,
            fusion: None,
            rated: None,
            steps: &frame.steps,
        }
    }

    /// A body of the mode of variant `v`, with the mode's own plan and
    /// `weights` (the mode's own, or `__weights` passed in: run-time weights
    /// of the same zero pattern).
    fn of_mode(&self, v: &Ident, shape: Shape<'_>, weights: TokenStream) -> TokenStream {
        let mode_ty = &self.n.mode;
        run_body(self.cx, self.n, shape, quote!(#mode_ty::#v.plan()), weights)
    }

    /// The plan-driven function's body (weights and plans chosen at run
    /// time): the full graph's units in order, each skipped when the plan
    /// leaves it out, a group fused when the plan runs all its members.
    pub(super) fn masked_body(&self) -> TokenStream {
        let frame = &self.plans.program.run_time.sequential;
        self.masked(frame, false, Part::Whole, self.plans.run_time_fused())
    }

    /// A plan-driven body of `frame` (the full graph's) or `part` of it (a
    /// pipelined stage): every node guarded by the plan passed in
    /// (`__plan`), in order or wave by wave, with `fusion`'s groups.
    pub(super) fn masked(
        &self,
        frame: &Frame,
        parallel: bool,
        part: Part<'_>,
        fusion: Option<Fused<'_>>,
    ) -> TokenStream {
        run_body(
            self.cx,
            self.n,
            Shape {
                flavor: Flavor::Masked(&frame.plan),
                bufs: &frame.buffers,
                parallel,
                part,
                fusion,
                rated: None,
                steps: &frame.steps,
            },
            quote!(__plan),
            quote!(__weights),
        )
    }
}

/// A parallel run function's body: `parallel` (the waves) on the worker
/// pool, observed through a shared observer; if the frame fails, `rerun`
/// (the same frame, sequentially and unobserved) reports its error.
fn in_pool_or_rerun(c: &TokenStream, parallel: TokenStream, rerun: TokenStream) -> TokenStream {
    let obs = local("__obs", Span::call_site());
    quote! {
        let __parallel = {
            let #obs = &#c::__private::SharedObserver::new(__observer);
            let __sink = __sink.reborrow();
            let __fused = self.__fusion_on;
            #c::__private::in_pool(|| { #parallel })
        };
        match __parallel {
            ::core::result::Result::Ok(()) => ::core::result::Result::Ok(()),
            // Nodes of later waves may precede the failing one in plan
            // order: the frame runs again, sequentially and unobserved (the
            // state is as it was), so the error is the one the sequential
            // run reports.
            ::core::result::Result::Err(_) => #rerun,
        }
    }
}
