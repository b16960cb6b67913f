//! What the page draws besides the bodies, and the exact positions for tests: the scene's
//! rigid obstacles with their poses now, and every body's positions as `f64`.

use crate::ffi::{set_message, with_sim};
use crate::sim::Sim;
use serde_json::{json, Value};
use std::cell::RefCell;
use supple::contact::Shape;

thread_local! {
    /// The last positions handed out by [`supple_positions_f64`].
    static POSITIONS_F64: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
}

/// The obstacles of `sim`'s world at its current time, as JSON: a list of
/// `{"name", "shape", "translation": [x, y, z], "rotation_wxyz": [w, x, y, z]}` where
/// `shape` is `{"kind": "plane"}` (solid below its local z = 0), `{"kind": "sphere",
/// "radius"}`, `{"kind": "box", "half_extents": [x, y, z]}` or `{"kind": "capsule",
/// "radius", "half_length"}` (axis along local z); the pose maps local to world (the same
/// record as a run's `obstacles.json`, one pose).
pub fn obstacles_json(sim: &Sim) -> String {
    let world = sim.world();
    let Some(contact) = world.contact() else {
        return "[]".into();
    };
    let list: Vec<Value> = (contact.settings().obstacles.iter())
        .map(|o| {
            let shape = match o.shape {
                Shape::HalfSpace => json!({ "kind": "plane" }),
                Shape::Sphere { radius } => json!({ "kind": "sphere", "radius": radius }),
                Shape::Box { half_extents: h } => {
                    json!({ "kind": "box", "half_extents": [h.x, h.y, h.z] })
                }
                Shape::Capsule {
                    radius,
                    half_length,
                } => json!({ "kind": "capsule", "radius": radius, "half_length": half_length }),
            };
            let pose = o.path.pose(world.time);
            let t = pose.translation.vector;
            let q = pose.rotation.quaternion();
            json!({
                "name": o.name,
                "shape": shape,
                "translation": [t.x, t.y, t.z],
                "rotation_wxyz": [q.w, q.i, q.j, q.k],
            })
        })
        .collect();
    Value::Array(list).to_string()
}

/// Writes the obstacles ([`obstacles_json`]) to the message buffer; its length.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_obstacles() -> i32 {
    with_sim(|s| set_message(&obstacles_json(s)))
}

/// Copies every body's positions, in full precision (`f64`, `x y z` per vertex, bodies one
/// after another, as [`supple_positions_ptr`](crate::ffi::supple_positions_ptr) in `f32`)
/// into a buffer and returns its start (null without a scene); it holds
/// [`supple_positions_len`](crate::ffi::supple_positions_len) values and stays valid until
/// the next call. For comparing the page's run with a native one bit for bit.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_positions_f64() -> *const f64 {
    let mut out = Vec::new();
    let code = with_sim(|s| {
        out = s
            .world()
            .bodies
            .iter()
            .flat_map(|b| b.x.iter().flat_map(|p| [p.x, p.y, p.z]))
            .collect();
        0
    });
    if code < 0 {
        return std::ptr::null();
    }
    POSITIONS_F64.with(|p| {
        let mut p = p.borrow_mut();
        *p = out;
        p.as_ptr()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn obstacles_are_listed_with_their_pose() {
        let text = "dt = 0.01\nduration = 1.0\n[[body]]\nmesh = { kind = \"box\", cells = [1, 1, 1], cell_size = 0.1 }\n\
                    material = { model = \"corotational\", youngs = 1e5, poisson = 0.3, density = 1000.0 }\n\
                    [[obstacle]]\nname = \"ground\"\nshape = \"plane\"\nnormal = [0.0, 1.0, 0.0]\n\
                    [[obstacle]]\nname = \"ball\"\nshape = \"sphere\"\nradius = 0.2\nposition = [1.0, 2.0, 3.0]\n\
                    [[obstacle]]\nname = \"crate\"\nshape = \"box\"\nhalf_extents = [0.1, 0.2, 0.3]\n";
        let sim = Sim::load(text, "o.toml", BTreeMap::new()).unwrap();
        let v: Value = serde_json::from_str(&obstacles_json(&sim)).unwrap();
        assert_eq!(v.as_array().unwrap().len(), 3);
        assert_eq!(v[0]["shape"]["kind"], "plane");
        // The plane's local +z (its outward normal) is the world's +y.
        let q: Vec<f64> = serde_json::from_value(v[0]["rotation_wxyz"].clone()).unwrap();
        let q = nalgebra::UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(
            q[0], q[1], q[2], q[3],
        ));
        let n = q * nalgebra::Vector3::z();
        assert!((n - nalgebra::Vector3::y()).norm() < 1e-12, "{n}");
        assert_eq!(v[1]["shape"]["radius"], 0.2);
        assert_eq!(v[1]["translation"], json!([1.0, 2.0, 3.0]));
        assert_eq!(v[2]["shape"]["half_extents"], json!([0.1, 0.2, 0.3]));
        let bar = "dt = 0.01\nduration = 1.0\n[[body]]\nmesh = { kind = \"box\", cells = [1, 1, 1], cell_size = 0.1 }\n\
                   material = { model = \"corotational\", youngs = 1e5, poisson = 0.3, density = 1000.0 }\n";
        let sim = Sim::load(bar, "b.toml", BTreeMap::new()).unwrap();
        assert_eq!(obstacles_json(&sim), "[]");
    }
}
