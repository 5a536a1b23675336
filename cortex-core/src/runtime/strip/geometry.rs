//! Plane sizes and the element types a plane may hold.

use super::error::StripError;

/// What a plane may hold: any plain value that can be copied and shared
/// between the worker threads (`u8`, `f32`, `(i64, u64)`, a small struct…).
pub trait Element: Copy + Default + Send + Sync + 'static {}

impl<T: Copy + Default + Send + Sync + 'static> Element for T {}

/// The size of a row-major plane: `height` rows of `width` pixels of
/// `channels` interleaved elements each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Geometry {
    /// Pixels per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Elements per pixel (3 for interleaved RGB, 1 for a gray or score plane).
    pub channels: usize,
}

impl Geometry {
    /// A one-channel `width × height` plane.
    pub const fn new(width: usize, height: usize) -> Self {
        Geometry {
            width,
            height,
            channels: 1,
        }
    }

    /// The same plane with `channels` elements per pixel.
    pub const fn with_channels(self, channels: usize) -> Self {
        Geometry { channels, ..self }
    }

    /// Elements in one row.
    pub const fn row_len(&self) -> usize {
        self.width * self.channels
    }

    /// Elements in the whole plane.
    pub const fn len(&self) -> usize {
        self.row_len() * self.height
    }

    /// Whether the plane holds no element.
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checks that every side is at least 1 and the plane is within the frame
    /// limits in effect, before anything is allocated for it.
    ///
    /// # Errors
    /// [`StripError::Geometry`] for a zero side, [`StripError::TooLarge`] over
    /// the limits.
    pub fn check(&self, what: &str) -> Result<(), StripError> {
        if self.width == 0 || self.height == 0 || self.channels == 0 {
            return Err(StripError::Geometry {
                kernel: what.to_string(),
                reason: format!(
                    "{}x{}x{} has a zero side",
                    self.width, self.height, self.channels
                ),
            });
        }
        crate::limits::FrameLimits::current()
            .check(self.width, self.height)
            .map_err(|e| StripError::TooLarge {
                what: what.to_string(),
                source: e,
            })?;
        if self.width.checked_mul(self.channels).is_none()
            || self.row_len().checked_mul(self.height).is_none()
        {
            return Err(StripError::Geometry {
                kernel: what.to_string(),
                reason: "element count overflows".into(),
            });
        }
        Ok(())
    }
}
