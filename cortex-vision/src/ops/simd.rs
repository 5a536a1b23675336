//! Runtime CPU dispatch for the hot loops.
//!
//! The crate is built for the baseline x86-64 target (SSE2), where the
//! compiler vectorizes 4 `f32` lanes at a time. OpenCV dispatches its filters
//! to AVX2 at run time, so to keep up the hot loops are compiled twice: once
//! for the baseline and once with AVX2 enabled, and the AVX2 copy is chosen
//! when the CPU has it. Both copies are the same Rust code without fused
//! multiply-add (Rust never contracts `a * b + c`), so results are
//! bit-identical whichever copy runs.

/// Defines a function whose body is compiled for the baseline target and
/// for AVX2, picking the AVX2 build at run time when the CPU supports it.
macro_rules! multiversion {
    ($(#[$m:meta])* $vis:vis fn $name:ident($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block) => {
        $(#[$m])*
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            #[inline(always)]
            fn inner($($arg: $ty),*) $(-> $ret)? $body

            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2")]
            unsafe fn avx2($($arg: $ty),*) $(-> $ret)? {
                inner($($arg),*)
            }

            #[cfg(target_arch = "x86_64")]
            {
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU supports AVX2, checked just above; the
                    // function is otherwise ordinary safe Rust.
                    return unsafe { avx2($($arg),*) };
                }
            }
            inner($($arg),*)
        }
    };
}

pub(crate) use multiversion;
