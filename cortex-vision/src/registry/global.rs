//! The process registry and the per-thread one that the DSL functions of
//! [`super::ops`] use.

use std::cell::RefCell;
use std::sync::{Arc, OnceLock};

use super::config::Config;
use super::Registry;

static GLOBAL: OnceLock<Arc<Registry>> = OnceLock::new();

thread_local! {
    static THREAD: RefCell<Option<Arc<Registry>>> = const { RefCell::new(None) };
}

/// The process registry, configured from the environment
/// ([`Config::from_env`]) on first use.
pub fn global() -> Arc<Registry> {
    GLOBAL
        .get_or_init(|| {
            let (config, warnings) = Config::from_env();
            let reg = Registry::new(config);
            if !warnings.is_empty() {
                let mut inner = reg.lock();
                for w in warnings {
                    reg.warn(&mut inner, w);
                }
            }
            Arc::new(reg)
        })
        .clone()
}

/// The registry the [`super::ops`] functions use on this thread: the one set by
/// [`with_registry`] or [`set_thread_registry`], else [`global`].
pub fn current() -> Arc<Registry> {
    THREAD
        .with(|t| t.try_borrow().ok().and_then(|r| r.clone()))
        .unwrap_or_else(global)
}

/// Makes `registry` this thread's registry (`None`: back to the global
/// one); returns the previous one.
pub fn set_thread_registry(registry: Option<Arc<Registry>>) -> Option<Arc<Registry>> {
    THREAD.with(|t| match t.try_borrow_mut() {
        Ok(mut slot) => std::mem::replace(&mut *slot, registry),
        Err(_) => None,
    })
}

/// Runs `f` with `registry` as this thread's registry, then restores the
/// previous one.
pub fn with_registry<R>(registry: &Arc<Registry>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Arc<Registry>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            set_thread_registry(self.0.take());
        }
    }
    let _restore = Restore(set_thread_registry(Some(registry.clone())));
    f()
}

/// [`Registry::report`] of this thread's registry.
pub fn report() -> String {
    current().report()
}

/// [`Registry::kernel_for`] of this thread's registry.
pub fn kernel_for(op_path: &str) -> Option<String> {
    current().kernel_for(op_path)
}
