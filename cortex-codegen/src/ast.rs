//! The syntax tree of a `cortex_graph!` invocation, with the tokens and spans
//! code generation and diagnostics need.

use proc_macro2::extra::DelimSpan;
use proc_macro2::Span;
use syn::{Attribute, Expr, Ident, LitStr, Path, Type, Visibility};

/// `vis pipeline Name { items }`.
pub struct PipelineAst {
    /// Doc comments and other attributes for the generated struct.
    pub attrs: Vec<Attribute>,
    /// Visibility of the generated items.
    pub vis: Visibility,
    /// `#[parallel]`: also generate the parallel run functions.
    pub parallel: bool,
    /// The pipeline's name.
    pub name: Ident,
    /// `input name: Type;`
    pub inputs: Vec<InputDecl>,
    /// `state name: Type = init;`
    pub states: Vec<StateDecl>,
    /// `node name = path(args)?;`
    pub nodes: Vec<NodeDecl>,
    /// `from -> state;`
    pub writes: Vec<WriteDecl>,
    /// `mode NAME { key: value, … }`
    pub modes: Vec<ModeDecl>,
    /// `output name: Type, …;`
    pub outputs: Vec<OutputDecl>,
}

/// `input name: Type;`
pub struct InputDecl {
    pub name: Ident,
    pub ty: Type,
}

/// `state name: Type = init;`
pub struct StateDecl {
    pub name: Ident,
    pub ty: Type,
    pub init: Expr,
}

/// `#[annotations] node name(: Type)? = path(args)?;`
pub struct NodeDecl {
    pub name: Ident,
    /// The declared value type, if written.
    pub ty: Option<Type>,
    pub func: Path,
    /// The call's parentheses, so the generated call carries them and
    /// rustc's suggestions (e.g. a missing argument) quote the user's call.
    pub paren: DelimSpan,
    pub args: Vec<NodeArg>,
    pub fallible: bool,
    pub compilable: bool,
    /// `#[compilable(strip = …)]` or `#[compilable(reduce = …)]`.
    pub strip: Option<StripForm>,
    pub weight_key: Option<LitStr>,
    /// The declaration's source text, for the IR.
    pub source: String,
}

/// A node's declared strip form: the expression building it, and whether it
/// maps rows (`strip = …`) or reduces them (`reduce = …`).
pub struct StripForm {
    pub shape: cortex_core::access::StripShape,
    pub expr: Expr,
}

/// A node argument.
pub enum NodeArg {
    /// A bare identifier: an input, state or node (or `weights`).
    Name(Ident),
    /// `&mut name` where `name` is the node itself: its own buffer.
    Buffer(Span),
    /// Any other expression, passed through (boxed: most arguments are
    /// names).
    Const(Box<Expr>),
}

impl NodeArg {
    /// Where the argument is written.
    pub fn span(&self) -> Span {
        match self {
            NodeArg::Name(i) => i.span(),
            NodeArg::Buffer(s) => *s,
            NodeArg::Const(e) => syn::spanned::Spanned::span(e),
        }
    }
}

/// `from -> to;`
pub struct WriteDecl {
    pub from: Ident,
    pub to: Ident,
}

/// `mode NAME { key: value, … } (where rate, …;)?`
pub struct ModeDecl {
    pub name: Ident,
    pub entries: Vec<ModeEntry>,
    pub rates: Vec<RateDecl>,
}

/// `node every k (or trigger)?` in a mode's `where` clause.
pub struct RateDecl {
    pub node: Ident,
    /// `None` when malformed (already reported as a syntax error).
    pub every: Option<u32>,
    pub every_span: Span,
    pub trigger: Option<TriggerDecl>,
}

/// `source.field…`: a `bool` graph value, or a field path into one.
pub struct TriggerDecl {
    pub source: Ident,
    pub fields: Vec<syn::Member>,
}

/// `key: value` in a mode.
pub struct ModeEntry {
    pub key: Ident,
    /// `None` when malformed (already reported as a syntax error).
    pub value: Option<f64>,
    pub value_span: Span,
}

/// `#[optional]? name: Type` in an `output` list.
pub struct OutputDecl {
    pub name: Ident,
    /// The type; `()` when it was missing (already reported), so the
    /// placeholder outputs struct still has the field.
    pub ty: Type,
    pub optional: bool,
}
