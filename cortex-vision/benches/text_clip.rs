//! The L2 frame's two heaviest kernels on real video, one frame after the
//! other as a pipeline runs them: the text map (`text_map_into`, MSER of
//! both polarities) and the SSIM of consecutive frames (`scene_change`).
//! The gray frames are the luma planes of a YUV4MPEG2 clip (`C420*`), read
//! into memory before timing.
//!
//! Prints one line per kernel and pass: milliseconds per frame (the mean of
//! one pass over the clip). A fixed amount of work per invocation (frames ×
//! passes), so instruction counts under `valgrind --tool=callgrind` compare
//! across builds.
//!
//! `cargo bench -p cortex-vision --bench text_clip -- CLIP.y4m [FRAMES] [PASSES] [KERNELS]`
//! where KERNELS is a comma list of `text`, `text1` (one thread: both
//! polarities in sequence), `dark`, `bright` (one MSER pass, boxes only)
//! and `ssim` (default `text,ssim`), or `digest`: not timed, a hash per
//! pass of everything the MSER passes produce on the clip (the regions of
//! both polarities with their pixels in flood order, the partitioned
//! detector's regions with 2 and 3 strips, the text map's bits), to show
//! that a change to the flood leaves every output bit where it was.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::Instant;

use cortex_vision::ops::mser::{
    Mser, MserWorkspace, PartitionWorkspace, Polarity, RegionBox, Regions,
};
use cortex_vision::ops::text_roi::{text_map_into, TextRoiParams};
use cortex_vision::ops::{scene_change, GrayImage, ScoreMap};

/// The luma planes of the first `limit` frames of a YUV4MPEG2 file.
fn read_y4m(path: &str, limit: usize) -> Result<Vec<GrayImage>, String> {
    let data = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let eol = data
        .iter()
        .position(|&b| b == b'\n')
        .ok_or("no YUV4MPEG2 header")?;
    let header = std::str::from_utf8(&data[..eol]).map_err(|e| e.to_string())?;
    let field = |tag: char| -> Result<usize, String> {
        header
            .split(' ')
            .find_map(|f| f.strip_prefix(tag))
            .and_then(|v| v.parse().ok())
            .ok_or(format!("header lacks {tag}"))
    };
    let (w, h) = (field('W')?, field('H')?);
    if !header.split(' ').any(|f| f.starts_with("C420")) {
        return Err("only 4:2:0 clips".into());
    }
    let frame_bytes = w * h + 2 * (w.div_ceil(2) * h.div_ceil(2));
    let mut frames = Vec::new();
    let mut pos = eol + 1;
    while frames.len() < limit && pos < data.len() {
        let nl = data[pos..]
            .iter()
            .position(|&b| b == b'\n')
            .ok_or("truncated frame header")?;
        let start = pos + nl + 1;
        let luma = data.get(start..start + w * h).ok_or("truncated frame")?;
        frames.push(GrayImage::from_shape_vec((h, w), luma.to_vec()).map_err(|e| e.to_string())?);
        pos = start + frame_bytes;
    }
    Ok(frames)
}

fn main() {
    // `cargo bench` appends `--bench`; anything starting with `-` is ignored.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let Some(path) = args.first() else {
        eprintln!("usage: text_clip CLIP.y4m [FRAMES] [PASSES] [KERNELS]");
        std::process::exit(2);
    };
    let number = |i: usize, default: usize| -> usize {
        args.get(i).map_or(default, |s| {
            s.parse().unwrap_or_else(|_| {
                eprintln!("not a count: {s}");
                std::process::exit(2)
            })
        })
    };
    let (limit, passes) = (number(1, 60), number(2, 3));
    let kernels = args.get(3).map_or("text,ssim", String::as_str);
    let frames = match read_y4m(path, limit) {
        Ok(f) if !f.is_empty() => f,
        Ok(_) => {
            eprintln!("{path}: no frames");
            std::process::exit(2)
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2)
        }
    };
    let (h, w) = frames[0].dim();
    let single = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("one-thread pool");
    let mser = Mser::default();
    let mut ws = MserWorkspace::new();
    let mut boxes: Vec<RegionBox> = Vec::new();
    let mut map = ScoreMap::zeros((0, 0));
    let mut regions = Regions::new();
    let mut strips = PartitionWorkspace::new();
    for kernel in kernels.split(',') {
        for pass in 0..passes {
            let mut check = 0f64;
            let mut hash = 0u64;
            let t = Instant::now();
            for (i, f) in frames.iter().enumerate() {
                match kernel {
                    "text" => {
                        text_map_into(f, &TextRoiParams::DEFAULT, &mut map).expect("text map");
                        check += f64::from(map[[h / 2, w / 2]]);
                    }
                    "text1" => single.install(|| {
                        text_map_into(f, &TextRoiParams::DEFAULT, &mut map).expect("text map");
                        check += f64::from(map[[h / 2, w / 2]]);
                    }),
                    "dark" | "bright" => {
                        let pol = if kernel == "dark" {
                            Polarity::Dark
                        } else {
                            Polarity::Bright
                        };
                        mser.detect_boxes_into(&mut ws, f, pol, &mut boxes)
                            .expect("mser");
                        check += boxes.len() as f64;
                    }
                    "digest" => {
                        let d = digest(&mser, &mut ws, &mut strips, f, &mut regions, &mut map);
                        hash = hash.rotate_left(7) ^ d;
                    }
                    "ssim" => {
                        let prev = &frames[i.saturating_sub(1)];
                        check += scene_change(f, prev).expect("ssim").ssim.unwrap_or(0.0);
                    }
                    other => {
                        eprintln!("unknown kernel {other}");
                        std::process::exit(2)
                    }
                }
            }
            let ms = t.elapsed().as_secs_f64() * 1e3 / frames.len() as f64;
            if kernel == "digest" {
                println!("{kernel:6} {w}x{h} pass {pass}: {hash:016x}");
            } else {
                println!("{kernel:6} {w}x{h} pass {pass}: {ms:8.3} ms/frame (check {check:.6})");
            }
        }
    }
}

/// A hash of every output of the MSER passes on `f` (see the module docs),
/// one frame's.
fn digest(
    mser: &Mser,
    ws: &mut MserWorkspace,
    strips: &mut PartitionWorkspace,
    f: &cortex_vision::ops::GrayImage,
    regions: &mut Regions,
    map: &mut ScoreMap,
) -> u64 {
    let mut h = DefaultHasher::new();
    mser.detect_into(ws, f, Polarity::Both, regions)
        .expect("mser");
    for (b, px) in regions.iter() {
        (b, px).hash(&mut h);
    }
    for parts in [2, 3] {
        mser.detect_partitioned_into(strips, f, Polarity::Both, parts, regions)
            .expect("partitioned mser");
        for (b, px) in regions.iter() {
            (b, px).hash(&mut h);
        }
    }
    text_map_into(f, &TextRoiParams::DEFAULT, map).expect("text map");
    for v in map.iter() {
        v.to_bits().hash(&mut h);
    }
    h.finish()
}
