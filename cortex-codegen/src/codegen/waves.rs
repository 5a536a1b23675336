//! Parallel run functions: a plan's waves, each wave's nodes at once.

use std::collections::HashMap;

use cortex_core::ir::NodeId;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// One node's work in a parallel run function.
pub(super) struct Job {
    /// A closure returning its call's result, checked to cross threads:
    /// `Result<cortex::__private::Crossing<T>, _>`, or of an `Option` of
    /// one when the job may leave the node out (`optional`).
    pub run: TokenStream,
    /// The local its result is bound to.
    pub value: proc_macro2::Ident,
    /// The statements binding its value.
    pub bind: TokenStream,
    /// Whether the job returns an `Option`: `None` for a node the frame's
    /// plan (run-time plans) or phase (rated modes) leaves out.
    pub optional: bool,
}

/// The nodes of a parallel run function, gathered before they are emitted
/// wave by wave, as the frame's steps say.
#[derive(Default)]
pub(super) struct Parallel {
    /// Per node: its job.
    pub jobs: HashMap<NodeId, Job>,
    /// Per fused group (by its first member): the statements running it.
    pub groups: HashMap<NodeId, TokenStream>,
}

/// One wave of a parallel run: a lone node runs on the calling thread;
/// several run at once on the pool (nested `join`s, so nothing is
/// allocated), then their results are taken in plan order, so the error
/// reported is the first in plan order whatever finished first.
pub(super) fn wave_stmts(
    c: &TokenStream,
    obs: &proc_macro2::Ident,
    wave: &[NodeId],
    jobs: &HashMap<NodeId, Job>,
) -> TokenStream {
    let parts: Vec<&Job> = wave.iter().filter_map(|id| jobs.get(id)).collect();
    let results: Vec<proc_macro2::Ident> = (0..parts.len())
        .map(|i| format_ident!("__wave_result_{}", i))
        .collect();
    let Some(last) = parts.last() else {
        return TokenStream::new();
    };
    let last_job = &last.run;
    let last_result = &results[parts.len() - 1];
    let (mut run, mut pattern) = (quote!((#last_job)()), quote!(#last_result));
    for i in (0..parts.len() - 1).rev() {
        let job = &parts[i].run;
        let r = &results[i];
        run = quote!(#c::__private::join(#job, || #run));
        pattern = quote!((#r, #pattern));
    }
    let takes = parts.iter().zip(&results).map(|(job, r)| {
        let (value, bind) = (&job.value, &job.bind);
        let inner = if job.optional {
            quote!(v.map(|__c| __c.into_inner()))
        } else {
            quote!(v.into_inner())
        };
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
