use cortex::cortex_graph;

fn both(x: &Vec<u8>, a: &mut Vec<u8>, b: &mut Vec<u8>) {
    a.clone_from(x);
    b.clone_from(x);
}

cortex_graph! {
    pipeline P {
        input x: Vec<u8>;
        node d: Vec<u8> = both(x, &mut d, &mut d);
        output d: Vec<u8>;
    }
}

fn main() {}
