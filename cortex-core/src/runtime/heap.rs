//! How many bytes a value holds on the heap: what the plan report shows
//! for each buffer a pipeline owns.

/// Bytes a value holds on the heap (its allocations, not its inline size).
/// Implement it for a buffer type of your own to see its size in the plan
/// report; types without it are reported by their inline size.
pub trait HeapBytes {
    /// The bytes allocated for this value.
    fn heap_bytes(&self) -> usize;
}

impl<T> HeapBytes for Vec<T> {
    fn heap_bytes(&self) -> usize {
        self.capacity() * std::mem::size_of::<T>()
    }
}

impl HeapBytes for String {
    fn heap_bytes(&self) -> usize {
        self.capacity()
    }
}

impl<T: HeapBytes> HeapBytes for Option<T> {
    fn heap_bytes(&self) -> usize {
        self.as_ref().map_or(0, HeapBytes::heap_bytes)
    }
}

impl<T: HeapBytes + ?Sized> HeapBytes for Box<T> {
    fn heap_bytes(&self) -> usize {
        std::mem::size_of_val::<T>(self) + (**self).heap_bytes()
    }
}

#[cfg(feature = "ndarray")]
impl<A, D: ndarray::Dimension> HeapBytes for ndarray::Array<A, D> {
    fn heap_bytes(&self) -> usize {
        self.len() * std::mem::size_of::<A>()
    }
}

/// The generated code's way to ask a buffer its size: [`HeapBytes`] when
/// the type has it, its inline size otherwise (method resolution prefers
/// the by-value impl on `Probe`, falling back to the one on `&Probe`).
#[doc(hidden)]
pub struct Probe<'a, T>(pub &'a T);

#[doc(hidden)]
pub trait ViaHeapBytes {
    fn bytes(&self) -> usize;
}

impl<T: HeapBytes> ViaHeapBytes for Probe<'_, T> {
    fn bytes(&self) -> usize {
        self.0.heap_bytes()
    }
}

#[doc(hidden)]
pub trait ViaInlineSize {
    fn bytes(&self) -> usize;
}

impl<T> ViaInlineSize for &Probe<'_, T> {
    fn bytes(&self) -> usize {
        std::mem::size_of::<T>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_bytes_when_known_inline_size_otherwise() {
        let v: Vec<u32> = Vec::with_capacity(10);
        assert_eq!(Probe(&v).bytes(), 40);
        let plain = (1u64, 2u64);
        assert_eq!((&Probe(&plain)).bytes(), 16);
    }
}
