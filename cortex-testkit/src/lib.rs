//! Test support shared by the workspace's tests and benches: the counting
//! allocator, and [`pearson`] for comparing score maps.
//!
//! [`CountingAlloc`] is the one counting allocator: a test binary installs
//! it with
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: cortex_testkit::CountingAlloc = cortex_testkit::CountingAlloc;
//! ```
//!
//! and reads allocation calls (every thread, or this thread only), live and
//! peak heap bytes. The process-wide counters see every test of the binary,
//! so tests that read them hold [`serial`] while they measure.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// The system allocator, counting allocation calls and heap bytes.
pub struct CountingAlloc;

static CALLS: AtomicU64 = AtomicU64::new(0);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    // `const` and without a destructor: reading them from inside the
    // allocator never allocates nor registers anything.
    static THREAD_CALLS: Cell<u64> = const { Cell::new(0) };
    static THREAD_BYTES: Cell<u64> = const { Cell::new(0) };
}

/// One allocation call that asked for `bytes` (a reallocation counts as a
/// call for its new size).
fn called(bytes: usize) {
    CALLS.fetch_add(1, Ordering::Relaxed);
    let _ = THREAD_CALLS.try_with(|c| c.set(c.get() + 1));
    let _ = THREAD_BYTES.try_with(|c| c.set(c.get() + bytes as u64));
}

fn grew(bytes: usize) {
    let now = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

fn shrank(bytes: usize) {
    LIVE.fetch_sub(bytes, Ordering::Relaxed);
}

// SAFETY: every call is forwarded unchanged to the system allocator; the
// bookkeeping neither allocates nor touches the returned memory.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        called(layout.size());
        grew(layout.size());
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        called(layout.size());
        grew(layout.size());
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrank(layout.size());
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        called(new_size);
        // Counted as a new block beside the old one until the old is freed:
        // the peak a copying reallocation can reach.
        grew(new_size);
        // SAFETY: the caller's contract, forwarded.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            shrank(new_size);
        } else {
            shrank(layout.size());
        }
        p
    }
}

/// Allocation calls so far, on every thread.
pub fn allocs() -> u64 {
    CALLS.load(Ordering::SeqCst)
}

/// Allocation calls so far on this thread.
pub fn thread_allocs() -> u64 {
    THREAD_CALLS.with(Cell::get)
}

/// Bytes asked for so far on this thread.
pub fn thread_bytes() -> u64 {
    THREAD_BYTES.with(Cell::get)
}

/// Allocation calls on every thread while `f` runs (hold [`serial`]).
pub fn allocs_during<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = allocs();
    let r = f();
    (r, allocs() - before)
}

/// Allocation calls and bytes on this thread while `f` runs.
pub fn thread_allocs_during<R>(f: impl FnOnce() -> R) -> (R, u64, u64) {
    let (c0, b0) = (thread_allocs(), thread_bytes());
    let r = f();
    (r, thread_allocs() - c0, thread_bytes() - b0)
}

/// Heap bytes live now, on every thread.
pub fn live_bytes() -> usize {
    LIVE.load(Ordering::SeqCst)
}

/// The most heap bytes live at once since the last [`reset_peak`].
pub fn peak_bytes() -> usize {
    PEAK.load(Ordering::SeqCst)
}

/// Starts a new peak measurement from the bytes live now.
pub fn reset_peak() {
    PEAK.store(LIVE.load(Ordering::SeqCst), Ordering::SeqCst);
}

static SERIAL: Mutex<()> = Mutex::new(());

/// Held by every test that reads the process-wide counters, so that the
/// tests of one binary measure one at a time (a failed test's poisoned lock
/// is taken over).
///
/// The test harness itself allocates between tests: when one test ends it
/// reports the result and starts the next test's thread, just as the test
/// waiting for this lock takes it. The guard is handed over only after that
/// burst has passed (a pause of [`SETTLE`]), so it never counts against the
/// test that measures next.
pub fn serial() -> MutexGuard<'static, ()> {
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    std::thread::sleep(SETTLE);
    guard
}

/// How long [`serial`] waits for the harness's work between two tests.
pub const SETTLE: std::time::Duration = std::time::Duration::from_millis(50);

/// The Pearson correlation of two equally long series of samples (e.g. two
/// score maps' pixels in the same order); 0 when either is constant, since
/// a flat series has no variation to correlate.
pub fn pearson<A, B>(a: A, b: B) -> f64
where
    A: IntoIterator<Item = f32>,
    A::IntoIter: Clone,
    B: IntoIterator<Item = f32>,
    B::IntoIter: Clone,
{
    let (a, b) = (a.into_iter(), b.into_iter());
    let mean = |it: &mut dyn Iterator<Item = f32>| {
        let (sum, n) = it.fold((0.0, 0usize), |(s, n), v| (s + f64::from(v), n + 1));
        sum / n.max(1) as f64
    };
    let (ma, mb) = (mean(&mut a.clone()), mean(&mut b.clone()));
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in a.zip(b) {
        let (dx, dy) = (f64::from(x) - ma, f64::from(y) - mb);
        sab += dx * dy;
        saa += dx * dx;
        sbb += dy * dy;
    }
    if saa == 0.0 || sbb == 0.0 {
        0.0
    } else {
        sab / (saa * sbb).sqrt()
    }
}
