// An invalid pipeline's placeholders call none of its functions; the
// imports only its nodes use stay used all the same, so the one mistake (a
// dangling edge) is the one error, even under `deny(warnings)`.
#![deny(warnings)]

mod kernels {
    pub fn double(x: &u32) -> u32 {
        x * 2
    }

    pub mod more {
        pub fn halve(x: &u32) -> u32 {
            x / 2
        }
    }
}

use cortex::cortex_graph;
use kernels::double;
use kernels::more;

cortex_graph! {
    pipeline P {
        input x: u32;
        node a = double(x);
        node b = more::halve(aa);
        output b: u32;
    }
}

fn main() {}
