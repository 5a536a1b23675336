//! L2 with its fused groups against the same pipeline with fusion off, on
//! the sequential (`run_into`) and parallel (`run_parallel_into`) engines,
//! at 768×576 and 1920×1080 (or `BENCH_SIZES`), in BALANCED and POWER_SAVE; and the fused
//! groups' own time against their members' whole-frame calls.
//!
//! Interleaved rounds (every variant once per round, in rotating order, so
//! load from other processes hits them alike) over frames of the built-in
//! synthetic clip; medians. Every variant's outputs are checked equal to
//! the unfused sequential run's before timing.
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

/// Time in fused groups, and in the whole-frame calls of their members.
#[derive(Default)]
struct GroupTime {
    members: Vec<NodeId>,
    started: Option<Instant>,
    node_started: Option<Instant>,
    in_groups: Duration,
    in_members: Duration,
    grouped: Vec<NodeId>,
    declined: usize,
    /// Per node: total time in its own calls.
    per_node: Vec<Duration>,
}

impl Observer for GroupTime {
    fn group_begin(&mut self, members: &'static [NodeId]) {
        self.started = Some(Instant::now());
        self.members = members.to_vec();
    }
    fn group_end(&mut self, fused: bool) {
        if let (true, Some(t)) = (fused, self.started.take()) {
            self.in_groups += t.elapsed();
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
        let d = t.elapsed();
        if self.grouped.contains(&node) {
            self.in_members += d;
        }
        let i = node as usize;
        if self.per_node.len() <= i {
            self.per_node.resize(i + 1, Duration::ZERO);
        }
        self.per_node[i] += d;
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
            // check: every variant gives the unfused outputs.
            for f in frames
                .iter()
                .cycle()
                .take(tune::MEASURED_RUNS + 4 * frames.len())
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
            // The groups alone: fused group time against the members'
            // whole-frame calls (sequential engine, same frames).
            let mut fused_obs = GroupTime::default();
            let mut plain_obs = GroupTime::default();
            let grouped: Vec<NodeId> = {
                let mut seen = GroupTime::default();
                let mut see = SeeGroups(&mut seen);
                pipes[1]
                    .run_with_fresh(&mut Run::mode(mode).observed(&mut see), &frames[0])
                    .expect("frame runs");
                seen.grouped
            };
            plain_obs.grouped = grouped.clone();
            fused_obs.grouped = grouped.clone();
            let (mut gs, mut ms_) = (Vec::new(), Vec::new());
            for r in 0..rounds {
                for f in &frames {
                    let (g0, m0) = (fused_obs.in_groups, plain_obs.in_members);
                    // Members that declined alone run their own calls
                    // after their group: their time counts on the fused side.
                    let alone0 = fused_obs.in_members;
                    if r % 2 == 0 {
                        pipes[1]
                            .run_with_fresh(&mut Run::mode(mode).observed(&mut fused_obs), f)
                            .expect("runs");
                        pipes[0]
                            .run_with_fresh(&mut Run::mode(mode).observed(&mut plain_obs), f)
                            .expect("runs");
                    } else {
                        pipes[0]
                            .run_with_fresh(&mut Run::mode(mode).observed(&mut plain_obs), f)
                            .expect("runs");
                        pipes[1]
                            .run_with_fresh(&mut Run::mode(mode).observed(&mut fused_obs), f)
                            .expect("runs");
                    }
                    gs.push(fused_obs.in_groups - g0 + (fused_obs.in_members - alone0));
                    ms_.push(plain_obs.in_members - m0);
                }
            }
            // Where the rest of the frame goes: each node's own calls, per
            // frame, with fusion off and on (grouped nodes show 0 when on).
            let runs = (rounds * frames.len()) as f64;
            let per = |o: &GroupTime, i: usize| o.per_node.get(i).map_or(0.0, |d| ms(*d) / runs);
            let rest: Vec<String> = (0..L2::ir().nodes.len())
                .map(|i| {
                    format!(
                        "{} {:.2}/{:.2}",
                        L2::ir().nodes[i].name,
                        per(&plain_obs, i),
                        per(&fused_obs, i)
                    )
                })
                .collect();
            println!(
                "  per node, ms a frame, off/on ({w}x{h} {mode:?}): {}",
                rest.join(", ")
            );
            let names: Vec<&str> = grouped
                .iter()
                .map(|&n| L2::ir().nodes[n as usize].name.as_ref())
                .collect();
            assert_eq!(fused_obs.declined, 0, "a group declined a frame");
            let (g, m) = (median(gs), median(ms_));
            group_rows.push(format!(
                "| {w}x{h} | {mode:?} | {} | {:.2} | {:.2} | {:.2}× |",
                names.join(", "),
                ms(m),
                ms(g),
                m.as_secs_f64() / g.as_secs_f64()
            ));
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
    println!("| size | mode | grouped nodes | members' calls ms | fused groups ms | × |");
    println!("|---|---|---|---:|---:|---:|");
    for row in group_rows {
        println!("{row}");
    }
    let uptime = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("\nload average: {}", uptime.trim());
}

/// Records which nodes the fused groups hold.
struct SeeGroups<'a>(&'a mut GroupTime);

impl Observer for SeeGroups<'_> {
    fn group_begin(&mut self, members: &'static [NodeId]) {
        self.0.grouped.extend_from_slice(members);
    }
}
