//! `run --publish`: each frame's JSON line to a real MQTT broker (Debian's
//! `mosquitto` on a loopback port the test picks), read back by a real
//! subscriber (`mosquitto_sub`, a client independent of the one
//! publishing). The broker is stopped mid-run and started again: the run
//! goes on, what could not wait is dropped oldest first and counted, and
//! the messages resume.

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use cortex::runner::sources::SyntheticClip;

use crate::l2;
use crate::support::*;

/// The first of `names` found on PATH or in /usr/sbin (where Debian puts
/// `mosquitto`).
fn program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin")])
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// A port nobody listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something accepts connections on `port`.
fn wait_listening(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{what} never listened on {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A mosquitto broker on a loopback port, persisting its sessions in its
/// folder so that a subscriber's queued messages survive a restart.
struct Broker {
    exe: PathBuf,
    conf: PathBuf,
    port: u16,
    child: Option<Child>,
}

impl Broker {
    fn start(exe: PathBuf, dir: &Path) -> Broker {
        let port = free_port();
        let conf = dir.join("mosquitto.conf");
        std::fs::write(
            &conf,
            format!(
                "listener {port} 127.0.0.1\nallow_anonymous true\npersistence true\n\
                 persistence_location {}/\nmax_queued_messages 0\nlog_dest none\n",
                dir.display()
            ),
        )
        .unwrap();
        let mut b = Broker {
            exe,
            conf,
            port,
            child: None,
        };
        b.restart();
        b
    }

    fn restart(&mut self) {
        let child = Command::new(&self.exe)
            .arg("-c")
            .arg(&self.conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.child = Some(child);
        wait_listening(self.port, "mosquitto");
    }

    /// SIGTERM (the broker saves its sessions), and waits for it to end.
    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(child.id().to_string())
                .status();
            child.wait().unwrap();
        }
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `mosquitto_sub -v` with a persistent session at QoS 1: every message
/// on the topics, as `(topic, payload)`, also across a broker restart.
struct Subscriber {
    child: Child,
    got: Arc<Mutex<Vec<(String, String)>>>,
}

impl Subscriber {
    fn start(port: u16, topic: &str) -> Subscriber {
        let exe = program("mosquitto_sub").expect("mosquitto_sub (Debian's mosquitto-clients)");
        let mut child = Command::new(exe)
            .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-q", "1", "-c"])
            .args(["-i", "cortex-test-sub", "-v", "-t", topic])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let got = Arc::new(Mutex::new(Vec::new()));
        let mine = Arc::clone(&got);
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if let Some((t, p)) = line.split_once(' ') {
                    mine.lock().unwrap().push((t.to_string(), p.to_string()));
                }
            }
        });
        Subscriber { child, got }
    }

    fn messages(&self) -> Vec<(String, String)> {
        self.got.lock().unwrap().clone()
    }

    /// Waits until `enough` holds of the messages so far (a guard against
    /// a hang, never a measure of speed).
    fn wait_until(&self, what: &str, enough: impl Fn(&[(String, String)]) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if enough(&self.messages()) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "still waiting for {what}; got {} messages",
                self.messages().len()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Stdin fed by the test, a chunk at a time; it ends when the sender is
/// dropped.
struct Fed {
    chunks: mpsc::Receiver<Vec<u8>>,
    left: std::io::Cursor<Vec<u8>>,
}

impl Read for Fed {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let n = self.left.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            match self.chunks.recv() {
                Ok(chunk) => self.left = std::io::Cursor::new(chunk),
                Err(_) => return Ok(0),
            }
        }
    }
}

/// A broker in a scratch folder `name` and a subscriber to
/// `prefix/+/results` whose subscription is live (a probe came back); `None`,
/// said on stderr, without Debian's `mosquitto`.
fn broker_and_subscriber(name: &str, prefix: &str) -> Option<(Broker, Subscriber)> {
    let Some(mosquitto) = program("mosquitto") else {
        eprintln!("skipped: no `mosquitto` binary (Debian package mosquitto; .ci/run installs it)");
        return None;
    };
    let dir = temp_dir(name);
    std::fs::create_dir_all(&dir).unwrap();
    // Started by root, mosquitto runs as its own user, which must be able
    // to write its sessions there.
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let broker = Broker::start(mosquitto, &dir);
    let sub = Subscriber::start(broker.port, &format!("{prefix}/+/results"));
    let probe = program("mosquitto_pub").expect("mosquitto_pub");
    let deadline = Instant::now() + Duration::from_secs(60);
    while sub.messages().is_empty() {
        assert!(
            Instant::now() < deadline,
            "the subscriber never got the probe"
        );
        Command::new(&probe)
            .args(["-h", "127.0.0.1", "-p", &broker.port.to_string(), "-q", "1"])
            .args(["-t", &format!("{prefix}/probe/results"), "-m", "probe"])
            .status()
            .unwrap();
        std::thread::sleep(Duration::from_millis(100));
    }
    Some((broker, sub))
}

/// The count before `what` in the summary line: `… 12 dropped …`.
fn count(line: &str, what: &str) -> u64 {
    let at = line
        .find(what)
        .unwrap_or_else(|| panic!("no `{what}` in {line}"));
    line[..at]
        .split_whitespace()
        .last()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count before `{what}` in {line}"))
}

#[test]
fn every_frame_reaches_the_broker_and_a_broker_restart_is_counted_not_fatal() {
    let Some((mut broker, sub)) = broker_and_subscriber("publish-broker", "cortex-test") else {
        return;
    };

    // 20 frames with the broker up, 60 with it stopped (a queue of 10 keeps
    // the last 10 of them), 20 after it is back.
    let (a, b, c) = (20u64, 60u64, 20u64);
    let clip = SyntheticClip::new(64, 48);
    let stream = |from: u64, n: u64| -> Vec<u8> {
        let frames: Vec<_> = (from..from + n).map(|f| clip.frame(f % 48)).collect();
        y4m(&frames, "420jpeg")
    };
    let all = stream(0, a + b + c);
    let header = all.iter().position(|&x| x == b'\n').unwrap() + 1;
    let frame_bytes = (all.len() - header) / (a + b + c) as usize;
    let part = |from: u64, n: u64| {
        all[header + from as usize * frame_bytes..header + (from + n) as usize * frame_bytes]
            .to_vec()
    };
    let (feed, chunks) = mpsc::channel();
    feed.send(all[..header].to_vec()).unwrap();
    let stdin = Fed {
        chunks,
        left: std::io::Cursor::new(Vec::new()),
    };
    let url = format!("mqtt://127.0.0.1:{}/cortex-test", broker.port);
    let args: Vec<String> = ["run", "--json", "-i", "-", "--publish", &url]
        .iter()
        .map(|s| s.to_string())
        .chain(["--publish-queue".into(), "10".into()])
        .collect();
    let out = Watched::default();
    let running = run_beside(args, Box::new(stdin), out.clone());
    let frame_of = |p: &str| {
        serde_json::from_str::<serde_json::Value>(p)
            .ok()
            .and_then(|v| v["frame"].as_u64())
    };
    // Frames are fed one at a time, each once the one before reached the
    // subscriber, while the broker is up: the queue of 10 keeps up only
    // with a publisher as fast as the source, which a loaded machine's is
    // not (a burst drops its oldest, by design, and the checks below are
    // of delivery, not speed).
    let feed_one_by_one = |frames: std::ops::Range<u64>| {
        for f in frames {
            feed.send(part(f, 1)).unwrap();
            sub.wait_until(&format!("frame {f}"), |m| {
                m.iter().any(|(_, p)| frame_of(p) == Some(f))
            });
        }
    };
    feed_one_by_one(0..a);
    broker.stop();
    feed.send(part(a, b)).unwrap();
    out.wait_until("the frames during the outage", |l| l.len() as u64 == a + b);
    broker.restart();
    // Once reconnected, the publisher sends what its queue kept of the
    // outage first; then the last frames come.
    sub.wait_until("the queue kept through the outage", |m| {
        m.iter().any(|(_, p)| frame_of(p).is_some_and(|f| f >= a))
    });
    feed_one_by_one(a + b..a + b + c);
    drop(feed);
    let (result, stderr) = running.join().unwrap();
    result.unwrap_or_else(|e| panic!("{e}\n{stderr}"));

    // The run printed every frame, and its summary adds up.
    let printed: Vec<String> = out.text().lines().map(String::from).collect();
    assert_eq!(printed.len() as u64, a + b + c);
    let line = stderr
        .lines()
        .find(|l| l.starts_with("published to mqtt://"))
        .unwrap_or_else(|| panic!("no publish summary in:\n{stderr}"));
    let delivered = count(line, "of ");
    let given = count(line, "messages delivered");
    let dropped = count(line, "dropped");
    let unsent = count(line, "unsent");
    assert_eq!(given, a + b + c, "{line}");
    assert_eq!(delivered + dropped + unsent, given, "{line}");
    assert_eq!(unsent, 0, "{line}");
    // The outage outlasted the queue: at least what did not fit is gone.
    assert!(dropped >= b - 10, "{line}");
    assert!(count(line, "connections,") >= 2, "{line}");

    // Every message is the very line --json printed for its frame.
    sub.wait_until(&format!("every delivered message ({line})"), |m| {
        let mut seen: Vec<&str> = m.iter().map(|(_, p)| p.as_str()).collect();
        seen.sort_unstable();
        seen.dedup();
        seen.len() as u64 > delivered
    });
    let mut frames = std::collections::BTreeSet::new();
    for (topic, payload) in sub.messages() {
        if topic == "cortex-test/probe/results" {
            continue;
        }
        assert_eq!(topic, "cortex-test/0/results");
        let v: serde_json::Value = serde_json::from_str(&payload).unwrap();
        let f = v["frame"].as_u64().unwrap();
        assert_eq!(payload, printed[f as usize], "frame {f}");
        frames.insert(f);
    }
    // What the broker acknowledged reached the subscriber (a message it
    // had but could not acknowledge before it stopped may come twice).
    let n = frames.len() as u64;
    assert!(n >= delivered && n <= delivered + 32, "{n} frames, {line}");
    // Before and after the outage: every frame; during it, the newest
    // (the oldest were dropped first).
    assert!((0..a).all(|f| frames.contains(&f)), "{frames:?}");
    assert!(
        (a + b..a + b + c).all(|f| frames.contains(&f)),
        "{frames:?}"
    );
    let during: Vec<u64> = frames.range(a..a + b).copied().collect();
    if let Some(&first) = during.first() {
        assert_eq!(during, (first..a + b).collect::<Vec<_>>(), "{line}");
    }
    drop(sub);
    drop(broker);
    let _ = std::fs::remove_dir_all(temp_dir("publish-broker"));
}

#[test]
fn a_bad_broker_url_is_a_usage_error() {
    for (url, why) in [
        ("http://h", "expected mqtt://"),
        ("mqtt://h:0", "port `0`"),
        ("mqtt://user:pw@h", "CORTEX_MQTT_USERNAME"),
        ("mqtt://h/a/#", "no `+`, `#`"),
    ] {
        let out = run(
            l2::app(),
            &["run", "--frames", "1", "--publish", url],
            vec![],
        );
        let e = out.error();
        assert!(e.contains(why), "{url}: {e}");
        assert_eq!(out.result.as_ref().unwrap_err().exit_code(), 2);
    }
    let out = run(
        l2::app(),
        &["run", "--frames", "1", "--publish-queue", "5"],
        vec![],
    );
    assert!(out.error().contains("--publish-queue needs --publish"));
}

#[test]
fn a_graph_file_run_publishes_its_json_lines() {
    let Some((broker, sub)) = broker_and_subscriber("publish-graph", "graph-test") else {
        return;
    };
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/graphs/l2.json");
    let url = format!("mqtt://127.0.0.1:{}/graph-test", broker.port);
    let out = run(
        l2::app(),
        &[
            "run",
            "--json",
            "--graph",
            file,
            "--frames",
            "6",
            "--size",
            "96x64",
            "--publish",
            &url,
        ],
        Vec::new(),
    );
    out.ok();
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 6, "{}", out.stdout);
    // Every line the graph run prints reaches the broker, byte for byte.
    sub.wait_until("the graph run's 6 lines", |m| {
        m.iter()
            .filter(|(t, _)| t == "graph-test/0/results")
            .count()
            >= 6
    });
    let got: Vec<String> = sub
        .messages()
        .into_iter()
        .filter(|(t, _)| t == "graph-test/0/results")
        .map(|(_, p)| p)
        .collect();
    assert_eq!(got, lines);
    let line = out
        .stderr
        .lines()
        .find(|l| l.starts_with("published to mqtt://"))
        .unwrap_or_else(|| panic!("no publish summary in:\n{}", out.stderr));
    assert_eq!(count(line, "of "), 6, "{line}");
    assert_eq!(count(line, "messages delivered"), 6, "{line}");
    drop(sub);
    drop(broker);
    let _ = std::fs::remove_dir_all(temp_dir("publish-graph"));
}
