//! Joins the component trees of horizontal strips into the component tree
//! of the whole image, the way parallel max-tree algorithms do (Wilkinson,
//! Gao, Hesselink, Jonker & Meijster, "Concurrent computation of attribute
//! filters on shared memory parallel machines", PAMI 2008), here on tree
//! nodes rather than pixels.
//!
//! Every strip node becomes an element of one forest, keeping its parent
//! (always at a higher level). For each pair of 4-adjacent pixels across a
//! cut, the ancestor chains of their two leaves are merged like two sorted
//! lists: above the higher of the two levels the components are one, so
//! each element of one chain is hooked under the lowest element of the
//! other chain at or above its level. Elements that end up on one level
//! with one parent chain stand for one region: the topmost of them, its
//! *level root*, represents it. After all cuts the level roots are exactly
//! the nodes of the whole image's tree.

use super::tree::{Node, NONE, NO_TIE};

/// Every strip's nodes as elements of one forest, merged across the cuts.
#[derive(Debug, Default, Clone)]
pub(super) struct Forest {
    /// Parent element (same or higher level), or [`NONE`].
    up: Vec<u32>,
    level: Vec<u8>,
    /// Pixels whose smallest strip node is this element.
    own: Vec<u32>,
    /// The final node of each element's region (after [`Forest::finish`]).
    final_of: Vec<u32>,
}

impl Forest {
    /// Empties the forest, keeping its buffers.
    pub(super) fn clear(&mut self) {
        self.up.clear();
        self.level.clear();
        self.own.clear();
        self.final_of.clear();
    }

    /// Adds one strip's tree; returns the element number of its node 0.
    pub(super) fn add_tree(&mut self, nodes: &[Node]) -> u32 {
        let base = self.up.len() as u32;
        for n in nodes {
            let up = if n.parent == NONE {
                NONE
            } else {
                base + n.parent
            };
            self.up.push(up);
            self.level.push(n.level);
            self.own.push(n.size);
        }
        for n in nodes.iter().filter(|n| n.parent != NONE) {
            if let Some(own) = self.own.get_mut((base + n.parent) as usize) {
                *own = own.saturating_sub(n.size);
            }
        }
        base
    }

    /// Heap bytes held (capacities).
    pub(super) fn heap_bytes(&self) -> usize {
        use crate::ops::scratch::vec_bytes;
        vec_bytes(&self.up)
            .saturating_add(vec_bytes(&self.level))
            .saturating_add(vec_bytes(&self.own))
            .saturating_add(vec_bytes(&self.final_of))
    }

    /// The level root of `x`, compressing the path to it.
    fn level_root(&mut self, x: u32) -> u32 {
        let level = self.level[x as usize];
        let mut root = x;
        loop {
            let p = self.up[root as usize];
            if p == NONE || self.level[p as usize] != level {
                break;
            }
            root = p;
        }
        let mut y = x;
        while y != root {
            let next = self.up[y as usize];
            self.up[y as usize] = root;
            y = next;
        }
        root
    }

    /// The level root of `x`'s parent, or [`NONE`] at a root.
    fn parent_root(&mut self, x: u32) -> u32 {
        match self.up[x as usize] {
            NONE => NONE,
            p => self.level_root(p),
        }
    }

    /// Two adjacent pixels whose smallest regions are the elements `a` and
    /// `b`: from the higher of their levels up, their regions are one.
    pub(super) fn connect(&mut self, a: u32, b: u32) {
        let mut x = self.level_root(a);
        let mut y = self.level_root(b);
        if self.level[x as usize] > self.level[y as usize] {
            std::mem::swap(&mut x, &mut y);
        }
        // `x` is at or below `y`; walk up `x`'s chain to the last element at
        // or below `y`'s level and hook it under `y`, then merge the rest of
        // `x`'s chain with `y`'s from there.
        while x != y {
            let z = self.parent_root(x);
            if z != NONE && self.level[z as usize] <= self.level[y as usize] {
                x = z;
                continue;
            }
            self.up[x as usize] = y;
            if z == NONE {
                return;
            }
            x = y;
            y = z;
        }
    }

    /// Builds the merged tree into `out`: one node per level root, numbered
    /// by level (children before parents), with sizes, parents, the largest
    /// child as `main_child` and ties between largest children at
    /// different levels in `tie` (see `stability`). `start` is not set.
    pub(super) fn finish(&mut self, out: &mut Vec<Node>) {
        let total = self.up.len();
        let is_root = |f: &Forest, g: usize| {
            let p = f.up[g];
            p == NONE || f.level[p as usize] != f.level[g]
        };
        // Number the level roots by level with a counting sort.
        let mut next = [0u32; 256];
        for g in 0..total {
            if is_root(self, g) {
                next[usize::from(self.level[g])] += 1;
            }
        }
        let mut acc = 0u32;
        for n in next.iter_mut() {
            let count = *n;
            *n = acc;
            acc += count;
        }
        self.final_of.clear();
        self.final_of.resize(total, NONE);
        out.clear();
        out.resize(acc as usize, Node::new(0, NONE));
        for g in 0..total {
            if is_root(self, g) {
                let slot = &mut next[usize::from(self.level[g])];
                self.final_of[g] = *slot;
                if let Some(n) = out.get_mut(*slot as usize) {
                    n.level = self.level[g];
                }
                *slot += 1;
            }
        }
        // Own pixels and parents.
        for g in 0..total as u32 {
            let root = self.level_root(g);
            let f = self.final_of[root as usize];
            if g == root {
                let parent = self.parent_root(g);
                let parent = if parent == NONE {
                    NONE
                } else {
                    self.final_of[parent as usize]
                };
                if let Some(n) = out.get_mut(f as usize) {
                    n.parent = parent;
                }
            }
            if let Some(n) = out.get_mut(f as usize) {
                n.size += self.own[g as usize];
            }
            self.final_of[g as usize] = f;
        }
        // Sizes up the tree, children first, and the largest children.
        for f in 0..out.len() {
            let Node {
                size,
                parent,
                level,
                ..
            } = out[f];
            let Some(p) = out.get(parent as usize).copied() else {
                continue;
            };
            let mut p = p;
            p.size += size;
            match out.get(p.main_child as usize) {
                Some(m) if m.size > size => {}
                Some(m) if m.size == size => {
                    let (lo, hi) = if p.tie == NO_TIE {
                        (m.level, m.level)
                    } else {
                        p.tie
                    };
                    p.tie = (lo.min(level), hi.max(level));
                }
                _ => {
                    p.main_child = f as u32;
                    p.tie = NO_TIE;
                }
            }
            out[parent as usize] = p;
        }
    }

    /// The node of the merged tree that element `g` belongs to (after
    /// [`Forest::finish`]).
    pub(super) fn final_of(&self, g: u32) -> u32 {
        self.final_of.get(g as usize).copied().unwrap_or(NONE)
    }
}
