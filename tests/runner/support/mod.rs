//! Shared helpers of the runner tests: run a program in-process with
//! captured streams, write Y4M streams and PNG frames.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use cortex::ops::RgbFrame;
use cortex::runner::{App, Io, RunnerError};
use cortex::Pipeline;

/// What a run printed and returned.
pub struct Outcome {
    pub result: Result<(), RunnerError>,
    pub stdout: String,
    pub stderr: String,
}

impl Outcome {
    /// The error's one line; panics (fails the test) on success.
    pub fn error(&self) -> String {
        match &self.result {
            Ok(()) => panic!("expected an error; stdout:\n{}", self.stdout),
            Err(e) => e.to_string(),
        }
    }

    /// Asserts success and returns stdout.
    pub fn ok(&self) -> &str {
        if let Err(e) = &self.result {
            panic!("run failed: {e}\nstdout:\n{}", self.stdout);
        }
        &self.stdout
    }

    /// Parses every stdout line as JSON.
    pub fn json_lines(&self) -> Vec<serde_json::Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line {l}: {e}")))
            .collect()
    }
}

/// Runs `app` with `args` (without the program name) and `stdin`.
pub fn run<P: Pipeline + 'static>(app: App<P>, args: &[&str], stdin: Vec<u8>) -> Outcome {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let io = Io {
        stdin: Box::new(std::io::Cursor::new(stdin)),
        stdout: &mut out,
        stderr: &mut err,
        progress: false,
    };
    let mut full = vec!["prog"];
    full.extend_from_slice(args);
    let result = app.run_with(full, io);
    Outcome {
        result,
        stdout: String::from_utf8(out).expect("stdout is UTF-8"),
        stderr: String::from_utf8(err).expect("stderr is UTF-8"),
    }
}

/// BT.601 limited-range RGB → YCbCr (the inverse of the runner's
/// conversion), rounded.
pub fn rgb_to_yuv(r: u8, g: u8, b: u8) -> [u8; 3] {
    let (r, g, b) = (f64::from(r), f64::from(g), f64::from(b));
    let y = 16.0 + (65.481 * r + 128.553 * g + 24.966 * b) / 255.0;
    let cb = 128.0 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255.0;
    let cr = 128.0 + (112.0 * r - 93.786 * g - 18.214 * b) / 255.0;
    [y, cb, cr].map(|v| v.round().clamp(0.0, 255.0) as u8)
}

/// A Y4M stream of `frames` in colour space `cs` (`420jpeg` or `444`).
pub fn y4m(frames: &[RgbFrame], cs: &str) -> Vec<u8> {
    let (h, w, _) = frames[0].dim();
    let mut out = format!("YUV4MPEG2 W{w} H{h} F30:1 Ip A1:1 C{cs}\n").into_bytes();
    for f in frames {
        out.extend_from_slice(b"FRAME\n");
        let yuv: Vec<[u8; 3]> = f
            .as_slice()
            .unwrap()
            .chunks_exact(3)
            .map(|p| rgb_to_yuv(p[0], p[1], p[2]))
            .collect();
        out.extend(yuv.iter().map(|p| p[0]));
        if cs == "444" {
            out.extend(yuv.iter().map(|p| p[1]));
            out.extend(yuv.iter().map(|p| p[2]));
        } else {
            // 4:2:0: the mean of each 2×2 block.
            let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
            for plane in [1, 2] {
                for cy in 0..ch {
                    for cx in 0..cw {
                        let mut sum = 0u32;
                        let mut n = 0u32;
                        for (dy, dx) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                            let (y, x) = (2 * cy + dy, 2 * cx + dx);
                            if y < h && x < w {
                                sum += u32::from(yuv[y * w + x][plane]);
                                n += 1;
                            }
                        }
                        out.push(((sum + n / 2) / n) as u8);
                    }
                }
            }
        }
    }
    out
}

/// Writes `frame` as a PNG.
pub fn write_png(path: &Path, frame: &RgbFrame) {
    let (h, w, _) = frame.dim();
    image::RgbImage::from_raw(w as u32, h as u32, frame.iter().copied().collect())
        .unwrap()
        .save(path)
        .unwrap();
}

/// A fresh empty directory under the target's temp area.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cortex-runner-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Asserts a Chrome trace has exactly one slice per running node and frame
/// `0..frames`, frame `f` running `plans[f]` (the last plan for every later
/// frame); returns its events.
pub fn assert_one_slice_per_node_and_frame(
    trace: &serde_json::Value,
    ir: &cortex::model::ir::GraphIr,
    plans: &[&cortex::model::plan::Plan],
    frames: u64,
) -> Vec<serde_json::Value> {
    let events = trace["traceEvents"]
        .as_array()
        .expect("traceEvents")
        .clone();
    for frame in 0..frames {
        let plan = plans[(frame as usize).min(plans.len() - 1)];
        for (id, node) in ir.nodes.iter().enumerate() {
            let n = events
                .iter()
                .filter(|e| {
                    e["cat"] == "node"
                        && e["name"] == node.name.as_ref()
                        && e["args"]["frame"] == frame
                })
                .count();
            let runs = plan.order.iter().any(|&o| o as usize == id);
            assert_eq!(n, usize::from(runs), "node {} frame {frame}", node.name);
        }
    }
    events
}

/// The plan the L2 command runs after its first frame when it prints its
/// results only: `plan` cut to what its record reads.
pub fn l2_record_plan(plan: &cortex::model::plan::Plan) -> cortex::model::plan::Plan {
    let ir = cortex::l2::L2::ir();
    let reads = cortex::run::OutputSet::named(ir, cortex::runner::l2::RECORD_READS).unwrap();
    cortex::passes::dce::plan_for_outputs(ir, plan.zero_pattern, reads, "record")
}
