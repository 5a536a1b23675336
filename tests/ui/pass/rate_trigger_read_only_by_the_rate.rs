// A `bool` node read only as a rate's trigger is a use of it: it is
// computed on every frame of the mode, and a frame where it is true
// recomputes the rated node at once.
use cortex::cortex_graph;

fn double(x: &u32) -> u32 { x * 2 }
fn onset(x: &u32) -> bool { *x % 10 == 0 }
fn slow(x: &u32) -> u32 { x + 1000 }
fn sum(a: &u32, b: &u32) -> u32 { a + b }

cortex_graph! {
    pipeline P {
        input x: u32;
        mode SAVE { } where heavy every 4 or cut;
        mode EVERY { }
        node d = double(x);
        node cut = onset(x);
        node heavy: u32 = slow(d);
        node out = sum(heavy, d);
        output out: u32;
    }
}

fn main() {
    let mut p = P::new();
    // Frames 0..8 with x = 1, 2, 3, 10, 5, 6, 7, 8: `heavy` runs on frame 0
    // (nothing held), on frame 3 (the trigger) and on frame 7 (4 frames
    // after the trigger), and is held in between.
    let xs = [1u32, 2, 3, 10, 5, 6, 7, 8];
    let mut computed = Vec::new();
    for (f, &x) in xs.iter().enumerate() {
        let out = p.run(PMode::Save, &x).unwrap().out;
        let at = p.holds()[0].computed_at.unwrap() as usize;
        computed.push(at);
        assert_eq!(out, xs[at] * 2 + 1000 + x * 2, "frame {f}");
    }
    assert_eq!(computed, [0, 0, 0, 3, 3, 3, 3, 7]);
    // The trigger node runs in the rated mode's plan, and only the rate
    // needs it: the mode without a rate eliminates it.
    let cut = P::ir().nodes.iter().position(|n| &*n.name == "cut").unwrap() as u32;
    assert!(PMode::Save.plan().order.contains(&cut));
    assert!(!PMode::Every.plan().order.contains(&cut));
    let mut q = P::new();
    assert_eq!(q.run(PMode::Every, &7).unwrap().out, 1014 + 14);
}
