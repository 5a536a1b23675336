//! Per-thread working memory of the kernels: one helper for every kernel
//! that keeps buffers between calls.
//!
//! The buffers of a kernel live in a per-thread slot. A call takes them out
//! of the slot (so a re-entrant call on the same thread, or a call during
//! thread teardown, finds the slot empty or gone and works on fresh memory
//! instead of panicking), runs, and puts them back only if they are within
//! [`FrameLimits::max_retained_bytes`]: the memory of an outsized frame is
//! released when the call returns instead of staying with the thread.

use cortex_core::limits::FrameLimits;
use std::cell::Cell;
use std::thread::LocalKey;

/// Working memory kept in a per-thread slot.
pub(crate) trait Scratch: Default {
    /// Heap bytes held (capacities, not lengths).
    fn heap_bytes(&self) -> usize;
}

/// A per-thread slot for a [`Scratch`]; declare it with
/// `thread_local! { static S: Slot<T> = const { Slot::new(None) }; }`.
pub(crate) type Slot<T> = Cell<Option<T>>;

/// Runs `f` on this thread's scratch in `slot` (or on fresh scratch if the
/// slot is in use or gone), then keeps it only if it is within the retention
/// budget of the limits in effect.
pub(crate) fn with_scratch<T: Scratch, R>(
    slot: &'static LocalKey<Slot<T>>,
    f: impl FnOnce(&mut T) -> R,
) -> R {
    let mut s = slot.try_with(Cell::take).ok().flatten().unwrap_or_default();
    let r = f(&mut s);
    if s.heap_bytes() <= FrameLimits::current().max_retained_bytes {
        // Dropping what a re-entrant call may have left there meanwhile.
        let _ = slot.try_with(|c| c.set(Some(s)));
    }
    r
}

/// Heap bytes of a vector's allocation.
pub(crate) fn vec_bytes<T>(v: &Vec<T>) -> usize {
    v.capacity().saturating_mul(std::mem::size_of::<T>())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cortex_core::limits::with_limits;

    #[derive(Default)]
    struct Buf(Vec<u8>);
    impl Scratch for Buf {
        fn heap_bytes(&self) -> usize {
            vec_bytes(&self.0)
        }
    }

    thread_local! {
        static S: Slot<Buf> = const { Slot::new(None) };
    }

    fn cap() -> usize {
        with_scratch(&S, |b| b.0.capacity())
    }

    #[test]
    fn keeps_small_buffers_releases_outsized_ones_and_survives_reentry() {
        with_scratch(&S, |b| b.0.resize(1000, 1));
        assert!(cap() >= 1000);
        let budget = FrameLimits {
            max_retained_bytes: 4096,
            ..FrameLimits::DEFAULT
        };
        with_limits(budget, || {
            with_scratch(&S, |b| b.0.resize(10_000, 1));
            assert_eq!(cap(), 0, "an outsized buffer must not stay");
        });
        // Re-entrant use gets fresh memory instead of a panic.
        let inner = with_scratch(&S, |b| {
            b.0.resize(50, 0);
            with_scratch(&S, |c| c.0.len())
        });
        assert_eq!(inner, 0);
    }
}
