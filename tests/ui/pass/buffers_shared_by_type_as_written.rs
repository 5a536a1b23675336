// Filled buffers are shared between values of the same declared type, the
// type compared as written up to spacing and `self::`: `Map` and
// `self::Map` share, `ops::Map` (which could be another type, and here is
// one) gets its own buffer.
use cortex::cortex_graph;

type Map = Vec<f32>;

mod ops {
    pub type Map = Vec<f64>;
}

fn step(x: &Vec<f32>, out: &mut Map) {
    out.clear();
    out.extend(x.iter().map(|v| v + 1.0));
}

fn widen(x: &Vec<f32>, out: &mut ops::Map) {
    out.clear();
    out.extend(x.iter().map(|&v| f64::from(v)));
}

cortex_graph! {
    pipeline Chain {
        input x: Vec<f32>;
        node a: Map = step(x, &mut a);
        node b: Map = step(a, &mut b);
        node c: self::Map = step(b, &mut c);
        node d: Map = step(c, &mut d);
        node e: ops::Map = widen(d, &mut e);
        output e: ops::Map;
    }
}

fn main() {
    let mut p = Chain::new();
    let out = p.run(ChainMode::ALL[0], &vec![1.0, 2.0]).unwrap();
    assert_eq!(out.e, vec![5.0, 6.0]);
    // `a`, `b`, `c`, `d` take turns in two buffers of `Map` (`c` is `a`'s,
    // `d` is `b`'s): three buffers, not four.
    let buffers: Vec<(&str, u32)> = p.buffer_bytes().iter().map(|&(ty, i, _)| (ty, i)).collect();
    assert_eq!(buffers, vec![("Map", 0), ("Map", 1), ("ops :: Map", 0)]);
}
