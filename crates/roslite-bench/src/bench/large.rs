//! `roslite bench large`: very large messages, as the zero-copy / shared-memory large point cloud
//! study sent them.
//!
//! 1. The study's experiment: a `std_msgs/UInt64MultiArray` of 100 million elements (800 MB)
//!    sent intra-process, between two processes on this host (every same-host transport
//!    available: shared memory, Unix socket, UDP), and between two processes in two network
//!    namespaces joined by a veth pair (UDP). As in the study, conversion and transfer are
//!    reported apart:
//!    - send side: *fill* (the user's `Vec<u64>` built from scratch: the study's loop; making it
//!      the message's `data` is a move, not a copy) and *serialize* (CDR of the whole message,
//!      timed on its own; `publish` does the same work again for other processes);
//!    - *transfer*: the `publish` call to the subscription callback's start, both on
//!      `CLOCK_MONOTONIC` (one clock for every process and namespace of the host). Between
//!      processes it includes the serialization inside `publish`;
//!    - receive side: *decode* (`roslite_cdr::from_shared`; the array becomes a view into the
//!      received buffer, which the table says) and *copy-out* (the received array copied into a
//!      `Vec<u64>`: the study's `convert_to_custom`, which views make unnecessary).
//!
//!    The receiving process subscribes with a serialized subscription so that decoding is
//!    timed apart from transfer. Every message is checked element for element through a
//!    position-sensitive checksum.
//! 2. A 55 MB `sensor_msgs/PointCloud2` between two processes: one-way latency (publish call to
//!    callback start) over N messages per transport, and whether the receiver's `data` is a
//!    view, and into what mapping (`/proc/self/maps`): shared memory shows `memfd:`. The row
//!    "shm, loaned" uses `Publisher::loan`: the publisher serializes the cloud with its `data`
//!    reserved straight into a shared-memory chunk (*serialize*: the `loan` call), writes the
//!    points into the chunk (*fill*, timed apart), and `publish` only hands the chunk over; its
//!    latency runs from the `publish` call, as in the other rows.
//!
//! Every process-to-process row runs two helper processes (this binary, `bench large-peer`)
//! that the bench drives line by line over stdin/stdout; one message is in flight at a time.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context as _};
use roslite::msgs::sensor_msgs::msg::{PointCloud2, PointField};
use roslite::msgs::std_msgs::msg::UInt64MultiArray;
use roslite::{Context, ContextOptions, Executor, Instant, MessageInfo, QosProfile, TypeInfo};
use serde::Serialize;

use crate::toolkit::json;
use crate::toolkit::memory::mapping_of;
use crate::toolkit::process::{die_with_parent, self_command};
use crate::toolkit::veth;

/// The large point cloud study's array: 100 million `u64`.
const FULL_ELEMENTS: usize = 100_000_000;
const QUICK_ELEMENTS: usize = 10_000_000;
/// The large point cloud study's point cloud: 4 RGB-D cameras, about 55 MB per frame.
const CLOUD_BYTES: usize = 55_000_000;
/// The largest sample an RTPS subscription of roslite accepts (1 GiB): bigger arrays are
/// capped on the UDP rows, so they measure something instead of waiting for a sample that is
/// dropped.
const UDP_MAX_SAMPLE: usize = roslite::backends::rtps::MAX_SAMPLE_SIZE;
/// CDR bytes of a `UInt64MultiArray` besides its elements: encapsulation header, empty `dim`,
/// `data_offset`, the length, padding to 8.
const ARRAY_OVERHEAD: usize = 4 + 4 + 4 + 4 + 4;

const ARRAY_TOPIC: &str = "roslite_bench/large/array";
const CLOUD_TOPIC: &str = "roslite_bench/large/cloud";
const MATCH_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(clap::Args)]
pub struct LargeArgs {
    /// Print one JSON object instead of tables.
    #[arg(long)]
    json: bool,
    /// 10 million elements instead of 100 million, fewer point clouds.
    #[arg(long)]
    quick: bool,
    /// Elements of the array (default 100 million, the large point cloud study's; 10 million with --quick).
    #[arg(long)]
    elements: Option<usize>,
    /// Array messages per row (each one built, sent and checked on its own).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Point clouds per transport (after 2 warm-up messages); default 30, 10 with --quick.
    #[arg(long)]
    cloud_samples: Option<usize>,
    /// Skip the row between two network namespaces (it needs root and `ip`).
    #[arg(long)]
    skip_netns: bool,
    /// Skip the point-cloud latency table.
    #[arg(long)]
    skip_cloud: bool,
}

/// Helper for `bench large`: one side of a process-to-process row.
#[derive(clap::Args)]
pub struct PeerArgs {
    /// `pub` or `sub`.
    #[arg(long)]
    role: String,
    /// `array` (UInt64MultiArray), `cloud` (PointCloud2) or `cloud-loan` (PointCloud2 written
    /// in place into a loan).
    #[arg(long)]
    kind: String,
    /// Elements of the array, or bytes of the cloud's data.
    #[arg(long)]
    size: usize,
}

fn qos() -> QosProfile {
    // Reliable, volatile, keep-last 1: one message in flight at a time.
    QosProfile::keep_last(1)
}

fn mono_ns() -> u64 {
    Instant::monotonic_now().as_nanos()
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// Position-sensitive checksum of the elements, the same on both sides.
pub fn checksum_u64(values: &[u64]) -> u64 {
    values
        .iter()
        .fold(0x9e37_79b9_7f4a_7c15u64, |h, &x| h.rotate_left(7) ^ x)
}

/// [`checksum_u64`] of the bytes read as little-endian words (zero-padded at the end).
pub fn checksum_bytes(bytes: &[u8]) -> u64 {
    let mut chunks = bytes.chunks_exact(8);
    let mut h = 0x9e37_79b9_7f4a_7c15u64;
    for c in &mut chunks {
        h = h.rotate_left(7) ^ u64::from_le_bytes(c.try_into().expect("8-byte chunk"));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut last = [0u8; 8];
        last[..rest.len()].copy_from_slice(rest);
        h = h.rotate_left(7) ^ u64::from_le_bytes(last);
    }
    h
}

/// The study's array: element i is (i + 1) mod 255, and element 0 is the round number.
fn fill(elements: usize, round: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (0..elements as u64).map(|i| (i + 1) % 255).collect();
    if let Some(first) = v.first_mut() {
        *first = round;
    }
    v
}

/// A point cloud of `bytes` (rounded down to whole 16-byte points): x, y, z, intensity.
fn cloud(bytes: usize) -> PointCloud2 {
    let point_step = 16u32;
    let points = u32::try_from(bytes / point_step as usize).unwrap_or(u32::MAX);
    let field = |name: &str, offset| PointField {
        name: name.into(),
        offset,
        datatype: 7, // FLOAT32
        count: 1,
    };
    PointCloud2 {
        height: 1,
        width: points,
        fields: vec![
            field("x", 0),
            field("y", 4),
            field("z", 8),
            field("intensity", 12),
        ],
        point_step,
        row_step: points * point_step,
        data: (0..points as usize * point_step as usize)
            .map(|i| (i % 251) as u8)
            .collect(),
        is_dense: true,
        ..Default::default()
    }
}

// -------------------------------------------------------------------------------------------
// Helper processes

/// The publishing or subscribing side of a process-to-process row. The publisher prints
/// `MATCHED <transport>` once the subscription matched, then for every `SEND <round>` line on
/// stdin publishes one message and prints `SENT ...`; the subscriber prints `READY`, then
/// `RECV ...` per message. Both use `Context::from_env` (the bench sets `ROS_DOMAIN_ID`,
/// discovery and `ROSLITE_TRANSPORTS` in their environment).
pub fn peer(args: &PeerArgs) -> anyhow::Result<()> {
    die_with_parent();
    let ctx = Context::from_env()?;
    match (args.role.as_str(), args.kind.as_str()) {
        ("pub", "array") => publish_arrays(&ctx, args.size),
        ("pub", "cloud") => publish_clouds(&ctx, args.size),
        ("pub", "cloud-loan") => publish_loaned_clouds(&ctx, args.size),
        ("sub", "array") => subscribe_arrays(&ctx),
        ("sub", "cloud" | "cloud-loan") => subscribe_clouds(&ctx),
        _ => bail!("--role pub|sub and --kind array|cloud|cloud-loan"),
    }
}

/// Waits until `topic` has a remote subscription; the transport carrying it.
fn await_subscriber(ctx: &Context, topic: &str) -> anyhow::Result<&'static str> {
    if !ctx.has_network() {
        anyhow::bail!("the helper needs the network");
    }
    let net = ctx.graph();
    let start = std::time::Instant::now();
    loop {
        let (rtps, local) = net.remote_subscriptions_by_path(&format!("/{topic}"));
        if rtps + local > 0 {
            let transport = net
                .endpoints()
                .into_iter()
                .find(|e| {
                    !e.local
                        && e.topic == format!("/{topic}")
                        && e.kind == roslite::graph::GraphEndpointKind::Subscription
                })
                .map_or("udp", |e| e.transport);
            return Ok(transport);
        }
        if start.elapsed() > MATCH_TIMEOUT {
            bail!("no subscription matched /{topic} within {MATCH_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn publish_arrays(ctx: &Context, elements: usize) -> anyhow::Result<()> {
    let node = ctx.create_node("roslite_bench_large_pub")?;
    let publisher = node.create_publisher::<UInt64MultiArray>(ARRAY_TOPIC, qos())?;
    println!("MATCHED {}", await_subscriber(ctx, ARRAY_TOPIC)?);
    on_send_requests(|round: u64| {
        let t = mono_ns();
        let values = fill(elements, round);
        let fill_ns = mono_ns() - t;
        let sum = checksum_u64(&values);
        let message = Arc::new(UInt64MultiArray {
            data: values.into(),
            ..Default::default()
        });
        let t = mono_ns();
        let bytes = roslite_cdr::to_vec(&*message, roslite_cdr::Endianness::Little)?;
        let serialize_ns = mono_ns() - t;
        let wire = bytes.len();
        drop(bytes);
        let t0 = mono_ns();
        publisher.publish_shared(message)?;
        let t1 = mono_ns();
        println!("SENT {round} {fill_ns} {serialize_ns} {t0} {t1} {sum} {wire}");
        Ok(())
    })
}

fn publish_clouds(ctx: &Context, bytes: usize) -> anyhow::Result<()> {
    let node = ctx.create_node("roslite_bench_large_pub")?;
    let publisher = node.create_publisher::<PointCloud2>(CLOUD_TOPIC, qos())?;
    let mut message = Arc::new(cloud(bytes));
    let sum = checksum_bytes(&message.data);
    let t = mono_ns();
    let wire = roslite_cdr::to_vec(&*message, roslite_cdr::Endianness::Little)?.len();
    let serialize_ns = mono_ns() - t;
    println!("MATCHED {}", await_subscriber(ctx, CLOUD_TOPIC)?);
    on_send_requests(|round: i32| {
        // Nobody else holds the message between rounds: publish returns after serializing.
        Arc::get_mut(&mut message)
            .context("internal bug: the point cloud is still shared")?
            .header
            .stamp
            .sec = round;
        let t0 = mono_ns();
        publisher.publish_shared(message.clone())?;
        let t1 = mono_ns();
        println!("SENT {round} 0 {serialize_ns} {t0} {t1} {sum} {wire}");
        Ok(())
    })
}

/// [`publish_clouds`] through a loan: per round the cloud (with `data` reserved) is serialized
/// into a loaned chunk, its points are written in place, and `publish` sends the chunk. The
/// SENT line carries the fill time and, as "serialize", the `loan` call's time.
fn publish_loaned_clouds(ctx: &Context, bytes: usize) -> anyhow::Result<()> {
    let node = ctx.create_node("roslite_bench_large_pub")?;
    let publisher = node.create_publisher::<PointCloud2>(CLOUD_TOPIC, qos())?;
    let shape = cloud(0);
    let points = u32::try_from(bytes / shape.point_step as usize).unwrap_or(u32::MAX);
    let data_len = points as usize * shape.point_step as usize;
    // The pattern of `cloud()` (byte i is i mod 251), a whole number of periods long, so the
    // fill is a run of block copies the way a driver writes its frames, not a byte loop.
    let block: Vec<u8> = (0..251 * 256).map(|i| (i % 251) as u8).collect();
    println!("MATCHED {}", await_subscriber(ctx, CLOUD_TOPIC)?);
    on_send_requests(|round: i32| {
        let mut message = PointCloud2 {
            width: points,
            row_step: points * shape.point_step,
            data: roslite::msgs::cdr::Seq::reserved(data_len),
            ..shape.clone()
        };
        message.header.stamp.sec = round;
        let t = mono_ns();
        let mut loan = publisher.loan(message)?;
        let serialize_ns = mono_ns() - t;
        if !loan.is_shared_memory() {
            println!("BAD the loan is not in shared memory (no reader over shared memory)");
            bail!("the loan is not in shared memory");
        }
        let t = mono_ns();
        let data = loan.sequence_mut::<u8>(0)?;
        for chunk in data.chunks_mut(block.len()) {
            chunk.copy_from_slice(&block[..chunk.len()]);
        }
        let fill_ns = mono_ns() - t;
        let sum = checksum_bytes(data);
        let wire = loan.as_bytes().len();
        let t0 = mono_ns();
        loan.publish()?;
        let t1 = mono_ns();
        println!("SENT {round} {fill_ns} {serialize_ns} {t0} {t1} {sum} {wire}");
        Ok(())
    })
}

/// Runs `send` for each `SEND <round>` line the bench writes to this peer's stdin, until
/// another line or the end.
fn on_send_requests<R>(mut send: impl FnMut(R) -> anyhow::Result<()>) -> anyhow::Result<()>
where
    R: std::str::FromStr,
    R::Err: std::error::Error + Send + Sync + 'static,
{
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let Some(round) = line.strip_prefix("SEND ") else {
            break;
        };
        send(round.trim().parse()?)?;
    }
    Ok(())
}

fn spin_forever(ctx: &Context, node: &roslite::Node) {
    let executor = Executor::new(ctx);
    executor.add_node(node);
    executor.spin();
}

fn subscribe_arrays(ctx: &Context) -> anyhow::Result<()> {
    let node = ctx.create_node("roslite_bench_large_sub")?;
    let _subscription = node.create_serialized_subscription(
        ARRAY_TOPIC,
        TypeInfo::of::<UInt64MultiArray>(),
        qos(),
        |payload: &roslite_cdr::SharedBuf, _info: &MessageInfo| {
            let callback = mono_ns();
            let t = mono_ns();
            let decoded = roslite_cdr::from_shared::<UInt64MultiArray>(payload);
            let decode_ns = mono_ns() - t;
            let message = match decoded {
                Ok(m) => m,
                Err(e) => {
                    println!("BAD {e}");
                    return;
                }
            };
            let view = message.data.is_view();
            let mapping = mapping_of(message.data.as_ptr().cast());
            let t = mono_ns();
            let copied: Vec<u64> = message.data.to_vec();
            let copy_ns = mono_ns() - t;
            std::hint::black_box(&copied);
            drop(copied);
            let round = message.data.first().copied().unwrap_or(u64::MAX);
            let sum = checksum_u64(&message.data);
            println!(
                "RECV {round} {callback} {decode_ns} {copy_ns} {} {} {sum} {mapping}",
                u8::from(view),
                message.data.len()
            );
        },
    )?;
    println!("READY");
    spin_forever(ctx, &node);
    Ok(())
}

fn subscribe_clouds(ctx: &Context) -> anyhow::Result<()> {
    let node = ctx.create_node("roslite_bench_large_sub")?;
    let _subscription =
        node.create_subscription(CLOUD_TOPIC, qos(), |message: Arc<PointCloud2>| {
            let callback = mono_ns();
            let view = message.data.is_view();
            let mapping = mapping_of(message.data.as_ptr());
            let sum = checksum_bytes(&message.data);
            println!(
                "RECV {} {callback} 0 0 {} {} {sum} {mapping}",
                message.header.stamp.sec,
                u8::from(view),
                message.data.len()
            );
        })?;
    println!("READY");
    spin_forever(ctx, &node);
    Ok(())
}

// -------------------------------------------------------------------------------------------
// Driving the helpers

/// A helper process with its stdout read line by line on a thread; killed and reaped when
/// dropped.
struct Peer {
    name: String,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Peer {
    fn spawn(name: &str, mut command: Command) -> anyhow::Result<Self> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting the {name}"))?;
        let stdout = child.stdout.take().context("internal bug: stdout")?;
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Self {
            name: name.to_owned(),
            stdin: child.stdin.take(),
            child,
            lines,
        })
    }

    /// The next line starting with `prefix` (other lines are skipped), within `timeout`.
    fn expect(&mut self, prefix: &str, timeout: Duration) -> anyhow::Result<String> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(rest) = line.strip_prefix(prefix) {
                        return Ok(rest.trim().to_owned());
                    }
                    if line.starts_with("BAD ") {
                        bail!("the {} could not decode a message: {line}", self.name);
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    bail!("the {} sent no {prefix:?} within {timeout:?}", self.name)
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let status = self.child.wait()?;
                    bail!("the {} exited ({status}) before {prefix:?}", self.name)
                }
            }
        }
    }

    fn say(&mut self, line: &str) -> anyhow::Result<()> {
        let stdin = self.stdin.as_mut().context("internal bug: stdin closed")?;
        writeln!(stdin, "{line}").with_context(|| format!("writing to the {}", self.name))?;
        stdin.flush()?;
        Ok(())
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = roslite_transport::netns::stop_gracefully(
            &mut self.child,
            roslite_transport::netns::STOP_GRACE,
        );
    }
}

/// Where a process-to-process row runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Path {
    /// Two processes on this host; `ROSLITE_TRANSPORTS` for both, `None`: the default.
    SameHost(Option<&'static str>),
    /// Two processes in two namespaces joined by a veth pair.
    TwoNamespaces,
}

impl Path {
    fn label(self) -> &'static str {
        match self {
            Path::SameHost(_) => "2 processes, 1 host",
            Path::TwoNamespaces => "2 netns over veth",
        }
    }

    fn over_udp(self) -> bool {
        matches!(self, Path::SameHost(Some("udp")) | Path::TwoNamespaces)
    }
}

/// One message's figures.
#[derive(Clone, Debug, Default)]
struct Sample {
    fill_ns: u64,
    serialize_ns: u64,
    publish_ns: u64,
    transfer_ns: u64,
    decode_ns: u64,
    copy_ns: u64,
    view: bool,
    mapping: String,
    intact: bool,
}

/// One table row: the samples of one path.
struct Row {
    path: &'static str,
    transport: String,
    elements: usize,
    wire_bytes: usize,
    note: Option<String>,
    samples: Vec<Sample>,
    lost: usize,
}

impl Row {
    fn median(&self, f: impl Fn(&Sample) -> u64) -> Option<u64> {
        let mut v: Vec<u64> = self.samples.iter().map(f).collect();
        v.sort_unstable();
        v.get(v.len().saturating_sub(1) / 2).copied()
    }

    fn percentile(&self, p: f64, f: impl Fn(&Sample) -> u64) -> Option<u64> {
        let mut v: Vec<u64> = self.samples.iter().map(f).collect();
        v.sort_unstable();
        let n = v.len();
        (n > 0).then(|| v[((p * n as f64).ceil() as usize).clamp(1, n) - 1])
    }

    fn received_as(&self) -> String {
        let Some(first) = self.samples.first() else {
            return "-".into();
        };
        let kind = if first.view { "view" } else { "copy" };
        format!("{kind} ({})", first.mapping)
    }

    fn intact(&self) -> String {
        let ok = self.samples.iter().filter(|s| s.intact).count();
        format!("{ok}/{}", self.samples.len() + self.lost)
    }
}

fn domain_for(index: u32) -> u32 {
    // Ten domains per bench process, apart from the test suites' (150 + ...).
    20 + (std::process::id() % 10) * 10 + index
}

fn peer_command(
    path: Path,
    pair: Option<&veth::VethPair>,
    role: &str,
    kind: &str,
    size: usize,
    domain: u32,
) -> anyhow::Result<Command> {
    let size = size.to_string();
    let args = [
        "bench",
        "large-peer",
        "--role",
        role,
        "--kind",
        kind,
        "--size",
        &size,
    ];
    let mut command = match (path, pair) {
        (Path::TwoNamespaces, Some(pair)) => {
            let (end, other) = if role == "pub" {
                (&pair.a, &pair.b)
            } else {
                (&pair.b, &pair.a)
            };
            let exe = std::env::current_exe().context("locating the roslite binary")?;
            let mut command = veth::VethPair::command(end, exe);
            command
                .args(args)
                .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "SUBNET")
                .env("ROS_STATIC_PEERS", other.address)
                .env_remove("ROSLITE_TRANSPORTS");
            command
        }
        (Path::TwoNamespaces, None) => bail!("internal bug: no namespaces"),
        (Path::SameHost(transports), _) => {
            let mut command = self_command(&args)?;
            command
                .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
                .env_remove("ROS_STATIC_PEERS");
            match transports {
                Some(t) => command.env("ROSLITE_TRANSPORTS", t),
                None => command.env_remove("ROSLITE_TRANSPORTS"),
            };
            command
        }
    };
    command
        .env("ROS_DOMAIN_ID", domain.to_string())
        .env_remove("ROSLITE_NETWORK")
        .env_remove("ROSLITE_FAULT_INJECTION");
    Ok(command)
}

/// Runs `rounds` messages between a publisher and a subscriber process.
#[allow(clippy::too_many_arguments)]
fn run_pair(
    path: Path,
    pair: Option<&veth::VethPair>,
    kind: &str,
    size: usize,
    warmup: usize,
    rounds: usize,
    domain: u32,
    timeout: Duration,
) -> anyhow::Result<(String, usize, Vec<Sample>, usize)> {
    let mut sub = Peer::spawn(
        "subscriber",
        peer_command(path, pair, "sub", kind, size, domain)?,
    )?;
    sub.expect("READY", MATCH_TIMEOUT)?;
    let mut publisher = Peer::spawn(
        "publisher",
        peer_command(path, pair, "pub", kind, size, domain)?,
    )?;
    let transport = publisher.expect("MATCHED ", MATCH_TIMEOUT)?;
    let mut samples = Vec::new();
    let mut lost = 0;
    let mut wire = 0;
    for round in 0..warmup + rounds {
        // Round numbers start at 1: a cloud's stamp and the array's first element carry them.
        let id = round + 1;
        publisher.say(&format!("SEND {id}"))?;
        let sent = publisher.expect("SENT ", timeout)?;
        let s: Vec<u64> = sent
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .with_context(|| format!("bad SENT line {sent:?}"))?;
        let [_, fill_ns, serialize_ns, t0, t1, sum, wire_bytes] = s[..] else {
            bail!("bad SENT line {sent:?}");
        };
        wire = wire_bytes as usize;
        let received = match sub.expect("RECV ", timeout) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("warning: {kind} round {id} over {transport}: {e:#}");
                lost += 1;
                continue;
            }
        };
        let r: Vec<&str> = received.split_whitespace().collect();
        let [got_round, callback, decode_ns, copy_ns, view, _len, got_sum, mapping] = r[..] else {
            bail!("bad RECV line {received:?}");
        };
        let num = |t: &str| t.parse::<u64>().with_context(|| format!("in {received:?}"));
        if num(got_round)? != id as u64 {
            bail!("round {id} answered by {received:?}: a stale message");
        }
        if round < warmup {
            continue;
        }
        samples.push(Sample {
            fill_ns,
            serialize_ns,
            publish_ns: t1 - t0,
            transfer_ns: num(callback)?.saturating_sub(t0),
            decode_ns: num(decode_ns)?,
            copy_ns: num(copy_ns)?,
            view: view == "1",
            mapping: mapping.to_owned(),
            intact: num(got_sum)? == sum,
        });
        std::thread::sleep(Duration::from_millis(20));
    }
    publisher.say("QUIT")?;
    Ok((transport, wire, samples, lost))
}

/// The study's intra-process case: one context, the message handed over by pointer.
fn run_intra(elements: usize, rounds: usize) -> anyhow::Result<Row> {
    let ctx = Context::new(ContextOptions::default())?;
    let node = ctx.create_node("roslite_bench_large")?;
    let (tx, rx) = mpsc::channel::<(u64, u64, usize, u64, u64)>();
    let _subscription = node.create_subscription(
        ARRAY_TOPIC,
        qos(),
        move |message: UInt64MultiArray, _info: &MessageInfo| {
            let callback = mono_ns();
            let t = mono_ns();
            let copied: Vec<u64> = message.data.to_vec();
            let copy_ns = mono_ns() - t;
            std::hint::black_box(&copied);
            drop(copied);
            let sum = checksum_u64(&message.data);
            // Ignoring a send error: the bench has given up on this round.
            let _ = tx.send((
                callback,
                copy_ns,
                message.data.as_ptr() as usize,
                sum,
                message.data.first().copied().unwrap_or(u64::MAX),
            ));
        },
    )?;
    let publisher = node.create_publisher::<UInt64MultiArray>(ARRAY_TOPIC, qos())?;
    let spinner = {
        let (ctx, node) = (ctx.clone(), node.clone());
        std::thread::spawn(move || spin_forever(&ctx, &node))
    };
    let mut samples = Vec::new();
    for round in 1..=rounds as u64 {
        let t = mono_ns();
        let values = fill(elements, round);
        let fill_ns = mono_ns() - t;
        let sum = checksum_u64(&values);
        let address = values.as_ptr() as usize;
        let message = UInt64MultiArray {
            data: values.into(),
            ..Default::default()
        };
        let t0 = mono_ns();
        publisher.publish(message)?;
        let t1 = mono_ns();
        let (callback, copy_ns, got_address, got_sum, got_round) =
            rx.recv_timeout(Duration::from_secs(60))?;
        anyhow::ensure!(got_round == round, "round {round}: got round {got_round}");
        samples.push(Sample {
            fill_ns,
            serialize_ns: 0,
            publish_ns: t1 - t0,
            transfer_ns: callback.saturating_sub(t0),
            decode_ns: 0,
            copy_ns,
            // The very vector that was published: nothing was copied or decoded.
            view: got_address == address,
            mapping: if got_address == address {
                "same buffer".into()
            } else {
                "copied".into()
            },
            intact: got_sum == sum,
        });
    }
    ctx.shutdown();
    spinner
        .join()
        .map_err(|_| anyhow::anyhow!("executor thread panicked"))?;
    Ok(Row {
        path: "intra-process",
        transport: "intra".into(),
        elements,
        wire_bytes: elements * 8,
        note: None,
        samples,
        lost: 0,
    })
}

/// This machine's copy floors for `bytes`: medians of a memcpy into memory already touched,
/// and of a copy into a fresh allocation (which pays the page faults, as a serializer writing
/// a new buffer does).
fn copy_floors(bytes: usize) -> (u64, u64) {
    let source = vec![0x5au8; bytes];
    let mut target = vec![0u8; bytes];
    let mut warm = Vec::new();
    let mut fresh = Vec::new();
    for _ in 0..3 {
        let t = mono_ns();
        target.copy_from_slice(&source);
        warm.push(mono_ns() - t);
        std::hint::black_box(&target);
        let t = mono_ns();
        let copy = source.to_vec();
        fresh.push(mono_ns() - t);
        drop(std::hint::black_box(copy));
    }
    warm.sort_unstable();
    fresh.sort_unstable();
    (warm[1], fresh[1])
}

/// The array's elements that fit one RTPS sample.
fn udp_elements(elements: usize) -> usize {
    elements.min((UDP_MAX_SAMPLE - ARRAY_OVERHEAD) / 8)
}

fn array_row(
    path: Path,
    pair: Option<&veth::VethPair>,
    elements: usize,
    rounds: usize,
    domain: u32,
) -> anyhow::Result<Row> {
    let (elements, note) = if path.over_udp() && udp_elements(elements) < elements {
        (
            udp_elements(elements),
            Some(format!(
                "capped at {} elements: roslite's RTPS backend accepts samples up to {} MiB",
                udp_elements(elements),
                UDP_MAX_SAMPLE >> 20
            )),
        )
    } else {
        (elements, None)
    };
    // UDP on loopback moves a few hundred MB/s; give a slow path minutes, not forever.
    let timeout = Duration::from_secs(60) + Duration::from_secs((elements / 1_000_000) as u64);
    let (transport, wire, samples, lost) =
        run_pair(path, pair, "array", elements, 0, rounds, domain, timeout)?;
    Ok(Row {
        path: path.label(),
        transport,
        elements,
        wire_bytes: wire,
        note,
        samples,
        lost,
    })
}

/// `kind`: `cloud`, or `cloud-loan` for the row written in place into a loan.
fn cloud_row(path: Path, kind: &str, samples: usize, domain: u32) -> anyhow::Result<Row> {
    let (transport, wire, samples, lost) = run_pair(
        path,
        None,
        kind,
        CLOUD_BYTES,
        2,
        samples,
        domain,
        Duration::from_secs(30),
    )?;
    let transport = if kind == "cloud-loan" {
        format!("{transport}, loaned")
    } else {
        transport
    };
    Ok(Row {
        path: path.label(),
        transport,
        elements: CLOUD_BYTES,
        wire_bytes: wire,
        note: None,
        samples,
        lost,
    })
}

pub fn run(args: &LargeArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.rounds >= 1, "--rounds must be at least 1");
    let elements = args.elements.unwrap_or(if args.quick {
        QUICK_ELEMENTS
    } else {
        FULL_ELEMENTS
    });
    anyhow::ensure!(elements >= 1, "--elements must be at least 1");
    let cloud_samples = args
        .cloud_samples
        .unwrap_or(if args.quick { 10 } else { 30 });
    let progress = |what: &str| {
        if !args.json {
            eprintln!("bench large: {what}...");
        }
    };
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    progress("intra-process");
    rows.push(run_intra(elements, args.rounds)?);
    let same_host = [
        Path::SameHost(None),
        Path::SameHost(Some("uds,udp")),
        Path::SameHost(Some("udp")),
    ];
    for (i, path) in same_host.into_iter().enumerate() {
        let Path::SameHost(env) = path else { continue };
        progress(&format!(
            "two processes, ROSLITE_TRANSPORTS={}",
            env.unwrap_or("(unset)")
        ));
        match array_row(path, None, elements, args.rounds, domain_for(i as u32)) {
            Ok(row) => rows.push(row),
            Err(e) => failures.push(format!("{}: {e:#}", path.label())),
        }
    }
    if args.skip_netns {
        failures.push("2 netns over veth: skipped (--skip-netns)".into());
    } else {
        progress("two network namespaces");
        let row = veth::VethPair::create().and_then(|pair| {
            array_row(
                Path::TwoNamespaces,
                Some(&pair),
                elements,
                args.rounds,
                domain_for(3),
            )
        });
        match row {
            Ok(row) => rows.push(row),
            Err(e) => failures.push(format!("2 netns over veth: {e:#}")),
        }
    }
    let mut clouds = Vec::new();
    if !args.skip_cloud {
        for (i, path) in same_host.into_iter().enumerate() {
            progress(&format!("55 MB point clouds, {}", path_env(path)));
            match cloud_row(path, "cloud", cloud_samples, domain_for(5 + i as u32)) {
                Ok(row) => clouds.push(row),
                Err(e) => failures.push(format!("point cloud, {}: {e:#}", path_env(path))),
            }
        }
        progress("55 MB point clouds, loaned and written in place, default transports");
        match cloud_row(
            Path::SameHost(None),
            "cloud-loan",
            cloud_samples,
            domain_for(8),
        ) {
            Ok(row) => clouds.push(row),
            Err(e) => failures.push(format!("point cloud, loaned: {e:#}")),
        }
    }
    progress("copy floors");
    let mut floors = vec![(elements * 8, copy_floors(elements * 8))];
    if !args.skip_cloud {
        floors.push((CLOUD_BYTES, copy_floors(CLOUD_BYTES)));
    }
    if args.json {
        print_json(elements, &rows, &clouds, &floors, &failures);
    } else {
        print_tables(elements, args.rounds, &rows, &clouds, &floors, &failures);
    }
    Ok(())
}

fn path_env(path: Path) -> String {
    match path {
        Path::SameHost(Some(t)) => format!("ROSLITE_TRANSPORTS={t}"),
        Path::SameHost(None) => "default transports".into(),
        Path::TwoNamespaces => "two namespaces".into(),
    }
}

fn opt_ms(v: Option<u64>) -> String {
    v.map_or("-".into(), |v| format!("{:.1}", ms(v)))
}

/// `(bytes, (warm memcpy ns, copy into fresh memory ns))`.
type Floors = [(usize, (u64, u64))];

fn print_tables(
    elements: usize,
    rounds: usize,
    rows: &[Row],
    clouds: &[Row],
    floors: &Floors,
    failures: &[String],
) {
    println!(
        "zero-copy / shared-memory large point cloud study: std_msgs/UInt64MultiArray of {elements} elements ({:.1} MB), {rounds} \
         message(s) per row, medians",
        elements as f64 * 8.0 / 1e6
    );
    println!(
        "  conversion: fill = build the Vec<u64>; serialize = CDR of the message (timed apart; \
         publish does it again for other processes); decode = from_shared on the receiver; \
         copy-out = received array into a Vec<u64> (the study's convert_to_custom)"
    );
    println!("  transfer: publish call -> subscription callback start (CLOCK_MONOTONIC)");
    println!(
        "{:<20} {:<9} {:>10} {:>9} {:>9} {:>10} {:>10} {:>12} {:>10} {:>11}  {:<22} {:>6}",
        "path",
        "transport",
        "elements",
        "MB",
        "fill ms",
        "serial. ms",
        "publish ms",
        "transfer ms",
        "decode ms",
        "copy-out ms",
        "received as",
        "intact"
    );
    for row in rows {
        println!(
            "{:<20} {:<9} {:>10} {:>9.1} {:>9} {:>10} {:>10} {:>12} {:>10} {:>11}  {:<22} {:>6}",
            row.path,
            row.transport,
            row.elements,
            row.wire_bytes as f64 / 1e6,
            opt_ms(row.median(|s| s.fill_ns)),
            if row.transport == "intra" {
                "none".into()
            } else {
                opt_ms(row.median(|s| s.serialize_ns))
            },
            opt_ms(row.median(|s| s.publish_ns)),
            opt_ms(row.median(|s| s.transfer_ns)),
            if row.transport == "intra" {
                "none".into()
            } else {
                row.median(|s| s.decode_ns)
                    .map_or("-".into(), |v| format!("{:.3}", ms(v)))
            },
            opt_ms(row.median(|s| s.copy_ns)),
            row.received_as(),
            row.intact(),
        );
        if let Some(note) = &row.note {
            println!("{:<20} ({note})", "");
        }
    }
    if !clouds.is_empty() {
        println!();
        println!(
            "sensor_msgs/PointCloud2 of {CLOUD_BYTES} bytes between two processes: one-way \
             latency (publish call -> callback start), {} messages after 2 warm-up",
            clouds.first().map_or(0, |r| r.samples.len())
        );
        println!(
            "  shm, loaned: Publisher::loan serializes the cloud with `data` reserved into a \
             shared-memory chunk (serialize = the loan call), the points are written in place \
             (fill, timed apart; the other rows build their cloud once, untimed, and serialize \
             it inside publish), then publish hands the chunk over"
        );
        println!(
            "{:<12} {:>9} {:>9} {:>9} {:>14} {:>13} {:>8}  {:<18} {:>6}  goal p50 < 1 ms",
            "transport",
            "p50 ms",
            "p90 ms",
            "max ms",
            "publish p50 ms",
            "serialize ms",
            "fill ms",
            "received as",
            "intact"
        );
        for row in clouds {
            let p50 = row.percentile(0.5, |s| s.transfer_ns);
            let filled_in_place = row.samples.iter().any(|s| s.fill_ns > 0);
            println!(
                "{:<12} {:>9} {:>9} {:>9} {:>14} {:>13} {:>8}  {:<18} {:>6}  {}",
                row.transport,
                p50.map_or("-".into(), |v| format!("{:.3}", ms(v))),
                row.percentile(0.9, |s| s.transfer_ns)
                    .map_or("-".into(), |v| format!("{:.3}", ms(v))),
                row.percentile(1.0, |s| s.transfer_ns)
                    .map_or("-".into(), |v| format!("{:.3}", ms(v))),
                row.percentile(0.5, |s| s.publish_ns)
                    .map_or("-".into(), |v| format!("{:.3}", ms(v))),
                row.median(|s| s.serialize_ns)
                    .map_or("-".into(), |v| format!("{:.3}", ms(v))),
                if filled_in_place {
                    opt_ms(row.median(|s| s.fill_ns))
                } else {
                    "-".into()
                },
                row.received_as(),
                row.intact(),
                match p50 {
                    Some(v) if v < 1_000_000 => "met",
                    Some(_) => "NOT met",
                    None => "-",
                }
            );
        }
    }
    println!();
    for (bytes, (warm, fresh)) in floors {
        println!(
            "this machine, {:.1} MB: memcpy {:.1} ms warm, {:.1} ms into fresh memory (page faults)",
            *bytes as f64 / 1e6,
            ms(*warm),
            ms(*fresh)
        );
    }
    for failure in failures {
        println!("not measured: {failure}");
    }
}

/// `--json`: the array rows, the point-cloud rows, the copy floors, and what was not measured.
#[derive(Serialize)]
struct Json<'a> {
    bench: &'static str,
    elements: usize,
    array: Vec<JsonRow<'a>>,
    cloud_bytes: usize,
    cloud: Vec<JsonRow<'a>>,
    copy_floors: Vec<JsonFloor>,
    not_measured: &'a [String],
}

/// A row's medians (and transfer percentiles) in ms, to 3 decimals; `null` without samples.
#[derive(Serialize)]
struct JsonRow<'a> {
    path: &'a str,
    transport: &'a str,
    elements: usize,
    wire_bytes: usize,
    samples: usize,
    lost: usize,
    intact: usize,
    received_as: String,
    note: Option<&'a str>,
    #[serde(serialize_with = "json::fixed3_opt")]
    fill_ms: Option<f64>,
    #[serde(serialize_with = "json::fixed3_opt")]
    serialize_ms: Option<f64>,
    #[serde(serialize_with = "json::fixed3_opt")]
    publish_ms: Option<f64>,
    #[serde(serialize_with = "json::fixed3_opt")]
    transfer_ms_p50: Option<f64>,
    #[serde(serialize_with = "json::fixed3_opt")]
    transfer_ms_p90: Option<f64>,
    #[serde(serialize_with = "json::fixed3_opt")]
    transfer_ms_max: Option<f64>,
    #[serde(serialize_with = "json::fixed3_opt")]
    decode_ms: Option<f64>,
    #[serde(serialize_with = "json::fixed3_opt")]
    copy_out_ms: Option<f64>,
}

#[derive(Serialize)]
struct JsonFloor {
    bytes: usize,
    #[serde(serialize_with = "json::fixed3")]
    memcpy_warm_ms: f64,
    #[serde(serialize_with = "json::fixed3")]
    copy_fresh_ms: f64,
}

fn row_json(row: &Row) -> JsonRow<'_> {
    let ms_of = |v: Option<u64>| v.map(ms);
    JsonRow {
        path: row.path,
        transport: &row.transport,
        elements: row.elements,
        wire_bytes: row.wire_bytes,
        samples: row.samples.len(),
        lost: row.lost,
        intact: row.samples.iter().filter(|s| s.intact).count(),
        received_as: row.received_as(),
        note: row.note.as_deref(),
        fill_ms: ms_of(row.median(|s| s.fill_ns)),
        serialize_ms: ms_of(row.median(|s| s.serialize_ns)),
        publish_ms: ms_of(row.median(|s| s.publish_ns)),
        transfer_ms_p50: ms_of(row.percentile(0.5, |s| s.transfer_ns)),
        transfer_ms_p90: ms_of(row.percentile(0.9, |s| s.transfer_ns)),
        transfer_ms_max: ms_of(row.percentile(1.0, |s| s.transfer_ns)),
        decode_ms: ms_of(row.median(|s| s.decode_ns)),
        copy_out_ms: ms_of(row.median(|s| s.copy_ns)),
    }
}

fn print_json(elements: usize, rows: &[Row], clouds: &[Row], floors: &Floors, failures: &[String]) {
    json::print(&Json {
        bench: "large",
        elements,
        array: rows.iter().map(row_json).collect(),
        cloud_bytes: CLOUD_BYTES,
        cloud: clouds.iter().map(row_json).collect(),
        copy_floors: floors
            .iter()
            .map(|&(bytes, (warm, fresh))| JsonFloor {
                bytes,
                memcpy_warm_ms: ms(warm),
                copy_fresh_ms: ms(fresh),
            })
            .collect(),
        not_measured: failures,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums_see_order_and_tail() {
        let a = [1u64, 2, 3];
        let b = [2u64, 1, 3];
        assert_ne!(checksum_u64(&a), checksum_u64(&b));
        let bytes: Vec<u8> = a.iter().flat_map(|x| x.to_le_bytes()).collect();
        assert_eq!(checksum_bytes(&bytes), checksum_u64(&a));
        // A partial last word counts (zero-padded).
        assert_ne!(checksum_bytes(&bytes[..17]), checksum_bytes(&bytes[..16]));
    }

    #[test]
    fn udp_rows_fit_one_rtps_sample() {
        let n = udp_elements(FULL_ELEMENTS);
        let message = UInt64MultiArray {
            data: vec![0u64; n].into(),
            ..Default::default()
        };
        let len = roslite_cdr::encoded_len(&message, roslite_cdr::Endianness::Little).unwrap();
        assert!(len <= UDP_MAX_SAMPLE, "{len}");
        // The study's full size fits since the limit is 1 GiB; anything bigger is capped to
        // the largest array that fits.
        assert_eq!(n, FULL_ELEMENTS);
        let capped = udp_elements(usize::MAX / 16);
        let capped_len = ARRAY_OVERHEAD + 8 * capped;
        assert!(capped_len <= UDP_MAX_SAMPLE && capped_len + 8 > UDP_MAX_SAMPLE);
        assert_eq!(udp_elements(10), 10);
    }
}
