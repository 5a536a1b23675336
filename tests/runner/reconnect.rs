//! `--reconnect`: a live network input served by a real server (the
//! `ffmpeg` program streaming a recorded clip over HTTP at its frame rate,
//! on a loopback port the test picks) is killed mid-run and started again: the
//! stream goes on, the frames missed while it was away are counted in the
//! JSON and the summary, and the frames before the loss are those the
//! same clip gives read from its file.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::l2;
use crate::support::*;

/// Frames a second the clip is made and served at.
const RATE: u64 = 25;

fn ffmpeg() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("ffmpeg"))
        .find(|p| p.is_file())
}

/// Where Debian's opencv-doc keeps its recorded surveillance clip.
const VTEST: &str = "/usr/share/doc/opencv-doc/examples/data/vtest.avi";

/// An MPEG-2 clip in MPEG-TS (what a camera's stream is like) of
/// `seconds` at [`RATE`]: the first seconds of vtest.avi (real recorded
/// video) scaled down when opencv-doc is installed, else FFmpeg's moving
/// test pattern.
fn make_clip(exe: &Path, path: &Path, seconds: u32) {
    let mut cmd = Command::new(exe);
    cmd.args(["-hide_banner", "-loglevel", "error", "-y"]);
    if Path::new(VTEST).is_file() {
        cmd.args(["-i", VTEST, "-vf"])
            .arg(format!("fps={RATE},scale=192:144"));
    } else {
        cmd.args(["-f", "lavfi", "-i"])
            .arg(format!("testsrc2=size=160x120:rate={RATE}"));
    }
    let made = cmd
        .args([
            "-t",
            &seconds.to_string(),
            "-c:v",
            "mpeg2video",
            "-q:v",
            "4",
        ])
        .args(["-g", "10", "-f", "mpegts"])
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success(), "ffmpeg could not make the clip");
}

/// `ffmpeg -re … -listen 1 http://…`: serves `clip` over HTTP at its frame
/// rate to one client, from its start.
fn serve(exe: &Path, clip: &Path, port: u16) -> Child {
    Command::new(exe)
        .args(["-hide_banner", "-loglevel", "error", "-re", "-i"])
        .arg(clip)
        .args(["-c", "copy", "-f", "mpegts", "-listen", "1"])
        .arg(format!("http://127.0.0.1:{port}/live.ts"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn args(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// An 8-second clip served over HTTP by `ffmpeg -listen 1` on a free
/// loopback port, in the scratch folder `name`; `None`, said on stderr,
/// without the `ffmpeg` program.
fn live(name: &str) -> Option<Live> {
    let Some(exe) = ffmpeg() else {
        eprintln!("skipped: no `ffmpeg` program (Debian package ffmpeg; .ci/run installs it)");
        return None;
    };
    let dir = temp_dir(name);
    std::fs::create_dir_all(&dir).unwrap();
    let clip = dir.join("clip.ts");
    make_clip(&exe, &clip, 8);
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/live.ts");
    let server = serve(&exe, &clip, port);
    Some(Live {
        exe,
        dir,
        clip,
        port,
        url,
        server,
    })
}

/// What [`live`] started: the program (to serve again), the folder, the
/// clip, the port, its URL and the server.
struct Live {
    exe: PathBuf,
    dir: PathBuf,
    clip: PathBuf,
    port: u16,
    url: String,
    server: Child,
}

#[test]
fn a_server_killed_and_restarted_mid_run_is_reconnected_and_the_gap_counted() {
    let Some(Live {
        exe,
        dir,
        clip,
        port,
        url,
        mut server,
    }) = live("reconnect-http")
    else {
        return;
    };
    let (before, total) = (40usize, 100u64);
    let out = Watched::default();
    let running = run_beside(
        args(&[
            "run",
            "--json",
            "-i",
            &url,
            "--reconnect",
            "interval=100ms,max-interval=200ms,give-up=60",
            "--read-timeout",
            "5",
            "--frames",
            &total.to_string(),
        ]),
        Box::new(std::io::empty()),
        out.clone(),
    );
    out.wait_until("frames before the loss", |l| l.len() >= before);
    server.kill().unwrap();
    server.wait().unwrap();
    let killed = Instant::now();
    std::thread::sleep(Duration::from_secs(1));
    let mut server = serve(&exe, &clip, port);
    let away = killed.elapsed();
    let (result, stderr) = running.join().unwrap();
    let _ = server.kill();
    let _ = server.wait();
    result.unwrap_or_else(|e| panic!("{e}\n{stderr}"));

    let lines = out.lines();
    assert_eq!(lines.len() as u64, total, "{stderr}");
    // One gap, at least as long as the server was down: the source counts
    // from its last frame to its next, which spans the whole outage.
    let gaps: Vec<(usize, u64)> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| l.get("missed_before").map(|m| (i, m.as_u64().unwrap())))
        .collect();
    assert_eq!(gaps.len(), 1, "{gaps:?}");
    let (at, missed) = gaps[0];
    assert!(at >= before, "{at}");
    let floor = (away.as_secs_f64() * RATE as f64) as u64 - 1;
    assert!(missed >= floor, "{missed} missed, away {away:?}");
    // Frame numbers skip the missed frames, and only there.
    for (i, pair) in lines.windows(2).enumerate() {
        let step = pair[1]["frame"].as_u64().unwrap() - pair[0]["frame"].as_u64().unwrap();
        let want = if i + 1 == at { missed + 1 } else { 1 };
        assert_eq!(step, want, "after line {i}");
    }
    // Timestamps go on across the reconnection.
    let ts: Vec<f64> = lines
        .iter()
        .map(|l| l["timestamp"].as_f64().unwrap())
        .collect();
    assert!(ts.windows(2).all(|w| w[1] > w[0]), "{ts:?}");
    assert!(
        stderr.contains("reconnected 1 time,")
            && stderr.contains(&format!("{missed} frames missed")),
        "{stderr}"
    );
    // Before the loss, the frames are the clip's own: the same results as
    // the file read directly.
    let file = run(
        l2::app(),
        &[
            "run",
            "--json",
            "-i",
            clip.to_str().unwrap(),
            "--frames",
            &at.to_string(),
        ],
        vec![],
    );
    let file = file.json_lines();
    let strip = |l: &Value| {
        (
            l["outputs"].clone(),
            l["width"].clone(),
            l["height"].clone(),
        )
    };
    assert_eq!(file.len(), at);
    for (got, want) in lines[..at].iter().zip(&file) {
        assert_eq!(strip(got), strip(want), "frame {}", got["frame"]);
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn without_reconnect_a_lost_input_ends_its_stream_and_a_bad_policy_is_a_usage_error() {
    let bad = run(
        l2::app(),
        &[
            "run",
            "-i",
            "http://127.0.0.1:9/x",
            "--reconnect",
            "interval=0",
        ],
        vec![],
    );
    assert!(
        bad.error().contains("interval must be more than 0"),
        "{}",
        bad.error()
    );
    assert_eq!(bad.result.as_ref().unwrap_err().exit_code(), 2);
    // Nobody listens on a fresh port: with a policy of two attempts the
    // run gives up and says so.
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/x");
    let out = run(
        l2::app(),
        &["run", "-i", &url, "--reconnect", "attempts=2,interval=50ms"],
        vec![],
    );
    let e = out.error();
    assert!(e.contains("gave up reconnecting after 2 attempts"), "{e}");
}

/// The lines of stream `k`.
fn of_stream(lines: &[Value], k: u64) -> Vec<&Value> {
    lines
        .iter()
        .filter(|l| l["stream"].as_u64() == Some(k))
        .collect()
}

#[cfg(unix)]
#[test]
fn while_a_camera_is_away_the_other_streams_run_on() {
    use std::io::Write;
    let Some(Live {
        exe,
        dir,
        clip,
        port,
        url,
        mut server,
    }) = live("reconnect-beside")
    else {
        return;
    };
    // The other input: a FIFO the test feeds, 20 frames before the
    // camera's loss and 20 during it.
    let fifo = dir.join("other.y4m");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let c = cortex::runner::sources::SyntheticClip::new(64, 48);
    let frames: Vec<_> = (0..40).map(|f| c.frame(f)).collect();
    let stream = y4m(&frames, "420jpeg");
    let half = 20 * (stream.len() - stream.iter().position(|&b| b == b'\n').unwrap() - 1) / 40;
    let (first, second) = stream.split_at(stream.len() - half);
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let feeder = {
        let (fifo, first, second) = (fifo.clone(), first.to_vec(), second.to_vec());
        std::thread::spawn(move || {
            let mut w = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
            w.write_all(&first).unwrap();
            w.flush().unwrap();
            wait.recv().unwrap();
            w.write_all(&second).unwrap();
        })
    };
    let out = Watched::default();
    let running = run_beside(
        args(&[
            "run",
            "--json",
            "-i",
            &url,
            "-i",
            fifo.to_str().unwrap(),
            "--reconnect",
            "interval=100ms,max-interval=200ms,give-up=60",
            "--frames",
            "60",
        ]),
        Box::new(std::io::empty()),
        out.clone(),
    );
    out.wait_until("both streams' first frames", |l| {
        of_stream(l, 0).len() >= 20 && of_stream(l, 1).len() == 20
    });
    server.kill().unwrap();
    server.wait().unwrap();
    go.send(()).unwrap();
    feeder.join().unwrap();
    // The camera is away: the other stream still runs to its end.
    out.wait_until("the other stream's end", |l| of_stream(l, 1).len() == 40);
    let mut server = serve(&exe, &clip, port);
    let (result, stderr) = running.join().unwrap();
    let _ = server.kill();
    let _ = server.wait();
    result.unwrap_or_else(|e| panic!("{e}\n{stderr}"));
    let lines = out.lines();
    let camera = of_stream(&lines, 0);
    assert_eq!(camera.len(), 60, "{stderr}");
    let gaps = camera
        .iter()
        .filter(|l| l.get("missed_before").is_some())
        .count();
    assert_eq!(gaps, 1, "{stderr}");
    assert!(stderr.contains("reconnected 1 time,"), "{stderr}");
    // The other stream's results are those of its frames alone.
    let alone = run(l2::app(), &["run", "--json", "-i", "-"], stream.clone());
    let alone = alone.json_lines();
    let other = of_stream(&lines, 1);
    assert_eq!(other.len(), alone.len());
    for (got, want) in other.iter().zip(&alone) {
        assert_eq!(got["outputs"], want["outputs"]);
    }
    let _ = std::fs::remove_dir_all(dir);
}
