//! Parsing the DSL into [`PipelineAst`], recovering after a malformed item so
//! that every syntax error of an invocation is reported at once.

use proc_macro2::TokenTree;
use quote::ToTokens;
use syn::parse::discouraged::Speculative;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{
    braced, Attribute, Expr, ExprCall, ExprPath, ExprReference, ExprTry, Ident, Token, Type,
    Visibility,
};

use crate::ast::*;
use crate::attrs::{self, Target};
use mode::parse_mode;

mod mode;

mod kw {
    syn::custom_keyword!(pipeline);
    syn::custom_keyword!(input);
    syn::custom_keyword!(state);
    syn::custom_keyword!(node);
    syn::custom_keyword!(mode);
    syn::custom_keyword!(every);
    syn::custom_keyword!(or);
    syn::custom_keyword!(output);
}

/// A parsed invocation and the syntax errors found on the way.
pub struct Parsed {
    /// The pipeline, when its header parsed.
    pub ast: Option<PipelineAst>,
    /// Every syntax error, in source order.
    pub errors: Vec<syn::Error>,
    /// Whether a malformed item was skipped.
    pub items_skipped: bool,
}

impl Parse for Parsed {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut errors = Vec::new();
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        input.parse::<kw::pipeline>().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected `pipeline Name { … }` (optionally `pub pipeline Name { … }`)",
            )
        })?;
        let name: Ident = input.parse()?;
        let body;
        braced!(body in input);
        let annotations = attrs::parse(attrs, Target::Pipeline, &mut errors);
        let mut ast = PipelineAst {
            attrs: annotations.passthrough,
            parallel: annotations.parallel,
            vis,
            name,
            inputs: Vec::new(),
            states: Vec::new(),
            nodes: Vec::new(),
            writes: Vec::new(),
            modes: Vec::new(),
            outputs: Vec::new(),
        };
        let mut items_skipped = false;
        while !body.is_empty() {
            let fork = body.fork();
            match parse_item(&fork, &mut ast, &mut errors) {
                Ok(()) => body.advance_to(&fork),
                Err(e) => {
                    errors.push(e);
                    items_skipped = true;
                    skip_item(&body);
                }
            }
        }
        if !input.is_empty() {
            errors.push(input.error(
                "unexpected tokens after the pipeline; one `cortex_graph!` declares one pipeline",
            ));
        }
        Ok(Parsed {
            ast: Some(ast),
            errors,
            items_skipped,
        })
    }
}

/// Skips to just after the next `;` or brace group, to resume after an error.
fn skip_item(input: ParseStream) {
    while let Ok(tt) = input.parse::<TokenTree>() {
        match tt {
            TokenTree::Punct(p) if p.as_char() == ';' => return,
            TokenTree::Group(g) if g.delimiter() == proc_macro2::Delimiter::Brace => return,
            _ => {}
        }
    }
}

fn parse_item(
    input: ParseStream,
    ast: &mut PipelineAst,
    errors: &mut Vec<syn::Error>,
) -> syn::Result<()> {
    let attributes = input.call(Attribute::parse_outer)?;
    if input.peek(kw::input) {
        input.parse::<kw::input>()?;
        attrs::parse(attributes, Target::Input, errors);
        let name = input.parse()?;
        input.parse::<Token![:]>()?;
        let ty = input.parse()?;
        input.parse::<Token![;]>()?;
        ast.inputs.push(InputDecl { name, ty });
    } else if input.peek(kw::state) {
        input.parse::<kw::state>()?;
        attrs::parse(attributes, Target::State, errors);
        let name = input.parse()?;
        input.parse::<Token![:]>()?;
        let ty = input.parse()?;
        input.parse::<Token![=]>().map_err(|e| {
            syn::Error::new(
                e.span(),
                "a state needs an initial value: `state name: Type = initial_value;`",
            )
        })?;
        let init = input.parse()?;
        input.parse::<Token![;]>()?;
        ast.states.push(StateDecl { name, ty, init });
    } else if input.peek(kw::node) {
        input.parse::<kw::node>()?;
        let a = attrs::parse(attributes, Target::Node, errors);
        let node = parse_node(input, a)?;
        ast.nodes.push(node);
    } else if input.peek(kw::mode) {
        input.parse::<kw::mode>()?;
        attrs::parse(attributes, Target::Mode, errors);
        ast.modes.push(parse_mode(input, errors)?);
    } else if input.peek(kw::output) {
        input.parse::<kw::output>()?;
        // `#[optional] output a: A, b: B;` applies to every item of the list.
        let all = attrs::parse(attributes, Target::Output, errors);
        parse_outputs(input, all.optional, ast, errors)?;
    } else if input.peek(Ident) && input.peek2(Token![->]) {
        attrs::parse(attributes, Target::Write, errors);
        let from = input.parse()?;
        input.parse::<Token![->]>()?;
        let to = input.parse()?;
        input.parse::<Token![;]>()?;
        ast.writes.push(WriteDecl { from, to });
    } else {
        return Err(input.error(
            "expected one of: `input name: T;`, `state name: T = init;`, `node name = f(args);`, `producer -> state;`, `mode NAME { key: value }`, `output name: T;`",
        ));
    }
    Ok(())
}

/// `name: Type, …;` after `output`. Each item is parsed on its own: a
/// malformed one is reported and skipped to the next `,`, and a missing type
/// is reported with the output still declared (typed `()`), so the outputs
/// struct the rest of the crate uses keeps every well-formed field.
fn parse_outputs(
    input: ParseStream,
    optional_all: bool,
    ast: &mut PipelineAst,
    errors: &mut Vec<syn::Error>,
) -> syn::Result<()> {
    loop {
        let attrs = input.call(Attribute::parse_outer)?;
        let a = attrs::parse(attrs, Target::Output, errors);
        let name: Ident = input.parse()?;
        let ty: Type = if input.peek(Token![:]) {
            input.parse::<Token![:]>()?;
            match input.parse::<Type>() {
                Ok(ty) => ty,
                Err(e) => {
                    errors.push(e);
                    skip_to_separator(input);
                    syn::parse_quote!(())
                }
            }
        } else {
            errors.push(syn::Error::new(
                name.span(),
                format!("output `{name}` needs its type: `output {name}: Type;`"),
            ));
            if !input.peek(Token![,]) && !input.peek(Token![;]) {
                skip_to_separator(input);
            }
            syn::parse_quote!(())
        };
        ast.outputs.push(OutputDecl {
            name,
            ty,
            optional: a.optional || optional_all,
        });
        if input.peek(Token![;]) {
            input.parse::<Token![;]>()?;
            return Ok(());
        }
        input.parse::<Token![,]>()?;
        if input.peek(Token![;]) {
            input.parse::<Token![;]>()?;
            return Ok(());
        }
    }
}

/// Skips to just before the next top-level `,` or `;`.
fn skip_to_separator(input: ParseStream) {
    while !input.is_empty() && !input.peek(Token![,]) && !input.peek(Token![;]) {
        if input.parse::<TokenTree>().is_err() {
            return;
        }
    }
}

fn parse_node(input: ParseStream, a: attrs::Annotations) -> syn::Result<NodeDecl> {
    let name: Ident = input.parse()?;
    let ty = if input.peek(Token![:]) {
        input.parse::<Token![:]>()?;
        Some(input.parse::<Type>()?)
    } else {
        None
    };
    input.parse::<Token![=]>()?;
    let expr: Expr = input.parse()?;
    input.parse::<Token![;]>()?;
    let source = match &ty {
        Some(t) => format!(
            "{name}: {} = {}",
            t.to_token_stream(),
            expr.to_token_stream()
        ),
        None => format!("{name} = {}", expr.to_token_stream()),
    };
    let (call, fallible) = match expr {
        Expr::Try(ExprTry { expr, .. }) => (*expr, true),
        other => (other, false),
    };
    let Expr::Call(ExprCall {
        func,
        args,
        paren_token,
        ..
    }) = call
    else {
        return Err(syn::Error::new_spanned(
            call,
            "a node calls a function: `node name = path::to::function(arg, …);` (add `?` if it returns a Result)",
        ));
    };
    let Expr::Path(ExprPath {
        path, qself: None, ..
    }) = *func
    else {
        return Err(syn::Error::new_spanned(
            func,
            "expected a function path, e.g. `ops::to_gray`",
        ));
    };
    check_buffer_args(&args, &name)?;
    let args = args.into_iter().map(|arg| node_arg(arg, &name)).collect();
    Ok(NodeDecl {
        name,
        ty,
        func: path,
        paren: paren_token.span,
        args,
        fallible,
        compilable: a.compilable,
        strip: a.strip,
        weight_key: a.weight_key,
        source,
    })
}

/// `&mut other` of a bare name that is not the node's own: the likeliest
/// slip is passing another node's value as a buffer. Said here, in the
/// DSL's words, instead of as rustc's errors about a missing value.
fn check_buffer_args(args: &Punctuated<Expr, Token![,]>, name: &Ident) -> syn::Result<()> {
    for arg in args {
        if let Expr::Reference(ExprReference {
            mutability: Some(_),
            expr: inner,
            attrs,
            ..
        }) = arg
        {
            if let Expr::Path(ExprPath {
                qself: None, path, ..
            }) = &**inner
            {
                if attrs.is_empty() && !is_ident(inner, name) {
                    if let Some(other) = path.get_ident() {
                        return Err(syn::Error::new_spanned(
                            arg,
                            format!(
                                "`&mut {other}`: a node fills only its own buffer, `&mut {name}`; to read `{other}`'s value, pass `{other}`"
                            ),
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

/// One argument of a node's call: an edge from a bare name, the node's own
/// buffer (`&mut name`), or a constant passed as written.
fn node_arg(arg: Expr, name: &Ident) -> NodeArg {
    match arg {
        Expr::Path(ExprPath {
            qself: None,
            ref path,
            ref attrs,
        }) if attrs.is_empty()
            && path.leading_colon.is_none()
            && path.segments.len() == 1
            && path.segments[0].arguments.is_none() =>
        {
            NodeArg::Name(path.segments[0].ident.clone())
        }
        Expr::Reference(ExprReference {
            mutability: Some(_),
            expr: ref inner,
            ref attrs,
            ..
        }) if attrs.is_empty() && is_ident(inner, name) => {
            NodeArg::Buffer(syn::spanned::Spanned::span(&arg))
        }
        other => NodeArg::Const(Box::new(other)),
    }
}

/// Whether `e` is exactly the identifier `name`.
fn is_ident(e: &Expr, name: &Ident) -> bool {
    matches!(e, Expr::Path(ExprPath { qself: None, path, attrs })
        if attrs.is_empty() && path.get_ident() == Some(name))
}
