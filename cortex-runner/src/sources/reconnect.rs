//! A network input that comes back: when the source it opened stalls
//! (its read timeout), fails or ends, [`Reconnecting`] opens it again with
//! back-off under a [`ReconnectPolicy`], and counts the frames missed
//! while it was away from the time away and the input's frame rate.
//! Frame numbers and timestamps go on across reconnections (they skip the
//! missed frames), so a consumer sees the gap where it was.

use std::time::{Duration, Instant};

use super::{Frame, FrameSource, SourceError};

/// Opens the input once more.
pub type Reopen = Box<dyn FnMut() -> Result<Box<dyn FrameSource + Send>, SourceError> + Send>;

/// How a network input is reopened (`--reconnect`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReconnectPolicy {
    /// Attempts in a row before giving up (`None`: no limit but
    /// `give_up`).
    pub attempts: Option<u32>,
    /// The wait before the first attempt after a loss; it doubles after
    /// each failed attempt up to `max_interval`.
    pub interval: Duration,
    /// The longest wait between attempts.
    pub max_interval: Duration,
    /// How long the input may stay away before the stream ends as failed
    /// (`None`: no limit but `attempts`).
    pub give_up: Option<Duration>,
}

impl Default for ReconnectPolicy {
    fn default() -> Self {
        ReconnectPolicy {
            attempts: None,
            interval: Duration::from_millis(500),
            max_interval: Duration::from_secs(8),
            give_up: Some(Duration::from_secs(300)),
        }
    }
}

impl ReconnectPolicy {
    /// Parses `KEY=VALUE,…` over the defaults: `attempts=N` (0: no
    /// limit), `interval=T`, `max-interval=T`, `give-up=T` (0: never),
    /// each `T` seconds (`2`, `0.5`, `2s`) or milliseconds (`500ms`). An
    /// empty spec is the defaults.
    pub fn parse(spec: &str) -> Result<ReconnectPolicy, String> {
        let mut p = ReconnectPolicy::default();
        for part in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = part.split_once('=').ok_or_else(|| {
                format!("`{part}`: expected KEY=VALUE (attempts, interval, max-interval, give-up)")
            })?;
            match k.trim() {
                "attempts" => {
                    let n: u32 = v
                        .trim()
                        .parse()
                        .map_err(|_| format!("attempts=`{v}`: a whole number"))?;
                    p.attempts = (n > 0).then_some(n);
                }
                "interval" => p.interval = duration(v)?,
                "max-interval" => p.max_interval = duration(v)?,
                "give-up" => {
                    let d = duration(v)?;
                    p.give_up = (!d.is_zero()).then_some(d);
                }
                other => {
                    return Err(format!(
                        "unknown key `{other}` (attempts, interval, max-interval, give-up)"
                    ))
                }
            }
        }
        if p.interval.is_zero() {
            return Err("interval must be more than 0".into());
        }
        p.max_interval = p.max_interval.max(p.interval);
        Ok(p)
    }
}

/// `2`, `0.5`, `2s`, `500ms`: a duration of at most a day.
pub(crate) fn duration(v: &str) -> Result<Duration, String> {
    let t = v.trim();
    let (num, scale) = if let Some(ms) = t.strip_suffix("ms") {
        (ms, 1e-3)
    } else {
        (t.strip_suffix('s').unwrap_or(t), 1.0)
    };
    num.trim()
        .parse::<f64>()
        .ok()
        .map(|n| n * scale)
        .filter(|s| s.is_finite() && (0.0..=86_400.0).contains(s))
        .map(Duration::from_secs_f64)
        .ok_or_else(|| {
            format!("`{v}` is not a duration (seconds, e.g. 2, 0.5s, 500ms; at most a day)")
        })
}

/// A source reopened under a [`ReconnectPolicy`]; see the module
/// documentation.
pub struct Reconnecting {
    what: String,
    reopen: Reopen,
    policy: ReconnectPolicy,
    current: Option<Box<dyn FrameSource + Send>>,
    /// The connection's first frame is still to come.
    fresh: bool,
    next_index: u64,
    /// When the last frame was delivered, and its timestamp.
    last: Option<(Instant, Option<f64>)>,
    /// Added to the current connection's timestamps.
    offset: f64,
    rate: Option<f64>,
    reconnects: u64,
    missed: u64,
    last_error: Option<String>,
    done: bool,
}

impl Reconnecting {
    /// Opens the input through `reopen` (retried under `policy` when it
    /// fails, as after a loss: a camera may come up after the run starts).
    ///
    /// # Errors
    /// The last attempt's error once the policy gives up.
    pub fn open(what: &str, policy: ReconnectPolicy, reopen: Reopen) -> Result<Self, SourceError> {
        let mut r = Reconnecting {
            what: what.to_string(),
            reopen,
            policy,
            current: None,
            fresh: true,
            next_index: 0,
            last: None,
            offset: 0.0,
            rate: None,
            reconnects: 0,
            missed: 0,
            last_error: None,
            done: false,
        };
        r.connect()?;
        Ok(r)
    }

    /// Reconnections so far.
    pub fn reconnects(&self) -> u64 {
        self.reconnects
    }

    /// Frames missed while away so far.
    pub fn missed(&self) -> u64 {
        self.missed
    }

    /// Opens the input, trying again with back-off until it opens or the
    /// policy gives up.
    fn connect(&mut self) -> Result<(), SourceError> {
        let started = Instant::now();
        let mut wait = self.policy.interval;
        let mut tries = 0u32;
        loop {
            tries += 1;
            match (self.reopen)() {
                Ok(source) => {
                    if let Some(r) = source.frame_rate() {
                        self.rate = Some(r);
                    }
                    self.current = Some(source);
                    self.fresh = true;
                    return Ok(());
                }
                Err(e) => {
                    let why = e.to_string();
                    self.last_error = Some(why.clone());
                    let away = started.elapsed();
                    let out_of_tries = self.policy.attempts.is_some_and(|a| tries >= a);
                    let too_long = self.policy.give_up.is_some_and(|g| away + wait > g);
                    if out_of_tries || too_long {
                        return Err(SourceError::Video {
                            what: self.what.clone(),
                            why: format!(
                                "gave up reconnecting after {tries} attempts in {:.1} s (last error: {why})",
                                away.as_secs_f64()
                            ),
                        });
                    }
                    std::thread::sleep(wait);
                    wait = (wait * 2).min(self.policy.max_interval);
                }
            }
        }
    }

    /// A frame of the current connection, renumbered and retimed to go on
    /// from the last one delivered; the first after a loss carries the
    /// frames missed.
    fn deliver(&mut self, mut frame: Frame) -> Frame {
        let now = Instant::now();
        if std::mem::take(&mut self.fresh) {
            if let Some((at, last_ts)) = self.last {
                let away = now.duration_since(at).as_secs_f64();
                // The frames the input would have delivered in the time
                // between the last frame and this one, less this one.
                let missed = self
                    .rate
                    .map_or(0, |r| ((away * r).round() as u64).saturating_sub(1));
                frame.missed_before += missed;
                self.missed += missed;
                self.reconnects += 1;
                self.offset = match (last_ts, frame.timestamp) {
                    (Some(last), Some(t)) => last + away - t,
                    _ => 0.0,
                };
            }
        }
        frame.index = self.next_index + frame.missed_before;
        self.next_index = frame.index + 1;
        frame.timestamp = frame.timestamp.map(|t| t + self.offset);
        self.last = Some((now, frame.timestamp));
        frame
    }
}

impl FrameSource for Reconnecting {
    fn next_frame(&mut self) -> Option<Result<Frame, SourceError>> {
        while !self.done {
            let Some(source) = self.current.as_mut() else {
                if let Err(e) = self.connect() {
                    self.done = true;
                    return Some(Err(e));
                }
                continue;
            };
            match source.next_frame() {
                Some(Ok(frame)) => return Some(Ok(self.deliver(frame))),
                // Stalled past the read timeout, failed or closed: the
                // input is away; the wait before the next attempt starts.
                Some(Err(e)) => self.last_error = Some(e.to_string()),
                None => self.last_error = Some("the input ended".into()),
            }
            self.current = None;
            std::thread::sleep(self.policy.interval);
        }
        None
    }

    fn describe(&self) -> String {
        self.current.as_ref().map_or_else(
            || format!("{} (reconnecting)", self.what),
            |s| format!("{} (reconnecting)", s.describe()),
        )
    }

    fn frame_rate(&self) -> Option<f64> {
        self.rate
    }

    fn notes(&self) -> Vec<String> {
        let mut notes = self.current.as_ref().map(|s| s.notes()).unwrap_or_default();
        if self.reconnects > 0 {
            notes.push(format!(
                "{}: reconnected {} time{}, {} frames missed while away (from the time away at {}; last loss: {})",
                self.what,
                self.reconnects,
                if self.reconnects == 1 { "" } else { "s" },
                self.missed,
                self.rate
                    .map_or_else(|| "an unknown frame rate".into(), |r| format!("{r:.2} frames/s")),
                self.last_error.as_deref().unwrap_or("unknown")
            ));
        }
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies() {
        let p = ReconnectPolicy::parse("").unwrap();
        assert_eq!(p, ReconnectPolicy::default());
        let p = ReconnectPolicy::parse("attempts=3, interval=250ms,give-up=0").unwrap();
        assert_eq!(p.attempts, Some(3));
        assert_eq!(p.interval, Duration::from_millis(250));
        assert_eq!(p.give_up, None);
        let p = ReconnectPolicy::parse("interval=2s,max-interval=1").unwrap();
        assert_eq!(p.max_interval, Duration::from_secs(2));
        for bad in [
            "attempts",
            "attempts=-1",
            "interval=0",
            "interval=x",
            "give-up=2d",
            "wait=1",
            "interval=1e9",
        ] {
            assert!(ReconnectPolicy::parse(bad).is_err(), "{bad}");
        }
    }

    /// A source of `n` frames at 10 frames/s whose timestamps start at 0.
    struct Clip(u64, u64);
    impl FrameSource for Clip {
        fn next_frame(&mut self) -> Option<Result<Frame, SourceError>> {
            (self.0 < self.1).then(|| {
                self.0 += 1;
                Ok(Frame {
                    index: self.0 - 1,
                    timestamp: Some((self.0 - 1) as f64 / 10.0),
                    image: ndarray::Array3::zeros((1, 1, 3)),
                    missed_before: 0,
                })
            })
        }
        fn describe(&self) -> String {
            "clip".into()
        }
        fn frame_rate(&self) -> Option<f64> {
            Some(10.0)
        }
    }

    #[test]
    fn a_closed_input_is_reopened_and_the_gap_counted() {
        // Every opening serves 3 frames; the second fails once first.
        let mut opened = 0;
        let reopen: Reopen = Box::new(move || {
            opened += 1;
            if opened == 2 {
                return Err(SourceError::Unsupported("refused".into()));
            }
            Ok(Box::new(Clip(0, 3)) as Box<dyn FrameSource + Send>)
        });
        let policy = ReconnectPolicy {
            interval: Duration::from_millis(100),
            max_interval: Duration::from_millis(100),
            attempts: Some(2),
            give_up: None,
        };
        let mut r = Reconnecting::open("clip", policy, reopen).unwrap();
        let frames: Vec<Frame> = (0..6).map(|_| r.next_frame().unwrap().unwrap()).collect();
        // Away at least two intervals (the loss, the refused attempt):
        // at least 0.2 s at 10 frames/s is at least 1 frame missed.
        let missed = frames[3].missed_before;
        assert!(missed >= 1, "{missed}");
        let index: Vec<u64> = frames.iter().map(|f| f.index).collect();
        assert_eq!(index, [0, 1, 2, 3 + missed, 4 + missed, 5 + missed]);
        let t3 = frames[3].timestamp.unwrap();
        assert!(t3 >= 0.2 + 0.2 - 1e-9, "{t3}");
        assert_eq!(r.reconnects(), 1);
        assert_eq!(r.missed(), missed);
        assert!(
            r.notes()[0].contains("reconnected 1 time,"),
            "{:?}",
            r.notes()
        );
    }

    #[test]
    fn the_policy_gives_up() {
        let reopen: Reopen = Box::new(|| Err(SourceError::Unsupported("refused".into())));
        let policy = ReconnectPolicy {
            interval: Duration::from_millis(1),
            max_interval: Duration::from_millis(1),
            attempts: Some(3),
            give_up: None,
        };
        let e = Reconnecting::open("cam", policy, reopen)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.starts_with("cam: gave up reconnecting after 3 attempts"),
            "{e}"
        );
        assert!(e.ends_with("(last error: refused)"), "{e}");
    }
}
