//! Compile-time behaviour of `cortex_graph!`: every error category has a
//! compile-fail case with its expected message (`tests/ui/fail/*.stderr`),
//! and the pass cases compile and run.

// The cases use no optional feature, and trybuild builds the crate again in
// its own target directory with the features of this run: with system-library
// features on (OpenCV's bindings take minutes) that second build buys nothing,
// so the ui suite runs in the default configuration only.
#[test]
#[cfg_attr(
    any(
        feature = "opencv",
        feature = "gstreamer",
        feature = "turbojpeg",
        feature = "ffmpeg"
    ),
    ignore = "runs in the default configuration"
)]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
