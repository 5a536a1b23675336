//! A mode's declaration: its weights and its rates (`where node every k or
//! trigger`), each malformed rate one error with the rest of the mode kept.

use proc_macro2::TokenTree;
use quote::ToTokens;
use syn::parse::ParseStream;
use syn::{braced, Expr, ExprLit, ExprUnary, Ident, Lit, Token, UnOp};

use super::kw;
use crate::ast::*;

/// `mode NAME { key: weight, … }`, then its rates if `where` follows.
pub(super) fn parse_mode(
    input: ParseStream,
    errors: &mut Vec<syn::Error>,
) -> syn::Result<ModeDecl> {
    let name: Ident = input.parse()?;
    let body;
    braced!(body in input);
    let mut entries = Vec::new();
    while !body.is_empty() {
        let key: Ident = body.parse()?;
        body.parse::<Token![:]>()?;
        let value: Expr = body.parse()?;
        let parsed = weight_literal(&value);
        if parsed.is_none() {
            errors.push(syn::Error::new_spanned(
                &value,
                "malformed weight: expected a number literal such as `0.5` or `0`",
            ));
        }
        entries.push(ModeEntry {
            key,
            value: parsed,
            value_span: syn::spanned::Spanned::span(&value),
        });
        if body.is_empty() {
            break;
        }
        body.parse::<Token![,]>()?;
    }
    let rates = if input.peek(Token![where]) {
        parse_rates(input, &name, errors)
    } else {
        Vec::new()
    };
    Ok(ModeDecl {
        name,
        entries,
        rates,
    })
}

/// The rates after a mode's `where`: `rate, …;`. Recovers inside the
/// clause: a malformed rate is one error at its wrong token and the parse
/// goes on at the next `,` or `;`, so the mode — and the items after it —
/// are still declared. A rate whose node was read is kept (with a
/// placeholder count when the count is what was wrong), so its trigger
/// still counts as read and no later rule reports a consequence of the
/// same mistake.
fn parse_rates(input: ParseStream, mode: &Ident, errors: &mut Vec<syn::Error>) -> Vec<RateDecl> {
    let _ = input.parse::<Token![where]>();
    let mut rates = Vec::new();
    if input.peek(Token![;]) {
        errors.push(input.error(format!(
            "expected a rate after `where`: `where node every k;` or `where node every k or trigger;` (or remove `where` from mode `{mode}`)"
        )));
        let _ = input.parse::<Token![;]>();
        return rates;
    }
    loop {
        let mut complete_without_trigger = None;
        match parse_rate(input, errors) {
            Ok(rate) => {
                if rate.trigger.is_none() {
                    complete_without_trigger = Some(rate.node.clone());
                }
                rates.push(rate);
            }
            Err((e, rate)) => {
                errors.push(e);
                rates.extend(rate.map(|r| *r));
                skip_rate(input);
            }
        }
        if !input.peek(Token![,]) && !input.peek(Token![;]) {
            let message = if item_starts(input) || input.is_empty() {
                format!("expected `;` to end the rates of mode `{mode}` before this item")
            } else {
                match (complete_without_trigger, input.cursor().ident()) {
                    (Some(node), Some((t, _))) => format!(
                        "expected `or` before the trigger `{t}`: `{node} every k or {t}` (or `,` and another rate, or `;`)"
                    ),
                    _ => format!(
                        "expected `,` and another rate, or `;` to end the rates of mode `{mode}`"
                    ),
                }
            };
            errors.push(input.error(message));
            skip_rate(input);
        }
        if input.peek(Token![,]) {
            let _ = input.parse::<Token![,]>();
            // `where a every 2, ;`: a trailing comma ends the list too.
            if !input.peek(Token![;]) {
                continue;
            }
        }
        // A missing `;` before the next item leaves that item to parse.
        let _ = input.parse::<Token![;]>();
        return rates;
    }
}

/// Whether an item of the pipeline starts here (an annotation or an item's
/// keyword).
fn item_starts(input: ParseStream) -> bool {
    input.peek(Token![#])
        || input.peek(kw::input)
        || input.peek(kw::state)
        || input.peek(kw::node)
        || input.peek(kw::mode)
        || input.peek(kw::output)
}

/// Skips what is left of a malformed rate: to just before the next `,` or
/// `;` — or the next item, when the clause's `;` is missing.
fn skip_rate(input: ParseStream) {
    while !input.is_empty()
        && !input.peek(Token![,])
        && !input.peek(Token![;])
        && !item_starts(input)
    {
        if input.parse::<TokenTree>().is_err() {
            return;
        }
    }
}

/// `node every k` or `node every k or source.field…`. On an error, the
/// rate as far as it was read (when its node was), to keep (boxed: the
/// error stays small).
fn parse_rate(
    input: ParseStream,
    errors: &mut Vec<syn::Error>,
) -> Result<RateDecl, (syn::Error, Option<Box<RateDecl>>)> {
    const FORM: &str = "`node every k` or `node every k or trigger`";
    let node: Ident = input.parse().map_err(|_| {
        (
            input.error(format!("expected the name of a node to rate: {FORM}")),
            None,
        )
    })?;
    let mut rate = RateDecl {
        node,
        every: None,
        every_span: input.span(),
        trigger: None,
    };
    if !input.peek(kw::every) {
        let node = &rate.node;
        return Err((
            input.error(format!(
                "expected `every` after `{node}`: `{node} every 4` runs it on every 4th frame"
            )),
            Some(Box::new(rate)),
        ));
    }
    let every = input.parse::<kw::every>().map_err(|e| (e, None))?;
    if input.peek(Token![;]) || input.peek(Token![,]) || input.peek(kw::or) || input.is_empty() {
        rate.every_span = every.span;
        let node = &rate.node;
        return Err((
            syn::Error::new(
                every.span,
                format!("`every` needs a whole number of frames: `{node} every 4` runs it on every 4th frame"),
            ),
            Some(Box::new(rate)),
        ));
    }
    // Any one token is read as the count, so that a wrong one is reported
    // as a malformed count and the trigger after it is still read.
    let count = if input.peek(Token![-]) {
        input.parse::<syn::Lit>().map(|k| k.into_token_stream())
    } else {
        input.parse::<TokenTree>().map(|t| t.into_token_stream())
    };
    let count = match count {
        Ok(c) => c,
        Err(e) => return Err((e, Some(Box::new(rate)))),
    };
    rate.every_span = syn::spanned::Spanned::span(&count);
    rate.every = syn::parse2::<syn::LitInt>(count.clone())
        .ok()
        .and_then(|k| k.base10_parse::<u32>().ok());
    if rate.every.is_none() {
        errors.push(syn::Error::new(
            rate.every_span,
            format!(
                "malformed rate: `every` takes a whole number of frames such as `4`, not `{count}`"
            ),
        ));
    }
    if input.peek(kw::or) {
        let or = input.parse::<kw::or>().map_err(|e| (e, None))?;
        let source: Ident = match input.parse() {
            Ok(s) => s,
            Err(_) => {
                let at = if input.peek(Token![;]) || input.peek(Token![,]) || input.is_empty() {
                    or.span
                } else {
                    input.span()
                };
                return Err((
                    syn::Error::new(
                        at,
                        "expected a trigger after `or`: a `bool` input, state or node, or a field of one (`or scene.changed`)",
                    ),
                    Some(Box::new(rate)),
                ));
            }
        };
        let mut fields = Vec::new();
        while input.peek(Token![.]) {
            let _ = input.parse::<Token![.]>();
            match input.parse::<syn::Member>() {
                Ok(f) => fields.push(f),
                Err(_) => {
                    return Err((
                        input.error(
                            "expected a field name after `.` in the trigger (`or scene.changed`)",
                        ),
                        Some(Box::new(rate)),
                    ))
                }
            }
        }
        rate.trigger = Some(TriggerDecl { source, fields });
    }
    Ok(rate)
}

/// The value of `0.5`, `1`, `-0.5` or `1e400` (infinite); `None` otherwise.
fn weight_literal(e: &Expr) -> Option<f64> {
    match e {
        Expr::Lit(ExprLit {
            lit: Lit::Float(f), ..
        }) => f.base10_parse::<f64>().ok(),
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) => i.base10_parse::<f64>().ok(),
        Expr::Unary(ExprUnary {
            op: UnOp::Neg(_),
            expr,
            ..
        }) => weight_literal(expr).map(|v| -v),
        Expr::Paren(p) => weight_literal(&p.expr),
        _ => None,
    }
}
