//! The queue's policies and counts. Interleavings that matter are forced by
//! channels between the source and the consumer, never by sleeps.

use super::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;

fn opts(queue: usize, overflow: Overflow) -> StreamOptions {
    StreamOptions {
        in_flight: 1,
        queue,
        overflow,
    }
}

#[test]
fn validate_rejects_zero_sizes_with_typed_errors() {
    assert_eq!(StreamOptions::default().validate(), Ok(()));
    assert_eq!(StreamOptions::default(), StreamOptions::DEFAULT);
    assert_eq!(
        (
            StreamOptions::DEFAULT.in_flight,
            StreamOptions::DEFAULT.queue
        ),
        (2, 4)
    );
    let zero_flight = StreamOptions {
        in_flight: 0,
        ..StreamOptions::DEFAULT
    };
    assert_eq!(zero_flight.validate(), Err(StreamError::ZeroInFlight));
    let zero_queue = StreamOptions {
        queue: 0,
        ..StreamOptions::DEFAULT
    };
    assert_eq!(zero_queue.validate(), Err(StreamError::ZeroQueue));
    // Nothing is pulled from the source when the options are bad.
    let pulled = AtomicU64::new(0);
    let source = (0..10).inspect(|_| {
        pulled.fetch_add(1, Ordering::Relaxed);
    });
    let r = feed(source, &zero_queue, |_| ControlFlow::Continue(()));
    assert_eq!(r, Err(StreamError::ZeroQueue));
    assert_eq!(pulled.load(Ordering::Relaxed), 0);
}

#[test]
fn block_loses_nothing_and_keeps_order() {
    // A borrowed, non-'static source.
    let frames: Vec<u32> = (0..2000).collect();
    for queue in [1, 4] {
        let mut seen = Vec::new();
        let r = feed(frames.iter(), &opts(queue, Overflow::Block), |a| {
            assert_eq!(a.dropped_before, 0);
            assert_eq!(a.index, u64::from(*a.item));
            seen.push(*a.item);
            ControlFlow::Continue(())
        })
        .unwrap();
        assert_eq!(seen, frames);
        assert_eq!(
            r,
            FeedReport {
                received: 2000,
                delivered: 2000,
                dropped: 0,
                discarded: 0,
                stopped: false
            }
        );
    }
}

/// A source of `0..n` that waits after item 0 until the consumer has it,
/// and reports when it is exhausted: the consumer, holding item 0 until
/// then, is as slow as can be while every other item is pushed.
fn gated_run(n: u64, queue: usize, overflow: Overflow) -> (Vec<Arrival<u64>>, FeedReport) {
    let (got_first_tx, got_first_rx) = mpsc::channel::<()>();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let mut next = 0u64;
    let source = std::iter::from_fn(move || {
        if next == 1 {
            got_first_rx.recv().expect("consumer alive");
        }
        if next == n {
            let _ = done_tx.send(());
            return None;
        }
        next += 1;
        Some(next - 1)
    });
    let mut arrivals = Vec::new();
    let r = feed(source, &opts(queue, overflow), |a| {
        if a.index == 0 {
            got_first_tx.send(()).expect("source alive");
            done_rx.recv().expect("source finishes");
        }
        arrivals.push(a);
        ControlFlow::Continue(())
    })
    .unwrap();
    (arrivals, r)
}

/// Delivered and dropped indices partition `0..n`, and `dropped_before`
/// accounts for exactly the gaps.
fn check_partition(arrivals: &[Arrival<u64>], r: &FeedReport, n: u64) {
    let mut expected_next = 0;
    for a in arrivals {
        assert_eq!(a.item, a.index);
        assert!(a.index >= expected_next, "order");
        assert_eq!(a.dropped_before, a.index - expected_next);
        expected_next = a.index + 1;
    }
    // The newest item is never dropped at the end of a stream.
    assert_eq!(expected_next, n);
    let dropped: u64 = arrivals.iter().map(|a| a.dropped_before).sum();
    assert_eq!(dropped, r.dropped);
    assert_eq!(r.delivered, arrivals.len() as u64);
    assert_eq!(r.received, n);
    assert_eq!(r.delivered + r.dropped, n);
    assert_eq!(r.discarded, 0);
}

#[test]
fn drop_oldest_under_a_slow_consumer_reports_exactly_what_was_lost() {
    let (arrivals, r) = gated_run(10, 3, Overflow::DropOldest);
    let idx: Vec<u64> = arrivals.iter().map(|a| a.index).collect();
    // 0 was taken at once; of 1..=9 only the last three waiting survive.
    assert_eq!(idx, [0, 7, 8, 9]);
    assert_eq!(arrivals[1].dropped_before, 6);
    assert_eq!(r.dropped, 6);
    check_partition(&arrivals, &r, 10);
}

#[test]
fn keep_latest_under_a_slow_consumer_keeps_only_the_newest() {
    // The queue size does not matter: one waiting frame is kept.
    for queue in [1, 5] {
        let (arrivals, r) = gated_run(10, queue, Overflow::KeepLatest);
        let idx: Vec<u64> = arrivals.iter().map(|a| a.index).collect();
        assert_eq!(idx, [0, 9]);
        assert_eq!(arrivals[1].dropped_before, 8);
        check_partition(&arrivals, &r, 10);
    }
}

#[test]
fn dropping_policies_keep_exact_counts_under_any_timing() {
    for overflow in [Overflow::DropOldest, Overflow::KeepLatest, Overflow::Block] {
        for round in 0..20u64 {
            let n = 500;
            let mut arrivals = Vec::new();
            let r = feed(0..n, &opts(2, overflow), |a| {
                // Uneven work: some items take longer to consume.
                if (a.index + round) % 7 == 0 {
                    std::thread::yield_now();
                }
                arrivals.push(a);
                ControlFlow::Continue(())
            })
            .unwrap();
            check_partition(&arrivals, &r, n);
            if overflow == Overflow::Block {
                assert_eq!(r.dropped, 0);
            }
        }
    }
}

#[test]
fn break_stops_the_producer_promptly() {
    let queue = 4;
    for overflow in [Overflow::Block, Overflow::DropOldest, Overflow::KeepLatest] {
        let pulled = AtomicU64::new(0);
        let endless = (0u64..).inspect(|_| {
            pulled.fetch_add(1, Ordering::Relaxed);
        });
        let mut seen = 0;
        let r = feed(endless, &opts(queue, overflow), |a| {
            seen += 1;
            if a.index >= 3 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .unwrap();
        // `feed` returned although the source never ends, and nothing was
        // pulled after it did.
        let total = pulled.load(Ordering::Relaxed);
        assert!(r.stopped);
        assert_eq!(r.delivered, seen);
        assert_eq!(r.received, total);
        assert_eq!(r.received, r.delivered + r.dropped + r.discarded);
        if overflow == Overflow::Block {
            // Delivered, at most a full queue, and one in the producer's hand.
            assert_eq!(r.delivered, 4);
            assert!(total <= 4 + queue as u64 + 1, "pulled {total}");
        }
    }
}

#[test]
fn a_panicking_source_ends_the_stream_with_an_error() {
    let source = (0..10u32).inspect(|&i| assert!(i != 5, "boom at {i}"));
    let mut seen = Vec::new();
    let r = feed(source, &opts(2, Overflow::Block), |a| {
        seen.push(a.item);
        ControlFlow::Continue(())
    });
    assert_eq!(seen, [0, 1, 2, 3, 4]);
    match r {
        Err(StreamError::SourcePanicked(msg)) => assert!(msg.contains("boom at 5"), "{msg}"),
        other => panic!("expected SourcePanicked, got {other:?}"),
    }
}

#[test]
fn a_panicking_consumer_does_not_leave_the_producer_blocked() {
    // An endless source with a one-slot blocking queue: the producer is
    // waiting for room when the consumer panics.
    let r = std::panic::catch_unwind(|| {
        feed(0u64.., &opts(1, Overflow::Block), |a| {
            assert!(a.index < 2, "consumer gives up");
            ControlFlow::Continue(())
        })
    });
    assert!(r.is_err(), "the consumer's panic propagates");
}

#[test]
fn the_queue_counts_every_item_once() {
    let q = FrameQueue::new(2, Overflow::DropOldest);
    for i in 0..5 {
        assert_eq!(q.push(i), Ok(i));
    }
    assert_eq!(q.pop(), Some((3, 3)));
    q.stop();
    assert_eq!(q.push(9), Err(9));
    assert_eq!(q.pop(), None);
    assert_eq!(
        q.counts(),
        QueueCounts {
            received: 6,
            delivered: 1,
            dropped: 3,
            discarded: 2,
        }
    );
    let report = StreamReport::from_feed(
        &FeedReport {
            received: 10,
            delivered: 7,
            dropped: 2,
            discarded: 1,
            stopped: true,
        },
        3,
    );
    assert_eq!(
        report,
        StreamReport {
            received: 10,
            processed: 4,
            failed: 3,
            dropped: 2,
            discarded: 1
        }
    );
}

#[test]
fn memory_budget_counts_in_flight_waiting_and_the_frame_being_read() {
    let frame = 8192 * 8192 * 3; // the largest default frame, RGB
    assert_eq!(StreamOptions::DEFAULT.frames_held(), 2 + 4 + 1);
    // The defaults fit the largest default frame in the default budget.
    assert_eq!(
        StreamOptions::DEFAULT.check_memory(frame, DEFAULT_MEMORY_BUDGET),
        Ok(())
    );
    for (in_flight, queue, overflow, held) in [
        (2, 1024, Overflow::Block, 1027),
        (64, 1, Overflow::DropOldest, 66),
        // Keep-latest never holds more than one waiting frame.
        (2, 1024, Overflow::KeepLatest, 4),
    ] {
        let o = StreamOptions {
            in_flight,
            queue,
            overflow,
        };
        assert_eq!(o.frames_held(), held);
        let budget = held * 1000;
        assert_eq!(o.check_memory(1000, budget), Ok(()));
        match o.check_memory(1001, budget) {
            Err(StreamError::OverBudget(over)) => {
                assert_eq!(over.frames(), held);
                assert_eq!(over.needed(), held * 1001);
                assert_eq!((over.frame_bytes, over.budget), (1001, budget));
                let text = over.to_string();
                assert!(
                    text.starts_with(&format!("{held} frames of 1001 bytes")),
                    "{text}"
                );
                assert!(text.contains(&format!("{budget} bytes")), "{text}");
            }
            other => panic!("{other:?}"),
        }
    }
    let big = StreamOptions {
        in_flight: 2,
        queue: 1024,
        overflow: Overflow::Block,
    };
    let text = big
        .check_memory(frame, DEFAULT_MEMORY_BUDGET)
        .unwrap_err()
        .to_string();
    assert_eq!(
        text,
        "1027 frames of 201326592 bytes (192.0 MiB) (2 in flight + 1024 waiting + 1 being read) \
         need 206762409984 bytes (192.6 GiB), over the memory budget of 2147483648 bytes (2.0 GiB)"
    );
    assert_eq!(memory_budget(), DEFAULT_MEMORY_BUDGET);
}

#[test]
fn feed_sized_refuses_a_first_frame_that_cannot_fit_before_queueing_it() {
    let pulled = AtomicU64::new(0);
    let source = (0..100u64).inspect(|_| {
        pulled.fetch_add(1, Ordering::Relaxed);
    });
    let o = opts(8, Overflow::Block);
    // 10 frames held (1 + 8 + 1) of 100 bytes: 1000 > 999.
    let mut seen = 0;
    let r = feed_sized(
        source,
        &o,
        999,
        |_| 100,
        |_| {
            seen += 1;
            ControlFlow::Continue(())
        },
    );
    match r {
        Err(StreamError::OverBudget(over)) => assert_eq!(over.needed(), 1000),
        other => panic!("{other:?}"),
    }
    assert_eq!(seen, 0);
    assert_eq!(pulled.load(Ordering::Relaxed), 1);
    // At the budget exactly, everything runs.
    let r = feed_sized(0..100u64, &o, 1000, |_| 100, |_| ControlFlow::Continue(()));
    assert_eq!(r.map(|r| r.delivered), Ok(100));
}

#[test]
fn feed_sized_delivers_the_frames_before_one_that_grows_past_the_budget() {
    // Frames 0..5 are small, frame 5 is too big (a resolution change).
    let mut seen = Vec::new();
    let r = feed_sized(
        0..10u64,
        &opts(2, Overflow::Block),
        400,
        |&i| if i < 5 { 100 } else { 101 },
        |a| {
            seen.push(a.item);
            ControlFlow::Continue(())
        },
    );
    assert!(matches!(r, Err(StreamError::OverBudget(o)) if o.frame_bytes == 101));
    assert_eq!(seen, vec![0, 1, 2, 3, 4]);
}

#[test]
fn a_live_stream_of_the_pool_holds_its_queue_one_running_and_one_pushed() {
    use crate::runtime::streams::{LiveOptions, StreamsError};
    let live = LiveOptions {
        queue: 8,
        overflow: Overflow::DropOldest,
    };
    // 1 running + 8 waiting + 1 being pushed.
    assert_eq!(live.check_memory(100, 1000), Ok(()));
    assert!(matches!(
        live.check_memory(101, 1000),
        Err(StreamsError::OverBudget(o)) if o.frames() == 10 && o.needed() == 1010
    ));
    // The default (keep the latest) holds three frames whatever the size
    // of its queue field.
    assert_eq!(LiveOptions::LATEST.check_memory(100, 300), Ok(()));
    assert!(LiveOptions::LATEST.check_memory(101, 300).is_err());
}
