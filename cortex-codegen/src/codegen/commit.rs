//! The end of a run function: its outputs (into the caller's, or new
//! ones), its state commits and its held values — only once every node
//! succeeded, so a failing frame commits nothing.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};

use super::shape::{node_local, Flavor};
use super::site::Body;
use crate::names::{local, text};
use cortex_core::lower::Step;

impl Body<'_> {
    /// Per node: how many of the frame's end steps take its value (its
    /// outputs the plan computes, the states it writes, its held value);
    /// the last one takes it (a filled value: swaps buffers with its sink,
    /// so nothing is allocated), the others a copy.
    pub(super) fn sink_counts(&self) -> Vec<usize> {
        let mut remaining: Vec<usize> = vec![0; self.cx.ir.nodes.len()];
        for step in self.steps {
            let node = match *step {
                Step::Output { node, .. } if self.live(node) => node,
                Step::CommitState { node, .. } => node,
                Step::KeepHold { rate } => match self.rated.and_then(|r| r.rates.get(rate)) {
                    Some(r) => r.node,
                    None => continue,
                },
                _ => continue,
            };
            remaining[node as usize] += 1;
        }
        remaining
    }

    /// The outputs, each checked against its declared type at that type,
    /// the same way on every path: into the caller's outputs (reusing their
    /// buffers; an output the caller does not read is left as it was, and
    /// a plan computing only the read ones may not have its value) or into
    /// new ones.
    pub(super) fn outputs(&self, remaining: &mut [usize]) -> TokenStream {
        let (ir, ast, c) = (self.cx.ir, self.cx.ast, self.cx.c);
        let outputs_ty = &self.n.outputs;
        let mut into_stmts = Vec::new();
        let mut fresh_fields = Vec::new();
        let mut fresh_stmts = Vec::new();
        for (oi, (o, decl)) in ir.outputs.iter().zip(&ast.outputs).enumerate() {
            let at = syn::spanned::Spanned::span(&decl.ty);
            let is_live = self.live(o.node);
            let last = if is_live {
                remaining[o.node as usize] -= 1;
                remaining[o.node as usize] == 0
            } else {
                false
            };
            let site = OutputSite {
                oi,
                o,
                decl,
                at,
                v: node_local(ir, o.node, at),
                x: local("__output", at),
                fresh_local: local(&format!("__fresh_output{oi}"), at),
                is_live,
                last,
                missing: self.internal(&format!("output `{}` missing", text(&decl.name))),
            };
            let (into, fresh) = if self.is_ref(o.node) {
                self.output_of_ref(&site)
            } else {
                self.output_of_value(&site)
            };
            let (name, fresh_local) = (&decl.name, &site.fresh_local);
            into_stmts.push(into);
            fresh_stmts.push(quote!(let #fresh_local = #fresh;));
            fresh_fields.push(quote!(#name: #fresh_local));
        }
        quote! {
            match __sink {
                #c::__private::Sink::Into(__o, __read) => { #(#into_stmts)* }
                #c::__private::Sink::Fresh(__slot) => {
                    #(#fresh_stmts)*
                    *__slot = ::core::option::Option::Some(#outputs_ty { #(#fresh_fields,)* });
                }
            }
        }
    }

    /// A filled value's output (its local is `&T`, or `Option<&T>` when
    /// masked), or a rated value's (a copy: the hold keeps the value): the
    /// statement storing it into the caller's outputs, and the new output.
    fn output_of_ref(&self, s: &OutputSite<'_>) -> (TokenStream, TokenStream) {
        let c = self.cx.c;
        let OutputSite {
            oi,
            o,
            decl,
            at,
            v,
            x,
            missing,
            ..
        } = s;
        let (name, ty, at) = (&decl.name, &decl.ty, *at);
        let buf = self.buffer(o.node, at).filter(|_| s.last);
        let get = if self.masked() {
            quote!(match #v { ::core::option::Option::Some(#x) => ::core::option::Option::Some(#x), ::core::option::Option::None => ::core::option::Option::None })
        } else if s.is_live {
            quote!(::core::option::Option::Some(#v))
        } else {
            quote!(::core::option::Option::None::<&#ty>)
        };
        let (into, buf_arg) = match &buf {
            Some(buf) => (
                quote_spanned!(at=> #c::__private::swap_into::<#ty>),
                quote!(&mut #buf),
            ),
            None => (
                quote_spanned!(at=> #c::__private::copy_into::<#ty>),
                quote!(#x),
            ),
        };
        let (into_call, fresh) = if o.optional {
            (
                quote! {
                    match (#get) {
                        ::core::option::Option::Some(#x) => #c::__private::into_option(&mut __o.#name, |__slot| #into(__slot, #buf_arg)),
                        ::core::option::Option::None => __o.#name = ::core::option::Option::None,
                    }
                },
                quote!((#get).map(|#x: &#ty| ::core::clone::Clone::clone(#x))),
            )
        } else {
            (
                quote! {
                    let ::core::option::Option::Some(#x) = (#get) else #missing;
                    #into(&mut __o.#name, #buf_arg);
                },
                quote! {{
                    let ::core::option::Option::Some(#x) = (#get) else #missing;
                    let __typed: &#ty = #x;
                    ::core::clone::Clone::clone(__typed)
                }},
            )
        };
        (quote!(if __read.contains(#oi) { #into_call }), fresh)
    }

    /// A plain value's output: moved (or, when another sink takes it
    /// later, cloned) into the caller's outputs or the new ones, computed
    /// the same way for both.
    fn output_of_value(&self, s: &OutputSite<'_>) -> (TokenStream, TokenStream) {
        let OutputSite {
            oi,
            o,
            decl,
            at,
            v,
            x,
            fresh_local,
            last,
            missing,
            ..
        } = s;
        let (ty, at, last) = (&decl.ty, *at, *last);
        let typed = quote_spanned!(at=> { let __typed: #ty = #x; __typed });
        let take = |v: &proc_macro2::Ident| {
            if last || !s.is_live {
                quote!(#v)
            } else {
                quote!(::core::clone::Clone::clone(&#v))
            }
        };
        let masked_take = if last {
            quote!(#v.take())
        } else {
            quote!(#v.clone())
        };
        let value = match (&self.flavor, o.optional) {
            (Flavor::Mode(p), true) if p.is_live(o.node) => {
                let t = take(v);
                quote!({ let #x = #t; ::core::option::Option::Some(#typed) })
            }
            (Flavor::Mode(_), true) => quote!(::core::option::Option::None),
            (Flavor::Mode(_), false) => {
                let t = take(v);
                quote!({ let #x = #t; #typed })
            }
            (Flavor::Masked(_), true) => {
                quote!(match #masked_take { ::core::option::Option::Some(#x) => ::core::option::Option::Some(#typed), ::core::option::Option::None => ::core::option::Option::None })
            }
            (Flavor::Masked(_), false) => {
                quote!(match #masked_take { ::core::option::Option::Some(#x) => #typed, ::core::option::Option::None => #missing })
            }
        };
        // Into the caller's outputs: the value computed the same way, then
        // stored (a plain value is moved in; its old value dropped).
        let name = &decl.name;
        (
            quote!(if __read.contains(#oi) { let #fresh_local = #value; __o.#name = #fresh_local; }),
            value,
        )
    }

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

/// One output as its emitters see it.
struct OutputSite<'a> {
    /// Its index among the outputs.
    oi: usize,
    o: &'a cortex_core::ir::OutputIr,
    decl: &'a crate::ast::OutputDecl,
    /// Its declared type's span: where its checks are.
    at: Span,
    /// The writer's local, the value's and the new output's.
    v: proc_macro2::Ident,
    x: proc_macro2::Ident,
    fresh_local: proc_macro2::Ident,
    /// Whether the plan runs its node, and whether the output is the
    /// value's last sink.
    is_live: bool,
    last: bool,
    /// The error when a plan did not compute it.
    missing: TokenStream,
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
