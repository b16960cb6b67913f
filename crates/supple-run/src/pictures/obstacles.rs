//! The scene's rigid obstacles in the pictures, and `obstacles.json`, which lets
//! `supple render` draw them without the scene file.
//!
//! Drawing, per output frame (poses at the frame's time):
//! - a half-space whose outward normal is within 10° of the camera's up axis (+y) is the
//!   ground: the renderer's floor with grid lines ([`Ground`]); only the first such one, the
//!   others are drawn like any other half-space;
//! - any other half-space is a flat light-grey square in its plane;
//! - both are centred on the point of the plane nearest the centre of the framed bounds and
//!   reach 1.5 bounds diagonals from it each way, and are left out when the camera is inside
//!   the solid (it would hide everything);
//! - spheres, boxes and capsules are triangulated ([`supple_render::shapes`], 24 segments
//!   around), moved by the pose and drawn in a neutral grey without triangle edges, unless
//!   the camera is inside them.
//!
//! Obstacles are in neither the body legend nor the colour-bar range. The camera keeps
//! framing the bodies: a finite obstacle's box (over every recorded pose) is added to the
//! framed bounds only when the union of it and the bodies' box has a diagonal at most 1.5
//! times the bodies' box diagonal, i.e. when it is small and near; half-spaces never are.
//!
//! `obstacles.json`: `{"obstacles": [{"name", "shape", "poses"}]}` where `shape` is
//! `{"kind": "plane"}` (solid below its local z = 0, outward normal = the pose's rotation of
//! +z), `{"kind": "sphere", "radius"}`, `{"kind": "box", "half_extents": [x, y, z]}` or
//! `{"kind": "capsule", "radius", "half_length"}` (axis along local z), in metres, and
//! `poses` lists `{"t", "translation": [x, y, z], "rotation_wxyz": [w, x, y, z]}` (local →
//! world, a unit quaternion) at every output frame's time, or once (at t = 0) for a static
//! obstacle. A frame is drawn with the pose whose time is nearest its own.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;
use supple::contact::{Obstacle, RigidPath, Shape};
use supple::nalgebra::{Isometry3, Point3, Quaternion, Translation3, UnitQuaternion, Vector3};
use supple_render::shapes::{capsule, cuboid, sphere, TriMesh};
use supple_render::{Ground, Paint, Surface};

/// The file in the run folder.
pub const FILE: &str = "obstacles.json";
/// Segments around a triangulated sphere or capsule.
const SEGMENTS: usize = 24;
/// Colour of spheres, boxes and capsules.
pub const OBSTACLE_GREY: [u8; 3] = [160, 160, 160];
/// Colour of half-spaces other than the ground.
pub const PLANE_GREY: [u8; 3] = [212, 212, 208];
/// Largest angle between a half-space's normal and the camera's up axis for the ground grid.
const GROUND_MAX_TILT_DEG: f64 = 10.0;
/// Half the side of a drawn plane, in diagonals of the framed bounds.
const PLANE_HALF_EXTENT: f64 = 1.5;
/// A finite obstacle is framed when framing it grows the bodies' diagonal at most this much.
const FRAME_GROWTH_MAX: f64 = 1.5;
/// The two triangles of a plane's square.
const SQUARE: [[u32; 3]; 2] = [[0, 1, 2], [0, 2, 3]];

/// One obstacle as drawn: its shape and its poses at the recorded times.
pub struct ObstacleTrack {
    name: String,
    shape: Shape,
    /// The prescribed motion during a run, while poses are still being recorded; `None` for a
    /// static obstacle or one read back from `obstacles.json`.
    path: Option<RigidPath>,
    /// `(time, pose)`, by increasing time; never empty.
    poses: Vec<(f64, Isometry3<f64>)>,
    /// Triangulation in the local frame (`None` for a half-space).
    mesh: Option<TriMesh>,
}

impl ObstacleTrack {
    fn new(name: &str, shape: Shape, poses: Vec<(f64, Isometry3<f64>)>) -> Self {
        let mesh = match shape {
            Shape::HalfSpace => None,
            Shape::Sphere { radius } => Some(sphere(radius, SEGMENTS)),
            Shape::Box { half_extents } => Some(cuboid(half_extents.into())),
            Shape::Capsule {
                radius,
                half_length,
            } => Some(capsule(radius, half_length, SEGMENTS)),
        };
        Self {
            name: name.to_string(),
            shape,
            path: None,
            poses,
            mesh,
        }
    }

    /// A scene's obstacle, whose pose [`Self::record`] adds at each output frame (a static
    /// one has its single pose already).
    pub fn live(o: &Obstacle) -> Self {
        match &o.path {
            RigidPath::Static(pose) => Self::new(&o.name, o.shape, vec![(0.0, *pose)]),
            path => Self {
                path: Some(path.clone()),
                ..Self::new(&o.name, o.shape, Vec::new())
            },
        }
    }

    /// Records the pose at output time `t` (moving obstacles during a run).
    pub fn record(&mut self, t: f64) {
        if let Some(path) = &self.path {
            self.poses.push((t, path.pose(t)));
        }
    }

    /// The recorded pose nearest in time to `t`.
    fn pose_at(&self, t: f64) -> Option<Isometry3<f64>> {
        let i = self.poses.partition_point(|p| p.0 < t);
        let after = self.poses.get(i);
        let before = i.checked_sub(1).and_then(|j| self.poses.get(j));
        match (before, after) {
            (Some(b), Some(a)) if (t - b.0).abs() <= (a.0 - t).abs() => Some(b.1),
            (_, Some(a)) => Some(a.1),
            (b, None) => b.map(|b| b.1),
        }
    }

    /// Axis-aligned box over every recorded pose (`None` for a half-space).
    fn bounds(&self) -> Option<(Vector3<f64>, Vector3<f64>)> {
        self.poses.iter().try_fold(None, |acc, &(_, pose)| {
            let o = Obstacle {
                name: String::new(),
                shape: self.shape,
                path: RigidPath::Static(pose),
                friction: 0.0,
            };
            let (lo, hi) = o.aabb(0.0)?;
            Some(Some(match acc {
                None => (lo, hi),
                Some((l, h)) => (lo.inf(&l), hi.sup(&h)),
            }))
        })?
    }
}

/// The box to frame: the bodies' `[lo, hi]` and every finite obstacle small and near enough
/// (see the module documentation).
pub fn framing_bounds(
    tracks: &[ObstacleTrack],
    (lo, hi): (Vector3<f64>, Vector3<f64>),
) -> (Vector3<f64>, Vector3<f64>) {
    let diagonal = (hi - lo).norm();
    let (mut flo, mut fhi) = (lo, hi);
    for (olo, ohi) in tracks.iter().filter_map(ObstacleTrack::bounds) {
        let (ulo, uhi) = (lo.inf(&olo), hi.sup(&ohi));
        let grown = (uhi - ulo).norm();
        if grown.is_finite() && grown <= FRAME_GROWTH_MAX * diagonal {
            flo = flo.inf(&olo);
            fhi = fhi.sup(&ohi);
        }
    }
    (flo, fhi)
}

/// One obstacle mesh at one frame: world positions, triangles and colour.
type Piece<'a> = (Vec<[f32; 3]>, &'a [[u32; 3]], [u8; 3]);

/// What the obstacles add to one frame: the ground grid and grey triangle meshes.
pub struct FrameObstacles<'a> {
    pub ground: Option<Ground>,
    meshes: Vec<Piece<'a>>,
}

impl FrameObstacles<'_> {
    /// The meshes as plain surfaces for [`supple_render::render`].
    pub fn surfaces(&self) -> impl Iterator<Item = Surface<'_>> {
        self.meshes.iter().map(|(p, t, c)| Surface {
            positions: p,
            triangles: t,
            paint: Paint::Plain(*c),
        })
    }
}

/// The obstacles at time `t`, seen from `eye` with `up` the camera's up axis; planes are
/// sized from the framed bounds `[lo, hi]`.
pub fn frame<'a>(
    tracks: &'a [ObstacleTrack],
    t: f64,
    eye: &Vector3<f64>,
    up: &Vector3<f64>,
    (lo, hi): (Vector3<f64>, Vector3<f64>),
) -> FrameObstacles<'a> {
    let center = 0.5 * (lo + hi);
    let half = PLANE_HALF_EXTENT * (hi - lo).norm().max(1e-6);
    let up = up.try_normalize(0.0).unwrap_or_else(Vector3::y);
    let mut out = FrameObstacles {
        ground: None,
        meshes: Vec::new(),
    };
    for track in tracks {
        let Some(pose) = track.pose_at(t) else {
            continue;
        };
        let local_eye = pose.inverse_transform_point(&Point3::from(*eye)).coords;
        if track.shape.local_proximity(&local_eye).distance <= 0.0 {
            continue; // the camera is inside: drawing it would hide everything
        }
        let to_f32 = |p: Vector3<f64>| [p.x as f32, p.y as f32, p.z as f32];
        match &track.mesh {
            None => {
                let normal = pose.rotation * Vector3::z();
                let origin = pose.translation.vector;
                let foot = center - (center - origin).dot(&normal) * normal;
                if out.ground.is_none() && normal.dot(&up) >= GROUND_MAX_TILT_DEG.to_radians().cos()
                {
                    out.ground = Some(Ground {
                        point: foot,
                        normal,
                        spacing: grid_spacing(half),
                        half_extent: half,
                    });
                    continue;
                }
                let (u, v) = (pose.rotation * Vector3::x(), pose.rotation * Vector3::y());
                let corners = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]
                    .map(|(a, b)| to_f32(foot + half * (a * u + b * v)));
                out.meshes.push((corners.to_vec(), &SQUARE, PLANE_GREY));
            }
            Some(mesh) => {
                let positions = (mesh.positions.iter())
                    .map(|p| to_f32((pose * Point3::from(*p)).coords))
                    .collect();
                out.meshes.push((positions, &mesh.triangles, OBSTACLE_GREY));
            }
        }
    }
    out
}

/// A round grid spacing (1, 2 or 5 × 10ᵏ) giving about 8 to 20 lines across `half` each way.
fn grid_spacing(half: f64) -> f64 {
    let target = half / 8.0;
    if !(target.is_finite() && target > 0.0) {
        return 1.0;
    }
    let decade = 10f64.powf(target.log10().floor());
    [5.0, 2.0, 1.0]
        .into_iter()
        .map(|m| m * decade)
        .find(|&s| s <= target)
        .unwrap_or(decade)
}

#[derive(Serialize, Deserialize)]
struct ObstaclesFile {
    obstacles: Vec<ObstacleRecord>,
}

#[derive(Serialize, Deserialize)]
struct ObstacleRecord {
    name: String,
    shape: ShapeRecord,
    poses: Vec<PoseRecord>,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum ShapeRecord {
    Plane,
    Sphere { radius: f64 },
    Box { half_extents: [f64; 3] },
    Capsule { radius: f64, half_length: f64 },
}

#[derive(Serialize, Deserialize)]
struct PoseRecord {
    t: f64,
    translation: [f64; 3],
    rotation_wxyz: [f64; 4],
}

/// Writes `dir/obstacles.json`, or removes a stale one when there are no obstacles.
pub fn write(tracks: &[ObstacleTrack], dir: &Path) -> Result<()> {
    let path = dir.join(FILE);
    if tracks.is_empty() {
        if path.exists() {
            std::fs::remove_file(&path)
                .with_context(|| format!("cannot remove the stale {}", path.display()))?;
        }
        return Ok(());
    }
    let obstacles = tracks
        .iter()
        .map(|tr| ObstacleRecord {
            name: tr.name.clone(),
            shape: match tr.shape {
                Shape::HalfSpace => ShapeRecord::Plane,
                Shape::Sphere { radius } => ShapeRecord::Sphere { radius },
                Shape::Box { half_extents } => ShapeRecord::Box {
                    half_extents: half_extents.into(),
                },
                Shape::Capsule {
                    radius,
                    half_length,
                } => ShapeRecord::Capsule {
                    radius,
                    half_length,
                },
            },
            poses: (tr.poses.iter())
                .map(|(t, pose)| {
                    let q = pose.rotation.quaternion();
                    PoseRecord {
                        t: *t,
                        translation: pose.translation.vector.into(),
                        rotation_wxyz: [q.w, q.i, q.j, q.k],
                    }
                })
                .collect(),
        })
        .collect();
    let text = serde_json::to_string_pretty(&ObstaclesFile { obstacles })? + "\n";
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// Reads `dir/obstacles.json`; no file (a run without obstacles, or an older run) is no
/// obstacle. A file that does not parse, or holds an invalid shape or pose, is an error
/// naming the file (and the obstacle).
pub fn read(dir: &Path) -> Result<Vec<ObstacleTrack>> {
    let path = dir.join(FILE);
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let file: ObstaclesFile =
        serde_json::from_str(&text).with_context(|| format!("{}", path.display()))?;
    file.obstacles
        .into_iter()
        .map(|r| track_of(r).with_context(|| format!("{}", path.display())))
        .collect()
}

/// Checks and converts one record of `obstacles.json`.
fn track_of(r: ObstacleRecord) -> Result<ObstacleTrack> {
    let shape = match r.shape {
        ShapeRecord::Plane => Shape::HalfSpace,
        ShapeRecord::Sphere { radius } => Shape::Sphere { radius },
        ShapeRecord::Box { half_extents } => Shape::Box {
            half_extents: half_extents.into(),
        },
        ShapeRecord::Capsule {
            radius,
            half_length,
        } => Shape::Capsule {
            radius,
            half_length,
        },
    };
    let mut poses = Vec::with_capacity(r.poses.len());
    for p in &r.poses {
        let [w, x, y, z] = p.rotation_wxyz;
        let q = Quaternion::new(w, x, y, z);
        let norm = q.norm();
        if !(norm.is_finite() && norm > 1e-9 && p.t.is_finite()) {
            bail!(
                "obstacle `{}`: pose at t = {}: needs a finite time and a non-zero rotation",
                r.name,
                p.t
            );
        }
        let pose = Isometry3::from_parts(
            Translation3::from(Vector3::from(p.translation)),
            UnitQuaternion::from_quaternion(q),
        );
        // Dimensions and finiteness, as for a scene's obstacle.
        Obstacle {
            name: r.name.clone(),
            shape,
            path: RigidPath::Static(pose),
            friction: 0.0,
        }
        .validate()?;
        poses.push((p.t, pose));
    }
    if poses.is_empty() {
        bail!("obstacle `{}`: no poses", r.name);
    }
    poses.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(ObstacleTrack::new(&r.name, shape, poses))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_pose_and_round_spacing() {
        let at = |x: f64| Isometry3::translation(x, 0.0, 0.0);
        let track = ObstacleTrack::new(
            "s",
            Shape::Sphere { radius: 1.0 },
            vec![(0.0, at(0.0)), (1.0, at(1.0)), (2.0, at(2.0))],
        );
        let x = |t: f64| track.pose_at(t).unwrap().translation.vector.x;
        assert_eq!(
            [x(-1.0), x(0.4), x(0.6), x(1.5), x(9.0)],
            [0.0, 0.0, 1.0, 1.0, 2.0]
        );
        assert_eq!(grid_spacing(8.0), 1.0);
        assert_eq!(grid_spacing(1.7), 0.2);
        assert_eq!(grid_spacing(0.45), 0.05);
        assert_eq!(grid_spacing(f64::NAN), 1.0);
    }

    #[test]
    fn only_small_near_obstacles_are_framed() {
        let bodies = (Vector3::zeros(), Vector3::repeat(1.0));
        let ball = |x: f64, r: f64| {
            ObstacleTrack::new(
                "b",
                Shape::Sphere { radius: r },
                vec![(0.0, Isometry3::translation(x, 0.5, 0.5))],
            )
        };
        let plane = ObstacleTrack::new("g", Shape::HalfSpace, vec![(0.0, Isometry3::identity())]);
        let (lo, hi) = framing_bounds(&[ball(1.2, 0.1), plane], bodies);
        assert!(
            (hi.x - 1.3).abs() < 1e-12 && lo == Vector3::zeros(),
            "{lo} {hi}"
        );
        for far_or_big in [ball(5.0, 0.1), ball(0.5, 10.0)] {
            assert_eq!(framing_bounds(&[far_or_big], bodies), bodies);
        }
    }
}
