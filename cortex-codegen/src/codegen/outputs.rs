//! A run function's outputs, each checked at its declared type: into the
//! caller's (reusing their buffers) or into new ones, from a node's value
//! or its filled buffer — the frame's last taker of a value gets it, the
//! others a copy.

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
