//! The unresolved graph description: names as written, before validation.
//!
//! `cortex_graph!` builds a [`GraphSpec`] from the DSL and hands it to
//! [`crate::passes::check::check`]; code that builds graphs at run time does the same.
//! Each element's position in its list is its location for diagnostics (see
//! [`crate::passes::diag::Loc`]).
//!
//! [`GraphSpec::builder`] assembles one declaration at a time (see
//! [`GraphBuilder`]) instead of spelling out the struct literals.

use crate::model::access::StripShape;

/// The name reserved for the running weight table.
pub const WEIGHTS_ARG: &str = "weights";

/// A pipeline as declared.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GraphSpec {
    /// The pipeline's name.
    pub name: String,
    /// `input name: Type;`
    pub inputs: Vec<InputSpec>,
    /// `state name: Type = init;`
    pub states: Vec<StateSpec>,
    /// `node name = path(args)?;`
    pub nodes: Vec<NodeSpec>,
    /// `producer -> state;`
    pub writes: Vec<WriteSpec>,
    /// `mode NAME { key: value, … }`
    pub modes: Vec<ModeSpec>,
    /// `output name: Type, …;`
    pub outputs: Vec<OutputSpec>,
}

/// A declared input.
#[derive(Debug, Clone, PartialEq)]
pub struct InputSpec {
    /// Its name.
    pub name: String,
    /// Its type, as written.
    pub ty: String,
}

/// A declared state slot.
#[derive(Debug, Clone, PartialEq)]
pub struct StateSpec {
    /// Its name.
    pub name: String,
    /// Its type, as written.
    pub ty: String,
    /// Its initial value, as written.
    pub init: String,
}

/// A declared node.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeSpec {
    /// Its name.
    pub name: String,
    /// The called function, as written.
    pub op: String,
    /// The arguments.
    pub args: Vec<ArgSpec>,
    /// `#[compilable]`.
    pub compilable: bool,
    /// The strip form it declares (`#[compilable(strip = …)]` or
    /// `#[compilable(reduce = …)]`), if any.
    pub strip: Option<StripShape>,
    /// `#[weight_key = "…"]`.
    pub weight_key: Option<String>,
    /// Written with a trailing `?`.
    pub fallible: bool,
    /// The declared type of its value (`node name: Type = …`), if written.
    /// A node passing its own buffer ([`ArgSpec::Buffer`]) must declare it.
    pub ty: Option<String>,
    /// The declaration's source text.
    pub source: String,
}

/// A node argument as written.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgSpec {
    /// A bare name: an input, a state or a node.
    Name(String),
    /// The reserved name `weights`: the running weight table.
    Weights,
    /// `&mut name` where `name` is the node itself: the buffer the pipeline
    /// owns for this node's value, filled in place by the call.
    Buffer,
    /// Any other expression, passed through as written.
    Const(String),
}

/// A state write `from -> to;`.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteSpec {
    /// The producer's name.
    pub from: String,
    /// The state's name.
    pub to: String,
}

/// A declared mode.
#[derive(Debug, Clone, PartialEq)]
pub struct ModeSpec {
    /// Its name.
    pub name: String,
    /// `key: value` entries in written order.
    pub weights: Vec<(String, f64)>,
    /// `where node every k (or trigger)?` clauses in written order.
    pub rates: Vec<RateSpec>,
}

/// `node every k or trigger` in a mode's `where` clause.
#[derive(Debug, Clone, PartialEq)]
pub struct RateSpec {
    /// The rated node's name.
    pub node: String,
    /// Runs on every `every`-th frame.
    pub every: u32,
    /// `source.field.field`: a graph value (and a field path into it)
    /// that makes the node run at once when true.
    pub trigger: Option<(String, Vec<String>)>,
}

/// A declared output.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputSpec {
    /// The node's name.
    pub name: String,
    /// Its type, as written.
    pub ty: String,
    /// `#[optional]`: a mode may eliminate it.
    pub optional: bool,
}

/// Builds a [`GraphSpec`] one declaration at a time, in the order the DSL
/// would list them; see the [module docs](self) for an example.
///
/// Node modifiers ([`compilable`](Self::compilable),
/// [`weight_key`](Self::weight_key), [`fallible`](Self::fallible),
/// [`source`](Self::source)) apply to the most recently added node.
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct GraphBuilder {
    pub(super) spec: GraphSpec,
    /// Per node: whether its source text was set explicitly (else it is
    /// regenerated at `build`, so modifiers such as `fallible` show in it).
    pub(super) explicit_source: Vec<bool>,
}
