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

/// Stdout shared with the test while a run goes on: the test waits until
/// the lines it expects are out.
#[derive(Clone, Default)]
pub struct Watched(std::sync::Arc<(std::sync::Mutex<Vec<u8>>, std::sync::Condvar)>);

impl std::io::Write for Watched {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let (bytes, changed) = &*self.0;
        bytes.lock().unwrap().extend_from_slice(buf);
        changed.notify_all();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Watched {
    /// Waits until `enough` holds of the JSON lines printed so far. Only a
    /// guard against a hang (the defect this catches would wait forever):
    /// a generous deadline, never a measure of speed.
    pub fn wait_until(&self, what: &str, enough: impl Fn(&[serde_json::Value]) -> bool) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
        let (bytes, changed) = &*self.0;
        let mut b = bytes.lock().unwrap();
        loop {
            let text = String::from_utf8_lossy(&b);
            let lines: Vec<serde_json::Value> = text
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            if enough(&lines) {
                return;
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            assert!(
                !left.is_zero(),
                "still waiting for {what}; printed:\n{text}"
            );
            b = changed.wait_timeout(b, left).unwrap().0;
        }
    }

    /// Everything printed so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0 .0.lock().unwrap()).into_owned()
    }

    pub fn lines(&self) -> Vec<serde_json::Value> {
        let b = self.0 .0.lock().unwrap();
        String::from_utf8_lossy(&b)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// Runs L2 with `args` on a thread of its own (the test goes on beside
/// it), its stdin `stdin` and stdout `out`; returns the result and stderr.
pub fn run_beside(
    args: Vec<String>,
    stdin: Box<dyn std::io::Read + Send>,
    out: Watched,
) -> std::thread::JoinHandle<(Result<(), String>, String)> {
    std::thread::spawn(move || {
        let mut stdout = out;
        let mut stderr = Vec::new();
        let io = cortex::runner::Io {
            stdin,
            stdout: &mut stdout,
            stderr: &mut stderr,
            progress: false,
        };
        let mut full = vec!["prog".to_string()];
        full.extend(args);
        let r = crate::l2::app()
            .run_with(full, io)
            .map_err(|e| e.to_string());
        (r, String::from_utf8(stderr).unwrap())
    })
}
