//! `run --encode`: the L2 program encodes the synthetic clip with its
//! regions, or its per-block quantiser-offset map, as `AVRegionOfInterest`
//! side data; the decoded output against the source shows the regions (the
//! map's finer blocks) got the bits. And every bad encode option gives one
//! line and its exit code.

#![cfg(feature = "ffmpeg")]

mod support;

use std::path::{Path, PathBuf};

use cortex_runner::sources::{FfmpegSource, FrameSource};
use cortex_runner::{App, Record, RunnerError};
use cortex_vision::clip::SyntheticClip;
use cortex_vision::l2::{L2Mode, L2Outputs, L2};
use cortex_vision::ops::qp_map::QpMap;
use cortex_vision::ops::roi_regions::Region;
use cortex_vision::ops::RgbFrame;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cortex-encode-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn app(with_regions: bool) -> App<L2> {
    let app = App::<L2>::new("l2", |o: &L2Outputs| {
        Record::new().field("regions", o.regions.regions.len())
    });
    if with_regions {
        app.encode_regions(|o: &L2Outputs| o.regions.regions.clone())
            .encode_qp_map(|o: &L2Outputs| &o.qp_map)
    } else {
        app
    }
}

/// Runs the program; the result and stderr.
fn run(app: App<L2>, args: &[&str]) -> (Result<(), RunnerError>, String) {
    let (result, _, stderr) = support::run_captured(app, args);
    (result, stderr)
}

const W: usize = 320;
const H: usize = 240;
const FRAMES: u64 = 24;

/// Encodes the synthetic clip with `--roi roi` (shown as `shown` in the
/// summary) and `extra` options; the file's size.
fn encode(path: &Path, codec: &str, roi: &str, shown: &str, extra: &[&str]) -> u64 {
    let p = path.to_str().unwrap();
    let frames = FRAMES.to_string();
    let mut args = vec![
        "run", "--size", "320x240", "--frames", &frames, "--encode", p, "--codec", codec, "--roi",
        roi,
    ];
    args.extend_from_slice(extra);
    let (result, stderr) = run(app(true), &args);
    result.unwrap();
    assert!(
        stderr.contains(&format!(
            "{FRAMES} frames encoded with {codec} (ROI {shown})"
        )),
        "{stderr}"
    );
    std::fs::metadata(path).unwrap().len()
}

/// Squared error and sample count inside and outside `mask`.
fn errors(a: &RgbFrame, b: &RgbFrame, mask: &[bool], acc: &mut [(f64, u64); 2]) {
    for (i, (pa, pb)) in a
        .as_slice()
        .unwrap()
        .chunks_exact(3)
        .zip(b.as_slice().unwrap().chunks_exact(3))
        .enumerate()
    {
        let slot = &mut acc[usize::from(!mask[i])];
        for c in 0..3 {
            let d = f64::from(pa[c]) - f64::from(pb[c]);
            slot.0 += d * d;
        }
        slot.1 += 3;
    }
}

fn psnr((sse, n): (f64, u64)) -> f64 {
    let mse = sse / n.max(1) as f64;
    10.0 * (255.0f64 * 255.0 / mse.max(1e-12)).log10()
}

/// Luma (BT.601) of an RGB frame, as f32.
fn luma(f: &RgbFrame) -> Vec<f32> {
    f.as_slice()
        .unwrap()
        .chunks_exact(3)
        .map(|p| 0.299 * f32::from(p[0]) + 0.587 * f32::from(p[1]) + 0.114 * f32::from(p[2]))
        .collect()
}

/// SSIM on luma over 11×11 Gaussian windows (σ = 1.5, the constants of
/// `cortex_vision::ops::ssim`), one window per pixel whose window lies
/// inside the frame; each window's SSIM is summed into `acc[0]` when its
/// centre pixel is inside `mask`, `acc[1]` otherwise (sum, count).
fn ssim_split(a: &RgbFrame, b: &RgbFrame, mask: &[bool], acc: &mut [(f64, u64); 2]) {
    use cortex_vision::ops::ssim::{C1, C2};
    const R: usize = 5;
    let (h, w) = (a.shape()[0], a.shape()[1]);
    if w <= 2 * R || h <= 2 * R {
        return;
    }
    let g: Vec<f32> = {
        let k: Vec<f32> = (0..=2 * R)
            .map(|i| (-((i as f32 - R as f32).powi(2)) / (2.0 * 1.5 * 1.5)).exp())
            .collect();
        let sum: f32 = k.iter().sum();
        k.iter().map(|v| v / sum).collect()
    };
    let (la, lb) = (luma(a), luma(b));
    let wo = w - 2 * R;
    // Horizontal pass of a, b, a², b², ab over every row.
    let mut hz = vec![[0f32; 5]; h * wo];
    for y in 0..h {
        for x in 0..wo {
            let mut s = [0f32; 5];
            for (k, &gk) in g.iter().enumerate() {
                let (p, q) = (la[y * w + x + k], lb[y * w + x + k]);
                s[0] += gk * p;
                s[1] += gk * q;
                s[2] += gk * p * p;
                s[3] += gk * q * q;
                s[4] += gk * p * q;
            }
            hz[y * wo + x] = s;
        }
    }
    let (c1, c2) = (C1 as f32, C2 as f32);
    for y in 0..h - 2 * R {
        for x in 0..wo {
            let mut s = [0f32; 5];
            for (k, &gk) in g.iter().enumerate() {
                let v = hz[(y + k) * wo + x];
                for j in 0..5 {
                    s[j] += gk * v[j];
                }
            }
            let (ma, mb) = (s[0], s[1]);
            let (va, vb, cov) = (s[2] - ma * ma, s[3] - mb * mb, s[4] - ma * mb);
            let ssim = ((2.0 * ma * mb + c1) * (2.0 * cov + c2))
                / ((ma * ma + mb * mb + c1) * (va + vb + c2));
            let slot = &mut acc[usize::from(!mask[(y + R) * w + x + R])];
            slot.0 += f64::from(ssim);
            slot.1 += 1;
        }
    }
}

fn mean((sum, n): (f64, u64)) -> f64 {
    sum / n.max(1) as f64
}

#[test]
fn masked_ssim_is_one_on_equal_frames_and_drops_where_they_differ() {
    let clip = SyntheticClip::new(64, 48);
    let a = clip.frame(3);
    let mut b = a.clone();
    // Noise on the left half only.
    for ((y, x, c), v) in b.indexed_iter_mut() {
        if x < 32 {
            *v = v.wrapping_add(((x * 7 + y * 13 + c * 5) % 41) as u8);
        }
    }
    let left: Vec<bool> = (0..64 * 48).map(|i| i % 64 < 32).collect();
    let mut same = [(0.0, 0u64); 2];
    ssim_split(&a, &a, &left, &mut same);
    assert!((mean(same[0]) - 1.0).abs() < 1e-4 && (mean(same[1]) - 1.0).abs() < 1e-4);
    assert_eq!(same[0].1 + same[1].1, (64 - 10) * (48 - 10));
    let mut acc = [(0.0, 0u64); 2];
    ssim_split(&b, &a, &left, &mut acc);
    assert!(mean(acc[0]) < 0.9, "noisy half {}", mean(acc[0]));
    // Windows centred right of the noise still reach 5 px into it.
    assert!(mean(acc[1]) > mean(acc[0]), "{acc:?}");
}

fn mask_of(regions: &[Region]) -> Vec<bool> {
    let mut mask = vec![false; W * H];
    for r in regions {
        let b = r.bbox;
        for y in b.y..b.y + b.height {
            mask[y * W + b.x..y * W + b.x + b.width].fill(true);
        }
    }
    mask
}

#[test]
fn regions_get_the_bits_when_the_side_data_is_attached() {
    let dir = scratch("roi");
    let (on, off, bg) = (dir.join("on.mkv"), dir.join("off.mkv"), dir.join("bg.mkv"));
    let crf: &[&str] = &["--crf", "30"];
    // `on` is the older name of `regions`.
    let bytes_on = encode(
        &on,
        "libx264",
        "on",
        "regions",
        &[crf, &["--roi-background", "0"]].concat(),
    );
    let bytes_off = encode(&off, "libx264", "off", "off", crf);
    let bytes_bg = encode(
        &bg,
        "libx264",
        "regions",
        "regions",
        &[crf, &["--roi-background", "0.2"]].concat(),
    );
    // The source frames and their regions, as the encoder saw them.
    let clip = SyntheticClip::new(W, H);
    let mut l2 = L2::new();
    let mut masks = Vec::new();
    let mut covered = 0usize;
    for f in 0..FRAMES {
        let out = l2.run(L2Mode::Balanced, &clip.frame(f)).unwrap();
        let mask = mask_of(&out.regions.regions);
        covered += mask.iter().filter(|&&m| m).count();
        masks.push(mask);
    }
    // The regions are a part of the frame, not all of it.
    let share = covered as f64 / (W * H * FRAMES as usize) as f64;
    assert!(share > 0.02 && share < 0.8, "regions cover {share:.3}");
    let mut acc = [[(0.0, 0u64); 2]; 3];
    let mut ssim = [[(0.0, 0u64); 2]; 3];
    for (k, path) in [&on, &off, &bg].into_iter().enumerate() {
        let mut src = FfmpegSource::open(path.to_str().unwrap()).unwrap();
        let mut n = 0;
        while let Some(frame) = src.next_frame() {
            let frame = frame.unwrap();
            let i = frame.index as usize;
            let source = clip.frame(i as u64);
            errors(&frame.image, &source, &masks[i], &mut acc[k]);
            ssim_split(&frame.image, &source, &masks[i], &mut ssim[k]);
            n += 1;
        }
        assert_eq!(n, FRAMES);
    }
    let (s_on, s_off) = (mean(ssim[0][0]), mean(ssim[1][0]));
    eprintln!(
        "SSIM in the regions: on {s_on:.4}, off {s_off:.4}; rest: on {:.4}, off {:.4}",
        mean(ssim[0][1]),
        mean(ssim[1][1])
    );
    // Structural similarity agrees with PSNR on where the bits went.
    assert!(s_on > s_off, "SSIM regions: on {s_on:.4}, off {s_off:.4}");
    let (in_on, out_on) = (psnr(acc[0][0]), psnr(acc[0][1]));
    let (in_off, out_off) = (psnr(acc[1][0]), psnr(acc[1][1]));
    eprintln!(
        "ROI on: {bytes_on} B, regions {in_on:.2} dB, rest {out_on:.2} dB; \
         off: {bytes_off} B, regions {in_off:.2} dB, rest {out_off:.2} dB"
    );
    // Dropping the side data makes the two encodes identical, and these
    // fail.
    assert!(
        in_on > in_off + 1.0,
        "regions: on {in_on:.2} dB, off {in_off:.2} dB"
    );
    assert!(bytes_on > bytes_off, "on {bytes_on} B, off {bytes_off} B");
    // The gain is in the regions: outside them the quality moves less.
    assert!(in_on - in_off > out_on - out_off);
    // A background offset takes bits from outside the regions.
    let (in_bg, out_bg) = (psnr(acc[2][0]), psnr(acc[2][1]));
    eprintln!("ROI on, background +0.2: {bytes_bg} B, regions {in_bg:.2} dB, rest {out_bg:.2} dB");
    assert!(
        bytes_bg < bytes_on,
        "background {bytes_bg} B, on {bytes_on} B"
    );
    assert!(
        out_bg < out_on - 1.0,
        "rest: background {out_bg:.2} dB, on {out_on:.2} dB"
    );
}

/// Pixels of the blocks the map gives a finer quantiser (negative offset).
fn finer_blocks(map: &QpMap, w: usize, h: usize) -> Vec<bool> {
    let mut mask = vec![false; w * h];
    for y in 0..h {
        for x in 0..w {
            mask[y * w + x] = map.at(y / map.block, x / map.block) < 0.0;
        }
    }
    mask
}

/// Encodes with `--roi map` and `--roi off` on `codec` at `crf`; per encode,
/// bytes and PSNR inside the map's finer blocks and outside them.
fn map_against_plain(codec: &str, crf: &str) -> [(u64, f64, f64); 2] {
    let dir = scratch(&format!("map-{codec}"));
    let clip = SyntheticClip::new(W, H);
    let mut l2 = L2::new();
    let mut masks = Vec::new();
    let mut finer = 0usize;
    for f in 0..FRAMES {
        let out = l2.run(L2Mode::Balanced, &clip.frame(f)).unwrap();
        assert_eq!(out.qp_map.block, 16);
        let mask = finer_blocks(&out.qp_map, W, H);
        finer += mask.iter().filter(|&&m| m).count();
        masks.push(mask);
    }
    // The finer blocks are a part of the frame, not all of it.
    let share = finer as f64 / (W * H * FRAMES as usize) as f64;
    assert!(share > 0.02 && share < 0.8, "finer blocks cover {share:.3}");
    let mut out = [(0, 0.0, 0.0); 2];
    for (k, roi) in ["map", "off"].into_iter().enumerate() {
        let path = dir.join(format!("{roi}.mkv"));
        let bytes = encode(&path, codec, roi, roi, &["--crf", crf]);
        let mut acc = [(0.0, 0u64); 2];
        let mut src = FfmpegSource::open(path.to_str().unwrap()).unwrap();
        let mut n = 0;
        while let Some(frame) = src.next_frame() {
            let frame = frame.unwrap();
            let i = frame.index as usize;
            errors(&frame.image, &clip.frame(i as u64), &masks[i], &mut acc);
            n += 1;
        }
        assert_eq!(n, FRAMES);
        out[k] = (bytes, psnr(acc[0]), psnr(acc[1]));
    }
    let [(b_map, in_map, out_map), (b_off, in_off, out_off)] = out;
    eprintln!(
        "{codec} CRF {crf}: map {b_map} B, finer blocks {in_map:.2} dB, rest {out_map:.2} dB; \
         off {b_off} B, finer blocks {in_off:.2} dB, rest {out_off:.2} dB"
    );
    out
}

#[test]
fn map_blocks_get_the_bits_when_the_side_data_is_attached() {
    let codec = "libx264";
    let [(b_map, in_map, out_map), (b_off, in_off, out_off)] = map_against_plain(codec, "30");
    // Dropping the side data makes the two encodes identical, and these
    // fail.
    assert!(
        in_map > in_off + 1.0,
        "{codec}: finer blocks: map {in_map:.2} dB, off {in_off:.2} dB"
    );
    // The map moves bits: the rest (positive offsets) loses quality,
    // less than the finer blocks gain.
    assert!(
        out_map < out_off,
        "{codec}: rest: map {out_map:.2} dB, off {out_off:.2} dB"
    );
    assert!(in_map - in_off > out_off - out_map);
    assert_ne!(b_map, b_off);
}

#[test]
fn plain_encode_with_any_encoder() {
    let dir = scratch("plain");
    let path = dir.join("out.mp4");
    let (result, stderr) = run(
        app(false),
        &[
            "run",
            "--size",
            "64x48",
            "--frames",
            "3",
            "--encode",
            path.to_str().unwrap(),
            "--codec",
            "mpeg4",
            "--roi",
            "off",
        ],
    );
    result.unwrap();
    assert!(
        stderr.contains("3 frames encoded with mpeg4 (ROI off)"),
        "{stderr}"
    );
    let mut src = FfmpegSource::open(path.to_str().unwrap()).unwrap();
    let frames: Vec<_> = std::iter::from_fn(|| src.next_frame()).collect();
    assert_eq!(src.decode_errors(), 0);
    assert_eq!(src.packets(), 3);
    assert_eq!(frames.len(), 3);
    assert_eq!(frames[0].as_ref().unwrap().size(), (64, 48));
}

#[test]
fn bad_encode_options_are_one_line_with_their_exit_code() {
    let dir = scratch("bad");
    let out = dir.join("out.mkv");
    let out = out.to_str().unwrap();
    let odd_ext = format!("{}/out.nosuchext", dir.display());
    let cases: Vec<(bool, Vec<&str>, u8, &str)> = vec![
        (
            true,
            vec!["--encode", out, "--codec", "nosuchcodec"],
            2,
            "--codec nosuchcodec: this FFmpeg has no video encoder",
        ),
        (
            true,
            vec!["--encode", out, "--codec", "mpeg4"],
            2,
            "does not read region-of-interest side data",
        ),
        (
            false,
            vec!["--encode", out],
            2,
            "names no regions of interest; add --roi off",
        ),
        (
            true,
            vec!["--codec", "libx264"],
            2,
            "--codec needs --encode FILE",
        ),
        (
            false,
            vec!["--encode", out, "--roi", "map"],
            2,
            "--roi map: program `l2` names no quantiser-offset map",
        ),
        (
            true,
            vec!["--encode", out, "--roi", "map", "--roi-strength", "0.1"],
            2,
            "--roi-strength applies to --roi regions",
        ),
        (
            true,
            vec!["--encode", out, "--roi", "map", "--codec", "mpeg4"],
            2,
            "does not read region-of-interest side data",
        ),
        (
            true,
            vec!["--encode", out, "--roi-strength", "2"],
            2,
            "--roi-strength: must be in (0, 1]",
        ),
        (
            true,
            vec!["--encode", out, "--roi-background=-0.1"],
            2,
            "--roi-background: must be in [0, 1]",
        ),
        (
            true,
            vec!["--encode", "/nonexistent/dir/out.mkv"],
            1,
            "--encode: /nonexistent/dir/out.mkv: cannot write it",
        ),
        (true, vec!["--encode", &odd_ext], 2, "knows no container"),
    ];
    for (regions, args, code, want) in cases {
        let mut full = vec!["run", "--size", "64x48", "--frames", "2"];
        full.extend(args.iter().copied());
        let (result, _) = run(app(regions), &full);
        let e = result.expect_err(want);
        let msg = e.to_string();
        assert!(msg.contains(want), "{args:?}: {msg}");
        assert_eq!(msg.lines().count(), 1, "{msg}");
        assert_eq!(e.exit_code(), code, "{args:?}: {msg}");
    }
    // Odd sizes cannot be 4:2:0: a failed run (1), not a usage error, and
    // no empty file left behind.
    let (result, _) = run(
        app(true),
        &["run", "--size", "65x48", "--frames", "2", "--encode", out],
    );
    let e = result.unwrap_err();
    assert!(e.to_string().contains("needs even sides"), "{e}");
    assert_eq!(e.exit_code(), 1);
    assert!(!Path::new(out).exists(), "a refused encode left {out}");
    // `--force` belongs to `--encode`.
    let (result, _) = run(app(true), &["run", "--frames", "2", "--force"]);
    let e = result.unwrap_err();
    assert!(e.to_string().contains("--force needs --encode FILE"), "{e}");
    assert_eq!(e.exit_code(), 2);
}

#[test]
fn an_existing_output_is_refused_unless_forced() {
    let dir = scratch("exists");
    let out = dir.join("out.mkv");
    let p = out.to_str().unwrap();
    std::fs::write(&out, b"a video worth keeping").unwrap();
    let args = ["run", "--size", "64x48", "--frames", "2", "--encode", p];
    let (result, _) = run(app(true), &args);
    let e = result.unwrap_err();
    assert!(e.to_string().contains("the file exists"), "{e}");
    assert!(e.to_string().contains("--force"), "{e}");
    assert_eq!(e.exit_code(), 2);
    assert_eq!(std::fs::read(&out).unwrap(), b"a video worth keeping");
    let mut forced = args.to_vec();
    forced.push("--force");
    let (result, stderr) = run(app(true), &forced);
    result.unwrap();
    assert!(stderr.contains("2 frames encoded"), "{stderr}");
    let mut decoded = FfmpegSource::open(p).unwrap();
    assert_eq!(std::iter::from_fn(|| decoded.next_frame()).count(), 2);
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_stops_the_encode_at_its_first_write() {
    let dir = scratch("full");
    // A device whose every write fails with ENOSPC, as a full disk's.
    let out = dir.join("full.mkv");
    std::os::unix::fs::symlink("/dev/full", &out).unwrap();
    let p = out.to_str().unwrap();
    let args = [
        "run", "--json", "-q", "--size", "64x48", "--frames", "400", "--encode", p, "--force",
    ];
    let (result, stdout, _) = support::run_captured(app(true), &args);
    let e = result.unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("No space left on device"), "{msg}");
    assert_eq!(e.exit_code(), 1);
    // The header is the first write: it fails on the first frame, before
    // that frame's line is printed.
    assert_eq!(stdout, "", "{msg}");
}

/// Every kind of existing path follows one rule: without `--force` it is
/// refused at once (a link to a device, a FIFO), with it a device is
/// written and a FIFO only while a program reads it — never a wait.
#[cfg(target_os = "linux")]
#[test]
fn an_existing_path_of_any_kind_is_refused_unless_forced() {
    let dir = scratch("kinds");
    let link = dir.join("null.mkv");
    std::os::unix::fs::symlink("/dev/null", &link).unwrap();
    let fifo = dir.join("pipe.mkv");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let base = ["run", "-q", "--size", "64x48", "--frames", "2", "--encode"];
    for (path, kind) in [
        (&link, "a symbolic link to a character device"),
        (&fifo, "a FIFO"),
    ] {
        let mut args = base.to_vec();
        args.push(path.to_str().unwrap());
        let (result, _) = run(app(true), &args);
        let e = result.unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains(&format!("it exists ({kind}; add --force")),
            "{msg}"
        );
        assert_eq!(e.exit_code(), 2);
    }
    // Forced: the device takes the video; the FIFO, with no reader, is
    // refused at once instead of blocking the run.
    let forced = |path: &Path| {
        let mut args = base.to_vec();
        args.extend([path.to_str().unwrap(), "--force"]);
        run(app(true), &args)
    };
    forced(&link).0.expect("the device takes the video");
    let e = forced(&fifo).0.unwrap_err();
    assert!(
        e.to_string().contains("a FIFO that no program reads"),
        "{e}"
    );
    assert_eq!(e.exit_code(), 2);
    // With a reader, the whole video comes through the pipe.
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    // The reader's open waits for a writer, the check's open for a reader:
    // retry until the reader is there.
    let mut tries = 0;
    let result = loop {
        let (result, _) = forced(&fifo);
        match &result {
            Err(e) if e.to_string().contains("no program reads") && tries < 200 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            _ => break result,
        }
    };
    result.unwrap();
    let bytes = reader.join().unwrap();
    let copy = dir.join("copy.mkv");
    std::fs::write(&copy, &bytes).unwrap();
    let mut decoded = FfmpegSource::open(copy.to_str().unwrap()).unwrap();
    assert_eq!(std::iter::from_fn(|| decoded.next_frame()).count(), 2);
}

/// Box-wise mask of `w × h` from region boxes.
fn mask_boxes(boxes: &[cortex_vision::ops::BBox], w: usize, h: usize) -> Vec<bool> {
    let mut mask = vec![false; w * h];
    for b in boxes {
        for y in b.y..(b.y + b.height).min(h) {
            let x1 = (b.x + b.width).min(w);
            mask[y * w + b.x..y * w + x1].fill(true);
        }
    }
    mask
}

/// The measurement behind docs/encoding.md, on a real clip:
/// `CORTEX_ROI_CLIP=clip.avi [CORTEX_ROI_FRAMES=N] [CORTEX_ROI_CODEC=libx264]
/// [CORTEX_ROI_CRFS=23,26] cargo test --release -p cortex-runner --features
/// ffmpeg --test ffmpeg_encode -- --ignored --nocapture measure`.
/// Per CRF and `CORTEX_ROI_MODES` (default `off,regions,map`), each encode
/// decoded and compared with the source: bytes, PSNR (RGB) and SSIM (luma,
/// 11×11 Gaussian windows by their centre pixel) inside the frame's regions
/// and outside.
#[test]
#[ignore = "needs a clip (CORTEX_ROI_CLIP)"]
fn measure_clip() {
    let Ok(clip) = std::env::var("CORTEX_ROI_CLIP") else {
        eprintln!("CORTEX_ROI_CLIP not set");
        return;
    };
    let frames: Option<u64> = std::env::var("CORTEX_ROI_FRAMES")
        .ok()
        .and_then(|v| v.parse().ok());
    let codec = std::env::var("CORTEX_ROI_CODEC").unwrap_or_else(|_| "libx264".into());
    let crfs = std::env::var("CORTEX_ROI_CRFS").unwrap_or_else(|_| "23".into());
    let strength = std::env::var("CORTEX_ROI_STRENGTH").unwrap_or_else(|_| "0.2".into());
    let background = std::env::var("CORTEX_ROI_BACKGROUND").unwrap_or_else(|_| "0".into());
    let modes = std::env::var("CORTEX_ROI_MODES").unwrap_or_else(|_| "off,regions,map".into());
    let dir = scratch("measure");
    // The regions of every frame, as the encodes see them.
    let mut src = FfmpegSource::open(&clip).unwrap();
    let mut l2 = L2::new();
    let mut boxes = Vec::new();
    let mut size = (0, 0);
    let started = std::time::Instant::now();
    while let Some(f) = src.next_frame() {
        let f = f.unwrap();
        size = f.size();
        let out = l2.run(L2Mode::Balanced, &f.image).unwrap();
        boxes.push(
            out.regions
                .regions
                .iter()
                .map(|r| r.bbox)
                .collect::<Vec<_>>(),
        );
        if frames.is_some_and(|n| boxes.len() as u64 >= n) {
            break;
        }
    }
    let l2_s = started.elapsed().as_secs_f64();
    let (w, h) = size;
    let n = boxes.len();
    let covered: usize = boxes
        .iter()
        .map(|b| mask_boxes(b, w, h).iter().filter(|&&m| m).count())
        .sum();
    println!(
        "clip {clip}: {w}x{h}, {n} frames, L2 {:.1} ms/frame; regions cover {:.1} % of the pixels",
        l2_s * 1e3 / n as f64,
        100.0 * covered as f64 / (w * h * n) as f64
    );
    println!(
        "| codec | crf | ROI | bytes | bytes/frame | PSNR regions | PSNR rest | SSIM regions | SSIM rest | run s |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let nframes = n.to_string();
    for crf in crfs.split(',') {
        for roi in modes.split(',') {
            let path = dir.join(format!("{crf}-{roi}.mkv"));
            let p = path.to_str().unwrap();
            let t = std::time::Instant::now();
            let mut args = vec![
                "run", "-q", "-i", &clip, "--frames", &nframes, "--encode", p, "--codec", &codec,
                "--crf", crf, "--roi", roi,
            ];
            if roi == "regions" || roi == "on" {
                args.extend(["--roi-strength", &strength, "--roi-background", &background]);
            }
            let (result, stderr) = run(app(true), &args);
            let secs = t.elapsed().as_secs_f64();
            if let Err(e) = result {
                panic!("{e}\n{stderr}");
            }
            let bytes = std::fs::metadata(&path).unwrap().len();
            let mut orig = FfmpegSource::open(&clip).unwrap();
            let mut dec = FfmpegSource::open(p).unwrap();
            let mut acc = [(0.0, 0u64); 2];
            let mut ssim = [(0.0, 0u64); 2];
            for b in &boxes {
                let (Some(Ok(a)), Some(Ok(d))) = (orig.next_frame(), dec.next_frame()) else {
                    panic!("short decode");
                };
                let mask = mask_boxes(b, w, h);
                errors(&d.image, &a.image, &mask, &mut acc);
                ssim_split(&d.image, &a.image, &mask, &mut ssim);
            }
            println!(
                "| {codec} | {crf} | {roi} | {bytes} | {:.0} | {:.2} | {:.2} | {:.4} | {:.4} | {secs:.1} |",
                bytes as f64 / n as f64,
                psnr(acc[0]),
                psnr(acc[1]),
                mean(ssim[0]),
                mean(ssim[1])
            );
        }
    }
}
