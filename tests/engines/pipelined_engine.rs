//! Pipelined runs (`run_stream`): frames in order, outputs and state
//! bit-identical to the sequential run on the frames that were processed, a
//! failing frame failing alone (later frames see the last good state), and
//! exact counts of the frames a full queue dropped.
#![cfg(feature = "runner")]

use std::ops::ControlFlow;

use cortex::cortex_graph;
use cortex::l2::{L2Mode, L2Outputs, L2};
use cortex::ops::RgbFrame;
use cortex::sources::SyntheticClip;
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
