//! Selection by rule and by measurement, forcing, preferences and fallback,
//! on fake ops whose kernels spin for known times or fail on demand.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cortex_vision::ops::OpsError;
use cortex_vision::registry::{
    self, Backend, Config, CpuFeature, Kernel, Op, Preference, Reason, Registry, RegistryError,
    Shape, Supports, TuneConfig,
};

fn spin(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

fn quiet(preference: Preference) -> Config {
    Config {
        preference,
        tune: TuneConfig {
            warmup: 1,
            runs: 5,
            tie: 0.03,
            ..TuneConfig::default()
        },
        cache_path: None,
        forced: Vec::new(),
        quiet: true,
    }
}

/// The entry of a test kernel written as returning its value.
fn fill<T>(out: &mut T, value: Result<T, OpsError>) -> Result<(), OpsError> {
    *out = value?;
    Ok(())
}

fn kernel<O: Op>(name: &'static str, backend: Backend, run: registry::KernelFn<O>) -> Kernel<O> {
    Kernel {
        name,
        backend,
        supports: Supports::ANY,
        exact: false,
        run,
    }
}

// --- Measurement: three kernels of known cost --------------------------------

static SPIN_CALLS: [AtomicUsize; 3] = [
    AtomicUsize::new(0),
    AtomicUsize::new(0),
    AtomicUsize::new(0),
];

/// Kernels spinning 25 ms, 1 ms and 5 ms; returns the kernel's name. The
/// costs are five times apart so that a scheduler's preemption on a loaded
/// machine (a few milliseconds) cannot reorder the medians.
struct Spin;

impl Op for Spin {
    const NAME: &'static str = "spin";
    type Args<'a> = usize;
    type Output = &'static str;
    fn shape(w: &usize) -> Shape {
        Shape::new(*w, 1)
    }
    fn kernels() -> Vec<Kernel<Self>> {
        fn slow(_: &usize) -> Result<&'static str, OpsError> {
            SPIN_CALLS[0].fetch_add(1, Ordering::SeqCst);
            spin(Duration::from_millis(25));
            Ok("slow")
        }
        fn fast(_: &usize) -> Result<&'static str, OpsError> {
            SPIN_CALLS[1].fetch_add(1, Ordering::SeqCst);
            spin(Duration::from_millis(1));
            Ok("fast")
        }
        fn medium(_: &usize) -> Result<&'static str, OpsError> {
            SPIN_CALLS[2].fetch_add(1, Ordering::SeqCst);
            spin(Duration::from_millis(5));
            Ok("medium")
        }
        vec![
            kernel::<Self>("slow", Backend::PureRust, |x, out| fill(out, slow(x))),
            kernel::<Self>("fast", Backend::Other("fake-fast"), |x, out| {
                fill(out, fast(x))
            }),
            kernel::<Self>("medium", Backend::OpenCv, |x, out| fill(out, medium(x))),
        ]
    }
}

#[test]
fn measurement_picks_the_fastest_then_dispatches_without_measuring() {
    let reg = Registry::new(quiet(Preference::Measure));
    assert_eq!(reg.call::<Spin>(&64).unwrap(), "fast");
    let d = reg.decision("spin", Shape::new(64, 1)).unwrap();
    assert_eq!(d.kernel, "fast");
    let Reason::Measured(times) = &d.reason else {
        panic!("not measured: {:?}", d.reason)
    };
    assert_eq!(times.len(), 3);
    assert_eq!(times[0].0, "fast", "fastest first: {times:?}");
    // Warm-up 1 + 5 runs of each candidate on the first call.
    let before: Vec<usize> = SPIN_CALLS
        .iter()
        .map(|c| c.load(Ordering::SeqCst))
        .collect();
    assert!(before.iter().all(|&n| n >= 6), "{before:?}");
    // Later calls: the chosen kernel only, once per call.
    for _ in 0..3 {
        assert_eq!(reg.call::<Spin>(&64).unwrap(), "fast");
    }
    let after: Vec<usize> = SPIN_CALLS
        .iter()
        .map(|c| c.load(Ordering::SeqCst))
        .collect();
    assert_eq!(after[0], before[0]);
    assert_eq!(after[1], before[1] + 3);
    assert_eq!(after[2], before[2]);
    // The fallbacks are the others, fastest first.
    assert_eq!(d.fallbacks, vec!["medium", "slow"]);
    assert!(reg.report().contains("spin"), "{}", reg.report());
}

#[test]
fn preferences_are_rules_before_measurement() {
    let pure = Registry::new(quiet(Preference::PureRustOnly));
    assert_eq!(pure.call::<Spin>(&8).unwrap(), "slow");
    let d = pure.decision("spin", Shape::new(8, 1)).unwrap();
    assert!(matches!(d.reason, Reason::Rule(_)), "{:?}", d.reason);
    assert!(
        d.fallbacks.is_empty(),
        "pure Rust only falls back to pure Rust only"
    );

    let cv = Registry::new(quiet(Preference::Prefer(Backend::OpenCv)));
    assert_eq!(cv.call::<Spin>(&8).unwrap(), "medium");
    let d = cv.decision("spin", Shape::new(8, 1)).unwrap();
    assert!(matches!(d.reason, Reason::Rule(_)), "{:?}", d.reason);
    assert_eq!(d.fallbacks, vec!["slow", "fast"]);
}

#[test]
fn forced_kernel_beats_measurement() {
    let reg = Registry::new(quiet(Preference::Measure));
    reg.force::<Spin>("medium").unwrap();
    assert_eq!(reg.call::<Spin>(&16).unwrap(), "medium");
    let d = reg.decision("spin", Shape::new(16, 1)).unwrap();
    assert!(matches!(d.reason, Reason::Forced(_)), "{:?}", d.reason);
    assert!(matches!(
        reg.force::<Spin>("nope"),
        Err(RegistryError::UnknownKernel { .. })
    ));
    // Forcing through the configuration (the environment's form) works too.
    let reg = Registry::new(Config {
        forced: vec![("spin".into(), "slow".into())],
        ..quiet(Preference::Measure)
    });
    assert_eq!(reg.call::<Spin>(&16).unwrap(), "slow");
}

// --- Rules: sizes, layout, CPU features --------------------------------------

/// `small` supports at most 100 pixels of width; `alien` needs a CPU
/// feature this machine lacks; `any` supports everything.
struct Ruled;

impl Op for Ruled {
    const NAME: &'static str = "ruled";
    type Args<'a> = usize;
    type Output = &'static str;
    fn shape(w: &usize) -> Shape {
        Shape::new(*w, 10)
    }
    fn kernels() -> Vec<Kernel<Self>> {
        fn small(_: &usize) -> Result<&'static str, OpsError> {
            Ok("small")
        }
        fn alien(_: &usize) -> Result<&'static str, OpsError> {
            Ok("alien")
        }
        fn any(_: &usize) -> Result<&'static str, OpsError> {
            spin(Duration::from_millis(2));
            Ok("any")
        }
        // A feature of the other architecture than the one running.
        static MISSING: [CpuFeature; 1] = if cfg!(target_arch = "aarch64") {
            [CpuFeature::Avx2]
        } else {
            [CpuFeature::Neon]
        };
        vec![
            Kernel {
                supports: Supports {
                    max_width: 100,
                    ..Supports::ANY
                },
                ..kernel::<Self>("small", Backend::PureRust, |x, out| fill(out, small(x)))
            },
            Kernel {
                supports: Supports {
                    cpu: &MISSING,
                    ..Supports::ANY
                },
                ..kernel::<Self>("alien", Backend::Other("alien"), |x, out| {
                    fill(out, alien(x))
                })
            },
            kernel::<Self>("any", Backend::PureRust, |x, out| fill(out, any(x))),
        ]
    }
}

#[test]
fn rules_exclude_unsupported_sizes_and_cpu_features() {
    let reg = Registry::new(quiet(Preference::Measure));
    // 200 wide: `small` is too small, `alien` lacks its CPU feature.
    assert_eq!(reg.call::<Ruled>(&200).unwrap(), "any");
    let d = reg.decision("ruled", Shape::new(200, 10)).unwrap();
    let Reason::Rule(why) = &d.reason else {
        panic!("{:?}", d.reason)
    };
    assert!(why.contains("small larger than 100"), "{why}");
    assert!(why.contains("alien needs"), "{why}");
    // 50 wide: `small` and `any` are candidates; `small` is faster.
    assert_eq!(reg.call::<Ruled>(&50).unwrap(), "small");
    let d = reg.decision("ruled", Shape::new(50, 10)).unwrap();
    assert!(matches!(d.reason, Reason::Measured(_)), "{:?}", d.reason);
    // Forcing does not override support.
    reg.force::<Ruled>("alien").unwrap();
    assert_eq!(reg.call::<Ruled>(&200).unwrap(), "any");
    assert!(
        reg.warnings().iter().any(|w| w.contains("alien")),
        "{:?}",
        reg.warnings()
    );
}

/// An op without any kernel that supports its calls.
struct Nothing;

impl Op for Nothing {
    const NAME: &'static str = "nothing";
    type Args<'a> = ();
    type Output = ();
    fn shape(_: &()) -> Shape {
        Shape::new(0, 0)
    }
    fn kernels() -> Vec<Kernel<Self>> {
        fn k(_: &()) -> Result<(), OpsError> {
            Ok(())
        }
        vec![kernel::<Self>("k", Backend::PureRust, |x, out| {
            fill(out, k(x))
        })]
    }
}

#[test]
fn no_supported_kernel_is_an_error_not_a_panic() {
    let reg = Registry::new(quiet(Preference::Measure));
    let e = reg.call::<Nothing>(&()).unwrap_err();
    assert!(matches!(e, RegistryError::NoKernel { .. }), "{e}");
    assert!(e.to_string().contains("smaller than 1"), "{e}");
}

// --- Fallback ------------------------------------------------------------------

/// Calls of `flaky` at width 100 only: the tests of this binary run in
/// parallel, and the other test that uses `Flaky` asks at width 101.
static FLAKY_CALLS_AT_100: AtomicUsize = AtomicUsize::new(0);
static STEADY_CALLS: AtomicUsize = AtomicUsize::new(0);

/// `flaky` is fast but fails when asked to (or on odd widths, as an OpenCV
/// backend may on an odd shape); `steady` is slower and always works.
struct Flaky;

impl Op for Flaky {
    const NAME: &'static str = "flaky";
    type Args<'a> = (usize, bool);
    type Output = &'static str;
    fn shape(a: &(usize, bool)) -> Shape {
        Shape::new(a.0, 1)
    }
    fn kernels() -> Vec<Kernel<Self>> {
        fn steady(_: &(usize, bool)) -> Result<&'static str, OpsError> {
            STEADY_CALLS.fetch_add(1, Ordering::SeqCst);
            // Far slower than `flaky`, whatever preemption adds.
            spin(Duration::from_millis(12));
            Ok("steady")
        }
        fn flaky(a: &(usize, bool)) -> Result<&'static str, OpsError> {
            if a.0 == 100 {
                FLAKY_CALLS_AT_100.fetch_add(1, Ordering::SeqCst);
            }
            if a.1 || a.0 % 2 == 1 {
                return Err(OpsError::OpenCv("odd shape".into()));
            }
            Ok("flaky")
        }
        vec![
            kernel::<Self>("steady", Backend::PureRust, |x, out| fill(out, steady(x))),
            kernel::<Self>("flaky", Backend::OpenCv, |x, out| fill(out, flaky(x))),
        ]
    }
}

#[test]
fn failing_kernel_falls_back_is_counted_and_not_retried_at_that_shape() {
    let reg = Registry::new(quiet(Preference::Measure));
    // Even width: `flaky` works and is fastest.
    assert_eq!(reg.call::<Flaky>(&(100, false)).unwrap(), "flaky");
    // Now it fails at run time: the frame is computed by `steady`.
    assert_eq!(reg.call::<Flaky>(&(100, true)).unwrap(), "steady");
    let d = reg.decision("flaky", Shape::new(100, 1)).unwrap();
    assert_eq!(d.kernel, "steady");
    assert_eq!(d.chosen, "flaky");
    assert_eq!(d.failures.len(), 1);
    assert_eq!(d.failures[0].kernel, "flaky");
    assert_eq!(d.failures[0].fallback, "steady");
    assert!(d.failures[0].error.contains("odd shape"));
    // Not retried at that shape, even for calls it could do.
    let flaky_before = FLAKY_CALLS_AT_100.load(Ordering::SeqCst);
    assert_eq!(reg.call::<Flaky>(&(100, false)).unwrap(), "steady");
    assert_eq!(FLAKY_CALLS_AT_100.load(Ordering::SeqCst), flaky_before);
    // Other shapes are unaffected.
    assert_eq!(reg.call::<Flaky>(&(200, false)).unwrap(), "flaky");
    let report = reg.report();
    assert!(report.contains("FAILED: flaky"), "{report}");
    assert!(report.contains("kernel failures: 1"), "{report}");
}

#[test]
fn failure_during_measurement_excludes_the_kernel() {
    let reg = Registry::new(quiet(Preference::Measure));
    assert_eq!(reg.call::<Flaky>(&(101, false)).unwrap(), "steady");
    let d = reg.decision("flaky", Shape::new(101, 1)).unwrap();
    assert_eq!(d.kernel, "steady");
    assert_eq!(d.failures.len(), 1);
    assert!(d.fallbacks.is_empty());
}

/// Two kernels that both refuse every call: the input is at fault.
struct Refuses;

static REFUSALS: AtomicUsize = AtomicUsize::new(0);

impl Op for Refuses {
    const NAME: &'static str = "refuses";
    type Args<'a> = ();
    type Output = ();
    fn shape(_: &()) -> Shape {
        Shape::new(4, 4)
    }
    fn kernels() -> Vec<Kernel<Self>> {
        fn a(_: &()) -> Result<(), OpsError> {
            REFUSALS.fetch_add(1, Ordering::SeqCst);
            Err(OpsError::Channels(4))
        }
        fn b(_: &()) -> Result<(), OpsError> {
            REFUSALS.fetch_add(1, Ordering::SeqCst);
            Err(OpsError::Channels(4))
        }
        vec![
            kernel::<Self>("a", Backend::PureRust, |x, out| fill(out, a(x))),
            kernel::<Self>("b", Backend::OpenCv, |x, out| fill(out, b(x))),
        ]
    }
}

#[test]
fn input_every_kernel_refuses_returns_the_error_and_disables_nothing() {
    let reg = Registry::new(quiet(Preference::Measure));
    let e = reg.call::<Refuses>(&()).unwrap_err();
    assert!(matches!(e.ops_error(), Some(OpsError::Channels(4))), "{e}");
    assert!(reg.decisions().is_empty());
    // Asked again, both kernels are tried again.
    let before = REFUSALS.load(Ordering::SeqCst);
    assert!(reg.call::<Refuses>(&()).is_err());
    assert_eq!(REFUSALS.load(Ordering::SeqCst), before + 2);
}

#[test]
fn thread_registry_scopes_the_dsl_functions_and_annotation() {
    let reg = Arc::new(Registry::new(quiet(Preference::PureRustOnly)));
    let gray = cortex_vision::ops::GrayImage::from_elem((24, 32), 7);
    let map = registry::with_registry(&reg, || registry::ops::center_crop(&gray)).unwrap();
    assert_eq!(map.dim(), (24, 32));
    let note = reg.kernel_for("registry::ops::center_crop").unwrap();
    assert!(note.starts_with("pure-rust (rule) at 32x24"), "{note}");
    // Only paths through the registry are annotated.
    assert_eq!(reg.kernel_for("ops::center_crop"), None);
    assert_eq!(reg.kernel_for("registry::ops::saliency_dft"), None);
}

// --- Determinism policy: measurement among the bit-identical kernels --------

/// An op whose policy lets measurement choose only kernels bit-identical to
/// the pure one: `pure` (5 ms), its exact `twin` (1 ms, up to 100 pixels
/// wide), and `close`, the fastest but only within tolerance.
struct Exact;

impl Op for Exact {
    const NAME: &'static str = "exact";
    const POLICY: registry::Policy = registry::Policy::MeasureExact;
    type Args<'a> = usize;
    type Output = &'static str;
    fn shape(w: &usize) -> Shape {
        Shape::new(*w, 1)
    }
    fn kernels() -> Vec<Kernel<Self>> {
        let twin = kernel::<Self>("twin", Backend::Other("twin"), |_, out| {
            spin(Duration::from_millis(1));
            fill(out, Ok("twin"))
        });
        vec![
            kernel::<Self>("pure", Backend::PureRust, |_, out| {
                spin(Duration::from_millis(5));
                fill(out, Ok("pure"))
            })
            .exact(),
            Kernel {
                supports: Supports {
                    max_width: 100,
                    ..Supports::ANY
                },
                ..twin.exact()
            },
            kernel::<Self>("close", Backend::OpenCv, |_, out| fill(out, Ok("close"))),
        ]
    }
}

#[test]
fn an_exact_policy_measures_only_the_bit_identical_kernels() {
    let reg = Registry::new(quiet(Preference::Measure));
    assert_eq!(reg.call::<Exact>(&16).unwrap(), "twin");
    let d = reg.decision("exact", Shape::new(16, 1)).unwrap();
    let Reason::Measured(times) = &d.reason else {
        panic!("not measured: {:?}", d.reason)
    };
    let measured: Vec<&str> = times.iter().map(|t| t.0).collect();
    assert_eq!(measured, ["twin", "pure"], "{times:?}");
    // The other kernel stays a fallback, last.
    assert_eq!(d.fallbacks, ["pure", "close"]);
    // One bit-identical kernel left: a rule, naming why the others are out.
    assert_eq!(reg.call::<Exact>(&200).unwrap(), "pure");
    let d = reg.decision("exact", Shape::new(200, 1)).unwrap();
    let Reason::Rule(why) = &d.reason else {
        panic!("not a rule: {:?}", d.reason)
    };
    assert!(
        why.contains("close is not bit-identical to pure Rust (explicit only)"),
        "{why}"
    );
    // Chosen explicitly, it runs: forced, or its backend preferred.
    reg.force::<Exact>("close").unwrap();
    assert_eq!(reg.call::<Exact>(&16).unwrap(), "close");
    let opencv = Registry::new(quiet(Preference::Prefer(Backend::OpenCv)));
    assert_eq!(opencv.call::<Exact>(&16).unwrap(), "close");
}
