//! State double-buffering: a state whose writer fills a buffer takes the
//! writer's value and gives its last value back as the writer's buffer for
//! the next frame. The compiled pipeline and the same graph built at run
//! time hand the writer the same buffer on every frame — a writer of two
//! states, and a writer rated in another mode than the one running — on
//! the sequential and parallel engines, across mode switches.
//!
//! The writers here report what their buffer held before they filled it,
//! which a well-behaved op never does: it makes the buffer each engine
//! hands back visible in the outputs.

use std::sync::Arc;

use cortex::cortex_graph;
use cortex::dynamic::{Call, DynOutputs, DynPipeline, Ops, Value};
use cortex::run::error::NodeFailure;
use cortex::Pipeline;
use cortex::Run;

/// What a writer computed: its input, then the first value its buffer
/// held.
pub type Trace = Vec<u64>;

/// Fills `out` with `x` and what `out` held first (0 when empty).
fn reveal(x: &u64, out: &mut Trace) {
    let before = out.first().copied().unwrap_or(0);
    out.clear();
    out.extend([*x, before]);
}

/// Every value the states hold, summed.
fn total(a: &Trace, b: &Trace, c: &Trace) -> u64 {
    a.iter().chain(b).chain(c).sum()
}

cortex_graph! {
    /// `pair` writes two states; `solo` writes one and is rated in `SLOW`.
    #[parallel]
    pipeline Buffers {
        input x: u64;
        state _a: Trace = Trace::new();
        state _b: Trace = Trace::new();
        state _c: Trace = Trace::new();

        mode PLAIN { }
        mode SLOW { } where solo every 2;

        node pair: Trace = reveal(x, &mut pair);
        node solo: Trace = reveal(x, &mut solo);
        pair -> _a;
        pair -> _b;
        node sum = total(_a, _b, _c);
        solo -> _c;

        output pair: Trace, solo: Trace, sum: u64;
    }
}

/// The graph at run time over the same functions.
fn run_time() -> DynPipeline {
    let ir = Buffers::ir();
    let mut ops = Ops::new();
    for s in ir.states.iter() {
        ops.constant(&s.init, Trace::new());
    }
    ops.op("reveal", |c: &mut Call<'_>| -> Result<(), NodeFailure> {
        let x = *c.arg::<u64>(0)?;
        reveal(&x, c.fill::<Trace>()?);
        Ok(())
    });
    ops.op("total", |c: &mut Call<'_>| -> Result<(), NodeFailure> {
        let sum = total(c.arg(0)?, c.arg(1)?, c.arg(2)?);
        c.put(sum);
        Ok(())
    });
    DynPipeline::from_ir(ir.clone(), &Buffers::MODE_PLANS, &ops).expect("builds")
}

/// The outputs of a run-time frame, taken out so the pipeline's values
/// are its own again.
fn traces(out: DynOutputs) -> (Trace, Trace, u64) {
    let get = |name: &str| out.get::<Trace>(name).expect(name).clone();
    (
        get("pair"),
        get("solo"),
        *out.get::<u64>("sum").expect("sum"),
    )
}

#[test]
fn compiled_and_run_time_writers_get_the_same_buffers() {
    let modes = [
        BuffersMode::Plain,
        BuffersMode::Plain,
        BuffersMode::Plain,
        BuffersMode::Plain,
        BuffersMode::Slow,
        BuffersMode::Slow,
        BuffersMode::Slow,
        BuffersMode::Slow,
        BuffersMode::Slow,
        BuffersMode::Plain,
        BuffersMode::Plain,
        BuffersMode::Plain,
    ];
    let (mut compiled, mut compiled_par) = (Buffers::new(), Buffers::new());
    let (mut dynamic, mut dynamic_par) = (run_time(), run_time());
    for (f, &mode) in modes.iter().enumerate() {
        let x = 10 + f as u64;
        let want = compiled.run(mode, &x).expect("compiled");
        let want = (want.pair, want.solo, want.sum);
        let par = compiled_par
            .run_with_fresh(&mut Run::mode(mode).parallel(), &x)
            .expect("compiled parallel");
        assert_eq!(
            (par.pair, par.solo, par.sum),
            want,
            "frame {f}: compiled parallel"
        );
        let input: Value = Arc::new(x);
        let got = traces(
            dynamic
                .run(mode as usize, std::slice::from_ref(&input))
                .expect("run time"),
        );
        assert_eq!(got, want, "frame {f} {mode:?}: run time");
        let got = traces(
            dynamic_par
                .run_with_fresh(
                    &mut Run::mode(mode as usize).parallel(),
                    std::slice::from_ref(&input),
                )
                .expect("run time parallel"),
        );
        assert_eq!(got, want, "frame {f} {mode:?}: run time, parallel");
    }
    // The compiled writers were handed back the states' last values: each
    // frame after the first two in `PLAIN` sees the value of two frames
    // before.
    assert_eq!(compiled.state()._b, vec![21, 19]);
}
