// A mode weight whose node the mode eliminates anyway is a warning (here
// denied, to show it).
#![deny(deprecated)]
use cortex::cortex_graph;

fn src(x: &f32) -> f32 { *x }
fn edge(d: Option<&f32>) -> f32 { d.copied().unwrap_or(0.0) }
fn mix(a: Option<&f32>, e: Option<&f32>) -> f32 { a.copied().unwrap_or(0.0) + e.copied().unwrap_or(0.0) }

cortex_graph! {
    pipeline P {
        input x: f32;
        #[weight_key = "wd"] node detail = src(x);
        #[weight_key = "we"] node edges = edge(detail);
        #[weight_key = "wa"] node a = src(x);
        node out = mix(a, edges);
        mode FULL { wa: 1.0, wd: 1.0, we: 1.0 }
        mode CHEAP { wa: 1.0, wd: 0.5, we: 0.0 }
        output out: f32;
    }
}

fn main() {}
