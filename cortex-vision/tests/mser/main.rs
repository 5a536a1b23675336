//! MSER and the text map: the pure-Rust detector against its definition and
//! on photos, the partition-parallel path against the flood, the text node,
//! half-resolution quality, timing probes (ignored by default) and (feature
//! `opencv`) agreement with OpenCV 4.x.

mod support;

#[cfg(feature = "opencv")]
mod opencv;
mod partitioned;
mod pure;
mod speed;
mod text_roi;
mod text_roi_half;
