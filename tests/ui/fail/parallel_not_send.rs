use std::rc::Rc;

use cortex::cortex_graph;

fn share(x: &u32) -> Rc<u32> {
    Rc::new(*x)
}

fn read(r: &Rc<u32>) -> u32 {
    **r
}

cortex_graph! {
    #[parallel]
    pipeline P {
        input x: u32;
        node shared = share(x);
        node value = read(shared);
        output value: u32;
    }
}

fn main() {}
