use cortex::cortex_graph;

fn double_into(x: &Vec<u8>, out: &mut Vec<u8>) {
    out.clear();
    out.extend(x.iter().map(|v| v * 2));
}

cortex_graph! {
    pipeline P {
        input x: Vec<u8>;
        node d = double_into(x, &mut d);
        output d: Vec<u8>;
    }
}

fn main() {}
