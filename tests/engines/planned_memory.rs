//! Planned memory: pipelines whose nodes fill buffers they own give the
//! same outputs as the same graph with value-returning nodes, on every run
//! path (`run`, `run_into`, `run_weights`, `run_plan`), across scene cuts,
//! blurred stretches, mode switches and a resolution change; a failing frame
//! leaves a double-buffered state as it was.
#![cfg(feature = "runner")]
// Node functions take `&T` of the value type their producer declares.
#![allow(clippy::ptr_arg)]

use crate::common::l2_fresh::{L2Fresh, L2FreshMode};
use cortex::cortex_graph;
use cortex::l2::{L2Mode, L2};
use cortex::passes::memory::BufferPlan;
use cortex::runner::sources::SyntheticClip;
use cortex::Run;
use cortex::Weights;

const MODES: [(L2Mode, L2FreshMode); 3] = [
    (L2Mode::Balanced, L2FreshMode::Balanced),
    (L2Mode::PowerSave, L2FreshMode::PowerSave),
    (L2Mode::TextFocus, L2FreshMode::TextFocus),
];

/// The synthetic clip (cut at 24, blurred 10–15), with the mode switching
/// every 7 frames and the size changing half-way.
fn frames() -> Vec<(usize, cortex::ops::RgbFrame)> {
    let a = SyntheticClip::new(160, 120);
    let b = SyntheticClip::new(128, 96);
    (0..48u64)
        .map(|f| {
            let frame = if f < 30 { a.frame(f) } else { b.frame(f) };
            ((f as usize / 7) % MODES.len(), frame)
        })
        .collect()
}

#[test]
fn run_and_run_into_match_the_value_returning_graph() {
    let (mut planned, mut into, mut fresh) = (L2::new(), L2::new(), L2Fresh::new());
    let mut reused = None;
    for (f, (m, frame)) in frames().into_iter().enumerate() {
        if f == 30 {
            // A new size: every pipeline starts over, as the runner does.
            planned.reset();
            into.reset();
            fresh.reset();
        }
        let (mode, fresh_mode) = MODES[m];
        let want = fresh.run(fresh_mode, &frame).unwrap();
        let got = planned.run(mode, &frame).unwrap();
        assert_eq!(got.fused, want.fused, "frame {f}: fused");
        assert_eq!(got.blur, want.blur, "frame {f}: blur");
        assert_eq!(got.scene, want.scene, "frame {f}: scene");
        assert_eq!(got.roi, want.roi, "frame {f}: roi");
        assert_eq!(got.regions, want.regions, "frame {f}: regions");
        assert_eq!(got.qp_map, want.qp_map, "frame {f}: qp_map");
        match reused.as_mut() {
            None => reused = Some(into.run(mode, &frame).unwrap()),
            Some(out) => into.run_into(mode, &frame, out).unwrap(),
        }
        let out = reused.as_ref().unwrap();
        assert_eq!(out.fused, want.fused, "frame {f}: run_into fused");
        assert_eq!(out.roi, want.roi, "frame {f}: run_into roi");
        assert_eq!(out.regions, want.regions, "frame {f}: run_into regions");
        assert_eq!(out.qp_map, want.qp_map, "frame {f}: run_into qp_map");
        assert_eq!(out.blur, want.blur, "frame {f}: run_into blur");
        assert_eq!(planned.state().clone(), into.state().clone());
        assert_eq!(planned.state()._prev_gray, fresh.state()._prev_gray);
        assert_eq!(planned.state()._sharpness, fresh.state()._sharpness);
    }
}

#[test]
fn run_weights_and_run_plan_match_the_value_returning_graph() {
    let (mut planned, mut fresh) = (L2::new(), L2Fresh::new());
    let (mut planned_plan, mut fresh_plan) = (L2::new(), L2Fresh::new());
    let tables = [
        weights(&[("wc", 0.5), ("wt", 0.0), ("ws", 0.25), ("wm", 0.25)]),
        weights(&[("wc", 0.0), ("wt", 1.0), ("ws", 0.0), ("wm", 0.0)]),
        weights(&[("wc", 0.1), ("wt", 0.2), ("ws", 0.3), ("wm", 0.4)]),
    ];
    for (f, (m, frame)) in frames().into_iter().take(30).enumerate() {
        let w = &tables[m];
        let want = fresh.run_with_fresh(&mut Run::weights(w), &frame).unwrap();
        let got = planned
            .run_with_fresh(&mut Run::weights(w), &frame)
            .unwrap();
        assert_eq!(got.fused, want.fused, "frame {f}");
        assert_eq!(got.roi, want.roi, "frame {f}");
        // The full graph with a mode's weights, through `run_plan`: the
        // plan-driven function uses the full graph's buffer assignment.
        let mode = MODES[m].0;
        let full = planned_plan.pattern_plan(0);
        let got = planned_plan
            .run_with_fresh(&mut Run::plan(&full, mode.weights()), &frame)
            .unwrap();
        let full = fresh_plan.pattern_plan(0);
        let want = fresh_plan
            .run_with_fresh(&mut Run::plan(&full, mode.weights()), &frame)
            .unwrap();
        assert_eq!(got.fused, want.fused, "frame {f}: run_plan");
        assert_eq!(got.blur, want.blur, "frame {f}: run_plan");
    }
}

#[test]
fn run_weights_into_and_run_plan_into_match_their_fresh_forms() {
    let (mut fresh, mut into) = (L2::new(), L2::new());
    let (mut fresh_plan, mut into_plan) = (L2::new(), L2::new());
    let tables = [
        weights(&[("wc", 0.5), ("wt", 0.0), ("ws", 0.25), ("wm", 0.25)]),
        weights(&[("wc", 0.0), ("wt", 1.0), ("ws", 0.0), ("wm", 0.0)]),
        weights(&[("wc", 0.1), ("wt", 0.2), ("ws", 0.3), ("wm", 0.4)]),
    ];
    let (mut out, mut out_plan) = (None, None);
    let mut compared = 0;
    for (f, (m, frame)) in frames().into_iter().enumerate() {
        let w = &tables[m];
        let want = fresh.run_with_fresh(&mut Run::weights(w), &frame).unwrap();
        match out.as_mut() {
            None => out = Some(into.run_with_fresh(&mut Run::weights(w), &frame).unwrap()),
            Some(o) => into.run_with(&mut Run::weights(w), &frame, o).unwrap(),
        }
        let got = out.as_ref().unwrap();
        assert_eq!(got.fused, want.fused, "frame {f}");
        assert_eq!(got.roi, want.roi, "frame {f}");
        assert_eq!(got.regions, want.regions, "frame {f}");
        assert_eq!(got.qp_map, want.qp_map, "frame {f}");
        assert_eq!(got.blur, want.blur, "frame {f}");
        let plan = fresh_plan.pattern_plan(1 << (f % 4));
        let mode = MODES[m].0;
        let want = fresh_plan.run_with_fresh(&mut Run::plan(&plan, mode.weights()), &frame);
        let got = match out_plan.as_mut() {
            None => into_plan
                .run_with_fresh(&mut Run::plan(&plan, mode.weights()), &frame)
                .map(|o| {
                    out_plan = Some(o);
                }),
            Some(o) => into_plan.run_with(&mut Run::plan(&plan, mode.weights()), &frame, o),
        };
        // A plan whose zero pattern the mode's weights contradict is refused
        // by both forms alike.
        match (want, got) {
            (Ok(want), Ok(())) => {
                compared += 1;
                let got = out_plan.as_ref().unwrap();
                assert_eq!(got.fused, want.fused, "frame {f}: run_plan");
                assert_eq!(got.blur, want.blur, "frame {f}: run_plan");
                assert_eq!(got.scene, want.scene, "frame {f}: run_plan");
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "frame {f}"),
            (a, b) => panic!(
                "frame {f}: run_plan {:?} against run_plan_into {:?}",
                a.err(),
                b.err()
            ),
        }
    }
    assert!(compared >= 24, "only {compared} plans ran");
    // A failing frame (a size over the limits) leaves the outputs as they were.
    let before = out.clone();
    let huge = cortex::ops::RgbFrame::zeros((1, 70_000, 3));
    assert!(into
        .run_with(&mut Run::weights(&tables[0]), &huge, out.as_mut().unwrap())
        .is_err());
    assert_eq!(out.as_ref().unwrap().fused, before.as_ref().unwrap().fused);
}

fn weights(entries: &[(&str, f64)]) -> Weights {
    entries
        .iter()
        .fold(Weights::new(), |w, &(k, v)| w.with(k.to_string(), v))
}

/// Fills its buffer with the input, doubled; fails on odd sums.
fn double_into(x: &Vec<u32>, out: &mut Vec<u32>) {
    out.clear();
    out.extend(x.iter().map(|v| v * 2));
}

fn even_sum(v: &Vec<u32>) -> Result<u32, String> {
    let s: u32 = v.iter().sum();
    if s.is_multiple_of(2) {
        Ok(s)
    } else {
        Err(format!("odd sum {s}"))
    }
}

fn plus_prev(v: &Vec<u32>, prev: &Vec<u32>) -> Vec<u32> {
    v.iter()
        .zip(prev.iter().chain(std::iter::repeat(&0)))
        .map(|(a, b)| a + b)
        .collect()
}

fn checked_sum(v: &Vec<u32>, ok: &u32) -> Result<u32, String> {
    let _ = ok;
    let s: u32 = v.iter().sum();
    if s > 1000 {
        Err(format!("sum {s} over 1000"))
    } else {
        Ok(s)
    }
}

cortex_graph! {
    /// A double-buffered state whose frame can fail after the buffer is
    /// filled.
    pipeline Doubler {
        input x: Vec<u32>;
        state _prev: Vec<u32> = Vec::new();
        node doubled: Vec<u32> = double_into(x, &mut doubled);
        node parity = even_sum(doubled)?;
        node mixed = plus_prev(doubled, _prev);
        node total = checked_sum(mixed, parity)?;
        doubled -> _prev;
        output total: u32, doubled: Vec<u32>;
    }
}

#[test]
fn a_failing_frame_leaves_a_double_buffered_state_as_it_was() {
    let mut p = Doubler::new();
    let mut out = p.run(DoublerMode::Full, &vec![1, 2, 3]).unwrap();
    assert_eq!(out.total, 12);
    assert_eq!(p.state()._prev, vec![2, 4, 6]);
    // Fails after `doubled` filled its buffer: the state is untouched, and
    // so are the caller's outputs.
    let before = out.clone();
    let e = p.run_into(DoublerMode::Full, &vec![500, 1, 0], &mut out);
    assert!(e.is_err());
    assert_eq!(p.state()._prev, vec![2, 4, 6]);
    assert_eq!(out, before);
    // The next frame sees the last good state.
    p.run_into(DoublerMode::Full, &vec![1, 1, 1], &mut out)
        .unwrap();
    assert_eq!(out.doubled, vec![2, 2, 2]);
    assert_eq!(out.total, 2 + 2 + 2 + 2 + 4 + 6);
    assert_eq!(p.state()._prev, vec![2, 2, 2]);
}

#[test]
fn l2_buffers_are_shared_by_liveness() {
    let ir = L2::ir();
    let plan = L2Mode::Balanced.plan();
    let bufs = BufferPlan::sequential(ir, plan);
    let name = |id: u32| ir.nodes[id as usize].name.to_string();
    let listing: Vec<(String, Vec<String>)> = bufs
        .buffers
        .iter()
        .map(|b| (b.ty.clone(), b.values.iter().map(|&v| name(v)).collect()))
        .collect();
    // Every filled value has a buffer; values sharing one never overlap:
    // each is written after the previous one's last read.
    for b in &bufs.buffers {
        for pair in b.values.windows(2) {
            let pos = |id: u32| plan.order.iter().position(|&n| n == id).unwrap();
            let last_read = ir
                .edges
                .iter()
                .filter(|e| e.from == cortex::model::ir::Endpoint::Node(pair[0]))
                .filter_map(|e| match e.to {
                    cortex::model::ir::Endpoint::Node(c) if plan.is_live(c) => Some(pos(c)),
                    _ => None,
                })
                .max()
                .unwrap_or(pos(pair[0]));
            assert!(last_read < pos(pair[1]), "{listing:?}");
        }
    }
    let filled = ir.nodes.iter().filter(|n| n.fills_buffer()).count();
    let assigned: usize = bufs.buffers.iter().map(|b| b.values.len()).sum();
    assert_eq!(assigned, filled, "{listing:?}");
    assert!(L2Mode::ALL
        .iter()
        .all(|m| BufferPlan::sequential(ir, m.plan()).buffers.len() <= filled));
}

/// `out = in * k + 1`, element-wise, into a reused buffer.
fn affine_into(x: &Vec<u32>, k: u32, out: &mut Vec<u32>) {
    out.clear();
    out.extend(x.iter().map(|v| v.wrapping_mul(k).wrapping_add(1)));
}

fn affine(x: &Vec<u32>, k: u32) -> Vec<u32> {
    let mut out = Vec::new();
    affine_into(x, k, &mut out);
    out
}

fn add_into(a: &Vec<u32>, b: &Vec<u32>, out: &mut Vec<u32>) {
    out.clear();
    out.extend(a.iter().zip(b).map(|(x, y)| x.wrapping_add(*y)));
}

fn add(a: &Vec<u32>, b: &Vec<u32>) -> Vec<u32> {
    let mut out = Vec::new();
    add_into(a, b, &mut out);
    out
}

cortex_graph! {
    /// A chain whose filled values take turns in two buffers.
    pipeline Chain {
        input x: Vec<u32>;
        node a: Vec<u32> = affine_into(x, 3, &mut a);
        node b: Vec<u32> = affine_into(a, 5, &mut b);
        node c: Vec<u32> = affine_into(b, 7, &mut c);
        node d: Vec<u32> = add_into(c, b, &mut d);
        node e: Vec<u32> = affine_into(d, 11, &mut e);
        output e: Vec<u32>, c: Vec<u32>;
    }
}

cortex_graph! {
    /// [`Chain`] with value-returning nodes.
    pipeline ChainFresh {
        input x: Vec<u32>;
        node a = affine(x, 3);
        node b = affine(a, 5);
        node c = affine(b, 7);
        node d = add(c, b);
        node e = affine(d, 11);
        output e: Vec<u32>, c: Vec<u32>;
    }
}

#[test]
fn shared_buffers_give_the_values_of_fresh_ones() {
    let ir = Chain::ir();
    let bufs = BufferPlan::sequential(ir, ChainMode::Full.plan());
    // a's buffer is free once b ran, so c takes it; d reads b and c, so it
    // needs a third; e takes b's once d ran.
    assert_eq!(bufs.buffers.len(), 3, "{bufs:?}");
    let (mut p, mut q) = (Chain::new(), ChainFresh::new());
    let mut out = p.run(ChainMode::Full, &vec![1, 2, 3]).unwrap();
    for f in 0..20u32 {
        let x: Vec<u32> = (0..(f % 7 + 1)).map(|i| i * 31 + f).collect();
        p.run_into(ChainMode::Full, &x, &mut out).unwrap();
        let want = q.run(ChainFreshMode::Full, &x).unwrap();
        assert_eq!((&out.e, &out.c), (&want.e, &want.c), "frame {f}");
        assert_eq!(p.run(ChainMode::Full, &x).unwrap().e, want.e);
    }
}

#[test]
fn the_value_returning_reference_is_l2s_graph() {
    // The reference differs from L2 in how its nodes call the kernels only:
    // written out over the op library, the two are one graph file.
    use cortex::dynamic::GraphFile;
    let ops = cortex::library::vision_ops();
    let l2 = GraphFile::export(L2::ir(), &ops).expect("L2 exports");
    let fresh = GraphFile::export(L2Fresh::ir(), &ops).expect("L2Fresh exports");
    assert_eq!(fresh.replacen("\"L2Fresh\"", "\"L2\"", 1), l2);
}
