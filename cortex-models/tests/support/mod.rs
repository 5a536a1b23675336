//! What the model tests share: the committed test models and the reference
//! input and output of `scripts/make_test_models.py`.
#![allow(dead_code)]

use std::path::PathBuf;

use ndarray::{Array4, ArrayD};

/// The committed test model `name` (`tiny.onnx`, `rank2.onnx`, …).
pub fn testdata(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(name)
}

/// The reference input's size (the script's `H`, `W`).
pub const H: usize = 24;
/// See [`H`].
pub const W: usize = 40;

/// The script's `tiny_input`: small integers over 16, exact in f32.
pub fn tiny_input(h: usize, w: usize) -> Array4<f32> {
    Array4::from_shape_fn((1, 3, h, w), |(_, c, y, x)| {
        ((x * 7 + y * 13 + c * 5) % 17) as f32 / 16.0 - 0.5
    })
}

/// ONNX Runtime's output of `tiny.onnx` on [`tiny_input`]`(H, W)`.
pub fn tiny_expected() -> ArrayD<f32> {
    let bytes = std::fs::read(testdata("tiny_expected.f32")).unwrap();
    let values: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    ArrayD::from_shape_vec(vec![1, 1, H, W], values).unwrap()
}

/// The largest absolute difference of two arrays of one shape.
pub fn max_abs_diff(a: &ArrayD<f32>, b: &ArrayD<f32>) -> f32 {
    assert_eq!(a.shape(), b.shape());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}
