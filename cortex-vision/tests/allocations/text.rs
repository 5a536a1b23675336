//! `text_map_into` allocates nothing in steady state, as the planned-memory
//! engine needs: after 3 warm-up frames, 24 further frames of varied
//! content (synthetic text frames and scene-text photos) at 640×480 and
//! 1920×1080, run as the engine runs nodes (on a rayon pool thread, the two
//! polarities on the pool's two threads) and sequentially on a plain thread,
//! cost 0 allocations — counted on every thread by a counting global
//! allocator — and give maps identical to `text_map`'s.
//!
//! The counts are of the threads the work runs on (the pool's, or the
//! calling thread's and the global pool's), not the harness's: on a loaded
//! machine it reports a test running for a minute while frames run. The
//! other tests of this binary count process-wide: they take turns, and each
//! measures only after its warm-up frames, by when the harness has reported
//! the test before it.

use crate::mser_support::text_frame;
use cortex_core::limits::{with_limits, FrameLimits};
use cortex_vision::ops::text_roi::{text_map_into, text_map_with, TextRoiDetector, TextRoiParams};
use cortex_vision::ops::{GrayImage, ScoreMap};

fn allocations_during(f: impl FnOnce()) -> usize {
    cortex_testkit::allocs_during(f).1 as usize
}

/// Runs `f` on this thread and counts the allocation calls made meanwhile
/// on this thread and on the global pool's (the only threads its work can
/// run on), not the harness's.
fn here_and_on_global_pool_allocations_during(f: impl FnOnce()) -> usize {
    let on_pool = || -> u64 {
        rayon::broadcast(|_| cortex_testkit::thread_allocs())
            .iter()
            .sum()
    };
    let before = on_pool();
    let ((), here, _) = cortex_testkit::thread_allocs_during(f);
    (here + on_pool() - before) as usize
}

/// Runs `f` on `pool` and counts the allocation calls made on the pool's
/// threads meanwhile: all of the work's, and none of another thread's (the
/// harness reporting a test that has run for a minute, on a loaded
/// machine, allocates on its own thread while the frames run).
fn on_pool_allocations_during<R: Send>(
    pool: &rayon::ThreadPool,
    f: impl FnOnce() -> R + Send,
) -> (R, usize) {
    let on_pool = || -> u64 {
        pool.broadcast(|_| cortex_testkit::thread_allocs())
            .iter()
            .sum()
    };
    let before = on_pool();
    let r = pool.install(f);
    (r, (on_pool() - before) as usize)
}

/// A scene-text photo as gray, from the facade's test data.
fn photo(name: &str) -> GrayImage {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    let img = image::open(&path)
        .unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
        .to_luma8();
    let (w, h) = img.dimensions();
    GrayImage::from_shape_vec((h as usize, w as usize), img.into_raw()).expect("size")
}

/// A `rows × cols` frame cut from `src` at `(oy, ox)`, wrapping around (so
/// a 1080p frame tiles the photo): real-photo content at any size.
fn cut(src: &GrayImage, rows: usize, cols: usize, oy: usize, ox: usize) -> GrayImage {
    let (h, w) = src.dim();
    GrayImage::from_shape_fn((rows, cols), |(y, x)| src[[(y + oy) % h, (x + ox) % w]])
}

const SMALL: (usize, usize) = (480, 640);
const LARGE: (usize, usize) = (1080, 1920);

/// 3 warm-up frames, then 24 frames none of which was seen in warm-up,
/// alternating sizes, synthetic and photo content.
fn frames() -> (Vec<GrayImage>, Vec<GrayImage>) {
    let photos = [photo("scenetext01.jpg"), photo("scenetext06.jpg")];
    let warm = vec![
        text_frame(LARGE.0, LARGE.1, 1000),
        text_frame(SMALL.0, SMALL.1, 1001),
        cut(&photos[0], LARGE.0, LARGE.1, 0, 0),
    ];
    let mut run = Vec::new();
    for i in 0..12u64 {
        let (rows, cols) = if i % 2 == 0 { SMALL } else { LARGE };
        let p = &photos[(i % 2) as usize];
        let (oy, ox) = (37 * i as usize, 53 * i as usize);
        run.push(text_frame(rows, cols, 7 + i));
        run.push(cut(p, rows, cols, oy, ox));
    }
    (warm, run)
}

/// Runs `text_map_into` over `frames` with one output map per size (as an
/// engine keeps one buffer per node output).
fn run_all(frames: &[GrayImage], params: &TextRoiParams, maps: &mut [ScoreMap; 2]) {
    for f in frames {
        let out = if f.dim() == SMALL {
            &mut maps[0]
        } else {
            &mut maps[1]
        };
        text_map_into(f, params, out).expect("text map");
    }
}

/// The maps of `frames` by `text_map_with` (allocating).
fn reference(frames: &[GrayImage], params: &TextRoiParams) -> Vec<ScoreMap> {
    frames
        .iter()
        .map(|f| text_map_with(f, params).expect("text map"))
        .collect()
}

#[test]
fn text_map_into_allocates_nothing_in_steady_state_and_matches_text_map() {
    let _turn = cortex_testkit::serial();
    let (warm, run) = frames();
    assert!(run.len() >= 20);
    let parallel = TextRoiParams::DEFAULT;
    let sequential = TextRoiParams {
        parallel: false,
        ..TextRoiParams::DEFAULT
    };
    let expected = reference(&run, &sequential);
    // The detector owns separate scratch: the same maps through another
    // path, so that a scratch leak between frames could not go unseen.
    let mut detector = TextRoiDetector::new(TextRoiParams::DEFAULT).expect("params");
    for (f, e) in run.iter().zip(&expected) {
        assert_eq!(&detector.detect(f).expect("detect").map, e);
    }

    // As the engine runs it: on a pool thread, the polarities on the pool.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("pool");
    // Each worker warms its own scratch, so whichever one runs the measured
    // frames starts warm.
    pool.broadcast(|_| {
        let mut maps = [ScoreMap::zeros((0, 0)), ScoreMap::zeros((0, 0))];
        run_all(&warm, &parallel, &mut maps);
    });
    let mut maps = pool.install(|| {
        let mut maps = [ScoreMap::zeros((0, 0)), ScoreMap::zeros((0, 0))];
        // The output buffers' first frame of each size, before the count.
        run_all(&warm, &parallel, &mut maps);
        maps
    });
    let ((), count) = on_pool_allocations_during(&pool, || run_all(&run, &parallel, &mut maps));
    assert_eq!(count, 0, "allocations on the pool in steady state");
    // The last map of each size, into fresh outputs.
    let last: Vec<ScoreMap> = pool.install(|| {
        run.iter()
            .rev()
            .take(2)
            .map(|f| {
                let mut m = ScoreMap::zeros((0, 0));
                text_map_into(f, &parallel, &mut m).expect("text map");
                m
            })
            .collect()
    });
    let n = run.len();
    assert_eq!(maps[1], expected[n - 1], "1080p map");
    assert_eq!(maps[0], expected[n - 3], "640×480 map");
    assert_eq!(last[0], expected[n - 1]);
    assert_eq!(last[1], expected[n - 2]);

    // Every frame's map equals `text_map`'s, frame by frame, on the pool.
    pool.install(|| {
        let mut out = ScoreMap::zeros((0, 0));
        for (i, (f, e)) in run.iter().zip(&expected).enumerate() {
            text_map_into(f, &parallel, &mut out).expect("text map");
            assert_eq!(&out, e, "frame {i}");
        }
    });

    // Sequentially on a plain thread (the harness's), own scratch.
    let mut maps = [ScoreMap::zeros((0, 0)), ScoreMap::zeros((0, 0))];
    run_all(&warm, &sequential, &mut maps);
    let count = here_and_on_global_pool_allocations_during(|| {
        run_all(&run, &sequential, &mut maps);
    });
    assert_eq!(count, 0, "allocations on a plain thread in steady state");
    assert_eq!(maps[1], expected[n - 1]);
    assert_eq!(maps[0], expected[n - 3]);
}

/// The partition-parallel MSER path (both polarities at once, each on two
/// and on three strips, as `partitions: 0` chooses on a pool of four or six
/// threads): the same maps, and no allocation in steady state on the pool.
/// Its scratch at 1080p on tiled photos is about 250 MB (two partitioned
/// polarities), over the default retention budget of 256 MB with the
/// map's own buffers, so the test keeps up to 1 GiB (the automatic choice
/// does not partition such frames under the default budget).
///
/// Steady state comes later than on the plain path, whose buffers are
/// sized from the frame: the merged tree's buffers grow with content.
/// Measured on these frames: about 60 allocations over the first pass of
/// unseen frames, 2 (on one frame) over the second, none from the third;
/// the two passes are warm-up here.
#[test]
fn partitioned_text_map_allocates_nothing_and_matches() {
    let _turn = cortex_testkit::serial();
    let (warm, run) = frames();
    let sequential = TextRoiParams {
        parallel: false,
        ..TextRoiParams::DEFAULT
    };
    let expected = reference(&run, &sequential);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("pool");
    for strips in [2, 3] {
        let params = TextRoiParams {
            partitions: strips,
            ..TextRoiParams::DEFAULT
        };
        let budget = FrameLimits {
            max_retained_bytes: 1 << 30,
            ..FrameLimits::DEFAULT
        };
        let count = pool.install(|| {
            with_limits(budget, || {
                let mut maps = [ScoreMap::zeros((0, 0)), ScoreMap::zeros((0, 0))];
                run_all(&warm, &params, &mut maps);
                run_all(&run, &params, &mut maps);
                run_all(&run, &params, &mut maps);
                allocations_during(|| run_all(&run, &params, &mut maps))
            })
        });
        assert_eq!(count, 0, "{strips} strips: allocations on the pool");
        pool.install(|| {
            let mut out = ScoreMap::zeros((0, 0));
            for (i, (f, e)) in run.iter().zip(&expected).enumerate() {
                text_map_into(f, &params, &mut out).expect("text map");
                assert_eq!(&out, e, "{strips} strips, frame {i}");
            }
        });
    }
}
