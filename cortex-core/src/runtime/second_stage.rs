//! The threads a pipelined run's second stage runs on: a pool of their own,
//! beside the pool the stream's first stage runs on.
//!
//! Why not the same pool: rayon has no priorities, and a worker that has
//! started a frame's second stage keeps it until it is done. The first
//! stage of the next frame is where the long jobs are (L2's text map: one
//! job per polarity, about 10 ms each at 768×576), and on a pool as large
//! as the cores one of them then waits for the core the second stage holds
//! — the frame takes the second stage plus a polarity instead of the
//! larger of the two. On threads of its own the second stage runs beside
//! both polarities and the operating system shares the cores between all
//! three, so no core idles while any stage has work.
//!
//! One pool per size, made the first time a stream runs on a pool of that
//! size and kept for the life of the process (its threads' kernel scratch
//! too), so a stream costs no thread creation after the first. A pool of
//! one thread gets no second pool: whoever chose one thread chose not to
//! run two things at once.

use std::sync::{Mutex, PoisonError};

use rayon::{ThreadPool, ThreadPoolBuilder};

/// Runs `f` (a frame's second stage) on the second-stage pool matching the
/// current pool's size, the calling thread helping its own pool meanwhile;
/// on the calling thread itself when the current pool has one thread or
/// the second pool could not be made (the stages then share the pool, as
/// a pool of one thread must).
pub(crate) fn run<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    match pool_for(rayon::current_num_threads()) {
        Some(pool) => pool.install(f),
        None => f(),
    }
}

/// The second-stage pool for a first stage of `threads` threads, made on
/// first use; `None` for one thread, or when the threads cannot be spawned.
fn pool_for(threads: usize) -> Option<&'static ThreadPool> {
    static POOLS: Mutex<Vec<(usize, &'static ThreadPool)>> = Mutex::new(Vec::new());
    if threads < 2 {
        return None;
    }
    let mut pools = POOLS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(&(_, pool)) = pools.iter().find(|(n, _)| *n == threads) {
        return Some(pool);
    }
    let pool = ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("cortex-stage2-{i}"))
        .build()
        .ok()?;
    // Kept for the process's life: one per pool size a stream ran on.
    let pool: &'static ThreadPool = Box::leak(Box::new(pool));
    pools.push((threads, pool));
    Some(pool)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread_name() -> String {
        std::thread::current().name().unwrap_or("").to_string()
    }

    #[test]
    fn second_stage_runs_on_its_own_threads_beside_a_pool_of_two() {
        let first = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let (outer, inner) = first.install(|| (thread_name(), run(thread_name)));
        assert!(!outer.starts_with("cortex-stage2-"), "{outer}");
        assert!(inner.starts_with("cortex-stage2-"), "{inner}");
        // The same pool the next time: threads are made once per size.
        let again = first
            .install(|| pool_for(rayon::current_num_threads()).map(|p| p as *const _ as usize));
        assert_eq!(again, pool_for(2).map(|p| p as *const _ as usize));
    }

    #[test]
    fn a_pool_of_one_thread_keeps_both_stages() {
        let one = ThreadPoolBuilder::new()
            .num_threads(1)
            .thread_name(|_| "only".into())
            .build()
            .unwrap();
        let (outer, inner) = one.install(|| (thread_name(), run(thread_name)));
        assert_eq!((outer.as_str(), inner.as_str()), ("only", "only"));
    }
}
