//! Several `--input`s at once (`run -i A -i B`): each stream's results are
//! those of a run of its input alone, tagged with the stream; a failing
//! input leaves the others running; the summary has a line per stream; the
//! trace a track per stream; what a session cannot honour is a usage error.

use crate::l2;
use crate::support::*;
use cortex::runner::sources::SyntheticClip;
use serde_json::Value;

const SIZE: (usize, usize) = (160, 120);

/// A Y4M file of `n` synthetic frames from `first`, in `dir`.
fn y4m_file(dir: &std::path::Path, name: &str, first: u64, n: u64) -> String {
    let c = SyntheticClip::new(SIZE.0, SIZE.1);
    let frames: Vec<_> = (first..first + n).map(|f| c.frame(f)).collect();
    let path = dir.join(name);
    std::fs::write(&path, y4m(&frames, "420jpeg")).unwrap();
    path.to_str().unwrap().to_string()
}

/// The JSON lines of stream `k`, in the order printed.
fn of_stream(lines: &[Value], k: u64) -> Vec<&Value> {
    lines.iter().filter(|l| l["stream"] == k).collect()
}

#[test]
fn each_stream_gives_what_its_input_gives_alone() {
    let dir = temp_dir("streams-same");
    let a = y4m_file(&dir, "a.y4m", 0, 24);
    let b = y4m_file(&dir, "b.y4m", 30, 18);
    let c = y4m_file(&dir, "c.y4m", 10, 20);
    let out = run(
        l2::app(),
        &[
            "run",
            "--json",
            "--mode",
            "BALANCED",
            "--threads",
            "2",
            "-i",
            &a,
            "-i",
            &b,
            "-i",
            &c,
        ],
        vec![],
    );
    out.ok();
    let lines = out.json_lines();
    assert_eq!(lines.len(), 24 + 18 + 20);
    for (k, (input, n)) in [(&a, 24), (&b, 18), (&c, 20)].into_iter().enumerate() {
        let alone = run(
            l2::app(),
            &["run", "--json", "--mode", "BALANCED", "-i", input],
            vec![],
        );
        alone.ok();
        let alone = alone.json_lines();
        assert_eq!(alone.len(), n);
        assert!(
            alone.iter().all(|l| l.get("stream").is_none()),
            "one input: no stream field"
        );
        let mine = of_stream(&lines, k as u64);
        assert_eq!(mine.len(), n, "stream {k}");
        for (got, want) in mine.iter().zip(&alone) {
            assert_eq!(got["frame"], want["frame"], "stream {k}: in order");
            assert_eq!(
                got["outputs"], want["outputs"],
                "stream {k}, frame {}",
                want["frame"]
            );
            assert_eq!(got["timestamp"], want["timestamp"]);
            assert_eq!(got["node_ms"], Value::Null);
        }
    }
    // A summary line per stream, then the total.
    for (k, n) in [(0, 24), (1, 18), (2, 20)] {
        let line = out
            .stderr
            .lines()
            .find(|l| l.starts_with(&format!("stream {k} (")))
            .unwrap_or_else(|| panic!("no summary of stream {k}: {}", out.stderr));
        assert!(
            line.contains(&format!("{n} received, {n} processed, 0 failed, 0 dropped")),
            "{line}"
        );
        assert!(
            line.contains("latency p50") && line.contains("ms"),
            "{line}"
        );
    }
    assert!(
        out.stderr.contains("3 streams on 2 threads: 62 frames"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_failing_input_leaves_the_others_running() {
    let dir = temp_dir("streams-fail");
    let good = y4m_file(&dir, "good.y4m", 0, 20);
    let bad = dir.join("bad.y4m");
    // Four whole frames, then half of the fifth.
    let c = SyntheticClip::new(SIZE.0, SIZE.1);
    let frames: Vec<_> = (0..5).map(|f| c.frame(f)).collect();
    let bytes = y4m(&frames, "420jpeg");
    // `FRAME\n`, then the 4:2:0 planes.
    let frame_bytes = 6 + SIZE.0 * SIZE.1 * 3 / 2;
    std::fs::write(&bad, &bytes[..bytes.len() - frame_bytes / 2]).unwrap();
    let out = run(
        l2::app(),
        &["run", "--json", "-i", bad.to_str().unwrap(), "-i", &good],
        vec![],
    );
    let msg = out.error();
    assert!(
        msg.contains("stream 0") && msg.contains("truncated"),
        "{msg}"
    );
    assert_eq!(out.result.as_ref().unwrap_err().exit_code(), 1);
    let lines = out.json_lines();
    assert_eq!(of_stream(&lines, 0).len(), 4);
    assert_eq!(
        of_stream(&lines, 1).len(),
        20,
        "the good input ran to its end"
    );
    assert!(out.stderr.contains("input failed"), "{}", out.stderr);
}

#[test]
fn the_trace_has_a_track_per_stream() {
    let dir = temp_dir("streams-trace");
    let a = y4m_file(&dir, "a.y4m", 0, 6);
    let b = y4m_file(&dir, "b.y4m", 5, 4);
    let path = dir.join("trace.json");
    let out = run(
        l2::app(),
        &[
            "run",
            "-q",
            "-i",
            &a,
            "-i",
            &b,
            "--trace",
            path.to_str().unwrap(),
        ],
        vec![],
    );
    out.ok();
    let trace: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    for (tid, n, name) in [(1, 6, "a.y4m"), (2, 4, "b.y4m")] {
        let named = events
            .iter()
            .find(|e| e["ph"] == "M" && e["name"] == "thread_name" && e["tid"] == tid)
            .unwrap();
        let label = named["args"]["name"].as_str().unwrap();
        assert!(
            label.starts_with(&format!("stream {}", tid - 1)) && label.contains(name),
            "{label}"
        );
        let frames: Vec<u64> = events
            .iter()
            .filter(|e| e["ph"] == "X" && e["tid"] == tid)
            .map(|e| e["args"]["frame"].as_u64().unwrap())
            .collect();
        assert_eq!(frames, (0..n).collect::<Vec<_>>(), "track {tid}");
    }
}

#[test]
fn what_a_session_cannot_honour_is_a_usage_error() {
    let dir = temp_dir("streams-usage");
    let a = y4m_file(&dir, "a.y4m", 0, 3);
    let pics = dir.join("pics");
    let pics = pics.to_str().unwrap();
    let cases: [(&[&str], &str); 7] = [
        (
            &["run", "-i", &a, "-i", &a, "--engine", "pipelined"],
            "--engine pipelined",
        ),
        (&["run", "-i", &a, "--threads", "2"], "--threads"),
        (&["profile", "-i", &a, "-i", &a], "`run` command"),
        (&["run", "-i", "-", "-i", "-"], "stdin"),
        (
            &["run", "-i", &a, "-i", &a, "--weights", "wc=0"],
            "--weights",
        ),
        // Each names the flag given, and only that one.
        (
            &["run", "-i", &a, "-i", &a, "--encode", "out.mkv"],
            "--encode takes one input, and 2 were given",
        ),
        (
            &["run", "-i", &a, "-i", &a, "--dump", pics],
            "--dump takes one input, and 2 were given",
        ),
    ];
    for (args, says) in cases {
        let out = run(l2::app(), args, vec![]);
        let msg = out.error();
        assert!(msg.contains(says), "{args:?}: {msg}");
        let other = if args.contains(&"--dump") {
            "--encode"
        } else {
            "--dump"
        };
        assert!(!msg.contains(other), "{args:?} names {other}: {msg}");
        assert_eq!(out.result.as_ref().unwrap_err().exit_code(), 2, "{args:?}");
        assert_eq!(out.stdout, "");
    }
}

#[test]
fn the_table_gets_a_stream_column_and_frames_count_per_stream() {
    let dir = temp_dir("streams-table");
    let a = y4m_file(&dir, "a.y4m", 0, 12);
    let b = y4m_file(&dir, "b.y4m", 3, 12);
    let out = run(
        l2::app(),
        &["run", "--frames", "5", "-i", &a, "-i", &b],
        vec![],
    );
    let table = out.ok();
    let mut lines = table.lines();
    let header = lines.next().unwrap();
    let columns: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(columns[..3], ["stream", "frame", "time"], "{header}");
    let rows: Vec<(String, String)> = lines
        .map(|l| {
            let mut cells = l.split_whitespace();
            (cells.next().unwrap().into(), cells.next().unwrap().into())
        })
        .collect();
    for k in ["0", "1"] {
        let frames: Vec<&str> = rows
            .iter()
            .filter(|(s, _)| s == k)
            .map(|(_, f)| f.as_str())
            .collect();
        assert_eq!(
            frames,
            ["0", "1", "2", "3", "4"],
            "stream {k}: --frames 5 each"
        );
    }
    assert_eq!(rows.len(), 10);
}

#[test]
fn a_stream_whose_frames_change_size_starts_over_as_a_single_run_does() {
    let dir = temp_dir("streams-resize");
    let frames_dir = dir.join("frames");
    std::fs::create_dir_all(&frames_dir).unwrap();
    let (small, large) = (SyntheticClip::new(64, 48), SyntheticClip::new(80, 60));
    for (i, frame) in [
        small.frame(0),
        small.frame(1),
        small.frame(2),
        large.frame(3),
        large.frame(4),
        small.frame(5),
    ]
    .iter()
    .enumerate()
    {
        write_png(&frames_dir.join(format!("{i:02}.png")), frame);
    }
    let resizing = frames_dir.to_str().unwrap().to_string();
    let other = y4m_file(&dir, "other.y4m", 0, 6);
    let without_times = |lines: Vec<&Value>| -> Vec<Value> {
        lines
            .into_iter()
            .map(|l| {
                let mut l = l.clone();
                let m = l.as_object_mut().unwrap();
                m.remove("node_ms");
                m.remove("stream");
                l
            })
            .collect()
    };
    let both = run(
        l2::app(),
        &["run", "--json", "-i", &resizing, "-i", &other],
        vec![],
    );
    both.ok();
    let lines = both.json_lines();
    let alone = run(l2::app(), &["run", "--json", "-i", &resizing], vec![]);
    let alone_lines = alone.json_lines();
    let got = without_times(of_stream(&lines, 0));
    let want = without_times(alone_lines.iter().collect());
    assert_eq!(got.len(), 6);
    assert_eq!(got, want);
    let resets: Vec<bool> = got.iter().map(|l| l["reset"].as_bool().unwrap()).collect();
    assert_eq!(resets, [false, false, false, true, false, true]);
    assert_eq!(of_stream(&lines, 1).len(), 6);
    let _ = std::fs::remove_dir_all(dir);
}

/// A FIFO at `path` (`mkfifo`).
#[cfg(unix)]
fn fifo(path: &std::path::Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success());
}

#[cfg(unix)]
#[test]
fn a_stalled_input_and_one_not_yet_open_cost_the_others_no_frame() {
    use std::io::Write;
    let dir = temp_dir("streams-fifo");
    let good = y4m_file(&dir, "good.y4m", 0, 24);
    // A FIFO whose writer sends 5 frames, then stalls (a camera that
    // hangs), and one nobody writes to until the good input is done
    // (opening it blocks until then).
    let (stall, late) = (dir.join("stall.y4m"), dir.join("late.y4m"));
    fifo(&stall);
    fifo(&late);
    let c = SyntheticClip::new(SIZE.0, SIZE.1);
    let frames: Vec<_> = (0..5).map(|f| c.frame(f)).collect();
    let five = y4m(&frames, "420jpeg");
    let three = y4m(&frames[..3], "420jpeg");
    let (release, released) = std::sync::mpsc::channel::<()>();
    let writer = {
        let stall = stall.clone();
        std::thread::spawn(move || {
            let mut w = std::fs::OpenOptions::new()
                .write(true)
                .open(&stall)
                .unwrap();
            w.write_all(&five).unwrap();
            w.flush().unwrap();
            // Stalled: the FIFO stays open with nothing more in it.
            released.recv().unwrap();
        })
    };
    let out = Watched::default();
    // One worker thread: a source blocked in its read must not hold it.
    let args: Vec<String> = [
        "run",
        "--json",
        "-q",
        "--threads",
        "1",
        "-i",
        stall.to_str().unwrap(),
        "-i",
        &good,
        "-i",
        late.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let running = run_beside(args, Box::new(std::io::empty()), out.clone());
    out.wait_until("every frame of the good input", |lines| {
        of_stream(lines, 1).len() == 24 && of_stream(lines, 0).len() == 5
    });
    // Now the late FIFO gets a writer with 3 frames, and the stalled one
    // closes: both streams end.
    let mut w = std::fs::OpenOptions::new().write(true).open(&late).unwrap();
    w.write_all(&three).unwrap();
    drop(w);
    release.send(()).unwrap();
    writer.join().unwrap();
    let (result, stderr) = running.join().unwrap();
    result.unwrap_or_else(|e| panic!("{e}\n{stderr}"));
    let lines = out.lines();
    let counts: Vec<usize> = (0..3).map(|k| of_stream(&lines, k).len()).collect();
    assert_eq!(counts, [5, 24, 3]);
    // The good stream's results are those of its input alone.
    let alone = run(l2::app(), &["run", "--json", "-i", &good], vec![]);
    let alone = alone.json_lines();
    for (got, want) in of_stream(&lines, 1).iter().zip(&alone) {
        assert_eq!(got["outputs"], want["outputs"]);
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_input_that_cannot_be_read_ends_its_stream_alone_and_the_run_says_so() {
    let dir = temp_dir("streams-garbage");
    let good = y4m_file(&dir, "good.y4m", 0, 12);
    let garbage = dir.join("garbage.y4m");
    std::fs::write(&garbage, "this is not a video\n").unwrap();
    let out = run(
        l2::app(),
        &[
            "run",
            "--json",
            "-i",
            garbage.to_str().unwrap(),
            "-i",
            &good,
        ],
        vec![],
    );
    let msg = out.error();
    assert!(
        msg.contains("stream 0") && msg.contains("YUV4MPEG2"),
        "{msg}"
    );
    assert_eq!(out.result.as_ref().unwrap_err().exit_code(), 1);
    let lines = out.json_lines();
    assert_eq!(of_stream(&lines, 0).len(), 0);
    assert_eq!(
        of_stream(&lines, 1).len(),
        12,
        "the good input ran to its end"
    );
    let summary = out
        .stderr
        .lines()
        .find(|l| l.starts_with("stream 0 ("))
        .unwrap_or_else(|| panic!("{}", out.stderr));
    assert!(summary.contains("input failed"), "{summary}");
}

#[test]
fn a_missing_input_is_refused_before_any_stream_starts() {
    let dir = temp_dir("streams-missing");
    let good = y4m_file(&dir, "good.y4m", 0, 4);
    let missing = dir.join("missing.y4m");
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    for bad in [&missing, &empty] {
        let single = run(l2::app(), &["run", "-i", bad.to_str().unwrap()], vec![]);
        let out = run(
            l2::app(),
            &["run", "--json", "-i", &good, "-i", bad.to_str().unwrap()],
            vec![],
        );
        // What a run of that input alone says, before any frame.
        assert_eq!(out.error(), single.error());
        assert_eq!(
            out.result.as_ref().unwrap_err().exit_code(),
            single.result.as_ref().unwrap_err().exit_code()
        );
        assert_eq!(out.stdout, "");
    }
}
