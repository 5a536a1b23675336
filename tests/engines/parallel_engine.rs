//! Parallel runs (`#[parallel]`): independent nodes at once on the worker
//! pool, with outputs and state bit-identical to the sequential run, every
//! node reported to the observer from the thread that ran it, and a failing
//! frame leaving the state as it was.
#![cfg(feature = "runner")]

use cortex::Run;
use std::collections::HashSet;
use std::sync::Mutex;
use std::thread::ThreadId;

use cortex::cortex_graph;
use cortex::l2::{L2Mode, L2};
use cortex::model::ir::{GraphIr, NodeId};
use cortex::model::plan::Plan;
use cortex::prelude::Observer;
use cortex::runner::sources::SyntheticClip;

#[test]
fn l2_parallel_is_bit_identical_to_sequential() {
    let a = SyntheticClip::new(192, 144);
    let (mut seq, mut par, mut par_into) = (L2::new(), L2::new(), L2::new());
    let mut reused = None;
    for f in 0..40u64 {
        let frame = a.frame(f);
        let mode = L2Mode::ALL[(f as usize / 5) % L2Mode::ALL.len()];
        let want = seq.run(mode, &frame).unwrap();
        let got = par
            .run_with_fresh(&mut Run::mode(mode).parallel(), &frame)
            .unwrap();
        assert_eq!(got, want, "frame {f} {mode:?}");
        match reused.as_mut() {
            None => {
                reused = Some(
                    par_into
                        .run_with_fresh(&mut Run::mode(mode).parallel(), &frame)
                        .unwrap(),
                )
            }
            Some(out) => par_into
                .run_with(&mut Run::mode(mode).parallel(), &frame, out)
                .unwrap(),
        }
        assert_eq!(reused.as_ref().unwrap(), &want, "frame {f} into");
        assert_eq!(par.state(), seq.state());
        assert_eq!(par_into.state(), seq.state());
    }
}

#[test]
fn l2_rated_parallel_is_bit_identical_to_sequential() {
    // POWER_SAVE holds its text map and regions between every 4th frame
    // and scene cuts; the clip turns to its negative at frame 21 (not a
    // 4th frame), a cut that fires the trigger off schedule.
    let clip = SyntheticClip::new(192, 144);
    let (mut seq, mut par) = (L2::new(), L2::new());
    let (mut held, mut fired) = (0, 0);
    for f in 0..40u64 {
        let mut frame = clip.frame(f);
        if f >= 21 {
            frame.mapv_inplace(|v| 255 - v);
        }
        let want = seq.run(L2Mode::PowerSave, &frame).unwrap();
        let got = par
            .run_with_fresh(&mut Run::mode(L2Mode::PowerSave).parallel(), &frame)
            .unwrap();
        assert_eq!(got, want, "frame {f}");
        assert_eq!(par.state(), seq.state());
        assert_eq!(par.holds(), seq.holds(), "frame {f}");
        held += usize::from(seq.holds()[0].held_last_frame);
        fired += usize::from(f % 4 != 0 && want.scene.changed);
    }
    assert!(held > 0, "no frame held the text map");
    assert!(fired > 0, "no trigger fired off schedule");
}

/// Records every event with its thread.
#[derive(Default)]
struct Events {
    log: Mutex<Vec<(char, NodeId, ThreadId)>>,
    frames: usize,
}

impl Observer for Events {
    fn frame_begin(&mut self, _: &'static GraphIr, _: &Plan) {
        self.frames += 1;
    }
    fn node_begin(&mut self, node: NodeId) {
        self.log
            .get_mut()
            .unwrap()
            .push(('b', node, std::thread::current().id()));
    }
    fn node_end(&mut self, node: NodeId) {
        self.log
            .get_mut()
            .unwrap()
            .push(('e', node, std::thread::current().id()));
    }
}

#[test]
fn the_observer_sees_every_node_once_from_its_thread() {
    let clip = SyntheticClip::new(192, 144);
    let mut p = L2::new();
    // Node by node: a fused group reports itself as one unit instead.
    p.set_fusion(false);
    let mut events = Events::default();
    let plan = L2Mode::Balanced.plan();
    let mut threads = HashSet::new();
    for f in 0..6 {
        events.log.get_mut().unwrap().clear();
        p.run_with_fresh(
            &mut Run::mode(L2Mode::Balanced).parallel().observed(&mut events),
            &clip.frame(f),
        )
        .unwrap();
        let log = events.log.get_mut().unwrap();
        for &id in plan.order.iter() {
            let b: Vec<_> = log.iter().filter(|e| e.0 == 'b' && e.1 == id).collect();
            let e: Vec<_> = log.iter().filter(|e| e.0 == 'e' && e.1 == id).collect();
            assert_eq!(
                (b.len(), e.len()),
                (1, 1),
                "node {id} in frame {f}: {log:?}"
            );
            assert_eq!(b[0].2, e[0].2, "a node begins and ends on one thread");
            let (bi, ei) = (
                log.iter().position(|x| x.0 == 'b' && x.1 == id).unwrap(),
                log.iter().position(|x| x.0 == 'e' && x.1 == id).unwrap(),
            );
            assert!(bi < ei);
            threads.insert(b[0].2);
        }
        assert_eq!(log.len(), 2 * plan.order.len());
    }
    assert_eq!(events.frames, 6);
    // With more than one core the pool runs some node off the caller's
    // thread. The pool is shared with the tests running beside this one, so
    // a worker may be busy for a while: keep running frames until one does
    // (a bound, not a time).
    if std::thread::available_parallelism().map_or(1, |n| n.get()) > 1 {
        let mut f = 6;
        while threads.len() < 2 && f < 400 {
            events.log.get_mut().unwrap().clear();
            p.run_with_fresh(
                &mut Run::mode(L2Mode::Balanced).parallel().observed(&mut events),
                &clip.frame(f),
            )
            .unwrap();
            threads.extend(events.log.get_mut().unwrap().iter().map(|e| e.2));
            f += 1;
        }
        assert!(
            threads.len() > 1,
            "one thread ran everything over {f} frames: {threads:?}"
        );
    }
}

fn slow_square(x: &u64) -> u64 {
    (0..2000u64).fold(*x, |a, i| a.wrapping_mul(31).wrapping_add(i)) % 1000
        + (x % 1000) * (x % 1000)
}

fn check_small(x: &u64, limit: &u64) -> Result<u64, String> {
    if x > limit {
        Err(format!("{x} over {limit}"))
    } else {
        Ok(*x)
    }
}

fn sum3(a: &u64, b: &u64, c: &u64) -> u64 {
    a + b + c
}

cortex_graph! {
    /// Three branches in one wave, one of which may fail.
    #[parallel]
    pipeline Branches {
        input x: u64;
        state _last: u64 = 0;
        node a = slow_square(x);
        node b = check_small(x, &1000)?;
        node c = slow_square(_last);
        node total = sum3(a, b, c);
        total -> _last;
        output total: u64;
    }
}

#[test]
fn a_failing_parallel_frame_leaves_the_state_as_it_was() {
    let (mut seq, mut par) = (Branches::new(), Branches::new());
    for x in [3u64, 5, 2000, 7, 999, 1001, 1] {
        let want = seq.run(BranchesMode::Full, &x);
        let got = par.run_with_fresh(&mut Run::mode(BranchesMode::Full).parallel(), &x);
        assert_eq!(got.is_ok(), want.is_ok(), "x = {x}");
        match (got, want) {
            (Ok(g), Ok(w)) => assert_eq!(g, w),
            (Err(g), Err(w)) => assert_eq!(g.to_string(), w.to_string()),
            _ => unreachable!(),
        }
        assert_eq!(par.state(), seq.state(), "x = {x}");
    }
    assert_eq!(seq.state()._last, {
        let mut p = Branches::new();
        for x in [3u64, 5, 7, 999, 1] {
            p.run(BranchesMode::Full, &x).unwrap();
        }
        p.state()._last
    });
}
