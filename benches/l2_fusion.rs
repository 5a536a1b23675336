//! L2 with its fused groups against the same pipeline with fusion off, on
//! the sequential (`run_into`) and parallel (`run_parallel_into`) engines,
//! at 768×576 and 1920×1080 (or `BENCH_SIZES`), in BALANCED and POWER_SAVE;
//! and each fused group's own time — with the default strips and as its
//! tuner decided (a measured height, or its members unfused) — against its
//! members' own whole-frame calls, per frame, with the tuners' decisions.
//!
//! Interleaved rounds (every variant once per round, in rotating order, so
//! load from other processes hits them alike) over frames of the built-in
//! synthetic clip; medians. Every variant's outputs are checked equal to
//! the unfused sequential run's before timing. Decisions are measured
//! afresh in each process (the autotune cache file is not read), so
//! separate processes show how far the choice varies.
//!
//! ```text
//! cargo bench --bench l2_fusion
//! BENCH_ROUNDS=31 cargo bench --bench l2_fusion
//! BENCH_SIZES=1366x768 cargo bench --bench l2_fusion
//! ```

use std::time::{Duration, Instant};

use cortex::l2::{L2Mode, L2Outputs, L2};
use cortex::model::ir::NodeId;
use cortex::ops::RgbFrame;
use cortex::prelude::Observer;
use cortex::runner::sources::SyntheticClip;
use cortex::strip::tune::{self, StripPolicy};
use cortex::strip::Strips;
use cortex::Run;

/// Time in each fused group, and in each node's own calls (cumulative).
#[derive(Default, Clone)]
struct GroupTime {
    started: Option<(&'static [NodeId], Instant)>,
    node_started: Option<Instant>,
    /// Per group (its members, as the generated code names them): time
    /// from its start to its end, whether it ran fused or declined.
    groups: Vec<(&'static [NodeId], Duration)>,
    declined: usize,
    /// Per node: total time in its own calls.
    per_node: Vec<Duration>,
}

impl GroupTime {
    /// Time in `members`' group plus their own calls (a member that
    /// declined alone, or a declined group's members), so far.
    fn group_total(&self, members: &[NodeId]) -> Duration {
        let group = self
            .groups
            .iter()
            .find(|(m, _)| *m == members)
            .map_or(Duration::ZERO, |(_, d)| *d);
        group + self.calls(members)
    }

    /// Time in `members`' own calls so far.
    fn calls(&self, members: &[NodeId]) -> Duration {
        members
            .iter()
            .filter_map(|&n| self.per_node.get(n as usize))
            .sum()
    }
}

impl Observer for GroupTime {
    fn group_begin(&mut self, members: &'static [NodeId]) {
        self.started = Some((members, Instant::now()));
    }
    fn group_end(&mut self, fused: bool) {
        if let Some((members, t)) = self.started.take() {
            // A declined group's members time themselves as calls.
            let d = if fused { t.elapsed() } else { Duration::ZERO };
            match self.groups.iter_mut().find(|(m, _)| *m == members) {
                Some((_, total)) => *total += d,
                None => self.groups.push((members, d)),
            }
        }
        self.declined += usize::from(!fused);
    }
    fn node_begin(&mut self, _node: NodeId) {
        self.node_started = Some(Instant::now());
    }
    fn node_end(&mut self, node: NodeId) {
        let Some(t) = self.node_started.take() else {
            return;
        };
        let i = node as usize;
        if self.per_node.len() <= i {
            self.per_node.resize(i + 1, Duration::ZERO);
        }
        self.per_node[i] += t.elapsed();
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let rounds: usize = std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(15);
    let frames_per_round = 4u64;
    // Measured afresh: decisions an earlier run saved (perhaps on a busier
    // machine) would stand in for this run's measurement.
    tune::set_cache_path(None);
    tune::forget_decisions();
    println!(
        "| size | mode | engine | unfused ms | fused, default strips ms | fused, measured strips ms | × (measured) |"
    );
    println!("|---|---|---|---:|---:|---:|---:|");
    let mut chosen = Vec::new();
    let mut group_rows = Vec::new();
    // `BENCH_SIZES=1366x768,640x480` measures other sizes.
    let sizes: Vec<(usize, usize)> = std::env::var("BENCH_SIZES")
        .ok()
        .map(|v| {
            v.split(',')
                .filter_map(|s| s.split_once('x'))
                .filter_map(|(w, h)| Some((w.trim().parse().ok()?, h.trim().parse().ok()?)))
                .collect()
        })
        .filter(|v: &Vec<(usize, usize)>| !v.is_empty())
        .unwrap_or_else(|| vec![(768, 576), (1920, 1080)]);
    for (w, h) in sizes {
        let clip = SyntheticClip::new(w, h);
        let frames: Vec<RgbFrame> = (0..frames_per_round).map(|f| clip.frame(f + 2)).collect();
        for mode in [L2Mode::Balanced, L2Mode::PowerSave] {
            // Variants: (parallel, fused, strips).
            let auto = StripPolicy::Fixed(Strips::Auto);
            let measure = StripPolicy::Measure;
            let variants = [
                (false, false, auto),
                (false, true, auto),
                (false, true, measure),
                (true, false, auto),
                (true, true, auto),
                (true, true, measure),
            ];
            let mut pipes: Vec<L2> = variants
                .iter()
                .map(|&(_, fused, _)| {
                    let mut p = L2::new();
                    p.set_fusion(fused);
                    p
                })
                .collect();
            let mut outs: Vec<Option<L2Outputs>> = vec![None; variants.len()];
            // Warm up (past every group's strip measurement) and
            // check: every variant gives the unfused outputs. A rated
            // mode's plans each hold their own instance of a group, run on
            // some frames only (POWER_SAVE's plan without the text map on
            // three frames of four), and the first instance to decide
            // decides for the others: twice the measured runs are enough.
            for f in frames
                .iter()
                .cycle()
                .take(2 * tune::MEASURED_RUNS + 4 * frames.len())
            {
                tune::set_policy(Some(auto));
                let want = pipes[0].run(mode, f).expect("frame runs");
                for (i, &(par, _, policy)) in variants.iter().enumerate().skip(1) {
                    tune::set_policy(Some(policy));
                    let run = Run::mode(mode);
                    let mut run = if par { run.parallel() } else { run };
                    let got = pipes[i].run_with_fresh(&mut run, f).expect("frame runs");
                    assert_eq!(got.fused, want.fused, "variant {i}");
                    assert_eq!(got.blur, want.blur, "variant {i}");
                    outs[i] = Some(got);
                }
                outs[0] = Some(want);
            }
            let mut times: Vec<Vec<Duration>> = vec![Vec::new(); variants.len()];
            for r in 0..rounds {
                for k in 0..variants.len() {
                    let i = (k + r) % variants.len();
                    let (par, _, policy) = variants[i];
                    tune::set_policy(Some(policy));
                    let out = outs[i].as_mut().expect("warmed up");
                    let t = Instant::now();
                    for f in &frames {
                        if par {
                            pipes[i].run_with(&mut Run::mode(mode).parallel(), f, out)
                        } else {
                            pipes[i].run_into(mode, f, out)
                        }
                        .expect("frame runs");
                    }
                    times[i].push(t.elapsed() / frames_per_round as u32);
                }
            }
            tune::set_policy(Some(auto));
            let med: Vec<Duration> = times.into_iter().map(median).collect();
            for (engine, a, b, c) in [("sequential", 0, 1, 2), ("parallel", 3, 4, 5)] {
                println!(
                    "| {w}x{h} | {mode:?} | {engine} | {:.2} | {:.2} | {:.2} | {:.2}× |",
                    ms(med[a]),
                    ms(med[b]),
                    ms(med[c]),
                    med[a].as_secs_f64() / med[c].as_secs_f64()
                );
            }
            // The groups alone, each against its members' own whole-frame
            // calls: the fused pipeline with the default strips, as tuned
            // (a measured height, or unfused) and forced unfused (the
            // members' strip forms over whole frames, in the group), the
            // unfused pipeline; sequential engine, same frames, interleaved
            // in rotating order.
            let timed = [
                (0, auto),
                (1, auto),
                (2, measure),
                (1, StripPolicy::Unfused),
            ];
            let mut obs: Vec<GroupTime> = timed.iter().map(|_| GroupTime::default()).collect();
            // Per group: per frame, (members' calls, default, tuned, unfused).
            let mut samples: Vec<(&'static [NodeId], Vec<[Duration; 4]>)> = Vec::new();
            for r in 0..rounds {
                for f in &frames {
                    let before = obs.clone();
                    for k in 0..timed.len() {
                        let v = (k + r) % timed.len();
                        let (pipe, policy) = timed[v];
                        tune::set_policy(Some(policy));
                        pipes[pipe]
                            .run_with_fresh(&mut Run::mode(mode).observed(&mut obs[v]), f)
                            .expect("runs");
                    }
                    // Each group the fused pipelines ran this frame; its
                    // members' calls on the unfused one.
                    for &(members, _) in &obs[1].groups {
                        let calls = obs[0].calls(members) - before[0].calls(members);
                        let since =
                            |v: usize| obs[v].group_total(members) - before[v].group_total(members);
                        let sample = [calls, since(1), since(2), since(3)];
                        match samples.iter_mut().find(|(m, _)| *m == members) {
                            Some((_, v)) => v.push(sample),
                            None => samples.push((members, vec![sample])),
                        }
                    }
                }
            }
            tune::set_policy(Some(auto));
            // Where the rest of the frame goes: each node's own calls, per
            // frame, with fusion off and on (grouped nodes show 0 when on).
            let runs = (rounds * frames.len()) as f64;
            let per = |o: &GroupTime, i: usize| o.per_node.get(i).map_or(0.0, |d| ms(*d) / runs);
            let rest: Vec<String> = (0..L2::ir().nodes.len())
                .map(|i| {
                    format!(
                        "{} {:.2}/{:.2}",
                        L2::ir().nodes[i].name,
                        per(&obs[0], i),
                        per(&obs[2], i)
                    )
                })
                .collect();
            println!(
                "  per node, ms a frame, off/on ({w}x{h} {mode:?}): {}",
                rest.join(", ")
            );
            assert_eq!(
                obs[1].declined + obs[2].declined + obs[3].declined,
                0,
                "a group declined a frame"
            );
            let rows: Vec<(String, [Duration; 4])> = samples
                .into_iter()
                .map(|(members, v)| {
                    let names: Vec<&str> = members
                        .iter()
                        .map(|&n| L2::ir().nodes[n as usize].name.as_ref())
                        .collect();
                    let col = |c: usize| median(v.iter().map(|s| s[c]).collect());
                    (names.join(", "), [col(0), col(1), col(2), col(3)])
                })
                .collect();
            for (names, [m, d, t, u]) in rows {
                let ratio = |x: Duration| x.as_secs_f64() / m.as_secs_f64();
                group_rows.push(format!(
                    "| {w}x{h} | {mode:?} | {names} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
                    ms(m),
                    ms(d),
                    ms(t),
                    ms(u),
                    ratio(d),
                    ratio(t),
                    ratio(u),
                ));
            }
        }
    }
    println!();
    for d in tune::decisions() {
        chosen.push(format!("  {d}"));
    }
    println!("strips measured:");
    for line in chosen {
        println!("{line}");
    }
    println!();
    println!(
        "| size | mode | group | members' calls ms | group, default strips ms | group, tuned ms | group, unfused ms | default ÷ members | tuned ÷ members | unfused ÷ members |"
    );
    println!("|---|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for row in group_rows {
        println!("{row}");
    }
    let uptime = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("\nload average: {}", uptime.trim());
}
