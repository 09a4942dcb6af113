//! Shared by the tests that run real peers (rclpy, Cyclone) inside a network namespace.

#![allow(dead_code)] // each test binary uses a different subset

use std::path::PathBuf;
use std::process::{Command, Stdio};

use roslite::{Context, ContextOptions, NetworkMode};
use roslite_transport::netns::NetNs;
use roslite_transport::{DiscoveryConfig, DiscoveryRange, TransportConfig};

pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The venv's Python, where `cargo xtask test` installs rclpy and cyclonedds.
pub fn python() -> PathBuf {
    let python = workspace().join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `cargo xtask test`, which installs the ROS 2 and Cyclone DDS peers",
        python.display()
    );
    python
}

/// `interop/python/<script> <args>` under rclpy with Fast DDS, inside `ns`, with default
/// (SUBNET) discovery: inside the namespace that is `lo` only. Stdout and stderr are piped.
pub fn rclpy_script(ns: &NetNs, domain: u32, script: &str, args: &[&str]) -> Command {
    let mut command = ns.command(python());
    command
        .arg(workspace().join("interop/python").join(script))
        .args(args)
        .env("ROS_DOMAIN_ID", domain.to_string())
        .env("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
        .env_remove("FASTDDS_DEFAULT_PROFILES_FILE")
        .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// A context whose sockets live in `ns` (created on a thread that entered it), with default
/// (SUBNET, multicast) discovery.
pub fn networked_in(ns: &NetNs, domain: u32) -> Context {
    ns.run(|| {
        let discovery = DiscoveryConfig {
            domain_id: domain,
            range: DiscoveryRange::Subnet,
            ..Default::default()
        };
        Context::new(ContextOptions {
            domain_id: domain,
            network: NetworkMode::Rtps(TransportConfig::new(discovery)),
            ..Default::default()
        })
    })
    .expect("enter the test namespace")
    .expect("start RTPS inside the namespace")
}
