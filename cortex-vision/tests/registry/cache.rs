//! The autotune cache: round trip without measuring again, invalidation by
//! another CPU or crate version, a corrupt file, a kernel forced in the file,
//! hostile files at the path (FIFO, device, folder, huge, deeply nested,
//! unreadable), saves that never replace anything but a regular file, bounded
//! warnings, and two processes saving at once.

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

        /// `slow` spins 12 ms, `fast` 1 ms: far enough apart that preemption on a
        /// loaded machine cannot reorder their medians.
        struct $ty;

        impl Op for $ty {
            const NAME: &'static str = $name;
            type Args<'a> = usize;
            type Output = &'static str;
            fn shape(w: &usize) -> Shape {
                Shape::new(*w, 2)
            }
            fn kernels() -> Vec<Kernel<Self>> {
                fn slow(_: &usize, out: &mut &'static str) -> Result<(), OpsError> {
                    $calls[0].fetch_add(1, Ordering::SeqCst);
                    spin(Duration::from_millis(12));
                    *out = "slow";
                    Ok(())
                }
                fn fast(_: &usize, out: &mut &'static str) -> Result<(), OpsError> {
                    $calls[1].fetch_add(1, Ordering::SeqCst);
                    spin(Duration::from_millis(1));
                    *out = "fast";
                    Ok(())
                }
                vec![
                    Kernel {
                        name: "slow",
                        backend: Backend::PureRust,
                        supports: Supports::ANY,
                        exact: false,
                        run: slow,
                    },
                    Kernel {
                        name: "fast",
                        backend: Backend::OpenCv,
                        supports: Supports::ANY,
                        exact: false,
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
    // A folder where the file should be: neither read nor replaced, the
    // registry still works (one warning).
    let dir_path = temp_cache("corrupt-dir");
    std::fs::create_dir_all(&dir_path).unwrap();
    let reg = Registry::new(config(&dir_path));
    assert_eq!(reg.call::<Corrupt>(&10).unwrap(), "fast");
    assert_eq!(reg.warnings().len(), 1, "{:?}", reg.warnings());
    assert!(dir_path.is_dir());
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

timed_op!(Hostile, "hostile", HOSTILE);

/// A registry on `path`, made on another thread so that a blocking open
/// fails the test instead of hanging it; returns it with the time it took
/// and the bytes its thread asked the allocator for.
fn open_within_a_second(path: &Path) -> (Registry, Duration, u64) {
    let (tx, rx) = std::sync::mpsc::channel();
    let cfg = config(path);
    std::thread::spawn(move || {
        let t = Instant::now();
        let (reg, _, bytes) = cortex_testkit::thread_allocs_during(|| Registry::new(cfg));
        let _ = tx.send((reg, t.elapsed(), bytes));
    });
    rx.recv_timeout(Duration::from_secs(5))
        .expect("the registry did not start within 5 s (blocked opening the cache)")
}

fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path for the call's duration.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// Every path that is not a regular cache file is "no cache": one warning,
/// a registry up within a second at bounded memory, decisions still made,
/// and the thing at the path left as it was.
#[test]
fn hostile_cache_paths_are_no_cache_with_one_warning() {
    let base = temp_cache("hostile");
    let dir = base.parent().unwrap().to_path_buf();
    std::fs::create_dir_all(&dir).unwrap();

    let fifo = dir.join("fifo.json");
    mkfifo(&fifo);
    let zero = dir.join("zero.json");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let folder = dir.join("folder.json");
    std::fs::create_dir(&folder).unwrap();
    let huge = dir.join("huge.json");
    // 100 MB without writing them: a sparse file of zeros.
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(100_000_000)
        .unwrap();
    let nested = dir.join("nested.json");
    // Inside a field the format does not know, which the parser still walks.
    let depth = 400_000;
    let deep = "[".repeat(depth) + &"]".repeat(depth);
    std::fs::write(&nested, format!("{{\"format\": 1, \"x\": {deep}}}")).unwrap();

    for (path, expect) in [
        (&fifo, "a FIFO, not a regular file"),
        (&zero, "a character device, not a regular file"),
        (&folder, "a folder, not a regular file"),
        (&huge, "larger than a cache file"),
        (&nested, "recursion limit"),
    ] {
        let (reg, took, bytes) = open_within_a_second(path);
        let w = reg.warnings();
        eprintln!(
            "{}: started in {took:?}, {bytes} bytes asked; {w:?}",
            path.display()
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains(expect), "{w:?}");
        assert!(w[0].len() < 300, "{w:?}");
        eprintln!("started in {took:?}");
        assert!(bytes < 2 * cache::MAX_FILE_BYTES + (1 << 20), "{bytes}");
        // Decisions are still made, with no second warning.
        assert_eq!(reg.call::<Hostile>(&10).unwrap(), "fast");
        assert_eq!(reg.warnings().len(), 1, "{:?}", reg.warnings());
    }
    // Nothing was replaced but the two regular files, now valid caches.
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    assert!(std::fs::symlink_metadata(&zero)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(folder.is_dir());
    for path in [&huge, &nested] {
        assert_eq!(
            cache::load(path, &CacheKey::current()).unwrap().len(),
            1,
            "{}",
            path.display()
        );
    }
}

/// Root reads any file, so the case only exists for other users.
#[test]
fn unreadable_cache_file_is_no_cache_with_one_warning() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        eprintln!("skipped: running as root, which can read a file without read permission");
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let path = temp_cache("unreadable");
    Registry::new(config(&path)).call::<Hostile>(&10).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    let (reg, took, _) = open_within_a_second(&path);
    let w = reg.warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("autotune cache"), "{w:?}");
    eprintln!("started in {took:?}");
}

/// A save writes a regular file or nothing: a FIFO, a link to a device, a
/// folder and a dangling link are refused and left in place; a link to a
/// regular file is kept and its target written.
#[test]
fn save_never_replaces_anything_but_a_regular_file() {
    let base = temp_cache("save-target");
    let dir = base.parent().unwrap().to_path_buf();
    std::fs::create_dir_all(&dir).unwrap();
    let key = CacheKey::current();
    let entries = vec![cache::CacheEntry {
        op: "op".into(),
        shape: "1x1".into(),
        kernel: "k".into(),
        forced: false,
        median_ns: Default::default(),
    }];
    let fifo = dir.join("fifo.json");
    mkfifo(&fifo);
    let null = dir.join("null.json");
    std::os::unix::fs::symlink("/dev/null", &null).unwrap();
    let folder = dir.join("folder.json");
    std::fs::create_dir(&folder).unwrap();
    let dangling = dir.join("dangling.json");
    std::os::unix::fs::symlink(dir.join("nowhere"), &dangling).unwrap();
    for path in [&fifo, &null, &folder, &dangling] {
        let r = cache::save(path, &key, &entries);
        assert!(
            matches!(r, Err(cache::CacheError::NotAFile { .. })),
            "{}: {r:?}",
            path.display()
        );
    }
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    assert!(std::fs::symlink_metadata(&null)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    assert!(folder.is_dir());
    assert!(!dir.join("nowhere").exists());
    // Only the four things made above: no temp file left behind.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 4);

    let real = dir.join("real.json");
    let link = dir.join("link.json");
    cache::save(&real, &key, &[]).unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    cache::save(&link, &key, &entries).unwrap();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(cache::load(&real, &key).unwrap(), entries);
}

/// Values from the file and the environment are cut in warnings.
#[test]
fn warnings_do_not_echo_unbounded_values() {
    let path = temp_cache("echo");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let file = CacheFile {
        format: cache::FORMAT,
        key: CacheKey {
            cpu_model: "x".repeat(500_000),
            ..CacheKey::current()
        },
        entries: vec![],
        strips: vec![],
    };
    std::fs::write(&path, serde_json::to_string(&file).unwrap()).unwrap();
    let reg = Registry::new(config(&path));
    let w = reg.warnings();
    assert_eq!(
        w.len(),
        1,
        "{:?}",
        w.iter().map(|w| w.len()).collect::<Vec<_>>()
    );
    assert!(w[0].contains("another CPU"), "{}", &w[0][..200]);
    assert!(w[0].len() < 300, "{} bytes", w[0].len());

    // The environment is read by `Config::from_env`: a child process gets it.
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "cache::child_process_entry", "--nocapture"])
        .env(CHILD_ENV, "env")
        .env(cortex_vision::registry::FORCE_ENV, "k".repeat(100_000))
        .env(cortex_vision::registry::PREFERENCE_ENV, "p".repeat(100_000))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let warnings: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .collect();
    assert_eq!(warnings.len(), 2, "{}", &stdout[..stdout.len().min(500)]);
    for w in warnings {
        assert!(w.len() < 300, "{} bytes", w.len());
    }
}

/// Tells a run of this binary that it is a child of one of these tests.
const CHILD_ENV: &str = "CORTEX_CACHE_TEST_CHILD";

/// Two processes tuning one cache at once: the file stays valid and keeps
/// every decision of both, 20 times out of 20.
#[test]
fn two_processes_saving_at_once_keep_both_decisions() {
    let path = temp_cache("race");
    let t = Instant::now();
    for round in 0..20 {
        let _ = std::fs::remove_file(&path);
        let children: Vec<_> = (0..2)
            .map(|id| {
                std::process::Command::new(std::env::current_exe().unwrap())
                    .args(["--exact", "cache::child_process_entry", "--nocapture"])
                    .env(CHILD_ENV, format!("race:{id}:{}", path.display()))
                    .stdout(std::process::Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for mut c in children {
            assert!(c.wait().unwrap().success(), "round {round}");
        }
        let entries = cache::load(&path, &CacheKey::current())
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        let mut shapes: Vec<String> = entries.iter().map(|e| e.shape.clone()).collect();
        shapes.sort();
        let mut expected: Vec<String> = (0..2)
            .flat_map(|id| (0..RACE_SHAPES).map(move |i| format!("{}x2", 1 + id * 100 + i)))
            .collect();
        expected.sort();
        assert_eq!(shapes, expected, "round {round}");
    }
    eprintln!("20 rounds in {:?}", t.elapsed());
}

const RACE_SHAPES: usize = 5;

static RACE: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

/// Two free kernels: measuring costs next to nothing.
struct RaceOp;

impl Op for RaceOp {
    const NAME: &'static str = "race";
    type Args<'a> = usize;
    type Output = usize;
    fn shape(w: &usize) -> Shape {
        Shape::new(*w, 2)
    }
    fn kernels() -> Vec<Kernel<Self>> {
        fn a(w: &usize, out: &mut usize) -> Result<(), OpsError> {
            RACE[0].fetch_add(1, Ordering::Relaxed);
            *out = *w;
            Ok(())
        }
        fn b(w: &usize, out: &mut usize) -> Result<(), OpsError> {
            RACE[1].fetch_add(1, Ordering::Relaxed);
            *out = *w;
            Ok(())
        }
        vec![
            Kernel {
                name: "a",
                backend: Backend::PureRust,
                supports: Supports::ANY,
                exact: false,
                run: a,
            },
            Kernel {
                name: "b",
                backend: Backend::OpenCv,
                supports: Supports::ANY,
                exact: false,
                run: b,
            },
        ]
    }
}

/// What a child process does; nothing in a normal test run.
#[test]
fn child_process_entry() {
    let Ok(role) = std::env::var(CHILD_ENV) else {
        return;
    };
    if role == "env" {
        let (_, warnings) = Config::from_env();
        for w in warnings {
            println!("warning: {w}");
        }
        return;
    }
    let mut parts = role.splitn(3, ':');
    assert_eq!(parts.next(), Some("race"));
    let id: usize = parts.next().unwrap().parse().unwrap();
    let path = PathBuf::from(parts.next().unwrap());
    let reg = Registry::new(Config {
        tune: cortex_vision::registry::TuneConfig {
            warmup: 0,
            runs: 1,
            budget: Duration::ZERO,
            max_runs: 1,
            ..Default::default()
        },
        ..config(&path)
    });
    for i in 0..RACE_SHAPES {
        let w = 1 + id * 100 + i;
        assert_eq!(reg.call::<RaceOp>(&w).unwrap(), w);
    }
    assert!(reg.warnings().is_empty(), "{:?}", reg.warnings());
}
