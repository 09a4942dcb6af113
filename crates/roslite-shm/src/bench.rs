//! Round-trip benchmarks between two processes, with this machine's floors measured in the
//! same run (figures, not tests).
//!
//! The program that runs a benchmark must call [`run_child_if_requested`] first thing in
//! `main`: the benchmark re-executes the current binary as the echo process.
//!
//! - [`rtt`]: ping carries `size` bytes, the echo process answers with a sample of the same
//!   size. Over shared memory only the first 8 bytes (the sequence number) are written on each
//!   side: the transport's cost is independent of the size, and the copy a real publisher would
//!   do is what [`memcpy_floor`] measures. Over Unix sockets the bytes really travel both ways.
//! - Floors: [`futex_floor`] (two processes waking each other through a futex word in shared
//!   memory), [`raw_uds_floor`] (a SOCK_SEQPACKET socket pair, no framing) and [`memcpy_floor`].

use std::fmt::Write as _;
use std::io::{self, BufRead, BufReader};
use std::os::fd::{AsFd, OwnedFd};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering::SeqCst;
use std::time::{Duration, Instant};

use crate::sys::{self, Mapping};
use crate::IdleSpin;
use crate::{
    Endpoint, EndpointAddress, History, ReaderConfig, ShmReader, ShmWriter, UdsReader,
    UdsReaderConfig, UdsWriter, UdsWriterConfig, WriterConfig, WriterKey,
};

const ROLE_ENV: &str = "ROSLITE_SHM_BENCH_CHILD";
const ARG_ENV: &str = "ROSLITE_SHM_BENCH_ARG";
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
    /// `count` pings at `hz` (seed 002: 10 Hz, 100 messages).
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

/// The sizes of seed 002 (256 B to 4 MiB), plus 64 B for the comparison with the floors.
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
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    pub samples: usize,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    /// At a rate: the median count of the echo process's pages touched per ping (see
    /// [`TouchedPages`]); `None` back to back, or where `/proc` could not tell.
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
                        sender_rss_kib: rss_kib(),
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
                        sender_rss_kib: rss_kib(),
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
    let fd = sys::memfd("roslite-bench-futex", 4096)?;
    let map = Mapping::map(fd.as_fd(), 4096, true)?;
    let raw = sys::inherit(&fd)?;
    let (mut child, ready) = spawn_echo("futex", "", Some(raw.to_string()))?;
    let result = (|| {
        if ready != "ready" {
            return Err(io::Error::other("futex echo did not start"));
        }
        let (ping, pong) = (map.atomic_u32(0), map.atomic_u32(64));
        let summary = ping_series(pace, warmup, &child, |i| {
            // Sequence numbers from 1 (the echo starts from 0), never u32::MAX (the stop word).
            let seq = (i % u64::from(u32::MAX - 1)) as u32 + 1;
            ping.store(seq, SeqCst);
            sys::futex_wake_all(ping);
            loop {
                let seen = pong.load(SeqCst);
                if seen == seq {
                    return Ok(());
                }
                // No timeout, as the transports' readers wait: a timeout arms a kernel timer
                // per wait, which would raise the floor by about 0.5 us per round trip.
                sys::futex_wait(pong, seen, None);
            }
        })?;
        ping.store(u32::MAX, SeqCst);
        sys::futex_wake_all(ping);
        Ok(summary)
    })();
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// Round trips of `size` bytes over a SOCK_SEQPACKET socket pair (packets of at most
/// [`crate::PACKET`] bytes), without any framing or bookkeeping, back to back.
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
    let _ = rustix::net::sockopt::set_socket_send_buffer_size(&mine, crate::uds::SEND_BUFFER);
    let _ = rustix::net::sockopt::set_socket_send_buffer_size(&theirs, crate::uds::SEND_BUFFER);
    let raw = sys::inherit(&theirs)?;
    let (mut child, ready) = spawn_echo("rawuds", "", Some(format!("{raw} {size}")))?;
    drop(theirs);
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
        let summary = |s: &Summary| {
            let pages = s
                .echo_pages_per_ping
                .map_or(String::new(), |n| format!(",\"echo_pages_per_ping\":{n}"));
            format!(
                "{{\"samples\":{},\"p50_us\":{:.2},\"p99_us\":{:.2},\"max_us\":{:.2}{pages}}}",
                s.samples, s.p50_us, s.p99_us, s.max_us
            )
        };
        let rows: Vec<String> = self
            .rows
            .iter()
            .map(|r| format!("{{\"size_bytes\":{},\"rtt\":{},\"raw_uds_floor\":{},\"memcpy_floor\":{},\"sender_rss_kib\":{}}}", r.size, summary(&r.rtt), summary(&lookup(&self.raw_uds_floor, r.size)), summary(&lookup(&self.memcpy_floor, r.size)), r.sender_rss_kib))
            .collect();
        format!(
            "{{\"transport\":\"{}\",\"pace\":\"{:?}\",\"futex_floor\":{},\"rows\":[{}]}}",
            self.transport.name(),
            self.pace,
            summary(&self.futex_floor),
            rows.join(",")
        )
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
        "futex" => echo_futex(&arg),
        "rawuds" => echo_raw_uds(&arg),
        _ => Err(io::Error::other("unknown benchmark role")),
    };
    std::process::exit(i32::from(outcome.is_err()));
}

fn spawn_echo(role: &str, arg: &str, extra: Option<String>) -> io::Result<(Child, String)> {
    let mut child = Command::new(std::env::current_exe()?)
        .env(ROLE_ENV, role)
        .env(ARG_ENV, extra.unwrap_or_else(|| arg.to_owned()))
        .stdout(Stdio::piped())
        .spawn()?;
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

fn echo_futex(arg: &str) -> io::Result<()> {
    let fd = arg
        .parse()
        .ok()
        .and_then(sys::adopt_inherited)
        .ok_or_else(|| io::Error::other("no futex fd"))?;
    let map = Mapping::map(fd.as_fd(), 4096, true)?;
    let (ping, pong) = (map.atomic_u32(0), map.atomic_u32(64));
    println!("ready");
    let mut last = 0;
    loop {
        let seen = ping.load(SeqCst);
        if seen == u32::MAX {
            return Ok(());
        }
        if seen == last {
            sys::futex_wait(ping, seen, None);
            continue;
        }
        last = seen;
        pong.store(seen, SeqCst);
        sys::futex_wake_all(pong);
    }
}

fn echo_raw_uds(arg: &str) -> io::Result<()> {
    let mut parts = arg.split(' ');
    let fd = parts
        .next()
        .and_then(|p| p.parse().ok())
        .and_then(sys::adopt_inherited)
        .ok_or_else(|| io::Error::other("no socket fd"))?;
    let size: usize = parts
        .next()
        .and_then(|p| p.parse().ok())
        .ok_or_else(|| io::Error::other("no size"))?;
    let mut buf = vec![0u8; size.max(1)];
    println!("ready");
    loop {
        raw_recv(&fd, &mut buf)?;
        raw_send(&fd, &buf)?;
    }
}

fn raw_send(sock: &OwnedFd, bytes: &[u8]) -> io::Result<()> {
    for piece in bytes.chunks(crate::PACKET) {
        sys::retry(|| rustix::net::send(sock, piece, rustix::net::SendFlags::NOSIGNAL))?;
    }
    Ok(())
}

fn raw_recv(sock: &OwnedFd, buf: &mut [u8]) -> io::Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        let n = sys::retry(|| {
            rustix::net::recv(sock, &mut buf[filled..], rustix::net::RecvFlags::empty())
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

/// Counts the pages of another process's memory touched between two moments, from the
/// kernel's accessed bits: writing `1` to `/proc/<pid>/clear_refs` clears them, and the
/// `Referenced:` lines of `/proc/<pid>/smaps` then sum, per mapping, what was touched since.
///
/// Why count pages: at a rate, every ping meets cold caches and TLBs, and on this kind of VM
/// each distinct page a path touches costs a few hundred nanoseconds then (a TLB walk and
/// cache misses), against about ten back to back. The count is code, data, stacks and shared
/// memory alike; it is the echo's footprint per message, and it varies far less between runs
/// than the latency it explains.
///
/// What it cannot see: the CPU sets a page's accessed bit when it walks the page tables, and
/// on this kernel clearing the bits does not flush the TLB, so a page whose translation is
/// still cached is touched without being counted (a process touching the same 64 pages right
/// after a clear was credited with 3 to 58). After a sleep of a period the translations are
/// gone (the same process, 100 ms later: all 64 plus its own). At a rate the echo sleeps a
/// whole period between pings, so the count is the pages a ping touches cold; back to back it
/// would undercount, which is why only rate mode counts.
///
/// Each window should hold exactly one ping: open one right before a ping and the next right
/// before the following ping. Pages the process touches on its own in between (a discovery
/// announcement) land in some windows; [`Self::median`] sets those aside. When `/proc` refuses
/// (the process is gone, or not ours), counting stops and the figure is missing, not wrong.
pub struct TouchedPages {
    pid: u32,
    open: bool,
    failed: bool,
    windows: Vec<u64>,
}

impl TouchedPages {
    pub fn of(pid: u32) -> Self {
        Self {
            pid,
            open: false,
            failed: false,
            windows: Vec::new(),
        }
    }

    /// Right before ping number `index` (from 0) of a series whose first `warmup` pings are
    /// not measured: one window per warm-up ping, the last closed as the first measured ping
    /// goes out, none after.
    pub fn before_ping(&mut self, index: usize, warmup: usize) {
        match index.cmp(&warmup) {
            std::cmp::Ordering::Less => self.next_window(),
            std::cmp::Ordering::Equal => self.close_window(),
            std::cmp::Ordering::Greater => {}
        }
    }

    /// Closes the window the previous call opened, if any, and opens the next.
    pub fn next_window(&mut self) {
        self.close_window();
        if self.failed {
            return;
        }
        let clear = std::fs::write(format!("/proc/{}/clear_refs", self.pid), "1");
        self.open = clear.is_ok();
        self.failed = clear.is_err();
    }

    /// Closes the open window, if any, and keeps its count.
    pub fn close_window(&mut self) {
        if !std::mem::take(&mut self.open) {
            return;
        }
        match std::fs::read_to_string(format!("/proc/{}/smaps", self.pid)) {
            Ok(smaps) => self.windows.push(referenced_pages(&smaps)),
            Err(_) => self.failed = true,
        }
    }

    /// The count of each closed window, in order.
    pub fn counts(&self) -> &[u64] {
        &self.windows
    }

    /// The median count over the closed windows (the upper middle of an even count).
    pub fn median(&self) -> Option<u64> {
        let mut counts = self.windows.clone();
        counts.sort_unstable();
        counts.get(counts.len() / 2).copied()
    }
}

/// The pages touched since the accessed bits were last cleared, from a `/proc/<pid>/smaps`
/// text: each mapping's `Referenced:` kB over its `KernelPageSize:` (which comes first in the
/// mapping's block; 4 kB when the block has none).
pub fn referenced_pages(smaps: &str) -> u64 {
    let mut page_kib = 4;
    let mut pages = 0;
    for line in smaps.lines() {
        let kib = |rest: &str| rest.split_whitespace().next()?.parse::<u64>().ok();
        let starts_mapping = line.split_whitespace().next().is_some_and(|range| {
            range.contains('-') && range.chars().all(|c| c == '-' || c.is_ascii_hexdigit())
        });
        if starts_mapping {
            page_kib = 4;
        } else if let Some(rest) = line.strip_prefix("KernelPageSize:") {
            page_kib = kib(rest).filter(|&k| k > 0).unwrap_or(4);
        } else if let Some(rest) = line.strip_prefix("Referenced:") {
            pages += kib(rest).unwrap_or(0) / page_kib;
        }
    }
    pages
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
fn connect_retrying<R>(
    mut connect: impl FnMut() -> Result<R, crate::ConnectError>,
) -> io::Result<R> {
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

/// VmRSS of this process.
pub fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each mapping's `Referenced:` counts in its own page size; other lines (including `Rss:`
    /// and the `VmFlags:` line) are not counted.
    #[test]
    fn referenced_pages_sums_each_mapping_in_its_page_size() {
        let smaps = "\
55d0c0000000-55d0c0400000 r-xp 00000000 fe:01 123 /usr/bin/roslite
Size:               4096 kB
KernelPageSize:        4 kB
Rss:                1200 kB
Referenced:          188 kB
VmFlags: rd ex mr mw me
7f0000000000-7f0000400000 rw-p 00000000 00:00 0
Size:               4096 kB
KernelPageSize:     2048 kB
Referenced:         4096 kB
7f0000400000-7f0000401000 rw-s 00000000 00:01 9 /memfd:roslite-shm-channel (deleted)
Size:                  4 kB
Referenced:            4 kB
";
        // 188/4 + 4096/2048 + 4/4 (a block without KernelPageSize: 4 kB, not the last one's).
        assert_eq!(referenced_pages(smaps), 47 + 2 + 1);
        assert_eq!(referenced_pages(""), 0);
    }

    /// Windows counted on this very process: each holds what was touched in it (the test's
    /// own pages plus whatever reading `/proc` and the harness touch), and the median sets
    /// aside the one window that touched far more. Each window writes pages never touched
    /// before: their first write faults them in young, whatever the TLB still holds (a page
    /// whose translation is cached is touched without being counted, see [`TouchedPages`]).
    ///
    /// The other tests of this binary run on threads of the same process and touch pages of
    /// their own in any window (in CI one window gained 80), so the windows are counted in a
    /// second run of this binary that runs this test alone.
    #[test]
    fn touched_pages_counts_what_each_window_touched() {
        const ALONE: &str = "ROSLITE_TEST_TOUCHED_PAGES_ALONE";
        const NAME: &str = "bench::tests::touched_pages_counts_what_each_window_touched";
        if std::env::var_os(ALONE).is_none() {
            let run = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", NAME, "--test-threads=1", "--nocapture"])
                .env(ALONE, "1")
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&run.stdout);
            assert!(
                run.status.success() && stdout.contains("1 passed"),
                "the test alone: {}\n{stdout}{}",
                run.status,
                String::from_utf8_lossy(&run.stderr)
            );
            return;
        }
        const PAGES: usize = 64;
        // The middle window touches 16 x PAGES more than the others. Counting its own process,
        // the counter can also see the pages its own smaps reads allocate (the smaps text grows
        // with the mappings the suite's other tests make meanwhile): a clean-clone run saw
        // [79, 207, 123] when the middle window touched 128 more, and twelve runs of the
        // crate's tests up to 91 pages of noise in one window. The signal must dwarf that.
        const MORE: usize = 16 * PAGES;
        let mut memory = vec![0u8; (3 * PAGES + MORE) * 4096];
        // One window first, not counted: the first use of each call on the way (the dynamic
        // linker binding a libc function, the allocator growing for the smaps text) touches
        // pages once (a clean-clone run credited the first window with 38 pages too many).
        let mut warm_up = TouchedPages::of(std::process::id());
        warm_up.next_window();
        warm_up.close_window();
        let mut counter = TouchedPages::of(std::process::id());
        assert_eq!(counter.median(), None);
        let mut fresh = 0;
        for window in 0..3 {
            let pages = if window == 1 { PAGES + MORE } else { PAGES };
            counter.next_window();
            for page in fresh..fresh + pages {
                memory[page * 4096] = 1;
            }
            fresh += pages;
            std::hint::black_box(&mut memory);
        }
        counter.close_window();
        let &[first, big, last] = counter.counts() else {
            panic!(
                "/proc/self/clear_refs or smaps unusable: {:?}",
                counter.counts()
            );
        };
        assert!(
            first >= PAGES as u64 && last >= PAGES as u64,
            "{:?}",
            counter.counts()
        );
        // The extra pages show, less what the other windows' own noise may add (up to half).
        assert!(
            big >= first.max(last) + (MORE / 2) as u64,
            "the window that touched {MORE} more pages: {:?}",
            counter.counts()
        );
        assert_eq!(counter.median(), Some(first.max(last)));
        // Closing again counts nothing more.
        counter.close_window();
        assert_eq!(counter.counts().len(), 3);
    }
}
