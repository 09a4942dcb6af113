//! rclpy (real ROS 2 from PyPI, on Fast DDS) as a peer: which Python runs it, and the Fast DDS
//! profile that keeps its traffic on 127.0.0.1 and off shared memory.

use std::path::{Path, PathBuf};

/// The Fast DDS profile the rclpy baselines run with (`FASTDDS_DEFAULT_PROFILES_FILE`): UDPv4
/// on 127.0.0.1 only, no built-in transports (so no shared memory), data sharing off. The
/// line follower's launcher uses the same one.
pub use roslite_linetrace::launch::FASTDDS_LOOPBACK_PROFILE;

/// The Python to run rclpy with: the flag, `$ROSLITE_PYTHON`, or `./.venv/bin/python`.
pub fn find_python(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(path) = explicit {
        return Ok(path.to_owned());
    }
    if let Some(path) = std::env::var_os("ROSLITE_PYTHON") {
        return Ok(PathBuf::from(path));
    }
    let venv = PathBuf::from(".venv/bin/python");
    if venv.exists() {
        return Ok(venv);
    }
    anyhow::bail!("no Python with rclpy: pass --python, set ROSLITE_PYTHON, or run `cargo xtask test` once to create ./.venv")
}

/// The Fast DDS version in the interpreter's environment, from its `ros_fastdds` wheel.
pub fn fastdds_version(python: &Path) -> Option<String> {
    let root = python.parent()?.parent()?;
    for lib in std::fs::read_dir(root.join("lib")).ok()?.flatten() {
        let Ok(entries) = std::fs::read_dir(lib.path().join("site-packages")) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(version) = name
                .strip_prefix("ros_fastdds-")
                .and_then(|rest| rest.strip_suffix(".dist-info"))
            {
                return Some(version.to_owned());
            }
        }
    }
    None
}
