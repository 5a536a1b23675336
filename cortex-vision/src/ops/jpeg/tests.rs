//! The encoder's files decode (with the `image` crate) to what went in, at
//! every size and quality, and compare with `jpeg-encoder`'s in size and
//! fidelity.

use super::*;

fn lcg(seed: &mut u32) -> u8 {
    *seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
    (*seed >> 24) as u8
}

/// A smooth colour gradient with a little noise and a sharp-edged square:
/// the content of a typical crop.
fn picture(w: usize, h: usize, seed: u32) -> Vec<u8> {
    let mut s = seed;
    let mut px = Vec::with_capacity(3 * w * h);
    for y in 0..h {
        for x in 0..w {
            let inside = x > w / 3 && x < 2 * w / 3 && y > h / 3 && y < 2 * h / 3;
            let n = i32::from(lcg(&mut s) % 9) - 4;
            for c in 0..3 {
                let base = if inside {
                    [40, 200, 90][c]
                } else {
                    (60 + 120 * x / w.max(1) + 50 * y / h.max(1) + 30 * c) as i32
                };
                px.push((base + n).clamp(0, 255) as u8);
            }
        }
    }
    px
}

fn encode(px: &[u8], w: usize, h: usize, quality: u8) -> Vec<u8> {
    let view = RgbView::new(px, 3 * w, w, h).unwrap();
    let mut out = Vec::new();
    encode_rgb(&view, quality, &mut out, &mut JpegScratch::default());
    out
}

fn decode(jpeg: &[u8]) -> (usize, usize, Vec<u8>) {
    let img = image::load_from_memory_with_format(jpeg, image::ImageFormat::Jpeg)
        .expect("decodable")
        .to_rgb8();
    (img.width() as usize, img.height() as usize, img.into_raw())
}

fn psnr(a: &[u8], b: &[u8]) -> f64 {
    let mse = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| (f64::from(x) - f64::from(y)).powi(2))
        .sum::<f64>()
        / a.len() as f64;
    10.0 * (255.0 * 255.0 / mse.max(1e-9)).log10()
}

#[test]
fn decodes_to_the_input_at_every_size_and_quality() {
    for &(w, h) in &[
        (1, 1),
        (1, 17),
        (17, 1),
        (8, 8),
        (15, 16),
        (16, 16),
        (33, 47),
        (64, 64),
        (130, 70),
    ] {
        let px = picture(w, h, (w * 31 + h) as u32);
        for q in [1, 25, 50, 85, 89, 90, 95, 100] {
            let jpeg = encode(&px, w, h, q);
            assert_eq!(&jpeg[..2], &[0xFF, 0xD8]);
            assert_eq!(&jpeg[jpeg.len() - 2..], &[0xFF, 0xD9]);
            let (dw, dh, back) = decode(&jpeg);
            assert_eq!((dw, dh), (w, h), "q{q}");
            let p = psnr(&px, &back);
            eprintln!("{w}x{h} q{q}: {} B, PSNR {p:.1}", jpeg.len());
            // Floors per quality band, for images large enough that the
            // square's edges are a small part of them (in a tiny image they
            // are most of it, and 4:2:0 blurs its colour away); quality 1
            // quantizes nearly everything away.
            let floor = match q {
                _ if w < 32 || h < 32 => 12.0,
                100 => 40.0,
                90..=99 => 33.0,
                50..=89 => 26.0,
                _ => 12.0,
            };
            assert!(p >= floor, "{w}x{h} q{q}: PSNR {p:.1}");
        }
    }
}

#[test]
fn a_crop_encodes_in_place_as_its_copy_does() {
    let (fw, fh) = (100, 60);
    let frame = picture(fw, fh, 5);
    let (x0, y0, w, h) = (13, 7, 41, 29);
    let copy: Vec<u8> = (y0..y0 + h)
        .flat_map(|y| {
            frame[(y * fw + x0) * 3..(y * fw + x0 + w) * 3]
                .iter()
                .copied()
        })
        .collect();
    let view = RgbView::new(&frame[(y0 * fw + x0) * 3..], 3 * fw, w, h).unwrap();
    let mut out = Vec::new();
    let mut s = JpegScratch::default();
    encode_rgb(&view, 85, &mut out, &mut s);
    assert_eq!(out, encode(&copy, w, h, 85));
    // Scratch used for a wider image serves a narrower one unchanged.
    encode_rgb(&view, 85, &mut out, &mut s);
    assert_eq!(out, encode(&copy, w, h, 85));
}

#[test]
fn views_that_do_not_fit_are_refused() {
    let px = vec![0u8; 30];
    assert!(RgbView::new(&px, 15, 5, 2).is_ok());
    assert!(RgbView::new(&px, 15, 5, 3).is_err());
    assert!(RgbView::new(&px, 12, 5, 2).is_err(), "stride under a row");
    assert!(RgbView::new(&px, 15, 0, 2).is_err());
    assert!(RgbView::new(&px, usize::MAX, 1, 3).is_err(), "overflow");
    let big = vec![0u8; 3 * 70_000];
    assert!(
        RgbView::new(&big, 3 * 70_000, 70_000, 1).is_err(),
        "65535 max"
    );
}

/// Size and fidelity against `jpeg-encoder` 0.6 (what `encode_roi` used
/// before) on noisy and smooth content: same tables and subsampling, so the
/// sizes are close (ours a little smaller on noise: without `jpeg-encoder`'s
/// 8-bit rounding of YCbCr and fixed-point DCT, less rounding noise reaches
/// the quantizer); the `f32` pipeline is at least as faithful.
#[test]
fn compares_with_jpeg_encoder() {
    let (w, h) = (320, 240);
    let mut seed = 77;
    let noisy: Vec<u8> = picture(w, h, 1)
        .into_iter()
        .map(|v| v.saturating_add(lcg(&mut seed) / 4))
        .collect();
    for (name, px) in [("smooth", picture(w, h, 3)), ("noisy", noisy)] {
        for q in [50, 85, 95] {
            let ours = encode(&px, w, h, q);
            let mut theirs = Vec::new();
            jpeg_encoder::Encoder::new(&mut theirs, q)
                .encode(&px, w as u16, h as u16, jpeg_encoder::ColorType::Rgb)
                .unwrap();
            let (po, pt) = (psnr(&px, &decode(&ours).2), psnr(&px, &decode(&theirs).2));
            let ratio = ours.len() as f64 / theirs.len() as f64;
            eprintln!(
                "{name} q{q}: ours {} B {po:.2} dB, jpeg-encoder {} B {pt:.2} dB, size ratio {ratio:.3}",
                ours.len(),
                theirs.len()
            );
            assert!(
                (0.75..=1.05).contains(&ratio),
                "{name} q{q}: size ratio {ratio}"
            );
            assert!(po >= pt - 0.2, "{name} q{q}: {po} vs {pt} dB");
        }
    }
}

/// Encoding time against `jpeg-encoder` (`cargo test --release -p
/// cortex-core --lib ops::jpeg::tests::speed -- --ignored --nocapture`).
#[test]
#[ignore = "a measurement; run in release"]
fn speed_against_jpeg_encoder() {
    for &(w, h) in &[(160, 120), (640, 480), (1920, 1080)] {
        let px = picture(w, h, 9);
        for q in [85, 95] {
            let view = RgbView::new(&px, 3 * w, w, h).unwrap();
            let mut out = Vec::new();
            let mut s = JpegScratch::default();
            let reps = (2_000_000 / (w * h)).max(5);
            let best = |f: &mut dyn FnMut()| {
                (0..3)
                    .map(|_| {
                        let t = std::time::Instant::now();
                        for _ in 0..reps {
                            f();
                        }
                        t.elapsed().as_secs_f64() / reps as f64
                    })
                    .fold(f64::INFINITY, f64::min)
            };
            let ours = best(&mut || encode_rgb(&view, q, &mut out, &mut s));
            let theirs = best(&mut || {
                let mut v = Vec::new();
                jpeg_encoder::Encoder::new(&mut v, q)
                    .encode(&px, w as u16, h as u16, jpeg_encoder::ColorType::Rgb)
                    .unwrap();
            });
            eprintln!(
                "{w}x{h} q{q}: ours {:.3} ms, jpeg-encoder {:.3} ms ({:.2}x)",
                ours * 1e3,
                theirs * 1e3,
                theirs / ours
            );
        }
    }
}
