//! What the runner crate's tests share: a program run in-process on
//! arguments of the test's, its output streams captured.

use cortex_core::pipeline::Pipeline;
use cortex_runner::{App, Io, RunnerError};

/// Runs `app` with `args` (after the program name `l2`) and no stdin; the
/// result, stdout and stderr.
pub fn run_captured<P: Pipeline + 'static>(
    app: App<P>,
    args: &[&str],
) -> (Result<(), RunnerError>, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let io = Io {
        stdin: Box::new(std::io::empty()),
        stdout: &mut out,
        stderr: &mut err,
        progress: false,
    };
    let mut full = vec!["l2"];
    full.extend_from_slice(args);
    let result = app.run_with(full, io);
    let text = |b: Vec<u8>| String::from_utf8(b).expect("UTF-8 output");
    (result, text(out), text(err))
}
