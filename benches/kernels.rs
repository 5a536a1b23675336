//! placeholder bench, replaced by its issue
fn main() {}
