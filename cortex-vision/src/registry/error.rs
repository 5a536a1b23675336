//! Why a registry call failed.

use crate::ops::OpsError;

/// Why a registry call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// No kernel of the op supports the call (or the preference left none).
    #[error("{op}: no kernel for {shape}: {why}")]
    NoKernel {
        /// The op.
        op: &'static str,
        /// The problem shape.
        shape: String,
        /// Why each kernel was ruled out.
        why: String,
    },
    /// Every kernel refused the call; this is the first one's error.
    #[error("{op} ({kernel}): {source}")]
    Kernel {
        /// The op.
        op: &'static str,
        /// The kernel whose error this is.
        kernel: &'static str,
        /// Its error.
        #[source]
        source: OpsError,
    },
    /// [`super::Registry::force`] named a kernel the op does not have.
    #[error("op `{op}` has no kernel `{kernel}` (it has: {known})")]
    UnknownKernel {
        /// The op.
        op: &'static str,
        /// The name given.
        kernel: String,
        /// The op's kernels.
        known: String,
    },
}

impl RegistryError {
    /// The kernel error inside, if that is what this is.
    pub fn ops_error(&self) -> Option<&OpsError> {
        match self {
            RegistryError::Kernel { source, .. } => Some(source),
            _ => None,
        }
    }
}
