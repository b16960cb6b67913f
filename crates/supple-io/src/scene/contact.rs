//! `[contact]` and `[[obstacle]]`: validation into [`ContactSettings`].

use super::finite3;
use nalgebra::{Isometry3, Rotation3, Translation3, UnitQuaternion, Vector3};
use serde::Deserialize;
use supple::contact::ipc::IpcSettings;
use supple::contact::{
    BroadPhaseKind, ContactSettings, NarrowPhase, Obstacle, Response, RigidPath, Shape,
};

/// `[contact]`: collisions between deformable surfaces (obstacles are `[[obstacle]]`).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ContactSection {
    self_collision: Option<bool>,
    body_collision: Option<bool>,
    broad_phase: Option<BroadName>,
    narrow_phase: Option<NarrowName>,
    response: Option<ResponseName>,
    spring_stiffness: Option<f64>,
    friction: Option<f64>,
    thickness: Option<f64>,
    max_iterations: Option<usize>,
    skin: Option<f64>,
    /// Implicit one-step integrators hold obstacle contacts inside the solve (default true).
    hold_contacts: Option<bool>,
    /// ... and body–body / self contact (default true).
    hold_surfaces: Option<bool>,
    /// Removed (the coupled IPC step replaces it); refused with that note.
    push_guard: Option<bool>,
    /// Removed (the coupled IPC step replaces it); refused with that note.
    energy_limit: Option<bool>,
    /// IPC response: barrier distance d̂ (m), barrier stiffness κ, friction's ε_v (m/s),
    /// Newton tolerance and iteration cap.
    dhat: Option<f64>,
    kappa: Option<f64>,
    eps_v: Option<f64>,
    ipc_tolerance: Option<f64>,
    ipc_velocity_tolerance: Option<f64>,
    ipc_max_iterations: Option<u32>,
    /// How Newton's matrix makes each pair's barrier Hessian positive semidefinite:
    /// "projected" (default; an eigendecomposition per pair, IPC §4.1) or "gauss_newton"
    /// (the curvature along the pair's normal only, rank one: cheaper per iteration on
    /// resting contact, but impacts may need more iterations and halved steps).
    ipc_hessian: Option<HessianName>,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum HessianName {
    Projected,
    GaussNewton,
}

#[derive(Debug, Deserialize, Clone, Copy, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum BroadName {
    Sap,
    Bvh,
    BruteForce,
}

#[derive(Debug, Deserialize, Clone, Copy, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum NarrowName {
    Exact,
    Hermite,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum ResponseName {
    Projection,
    Springs,
    Ipc,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum ShapeName {
    Plane,
    Sphere,
    Box,
    Capsule,
}

/// `[[obstacle]]`: a rigid shape, static or moving on a prescribed path.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ObstacleSection {
    name: Option<String>,
    shape: ShapeName,
    /// Plane: a point on it and its outward normal.
    point: Option<[f64; 3]>,
    normal: Option<[f64; 3]>,
    /// Sphere, capsule.
    radius: Option<f64>,
    /// Box.
    half_extents: Option<[f64; 3]>,
    /// Capsule: half the length of its axis (local z).
    half_length: Option<f64>,
    /// Pose at t = 0 (not for planes): centre and roll/pitch/yaw in degrees.
    position: Option<[f64; 3]>,
    rotate_deg: Option<[f64; 3]>,
    #[serde(default)]
    friction: f64,
    /// Constant motion from the start pose: m/s and deg/s (world axes).
    velocity: Option<[f64; 3]>,
    angular_velocity_deg: Option<[f64; 3]>,
    /// Or a keyframed path (poses between keyframes are interpolated).
    #[serde(default)]
    keyframe: Vec<KeyframeSection>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct KeyframeSection {
    t: f64,
    position: [f64; 3],
    #[serde(default)]
    rotate_deg: [f64; 3],
}

fn pose(key: &str, position: [f64; 3], rotate_deg: [f64; 3]) -> Result<Isometry3<f64>, String> {
    let p = finite3(&format!("{key}.position"), position)?;
    let a = finite3(&format!("{key}.rotate_deg"), rotate_deg)?.map(f64::to_radians);
    let r = Rotation3::from_euler_angles(a.x, a.y, a.z);
    Ok(Isometry3::from_parts(
        Translation3::from(p),
        UnitQuaternion::from_rotation_matrix(&r),
    ))
}

fn obstacle(o: ObstacleSection, i: usize) -> Result<Obstacle, String> {
    let key = format!("obstacle[{i}]");
    let name = o.name.clone().unwrap_or_else(|| format!("obstacle{i}"));
    let only = |set: bool, field: &str, shapes: &str| {
        if set {
            Err(format!(
                "{key}.{field}: not a setting of shape {:?} (only of {shapes})",
                format!("{:?}", o.shape).to_lowercase()
            ))
        } else {
            Ok(())
        }
    };
    let is = |s: ShapeName| o.shape == s;
    only(o.point.is_some() && !is(ShapeName::Plane), "point", "plane")?;
    only(
        o.normal.is_some() && !is(ShapeName::Plane),
        "normal",
        "plane",
    )?;
    only(
        o.position.is_some() && is(ShapeName::Plane),
        "position",
        "sphere, box, capsule (a plane has `point`)",
    )?;
    only(
        o.radius.is_some() && !(is(ShapeName::Sphere) || is(ShapeName::Capsule)),
        "radius",
        "sphere, capsule",
    )?;
    only(
        o.half_extents.is_some() && !is(ShapeName::Box),
        "half_extents",
        "box",
    )?;
    only(
        o.half_length.is_some() && !is(ShapeName::Capsule),
        "half_length",
        "capsule",
    )?;
    let need = |v: Option<f64>, field: &str| {
        v.ok_or_else(|| format!("{key}.{field}: required for this shape"))
    };
    let (shape, start) = match o.shape {
        ShapeName::Plane => {
            let point = finite3(&format!("{key}.point"), o.point.unwrap_or([0.0; 3]))?;
            let normal = finite3(
                &format!("{key}.normal"),
                o.normal
                    .ok_or_else(|| format!("{key}.normal: required for a plane"))?,
            )?;
            if normal.norm() <= 0.0 || normal.norm().is_nan() {
                return Err(format!("{key}.normal = {normal:?}: must not be zero"));
            }
            let tilt = match o.rotate_deg {
                Some(r) => pose(&key, [0.0; 3], r)?.rotation,
                None => UnitQuaternion::identity(),
            };
            let to_normal = UnitQuaternion::rotation_between(&Vector3::z(), &normal)
                .unwrap_or_else(|| {
                    UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI)
                });
            (
                Shape::HalfSpace,
                Isometry3::from_parts(Translation3::from(point), tilt * to_normal),
            )
        }
        _ => {
            let shape = match o.shape {
                ShapeName::Sphere => Shape::Sphere {
                    radius: need(o.radius, "radius")?,
                },
                ShapeName::Capsule => Shape::Capsule {
                    radius: need(o.radius, "radius")?,
                    half_length: need(o.half_length, "half_length")?,
                },
                _ => Shape::Box {
                    half_extents: Vector3::from(
                        o.half_extents
                            .ok_or_else(|| format!("{key}.half_extents: required for a box"))?,
                    ),
                },
            };
            let start = pose(
                &key,
                o.position.unwrap_or([0.0; 3]),
                o.rotate_deg.unwrap_or([0.0; 3]),
            )?;
            (shape, start)
        }
    };
    let moving = o.velocity.is_some() || o.angular_velocity_deg.is_some();
    if moving && !o.keyframe.is_empty() {
        return Err(format!(
            "{key}: give either velocity/angular_velocity_deg or [[{key}.keyframe]], not both"
        ));
    }
    let path = if !o.keyframe.is_empty() {
        let frames = o
            .keyframe
            .iter()
            .enumerate()
            .map(|(k, f)| {
                let fkey = format!("{key}.keyframe[{k}]");
                if !f.t.is_finite() {
                    return Err(format!("{fkey}.t = {}: must be finite", f.t));
                }
                let mut p = pose(&fkey, f.position, f.rotate_deg)?;
                if o.shape == ShapeName::Plane {
                    p.rotation *= start.rotation;
                }
                Ok((f.t, p))
            })
            .collect::<Result<Vec<_>, String>>()?;
        RigidPath::Keyframes(frames)
    } else if moving {
        RigidPath::Constant {
            start,
            linear: finite3(&format!("{key}.velocity"), o.velocity.unwrap_or([0.0; 3]))?,
            angular: finite3(
                &format!("{key}.angular_velocity_deg"),
                o.angular_velocity_deg.unwrap_or([0.0; 3]),
            )?
            .map(f64::to_radians),
        }
    } else {
        RigidPath::Static(start)
    };
    let ob = Obstacle {
        name,
        shape,
        path,
        friction: o.friction,
    };
    ob.validate().map_err(|e| format!("{key}: {e}"))?;
    Ok(ob)
}

/// The IPC keys of `[contact]` over [`IpcSettings::default`].
fn ipc_settings(c: &ContactSection) -> Result<IpcSettings, String> {
    let positive = |key: &str, v: Option<f64>| match v {
        Some(x) if !(x > 0.0 && x.is_finite()) => Err(format!(
            "contact.{key} = {x}: must be a finite number above 0"
        )),
        _ => Ok(v),
    };
    let mut ipc = IpcSettings {
        dhat: positive("dhat", c.dhat)?,
        kappa: positive("kappa", c.kappa)?,
        eps_v: positive("eps_v", c.eps_v)?,
        ..IpcSettings::default()
    };
    if let Some(t) = positive("ipc_tolerance", c.ipc_tolerance)? {
        ipc.tolerance = t;
    }
    if let Some(t) = positive("ipc_velocity_tolerance", c.ipc_velocity_tolerance)? {
        ipc.velocity_tolerance = t;
    }
    if let Some(n) = c.ipc_max_iterations {
        if n == 0 {
            return Err("contact.ipc_max_iterations = 0: must be at least 1".into());
        }
        ipc.max_iterations = n;
    }
    if let Some(h) = c.ipc_hessian {
        ipc.hessian = match h {
            HessianName::Projected => supple::contact::ipc::BarrierHessian::Projected,
            HessianName::GaussNewton => supple::contact::ipc::BarrierHessian::GaussNewton,
        };
    }
    Ok(ipc)
}

/// Validates `[contact]` and `[[obstacle]]`; `None` when the scene has neither.
pub(super) fn contact(
    section: Option<ContactSection>,
    obstacles: Vec<ObstacleSection>,
) -> Result<Option<ContactSettings>, String> {
    if section.is_none() && obstacles.is_empty() {
        return Ok(None);
    }
    let mut s = ContactSettings {
        obstacles: obstacles
            .into_iter()
            .enumerate()
            .map(|(i, o)| obstacle(o, i))
            .collect::<Result<_, _>>()?,
        ..ContactSettings::default()
    };
    if let Some(c) = section {
        if let Some(v) = c.self_collision {
            s.self_collision = v;
        }
        if let Some(v) = c.body_collision {
            s.body_collision = v;
        }
        if let Some(b) = c.broad_phase {
            s.broad_phase = match b {
                BroadName::Sap => BroadPhaseKind::SweepAndPrune,
                BroadName::Bvh => BroadPhaseKind::Bvh,
                BroadName::BruteForce => BroadPhaseKind::BruteForce,
            };
        }
        if let Some(n) = c.narrow_phase {
            s.narrow_phase = match n {
                NarrowName::Exact => NarrowPhase::Exact,
                NarrowName::Hermite => NarrowPhase::Hermite,
            };
        }
        let springs = c.response == Some(ResponseName::Springs);
        if c.spring_stiffness.is_some() && !springs {
            return Err(
                "contact.spring_stiffness: only a setting of response = \"springs\"".into(),
            );
        }
        if springs {
            s.response = Response::Springs {
                stiffness: c.spring_stiffness,
            };
        }
        let ipc_keys = [
            ("dhat", c.dhat.is_some()),
            ("kappa", c.kappa.is_some()),
            ("eps_v", c.eps_v.is_some()),
            ("ipc_tolerance", c.ipc_tolerance.is_some()),
            ("ipc_velocity_tolerance", c.ipc_velocity_tolerance.is_some()),
            ("ipc_max_iterations", c.ipc_max_iterations.is_some()),
            ("ipc_hessian", c.ipc_hessian.is_some()),
        ];
        match c.response {
            // No `response`: IPC when every body steps with backward Euler, projection
            // otherwise (`Response::Auto`, resolved when the world is built); the IPC keys
            // apply when it is IPC.
            None | Some(ResponseName::Ipc) => {
                let ipc = ipc_settings(&c)?;
                s.response = if c.response.is_some() {
                    Response::Ipc(ipc)
                } else {
                    Response::Auto(ipc)
                };
            }
            Some(ResponseName::Projection) | Some(ResponseName::Springs) => {
                if let Some((key, _)) = ipc_keys.iter().find(|(_, set)| *set) {
                    return Err(format!(
                        "contact.{key}: a setting of response = \"ipc\" (the default with backward Euler), not of response = \"{}\"",
                        if springs { "springs" } else { "projection" }
                    ));
                }
                if !springs {
                    s.response = Response::Projection;
                }
            }
        }
        if let Some(v) = c.friction {
            s.friction = v;
        }
        s.thickness = c.thickness;
        if let Some(v) = c.max_iterations {
            s.max_iterations = v;
        }
        if let Some(v) = c.skin {
            s.skin = v;
        }
        if let Some(v) = c.hold_contacts {
            s.hold_contacts = v;
        }
        if let Some(v) = c.hold_surfaces {
            s.hold_surfaces = v;
        }
        for (key, set) in [
            ("push_guard", c.push_guard.is_some()),
            ("energy_limit", c.energy_limit.is_some()),
        ] {
            if set {
                return Err(format!(
                    "contact.{key}: removed; it corrected the projection response between bodies, which the coupled IPC step (the default with backward Euler) replaces: delete the key (EXPERIMENTS.md, *Contact as one minimization*)"
                ));
            }
        }
    }
    s.validate().map_err(|e| e.to_string())?;
    Ok(Some(s))
}
