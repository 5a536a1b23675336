//! Strip kernels and fused groups: ops that run on a horizontal strip of
//! rows, and an executor that runs a group of them strip by strip over the
//! worker pool, keeping the values that never leave the group in per-worker
//! scratch of a strip's height plus its halo instead of whole frames.
//!
//! The layers, one file each, each reading only those listed before it:
//! [`error`], [`geometry`] (sizes and element types), [`plane`] (typed
//! views of rows), [`erased`] (the same views with the element type checked
//! at run time, so one group mixes types), [`kernel`] (what an op declares:
//! kind, window, geometry, strip function), [`rows`] (which input rows a
//! strip of output rows reads), `member` (a kernel with its buffers, types
//! erased), [`strips`] (how a run cuts its rows), `dag` (a group's members,
//! values, inputs and outputs, and their geometries), [`schedule`] (the
//! rows every member computes in every strip, planned per input size),
//! [`tune`] (choosing the strip height, or the members unfused, by
//! measurement), `state` (the buffers and published values), [`exec`]
//! (running a plan, fused or unfused), [`group`] (building a group and the
//! [`FusedGroup`] holding the four) and [`form`] (how a graph node's op
//! joins a group).

mod dag;
pub mod erased;
pub mod error;
pub mod exec;
pub mod form;
pub mod geometry;
pub mod group;
pub mod kernel;
mod member;
pub mod plane;
pub mod rows;
pub mod schedule;
mod state;
pub mod strips;
pub mod tune;

pub use erased::{AnyPlane, Inputs};
pub use error::StripError;
pub use form::{FormShape, Map, PlaneValue, Reduce, StripForm};
pub use geometry::{Element, Geometry};
pub use group::{FusedGroup, GroupBuilder, Value};
pub use kernel::{Kind, StripKernel, StripReduction, Window};
pub use plane::{Plane, StripMut};
pub use strips::Strips;
pub use tune::{Cached, Setting, StripDecision, StripPolicy, STRIPS_ENV};
