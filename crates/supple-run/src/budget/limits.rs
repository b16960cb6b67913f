//! The memory a run may use: the smallest of the system's available memory
//! (`MemAvailable`), the address-space limit (`RLIMIT_AS`, `ulimit -v`) less what the
//! process already maps, and the control group's limit (v2 `memory.max` less
//! `memory.current`, v1 `memory.limit_in_bytes` less `memory.usage_in_bytes`). A run
//! estimated below the machine's memory but above `ulimit -v` once passed the check and
//! aborted in an allocation 97 s later.

use std::path::Path;
use supple_io::scene::budget::available_memory;

/// A bound on the memory a run may use, and where it comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryLimit {
    pub bytes: f64,
    pub from: &'static str,
}

/// The smallest of the bounds this system reports (`None`: none known).
pub fn memory_limit() -> Option<MemoryLimit> {
    [
        available_memory().map(|b| (b as f64, "available")),
        address_space_left().map(|b| (b, "left under the address-space limit (ulimit -v)")),
        cgroup_left().map(|b| (b, "left under the control group's memory limit")),
    ]
    .into_iter()
    .flatten()
    .min_by(|a, b| a.0.total_cmp(&b.0))
    .map(|(bytes, from)| MemoryLimit { bytes, from })
}

/// `RLIMIT_AS` less the process's current virtual size (`VmSize`), in bytes.
fn address_space_left() -> Option<f64> {
    let limit = address_space_limit()?;
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    Some((limit - status_kb(&status, "VmSize:").unwrap_or(0.0) * 1024.0).max(0.0))
}

#[cfg(unix)]
fn address_space_limit() -> Option<f64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `r` is a valid, writable rlimit; getrlimit only writes it.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) };
    (rc == 0 && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur as f64)
}

#[cfg(not(unix))]
fn address_space_limit() -> Option<f64> {
    None
}

/// A `Name:   123 kB` field of /proc/self/status.
fn status_kb(status: &str, name: &str) -> Option<f64> {
    let line = status.lines().find(|l| l.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}

/// The control group's limit less its use, in bytes (v2, then v1).
fn cgroup_left() -> Option<f64> {
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let root = Path::new("/sys/fs/cgroup");
    let mut tries = Vec::new();
    for line in own.lines() {
        if let Some(p) = line.strip_prefix("0::") {
            tries.push((
                root.join(p.trim_start_matches('/')),
                "memory.max",
                "memory.current",
            ));
        } else if let Some((_, p)) = line.split_once(":memory:") {
            let dir = root.join("memory").join(p.trim_start_matches('/'));
            tries.push((dir, "memory.limit_in_bytes", "memory.usage_in_bytes"));
        }
    }
    // Inside a cgroup namespace the group is the root of the mount.
    tries.push((root.to_path_buf(), "memory.max", "memory.current"));
    tries.push((
        root.join("memory"),
        "memory.limit_in_bytes",
        "memory.usage_in_bytes",
    ));
    tries.into_iter().find_map(|(dir, max, current)| {
        let limit = cgroup_value(&std::fs::read_to_string(dir.join(max)).ok()?)?;
        let used = std::fs::read_to_string(dir.join(current))
            .ok()
            .and_then(|s| cgroup_value(&s))
            .unwrap_or(0.0);
        Some((limit - used).max(0.0))
    })
}

/// A cgroup memory value: `None` for no limit (`max`, or v1's page-rounded `i64::MAX`).
pub(crate) fn cgroup_value(text: &str) -> Option<f64> {
    let v: u64 = text.trim().parse().ok()?;
    (v < 1 << 62).then_some(v as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cgroup_values_and_status_fields_parse() {
        assert_eq!(cgroup_value("max\n"), None);
        assert_eq!(cgroup_value("9223372036854771712\n"), None);
        assert_eq!(cgroup_value("4294967296\n"), Some(4294967296.0));
        let status = "Name:\tsupple\nVmPeak:\t  200 kB\nVmSize:\t  123456 kB\n";
        assert_eq!(status_kb(status, "VmSize:"), Some(123456.0));
        assert_eq!(status_kb(status, "VmRSS:"), None);
    }

    /// The limit is never above the available memory, and is positive on a live system.
    #[test]
    fn the_limit_is_the_smallest_bound() {
        let l = memory_limit().expect("a bound on Linux");
        assert!(l.bytes > 0.0);
        if let Some(a) = available_memory() {
            assert!(l.bytes <= a as f64);
        }
    }
}
