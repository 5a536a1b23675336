// Every node value of a `#[parallel]` pipeline crosses threads: each one
// that is not `Send + Sync` is one error at its node, whether it runs alone,
// beside others in a wave, in a pipelined stream's first stage, or is a
// filled buffer. Nothing is reported at the whole invocation or inside
// cortex's engine.
use std::cell::RefCell;
use std::rc::Rc;

use cortex::cortex_graph;

fn share(x: &i32) -> std::rc::Rc<i32> {
    Rc::new(*x)
}

fn left(r: &Rc<i32>) -> i32 {
    **r
}

fn fill(x: &i32, out: &mut RefCell<i32>) {
    *out.borrow_mut() = *x;
}

fn sum(a: &i32, b: &i32, c: &Rc<i32>, d: &RefCell<i32>) -> i32 {
    a + b + **c + *d.borrow()
}

cortex_graph! {
    #[parallel]
    pipeline P {
        input x: i32;
        node shared = share(x);
        node other: Rc<i32> = share(x);
        node cell: RefCell<i32> = fill(x, &mut cell);
        node l = left(shared);
        node r = left(other);
        node s = sum(l, r, shared, cell);
        output s: i32;
        mode A {}
        mode B {}
    }
}

fn main() {}
