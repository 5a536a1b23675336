//! Resource policy for frames: the largest frame the kernels (and the frame
//! sources) accept, checked before anything is allocated for it.
//!
//! Frames come from files and streams the user does not control, so one bad
//! header must cost a typed error, never an abort. [`FrameLimits`] bounds a
//! frame's sides and pixel count and the working memory a kernel keeps per
//! thread between calls.
//!
//! Configuration is process-wide ([`set_global`]), with a per-thread
//! override for a scope ([`with_limits`]). Process-wide because the limits
//! are a deployment decision (what one frame may cost this process), taken
//! once at start-up, and must reach every kernel of every pipeline node
//! without threading an extra argument through each `*_with` parameter
//! struct and each `cortex_graph!` node. The scoped override exists for code
//! that needs different limits on one worker thread (and for tests, which
//! run in parallel threads of one process and must not see each other's
//! settings).

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The largest frame accepted, and the per-thread working memory kept.
///
/// The defaults ([`FrameLimits::DEFAULT`]) accept every common video format
/// up to 8K (7680×4320 and DCI 8192×4320, 35.4 M pixels) and panoramas up to
/// 16384 pixels a side, and refuse e.g. 20000×20000 (400 M pixels) or a
/// 1×20 000 000 strip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FrameLimits {
    /// Most pixels (`width × height`) in one frame. Default `2²⁶`
    /// (67 108 864, e.g. 8192×8192).
    pub max_pixels: usize,
    /// Longest side in pixels. Default `16384`.
    pub max_side: usize,
    /// Most bytes of working memory one kernel keeps in a per-thread buffer
    /// between calls; a larger buffer (left by an outsized frame) is released
    /// when the call returns. Default 256 MiB.
    pub max_retained_bytes: usize,
}

/// Why a frame was refused by [`FrameLimits::check`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "frame {width}x{height} exceeds the frame limits (at most {} pixels and {} per side)",
    limits.max_pixels,
    limits.max_side
)]
pub struct LimitError {
    /// Width of the refused frame.
    pub width: usize,
    /// Height of the refused frame.
    pub height: usize,
    /// The limits it was checked against.
    pub limits: FrameLimits,
}

impl FrameLimits {
    /// The default policy; see the field docs.
    pub const DEFAULT: FrameLimits = FrameLimits {
        max_pixels: 1 << 26,
        max_side: 1 << 14,
        max_retained_bytes: 256 << 20,
    };

    /// No limit at all (every size fits; allocation failures then abort as
    /// in plain Rust). For trusted input only.
    pub const UNLIMITED: FrameLimits = FrameLimits {
        max_pixels: usize::MAX,
        max_side: usize::MAX,
        max_retained_bytes: usize::MAX,
    };

    /// Accepts a `width × height` frame when both sides are at most
    /// `max_side` and the pixel count (computed without overflow) at most
    /// `max_pixels`. Zero sides pass (emptiness is the caller's check).
    ///
    /// # Errors
    /// [`LimitError`] naming the frame and the limits.
    pub fn check(&self, width: usize, height: usize) -> Result<(), LimitError> {
        let fits = width <= self.max_side
            && height <= self.max_side
            && width
                .checked_mul(height)
                .is_some_and(|n| n <= self.max_pixels);
        if fits {
            Ok(())
        } else {
            Err(LimitError {
                width,
                height,
                limits: *self,
            })
        }
    }

    /// The limits in effect on this thread: the innermost [`with_limits`]
    /// override, else the process-wide setting ([`set_global`], initially
    /// [`FrameLimits::DEFAULT`]).
    pub fn current() -> FrameLimits {
        OVERRIDE
            .try_with(Cell::get)
            .ok()
            .flatten()
            .unwrap_or_else(global)
    }
}

impl Default for FrameLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

static MAX_PIXELS: AtomicUsize = AtomicUsize::new(FrameLimits::DEFAULT.max_pixels);
static MAX_SIDE: AtomicUsize = AtomicUsize::new(FrameLimits::DEFAULT.max_side);
static MAX_RETAINED: AtomicUsize = AtomicUsize::new(FrameLimits::DEFAULT.max_retained_bytes);

thread_local! {
    static OVERRIDE: Cell<Option<FrameLimits>> = const { Cell::new(None) };
}

/// Sets the process-wide limits (meant for start-up: a thread that reads
/// them while another sets them may see a mix of old and new fields).
pub fn set_global(limits: FrameLimits) {
    MAX_PIXELS.store(limits.max_pixels, Ordering::Relaxed);
    MAX_SIDE.store(limits.max_side, Ordering::Relaxed);
    MAX_RETAINED.store(limits.max_retained_bytes, Ordering::Relaxed);
}

/// The process-wide limits.
pub fn global() -> FrameLimits {
    FrameLimits {
        max_pixels: MAX_PIXELS.load(Ordering::Relaxed),
        max_side: MAX_SIDE.load(Ordering::Relaxed),
        max_retained_bytes: MAX_RETAINED.load(Ordering::Relaxed),
    }
}

/// Runs `f` with `limits` in effect on this thread only (nested calls
/// stack; the previous setting comes back when `f` returns or unwinds).
/// Threads that `f` spawns see the process-wide limits.
pub fn with_limits<R>(limits: FrameLimits, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<FrameLimits>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = OVERRIDE.try_with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(
        OVERRIDE
            .try_with(|c| c.replace(Some(limits)))
            .ok()
            .flatten(),
    );
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_accepts_8k_and_refuses_oversized_frames() {
        let l = FrameLimits::DEFAULT;
        assert!(l.check(7680, 4320).is_ok());
        assert!(l.check(8192, 4320).is_ok());
        assert!(l.check(8192, 8192).is_ok());
        assert!(l.check(0, 0).is_ok());
        for (w, h) in [
            (20_000, 20_000),
            (1, 20_000_000),
            (16_385, 1),
            (usize::MAX, usize::MAX),
        ] {
            let e = l.check(w, h).unwrap_err();
            assert_eq!((e.width, e.height, e.limits), (w, h, l));
        }
        // Under the side limit but over the pixel limit.
        assert!(l.check(16_384, 4_097).is_err());
    }

    #[test]
    fn scoped_override_nests_and_restores() {
        let small = FrameLimits {
            max_pixels: 100,
            max_side: 10,
            max_retained_bytes: 0,
        };
        let before = FrameLimits::current();
        with_limits(small, || {
            assert_eq!(FrameLimits::current(), small);
            assert!(FrameLimits::current().check(11, 1).is_err());
            with_limits(FrameLimits::UNLIMITED, || {
                assert!(FrameLimits::current().check(usize::MAX, 1).is_ok());
            });
            assert_eq!(FrameLimits::current(), small);
        });
        assert_eq!(FrameLimits::current(), before);
        let r = std::panic::catch_unwind(|| with_limits(small, || panic!("inside")));
        assert!(r.is_err());
        assert_eq!(FrameLimits::current(), before);
    }
}
