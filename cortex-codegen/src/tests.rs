//! Tests of the expansion as a function: no input makes the macro panic
//! (mutated token streams of valid pipelines), and the generated code grows
//! with the graph, not with the number of weight-key patterns.

use std::str::FromStr;

use proc_macro2::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};
use proptest::prelude::*;

use crate::expand;

/// Valid pipelines covering every item kind and annotation.
const SEEDS: &[&str] = &[
    r#"
    /// Doc.
    pub pipeline L2 {
        input frame: RgbFrame;
        state _prev_gray: GrayImage = GrayImage::zeros((0, 0));
        mode BALANCED   { wc: 0.4, wt: 0.3, ws: 0.2, wm: 0.1 }
        mode POWER_SAVE { wc: 0.7, wt: 0.3, ws: 0.0, wm: 0.0 }
        #[compilable] node gray = ops::to_gray(frame)?;
        #[compilable] node blur = ops::blur_detector(gray)?;
        #[compilable] node scene = ops::scene_change(gray, _prev_gray)?;
        #[compilable] #[weight_key = "wc"] node center = ops::center_crop(gray)?;
        #[weight_key = "wt"] node text = ops::text_roi::text_map(gray)?;
        #[compilable] #[weight_key = "ws"] node saliency = ops::saliency_dft(gray)?;
        #[compilable] #[weight_key = "wm"] node motion = ops::motion_map(gray, _prev_gray)?;
        #[compilable] node fused = ops::score_fusion(center, text, saliency, motion, weights)?;
        #[external_call] node roi = ops::encode_roi(frame, fused)?;
        gray -> _prev_gray;
        output blur: BlurReport, scene: SceneChange, fused: ScoreMap, roi: EncodedRoi;
    }"#,
    r#"
    pipeline P {
        input r#in: f32;
        input b: Vec<u8>;
        #[weight_key = "w"] node r#type = id(r#in);
        node c = f(r#type, b, { None }, 2.0, &[1, 2]);
        mode r#fast { w: 1.0 }
        mode SLOW { w: 0.0 }
        #[optional] output r#type: f32;
        output c: f32;
    }"#,
    r#"
    #[parallel]
    pipeline Rated {
        input frame: RgbFrame;
        input flag: bool;
        mode SAVE { wt: 1.0 } where text every 4 or scene.changed, cut every 2 or flag;
        mode FULL_RATE { wt: 1.0 }
        #[compilable(strip = ops::strip::GrayStrip)] node gray: GrayImage = ops::to_gray_into(frame, &mut gray)?;
        node scene = ops::scene(gray);
        node cut: bool = ops::cut(gray);
        #[compilable(reduce = ops::strip::BlurForm(BlurParams::DEFAULT))] node blur = ops::blur_detector(gray)?;
        #[weight_key = "wt"] node text: ScoreMap = ops::text_map(gray)?;
        output text: ScoreMap, cut: bool, blur: BlurReport;
    }"#,
];

/// Replacement tokens: keywords, raw identifiers, reserved and odd names.
fn odd_token(pick: usize, span: Span) -> TokenTree {
    match pick % 12 {
        0 => TokenTree::Ident(Ident::new("Self", span)),
        1 => TokenTree::Ident(Ident::new_raw("type", span)),
        2 => TokenTree::Ident(Ident::new("weights", span)),
        3 => TokenTree::Ident(Ident::new("_", span)),
        4 => TokenTree::Ident(Ident::new("self", span)),
        5 => TokenTree::Ident(Ident::new("SELF", span)),
        6 => TokenTree::Literal(Literal::string("ws")),
        7 => TokenTree::Literal(Literal::f64_unsuffixed(-1e308)),
        8 => TokenTree::Punct(Punct::new(';', Spacing::Alone)),
        9 => TokenTree::Punct(Punct::new('#', Spacing::Alone)),
        10 => TokenTree::Group(Group::new(Delimiter::Brace, TokenStream::new())),
        _ => TokenTree::Ident(Ident::new("node", span)),
    }
}

/// What to do at the chosen token.
#[derive(Debug, Clone, Copy)]
enum Edit {
    Delete,
    Duplicate,
    Replace(usize),
    SwapWithNext,
}

/// Applies `edit` at the `target`-th token (counting every token, inside
/// groups too); `seen` counts the tokens visited so far.
fn mutate(ts: TokenStream, target: usize, edit: Edit, seen: &mut usize) -> TokenStream {
    let tokens: Vec<TokenTree> = ts.into_iter().collect();
    let mut out: Vec<TokenTree> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let tt = tokens[i].clone();
        let here = *seen == target;
        *seen += 1;
        let tt = match tt {
            TokenTree::Group(g) if !here => {
                let inner = mutate(g.stream(), target, edit, seen);
                let mut ng = Group::new(g.delimiter(), inner);
                ng.set_span(g.span());
                TokenTree::Group(ng)
            }
            other => other,
        };
        if here {
            match edit {
                Edit::Delete => {}
                Edit::Duplicate => {
                    out.push(tt.clone());
                    out.push(tt);
                }
                Edit::Replace(k) => out.push(odd_token(k, tt.span())),
                Edit::SwapWithNext if i + 1 < tokens.len() => {
                    out.push(tokens[i + 1].clone());
                    out.push(tt);
                    i += 1;
                    *seen += 1;
                }
                Edit::SwapWithNext => out.push(tt),
            }
        } else {
            out.push(tt);
        }
        i += 1;
    }
    out.into_iter().collect()
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        Just(Edit::Delete),
        Just(Edit::Duplicate),
        (0usize..12).prop_map(Edit::Replace),
        Just(Edit::SwapWithNext),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("CORTEX_MACRO_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(600),
        ..ProptestConfig::default()
    })]

    /// Up to three edits anywhere in a valid pipeline: the expansion returns
    /// tokens (errors and placeholders, or code), never a panic.
    #[test]
    fn mutated_pipelines_never_panic(
        seed in 0..SEEDS.len(),
        edits in proptest::collection::vec((0usize..400, edit()), 1..4),
    ) {
        let mut ts = TokenStream::from_str(SEEDS[seed]).unwrap();
        for (target, e) in edits {
            ts = mutate(ts, target, e, &mut 0);
        }
        let shown = ts.to_string();
        let result = std::panic::catch_unwind(move || expand(ts).to_string());
        prop_assert!(result.is_ok(), "the macro panicked on:\n{shown}");
    }
}

#[test]
fn every_seed_expands_without_errors() {
    for seed in SEEDS {
        let out = expand(TokenStream::from_str(seed).unwrap()).to_string();
        assert!(!out.contains("compile_error"), "{out}");
    }
}

/// A chain of `nodes` nodes, `keys` of them weighted, as DSL source.
fn chain(nodes: usize, keys: usize) -> String {
    let mut s = String::from("pipeline Big { input x: f32;\n");
    let modes = ["A", "B"];
    for m in modes {
        s += &format!("mode {m} {{ ");
        for k in 0..keys {
            s += &format!("k{k}: 1.0, ");
        }
        s += "}\n";
    }
    s += "node n0 = f(x);\n";
    for i in 1..nodes {
        if i <= keys {
            s += &format!(
                "#[weight_key = \"k{}\"] node n{i} = f(n{});\n",
                i - 1,
                i - 1
            );
        } else {
            s += &format!("node n{i} = g(n{});\n", i - 1);
        }
    }
    s += &format!("output n{}: f32; }}", nodes - 1);
    s
}

/// The generated code's size grows with the nodes, not with the 2^k
/// weight-key patterns (whose plans are computed at run time, once each):
/// 40 nodes with 8 keys expanded to 1.44 MB when every pattern's plan was
/// emitted as a `const`.
#[test]
fn expansion_size_grows_with_nodes_not_patterns() {
    let size = |n, k| {
        expand(TokenStream::from_str(&chain(n, k)).unwrap())
            .to_string()
            .len()
    };
    let (k0, k8, k16) = (size(40, 0), size(40, 8), size(40, 16));
    println!("expansion of 40 nodes: {k0} bytes with 0 keys, {k8} with 8, {k16} with 16");
    // Keys add a little per key (mode tables, Option-wrapped edges), never a
    // factor per pattern.
    assert!(k16 < 2 * k0, "{k16} vs {k0}");
    assert!(k8 < 300_000, "{k8}");
    let (n40, n80) = (size(40, 8), size(80, 8));
    assert!(n80 < 3 * n40, "{n80} vs {n40}");
}

/// Each malformed rate is one error, and the pipeline's modes and items
/// after it are kept (no "expected one of" at `where`, no item skipped).
#[test]
fn a_malformed_rate_is_one_error_and_keeps_the_mode() {
    let errors = |rates: &str| {
        let src = format!(
            "pipeline P {{ input x: f32; mode A {{ w: 1.0 }} {rates}
             node t: f32 = f(x); #[weight_key = \"w\"] node u = g(x); node o = h(t, u, c);
             node c = k(x); output o: f32; }}"
        );
        let out = expand(TokenStream::from_str(&src).unwrap()).to_string();
        out.matches("compile_error").count()
    };
    assert_eq!(errors("where t every 4 or c;"), 0);
    for bad in [
        "where t every;",
        "where t every x or c;",
        "where t every 2.5 or c;",
        "where t every -4 or c;",
        "where ;",
        "where t every 4 or;",
        "where t every 4 c;",
        "where t evry 4 or c;",
        "where t every 4 or c.;",
        "where t every 4 or c",
    ] {
        assert_eq!(errors(bad), 1, "{bad}");
    }
}

/// The expansion's size for the library's L2 (its source read from
/// `cortex-vision`) and a 200-node chain, sequential and `#[parallel]`:
/// printed for the measurements, and each a valid expansion.
#[test]
fn expansion_sizes_of_l2_and_a_200_node_chain() {
    let l2 = concat!(env!("CARGO_MANIFEST_DIR"), "/../cortex-vision/src/l2.rs");
    let l2_src = std::fs::read_to_string(l2).expect("cortex-vision/src/l2.rs");
    let l2 = &l2_src;
    let start = l2.find("cortex_graph! {").expect("L2's invocation") + "cortex_graph! {".len();
    let end = start + l2[start..].find("\n}\n").expect("its end");
    let size = |src: &str| {
        let out = expand(TokenStream::from_str(src).unwrap()).to_string();
        assert!(
            !out.contains("compile_error"),
            "{}",
            &out[..out.len().min(2000)]
        );
        out.len()
    };
    let l2 = size(&l2[start..end]);
    let seq = size(&chain(200, 0));
    let par = size(&format!("#[parallel] {}", chain(200, 0)));
    println!("expansion: L2 {l2} bytes; 200-node chain {seq} bytes, #[parallel] {par} bytes");
    // The macro's own time (what a build spends before rustc reads the
    // expansion), the least of five runs.
    let time = |src: &str| {
        (0..5)
            .map(|_| {
                let t = std::time::Instant::now();
                expand(TokenStream::from_str(src).unwrap());
                t.elapsed()
            })
            .min()
            .unwrap_or_default()
    };
    println!(
        "expansion time: L2 {:?}; 200-node chain {:?}, #[parallel] {:?}",
        time(&l2_src[start..end]),
        time(&chain(200, 0)),
        time(&format!("#[parallel] {}", chain(200, 0)))
    );
    assert!(l2 > 0 && seq > 0 && par > seq);
}

/// The `cortex_graph!` invocations written in the workspace's Rust files
/// (tests, examples, benches, the crates' sources), with a name each.
fn workspace_invocations() -> Vec<(String, TokenStream)> {
    fn find(ts: TokenStream, name: &str, out: &mut Vec<(String, TokenStream)>) {
        let tokens: Vec<TokenTree> = ts.into_iter().collect();
        for (i, tt) in tokens.iter().enumerate() {
            match (tt, tokens.get(i + 1), tokens.get(i + 2)) {
                (TokenTree::Ident(id), Some(TokenTree::Punct(p)), Some(TokenTree::Group(g)))
                    if id == "cortex_graph" && p.as_char() == '!' =>
                {
                    out.push((format!("{name}.{}", out.len()), g.stream()));
                }
                (TokenTree::Group(g), _, _) => find(g.stream(), name, out),
                _ => {}
            }
        }
    }
    fn walk(dir: &std::path::Path, files: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name();
            if p.is_dir() && name != "target" && name != "models" && name != ".git" {
                walk(&p, files);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let mut files = Vec::new();
    for d in ["benches", "examples", "src", "tests"] {
        walk(&root.join(d), &mut files);
    }
    for e in std::fs::read_dir(root).expect("the workspace").flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if n.starts_with("cortex-") {
            walk(&e.path(), &mut files);
        }
    }
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        let Ok(ts) = TokenStream::from_str(&text) else {
            continue;
        };
        let rel = f
            .strip_prefix(root)
            .unwrap_or(&f)
            .to_string_lossy()
            .replace('/', "_");
        let mut found = Vec::new();
        find(ts, &rel, &mut found);
        out.extend(found);
    }
    out
}

/// Every invocation in the workspace expands without a panic; with
/// `CORTEX_EXPAND_DUMP=<dir>` each expansion (and the chains') is written
/// to a file there, so a refactoring of the generator can be compared
/// byte for byte against the expansions before it.
#[test]
fn every_workspace_invocation_expands() {
    let mut all = workspace_invocations();
    assert!(all.len() > 50, "{} invocations found", all.len());
    for (i, seed) in SEEDS.iter().enumerate() {
        all.push((format!("seed.{i}"), TokenStream::from_str(seed).unwrap()));
    }
    for (n, k) in [(200, 0), (40, 8)] {
        let src = chain(n, k);
        all.push((
            format!("chain.{n}.{k}"),
            TokenStream::from_str(&src).unwrap(),
        ));
        let par = format!("#[parallel] {src}");
        all.push((
            format!("chain.{n}.{k}.parallel"),
            TokenStream::from_str(&par).unwrap(),
        ));
    }
    let dump = std::env::var_os("CORTEX_EXPAND_DUMP").map(std::path::PathBuf::from);
    if let Some(d) = &dump {
        std::fs::create_dir_all(d).expect("the dump directory");
    }
    for (name, ts) in all {
        let out = expand(ts).to_string();
        if let Some(d) = &dump {
            std::fs::write(d.join(format!("{name}.txt")), out).expect("a dump file");
        }
    }
}
