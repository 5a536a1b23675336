//! The annotations `cortex_graph!` understands, where each may appear, and
//! the errors for unknown, misplaced, malformed and repeated ones.

use cortex_core::access::StripShape;
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, Expr, ExprLit, Ident, Lit, LitStr, Meta, Token};

use crate::ast::StripForm;

/// The item an annotation is attached to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Pipeline,
    Input,
    State,
    Node,
    Write,
    Mode,
    Output,
}

impl Target {
    fn describe(self) -> &'static str {
        match self {
            Target::Pipeline => "the pipeline",
            Target::Input => "an input",
            Target::State => "a state",
            Target::Node => "a node",
            Target::Write => "a state write",
            Target::Mode => "a mode",
            Target::Output => "an output",
        }
    }
}

/// The annotations found on one item.
#[derive(Default)]
pub struct Annotations {
    pub compilable: bool,
    /// `#[compilable(strip = …)]` / `#[compilable(reduce = …)]`.
    pub strip: Option<StripForm>,
    pub external_call: bool,
    pub weight_key: Option<LitStr>,
    pub optional: bool,
    /// `#[parallel]` (pipeline): also generate the parallel run functions.
    pub parallel: bool,
    /// `#[doc]` and other attributes passed through (pipeline only).
    pub passthrough: Vec<Attribute>,
}

const KNOWN: &str = "`#[parallel]` (on the pipeline), `#[compilable]` (or `#[compilable(strip = …)]`, `#[compilable(reduce = …)]`), `#[external_call]`, `#[weight_key = \"…\"]` (on nodes) and `#[optional]` (on outputs)";

/// Reads the annotations of an item of kind `target`, recording every
/// problem in `errors`.
pub fn parse(attrs: Vec<Attribute>, target: Target, errors: &mut Vec<syn::Error>) -> Annotations {
    let mut out = Annotations::default();
    let mut seen: Vec<String> = Vec::new();
    for attr in attrs {
        let Some(name) = attr.path().get_ident().map(|i| i.to_string()) else {
            errors.push(syn::Error::new_spanned(
                attr.path(),
                format!("unknown annotation; cortex_graph! understands {KNOWN}"),
            ));
            continue;
        };
        if name == "doc" {
            if target == Target::Pipeline {
                out.passthrough.push(attr);
            }
            continue;
        }
        if let Err(e) = admit(&attr, &name, target, &seen) {
            errors.push(e);
            continue;
        }
        seen.push(name.clone());
        apply(&name, &attr, &mut out, errors);
    }
    out
}

/// Whether annotation `name` may stand on an item of kind `target` once
/// more (`seen`: the annotations already read): the error if not.
fn admit(attr: &Attribute, name: &str, target: Target, seen: &[String]) -> syn::Result<()> {
    let allowed = match name {
        "compilable" | "external_call" | "weight_key" => target == Target::Node,
        "optional" => target == Target::Output,
        "parallel" => target == Target::Pipeline,
        _ => {
            return Err(syn::Error::new_spanned(
                attr.path(),
                format!("unknown annotation `#[{name}]`; cortex_graph! understands {KNOWN}"),
            ));
        }
    };
    if !allowed {
        let home = match name {
            "optional" => "outputs",
            "parallel" => "the pipeline",
            _ => "nodes",
        };
        return Err(syn::Error::new_spanned(
            attr.path(),
            format!(
                "`#[{name}]` applies to {home}, not to {}",
                target.describe()
            ),
        ));
    }
    if seen.iter().any(|s| s == name) {
        return Err(syn::Error::new_spanned(
            attr.path(),
            format!("`#[{name}]` is given twice; remove this one"),
        ));
    }
    Ok(())
}

/// Records an admitted annotation `name` in `out`, or what is malformed in
/// it in `errors`.
fn apply(name: &str, attr: &Attribute, out: &mut Annotations, errors: &mut Vec<syn::Error>) {
    match name {
        "weight_key" => match &attr.meta {
            Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }) => out.weight_key = Some(s.clone()),
                other => errors.push(syn::Error::new_spanned(
                    other,
                    "malformed `#[weight_key]`: the key must be a string, e.g. `#[weight_key = \"ws\"]`",
                )),
            },
            _ => errors.push(syn::Error::new_spanned(
                &attr.meta,
                "malformed `#[weight_key]`: expected `#[weight_key = \"ws\"]`",
            )),
        },
        "compilable" if matches!(attr.meta, Meta::List(_)) => {
            match attr.parse_args::<FormArg>() {
                Ok(form) => out.strip = Some(form.0),
                Err(e) => errors.push(e),
            }
            if std::mem::replace(&mut out.compilable, true) || out.external_call {
                errors.push(syn::Error::new_spanned(
                    attr.path(),
                    "a node is either `#[compilable]` or `#[external_call]`, not both",
                ));
            }
        }
        flag => {
            if !matches!(attr.meta, Meta::Path(_)) {
                errors.push(syn::Error::new_spanned(
                    &attr.meta,
                    format!("malformed `#[{flag}]`: it takes no arguments"),
                ));
                return;
            }
            let conflict = match flag {
                "compilable" => std::mem::replace(&mut out.compilable, true) || out.external_call,
                "external_call" => std::mem::replace(&mut out.external_call, true) || out.compilable,
                "parallel" => {
                    out.parallel = true;
                    false
                }
                _ => {
                    out.optional = true;
                    false
                }
            };
            if conflict {
                errors.push(syn::Error::new_spanned(
                    attr.path(),
                    "a node is either `#[compilable]` or `#[external_call]`, not both",
                ));
            }
        }
    }
}

/// The argument of `#[compilable(…)]`: `strip = EXPR` or `reduce = EXPR`.
struct FormArg(StripForm);

impl Parse for FormArg {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let key: Ident = input.parse()?;
        let shape = match key.to_string().as_str() {
            "strip" => StripShape::Map,
            "reduce" => StripShape::Reduction,
            other => {
                return Err(syn::Error::new(
                    key.span(),
                    format!(
                        "unknown `#[compilable]` argument `{other}`: expected `strip = …` (a strip form mapping rows) or `reduce = …` (one folding every row)"
                    ),
                ))
            }
        };
        if !input.peek(Token![=]) {
            return Err(syn::Error::new(
                key.span(),
                format!("malformed `#[compilable({key})]`: expected `{key} = <expression building the strip form>`"),
            ));
        }
        input.parse::<Token![=]>()?;
        let expr: Expr = input.parse()?;
        if !input.is_empty() {
            return Err(
                input.error("`#[compilable]` takes one strip form: `strip = …` or `reduce = …`")
            );
        }
        Ok(FormArg(StripForm { shape, expr }))
    }
}
