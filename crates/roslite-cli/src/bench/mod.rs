//! `roslite bench ...`: figures, not tests. Each prints a table, or one JSON object with
//! `--json`.

use std::path::{Path, PathBuf};

mod footprint;
mod intra;
mod large;
pub(crate) mod linetrace;
mod rtt;
mod rtt_loan;
mod rtt_sweep;
mod service;
pub mod timer;

#[derive(clap::Subcommand)]
pub enum BenchCommand {
    /// One-way intra-process latency (publish -> callback start) for 64 B, 4 MiB and 64 MiB
    /// messages; shows that delivery cost does not grow with message size.
    Intra(intra::IntraArgs),
    /// Timer wake-up latency (callback start minus scheduled time) of a roslite timer, next to
    /// clock_nanosleep, a futex wait and an rclpy timer measured in the same run (seed 004).
    Timer(timer::TimerArgs),
    /// Round-trip time between two roslite nodes, 64 B to 4 MiB: over RTPS/UDP on 127.0.0.1 by
    /// default; with --transport, seed 002's sweep over intra, shm, uds, udp or loaned shm,
    /// next to this machine's floors (futex, raw UDS, memcpy). Cyclone DDS's ddsperf
    /// ping/pong (and, for the sweep, a Fast DDS ping-pong) run in the same run when installed.
    Rtt(rtt::RttArgs),
    /// VmRSS and VmHWM of a minimal roslite publisher (std_msgs/String at 10 Hz, one matched
    /// subscriber in another process), next to Cyclone DDS and rclpy/Fast DDS when installed.
    Footprint(footprint::FootprintArgs),
    /// Service response time and send jitter between two processes (seed 001: AddTwoInts on a
    /// fixed period), next to an rclpy client and server, optionally over an impaired link.
    Service(service::ServiceArgs),
    /// Seed 000's line follower in four configurations (roslite<->roslite, roslite follower<->
    /// rclpy robot, rclpy<->rclpy, one roslite process): per-topic latency and memory.
    ///
    /// The roslite processes run `roslite-linetrace-node`, built on first use as for the demo
    /// (see `roslite demo --help`, which also describes ROSLITE_LINETRACE_NODE).
    Linetrace(linetrace::LinetraceArgs),
    /// Seed 003's very large data: an 800 MB std_msgs/UInt64MultiArray intra-process, between
    /// two processes (every same-host transport) and between two network namespaces, with
    /// conversion and transfer times apart; and a 55 MB PointCloud2's one-way latency.
    Large(large::LargeArgs),
    /// Helper for `bench large`: the publishing or subscribing process.
    #[command(hide = true)]
    LargePeer(large::PeerArgs),
    /// Helper for `bench rtt`: the echoing process.
    #[command(hide = true)]
    RttPong(rtt::PongArgs),
    /// Helper for `bench rtt`'s sweep: the echoing process.
    #[command(hide = true)]
    RttSweepPong(rtt_sweep::PongArgs),
    /// Helper for `bench rtt --transport shm-loan`: the process echoing through loans.
    #[command(hide = true)]
    RttLoanPong(rtt_loan::PongArgs),
    /// Helper for `bench footprint`: the measured publisher or its subscriber.
    #[command(hide = true)]
    FootprintPeer(footprint::PeerArgs),
    /// Helper for `bench service`: a roslite server or client.
    #[command(hide = true)]
    ServicePeer(service::PeerArgs),
}

/// Helper processes that must start lean run from here, before clap parses anything (see
/// `footprint::peer_before_clap`); `None` for every other command line.
pub fn run_helper_before_clap(args: &[String]) -> Option<anyhow::Result<()>> {
    footprint::peer_before_clap(args)
}

pub fn run(command: BenchCommand) -> anyhow::Result<()> {
    match command {
        BenchCommand::Intra(args) => intra::run(&args),
        BenchCommand::Large(args) => large::run(&args),
        BenchCommand::LargePeer(args) => large::peer(&args),
        BenchCommand::Timer(args) => timer::run(&args),
        BenchCommand::Rtt(args) => rtt::run(&args),
        BenchCommand::Footprint(args) => footprint::run(&args),
        BenchCommand::Linetrace(args) => linetrace::run(&args),
        BenchCommand::RttPong(args) => rtt::pong(&args),
        BenchCommand::RttSweepPong(args) => rtt_sweep::pong(&args),
        BenchCommand::RttLoanPong(args) => rtt_loan::pong(&args),
        BenchCommand::FootprintPeer(args) => footprint::peer(&args),
        BenchCommand::Service(args) => service::run(&args),
        BenchCommand::ServicePeer(args) => service::peer(&args),
    }
}

/// The Fast DDS profile that keeps rclpy's traffic on 127.0.0.1 and off shared memory (see
/// shared/reference/ros2-wire.md §0.3); the rclpy baselines run with it.
pub(crate) const FASTDDS_LOOPBACK_PROFILE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns="http://www.eprosima.com"><profiles>
  <transport_descriptors><transport_descriptor>
    <transport_id>udp_lo</transport_id><type>UDPv4</type>
    <interfaceWhiteList><address>127.0.0.1</address></interfaceWhiteList>
  </transport_descriptor></transport_descriptors>
  <participant profile_name="lo_only" is_default_profile="true"><rtps>
    <useBuiltinTransports>false</useBuiltinTransports>
    <userTransports><transport_id>udp_lo</transport_id></userTransports>
    <builtin><initialPeersList><locator><udpv4><address>127.0.0.1</address></udpv4></locator></initialPeersList></builtin>
  </rtps></participant>
  <data_writer profile_name="dw" is_default_profile="true"><qos><data_sharing><kind>OFF</kind></data_sharing></qos></data_writer>
  <data_reader profile_name="dr" is_default_profile="true"><qos><data_sharing><kind>OFF</kind></data_sharing></qos></data_reader>
</profiles></dds>
"#;

/// The Python to run rclpy with: the flag, `$ROSLITE_PYTHON`, or `./.venv/bin/python`.
pub(crate) fn find_python(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
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
