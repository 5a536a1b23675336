//! The user-kernel example of `docs/compiler.md`, as written there: a
//! 3-row vertical maximum written by a user, fused with the library's gray
//! conversion, checked against a direct computation at several strip counts.

#![cfg(feature = "runner")]

// --- the example, as in the guide ---
use cortex::ops::strip::GrayStrip;
use cortex::strip::{
    AnyPlane, Geometry, GroupBuilder, Inputs, Kind, StripError, StripKernel, StripMut, Strips,
    Window,
};

/// The largest of each pixel and the pixels above and below it (the edge
/// rows repeat themselves).
struct VerticalMax3;

impl StripKernel for VerticalMax3 {
    type Out = u8;
    fn name(&self) -> &str {
        "vertical_max3"
    }
    fn kind(&self) -> Kind {
        Kind::Stencil(Window::symmetric(1)) // reads one row above and below
    }
    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError> {
        Ok(inputs[0]) // same size as its input
    }
    fn run(&self, inputs: &Inputs<'_>, out: &mut StripMut<'_, u8>) -> Result<(), StripError> {
        let src = inputs.plane::<u8>(0)?;
        let last = src.height() - 1;
        for (y, row) in out.rows_mut() {
            // Rows by their index in the whole frame; the border rule is ours.
            let (up, mid, down) = (
                src.row(y.saturating_sub(1))?,
                src.row(y)?,
                src.row((y + 1).min(last))?,
            );
            for (x, d) in row.iter_mut().enumerate() {
                *d = up[x].max(mid[x]).max(down[x]);
            }
        }
        Ok(())
    }
}

fn brightest_neighbours(rgb: &[u8], width: usize, height: usize) -> Result<Vec<u8>, StripError> {
    let mut g = GroupBuilder::new();
    let frame = g.input();
    let gray = g.kernel(GrayStrip, &[frame])?; // stays in per-strip scratch
    let max = g.kernel(VerticalMax3, &[gray])?;
    g.output(max)?; // leaves the group: a whole-frame buffer
    let mut group = g.build()?;
    let input = AnyPlane::new(rgb, Geometry::new(width, height).with_channels(3))?;
    group.run(&[input], Strips::Auto)?; // strips over every core
    Ok(group.output::<u8>(0)?.as_slice().to_vec())
}
// --- end of the example ---

#[test]
fn the_guide_example_runs_and_matches_a_direct_computation() {
    for (w, h) in [(1usize, 1usize), (7, 1), (1, 9), (64, 48), (333, 101)] {
        let frame = cortex::runner::sources::SyntheticClip::new(w, h).frame(2);
        let rgb = frame.as_slice().unwrap();
        let gray = cortex::ops::to_gray(&frame).unwrap();
        let got = brightest_neighbours(rgb, w, h).unwrap();
        for y in 0..h {
            for x in 0..w {
                let want = (y.saturating_sub(1)..=(y + 1).min(h - 1))
                    .map(|r| gray[[r, x]])
                    .max()
                    .unwrap();
                assert_eq!(got[y * w + x], want, "{w}x{h} at ({y}, {x})");
            }
        }
        // The same group at other strip counts: the same bytes.
        let mut g = GroupBuilder::new();
        let frame_in = g.input();
        let gray_v = g.kernel(GrayStrip, &[frame_in]).unwrap();
        let max = g.kernel(VerticalMax3, &[gray_v]).unwrap();
        g.output(max).unwrap();
        let mut group = g.build().unwrap();
        let input = AnyPlane::new(rgb, Geometry::new(w, h).with_channels(3)).unwrap();
        for strips in [1, 2, 5, h + 2] {
            group.run(&[input], Strips::Count(strips)).unwrap();
            assert_eq!(
                group.output::<u8>(0).unwrap().as_slice(),
                &got[..],
                "{w}x{h}, {strips} strips"
            );
        }
    }
}
