use cortex::cortex_graph;

fn double(x: &u32) -> u32 { x * 2 }

cortex_graph! {
    #[parallel]
    #[parallel]
    pipeline P {
        input x: u32;
        node d = double(x);
        output d: u32;
    }
}

fn main() {
    let _ = P::new().run_with(&mut cortex::Run::mode(PMode::Full).parallel(), &1, &mut POutputs::default());
}
