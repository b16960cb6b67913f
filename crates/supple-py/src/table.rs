//! Python values as TOML values: keyword arguments become the keys of a scene description
//! (dicts are tables, lists, tuples and numpy arrays are arrays).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString, PyTuple};
use toml::Value;

/// `obj` as a TOML value; `key` names it in errors (`body.damping`).
pub fn to_toml(obj: &Bound<'_, PyAny>, key: &str) -> PyResult<Value> {
    if obj.is_instance_of::<PyBool>() {
        return Ok(Value::Boolean(obj.extract()?));
    }
    if obj.is_instance_of::<PyString>() {
        return Ok(Value::String(obj.extract()?));
    }
    // Paths (`pathlib.Path`, anything with `__fspath__`) as strings.
    if obj.hasattr("__fspath__")? {
        let path: std::path::PathBuf = obj.extract()?;
        return Ok(Value::String(path.to_string_lossy().into_owned()));
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(Value::Float(obj.extract()?));
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        return dict_to_table(dict, key).map(Value::Table);
    }
    // numpy arrays and scalars: as Python lists and numbers.
    if obj.hasattr("tolist")? && obj.hasattr("dtype")? {
        return to_toml(&obj.call_method0("tolist")?, key);
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let items = obj
            .try_iter()?
            .enumerate()
            .map(|(i, item)| to_toml(&item?, &format!("{key}[{i}]")))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(Value::Array(items));
    }
    if let Ok(i) = obj.extract::<i64>() {
        return Ok(Value::Integer(i));
    }
    if let Ok(f) = obj.extract::<f64>() {
        return Ok(Value::Float(f));
    }
    Err(PyValueError::new_err(format!(
        "{key}: a {} is not a number, string, bool, list or dict",
        obj.get_type().name()?
    )))
}

/// A dict with string keys as a TOML table.
pub fn dict_to_table(dict: &Bound<'_, PyDict>, key: &str) -> PyResult<toml::Table> {
    let mut table = toml::Table::new();
    for (k, v) in dict.iter() {
        let k: String = k
            .extract()
            .map_err(|_| PyValueError::new_err(format!("{key}: keys must be strings")))?;
        let sub = if key.is_empty() {
            k.clone()
        } else {
            format!("{key}.{k}")
        };
        if !v.is_none() {
            table.insert(k, to_toml(&v, &sub)?);
        }
    }
    Ok(table)
}

/// Sets `table[key]` to `value` unless it is `None`.
pub fn set(
    table: &mut toml::Table,
    key: &str,
    value: Option<&Bound<'_, PyAny>>,
    path: &str,
) -> PyResult<()> {
    if let Some(v) = value.filter(|v| !v.is_none()) {
        table.insert(key.to_string(), to_toml(v, &format!("{path}{key}"))?);
    }
    Ok(())
}
