//! Where buffer-filling nodes' buffers live in the generated pipeline: one
//! tuple field per buffer, shared by every plan's assignment.

use std::collections::HashMap;

use cortex_core::ir::{GraphIr, NodeId};
use cortex_core::memory::BufferPlan;
use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;

use crate::ast::PipelineAst;

/// Where each buffer-filling node's buffer lives in the pipeline: one
/// tuple field per buffer, as many of each declared type as the hungriest
/// plan needs.
pub struct BufferLayout {
    /// The field types, in tuple order.
    pub types: Vec<syn::Type>,
    /// (type text, index among the plan's buffers of that type) → field.
    index: HashMap<(String, u32), usize>,
}

impl BufferLayout {
    /// The layout serving every plan in `plans`.
    pub fn new(ast: &PipelineAst, ir: &GraphIr, plans: &[&BufferPlan]) -> BufferLayout {
        let mut counts: Vec<(String, u32)> = Vec::new();
        for bp in plans {
            for b in &bp.buffers {
                match counts.iter_mut().find(|(t, _)| *t == b.ty) {
                    Some((_, n)) => *n = (*n).max(b.index_in_type + 1),
                    None => counts.push((b.ty.clone(), b.index_in_type + 1)),
                }
            }
        }
        let mut types = Vec::new();
        let mut index = HashMap::new();
        for (ty, n) in counts {
            // The type as the user wrote it, at its first declaration.
            let written = ir
                .nodes
                .iter()
                .position(|node| node.ty.as_deref() == Some(ty.as_str()))
                .and_then(|i| ast.nodes[i].ty.clone());
            let Some(written) = written else { continue };
            for k in 0..n {
                index.insert((ty.clone(), k), types.len());
                types.push(written.clone());
            }
        }
        BufferLayout { types, index }
    }

    /// Per field: (type text, index among the buffers of that type).
    pub fn keys(&self) -> Vec<(String, u32)> {
        let mut keys = vec![(String::new(), 0); self.types.len()];
        for ((ty, k), &i) in &self.index {
            keys[i] = (ty.clone(), *k);
        }
        keys
    }

    /// The field of node `id`'s buffer in `bufs`, as `this.__bufs.N`
    /// (`this`: the pipeline as the run function names it).
    pub(super) fn field(
        &self,
        bufs: &BufferPlan,
        id: NodeId,
        this: &proc_macro2::Ident,
        at: Span,
    ) -> Option<TokenStream> {
        let b = bufs.buffer_of(id)?;
        let i = *self.index.get(&(b.ty.clone(), b.index_in_type))?;
        let i = syn::Index {
            index: i as u32,
            span: at,
        };
        Some(quote_spanned!(at=> #this.__bufs.#i))
    }
}
