//! Fused groups of strip kernels against the same kernels run unfused over
//! whole frames: random DAGs of pointwise, stencil and reduction kernels
//! with random windows, sizes down to 1×1 and strip counts from 1 to more
//! than there are rows; resampling; and a failing member, which must fail
//! the run and leave the outputs as they were.

use cortex_core::strip::{
    AnyPlane, Geometry, GroupBuilder, Inputs, Kind, Plane, StripError, StripKernel, StripMut,
    StripReduction, Strips, Value, Window,
};
use proptest::prelude::*;

fn reflect101(p: isize, len: usize) -> usize {
    if len == 1 {
        return 0;
    }
    let n = len as isize;
    let mut p = p;
    while p < 0 || p >= n {
        p = if p < 0 { -p } else { 2 * (n - 1) - p };
    }
    p as usize
}

/// `a·x + b`, wrapping.
struct Affine(i32, i32);

impl StripKernel for Affine {
    type Out = i32;
    fn name(&self) -> &str {
        "affine"
    }
    fn kind(&self) -> Kind {
        Kind::Pointwise
    }
    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError> {
        Ok(inputs[0])
    }
    fn run(&self, inputs: &Inputs<'_>, out: &mut StripMut<'_, i32>) -> Result<(), StripError> {
        let src = inputs.plane::<i32>(0)?.span(out.rows())?;
        for (d, &s) in out.as_mut_slice().iter_mut().zip(src) {
            *d = s.wrapping_mul(self.0).wrapping_add(self.1);
        }
        Ok(())
    }
}

/// A weighted vertical window plus the left neighbour, under reflect-101
/// (`replicate == false`) or replicate borders.
struct Stencil {
    window: Window,
    replicate: bool,
}

impl StripKernel for Stencil {
    type Out = i32;
    fn name(&self) -> &str {
        "stencil"
    }
    fn kind(&self) -> Kind {
        Kind::Stencil(self.window)
    }
    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError> {
        Ok(inputs[0])
    }
    fn run(&self, inputs: &Inputs<'_>, out: &mut StripMut<'_, i32>) -> Result<(), StripError> {
        let src = inputs.plane::<i32>(0)?;
        let (h, w) = (src.height(), src.width());
        let border = |p: isize| {
            if self.replicate {
                p.clamp(0, h as isize - 1) as usize
            } else {
                reflect101(p, h)
            }
        };
        for (y, row) in out.rows_mut() {
            for (x, d) in row.iter_mut().enumerate() {
                let mut acc = 0i32;
                for (k, dy) in
                    (-(self.window.above as isize)..=self.window.below as isize).enumerate()
                {
                    let r = src.row(border(y as isize + dy))?;
                    acc = acc.wrapping_add(r[x].wrapping_mul(k as i32 + 1));
                }
                let left = src.row(y)?[reflect101(x as isize - 1, w)];
                *d = acc.wrapping_add(left.wrapping_mul(7));
            }
        }
        Ok(())
    }
}

/// `a + 3·b`, wrapping.
struct Add;

impl StripKernel for Add {
    type Out = i32;
    fn name(&self) -> &str {
        "add"
    }
    fn kind(&self) -> Kind {
        Kind::Pointwise
    }
    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError> {
        Ok(inputs[0])
    }
    fn run(&self, inputs: &Inputs<'_>, out: &mut StripMut<'_, i32>) -> Result<(), StripError> {
        let a = inputs.plane::<i32>(0)?.span(out.rows())?;
        let b = inputs.plane::<i32>(1)?.span(out.rows())?;
        for ((d, &p), &q) in out.as_mut_slice().iter_mut().zip(a).zip(b) {
            *d = p.wrapping_add(q.wrapping_mul(3));
        }
        Ok(())
    }
}

/// Per row a position-weighted sum over a window of rows; folded by a
/// non-associative rule (`acc·31 + p`), so only row order gives the result.
struct Fold(Window);

impl StripReduction for Fold {
    type Partial = i64;
    type Out = i64;
    fn name(&self) -> &str {
        "fold"
    }
    fn window(&self) -> Window {
        self.0
    }
    fn partial_width(&self, _: &[Geometry]) -> Result<usize, StripError> {
        Ok(1)
    }
    fn geometry(&self, _: &[Geometry]) -> Result<Geometry, StripError> {
        Ok(Geometry::new(1, 1))
    }
    fn partial(&self, inputs: &Inputs<'_>, out: &mut StripMut<'_, i64>) -> Result<(), StripError> {
        let src = inputs.plane::<i32>(0)?;
        let h = src.height();
        for (y, p) in out.rows_mut() {
            let mut acc = 0i64;
            for dy in -(self.0.above as isize)..=self.0.below as isize {
                for (x, &v) in src.row(reflect101(y as isize + dy, h))?.iter().enumerate() {
                    acc = acc.wrapping_add(i64::from(v).wrapping_mul(x as i64 + 1 + dy as i64));
                }
            }
            p[0] = acc;
        }
        Ok(())
    }
    fn fold(
        &self,
        _: &[Geometry],
        partials: Plane<'_, i64>,
        out: &mut [i64],
    ) -> Result<(), StripError> {
        out[0] = partials
            .as_slice()
            .iter()
            .fold(17i64, |acc, &p| acc.wrapping_mul(31).wrapping_add(p));
        Ok(())
    }
}

/// Fails on any strip that holds `row`.
struct FailAt(usize);

impl StripKernel for FailAt {
    type Out = i32;
    fn name(&self) -> &str {
        "fail_at"
    }
    fn kind(&self) -> Kind {
        Kind::Pointwise
    }
    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError> {
        Ok(inputs[0])
    }
    fn run(&self, inputs: &Inputs<'_>, out: &mut StripMut<'_, i32>) -> Result<(), StripError> {
        let src = inputs.plane::<i32>(0)?.span(out.rows())?;
        if src.contains(&i32::MIN) || out.rows().contains(&self.0) && src.contains(&-1) {
            return Err(StripError::failed("fail_at", "poisoned input"));
        }
        out.as_mut_slice().copy_from_slice(src);
        Ok(())
    }
}

/// One node of a random group.
#[derive(Debug, Clone)]
enum Op {
    Affine(i32, i32),
    Stencil(usize, usize, bool),
    Add,
    Fold(usize, usize),
}

#[derive(Debug, Clone)]
struct Case {
    w: usize,
    h: usize,
    inputs: usize,
    /// Each node with its argument picks (indices into the values so far,
    /// taken modulo the count of readable ones).
    nodes: Vec<(Op, usize, usize)>,
    extra_outputs: Vec<bool>,
    strips: usize,
    seed: u32,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (-5i32..6, -100i32..100).prop_map(|(a, b)| Op::Affine(a, b)),
        (0usize..4, 0usize..4, any::<bool>()).prop_map(|(a, b, r)| Op::Stencil(a, b, r)),
        Just(Op::Add),
        (0usize..3, 0usize..3).prop_map(|(a, b)| Op::Fold(a, b)),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (
        1usize..24,
        1usize..24,
        1usize..3,
        prop::collection::vec((op(), any::<usize>(), any::<usize>()), 1..8),
    )
        .prop_flat_map(|(w, h, inputs, nodes)| {
            let n = nodes.len();
            let strips = prop_oneof![
                Just(1usize),
                Just(h),
                Just(h + 1),
                Just(2 * h + 5),
                1usize..(h + 8)
            ];
            (
                Just(w),
                Just(h),
                Just(inputs),
                Just(nodes),
                prop::collection::vec(any::<bool>(), n),
                strips,
                any::<u32>(),
            )
        })
        .prop_map(|(w, h, inputs, nodes, extra_outputs, strips, seed)| Case {
            w,
            h,
            inputs,
            nodes,
            extra_outputs,
            strips,
            seed,
        })
}

/// Builds the group of `case`; returns it with the element type of each
/// output (`true`: a reduction's `i64`).
fn build(case: &Case) -> (cortex_core::strip::FusedGroup, Vec<bool>) {
    let mut g = GroupBuilder::new();
    let mut readable: Vec<Value> = (0..case.inputs).map(|_| g.input()).collect();
    let mut read = Vec::new();
    let mut reductions = Vec::new();
    for (op, a, b) in &case.nodes {
        let pa = readable[a % readable.len()];
        let pb = readable[b % readable.len()];
        let v = match *op {
            Op::Affine(x, y) => g.kernel(Affine(x, y), &[pa]),
            Op::Stencil(above, below, replicate) => g.kernel(
                Stencil {
                    window: Window { above, below },
                    replicate,
                },
                &[pa],
            ),
            Op::Add => g.kernel(Add, &[pa, pb]),
            Op::Fold(above, below) => g.reduction(Fold(Window { above, below }), &[pa]),
        }
        .unwrap();
        let args: &[Value] = match op {
            Op::Add => &[pa, pb],
            _ => &[pa],
        };
        read.extend_from_slice(args);
        if matches!(op, Op::Fold(..)) {
            reductions.push(v);
        } else {
            readable.push(v);
        }
    }
    let mut kinds = Vec::new();
    for (i, extra) in case.extra_outputs.iter().enumerate() {
        let v = Value::Node(i);
        let reduction = reductions.contains(&v);
        if reduction || *extra || !read.contains(&v) {
            g.output(v).unwrap();
            kinds.push(reduction);
        }
    }
    (g.build().unwrap(), kinds)
}

fn planes(case: &Case) -> Vec<Vec<i32>> {
    let mut seed = case.seed;
    (0..case.inputs)
        .map(|_| {
            (0..case.w * case.h)
                .map(|_| {
                    seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    (seed >> 8) as i32 - (1 << 23)
                })
                .collect()
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn fused_equals_unfused(case in case()) {
        let data = planes(&case);
        let geometry = Geometry::new(case.w, case.h);
        let inputs: Vec<AnyPlane<'_>> = data.iter().map(|d| AnyPlane::new(d, geometry).unwrap()).collect();
        let (mut fused, kinds) = build(&case);
        let (mut unfused, _) = build(&case);
        fused.run(&inputs, Strips::Count(case.strips)).unwrap();
        unfused.run_unfused(&inputs).unwrap();
        for (k, reduction) in kinds.iter().enumerate() {
            if *reduction {
                prop_assert_eq!(fused.output::<i64>(k).unwrap().as_slice(), unfused.output::<i64>(k).unwrap().as_slice());
            } else {
                prop_assert_eq!(fused.output::<i32>(k).unwrap().as_slice(), unfused.output::<i32>(k).unwrap().as_slice());
            }
        }
        // A second run reuses the buffers and gives the same bits.
        fused.run(&inputs, Strips::Count(case.strips + 1)).unwrap();
        for (k, reduction) in kinds.iter().enumerate() {
            if !*reduction {
                prop_assert_eq!(fused.output::<i32>(k).unwrap().as_slice(), unfused.output::<i32>(k).unwrap().as_slice());
            }
        }
    }
}

/// The direct reference of a chain: `Affine(2, 1)` then a symmetric
/// 1-row stencil, computed by hand.
#[test]
fn chain_matches_a_direct_computation() {
    let (w, h) = (5usize, 9usize);
    let data: Vec<i32> = (0..(w * h) as i32).map(|v| v * 37 % 101).collect();
    let mut g = GroupBuilder::new();
    let x = g.input();
    let a = g.kernel(Affine(2, 1), &[x]).unwrap();
    let s = g
        .kernel(
            Stencil {
                window: Window::symmetric(1),
                replicate: false,
            },
            &[a],
        )
        .unwrap();
    g.output(s).unwrap();
    let mut group = g.build().unwrap();
    let inputs = [AnyPlane::new(&data, Geometry::new(w, h)).unwrap()];
    let at = |y: usize, x: usize| data[y * w + x] * 2 + 1;
    for strips in [1, 2, 3, 9, 20] {
        group.run(&inputs, Strips::Count(strips)).unwrap();
        let out = group.output::<i32>(0).unwrap();
        for y in 0..h {
            for x in 0..w {
                let want = at(reflect101(y as isize - 1, h), x)
                    + 2 * at(y, x)
                    + 3 * at(reflect101(y as isize + 1, h), x)
                    + 7 * at(y, reflect101(x as isize - 1, w));
                assert_eq!(out.row(y).unwrap()[x], want, "({y}, {x}), {strips} strips");
            }
        }
    }
}

/// A 2:1 box downscale (a resample), then a stencil on the small plane.
struct Half;

impl StripKernel for Half {
    type Out = i32;
    fn name(&self) -> &str {
        "half"
    }
    fn kind(&self) -> Kind {
        Kind::Resample(Window::ZERO)
    }
    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError> {
        Ok(Geometry::new(
            inputs[0].width.div_ceil(2),
            inputs[0].height.div_ceil(2),
        ))
    }
    fn run(&self, inputs: &Inputs<'_>, out: &mut StripMut<'_, i32>) -> Result<(), StripError> {
        let src = inputs.plane::<i32>(0)?;
        let (h, w) = (src.height(), src.width());
        for (y, row) in out.rows_mut() {
            let (r0, r1) = (src.row(2 * y)?, src.row((2 * y + 1).min(h - 1))?);
            for (x, d) in row.iter_mut().enumerate() {
                let (x0, x1) = (2 * x, (2 * x + 1).min(w - 1));
                *d = r0[x0] + r0[x1] + r1[x0] + r1[x1];
            }
        }
        Ok(())
    }
}

#[test]
fn resample_then_stencil_fuses_exactly() {
    for (w, h) in [(1, 1), (3, 1), (1, 5), (17, 13), (64, 48)] {
        let data: Vec<i32> = (0..(w * h) as i32).map(|v| (v * 7919) % 251).collect();
        let mut g = GroupBuilder::new();
        let x = g.input();
        let a = g.kernel(Affine(3, -2), &[x]).unwrap();
        let half = g.kernel(Half, &[a]).unwrap();
        let s = g
            .kernel(
                Stencil {
                    window: Window::symmetric(2),
                    replicate: true,
                },
                &[half],
            )
            .unwrap();
        g.output(s).unwrap();
        g.output(a).unwrap();
        let mut fused = g.build().unwrap();
        let inputs = [AnyPlane::new(&data, Geometry::new(w, h)).unwrap()];
        let mut reference = {
            let mut g = GroupBuilder::new();
            let x = g.input();
            let a = g.kernel(Affine(3, -2), &[x]).unwrap();
            let half = g.kernel(Half, &[a]).unwrap();
            let s = g
                .kernel(
                    Stencil {
                        window: Window::symmetric(2),
                        replicate: true,
                    },
                    &[half],
                )
                .unwrap();
            g.output(s).unwrap();
            g.output(a).unwrap();
            g.build().unwrap()
        };
        reference.run_unfused(&inputs).unwrap();
        for strips in [1, 2, 3, 7, h + 4] {
            fused.run(&inputs, Strips::Count(strips)).unwrap();
            for k in 0..2 {
                assert_eq!(
                    fused.output::<i32>(k).unwrap().as_slice(),
                    reference.output::<i32>(k).unwrap().as_slice(),
                    "{w}x{h}, {strips} strips, output {k}"
                );
            }
        }
    }
}

#[test]
fn a_failing_member_fails_the_run_and_keeps_the_outputs() {
    let (w, h) = (6usize, 11usize);
    let good: Vec<i32> = (0..(w * h) as i32).collect();
    let mut bad = good.clone();
    bad[7 * w + 2] = -1;
    let geometry = Geometry::new(w, h);
    let mut g = GroupBuilder::new();
    let x = g.input();
    let a = g.kernel(Affine(1, 0), &[x]).unwrap();
    let f = g.kernel(FailAt(7), &[a]).unwrap();
    let s = g
        .kernel(
            Stencil {
                window: Window::symmetric(1),
                replicate: false,
            },
            &[f],
        )
        .unwrap();
    let r = g.reduction(Fold(Window::ZERO), &[f]).unwrap();
    g.output(s).unwrap();
    g.output(r).unwrap();
    g.output(a).unwrap();
    let mut group = g.build().unwrap();
    for strips in [1, 2, 5, 11, 30] {
        group
            .run(
                &[AnyPlane::new(&good, geometry).unwrap()],
                Strips::Count(strips),
            )
            .unwrap();
        let before: Vec<i32> = group.output::<i32>(0).unwrap().as_slice().to_vec();
        let before_a: Vec<i32> = group.output::<i32>(2).unwrap().as_slice().to_vec();
        let before_r = group.output::<i64>(1).unwrap().as_slice()[0];
        let err = group
            .run(
                &[AnyPlane::new(&bad, geometry).unwrap()],
                Strips::Count(strips),
            )
            .unwrap_err();
        assert!(matches!(err, StripError::Failed { .. }), "{err}");
        assert_eq!(group.output::<i32>(0).unwrap().as_slice(), &before[..]);
        assert_eq!(group.output::<i32>(2).unwrap().as_slice(), &before_a[..]);
        assert_eq!(group.output::<i64>(1).unwrap().as_slice()[0], before_r);
        // Unfused, the same.
        assert!(group
            .run_unfused(&[AnyPlane::new(&bad, geometry).unwrap()])
            .is_err());
        assert_eq!(group.output::<i32>(0).unwrap().as_slice(), &before[..]);
    }
}

#[test]
fn malformed_groups_and_runs_are_refused() {
    // A reduction read inside its own group.
    let mut g = GroupBuilder::new();
    let x = g.input();
    let r = g.reduction(Fold(Window::ZERO), &[x]).unwrap();
    let a = g.kernel(Affine(1, 0), &[r]).unwrap();
    g.output(a).unwrap();
    assert!(matches!(g.build(), Err(StripError::Group(_))));
    // A value nobody reads and that does not leave.
    let mut g = GroupBuilder::new();
    let x = g.input();
    g.kernel(Affine(1, 0), &[x]).unwrap();
    assert!(matches!(g.build(), Err(StripError::Group(_))));
    // Arguments that do not exist, outputs that are inputs.
    let mut g = GroupBuilder::new();
    let x = g.input();
    assert!(g.kernel(Affine(1, 0), &[Value::Node(3)]).is_err());
    assert!(g.output(x).is_err());
    // Wrong input count, wrong element type, zero strips.
    let a = g.kernel(Affine(1, 0), &[x]).unwrap();
    g.output(a).unwrap();
    let mut group = g.build().unwrap();
    let ints = vec![1i32; 4];
    let bytes = vec![1u8; 4];
    let geometry = Geometry::new(2, 2);
    assert!(group.run(&[], Strips::Auto).is_err());
    assert!(matches!(
        group.run(&[AnyPlane::new(&bytes, geometry).unwrap()], Strips::Auto),
        Err(StripError::Type { .. })
    ));
    assert!(group
        .run(&[AnyPlane::new(&ints, geometry).unwrap()], Strips::Count(0))
        .is_err());
    assert!(AnyPlane::new(&ints, Geometry::new(3, 2)).is_err());
    group
        .run(&[AnyPlane::new(&ints, geometry).unwrap()], Strips::Auto)
        .unwrap();
    assert!(group.output::<u8>(0).is_err());
    assert_eq!(group.output::<i32>(0).unwrap().as_slice(), &ints[..]);
}

#[test]
fn intermediates_live_in_strip_scratch_not_whole_frames() {
    let (w, h) = (64usize, 480usize);
    let data: Vec<i32> = (0..(w * h) as i32).collect();
    let build = || {
        let mut g = GroupBuilder::new();
        let x = g.input();
        let a = g.kernel(Affine(3, 1), &[x]).unwrap();
        let s = g
            .kernel(
                Stencil {
                    window: Window::symmetric(1),
                    replicate: false,
                },
                &[a],
            )
            .unwrap();
        let out = g.kernel(Affine(1, 5), &[s]).unwrap();
        g.output(out).unwrap();
        g.build().unwrap()
    };
    let inputs = [AnyPlane::new(&data, Geometry::new(w, h)).unwrap()];
    let mut fused = build();
    let mut unfused = build();
    fused.run(&inputs, Strips::Rows(16)).unwrap();
    unfused.run_unfused(&inputs).unwrap();
    assert_eq!(
        fused.output::<i32>(0).unwrap().as_slice(),
        unfused.output::<i32>(0).unwrap().as_slice()
    );
    // Per worker: the first member's 16 rows plus one halo row each side,
    // the stencil's 16 rows; the last member writes straight to the output.
    let per_worker = (18 + 16) * w * 4;
    let workers = rayon::current_num_threads();
    assert!(fused.scratch_bytes() > 0);
    assert!(
        fused.scratch_bytes() <= workers * per_worker,
        "{} bytes of scratch for {workers} workers",
        fused.scratch_bytes()
    );
    assert_eq!(unfused.unfused_intermediate_bytes(), 2 * w * h * 4);
}

/// A ramp from the geometry alone (`y·w + x`, times a factor), counting the
/// rows it computes.
struct Ramp {
    factor: i32,
    rows: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl StripKernel for Ramp {
    type Out = i32;
    fn name(&self) -> &str {
        "ramp"
    }
    fn kind(&self) -> Kind {
        Kind::Pointwise
    }
    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError> {
        Ok(inputs[0])
    }
    fn constant_per_geometry(&self) -> bool {
        true
    }
    fn run(&self, _: &Inputs<'_>, out: &mut StripMut<'_, i32>) -> Result<(), StripError> {
        let w = out.geometry().width;
        let mut n = 0;
        for (y, row) in out.rows_mut() {
            n += 1;
            for (x, d) in row.iter_mut().enumerate() {
                *d = ((y * w + x) as i32).wrapping_mul(self.factor);
            }
        }
        self.rows.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }
}

/// input → affine → (stencil, ramp of the affine's geometry) → add; the
/// sum and the stencil (or the ramp) leave the group.
fn ramp_group(
    rows: &std::sync::Arc<std::sync::atomic::AtomicUsize>,
    ramp_leaves: bool,
) -> cortex_core::strip::FusedGroup {
    let mut g = GroupBuilder::new();
    let x = g.input();
    let a = g.kernel(Affine(5, 1), &[x]).unwrap();
    let s = g
        .kernel(
            Stencil {
                window: Window::symmetric(1),
                replicate: false,
            },
            &[a],
        )
        .unwrap();
    let r = g
        .kernel(
            Ramp {
                factor: 3,
                rows: std::sync::Arc::clone(rows),
            },
            &[a],
        )
        .unwrap();
    let sum = g.kernel(Add, &[s, r]).unwrap();
    g.output(sum).unwrap();
    g.output(if ramp_leaves { r } else { s }).unwrap();
    g.build().unwrap()
}

#[test]
fn a_constant_member_is_computed_once_per_geometry() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let fused_rows = Arc::new(AtomicUsize::new(0));
    let reference_rows = Arc::new(AtomicUsize::new(0));
    let mut fused = ramp_group(&fused_rows, false);
    let mut reference = ramp_group(&reference_rows, false);
    let leaving_rows = Arc::new(AtomicUsize::new(0));
    let mut leaving = ramp_group(&leaving_rows, true);
    for (w, h) in [(9usize, 7usize), (4, 13), (1, 1), (9, 7)] {
        for strips in [1, 2, h + 3] {
            let (f0, r0) = (
                fused_rows.load(Ordering::Relaxed),
                reference_rows.load(Ordering::Relaxed),
            );
            for frame in 0..4i32 {
                let data: Vec<i32> = (0..(w * h) as i32).map(|v| v * 31 + frame * 17).collect();
                let inputs = [AnyPlane::new(&data, Geometry::new(w, h)).unwrap()];
                reference.run_unfused(&inputs).unwrap();
                fused.run(&inputs, Strips::Count(strips)).unwrap();
                leaving.run(&inputs, Strips::Count(strips)).unwrap();
                assert_eq!(
                    leaving.output::<i32>(0).unwrap().as_slice(),
                    reference.output::<i32>(0).unwrap().as_slice()
                );
                for k in 0..2 {
                    assert_eq!(
                        fused.output::<i32>(k).unwrap().as_slice(),
                        reference.output::<i32>(k).unwrap().as_slice(),
                        "{w}x{h}, frame {frame}, {strips} strips, output {k}"
                    );
                }
            }
            assert_eq!(fused.folded(), ["ramp"]);
            // A constant that leaves the group is computed where it is
            // written, every run.
            assert!(leaving.folded().is_empty());
            // Four frames at one size and strip count are one plan: the
            // ramp's rows once, where the unfused run computes them each time.
            assert_eq!(
                fused_rows.load(Ordering::Relaxed) - f0,
                h,
                "{w}x{h}, {strips} strips"
            );
            assert_eq!(reference_rows.load(Ordering::Relaxed) - r0, 4 * h);
        }
    }
    assert!(leaving_rows.load(Ordering::Relaxed) >= 4 * 3 * (7 + 13 + 1 + 7));
}

/// The tuning tests set the process's strip policy and cache file: one at
/// a time.
static TUNING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// For a tuning test: the lock on the process's tuning, and a cache file of
/// its own (its folder and path; no file yet, nothing remembered), so that
/// a decision an earlier run saved does not spare the measuring it checks.
fn own_cache(
    name: &str,
) -> (
    std::sync::MutexGuard<'static, ()>,
    std::path::PathBuf,
    std::path::PathBuf,
) {
    use cortex_core::strip::tune;
    let lock = TUNING.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join(format!("cortex-{name}-{}", std::process::id()));
    let path = dir.join("autotune.json");
    let _ = std::fs::remove_dir_all(&dir);
    tune::set_cache_path(Some(path.clone()));
    tune::forget_decisions();
    (lock, dir, path)
}

#[test]
fn strips_are_chosen_by_measurement_once_per_size_and_can_be_forced() {
    use cortex_core::strip::tune::{self, Setting, StripPolicy};
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;
    let (_tuning, dir, path) = own_cache("strips");
    let rows = Arc::new(AtomicUsize::new(0));
    let (w, h) = (40usize, 300usize);
    let data: Vec<i32> = (0..(w * h) as i32).map(|v| v * 7 - 3).collect();
    let inputs = [AnyPlane::new(&data, Geometry::new(w, h)).unwrap()];
    let mut reference = ramp_group(&rows, false);
    reference.run_unfused(&inputs).unwrap();
    let same = |g: &cortex_core::strip::FusedGroup| {
        (0..2).all(|k| {
            g.output::<i32>(k).unwrap().as_slice() == reference.output::<i32>(k).unwrap().as_slice()
        })
    };
    let mut first = ramp_group(&rows, false);
    let mut runs = 0;
    while first.setting_chosen().is_none() {
        first.run_tuned(&inputs).unwrap();
        assert!(same(&first), "run {runs} differs from the unfused run");
        runs += 1;
        assert!(
            runs <= tune::MEASURED_RUNS,
            "still measuring after {runs} runs"
        );
    }
    assert_eq!(runs, tune::MEASURED_RUNS);
    let decision = tune::decisions()
        .into_iter()
        .find(|d| d.group == "affine+stencil+ramp+add" && d.inputs == [Geometry::new(w, h)])
        .expect("the decision is kept for the process");
    assert_eq!(Some(decision.setting), first.setting_chosen());
    assert_eq!(decision.tried.len(), 5);
    // Another instance of the same group at the same size starts decided.
    let mut second = ramp_group(&rows, false);
    second.run_tuned(&inputs).unwrap();
    assert_eq!(second.setting_chosen(), first.setting_chosen());
    assert!(same(&second));
    // Forced: the given setting, nothing measured.
    tune::set_policy(Some(StripPolicy::Fixed(Strips::Count(5))));
    let mut forced = ramp_group(&rows, false);
    forced.run_tuned(&inputs).unwrap();
    tune::set_policy(None);
    assert_eq!(forced.setting_chosen(), None);
    assert!(same(&forced));

    // The decision is in the cache file, keyed by members, sizes and
    // threads; a new process (here: the decisions forgotten and the file
    // read again) starts decided without measuring.
    let threads = rayon::current_num_threads();
    let key = cortex_core::autotune::CacheKey::current();
    let section = cortex_core::autotune::Section::Strips;
    let saved = cortex_core::autotune::load(&path, &key, section).unwrap();
    let entry = saved
        .iter()
        .find(|e| e.op == "affine+stencil+ramp+add")
        .expect("the decision is saved");
    assert_eq!(entry.shape, tune::shape(&[Geometry::new(w, h)], threads));
    assert_eq!(entry.kernel, decision.setting.key());
    assert_eq!(entry.median_ns.len(), 5);
    tune::forget_decisions();
    tune::set_cache_path(Some(path.clone()));
    let mut restarted = ramp_group(&rows, false);
    restarted.run_tuned(&inputs).unwrap();
    assert_eq!(restarted.setting_chosen(), Some(decision.setting));
    assert!(same(&restarted));
    let reloaded = tune::decisions()
        .into_iter()
        .find(|d| d.group == "affine+stencil+ramp+add")
        .expect("the cached decision is listed");
    assert_eq!(reloaded.cached, Some(tune::Cached::Measured));

    // A setting a user pins in the file is used as it is.
    let mut pinned = entry.clone();
    pinned.kernel = "count:3".into();
    pinned.forced = true;
    cortex_core::autotune::save(&path, &key, section, &[pinned]).unwrap();
    tune::forget_decisions();
    tune::set_cache_path(Some(path.clone()));
    let mut user = ramp_group(&rows, false);
    user.run_tuned(&inputs).unwrap();
    assert_eq!(
        user.setting_chosen(),
        Some(Setting::Fused(Strips::Count(3)))
    );
    assert!(same(&user));
    tune::set_cache_path(None);
    tune::forget_decisions();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A copy that pays a millisecond for every call on part of a frame (a
/// strip of a fused run) and nothing over a whole frame, counting the
/// partial calls: a member that fusing makes slower.
struct SlowInStrips(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl StripKernel for SlowInStrips {
    type Out = i32;
    fn name(&self) -> &str {
        "slow_in_strips"
    }
    fn kind(&self) -> Kind {
        Kind::Pointwise
    }
    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError> {
        Ok(inputs[0])
    }
    fn run(&self, inputs: &Inputs<'_>, out: &mut StripMut<'_, i32>) -> Result<(), StripError> {
        if out.rows() != (0..out.geometry().height) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let src = inputs.plane::<i32>(0)?.span(out.rows())?;
        out.as_mut_slice().copy_from_slice(src);
        Ok(())
    }
}

/// input → affine → slow copy → stencil → (fold); the stencil and the
/// fold leave the group.
fn slow_group(
    partial_calls: &std::sync::Arc<std::sync::atomic::AtomicUsize>,
) -> cortex_core::strip::FusedGroup {
    let mut g = GroupBuilder::new();
    let x = g.input();
    let a = g.kernel(Affine(-3, 11), &[x]).unwrap();
    let slow = g
        .kernel(SlowInStrips(std::sync::Arc::clone(partial_calls)), &[a])
        .unwrap();
    let s = g
        .kernel(
            Stencil {
                window: Window::symmetric(2),
                replicate: true,
            },
            &[slow],
        )
        .unwrap();
    let f = g.reduction(Fold(Window::symmetric(1)), &[s]).unwrap();
    g.output(s).unwrap();
    g.output(f).unwrap();
    g.build().unwrap()
}

#[test]
fn a_group_slower_fused_runs_unfused_with_the_same_outputs_and_the_choice_is_cached() {
    use cortex_core::autotune::{self, CacheKey, Section};
    use cortex_core::strip::tune::{self, Cached, Setting, StripPolicy};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let (_tuning, dir, path) = own_cache("unfused");
    let partial = Arc::new(AtomicUsize::new(0));
    let (w, h) = (37usize, 300usize);
    let data: Vec<i32> = (0..(w * h) as i32)
        .map(|v| v.wrapping_mul(2_654_435_761u32 as i32) >> 7)
        .collect();
    let inputs = [AnyPlane::new(&data, Geometry::new(w, h)).unwrap()];
    let mut reference = slow_group(&partial);
    reference.run_unfused(&inputs).unwrap();
    let equal = |g: &cortex_core::strip::FusedGroup, r: &cortex_core::strip::FusedGroup| {
        g.output::<i32>(0).unwrap().as_slice() == r.output::<i32>(0).unwrap().as_slice()
            && g.output::<i64>(1).unwrap().as_slice() == r.output::<i64>(1).unwrap().as_slice()
    };
    let same = |g: &cortex_core::strip::FusedGroup| equal(g, &reference);

    // Measured: every candidate's run gives the reference's outputs, and
    // the unfused members win (each fused run sleeps in its strips).
    let mut first = slow_group(&partial);
    let mut runs = 0;
    while first.setting_chosen().is_none() {
        first.run_tuned(&inputs).unwrap();
        assert!(same(&first), "run {runs} differs from the unfused run");
        runs += 1;
        assert!(runs <= tune::MEASURED_RUNS, "still measuring");
    }
    assert_eq!(runs, tune::MEASURED_RUNS);
    assert!(
        partial.load(Ordering::Relaxed) > 0,
        "fused runs were measured"
    );
    assert_eq!(first.setting_chosen(), Some(Setting::Unfused));
    let signature = "affine+slow_in_strips+stencil+fold";
    let decision = tune::decisions()
        .into_iter()
        .find(|d| d.group == signature)
        .expect("the decision is kept for the process");
    assert_eq!(decision.setting, Setting::Unfused);
    assert_eq!(decision.cached, None);
    let unfused_ms = decision.tried[4].1;
    assert_eq!(decision.tried[4].0, Setting::Unfused);
    assert!(decision.tried[..4]
        .iter()
        .all(|(s, ms)| matches!(s, Setting::Fused(_)) && *ms > unfused_ms));
    // As `cortex-l2 profile` lists it.
    assert!(
        decision.to_string().contains(" threads: unfused ("),
        "{decision}"
    );
    // From now on the group runs unfused: no strip, no scratch kept, the
    // same outputs, and the reduction's frame known as after a fused run.
    let before = partial.load(Ordering::Relaxed);
    let shifted: Vec<i32> = data.iter().map(|v| v ^ 0x5a5a).collect();
    let next = [AnyPlane::new(&shifted, Geometry::new(w, h)).unwrap()];
    let mut reference_next = slow_group(&partial);
    reference_next.run_unfused(&next).unwrap();
    first.run_tuned(&next).unwrap();
    assert!(equal(&first, &reference_next));
    assert!(!same(&first), "another frame, other outputs");
    assert_eq!(partial.load(Ordering::Relaxed), before);
    assert_eq!(first.scratch_bytes(), 0);
    assert_eq!(
        first.output_argument_geometry(1, 0),
        Some(Geometry::new(w, h))
    );

    // The cache file says `unfused`, with every candidate's time; a new
    // process (decisions forgotten, the file read again) runs unfused at
    // once, measuring nothing.
    let key = CacheKey::current();
    let saved = autotune::load(&path, &key, Section::Strips).unwrap();
    let entry = saved
        .iter()
        .find(|e| e.op == signature)
        .expect("the decision is saved");
    assert_eq!(entry.kernel, "unfused");
    assert_eq!(entry.median_ns.len(), 5);
    assert!(entry.median_ns.contains_key("unfused"));
    // A new process: the file read again, a new group run once; it runs
    // unfused (no strip) with the same outputs. Returns the decision listed.
    let restart = || {
        tune::forget_decisions();
        tune::set_cache_path(Some(path.clone()));
        let calls = partial.load(Ordering::Relaxed);
        let mut restarted = slow_group(&partial);
        restarted.run_tuned(&inputs).unwrap();
        assert_eq!(restarted.setting_chosen(), Some(Setting::Unfused));
        assert_eq!(partial.load(Ordering::Relaxed), calls);
        assert!(same(&restarted));
        tune::decisions()
            .into_iter()
            .find(|d| d.group == signature)
            .expect("the cached decision is listed")
    };
    let reloaded = restart();
    assert_eq!(reloaded.cached, Some(Cached::Measured));
    assert_eq!(reloaded.setting, Setting::Unfused);
    assert_eq!(reloaded.tried.len(), 5);

    // A fixed policy forces either way, whatever was decided.
    tune::set_policy(Some(StripPolicy::Fixed(Strips::Count(4))));
    let mut fused = slow_group(&partial);
    fused.run_tuned(&inputs).unwrap();
    assert!(partial.load(Ordering::Relaxed) > before, "ran fused");
    assert!(same(&fused));
    tune::set_policy(Some(StripPolicy::Unfused));
    let calls = partial.load(Ordering::Relaxed);
    fused.run_tuned(&inputs).unwrap();
    assert_eq!(partial.load(Ordering::Relaxed), calls, "ran unfused");
    assert!(same(&fused));
    tune::set_policy(None);

    // Pinned by a user in the file: used as it is.
    let mut pinned = entry.clone();
    pinned.forced = true;
    autotune::save(&path, &key, Section::Strips, &[pinned]).unwrap();
    assert_eq!(restart().cached, Some(Cached::Forced));
    tune::set_cache_path(None);
    tune::forget_decisions();
    let _ = std::fs::remove_dir_all(&dir);
}

/// `x + 1`, refusing planes of odd width (a kernel whose parameters must
/// divide the frame).
struct EvenOnly;

impl StripKernel for EvenOnly {
    type Out = i32;
    fn name(&self) -> &str {
        "even"
    }
    fn kind(&self) -> Kind {
        Kind::Pointwise
    }
    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError> {
        if inputs[0].width % 2 == 1 {
            return Err(StripError::failed("even", "odd width"));
        }
        Ok(inputs[0])
    }
    fn run(&self, inputs: &Inputs<'_>, out: &mut StripMut<'_, i32>) -> Result<(), StripError> {
        let src = inputs.plane::<i32>(0)?.span(out.rows())?;
        for (d, &s) in out.as_mut_slice().iter_mut().zip(src) {
            *d = s.wrapping_add(1);
        }
        Ok(())
    }
}

#[test]
fn a_member_nothing_reads_declines_alone_and_the_rest_runs_fused() {
    // x → affine (leaves) → stencil (leaves); affine → even (leaves, read by
    // no member, reading only a leaving value): it may decline alone.
    let detached = || {
        let mut g = GroupBuilder::new();
        let x = g.input();
        let a = g.kernel(Affine(3, -1), &[x]).unwrap();
        let s = g
            .kernel(
                Stencil {
                    window: Window::symmetric(1),
                    replicate: false,
                },
                &[a],
            )
            .unwrap();
        let e = g.kernel(EvenOnly, &[a]).unwrap();
        for v in [a, s, e] {
            g.output(v).unwrap();
        }
        g.build().unwrap()
    };
    // The same refusal inside the chain (its value read by a member): the
    // whole group refuses.
    let inside = || {
        let mut g = GroupBuilder::new();
        let x = g.input();
        let e = g.kernel(EvenOnly, &[x]).unwrap();
        let a = g.kernel(Add, &[e, x]).unwrap();
        g.output(a).unwrap();
        g.build().unwrap()
    };
    for (w, h) in [(6, 5), (7, 5), (1, 1), (8, 9)] {
        let data: Vec<i32> = (0..(w * h) as i32).map(|v| v * 5 - 11).collect();
        let inputs = [AnyPlane::new(&data, Geometry::new(w, h)).unwrap()];
        let mut reference = detached();
        reference.run_unfused(&inputs).unwrap();
        let odd = w % 2 == 1;
        assert_eq!(reference.published(2), !odd, "{w}x{h}");
        // More strips than rows, up to a count no list could hold: cut to
        // one strip a row, the same values.
        for strips in [
            Strips::Count(1),
            Strips::Count(3),
            Strips::Count(h + 2),
            Strips::Count(usize::MAX),
        ] {
            let mut fused = detached();
            fused.run(&inputs, strips).unwrap();
            for k in 0..2 {
                assert_eq!(
                    fused.output::<i32>(k).unwrap().as_slice(),
                    reference.output::<i32>(k).unwrap().as_slice(),
                    "{w}x{h} {strips:?} output {k}"
                );
            }
            assert_eq!(fused.published(2), !odd);
            if odd {
                assert_eq!(fused.declined(), ["even"]);
                assert!(fused.output::<i32>(2).is_err());
            } else {
                assert!(fused.declined().is_empty());
                assert_eq!(
                    fused.output::<i32>(2).unwrap().as_slice(),
                    reference.output::<i32>(2).unwrap().as_slice()
                );
            }
        }
        let mut whole = inside();
        assert_eq!(whole.run(&inputs, Strips::Auto).is_err(), odd, "{w}x{h}");
    }
    // An empty input (a previous frame that does not exist yet) read only
    // by a member that may decline alone: that member declines.
    let with_prev = || {
        let mut g = GroupBuilder::new();
        let (x, prev) = (g.input(), g.input());
        let a = g.kernel(Affine(2, 1), &[x]).unwrap();
        let d = g.kernel(Add, &[a, prev]).unwrap();
        g.output(a).unwrap();
        g.output(d).unwrap();
        g.build().unwrap()
    };
    let data: Vec<i32> = (0..20).collect();
    let none: Vec<i32> = Vec::new();
    let inputs = [
        AnyPlane::new(&data, Geometry::new(5, 4)).unwrap(),
        AnyPlane::new(&none, Geometry::new(0, 0)).unwrap(),
    ];
    let mut first = with_prev();
    first.run(&inputs, Strips::Count(2)).unwrap();
    assert_eq!(first.declined(), ["add"]);
    let doubled: Vec<i32> = data.iter().map(|v| v * 2 + 1).collect();
    assert_eq!(first.output::<i32>(0).unwrap().as_slice(), doubled);
    let mut unfused = with_prev();
    unfused.run_unfused(&inputs).unwrap();
    assert_eq!(unfused.declined(), ["add"]);
    // A group whose every leaving member declines does not run at all.
    let mut only = GroupBuilder::new();
    let x = only.input();
    let e = only.kernel(EvenOnly, &[x]).unwrap();
    only.output(e).unwrap();
    let mut only = only.build().unwrap();
    let data = vec![1i32; 7];
    let plane = [AnyPlane::new(&data, Geometry::new(7, 1)).unwrap()];
    assert!(only.run(&plane, Strips::Auto).is_err());
}
