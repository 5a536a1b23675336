//! L2 computing only the outputs a caller reads (`run_with` with
//! `Run::outputs`): the nodes only other outputs need do not run (the
//! observer never sees them), the outputs read are bit-identical to the
//! every-output run's on every engine and both selections (mode and
//! weights), the others are left as they were, and reading everything
//! again computes everything again.
#![cfg(feature = "runner")]

use cortex::l2::{L2Mode, L2Outputs, L2};
use cortex::model::ir::NodeId;
use cortex::ops::RgbFrame;
use cortex::run::{ChoiceRef, Engine, Run};
use cortex::runner::sources::SyntheticClip;
use cortex::{prelude::Observer, run::OutputSet};

/// The nodes that ran (a fused group's members included).
#[derive(Default)]
struct Ran(Vec<NodeId>);

impl Observer for Ran {
    fn node_begin(&mut self, node: NodeId) {
        self.0.push(node);
    }
    fn group_begin(&mut self, members: &'static [NodeId]) {
        self.0.extend(members);
    }
}

impl Ran {
    fn names(&mut self) -> Vec<&'static str> {
        let mut v: Vec<&'static str> = self
            .0
            .drain(..)
            .map(|n| L2::ir().nodes[n as usize].name.as_ref())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

fn frames() -> Vec<RgbFrame> {
    // Frames 0..12 of the synthetic clip: a cut at 10 and motion throughout.
    let clip = SyntheticClip::new(192, 144);
    (0..12).map(|f| clip.frame(f)).collect()
}

/// The fields of `out` named in `set`, as text (the values are compared
/// exactly: `Debug` of floats round-trips).
fn shown(out: &L2Outputs, set: OutputSet) -> Vec<String> {
    let all = [
        format!("{:?}", out.blur),
        format!("{:?}", out.scene),
        format!("{:?}", out.fused),
        format!("{:?}", out.roi),
        // The regions and their peak: what `RoiRegions` compares (its
        // working memory is not a result).
        format!("{:?} {:?}", out.regions.regions, out.regions.peak),
        format!("{:?}", out.qp_map),
    ];
    all.into_iter()
        .enumerate()
        .filter(|(i, _)| set.contains(*i))
        .map(|(_, s)| s)
        .collect()
}

#[test]
fn only_the_producers_of_what_is_read_run_and_their_values_are_the_full_runs() {
    let ir = L2::ir();
    let names: Vec<&str> = ir
        .outputs
        .iter()
        .map(|o| ir.nodes[o.node as usize].name.as_ref())
        .collect();
    assert_eq!(
        names,
        ["blur", "scene", "fused", "roi", "regions", "qp_map"]
    );
    let frames = frames();
    let sets: [&[&str]; 5] = [
        &["blur", "scene", "roi"],
        &["scene"],
        &["blur"],
        &["regions"],
        &["qp_map", "scene"],
    ];
    let weights = L2Mode::Balanced.weights();
    for read in sets {
        let set = OutputSet::named(ir, read).unwrap();
        let left_out = OutputSet::ALL
            .of(ir)
            .names(ir)
            .into_iter()
            .filter(|n| !read.contains(n))
            .collect::<Vec<_>>();
        for engine in [Engine::Sequential, Engine::Parallel] {
            for by_weights in [false, true] {
                let (mut full, mut part) = (L2::new(), L2::new());
                let mut want = full.run(L2Mode::Balanced, &frames[0]).unwrap();
                let mut got = part.run(L2Mode::Balanced, &frames[0]).unwrap();
                let mut ran = Ran::default();
                for f in &frames[1..] {
                    full.run_into(L2Mode::Balanced, f, &mut want).unwrap();
                    let select = if by_weights {
                        ChoiceRef::Weights(weights)
                    } else {
                        ChoiceRef::Mode(L2Mode::Balanced)
                    };
                    let others = OutputSet::ALL
                        .of(ir)
                        .names(ir)
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| !set.contains(*i))
                        .fold(OutputSet::NONE, |s, (i, _)| s.with(i));
                    let before = shown(&got, others);
                    let mut run = Run::of(select)
                        .engine(engine)
                        .outputs(set)
                        .observed(&mut ran);
                    part.run_with(&mut run, f, &mut got).unwrap();
                    let what = format!("reading {read:?}, {engine:?}, by weights {by_weights}");
                    assert_eq!(shown(&got, set), shown(&want, set), "{what}");
                    assert_eq!(shown(&got, others), before, "left as it was, {what}");
                    let ran = ran.names();
                    for n in &left_out {
                        // An output left out whose node another one needs
                        // (`fused` for `roi`) still runs.
                        let needed = cortex::passes::dce::plan_for_outputs(ir, 0, set, "x")
                            .is_live(ir.outputs[names.iter().position(|m| m == n).unwrap()].node);
                        assert_eq!(ran.contains(n), needed, "{n}, {what}: ran {ran:?}");
                    }
                }
                // Reading everything again computes everything again: equal
                // to the full run's, except for outputs that read a state the
                // part did not keep (it restarted from its initial value).
                let kept = cortex::passes::dce::plan_for_outputs(ir, 0, set, "part");
                for f in &frames[..3] {
                    full.run_into(L2Mode::Balanced, f, &mut want).unwrap();
                    let mut run = Run::of(ChoiceRef::Mode(L2Mode::Balanced)).engine(engine);
                    part.run_with(&mut run, f, &mut got).unwrap();
                    for (i, name) in names.iter().enumerate() {
                        let one = OutputSet::NONE.with(i);
                        let own = cortex::passes::dce::plan_for_outputs(ir, 0, one, "one");
                        let clean = (0..ir.states.len() as u32)
                            .all(|s| kept.writes_state(s) || !own.writes_state(s));
                        if clean {
                            assert_eq!(shown(&got, one), shown(&want, one), "{name} read again");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn the_json_outputs_do_not_run_regions_nor_qp_map() {
    let set = OutputSet::named(L2::ir(), &["blur", "scene", "roi"]).unwrap();
    let plan = cortex::passes::dce::plan_for_outputs(
        L2::ir(),
        L2Mode::Balanced.plan().zero_pattern,
        set,
        "json",
    );
    let gone: Vec<&str> = plan
        .eliminated
        .iter()
        .map(|e| L2::ir().nodes[e.node as usize].name.as_ref())
        .collect();
    assert_eq!(gone, ["regions", "qp_map"]);
    assert!(plan.validate_for(L2::ir(), set).is_ok());
    // An explicit plan that leaves out an output a run reads is refused.
    let mut p = L2::new();
    let frame = SyntheticClip::new(64, 48).frame(0);
    let mut out = p.run(L2Mode::Balanced, &frame).unwrap();
    let weights = L2Mode::Balanced.weights();
    let mut run = Run::plan(&plan, weights);
    assert!(matches!(
        p.run_with(&mut run, &frame, &mut out),
        Err(cortex::PipelineError::Plan(
            cortex::model::plan::PlanError::OutputEliminated { .. }
        ))
    ));
    let mut run = Run::plan(&plan, weights).outputs(set);
    p.run_with(&mut run, &frame, &mut out).unwrap();
}

/// A stream reading some outputs (`run_stream_with`): each frame's outputs
/// read equal the every-output run's, frame by frame, at 1 to 3 frames in
/// flight; the observer sees a node only other outputs need on the first
/// frame alone (with no outputs of an earlier frame to run into, it makes
/// every output); a rated mode runs its own stages; weights are refused.
#[test]
fn a_stream_reading_some_outputs_runs_only_their_producers() {
    use cortex::stream::{Overflow, StreamError, StreamOptions};
    use std::ops::ControlFlow;
    let ir = L2::ir();
    let frames = frames();
    let sets: [&[&str]; 4] = [
        &["blur", "scene", "roi"],
        &["scene"],
        &["regions"],
        &["qp_map", "scene"],
    ];
    for mode in [L2Mode::Balanced, L2Mode::PowerSave] {
        let mut full = L2::new();
        let want: Vec<L2Outputs> = frames.iter().map(|f| full.run(mode, f).unwrap()).collect();
        for read in sets {
            let set = OutputSet::named(ir, read).unwrap();
            let cut =
                cortex::passes::dce::plan_for_outputs(ir, mode.plan().zero_pattern, set, "cut");
            for in_flight in 1..=3 {
                let what = format!("{mode:?}, reading {read:?}, {in_flight} in flight");
                let mut p = L2::new();
                let mut ran = Ran::default();
                let mut run = Run::mode(mode).outputs(set).observed(&mut ran);
                let options = StreamOptions {
                    in_flight,
                    queue: 2,
                    overflow: Overflow::Block,
                };
                let mut got = Vec::new();
                let source = frames.iter().cloned().enumerate().map(|(i, f)| (i, (f,)));
                let report = p
                    .run_stream_with(&mut run, source, &options, |r| {
                        let out = r.result.as_ref().expect("a frame");
                        got.push((r.tag, shown(out, set)));
                        ControlFlow::Continue(())
                    })
                    .unwrap();
                assert_eq!(report.processed, frames.len() as u64, "{what}");
                assert_eq!(got.len(), frames.len(), "{what}");
                for (i, shown_got) in got {
                    assert_eq!(shown_got, shown(&want[i], set), "frame {i}, {what}");
                }
                if mode == L2Mode::Balanced {
                    for &id in &ran.0 {
                        let times = ran.0.iter().filter(|&&m| m == id).count();
                        let n = &ir.nodes[id as usize].name;
                        assert!(
                            cut.is_live(id) || times == 1,
                            "{n} ran {times} times outside the cut, {what}"
                        );
                    }
                } else {
                    let seen = ran.names();
                    // A rated mode runs its own stages, every output.
                    assert!(seen.contains(&"fused"), "{what}: {seen:?}");
                }
            }
        }
    }
    let mut p = L2::new();
    let weights = L2Mode::Balanced.weights();
    let mut run = Run::weights(weights);
    let source = frames.iter().cloned().map(|f| ((), (f,)));
    let refused = p.run_stream_with(&mut run, source, &StreamOptions::DEFAULT, |_| {
        ControlFlow::Continue(())
    });
    assert_eq!(refused, Err(StreamError::NotAMode));
}

/// Calls of [`counted_square`], the first-stage node of [`Counted`].
static SQUARES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn counted_square(x: &i64) -> i64 {
    SQUARES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    x * x
}

fn running(sq: &i64, acc: &i64) -> i64 {
    (acc * 3 + sq) % 1_000_003
}

fn halve(x: &i64) -> i64 {
    x / 2
}

cortex::cortex_graph! {
    /// A first stage that counts its calls (`sq`), a second stage reading
    /// the state (`acc`), and an output no stream below reads (`half`).
    #[parallel]
    pipeline Counted {
        input x: i64;
        state _acc: i64 = 1;
        node sq = counted_square(x);
        node acc = running(sq, _acc);
        node half = halve(acc);
        acc -> _acc;
        output acc: i64;
        output half: i64;
    }
}

/// A stream reading some outputs whose caller keeps every frame's outputs
/// (`take_result`: no outputs come back to run into, so every frame makes
/// all of them) computes each frame's first stage once: the unread output
/// is computed from the first stage's values, not by running the frame
/// again. Every output equals the sequential run's.
#[test]
fn a_stream_whose_caller_keeps_the_outputs_runs_each_frame_once() {
    use cortex::stream::{Overflow, StreamOptions};
    use std::ops::ControlFlow;
    let xs: Vec<i64> = (1..=25).collect();
    let mut seq = Counted::new();
    let want: Vec<(i64, i64)> = xs
        .iter()
        .map(|x| {
            let o = seq.run(CountedMode::Full, x).unwrap();
            (o.acc, o.half)
        })
        .collect();
    let set = OutputSet::named(Counted::ir(), &["acc"]).unwrap();
    for in_flight in 1..=3 {
        let mut p = Counted::new();
        let mut got = Vec::new();
        let options = StreamOptions {
            in_flight,
            queue: 2,
            overflow: Overflow::Block,
        };
        let before = SQUARES.load(std::sync::atomic::Ordering::Relaxed);
        p.run_stream_with(
            &mut Run::mode(CountedMode::Full).outputs(set),
            xs.iter().map(|&x| ((), (x,))),
            &options,
            |r| {
                let o = r.take_result().expect("a frame");
                got.push((o.acc, o.half));
                ControlFlow::Continue(())
            },
        )
        .unwrap();
        let calls = SQUARES.load(std::sync::atomic::Ordering::Relaxed) - before;
        assert_eq!(got, want, "{in_flight} in flight");
        assert_eq!(calls, xs.len(), "{in_flight} in flight");
        assert_eq!(p.state(), seq.state());
    }
}
