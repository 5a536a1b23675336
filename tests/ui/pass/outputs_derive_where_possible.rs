// `<Name>Outputs` and `<Name>State` are Debug, Clone and PartialEq when
// their fields are, so `unwrap_err()` and comparisons compile; a field type
// without them does not make the pipeline fail to compile.
use cortex::cortex_graph;

#[path = "../differential.rs"]
mod differential;

#[derive(Debug, Clone, PartialEq)]
pub struct Report { pub v: f32 }
pub struct Opaque;

fn report(x: &f32) -> Result<Report, std::io::Error> {
    if *x < 0.0 { Err(std::io::Error::other("negative")) } else { Ok(Report { v: *x }) }
}
fn opaque(_: &f32) -> Opaque { Opaque }

cortex_graph! {
    pipeline P {
        input x: f32;
        state last: f32 = 0.0;
        node r = report(x)?;
        node keep = id(x);
        keep -> last;
        node sum = add(keep, last);
        output r: Report, sum: f32;
    }
}

cortex_graph! {
    pipeline Q {
        input x: f32;
        node o = opaque(x);
        output o: Opaque;
    }
}

fn id(x: &f32) -> f32 { *x }
fn add(a: &f32, b: &f32) -> f32 { a + b }

fn main() {
    differential::modes_match_plans::<P, _>(&[1.0f32, 2.0, -1.0, 4.0]);
    let mut p = P::new();
    let a = p.run(PMode::Full, &1.0).unwrap();
    let b = a.clone();
    assert_eq!(a, b);
    assert_eq!(format!("{a:?}"), "POutputs { r: Report { v: 1.0 }, sum: 1.0 }");
    let err = p.run(PMode::Full, &-1.0).unwrap_err();
    assert!(err.to_string().contains("negative"));
    assert_eq!(p.state().clone(), PState { last: 1.0 });
    let _ = Q::new().run(QMode::Full, &1.0).unwrap().o;
}
