//! `supple.Body`: a mesh and the options of a scene file's `[[body]]`, kept as that section's
//! TOML table and validated with the world (by the scene code, errors naming `body[i]...`).

use crate::mesh::{indices, PyTetMesh};
use crate::table::{dict_to_table, set, to_toml};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use toml::{Table, Value};

/// A deformable body: a `TetMesh` and its material and options, the keys of a scene file's
/// `[[body]]`.
///
/// - `name`: used by `World.positions(name)` and friends (default `body0`, `body1`, ...).
/// - `model`: `"linear"`, `"corotational"`, `"warped"`, `"stvk"`, `"hybrid"` or
///   `"liesenfeld_stolfi"`; `youngs` (Pa) and `poisson`, `density` (kg/m³). Other
///   `[body.material]` keys (`mu` and `lambda`, `alpha` and `beta`, `tangent`, `rotation`,
///   `update_every`, `rotation_field`, `ghost_correction`) go in `material={...}`.
/// - `fixed`: vertex indices held in place, or a list of selectors as in scene files
///   (`{"box": {"min": [...], "max": [...]}}`, `{"plane": {"point": ..., "normal": ...}}`,
///   `{"vertices": [...]}`, `{"region": "name"}`).
/// - `damping`: Rayleigh `(alpha, beta)` or `{"alpha": ..., "beta": ...}`.
/// - `mass`: `"lumped"` (default) or `"consistent"`; `velocity`: initial `(3,)`;
///   `viscosity`, `transform`: dicts as `[body.viscosity]`, `[body.transform]`;
///   `surface`: an OBJ file embedded in the tets.
///
/// Values are checked when the `World` is built: a bad one raises `ValueError` naming the
/// key (`body[0].material.poisson = 0.5: must be below 0.5`).
#[pyclass(name = "Body", module = "supple", frozen, from_py_object)]
#[derive(Clone)]
pub struct PyBody {
    pub(crate) mesh: PyTetMesh,
    /// The `[[body]]` section without its mesh.
    pub(crate) section: Table,
}

#[pymethods]
impl PyBody {
    #[new]
    #[pyo3(signature = (mesh, *, name = None, model = "corotational", youngs = None, poisson = None,
        density = 1000.0, fixed = None, damping = None, mass = None, velocity = None,
        material = None, viscosity = None, transform = None, surface = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        mesh: PyTetMesh,
        name: Option<String>,
        model: &str,
        youngs: Option<f64>,
        poisson: Option<f64>,
        density: f64,
        fixed: Option<&Bound<'_, PyAny>>,
        damping: Option<&Bound<'_, PyAny>>,
        mass: Option<&Bound<'_, PyAny>>,
        velocity: Option<&Bound<'_, PyAny>>,
        material: Option<&Bound<'_, PyDict>>,
        viscosity: Option<&Bound<'_, PyAny>>,
        transform: Option<&Bound<'_, PyAny>>,
        surface: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut section = Table::new();
        if let Some(name) = name {
            section.insert("name".into(), Value::String(name));
        }
        let mut m = match material {
            Some(d) => dict_to_table(d, "body.material")?,
            None => Table::new(),
        };
        m.insert("model".into(), Value::String(model.into()));
        if let Some(e) = youngs {
            m.insert("youngs".into(), Value::Float(e));
        }
        if let Some(nu) = poisson {
            m.insert("poisson".into(), Value::Float(nu));
        }
        m.insert("density".into(), Value::Float(density));
        section.insert("material".into(), Value::Table(m));
        if let Some(f) = fixed.filter(|f| !f.is_none()) {
            if let Some(selectors) = fixed_selectors(f)? {
                section.insert("fixed".into(), selectors);
            }
        }
        if let Some(d) = damping.filter(|d| !d.is_none()) {
            let table = match d.extract::<(f64, f64)>() {
                Ok((alpha, beta)) => Value::Table(Table::from_iter([
                    ("alpha".to_string(), Value::Float(alpha)),
                    ("beta".to_string(), Value::Float(beta)),
                ])),
                Err(_) => to_toml(d, "body.damping")?,
            };
            section.insert("damping".into(), table);
        }
        set(&mut section, "mass", mass, "body.")?;
        set(&mut section, "velocity", velocity, "body.")?;
        set(&mut section, "viscosity", viscosity, "body.")?;
        set(&mut section, "transform", transform, "body.")?;
        if let Some(s) = surface.filter(|s| !s.is_none()) {
            let path: std::path::PathBuf = s.extract()?;
            section.insert(
                "surface".into(),
                Value::String(path.to_string_lossy().into_owned()),
            );
        }
        Ok(Self { mesh, section })
    }

    /// The body's mesh (rest shape).
    #[getter]
    fn mesh(&self) -> PyTetMesh {
        self.mesh.clone()
    }

    /// The name given, or `None` (the world then names it `body<i>`).
    #[getter]
    fn name(&self) -> Option<String> {
        self.section
            .get("name")
            .and_then(|v| v.as_str())
            .map(str::to_string)
    }

    fn __repr__(&self) -> String {
        format!(
            "Body({}, {})",
            self.name().unwrap_or_else(|| "unnamed".into()),
            self.mesh.describe()
        )
    }
}

/// `fixed=`: vertex indices as one `{ vertices = [...] }` selector (none when empty), or a
/// list of selector dicts as they are.
fn fixed_selectors(f: &Bound<'_, PyAny>) -> PyResult<Option<Value>> {
    let is_selector_list = (f.is_instance_of::<PyList>() || f.is_instance_of::<PyTuple>())
        && f.len()? > 0
        && f.get_item(0)?.is_instance_of::<PyDict>();
    if is_selector_list {
        return to_toml(f, "body.fixed").map(Some);
    }
    let v = indices(f, "fixed")?;
    if v.is_empty() {
        return Ok(None);
    }
    let list = v
        .into_iter()
        .map(|i| Value::Integer(i64::from(i)))
        .collect();
    let selector = Table::from_iter([("vertices".to_string(), Value::Array(list))]);
    Ok(Some(Value::Array(vec![Value::Table(selector)])))
}
