//! Typed views of a plane's rows: [`Plane`] to read, [`StripMut`] to write a
//! strip of output rows. Rows are addressed by their index in the whole
//! plane, so a kernel computes the same thing whichever strip it runs in.

use std::ops::Range;

use super::error::StripError;
use super::geometry::{Element, Geometry};

/// Read access to rows `rows()` of a row-major plane of geometry
/// `geometry()`. A whole frame has every row; a value computed inside a
/// fused group has the rows of the current strip plus the halo its
/// consumers declared.
#[derive(Debug, Clone, Copy)]
pub struct Plane<'a, T> {
    data: &'a [T],
    geometry: Geometry,
    first: usize,
}

impl<'a, T: Element> Plane<'a, T> {
    /// A whole plane over `data`.
    ///
    /// # Errors
    /// [`StripError::Geometry`] when `data` does not hold exactly
    /// `geometry.len()` elements.
    pub fn new(data: &'a [T], geometry: Geometry) -> Result<Self, StripError> {
        Self::rows_of(data, geometry, 0)
    }

    /// The rows starting at row `first` of a plane of `geometry`, over `data`
    /// (a whole number of rows, not past the last).
    ///
    /// # Errors
    /// [`StripError::Geometry`] when `data` is not a whole number of rows
    /// that fit below `first`.
    pub fn rows_of(data: &'a [T], geometry: Geometry, first: usize) -> Result<Self, StripError> {
        check_rows(data.len(), geometry, first)?;
        Ok(Plane {
            data,
            geometry,
            first,
        })
    }

    /// The whole plane's geometry (not only the rows present).
    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// Pixels per row.
    pub fn width(&self) -> usize {
        self.geometry.width
    }

    /// Rows of the whole plane.
    pub fn height(&self) -> usize {
        self.geometry.height
    }

    /// Elements per pixel.
    pub fn channels(&self) -> usize {
        self.geometry.channels
    }

    /// The rows present.
    pub fn rows(&self) -> Range<usize> {
        self.first..self.first + rows_in(self.data.len(), self.geometry)
    }

    /// Row `y` of the whole plane.
    ///
    /// # Errors
    /// [`StripError::RowUnavailable`] when row `y` is not present.
    #[inline]
    pub fn row(&self, y: usize) -> Result<&'a [T], StripError> {
        self.span(y..y + 1)
    }

    /// Rows `range` of the whole plane, as one slice.
    ///
    /// # Errors
    /// [`StripError::RowUnavailable`] when any of them is not present.
    #[inline]
    pub fn span(&self, range: Range<usize>) -> Result<&'a [T], StripError> {
        let have = self.rows();
        if range.start < have.start || range.end > have.end || range.start > range.end {
            let row = if range.start < have.start {
                range.start
            } else {
                range.end.saturating_sub(1)
            };
            return Err(StripError::RowUnavailable {
                row,
                available: have,
            });
        }
        let n = self.geometry.row_len();
        let data: &'a [T] = self.data;
        Ok(&data[(range.start - self.first) * n..(range.end - self.first) * n])
    }

    /// Every element present, row-major from row `rows().start`.
    pub fn as_slice(&self) -> &'a [T] {
        self.data
    }
}

/// Write access to the output rows `rows()` of a plane of geometry
/// `geometry()`: what a kernel's strip function fills, every element of it.
#[derive(Debug)]
pub struct StripMut<'a, T> {
    data: &'a mut [T],
    geometry: Geometry,
    first: usize,
}

impl<'a, T: Element> StripMut<'a, T> {
    /// Rows starting at row `first` of a plane of `geometry`, over `data`.
    ///
    /// # Errors
    /// [`StripError::Geometry`] when `data` is not a whole number of rows
    /// that fit below `first`.
    pub fn new(data: &'a mut [T], geometry: Geometry, first: usize) -> Result<Self, StripError> {
        check_rows(data.len(), geometry, first)?;
        Ok(StripMut {
            data,
            geometry,
            first,
        })
    }

    /// The whole output plane's geometry.
    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// Pixels per row.
    pub fn width(&self) -> usize {
        self.geometry.width
    }

    /// The rows to fill.
    pub fn rows(&self) -> Range<usize> {
        self.first..self.first + rows_in(self.data.len(), self.geometry)
    }

    /// Row `y` to fill.
    ///
    /// # Errors
    /// [`StripError::RowUnavailable`] when `y` is not one of `rows()`.
    pub fn row_mut(&mut self, y: usize) -> Result<&mut [T], StripError> {
        let have = self.rows();
        if !have.contains(&y) {
            return Err(StripError::RowUnavailable {
                row: y,
                available: have,
            });
        }
        let n = self.geometry.row_len();
        Ok(&mut self.data[(y - self.first) * n..(y - self.first + 1) * n])
    }

    /// Every row to fill, as `(row index, elements)`, top to bottom.
    pub fn rows_mut(&mut self) -> impl Iterator<Item = (usize, &mut [T])> + '_ {
        let first = self.first;
        let n = self.geometry.row_len().max(1);
        self.data
            .chunks_exact_mut(n)
            .enumerate()
            .map(move |(i, r)| (first + i, r))
    }

    /// Every element to fill, row-major from row `rows().start`.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        self.data
    }
}

fn rows_in(len: usize, geometry: Geometry) -> usize {
    len.checked_div(geometry.row_len()).unwrap_or(0)
}

fn check_rows(len: usize, geometry: Geometry, first: usize) -> Result<(), StripError> {
    let n = geometry.row_len();
    // An empty plane (a zero side, no elements) is a value, e.g. a previous
    // frame before the first; a group refuses it before any kernel reads it.
    if len == 0 && first == 0 && geometry.is_empty() {
        return Ok(());
    }
    let fits = n > 0
        && len.is_multiple_of(n)
        && first
            .checked_add(len / n)
            .is_some_and(|end| end <= geometry.height);
    if fits {
        Ok(())
    } else {
        Err(StripError::Geometry {
            kernel: "plane".into(),
            reason: format!(
                "{len} elements from row {first} are not whole rows of {}x{}x{}",
                geometry.width, geometry.height, geometry.channels
            ),
        })
    }
}
