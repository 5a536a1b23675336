//! Pipelines built at run time: a graph made with
//! [`GraphSpec::builder`](crate::model::spec::GraphSpec::builder) or read
//! from a JSON file ([`GraphFile`]) whose nodes call ops an op table knows ([`Ops`]), checked by
//! the macro's own rules, lowered to the same
//! [`Program`](crate::lower::Program) and run by [`DynPipeline`].
//!
//! Values between nodes are type-erased: each is a [`Value`]
//! (`Arc<dyn Any + Send + Sync>`), so one value feeds any number of
//! consumers, outputs, states and held values without a copy, and an op
//! downcasts its arguments to the types it expects ([`Call::arg`]). A
//! filled node's value is reused frame after frame when nothing else holds
//! it any more ([`Call::fill`]), and a state written by a filled value
//! trades buffers with it, as generated code does.
//!
//! An op registered with a descriptor ([`OpDesc`], [`Ops::describe`]) is
//! declared once: its name (`vision.to_gray`), typed inputs, output and
//! parameters are what graph files write and what the build checks — a
//! graph whose edges, outputs or states do not carry the types its ops
//! declare is refused before the first frame — and what the listing
//! ([`Ops::listing`]) shows.
//!
//! Fused strip groups run through the strip executor when fusion is on
//! (the default, as for generated pipelines), from the strip forms
//! registered with [`Ops::strip`], falling back to the members' own calls
//! when a group declines a frame.

mod any_args;
mod desc;
mod engine;
mod file;
mod fused;
mod inspect;
mod ops;
mod outputs;
mod params;
mod pipelined;
mod typecheck;

pub use desc::{CallArgs, NoParams, OpBuilder, OpDesc, Params, Port, TypeRef};
pub use engine::{BuildError, DynPipeline};
pub use file::{
    ExportError, FileError, GraphFile, LoadError, MAX_GRAPH_FILE_BYTES, MAX_NAME_CHARS,
};
pub use ops::{Call, FormArgs, OpFn, Ops, Payload, Value, DEFAULT_INIT};
pub use outputs::DynOutputs;

/// A name that lives as long as the program, for
/// [`PipelineError::Node`](crate::runtime::error::PipelineError::Node):
/// each distinct name is kept once, however many pipelines are built.
pub(crate) fn intern(name: &str) -> &'static str {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(&n) = names.get(name) {
        return n;
    }
    let leaked: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.insert(leaked);
    leaked
}

/// A fused group's members as the observer takes them (a slice that lives
/// as long as the program): each distinct list is kept once.
pub(crate) fn intern_ids(ids: &[crate::model::ir::NodeId]) -> &'static [crate::model::ir::NodeId] {
    use crate::model::ir::NodeId;
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static LISTS: OnceLock<Mutex<HashSet<&'static [NodeId]>>> = OnceLock::new();
    let mut lists = LISTS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(&l) = lists.get(ids) {
        return l;
    }
    let leaked: &'static [NodeId] = Box::leak(ids.to_vec().into_boxed_slice());
    lists.insert(leaked);
    leaked
}

/// A graph as an observer's `frame_begin` takes it (one that lives as long
/// as the program): the copy kept for an equal graph when there is one
/// (found by fingerprint, then compared), else a new one, so each distinct
/// graph is kept once however many pipelines of it are built.
pub(crate) fn intern_ir(ir: &crate::model::ir::GraphIr) -> &'static crate::model::ir::GraphIr {
    use crate::model::ir::GraphIr;
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static GRAPHS: OnceLock<Mutex<HashMap<u64, Vec<&'static GraphIr>>>> = OnceLock::new();
    let mut graphs = GRAPHS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let same = graphs.entry(ir.fingerprint()).or_default();
    if let Some(&g) = same.iter().find(|&&g| g == ir) {
        return g;
    }
    let leaked: &'static GraphIr = Box::leak(Box::new(ir.clone()));
    same.push(leaked);
    leaked
}
