//! Parallel run functions: a plan's waves, each wave's nodes at once.

use std::collections::HashMap;

use cortex_core::ir::NodeId;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// The nodes of a parallel run function, gathered before they are emitted
/// wave by wave.
pub(super) struct Parallel {
    /// Each wave's units: a fused group's members, or one node.
    pub waves: Vec<Vec<Vec<NodeId>>>,
    /// Per node: its job (a closure returning its call's result, checked to
    /// cross threads: `Result<cortex::__private::Crossing<T>, _>`), the local
    /// its result is bound to, and the statements binding its value.
    pub jobs: HashMap<NodeId, (TokenStream, proc_macro2::Ident, TokenStream)>,
    /// Per fused group (by its first member): the statements running it.
    pub groups: HashMap<NodeId, TokenStream>,
}

/// One wave of a parallel run: a lone node runs on the calling thread;
/// several run at once on the pool (nested `join`s, so nothing is
/// allocated), then their results are taken in plan order, so the error
/// reported is the first in plan order whatever finished first. In a
/// `masked` run (a plan chosen at run time) each result is an `Option`,
/// `None` for a node the plan leaves out.
pub(super) fn wave_stmts(
    c: &TokenStream,
    obs: &proc_macro2::Ident,
    wave: &[NodeId],
    jobs: &HashMap<NodeId, (TokenStream, proc_macro2::Ident, TokenStream)>,
    masked: bool,
) -> TokenStream {
    let parts: Vec<&(TokenStream, proc_macro2::Ident, TokenStream)> =
        wave.iter().filter_map(|id| jobs.get(id)).collect();
    let results: Vec<proc_macro2::Ident> = (0..parts.len())
        .map(|i| format_ident!("__wave_result_{}", i))
        .collect();
    let Some((last_job, _, _)) = parts.last() else {
        return TokenStream::new();
    };
    let last_result = &results[parts.len() - 1];
    let (mut run, mut pattern) = (quote!((#last_job)()), quote!(#last_result));
    for i in (0..parts.len() - 1).rev() {
        let job = &parts[i].0;
        let r = &results[i];
        run = quote!(#c::__private::join(#job, || #run));
        pattern = quote!((#r, #pattern));
    }
    let inner = if masked {
        quote!(v.map(|__c| __c.into_inner()))
    } else {
        quote!(v.into_inner())
    };
    let takes = parts.iter().zip(&results).map(|((_, value, bind), r)| {
        quote! {
            let #value = match #r {
                ::core::result::Result::Ok(v) => #inner,
                ::core::result::Result::Err(e) => {
                    #obs.frame_end(false);
                    return ::core::result::Result::Err(e);
                }
            };
            #bind
        }
    });
    quote! {
        let #pattern = #run;
        #(#takes)*
    }
}
