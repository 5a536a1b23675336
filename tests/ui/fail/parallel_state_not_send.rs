// A state of a `#[parallel]` pipeline that is not `Send + Sync`: one error,
// at the state (the node writing it has its type, and is checked as the
// state), not at the node or the whole invocation.
use std::rc::Rc;

use cortex::cortex_graph;

fn add(x: &u32, prev: &Rc<u32>) -> Rc<u32> {
    Rc::new(x + **prev)
}

fn read(r: &Rc<u32>) -> u32 {
    **r
}

cortex_graph! {
    #[parallel]
    pipeline P {
        input x: u32;
        state prev: Rc<u32> = Rc::new(0);
        node next = add(x, prev);
        node value = read(next);
        next -> prev;
        output value: u32;
    }
}

fn main() {}
