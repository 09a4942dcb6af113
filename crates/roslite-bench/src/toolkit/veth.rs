//! Two throw-away network namespaces joined by a veth pair, for `bench large`'s "between two
//! network namespaces" row.
//!
//! ```text
//!   roslite-large-<pid>-a                      roslite-large-<pid>-b
//!   lo, rlg<pid>a 10.213.0.1/30  <-- veth -->  rlg<pid>b 10.213.0.2/30, lo
//! ```
//!
//! Each side also gets a 224.0.0.0/4 route on its veth end, so SUBNET discovery (SPDP
//! multicast) works across the pair; the peers are given each other as `ROS_STATIC_PEERS` too.
//! The link keeps the veth default MTU (1500), like an Ethernet LAN between two hosts. Nothing
//! is routed beyond the pair. Dropping the value deletes both namespaces, which destroys the
//! veth pair with them. `roslite_transport::netns` makes single namespaces with `lo` only
//! (`bench scale` uses it); this pair of joined ones runs `ip` itself.
//!
//! Needs root (or `CAP_SYS_ADMIN` + `CAP_NET_ADMIN`) and `ip` (Debian package iproute2).

use std::ffi::OsStr;
use std::process::Command;

use anyhow::{bail, Context as _};

/// The two ends: namespace name and address of each.
pub struct VethPair {
    pub a: End,
    pub b: End,
}

pub struct End {
    pub namespace: String,
    pub device: String,
    pub address: &'static str,
}

const ADDRESS_A: &str = "10.213.0.1";
const ADDRESS_B: &str = "10.213.0.2";
const PREFIX_LEN: &str = "30";

fn ip(args: &[&str]) -> anyhow::Result<()> {
    let output = Command::new("ip").args(args).output().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            anyhow::anyhow!("`ip` is not installed: install the Debian package iproute2")
        } else {
            anyhow::anyhow!("cannot run `ip {}`: {e}", args.join(" "))
        }
    })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        if stderr.contains("Operation not permitted") || stderr.contains("Permission denied") {
            bail!(
                "`ip {}` was refused ({}): the namespace row needs root or CAP_SYS_ADMIN + \
                 CAP_NET_ADMIN (or pass --skip-netns)",
                args.join(" "),
                stderr.trim()
            );
        }
        bail!(
            "`ip {}` failed ({}): {}",
            args.join(" "),
            output.status,
            stderr.trim()
        );
    }
    Ok(())
}

impl VethPair {
    /// Creates both namespaces and the pair; on any failure, what was made is removed again.
    ///
    /// # Errors
    /// A failed `ip` command (not installed, not permitted, or refused).
    pub fn create() -> anyhow::Result<Self> {
        let pid = std::process::id();
        let end = |side: char, address| End {
            namespace: format!("roslite-large-{pid}-{side}"),
            // Interface names are at most 15 bytes: "rlg" + up to 10 digits + side.
            device: format!("rlg{pid}{side}"),
            address,
        };
        let pair = VethPair {
            a: end('a', ADDRESS_A),
            b: end('b', ADDRESS_B),
        };
        // Left behind by a killed earlier run with our pid: no live process owns these names.
        for end in [&pair.a, &pair.b] {
            let _ = ip(&["netns", "del", &end.namespace]);
        }
        let _ = ip(&["link", "del", &pair.a.device]);
        // From here on, dropping `pair` deletes whatever exists.
        ip(&["netns", "add", &pair.a.namespace])?;
        ip(&["netns", "add", &pair.b.namespace])?;
        ip(&[
            "link",
            "add",
            &pair.a.device,
            "type",
            "veth",
            "peer",
            "name",
            &pair.b.device,
        ])
        .context("creating the veth pair")?;
        for end in [&pair.a, &pair.b] {
            ip(&["link", "set", &end.device, "netns", &end.namespace])?;
            let n = end.namespace.as_str();
            let cidr = format!("{}/{PREFIX_LEN}", end.address);
            ip(&["-n", n, "link", "set", "lo", "up"])?;
            ip(&["-n", n, "addr", "add", &cidr, "dev", &end.device])?;
            ip(&["-n", n, "link", "set", &end.device, "multicast", "on"])?;
            ip(&["-n", n, "link", "set", &end.device, "up"])?;
            ip(&[
                "-n",
                n,
                "route",
                "add",
                "224.0.0.0/4",
                "dev",
                &end.device,
                "src",
                end.address,
            ])?;
        }
        Ok(pair)
    }

    /// `program` run inside `end`'s namespace (`ip netns exec`); the process keeps the pid
    /// `ip` had (it execs), so killing the child kills the program.
    pub fn command(end: &End, program: impl AsRef<OsStr>) -> Command {
        let mut command = Command::new("ip");
        command.args(["netns", "exec", &end.namespace]).arg(program);
        command
    }
}

impl Drop for VethPair {
    fn drop(&mut self) {
        // Deleting a namespace destroys the veth end inside it, and with it the pair.
        for end in [&self.a, &self.b] {
            if !std::path::Path::new("/run/netns")
                .join(&end.namespace)
                .exists()
            {
                continue;
            }
            if let Err(e) = ip(&["netns", "del", &end.namespace]) {
                eprintln!("warning: could not delete network namespace: {e:#}");
            }
        }
    }
}
