//! Stand-in ops for the DSL tests: cheap, deterministic functions with the
//! shapes of the reference pipeline's kernels (frames in, maps out, state in
//! the previous gray frame), so the tests pin graph semantics, not vision.
#![allow(dead_code)]

use cortex::Weights;

pub mod l2_fresh;

/// A tiny "frame": pixel values.
pub type Frame = Vec<u8>;
/// A gray image.
pub type Gray = Vec<f32>;
/// A score map.
pub type Map = Vec<f32>;

/// Why a stand-in op refused its input.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct OpError(pub &'static str);

pub fn to_gray(frame: &Frame) -> Result<Gray, OpError> {
    if frame.is_empty() {
        return Err(OpError("empty frame"));
    }
    Ok(frame.iter().map(|&p| f32::from(p) / 255.0).collect())
}

pub fn scene_change(gray: &Gray, prev: &Gray) -> f32 {
    if prev.len() != gray.len() {
        return 1.0;
    }
    gray.iter()
        .zip(prev)
        .map(|(a, b)| (a - b).abs())
        .sum::<f32>()
        / gray.len() as f32
}

pub fn center(gray: &Gray) -> Map {
    let n = gray.len() as f32;
    (0..gray.len())
        .map(|i| 1.0 - ((i as f32 + 0.5) / n - 0.5).abs())
        .collect()
}

pub fn text(gray: &Gray) -> Map {
    gray.iter()
        .map(|g| if *g > 0.5 { 1.0 } else { 0.0 })
        .collect()
}

pub fn saliency(gray: &Gray) -> Map {
    let mean = gray.iter().sum::<f32>() / gray.len() as f32;
    gray.iter().map(|g| (g - mean).abs()).collect()
}

pub fn motion(gray: &Gray, prev: &Gray) -> Map {
    if prev.len() != gray.len() {
        return vec![0.0; gray.len()];
    }
    gray.iter().zip(prev).map(|(a, b)| (a - b).abs()).collect()
}

pub fn fusion(
    center: Option<&Map>,
    text: Option<&Map>,
    saliency: Option<&Map>,
    motion: Option<&Map>,
    w: &Weights,
) -> Map {
    let len = [center, text, saliency, motion]
        .iter()
        .flatten()
        .map(|m| m.len())
        .max()
        .unwrap_or(0);
    let mut out = vec![0.0f32; len];
    for (map, key) in [
        (center, "wc"),
        (text, "wt"),
        (saliency, "ws"),
        (motion, "wm"),
    ] {
        let weight = w.get_or_zero(key) as f32;
        match map {
            Some(m) => out.iter_mut().zip(m).for_each(|(o, v)| *o += weight * v),
            // An eliminated map contributes what a zero-weighted one would:
            // +0.0 to every pixel, which leaves each sum bit-identical.
            None => out.iter_mut().for_each(|o| *o += 0.0),
        }
    }
    out
}

/// Deterministic textured frames: a moving gradient with a hashed texture.
pub fn frames(count: usize, len: usize) -> Vec<Frame> {
    (0..count)
        .map(|f| {
            (0..len)
                .map(|i| {
                    let h = (i as u32)
                        .wrapping_mul(2_654_435_761)
                        .rotate_left(f as u32 % 13)
                        >> 24;
                    ((i * 3 + f * 7) as u32 % 200 + h % 56) as u8
                })
                .collect()
        })
        .collect()
}
