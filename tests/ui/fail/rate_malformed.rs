// Each malformed rate is one error at its token; the mode keeps its
// variant, and the items after it are still declared (`SAVE` lacks the
// `;` that ends its rates).
use cortex::cortex_graph;

fn to_gray(f: &Vec<u8>) -> Vec<f32> { f.iter().map(|&p| p as f32).collect() }
fn text(g: &Vec<f32>) -> Vec<f32> { g.clone() }
fn fuse(a: Option<&Vec<f32>>, b: &Vec<f32>) -> f32 { a.map_or(0.0, |a| a[0]) + b[0] }
fn cut(g: &Vec<f32>) -> bool { g.is_empty() }

cortex_graph! {
    pipeline P {
        input frame: Vec<u8>;
        mode NO_COUNT { wt: 1.0 } where text every;
        mode NOT_A_NUMBER { wt: 1.0 } where text every x;
        mode FRACTION { wt: 1.0 } where text every 2.5;
        mode EMPTY_WHERE { wt: 1.0 } where ;
        mode NO_TRIGGER { wt: 1.0 } where text every 4 or;
        mode NO_OR { wt: 1.0 } where text every 4 shot;
        mode SAVE { wt: 1.0 } where text every 4 or shot
        node gray = to_gray(frame);
        node shot = cut(gray);
        #[weight_key = "wt"] node text: Vec<f32> = text(gray);
        node out = fuse(text, gray);
        output out: f32, shot: bool;
    }
}

fn main() {
    let mut p = P::new();
    for mode in [PMode::NoCount, PMode::NotANumber, PMode::Fraction, PMode::EmptyWhere, PMode::NoTrigger, PMode::NoOr, PMode::Save] {
        let _ = p.run(mode, &vec![1, 2]).map(|o| o.out);
    }
}
