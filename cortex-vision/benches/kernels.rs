//! Criterion benches of the L2 kernels at 640×480 and 1920×1080: the pure-Rust
//! kernel (`rust`) next to its OpenCV counterpart (`opencv`, only with
//! `--features opencv`), both single-threaded and with preallocated outputs,
//! so each side measures its own computation and not allocation or ndarray ⇄
//! Mat copies. Run: `cargo bench --bench kernels --features opencv`.

use cortex_core::Weights;
use cortex_vision::ops::{self, GrayImage, RgbFrame, ScoreMap};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::hint::black_box;
use std::time::Duration;

#[cfg(feature = "opencv")]
use cortex_vision::ops::opencv::sys::prelude::*;

const SIZES: [(usize, usize); 2] = [(480, 640), (1080, 1920)];

fn label((h, w): (usize, usize)) -> String {
    format!("{w}x{h}")
}

/// A textured frame (gradients, waves, noise): realistic work for every kernel.
fn gray(rng: &mut StdRng, h: usize, w: usize) -> GrayImage {
    let (fx, fy, ph) = (
        rng.gen_range(0.02..0.2),
        rng.gen_range(0.02..0.2),
        rng.gen_range(0.0..6.0),
    );
    GrayImage::from_shape_fn((h, w), |(y, x)| {
        let v = 128.0
            + 60.0 * ((x as f64) * fx + (y as f64) * fy + ph).sin()
            + 30.0 * ((x as f64) * 0.01).cos()
            + rng.gen_range(-20.0..20.0);
        v.clamp(0.0, 255.0) as u8
    })
}

fn rgb(rng: &mut StdRng, h: usize, w: usize) -> RgbFrame {
    let (r, g, b) = (gray(rng, h, w), gray(rng, h, w), gray(rng, h, w));
    RgbFrame::from_shape_fn((h, w, 3), |(y, x, c)| [r[[y, x]], g[[y, x]], b[[y, x]]][c])
}

/// `cur` moved by a few pixels plus noise: the next frame of a video.
fn next(rng: &mut StdRng, cur: &GrayImage) -> GrayImage {
    let (h, w) = cur.dim();
    GrayImage::from_shape_fn((h, w), |(y, x)| {
        let v = i16::from(cur[[y.saturating_sub(2), x.saturating_sub(3)]]) + rng.gen_range(-6..=6);
        v.clamp(0, 255) as u8
    })
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

#[cfg(feature = "opencv")]
mod cv {
    //! The OpenCV side, on `Mat` headers over the same pixels.
    pub use cortex_vision::ops::opencv::sys::core::{self, Mat, Size};
    pub use cortex_vision::ops::opencv::sys::{imgcodecs, imgproc, quality, saliency};
    pub use cortex_vision::ops::opencv::{gray_as_mat, rgb_as_mat, score_as_mat, single_threaded};
}

fn bench_gray(c: &mut Criterion) {
    let mut g = c.benchmark_group("to_gray");
    let mut rng = StdRng::seed_from_u64(1);
    for size in SIZES {
        let frame = rgb(&mut rng, size.0, size.1);
        let mut out = GrayImage::zeros(size);
        g.bench_function(BenchmarkId::new("rust", label(size)), |b| {
            b.iter(|| ops::to_gray_into(black_box(&frame), &mut out).unwrap())
        });
        #[cfg(feature = "opencv")]
        {
            let src = cv::rgb_as_mat(&frame).unwrap();
            let mut dst = cv::Mat::default();
            g.bench_function(BenchmarkId::new("opencv", label(size)), |b| {
                b.iter(|| {
                    cv::imgproc::cvt_color(
                        black_box(&src),
                        &mut dst,
                        cv::imgproc::COLOR_RGB2GRAY,
                        0,
                    )
                    .unwrap()
                })
            });
        }
    }
    g.finish();
}

fn bench_blur(c: &mut Criterion) {
    let mut g = c.benchmark_group("blur_detector");
    let mut rng = StdRng::seed_from_u64(2);
    for size in SIZES {
        let img = gray(&mut rng, size.0, size.1);
        g.bench_function(BenchmarkId::new("rust", label(size)), |b| {
            b.iter(|| ops::blur_detector(black_box(&img)).unwrap())
        });
        #[cfg(feature = "opencv")]
        {
            let src = cv::gray_as_mat(&img).unwrap();
            let (mut lap, mut mean, mut sd) =
                (cv::Mat::default(), cv::Mat::default(), cv::Mat::default());
            g.bench_function(BenchmarkId::new("opencv", label(size)), |b| {
                b.iter(|| {
                    cv::imgproc::laplacian(
                        black_box(&src),
                        &mut lap,
                        cv::core::CV_64F,
                        1,
                        1.0,
                        0.0,
                        cv::core::BORDER_DEFAULT,
                    )
                    .unwrap();
                    cv::core::mean_std_dev(&lap, &mut mean, &mut sd, &cv::core::no_array())
                        .unwrap();
                    *sd.at::<f64>(0).unwrap()
                })
            });
        }
    }
    g.finish();
}

fn bench_ssim(c: &mut Criterion) {
    let mut g = c.benchmark_group("scene_change_ssim");
    let mut rng = StdRng::seed_from_u64(3);
    for size in SIZES {
        let a = gray(&mut rng, size.0, size.1);
        let bimg = next(&mut rng, &a);
        let mut scratch = ops::SsimScratch::default();
        g.bench_function(BenchmarkId::new("rust", label(size)), |b| {
            b.iter(|| {
                ops::ssim_with(
                    black_box(&a),
                    &bimg,
                    ops::SsimVariant::Gaussian,
                    &mut scratch,
                )
                .unwrap()
            })
        });
        g.bench_function(BenchmarkId::new("rust_skimage", label(size)), |b| {
            b.iter(|| {
                ops::ssim_with(
                    black_box(&a),
                    &bimg,
                    ops::SsimVariant::SkImage,
                    &mut scratch,
                )
                .unwrap()
            })
        });
        #[cfg(feature = "opencv")]
        {
            let (ma, mb) = (
                cv::gray_as_mat(&a).unwrap(),
                cv::gray_as_mat(&bimg).unwrap(),
            );
            g.bench_function(BenchmarkId::new("opencv", label(size)), |b| {
                b.iter(|| {
                    cv::quality::QualitySSIM::compute(
                        black_box(&ma),
                        &mb,
                        &mut cv::core::no_array(),
                    )
                    .unwrap()
                })
            });
        }
    }
    g.finish();
}

fn bench_center(c: &mut Criterion) {
    let mut g = c.benchmark_group("center_crop");
    for size in SIZES {
        let img = GrayImage::zeros(size);
        let mut out = ScoreMap::zeros(size);
        let p = ops::CenterParams::default();
        g.bench_function(BenchmarkId::new("rust", label(size)), |b| {
            b.iter(|| ops::center_crop_into(black_box(&img), &p, &mut out).unwrap())
        });
        #[cfg(feature = "opencv")]
        {
            // The same separable prior from OpenCV's 1-D Gaussian kernels and
            // an outer product (GEMM), rescaled to peak 1.
            let mut out_m = cv::Mat::default();
            let (h, w) = (size.0 as i32, size.1 as i32);
            g.bench_function(BenchmarkId::new("opencv", label(size)), |b| {
                b.iter(|| {
                    let ky =
                        cv::imgproc::get_gaussian_kernel(h, 0.25 * f64::from(h), cv::core::CV_32F)
                            .unwrap();
                    let kx =
                        cv::imgproc::get_gaussian_kernel(w, 0.25 * f64::from(w), cv::core::CV_32F)
                            .unwrap();
                    let (mut ymax, mut xmax) = (0.0, 0.0);
                    cv::core::min_max_loc(
                        &ky,
                        None,
                        Some(&mut ymax),
                        None,
                        None,
                        &cv::core::no_array(),
                    )
                    .unwrap();
                    cv::core::min_max_loc(
                        &kx,
                        None,
                        Some(&mut xmax),
                        None,
                        None,
                        &cv::core::no_array(),
                    )
                    .unwrap();
                    cv::core::gemm(
                        &ky,
                        &kx,
                        1.0 / (ymax * xmax),
                        &cv::core::no_array(),
                        0.0,
                        &mut out_m,
                        cv::core::GEMM_2_T,
                    )
                    .unwrap();
                })
            });
        }
    }
    g.finish();
}

fn bench_saliency(c: &mut Criterion) {
    let mut g = c.benchmark_group("saliency_dft");
    let mut rng = StdRng::seed_from_u64(4);
    for size in SIZES {
        let img = gray(&mut rng, size.0, size.1);
        let mut out = ScoreMap::zeros(size);
        let p = ops::SaliencyParams::default();
        g.bench_function(BenchmarkId::new("rust", label(size)), |b| {
            b.iter(|| ops::saliency_dft_into(black_box(&img), &p, &mut out).unwrap())
        });
        #[cfg(feature = "opencv")]
        {
            let src = cv::gray_as_mat(&img).unwrap();
            let mut sr = cv::saliency::StaticSaliencySpectralResidual::create().unwrap();
            let mut dst = cv::Mat::default();
            g.bench_function(BenchmarkId::new("opencv", label(size)), |b| {
                b.iter(|| {
                    cv::saliency::StaticSaliencySpectralResidualTrait::compute_saliency(
                        &mut sr,
                        black_box(&src),
                        &mut dst,
                    )
                    .unwrap()
                })
            });
        }
    }
    g.finish();
}

fn bench_motion(c: &mut Criterion) {
    let mut g = c.benchmark_group("motion_map");
    let mut rng = StdRng::seed_from_u64(5);
    for size in SIZES {
        let a = gray(&mut rng, size.0, size.1);
        let bimg = next(&mut rng, &a);
        let mut out = ScoreMap::zeros(size);
        let p = ops::MotionParams::default();
        g.bench_function(BenchmarkId::new("rust", label(size)), |b| {
            b.iter(|| ops::motion_map_into(black_box(&a), &bimg, &p, &mut out).unwrap())
        });
        #[cfg(feature = "opencv")]
        {
            // The cheapest faithful OpenCV pipeline: f32 (the backend pools in
            // f64 for accuracy on huge cells; f32 is what the speed target is
            // held against).
            let (ma, mb) = (
                cv::gray_as_mat(&a).unwrap(),
                cv::gray_as_mat(&bimg).unwrap(),
            );
            let (mut d, mut df, mut cells, mut up) = (
                cv::Mat::default(),
                cv::Mat::default(),
                cv::Mat::default(),
                cv::Mat::default(),
            );
            let full = cv::Size::new(size.1 as i32, size.0 as i32);
            g.bench_function(BenchmarkId::new("opencv", label(size)), |b| {
                b.iter(|| {
                    cv::core::absdiff(black_box(&ma), &mb, &mut d).unwrap();
                    d.convert_to(&mut df, cv::core::CV_32F, 1.0 / 255.0, 0.0)
                        .unwrap();
                    cv::imgproc::resize(
                        &df,
                        &mut cells,
                        cv::Size::new(16, 12),
                        0.0,
                        0.0,
                        cv::imgproc::INTER_AREA,
                    )
                    .unwrap();
                    cv::imgproc::resize(
                        &cells,
                        &mut up,
                        full,
                        0.0,
                        0.0,
                        cv::imgproc::INTER_NEAREST,
                    )
                    .unwrap();
                })
            });
        }
    }
    g.finish();
}

fn bench_fusion(c: &mut Criterion) {
    let mut g = c.benchmark_group("score_fusion");
    let mut rng = StdRng::seed_from_u64(6);
    for size in SIZES {
        let maps: Vec<ScoreMap> = (0..4)
            .map(|_| ScoreMap::from_shape_fn(size, |_| rng.gen()))
            .collect();
        let w = Weights::new()
            .with("wc", 0.4)
            .with("wt", 0.3)
            .with("ws", 0.2)
            .with("wm", 0.1);
        let mut out = ScoreMap::zeros(size);
        g.bench_function(BenchmarkId::new("rust", label(size)), |b| {
            b.iter(|| {
                ops::score_fusion_into(
                    Some(black_box(&maps[0])),
                    Some(&maps[1]),
                    Some(&maps[2]),
                    Some(&maps[3]),
                    &w,
                    &mut out,
                )
                .unwrap()
            })
        });
        #[cfg(feature = "opencv")]
        {
            let m: Vec<_> = maps.iter().map(|m| cv::score_as_mat(m).unwrap()).collect();
            let (mut t1, mut t2, mut o) =
                (cv::Mat::default(), cv::Mat::default(), cv::Mat::default());
            g.bench_function(BenchmarkId::new("opencv", label(size)), |b| {
                b.iter(|| {
                    cv::core::add_weighted(black_box(&m[0]), 0.4, &m[1], 0.3, 0.0, &mut t1, -1)
                        .unwrap();
                    cv::core::add_weighted(&m[2], 0.2, &m[3], 0.1, 0.0, &mut t2, -1).unwrap();
                    cv::core::add(&t1, &t2, &mut o, &cv::core::no_array(), -1).unwrap();
                })
            });
        }
    }
    g.finish();
}

fn bench_encoder(c: &mut Criterion) {
    let mut g = c.benchmark_group("encoder");
    let mut rng = StdRng::seed_from_u64(7);
    for size in SIZES {
        let frame = rgb(&mut rng, size.0, size.1);
        // A central blob a quarter of the frame wide: the ROI is ~w/2 × h/2.
        let score = ops::center_crop(&GrayImage::zeros(size)).unwrap();
        let p = ops::EncoderParams::default();
        let mut out = ops::EncodedRoi::default();
        g.bench_function(BenchmarkId::new("rust", label(size)), |b| {
            b.iter(|| ops::encode_roi_into(black_box(&frame), &score, &p, &mut out).unwrap())
        });
        #[cfg(feature = "opencv")]
        {
            // OpenCV has no ROI selection; its counterpart is the JPEG encode
            // (libjpeg-turbo via imencode) of the same crop.
            let bbox = ops::select_roi(&score, &p).unwrap().0;
            let src = cv::rgb_as_mat(&frame).unwrap();
            let rect = cv::core::Rect::new(
                bbox.x as i32,
                bbox.y as i32,
                bbox.width as i32,
                bbox.height as i32,
            );
            let roi = cv::Mat::roi(&src, rect).unwrap();
            let mut buf = cv::core::Vector::<u8>::new();
            let params =
                cv::core::Vector::<i32>::from_slice(&[cv::imgcodecs::IMWRITE_JPEG_QUALITY, 85]);
            g.bench_function(BenchmarkId::new("opencv", label(size)), |b| {
                b.iter(|| {
                    cv::imgcodecs::imencode(".jpg", black_box(&roi), &mut buf, &params).unwrap()
                })
            });
        }
    }
    g.finish();
}

/// Interleaved min-of-N timing of each Rust/OpenCV pair: batches of the two
/// alternate, and the fastest batch of each counts. On a shared machine the
/// minimum is far less sensitive to other load than a median, and
/// alternating exposes both sides to the same conditions. Prints a markdown
/// table (also written to `target/criterion/kernels-min-of-n.md`).
#[cfg(feature = "opencv")]
fn interleaved(_: &mut Criterion) {
    use std::time::Instant;
    fn per_call(f: &mut dyn FnMut(), iters: u32) -> f64 {
        let t = Instant::now();
        for _ in 0..iters {
            f();
        }
        t.elapsed().as_secs_f64() / f64::from(iters)
    }
    fn min_of_n(a: &mut dyn FnMut(), b: &mut dyn FnMut()) -> (f64, f64) {
        let (ta, tb) = (per_call(a, 3), per_call(b, 3));
        let it = |t: f64| ((5e-3 / t.max(1e-9)) as u32).clamp(1, 10_000);
        let (ia, ib) = (it(ta), it(tb));
        let (mut ma, mut mb) = (f64::MAX, f64::MAX);
        for _ in 0..15 {
            ma = ma.min(per_call(a, ia));
            mb = mb.min(per_call(b, ib));
        }
        (ma, mb)
    }
    let fmt = |t: f64| {
        if t >= 1e-3 {
            format!("{:.2} ms", t * 1e3)
        } else {
            format!("{:.0} µs", t * 1e6)
        }
    };
    let mut table = String::from("| kernel | frame | Rust (min) | OpenCV (min) | OpenCV / Rust |\n| --- | --- | --- | --- | --- |\n");
    let mut row = |name: &str, size: (usize, usize), (r, o): (f64, f64)| {
        table += &format!(
            "| {name} | {} | {} | {} | {:.2}× |\n",
            label(size),
            fmt(r),
            fmt(o),
            o / r
        );
    };
    let mut rng = StdRng::seed_from_u64(99);
    for size in SIZES {
        let (h, w) = size;
        let frame = rgb(&mut rng, h, w);
        let a = gray(&mut rng, h, w);
        let bimg = next(&mut rng, &a);
        let (fm, am, bm) = (
            cv::rgb_as_mat(&frame).unwrap(),
            cv::gray_as_mat(&a).unwrap(),
            cv::gray_as_mat(&bimg).unwrap(),
        );
        let (mut g, mut m1, mut m2, mut m3, mut m4) = (
            GrayImage::zeros(size),
            cv::Mat::default(),
            cv::Mat::default(),
            cv::Mat::default(),
            cv::Mat::default(),
        );
        row(
            "to_gray",
            size,
            min_of_n(
                &mut || ops::to_gray_into(&frame, &mut g).unwrap(),
                &mut || {
                    cv::imgproc::cvt_color(&fm, &mut m1, cv::imgproc::COLOR_RGB2GRAY, 0).unwrap()
                },
            ),
        );
        row(
            "blur_detector",
            size,
            min_of_n(
                &mut || {
                    black_box(ops::blur_detector(&a).unwrap());
                },
                &mut || {
                    cv::imgproc::laplacian(
                        &am,
                        &mut m1,
                        cv::core::CV_64F,
                        1,
                        1.0,
                        0.0,
                        cv::core::BORDER_DEFAULT,
                    )
                    .unwrap();
                    cv::core::mean_std_dev(&m1, &mut m2, &mut m3, &cv::core::no_array()).unwrap();
                },
            ),
        );
        let mut scratch = ops::SsimScratch::default();
        row(
            "scene_change (SSIM)",
            size,
            min_of_n(
                &mut || {
                    black_box(
                        ops::ssim_with(&a, &bimg, ops::SsimVariant::Gaussian, &mut scratch)
                            .unwrap(),
                    );
                },
                &mut || {
                    black_box(
                        cv::quality::QualitySSIM::compute(&am, &bm, &mut cv::core::no_array())
                            .unwrap(),
                    );
                },
            ),
        );
        let mut map = ScoreMap::zeros(size);
        let mut sr = cv::saliency::StaticSaliencySpectralResidual::create().unwrap();
        let sp = ops::SaliencyParams::default();
        row(
            "saliency_dft",
            size,
            min_of_n(
                &mut || ops::saliency_dft_into(&a, &sp, &mut map).unwrap(),
                &mut || {
                    cv::saliency::StaticSaliencySpectralResidualTrait::compute_saliency(
                        &mut sr, &am, &mut m1,
                    )
                    .unwrap();
                },
            ),
        );
        let mp = ops::MotionParams::default();
        let full = cv::Size::new(w as i32, h as i32);
        row(
            "motion_map",
            size,
            min_of_n(
                &mut || ops::motion_map_into(&a, &bimg, &mp, &mut map).unwrap(),
                &mut || {
                    cv::core::absdiff(&am, &bm, &mut m1).unwrap();
                    m1.convert_to(&mut m2, cv::core::CV_32F, 1.0 / 255.0, 0.0)
                        .unwrap();
                    cv::imgproc::resize(
                        &m2,
                        &mut m3,
                        cv::Size::new(16, 12),
                        0.0,
                        0.0,
                        cv::imgproc::INTER_AREA,
                    )
                    .unwrap();
                    cv::imgproc::resize(&m3, &mut m4, full, 0.0, 0.0, cv::imgproc::INTER_NEAREST)
                        .unwrap();
                },
            ),
        );
        let maps: Vec<ScoreMap> = (0..4)
            .map(|_| ScoreMap::from_shape_fn(size, |_| rng.gen()))
            .collect();
        let mats: Vec<_> = maps.iter().map(|m| cv::score_as_mat(m).unwrap()).collect();
        let wts = Weights::new()
            .with("wc", 0.4)
            .with("wt", 0.3)
            .with("ws", 0.2)
            .with("wm", 0.1);
        row(
            "score_fusion",
            size,
            min_of_n(
                &mut || {
                    ops::score_fusion_into(
                        Some(&maps[0]),
                        Some(&maps[1]),
                        Some(&maps[2]),
                        Some(&maps[3]),
                        &wts,
                        &mut map,
                    )
                    .unwrap()
                },
                &mut || {
                    cv::core::add_weighted(&mats[0], 0.4, &mats[1], 0.3, 0.0, &mut m1, -1).unwrap();
                    cv::core::add_weighted(&mats[2], 0.2, &mats[3], 0.1, 0.0, &mut m2, -1).unwrap();
                    cv::core::add(&m1, &m2, &mut m3, &cv::core::no_array(), -1).unwrap();
                },
            ),
        );
        let score = ops::center_crop(&a).unwrap();
        let ep = ops::EncoderParams::default();
        let mut enc = ops::EncodedRoi::default();
        let bbox = ops::select_roi(&score, &ep).unwrap().0;
        let rect = cv::core::Rect::new(
            bbox.x as i32,
            bbox.y as i32,
            bbox.width as i32,
            bbox.height as i32,
        );
        let roi = cv::Mat::roi(&fm, rect).unwrap();
        let mut buf = cv::core::Vector::<u8>::new();
        let params =
            cv::core::Vector::<i32>::from_slice(&[cv::imgcodecs::IMWRITE_JPEG_QUALITY, 85]);
        row(
            "encoder",
            size,
            min_of_n(
                &mut || ops::encode_roi_into(&frame, &score, &ep, &mut enc).unwrap(),
                &mut || {
                    cv::imgcodecs::imencode(".jpg", &roi, &mut buf, &params).unwrap();
                },
            ),
        );
    }
    println!("\nInterleaved min-of-15 (single thread):\n{table}");
    let _ = std::fs::create_dir_all("target/criterion");
    let _ = std::fs::write("target/criterion/kernels-min-of-n.md", &table);
}

#[cfg(not(feature = "opencv"))]
fn interleaved(_: &mut Criterion) {}

fn setup(_: &mut Criterion) {
    #[cfg(feature = "opencv")]
    cv::single_threaded().expect("OpenCV: one thread, no OpenCL");
}

criterion_group! {
    name = kernels;
    config = config();
    targets = setup, bench_gray, bench_blur, bench_ssim, bench_center, bench_saliency, bench_motion, bench_fusion, bench_encoder, interleaved
}
criterion_main!(kernels);
