//! A rated node's held value, as a pipeline reports it: the frame it was
//! computed on, and whether the last frame read it instead of computing it.

use crate::model::ir::NodeId;

/// The bookkeeping of one rated node's held value (see
/// `Pipeline::holds`). Frames are counted from 0 by
/// `Pipeline::frame_index`: successful frames since the pipeline was made
/// or reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Hold {
    /// The rated node.
    pub node: NodeId,
    /// The frame whose value is held; `None` when there is none (never
    /// computed, forgotten by a frame in a mode that does not rate the
    /// node, or reset).
    pub computed_at: Option<u64>,
    /// Whether the last successful frame read the held value (`true`) or
    /// computed the node (`false`, also when it did not need the node).
    pub held_last_frame: bool,
}

impl Hold {
    /// No value held yet.
    pub const fn new(node: NodeId) -> Hold {
        Hold {
            node,
            computed_at: None,
            held_last_frame: false,
        }
    }

    /// Whether frame `now` must compute the node at a rate of one in
    /// `every`: nothing is held, or the held value is `every` frames old.
    #[inline]
    pub fn due(&self, now: u64, every: u32) -> bool {
        match self.computed_at {
            None => true,
            Some(at) => now.saturating_sub(at) >= u64::from(every),
        }
    }

    /// Forgets the held value: the next frame that needs the node computes it.
    #[inline]
    pub fn forget(&mut self) {
        self.computed_at = None;
        self.held_last_frame = false;
    }
}

/// Which of `holds` the last frame read: bit `i` set when `holds[i]` was
/// read instead of computed (holds past the 64th share the last bit).
pub fn held_mask(holds: &[Hold]) -> u64 {
    holds
        .iter()
        .enumerate()
        .filter(|(_, h)| h.held_last_frame)
        .fold(0u64, |m, (i, _)| m | 1u64 << i.min(63))
}
