//! A fused group's step: its members' calls gathered as its unfused path,
//! then its block ([`super::fused`]) once the last member is reached — in
//! a declared mode's body as it is, in a plan-driven body behind the check
//! that the frame's plan runs the group whole.

use cortex_core::ir::NodeId;
use cortex_core::passes::fusion::{Group, ValueRole};
use cortex_core::plan::Plan;
use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use super::body::Emitted;
use super::fused::{group_block, GroupSite};
use super::node::Call;
use super::shape::{node_local, Flavor, Fused};
use super::site::Body;
use super::stages::Part;

impl Body<'_> {
    /// A fused group's member: its call is the group's unfused path; the
    /// group is emitted once its last member is reached.
    pub(super) fn group_member(
        &self,
        e: &mut Emitted<'_>,
        id: NodeId,
        call: Call,
        f: Fused<'_>,
        k: usize,
    ) {
        let own = if self.masked() {
            self.guarded_call(id, &call, quote!(__plan))
        } else {
            self.inline_call(id, &call)
        };
        e.fallbacks[k].push((id, own));
        let group = &f.plan.groups[k];
        if group.nodes.last() != Some(&id) {
            return;
        }
        // Stage A of a pipelined run has no `self`: its groups live in
        // the frame's own buffers, after the filled values.
        let (slot, on) = match self.part {
            Part::StreamA(_) => {
                let i = syn::Index::from(self.a_fills.len() + f.a_slot_of(k));
                (quote!(__a_bufs.#i), quote!(__fusion_on))
            }
            _ => {
                let i = f.slot_base + f.self_slot_of(k);
                let this = self.this(Span::call_site());
                (quote!(#this.__fusion[#i]), quote!(#this.__fusion_on))
            }
        };
        let own = std::mem::take(&mut e.fallbacks[k]);
        let block = match self.flavor {
            Flavor::Masked(full) => self.plan_group(group, (slot, on), full, own),
            Flavor::Mode(_) => self.group_here(group, (slot, on), own),
        };
        match e.parallel.as_mut() {
            Some(par) => {
                par.groups.insert(group.nodes[0], block);
            }
            None => e.stmts.push(block),
        }
    }

    /// Group `group`'s block in this body: its slot `slot`, fused when `on`
    /// (both expressions), its members' own calls `own` its unfused path.
    fn group_here(
        &self,
        group: &Group,
        (slot, on): (TokenStream, TokenStream),
        own: Vec<(NodeId, TokenStream)>,
    ) -> TokenStream {
        let live = |id: NodeId| self.live(id);
        let buffer = |id: NodeId, at: Span| self.buffer(id, at);
        let is_ref = |id: NodeId| self.is_ref(id);
        group_block(
            self.cx,
            GroupSite {
                group,
                slot,
                on,
                fallback: own,
                this: self.this(Span::call_site()),
                live: &live,
                buffer: &buffer,
                is_ref: &is_ref,
            },
            &self.obs,
        )
    }

    /// A group of a plan-driven body (`full`: the frame's plan, every node
    /// of which the plan passed in may leave out). When that plan runs all
    /// its members and every node value they read from outside the group,
    /// the group runs as a declared mode's does (those values borrowed, the
    /// members' values then `Some`); else the members' guarded calls
    /// `guarded`, one after the other. A plan leaving out a weighted input
    /// of the group runs it unfused: the group is built with that input.
    fn plan_group(
        &self,
        group: &Group,
        at: (TokenStream, TokenStream),
        full: &Plan,
        guarded: Vec<(NodeId, TokenStream)>,
    ) -> TokenStream {
        let (ir, ast) = (self.cx.ir, self.cx.ast);
        let local = |id: NodeId| node_local(ir, id, ast.nodes[id as usize].name.span());
        let outside = group.read_nodes(ir);
        let all_run = Body {
            flavor: Flavor::Mode(full),
            borrowed: outside.clone(),
            a_fills: self.a_fills.clone(),
            obs: self.obs.clone(),
            ..*self
        };
        let own = group
            .nodes
            .iter()
            .map(|&m| (m, all_run.inline_call(m, &all_run.call(m))))
            .collect();
        let block = all_run.group_here(group, at, own);
        let leaving: Vec<Ident> = group
            .nodes
            .iter()
            .zip(&group.values)
            .filter(|(_, role)| matches!(role, ValueRole::Leaving { .. }))
            .map(|(&m, _)| local(m))
            .collect();
        let runs = group
            .whole_needs(ir)
            .into_iter()
            .map(|id| quote!(__plan.is_live(#id)));
        let reads = outside.iter().map(|&p| {
            let v = local(p);
            if self.fills(p) {
                quote!(#v)
            } else {
                quote!(#v.as_ref())
            }
        });
        let bound = outside.iter().map(|&p| {
            let v = local(p);
            quote!(::core::option::Option::Some(#v))
        });
        let guarded = guarded.iter().map(|(_, call)| call);
        quote! {
            #[allow(unused_mut)]
            let (#(mut #leaving,)*) = match (true #(&& #runs)*, #(#reads,)*) {
                (true, #(#bound,)*) => {
                    #block
                    (#(::core::option::Option::Some(#leaving),)*)
                }
                _ => {
                    #(#guarded)*
                    (#(#leaving,)*)
                }
            };
        }
    }
}
