//! Compile-time behaviour of `cortex_graph!`: every error category has a
//! compile-fail case with its expected message (`tests/ui/fail/*.stderr`),
//! and the pass cases compile and run.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
