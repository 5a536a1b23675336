//! A parallel run's [`Step::Wave`]s: each node's job (the closure the pool
//! runs and the statements binding its value), gathered in the plan's order,
//! then emitted wave by wave with the groups that run alone before them.

use cortex_core::ir::NodeId;
use cortex_core::lower::{Step, Unit};
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};

use super::body::Emitted;
use super::node::Call;
use super::shape::Flavor;
use super::site::Body;
use super::stages::Part;
use super::waves::{wave_stmts, Job, Parallel};
use crate::names::local;

impl Body<'_> {
    /// A parallel run's jobs and group blocks, in the plan's order (a
    /// fused plan's groups' members together), for its waves to emit.
    pub(super) fn gather_jobs(&self, e: &mut Emitted<'_>) {
        let order: Vec<NodeId> = match &self.flavor {
            Flavor::Mode(p) | Flavor::Masked(p) => p.order.to_vec(),
        };
        for &id in order.iter() {
            if !self.live(id) || !self.in_part(id) {
                continue;
            }
            let call = self.call(id);
            match self
                .fusion
                .and_then(|f| f.plan.group_of(id).map(|k| (f, k)))
            {
                Some((f, k)) => self.group_member(e, id, call, f, k),
                None => {
                    let job = self.job(id, call);
                    if let Some(par) = e.parallel.as_mut() {
                        par.jobs.insert(id, job);
                    }
                }
            }
        }
    }

    /// A parallel run's waves, one emitter per step of the frame: each
    /// [`Step::Wave`]'s units at once, the phase decided where its
    /// [`Step::DecidePhase`] is.
    pub(super) fn emit_waves(&self, e: &mut Emitted<'_>, par: &Parallel) {
        let c = self.cx.c;
        for step in self.steps {
            let units = match step {
                Step::Wave(units) => units,
                Step::DecidePhase => {
                    e.phase_before();
                    continue;
                }
                _ => continue,
            };
            // A pipelined frame's second stage lets the next frame's first
            // stage have its turn before each wave.
            if matches!(self.part, Part::StreamB(_)) {
                e.stmts.push(quote!(#c::__private::yield_to_first_stage();));
            }
            // A fused group runs alone (its strips use every core), before
            // the other units of its wave, which read none of its values.
            let mut singles = Vec::new();
            for unit in units {
                match *unit {
                    Unit::Call(id) => singles.push(id),
                    Unit::Group(k) => {
                        let first = self
                            .fusion
                            .and_then(|f| f.plan.groups.get(k)?.nodes.first());
                        if let Some(block) = first.and_then(|id| par.groups.get(id)) {
                            e.stmts.push(block.clone());
                        }
                    }
                }
            }
            e.stmts.push(wave_stmts(c, &self.obs, &singles, &par.jobs));
        }
    }

    /// What leaves node `id` out on some frames of a parallel run: the
    /// frame's plan (run-time plans) or its phase (rated modes); its job
    /// then returns an `Option`.
    fn skipped_by(&self, id: NodeId) -> Option<TokenStream> {
        if self.masked() {
            Some(quote!(__plan))
        } else if self.rate_of(id).is_some() || self.cond(id) {
            Some(quote!(__phase))
        } else {
            None
        }
    }

    /// Node `id`'s job in a parallel run: the closure running it on the
    /// pool and the statements binding its value.
    fn job(&self, id: NodeId, call: Call) -> Job {
        let skipped_by = self.skipped_by(id);
        let run = self.job_closure(id, &call, skipped_by.as_ref());
        let bind = self.job_bind(id, &call, skipped_by.is_some());
        Job {
            run,
            value: call.value,
            bind,
            optional: skipped_by.is_some(),
        }
    }

    /// The closure of node `id`'s job, returning its checked value (an
    /// `Option` of it when `skipped_by` may leave the node out).
    fn job_closure(
        &self,
        id: NodeId,
        call: &Call,
        skipped_by: Option<&TokenStream>,
    ) -> TokenStream {
        let (ir, c) = (self.cx.ir, self.cx.c);
        let obs = &self.obs;
        let Call {
            guards,
            checked_call,
            ok,
            ok_value,
            call_span,
            ..
        } = call;
        let call_span = *call_span;
        let node = &ir.nodes[id as usize];
        let name_str: &str = &node.name;
        let outcome = if node.fallible {
            let c = crate::krate::path_at(call_span);
            quote_spanned! {call_span=>
                match __r {
                    ::core::result::Result::Ok(#ok) => ::core::result::Result::Ok(#ok_value),
                    ::core::result::Result::Err(e) => ::core::result::Result::Err(#c::PipelineError::node(#name_str, e)),
                }
            }
        } else {
            quote!(::core::result::Result::Ok::<_, #c::PipelineError>(__r))
        };
        // The value crosses back from the worker thread checked, so
        // the pool's own `Send` bound holds and a value that is not
        // `Send + Sync` is the one error of its check.
        let crossed = local("__crossed", Span::call_site());
        let proof = self.value_proof(id, quote!(&#crossed));
        if let Some(plan) = skipped_by {
            // A node the plan leaves out: `None`, its value too.
            quote! {
                || {
                    if !#plan.is_live(#id) {
                        return ::core::result::Result::Ok(::core::option::Option::None);
                    }
                    #(#guards)*
                    #obs.node_begin(#id);
                    let __r = #checked_call;
                    #obs.node_end(#id);
                    (#outcome).map(|#crossed| ::core::option::Option::Some(#proof.cross(#crossed)))
                }
            }
        } else {
            quote! {
                || {
                    #(#guards)*
                    #obs.node_begin(#id);
                    let __r = #checked_call;
                    #obs.node_end(#id);
                    (#outcome).map(|#crossed| #proof.cross(#crossed))
                }
            }
        }
    }

    /// The statements binding node `id`'s value once its job has run (a
    /// filled buffer's local is a reference to it: the buffer's type is
    /// checked).
    fn job_bind(&self, id: NodeId, call: &Call, optional: bool) -> TokenStream {
        let Call {
            value, result, v, ..
        } = call;
        if let Some(i) = self.rate_of(id) {
            let local = self.rated_local(id, i, v, quote! {
                match #value {
                    ::core::option::Option::Some(#value) => ::core::option::Option::Some(#result),
                    ::core::option::Option::None => ::core::option::Option::None,
                }
            });
            let proof = self.value_proof(id, quote!(#v));
            quote! {
                #local
                let _ = #proof;
            }
        } else if optional {
            // A value the job returned crossed with its proof; a
            // filled buffer's type is checked here.
            let check = self.is_ref(id).then(|| {
                let checked = local("__checked", Span::call_site());
                let proof = self.value_proof(id, quote!(#checked));
                quote! {
                    if let ::core::option::Option::Some(#checked) = #v {
                        let _ = #proof;
                    }
                }
            });
            quote! {
                let mut #v = match #value {
                    ::core::option::Option::Some(#value) => ::core::option::Option::Some(#result),
                    ::core::option::Option::None => ::core::option::Option::None,
                };
                #check
            }
        } else {
            let place = if self.is_ref(id) {
                quote!(#v)
            } else {
                quote!(&#v)
            };
            let proof = self.value_proof(id, place);
            quote! {
                let #v = #result;
                let _ = #proof;
            }
        }
    }
}
