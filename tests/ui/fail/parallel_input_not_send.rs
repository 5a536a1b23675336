// An input of a `#[parallel]` pipeline that is not `Send + Sync`: one error
// at the input, in the pipeline's words, for the pool's frames and waves,
// the pipelined stream and `ParallelPipeline::OwnedInputs` (declared
// `Send + Sync`) alike: none of their own bounds is reported again at the
// whole invocation.
use std::rc::Rc;

use cortex::cortex_graph;

fn read(r: &Rc<u32>) -> u32 {
    **r
}

fn sum(a: &u32, b: &u32) -> u32 {
    a + b
}

cortex_graph! {
    #[parallel]
    pipeline P {
        input x: Rc<u32>;
        node a = read(x);
        node b = read(x);
        node s = sum(a, b);
        output s: u32;
    }
}

fn main() {}
