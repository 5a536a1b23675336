//! Graphs shared by the integration tests, built with [`GraphSpec::builder`].

#![allow(dead_code)] // each test crate uses a different subset

use cortex_core::check::check;
use cortex_core::ir::GraphIr;
use cortex_core::ir::{Arg, Endpoint};
use cortex_core::plan::Plan;
use cortex_core::spec::{ArgSpec, GraphSpec};

/// The L2 ROI pipeline's shape (the graph of `cortex::l2`): input `frame`;
/// state `_prev_gray` written by `gray`; `gray`, `blur`, `scene`, the four
/// weighted maps, their fusion and the ROI encoder; `text` and `roi` are
/// external calls, everything else compilable.
pub fn l2_spec() -> GraphSpec {
    GraphSpec::builder("L2")
        .input("frame", "RgbFrame")
        .state("_prev_gray", "GrayImage", "GrayImage::zeros((0, 0))")
        .node("gray", "ops::to_gray", ["frame"])
        .compilable()
        .fallible()
        .node("blur", "ops::blur_detector", ["gray"])
        .compilable()
        .fallible()
        .node("scene", "ops::scene_change", ["gray", "_prev_gray"])
        .compilable()
        .fallible()
        .node("center", "ops::center_crop", ["gray"])
        .compilable()
        .weight_key("wc")
        .fallible()
        .node("text", "ops::text_roi::text_map", ["gray"])
        .weight_key("wt")
        .fallible()
        .node("saliency", "ops::saliency_dft", ["gray"])
        .compilable()
        .weight_key("ws")
        .fallible()
        .node("motion", "ops::motion_map", ["gray", "_prev_gray"])
        .compilable()
        .weight_key("wm")
        .fallible()
        .node(
            "fused",
            "ops::score_fusion",
            ["center", "text", "saliency", "motion", "weights"],
        )
        .compilable()
        .fallible()
        .node("roi", "ops::encode_roi", ["frame", "fused"])
        .external()
        .fallible()
        .write("gray", "_prev_gray")
        .mode(
            "BALANCED",
            [("wc", 0.4), ("wt", 0.3), ("ws", 0.2), ("wm", 0.1)],
        )
        .mode(
            "POWER_SAVE",
            [("wc", 0.7), ("wt", 0.3), ("ws", 0.0), ("wm", 0.0)],
        )
        .output("blur", "BlurReport")
        .output("scene", "SceneChange")
        .output("fused", "ScoreMap")
        .output("roi", "EncodedRoi")
        .build()
}

/// A graph with two states and optional outputs: a running average kept in
/// `_avg`, a weighted `detail` map that is also an optional output, an
/// external `denoise` call, and a `trend` read through `_prev_trend`.
/// Mode `LEAN` zeroes `wd`, eliminating `detail` (and the optional output).
pub fn stateful_spec() -> GraphSpec {
    GraphSpec::builder("Tracker")
        .input("sample", "Vec<f32>")
        .input("gain", "f32")
        .state("_avg", "Vec<f32>", "Vec::new()")
        .state("_prev_trend", "f32", "0.0")
        .node("denoise", "ext::denoise", ["sample"])
        .node("avg", "math::ema", ["denoise", "_avg"])
        .compilable()
        .node("detail", "math::highpass", ["denoise", "gain"])
        .compilable()
        .weight_key("wd")
        .node("trend", "math::slope", ["avg", "_prev_trend"])
        .compilable()
        .fallible()
        .node("score", "math::combine", ["trend", "detail", "weights"])
        .compilable()
        .write("avg", "_avg")
        .write("trend", "_prev_trend")
        .mode("FULL_DETAIL", [("wd", 1.0)])
        .mode("LEAN", [("wd", 0.0)])
        .output("score", "f32")
        .optional_output("detail", "Vec<f32>")
        .optional_output("trend", "f32")
        .build()
}

/// Checks a spec that must be valid: its IR and mode plans.
pub fn compile(spec: &GraphSpec) -> (GraphIr, Vec<Plan>) {
    let c = check(spec);
    assert!(c.diagnostics.is_empty(), "{:#?}", c.diagnostics);
    (c.ir.expect("valid"), c.mode_plans)
}

/// [`l2_spec`] with strip forms declared as the library's L2 declares
/// them: gray, center and fused map rows; blur and scene reduce them.
pub fn l2_fused_spec() -> GraphSpec {
    use cortex_core::access::StripShape;
    let mut spec = l2_spec();
    for node in &mut spec.nodes {
        node.strip = match node.name.as_str() {
            "gray" | "center" | "fused" => Some(StripShape::Map),
            "blur" | "scene" => Some(StripShape::Reduction),
            _ => None,
        };
    }
    spec
}

/// Runs `frames` frames of `ir` under `plan` with integer weights; node values
/// are hashes of their inputs, weighted inputs contribute `weight × value`
/// (nothing when absent), states carry the writer's value to the next frame
/// and fall back to 0 when not written. Returns each frame's outputs.
pub fn interpret(ir: &GraphIr, plan: &Plan, weights: &[u64], frames: u64) -> Vec<Vec<Option<u64>>> {
    let mut state = vec![0u64; ir.states.len()];
    let mut result = Vec::new();
    for f in 0..frames {
        let mut val: Vec<Option<u64>> = vec![None; ir.nodes.len()];
        for &id in ir.topo.iter() {
            if !plan.is_live(id) {
                continue;
            }
            let node = &ir.nodes[id as usize];
            let mut h = mix(u64::from(id) + 1);
            let mut acc = 0u64;
            for arg in node.args.iter() {
                match arg {
                    Arg::Value(Endpoint::Input(i)) => h = mix(h ^ (f * 31 + u64::from(*i))),
                    Arg::Value(Endpoint::State(s)) => h = mix(h ^ state[*s as usize]),
                    Arg::Value(Endpoint::Node(p)) => {
                        let producer = &ir.nodes[*p as usize];
                        match producer.weight_key {
                            Some(k) => {
                                let v = val[*p as usize].unwrap_or(0);
                                acc = acc.wrapping_add(weights[k as usize].wrapping_mul(v));
                            }
                            None => {
                                h =
                                    mix(h ^ val[*p as usize]
                                        .expect("a live node's required input ran"))
                            }
                        }
                    }
                    _ => {}
                }
            }
            val[id as usize] = Some(mix(h ^ acc));
        }
        for (s, st) in ir.states.iter().enumerate() {
            state[s] = if plan.writes_state(s as u32) {
                val[st.writer as usize].expect("writer ran")
            } else {
                0
            };
        }
        result.push(ir.outputs.iter().map(|o| val[o.node as usize]).collect());
    }
    result
}

pub fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x
}

/// A random valid graph: nodes read earlier nodes, the input and states;
/// nodes nobody reads become outputs.
pub fn random_spec(shape: &[(u8, u8, u8, u8)], keys: u8, n_states: u8) -> GraphSpec {
    let n = shape.len();
    // Per node: its arguments and weight key.
    let mut nodes: Vec<(Vec<String>, Option<String>)> = Vec::new();
    for (i, &(a, b, key, kind)) in shape.iter().enumerate() {
        let mut args = vec![];
        if i == 0 || kind % 4 == 0 {
            args.push("x".to_string());
        }
        if i > 0 {
            args.push(format!("n{}", a as usize % i));
            if kind % 3 == 1 {
                args.push(format!("n{}", b as usize % i));
            }
        }
        if n_states > 0 && kind % 5 == 2 {
            args.push(format!("_s{}", b % n_states));
        }
        args.dedup();
        let weight_key = (key % 3 == 0 && keys > 0).then(|| format!("k{}", key % keys));
        nodes.push((args, weight_key));
    }
    let reads = |name: &str| nodes.iter().any(|(args, _)| args.iter().any(|a| a == name));
    let mut b = GraphSpec::builder("R").input("x", "u64");
    // Keep only states that are read; each written by some node.
    for s in (0..n_states).filter(|s| reads(&format!("_s{s}"))) {
        b = b
            .state(format!("_s{s}"), "u64", "0")
            .write(format!("n{}", (s as usize * 7 + 3) % n), format!("_s{s}"));
    }
    for (i, (args, key)) in nodes.iter().enumerate() {
        b = b.node(format!("n{i}"), "f", args.iter().map(ArgSpec::name));
        if let Some(k) = key {
            b = b.weight_key(k);
        }
    }
    let mut used_keys: Vec<&String> = nodes.iter().filter_map(|(_, k)| k.as_ref()).collect();
    used_keys.sort();
    used_keys.dedup();
    if !used_keys.is_empty() {
        b = b.mode("ALL", used_keys.iter().map(|k| (k.as_str(), 1.0)));
    }
    // Writing a state does not count: a node whose only use is a state read
    // by itself would reach no output.
    for i in (0..n).filter(|i| !reads(&format!("n{i}"))) {
        b = b.output(format!("n{i}"), "u64");
    }
    b.build()
}
