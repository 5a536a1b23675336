//! The MQTT publisher on its own, against a real broker (Debian's
//! `mosquitto`, started here on a loopback port): what one `publish` call
//! costs the pipeline's thread, and how many messages a second reach the
//! broker acknowledged (QoS 1), with a message the size of an L2 JSON line.
//!
//! `cargo bench -p cortex-runner --features mqtt --bench publish`

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cortex_runner::publish::{PublishOptions, Publisher, Target};

/// Messages per round.
const MESSAGES: usize = 20_000;
/// Rounds; medians are reported.
const ROUNDS: usize = 5;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let Some(exe) = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto"]
        .into_iter()
        .find(|p| std::path::Path::new(p).is_file())
    else {
        eprintln!("skipped: no mosquitto (apt-get install mosquitto)");
        return;
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut broker = Command::new(exe)
        .args(["-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        std::thread::sleep(Duration::from_millis(20));
    }
    // An L2 `--json` line of a 4-stream run (its size is what matters).
    let line = r#"{"stream":2,"frame":41,"timestamp":1.3666666666666667,"width":384,"height":288,"reset":false,"mode":"BALANCED","outputs":{"blur":{"sharpness":1165.5029296875,"baseline":1193.466552734375,"blurry":false,"below_100":false},"scene":{"ssim":0.9470276832580566,"cut":false},"fused":{"size":[384,288]},"roi":{"roi":[96,112,112,80],"score":0.8121,"jpeg_bytes":4183},"regions":{"regions":[[96,112,112,80]],"peak":0.8121},"qp_map":{"blocks":[24,18]}},"node_ms":null}"#;
    let (mut call_ns, mut rate) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let target = Target::parse(&format!("mqtt://127.0.0.1:{port}/bench")).unwrap();
        let options = PublishOptions {
            queue: MESSAGES,
            ..PublishOptions::default()
        };
        let p = Publisher::start(target, options).unwrap();
        let started = Instant::now();
        let mut calls = Duration::ZERO;
        for i in 0..MESSAGES {
            let payload = line.as_bytes().to_vec();
            let t = Instant::now();
            p.publish((i % 4) as u32, payload);
            calls += t.elapsed();
        }
        let stats = p.close();
        let all = started.elapsed();
        assert_eq!(stats.delivered, MESSAGES as u64, "{stats:?}");
        call_ns.push(calls.as_nanos() as f64 / MESSAGES as f64);
        rate.push(MESSAGES as f64 / all.as_secs_f64());
    }
    let _ = broker.kill();
    let _ = broker.wait();
    println!(
        "{MESSAGES} messages of {} bytes, {ROUNDS} rounds (medians): publish() {:.0} ns a call on the caller's thread; {:.0} messages/s delivered (QoS 1, acknowledged)",
        line.len(),
        median(call_ns),
        median(rate)
    );
}
