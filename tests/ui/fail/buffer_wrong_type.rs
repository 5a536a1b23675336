use cortex::cortex_graph;

fn widen_into(x: &Vec<u8>, out: &mut Vec<u16>) {
    out.clear();
    out.extend(x.iter().map(|&v| u16::from(v)));
}

cortex_graph! {
    pipeline P {
        input x: Vec<u8>;
        node w: Vec<u32> = widen_into(x, &mut w);
        output w: Vec<u32>;
    }
}

fn main() {}
