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

use super::tree::{offer_child, Node, NONE, NO_TIE};

/// [`Forest::flags`]: the element's size or parent changed while merging.
const CHANGED: u8 = 1;
/// The element was merged into a level root of its level.
const ABSORBED: u8 = 2;
/// The element's children or their sizes changed: its largest child must be
/// found again.
const DIRTY: u8 = 4;

/// Every strip's nodes as one tree array (node `i` of a strip whose first
/// node is element `base` is element `base + i`), merged across the cuts in
/// place: `parent` links are the forest's, `size` is kept equal to each
/// level root's area while chains merge (as in Wilkinson et al.), and
/// elements merged into a level root of their level are *absorbed*: after
/// [`Forest::finish`] their size is 0 and their parent is that root.
/// Elements the merge does not touch keep their strip's `main_child` and
/// `tie`, which the flood computed.
#[derive(Debug, Default, Clone)]
pub(super) struct Forest {
    pub(super) nodes: Vec<Node>,
    /// [`CHANGED`], [`ABSORBED`], [`DIRTY`] per element.
    flags: Vec<u8>,
}

impl Forest {
    /// Empties the forest, keeping its buffer.
    pub(super) fn clear(&mut self) {
        self.nodes.clear();
        self.flags.clear();
    }

    /// Adds one strip's tree; returns the element number of its node 0.
    pub(super) fn add_tree(&mut self, nodes: &[Node]) -> u32 {
        let base = self.nodes.len() as u32;
        let global = |i: u32| if i == NONE { NONE } else { base + i };
        self.nodes.extend(nodes.iter().map(|n| Node {
            parent: global(n.parent),
            main_child: global(n.main_child),
            ..*n
        }));
        self.flags
            .reserve(self.nodes.capacity().saturating_sub(self.flags.len()));
        self.flags.resize(self.nodes.len(), 0);
        base
    }

    /// Heap bytes held (capacity).
    pub(super) fn heap_bytes(&self) -> usize {
        use crate::ops::scratch::vec_bytes;
        vec_bytes(&self.nodes).saturating_add(vec_bytes(&self.flags))
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
                let (mut rest, gain) = if x == NONE {
                    (y, below_x)
                } else {
                    (x, below_y)
                };
                while rest != NONE {
                    self.nodes[rest as usize].size += gain;
                    self.flags[rest as usize] |= CHANGED;
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
            if below_y != 0 {
                self.flags[x as usize] |= CHANGED;
            }
            if z == NONE || self.level(z) > self.level(y) {
                // `y` comes next above `x`; at `x`'s level, `x` joins it.
                self.nodes[x as usize].parent = y;
                self.flags[x as usize] |= if self.level(x) == self.level(y) {
                    CHANGED | ABSORBED
                } else {
                    CHANGED
                };
                self.flags[y as usize] |= DIRTY;
                if z != NONE {
                    self.flags[z as usize] |= DIRTY;
                }
            }
            x = z;
        }
    }

    /// Finishes the merged tree: absorbed elements get size 0 and their
    /// level root as parent, the children of absorbed elements that root,
    /// and the elements whose children changed their largest child and tie
    /// found again (see `stability`).
    pub(super) fn finish(&mut self) {
        let count = self.nodes.len() as u32;
        for c in 0..count {
            let flags = self.flags[c as usize];
            if flags & ABSORBED != 0 {
                let root = self.level_root(c);
                let node = &mut self.nodes[c as usize];
                node.parent = root;
                node.size = 0;
                continue;
            }
            let mut p = self.nodes[c as usize].parent;
            if p == NONE {
                continue;
            }
            if self.flags[p as usize] & ABSORBED != 0 {
                p = self.level_root(p);
                self.nodes[c as usize].parent = p;
                self.flags[p as usize] |= DIRTY;
            }
            if flags & CHANGED != 0 {
                self.flags[p as usize] |= DIRTY;
            }
        }
        for (node, &flags) in self.nodes.iter_mut().zip(&self.flags) {
            if flags & DIRTY != 0 {
                node.main_child = NONE;
                node.tie = NO_TIE;
            }
        }
        for c in 0..count {
            let Node {
                size,
                parent,
                level,
                ..
            } = self.nodes[c as usize];
            if size == 0 || parent == NONE || self.flags[parent as usize] & DIRTY == 0 {
                continue;
            }
            let p = self.nodes[parent as usize];
            let main = self
                .nodes
                .get(p.main_child as usize)
                .map(|m| (m.size, m.level));
            offer_child(&mut self.nodes[parent as usize], main, c, size, level);
        }
        #[cfg(debug_assertions)]
        self.check();
    }

    /// Debug builds: the merged tree's links go the right way (parents
    /// higher, largest children lower and live, absorbed elements under a
    /// live root of their level).
    #[cfg(debug_assertions)]
    fn check(&self) {
        for (i, n) in self.nodes.iter().enumerate() {
            let parent = self.nodes.get(n.parent as usize);
            if n.size == 0 {
                let root = parent.expect("absorbed element has a root");
                debug_assert!(root.size > 0 && root.level == n.level, "absorbed {i}");
                continue;
            }
            if let Some(p) = parent {
                debug_assert!(p.level > n.level && p.size > n.size, "parent of {i}");
            }
            if let Some(m) = self.nodes.get(n.main_child as usize) {
                debug_assert!(
                    m.level < n.level && m.size > 0,
                    "main child of {i}: {n:?} {m:?}"
                );
                debug_assert_eq!(m.parent, i as u32, "main child of {i} is its child");
            }
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
