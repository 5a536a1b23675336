//! MSER and `text_roi` benchmarks: the pure-Rust detector against OpenCV
//! 4.6's `cv::MSER::detectRegions` (with `--features opencv`), at 640×480,
//! 768×576 and 1920×1080, one polarity and both (ours sequentially and on
//! two threads); the `text_roi` node at full and half resolution. Frames:
//! seeded smooth random texture with lines of dark and bright glyphs, the
//! same generator as the agreement tests.
//!
//! Like for like: both sides produce every region's pixel list (OpenCV
//! always does); ours also has a box-only mode, benched separately. OpenCV
//! runs on a prepared `Mat` (no conversion inside the timing) and with
//! `cv::setNumThreads(1)` (its MSER is sequential anyway).
//!
//! `cargo bench -p cortex --features opencv --bench mser`

#[path = "../tests/mser/support/mod.rs"]
mod mser_support;

use std::time::Duration;

use cortex_vision::ops::mser::{
    Mser, MserWorkspace, PartitionWorkspace, Polarity, RegionBox, Regions,
};
use cortex_vision::ops::text_roi::{TextRoiDetector, TextRoiParams};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

const SIZES: [(usize, usize); 3] = [(480, 640), (576, 768), (1080, 1920)];

fn bench_mser(c: &mut Criterion) {
    #[cfg(feature = "opencv")]
    cortex_vision::ops::mser::opencv::cv::core::set_num_threads(1).expect("set_num_threads");

    let mser = Mser::default();
    for (rows, cols) in SIZES {
        let img = mser_support::text_frame(rows, cols, 42);
        let size = format!("{cols}x{rows}");
        let mut group = c.benchmark_group(format!("mser/{size}"));
        let mut ws = MserWorkspace::new();
        let mut ws2 = [MserWorkspace::new(), MserWorkspace::new()];
        let mut regions = Regions::new();
        let mut boxes: Vec<RegionBox> = Vec::new();

        group.bench_function(BenchmarkId::new("ours", "one"), |b| {
            b.iter(|| {
                mser.detect_into(&mut ws, &img, Polarity::Bright, &mut regions)
                    .expect("ok");
                regions.len()
            })
        });
        group.bench_function(BenchmarkId::new("ours", "both_seq"), |b| {
            b.iter(|| {
                mser.detect_into(&mut ws, &img, Polarity::Both, &mut regions)
                    .expect("ok");
                regions.len()
            })
        });
        group.bench_function(BenchmarkId::new("ours", "both_2threads"), |b| {
            b.iter(|| {
                mser.detect_both_parallel_into(&mut ws2, &img, &mut regions)
                    .expect("ok");
                regions.len()
            })
        });
        group.bench_function(BenchmarkId::new("ours_boxes", "one"), |b| {
            b.iter(|| {
                mser.detect_boxes_into(&mut ws, &img, Polarity::Bright, &mut boxes)
                    .expect("ok");
                boxes.len()
            })
        });
        group.bench_function(BenchmarkId::new("ours_boxes", "both_2threads"), |b| {
            b.iter(|| {
                mser.detect_boxes_both_parallel_into(&mut ws2, &img, &mut boxes)
                    .expect("ok");
                boxes.len()
            })
        });
        // One polarity, its tree built on two strips at once (rayon's pool).
        let mut parts = PartitionWorkspace::new();
        group.bench_function(BenchmarkId::new("ours_boxes", "one_2strips"), |b| {
            b.iter(|| {
                mser.detect_boxes_partitioned_into(
                    &mut parts,
                    &img,
                    Polarity::Bright,
                    2,
                    &mut boxes,
                )
                .expect("ok");
                boxes.len()
            })
        });

        #[cfg(feature = "opencv")]
        {
            use cortex_vision::ops::mser::opencv::{gray_to_mat, OpenCvMser};
            let mat = gray_to_mat(&img, false).expect("mat");
            let mut cv = OpenCvMser::new(*mser.params()).expect("cv::MSER");
            group.bench_function(BenchmarkId::new("opencv", "one"), |b| {
                b.iter(|| cv.detect_regions_raw(&mat, true).expect("ok").1.len())
            });
            group.bench_function(BenchmarkId::new("opencv", "both"), |b| {
                b.iter(|| cv.detect_regions_raw(&mat, false).expect("ok").1.len())
            });
        }
        group.finish();

        let mut group = c.benchmark_group(format!("text_roi/{size}"));
        for (name, parallel, half_resolution) in [
            ("seq", false, false),
            ("2threads", true, false),
            ("half_res_seq", false, true),
            ("half_res_2threads", true, true),
        ] {
            let params = TextRoiParams {
                parallel,
                half_resolution,
                ..TextRoiParams::default()
            };
            let mut det = TextRoiDetector::new(params).expect("params");
            group.bench_function(name, |b| {
                b.iter(|| det.detect(&img).expect("ok").boxes.len())
            });
        }
        group.finish();
    }
}

fn config() -> Criterion {
    // Modest: the bench machine is small and shared.
    Criterion::default()
        .sample_size(15)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_mser
}
criterion_main!(benches);
