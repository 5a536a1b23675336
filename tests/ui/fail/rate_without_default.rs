// A rated node's value is kept in a slot the pipeline owns, created with
// `Default::default()`: a type without `Default` is one error, at the type,
// saying so (the node fills no buffer).
use cortex::cortex_graph;

#[derive(Clone)]
pub struct Verdict(bool);

fn judge(x: &u32) -> Verdict { Verdict(*x > 3) }
fn show(v: &Verdict) -> bool { v.0 }

cortex_graph! {
    pipeline P {
        input x: u32;
        mode SAVE { } where verdict every 4;
        node verdict: Verdict = judge(x);
        node shown = show(verdict);
        output shown: bool;
    }
}

fn main() {}
