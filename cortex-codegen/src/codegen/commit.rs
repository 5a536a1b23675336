//! The end of a run function: its outputs ([`super::outputs`]), its state
//! commits and its held values — only once every node succeeded, so a
//! failing frame commits nothing.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};

use super::shape::node_local;
use super::site::Body;
use crate::names::{local, text};
use cortex_core::lower::Step;

impl Body<'_> {
    /// The frame's end, one emitter per step of the lowered frame: the
    /// outputs (one block at the first, see [`outputs`](Self::outputs)),
    /// state commits (trading buffers with their writer or not) and
    /// resets, held values kept and forgotten, the frame count — only now,
    /// after every node succeeded. A state's assignment is spanned at the
    /// state in its write (`gray -> _prev_gray`) with a local of the same
    /// name and span on every path, so a type mismatch is one error there,
    /// not one per run function.
    pub(super) fn frame_end(&self, stmts: &mut Vec<TokenStream>) {
        let this = self.this(Span::call_site());
        let mut remaining = Some(self.sink_counts());
        for step in self.steps {
            match *step {
                Step::Output { .. } => {
                    if let Some(mut remaining) = remaining.take() {
                        stmts.push(self.outputs(&mut remaining));
                    }
                }
                Step::CommitState { state, swap, .. } => {
                    stmts.push(self.state_commit(state as usize, swap));
                }
                Step::ResetState { state } => stmts.push(self.state_reset(state as usize)),
                Step::KeepHold { rate } => stmts.extend(self.keep_hold(rate)),
                // A hold this mode does not rate is forgotten, so a held
                // value never spans a frame whose trigger was not checked.
                Step::ForgetHold { slot } => {
                    stmts.push(quote!(#this.__holds[#slot].forget();));
                }
                Step::NextFrame => {
                    stmts.push(quote!(#this.__frame = #this.__frame.wrapping_add(1);));
                }
                _ => {}
            }
        }
        // A graph without outputs still hands its caller an outputs value.
        if let Some(mut remaining) = remaining {
            stmts.push(self.outputs(&mut remaining));
        }
    }

    /// The statements putting state `si` back to its initial value, once.
    fn state_reset(&self, si: usize) -> TokenStream {
        let f = &self.cx.ast.states[si].name;
        let init_fn = crate::names::state_init_fn(si);
        let this = self.this(Span::call_site());
        quote! {
            if #this.__fresh[#si] {
                #this.state.#f = Self::#init_fn();
                #this.__fresh[#si] = false;
            }
        }
    }

    /// State `si`'s commit; `swap`: it is its writer's value's last sink
    /// (it takes the value, trading its last one in as the buffer).
    fn state_commit(&self, si: usize, swap: bool) -> TokenStream {
        let (ir, ast) = (self.cx.ir, self.cx.ast);
        let s = &ir.states[si];
        let f = &ast.states[si].name;
        let at = ast
            .writes
            .iter()
            .find(|w| text(&w.to) == *s.name)
            .map_or(f.span(), |w| w.to.span());
        let w = s.writer;
        // The field named at `at` too, so the error's span is one token.
        let mut f_at = f.clone();
        f_at.set_span(at);
        let site = StateSite {
            si,
            at,
            f_at,
            v: node_local(ir, w, at),
            new: local("__new_state", at),
            last: swap,
            bail: self.internal(&format!("state `{}` written without its writer", s.name)),
            reset: self.state_reset(si),
        };
        if self.is_ref(w) {
            self.commit_swapped(&site, w)
        } else {
            self.commit_assigned(&site, w)
        }
    }

    /// The commit of a state whose writer fills a buffer: double-buffered,
    /// the state and the writer's buffer trade places, so last frame's
    /// state becomes next frame's buffer.
    fn commit_swapped(&self, s: &StateSite, w: cortex_core::ir::NodeId) -> TokenStream {
        let StateSite {
            si,
            at,
            f_at,
            v,
            new,
            bail,
            reset,
            ..
        } = s;
        let at = *at;
        let (this, this_at) = (self.this(Span::call_site()), self.this(at));
        let commit = match self.buffer(w, at).filter(|_| s.last) {
            Some(buf) => {
                quote_spanned!(at=> ::core::mem::swap(&mut #this_at.state.#f_at, &mut #buf);)
            }
            None => {
                quote_spanned!(at=> ::core::clone::Clone::clone_from(&mut #this_at.state.#f_at, #new);)
            }
        };
        let get = if self.masked() || self.cond(w) {
            quote!(let ::core::option::Option::Some(#new) = #v else #bail;)
        } else {
            quote!(let #new = #v;)
        };
        let body = quote! {
            #get
            let _ = &#new;
            #commit
            #this.__fresh[#si] = true;
        };
        if self.masked() {
            quote!(if __plan.writes_state(#si as u32) { #body } else #reset)
        } else if self.cond(w) {
            // A writer only some phases run: the state is kept on the
            // others.
            quote!(if #v.is_some() { #body })
        } else {
            body
        }
    }

    /// The commit of a state whose writer returns its value: assigned
    /// (moved, or cloned when another sink takes it later).
    fn commit_assigned(&self, s: &StateSite, w: cortex_core::ir::NodeId) -> TokenStream {
        let StateSite {
            si,
            at,
            f_at,
            v,
            new,
            last,
            bail,
            reset,
        } = s;
        let at = *at;
        let (this, this_at) = (self.this(Span::call_site()), self.this(at));
        let assign = quote_spanned!(at=> #this_at.state.#f_at = #new;);
        if self.masked() {
            let take = if *last {
                quote!(#v.take())
            } else {
                quote!(#v.clone())
            };
            quote! {
                if __plan.writes_state(#si as u32) {
                    let ::core::option::Option::Some(#new) = #take else #bail;
                    #assign
                    #this.__fresh[#si] = true;
                } else #reset
            }
        } else {
            let value = if *last {
                quote!(#v)
            } else {
                quote!(::core::clone::Clone::clone(&#v))
            };
            if self.cond(w) {
                quote! {
                    if let ::core::option::Option::Some(#new) = #value {
                        #assign
                        #this.__fresh[#si] = true;
                    }
                }
            } else {
                quote! {
                    let #new = #value;
                    #assign
                    #this.__fresh[#si] = true;
                }
            }
        }
    }

    /// Rate `i`'s held value: what its node computed this frame is kept
    /// (its buffer traded in), and whether this frame held it.
    fn keep_hold(&self, i: usize) -> Option<TokenStream> {
        let r = self.rated?;
        let (id, slot) = (r.rates.get(i)?.node, *r.slots.get(i)?);
        let decl = &self.cx.ast.nodes[id as usize];
        let this = self.this(Span::call_site());
        let fresh = local(&format!("__fresh{i}"), decl.name.span());
        let s = syn::Index::from(slot);
        let keep = match self.buffer(id, Span::call_site()) {
            Some(buf) if self.fills(id) => quote! {
                if #fresh.is_some() {
                    ::core::mem::swap(&mut #this.__held.#s, &mut #buf);
                    #this.__holds[#slot].computed_at = ::core::option::Option::Some(__now);
                }
            },
            _ => quote! {
                if let ::core::option::Option::Some(__v) = #fresh {
                    #this.__held.#s = __v;
                    #this.__holds[#slot].computed_at = ::core::option::Option::Some(__now);
                }
            },
        };
        Some(quote! {
            #keep
            #this.__holds[#slot].held_last_frame = __held_mask & (1u64 << #i) != 0;
        })
    }
}

/// One written state's commit as its emitters see it.
struct StateSite {
    si: usize,
    /// The state's span in its write.
    at: Span,
    /// The state's field, spanned there.
    f_at: proc_macro2::Ident,
    /// The writer's local and the new value's.
    v: proc_macro2::Ident,
    new: proc_macro2::Ident,
    /// Whether the state is the value's last sink.
    last: bool,
    /// The error when the writer did not run.
    bail: TokenStream,
    /// The statements putting the state back to its initial value.
    reset: TokenStream,
}
