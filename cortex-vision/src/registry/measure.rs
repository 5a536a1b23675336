//! Running a call along a kernel order until one succeeds, and timing the
//! candidates of a new shape against each other.

use std::time::{Duration, Instant};

use super::config::TuneConfig;
use super::decision::Failure;
use super::error::RegistryError;
use super::op::{Kernel, Op};
use crate::ops::OpsError;

/// Runs `args` with the kernels of `order` in turn into `out` until one
/// succeeds; returns its position in `order` and the failures before it.
/// `first_error` is the error of `order[0]` when it already ran.
///
/// When every kernel fails the input is at fault (every implementation
/// refuses it): the first error is returned and no failure is recorded.
pub(super) fn run_along<O: Op>(
    kernels: &[Kernel<O>],
    order: &[usize],
    args: &O::Args<'_>,
    out: &mut O::Output,
    first_error: Option<OpsError>,
) -> Result<(usize, Vec<Failure>), RegistryError> {
    let mut errors: Vec<(&'static str, OpsError)> = Vec::new();
    let skip = usize::from(first_error.is_some());
    if let Some(e) = first_error {
        // The slot may have been dropped meanwhile (a concurrent `force`):
        // the error is still the call's.
        let name = order
            .first()
            .and_then(|&i| kernels.get(i))
            .map_or("?", |k| k.name);
        errors.push((name, e));
    }
    for (pos, &i) in order.iter().enumerate().skip(skip) {
        let Some(k) = kernels.get(i) else { continue };
        match (k.run)(args, out) {
            Ok(()) => {
                let failures = errors
                    .into_iter()
                    .map(|(kernel, e)| Failure {
                        kernel,
                        error: e.to_string(),
                        fallback: k.name,
                    })
                    .collect();
                return Ok((pos, failures));
            }
            Err(e) => errors.push((k.name, e)),
        }
    }
    Err(match errors.into_iter().next() {
        Some((kernel, source)) => RegistryError::Kernel {
            op: O::NAME,
            kernel,
            source,
        },
        None => RegistryError::NoKernel {
            op: O::NAME,
            shape: String::new(),
            why: "no kernel to run".into(),
        },
    })
}

/// A measurement's ranking (kernel indices, winner first), the failures
/// and the medians, fastest first.
pub(super) type Measured = (Vec<usize>, Vec<Failure>, Vec<(&'static str, Duration)>);

/// Times each candidate on `args`: `warmup` untimed rounds, then `runs`
/// rounds (more within the time budget) interleaving the candidates; ranks
/// them by median (with the tie band), leaves the winner's last output in
/// `out` and returns the ranking, the failures and the medians, fastest
/// first. Each candidate fills an output of its own, so that the timed runs
/// reuse its allocations as steady-state calls do.
pub(super) fn measure<O: Op>(
    kernels: &[Kernel<O>],
    candidates: &[usize],
    args: &O::Args<'_>,
    out: &mut O::Output,
    tune: &TuneConfig,
) -> Result<Measured, RegistryError> {
    let n = candidates.len();
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); n];
    let mut outputs: Vec<O::Output> = (0..n).map(|_| O::Output::default()).collect();
    let mut filled = vec![false; n];
    let mut errors: Vec<Option<OpsError>> = vec![None; n];
    let (min_runs, max_runs) = (tune.runs.max(1), tune.max_runs.max(tune.runs.max(1)));
    let mut timed = Duration::ZERO;
    let mut round: u32 = 0;
    loop {
        let runs_done = round.saturating_sub(tune.warmup);
        if runs_done >= max_runs || (runs_done >= min_runs && timed >= tune.budget) {
            break;
        }
        for (c, &i) in candidates.iter().enumerate() {
            let Some(k) = kernels.get(i) else { continue };
            if errors[c].is_some() {
                continue;
            }
            let t = Instant::now();
            let r = (k.run)(args, &mut outputs[c]);
            let dt = t.elapsed();
            match r {
                Ok(()) => {
                    if round >= tune.warmup {
                        samples[c].push(dt);
                        timed += dt;
                    }
                    filled[c] = true;
                }
                Err(e) => errors[c] = Some(e),
            }
        }
        round += 1;
    }
    for s in samples.iter_mut() {
        s.sort();
    }
    let mut medians: Vec<(usize, Duration)> = (0..n)
        .filter(|&c| errors[c].is_none())
        .filter_map(|c| samples[c].get(samples[c].len() / 2).map(|&m| (c, m)))
        .collect();
    if medians.is_empty() {
        let (c, e) = errors
            .iter_mut()
            .enumerate()
            .find_map(|(c, e)| e.take().map(|e| (c, e)))
            .unwrap_or((0, OpsError::Encode("no candidate ran".into())));
        return Err(RegistryError::Kernel {
            op: O::NAME,
            kernel: candidates
                .get(c)
                .and_then(|&i| kernels.get(i))
                .map_or("?", |k| k.name),
            source: e,
        });
    }
    medians.sort_by_key(|m| m.1);
    let fastest = medians[0].1.as_secs_f64();
    let band = fastest * (1.0 + tune.tie.max(0.0));
    // Candidates are in the op's kernel order: the first within the band wins.
    let winner = medians
        .iter()
        .filter(|m| m.1.as_secs_f64() <= band)
        .map(|m| m.0)
        .min()
        .unwrap_or(medians[0].0);
    let name = |c: usize| kernels.get(candidates[c]).map_or("?", |k| k.name);
    let mut ranked = vec![candidates[winner]];
    ranked.extend(
        medians
            .iter()
            .filter(|m| m.0 != winner)
            .map(|m| candidates[m.0]),
    );
    let failures = errors
        .iter()
        .enumerate()
        .filter_map(|(c, e)| {
            e.as_ref().map(|e| Failure {
                kernel: name(c),
                error: e.to_string(),
                fallback: name(winner),
            })
        })
        .collect();
    let times = medians.iter().map(|&(c, d)| (name(c), d)).collect();
    match (filled.get(winner), outputs.get_mut(winner)) {
        (Some(true), Some(won)) => {
            std::mem::swap(out, won);
            Ok((ranked, failures, times))
        }
        _ => Err(RegistryError::NoKernel {
            op: O::NAME,
            shape: String::new(),
            why: "internal: the winner has no output".into(),
        }),
    }
}
