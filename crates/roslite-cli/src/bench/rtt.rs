//! Round-trip time between two roslite participants over RTPS/UDP on 127.0.0.1, next to Cyclone
//! DDS's `ddsperf` measured in the same run, size by size.
//!
//! roslite: this process is the ping side; a second process (this binary again, as the hidden
//! `roslite bench rtt-pong`) echoes every message back. Both are ordinary networked contexts
//! with LOCALHOST discovery (unicast to 127.0.0.1 only, no multicast, no static peers) in a
//! domain of their own, with reliable keep-last-1 endpoints, exchanging `std_msgs/UInt8MultiArray`
//! whose `data` has the requested size; its first 8 bytes carry a sequence number and the rest a
//! fill pattern the ping side checks. As in `ddsperf ping` (listener mode, its default), the
//! next ping goes out from the echo's subscription callback itself; the ping side spins its
//! executor on the measuring thread, and a round trip is `publish` to the start of the echo's
//! subscription callback: serialization, fragmentation, both processes' receive threads and
//! executors, and deserialization on both sides. Both sides use ordinary single-threaded
//! executors; a callback runs on the receive thread when its executor sleeps (see
//! `CallbackGroup::try_run_inline`), as a DDS listener does. A ping whose echo has not come
//! back within [`ECHO_TIMEOUT`] is counted as lost and the next one sent.
//!
//! Cyclone: `ddsperf pong` and `ddsperf ping size N` (reliable, keep-last 1) for a fixed time per
//! size, confined to 127.0.0.1 (ros2-wire.md §0.3) and given the socket buffer sizes roslite
//! asks for. Two things about `ddsperf`'s figures:
//! - it prints *half* the round trip: `(tnow - t_ping) / 2` (ddsperf.c `process_pong`); the
//!   bench doubles them so both columns are full round trips (a printed 64 B figure of about
//!   13 us is below this machine's raw UDP ping-pong of 17 us, so it cannot be a round trip;
//!   the Cyclone "RTT" column of shared/reference/baselines.md quotes these halves);
//! - it prints percentiles per one-second interval only, so Cyclone's p50 and p99 here are the
//!   count-weighted medians of the per-interval p50 and p99, and its max is the largest
//!   interval max; the first interval, which includes discovery, is dropped.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use anyhow::{bail, Context as _};
use roslite::msgs::std_msgs::msg::UInt8MultiArray;
use roslite::{Context, ContextOptions, Executor, Instant, Publisher, QosProfile, Subscription};
use roslite_shm::bench::TouchedPages;

use super::timer::parse_duration;
use crate::stats::Summary;
use crate::svg;

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

#[derive(clap::Args)]
pub struct RttArgs {
    /// How the two roslite participants talk: `udp` alone (without `--mode`/`--count`) is the
    /// long back-to-back RTPS/UDP run; the others run seed 002's sweep through the user API.
    /// Same-host readers (shm, uds, and their transport-only echoes) yield and look again for
    /// up to `ROSLITE_RECEIVE_SPIN_US` (default 20) before sleeping while samples arrive that
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
        default_value_ifs = super::rtt_sweep::sweep_defaults(super::rtt_sweep::DEFAULT_SIZES)
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
        default_value_ifs = super::rtt_sweep::sweep_defaults(super::rtt_sweep::DEFAULT_SVG)
    )]
    svg: PathBuf,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    sweep: super::rtt_sweep::SweepArgs,
}

/// The hidden `roslite bench rtt-pong`: the echoing side, started by `bench rtt`.
#[derive(clap::Args)]
pub struct PongArgs {
    #[arg(long)]
    domain: u32,
}

/// Parses `64`, `1k`, `1KiB`, `4M`, `4MiB` (k and M are powers of 1024 here, as in `ddsperf`).
pub fn parse_size(text: &str) -> Result<usize, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: usize = number
        .parse()
        .map_err(|_| format!("'{text}' is not a size; write it like 64, 1KiB or 4MiB"))?;
    let scale = match unit.trim() {
        "" | "B" => 1,
        "k" | "K" | "KiB" | "kB" => 1 << 10,
        "M" | "MiB" | "MB" => 1 << 20,
        other => {
            return Err(format!(
                "unknown unit '{other}' in '{text}'; use B, KiB or MiB"
            ))
        }
    };
    let size = value
        .checked_mul(scale)
        .ok_or_else(|| format!("'{text}' is too large"))?;
    if size < SEQ_LEN {
        return Err(format!(
            "'{text}' is too small: a ping carries an {SEQ_LEN}-byte sequence number"
        ));
    }
    Ok(size)
}

/// `64 B`, `1 KiB`, `4 MiB`, `1.5 KiB`.
pub fn size_label(size: usize) -> String {
    const UNITS: [(usize, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (scale, unit) in UNITS {
        if size >= scale {
            // Scales are powers of two (and `is_multiple_of` is newer than the MSRV).
            return if size & (scale - 1) == 0 {
                format!("{} {unit}", size / scale)
            } else {
                format!("{:.1} {unit}", size as f64 / scale as f64)
            };
        }
    }
    format!("{size} B")
}

// ---------------------------------------------------------------------------------------------
// Shared with `bench footprint`: loopback-only contexts, helper processes, /proc figures.

/// A context whose RTPS participant only looks for peers on this host: the
/// `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST` semantics (unicast SPDP probes to 127.0.0.1, no
/// multicast socket, sockets bound to 127.0.0.1) and no static peers, whatever the environment
/// says.
pub fn localhost_context(domain_id: u32) -> anyhow::Result<Context> {
    localhost_context_with(domain_id, roslite::LocalTransports::default())
}

/// [`localhost_context`] with only the given same-host transports (`UDP_ONLY` keeps two
/// roslite processes on RTPS/UDP, which they would otherwise leave for shared memory).
pub fn localhost_context_with(
    domain_id: u32,
    local_transports: roslite::LocalTransports,
) -> anyhow::Result<Context> {
    Ok(Context::new(ContextOptions {
        local_transports,
        ..ContextOptions::localhost(domain_id)
    })?)
}

/// Makes a helper process die with the process that started it, so an interrupted bench
/// leaves no participant behind.
pub fn die_with_parent() {
    // Ignoring an error: the parent still kills its helpers itself when it ends normally.
    let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
}

/// A process this bench started; killed (by its pid) and reaped when dropped.
pub struct Helper {
    pub child: Child,
    pub name: String,
}

impl Helper {
    /// Starts `command` with the standard streams it was given (stderr shows the helper's
    /// errors unless the caller silenced it).
    pub fn spawn(name: &str, command: &mut Command) -> anyhow::Result<Self> {
        let child = command
            .spawn()
            .with_context(|| format!("starting {name}"))?;
        Ok(Self {
            child,
            name: name.to_owned(),
        })
    }

    /// Starts `command` with its stdout collected line by line (see [`collect_lines`]).
    pub fn spawn_reading(
        name: &str,
        command: &mut Command,
    ) -> anyhow::Result<(Self, Arc<Mutex<Vec<String>>>)> {
        let mut helper = Self::spawn(name, command.stdout(Stdio::piped()))?;
        let stdout = helper
            .child
            .stdout
            .take()
            .context("internal bug: stdout not piped")?;
        Ok((helper, collect_lines(stdout)))
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Fails if the process has already exited.
    pub fn check_running(&mut self) -> anyhow::Result<()> {
        if let Some(status) = self.child.try_wait()? {
            bail!("{} exited early with {status}", self.name);
        }
        Ok(())
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// This binary with `args`, for a helper role.
pub fn self_command(args: &[&str]) -> anyhow::Result<Command> {
    let exe = std::env::current_exe().context("locating the roslite binary")?;
    let mut command = Command::new(exe);
    command.args(args);
    Ok(command)
}

/// A process's memory as `/proc/<pid>/status` reports it, in KiB (the kernel's "kB").
#[derive(Clone, Copy, Debug, Default)]
pub struct ProcMemory {
    pub vm_rss_kib: u64,
    pub vm_hwm_kib: u64,
    pub rss_anon_kib: u64,
    pub rss_file_kib: u64,
    pub rss_shmem_kib: u64,
    pub threads: u64,
}

impl ProcMemory {
    /// Reads `/proc/<pid>/status`, or `/proc/self/status` for `None`.
    pub fn of(pid: Option<u32>) -> anyhow::Result<Self> {
        let path = match pid {
            Some(pid) => format!("/proc/{pid}/status"),
            None => "/proc/self/status".to_owned(),
        };
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
        let mut memory = Self::default();
        for line in text.lines() {
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let number = value
                .split_whitespace()
                .next()
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0);
            match key {
                "VmRSS" => memory.vm_rss_kib = number,
                "VmHWM" => memory.vm_hwm_kib = number,
                "RssAnon" => memory.rss_anon_kib = number,
                "RssFile" => memory.rss_file_kib = number,
                "RssShmem" => memory.rss_shmem_kib = number,
                "Threads" => memory.threads = number,
                _ => {}
            }
        }
        anyhow::ensure!(memory.vm_rss_kib > 0, "no VmRSS in {path}");
        Ok(memory)
    }
}

/// KiB to MB (10^6 bytes), the unit of the goals.
pub fn mb(kib: u64) -> f64 {
    kib as f64 * 1024.0 / 1e6
}

/// `ddsperf` on the PATH, if installed.
pub fn find_ddsperf() -> Option<PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join("ddsperf"))
        .find(|path| path.is_file())
}

/// The installed Cyclone DDS version (Debian `cyclonedds-tools`), if dpkg knows it.
pub fn cyclone_version() -> Option<String> {
    let output = Command::new("dpkg-query")
        .args(["-W", "-f", "${Version}", "cyclonedds-tools"])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let version = String::from_utf8(output.stdout).ok()?;
    let version = version.trim();
    // "0.10.2-2" -> "0.10.2".
    let upstream = version.split('-').next().unwrap_or(version);
    (output.status.success() && !upstream.is_empty()).then(|| upstream.to_owned())
}

/// `CYCLONEDDS_URI` confining Cyclone to 127.0.0.1 (ros2-wire.md §0.3), with the socket buffer
/// sizes a roslite participant requests (4 MiB receive, 1 MiB send).
pub const CYCLONE_LOOPBACK_URI: &str = "<CycloneDDS><Domain id=\"any\"><General><Interfaces>\
<NetworkInterface address=\"127.0.0.1\"/></Interfaces><AllowMulticast>false</AllowMulticast>\
</General><Discovery><ParticipantIndex>auto</ParticipantIndex><Peers><Peer address=\"127.0.0.1\"/>\
</Peers></Discovery><Internal><SocketReceiveBufferSize min=\"4MiB\"/>\
<SocketSendBufferSize min=\"1MiB\"/></Internal></Domain></CycloneDDS>";

/// `ddsperf` with the loopback configuration, in `domain`.
pub fn ddsperf_command(ddsperf: &Path, domain: u32) -> Command {
    let mut command = Command::new(ddsperf);
    command
        .env("CYCLONEDDS_URI", CYCLONE_LOOPBACK_URI)
        .arg("-i")
        .arg(domain.to_string());
    command
}

/// Collects a child's stdout lines on a thread, so its pipe never fills.
pub fn collect_lines(stdout: impl Read + Send + 'static) -> Arc<Mutex<Vec<String>>> {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = lines.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            sink.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(line);
        }
    });
    lines
}

// ---------------------------------------------------------------------------------------------
// roslite ping/pong.

/// Bytes of sequence number at the start of every ping.
const SEQ_LEN: usize = 8;
/// The rest of a ping's bytes.
const FILL: u8 = 0xa5;
/// Compared against block by block (a `memcmp`, not a byte loop).
const FILL_BLOCK: [u8; 4096] = [FILL; 4096];
/// A ping whose echo has not arrived by then is lost.
const ECHO_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the ping side waits for the pong side to be discovered and matched.
const MATCH_TIMEOUT: Duration = Duration::from_secs(30);
const PING_TOPIC: &str = "roslite_bench/rtt/ping";
const PONG_TOPIC: &str = "roslite_bench/rtt/pong";

fn rtt_qos() -> QosProfile {
    // Reliable, volatile, keep-last 1: as ddsperf's ping/pong endpoints.
    QosProfile::keep_last(1)
}

/// The pong side: echoes every ping until killed (or its parent ends).
pub fn pong(args: &PongArgs) -> anyhow::Result<()> {
    die_with_parent();
    let ctx = localhost_context_with(args.domain, roslite::LocalTransports::UDP_ONLY)?;
    let node = ctx.create_node("roslite_bench_rtt_pong")?;
    let publisher = node.create_publisher::<UInt8MultiArray>(PONG_TOPIC, rtt_qos())?;
    let _subscription =
        node.create_subscription(PING_TOPIC, rtt_qos(), move |ping: Arc<UInt8MultiArray>| {
            // Ignoring an error: the ping side counts a missing echo as lost.
            let _ = publisher.publish_shared(ping);
        })?;
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    executor.spin();
    Ok(())
}

/// What the ping side's subscription saw last.
#[derive(Clone, Copy)]
pub(super) struct Echo {
    pub(super) at: Instant,
    pub(super) seq: u64,
    pub(super) len: usize,
    pub(super) intact: bool,
}

impl Echo {
    /// Reads an echo that arrived `at` (its callback's start).
    pub(super) fn of(at: Instant, data: &[u8]) -> Self {
        let (seq, intact) = read_echo(data);
        Self {
            at,
            seq,
            len: data.len(),
            intact,
        }
    }
}

/// The count of one measured run of pings: the one in flight and since when, how many are
/// left to send, and what came back. Shared by the chains (UDP run and the sweep) and the
/// sweep's loan series, which send their pings differently.
pub(super) struct Pings {
    /// The sequence number of the ping in flight (or last sent) and when it was sent.
    pub(super) seq: u64,
    pub(super) start: Instant,
    /// Pings still to send.
    pub(super) left: usize,
    /// Echoes still to discard as warm-up.
    warmup: usize,
    pub(super) latencies: Vec<Duration>,
    /// Awaited echoes received, and pings given up on.
    pub(super) echoed: usize,
    pub(super) lost: usize,
    /// The first corrupted echo, if any.
    pub(super) error: Option<String>,
    pub(super) stale: usize,
    /// The ping in flight has not been echoed yet.
    in_flight: bool,
}

impl Pings {
    /// `total` pings numbered from `first_seq`, the first `warmup` echoes not timed.
    pub(super) fn new(first_seq: u64, total: usize, warmup: usize) -> Self {
        Self {
            // `next` numbers the first ping `first_seq`.
            seq: first_seq.wrapping_sub(1),
            start: Instant::monotonic_now(),
            left: total,
            warmup,
            latencies: Vec::with_capacity(total.saturating_sub(warmup)),
            echoed: 0,
            lost: 0,
            error: None,
            stale: 0,
            in_flight: false,
        }
    }

    /// Numbers the next ping, in flight from now on; the caller stamps `start` and sends it.
    pub(super) fn next(&mut self) -> u64 {
        self.seq = self.seq.wrapping_add(1);
        self.in_flight = true;
        self.seq
    }

    /// A timer tick: a ping still not echoed is given up on; the number of the next ping to
    /// send, if any is left.
    pub(super) fn tick(&mut self) -> Option<u64> {
        if std::mem::take(&mut self.in_flight) {
            self.lost += 1;
        }
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some(self.next())
    }

    /// The ping just numbered could not be sent: it is lost.
    pub(super) fn unsent(&mut self) {
        self.in_flight = false;
        self.lost += 1;
    }

    /// An echo of ping `seq` that arrived `at`; returns whether it was the awaited one. An
    /// echo of another ping, or a second one, is stale; an awaited one that is not `usable`
    /// (for the loan series, not through shared memory) is lost.
    pub(super) fn echo(&mut self, seq: u64, at: Instant, usable: bool) -> bool {
        if seq != self.seq || !std::mem::take(&mut self.in_flight) {
            self.stale += 1;
            return false;
        }
        if !usable {
            self.lost += 1;
        } else if self.warmup > 0 {
            self.echoed += 1;
            self.warmup -= 1;
        } else {
            self.echoed += 1;
            self.latencies.push(at - self.start);
        }
        true
    }

    /// Every ping echoed or given up on.
    pub(super) fn is_done(&self) -> bool {
        self.left == 0 && !self.in_flight
    }
}

/// A wall timer on `node` that runs `tick` on the state in `slot` every `period` and wakes
/// the slot's waiter when `tick` says the run is over: pings sent from the node's own executor,
/// as a ROS node publishing at a rate sends them.
pub(super) fn pacing_timer<S: Send + 'static>(
    node: &roslite::Node,
    period: Duration,
    slot: &Arc<(Mutex<S>, Condvar)>,
    mut tick: impl FnMut(&mut S) -> bool + Send + 'static,
) -> anyhow::Result<roslite::Timer> {
    let slot = slot.clone();
    Ok(node.create_wall_timer(period, move || {
        let (lock, ready) = &*slot;
        if tick(&mut lock.lock().unwrap_or_else(PoisonError::into_inner)) {
            ready.notify_all();
        }
    })?)
}

/// A chain of measured pings of one message, driven by the echo callback (see
/// [`measure_roslite`]; also the sweep's back-to-back mode), or by a timer ([`Self::paced`]).
pub(super) struct Chain {
    message: Arc<UInt8MultiArray>,
    pub(super) pings: Pings,
    /// Paced by a timer ([`Self::on_tick`]) instead of sending each next ping from the echo.
    paced: bool,
    /// Paced: the warm-up pings, and how many pings the timer has sent.
    warmup: usize,
    sent: usize,
    /// Paced, when asked for ([`Self::counting_echo_pages`]): the echo process's pages touched
    /// per warm-up ping.
    pub(super) echo_pages: Option<TouchedPages>,
}

impl Chain {
    /// `total` pings of `size` bytes numbered from `first_seq`, the first `warmup` echoes not
    /// counted; nothing is sent before [`Self::send_next`], and `pings.left` counts the pings
    /// after that first one.
    pub(super) fn new(size: usize, first_seq: u64, total: usize, warmup: usize) -> Self {
        let mut pings = Pings::new(first_seq, total, warmup);
        pings.left = total.saturating_sub(1);
        Self {
            message: Arc::new(ping_message(size)),
            pings,
            paced: false,
            warmup,
            sent: 0,
            echo_pages: None,
        }
    }

    /// A chain whose pings a timer sends, one per [`Self::on_tick`]; the first tick sends the
    /// first ping.
    pub(super) fn paced(size: usize, first_seq: u64, total: usize, warmup: usize) -> Self {
        Self {
            message: Arc::new(ping_message(size)),
            pings: Pings::new(first_seq, total, warmup),
            paced: true,
            warmup,
            sent: 0,
            echo_pages: None,
        }
    }

    /// Also counts the pages the echo process `pid` touches per ping, one window per warm-up
    /// ping, each opened right before the ping goes out (see [`TouchedPages`]): clearing the
    /// accessed bits flushes the echo's TLB, so no measured ping is disturbed.
    pub(super) fn counting_echo_pages(mut self, pid: u32) -> Self {
        self.echo_pages = Some(TouchedPages::of(pid));
        self
    }

    /// A timer tick of a paced chain: a ping still not echoed is given up on, and the next one
    /// goes out. Returns whether every ping has been echoed or given up on.
    pub(super) fn on_tick(&mut self, publisher: &Publisher<UInt8MultiArray>) -> bool {
        if self.pings.tick().is_some() {
            if let Some(pages) = &mut self.echo_pages {
                pages.before_ping(self.sent, self.warmup);
            }
            self.sent += 1;
            if self.publish(publisher).is_err() {
                self.pings.unsent();
            }
        }
        self.is_done()
    }

    /// Every ping echoed or given up on.
    pub(super) fn is_done(&self) -> bool {
        self.pings.is_done()
    }

    /// Stamps the next sequence number into the message and publishes it.
    pub(super) fn send_next(
        &mut self,
        publisher: &Publisher<UInt8MultiArray>,
    ) -> anyhow::Result<()> {
        self.pings.next();
        self.publish(publisher)
    }

    /// Stamps the ping in flight's number into the message and publishes it.
    fn publish(&mut self, publisher: &Publisher<UInt8MultiArray>) -> anyhow::Result<()> {
        let data = Arc::make_mut(&mut self.message).data.to_mut();
        data[..SEQ_LEN].copy_from_slice(&self.pings.seq.to_le_bytes());
        self.pings.start = Instant::monotonic_now();
        publisher.publish_shared(self.message.clone())?;
        Ok(())
    }

    /// Handles an echo; returns whether it was the awaited one.
    pub(super) fn on_echo(&mut self, echo: Echo, publisher: &Publisher<UInt8MultiArray>) -> bool {
        if echo.seq != self.pings.seq {
            self.pings.stale += 1;
            return false;
        }
        let size = self.message.data.len();
        if (echo.len != size || !echo.intact) && self.pings.error.is_none() {
            self.pings.error = Some(format!(
                "the echo of a {size}-byte ping came back as {} bytes{}",
                echo.len,
                if echo.intact { "" } else { ", corrupted" }
            ));
        }
        if !self.pings.echo(echo.seq, echo.at, true) {
            return false; // a second echo of one ping
        }
        if self.paced {
            return true;
        }
        if self.pings.left > 0 {
            self.pings.left -= 1;
            // Ignoring an error: the measuring thread sees no progress and counts a loss.
            let _ = self.send_next(publisher);
        }
        true
    }
}

struct PingSession {
    // Field order is drop order: endpoints, then the context, then the pong process.
    executor: Executor,
    publisher: Arc<Publisher<UInt8MultiArray>>,
    /// Set while [`measure_roslite`] runs a chain.
    chain: Arc<Mutex<Option<Chain>>>,
    _subscription: Subscription<UInt8MultiArray>,
    ctx: Context,
    pong: Helper,
    echo: Arc<Mutex<Option<Echo>>>,
    next_seq: u64,
    /// Echoes that arrived after their ping had been given up on.
    stale: usize,
}

impl PingSession {
    fn start(domain: u32) -> anyhow::Result<Self> {
        let pong = Helper::spawn(
            "the pong process (roslite bench rtt-pong)",
            self_command(&["bench", "rtt-pong", "--domain", &domain.to_string()])?
                .stdin(Stdio::null())
                .stdout(Stdio::null()),
        )?;
        let ctx = localhost_context_with(domain, roslite::LocalTransports::UDP_ONLY)?;
        let node = ctx.create_node("roslite_bench_rtt_ping")?;
        let publisher = Arc::new(node.create_publisher::<UInt8MultiArray>(PING_TOPIC, rtt_qos())?);
        let echo = Arc::new(Mutex::new(None));
        let slot = echo.clone();
        let chain: Arc<Mutex<Option<Chain>>> = Arc::new(Mutex::new(None));
        let (chain_slot, chain_publisher) = (chain.clone(), publisher.clone());
        let subscription =
            node.create_subscription(PONG_TOPIC, rtt_qos(), move |msg: &UInt8MultiArray| {
                let echo = Echo::of(Instant::monotonic_now(), &msg.data[..]);
                let mut chain = chain_slot.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(chain) = chain.as_mut() {
                    chain.on_echo(echo, &chain_publisher);
                    return;
                }
                drop(chain);
                *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(echo);
            })?;
        let executor = Executor::new(&ctx);
        executor.add_node(&node);
        Ok(Self {
            executor,
            publisher,
            chain,
            _subscription: subscription,
            ctx,
            pong,
            echo,
            next_seq: first_ping_number(),
            stale: 0,
        })
    }

    /// One ping; `None` if its echo did not arrive within `timeout`.
    fn round_trip(
        &mut self,
        message: &mut Arc<UInt8MultiArray>,
        timeout: Duration,
    ) -> anyhow::Result<Option<Duration>> {
        let seq = self.next_seq;
        self.next_seq += 1;
        // No copy once the previous publish has let go of the message.
        let data = Arc::make_mut(message).data.to_mut();
        data[..SEQ_LEN].copy_from_slice(&seq.to_le_bytes());
        let size = data.len();
        *self.echo.lock().unwrap_or_else(PoisonError::into_inner) = None;
        let start = Instant::monotonic_now();
        self.publisher.publish_shared(message.clone())?;
        let deadline = start + timeout;
        loop {
            let echo = self
                .echo
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            if let Some(echo) = echo {
                if echo.seq != seq {
                    self.stale += 1;
                    continue;
                }
                anyhow::ensure!(
                    echo.len == size && echo.intact,
                    "the echo of a {size}-byte ping came back as {} bytes{}",
                    echo.len,
                    if echo.intact { "" } else { ", corrupted" }
                );
                return Ok(Some(echo.at - start));
            }
            let now = Instant::monotonic_now();
            if now >= deadline {
                return Ok(None);
            }
            self.executor.spin_once(Some(deadline - now));
        }
    }

    /// Pings until the pong side answers: discovery and matching of both topics.
    fn wait_for_match(&mut self) -> anyhow::Result<()> {
        let mut probe = Arc::new(ping_message(64));
        let start = Instant::monotonic_now();
        loop {
            if self
                .round_trip(&mut probe, Duration::from_millis(200))?
                .is_some()
            {
                // Echoes of probes sent before the match completed are not late samples.
                self.stale = 0;
                return Ok(());
            }
            self.pong.check_running()?;
            if Instant::monotonic_now() - start > MATCH_TIMEOUT {
                bail!(
                    "the pong process did not answer within {MATCH_TIMEOUT:?}: discovery on \
                     127.0.0.1 failed (are UDP ports 7400 + 250 x domain free?)"
                );
            }
        }
    }
}

impl Drop for PingSession {
    fn drop(&mut self) {
        self.ctx.shutdown();
    }
}

/// A ping of `size` bytes: the sequence number goes in its first bytes, the rest is `FILL`.
pub(super) fn ping_message(size: usize) -> UInt8MultiArray {
    UInt8MultiArray {
        data: vec![FILL; size].into(),
        ..Default::default()
    }
}

/// An echo's sequence number (`u64::MAX` if too short) and whether the rest is intact.
/// Block by block (a memcmp): a byte loop over 4 MiB would hold the sample, and a core, for
/// milliseconds while the next ping is under way.
/// The number of a run's first ping: this process's id times 2^32, so that two benchmarks
/// running at the same time in the same domains (their pings and echoes then reach each
/// other) number theirs in disjoint ranges, and each takes the other's echoes for stale ones
/// instead of its own. Two such runs once failed with "the echo of a 256-byte ping came back
/// as 64 bytes": both numbered from 1.
pub(super) fn first_ping_number() -> u64 {
    u64::from(std::process::id()) << 32
}

pub(super) fn read_echo(data: &[u8]) -> (u64, bool) {
    let seq = data
        .get(..SEQ_LEN)
        .and_then(|b| b.try_into().ok())
        .map_or(u64::MAX, u64::from_le_bytes);
    let intact = data.len() >= SEQ_LEN
        && data[SEQ_LEN..]
            .chunks(FILL_BLOCK.len())
            .all(|chunk| chunk == &FILL_BLOCK[..chunk.len()]);
    (seq, intact)
}

struct RoslitePoint {
    summary: Option<Summary>,
    lost: usize,
    sender: ProcMemory,
    pong: Option<ProcMemory>,
}

fn measure_roslite(
    session: &mut PingSession,
    size: usize,
    samples: usize,
) -> anyhow::Result<RoslitePoint> {
    let warmup = (samples / 10).clamp(2, 50);
    let total = warmup + samples;
    // The first ping is numbered `next_seq + 1`, as before this chain was shared.
    let chain = Chain::new(size, session.next_seq + 1, total, warmup);
    {
        // Stored before the first echo can arrive: the callback waits for this lock.
        let mut slot = session.chain.lock().unwrap_or_else(PoisonError::into_inner);
        let chain = slot.insert(chain);
        chain.send_next(&session.publisher)?;
    }
    // The echo callback sends every further ping; this thread spins the executor (which lends
    // its turn to the receive thread while it sleeps) and gives up on lost pings.
    loop {
        {
            let mut slot = session.chain.lock().unwrap_or_else(PoisonError::into_inner);
            let chain = slot.as_mut().context("internal bug: no chain")?;
            if chain.pings.echoed + chain.pings.lost >= total {
                break;
            }
            if Instant::monotonic_now() - chain.pings.start > ECHO_TIMEOUT {
                chain.pings.lost += 1;
                session.pong.check_running()?;
                if chain.pings.left > 0 {
                    chain.pings.left -= 1;
                    chain.send_next(&session.publisher)?;
                } else {
                    break;
                }
            }
        }
        // `spin_for`, not `spin_once`: a callback run on a lent turn need not wake this thread.
        session.executor.spin_for(Duration::from_millis(50));
    }
    let chain = session
        .chain
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
        .context("internal bug: no chain")?;
    session.next_seq = chain.pings.seq + 1;
    session.stale += chain.pings.stale;
    if let Some(error) = chain.pings.error {
        bail!(error);
    }
    let (latencies, lost) = (chain.pings.latencies, chain.pings.lost);
    Ok(RoslitePoint {
        summary: Summary::of(&latencies),
        lost,
        sender: ProcMemory::of(None)?,
        pong: ProcMemory::of(Some(session.pong.pid())).ok(),
    })
}

// ---------------------------------------------------------------------------------------------
// Cyclone's ddsperf.

/// One per-second line of `ddsperf ping`, as printed (half round trips).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct DdsperfInterval {
    time_s: f64,
    size: usize,
    mean_us: f64,
    min_us: f64,
    p50_us: f64,
    p90_us: f64,
    p99_us: f64,
    max_us: f64,
    count: u64,
}

/// Parses `[pid] 2.000  host:pid size 64 mean 14.241us min 10.980us 50% 13.169us 90% 15.103us
/// 99% 22.141us max 4224.636us cnt 34953`; other lines give `None`.
pub(super) fn parse_ddsperf_interval(line: &str) -> Option<DdsperfInterval> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let time_s = tokens.get(1)?.parse().ok()?;
    let at = tokens.iter().position(|t| *t == "size")?;
    let value = |key: &str| -> Option<&str> {
        let i = tokens[at..].iter().position(|t| *t == key)? + at;
        tokens.get(i + 1).copied()
    };
    let us = |key: &str| -> Option<f64> { value(key)?.strip_suffix("us")?.parse().ok() };
    Some(DdsperfInterval {
        time_s,
        size: value("size")?.parse().ok()?,
        mean_us: us("mean")?,
        min_us: us("min")?,
        p50_us: us("50%")?,
        p90_us: us("90%")?,
        p99_us: us("99%")?,
        max_us: us("max")?,
        count: value("cnt")?.parse().ok()?,
    })
}

/// The count-weighted median of `(value, weight)`.
fn weighted_median(mut values: Vec<(f64, u64)>) -> Option<f64> {
    values.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: u64 = values.iter().map(|v| v.1).sum();
    let mut seen = 0;
    for (value, weight) in values {
        seen += weight;
        if seen * 2 >= total {
            return Some(value);
        }
    }
    None
}

/// Cyclone's round trips for one size, already doubled to full round trips.
#[derive(Clone, Copy, Debug)]
pub(super) struct CycloneRtt {
    pub(super) intervals: usize,
    pub(super) round_trips: u64,
    pub(super) min_us: f64,
    pub(super) mean_us: f64,
    pub(super) p50_us: f64,
    pub(super) p99_us: f64,
    pub(super) max_us: f64,
}

impl CycloneRtt {
    /// From `ddsperf ping`'s per-second lines (half round trips); the first interval is
    /// dropped when there are others.
    pub(super) fn from_intervals(mut intervals: Vec<DdsperfInterval>) -> Option<Self> {
        intervals.sort_by(|a, b| a.time_s.total_cmp(&b.time_s));
        if intervals.len() > 1 {
            intervals.remove(0);
        }
        let round_trips: u64 = intervals.iter().map(|i| i.count).sum();
        if round_trips == 0 {
            return None;
        }
        let p50 = weighted_median(intervals.iter().map(|i| (i.p50_us, i.count)).collect())?;
        let p99 = weighted_median(intervals.iter().map(|i| (i.p99_us, i.count)).collect())?;
        let mean = intervals
            .iter()
            .map(|i| i.mean_us * i.count as f64)
            .sum::<f64>()
            / round_trips as f64;
        Some(Self {
            intervals: intervals.len(),
            round_trips,
            min_us: 2.0 * intervals.iter().map(|i| i.min_us).fold(f64::MAX, f64::min),
            mean_us: 2.0 * mean,
            p50_us: 2.0 * p50,
            p99_us: 2.0 * p99,
            max_us: 2.0 * intervals.iter().map(|i| i.max_us).fold(0.0, f64::max),
        })
    }
}

struct CyclonePoint {
    rtt: CycloneRtt,
    sender: Option<ProcMemory>,
}

fn measure_cyclone(
    ddsperf: &Path,
    domain: u32,
    size: usize,
    duration: Duration,
) -> anyhow::Result<CyclonePoint> {
    let mut pong = ddsperf_command(ddsperf, domain);
    pong.arg("pong").stdin(Stdio::null()).stdout(Stdio::null());
    let pong = Helper::spawn("ddsperf pong", &mut pong)?;
    // ddsperf's KeyedSeq sample is 12 bytes of header plus the octet sequence; its "size"
    // counts both and must be 0 or at least 12.
    let size_arg = size.max(12).to_string();
    let seconds = format!("{:.1}", duration.as_secs_f64().max(2.0));
    let mut ping = ddsperf_command(ddsperf, domain);
    ping.args(["-D", &seconds, "ping", "size", &size_arg])
        .stdin(Stdio::null());
    let (mut ping, lines) = Helper::spawn_reading("ddsperf ping", &mut ping)?;
    // Sample the sender's memory while it runs; the last reading before it exits is kept.
    let mut sender = None;
    let give_up = Instant::monotonic_now() + duration + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = ping.child.try_wait()? {
            break status;
        }
        if Instant::monotonic_now() > give_up {
            bail!("ddsperf ping did not end {duration:?} after it started");
        }
        if let Ok(memory) = ProcMemory::of(Some(ping.pid())) {
            sender = Some(memory);
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    drop(pong);
    // The reader thread ends at EOF; give it a moment to take the last lines.
    std::thread::sleep(Duration::from_millis(50));
    let lines = lines.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let intervals: Vec<DdsperfInterval> = lines
        .iter()
        .filter_map(|l| parse_ddsperf_interval(l))
        .collect();
    let rtt = CycloneRtt::from_intervals(intervals).ok_or_else(|| {
        let tail: Vec<&str> = lines.iter().rev().take(3).map(String::as_str).collect();
        anyhow::anyhow!(
            "ddsperf ping ({status}) reported no round trips: {}",
            tail.join(" | ")
        )
    })?;
    Ok(CyclonePoint { rtt, sender })
}

// ---------------------------------------------------------------------------------------------
// The bench.

struct Row {
    size: usize,
    roslite: RoslitePoint,
    cyclone: Result<CyclonePoint, String>,
    /// The p50 ratio of every round of this size, in measuring order (empty for a row that
    /// is one round).
    round_ratios: Vec<Option<f64>>,
}

impl Row {
    /// The round whose ratio is the median (for an even count the upper middle, the one less
    /// flattering to roslite; rounds without a ratio sort last), carrying every round's ratio;
    /// the first round when none has a ratio.
    fn median_round(mut rounds: Vec<Row>) -> Row {
        let ratios: Vec<Option<f64>> = rounds.iter().map(Row::ratio).collect();
        let pick = median_round(&ratios).unwrap_or(0);
        let lost: usize = rounds.iter().map(|r| r.roslite.lost).sum();
        let mut row = rounds.swap_remove(pick);
        // Losses count over every round, not only the reported one.
        row.roslite.lost = lost;
        row.round_ratios = ratios;
        row
    }

    fn ratio(&self) -> Option<f64> {
        let roslite = self.roslite.summary?;
        let cyclone = self.cyclone.as_ref().ok()?;
        Some(roslite.p50_us / cyclone.rtt.p50_us)
    }
}

/// Which of several rounds to report: the one whose ratio is the median of those with a ratio
/// (for an even count the upper middle, the one less flattering to roslite); `None` when no
/// round has one. Shared by the UDP run (roslite against Cyclone) and the sweep's floor goals.
pub(super) fn median_round(ratios: &[Option<f64>]) -> Option<usize> {
    let median = crate::stats::upper_median(ratios.iter().flatten().copied().collect())?;
    ratios
        .iter()
        .position(|r| r.is_some_and(|r| r.total_cmp(&median).is_eq()))
}

/// The goals: `(size, largest allowed p50 ratio roslite/Cyclone, text)`.
const GOALS: [(usize, f64, &str); 3] = [
    (64, 1.0, "64 B p50 no worse than Cyclone's"),
    (1 << 20, 0.5, "1 MiB p50 at most half of Cyclone's"),
    (4 << 20, 0.5, "4 MiB p50 at most half of Cyclone's"),
];

/// `Some(met)` for a goal whose size was measured on both sides.
fn goal_met(rows: &[Row], size: usize, limit: f64) -> Option<bool> {
    let row = rows.iter().find(|r| r.size == size)?;
    Some(row.ratio()? <= limit)
}

pub fn run(args: &RttArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.samples >= 1, "--samples must be at least 1");
    anyhow::ensure!(!args.sizes.is_empty(), "--sizes is empty");
    anyhow::ensure!(
        args.domain < roslite::context::MAX_DOMAIN_ID,
        "--domain must be below {} (Cyclone runs in the next domain)",
        roslite::context::MAX_DOMAIN_ID
    );
    let routes = match args.transport {
        RttTransport::Udp if !args.sweep.requested() => None,
        RttTransport::Udp => Some(vec![super::rtt_sweep::Route::Udp]),
        RttTransport::Intra => Some(vec![super::rtt_sweep::Route::Intra]),
        RttTransport::Shm => Some(vec![super::rtt_sweep::Route::Shm]),
        RttTransport::Uds => Some(vec![super::rtt_sweep::Route::Uds]),
        RttTransport::ShmLoan => Some(vec![super::rtt_sweep::Route::ShmLoan]),
        RttTransport::All => Some(super::rtt_sweep::Route::ALL.to_vec()),
    };
    if let Some(routes) = routes {
        return super::rtt_sweep::run(&super::rtt_sweep::Options {
            routes,
            sizes: &args.sizes,
            domain: args.domain,
            cyclone_duration: args.cyclone_duration,
            no_cyclone: args.no_cyclone,
            svg: &args.svg,
            json: args.json,
            sweep: &args.sweep,
            rounds: args.rounds,
        });
    }
    anyhow::ensure!(args.rounds >= 1, "--rounds must be at least 1");
    let ddsperf = if args.no_cyclone {
        Err("skipped (--no-cyclone)".to_owned())
    } else {
        find_ddsperf().ok_or_else(|| {
            "not installed (ddsperf from Debian cyclonedds-tools not on PATH)".to_owned()
        })
    };
    let mut session = PingSession::start(args.domain)?;
    session.wait_for_match()?;
    let mut rows = Vec::new();
    for &size in &args.sizes {
        let samples = if size >= 1 << 20 {
            (args.samples / 10).max(5)
        } else {
            args.samples
        };
        let mut rounds = Vec::with_capacity(args.rounds);
        for _ in 0..args.rounds {
            let roslite = measure_roslite(&mut session, size, samples)?;
            // Interleaved size by size and round by round, so the drifts of a shared machine
            // fall on both alike.
            let cyclone = match &ddsperf {
                Ok(path) => measure_cyclone(path, args.domain + 1, size, args.cyclone_duration)
                    .map_err(|e| format!("failed: {e:#}")),
                Err(why) => Err(why.clone()),
            };
            rounds.push(Row {
                size,
                roslite,
                cyclone,
                round_ratios: Vec::new(),
            });
        }
        rows.push(Row::median_round(rounds));
    }
    let stale = session.stale;
    drop(session);
    let version = ddsperf.is_ok().then(cyclone_version).flatten();
    let cyclone_name = match &version {
        Some(v) => format!("Cyclone {v} (ddsperf)"),
        None => "Cyclone (ddsperf)".to_owned(),
    };
    write_svg(args, &rows, &cyclone_name)?;
    if args.json {
        print_json(args, &rows, stale, &cyclone_name);
    } else {
        print_table(args, &rows, stale, &cyclone_name);
    }
    Ok(())
}

fn write_svg(args: &RttArgs, rows: &[Row], cyclone_name: &str) -> anyhow::Result<()> {
    let points = |pick: &dyn Fn(&Row) -> Option<f64>| -> Vec<(f64, f64)> {
        rows.iter()
            .filter_map(|r| Some((r.size as f64, pick(r)?)))
            .collect()
    };
    let line = |name: String, points, color, stroke| svg::Line {
        name,
        points,
        color,
        stroke,
    };
    let mut series = vec![
        line(
            "roslite p50".to_owned(),
            points(&|r| r.roslite.summary.map(|s| s.p50_us)),
            0,
            svg::Stroke::Solid,
        ),
        line(
            "roslite p99".to_owned(),
            points(&|r| r.roslite.summary.map(|s| s.p99_us)),
            0,
            svg::Stroke::Dashed,
        ),
    ];
    if rows.iter().any(|r| r.cyclone.is_ok()) {
        series.push(line(
            format!("{cyclone_name} p50"),
            points(&|r| r.cyclone.as_ref().ok().map(|c| c.rtt.p50_us)),
            1,
            svg::Stroke::Solid,
        ));
        series.push(line(
            format!("{cyclone_name} p99"),
            points(&|r| r.cyclone.as_ref().ok().map(|c| c.rtt.p99_us)),
            1,
            svg::Stroke::Dashed,
        ));
    }
    let ticks: Vec<(f64, String)> = rows
        .iter()
        .map(|r| (r.size as f64, size_label(r.size)))
        .collect();
    let chart = svg::log_log_lines(
        "Round-trip time over RTPS/UDP on 127.0.0.1 (reliable, keep-last 1)",
        "payload size",
        "round-trip time (us)",
        &ticks,
        &series,
    );
    if let Some(parent) = args.svg.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&args.svg, chart).with_context(|| format!("writing {}", args.svg.display()))
}

fn met(flag: Option<bool>) -> &'static str {
    match flag {
        Some(true) => "met",
        Some(false) => "NOT met",
        None => "not measured",
    }
}

fn print_table(args: &RttArgs, rows: &[Row], stale: usize, cyclone_name: &str) {
    println!(
        "round-trip time, roslite <-> roslite over RTPS/UDP on 127.0.0.1 (two processes, \
         domain {}), reliable keep-last 1; per size {} round(s) of roslite then Cyclone, the \
         round with the median ratio shown",
        args.domain, args.rounds
    );
    println!(
        "{:>8} | {:>7} {:>4} {:>9} {:>9} {:>9} {:>8} | {:>9} {:>9} {:>9} {:>8} | {:>7}",
        "size",
        "samples",
        "lost",
        "p50 us",
        "p99 us",
        "max us",
        "RSS MB",
        "Cy p50",
        "Cy p99",
        "Cy max",
        "Cy RSS",
        "p50 r/C"
    );
    for row in rows {
        let r = &row.roslite;
        let roslite = match r.summary {
            Some(s) => format!(
                "{:>7} {:>4} {:>9.1} {:>9.1} {:>9.1} {:>8.1}",
                s.count,
                r.lost,
                s.p50_us,
                s.p99_us,
                s.max_us,
                mb(r.sender.vm_rss_kib)
            ),
            None => format!("{:>7} {:>4} {:>40}", 0, r.lost, "no round trip completed"),
        };
        let cyclone = match &row.cyclone {
            Ok(c) => format!(
                "{:>9.1} {:>9.1} {:>9.1} {:>8}",
                c.rtt.p50_us,
                c.rtt.p99_us,
                c.rtt.max_us,
                c.sender
                    .map_or("?".to_owned(), |m| format!("{:.1}", mb(m.vm_rss_kib)))
            ),
            Err(_) => format!("{:>38}", "-"),
        };
        let ratio = row.ratio().map_or("-".to_owned(), |r| format!("{r:.2}x"));
        let rounds = if row.round_ratios.len() > 1 {
            let each: Vec<String> = row
                .round_ratios
                .iter()
                .map(|r| r.map_or("-".to_owned(), |r| format!("{r:.2}")))
                .collect();
            format!("  (rounds: {})", each.join(" "))
        } else {
            String::new()
        };
        println!(
            "{:>8} | {roslite} | {cyclone} | {ratio:>7}{rounds}",
            size_label(row.size)
        );
    }
    let lost: usize = rows.iter().map(|r| r.roslite.lost).sum();
    println!(
        "roslite: RSS is the ping process's VmRSS after each size (pong process: {}); \
         lost samples: {lost}{}",
        rows.last()
            .and_then(|r| r.roslite.pong)
            .map_or("?".to_owned(), |m| format!(
                "{:.1} MB, HWM {:.1} MB",
                mb(m.vm_rss_kib),
                mb(m.vm_hwm_kib)
            )),
        if stale > 0 {
            format!(" ({stale} late echoes)")
        } else {
            String::new()
        }
    );
    match rows.iter().find_map(|r| r.cyclone.as_ref().err()) {
        Some(why) => println!("{cyclone_name}: {why}"),
        None => println!(
            "{cyclone_name}: ddsperf ping/pong for {:?} per size, loopback only, 4 MiB/1 MiB \
             socket buffers; its half round trips doubled; p50/p99 are medians of its \
             per-second figures",
            args.cyclone_duration
        ),
    }
    for (size, limit, text) in GOALS {
        println!(
            "goal: {text} -> {}",
            met(goal_met(rows, size, limit)) //
        );
    }
    println!(
        "goal: no sample lost -> {}",
        if lost == 0 { "met" } else { "NOT met" }
    );
    println!("chart: {}", args.svg.display());
}

fn json_string(text: &str) -> String {
    format!(
        "\"{}\"",
        text.replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', " ")
    )
}

fn memory_json(prefix: &str, m: &ProcMemory) -> String {
    format!(
        "\"{prefix}_vm_rss_kib\":{},\"{prefix}_vm_hwm_kib\":{}",
        m.vm_rss_kib, m.vm_hwm_kib
    )
}

fn print_json(args: &RttArgs, rows: &[Row], stale: usize, cyclone_name: &str) {
    let results: Vec<String> = rows
        .iter()
        .map(|row| {
            let r = &row.roslite;
            let mut roslite = match r.summary {
                Some(s) => format!(
                    "\"samples\":{},\"lost_samples\":{},\"min_us\":{:.3},\"mean_us\":{:.3},\
                     \"p50_us\":{:.3},\"p99_us\":{:.3},\"max_us\":{:.3}",
                    s.count, r.lost, s.min_us, s.mean_us, s.p50_us, s.p99_us, s.max_us
                ),
                None => format!("\"samples\":0,\"lost_samples\":{}", r.lost),
            };
            roslite.push(',');
            roslite.push_str(&memory_json("sender", &r.sender));
            if let Some(pong) = &r.pong {
                roslite.push(',');
                roslite.push_str(&memory_json("pong", pong));
            }
            let cyclone = match &row.cyclone {
                Ok(c) => {
                    let mut text = format!(
                        "\"intervals\":{},\"round_trips\":{},\"min_us\":{:.3},\"mean_us\":{:.3},\
                         \"p50_us\":{:.3},\"p99_us\":{:.3},\"max_us\":{:.3}",
                        c.rtt.intervals,
                        c.rtt.round_trips,
                        c.rtt.min_us,
                        c.rtt.mean_us,
                        c.rtt.p50_us,
                        c.rtt.p99_us,
                        c.rtt.max_us
                    );
                    if let Some(m) = &c.sender {
                        text.push(',');
                        text.push_str(&memory_json("sender", m));
                    }
                    text
                }
                Err(why) => format!("\"skipped\":{}", json_string(why)),
            };
            let ratio = row.ratio().map_or("null".to_owned(), |r| format!("{r:.3}"));
            let rounds: Vec<String> = row
                .round_ratios
                .iter()
                .map(|r| r.map_or("null".to_owned(), |r| format!("{r:.3}")))
                .collect();
            format!(
                "{{\"size_bytes\":{},\"roslite\":{{{roslite}}},\"cyclone\":{{{cyclone}}},\
                 \"p50_ratio_roslite_to_cyclone\":{ratio},\
                 \"p50_ratio_each_round\":[{}]}}",
                row.size,
                rounds.join(",")
            )
        })
        .collect();
    let goals: Vec<String> = GOALS
        .iter()
        .map(|&(size, limit, text)| {
            let met = goal_met(rows, size, limit).map_or("null".to_owned(), |m| m.to_string());
            format!("{{\"goal\":{},\"met\":{met}}}", json_string(text))
        })
        .collect();
    let lost: usize = rows.iter().map(|r| r.roslite.lost).sum();
    println!(
        "{{\"bench\":\"rtt\",\"transport\":\"udp\",\"domain\":{},\"cyclone\":{},\
         \"cyclone_duration_s\":{},\"svg\":{},\"lost_samples\":{lost},\"late_echoes\":{stale},\
         \"results\":[{}],\"goals\":[{}]}}",
        args.domain,
        json_string(cyclone_name),
        args.cyclone_duration.as_secs_f64(),
        json_string(&args.svg.display().to_string()),
        results.join(","),
        goals.join(",")
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(roslite_p50: f64, cyclone_p50: Option<f64>, lost: usize) -> Row {
        let summary = Summary::of(&[Duration::from_secs_f64(roslite_p50 / 1e6)]);
        Row {
            size: 64,
            roslite: RoslitePoint {
                summary,
                lost,
                sender: ProcMemory::default(),
                pong: None,
            },
            cyclone: cyclone_p50
                .map(|p50_us| CyclonePoint {
                    rtt: CycloneRtt {
                        intervals: 1,
                        round_trips: 1,
                        min_us: p50_us,
                        mean_us: p50_us,
                        p50_us,
                        p99_us: p50_us,
                        max_us: p50_us,
                    },
                    sender: None,
                })
                .ok_or_else(|| "skipped".to_owned()),
            round_ratios: Vec::new(),
        }
    }

    #[test]
    fn the_round_with_the_median_ratio_is_reported_with_every_ratio_and_all_losses() {
        let row = Row::median_round(vec![
            round(40.0, Some(20.0), 0), // 2.0
            round(20.0, Some(25.0), 1), // 0.8
            round(30.0, Some(30.0), 2), // 1.0
        ]);
        assert_eq!(row.ratio(), Some(1.0));
        assert_eq!(row.round_ratios, [Some(2.0), Some(0.8), Some(1.0)]);
        assert_eq!(row.roslite.lost, 3);
        // Even count: the upper middle, which the goal then judges.
        let row = Row::median_round(vec![round(30.0, Some(20.0), 0), round(20.0, Some(20.0), 0)]);
        assert_eq!(row.ratio(), Some(1.5));
        // Without Cyclone: the first round, no ratio.
        let row = Row::median_round(vec![round(30.0, None, 0), round(20.0, None, 0)]);
        assert_eq!(row.ratio(), None);
        assert_eq!(row.roslite.summary.unwrap().p50_us, 30.0);
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64"), Ok(64));
        assert_eq!(parse_size("1KiB"), Ok(1024));
        assert_eq!(parse_size("4M"), Ok(4 << 20));
        assert!(parse_size("4").unwrap_err().contains("too small"));
        assert!(parse_size("3 furlongs")
            .unwrap_err()
            .contains("unknown unit"));
        assert_eq!(size_label(64), "64 B");
        assert_eq!(size_label(65536), "64 KiB");
        assert_eq!(size_label(4 << 20), "4 MiB");
        assert_eq!(size_label(1536), "1.5 KiB");
    }

    #[test]
    fn ddsperf_lines_parse_and_double() {
        let line = "[13613] 2.000  vm:13603 size 64 mean 14.241us min 10.980us 50% 13.169us \
                    90% 15.103us 99% 22.141us max 4224.636us cnt 34953";
        let first = parse_ddsperf_interval(line).unwrap();
        assert_eq!(first.size, 64);
        assert_eq!(first.count, 34953);
        assert!((first.p50_us - 13.169).abs() < 1e-9);
        assert!(parse_ddsperf_interval("[13613] 2.000  rss:7.5MB vcsw:32757").is_none());
        let later = DdsperfInterval {
            time_s: 3.0,
            p50_us: 10.0,
            p99_us: 20.0,
            max_us: 30.0,
            count: 10,
            ..first
        };
        let latest = DdsperfInterval {
            time_s: 4.0,
            p50_us: 12.0,
            count: 30,
            ..later
        };
        // The first interval (discovery) is dropped; the rest are doubled.
        let rtt = CycloneRtt::from_intervals(vec![latest, first, later]).unwrap();
        assert_eq!(rtt.intervals, 2);
        assert_eq!(rtt.round_trips, 40);
        assert!((rtt.p50_us - 24.0).abs() < 1e-9);
        assert!((rtt.max_us - 60.0).abs() < 1e-9);
    }

    #[test]
    fn weighted_median_follows_counts() {
        assert_eq!(
            weighted_median(vec![(1.0, 1), (5.0, 10), (9.0, 1)]),
            Some(5.0)
        );
        assert_eq!(weighted_median(vec![]), None);
    }
}

#[cfg(test)]
mod chain_tests {
    use roslite::{ContextOptions, NetworkMode};

    use super::*;

    fn publisher() -> (Context, Publisher<UInt8MultiArray>) {
        let ctx = Context::new(ContextOptions {
            network: NetworkMode::Off,
            ..Default::default()
        })
        .expect("context");
        let node = ctx.create_node("chain_test").expect("node");
        let publisher = node
            .create_publisher::<UInt8MultiArray>("chain_test", rtt_qos())
            .expect("publisher");
        (ctx, publisher)
    }

    fn echo_of(chain: &Chain, at: Instant) -> Echo {
        Echo {
            at,
            seq: chain.pings.seq,
            len: chain.message.data.len(),
            intact: true,
        }
    }

    /// A paced chain: each tick sends one ping, a ping not echoed by the next tick is lost,
    /// an echo of an older ping or a second echo of one is stale, and the chain is done once
    /// every ping was echoed or given up on.
    #[test]
    fn a_paced_chain_counts_echoes_losses_and_stale_echoes() {
        let (_ctx, publisher) = publisher();
        let mut chain = Chain::paced(64, 10, 4, 1);
        assert!(!chain.is_done());
        assert!(!chain.on_tick(&publisher)); // ping 10 out
        assert_eq!(chain.pings.seq, 10);
        let warm = echo_of(&chain, chain.pings.start + Duration::from_micros(50));
        assert!(chain.on_echo(warm, &publisher)); // warm-up, not timed
        assert!(!chain.on_echo(echo_of(&chain, chain.pings.start), &publisher)); // twice: stale
        assert!(!chain.on_tick(&publisher)); // ping 11 out, never echoed
        assert!(!chain.on_tick(&publisher)); // 11 lost, ping 12 out
        let late = Echo {
            seq: 11,
            ..echo_of(&chain, chain.pings.start)
        };
        assert!(!chain.on_echo(late, &publisher)); // 11 came too late: stale
        let timed = echo_of(&chain, chain.pings.start + Duration::from_micros(80));
        assert!(chain.on_echo(timed, &publisher));
        assert!(!chain.on_tick(&publisher)); // ping 13 out, the last
        assert!(!chain.is_done());
        assert!(chain.on_tick(&publisher)); // 13 lost: done, nothing more sent
        assert_eq!(chain.pings.seq, 13);
        assert_eq!(
            (chain.pings.echoed, chain.pings.lost, chain.pings.stale),
            (2, 2, 2)
        );
        assert_eq!(chain.pings.latencies, [Duration::from_micros(80)]);
        assert!(chain.pings.error.is_none());
        assert!(chain.echo_pages.is_none());
    }

    /// Counting the echo's pages (here this process's own): one window per warm-up ping, each
    /// opened right before its ping; the measured pings are left alone.
    #[test]
    fn a_paced_chain_counts_echo_pages_over_its_warm_up_pings_only() {
        let (_ctx, publisher) = publisher();
        let mut chain = Chain::paced(64, 1, 6, 3).counting_echo_pages(std::process::id());
        // Pages never touched before, so that each tick's are counted whatever the TLB holds.
        let mut memory = vec![0u8; 6 * 64 * 4096];
        for tick in 0..6 {
            assert!(!chain.on_tick(&publisher) || tick == 5);
            let echo = echo_of(&chain, chain.pings.start + Duration::from_micros(10));
            assert!(chain.on_echo(echo, &publisher));
            for page in tick * 64..(tick + 1) * 64 {
                memory[page * 4096] = 1;
            }
            std::hint::black_box(&mut memory);
            let windows = chain.echo_pages.as_ref().map(|p| p.counts().len());
            // Window k closes when ping k+1 goes out; the third when the first measured does.
            assert_eq!(windows, Some(tick.min(3)), "after tick {tick}");
        }
        let pages = chain.echo_pages.as_ref().and_then(TouchedPages::median);
        assert!(pages.is_some_and(|p| p >= 64), "{pages:?}");
        assert_eq!(chain.pings.latencies.len(), 3);
    }
}
