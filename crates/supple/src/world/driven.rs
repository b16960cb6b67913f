//! Which bodies something outside may do work on in a step, for the energy-limited contact
//! step (`contact/pipeline/energy_limit.rs`, [`crate::contact::ContactSettings::energy_limit`]).

use super::World;

impl World {
    /// The energy-limited contact step at the end of a try at `[t0, t0 + h]`, after every
    /// other phase (a no-op unless the contact settings ask for it). A body is driven when
    /// a grab spring pulls it, external forces or carried constraint forces act on it, it
    /// has loads, its prescribed motions differ between `t0` and `t0 + h` (moving or
    /// released; vertices fixed at rest do no work), an exact constraint holds one of its
    /// points, or it has a dynamic rigid core.
    pub(super) fn limit_energy(&mut self, t0: f64, h: f64) {
        let Some(contact) = &self.contact else {
            return;
        };
        if !contact.settings().energy_limit {
            return;
        }
        for (b, (driven, (body, input))) in (self.driven.iter_mut())
            .zip(self.bodies.iter().zip(&self.inputs))
            .enumerate()
        {
            *driven = !input.springs.is_empty()
                || input.has_external
                || input.has_loads
                || !body.loads.is_empty()
                || !body.constraints.same_at(t0, t0 + h)
                || self.rigid.iter().any(|(rb, _)| *rb == b);
        }
        for b in self.exact.bodies() {
            self.driven[b] = true;
        }
        if let Some(contact) = &mut self.contact {
            contact.limit_energy(&mut self.bodies, &self.gravity, &self.driven, t0, h);
        }
    }
}
