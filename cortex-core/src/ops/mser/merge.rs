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

/// Every strip's nodes as one tree array (node `i` of a strip whose first
/// node is element `base` is element `base + i`), merged across the cuts in
/// place: `parent` links are the forest's, `size` is kept equal to each
/// level root's area while chains merge (as in Wilkinson et al.), and
/// elements merged into a level root of their level are *absorbed*: after
/// [`Forest::finish`] their size is 0 and their parent is that root.
#[derive(Debug, Default, Clone)]
pub(super) struct Forest {
    pub(super) nodes: Vec<Node>,
}

impl Forest {
    /// Empties the forest, keeping its buffer.
    pub(super) fn clear(&mut self) {
        self.nodes.clear();
    }

    /// Adds one strip's tree; returns the element number of its node 0.
    pub(super) fn add_tree(&mut self, nodes: &[Node]) -> u32 {
        let base = self.nodes.len() as u32;
        self.nodes.extend(nodes.iter().map(|n| Node {
            parent: if n.parent == NONE {
                NONE
            } else {
                base + n.parent
            },
            ..*n
        }));
        base
    }

    /// Heap bytes held (capacity).
    pub(super) fn heap_bytes(&self) -> usize {
        crate::ops::scratch::vec_bytes(&self.nodes)
    }

    fn level(&self, x: u32) -> u8 {
        self.nodes[x as usize].level
    }

    /// The level root of `x`, compressing the path to it.
    #[inline]
    fn level_root(&mut self, x: u32) -> u32 {
        let level = self.level(x);
        // Most elements are their own level root.
        match self.nodes[x as usize].parent {
            NONE => return x,
            p if self.level(p) != level => return x,
            _ => {}
        }
        let mut root = x;
        loop {
            let p = self.nodes[root as usize].parent;
            if p == NONE || self.level(p) != level {
                break;
            }
            root = p;
        }
        let mut y = x;
        while y != root {
            let next = self.nodes[y as usize].parent;
            self.nodes[y as usize].parent = root;
            y = next;
        }
        root
    }

    /// The level root of `x`'s parent, or [`NONE`] at a root.
    fn parent_root(&mut self, x: u32) -> u32 {
        match self.nodes[x as usize].parent {
            NONE => NONE,
            p => self.level_root(p),
        }
    }

    /// Two adjacent pixels whose smallest regions are the elements `a` and
    /// `b`: from the higher of their levels up, their regions are one.
    ///
    /// The two ancestor chains are merged like sorted lists, lowest head
    /// first: each head is hooked under the lower of its own parent and the
    /// other chain's head, and gains the area of the other chain's last
    /// element below it. Where the chains meet, nothing above changes;
    /// where one chain ends, its whole tree hangs below the rest of the
    /// other chain, which gains its area up to the root.
    pub(super) fn connect(&mut self, a: u32, b: u32) {
        let mut x = self.level_root(a);
        let mut y = self.level_root(b);
        // Areas of the last element passed on each chain.
        let (mut below_x, mut below_y) = (0u32, 0u32);
        loop {
            if x == y {
                return;
            }
            if x == NONE || y == NONE {
                let (mut rest, gain) = if x == NONE { (y, below_x) } else { (x, below_y) };
                while rest != NONE {
                    self.nodes[rest as usize].size += gain;
                    rest = self.parent_root(rest);
                }
                return;
            }
            if self.level(x) > self.level(y) {
                std::mem::swap(&mut x, &mut y);
                std::mem::swap(&mut below_x, &mut below_y);
            }
            let z = self.parent_root(x);
            let node = &mut self.nodes[x as usize];
            below_x = node.size;
            node.size += below_y;
            if z == NONE || self.level(z) > self.level(y) {
                // `y` comes next above `x`; at `x`'s level, `x` joins it.
                self.nodes[x as usize].parent = y;
            }
            x = z;
        }
    }

    /// Finishes the merged tree: absorbed elements get size 0 and their
    /// level root as parent, every other element its level root's parent,
    /// the largest child as `main_child`, and ties between largest children
    /// at different levels in `tie` (see `stability`).
    pub(super) fn finish(&mut self) {
        for g in 0..self.nodes.len() as u32 {
            let p = self.nodes[g as usize].parent;
            if p == NONE {
            } else if self.level(p) == self.level(g) {
                let root = self.level_root(g);
                let node = &mut self.nodes[g as usize];
                node.parent = root;
                node.size = 0;
            } else {
                let root = self.level_root(p);
                self.nodes[g as usize].parent = root;
            }
            let node = &mut self.nodes[g as usize];
            node.main_child = NONE;
            node.tie = NO_TIE;
        }
        for c in 0..self.nodes.len() {
            let Node {
                size,
                parent,
                level,
                ..
            } = self.nodes[c];
            if size == 0 || parent == NONE {
                continue;
            }
            let mut p = self.nodes[parent as usize];
            match self.nodes.get(p.main_child as usize) {
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
                    p.main_child = c as u32;
                    p.tie = NO_TIE;
                }
            }
            self.nodes[parent as usize] = p;
        }
    }

    /// The element that stands for element `g`'s region (after
    /// [`Forest::finish`]): `g`, or the level root that absorbed it.
    pub(super) fn final_of(&self, g: u32) -> u32 {
        match self.nodes.get(g as usize) {
            Some(n) if n.size == 0 => n.parent,
            Some(_) => g,
            None => NONE,
        }
    }
}
