use cortex::cortex_graph;

fn fill_checked(x: &Vec<u8>, out: &mut Vec<u8>) -> Result<(), String> {
    if x.is_empty() {
        return Err("empty".into());
    }
    out.clear();
    out.extend_from_slice(x);
    Ok(())
}

cortex_graph! {
    pipeline P {
        input x: Vec<u8>;
        node f: Vec<u8> = fill_checked(x, &mut f);
        output f: Vec<u8>;
    }
}

fn main() {}
