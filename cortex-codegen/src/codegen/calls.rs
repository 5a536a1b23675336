//! A frame's steps on the calling thread ([`Step::Call`], and each
//! [`Step::Group`]'s members as its unfused path): each node's call, always
//! or guarded by the frame's plan or phase, between the observer's events.

use cortex_core::ir::NodeId;
use cortex_core::lower::Step;
use proc_macro2::TokenStream;
use quote::quote;

use super::body::Emitted;
use super::node::Call;
use super::site::Body;

impl Body<'_> {
    /// The frame's steps on the calling thread: each call, each group
    /// (its members' calls its unfused path), the phase decided where the
    /// steps decide it.
    pub(super) fn emit_in_order(&self, e: &mut Emitted<'_>) {
        let runs = |id: NodeId| self.live(id) && self.in_part(id);
        for step in self.steps {
            match *step {
                Step::DecidePhase => e.phase_before(),
                Step::Call { node, .. } if runs(node) => {
                    let call = self.call(node);
                    self.sequential_call(e, node, call);
                }
                Step::Group { group: k, .. } => {
                    let Some(f) = self.fusion else { continue };
                    let members = f.plan.groups.get(k).map_or(&[][..], |g| &g.nodes[..]);
                    for &id in members.iter().filter(|&&id| runs(id)) {
                        let call = self.call(id);
                        self.group_member(e, id, call, f, k);
                    }
                }
                _ => {}
            }
        }
    }

    /// Node `id`'s call on the calling thread: always, or (a node some
    /// frames leave out) when the frame's plan or phase runs it.
    fn sequential_call(&self, e: &mut Emitted<'_>, id: NodeId, call: Call) {
        if self.masked() {
            e.stmts.push(self.guarded_call(id, &call, quote!(__plan)));
        } else if self.rate_of(id).is_some() || self.cond(id) {
            // Work only some phases run, after the phase is decided.
            let run = self.guarded(id, &call, quote!(__phase));
            match self.rate_of(id) {
                Some(i) => e.stmts.push(self.rated_local(id, i, &call.v, run)),
                None => {
                    let v = &call.v;
                    e.stmts.push(quote!(let #v = #run;));
                }
            }
        } else {
            e.stmts.push(self.inline_call(id, &call));
        }
    }

    /// Node `id`'s call when `plan` (an expression of type `&Plan`) runs
    /// it, its value bound to its local as an `Option`.
    pub(super) fn guarded_call(&self, id: NodeId, call: &Call, plan: TokenStream) -> TokenStream {
        let v = &call.v;
        let run = self.guarded(id, call, plan);
        quote!(let mut #v = #run;)
    }

    /// Node `id`'s call as an expression: `Some` of its value when `plan`
    /// (an expression of type `&Plan`) runs it.
    fn guarded(&self, id: NodeId, call: &Call, plan: TokenStream) -> TokenStream {
        let observed = self.observed(id, call);
        let result = &call.result;
        quote! {
            if #plan.is_live(#id) {
                #observed
                ::core::option::Option::Some(#result)
            } else {
                ::core::option::Option::None
            }
        }
    }

    /// Node `id`'s call on the calling thread, its value bound to its
    /// local.
    pub(super) fn inline_call(&self, id: NodeId, call: &Call) -> TokenStream {
        let observed = self.observed(id, call);
        let (v, result) = (&call.v, &call.result);
        quote! {
            #observed
            let #v = #result;
        }
    }

    /// Node `id`'s checked arguments and its call, between the observer's
    /// `node_begin` and `node_end`: its result in `__value`.
    fn observed(&self, id: NodeId, call: &Call) -> TokenStream {
        let obs = &self.obs;
        let Call {
            guards, compute, ..
        } = call;
        quote! {
            #(#guards)*
            #obs.node_begin(#id);
            #compute
            #obs.node_end(#id);
        }
    }
}
