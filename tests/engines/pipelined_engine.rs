//! Pipelined runs (`run_stream`): frames in order, outputs and state
//! bit-identical to the sequential run on the frames that were processed, a
//! failing frame failing alone (later frames see the last good state), and
//! exact counts of the frames a full queue dropped; a panicking node or
//! source loses no frame in flight; a tag carried with each frame
//! (`run_stream_with`) comes back with that frame alone.
#![cfg(feature = "runner")]

use cortex::Run;
use std::ops::ControlFlow;

use cortex::cortex_graph;
use cortex::l2::{L2Mode, L2Outputs, L2};
use cortex::ops::RgbFrame;
use cortex::runner::sources::SyntheticClip;
use cortex::stream::{Overflow, StreamOptions};

fn clip(n: u64) -> Vec<RgbFrame> {
    let c = SyntheticClip::new(160, 120);
    (0..n).map(|f| c.frame(f)).collect()
}

fn sequential(mode: L2Mode, frames: &[RgbFrame]) -> Vec<L2Outputs> {
    let mut p = L2::new();
    frames.iter().map(|f| p.run(mode, f).unwrap()).collect()
}

#[test]
fn l2_stream_matches_sequential_at_every_depth() {
    let frames = clip(30);
    for mode in [L2Mode::Balanced, L2Mode::PowerSave] {
        let want = sequential(mode, &frames);
        for in_flight in [1, 2, 3, 5] {
            let mut p = L2::new();
            let mut got = Vec::new();
            let opts = StreamOptions {
                in_flight,
                queue: 2,
                overflow: Overflow::Block,
            };
            let report = p
                .run_stream(mode, frames.iter().cloned().map(|f| (f,)), &opts, |r| {
                    assert_eq!(r.index, got.len() as u64);
                    assert_eq!(r.dropped_before, 0);
                    got.push(r.result.unwrap());
                    ControlFlow::Continue(())
                })
                .unwrap();
            assert_eq!(got, want, "{mode:?}, {in_flight} in flight");
            assert_eq!((report.received, report.processed), (30, 30));
            assert_eq!((report.failed, report.dropped, report.discarded), (0, 0, 0));
            // The state after the stream is the sequential run's.
            let mut q = L2::new();
            for f in &frames {
                q.run(mode, f).unwrap();
            }
            assert_eq!(p.state(), q.state());
        }
    }
}

fn gate(x: &i64) -> Result<i64, String> {
    if *x < 0 {
        Err(format!("negative input {x}"))
    } else {
        Ok(*x)
    }
}

fn accumulate(sq: &i64, x: &i64, acc: &i64) -> Result<i64, String> {
    let next = acc * 3 + sq;
    if x % 10 == 7 {
        Err(format!("{x} ends in 7"))
    } else {
        Ok(next % 1_000_003)
    }
}

fn square(x: &i64) -> i64 {
    x * x
}

fn pair(a: &i64, b: &i64) -> (i64, i64) {
    (*a, *b)
}

cortex_graph! {
    /// A state-free stage that may fail (`g`, negative inputs) and a
    /// state-reading stage that may fail (`acc`, inputs ending in 7).
    #[parallel]
    pipeline Acc {
        input x: i64;
        state _acc: i64 = 1;
        node g = gate(x)?;
        node sq = square(g);
        node acc = accumulate(sq, g, _acc)?;
        node out = pair(acc, sq);
        acc -> _acc;
        output out: (i64, i64);
    }
}

#[test]
fn a_failing_frame_fails_alone_and_later_frames_see_the_last_good_state() {
    let xs: Vec<i64> = vec![1, 2, -3, 4, 17, 5, 6, 27, -1, 8, 9, 10, 37, 11];
    let mut seq = Acc::new();
    let want: Vec<Result<(i64, i64), String>> = xs
        .iter()
        .map(|x| {
            seq.run(AccMode::Full, x)
                .map(|o| o.out)
                .map_err(|e| e.to_string())
        })
        .collect();
    assert_eq!(want.iter().filter(|r| r.is_err()).count(), 5);
    for in_flight in [1, 2, 4] {
        let mut p = Acc::new();
        let mut got = Vec::new();
        let opts = StreamOptions {
            in_flight,
            ..StreamOptions::default()
        };
        let report = p
            .run_stream(AccMode::Full, xs.iter().map(|&x| (x,)), &opts, |r| {
                assert_eq!(r.inputs.0, xs[r.index as usize]);
                got.push(r.result.map(|o| o.out).map_err(|e| e.to_string()));
                ControlFlow::Continue(())
            })
            .unwrap();
        assert_eq!(got, want, "{in_flight} in flight");
        assert_eq!(
            report.failed,
            want.iter().filter(|r| r.is_err()).count() as u64
        );
        assert_eq!(report.processed + report.failed, xs.len() as u64);
        assert_eq!(p.state(), seq.state());
    }
}

#[test]
fn dropped_frames_are_counted_exactly_and_the_rest_match_a_sequential_run() {
    for overflow in [Overflow::DropOldest, Overflow::KeepLatest] {
        let frames = clip(40);
        let mut p = L2::new();
        let mut delivered = Vec::new();
        let mut dropped_sum = 0;
        let opts = StreamOptions {
            in_flight: 2,
            queue: 1,
            overflow,
        };
        // A slow consumer: the source outruns it, so the queue overflows.
        let report = p
            .run_stream(
                L2Mode::Balanced,
                frames.iter().cloned().map(|f| (f,)),
                &opts,
                |r| {
                    std::thread::sleep(std::time::Duration::from_millis(15));
                    dropped_sum += r.dropped_before;
                    delivered.push((r.index, r.result.unwrap()));
                    ControlFlow::Continue(())
                },
            )
            .unwrap();
        let n = delivered.len() as u64;
        assert_eq!(report.received, 40);
        assert_eq!(report.processed, n);
        assert_eq!(
            report.dropped + n,
            40,
            "{overflow:?}: every frame delivered or dropped"
        );
        assert!(
            report.dropped > 0,
            "{overflow:?}: the slow consumer made the queue drop frames"
        );
        // Frames dropped at the very end have no later delivery to report
        // them in `dropped_before`.
        assert!(dropped_sum <= report.dropped);
        assert!(delivered.windows(2).all(|w| w[0].0 < w[1].0), "in order");
        // The processed frames give exactly what a sequential run over them
        // gives: the state followed the frames that were processed.
        let kept: Vec<RgbFrame> = delivered
            .iter()
            .map(|(i, _)| frames[*i as usize].clone())
            .collect();
        let want = sequential(L2Mode::Balanced, &kept);
        for ((i, got), want) in delivered.iter().zip(&want) {
            assert_eq!(got, want, "{overflow:?}: frame {i}");
        }
    }
}

#[test]
fn break_stops_the_stream() {
    let frames = clip(20);
    let mut p = L2::new();
    let mut seen = 0;
    let report = p
        .run_stream(
            L2Mode::PowerSave,
            frames.iter().cloned().map(|f| (f,)),
            &StreamOptions::default(),
            |_| {
                seen += 1;
                if seen == 5 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            },
        )
        .unwrap();
    assert_eq!(seen, 5);
    assert_eq!(report.processed, 5);
    assert!(report.received < 20 || report.discarded > 0);
    assert_eq!(
        report.processed + report.failed + report.dropped + report.discarded,
        report.received
    );
}

fn gate_or_panic(x: &i64) -> Result<i64, String> {
    if x % 100 == 13 {
        panic!("gate panics on {x}");
    }
    gate(x)
}

fn accumulate_or_panic(sq: &i64, x: &i64, acc: &i64) -> Result<i64, String> {
    if x % 100 == 29 {
        panic!("accumulate panics on {x}");
    }
    accumulate(sq, x, acc)
}

cortex_graph! {
    /// `Acc` whose state-free stage also panics (inputs ending in 13) and
    /// whose state-reading stage also panics (inputs ending in 29).
    #[parallel]
    pipeline Boom {
        input x: i64;
        state _acc: i64 = 1;
        node g = gate_or_panic(x)?;
        node sq = square(g);
        node acc = accumulate_or_panic(sq, g, _acc)?;
        node out = pair(acc, sq);
        acc -> _acc;
        output out: (i64, i64);
    }
}

/// Panics of state-free nodes (113, 413: frame 12, beside frame 11's second
/// stage), of a state reader (229, 529), and node errors (−3, 17, 27, 37).
const BOOM: [i64; 25] = [
    1, 2, -3, 113, 4, 17, 5, 229, 6, 27, 8, 9, 413, 10, 37, 11, 529, 12, 14, 15, 613, 16, 18, 19,
    20,
];

fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// The sequential model: `run` lets a panic unwind and keeps the last good
/// state; the stream reports it as the frame's error.
fn run_caught(p: &mut Boom, x: i64) -> Outcome {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| p.run(BoomMode::Full, &x))) {
        Ok(r) => r.map(|o| o.out).map_err(|e| e.to_string()),
        Err(payload) => Err(format!("a node panicked: {}", panic_text(payload))),
    }
}

/// A frame's output, or its error as text.
type Outcome = Result<(i64, i64), String>;

/// The results and final state of a sequential run over `xs`.
fn sequential_boom(xs: &[i64]) -> (Vec<Outcome>, Boom) {
    let mut p = Boom::new();
    let results = xs.iter().map(|&x| run_caught(&mut p, x)).collect();
    (results, p)
}

const POLICIES: [Overflow; 3] = [Overflow::Block, Overflow::DropOldest, Overflow::KeepLatest];

/// A node panic fails its frame alone, at every depth and overflow policy:
/// every frame pulled is delivered (or dropped and counted), each result is
/// the sequential run's over the delivered frames, and the state is that of
/// the last good delivered frame.
#[test]
fn a_panicking_node_fails_its_frame_alone_and_no_frame_is_lost() {
    let (want, seq) = sequential_boom(&BOOM);
    assert_eq!(want.iter().filter(|r| r.is_err()).count(), 9);
    for overflow in POLICIES {
        for in_flight in [1, 2, 4] {
            let mut p = Boom::new();
            let mut got = Vec::new();
            let opts = StreamOptions {
                in_flight,
                queue: 1,
                overflow,
            };
            let report = p
                .run_stream(BoomMode::Full, BOOM.iter().map(|&x| (x,)), &opts, |r| {
                    // A slow consumer, so that the drop policies drop.
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    got.push((
                        r.index,
                        r.dropped_before,
                        r.result.map(|o| o.out).map_err(|e| e.to_string()),
                    ));
                    ControlFlow::Continue(())
                })
                .unwrap_or_else(|e| panic!("{overflow:?}, {in_flight} in flight: {e}"));
            let case = format!("{overflow:?}, {in_flight} in flight");
            let kept: Vec<i64> = got.iter().map(|(i, _, _)| BOOM[*i as usize]).collect();
            let (want_kept, seq_kept) = sequential_boom(&kept);
            let results: Vec<_> = got.iter().map(|(_, _, r)| r.clone()).collect();
            assert_eq!(results, want_kept, "{case}");
            assert_eq!(p.state(), seq_kept.state(), "{case}");
            let failed = results.iter().filter(|r| r.is_err()).count() as u64;
            assert_eq!(report.received, BOOM.len() as u64, "{case}");
            assert_eq!(
                (report.processed, report.failed),
                (got.len() as u64 - failed, failed),
                "{case}"
            );
            assert_eq!(report.dropped + got.len() as u64, report.received, "{case}");
            assert_eq!(report.discarded, 0, "{case}");
            let dropped: u64 = got.iter().map(|(_, d, _)| d).sum();
            assert_eq!(dropped, report.dropped, "{case}: drops reported");
            assert_eq!(
                report.dropped > 0,
                overflow != Overflow::Block,
                "{case}: the slow consumer made the queue drop frames"
            );
            if overflow == Overflow::Block {
                assert_eq!(results, want, "{case}");
                assert_eq!(p.state(), seq.state(), "{case}");
            }
            // The pipeline goes on from the last good state.
            let mut q = seq_kept;
            assert_eq!(run_caught(&mut p, 3), run_caught(&mut q, 3), "{case}");
        }
    }
}

/// Frames with node errors, no node panics: the source's panic alone.
const SOURCE: [i64; 13] = [1, 2, -3, 4, 17, 5, 6, 27, 8, 9, 10, 11, 12];

/// A source that panics at frame 12 ends the stream with the error only
/// after every frame it handed over was delivered or dropped (and counted in
/// a later delivery's `dropped_before`); the state is the sequential run's
/// over the delivered frames.
#[test]
fn a_panicking_source_loses_no_frame_in_flight() {
    for overflow in POLICIES {
        for in_flight in [1, 2, 4] {
            let case = format!("{overflow:?}, {in_flight} in flight");
            let mut p = Boom::new();
            let mut got = Vec::new();
            let source = SOURCE.iter().enumerate().map(|(i, &x)| {
                if i == 12 {
                    panic!("the source broke at 12");
                }
                (x,)
            });
            let opts = StreamOptions {
                in_flight,
                queue: 1,
                overflow,
            };
            let r = p.run_stream(BoomMode::Full, source, &opts, |r| {
                std::thread::sleep(std::time::Duration::from_millis(1));
                got.push((
                    r.index,
                    r.dropped_before,
                    r.result.map(|o| o.out).map_err(|e| e.to_string()),
                ));
                ControlFlow::Continue(())
            });
            match r {
                Err(cortex::stream::StreamError::SourcePanicked(m)) => {
                    assert!(m.contains("broke at 12"), "{case}: {m}")
                }
                other => panic!("{case}: {other:?}"),
            }
            assert_eq!(
                got.last().map(|g| g.0),
                Some(11),
                "{case}: frame 11 delivered"
            );
            let dropped: u64 = got.iter().map(|(_, d, _)| d).sum();
            assert_eq!(
                got.len() as u64 + dropped,
                12,
                "{case}: every frame accounted for"
            );
            assert_eq!(
                dropped > 0,
                overflow != Overflow::Block,
                "{case}: the slow consumer made the queue drop frames"
            );
            let kept: Vec<i64> = got.iter().map(|(i, _, _)| SOURCE[*i as usize]).collect();
            let (want_kept, seq_kept) = sequential_boom(&kept);
            let results: Vec<_> = got.iter().map(|(_, _, r)| r.clone()).collect();
            assert_eq!(results, want_kept, "{case}");
            assert_eq!(p.state(), seq_kept.state(), "{case}");
        }
    }
}

/// A result callback that panics on its sixth delivery (or on the last
/// frame, which the dropping policies always deliver) stops the stream
/// with a typed error, at every depth and overflow policy: the frame it was
/// handed counts (its state is committed), the frames behind it are
/// discarded without touching the state, the counts add up, and the
/// pipeline goes on from the state of the delivered frames.
#[test]
fn a_panicking_callback_stops_the_stream_and_every_frame_is_accounted_for() {
    for overflow in POLICIES {
        for in_flight in [1, 2, 4] {
            let case = format!("{overflow:?}, {in_flight} in flight");
            let mut p = Boom::new();
            let mut got = Vec::new();
            let opts = StreamOptions {
                in_flight,
                queue: 1,
                overflow,
            };
            let r = p.run_stream(BoomMode::Full, BOOM.iter().map(|&x| (x,)), &opts, |r| {
                std::thread::sleep(std::time::Duration::from_millis(1));
                got.push((
                    r.index,
                    r.dropped_before,
                    r.result.map(|o| o.out).map_err(|e| e.to_string()),
                ));
                if got.len() == 6 || r.index == BOOM.len() as u64 - 1 {
                    panic!("the callback gave up");
                }
                ControlFlow::Continue(())
            });
            let report = match r {
                Err(cortex::stream::StreamError::CallbackPanicked {
                    frame,
                    message,
                    report,
                }) => {
                    assert!(message.contains("gave up"), "{case}: {message}");
                    assert_eq!(Some(frame), got.last().map(|g| g.0), "{case}");
                    report
                }
                other => panic!("{case}: {other:?}"),
            };
            assert!(got.len() <= 6, "{case}: no delivery after the panic");
            let kept: Vec<i64> = got.iter().map(|(i, _, _)| BOOM[*i as usize]).collect();
            let (want_kept, seq_kept) = sequential_boom(&kept);
            let results: Vec<_> = got.iter().map(|(_, _, r)| r.clone()).collect();
            assert_eq!(results, want_kept, "{case}");
            assert_eq!(
                p.state(),
                seq_kept.state(),
                "{case}: state of the delivered frames"
            );
            let failed = results.iter().filter(|r| r.is_err()).count() as u64;
            assert_eq!(
                (report.processed, report.failed),
                (got.len() as u64 - failed, failed),
                "{case}"
            );
            // The policy may still drop a frame between the last delivery
            // and the stop: counted in the report, before no delivery.
            let dropped: u64 = got.iter().map(|(_, d, _)| d).sum();
            assert!(report.dropped >= dropped, "{case}: {report:?}");
            assert_eq!(
                report.received,
                report.processed + report.failed + report.dropped + report.discarded,
                "{case}: {report:?}"
            );
            assert!(report.received <= BOOM.len() as u64, "{case}");
            if overflow == Overflow::Block {
                assert_eq!(report.dropped, 0, "{case}");
            }
            // The pipeline goes on from the last delivered state, in a
            // direct run and in a new stream.
            let mut q = seq_kept;
            assert_eq!(run_caught(&mut p, 3), run_caught(&mut q, 3), "{case}");
            let mut again = Vec::new();
            // (Blocking, so that neither frame is dropped.)
            let block = StreamOptions {
                overflow: Overflow::Block,
                ..opts
            };
            p.run_stream(BoomMode::Full, [(4,), (5,)], &block, |r| {
                again.push(r.result.map(|o| o.out).map_err(|e| e.to_string()));
                ControlFlow::Continue(())
            })
            .unwrap();
            assert_eq!(
                again,
                vec![run_caught(&mut q, 4), run_caught(&mut q, 5)],
                "{case}"
            );
        }
    }
}

#[test]
fn run_stream_refuses_options_whose_frames_cannot_fit_the_memory_budget() {
    // 1000x1000 RGB frames are 3 MB; 64 in flight and 1024 waiting would hold
    // 1089 of them, 3.3 GB, over the default 2 GiB budget.
    let clip = SyntheticClip::new(1000, 1000);
    let frames = (0..3u64).map(|f| (clip.frame(f),));
    let options = StreamOptions {
        in_flight: 64,
        queue: 1024,
        overflow: Overflow::Block,
    };
    let mut p = L2::new();
    let mut delivered = 0;
    let r = p.run_stream(L2Mode::Balanced, frames, &options, |_| {
        delivered += 1;
        ControlFlow::Continue(())
    });
    match r {
        Err(cortex::stream::StreamError::OverBudget(over)) => {
            assert_eq!(over.frame_bytes, 3_000_000);
            assert!(over.needed() > over.budget, "{over:?}");
        }
        other => panic!("expected OverBudget, got {other:?}"),
    }
    assert_eq!(delivered, 0);
    assert_eq!(p.frame_index(), 0, "no frame ran");
    // The same frames with the default options run.
    let frames = (0..3u64).map(|f| (clip.frame(f),));
    let report = p
        .run_stream(L2Mode::Balanced, frames, &StreamOptions::default(), |_| {
            ControlFlow::Continue(())
        })
        .unwrap();
    assert_eq!(report.processed, 3);
}

/// `run_stream_with`: each frame's tag comes back with that frame's own
/// result, in order, whether the frame succeeded, failed on a node error or
/// on a node panic, at 1, 2 and 4 frames in flight; the results and the
/// state are `run_stream`'s.
#[test]
fn tags_come_back_in_order_with_their_frames_and_failures() {
    let (want, seq) = sequential_boom(&BOOM);
    assert!(want.iter().any(|r| r.is_err()) && want.iter().any(|r| r.is_ok()));
    for in_flight in [1, 2, 4] {
        let mut p = Boom::new();
        let mut got = Vec::new();
        let opts = StreamOptions {
            in_flight,
            ..StreamOptions::default()
        };
        // The tag: the frame's position and a text owning heap memory.
        let frames = BOOM
            .iter()
            .enumerate()
            .map(|(i, &x)| ((i as u64, format!("tag of {x}")), (x,)));
        let report = p
            .run_stream_with(&mut Run::mode(BoomMode::Full), frames, &opts, |r| {
                let (i, text) = std::mem::take(&mut r.tag);
                assert_eq!(i, r.index, "{in_flight} in flight");
                assert_eq!(text, format!("tag of {}", r.inputs.0));
                let result = r.take_result();
                got.push((i, result.map(|o| o.out).map_err(|e| e.to_string())));
                ControlFlow::Continue(())
            })
            .unwrap();
        let indices: Vec<u64> = got.iter().map(|(i, _)| *i).collect();
        assert_eq!(indices, (0..BOOM.len() as u64).collect::<Vec<_>>());
        let results: Vec<Outcome> = got.into_iter().map(|(_, r)| r).collect();
        assert_eq!(results, want, "{in_flight} in flight");
        assert_eq!(
            report.failed,
            want.iter().filter(|r| r.is_err()).count() as u64
        );
        assert_eq!(p.state(), seq.state(), "{in_flight} in flight");
    }
}

/// A tag owning a share of `alive`: dropping it gives the share back.
type Tagged = (u64, std::sync::Arc<()>);

/// Tags of frames that are never delivered (dropped by the policy, or
/// discarded after a `Break` or a panicking callback) are dropped with their
/// inputs: once the stream returns, no tag is left alive, and every frame
/// the source handed over was delivered with its own tag or counted.
#[test]
fn tags_of_frames_never_delivered_are_dropped_not_leaked() {
    for overflow in POLICIES {
        for in_flight in [1, 2, 4] {
            for stop in ["break", "panic"] {
                let case = format!("{overflow:?}, {in_flight} in flight, {stop}");
                let alive = std::sync::Arc::new(());
                let mut p = Boom::new();
                let mut delivered = 0u64;
                let opts = StreamOptions {
                    in_flight,
                    queue: 1,
                    overflow,
                };
                let frames = BOOM.iter().enumerate().map(|(i, &x)| {
                    let tag: Tagged = (i as u64, std::sync::Arc::clone(&alive));
                    (tag, (x,))
                });
                let r = p.run_stream_with(&mut Run::mode(BoomMode::Full), frames, &opts, |r| {
                    // A slow consumer, so that the drop policies drop.
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    assert_eq!(r.tag.0, r.index, "{case}");
                    delivered += 1;
                    if delivered == 6 || r.index == BOOM.len() as u64 - 1 {
                        if stop == "panic" {
                            panic!("the callback gave up");
                        }
                        return ControlFlow::Break(());
                    }
                    ControlFlow::Continue(())
                });
                let report = match (stop, r) {
                    ("break", Ok(report)) => report,
                    (
                        "panic",
                        Err(cortex::stream::StreamError::CallbackPanicked { report, .. }),
                    ) => report,
                    (_, other) => panic!("{case}: {other:?}"),
                };
                assert_eq!(
                    std::sync::Arc::strong_count(&alive),
                    1,
                    "{case}: every tag dropped"
                );
                assert_eq!(report.processed + report.failed, delivered, "{case}");
                assert_eq!(
                    report.received,
                    delivered + report.dropped + report.discarded,
                    "{case}: {report:?}"
                );
                if overflow != Overflow::Block {
                    assert!(report.dropped > 0, "{case}: the queue dropped frames");
                }
            }
        }
    }
}

/// `run_stream_into` runs each frame into the outputs of an earlier one:
/// the same outputs and state as the sequential run on L2 (filled outputs
/// trading buffers with the pipeline) at every depth, in both modes,
/// whether the callback leaves the outputs to be reused or takes them
/// (every third frame).
#[test]
fn l2_stream_into_matches_sequential_at_every_depth() {
    let frames = clip(24);
    for mode in [L2Mode::Balanced, L2Mode::PowerSave] {
        let want = sequential(mode, &frames);
        for in_flight in [1, 2, 3] {
            let mut p = L2::new();
            let mut got = Vec::new();
            let opts = StreamOptions {
                in_flight,
                queue: 2,
                overflow: Overflow::Block,
            };
            let tagged = frames.iter().cloned().enumerate().map(|(i, f)| (i, (f,)));
            let report = p
                .run_stream_with(&mut Run::mode(mode), tagged, &opts, |r| {
                    assert_eq!(r.tag as u64, r.index);
                    let out = if r.index % 3 == 2 {
                        r.take_result().unwrap()
                    } else {
                        r.result.as_ref().unwrap().clone()
                    };
                    got.push(out);
                    ControlFlow::Continue(())
                })
                .unwrap();
            assert_eq!(got, want, "{mode:?}, {in_flight} in flight");
            assert_eq!((report.received, report.processed), (24, 24));
            let mut q = L2::new();
            for f in &frames {
                q.run(mode, f).unwrap();
            }
            assert_eq!(p.state(), q.state(), "{mode:?}, {in_flight} in flight");
        }
    }
}

/// `run_stream_into` with failing and panicking frames: a failed frame's
/// outputs of an earlier frame are not delivered and are reused afterwards;
/// results and state are the sequential run's.
#[test]
fn stream_into_failures_match_sequential() {
    let (want, seq) = sequential_boom(&BOOM);
    for in_flight in [1, 2, 4] {
        let mut p = Boom::new();
        let mut got = Vec::new();
        let opts = StreamOptions {
            in_flight,
            ..StreamOptions::default()
        };
        let tagged = BOOM.iter().map(|&x| (x, (x,)));
        p.run_stream_with(&mut Run::mode(BoomMode::Full), tagged, &opts, |r| {
            assert_eq!(r.tag, r.inputs.0);
            got.push(r.result.as_ref().map(|o| o.out).map_err(|e| e.to_string()));
            ControlFlow::Continue(())
        })
        .unwrap();
        assert_eq!(got, want, "{in_flight} in flight");
        assert_eq!(p.state(), seq.state(), "{in_flight} in flight");
    }
}

/// An observer event, with the thread it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    FrameBegin,
    FrameEnd(bool),
    NodeBegin(cortex::model::ir::NodeId),
    NodeEnd(cortex::model::ir::NodeId),
    GroupBegin,
    GroupEnd,
}

/// Records every event with its thread and whether that thread is one of
/// the engine pool's workers.
#[derive(Default)]
struct Recorder {
    events: Vec<(Seen, std::thread::ThreadId, bool)>,
}

impl Recorder {
    fn push(&mut self, e: Seen) {
        let pool = rayon::current_thread_index().is_some();
        self.events.push((e, std::thread::current().id(), pool));
    }

    /// How many `node_begin`s each node had.
    fn node_counts(&self) -> std::collections::BTreeMap<cortex::model::ir::NodeId, usize> {
        let mut m = std::collections::BTreeMap::new();
        for (e, _, _) in &self.events {
            if let Seen::NodeBegin(id) = e {
                *m.entry(*id).or_insert(0) += 1;
            }
        }
        m
    }
}

impl cortex::prelude::Observer for Recorder {
    fn frame_begin(
        &mut self,
        _: &'static cortex::model::ir::GraphIr,
        _: &cortex::model::plan::Plan,
    ) {
        self.push(Seen::FrameBegin);
    }
    fn node_begin(&mut self, node: cortex::model::ir::NodeId) {
        self.push(Seen::NodeBegin(node));
    }
    fn node_end(&mut self, node: cortex::model::ir::NodeId) {
        self.push(Seen::NodeEnd(node));
    }
    fn group_begin(&mut self, _: &'static [cortex::model::ir::NodeId]) {
        self.push(Seen::GroupBegin);
    }
    fn group_end(&mut self, _: bool) {
        self.push(Seen::GroupEnd);
    }
    fn frame_end(&mut self, ok: bool) {
        self.push(Seen::FrameEnd(ok));
    }
}

/// What every observed stream must show: frames that begin and end one at
/// a time, each on one thread, `frames` of them with these outcomes; each
/// node's begin and end on one thread, with no node begun twice at once.
fn check_events(rec: &Recorder, outcomes: &[bool], case: &str) {
    let frames: Vec<_> = rec
        .events
        .iter()
        .filter(|(e, _, _)| matches!(e, Seen::FrameBegin | Seen::FrameEnd(_)))
        .collect();
    assert_eq!(frames.len(), 2 * outcomes.len(), "{case}");
    for (pair, &ok) in frames.chunks(2).zip(outcomes) {
        assert_eq!(pair[0].0, Seen::FrameBegin, "{case}: frames never overlap");
        assert_eq!(pair[1].0, Seen::FrameEnd(ok), "{case}");
        assert_eq!(
            pair[0].1, pair[1].1,
            "{case}: a frame begins and ends on one thread"
        );
    }
    let mut open: std::collections::BTreeMap<cortex::model::ir::NodeId, std::thread::ThreadId> =
        Default::default();
    for (e, thread, _) in &rec.events {
        match e {
            Seen::NodeBegin(id) => {
                assert!(
                    open.insert(*id, *thread).is_none(),
                    "{case}: node {id} begun twice"
                );
            }
            Seen::NodeEnd(id) => {
                assert_eq!(
                    open.remove(id),
                    Some(*thread),
                    "{case}: node {id} ends where it began"
                );
            }
            _ => {}
        }
    }
    assert!(open.is_empty(), "{case}: every node that began ended");
    let groups = |g: Seen| rec.events.iter().filter(|(e, _, _)| *e == g).count();
    assert_eq!(groups(Seen::GroupBegin), groups(Seen::GroupEnd), "{case}");
}

/// An observed pipelined run reports every node of every frame — the same
/// nodes, as often, as the sequential observed run — from the thread that
/// runs each stage: the calling thread with one frame in flight, the pool's
/// workers beside it with more; and each frame's begin and end, one frame
/// at a time, failed frames included.
#[test]
fn an_observer_sees_every_node_of_every_frame_of_a_pipelined_run() {
    let xs: Vec<i64> = (0..24).collect();
    let mut seq = Acc::new();
    let mut want = Recorder::default();
    let outcomes: Vec<bool> = xs
        .iter()
        .map(|x| {
            seq.run_with_fresh(&mut Run::mode(AccMode::Full).observed(&mut want), x)
                .is_ok()
        })
        .collect();
    assert_eq!(
        outcomes.iter().filter(|ok| !**ok).count(),
        2,
        "17 and 7 fail"
    );
    // A failed frame's later nodes do not run: compare the good frames.
    let good: Vec<i64> = xs.iter().copied().filter(|x| x % 10 != 7).collect();
    let mut seq = Acc::new();
    let mut want = Recorder::default();
    for x in &good {
        seq.run_with_fresh(&mut Run::mode(AccMode::Full).observed(&mut want), x)
            .unwrap();
    }
    let caller = std::thread::current().id();
    for in_flight in [1, 2, 4] {
        let case = format!("Acc, {in_flight} in flight");
        let opts = StreamOptions {
            in_flight,
            ..StreamOptions::default()
        };
        // Every frame, failures included: frame events for all.
        let mut p = Acc::new();
        let mut rec = Recorder::default();
        let mut tags = Vec::new();
        p.run_stream_with(
            &mut Run::mode(AccMode::Full).observed(&mut rec),
            xs.iter().map(|&x| (x, (x,))),
            &opts,
            |r| {
                tags.push(r.tag);
                ControlFlow::Continue(())
            },
        )
        .unwrap();
        assert_eq!(tags, xs, "{case}");
        check_events(&rec, &outcomes, &case);
        // The good frames alone: every node as often as sequentially.
        let mut p = Acc::new();
        let mut rec = Recorder::default();
        p.run_stream_with(
            &mut Run::mode(AccMode::Full).observed(&mut rec),
            good.iter().map(|&x| ((), (x,))),
            &opts,
            |r| {
                assert!(r.result.is_ok());
                ControlFlow::Continue(())
            },
        )
        .unwrap();
        check_events(&rec, &vec![true; good.len()], &case);
        assert_eq!(rec.node_counts(), want.node_counts(), "{case}");
        assert_eq!(p.state(), seq.state(), "{case}");
        let on_pool = rec.events.iter().filter(|(_, _, pool)| *pool).count();
        if in_flight == 1 {
            assert!(
                rec.events.iter().all(|(_, t, pool)| *t == caller && !pool),
                "{case}: one frame in flight runs on the calling thread"
            );
        } else {
            // The stages of a frame and the next run side by side on the
            // pool (the first frames' first stages and the last frames'
            // second stages run on the calling thread).
            assert!(
                on_pool > rec.events.len() / 2,
                "{case}: {on_pool} events on the pool"
            );
            assert!(
                rec.events.iter().all(|(_, t, pool)| *pool || *t == caller),
                "{case}: events come from the caller or the pool"
            );
        }
    }
    // L2, fused groups off (their members would be reported as one group):
    // every node as often as in the sequential observed run.
    let frames = clip(8);
    for mode in [L2Mode::Balanced, L2Mode::PowerSave] {
        let mut seq = L2::new();
        seq.set_fusion(false);
        let mut want = Recorder::default();
        for f in &frames {
            seq.run_with_fresh(&mut Run::mode(mode).observed(&mut want), f)
                .unwrap();
        }
        for in_flight in [1, 2] {
            let case = format!("L2 {mode:?}, {in_flight} in flight");
            let mut p = L2::new();
            p.set_fusion(false);
            let mut rec = Recorder::default();
            let opts = StreamOptions {
                in_flight,
                ..StreamOptions::default()
            };
            let tagged = frames.iter().cloned().map(|f| ((), (f,)));
            p.run_stream_with(
                &mut Run::mode(mode).observed(&mut rec),
                tagged,
                &opts,
                |_| ControlFlow::Continue(()),
            )
            .unwrap();
            check_events(&rec, &[true; 8], &case);
            assert_eq!(rec.node_counts(), want.node_counts(), "{case}");
        }
    }
}
