//! Builds the component tree by flooding, as in Nistér & Stewénius, "Linear
//! Time Maximally Stable Extremal Regions" (ECCV 2008).
//!
//! The flood starts at one pixel and always continues at the lowest pixel on
//! the boundary of what it has flooded, so it visits the image like water
//! rising from that pixel. The components being grown sit on a stack with
//! strictly increasing levels towards the bottom; a component is finished at
//! its level when the boundary has nothing left at that level, and then it
//! either rises to the next boundary level or merges into the component
//! below. Each pixel enters the boundary heap at most twice and the heap's
//! lowest non-empty level is found with a 256-bit mask, so the whole pass is
//! linear in the number of pixels.
//!
//! The inner loop is shaped for the branch predictor, which is what the
//! flood spends its time on: a pixel's unvisited neighbours are read as one
//! bit mask (one data-dependent branch per new pixel rather than one per
//! neighbour), and the neighbour the flood continues at next (the last one
//! at the current level: the top of that level's stack) is held in a
//! register instead of being pushed and popped at once. Neither changes the
//! order in which pixels are visited.
//!
//! Pixel lists cost one sequential write per pixel: every pixel is appended
//! to `order` when it joins a component, and a component's pixels at any
//! moment are exactly `order[start..]` where `start` is the length of
//! `order` when the component was created. Only the top of the stack
//! receives pixels, and everything created above a component merges into
//! it before it can rise, so no other pixel lands in that range. A tree node
//! is thus the range `order[start..start + size]`.
//!
//! Semantics kept from OpenCV 4.6 so that the regions agree with it:
//! - the outermost 1-pixel frame of the image is never flooded (it acts as a
//!   wall), the flood starts at `(1, 1)`;
//! - 4-connectivity, neighbours in the order right, down, left, up, and a
//!   LIFO stack per level: this fixes which child is the "largest" when two
//!   children have the same size.

use ndarray::ArrayView2;

use super::tree::{offer_child, Comp, Node, NONE};
use super::workspace::{keep_headroom, MserWorkspace};

/// Visited flag in the per-pixel `px` word (the low byte is the level).
const VISITED: u16 = 0x100;
/// Boundary-heap entries carry the pixel index in the low bits and the next
/// neighbour to examine in the top 3 bits.
const DIR_SHIFT: u32 = 29;
const IDX_MASK: u32 = (1 << DIR_SHIFT) - 1;
/// Largest image (in pixels) the index encoding allows.
pub(super) const MAX_PIXELS: usize = 1 << DIR_SHIFT;
/// No pixel: an entry never pushed (the index bits are all set).
const NO_PIXEL: u32 = IDX_MASK;
/// Level of the sentinel component at the bottom of the stack: above every
/// real level, so the last real component never merges into it.
const SENTINEL_LEVEL: u32 = 256;

/// Told of every pixel as it joins a component, with the `start` of that
/// component's lineage (see [`Comp`]): the partitioned detector records
/// this for the pixels next to a cut, the plain one ignores it.
pub(super) trait JoinHook {
    /// `pixel` joined the component whose pixels start at `start` in the
    /// flood order, at the pixel's own level.
    fn joined(&mut self, pixel: u32, start: u32);
}

/// The hook of the plain detector: nothing recorded, nothing paid.
impl JoinHook for () {
    #[inline(always)]
    fn joined(&mut self, _pixel: u32, _start: u32) {}
}

/// Floods `gray` (levels `value ^ mask`) into the tree `ws.nodes`, the
/// pixels in flood order into `ws.order`.
///
/// The caller guarantees `rows, cols ≥ 3` and `rows * cols ≤ MAX_PIXELS`.
pub(super) fn build_tree(ws: &mut MserWorkspace, gray: ArrayView2<'_, u8>, mask: u8) {
    build_tree_with(ws, gray, mask, &mut ());
}

/// [`build_tree`], telling `hook` of every pixel that joins a component.
pub(super) fn build_tree_with<H: JoinHook>(
    ws: &mut MserWorkspace,
    gray: ArrayView2<'_, u8>,
    mask: u8,
    hook: &mut H,
) {
    let (rows, cols) = gray.dim();
    let n = rows * cols;
    let hist = load_levels(&mut ws.px, gray, mask);

    // One stack per level, sized by how many interior pixels have that level:
    // a pixel is on the boundary at most once at a time.
    let mut base = [0u32; 256];
    let mut acc = 0u32;
    for (b, &h) in base.iter_mut().zip(hist.iter()) {
        *b = acc;
        acc += h;
    }
    if ws.heap.len() < acc as usize {
        ws.heap.resize(acc as usize, 0);
    }
    if ws.order.len() < n {
        ws.order.resize(n, NONE);
    }
    let mut top = base;
    let mut bits = [0u64; 4];

    let px = &mut ws.px[..];
    let heap = &mut ws.heap[..];
    let order = &mut ws.order[..];
    let mut joined = 0u32;
    let nodes = &mut ws.nodes;
    let stack = &mut ws.stack;
    nodes.clear();
    stack.clear();
    // Levels strictly increase down the stack: at most the sentinel and one
    // component per level, so this reservation is final.
    stack.reserve(257);
    stack.push(Comp::new(SENTINEL_LEVEL, 0));

    let offs: [usize; 4] = [1, cols, 1usize.wrapping_neg(), cols.wrapping_neg()];

    let mut cur = cols as u32 + 1;
    px[cur as usize] |= VISITED;
    let mut cur_level = u32::from(px[cur as usize] & 0xff);
    let mut dir = 0u32;
    let mut comp = Comp::new(cur_level, 0);

    'flood: loop {
        // Examine the remaining neighbours of `cur`, from `dir` on. The
        // unvisited ones are found at once as a bit mask and taken in
        // direction order: one mispredictable branch per new pixel instead
        // of one per neighbour. Marking one neighbour visited cannot change
        // another's flag, so the mask stays exact while it is walked. A
        // lower neighbour interrupts: `cur` goes back on the boundary,
        // remembering where it stopped, and a new component starts at the
        // neighbour; when `cur` is resumed its mask is taken afresh.
        let c = cur as usize;
        let seen = u32::from(px[c + 1] >> 8)
            | (u32::from(px[c + cols] >> 8) << 1)
            | (u32::from(px[c - 1] >> 8) << 2)
            | (u32::from(px[c - cols] >> 8) << 3);
        let mut todo = !seen & (0xf << dir) & 0xf;
        // The last new neighbour at `cur`'s own level is the pixel the
        // flood continues at (the top of that level's stack once `cur` is
        // done), so it is held here instead of being pushed and popped; the
        // one it replaces goes on the stack, as it would have.
        let mut next = NO_PIXEL;
        while todo != 0 {
            let d = todo.trailing_zeros() as usize & 3;
            todo &= todo - 1;
            let nb = c.wrapping_add(offs[d]);
            let v = px[nb];
            px[nb] = v | VISITED;
            let nl = u32::from(v & 0xff);
            if nl < cur_level {
                if next != NO_PIXEL {
                    push(heap, &mut top, &mut bits, cur_level, next);
                }
                push(
                    heap,
                    &mut top,
                    &mut bits,
                    cur_level,
                    cur | ((d as u32 + 1) << DIR_SHIFT),
                );
                stack.push(comp);
                comp = Comp::new(nl, joined);
                cur = nb as u32;
                cur_level = nl;
                dir = 0;
                continue 'flood;
            }
            let same = nl == cur_level;
            let entry = if same { next } else { nb as u32 };
            // Without a held pixel, a neighbour at `cur`'s level pushes
            // nothing: the write lands in a free slot of that level's stack
            // (`cur` and the neighbour are not on it) and the top stays.
            push_if(heap, &mut top, &mut bits, nl, entry, entry != NO_PIXEL);
            if same {
                next = nb as u32;
            }
        }

        // All neighbours of `cur` are known: it belongs to the current
        // component.
        if let Some(slot) = order.get_mut(joined as usize) {
            *slot = cur;
        }
        hook.joined(cur, comp.start);
        joined += 1;
        comp.size += 1;

        // Continue at the held neighbour, else at the lowest boundary pixel.
        let lvl = cur_level as usize;
        let entry = if next != NO_PIXEL {
            next
        } else if top[lvl] != base[lvl] {
            top[lvl] -= 1;
            heap[top[lvl] as usize]
        } else {
            let Some(l) = lowest_nonempty_above(&mut bits, &top, &base, cur_level) else {
                break;
            };
            top[l as usize] -= 1;
            let e = heap[top[l as usize] as usize];
            comp = rise(comp, stack, nodes, l);
            cur_level = l;
            e
        };
        cur = entry & IDX_MASK;
        dir = entry >> DIR_SHIFT;
    }

    // Everything is flooded: close what is left (one component, since the
    // interior of a rectangle is connected) into the root.
    close_level(&mut comp, nodes, SENTINEL_LEVEL);
    while stack.len() > 1 {
        if let Some(mut c) = stack.pop() {
            close_level(&mut c, nodes, SENTINEL_LEVEL);
        }
    }
    keep_headroom(nodes);
}

/// Fills `px` with the flooding levels, the frame marked visited, and
/// returns the histogram of the interior's levels.
fn load_levels(px: &mut Vec<u16>, gray: ArrayView2<'_, u8>, mask: u8) -> [u32; 256] {
    let (rows, cols) = gray.dim();
    // Every element is written below, so only a size change needs a fill.
    if px.len() != rows * cols {
        px.clear();
        px.resize(rows * cols, VISITED);
    }
    let mut hist = [0u32; 256];
    for (y, (row, out)) in gray
        .rows()
        .into_iter()
        .zip(px.chunks_exact_mut(cols))
        .enumerate()
    {
        if y == 0 || y + 1 == rows {
            out.fill(VISITED);
            continue;
        }
        out[0] = VISITED;
        out[cols - 1] = VISITED;
        let interior = &mut out[1..cols - 1];
        match row.as_slice() {
            Some(s) => fill_row(interior, &s[1..cols - 1], mask, &mut hist),
            None => {
                for (o, &v) in interior.iter_mut().zip(row.iter().skip(1)) {
                    let l = v ^ mask;
                    hist[usize::from(l)] += 1;
                    *o = u16::from(l);
                }
            }
        }
    }
    hist
}

#[inline]
fn fill_row(out: &mut [u16], src: &[u8], mask: u8, hist: &mut [u32; 256]) {
    for (o, &v) in out.iter_mut().zip(src) {
        let l = v ^ mask;
        hist[usize::from(l)] += 1;
        *o = u16::from(l);
    }
}

/// [`push`] when `keep`, else a write just above the stack's top that
/// changes nothing (the caller makes sure that slot is free; the level's
/// bit may be set for an empty stack, which the lazy clearing in
/// [`lowest_nonempty_above`] allows). Without a branch, so the flood pays
/// no misprediction for it.
#[inline(always)]
fn push_if(
    heap: &mut [u32],
    top: &mut [u32; 256],
    bits: &mut [u64; 4],
    level: u32,
    entry: u32,
    keep: bool,
) {
    let l = level as usize;
    heap[top[l] as usize] = entry;
    top[l] += u32::from(keep);
    bits[l >> 6] |= 1 << (l & 63);
}

#[inline(always)]
fn push(heap: &mut [u32], top: &mut [u32; 256], bits: &mut [u64; 4], level: u32, entry: u32) {
    let l = level as usize;
    heap[top[l] as usize] = entry;
    top[l] += 1;
    bits[l >> 6] |= 1 << (l & 63);
}

/// The lowest level above `level` whose stack is not empty. Bits are only
/// set on push; stale bits of emptied stacks are cleared here, lazily.
fn lowest_nonempty_above(
    bits: &mut [u64; 4],
    top: &[u32; 256],
    base: &[u32; 256],
    level: u32,
) -> Option<u32> {
    let start = level + 1;
    if start >= 256 {
        return None;
    }
    let mut word = (start >> 6) as usize;
    let mut m = bits[word] & (!0u64 << (start & 63));
    loop {
        while m != 0 {
            let l = (word as u32) * 64 + m.trailing_zeros();
            if top[l as usize] != base[l as usize] {
                return Some(l);
            }
            bits[word] &= !(1u64 << (l & 63));
            m &= m - 1;
        }
        word += 1;
        if word == bits.len() {
            return None;
        }
        m = bits[word];
    }
}

/// The current component is finished at its level and the boundary
/// continues at `level`: rise to it, merging with the components below that
/// are at or under it. Takes and returns the component by value so that the
/// flood can keep it in registers.
#[inline(always)]
fn rise(mut comp: Comp, stack: &mut Vec<Comp>, nodes: &mut Vec<Node>, level: u32) -> Comp {
    loop {
        let below = stack.last().map_or(SENTINEL_LEVEL, |c| c.level);
        if level < below {
            close_level(&mut comp, nodes, level);
            return comp;
        }
        // `below ≤ level`: the boundary pixel that started `comp` is at
        // `below`, so in fact `below == level`; the loop only guards the
        // impossible `<`.
        let Some(mut lower) = stack.pop() else {
            close_level(&mut comp, nodes, level);
            return comp;
        };
        merge(&mut lower, &mut comp, nodes);
        comp = lower;
        if comp.level >= level {
            return comp;
        }
    }
}

/// Records `comp` at its current level as a tree node (reusing the node
/// opened at this level by an earlier merge) and moves it to `new_level`.
fn close_level(comp: &mut Comp, nodes: &mut Vec<Node>, new_level: u32) {
    let level = comp.level.min(255) as u8;
    let open = comp.node != NONE
        && nodes
            .get(comp.node as usize)
            .is_some_and(|n| n.level == level);
    let id = if open {
        comp.node
    } else {
        let id = nodes.len() as u32;
        nodes.push(Node::new(level, comp.node));
        if let Some(prev) = nodes.get_mut(comp.node as usize) {
            prev.parent = id;
        }
        id
    };
    if let Some(node) = nodes.get_mut(id as usize) {
        node.size = comp.size;
        node.start = comp.start;
    }
    comp.node = id;
    comp.level = new_level;
}

/// Merges `upper` (finished below `lower`'s level) into `lower`.
fn merge(lower: &mut Comp, upper: &mut Comp, nodes: &mut Vec<Node>) {
    let level = lower.level;
    close_level(lower, nodes, level);
    close_level(upper, nodes, level);
    let (parent, child) = (lower.node, upper.node);

    if let Some(c) = nodes.get_mut(child as usize) {
        c.parent = parent;
        let (size, level) = (c.size, c.level);
        if let Some(&p) = nodes.get(parent as usize) {
            let main = nodes.get(p.main_child as usize).map(|m| (m.size, m.level));
            if let Some(p) = nodes.get_mut(parent as usize) {
                offer_child(p, main, child, size, level);
            }
        }
    }

    // `upper`'s pixels already follow `lower`'s in `order`.
    lower.size += upper.size;
}
