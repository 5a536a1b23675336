//! [`CenterStrip`]: the centre prior on a strip of rows.

use std::sync::{Arc, Mutex};

use super::check::arity;
use crate::ops::center::profile_at;
use crate::ops::{CenterParams, OpsError};
use cortex_core::strip::{Geometry, Inputs, Kind, StripError, StripKernel, StripMut};

/// A width and the horizontal profile for it.
type Profile = Arc<(usize, Vec<f64>)>;

/// The centre prior of [`crate::ops::center_prior_into`] sized like its one
/// input (whose pixels it never reads), pointwise: row `y` is the vertical
/// profile at `y` times the horizontal profile, rounded once to `f32`.
#[derive(Debug)]
pub struct CenterStrip {
    params: CenterParams,
    /// The horizontal profile of the last width, shared by the strips.
    profile: Mutex<Option<Profile>>,
}

impl CenterStrip {
    /// The prior with these parameters.
    ///
    /// # Errors
    /// As [`CenterParams::validate`].
    pub fn new(params: CenterParams) -> Result<Self, OpsError> {
        params.validate()?;
        Ok(CenterStrip {
            params,
            profile: Mutex::new(None),
        })
    }

    fn horizontal(&self, width: usize) -> Profile {
        let mut slot = self.profile.lock().unwrap_or_else(|e| e.into_inner());
        match slot.as_ref() {
            Some(p) if p.0 == width => Arc::clone(p),
            _ => {
                let gx = (0..width)
                    .map(|i| profile_at(i, width, self.params.sigma_x))
                    .collect();
                let p = Arc::new((width, gx));
                *slot = Some(Arc::clone(&p));
                p
            }
        }
    }
}

impl StripKernel for CenterStrip {
    type Out = f32;

    fn name(&self) -> &str {
        "center"
    }

    fn kind(&self) -> Kind {
        Kind::Pointwise
    }

    /// The prior depends on the frame's size only: a fused group computes
    /// it once per size.
    fn constant_per_geometry(&self) -> bool {
        true
    }

    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError> {
        let g = arity("center", inputs, 1)?[0];
        Ok(Geometry::new(g.width, g.height))
    }

    fn run(&self, _inputs: &Inputs<'_>, out: &mut StripMut<'_, f32>) -> Result<(), StripError> {
        let g = out.geometry();
        let gx = self.horizontal(g.width);
        for (y, row) in out.rows_mut() {
            let vy = profile_at(y, g.height, self.params.sigma_y);
            for (d, &vx) in row.iter_mut().zip(gx.1.iter()) {
                *d = (vy * vx) as f32;
            }
        }
        Ok(())
    }
}
