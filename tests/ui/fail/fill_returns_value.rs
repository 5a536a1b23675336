use cortex::cortex_graph;

fn fill_and_count(x: &Vec<u8>, out: &mut Vec<u8>) -> usize {
    out.clear();
    out.extend_from_slice(x);
    out.len()
}

cortex_graph! {
    pipeline P {
        input x: Vec<u8>;
        node f: Vec<u8> = fill_and_count(x, &mut f);
        output f: Vec<u8>;
    }
}

fn main() {}
