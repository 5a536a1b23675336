use cortex::cortex_graph;

fn fill(x: &Vec<u8>, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(x);
}

cortex_graph! {
    pipeline P {
        input x: Vec<u8>;
        node f: Vec<u8> = fill(x, &mut f)?;
        output f: Vec<u8>;
    }
}

fn main() {}
