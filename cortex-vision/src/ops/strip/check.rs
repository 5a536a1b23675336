//! Input checks shared by the strip forms.

use cortex_core::strip::{Geometry, StripError};

/// The geometry of the `n` inputs, or an error naming the kernel.
pub(super) fn arity<'a>(
    kernel: &str,
    inputs: &'a [Geometry],
    n: usize,
) -> Result<&'a [Geometry], StripError> {
    if inputs.len() != n {
        return Err(StripError::Geometry {
            kernel: kernel.into(),
            reason: format!("takes {n} inputs, got {}", inputs.len()),
        });
    }
    Ok(inputs)
}

/// Refuses an input that is not `channels` elements per pixel.
pub(super) fn channels(kernel: &str, g: Geometry, channels: usize) -> Result<(), StripError> {
    if g.channels != channels {
        return Err(StripError::Geometry {
            kernel: kernel.into(),
            reason: format!("input has {} channels, expected {channels}", g.channels),
        });
    }
    Ok(())
}

/// Refuses inputs of different sizes.
pub(super) fn same_size(kernel: &str, inputs: &[Geometry]) -> Result<(), StripError> {
    if let Some(first) = inputs.first() {
        if let Some(g) = inputs
            .iter()
            .find(|g| (g.width, g.height) != (first.width, first.height))
        {
            return Err(StripError::Geometry {
                kernel: kernel.into(),
                reason: format!(
                    "inputs of {}x{} and {}x{}",
                    first.width, first.height, g.width, g.height
                ),
            });
        }
    }
    Ok(())
}
