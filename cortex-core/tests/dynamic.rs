//! Graphs built at run time against a reference written apart from the
//! engine: random graphs (the generator of the DCE property test) run by
//! `DynPipeline` for every zero pattern of their weights and in their
//! mode (sequentially, wave by wave, reading some outputs, and as
//! pipelined streams), compared with the reference interpreter of `tests/common` (node
//! values hash their inputs, weighted inputs add `weight × value`); and a
//! failing node leaves states and the frame count as they were.

mod common;

use std::ops::ControlFlow;
use std::sync::Arc;

use common::{interpret, mix, random_spec};
use cortex_core::check::check;
use cortex_core::dce::plan_for_pattern;
use cortex_core::dynamic::{Call, DynPipeline, Ops, Value};
use cortex_core::error::NodeFailure;
use cortex_core::ir::{Arg, Endpoint, GraphIr};
use cortex_core::run::{Engine, Run};
use cortex_core::spec::GraphSpec;
use cortex_core::stream::StreamOptions;
use cortex_core::OutputSet;
use cortex_core::Weights;
use cortex_core::{ParallelPipeline, Pipeline};
use proptest::prelude::*;

/// What one argument of a node is, for its op.
#[derive(Clone)]
enum Kind {
    Plain,
    Weighted(String),
}

/// One op per node (`n<i>`), computing what the reference interpreter
/// computes for node `i`: the hash of its id, its input, states and
/// required values, plus `weight × value` of its weighted inputs.
fn ops_for(ir: &GraphIr) -> Ops {
    let mut ops = Ops::new();
    ops.constant("0", 0u64);
    for (id, node) in ir.nodes.iter().enumerate() {
        let kinds: Vec<Kind> = node
            .args
            .iter()
            .map(|a| match a {
                Arg::Value(Endpoint::Node(p)) => match ir.nodes[*p as usize].weight_key {
                    Some(k) => Kind::Weighted(ir.weight_keys[k as usize].to_string()),
                    None => Kind::Plain,
                },
                _ => Kind::Plain,
            })
            .collect();
        ops.op(
            node.op.to_string(),
            move |c: &mut Call<'_>| -> Result<(), NodeFailure> {
                let mut h = mix(id as u64 + 1);
                let mut acc = 0u64;
                for (a, kind) in kinds.iter().enumerate() {
                    match kind {
                        Kind::Plain => h = mix(h ^ *c.arg::<u64>(a)?),
                        Kind::Weighted(key) => {
                            let v = c.opt::<u64>(a)?.copied().unwrap_or(0);
                            let w = c.weights().get_or_zero(key) as u64;
                            acc = acc.wrapping_add(w.wrapping_mul(v));
                        }
                    }
                }
                c.put(mix(h ^ acc));
                Ok(())
            },
        );
    }
    ops
}

/// `random_spec` with each node calling an op of its own.
fn spec_with_own_ops(spec: &mut GraphSpec) {
    for (i, n) in spec.nodes.iter_mut().enumerate() {
        n.op = format!("n{i}");
    }
}

fn outputs(ir: &GraphIr, out: &cortex_core::dynamic::DynOutputs) -> Vec<Option<u64>> {
    ir.outputs
        .iter()
        .map(|o| out.get::<u64>(&ir.nodes[o.node as usize].name).copied())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn random_graphs_match_the_reference(
        shape in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>()), 1..14),
        keys in 0u8..5,
        n_states in 0u8..3,
        weight_seed in any::<u64>(),
        set_bits in any::<u64>(),
    ) {
        let mut spec = random_spec(&shape, keys, n_states);
        spec_with_own_ops(&mut spec);
        let c = check(&spec);
        let ir = c.ir.clone().expect("random graphs are valid");
        let ops = ops_for(&ir);
        let k = ir.weight_keys.len();
        let full = plan_for_pattern(&ir, 0, "full");
        let frames: Vec<Value> = (0..3u64).map(|f| Arc::new(f * 31) as Value).collect();
        for pattern in 0..(1u64 << k) {
            let ws: Vec<u64> = (0..k)
                .map(|i| if pattern & (1 << i) != 0 { 0 } else { 1 + mix(weight_seed ^ i as u64) % 7 })
                .collect();
            let table: Weights = ir.weight_keys.iter().zip(&ws).map(|(k, w)| (k.to_string(), *w as f64)).collect();
            let want = interpret(&ir, &full, &ws, 3);
            let mut p = DynPipeline::new(&spec, &ops).expect("builds");
            let plan = plan_for_pattern(&ir, pattern, "p");
            for (f, frame) in frames.iter().enumerate() {
                let got = p.run_with_fresh(&mut Run::weights(&table), std::slice::from_ref(frame));
                if !plan.missing_outputs.is_empty() {
                    prop_assert!(got.is_err());
                    break;
                }
                let got = outputs(&ir, &got.expect("frame runs"));
                for (o, out) in ir.outputs.iter().enumerate() {
                    let eliminated = !plan.is_live(out.node);
                    prop_assert_eq!(got[o], if eliminated { None } else { want[f][o] }, "frame {} output {} pattern {:b}", f, o, pattern);
                }
            }
        }
        // The declared mode (every weight 1), sequential and wave by wave;
        // and reading only some outputs (`set_bits`): those are the full
        // run's, the others absent.
        for mode in 0..ir.modes.len() {
            let ws = vec![1u64; k];
            let want = interpret(&ir, &c.mode_plans[mode], &ws, 3);
            let mut p = DynPipeline::new(&spec, &ops).expect("builds");
            let mut q = DynPipeline::new(&spec, &ops).expect("builds");
            let set = (0..ir.outputs.len()).filter(|i| set_bits >> (i % 64) & 1 == 1).fold(OutputSet::NONE, OutputSet::with);
            let mut parts = [false, true].map(|_| DynPipeline::new(&spec, &ops).expect("builds"));
            // The outputs the reading runs go into: a full first frame's,
            // of another pipeline; the outputs not read keep its values.
            let seed = DynPipeline::new(&spec, &ops).expect("builds").run_with_fresh(&mut Run::mode(mode), std::slice::from_ref(&frames[0])).expect("frame runs");
            let mut outs = [seed.clone(), seed];
            for (f, frame) in frames.iter().enumerate() {
                let got = outputs(&ir, &p.run(mode, std::slice::from_ref(frame)).expect("frame runs"));
                prop_assert_eq!(&got, &want[f]);
                let par = outputs(&ir, &q.run_with_fresh(&mut Run::mode(mode).parallel(), std::slice::from_ref(frame)).expect("frame runs"));
                prop_assert_eq!(&par, &want[f]);
                for ((parallel, part), kept) in [false, true].into_iter().zip(parts.iter_mut()).zip(outs.iter_mut()) {
                    let engine = if parallel { Engine::Parallel } else { Engine::Sequential };
                    let mut run = Run::mode(mode).engine(engine).outputs(set);
                    let mut out = part.absent_outputs();
                    part.run_with(&mut run, std::slice::from_ref(frame), &mut out).expect("frame runs");
                    let got = outputs(&ir, &out);
                    let expected: Vec<Option<u64>> = want[f].iter().enumerate().map(|(o, v)| if set.contains(o) { *v } else { None }).collect();
                    prop_assert_eq!(got, expected, "reading {:b}, parallel {}", set.bits(), parallel);
                    // Into outputs of an earlier frame: those not read are
                    // left as they were.
                    let mut again = DynPipeline::new(&spec, &ops).expect("builds");
                    for earlier in &frames[..f] {
                        again.run_with(&mut run, std::slice::from_ref(earlier), kept).expect("frame runs");
                    }
                    let mut into = kept.clone();
                    again.run_with(&mut run, std::slice::from_ref(frame), &mut into).expect("frame runs");
                    let kept_too: Vec<Option<u64>> = want[f].iter().zip(&want[0]).enumerate().map(|(o, (v, k))| if set.contains(o) { *v } else { *k }).collect();
                    prop_assert_eq!(outputs(&ir, &into), kept_too, "into, reading {:b}, parallel {}", set.bits(), parallel);
                }
            }
            // A pipelined stream, one and two frames in flight: the same
            // frames in order.
            for in_flight in [1, 2] {
                let mut s = DynPipeline::new(&spec, &ops).expect("builds");
                let options = StreamOptions { in_flight, ..StreamOptions::DEFAULT };
                let mut streamed = Vec::new();
                s.run_stream_with(&mut Run::mode(mode), frames.iter().map(|f| ((), vec![f.clone()])), &options, |f| {
                    streamed.push((f.index, f.take_result().map(|o| outputs(&ir, &o))));
                    ControlFlow::Continue(())
                })
                .expect("stream runs");
                prop_assert_eq!(streamed.len(), frames.len());
                for (f, (index, got)) in streamed.into_iter().enumerate() {
                    prop_assert_eq!(index, f as u64);
                    prop_assert_eq!(&got.expect("frame runs"), &want[f], "pipelined, {} in flight", in_flight);
                }
            }
        }
    }
}

/// A node failing on frame 1 leaves the state and frame count as frame 0
/// left them: frame 2 then gives what frame 1 would have.
#[test]
fn a_failing_frame_commits_nothing() {
    let spec = GraphSpec::builder("Acc")
        .input("x", "u64")
        .state("_sum", "u64", "0")
        .node("sum", "add", ["x", "_sum"])
        .node("check", "fail_on_7", ["sum"])
        .fallible()
        .write("sum", "_sum")
        .output("check", "u64")
        .build();
    let mut ops = Ops::new();
    ops.constant("0", 0u64);
    ops.op("add", |c: &mut Call<'_>| -> Result<(), NodeFailure> {
        let v = c.arg::<u64>(0)? + c.arg::<u64>(1)?;
        c.put(v);
        Ok(())
    });
    ops.op("fail_on_7", |c: &mut Call<'_>| -> Result<(), NodeFailure> {
        let v = *c.arg::<u64>(0)?;
        if v == 7 {
            return Err("seven".into());
        }
        c.put(v);
        Ok(())
    });
    let mut p = DynPipeline::new(&spec, &ops).expect("builds");
    let run = |p: &mut DynPipeline, x: u64| {
        p.run(0, &[Arc::new(x)])
            .map(|o| *o.get::<u64>("check").expect("u64"))
    };
    assert_eq!(run(&mut p, 3).expect("3"), 3);
    let err = run(&mut p, 4).expect_err("3 + 4 = 7 fails");
    assert!(
        err.to_string().contains("check") && err.to_string().contains("seven"),
        "{err}"
    );
    assert_eq!(p.frame_index(), 1);
    // The state is still 3, not 7.
    assert_eq!(run(&mut p, 5).expect("3 + 5"), 8);
    assert_eq!(p.frame_index(), 2);
}

/// An unknown op, constant or name is refused with the diagnostic at the
/// node, as the macro gives it.
#[test]
fn unknown_names_are_diagnostics_at_the_node() {
    let spec = GraphSpec::builder("Bad")
        .input("x", "u64")
        .node("a", "ad", ["x"])
        .output("a", "u64")
        .build();
    let mut ops = Ops::new();
    ops.op("add", |c: &mut Call<'_>| -> Result<(), NodeFailure> {
        c.put(0u64);
        Ok(())
    });
    let err = DynPipeline::new(&spec, &ops).expect_err("unknown op");
    assert!(
        err.to_string().contains("no op `ad`") && err.diagnostics[0].notes[0].contains("`add`"),
        "{err}"
    );
    let spec = GraphSpec::builder("Bad")
        .input("x", "u64")
        .node("a", "add", ["y"])
        .output("a", "u64")
        .build();
    let err = DynPipeline::new(&spec, &ops).expect_err("unknown name");
    assert_eq!(err.diagnostics, check(&spec).diagnostics);
}

/// A filled value's allocation is reused on the next frame once nothing
/// holds it any more, and a state written by it trades buffers with it.
#[test]
fn filled_values_reuse_their_buffers() {
    let spec = GraphSpec::builder("Fill")
        .input("x", "u64")
        .state("_prev", "Vec<u64>", "Vec::new()")
        .node(
            "v",
            "fill",
            [
                cortex_core::spec::ArgSpec::from("x"),
                cortex_core::spec::ArgSpec::buffer(),
            ],
        )
        .ty("Vec<u64>")
        .node(
            "w",
            "fill2",
            [
                cortex_core::spec::ArgSpec::from("v"),
                cortex_core::spec::ArgSpec::from("_prev"),
                cortex_core::spec::ArgSpec::buffer(),
            ],
        )
        .ty("Vec<u64>")
        .write("v", "_prev")
        .output("w", "Vec<u64>")
        .build();
    let mut ops = Ops::new();
    ops.constant("Vec::new()", Vec::<u64>::new());
    ops.op("fill", |c: &mut Call<'_>| -> Result<(), NodeFailure> {
        let x = *c.arg::<u64>(0)?;
        let out = c.fill::<Vec<u64>>()?;
        out.clear();
        out.extend((0..1000).map(|i| i + x));
        Ok(())
    });
    ops.op("fill2", |c: &mut Call<'_>| -> Result<(), NodeFailure> {
        let (v, prev) = (c.arg::<Vec<u64>>(0)?, c.arg::<Vec<u64>>(1)?);
        let s: u64 = v.iter().chain(prev).sum();
        let out = c.fill::<Vec<u64>>()?;
        out.clear();
        out.push(s);
        Ok(())
    });
    let mut p = DynPipeline::new(&spec, &ops).expect("builds");
    let mut w_ptrs = Vec::new();
    let mut prev_sum = 0u64;
    for x in 0..4u64 {
        let out = p.run(0, &[Arc::new(x)]).expect("runs");
        let w = out.get::<Vec<u64>>("w").expect("w");
        let v_sum: u64 = (0..1000).map(|i| i + x).sum();
        assert_eq!(w, &vec![v_sum + prev_sum]);
        prev_sum = v_sum;
        w_ptrs.push(w.as_ptr() as usize);
    }
    // `w`'s outputs were dropped each frame: its buffer came back.
    assert!(w_ptrs.windows(2).all(|p| p[0] == p[1]), "{w_ptrs:?}");
}

/// A graph file declaring a chain of 100 000 nodes is checked, planned and
/// run: no pass recurses once per node (Tarjan's search overflowed the
/// thread's stack and aborted the process here) and none scans every edge
/// per node (the build took 219 s; now under a second in release).
#[test]
fn a_chain_of_a_hundred_thousand_nodes_builds_and_runs() {
    use cortex_core::dynamic::GraphFile;
    let n = 100_000;
    let mut text =
        String::from(r#"{"name": "Chain", "inputs": [{"name": "x", "type": "f64"}], "nodes": ["#);
    for i in 0..n {
        let from = if i == 0 {
            "x".into()
        } else {
            format!("n{}", i - 1)
        };
        let sep = if i + 1 == n { "" } else { "," };
        text.push_str(&format!(
            r#"{{"name": "n{i}", "op": "neg", "args": ["{from}"], "type": "f64"}}{sep}"#
        ));
    }
    text.push_str(&format!(
        r#"], "outputs": [{{"name": "n{}", "type": "f64"}}]}}"#,
        n - 1
    ));
    let mut ops = Ops::new();
    ops.op("neg", |c: &mut Call<'_>| -> Result<(), NodeFailure> {
        let v = -*c.arg::<f64>(0)?;
        c.put(v);
        Ok(())
    });
    let mut p = GraphFile::parse(&text)
        .expect("parses")
        .build(&ops)
        .expect("builds");
    let out = p.run(0, &[Arc::new(1.5f64)]).expect("runs");
    // An even number of negations gives the input back.
    assert_eq!(out.get::<f64>(&format!("n{}", n - 1)), Some(&1.5));
}
