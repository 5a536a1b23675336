use cortex::cortex_graph;

/// A buffer type the pipeline cannot create: no `Default`.
#[derive(Clone)]
pub struct Canvas(Vec<u8>);

fn paint(x: &Vec<u8>, out: &mut Canvas) { out.0.clone_from(x) }

cortex_graph! {
    pipeline P {
        input x: Vec<u8>;
        node canvas: Canvas = paint(x, &mut canvas);
        output canvas: Canvas;
    }
}

fn main() {}
