//! The page's settings (E, ν, Rayleigh damping, dt, model, integrator) applied to the scene's
//! TOML text before it is parsed, so that every value goes through the same validation, with
//! the same messages, as a scene file on disk.

use toml::{Table, Value};

/// Settings that replace the scene's own; `None` keeps the scene's value. They apply to
/// every body.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// Young's modulus (Pa); replaces whichever elastic pair the scene gave.
    pub youngs: Option<f64>,
    /// Poisson's ratio; set together with `youngs` (the scene's value is kept otherwise).
    pub poisson: Option<f64>,
    /// Rayleigh damping `(alpha, beta)`: mass- and stiffness-proportional.
    pub damping: Option<(f64, f64)>,
    /// Time step (s).
    pub dt: Option<f64>,
    /// Elastic model name as in scene files (`linear`, `corotational`, `warped`, `stvk`,
    /// `hybrid`, `liesenfeld_stolfi`). The old model's options are dropped.
    pub model: Option<String>,
    /// Integrator name as in scene files (`backward_euler_linearized`, `backward_euler`,
    /// `bdf2`, `bdf3`, `static`, `symplectic_euler`, `newmark`, `rkf45`). The old
    /// integrator's options are dropped.
    pub integrator: Option<String>,
}

/// Keys of `[body.material]` that belong to one model only.
const MODEL_OPTIONS: [&str; 5] = [
    "tangent",
    "rotation",
    "update_every",
    "rotation_field",
    "ghost_correction",
];

impl Overrides {
    /// The scene text with these settings applied (comments are not kept).
    pub fn apply(&self, text: &str) -> Result<String, String> {
        let mut doc: Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
        if let Some(dt) = self.dt {
            doc.insert("dt".into(), Value::Float(dt));
        }
        if let Some(kind) = &self.integrator {
            let mut t = Table::new();
            t.insert("kind".into(), Value::String(kind.clone()));
            doc.insert("integrator".into(), Value::Table(t));
        }
        if let Some(Value::Array(bodies)) = doc.get_mut("body") {
            for body in bodies.iter_mut().filter_map(Value::as_table_mut) {
                self.apply_body(body);
            }
        }
        toml::to_string(&doc).map_err(|e| e.to_string())
    }

    fn apply_body(&self, body: &mut Table) {
        if let Some((alpha, beta)) = self.damping {
            let mut t = Table::new();
            t.insert("alpha".into(), Value::Float(alpha));
            t.insert("beta".into(), Value::Float(beta));
            body.insert("damping".into(), Value::Table(t));
        }
        let Some(Value::Table(m)) = body.get_mut("material") else {
            return;
        };
        if self.youngs.is_some() || self.poisson.is_some() {
            let youngs = self.youngs.or_else(|| elastic(m).map(|p| p.0));
            let poisson = self.poisson.or_else(|| elastic(m).map(|p| p.1));
            for k in ["youngs", "poisson", "mu", "lambda", "alpha", "beta"] {
                m.remove(k);
            }
            if let Some(e) = youngs {
                m.insert("youngs".into(), Value::Float(e));
            }
            if let Some(nu) = poisson {
                m.insert("poisson".into(), Value::Float(nu));
            }
        }
        if let Some(model) = &self.model {
            for k in MODEL_OPTIONS {
                m.remove(k);
            }
            m.insert("model".into(), Value::String(model.clone()));
        }
    }
}

/// Young's modulus and Poisson's ratio of a material table, from whichever pair it gives.
pub fn elastic(m: &Table) -> Option<(f64, f64)> {
    let num = |k: &str| {
        m.get(k)
            .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
    };
    if let (Some(e), Some(nu)) = (num("youngs"), num("poisson")) {
        return Some((e, nu));
    }
    let (mu, lambda) = match (num("mu"), num("lambda"), num("alpha"), num("beta")) {
        (Some(mu), Some(lambda), _, _) => (mu, lambda),
        // Bulk modulus K = λ + 2μ/3 and shear modulus μ.
        (_, _, Some(k), Some(mu)) => (mu, k - 2.0 * mu / 3.0),
        _ => return None,
    };
    Some((
        mu * (3.0 * lambda + 2.0 * mu) / (lambda + mu),
        lambda / (2.0 * (lambda + mu)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCENE: &str = r#"
dt = 0.01
duration = 1.0
[integrator]
kind = "newmark"
[[body]]
mesh = { kind = "box", cells = [2, 1, 1], cell_size = 0.1 }
material = { model = "corotational", rotation = "svd", mu = 1e4, lambda = 2e4, density = 1000.0 }
"#;

    #[test]
    fn overrides_replace_the_pair_the_model_options_and_the_integrator() {
        let o = Overrides {
            youngs: Some(5e5),
            damping: Some((0.5, 0.01)),
            dt: Some(0.02),
            model: Some("linear".into()),
            integrator: Some("backward_euler".into()),
            ..Overrides::default()
        };
        let text = o.apply(SCENE).unwrap();
        let doc: Table = text.parse().unwrap();
        let m = doc["body"][0]["material"].as_table().unwrap();
        assert_eq!(m["youngs"].as_float(), Some(5e5));
        // ν kept from the scene's Lamé pair: λ/(2(λ+μ)) = 1/3.
        assert!((m["poisson"].as_float().unwrap() - 1.0 / 3.0).abs() < 1e-12);
        assert!(!m.contains_key("mu") && !m.contains_key("rotation"));
        assert_eq!(m["model"].as_str(), Some("linear"));
        assert_eq!(doc["dt"].as_float(), Some(0.02));
        assert_eq!(doc["integrator"]["kind"].as_str(), Some("backward_euler"));
        assert_eq!(doc["body"][0]["damping"]["beta"].as_float(), Some(0.01));
        supple_io::parse_scene_from_memory(&text, "s.toml", &Default::default()).unwrap();
    }

    #[test]
    fn no_overrides_keep_the_scene() {
        let text = Overrides::default().apply(SCENE).unwrap();
        let doc: Table = text.parse().unwrap();
        assert_eq!(doc["body"][0]["material"]["rotation"].as_str(), Some("svd"));
    }
}
