//! Node rates: a mode that runs a node on every k-th frame and on a
//! trigger. Held frames return exactly the held value and run none of the
//! work only the held node needed; running frames equal the every-frame
//! run; a trigger recomputes at once; failing frames, mode switches,
//! `reset` and run-time weights follow the documented rules, on every
//! engine.

use cortex::Run;
use std::cell::Cell;
use std::ops::ControlFlow;

use cortex::cortex_graph;
use cortex::model::plan::Reason;
use cortex::prelude::Observer;
use cortex::stream::StreamOptions;

thread_local! {
    /// Calls of `expensive` on this thread (the sequential engines run
    /// nodes on the caller's thread).
    static EXPENSIVE_CALLS: Cell<u32> = const { Cell::new(0) };
}

cortex_graph! {
    /// `slow` is the costly value (with `prep` only it needs), kept as the
    /// state `_last`; `cut` says when the input jumps; `out` fails on 999,
    /// after `slow` ran.
    #[parallel]
    pipeline Rated {
        input x: u64;
        state _last: u64 = 0;

        mode EVERY { }
        mode SLOW { } where slow every 3 or cut;
        mode SLOW_EVENT { } where slow every 1000 or jump.is_cut;

        node prep = prepare(x);
        node slow: u64 = expensive(prep);
        node jump = jump_of(x, _last);
        node cut = is_cut(jump);
        node out = combine(x, slow)?;
        slow -> _last;

        output out: u64, slow: u64, cut: bool;
    }
}

/// A jump in the input, and whether it starts a new scene.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Jump {
    pub size: u64,
    pub is_cut: bool,
}

fn prepare(x: &u64) -> u64 {
    x / 10
}

fn expensive(p: &u64) -> u64 {
    EXPENSIVE_CALLS.with(|c| c.set(c.get() + 1));
    p * 1000 + 7
}

fn jump_of(x: &u64, last: &u64) -> Jump {
    let size = x.abs_diff(*last / 1000 * 10);
    Jump {
        size,
        is_cut: size >= 100,
    }
}

fn is_cut(j: &Jump) -> bool {
    j.is_cut
}

fn combine(x: &u64, slow: &u64) -> Result<u64, String> {
    if *x == 999 {
        return Err("x is 999".into());
    }
    Ok(x + slow)
}

/// Inputs with a cut at frame 7 (0 → 500) and a failing frame at 10.
fn inputs() -> Vec<u64> {
    vec![
        1, 12, 23, 34, 45, 56, 67, 500, 511, 522, 999, 533, 544, 555, 566,
    ]
}

fn node_id(name: &str) -> u32 {
    Rated::ir().node_id(name).unwrap()
}

#[test]
fn phase_plans_are_dce_with_the_held_node_given() {
    let phases = RatedMode::Slow.phase_plans();
    assert_eq!(phases.len(), 2);
    assert_eq!(&phases[0], RatedMode::Slow.plan());
    let held = &phases[1];
    let (slow, prep) = (node_id("slow"), node_id("prep"));
    assert!(!held.is_live(slow) && !held.is_live(prep));
    assert_eq!(held.reason(slow), Some(Reason::Held { rated: slow }));
    assert_eq!(held.reason(prep), Some(Reason::Held { rated: slow }));
    assert_eq!(held.held().collect::<Vec<_>>(), vec![slow]);
    // Everything else still runs, including the trigger and the readers of
    // the held value.
    for name in ["jump", "cut", "out"] {
        assert!(held.is_live(node_id(name)), "{name}");
    }
    // The same DCE as the core computes from the IR.
    let ir = Rated::ir();
    let mode = ir.mode_index("SLOW").unwrap();
    assert_eq!(cortex::passes::dce::phase_plans(ir, mode), phases.to_vec());
    assert_eq!(RatedMode::Every.phase_plans().len(), 1);
}

/// What a frame of `SLOW` must give, from the frames before it: the
/// every-frame value when the node runs, else the one held.
struct Expected {
    computed_at: Option<u64>,
    held: u64,
}

#[test]
fn held_frames_return_the_held_value_and_skip_its_work() {
    let mut p = Rated::new();
    let mut every = Rated::new();
    let mut want = Expected {
        computed_at: None,
        held: 0,
    };
    let mut frame = 0u64;
    for &x in &inputs() {
        let before = EXPENSIVE_CALLS.with(Cell::get);
        let reference = every.run(RatedMode::Every, &x);
        let got = p.run(RatedMode::Slow, &x);
        let calls = EXPENSIVE_CALLS.with(Cell::get) - before;
        let Ok(reference) = reference else {
            // A failing frame: the phase, the holds and the state stay.
            assert!(got.is_err());
            assert_eq!(p.frame_index(), frame);
            assert_eq!(p.holds()[0].computed_at, want.computed_at);
            continue;
        };
        let got = got.unwrap();
        let due = want.computed_at.is_none_or(|at| frame - at >= 3);
        if due || reference.cut {
            // Running frame: bit-identical to the every-frame run.
            assert_eq!(got.out, reference.out, "frame {frame}");
            assert_eq!(got.slow, reference.slow, "frame {frame}");
            assert_eq!(calls, 2, "frame {frame}: both runs compute `slow`");
            want = Expected {
                computed_at: Some(frame),
                held: reference.slow,
            };
            assert!(!p.holds()[0].held_last_frame);
        } else {
            assert_eq!(got.slow, want.held, "frame {frame}: the held value");
            assert_eq!(got.out, x + want.held, "frame {frame}");
            assert_eq!(calls, 1, "frame {frame}: only the every-frame run computes");
            assert!(p.holds()[0].held_last_frame);
        }
        assert_eq!(p.holds()[0].computed_at, want.computed_at);
        assert_eq!(p.holds()[0].node, node_id("slow"));
        // The rated node writes a state: held or not, its value this frame.
        assert_eq!(p.state()._last, got.slow);
        frame += 1;
        assert_eq!(p.frame_index(), frame);
    }
}

#[test]
fn a_trigger_field_recomputes_at_once() {
    let mut p = Rated::new();
    for (f, &x) in [1u64, 2, 3, 400, 401, 402].iter().enumerate() {
        let out = p.run(RatedMode::SlowEvent, &x).unwrap();
        let computed = !p.holds()[0].held_last_frame;
        // Frame 0 (nothing held) and the jump to 400 compute; the rate of
        // 1000 holds every other frame.
        assert_eq!(computed, f == 0 || f == 3, "frame {f}");
        assert_eq!(out.slow, (if f < 3 { 1 } else { 400 }) / 10 * 1000 + 7);
    }
}

#[test]
fn other_modes_reset_and_run_time_weights_forget_the_held_value() {
    let mut p = Rated::new();
    p.run(RatedMode::Slow, &1).unwrap();
    p.run(RatedMode::Slow, &2).unwrap();
    assert!(p.holds()[0].held_last_frame);
    // A frame of a mode that does not rate `slow` forgets its hold.
    p.run(RatedMode::Every, &3).unwrap();
    assert_eq!(p.holds()[0].computed_at, None);
    p.run(RatedMode::Slow, &4).unwrap();
    assert_eq!(p.holds()[0].computed_at, Some(3));
    // So do run-time weights and `reset`.
    p.run_with_fresh(&mut Run::weights(RatedMode::Slow.weights()), &5)
        .unwrap();
    assert_eq!(p.holds()[0].computed_at, None);
    assert_eq!(p.frame_index(), 5);
    p.run(RatedMode::Slow, &6).unwrap();
    p.reset();
    assert_eq!((p.frame_index(), p.holds()[0].computed_at), (0, None));
}

/// Records which nodes ran.
#[derive(Default)]
struct Ran(Vec<u32>);

impl Observer for Ran {
    fn node_begin(&mut self, node: u32) {
        self.0.push(node);
    }
}

#[test]
fn each_frame_runs_exactly_its_phase_plan() {
    let mut p = Rated::new();
    let phases = RatedMode::Slow.phase_plans();
    for &x in &inputs() {
        let mut ran = Ran::default();
        if p.run_with_fresh(&mut Run::mode(RatedMode::Slow).observed(&mut ran), &x)
            .is_err()
        {
            continue;
        }
        let phase = usize::from(p.holds()[0].held_last_frame);
        let mut want: Vec<u32> = phases[phase].order.to_vec();
        want.sort_unstable();
        ran.0.sort_unstable();
        assert_eq!(ran.0, want, "x = {x}");
    }
}

#[test]
fn every_engine_gives_the_sequential_results() {
    let run_all =
        |f: &mut dyn FnMut(&mut Rated, u64) -> Result<RatedOutputs, cortex::PipelineError>| {
            let mut p = Rated::new();
            inputs()
                .iter()
                .map(|&x| {
                    f(&mut p, x)
                        .map(|o| (o, p.holds()[0], p.frame_index()))
                        .ok()
                })
                .collect::<Vec<_>>()
        };
    let sequential = run_all(&mut |p, x| p.run(RatedMode::Slow, &x));
    let mut reused = None;
    let into = run_all(&mut |p, x| {
        let out = reused.get_or_insert(RatedOutputs {
            out: 0,
            slow: 0,
            cut: false,
        });
        p.run_into(RatedMode::Slow, &x, out).map(|()| out.clone())
    });
    let parallel =
        run_all(&mut |p, x| p.run_with_fresh(&mut Run::mode(RatedMode::Slow).parallel(), &x));
    assert_eq!(into, sequential);
    assert_eq!(parallel, sequential);

    // Pipelined: each result with the holds committed after its frame.
    let mut p = Rated::new();
    let mut streamed = Vec::new();
    p.run_stream(
        RatedMode::Slow,
        inputs().into_iter().map(|x| (x,)),
        &StreamOptions::default(),
        |frame| {
            streamed.push(frame.result.ok().map(|o| (o, frame.held)));
            ControlFlow::Continue(())
        },
    )
    .unwrap();
    let want: Vec<Option<(RatedOutputs, u64)>> = sequential
        .iter()
        .map(|r| {
            r.as_ref()
                .map(|r| (r.0.clone(), u64::from(r.1.held_last_frame)))
        })
        .collect();
    assert_eq!(streamed, want);
    assert!(want.iter().flatten().any(|(_, held)| *held == 1));
    assert_eq!(p.frame_index(), sequential.iter().flatten().count() as u64);
}

thread_local! {
    /// Calls of `shared_prep`.
    static PREP_CALLS: Cell<u32> = const { Cell::new(0) };
}

cortex_graph! {
    /// Two rated nodes that share the work before them: `prep` runs when
    /// either does.
    pipeline Two {
        input x: u64;
        mode BOTH { } where a every 2, b every 3;

        node prep = shared_prep(x);
        node a: u64 = times(prep, 10);
        node b: u64 = times(prep, 100);
        node out = sum3(x, a, b);

        output out: u64;
    }
}

fn shared_prep(x: &u64) -> u64 {
    PREP_CALLS.with(|c| c.set(c.get() + 1));
    *x
}

fn times(p: &u64, k: u64) -> u64 {
    p * k
}

fn sum3(x: &u64, a: &u64, b: &u64) -> u64 {
    x + a + b
}

#[test]
fn shared_work_runs_when_any_of_its_rated_nodes_does() {
    let phases = TwoMode::Both.phase_plans();
    assert_eq!(phases.len(), 4);
    let prep = Two::ir().node_id("prep").unwrap();
    // `prep` is left out only when both are held.
    assert!(phases[0].is_live(prep) && phases[1].is_live(prep) && phases[2].is_live(prep));
    assert!(!phases[3].is_live(prep));

    let mut p = Two::new();
    let (mut a_at, mut b_at) = (0u64, 0u64);
    for f in 0..12u64 {
        let x = f * 7 + 1;
        let before = PREP_CALLS.with(Cell::get);
        let out = p.run(TwoMode::Both, &x).unwrap().out;
        let a_runs = f % 2 == 0;
        let b_runs = f % 3 == 0;
        if a_runs {
            a_at = x;
        }
        if b_runs {
            b_at = x;
        }
        assert_eq!(out, x + a_at * 10 + b_at * 100, "frame {f}");
        let prep_ran = PREP_CALLS.with(Cell::get) - before;
        assert_eq!(prep_ran, u32::from(a_runs || b_runs), "frame {f}");
        assert_eq!(p.holds()[0].held_last_frame, !a_runs);
        assert_eq!(p.holds()[1].held_last_frame, !b_runs);
    }
}

/// Records which nodes ran, from any thread.
#[derive(Default)]
struct RanShared(std::sync::Mutex<Vec<u32>>);

impl Observer for &RanShared {
    fn node_begin(&mut self, node: u32) {
        self.0.lock().unwrap().push(node);
    }
}

#[test]
fn parallel_rated_frames_equal_sequential_in_every_mode() {
    // Every mode, over the cut (a trigger firing, and a trigger field in
    // SLOW_EVENT), the failing frame and the held frames between.
    for mode in RatedMode::ALL.iter().copied() {
        let (mut seq, mut par) = (Rated::new(), Rated::new());
        let mut held_frames = 0;
        for &x in &inputs() {
            let want = seq.run(mode, &x);
            let ran = RanShared::default();
            let got = par.run_with_fresh(&mut Run::mode(mode).parallel().observed(&mut &ran), &x);
            assert_eq!(
                got.as_ref().map_err(ToString::to_string),
                want.as_ref().map_err(ToString::to_string),
                "{mode:?}, x = {x}"
            );
            assert_eq!(par.holds(), seq.holds(), "{mode:?}, x = {x}");
            assert_eq!(par.frame_index(), seq.frame_index());
            assert_eq!(par.state(), seq.state());
            if want.is_err() {
                continue;
            }
            // The parallel frame ran exactly its phase plan's nodes.
            let phase = seq
                .holds()
                .iter()
                .enumerate()
                .filter(|(_, h)| h.held_last_frame)
                .fold(0usize, |m, (i, _)| m | 1 << i);
            held_frames += usize::from(phase != 0);
            let mut want_ran: Vec<u32> = match mode.phase_plans().get(phase) {
                Some(p) => p.order.to_vec(),
                None => mode.plan().order.to_vec(),
            };
            want_ran.sort_unstable();
            let mut ran = ran.0.into_inner().unwrap();
            ran.sort_unstable();
            assert_eq!(ran, want_ran, "{mode:?}, x = {x}");
        }
        if mode != RatedMode::Every {
            assert!(held_frames > 0, "{mode:?} held no frame");
        }
    }
}
