//! The vision kernels' outputs: closed forms and properties of the pure-Rust
//! kernels, property tests over random shapes and parameters, and (feature
//! `opencv`) agreement with OpenCV 4.x.

mod common;

mod fuzz;
#[cfg(feature = "opencv")]
mod opencv;
mod outputs;
