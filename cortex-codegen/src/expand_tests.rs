//! The emitter as plain Rust: small graphs expanded by [`crate::expand`] and
//! the tokens checked for what the plans say each generated function runs
//! or leaves out, and bad input checked for each error's message and the
//! place (line and column of the source) it points at.

use std::str::FromStr;

use proc_macro2::{TokenStream, TokenTree};

use crate::expand;

fn expand_str(src: &str) -> TokenStream {
    expand(TokenStream::from_str(src).expect("the test's source tokenizes"))
}

/// The body of the first `fn name` anywhere in `ts` (inside impls too).
fn fn_body(ts: &TokenStream, name: &str) -> Option<TokenStream> {
    let tokens: Vec<TokenTree> = ts.clone().into_iter().collect();
    for (i, tt) in tokens.iter().enumerate() {
        match tt {
            TokenTree::Ident(f) if f == "fn" => {
                let named = matches!(tokens.get(i + 1), Some(TokenTree::Ident(n)) if n == name);
                if named {
                    return tokens[i + 2..].iter().find_map(|t| match t {
                        TokenTree::Group(g) if g.delimiter() == proc_macro2::Delimiter::Brace => {
                            Some(g.stream())
                        }
                        _ => None,
                    });
                }
            }
            TokenTree::Group(g) => {
                if let Some(b) = fn_body(&g.stream(), name) {
                    return Some(b);
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether identifier `name` occurs anywhere in `ts`.
fn mentions(ts: &TokenStream, name: &str) -> bool {
    ts.clone().into_iter().any(|tt| match tt {
        TokenTree::Ident(i) => i == name,
        TokenTree::Group(g) => mentions(&g.stream(), name),
        _ => false,
    })
}

/// Each `compile_error!` of an expansion: its message and where it points
/// (1-based line, 0-based column of the source given to `expand`).
fn errors(ts: &TokenStream) -> Vec<(String, (usize, usize))> {
    let mut out = Vec::new();
    let tokens: Vec<TokenTree> = ts.clone().into_iter().collect();
    for (i, tt) in tokens.iter().enumerate() {
        match tt {
            TokenTree::Ident(id) if id == "compile_error" => {
                let Some(TokenTree::Group(g)) = tokens.get(i + 2) else {
                    continue;
                };
                let Some(TokenTree::Literal(lit)) = g.stream().into_iter().next() else {
                    continue;
                };
                let text = syn::parse_str::<syn::LitStr>(&lit.to_string())
                    .map(|s| s.value())
                    .unwrap_or_default();
                let at = id.span().start();
                out.push((text, (at.line, at.column)));
            }
            TokenTree::Group(g) => out.extend(errors(&g.stream())),
            _ => {}
        }
    }
    out
}

/// A mode whose weight for a key is zero: its straight-line function does
/// not call the key's node, the full mode's does, and both call the rest.
#[test]
fn a_mode_function_leaves_out_what_its_plan_eliminates() {
    let out = expand_str(
        r#"pipeline P {
            input x: f32;
            mode FULL { w: 1.0 }
            mode CHEAP { w: 0.0 }
            node a = light(x);
            #[weight_key = "w"] node b = heavy(x);
            node c = mix(a, b);
            output c: f32;
        }"#,
    );
    assert!(errors(&out).is_empty(), "{out}");
    let full = fn_body(&out, "__run_mode_0").expect("FULL's function");
    let cheap = fn_body(&out, "__run_mode_1").expect("CHEAP's function");
    for f in ["light", "mix"] {
        assert!(mentions(&full, f) && mentions(&cheap, f), "{f}");
    }
    assert!(mentions(&full, "heavy"));
    assert!(!mentions(&cheap, "heavy"), "{cheap}");
}

/// Without `#[parallel]` there are no parallel or pipelined functions and
/// the stream methods are the stubs that say to add the attribute; with
/// it, each mode has its parallel function and the trait is implemented.
#[test]
fn parallel_functions_only_under_the_attribute() {
    let src =
        "pipeline P { input x: f32; mode A { } node a = f(x); node b = g(a); output b: f32; }";
    let plain = expand_str(src);
    let par = expand_str(&format!("#[parallel] {src}"));
    assert!(errors(&plain).is_empty() && errors(&par).is_empty());
    assert!(fn_body(&plain, "__run_parallel_mode_0").is_none());
    assert!(mentions(&plain, "DeclaredParallel"));
    assert!(!mentions(&plain, "ParallelPipeline"));
    assert!(fn_body(&par, "__run_parallel_mode_0").is_some());
    assert!(fn_body(&par, "__stream_mode_0").is_some());
    assert!(mentions(&par, "ParallelPipeline"));
    assert!(!mentions(&par, "DeclaredParallel"));
}

/// A rated mode's function asks whether its rated node is due and keeps
/// its held value; a mode without rates asks nothing.
#[test]
fn only_a_rated_mode_decides_its_phase() {
    let out = expand_str(
        r#"pipeline P {
            input x: f32;
            mode SAVE { } where t every 4;
            mode FULL_RATE { }
            node t: f32 = slow(x);
            node o = mix(t, x);
            output o: f32;
        }"#,
    );
    assert!(errors(&out).is_empty(), "{out}");
    let save = fn_body(&out, "__run_mode_0").expect("SAVE's function");
    let every = fn_body(&out, "__run_mode_1").expect("FULL_RATE's function");
    assert!(mentions(&save, "__due0") && mentions(&save, "__held"));
    assert!(!mentions(&every, "__due0"), "{every}");
    assert!(mentions(&every, "slow"));
}

/// A chain of strip nodes becomes a fused group: the pipeline owns a slot
/// for it in the mode's plan and one in the run-time plans' (the whole
/// graph's), and the mode's function runs it through the fusion switch.
#[test]
fn a_strip_chain_is_one_fused_group() {
    let out = expand_str(
        r#"pipeline P {
            input frame: RgbFrame;
            #[compilable(strip = ops::strip::GrayStrip)] node gray: GrayImage = ops::to_gray_into(frame, &mut gray)?;
            #[compilable(reduce = ops::strip::BlurForm(BlurParams::DEFAULT))] node blur = ops::blur_detector(gray)?;
            output blur: BlurReport;
        }"#,
    );
    assert!(errors(&out).is_empty(), "{out}");
    let text = out.to_string();
    assert!(
        text.contains("FusionSlot ; 2usize"),
        "{}",
        &text[..text.len().min(2000)]
    );
    let mode = fn_body(&out, "__run_mode_0").expect("the mode's function");
    assert!(mentions(&mode, "__fusion_on") && mentions(&mode, "group_begin"));
    let unfused = expand_str(
        r#"pipeline P {
            input frame: RgbFrame;
            node gray: GrayImage = ops::to_gray_into(frame, &mut gray)?;
            node blur = ops::blur_detector(gray)?;
            output blur: BlurReport;
        }"#,
    );
    assert!(unfused.to_string().contains("FusionSlot ; 0usize"));
    let mode = fn_body(&unfused, "__run_mode_0").expect("the mode's function");
    assert!(!mentions(&mode, "group_begin"));
}

/// An edge from an unknown name: one error, at the name, with the closest
/// declared name; the pipeline's API is still emitted (placeholder bodies).
#[test]
fn a_dangling_edge_is_one_error_at_the_name() {
    let out = expand_str(
        "pipeline P {\n    input frame: Vec<u8>;\n    node gray = to_gray(frame);\n    node sharp = blur(grey);\n    output sharp: Vec<f32>;\n}",
    );
    let errs = errors(&out);
    assert_eq!(errs.len(), 1, "{errs:?}");
    let (msg, at) = &errs[0];
    assert!(
        msg.starts_with("no input, state or node named `grey`"),
        "{msg}"
    );
    assert!(msg.contains("did you mean `gray`?"), "{msg}");
    assert_eq!(*at, (4, 22));
    assert!(mentions(&out, "P") && mentions(&out, "POutputs"));
    assert!(out.to_string().contains("this pipeline has compile errors"));
}

/// Annotations: an unknown one and a misplaced one, each an error at its
/// name, both reported from one invocation.
#[test]
fn annotation_errors_point_at_the_annotation() {
    let out = expand_str(
        "pipeline P {\n    input x: f32;\n    #[fast] node a = f(x);\n    #[optional] node b = g(a);\n    output b: f32;\n}",
    );
    let errs = errors(&out);
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert!(
        errs[0].0.starts_with("unknown annotation `#[fast]`"),
        "{errs:?}"
    );
    assert_eq!(errs[0].1, (3, 6));
    assert_eq!(errs[1].0, "`#[optional]` applies to outputs, not to a node");
    assert_eq!(errs[1].1, (4, 6));
}

/// A node passing another node's value as its buffer: the error says so in
/// the DSL's words, at the argument.
#[test]
fn another_nodes_buffer_is_refused_at_the_argument() {
    let out = expand_str(
        "pipeline P {\n    input x: f32;\n    node a: f32 = f(x);\n    node b: f32 = g(x, &mut a);\n    output b: f32;\n}",
    );
    let errs = errors(&out);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(
        errs[0].0,
        "`&mut a`: a node fills only its own buffer, `&mut b`; to read `a`'s value, pass `a`"
    );
    assert_eq!(errs[0].1, (4, 23));
}

/// A weight that changes nothing in its mode (its node's only consumer is
/// eliminated) is a warning, the use of a deprecated item at the weight,
/// not an error: the real bodies are still generated.
#[test]
fn a_warning_keeps_the_real_bodies() {
    let out = expand_str(
        r#"pipeline P {
            input x: f32;
            #[weight_key = "wd"] node detail = src(x);
            #[weight_key = "we"] node edges = edge(detail);
            #[weight_key = "wa"] node a = src(x);
            node out = mix(a, edges);
            mode FULL { wa: 1.0, wd: 1.0, we: 1.0 }
            mode CHEAP { wa: 1.0, wd: 0.5, we: 0.0 }
            output out: f32;
        }"#,
    );
    assert!(errors(&out).is_empty(), "{:?}", errors(&out));
    assert!(mentions(&out, "cortex_warning"));
    assert!(out
        .to_string()
        .contains("weight `wd` changes nothing in mode `CHEAP`"));
    let cheap = fn_body(&out, "__run_mode_1").expect("CHEAP's function");
    assert!(mentions(&cheap, "mix") && !mentions(&cheap, "edge"));
}
