//! Round trips between two processes on a bare roslite-shm transport (no serialization, no
//! executor), and this machine's floors, measured in the same run: what the sweep of `bench
//! rtt` sets its roslite series against.
//!
//! The program that runs these must call [`run_child_if_requested`] first thing in `main`:
//! they re-execute the current binary as the echo process.
//!
//! - [`rtt`]: ping carries `size` bytes, the echo process answers with a sample of the same
//!   size. Over shared memory only the first 8 bytes (the sequence number) are written on each
//!   side: the transport's cost is independent of the size, and the copy a real publisher would
//!   do is what [`memcpy_floor`] measures. Over Unix sockets the bytes really travel both ways.
//! - Floors: [`futex_floor`] (two processes waking each other through a futex word in shared
//!   memory), [`raw_uds_floor`] (a SOCK_SEQPACKET socket pair, no framing) and [`memcpy_floor`].
//!
//! The echo of a floor gets its end (the shared page's memfd, or its socket) as its standard
//! input, so that no descriptor number has to be passed and adopted.

use std::fmt::Write as _;
use std::io::{self, BufRead, BufReader};
use std::os::fd::{AsFd, OwnedFd};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::SeqCst;
use std::time::{Duration, Instant};

use roslite_shm::{
    ConnectError, Endpoint, EndpointAddress, FutexWords, History, IdleSpin, ReaderConfig,
    ShmReader, ShmWriter, UdsReader, UdsReaderConfig, UdsWriter, UdsWriterConfig, WriterConfig,
    WriterKey, PACKET, UDS_SEND_BUFFER,
};
use rustix::io::Errno;
use rustix::thread::futex;
use serde::Serialize;

use super::memory::{ProcMemory, TouchedPages};

/// The echo role a process of this binary runs ([`run_child_if_requested`]), and its argument.
const ROLE_ENV: &str = "ROSLITE_BENCH_ECHO";
const ARG_ENV: &str = "ROSLITE_BENCH_ECHO_ARG";
const PING: u128 = 1;
const PONG: u128 = 2;

/// Which same-host transport to measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BenchTransport {
    Shm,
    Uds,
}

impl BenchTransport {
    pub fn name(self) -> &'static str {
        match self {
            BenchTransport::Shm => "shm",
            BenchTransport::Uds => "uds",
        }
    }
}

/// How pings are paced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pace {
    /// `count` pings at `hz` (the IPC framework comparison for ROS 2 local communication sent
    /// 100 at 10 Hz).
    Rate { hz: u32, count: usize },
    /// `count` pings, each sent as soon as the previous echo arrived.
    BackToBack { count: usize },
}

impl Pace {
    fn count(self) -> usize {
        match self {
            Pace::Rate { count, .. } | Pace::BackToBack { count } => count,
        }
    }
}

/// The sizes of the IPC framework comparison for ROS 2 local communication (256 B to 4 MiB),
/// plus 64 B for the comparison with the floors.
pub const DEFAULT_SIZES: [usize; 9] = [
    64,
    256,
    1 << 10,
    4 << 10,
    16 << 10,
    64 << 10,
    256 << 10,
    1 << 20,
    4 << 20,
];

/// Latency summary of one series, in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    pub samples: usize,
    #[serde(serialize_with = "super::json::fixed2")]
    pub p50_us: f64,
    #[serde(serialize_with = "super::json::fixed2")]
    pub p99_us: f64,
    #[serde(serialize_with = "super::json::fixed2")]
    pub max_us: f64,
    /// At a rate: the median count of the echo process's pages touched per ping (see
    /// [`TouchedPages`]); `None` back to back, or where `/proc` could not tell.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub echo_pages_per_ping: Option<u64>,
}

impl Summary {
    pub fn of(mut durations: Vec<Duration>) -> Summary {
        if durations.is_empty() {
            return Summary::default();
        }
        durations.sort();
        let at = |q: f64| {
            let index = ((durations.len() as f64 - 1.0) * q).round() as usize;
            durations[index.min(durations.len() - 1)].as_secs_f64() * 1e6
        };
        Summary {
            samples: durations.len(),
            p50_us: at(0.5),
            p99_us: at(0.99),
            max_us: at(1.0),
            echo_pages_per_ping: None,
        }
    }
}

/// One size of an [`rtt`] run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RttRow {
    pub size: usize,
    pub rtt: Summary,
    /// The pinging (sending) process's resident set after the series.
    pub sender_rss_kib: u64,
}

/// Measures round trips over `transport` for each size; `warmup` pings per size are not counted.
///
/// # Errors
/// When the echo process cannot be started or the transport fails.
pub fn rtt(
    transport: BenchTransport,
    sizes: &[usize],
    pace: Pace,
    warmup: usize,
) -> io::Result<Vec<RttRow>> {
    // Both sides wait as the API path's reader threads do (the echo reads the same variable).
    let mut spin = IdleSpin::from_env().map_err(io::Error::other)?;
    let endpoint = Endpoint::bind().map_err(io::Error::other)?;
    let (mut child, address) = spawn_echo(transport.name(), &endpoint.address().to_string(), None)?;
    let result = (|| {
        let address: EndpointAddress = address.parse().map_err(io::Error::other)?;
        let mut rows = Vec::new();
        match transport {
            BenchTransport::Shm => {
                let writer =
                    ShmWriter::create(&endpoint, WriterKey::from(PING), WriterConfig::default())
                        .map_err(io::Error::other)?;
                let reader = connect_retrying(|| {
                    ShmReader::connect(
                        &endpoint,
                        &address,
                        WriterKey::from(PONG),
                        shm_reader_config(),
                    )
                })?;
                wait_until(|| writer.stats().readers == 1)?;
                for &size in sizes {
                    let rtt = ping_series(pace, warmup, &child, |seq| {
                        let loan = writer.loan(size).map_err(io::Error::other)?;
                        let loan = loan
                            .write_with(|bytes| stamp(bytes, seq))
                            .map_err(io::Error::other)?;
                        loan.send(0).map_err(io::Error::other)?;
                        // Blocking without a timeout, and looking again before sleeping, as the
                        // API path's reader thread does; a dead echo hangs up, which ends the
                        // wait.
                        let echo = reader
                            .receive_spinning(&mut spin)
                            .map_err(io::Error::other)?;
                        check_echo(Some(&echo), seq, size)
                    })?;
                    rows.push(RttRow {
                        size,
                        rtt,
                        sender_rss_kib: ProcMemory::of(None).map_or(0, |m| m.vm_rss_kib),
                    });
                }
            }
            BenchTransport::Uds => {
                let writer =
                    UdsWriter::create(&endpoint, WriterKey::from(PING), UdsWriterConfig::default())
                        .map_err(io::Error::other)?;
                let reader = connect_retrying(|| {
                    UdsReader::connect(&address, WriterKey::from(PONG), uds_reader_config())
                })?;
                wait_until(|| writer.stats().readers == 1)?;
                for &size in sizes {
                    let mut payload = vec![0u8; size];
                    let rtt = ping_series(pace, warmup, &child, |seq| {
                        stamp(&mut payload, seq)?;
                        writer.send(&payload, 0).map_err(io::Error::other)?;
                        // Blocking without a timeout, and looking again before sleeping, as the
                        // API path's reader thread does; a dead echo hangs up, which ends the
                        // wait.
                        let echo = reader
                            .receive_spinning(&mut spin)
                            .map_err(io::Error::other)?;
                        check_echo(Some(&echo), seq, size)
                    })?;
                    rows.push(RttRow {
                        size,
                        rtt,
                        sender_rss_kib: ProcMemory::of(None).map_or(0, |m| m.vm_rss_kib),
                    });
                }
            }
        }
        Ok(rows)
    })();
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// Round trips of two processes waking each other through futex words in a shared mapping, back
/// to back.
///
/// # Errors
/// When the mapping or the child process cannot be made.
pub fn futex_floor(count: usize) -> io::Result<Summary> {
    futex_floor_paced(Pace::BackToBack { count }, count / 10)
}

/// [`futex_floor`] paced like an [`rtt`] series (at a rate, caches and idle CPUs are as cold
/// for the floor as for the transport compared with it); `warmup` pings are not counted.
///
/// # Errors
/// As [`futex_floor`].
pub fn futex_floor_paced(pace: Pace, warmup: usize) -> io::Result<Summary> {
    let words = FutexWords::create()?;
    let their_end = words.fd().try_clone_to_owned()?;
    let (mut child, ready) = spawn_echo("futex", "", Some(their_end))?;
    let result = (|| {
        if ready != "ready" {
            return Err(io::Error::other("futex echo did not start"));
        }
        let (ping, pong) = (words.first(), words.second());
        let summary = ping_series(pace, warmup, &child, |i| {
            // Sequence numbers from 1 (the echo starts from 0), never u32::MAX (the stop word).
            let seq = (i % u64::from(u32::MAX - 1)) as u32 + 1;
            ping.store(seq, SeqCst);
            futex_wake_all(ping);
            loop {
                let seen = pong.load(SeqCst);
                if seen == seq {
                    return Ok(());
                }
                // No timeout, as the transports' readers wait: a timeout arms a kernel timer
                // per wait, which would raise the floor by about 0.5 us per round trip.
                futex_wait(pong, seen);
            }
        })?;
        ping.store(u32::MAX, SeqCst);
        futex_wake_all(ping);
        Ok(summary)
    })();
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// Round trips of `size` bytes over a SOCK_SEQPACKET socket pair (packets of at most
/// [`PACKET`] bytes), without any framing or bookkeeping, back to back.
///
/// # Errors
/// When the sockets or the child process cannot be made.
pub fn raw_uds_floor(size: usize, count: usize) -> io::Result<Summary> {
    raw_uds_floor_paced(size, Pace::BackToBack { count }, count / 10)
}

/// [`raw_uds_floor`] paced like an [`rtt`] series; `warmup` pings are not counted.
///
/// # Errors
/// As [`raw_uds_floor`].
pub fn raw_uds_floor_paced(size: usize, pace: Pace, warmup: usize) -> io::Result<Summary> {
    use rustix::net::{AddressFamily, SocketFlags, SocketType};
    let (mine, theirs) = rustix::net::socketpair(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )?;
    // The buffers the transport asks for, so the floor is never held back by smaller ones.
    let _ = rustix::net::sockopt::set_socket_send_buffer_size(&mine, UDS_SEND_BUFFER);
    let _ = rustix::net::sockopt::set_socket_send_buffer_size(&theirs, UDS_SEND_BUFFER);
    let (mut child, ready) = spawn_echo("rawuds", &size.to_string(), Some(theirs))?;
    let result = (|| {
        if ready != "ready" {
            return Err(io::Error::other("raw socket echo did not start"));
        }
        let payload = vec![7u8; size.max(1)];
        let mut buf = vec![0u8; size.max(1)];
        ping_series(pace, warmup, &child, |_| {
            raw_send(&mine, &payload)?;
            raw_recv(&mine, &mut buf)
        })
    })();
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// Time to copy `size` bytes between two buffers (both already faulted in).
pub fn memcpy_floor(size: usize, count: usize) -> Summary {
    let source = vec![1u8; size];
    let mut target = vec![0u8; size];
    let series = (0..count)
        .map(|i| {
            let start = Instant::now();
            target.copy_from_slice(&source);
            std::hint::black_box(&mut target)[i % size.max(1)] ^= 1;
            start.elapsed()
        })
        .collect();
    Summary::of(series)
}

/// Everything `roslite bench rtt` prints for one transport.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub transport: BenchTransport,
    pub pace: Pace,
    pub rows: Vec<RttRow>,
    pub futex_floor: Summary,
    /// Per size.
    pub raw_uds_floor: Vec<(usize, Summary)>,
    /// Per size.
    pub memcpy_floor: Vec<(usize, Summary)>,
}

/// Runs [`rtt`] and every floor for `sizes`.
///
/// # Errors
/// As [`rtt`].
pub fn run(transport: BenchTransport, sizes: &[usize], pace: Pace) -> io::Result<Report> {
    let warmup = (pace.count() / 10).max(1);
    let rows = rtt(transport, sizes, pace, warmup)?;
    let floor_count = pace.count().max(1000);
    let futex = futex_floor(floor_count)?;
    let mut raw = Vec::new();
    let mut memcpy = Vec::new();
    for &size in sizes {
        raw.push((size, raw_uds_floor(size, pace.count().max(200))?));
        memcpy.push((size, memcpy_floor(size, 200)));
    }
    Ok(Report {
        transport,
        pace,
        rows,
        futex_floor: futex,
        raw_uds_floor: raw,
        memcpy_floor: memcpy,
    })
}

impl Report {
    /// The table printed by the CLI.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "transport {} pace {:?}; futex floor p50 {:.1} us p99 {:.1} us",
            self.transport.name(),
            self.pace,
            self.futex_floor.p50_us,
            self.futex_floor.p99_us
        );
        let _ = writeln!(
            out,
            "{:>9} {:>10} {:>10} {:>10} {:>12} {:>13} {:>11}",
            "size", "p50_us", "p99_us", "max_us", "raw_uds_p50", "memcpy_p50_us", "sender_rss_kib"
        );
        for row in &self.rows {
            let raw = lookup(&self.raw_uds_floor, row.size);
            let memcpy = lookup(&self.memcpy_floor, row.size);
            let _ = writeln!(
                out,
                "{:>9} {:>10.1} {:>10.1} {:>10.1} {:>12.1} {:>13.2} {:>11}",
                row.size,
                row.rtt.p50_us,
                row.rtt.p99_us,
                row.rtt.max_us,
                raw.p50_us,
                memcpy.p50_us,
                row.sender_rss_kib
            );
        }
        out
    }

    /// One JSON object (units in the key names).
    pub fn json(&self) -> String {
        #[derive(Serialize)]
        struct Json {
            transport: &'static str,
            pace: String,
            futex_floor: Summary,
            rows: Vec<Row>,
        }
        #[derive(Serialize)]
        struct Row {
            size_bytes: usize,
            rtt: Summary,
            raw_uds_floor: Summary,
            memcpy_floor: Summary,
            sender_rss_kib: u64,
        }
        super::json::to_line(&Json {
            transport: self.transport.name(),
            pace: format!("{:?}", self.pace),
            futex_floor: self.futex_floor,
            rows: self
                .rows
                .iter()
                .map(|r| Row {
                    size_bytes: r.size,
                    rtt: r.rtt,
                    raw_uds_floor: lookup(&self.raw_uds_floor, r.size),
                    memcpy_floor: lookup(&self.memcpy_floor, r.size),
                    sender_rss_kib: r.sender_rss_kib,
                })
                .collect(),
        })
    }

    /// The p50 round trip at `size`, if measured.
    pub fn p50_us(&self, size: usize) -> Option<f64> {
        self.rows
            .iter()
            .find(|r| r.size == size)
            .map(|r| r.rtt.p50_us)
    }
}

fn lookup(rows: &[(usize, Summary)], size: usize) -> Summary {
    rows.iter()
        .find(|(s, _)| *s == size)
        .map(|(_, s)| *s)
        .unwrap_or_default()
}

/// Runs the echo role this process was started for, then exits; returns at once otherwise.
pub fn run_child_if_requested() {
    let Ok(role) = std::env::var(ROLE_ENV) else {
        return;
    };
    let arg = std::env::var(ARG_ENV).unwrap_or_default();
    let outcome = match role.as_str() {
        "shm" => echo_shm(&arg),
        "uds" => echo_uds(&arg),
        "futex" => echo_futex(),
        "rawuds" => echo_raw_uds(&arg),
        _ => Err(io::Error::other("unknown benchmark role")),
    };
    std::process::exit(i32::from(outcome.is_err()));
}

/// Starts this binary as the echo `role` with `arg`, `stdin` as its standard input (a
/// floor's end) or this process's; returns it and the first line it printed (an endpoint
/// address, or `ready`).
fn spawn_echo(role: &str, arg: &str, stdin: Option<OwnedFd>) -> io::Result<(Child, String)> {
    let mut command = Command::new(std::env::current_exe()?);
    command
        .env(ROLE_ENV, role)
        .env(ARG_ENV, arg)
        .stdout(Stdio::piped());
    if let Some(fd) = stdin {
        command.stdin(Stdio::from(fd));
    }
    let mut child = command.spawn()?;
    let mut line = String::new();
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| io::Error::other("no stdout"))?;
    BufReader::new(stdout).read_line(&mut line)?;
    Ok((child, line.trim().to_owned()))
}

fn echo_shm(parent: &str) -> io::Result<()> {
    let mut spin = IdleSpin::from_env().map_err(io::Error::other)?;
    let endpoint = Endpoint::bind().map_err(io::Error::other)?;
    let writer = ShmWriter::create(&endpoint, WriterKey::from(PONG), WriterConfig::default())
        .map_err(io::Error::other)?;
    println!("{}", endpoint.address());
    let parent: EndpointAddress = parent.parse().map_err(io::Error::other)?;
    let reader = connect_retrying(|| {
        ShmReader::connect(
            &endpoint,
            &parent,
            WriterKey::from(PING),
            shm_reader_config(),
        )
    })?;
    loop {
        let ping = reader
            .receive_spinning(&mut spin)
            .map_err(io::Error::other)?;
        let seq = seq_of(&ping);
        let size = ping.len();
        drop(ping);
        let loan = writer.loan(size).map_err(io::Error::other)?;
        loan.write_with(|bytes| stamp(bytes, seq))
            .map_err(io::Error::other)?
            .send(0)
            .map_err(io::Error::other)?;
    }
}

fn echo_uds(parent: &str) -> io::Result<()> {
    let mut spin = IdleSpin::from_env().map_err(io::Error::other)?;
    let endpoint = Endpoint::bind().map_err(io::Error::other)?;
    let writer = UdsWriter::create(&endpoint, WriterKey::from(PONG), UdsWriterConfig::default())
        .map_err(io::Error::other)?;
    println!("{}", endpoint.address());
    let parent: EndpointAddress = parent.parse().map_err(io::Error::other)?;
    let reader = connect_retrying(|| {
        UdsReader::connect(&parent, WriterKey::from(PING), uds_reader_config())
    })?;
    loop {
        let ping = reader
            .receive_spinning(&mut spin)
            .map_err(io::Error::other)?;
        writer.send(&ping, 0).map_err(io::Error::other)?;
    }
}

/// The futex floor's echo: the shared page's memfd is its standard input.
fn echo_futex() -> io::Result<()> {
    let words = FutexWords::open(std::io::stdin().as_fd())?;
    let (ping, pong) = (words.first(), words.second());
    println!("ready");
    let mut last = 0;
    loop {
        let seen = ping.load(SeqCst);
        if seen == u32::MAX {
            return Ok(());
        }
        if seen == last {
            futex_wait(ping, seen);
            continue;
        }
        last = seen;
        pong.store(seen, SeqCst);
        futex_wake_all(pong);
    }
}

/// The raw socket floor's echo of `size`-byte pings: its socket is its standard input.
fn echo_raw_uds(size: &str) -> io::Result<()> {
    let size: usize = size.parse().map_err(|_| io::Error::other("no size"))?;
    let stdin = std::io::stdin();
    let sock = stdin.as_fd();
    let mut buf = vec![0u8; size.max(1)];
    println!("ready");
    loop {
        raw_recv(sock, &mut buf)?;
        raw_send(sock, &buf)?;
    }
}

/// Blocks while `word == expected`, without a timeout (a timeout arms a kernel timer per wait,
/// which would raise the floor by about 0.5 us per round trip). A shared futex, not a
/// process-private one: the wake comes from the other process.
fn futex_wait(word: &AtomicU32, expected: u32) {
    // EAGAIN (value changed) and EINTR both mean "look again".
    let _ = futex::wait(word, futex::Flags::empty(), expected, None);
}

fn futex_wake_all(word: &AtomicU32) {
    let _ = futex::wake(word, futex::Flags::empty(), u32::MAX);
}

/// Retries a system call interrupted by a signal; maps the error to `io::Error`.
fn retry<T>(mut call: impl FnMut() -> Result<T, Errno>) -> io::Result<T> {
    loop {
        match call() {
            Err(Errno::INTR) => continue,
            other => return other.map_err(io::Error::from),
        }
    }
}

fn raw_send(sock: impl AsFd, bytes: &[u8]) -> io::Result<()> {
    for piece in bytes.chunks(PACKET) {
        retry(|| rustix::net::send(&sock, piece, rustix::net::SendFlags::NOSIGNAL))?;
    }
    Ok(())
}

fn raw_recv(sock: impl AsFd, buf: &mut [u8]) -> io::Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        let n = retry(|| {
            rustix::net::recv(&sock, &mut buf[filled..], rustix::net::RecvFlags::empty())
                .map(|(n, _)| n)
        })?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        filled += n;
    }
    Ok(())
}

/// The round trips of `warmup` + `pace.count()` pings, the warm-up ones not kept; at a rate,
/// the `echo` process's pages touched per ping are counted during the warm-up (one window per
/// ping, see [`TouchedPages`]), so that clearing its accessed bits, which flushes its TLB,
/// disturbs no measured ping.
fn ping_series(
    pace: Pace,
    warmup: usize,
    echo: &Child,
    mut ping: impl FnMut(u64) -> io::Result<()>,
) -> io::Result<Summary> {
    let mut series = Vec::with_capacity(pace.count());
    let period = match pace {
        Pace::Rate { hz, .. } => Some(Duration::from_secs(1) / hz.max(1)),
        Pace::BackToBack { .. } => None,
    };
    let mut pages = period.map(|_| TouchedPages::of(echo.id()));
    let mut next = Instant::now();
    for i in 0..warmup + pace.count() {
        if let Some(period) = period {
            let now = Instant::now();
            if next > now {
                std::thread::sleep(next - now);
            }
            next += period;
        }
        if let Some(pages) = &mut pages {
            pages.before_ping(i, warmup);
        }
        let start = Instant::now();
        ping(i as u64)?;
        if i >= warmup {
            series.push(start.elapsed());
        }
    }
    Ok(Summary {
        echo_pages_per_ping: pages.and_then(|p| p.median()),
        ..Summary::of(series)
    })
}

fn stamp(bytes: &mut [u8], seq: u64) -> io::Result<usize> {
    let len = bytes.len();
    if let Some(head) = bytes.get_mut(..8) {
        head.copy_from_slice(&seq.to_le_bytes());
    }
    Ok(len)
}

fn seq_of(bytes: &[u8]) -> u64 {
    bytes
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .map_or(u64::MAX, u64::from_le_bytes)
}

fn check_echo(echo: Option<&[u8]>, seq: u64, size: usize) -> io::Result<()> {
    match echo {
        Some(bytes) if bytes.len() == size && (size < 8 || seq_of(bytes) == seq) => Ok(()),
        Some(_) => Err(io::Error::other("echo of the wrong sample")),
        None => Err(io::Error::other("no echo within 10 s")),
    }
}

fn shm_reader_config() -> ReaderConfig {
    ReaderConfig {
        history: History::KeepLast(1),
        max_held: 2,
        ..ReaderConfig::default()
    }
}

fn uds_reader_config() -> UdsReaderConfig {
    UdsReaderConfig {
        history: History::KeepLast(1),
        ..UdsReaderConfig::default()
    }
}

/// The echo's writer may not exist yet when we first try.
fn connect_retrying<R>(mut connect: impl FnMut() -> Result<R, ConnectError>) -> io::Result<R> {
    let start = Instant::now();
    loop {
        match connect() {
            Ok(reader) => return Ok(reader),
            Err(e) if start.elapsed() > Duration::from_secs(5) => return Err(io::Error::other(e)),
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

fn wait_until(mut condition: impl FnMut() -> bool) -> io::Result<()> {
    let start = Instant::now();
    while !condition() {
        if start.elapsed() > Duration::from_secs(5) {
            return Err(io::Error::other("the echo process never connected"));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}
