//! [`WorldBuilder`]: a world set up by named settings, each with the scene format's default,
//! checked once in [`WorldBuilder::build`].
//!
//! Why: [`World::new`] takes gravity, the step and the integrator as positional arguments
//! and contact and step control as further `with_*` calls, and every body must be built
//! first; a newcomer wants to name what differs from the defaults and get one error that says
//! what is wrong (issue 41). The defaults are those of a scene that gives only its bodies
//! (`supple_io`'s scene file: gravity −9.81 m/s² along y, `dt = 0.01` s, linearized backward
//! Euler with PCG and the adaptive warm start).

use super::{StepControl, World};
use crate::body::{Body, BodyDesc, BuildError};
use crate::contact::{ContactSettings, Obstacle};
use crate::time::{IntegratorKind, LinearSolverKind, WarmStart};
use nalgebra::Vector3;

/// A world described by named settings; see [`World::builder`].
#[derive(Debug)]
pub struct WorldBuilder {
    bodies: Vec<Result<Body, BuildError>>,
    gravity: Vector3<f64>,
    dt: f64,
    integrator: IntegratorKind,
    contact: Option<ContactSettings>,
    step_control: Option<StepControl>,
}

impl Default for WorldBuilder {
    fn default() -> Self {
        Self {
            bodies: Vec::new(),
            gravity: Vector3::new(0.0, -9.81, 0.0),
            dt: 0.01,
            integrator: IntegratorKind::BackwardEulerLinearized {
                solver: LinearSolverKind::default(),
                warm_start: WarmStart::default(),
            },
            contact: None,
            step_control: None,
        }
    }
}

impl World {
    /// A world set up by name, with the scene format's defaults for what is not named
    /// (see [`WorldBuilder`]): a cube dropped on the ground,
    ///
    /// ```
    /// use supple::prelude::*;
    /// let mesh = box_grid(&BoxGrid { cells: [2, 2, 2], cell_size: Vector3::repeat(0.1),
    ///     origin: Vector3::new(-0.1, 0.05, -0.1), split: TetSplit::Five });
    /// let mut world = World::builder()
    ///     .body(BodyDesc::of(mesh).name("cube").youngs(5e4).poisson(0.3))
    ///     .obstacle(Obstacle::plane("ground", Vector3::zeros(), Vector3::y(), 0.5)?)
    ///     .dt(0.01)
    ///     .build()?;
    /// for _ in 0..5 {
    ///     world.step()?;
    /// }
    /// let cube = world.body("cube").ok_or("a body named cube")?;
    /// assert!(cube.center_of_mass().y < 0.15, "it falls");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn builder() -> WorldBuilder {
        WorldBuilder::default()
    }
}

impl WorldBuilder {
    /// Adds a body, built (and checked) by [`build`](Self::build).
    pub fn body(mut self, desc: BodyDesc) -> Self {
        self.bodies.push(desc.build());
        self
    }

    /// Adds a body built already (e.g. by [`BodyDesc::build_with_law`]).
    pub fn built_body(mut self, body: Body) -> Self {
        self.bodies.push(Ok(body));
        self
    }

    /// Gravity (m/s²); default `(0, −9.81, 0)`.
    pub fn gravity(mut self, gravity: Vector3<f64>) -> Self {
        self.gravity = gravity;
        self
    }

    /// No gravity.
    pub fn no_gravity(self) -> Self {
        self.gravity(Vector3::zeros())
    }

    /// The time step (s), finite and above 0; default 0.01.
    pub fn dt(mut self, dt: f64) -> Self {
        self.dt = dt;
        self
    }

    /// The integrator of every body; default linearized backward Euler with PCG
    /// ([`IntegratorKind::BackwardEulerLinearized`]).
    pub fn integrator(mut self, integrator: IntegratorKind) -> Self {
        self.integrator = integrator;
        self
    }

    /// Turns contact on with these settings (their obstacles are kept beside those of
    /// [`obstacle`](Self::obstacle)); without it and without obstacles there is no contact.
    pub fn contact(mut self, settings: ContactSettings) -> Self {
        let mut obstacles = self.contact.take().map(|c| c.obstacles).unwrap_or_default();
        obstacles.extend(settings.obstacles.iter().cloned());
        self.contact = Some(ContactSettings {
            obstacles,
            ..settings
        });
        self
    }

    /// Adds a rigid obstacle (contact turns on with [`ContactSettings::default`] unless
    /// [`contact`](Self::contact) sets it).
    pub fn obstacle(mut self, obstacle: Obstacle) -> Self {
        self.contact
            .get_or_insert_with(ContactSettings::default)
            .obstacles
            .push(obstacle);
        self
    }

    /// How failed steps are judged and retried; default [`StepControl::default`].
    pub fn step_control(mut self, control: StepControl) -> Self {
        self.step_control = Some(control);
        self
    }

    /// Builds the world: the first refused body (by name and setting), no body at all, or a
    /// refused world setting (`dt`, gravity, contact, step control) is an error.
    ///
    /// ```
    /// use supple::prelude::*;
    /// let mesh = box_grid(&BoxGrid { cells: [1, 1, 1], cell_size: Vector3::repeat(0.1),
    ///     origin: Vector3::zeros(), split: TetSplit::Five });
    /// let refused = World::builder().body(BodyDesc::of(mesh.clone())).dt(0.0).build();
    /// assert_eq!(refused.unwrap_err().to_string(), "dt = 0: must be a finite number above 0");
    /// let refused = World::builder().body(BodyDesc::of(mesh).density(-1.0)).build();
    /// assert_eq!(refused.unwrap_err().to_string(),
    ///     "body `body`: density = -1: must be a finite number above 0");
    /// assert_eq!(World::builder().build().unwrap_err(), BuildError::NoBodies);
    /// ```
    pub fn build(self) -> Result<World, BuildError> {
        if self.bodies.is_empty() {
            return Err(BuildError::NoBodies);
        }
        let bodies = self.bodies.into_iter().collect::<Result<Vec<_>, _>>()?;
        let mut world = World::new(bodies, self.gravity, self.dt, self.integrator)?;
        if let Some(control) = self.step_control {
            world = world.with_step_control(control)?;
        }
        if let Some(contact) = self.contact {
            world = world.with_contact(contact)?;
        }
        Ok(world)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::{box_grid, BoxGrid, TetSplit};

    fn cube() -> BodyDesc {
        BodyDesc::of(box_grid(&BoxGrid {
            cells: [1, 1, 1],
            cell_size: Vector3::repeat(0.1),
            origin: Vector3::zeros(),
            split: TetSplit::Five,
        }))
    }

    #[test]
    fn defaults_are_the_scene_formats() {
        let world = World::builder().body(cube()).build().unwrap();
        assert_eq!(
            (world.dt, world.gravity),
            (0.01, Vector3::new(0.0, -9.81, 0.0))
        );
        assert_eq!(world.integrator_name(), "backward_euler_linearized");
        assert!(world.contact().is_none());
    }

    #[test]
    fn obstacles_and_contact_settings_add_up() {
        let plane = |name| Obstacle::plane(name, Vector3::zeros(), Vector3::y(), 0.0).unwrap();
        let world = World::builder()
            .body(cube().velocity(Vector3::new(0.0, -1.0, 0.0)))
            .obstacle(plane("a"))
            .contact(ContactSettings {
                obstacles: vec![plane("b")],
                self_collision: true,
                ..ContactSettings::default()
            })
            .build()
            .unwrap();
        let settings = world.contact().unwrap().settings();
        let names: Vec<_> = settings.obstacles.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert!(settings.self_collision);
    }

    #[test]
    fn the_first_refused_body_is_named() {
        let err = World::builder()
            .body(cube().name("good"))
            .body(cube().name("bad").fix([99]))
            .build()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "body `bad`: fixed vertex 99 is out of range (the mesh has 8 vertices)"
        );
    }

    #[test]
    fn a_law_gets_the_checked_lame_parameters() {
        use crate::fem::material::StVenantKirchhoff;
        let err = cube()
            .poisson(0.5)
            .build_with_law(StVenantKirchhoff::new)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "body `body`: poisson = 0.5: must be below 0.5"
        );
        let body = cube()
            .youngs(3e5)
            .poisson(0.25)
            .build_with_law(StVenantKirchhoff::new)
            .unwrap();
        // E = 3e5, ν = 0.25: μ = E / 2.5, λ = E ν / (1.25 · 0.5).
        assert_eq!((body.lame.mu, body.lame.lambda), (1.2e5, 1.2e5));
        assert_eq!(body.model.name(), "stvk");
        let world = World::builder().built_body(body).build().unwrap();
        assert_eq!(world.bodies.len(), 1);
    }

    #[test]
    fn a_refused_step_control_is_an_error() {
        let control = StepControl {
            max_halvings: 21,
            ..StepControl::default()
        };
        let err = World::builder()
            .body(cube())
            .step_control(control)
            .build()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "step_control.max_halvings = 21: must be at most 20"
        );
    }
}
