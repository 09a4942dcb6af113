//! `roslite bench ...` on the command line: the subcommands and their flags, and the dispatch
//! to the bench modules. The hidden subcommands are the helper processes the benches start by
//! running the `roslite` binary again.
//!
//! `bench rtt` is one command line for two benches: the long back-to-back run over RTPS/UDP
//! ([`crate::bench::rtt`]) and, with another transport or `--mode`/`--count`, the sweep
//! ([`crate::bench::rtt_sweep`]); [`RttArgs`] holds the flags of both and [`run`] picks one.

use std::path::PathBuf;
use std::time::Duration;

use crate::bench::rtt_sweep::{self, loan, Mode, Route};
use crate::bench::{
    action, footprint, intra, large, linetrace, migrate, rtt, scale, service, soak, throughput,
    timer, wasm,
};
use crate::toolkit::units::{parse_duration, parse_size};

#[derive(clap::Subcommand)]
pub enum BenchCommand {
    /// One-way intra-process latency (publish -> callback start) for 64 B, 4 MiB and 64 MiB
    /// messages; shows that delivery cost does not grow with message size.
    Intra(intra::IntraArgs),
    /// Timer wake-up latency (callback start minus scheduled time) of a roslite timer, next to
    /// clock_nanosleep, a futex wait and an rclpy timer measured in the same run (as the ROS 2
    /// timer wake-up latency study on a Raspberry Pi measured them).
    Timer(timer::TimerArgs),
    /// Round-trip time between two roslite nodes, 64 B to 4 MiB: over RTPS/UDP on 127.0.0.1 by
    /// default; with --transport, the sweep of the IPC framework comparison for ROS 2 local
    /// communication over intra, shm, uds, udp or loaned shm, next to this machine's floors
    /// (futex, raw UDS, memcpy). Cyclone DDS's ddsperf ping/pong (and, for the sweep, a Fast
    /// DDS ping-pong) run in the same run when installed.
    Rtt(RttArgs),
    /// VmRSS and VmHWM of a minimal roslite publisher (std_msgs/String at 10 Hz, one matched
    /// subscriber in another process): the CLI binary, the Rust talker and the C++ one (the
    /// rclcpp-shaped API) built for a small board (size-optimised, static; goal: at most 3 MB
    /// VmRSS), next to Cyclone DDS and rclpy/Fast DDS when installed.
    Footprint(footprint::FootprintArgs),
    /// Service response time and send jitter between two processes (the ROS 2 service
    /// round-trip over local 5G study: AddTwoInts on a fixed period), next to an rclpy client
    /// and server, optionally over an impaired link.
    Service(service::ServiceArgs),
    /// Action goals between two processes: the goal-accept round trip and the feedback
    /// latency of roslite's server and client, next to rclpy's.
    Action(action::ActionArgs),
    /// The mROS 2 line-follower evaluation's line follower in seven configurations
    /// (roslite<->roslite, the C++ follower on the mROS 2 API<->roslite robot, the same C++
    /// follower as a Wasm node on wasmtime (AOT) and on wasmi<->roslite robot, roslite
    /// follower<->rclpy robot, rclpy<->rclpy, one roslite process): per-topic latency and
    /// memory.
    ///
    /// The roslite processes run `roslite-linetrace-node`, built on first use as for the demo
    /// (see `roslite demo --help`, which also describes ROSLITE_LINETRACE_NODE). The C++
    /// follower (`crates/roslite-linetrace/cpp/follower.cpp`) is built on first use too: the C
    /// ABI's static library in the size profile, then `c++ -std=c++17 -Os -static` (needs
    /// cargo, a C++ compiler and the source tree). Its goals: /light_sensors mean at most 1.1x
    /// the Rust follower's, its process at most 2.5 + 0.5 MB RSS. The latency goal is judged
    /// over `--rounds` rounds of the Rust and the C++ follower, alternating which runs first
    /// (the table's runs are round 1): on the median of the per-round ratios of the means,
    /// printed with the pooled ratio and how many rounds met it.
    Linetrace(linetrace::LinetraceArgs),
    /// The very large data of the zero-copy / shared-memory large point cloud study: an 800 MB
    /// std_msgs/UInt64MultiArray intra-process, between two processes (every same-host
    /// transport) and between two network namespaces, with conversion and transfer times
    /// apart; and a 55 MB PointCloud2's one-way latency.
    Large(large::LargeArgs),
    /// Many streams for a long time (`--minutes`): publishers and subscribers of 64 B, 100 KB
    /// and 1 MB messages in separate processes over shared memory, Unix sockets and UDP with
    /// 5 % loss from the fault injector, participants joining and leaving; reports per stream
    /// messages sent, delivered and reported lost (which must add up), each process's RSS
    /// growth per hour after a warm-up, and any panic.
    Soak(soak::SoakArgs),
    /// Throughput between two processes, one publisher and one subscriber, reliable keep-all
    /// and keep-last, as fast as the subscriber keeps up, 64 B to 4 MiB: messages/s, MB/s,
    /// loss and CPU time per message of both, over shared memory, a Unix socket and RTPS/UDP on
    /// 127.0.0.1, next to Cyclone DDS's `ddsperf pub`/`ddsperf sub` in the same run; writes a
    /// chart of throughput against size.
    Throughput(throughput::ThroughputArgs),
    /// How cost grows with the graph: N processes (2 to 64) each with M publishers and M
    /// subscriptions (1 to 500) on M shared topics, started together in a network namespace of
    /// their own: time until every endpoint matched, discovery datagrams and bytes on the wire
    /// (SPDP, SEDP, ros_discovery_info, from a raw capture), idle CPU, traffic and RSS per
    /// process in steady state; the same graph of rclpy (Fast DDS) processes for one size; a
    /// chart of each figure against N x M. Needs root (network namespaces, raw capture).
    Scale(scale::ScaleArgs),
    /// What a WebAssembly node costs: the host -> guest dispatch -> host publish round trip on
    /// wasmtime and on wasmi next to the same echo done by a native node (one process,
    /// alternating rounds), and the start-up time (process start to first callback) of a
    /// .cwasm node next to a native node.
    Wasm(wasm::WasmArgs),
    /// How long a running node is away while it moves between hosts: the line follower as a
    /// WebAssembly node moved back and forth between two roslite hosts while it follows the
    /// line (downtime from its last callback on one host to its first on the other, snapshot
    /// size, capture and restore times, messages lost or duplicated).
    Migrate(migrate::MigrateArgs),
    /// Helper for `bench wasm`: the native node whose start-up is measured.
    #[command(hide = true)]
    WasmStartupPeer,
    /// Helper for `bench throughput`: the publisher or the subscriber.
    #[command(hide = true)]
    ThroughputPeer(throughput::PeerArgs),
    /// Helper for `bench scale`: one roslite process of a graph.
    #[command(hide = true)]
    ScalePeer(scale::PeerArgs),
    /// Helper for `bench soak`: a publisher, subscriber or short-lived participant.
    #[command(hide = true)]
    SoakPeer(soak::PeerArgs),
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
    RttLoanPong(loan::PongArgs),
    /// Helper for `bench footprint`: the measured publisher or its subscriber.
    #[command(hide = true)]
    FootprintPeer(footprint::PeerArgs),
    /// Helper for `bench service`: a roslite server or client.
    #[command(hide = true)]
    ServicePeer(service::PeerArgs),
    /// Helper for `bench action`: a roslite action server or client.
    #[command(hide = true)]
    ActionPeer(action::PeerArgs),
}

/// Runs a `roslite bench` subcommand.
///
/// # Errors
/// The bench's failure, for the CLI to print.
pub fn run(command: BenchCommand) -> anyhow::Result<()> {
    match command {
        BenchCommand::Intra(args) => intra::run(&args),
        BenchCommand::Large(args) => large::run(&args),
        BenchCommand::LargePeer(args) => large::peer(&args),
        BenchCommand::Timer(args) => timer::run(&args),
        BenchCommand::Rtt(args) => run_rtt(&args),
        BenchCommand::Footprint(args) => footprint::run(&args),
        BenchCommand::Linetrace(args) => linetrace::run(&args),
        BenchCommand::RttPong(args) => rtt::pong(&args),
        BenchCommand::RttSweepPong(args) => rtt_sweep::pong(&args),
        BenchCommand::RttLoanPong(args) => loan::pong(&args),
        BenchCommand::FootprintPeer(args) => footprint::peer(&args),
        BenchCommand::Service(args) => service::run(&args),
        BenchCommand::ServicePeer(args) => service::peer(&args),
        BenchCommand::Soak(args) => soak::run(&args),
        BenchCommand::SoakPeer(args) => soak::peer(&args),
        BenchCommand::Action(args) => action::run(&args),
        BenchCommand::ActionPeer(args) => action::peer(&args),
        BenchCommand::Scale(args) => scale::run(&args),
        BenchCommand::ScalePeer(args) => scale::peer(&args),
        BenchCommand::Throughput(args) => throughput::run(&args),
        BenchCommand::ThroughputPeer(args) => throughput::peer(&args),
        BenchCommand::Wasm(args) => wasm::run(&args),
        BenchCommand::Migrate(args) => migrate::run(&args),
        BenchCommand::WasmStartupPeer => wasm::startup_peer(),
    }
}

/// Helper processes that must start lean run from here, before clap parses anything (see
/// `footprint::peer_before_clap`); `None` for every other command line.
pub fn run_helper_before_clap(args: &[String]) -> Option<anyhow::Result<()>> {
    footprint::peer_before_clap(args)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RttTransport {
    /// RTPS over UDP on 127.0.0.1.
    Udp,
    /// Sweep (see `rtt_sweep`): both nodes in one process.
    Intra,
    /// Sweep: two processes over shared memory (`ROSLITE_TRANSPORTS=shm`).
    Shm,
    /// Sweep: two processes over a Unix domain socket (`ROSLITE_TRANSPORTS=uds`).
    Uds,
    /// Sweep: two processes over shared memory, ping and pong both loaning each message
    /// (`Publisher::loan`) and writing only a 9-byte header into it in place; the rest of the
    /// payload stays as the chunk holds it, so this is the zero-copy transfer's cost,
    /// independent of how the payload is filled.
    ShmLoan,
    /// Sweep: intra, shm, uds, udp and shm-loan in one run.
    All,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RttApi {
    /// Rust nodes (the UDP run or the sweep, as `--transport` and `--mode` say).
    Rust,
    /// The C++ ping/pong pair (`crates/roslite-bench/cpp/pingpong.cpp`, roslite's rclcpp API)
    /// next to the Rust pair: 64 B back to back over UDP and over shared memory, in `--rounds`
    /// rounds of `--samples` round trips; goal: the C++ pair's p50 at most 1.1x the Rust
    /// pair's. Builds the C++ pair first (the C ABI's static library in the size profile, then
    /// `c++ -std=c++17 -Os -static`; needs cargo, a C++ compiler and the source tree).
    Cpp,
}

/// The flags of `roslite bench rtt`: the UDP run's and the sweep's.
#[derive(clap::Args)]
pub struct RttArgs {
    /// Which API the measured nodes use: `rust`, or `cpp` for the C++ pair next to the Rust
    /// one (then `--transport`, `--sizes` and the sweep's flags do not apply).
    #[arg(long, value_enum, default_value = "rust")]
    api: RttApi,
    /// How the two roslite participants talk: `udp` alone (without `--mode`/`--count`) is the
    /// long back-to-back RTPS/UDP run; the others run the sweep of the IPC framework
    /// comparison for ROS 2 local communication through the user API. Same-host readers (shm,
    /// uds, and their transport-only echoes) yield and look again for up to
    /// `ROSLITE_RECEIVE_SPIN_US` (default 20) before sleeping while samples arrive that
    /// densely; the floors sleep at once (set it to 0 to compare like with like).
    #[arg(long, value_enum, default_value = "udp")]
    transport: RttTransport,
    /// Payload sizes, comma-separated: bytes, or with a k/KiB/M/MiB suffix (powers of 1024).
    /// Default: 64 B to 4 MiB in 5 steps for the UDP run, 64 B then 256 B to 4 MiB in 9 steps
    /// for the sweep.
    #[arg(
        long,
        value_delimiter = ',',
        value_parser = parse_size,
        default_value = "64,1024,65536,1048576,4194304",
        default_value_ifs = sweep_defaults(rtt_sweep::DEFAULT_SIZES)
    )]
    sizes: Vec<usize>,
    /// Round trips measured per size (sizes of 1 MiB and more use a tenth of them, at least
    /// 5), after a warm-up of a tenth of that (2 to 50).
    #[arg(long, default_value_t = 2000)]
    samples: usize,
    /// ROS domain of the roslite pair; Cyclone runs in the next one.
    #[arg(long, default_value_t = 211)]
    domain: u32,
    /// How long `ddsperf ping` runs per size (its first second is dropped).
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    cyclone_duration: Duration,
    /// UDP run: measure every size this many times, roslite and Cyclone alternately, and
    /// report the round with the median ratio (this shared VM drifts between fast and slow
    /// phases lasting seconds, longer than one measurement; every round's ratio is printed).
    /// Back-to-back sweep: the 64 B floor goals (shm against the futex floor, uds against the
    /// raw Unix-socket floor, each path also as transport only) are measured in as many
    /// rounds, each the floor then the path right after it, and judged on the round with the
    /// median ratio (0: judged on the sweep's own figures, measured minutes apart).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Skip Cyclone even if `ddsperf` is installed.
    #[arg(long)]
    no_cyclone: bool,
    /// Where to write the SVG chart of RTT against size (the sweep's default:
    /// target/bench-rtt/rtt.svg).
    #[arg(
        long,
        default_value = "bench-results/rtt.svg",
        default_value_ifs = sweep_defaults(rtt_sweep::DEFAULT_SVG)
    )]
    svg: PathBuf,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    sweep: SweepArgs,
}

/// The sweep's own flags (`bench rtt` flattens them in).
#[derive(clap::Args)]
pub struct SweepArgs {
    /// Pacing of the sweep (default: rate). Giving it with `--transport udp` runs the sweep
    /// instead of the long back-to-back UDP run.
    #[arg(long, value_enum)]
    mode: Option<Mode>,
    /// Round trips measured per size and series in the sweep (default 100, as the IPC
    /// framework comparison sent), after a warm-up of a tenth of them (at least 1).
    #[arg(long)]
    count: Option<usize>,
    /// Pings per second in `--mode rate`.
    #[arg(long, default_value_t = 10)]
    hz: u32,
    /// Skip the Fast DDS ping-pong even if libfastrtps-dev and a C++ compiler are installed.
    #[arg(long)]
    no_fastdds: bool,
}

impl SweepArgs {
    /// Whether `bench rtt` with these flags runs the sweep rather than the UDP run.
    fn requested(&self) -> bool {
        self.mode.is_some() || self.count.is_some()
    }
}

/// Defaults that apply when `bench rtt` runs the sweep: another transport than `udp`, or
/// `--mode`/`--count` given.
fn sweep_defaults(
    value: &'static str,
) -> Vec<(
    &'static str,
    clap::builder::ArgPredicate,
    Option<&'static str>,
)> {
    use clap::builder::ArgPredicate;
    let mut out: Vec<_> = ["intra", "shm", "uds", "all", "shm-loan"]
        .into_iter()
        .map(|t| ("transport", ArgPredicate::Equals(t.into()), Some(value)))
        .collect();
    for flag in ["mode", "count"] {
        out.push((flag, ArgPredicate::IsPresent, Some(value)));
    }
    out
}

/// `bench rtt`: the sweep for another transport than `udp` or with `--mode`/`--count`, else
/// the UDP run.
fn run_rtt(args: &RttArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.samples >= 1, "--samples must be at least 1");
    anyhow::ensure!(!args.sizes.is_empty(), "--sizes is empty");
    anyhow::ensure!(
        args.domain < roslite::context::MAX_DOMAIN_ID,
        "--domain must be below {} (Cyclone runs in the next domain)",
        roslite::context::MAX_DOMAIN_ID
    );
    if args.api == RttApi::Cpp {
        anyhow::ensure!(
            args.domain + 1 < roslite::context::MAX_DOMAIN_ID,
            "--domain must be below {} (the C++ pair runs in the next domain)",
            roslite::context::MAX_DOMAIN_ID - 1
        );
        return rtt_sweep::cpp::run(&rtt_sweep::cpp::Options {
            samples: args.samples,
            rounds: args.rounds,
            domain: args.domain,
            json: args.json,
        });
    }
    let routes = match args.transport {
        RttTransport::Udp if !args.sweep.requested() => None,
        RttTransport::Udp => Some(vec![Route::Udp]),
        RttTransport::Intra => Some(vec![Route::Intra]),
        RttTransport::Shm => Some(vec![Route::Shm]),
        RttTransport::Uds => Some(vec![Route::Uds]),
        RttTransport::ShmLoan => Some(vec![Route::ShmLoan]),
        RttTransport::All => Some(Route::ALL.to_vec()),
    };
    let Some(routes) = routes else {
        return rtt::run(&rtt::Options {
            sizes: &args.sizes,
            samples: args.samples,
            domain: args.domain,
            cyclone_duration: args.cyclone_duration,
            rounds: args.rounds,
            no_cyclone: args.no_cyclone,
            svg: &args.svg,
            json: args.json,
        });
    };
    rtt_sweep::run(&rtt_sweep::Options {
        routes,
        sizes: &args.sizes,
        domain: args.domain,
        cyclone_duration: args.cyclone_duration,
        no_cyclone: args.no_cyclone,
        svg: &args.svg,
        json: args.json,
        mode: args.sweep.mode.unwrap_or(Mode::Rate),
        count: args.sweep.count.unwrap_or(100),
        hz: args.sweep.hz,
        no_fastdds: args.sweep.no_fastdds,
        rounds: args.rounds,
    })
}
