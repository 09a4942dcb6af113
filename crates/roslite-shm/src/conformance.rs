//! One conformance suite for every transport: delivery, ordering, keep-last, keep-all with
//! `max_blocking_time`, large samples, and peer death with real processes and SIGKILL.
//!
//! A transport takes part by implementing [`Transport`] (this crate does it for [`Shm`] and
//! [`Uds`]; the runtime can do it for intra-process and RTPS/UDP). The test binary must call
//! [`run_child_if_requested`] first thing in `main` for every transport it tests: the
//! peer-death tests re-execute the binary as the peer process (`harness = false`).
//!
//! Each test is a plain function that panics on failure; [`tests`] lists them by name.

use std::io::{BufRead, BufReader};
use std::ops::Deref;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::{
    ConnectError, Endpoint, EndpointAddress, History, ReaderConfig, ReceiveError, SendError,
    ShmReader, ShmWriter, UdsReader, UdsReaderConfig, UdsWriter, UdsWriterConfig, WriterConfig,
    WriterKey,
};

/// What the suite needs of a transport.
pub trait Transport: 'static {
    /// Short lowercase name (`shm`, `uds`); selects the child role.
    const NAME: &'static str;
    /// Whether a full reader can have more than `depth` samples in flight (kernel buffers).
    const BUFFERS_BEYOND_DEPTH: bool;
    /// One participant.
    type Node;
    type Writer: Sync;
    type Reader: Send + Sync;
    type Sample: Deref<Target = [u8]>;

    fn node() -> Self::Node;
    fn writer(node: &Self::Node, key: u64, max_blocking_time: Duration) -> Self::Writer;
    /// [`Self::writer`] holding at most `max_bytes` for a keep-all reader that does not take
    /// them (`keep_all_max_bytes`).
    fn writer_bounded(
        node: &Self::Node,
        key: u64,
        max_blocking_time: Duration,
        max_bytes: usize,
    ) -> Self::Writer;
    /// Text that lets a reader in another process find `writer` of `node`.
    fn locator(node: &Self::Node, key: u64) -> String;
    /// A reader in participant `node` of the writer `key` found through `locator`, or why
    /// there is none.
    fn connect(
        node: &Self::Node,
        locator: &str,
        key: u64,
        history: History,
    ) -> Result<Self::Reader, ConnectError>;
    /// [`Self::connect`], which must succeed.
    fn reader(node: &Self::Node, locator: &str, key: u64, history: History) -> Self::Reader {
        Self::connect(node, locator, key, history).expect("connect reader")
    }
    /// Connections `node` refused because another user made them.
    fn foreign_users_refused(node: &Self::Node) -> u64;
    fn send(writer: &Self::Writer, payload: &[u8]) -> Result<u64, SendError>;
    /// Waits up to `timeout`; `Ok(None)` on timeout.
    fn receive(
        reader: &Self::Reader,
        timeout: Duration,
    ) -> Result<Option<Self::Sample>, ReceiveError>;
    /// Waits without a timeout, until a sample, the writer's hang-up or an interrupt.
    fn receive_blocking(reader: &Self::Reader) -> Result<Self::Sample, ReceiveError>;
    /// What ends `reader`'s blocking receive from another thread, for good.
    fn interrupter(reader: &Self::Reader) -> Box<dyn Fn() + Send>;
    /// Readers currently attached to `writer`.
    fn readers(writer: &Self::Writer) -> usize;
    /// Resources `writer` holds on behalf of readers (chunks in use, queued frames).
    fn in_use(writer: &Self::Writer) -> usize;
}

/// Zero-copy shared memory.
pub struct Shm;

impl Transport for Shm {
    const NAME: &'static str = "shm";
    const BUFFERS_BEYOND_DEPTH: bool = false;
    type Node = Endpoint;
    type Writer = ShmWriter;
    type Reader = ShmReader;
    type Sample = crate::Sample;

    fn node() -> Endpoint {
        Endpoint::bind().expect("bind endpoint")
    }

    fn writer(node: &Endpoint, key: u64, max_blocking_time: Duration) -> ShmWriter {
        Self::writer_bounded(node, key, max_blocking_time, crate::KEEP_ALL_MAX_BYTES)
    }

    fn writer_bounded(
        node: &Endpoint,
        key: u64,
        max_blocking_time: Duration,
        keep_all_max_bytes: usize,
    ) -> ShmWriter {
        let config = WriterConfig {
            max_blocking_time,
            keep_all_max_bytes,
            ..WriterConfig::default()
        };
        ShmWriter::create(node, WriterKey::from(u128::from(key)), config).expect("create writer")
    }

    fn locator(node: &Endpoint, _key: u64) -> String {
        node.address().to_string()
    }

    fn connect(
        node: &Endpoint,
        locator: &str,
        key: u64,
        history: History,
    ) -> Result<ShmReader, ConnectError> {
        let address: EndpointAddress = locator.parse().expect("locator");
        let config = ReaderConfig {
            history,
            max_held: 8,
            ..ReaderConfig::default()
        };
        ShmReader::connect(node, &address, WriterKey::from(u128::from(key)), config)
    }

    fn foreign_users_refused(node: &Endpoint) -> u64 {
        node.stats().foreign_uid_refused
    }

    fn send(writer: &ShmWriter, payload: &[u8]) -> Result<u64, SendError> {
        writer.send_copy(payload, 0)
    }

    fn receive(
        reader: &ShmReader,
        timeout: Duration,
    ) -> Result<Option<crate::Sample>, ReceiveError> {
        reader.receive_timeout(timeout)
    }

    fn receive_blocking(reader: &ShmReader) -> Result<crate::Sample, ReceiveError> {
        reader.receive_blocking()
    }

    fn interrupter(reader: &ShmReader) -> Box<dyn Fn() + Send> {
        let interrupter = reader.interrupter();
        Box::new(move || interrupter.interrupt())
    }

    fn readers(writer: &ShmWriter) -> usize {
        writer.stats().readers
    }

    fn in_use(writer: &ShmWriter) -> usize {
        writer.stats().chunks_in_use
    }
}

/// Frames on Unix domain sockets.
pub struct Uds;

impl Transport for Uds {
    const NAME: &'static str = "uds";
    const BUFFERS_BEYOND_DEPTH: bool = true;
    type Node = Endpoint;
    type Writer = UdsWriter;
    type Reader = UdsReader;
    type Sample = crate::UdsSample;

    fn node() -> Endpoint {
        Endpoint::bind().expect("bind endpoint")
    }

    fn writer(node: &Endpoint, key: u64, max_blocking_time: Duration) -> UdsWriter {
        Self::writer_bounded(node, key, max_blocking_time, crate::KEEP_ALL_MAX_BYTES)
    }

    fn writer_bounded(
        node: &Endpoint,
        key: u64,
        max_blocking_time: Duration,
        keep_all_max_bytes: usize,
    ) -> UdsWriter {
        let config = UdsWriterConfig {
            max_blocking_time,
            keep_all_max_bytes,
            ..UdsWriterConfig::default()
        };
        UdsWriter::create(node, WriterKey::from(u128::from(key)), config).expect("create writer")
    }

    fn locator(node: &Endpoint, _key: u64) -> String {
        node.address().to_string()
    }

    fn connect(
        _node: &Endpoint,
        locator: &str,
        key: u64,
        history: History,
    ) -> Result<UdsReader, ConnectError> {
        let address: EndpointAddress = locator.parse().expect("locator");
        let config = UdsReaderConfig {
            history,
            ..UdsReaderConfig::default()
        };
        UdsReader::connect(&address, WriterKey::from(u128::from(key)), config)
    }

    fn foreign_users_refused(node: &Endpoint) -> u64 {
        node.stats().foreign_uid_refused
    }

    fn send(writer: &UdsWriter, payload: &[u8]) -> Result<u64, SendError> {
        writer.send(payload, 0)
    }

    fn receive(
        reader: &UdsReader,
        timeout: Duration,
    ) -> Result<Option<crate::UdsSample>, ReceiveError> {
        reader.receive_timeout(timeout)
    }

    fn receive_blocking(reader: &UdsReader) -> Result<crate::UdsSample, ReceiveError> {
        reader.receive_blocking()
    }

    fn interrupter(reader: &UdsReader) -> Box<dyn Fn() + Send> {
        let interrupter = reader.interrupter();
        Box::new(move || interrupter.interrupt())
    }

    fn readers(writer: &UdsWriter) -> usize {
        writer.stats().readers
    }

    fn in_use(writer: &UdsWriter) -> usize {
        writer.stats().queued
    }
}

/// Every test of the suite, by name.
pub fn tests<T: Transport>() -> Vec<(&'static str, fn())> {
    vec![
        (
            "delivery_order_and_contents",
            delivery_order_and_contents::<T>,
        ),
        ("many_writers_many_readers", many_writers_many_readers::<T>),
        (
            "keep_last_overwrites_for_a_slow_reader_only",
            keep_last_overwrites_for_a_slow_reader_only::<T>,
        ),
        (
            "keep_all_blocks_then_times_out",
            keep_all_blocks_then_times_out::<T>,
        ),
        (
            "keep_all_is_bounded_in_bytes",
            keep_all_is_bounded_in_bytes::<T>,
        ),
        ("large_samples", large_samples::<T>),
        (
            "an_interrupt_ends_a_blocking_receive",
            an_interrupt_ends_a_blocking_receive::<T>,
        ),
        (
            "an_interrupter_does_not_keep_a_dropped_reader_attached",
            an_interrupter_does_not_keep_a_dropped_reader_attached::<T>,
        ),
        ("reader_killed_repeatedly", reader_killed_repeatedly::<T>),
        ("writer_killed_repeatedly", writer_killed_repeatedly::<T>),
        (
            "another_user_is_refused_both_ways",
            another_user_is_refused_both_ways::<T>,
        ),
    ]
}

const PATIENCE: Duration = Duration::from_secs(10);

/// A payload whose every byte depends on `seq` and its position.
pub fn pattern(seq: u64, len: usize) -> Vec<u8> {
    let mut bytes: Vec<u8> = (0..len)
        .map(|i| (i as u64).wrapping_mul(31).wrapping_add(seq) as u8)
        .collect();
    if len >= 8 {
        bytes[..8].copy_from_slice(&seq.to_le_bytes());
    }
    bytes
}

fn seq_of(payload: &[u8]) -> u64 {
    u64::from_le_bytes(
        payload[..8]
            .try_into()
            .expect("payload of at least 8 bytes"),
    )
}

fn check(payload: &[u8], len: usize) -> u64 {
    let seq = seq_of(payload);
    assert_eq!(payload.len(), len, "sample {seq}: length");
    assert!(
        payload == pattern(seq, len).as_slice(),
        "sample {seq}: contents differ"
    );
    seq
}

/// Waits (sleeping in 1 ms steps: the condition lives in another thread or process) until
/// `condition`, at most [`PATIENCE`]; returns the time it took.
fn eventually(what: &str, mut condition: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !condition() {
        assert!(start.elapsed() < PATIENCE, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
    start.elapsed()
}

fn receive_one<T: Transport>(reader: &T::Reader) -> T::Sample {
    T::receive(reader, PATIENCE)
        .expect("receive")
        .expect("a sample within the patience")
}

pub fn delivery_order_and_contents<T: Transport>() {
    let node = T::node();
    let writer = T::writer(&node, 1, Duration::from_secs(5));
    let locator = T::locator(&node, 1);
    let readers = [
        T::reader(&node, &locator, 1, History::KeepAll(1000)),
        T::reader(&node, &locator, 1, History::KeepLast(1000)),
    ];
    eventually("both readers are attached", || T::readers(&writer) == 2);
    let sizes = [8usize, 9, 100, 4095, 4096, 4097, 70_000, 300_000];
    let count = 200u64;
    for seq in 0..count {
        let len = sizes[seq as usize % sizes.len()];
        T::send(&writer, &pattern(seq, len)).expect("send");
    }
    for reader in &readers {
        for seq in 0..count {
            let len = sizes[seq as usize % sizes.len()];
            assert_eq!(check(&receive_one::<T>(reader), len), seq, "order");
        }
        assert!(T::receive(reader, Duration::from_millis(20))
            .expect("receive")
            .is_none());
    }
    drop(readers);
    eventually("the writer forgets closed readers", || {
        T::readers(&writer) == 0
    });
    assert_eq!(
        T::in_use(&writer),
        0,
        "resources held after every reader left"
    );
}

/// A receive without a timeout returns samples as they come, and ends with
/// [`ReceiveError::WriterGone`] when another thread interrupts it while it waits (the runtime
/// stops a subscription's reader thread this way); the reader stays ended.
pub fn an_interrupt_ends_a_blocking_receive<T: Transport>() {
    let node = T::node();
    let writer = T::writer(&node, 3, Duration::from_secs(5));
    let reader = Arc::new(T::reader(
        &node,
        &T::locator(&node, 3),
        3,
        History::KeepAll(10),
    ));
    eventually("the reader is attached", || T::readers(&writer) == 1);
    let taken = Arc::new(AtomicUsize::new(0));
    // Not a scoped thread: if the interrupt failed to wake it, the test must fail, not hang.
    let receiving = std::thread::spawn({
        let (reader, taken) = (reader.clone(), taken.clone());
        move || loop {
            match T::receive_blocking(&reader) {
                Ok(sample) => {
                    assert_eq!(check(&sample, 64), taken.load(SeqCst) as u64, "order");
                    taken.fetch_add(1, SeqCst);
                }
                Err(e) => return e,
            }
        }
    });
    for seq in 0..3 {
        T::send(&writer, &pattern(seq, 64)).expect("send");
    }
    eventually("the three samples are taken", || taken.load(SeqCst) == 3);
    // The receiving thread is now blocked again, or about to block: either way it must end.
    T::interrupter(&reader)();
    eventually("the interrupted receive ends", || receiving.is_finished());
    let ended = receiving.join().expect("receiving thread");
    assert!(matches!(ended, ReceiveError::WriterGone), "{ended:?}");
    assert!(matches!(
        T::receive_blocking(&reader),
        Err(ReceiveError::WriterGone)
    ));
}

/// A reader's interrupter may outlive the reader (the runtime keeps it until the link is
/// dropped, which for a dead writer waits for discovery): it must not keep the reader's
/// connection, and with it the writer's resources for that reader, alive.
pub fn an_interrupter_does_not_keep_a_dropped_reader_attached<T: Transport>() {
    let node = T::node();
    let writer = T::writer(&node, 4, Duration::from_secs(5));
    let reader = T::reader(&node, &T::locator(&node, 4), 4, History::KeepAll(10));
    eventually("the reader is attached", || T::readers(&writer) == 1);
    let interrupt = T::interrupter(&reader);
    T::send(&writer, &pattern(0, 64)).expect("send");
    drop(reader);
    // Sends let a writer notice a closed connection on its own, whichever it relies on.
    eventually("the writer forgets the dropped reader", || {
        let _ = T::send(&writer, &pattern(1, 64));
        T::readers(&writer) == 0 && T::in_use(&writer) == 0
    });
    interrupt();
}

pub fn many_writers_many_readers<T: Transport>() {
    let nodes = [T::node(), T::node()];
    let writers: Vec<_> = (0..4u64)
        .map(|k| T::writer(&nodes[k as usize % 2], 10 + k, Duration::from_secs(5)))
        .collect();
    // Three subscribers, each reading every writer.
    let readers: Vec<Vec<_>> = (0..3)
        .map(|_| {
            (0..4u64)
                .map(|k| {
                    T::reader(
                        &nodes[0],
                        &T::locator(&nodes[k as usize % 2], 10 + k),
                        10 + k,
                        History::KeepAll(100),
                    )
                })
                .collect()
        })
        .collect();
    for writer in &writers {
        eventually("three readers per writer", || T::readers(writer) == 3);
    }
    std::thread::scope(|scope| {
        for (k, writer) in writers.iter().enumerate() {
            scope.spawn(move || {
                for seq in 0..50u64 {
                    T::send(writer, &pattern(seq * 4 + k as u64, 64)).expect("send");
                }
            });
        }
    });
    for subscriber in &readers {
        for (k, reader) in subscriber.iter().enumerate() {
            for seq in 0..50u64 {
                assert_eq!(check(&receive_one::<T>(reader), 64), seq * 4 + k as u64);
            }
        }
    }
}

pub fn keep_last_overwrites_for_a_slow_reader_only<T: Transport>() {
    let node = T::node();
    let writer = T::writer(&node, 2, Duration::from_secs(5));
    let locator = T::locator(&node, 2);
    let depth = 4;
    let slow = T::reader(&node, &locator, 2, History::KeepLast(depth));
    let fast = T::reader(&node, &locator, 2, History::KeepAll(1000));
    eventually("both readers are attached", || T::readers(&writer) == 2);
    let count = 200u64;
    let len = 64 << 10;
    for seq in 1..=count {
        // Never blocks: the slow reader is keep-last, the fast one has room for everything.
        T::send(&writer, &pattern(seq, len)).expect("send to a slow keep-last reader");
    }
    for seq in 1..=count {
        assert_eq!(check(&receive_one::<T>(&fast), len), seq);
    }
    let mut got = Vec::new();
    while let Some(sample) = T::receive(&slow, Duration::from_millis(200)).expect("receive") {
        got.push(check(&sample, len));
    }
    assert_eq!(
        got.last(),
        Some(&count),
        "the slow reader gets the newest sample"
    );
    assert!(got.windows(2).all(|w| w[0] < w[1]), "in order: {got:?}");
    assert!(got.len() < count as usize, "older samples were dropped");
    if !T::BUFFERS_BEYOND_DEPTH {
        assert_eq!(
            got,
            ((count - u64::from(depth) + 1)..=count).collect::<Vec<_>>()
        );
    }
}

pub fn keep_all_blocks_then_times_out<T: Transport>() {
    let node = T::node();
    let max_blocking = Duration::from_millis(50);
    let writer = T::writer(&node, 3, max_blocking);
    let reader = T::reader(&node, &T::locator(&node, 3), 3, History::KeepAll(3));
    eventually("the reader is attached", || T::readers(&writer) == 1);
    let len = 256 << 10;
    let mut sent = 0u64;
    let blocked_for = loop {
        assert!(
            sent < 1000,
            "a keep-all reader that never reads must block the writer"
        );
        let start = Instant::now();
        match T::send(&writer, &pattern(sent, len)) {
            Ok(_) => sent += 1,
            Err(SendError::Timeout) => break start.elapsed(),
            Err(e) => panic!("unexpected send error {e}"),
        }
    };
    assert!(
        blocked_for >= max_blocking,
        "returned after {blocked_for:?}, before max_blocking_time"
    );
    // Room for one more once the reader takes one; the timed-out sample was never delivered.
    assert_eq!(check(&receive_one::<T>(&reader), len), 0);
    let resend = sent;
    eventually("the writer accepts again", || {
        T::send(&writer, &pattern(resend, len)).is_ok()
    });
    for seq in 1..=sent {
        assert_eq!(
            check(&receive_one::<T>(&reader), len),
            seq,
            "no gap, no timed-out sample"
        );
    }
}

/// A keep-all reader that takes nothing holds its writer at `keep_all_max_bytes` (1 MiB
/// here), not only at its depth (1000): the writer times out once that much is queued for it
/// (plus, over a Unix socket, what the kernel's socket buffer took), and the backlog is all
/// delivered, in order, once the reader takes again.
pub fn keep_all_is_bounded_in_bytes<T: Transport>() {
    let node = T::node();
    let max_blocking = Duration::from_millis(20);
    let bound = 1 << 20;
    let writer = T::writer_bounded(&node, 4, max_blocking, bound);
    let reader = T::reader(&node, &T::locator(&node, 4), 4, History::KeepAll(1000));
    eventually("the reader is attached", || T::readers(&writer) == 1);
    let len = 64 << 10;
    let mut sent = 0u64;
    loop {
        // 1000 samples of 64 KiB would be 62.5 MiB: the bound must stop the writer long before.
        assert!(sent < 1000, "the byte bound never held the writer back");
        match T::send(&writer, &pattern(sent, len)) {
            Ok(_) => sent += 1,
            Err(SendError::Timeout) => break,
            Err(e) => panic!("unexpected send error {e}"),
        }
    }
    let within_bound = (bound / len) as u64;
    if T::BUFFERS_BEYOND_DEPTH {
        // The socket buffer (up to 8 MiB) takes frames before the writer queues any.
        assert!(sent >= within_bound, "{sent} sent");
    } else {
        assert_eq!(sent, within_bound, "exactly the bound's worth is announced");
    }
    for seq in 0..sent {
        assert_eq!(
            check(&receive_one::<T>(&reader), len),
            seq,
            "the backlog arrives whole and in order"
        );
    }
    eventually("the writer accepts again", || {
        T::send(&writer, &pattern(sent, len)).is_ok()
    });
    assert_eq!(check(&receive_one::<T>(&reader), len), sent);
}

pub fn large_samples<T: Transport>() {
    let node = T::node();
    let writer = T::writer(&node, 4, Duration::from_secs(30));
    let reader = T::reader(&node, &T::locator(&node, 4), 4, History::KeepAll(4));
    eventually("the reader is attached", || T::readers(&writer) == 1);
    // A 55 MB point cloud, and sizes around chunk and packet boundaries.
    for (seq, len) in [
        (1u64, 55_000_000usize),
        (2, (4 << 20) + 1),
        (3, crate::PACKET - 32),
        (4, crate::PACKET),
    ] {
        let payload = pattern(seq, len);
        std::thread::scope(|scope| {
            // The reader runs concurrently: a socket transport needs it to drain.
            let receiver = scope.spawn(|| check(&receive_one::<T>(&reader), len));
            T::send(&writer, &payload).expect("send large sample");
            assert_eq!(receiver.join().expect("receiver"), seq);
        });
    }
}

// ---- peer death --------------------------------------------------------------------------

const CHILD_ENV: &str = "ROSLITE_CONFORMANCE_CHILD";
const LOCATOR_ENV: &str = "ROSLITE_CONFORMANCE_LOCATOR";
const KILL_ROUNDS: usize = 5;

/// Runs the peer role this process was started for, then exits; returns if it was not started
/// as a child for `T`.
pub fn run_child_if_requested<T: Transport>() {
    let Ok(role) = std::env::var(CHILD_ENV) else {
        return;
    };
    match role.strip_prefix(T::NAME).and_then(|r| r.strip_prefix(':')) {
        Some("reader") => {
            let locator = std::env::var(LOCATOR_ENV).expect("locator");
            let node = T::node();
            let reader = T::reader(&node, &locator, 7, History::KeepLast(8));
            // Hold samples and never release them, so the writer has chunks to reclaim.
            let mut held = Vec::new();
            while held.len() < 4 {
                held.push(receive_one::<T>(&reader));
            }
            println!("holding {}", held.len());
            loop {
                std::thread::park();
            }
        }
        Some("foreign") => another_user_child::<T>(),
        Some("writer") => {
            let node = T::node();
            let writer = T::writer(&node, 8, Duration::from_millis(100));
            println!("{}", T::locator(&node, 8));
            for seq in 0.. {
                let _ = T::send(&writer, &pattern(seq, 4096));
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        _ => return,
    }
    std::process::exit(0);
}

/// A peer process; killed and reaped when dropped, so a failing test leaves none behind (a
/// peer left running would hold the test's output pipes open and hang its caller).
struct PeerProcess(Child);

impl Drop for PeerProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn_child<T: Transport>(
    role: &str,
    locator: Option<&str>,
) -> (PeerProcess, BufReader<std::process::ChildStdout>) {
    let mut command = Command::new(std::env::current_exe().expect("current exe"));
    command
        .env(CHILD_ENV, format!("{}:{role}", T::NAME))
        .stdout(Stdio::piped());
    if let Some(locator) = locator {
        command.env(LOCATOR_ENV, locator);
    }
    let mut child = command.spawn().expect("spawn child");
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    (PeerProcess(child), stdout)
}

fn read_line(stdout: &mut BufReader<std::process::ChildStdout>) -> String {
    let mut line = String::new();
    stdout.read_line(&mut line).expect("read child output");
    line.trim().to_owned()
}

fn sigkill(child: &mut PeerProcess) {
    child.0.kill().expect("SIGKILL child");
    child.0.wait().expect("reap child");
}

fn dev_shm_entries() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir("/dev/shm")
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// A reader process is SIGKILLed while holding samples; the writer reclaims them and keeps
/// serving a surviving reader. Prints how long the writer took to notice.
pub fn reader_killed_repeatedly<T: Transport>() {
    let shm_before = dev_shm_entries();
    let baseline_fds = crate::open_fd_count();
    let node = T::node();
    let writer = T::writer(&node, 7, Duration::from_millis(100));
    let locator = T::locator(&node, 7);
    let survivor = T::reader(&node, &locator, 7, History::KeepAll(64));
    eventually("the survivor is attached", || T::readers(&writer) == 1);
    let mut seq = 0u64;
    let mut detection = Vec::new();
    for _ in 0..KILL_ROUNDS {
        let (mut child, mut stdout) = spawn_child::<T>("reader", Some(&locator));
        eventually("the child reader is attached", || T::readers(&writer) == 2);
        for _ in 0..8 {
            seq += 1;
            T::send(&writer, &pattern(seq, 4096)).expect("send");
            assert_eq!(check(&receive_one::<T>(&survivor), 4096), seq);
        }
        assert_eq!(read_line(&mut stdout), "holding 4");
        let killed = Instant::now();
        sigkill(&mut child);
        eventually("the writer drops the killed reader", || {
            T::readers(&writer) == 1
        });
        detection.push(killed.elapsed());
        // The survivor continues; then nothing is held for anybody.
        seq += 1;
        T::send(&writer, &pattern(seq, 4096)).expect("send after the kill");
        assert_eq!(check(&receive_one::<T>(&survivor), 4096), seq);
        eventually("every chunk is reclaimed", || T::in_use(&writer) == 0);
    }
    println!(
        "    {}: writer noticed SIGKILLed readers after {detection:?}",
        T::NAME
    );
    drop((survivor, writer, node));
    assert_eq!(crate::open_fd_count(), baseline_fds, "descriptors leaked");
    assert_eq!(dev_shm_entries(), shm_before, "files appeared in /dev/shm");
}

/// A writer process is SIGKILLed mid-stream; the reader drains what arrived, reports the writer
/// gone, and closing it leaves no descriptor behind.
pub fn writer_killed_repeatedly<T: Transport>() {
    let shm_before = dev_shm_entries();
    let baseline_fds = crate::open_fd_count();
    let mut detection = Vec::new();
    for _ in 0..KILL_ROUNDS {
        let (mut child, mut stdout) = spawn_child::<T>("writer", None);
        let locator = read_line(&mut stdout);
        let node = T::node();
        let reader = T::reader(&node, &locator, 8, History::KeepLast(16));
        let mut last = None;
        for _ in 0..5 {
            let seq = check(&receive_one::<T>(&reader), 4096);
            assert!(last.is_none_or(|l| seq > l), "in order");
            last = Some(seq);
        }
        let killed = Instant::now();
        sigkill(&mut child);
        loop {
            match T::receive(&reader, PATIENCE) {
                Ok(Some(sample)) => {
                    check(&sample, 4096);
                }
                Ok(None) => panic!("the reader never noticed the writer died"),
                Err(ReceiveError::WriterGone) => break,
                Err(e) => panic!("unexpected receive error {e}"),
            }
        }
        detection.push(killed.elapsed());
        drop((reader, node));
    }
    println!(
        "    {}: reader noticed SIGKILLed writers after {detection:?}",
        T::NAME
    );
    assert_eq!(crate::open_fd_count(), baseline_fds, "descriptors leaked");
    assert_eq!(dev_shm_entries(), shm_before, "files appeared in /dev/shm");
}

// ---- another user ------------------------------------------------------------------------

/// The user the child of [`another_user_is_refused_both_ways`] becomes: `nobody`.
const ANOTHER_USER: u32 = 65534;

/// Another user's process on the same machine reaches an endpoint's abstract socket (such a
/// socket has no permission bits, docs/shm.md): the endpoint must refuse it before it hears a
/// word, and count it; and a reader must refuse to attach to another user's endpoint. The
/// child becomes `nobody`, so the test needs root (as the namespace tests do), and says so.
pub fn another_user_is_refused_both_ways<T: Transport>() {
    let node = T::node();
    let writer = T::writer(&node, 9, Duration::from_millis(100));
    let locator = T::locator(&node, 9);
    let (mut child, mut stdout) = spawn_child::<T>("foreign", Some(&locator));
    let became = read_line(&mut stdout);
    assert_eq!(
        became,
        format!("uid {ANOTHER_USER}"),
        "the child could not become another user (this test must run as root)"
    );
    // The child skips a reader's own check of the endpoint's owner and says hello.
    let answer = read_line(&mut stdout);
    assert_eq!(answer, "closed", "another user's hello was answered");
    eventually("the endpoint counts the refusal", || {
        T::foreign_users_refused(&node) == 1
    });
    assert_eq!(T::readers(&writer), 0, "another user's reader is attached");
    // A reader of ours does not attach to the other user's endpoint.
    let foreign_locator = read_line(&mut stdout);
    match T::connect(&node, &foreign_locator, 10, History::KeepLast(8)) {
        Err(ConnectError::ForeignUid) => {}
        Err(other) => panic!("a reader of another user's endpoint failed otherwise: {other}"),
        Ok(_) => panic!("a reader attached to another user's endpoint"),
    }
    // Our own users still get in.
    let reader = T::reader(&node, &locator, 9, History::KeepLast(8));
    eventually("our own reader is attached", || T::readers(&writer) == 1);
    T::send(&writer, &pattern(1, 64)).expect("send");
    assert_eq!(check(&receive_one::<T>(&reader), 64), 1);
    assert_eq!(T::foreign_users_refused(&node), 1);
    sigkill(&mut child);
}

/// The child of [`another_user_is_refused_both_ways`]: becomes [`ANOTHER_USER`], says hello to
/// the parent's endpoint without a reader's owner check, then serves a writer of its own until
/// it is killed.
fn another_user_child<T: Transport>() -> ! {
    use rustix::process::{Gid, Uid};
    // This process has one thread (the suite's `main` calls us first), so dropping this
    // thread's credentials drops the process's.
    let dropped = rustix::thread::set_thread_groups(&[])
        .and_then(|()| {
            let gid = Gid::from_raw(ANOTHER_USER);
            rustix::thread::set_thread_res_gid(gid, gid, gid)
        })
        .and_then(|()| {
            let uid = Uid::from_raw(ANOTHER_USER);
            rustix::thread::set_thread_res_uid(uid, uid, uid)
        });
    if let Err(e) = dropped {
        println!("cannot become user {ANOTHER_USER}: {e}");
        std::process::exit(1);
    }
    println!("uid {}", rustix::process::geteuid().as_raw());
    let locator = std::env::var(LOCATOR_ENV).expect("locator");
    let address: EndpointAddress = locator.parse().expect("locator");
    let hello = crate::protocol::Hello {
        kind: crate::protocol::Kind::SharedMemory,
        history: History::KeepLast(8),
        max_held: 8,
        key: WriterKey::from(9u128),
        wants_kept: false,
    };
    let answer = match crate::endpoint::connect_unchecked(&address) {
        Err(e) => format!("cannot connect: {e}"),
        Ok(sock) => {
            match crate::endpoint::exchange_hello(sock, hello, &[], Duration::from_secs(5)) {
                Ok(_) | Err(ConnectError::Rejected(_)) => "answered".to_owned(),
                Err(ConnectError::Protocol | ConnectError::Io(_)) => "closed".to_owned(),
                Err(other) => format!("unexpected: {other}"),
            }
        }
    };
    println!("{answer}");
    let node = T::node();
    let _writer = T::writer(&node, 10, Duration::from_millis(100));
    println!("{}", T::locator(&node, 10));
    loop {
        std::thread::park();
    }
}
