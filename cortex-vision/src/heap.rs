//! Heap sizes of the vision types that planned buffers hold, for the plan
//! report's bytes per buffer.

use cortex_core::heap::HeapBytes;

use crate::ops::EncodedRoi;

impl HeapBytes for EncodedRoi {
    fn heap_bytes(&self) -> usize {
        self.jpeg.capacity()
    }
}
