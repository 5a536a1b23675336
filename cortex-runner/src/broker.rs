//! `run --publish` in the runner: the publisher (`crate::publish`,
//! feature `mqtt`) started from the command line, handed each frame's JSON
//! line, and closed with its summary line; a build without `mqtt` refuses
//! the flag.

use std::io::Write;

use crate::error::RunnerError;

/// The broker publisher of `--publish` (feature `mqtt`).
#[cfg(feature = "mqtt")]
pub(crate) use crate::publish::Publisher;

/// A build without `mqtt` has no publisher (`--publish` is refused).
#[cfg(not(feature = "mqtt"))]
#[derive(Debug)]
pub(crate) enum Publisher {}

/// Hands a frame's JSON line to the publisher (it never waits).
#[cfg(feature = "mqtt")]
pub(crate) fn publish(publisher: &Publisher, stream: u32, line: String) {
    publisher.publish(stream, line.into_bytes());
}

/// A build without `mqtt` has no publisher to hand lines to.
#[cfg(not(feature = "mqtt"))]
pub(crate) fn publish(publisher: &Publisher, _: u32, _: String) {
    match *publisher {}
}

/// Starts the publisher `run --publish` asks for (none without the flag).
#[cfg(feature = "mqtt")]
pub(crate) fn start_publisher(
    args: &crate::cli::RunArgs,
) -> Result<Option<Publisher>, RunnerError> {
    use crate::publish::{PublishError, PublishOptions, Target};
    let Some(url) = &args.publish else {
        if args.publish_queue.is_some() {
            return Err(RunnerError::Usage("--publish-queue needs --publish".into()));
        }
        return Ok(None);
    };
    let mut options = PublishOptions::default();
    if let Some(n) = args.publish_queue {
        options.queue = usize::try_from(n).unwrap_or(usize::MAX);
    }
    let started = Target::parse(url).and_then(|t| Publisher::start(t, options));
    match started {
        Ok(p) => Ok(Some(p)),
        Err(PublishError::Thread(source)) => Err(RunnerError::Io {
            what: "--publish".into(),
            source,
        }),
        Err(e) => Err(RunnerError::Usage(e.to_string())),
    }
}

/// A build without `mqtt` refuses `--publish`.
#[cfg(not(feature = "mqtt"))]
pub(crate) fn start_publisher(
    args: &crate::cli::RunArgs,
) -> Result<Option<Publisher>, RunnerError> {
    match (&args.publish, args.publish_queue) {
        (None, None) => Ok(None),
        _ => Err(RunnerError::Usage(
            "--publish needs a build with `--features mqtt`".into(),
        )),
    }
}

/// Ends `--publish` once the run is over: waits (bounded) for the queue to
/// drain, and writes the publisher's summary line unless `quiet`.
#[cfg(feature = "mqtt")]
pub(crate) fn close_publisher(
    publisher: Option<&Publisher>,
    quiet: bool,
    stderr: &mut dyn Write,
) -> Result<(), RunnerError> {
    let Some(p) = publisher else {
        return Ok(());
    };
    let stats = p.close();
    if quiet {
        return Ok(());
    }
    crate::sink::write_out(stderr, &format!("{}\n", stats.line(p.target())))
}

/// A build without `mqtt` has no publisher to close.
#[cfg(not(feature = "mqtt"))]
pub(crate) fn close_publisher(
    publisher: Option<&Publisher>,
    _: bool,
    _: &mut dyn Write,
) -> Result<(), RunnerError> {
    match publisher {
        None => Ok(()),
        Some(p) => match *p {},
    }
}
