//! Many streams on one pool (`StreamPool`): each stream's results equal a
//! single-stream run over the frames it processed, the counts add up, a
//! failing, panicking or ending stream leaves the others running, the
//! round-robin order holds on a one-thread pool, and streams come and go
//! while others run; pipelines built at run time share a pool the same way;
//! the pipelines and per-stream observers handed back when streams end hold
//! what their streams did. Interleavings that matter are forced by gates, never
//! by sleeps.
#![cfg(feature = "runner")]

use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};

use cortex::cortex_graph;
use cortex::l2::{L2Mode, L2Outputs, L2};
use cortex::ops::RgbFrame;
use cortex::runner::sources::SyntheticClip;
use cortex::stream::Overflow;
use cortex::streams::{
    Delivery, LiveOptions, StreamEnd, StreamId, StreamPool, StreamStats, StreamsError,
};

fn clip(w: usize, h: usize, from: u64, n: u64) -> Vec<RgbFrame> {
    let c = SyntheticClip::new(w, h);
    (from..from + n).map(|f| c.frame(f)).collect()
}

/// What a stream delivered: (index, frame, result as text or outputs).
type Got<T, O> = Arc<Mutex<Vec<(u64, T, Result<O, String>)>>>;

/// A callback keeping what `keep` takes of each frame's outputs.
fn collector<T: Send + 'static, O: 'static, R: Send + 'static>(
    keep: fn(&O) -> R,
) -> (Got<T, R>, impl FnMut(Delivery<'_, T, O>) + Send + 'static) {
    let got: Got<T, R> = Arc::default();
    let sink = Arc::clone(&got);
    let f = move |d: Delivery<'_, T, O>| {
        let r = d.result().map(keep).map_err(|e| e.to_string());
        sink.lock().unwrap().push((d.index, d.frame, r));
    };
    (got, f)
}

fn assert_counts_add_up(s: &StreamStats) {
    assert_eq!(
        s.received,
        s.processed + s.failed + s.dropped + s.discarded,
        "{s:?}"
    );
}

#[test]
fn each_l2_stream_equals_its_own_sequential_run() {
    // Different content per stream: the pipelines' states must not mix.
    let clips = [
        clip(160, 120, 0, 24),
        clip(160, 120, 40, 24),
        clip(200, 150, 0, 20),
        clip(96, 96, 7, 30),
    ];
    let pool = StreamPool::<L2, RgbFrame>::new(2, |f| (f,)).unwrap();
    assert_eq!(pool.threads(), 2);
    let mut streams = Vec::new();
    for (k, frames) in clips.iter().enumerate() {
        let (got, on_result) = collector(L2Outputs::clone);
        let mode = if k % 2 == 0 {
            L2Mode::Balanced
        } else {
            L2Mode::PowerSave
        };
        let source = frames.clone().into_iter().map(Ok::<_, String>);
        let id = pool.add_source(L2::new(), mode, source, on_result);
        streams.push((id, mode, got));
    }
    for ((id, mode, got), frames) in streams.iter().zip(&clips) {
        let stats = pool.wait(*id).unwrap();
        assert_eq!(stats.end, Some(StreamEnd::Finished));
        let n = frames.len() as u64;
        assert_eq!((stats.received, stats.processed), (n, n), "{id}");
        assert_eq!((stats.failed, stats.dropped, stats.discarded), (0, 0, 0));
        assert!(stats.latency_p50.is_some() && stats.latency_p50 <= stats.latency_p99);
        assert!(stats.frames_per_second > 0.0);
        let got = got.lock().unwrap();
        let mut seq = L2::new();
        let mut outputs = seq.run(*mode, &frames[0]).unwrap();
        for (k, (index, frame, result)) in got.iter().enumerate() {
            assert_eq!(*index, k as u64, "{id}: in order");
            assert_eq!(frame, &frames[k]);
            if k > 0 {
                seq.run_into(*mode, &frames[k], &mut outputs).unwrap();
            }
            assert_eq!(result.as_ref().unwrap(), &outputs, "{id}, frame {k}");
        }
        assert_eq!(got.len(), frames.len());
    }
}

fn gate(x: &i64) -> Result<i64, String> {
    if *x < 0 {
        Err(format!("negative input {x}"))
    } else {
        Ok(*x)
    }
}

fn accumulate(x: &i64, acc: &i64) -> Result<i64, String> {
    if x % 10 == 7 {
        Err(format!("{x} ends in 7"))
    } else {
        Ok((acc * 3 + x) % 1_000_003)
    }
}

fn maybe_panic(x: &i64) -> i64 {
    assert!(*x != 99, "ninety-nine");
    *x
}

cortex_graph! {
    /// A stateful sum that fails on negative inputs and inputs ending in 7
    /// and panics on 99.
    pipeline Acc {
        input x: i64;
        state _acc: i64 = 1;
        node g = gate(x)?;
        node p = maybe_panic(g);
        node acc = accumulate(p, _acc)?;
        acc -> _acc;
        output acc: i64;
    }
}

/// A single-stream run of `xs`, a panic being that frame's error (the
/// state is committed after every node, so it stays the last good one).
fn acc_sequential(xs: &[i64]) -> Vec<Result<i64, String>> {
    let mut p = Acc::new();
    xs.iter()
        .map(|x| {
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| p.run(AccMode::Full, x)))
            {
                Ok(r) => r.map(|o| o.acc).map_err(|e| e.to_string()),
                Err(_) => Err("a node panicked: ninety-nine".to_string()),
            }
        })
        .collect()
}

fn results<T, O: Clone>(got: &Got<T, O>) -> Vec<Result<O, String>> {
    got.lock()
        .unwrap()
        .iter()
        .map(|(_, _, r)| r.clone())
        .collect()
}

#[test]
fn failing_panicking_and_ending_streams_leave_the_others_running() {
    let pool = StreamPool::<Acc, i64>::new(2, |x| (x,)).unwrap();
    let clean: Vec<i64> = (0..60)
        .map(|i| i * 3 % 50 + 100)
        .filter(|x| x % 10 != 7)
        .collect();
    let failing: Vec<i64> = vec![1, 2, -3, 4, 17, 5, 6, 27, -1, 8, 9, 10, 37, 11];
    let panicking: Vec<i64> = vec![1, 2, 99, 4, 5, 99, 6, 8];
    // A source that fails after its fifth frame.
    let broken = (0..5i64)
        .map(Ok)
        .chain(std::iter::once(Err("disk on fire".to_string())))
        .chain((0..5i64).map(Ok));
    // A source that panics after its third frame.
    let mut n = 0;
    let panicking_source = std::iter::from_fn(move || {
        n += 1;
        assert!(n <= 3, "the source gave up");
        Some(Ok::<i64, String>(n))
    });

    let mut ids = Vec::new();
    let mut gots = Vec::new();
    for xs in [&clean, &failing, &panicking] {
        let (got, f) = collector(|o: &AccOutputs| o.acc);
        let source = xs.clone().into_iter().map(Ok::<_, String>);
        ids.push(pool.add_source(Acc::new(), AccMode::Full, source, f));
        gots.push(got);
    }
    let (broken_got, f) = collector(|o: &AccOutputs| o.acc);
    let broken_id = pool.add_source(Acc::new(), AccMode::Full, broken, f);
    let (spout_got, f) = collector(|o: &AccOutputs| o.acc);
    let spout_id = pool.add_source(Acc::new(), AccMode::Full, panicking_source, f);
    // A callback that panics on its second frame ends its stream alone.
    let mut calls = 0;
    let grumpy_id = pool.add_source(
        Acc::new(),
        AccMode::Full,
        (0..10i64).map(Ok::<_, String>),
        move |_| {
            calls += 1;
            assert!(calls < 2, "callback gave up");
        },
    );

    for ((id, got), xs) in ids.iter().zip(&gots).zip([&clean, &failing, &panicking]) {
        let stats = pool.wait(*id).unwrap();
        let want = acc_sequential(xs);
        assert_eq!(results(got), want, "{id}");
        let failed = want.iter().filter(|r| r.is_err()).count() as u64;
        assert_eq!(stats.failed, failed, "{id}");
        assert_eq!(stats.processed, xs.len() as u64 - failed);
        assert_eq!(stats.end, Some(StreamEnd::Finished));
        assert_counts_add_up(&stats);
    }
    assert_eq!(
        results(&gots[2])
            .iter()
            .filter(|r| r.as_ref().is_err_and(|e| e.contains("panicked")))
            .count(),
        2
    );

    let stats = pool.wait(broken_id).unwrap();
    assert_eq!(
        stats.end,
        Some(StreamEnd::SourceFailed("disk on fire".into()))
    );
    assert_eq!(results(&broken_got), acc_sequential(&[0, 1, 2, 3, 4]));
    assert_eq!((stats.received, stats.processed), (5, 5));

    let stats = pool.wait(spout_id).unwrap();
    assert!(
        matches!(&stats.end, Some(StreamEnd::SourcePanicked(m)) if m.contains("gave up")),
        "{stats:?}"
    );
    assert_eq!(results(&spout_got), acc_sequential(&[1, 2, 3]));

    let stats = pool.wait(grumpy_id).unwrap();
    assert!(
        matches!(&stats.end, Some(StreamEnd::CallbackPanicked(_))),
        "{stats:?}"
    );
    assert_eq!(stats.processed, 2, "the frame whose callback panicked ran");
    assert_counts_add_up(&stats);
}

/// A gate a node waits at: frames with `x == HELD` block until it opens,
/// and say they arrived.
struct Gate {
    state: Mutex<(bool, bool)>, // (open, a frame is waiting)
    cv: Condvar,
}

static GATE: Gate = Gate {
    state: Mutex::new((false, false)),
    cv: Condvar::new(),
};
const HELD: i64 = 1000;

fn held(x: &i64) -> i64 {
    if *x == HELD {
        let mut s = GATE.state.lock().unwrap();
        s.1 = true;
        GATE.cv.notify_all();
        while !s.0 {
            s = GATE.cv.wait(s).unwrap();
        }
    }
    x * 2 + 1
}

cortex_graph! {
    /// A running sum whose frame `HELD` waits at the gate.
    pipeline Held {
        input x: i64;
        state _sum: i64 = 0;
        node h = held(x);
        node sum = add(h, _sum);
        sum -> _sum;
        output sum: i64;
    }
}

fn add(a: &i64, b: &i64) -> i64 {
    a + b
}

#[test]
fn keep_latest_drops_the_waiting_frames_and_counts_them() {
    let pool = StreamPool::<Held, i64>::new(1, |x| (x,)).unwrap();
    let (got, f) = collector(|o: &HeldOutputs| o.sum);
    let input = pool
        .add_live(Held::new(), HeldMode::Full, LiveOptions::LATEST, f)
        .unwrap();
    let id = input.stream();
    input.push(HELD).unwrap();
    // The held frame is running: what is pushed now waits, the newest
    // replacing the older.
    {
        let mut s = GATE.state.lock().unwrap();
        while !s.1 {
            s = GATE.cv.wait(s).unwrap();
        }
    }
    for x in 1..=10 {
        input.push(x).unwrap();
    }
    GATE.state.lock().unwrap().0 = true;
    GATE.cv.notify_all();
    drop(input);
    let stats = pool.wait(id).unwrap();
    assert_eq!(stats.end, Some(StreamEnd::Finished));
    assert_eq!((stats.received, stats.processed, stats.dropped), (11, 2, 9));
    assert_counts_add_up(&stats);
    let got = got.lock().unwrap();
    let kept: Vec<(u64, i64)> = got.iter().map(|(i, x, _)| (*i, *x)).collect();
    assert_eq!(kept, vec![(0, HELD), (10, 10)]);
    // Equal to a single-stream run over the frames it processed.
    let mut seq = Held::new();
    for (_, x, r) in got.iter() {
        assert_eq!(
            r.as_ref().unwrap(),
            &seq.run(HeldMode::Full, x).unwrap().sum
        );
    }
}

fn spin(x: &i64) -> i64 {
    // A slow stream's frames (x ≥ 1000) cost far more than a fast one's.
    if *x >= 1000 {
        std::thread::sleep(std::time::Duration::from_millis(3));
    }
    *x
}

cortex_graph! {
    /// One node, slow for large inputs.
    pipeline Spin {
        input x: i64;
        node s = spin(x);
        output s: i64;
    }
}

#[test]
fn round_robin_on_one_thread_gives_slow_and_fast_streams_equal_turns() {
    let pool = StreamPool::<Spin, i64>::new(1, |x| (x,)).unwrap();
    let order: Arc<Mutex<Vec<StreamId>>> = Arc::default();
    let mut ids = Vec::new();
    for (first, n) in [(1000i64, 30i64), (0, 40), (2000, 30)] {
        let order = Arc::clone(&order);
        let id = pool.add_source(
            Spin::new(),
            SpinMode::Full,
            (first..first + n).map(Ok::<_, String>),
            move |d| order.lock().unwrap().push(d.stream),
        );
        ids.push(id);
    }
    let stats = pool.wait_all();
    assert!(stats.iter().all(|s| s.end == Some(StreamEnd::Finished)));
    let order = order.lock().unwrap();
    assert_eq!(order.len(), 100);
    // From the last stream's first turn on, the streams that still have
    // frames take turns: none gets a second turn before every other has
    // had one.
    let start = order.iter().position(|s| *s == ids[2]).unwrap();
    let totals = [30usize, 40, 30];
    let mut counts = [0usize; 3];
    let mut since = [0usize; 3];
    for (k, s) in order.iter().enumerate() {
        counts[s.0 as usize] += 1;
        if k < start {
            continue;
        }
        since[s.0 as usize] += 1;
        let active: Vec<usize> = (0..3)
            .filter(|&i| counts[i] < totals[i] || *s == ids[i])
            .map(|i| since[i])
            .collect();
        let (lo, hi) = (active.iter().min().unwrap(), active.iter().max().unwrap());
        assert!(hi - lo <= 1, "turn {k}: turns since {start}: {since:?}");
    }
    assert_eq!(order.last(), Some(&ids[1]), "the longest stream ends last");
}

#[test]
fn streams_come_and_go_while_others_run() {
    let pool = StreamPool::<Acc, i64>::new(2, |x| (x,)).unwrap();
    // A live stream fed from this thread, frame by frame.
    let (live_got, f) = collector(|o: &AccOutputs| o.acc);
    let (tx, rx) = mpsc::channel::<u64>();
    let f = {
        let mut f = f;
        move |d: Delivery<'_, i64, AccOutputs>| {
            let i = d.index;
            f(d);
            tx.send(i).unwrap();
        }
    };
    let live = pool
        .add_live(
            Acc::new(),
            AccMode::Full,
            LiveOptions {
                queue: 4,
                overflow: Overflow::Block,
            },
            f,
        )
        .unwrap();
    let live_id = live.stream();
    let mut pushed = Vec::new();
    let mut added = None;
    for x in 0..20i64 {
        live.push(x * 5 + 1).unwrap();
        pushed.push(x * 5 + 1);
        assert_eq!(rx.recv().unwrap(), x as u64);
        if x == 5 {
            let (got, f) = collector(|o: &AccOutputs| o.acc);
            let xs: Vec<i64> = (200..260).collect();
            let source = xs.clone().into_iter().map(Ok::<_, String>);
            added = Some((
                pool.add_source(Acc::new(), AccMode::Full, source, f),
                got,
                xs,
            ));
        }
    }
    pool.remove(live_id).unwrap();
    assert!(live.push(7).is_err(), "a removed stream takes no frame");
    let stats = pool.wait(live_id).unwrap();
    assert_eq!(stats.end, Some(StreamEnd::Removed));
    assert_eq!((stats.received, stats.processed, stats.failed), (21, 20, 0));
    assert_eq!(stats.discarded, 1, "the refused push");
    assert_counts_add_up(&stats);
    assert_eq!(results(&live_got), acc_sequential(&pushed));

    // A stream added after another was removed runs as usual.
    let (late_got, f) = collector(|o: &AccOutputs| o.acc);
    let late_xs: Vec<i64> = (1..30).collect();
    let late = pool.add_source(
        Acc::new(),
        AccMode::Full,
        late_xs.clone().into_iter().map(Ok::<_, String>),
        f,
    );
    let (added_id, added_got, added_xs) = added.unwrap();
    for (id, got, xs) in [(added_id, added_got, added_xs), (late, late_got, late_xs)] {
        let stats = pool.wait(id).unwrap();
        assert_eq!(stats.end, Some(StreamEnd::Finished));
        assert_eq!(results(&got), acc_sequential(&xs), "{id}");
        assert_counts_add_up(&stats);
    }
    assert!(matches!(
        pool.remove(StreamId(99)),
        Err(cortex::streams::StreamsError::UnknownStream(_))
    ));
    let all = pool.all_stats();
    assert_eq!(all.len(), 3);
    assert!(all.iter().all(|s| s.end.is_some()));
}

#[test]
fn removing_a_stream_discards_what_waits() {
    let pool = StreamPool::<Spin, i64>::new(1, |x| (x,)).unwrap();
    let (got, f) = collector(|o: &SpinOutputs| o.s);
    let long = pool.add_source(
        Spin::new(),
        SpinMode::Full,
        (1000..1_000_000i64).map(Ok::<_, String>),
        f,
    );
    while got.lock().unwrap().len() < 3 {
        std::thread::yield_now();
    }
    pool.remove(long).unwrap();
    let stats = pool.wait(long).unwrap();
    assert_eq!(stats.end, Some(StreamEnd::Removed));
    assert!(stats.processed >= 3 && stats.processed < 1000, "{stats:?}");
    assert_counts_add_up(&stats);
    assert_eq!(got.lock().unwrap().len() as u64, stats.processed);
}

#[test]
fn outputs_taken_to_a_channel_that_closes_when_every_stream_ends() {
    let pool = StreamPool::<Acc, i64>::new(2, |x| (x,)).unwrap();
    // A small bound: the workers wait for this thread, as a slow writer
    // would make them.
    let (tx, rx) = mpsc::sync_channel(2);
    let inputs: Vec<Vec<i64>> = (0..3i64)
        .map(|k| (k * 100..k * 100 + 25).collect())
        .collect();
    let mut ids = Vec::new();
    for xs in &inputs {
        let tx = tx.clone();
        let source = xs.clone().into_iter().map(Ok::<_, String>);
        ids.push(
            pool.add_source(Acc::new(), AccMode::Full, source, move |mut d| {
                let r = d.take_result().map(|o| o.acc).map_err(|e| e.to_string());
                assert!(d.take_result().is_err(), "taken once");
                tx.send((d.stream, d.index, r)).unwrap();
            }),
        );
    }
    drop(tx);
    // Ends only once every stream has ended and dropped its callback.
    let got: Vec<_> = rx.iter().collect();
    for (id, xs) in ids.iter().zip(&inputs) {
        let mine: Vec<_> = got.iter().filter(|(s, _, _)| s == id).collect();
        assert!(mine.iter().enumerate().all(|(k, (_, i, _))| *i == k as u64));
        let results: Vec<_> = mine.into_iter().map(|(_, _, r)| r.clone()).collect();
        assert_eq!(results, acc_sequential(xs), "{id}");
        assert_eq!(pool.stats(*id).unwrap().end, Some(StreamEnd::Finished));
    }
}

fn halves(x: &i64) -> i64 {
    // Two halves the pool may split between its workers, as a fused group's
    // strips are.
    let half = || {
        std::thread::sleep(std::time::Duration::from_millis(2));
        *x
    };
    let (a, b) = rayon::join(half, half);
    a + b
}

cortex_graph! {
    /// One node that splits its work with `rayon::join`.
    pipeline Halves {
        input x: i64;
        node h = halves(x);
        output h: i64;
    }
}

#[test]
fn a_frame_waiting_for_a_stolen_half_does_not_run_another_stream_inside() {
    let pool = StreamPool::<Halves, i64>::new(2, |x| (x,)).unwrap();
    let spans: Arc<Mutex<Vec<(usize, std::time::Instant, std::time::Instant)>>> = Arc::default();
    // Live inputs pushed from this thread: each push of an idle stream
    // spawns its task from outside the pool, where a worker waiting in
    // `join` finds it first.
    let inputs: Vec<_> = (0..4)
        .map(|_| {
            let spans = Arc::clone(&spans);
            pool.add_live(
                Halves::new(),
                HalvesMode::Full,
                LiveOptions::LATEST,
                move |d| {
                    assert_eq!(d.result().unwrap().h, d.frame * 2);
                    let worker = d.worker.expect("frames run on the pool");
                    spans.lock().unwrap().push((worker, d.started, d.finished));
                },
            )
            .unwrap()
        })
        .collect();
    for x in 0..300i64 {
        for input in &inputs {
            input.push(x).unwrap();
        }
        std::thread::sleep(std::time::Duration::from_micros(500));
    }
    drop(inputs);
    let stats = pool.wait_all();
    assert!(stats.iter().all(|s| s.processed > 0));
    // On one worker, no frame runs inside another frame's time.
    let spans = spans.lock().unwrap();
    for (i, a) in spans.iter().enumerate() {
        for b in &spans[i + 1..] {
            if a.0 == b.0 {
                let nested = (a.1 < b.1 && b.2 < a.2) || (b.1 < a.1 && a.2 < b.2);
                assert!(!nested, "a frame ran nested in another on worker {}", a.0);
            }
        }
    }
}

/// What a callback saw when it called into its own pool; a deadlock there
/// must fail the test rather than hang it, so the pool (whose drop would
/// wait for the stuck worker) is leaked on a timeout.
fn from_callback<R, P>(rx: &mpsc::Receiver<R>, pool: P) -> (R, P) {
    match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(r) => (r, pool),
        Err(e) => {
            std::mem::forget(pool);
            panic!("the callback never reported: {e}");
        }
    }
}

/// A value a callback takes or uses once the test has put it there.
type Slot<X> = Arc<Mutex<Option<X>>>;

/// What the callback of `waiting_for_the_pool_from_its_own_worker_*` saw.
type WaitReport = (
    Result<StreamStats, StreamsError>,
    Result<StreamStats, StreamsError>,
    Result<Vec<StreamStats>, StreamsError>,
    Vec<StreamStats>,
);

#[test]
fn waiting_for_the_pool_from_its_own_worker_is_an_error_not_a_deadlock() {
    // One worker: the callback's own, so any wait for the pool from it
    // would wait for itself.
    let pool = Arc::new(StreamPool::<Acc, i64>::new(1, |x| (x,)).unwrap());
    let handle: Arc<OnceLock<Weak<StreamPool<Acc, i64>>>> = Arc::default();
    handle.set(Arc::downgrade(&pool)).unwrap();
    let (tx, rx) = mpsc::channel::<WaitReport>();
    let other = pool.add_source(Acc::new(), AccMode::Full, [Ok::<_, String>(5)], |_| {});
    let cb_handle = Arc::clone(&handle);
    let id = pool.add_source(
        Acc::new(),
        AccMode::Full,
        [1i64, 2, 3].map(Ok::<_, String>),
        move |d| {
            if d.index != 0 {
                return;
            }
            let Some(pool) = cb_handle.get().and_then(Weak::upgrade) else {
                return;
            };
            let report = (
                pool.wait(d.stream),
                pool.wait(other),
                pool.try_wait_all(),
                pool.wait_all(),
            );
            tx.send(report).unwrap();
        },
    );
    let ((own, another, all, so_far), pool) = from_callback(&rx, pool);
    assert_eq!(own, Err(StreamsError::OnOwnWorker));
    assert_eq!(another, Err(StreamsError::OnOwnWorker));
    assert_eq!(all, Err(StreamsError::OnOwnWorker));
    // `wait_all` cannot wait there: the statistics so far, this stream's
    // still running (no end yet, its first frame processed).
    let mine = so_far.iter().find(|s| s.stream == id).unwrap();
    assert_eq!((mine.end.clone(), mine.processed), (None, 1));
    // The stream went on; from outside the pool, waiting works.
    let stats = pool.wait(id).unwrap();
    assert_eq!((stats.end, stats.processed), (Some(StreamEnd::Finished), 3));
    assert_eq!(pool.try_wait_all().unwrap().len(), 2);
}

#[test]
fn a_blocking_push_from_a_callback_into_a_full_queue_is_refused() {
    let pool = StreamPool::<Acc, i64>::new(1, |x| (x,)).unwrap();
    let slot: Slot<cortex::streams::LiveInput<Acc, i64>> = Arc::default();
    let cb_slot = Arc::clone(&slot);
    let (tx, rx) = mpsc::channel();
    let blocking = LiveOptions {
        queue: 1,
        overflow: Overflow::Block,
    };
    let (got, mut keep) = collector(|o: &AccOutputs| o.acc);
    let input = pool
        .add_live(Acc::new(), AccMode::Full, blocking, move |d| {
            let first = d.index == 0;
            keep(d);
            if !first {
                return;
            }
            let slot = cb_slot.lock().unwrap();
            let Some(input) = slot.as_ref() else { return };
            // The running frame left the queue: room for one.
            let room = input.try_push(2);
            // Now full; room would need this very worker.
            let full = input.try_push(3);
            let full_plain = input.push(4);
            tx.send((room, full, full_plain)).unwrap();
        })
        .unwrap();
    let id = input.stream();
    *slot.lock().unwrap() = Some(input);
    slot.lock().unwrap().as_ref().unwrap().push(1).unwrap();
    let ((room, full, full_plain), pool) = from_callback(&rx, pool);
    assert!(room.is_ok(), "{room:?}");
    assert_eq!(full.err(), Some((3, StreamsError::OnOwnWorker)));
    assert_eq!(full_plain, Err(4));
    drop(slot.lock().unwrap().take());
    let stats = pool.wait(id).unwrap();
    assert_eq!(stats.end, Some(StreamEnd::Finished));
    assert_eq!(
        (stats.received, stats.processed, stats.discarded),
        (4, 2, 2)
    );
    assert_counts_add_up(&stats);
    // Frames 1 and 2 ran, in order, on the stream's state.
    assert_eq!(results(&got), acc_sequential(&[1, 2]));

    // A stream that has ended says so.
    let live = pool
        .add_live(Acc::new(), AccMode::Full, LiveOptions::LATEST, |_| {})
        .unwrap();
    pool.remove(live.stream()).unwrap();
    assert_eq!(
        live.try_push(7).err(),
        Some((7, StreamsError::Ended(live.stream())))
    );
}

#[test]
fn dropping_the_last_pool_handle_in_a_callback_does_not_wait_for_itself() {
    let pool = Arc::new(StreamPool::<Acc, i64>::new(1, |x| (x,)).unwrap());
    let slot: Slot<Arc<StreamPool<Acc, i64>>> = Arc::default();
    let cb_slot = Arc::clone(&slot);
    let (tx, rx) = mpsc::channel();
    let input = pool
        .add_live(Acc::new(), AccMode::Full, LiveOptions::LATEST, move |d| {
            let last = cb_slot.lock().unwrap().take();
            let had_it = last.is_some();
            // The pool's last handle: its drop runs here, on the worker
            // running this very frame.
            drop(last);
            tx.send((d.index, had_it)).unwrap();
        })
        .unwrap();
    *slot.lock().unwrap() = Some(Arc::clone(&pool));
    drop(pool);
    input.push(1).unwrap();
    let ((index, had_it), ()) = from_callback(&rx, ());
    assert_eq!((index, had_it), (0, true));
    // The dropped pool ended the stream (before the callback reported):
    // it takes no more frames.
    let id = input.stream();
    assert_eq!(input.try_push(2).err(), Some((2, StreamsError::Ended(id))));
}

#[test]
fn a_live_input_that_fails_ends_its_stream_as_failed_after_its_frames() {
    let pool = StreamPool::<Acc, i64>::new(1, |x| (x,)).unwrap();
    let (got, f) = collector(|o: &AccOutputs| o.acc);
    let opts = LiveOptions {
        queue: 4,
        overflow: Overflow::Block,
    };
    let camera = pool.add_live(Acc::new(), AccMode::Full, opts, f).unwrap();
    let (other, g) = collector(|o: &AccOutputs| o.acc);
    let fine = pool.add_live(Acc::new(), AccMode::Full, opts, g).unwrap();
    let id = camera.stream();
    let fine_id = fine.stream();
    for x in [1, 2, 3] {
        camera.push(x).unwrap();
    }
    camera.fail("the camera went away");
    for x in [4, 5] {
        fine.push(x).unwrap();
    }
    drop(fine);
    let stats = pool.wait(id).unwrap();
    assert_eq!(
        stats.end,
        Some(StreamEnd::SourceFailed("the camera went away".into()))
    );
    // Every frame pushed before the failure ran.
    assert_eq!(stats.processed, 3);
    assert_counts_add_up(&stats);
    assert_eq!(results(&got), acc_sequential(&[1, 2, 3]));
    let fine_stats = pool.wait(fine_id).unwrap();
    assert_eq!(fine_stats.end, Some(StreamEnd::Finished));
    assert_eq!(results(&other), acc_sequential(&[4, 5]));
}

/// A run-time pipeline's outputs, comparable: the fused map's bits and
/// every other output through its op's view.
fn dyn_key(out: &cortex::dynamic::DynOutputs) -> (Vec<u32>, Vec<String>) {
    let fused = out
        .get::<cortex::ops::ScoreMap>("fused")
        .expect("a fused map");
    static OPS: OnceLock<cortex::dynamic::Ops> = OnceLock::new();
    let ops = OPS.get_or_init(cortex::library::vision_ops);
    let others = out
        .names()
        .iter()
        .filter(|n| *n != "fused")
        .map(|n| format!("{n}: {:?}", out.value(n).map(|v| ops.to_json(v))))
        .collect();
    (fused.iter().map(|v| v.to_bits()).collect(), others)
}

#[test]
fn run_time_l2_streams_on_one_pool_equal_their_own_sequential_runs() {
    use cortex::dynamic::{DynPipeline, GraphFile, Value};
    use cortex::Pipeline;
    let built: DynPipeline = GraphFile::parse(include_str!("../../examples/graphs/l2.json"))
        .expect("reads")
        .build(&cortex::library::vision_ops())
        .expect("builds");
    let clips = [
        clip(160, 120, 0, 16),
        clip(160, 120, 40, 16),
        clip(96, 96, 7, 20),
    ];
    let modes = ["BALANCED", "POWER_SAVE", "TEXT_FOCUS"];
    let inputs = |frames: &[RgbFrame]| -> Vec<Vec<Value>> {
        frames
            .iter()
            .map(|f| vec![Arc::new(f.clone()) as Value])
            .collect()
    };
    let pool = StreamPool::<DynPipeline, Vec<Value>>::new(2, |f| f.as_slice()).unwrap();
    let mut streams = Vec::new();
    for (frames, name) in clips.iter().zip(modes) {
        let mode = built.mode_named(name).expect("a mode of L2");
        let (got, on_result) = collector(dyn_key);
        let source = inputs(frames).into_iter().map(Ok::<_, String>);
        let id = pool.add_source(built.fresh(), mode, source, on_result);
        streams.push((id, mode, got));
    }
    for ((id, mode, got), frames) in streams.iter().zip(&clips) {
        let stats = pool.wait(*id).unwrap();
        assert_eq!(stats.end, Some(StreamEnd::Finished));
        assert_eq!(stats.processed, frames.len() as u64, "{id}");
        let got = got.lock().unwrap();
        assert_eq!(got.len(), frames.len());
        let mut seq = built.fresh();
        for (k, ((index, _, result), input)) in got.iter().zip(inputs(frames)).enumerate() {
            assert_eq!(*index, k as u64, "{id}: in order");
            let want = dyn_key(&seq.run(*mode, &input).unwrap());
            assert_eq!(result.as_ref().unwrap(), &want, "{id}, frame {k}");
        }
    }
}

/// Inputs of an `Acc` stream `k`: different per stream, with frames that
/// fail (ending in 7) among them, after which the state stays the last
/// good one.
fn acc_inputs(k: i64, n: usize) -> Vec<i64> {
    (0..n as i64).map(|i| 100 + k * 31 + i * 7).collect()
}

#[test]
fn pipelines_handed_back_hold_the_state_their_streams_reached() {
    // Three pull streams and one live stream of different lengths on two
    // workers; then one more frame on each handed-back pipeline must give
    // what a sequential run of all the frames gives at its last frame.
    let pool = StreamPool::<Acc, i64>::new(2, |x| (x,)).unwrap();
    let lengths = [9, 14, 6];
    let mut streams = Vec::new();
    for (k, &n) in lengths.iter().enumerate() {
        let xs = acc_inputs(k as i64, n + 1);
        assert!(xs[..n].iter().any(|x| x % 10 == 7), "a failing frame");
        let (got, on_result) = collector(|o: &AccOutputs| o.acc);
        // Owned: the pool keeps the source beyond this scope.
        let firsts: Vec<i64> = xs[..n].to_vec();
        let source = firsts.into_iter().map(Ok::<_, String>);
        let id = pool.add_source(Acc::new(), AccMode::Full, source, on_result);
        streams.push((id, xs, got));
    }
    let live_xs = acc_inputs(7, 12);
    let (live_got, on_result) = collector(|o: &AccOutputs| o.acc);
    let block = LiveOptions {
        queue: 2,
        overflow: Overflow::Block,
    };
    let input = pool
        .add_live(Acc::new(), AccMode::Full, block, on_result)
        .unwrap();
    let live_id = input.stream();
    for &x in &live_xs[..11] {
        input.push(x).unwrap();
    }
    drop(input);
    streams.push((live_id, live_xs, live_got));

    let ended = pool.finish_all().unwrap();
    assert_eq!(ended.len(), streams.len());
    for (mut back, (id, xs, got)) in ended.into_iter().zip(streams) {
        assert_eq!(back.stats.stream, id, "in the order added");
        assert_eq!(back.stats.end, Some(StreamEnd::Finished));
        assert!(back.observer.is_none(), "added without one");
        let n = xs.len() - 1;
        let want = acc_sequential(&xs);
        assert_eq!(results(&got), want[..n], "{id}");
        let next = back.pipeline.run(AccMode::Full, &xs[n]);
        assert_eq!(
            next.map(|o| o.acc).map_err(|e| e.to_string()),
            want[n],
            "{id}: frame {n} after the pool"
        );
        assert_eq!(back.stats.processed + back.stats.failed, n as u64);
        // Handed back once: the pool no longer knows it.
        assert!(matches!(pool.finish(id), Err(StreamsError::UnknownStream(i)) if i == id));
        assert_eq!(pool.stats(id).unwrap_err(), StreamsError::UnknownStream(id));
    }
    // The pool takes new streams afterwards, and hands one back alone.
    let xs = acc_inputs(3, 4);
    let (_, on_result) = collector(|o: &AccOutputs| o.acc);
    let source = xs.clone().into_iter().map(Ok::<_, String>);
    let id = pool.add_source(Acc::new(), AccMode::Full, source, on_result);
    let back = pool.finish(id).unwrap();
    // 207 fails: the frame count is that of the good frames.
    assert_eq!((back.stats.processed, back.stats.failed), (3, 1));
    assert_eq!(back.pipeline.frame_index(), 3);
}

#[test]
fn an_l2_pipeline_handed_back_goes_on_as_a_sequential_run() {
    use cortex::Pipeline;
    let frames = clip(128, 96, 3, 13);
    let n = frames.len() - 1;
    let pool = StreamPool::<L2, RgbFrame>::new(2, |f| (f,)).unwrap();
    let other = clip(128, 96, 50, 8).into_iter().map(Ok::<_, String>);
    let (_, on_other) = collector(L2Outputs::clone);
    pool.add_source(L2::new(), L2Mode::Balanced, other, on_other);
    let firsts: Vec<RgbFrame> = frames[..n].to_vec();
    let source = firsts.into_iter().map(Ok::<_, String>);
    let (_, on_result) = collector(L2Outputs::clone);
    let id = pool.add_source(L2::new(), L2Mode::Balanced, source, on_result);
    let mut back = pool.finish(id).unwrap();
    assert_eq!(back.stats.processed, n as u64);
    let after = Pipeline::run(&mut back.pipeline, L2Mode::Balanced, (&frames[n],)).unwrap();
    let mut seq = L2::new();
    let mut want = seq.run(L2Mode::Balanced, &frames[0]).unwrap();
    for f in &frames[1..] {
        seq.run_into(L2Mode::Balanced, f, &mut want).unwrap();
    }
    assert_eq!(after, want);
    assert_eq!(back.pipeline.frame_index(), seq.frame_index());
}

#[test]
fn each_streams_observer_sees_its_own_frames_alone() {
    use cortex::run::profile::Profiler;
    // A profiler per stream on one worker, so the streams' frames
    // interleave on the same thread: each profiler must still count only
    // its own stream's frames, and the failed ones as failed.
    let pool = StreamPool::<Acc, i64, Profiler<'static>>::new(1, |x| (x,)).unwrap();
    let mut streams = Vec::new();
    for (k, n) in [(0, 9), (1, 16), (2, 7)] {
        let xs = acc_inputs(k, n);
        let (got, on_result) = collector(|o: &AccOutputs| o.acc);
        let source = xs.clone().into_iter().map(Ok::<_, String>);
        let id = if k == 2 {
            pool.add_source(Acc::new(), AccMode::Full, source, on_result)
        } else {
            let profiler = Profiler::new(Acc::ir());
            pool.add_source_observed(Acc::new(), AccMode::Full, profiler, source, on_result)
        };
        streams.push((id, xs, got));
    }
    let xs = acc_inputs(5, 10);
    let (live_got, on_result) = collector(|o: &AccOutputs| o.acc);
    let block = LiveOptions {
        queue: 1,
        overflow: Overflow::Block,
    };
    let input = pool
        .add_live_observed(
            Acc::new(),
            AccMode::Full,
            Profiler::new(Acc::ir()),
            block,
            on_result,
        )
        .unwrap();
    streams.push((input.stream(), xs.clone(), live_got));
    for &x in &xs {
        input.push(x).unwrap();
    }
    input.close();
    let ended = pool.finish_all().unwrap();
    let acc_node = Acc::ir()
        .nodes
        .iter()
        .position(|n| n.name == "acc")
        .expect("a node acc") as u32;
    for (back, (id, xs, got)) in ended.into_iter().zip(streams) {
        let want = acc_sequential(&xs);
        assert_eq!(results(&got), want, "{id}");
        let failed = want.iter().filter(|r| r.is_err()).count() as u64;
        assert!(failed > 0, "{id}: a failing frame");
        assert_eq!(
            (back.stats.processed, back.stats.failed),
            (xs.len() as u64 - failed, failed)
        );
        let Some(profiler) = back.observer else {
            assert_eq!(id, StreamId(2), "only stream 2 was added unobserved");
            continue;
        };
        let frames = profiler.frame_stats();
        assert_eq!(frames.frames, xs.len() as u64, "{id}: its own frames");
        assert_eq!(frames.failed, failed, "{id}");
        // The accumulating node fails on the failing frames: it ran on
        // every frame of this stream, and on no other stream's.
        let acc = profiler.node_stats(acc_node).expect("acc ran");
        assert_eq!(acc.count, xs.len() as u64, "{id}");
    }
}

/// A stream reading some outputs ([`StreamRun::outputs`]) runs only their
/// producers, observed or not, compiled or built at run time: the outputs
/// read equal the stream's own sequential every-output run; a node only
/// the other outputs need runs on the stream's first frame alone (with no
/// outputs to run into, it makes every output), or, when the callback
/// takes each frame's outputs, on the frames before it gives earlier ones
/// back ([`Delivery::recycle`]).
#[test]
fn a_stream_reading_some_outputs_runs_only_their_producers() {
    use cortex::dynamic::{DynPipeline, GraphFile, Value};
    use cortex::passes::dce::plan_for_outputs;
    use cortex::run::profile::Profiler;
    use cortex::run::OutputSet;
    use cortex::streams::StreamRun;
    use cortex::Pipeline;
    let frames = clip(160, 120, 0, 12);
    let n = frames.len() as u64;
    let read = ["blur", "scene"];
    let mode = L2Mode::Balanced;
    let ir = L2::ir();
    let set = OutputSet::named(ir, &read).unwrap();
    let cut = plan_for_outputs(ir, mode.plan().zero_pattern, set, "cut");
    // Each node's runs as the stream's profiler counted them, against the
    // most a node outside the cut may run.
    let outside_runs = |profiler: &Profiler<'_>, at_most: u64, what: &str| {
        for id in 0..ir.nodes.len() as u32 {
            let count = profiler.node_stats(id).map_or(0, |s| s.count);
            if !cut.is_live(id) {
                let name = &ir.nodes[id as usize].name;
                assert!(count <= at_most, "{what}: {name} ran {count} times");
            }
        }
    };

    let keep = |o: &L2Outputs| format!("{:?} {:?}", o.blur, o.scene);
    let mut seq = L2::new();
    let want: Vec<Result<String, String>> = frames
        .iter()
        .map(|f| Ok(keep(&seq.run(mode, f).unwrap())))
        .collect();
    let pool = StreamPool::<L2, RgbFrame, Profiler<'static>>::new(2, |f| (f,)).unwrap();
    let run = StreamRun::mode(mode).outputs(set);
    let source = || frames.clone().into_iter().map(Ok::<_, String>);
    let (observed, on_result) = collector(keep);
    pool.add_source_observed(L2::new(), run, Profiler::new(ir), source(), on_result);
    let (plain, on_result) = collector(keep);
    pool.add_source(L2::new(), run, source(), on_result);
    // Outputs taken by the callback and given back one frame later
    // (`Delivery::recycle`): the frame between has none to run into.
    let taken: Got<RgbFrame, String> = Arc::default();
    let sink = Arc::clone(&taken);
    let mut spare = None;
    pool.add_source_observed(
        L2::new(),
        run,
        Profiler::new(ir),
        source(),
        move |mut d: Delivery<'_, RgbFrame, L2Outputs>| {
            let r = d.take_result().map(|o| {
                let shown = keep(&o);
                if let Some(earlier) = spare.replace(o) {
                    d.recycle(earlier);
                }
                shown
            });
            let r = r.map_err(|e| e.to_string());
            sink.lock().unwrap().push((d.index, d.frame, r));
        },
    );
    let ended = pool.finish_all().unwrap();
    assert_eq!(results(&observed), want, "observed");
    assert_eq!(results(&plain), want, "unobserved");
    assert_eq!(results(&taken), want, "taken and recycled");
    let profiler = ended[0].observer.as_ref().expect("the observed stream");
    assert_eq!(profiler.frame_stats().frames, n);
    outside_runs(profiler, 1, "compiled");
    // Frames 0 and 1 have no outputs to run into (frame 0's are held back
    // until frame 1 is delivered); from frame 2 on, frame k - 2's are.
    let recycled = ended[2].observer.as_ref().expect("the recycling stream");
    outside_runs(recycled, 2, "taken and recycled");

    let built: DynPipeline = GraphFile::parse(include_str!("../../examples/graphs/l2.json"))
        .expect("reads")
        .build(&cortex::library::vision_ops())
        .expect("builds");
    let dyn_mode = built.mode_named("BALANCED").expect("a mode of L2");
    let dyn_set = OutputSet::named(built.graph(), &read).unwrap();
    assert_eq!(dyn_set, set, "the graph file's outputs are L2's");
    let ops = cortex::library::vision_ops();
    let shown = move |o: &cortex::dynamic::DynOutputs| -> Vec<String> {
        o.names()
            .iter()
            .filter_map(|name| Some(format!("{name}: {:?}", ops.to_json(o.value(name)?))))
            .collect()
    };
    let inputs: Vec<Vec<Value>> = frames
        .iter()
        .map(|f| vec![Arc::new(f.clone()) as Value])
        .collect();
    // The lines of the outputs read.
    let read_only = move |lines: Vec<String>| -> Vec<String> {
        lines
            .into_iter()
            .filter(|line| read.iter().any(|r| line.starts_with(&format!("{r}: "))))
            .collect()
    };
    let mut seq = built.fresh();
    let want: Vec<Result<Vec<String>, String>> = inputs
        .iter()
        .map(|i| Ok(read_only(shown(&seq.run(dyn_mode, i).unwrap()))))
        .collect();
    let pool =
        StreamPool::<DynPipeline, Vec<Value>, Profiler<'static>>::new(2, |f| f.as_slice()).unwrap();
    let run = StreamRun::mode(dyn_mode).outputs(set);
    let got: Got<Vec<Value>, Vec<String>> = Arc::default();
    let sink = Arc::clone(&got);
    let shown_here = shown.clone();
    pool.add_source_observed(
        built.fresh(),
        run,
        Profiler::new(built.graph()),
        inputs.into_iter().map(Ok::<_, String>),
        move |d: Delivery<'_, Vec<Value>, cortex::dynamic::DynOutputs>| {
            let r = d
                .result()
                .map(|o| read_only(shown_here(o)))
                .map_err(|e| e.to_string());
            sink.lock().unwrap().push((d.index, d.frame, r));
        },
    );
    let ended = pool.finish_all().unwrap();
    assert_eq!(results(&got), want, "run-time graph");
    let profiler = ended[0].observer.as_ref().expect("observed");
    outside_runs(profiler, 1, "run-time graph");
}
