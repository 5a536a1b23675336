//! The autotune cache: round trip without measuring again, invalidation by
//! another CPU or crate version, a corrupt file, a kernel forced in the file.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cortex_vision::ops::OpsError;
use cortex_vision::registry::cache::{self, CacheFile};
use cortex_vision::registry::{
    Backend, CacheKey, Config, Kernel, Op, Preference, Reason, Registry, Shape, Supports,
};

fn spin(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// A fresh cache path per test (tests run in parallel in one process).
fn temp_cache(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cortex-registry-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir.join("sub").join("autotune.json")
}

fn config(path: &Path) -> Config {
    Config {
        preference: Preference::Measure,
        cache_path: Some(path.to_path_buf()),
        quiet: true,
        ..Config::default()
    }
}

// Each test has its own op so that call counters do not mix.
macro_rules! timed_op {
    ($ty:ident, $name:literal, $calls:ident) => {
        static $calls: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

        /// `slow` spins 4 ms, `fast` 1 ms.
        struct $ty;

        impl Op for $ty {
            const NAME: &'static str = $name;
            type Args<'a> = usize;
            type Output = &'static str;
            fn shape(w: &usize) -> Shape {
                Shape::new(*w, 2)
            }
            fn kernels() -> Vec<Kernel<Self>> {
                fn slow(_: &usize) -> Result<&'static str, OpsError> {
                    $calls[0].fetch_add(1, Ordering::SeqCst);
                    spin(Duration::from_millis(4));
                    Ok("slow")
                }
                fn fast(_: &usize) -> Result<&'static str, OpsError> {
                    $calls[1].fetch_add(1, Ordering::SeqCst);
                    spin(Duration::from_millis(1));
                    Ok("fast")
                }
                vec![
                    Kernel {
                        name: "slow",
                        backend: Backend::PureRust,
                        supports: Supports::ANY,
                        run: slow,
                    },
                    Kernel {
                        name: "fast",
                        backend: Backend::OpenCv,
                        supports: Supports::ANY,
                        run: fast,
                    },
                ]
            }
        }
    };
}

timed_op!(RoundTrip, "round_trip", ROUND_TRIP);
timed_op!(Foreign, "foreign", FOREIGN);
timed_op!(Corrupt, "corrupt", CORRUPT);
timed_op!(Pinned, "pinned", PINNED);

#[test]
fn round_trip_reuses_the_decision_without_measuring() {
    let path = temp_cache("round-trip");
    {
        let reg = Registry::new(config(&path));
        assert_eq!(reg.call::<RoundTrip>(&10).unwrap(), "fast");
        assert!(reg.warnings().is_empty(), "{:?}", reg.warnings());
    }
    let file: CacheFile = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(file.format, cache::FORMAT);
    assert_eq!(file.key, CacheKey::current());
    assert_eq!(file.entries.len(), 1);
    let e = &file.entries[0];
    assert_eq!(
        (e.op.as_str(), e.shape.as_str(), e.kernel.as_str()),
        ("round_trip", "10x2", "fast")
    );
    assert_eq!(e.median_ns.len(), 2);
    assert!(e.median_ns["slow"] > e.median_ns["fast"]);
    // No temp file is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name() != "autotune.json")
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // Second start: the cached decision, the slow kernel never runs.
    let slow_before = ROUND_TRIP[0].load(Ordering::SeqCst);
    let fast_before = ROUND_TRIP[1].load(Ordering::SeqCst);
    let reg = Registry::new(config(&path));
    assert_eq!(reg.call::<RoundTrip>(&10).unwrap(), "fast");
    assert_eq!(ROUND_TRIP[0].load(Ordering::SeqCst), slow_before);
    assert_eq!(ROUND_TRIP[1].load(Ordering::SeqCst), fast_before + 1);
    let d = reg.decision("round_trip", Shape::new(10, 2)).unwrap();
    let Reason::Cached(times) = &d.reason else {
        panic!("{:?}", d.reason)
    };
    assert_eq!(times[0].0, "fast");
    // Another shape is measured and added next to the first.
    assert_eq!(reg.call::<RoundTrip>(&20).unwrap(), "fast");
    assert_eq!(reg.cache_entries().len(), 2);
    let file: CacheFile = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(file.entries.len(), 2);
}

#[test]
fn another_cpu_or_version_invalidates_the_file() {
    let path = temp_cache("foreign");
    Registry::new(config(&path)).call::<Foreign>(&10).unwrap();
    for other in [
        CacheKey {
            cpu_model: "Some Other CPU".into(),
            ..CacheKey::current()
        },
        CacheKey {
            cpu_features: vec![],
            ..CacheKey::current()
        },
        CacheKey {
            crate_version: "0.0.0-other".into(),
            ..CacheKey::current()
        },
    ] {
        let slow_before = FOREIGN[0].load(Ordering::SeqCst);
        let reg = Registry::with_key(config(&path), other.clone());
        let w = reg.warnings();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("ignored"), "{w:?}");
        assert_eq!(reg.call::<Foreign>(&10).unwrap(), "fast");
        // Measured again: the slow kernel ran.
        assert!(FOREIGN[0].load(Ordering::SeqCst) > slow_before);
        let d = reg.decision("foreign", Shape::new(10, 2)).unwrap();
        assert!(matches!(d.reason, Reason::Measured(_)), "{:?}", d.reason);
        // And the file now belongs to that "machine".
        assert!(cache::load(&path, &other).is_ok());
        assert!(cache::load(&path, &CacheKey::current()).is_err() || other == CacheKey::current());
        // Put this machine's file back for the next round.
        Registry::new(config(&path)).call::<Foreign>(&10).unwrap();
    }
}

#[test]
fn corrupt_file_is_ignored_with_a_warning_and_replaced() {
    let path = temp_cache("corrupt");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    for junk in [
        "{ not json",
        "",
        "[1, 2, 3]",
        "{\"format\": 99}",
        "\u{0}\u{1}binary",
    ] {
        std::fs::write(&path, junk).unwrap();
        let reg = Registry::new(config(&path));
        assert_eq!(reg.warnings().len(), 1, "{junk:?}: {:?}", reg.warnings());
        assert_eq!(reg.call::<Corrupt>(&10).unwrap(), "fast");
        assert!(reg.report().contains("warning: autotune cache"));
        // Replaced by a valid file.
        assert_eq!(cache::load(&path, &CacheKey::current()).unwrap().len(), 1);
    }
    // A folder where the file should be: reading fails, saving fails, the
    // registry still works (both reported as warnings).
    let dir_path = temp_cache("corrupt-dir");
    std::fs::create_dir_all(&dir_path).unwrap();
    let reg = Registry::new(config(&dir_path));
    assert_eq!(reg.call::<Corrupt>(&10).unwrap(), "fast");
    assert_eq!(reg.warnings().len(), 2, "{:?}", reg.warnings());
}

#[test]
fn a_kernel_forced_in_the_file_is_used() {
    let path = temp_cache("pinned");
    Registry::new(config(&path)).call::<Pinned>(&10).unwrap();
    // The user edits the file: pin the slow kernel.
    let mut entries = cache::load(&path, &CacheKey::current()).unwrap();
    assert_eq!(entries[0].kernel, "fast");
    entries[0].kernel = "slow".into();
    entries[0].forced = true;
    cache::save(&path, &CacheKey::current(), &entries).unwrap();
    let reg = Registry::new(config(&path));
    assert_eq!(reg.call::<Pinned>(&10).unwrap(), "slow");
    let d = reg.decision("pinned", Shape::new(10, 2)).unwrap();
    assert_eq!(d.reason, Reason::Forced("the cache file"));
    assert!(reg.report().contains("forced by the cache file"));
}

#[test]
fn default_location_is_overridable_by_the_environment() {
    // Only reads the variable; set in a child-free way by checking the
    // documented fallbacks.
    match std::env::var_os(cache::CACHE_ENV) {
        Some(v) if v.is_empty() || v == "off" => assert_eq!(cache::default_path(), None),
        Some(v) => assert_eq!(cache::default_path(), Some(PathBuf::from(v))),
        None => {
            if let Some(p) = cache::default_path() {
                assert!(p.ends_with("cortex/autotune.json"), "{}", p.display());
            }
        }
    }
}
