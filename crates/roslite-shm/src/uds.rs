//! The Unix-domain-socket transport: samples of any size as frames on a SOCK_SEQPACKET
//! connection per (writer, reader) pair, for same-host peers when shared memory is disabled.
//!
//! Connections are made exactly as for shared memory (hello/welcome at the writer's
//! [`Endpoint`], same uid check, hang-ups seen by the endpoint's service thread); only the data
//! path differs. A sample is a 32-byte header followed by the payload, cut into packets of at
//! most [`PACKET`] bytes:
//!
//! ```text
//! packet 0:  "RLD1" 0:u32 len:u64 seq:u64 timestamp_ns:u64 | payload[..PACKET - 32]
//! packet k:  payload continued (the reader knows `len`, so no per-packet header)
//! ```
//!
//! The writer never blocks long on a slow keep-last reader: it sends without blocking; a sample
//! larger than what the socket takes at once is fed by the publishing thread itself while the
//! reader drains it, for at most `inline_send_budget` (a thread hand-off per socket buffer
//! less); what is still left waits in a per-reader queue of at most `depth` samples (the oldest
//! not-yet-started sample is dropped), finished by the endpoint thread when the socket drains.
//! The kernel's socket buffer holds some more samples on top of `depth`. A keep-all reader whose
//! queue is full makes `send` wait up to `max_blocking_time`.

use std::collections::VecDeque;
use std::fmt;
use std::io::{self, IoSlice};
use std::ops::Deref;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering, Ordering::SeqCst};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use rustix::buffer::spare_capacity;
use rustix::event::PollFlags;
use rustix::net::{RecvFlags, SendAncillaryBuffer, SendFlags};

use crate::endpoint::{self, lock, Attach, ConnId, Endpoint, EndpointAddress, EndpointShared};
use crate::protocol::{Hello, History, Kind, Message, RejectReason, WriterKey, MAX_DEPTH};
use crate::{ConnectError, CreateError, IdleSpin, ReceiveError, SendError};

/// Largest packet; fits the default 208 KiB socket send buffer.
pub const PACKET: usize = 128 << 10;
const HEADER: usize = 32;
const MAGIC: &[u8; 4] = b"RLD1";
/// Send buffer asked for (the kernel caps it at `net.core.wmem_max` and doubles it): with
/// `wmem_max` at 4 MiB a whole 4 MiB sample fits, so its sender returns without waiting for the
/// reader. Connected SEQPACKET peers are not limited by `net.unix.max_dgram_qlen` (the kernel
/// skips that check when the receiver's peer is the sender), only by this buffer.
pub(crate) const SEND_BUFFER: usize = 4 << 20;

/// Configuration of a [`UdsWriter`].
#[derive(Clone, Copy, Debug)]
pub struct UdsWriterConfig {
    /// How long `send` waits for a full keep-all reader before failing.
    pub max_blocking_time: Duration,
    /// How long `send` itself keeps feeding readers' sockets with a sample they could not take
    /// at once (waiting for them to drain it) before leaving the rest to the endpoint's service
    /// thread. Each refill is then one wake-up of the publishing thread instead of a hand-off
    /// between the service thread and the publisher; a reader that stops reading costs the
    /// publisher at most this long, once per backlog. Zero hands off at once.
    pub inline_send_budget: Duration,
    /// The newest samples kept for readers that connect later and ask for them
    /// ([`UdsReaderConfig::wants_kept`]): a TRANSIENT_LOCAL writer's KEEP_LAST depth. 0 (the
    /// default, VOLATILE): none.
    pub kept_for_late_joiners: u32,
    /// Payload bytes queued for one keep-all reader (in this writer's queue, beside what its
    /// socket buffer holds) at most: beyond it `send` waits for that reader as for a full
    /// queue, up to `max_blocking_time`. One sample larger than the bound still goes to a
    /// reader with nothing queued. Default [`crate::KEEP_ALL_MAX_BYTES`].
    pub keep_all_max_bytes: usize,
}

impl Default for UdsWriterConfig {
    fn default() -> Self {
        UdsWriterConfig {
            max_blocking_time: Duration::from_millis(100),
            inline_send_budget: Duration::from_millis(5),
            kept_for_late_joiners: 0,
            keep_all_max_bytes: crate::KEEP_ALL_MAX_BYTES,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UdsWriterStats {
    pub readers: usize,
    /// Samples queued for some reader that its socket has not taken yet.
    pub queued: usize,
    /// Samples dropped from keep-last readers' queues.
    pub overwritten: u64,
    /// Samples sent (to at least one reader or none).
    pub sent: u64,
    /// Bytes of all samples sent (payloads, without framing).
    pub sent_bytes: u64,
}

/// The header of a sample's frame: magic, length, sequence number, timestamp.
fn frame_header(len: usize, seq: u64, timestamp_ns: u64) -> [u8; HEADER] {
    let mut header = [0u8; HEADER];
    header[..4].copy_from_slice(MAGIC);
    header[8..16].copy_from_slice(&(len as u64).to_le_bytes());
    header[16..24].copy_from_slice(&seq.to_le_bytes());
    header[24..32].copy_from_slice(&timestamp_ns.to_le_bytes());
    header
}

#[derive(Clone)]
struct Frame {
    header: [u8; HEADER],
    payload: Arc<[u8]>,
    /// Bytes of header + payload already sent.
    sent: usize,
}

struct UdsConn {
    conn: ConnId,
    sock: Arc<OwnedFd>,
    history: History,
    queue: VecDeque<Frame>,
    dead: bool,
}

#[derive(Default)]
struct UdsState {
    conns: Vec<UdsConn>,
    /// The newest sent samples, oldest first ([`UdsWriterConfig::kept_for_late_joiners`]).
    kept: VecDeque<Frame>,
    seq: u64,
    overwritten: u64,
    sent: u64,
    sent_bytes: u64,
}

pub(crate) struct UdsWriterShared {
    key: WriterKey,
    config: UdsWriterConfig,
    endpoint: Arc<EndpointShared>,
    state: Mutex<UdsState>,
    /// `state.conns.len()`, stored under the lock whenever it changes, read without it.
    reader_count: Arc<AtomicUsize>,
}

impl UdsWriterShared {
    /// Call with the lock held, after `conns` changed.
    fn count_readers(&self, state: &UdsState) {
        self.reader_count
            .store(state.conns.len(), Ordering::Relaxed);
    }
}

/// Sends samples of one writer to every reader attached through its endpoint.
pub struct UdsWriter {
    shared: Arc<UdsWriterShared>,
}

impl UdsWriter {
    /// Registers a writer under `key` at `endpoint`.
    ///
    /// # Errors
    /// [`CreateError::KeyInUse`] if a live writer already has this key.
    pub fn create(
        endpoint: &Endpoint,
        key: WriterKey,
        config: UdsWriterConfig,
    ) -> Result<UdsWriter, CreateError> {
        let shared = Arc::new(UdsWriterShared {
            key,
            config,
            endpoint: endpoint.shared().clone(),
            state: Mutex::new(UdsState::default()),
            reader_count: Arc::new(AtomicUsize::new(0)),
        });
        let weak: std::sync::Weak<dyn Attach> = Arc::downgrade(&shared) as _;
        if !endpoint.shared().register(key, weak) {
            return Err(CreateError::KeyInUse);
        }
        Ok(UdsWriter { shared })
    }

    /// Numbers the next sample `next` (or higher), as [`crate::ShmWriter::number_from`].
    pub fn number_from(&self, next: u64) {
        let mut state = lock(&self.shared.state);
        state.seq = state.seq.max(next.saturating_sub(1));
    }

    /// Sends `payload` to every reader; returns its sequence number.
    ///
    /// # Errors
    /// [`SendError::Timeout`] when a keep-all reader's queue stayed full for
    /// `max_blocking_time` (then nobody got the sample).
    pub fn send(&self, payload: &[u8], timestamp_ns: u64) -> Result<u64, SendError> {
        self.send_inner(payload, timestamp_ns, None)
    }

    /// [`Self::send`], numbering the sample `next` or higher as [`Self::number_from`] would,
    /// under the same lock.
    ///
    /// # Errors
    /// As [`Self::send`].
    pub fn send_numbered(
        &self,
        next: u64,
        payload: &[u8],
        timestamp_ns: u64,
    ) -> Result<u64, SendError> {
        self.send_inner(payload, timestamp_ns, Some(next))
    }

    /// Keeps `payload` for late joiners as sample `seq` without sending it to the readers
    /// connected now (they had it from another writer: a publisher that moved here from
    /// another process, docs/migration.md), and numbers the next sample after it. Nothing is
    /// kept by a writer that keeps nothing ([`UdsWriterConfig::kept_for_late_joiners`]).
    pub fn keep_for_late_joiners(&self, seq: u64, payload: &[u8], timestamp_ns: u64) {
        let shared = &self.shared;
        let mut state = lock(&shared.state);
        state.seq = state.seq.max(seq);
        let keep = shared.config.kept_for_late_joiners as usize;
        if keep == 0 {
            return;
        }
        state.kept.push_back(Frame {
            header: frame_header(payload.len(), seq, timestamp_ns),
            payload: Arc::from(payload),
            sent: 0,
        });
        while state.kept.len() > keep {
            state.kept.pop_front();
        }
    }

    /// Readers connected now, without taking the writer's lock (a publisher asks before every
    /// publish); may be stale by the time a sample is sent.
    pub fn reader_count(&self) -> usize {
        self.shared.reader_count.load(Ordering::Relaxed)
    }

    /// [`Self::reader_count`] without holding the writer: zero once it is dropped.
    pub fn reader_count_handle(&self) -> crate::ReaderCount {
        crate::ReaderCount(self.shared.reader_count.clone())
    }

    fn send_inner(
        &self,
        payload: &[u8],
        timestamp_ns: u64,
        number_from: Option<u64>,
    ) -> Result<u64, SendError> {
        let shared = &self.shared;
        // Read the clock only when a reader blocks (not on every send).
        let mut deadline = None;
        let mut state = lock(&shared.state);
        loop {
            let mut blocked = Vec::new();
            for conn in &mut state.conns {
                if let History::KeepAll(depth) = conn.history {
                    flush(conn);
                    let over_bytes = || {
                        let queued: usize = conn.queue.iter().map(|f| f.payload.len()).sum();
                        queued.saturating_add(payload.len()) > shared.config.keep_all_max_bytes
                    };
                    if !conn.dead
                        && (conn.queue.len() >= depth as usize
                            || (!conn.queue.is_empty() && over_bytes()))
                    {
                        blocked.push(conn.sock.clone());
                    }
                }
            }
            if blocked.is_empty() {
                break;
            }
            let now = Instant::now();
            let deadline = *deadline.get_or_insert(now + shared.config.max_blocking_time);
            if now >= deadline {
                return Err(SendError::Timeout);
            }
            drop(state);
            let fds: Vec<_> = blocked
                .iter()
                .map(|s| (s.as_fd(), PollFlags::OUT))
                .collect();
            crate::sys::poll(&fds, Some(deadline - now)).map_err(SendError::Io)?;
            state = lock(&shared.state);
        }
        if let Some(next) = number_from {
            state.seq = state.seq.max(next.saturating_sub(1));
        }
        state.seq += 1;
        let seq = state.seq;
        state.sent += 1;
        state.sent_bytes += payload.len() as u64;
        let header = frame_header(payload.len(), seq, timestamp_ns);
        // Connections whose socket took only part of this sample: (index, bytes sent).
        let mut unfinished = Vec::new();
        let mut backlogged = Vec::new();
        for (index, conn) in state.conns.iter_mut().enumerate() {
            flush(conn);
            if conn.dead {
                continue;
            }
            if !conn.queue.is_empty() {
                backlogged.push((index, 0));
                continue;
            }
            let mut sent = 0;
            match send_packets(conn.sock.as_fd(), &header, payload, &mut sent) {
                Ok(true) => {}
                Ok(false) => unfinished.push((index, sent)),
                Err(_) => conn.dead = true,
            }
        }
        if !unfinished.is_empty() {
            let deadline = Instant::now() + shared.config.inline_send_budget;
            finish_inline(
                &mut state.conns,
                &header,
                payload,
                &mut unfinished,
                deadline,
            );
        }
        let mut owned: Option<Arc<[u8]>> = None;
        let mut overwritten = 0;
        let mut want_write = Vec::new();
        for (index, sent) in backlogged.into_iter().chain(unfinished) {
            let conn = &mut state.conns[index];
            let payload = owned.get_or_insert_with(|| Arc::from(payload)).clone();
            conn.queue.push_back(Frame {
                header,
                payload,
                sent,
            });
            if let History::KeepLast(depth) = conn.history {
                while conn.queue.len() > depth as usize {
                    // A sample already partly on the wire must be finished.
                    let oldest_unstarted =
                        usize::from(conn.queue.front().is_some_and(|f| f.sent > 0));
                    if conn.queue.remove(oldest_unstarted).is_none() {
                        break;
                    }
                    overwritten += 1;
                }
            }
            want_write.push(conn.conn);
        }
        state.overwritten += overwritten;
        let keep = shared.config.kept_for_late_joiners as usize;
        if keep > 0 {
            let payload = owned.get_or_insert_with(|| Arc::from(payload)).clone();
            state.kept.push_back(Frame {
                header,
                payload,
                sent: 0,
            });
            while state.kept.len() > keep {
                state.kept.pop_front();
            }
        }
        state.conns.retain(|c| !c.dead);
        shared.count_readers(&state);
        // Under our lock, like the endpoint's `flush`: whoever looked at the queue last decides.
        for conn in want_write {
            shared.endpoint.set_wants_write(conn, true);
        }
        Ok(seq)
    }

    pub fn stats(&self) -> UdsWriterStats {
        let state = lock(&self.shared.state);
        UdsWriterStats {
            readers: state.conns.len(),
            queued: state.conns.iter().map(|c| c.queue.len()).sum(),
            overwritten: state.overwritten,
            sent: state.sent,
            sent_bytes: state.sent_bytes,
        }
    }
}

impl Drop for UdsWriter {
    fn drop(&mut self) {
        self.shared.endpoint.deregister(self.shared.key);
        let conns = std::mem::take(&mut lock(&self.shared.state).conns);
        self.shared.reader_count.store(0, Ordering::Relaxed);
        for conn in conns {
            let _ = rustix::net::shutdown(conn.sock.as_fd(), rustix::net::Shutdown::Both);
        }
    }
}

/// Frames up to this size are assembled on the stack and go out with `send`: for a small
/// sample, `sendmsg`'s message header and two-entry iovec cost more than copying the payload
/// (measured on this VM: 0.45 us per round trip at 64 B).
const SMALL_FRAME: usize = 1024;

/// Frames up to this size are assembled in a smaller stack buffer still.
const TINY_FRAME: usize = 256;

/// Sends header and payload (together at most `N` bytes) as one packet assembled in a stack
/// buffer; `Ok(true)` when the socket took it.
fn send_framed<const N: usize>(
    sock: BorrowedFd<'_>,
    header: &[u8; HEADER],
    payload: &[u8],
) -> io::Result<bool> {
    let total = HEADER + payload.len();
    let mut frame = [0u8; N];
    frame[..HEADER].copy_from_slice(header);
    frame[HEADER..total].copy_from_slice(payload);
    let result = crate::sys::retry(|| {
        rustix::net::send(
            sock,
            &frame[..total],
            SendFlags::DONTWAIT | SendFlags::NOSIGNAL,
        )
    });
    packet_taken(result, total)
}

/// Sends as many packets of the frame as the socket takes; `Ok(true)` when all are sent.
fn send_packets(
    sock: BorrowedFd<'_>,
    header: &[u8; HEADER],
    payload: &[u8],
    sent: &mut usize,
) -> io::Result<bool> {
    let total = HEADER + payload.len();
    if *sent == 0 && total <= SMALL_FRAME {
        // A frame of the size class that fits: zeroing (and touching) 1 KiB of stack for a
        // 64 B sample cost more than its copy.
        let taken = if total <= TINY_FRAME {
            send_framed::<TINY_FRAME>(sock, header, payload)
        } else {
            send_framed::<SMALL_FRAME>(sock, header, payload)
        };
        if !taken? {
            return Ok(false);
        }
        *sent = total;
        return Ok(true);
    }
    while *sent < total {
        let end = (*sent + PACKET).min(total);
        let head_part = header.get(*sent..HEADER.min(end)).unwrap_or_default();
        let body_part = payload
            .get(sent.saturating_sub(HEADER)..end - HEADER)
            .unwrap_or_default();
        let iov = [IoSlice::new(head_part), IoSlice::new(body_part)];
        let result = crate::sys::retry(|| {
            rustix::net::sendmsg(
                sock,
                &iov,
                &mut SendAncillaryBuffer::default(),
                SendFlags::DONTWAIT | SendFlags::NOSIGNAL,
            )
        });
        if !packet_taken(result, end - *sent)? {
            return Ok(false);
        }
        *sent = end;
    }
    Ok(true)
}

/// Whether a SEQPACKET send of `len` bytes went out whole (`Ok(false)`: the socket is full,
/// try again later). A packet is taken whole or not at all, so a short count is an error.
fn packet_taken(result: io::Result<usize>, len: usize) -> io::Result<bool> {
    match result {
        Ok(n) if n == len => Ok(true),
        Ok(_) => Err(io::Error::from(io::ErrorKind::WriteZero)),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
        Err(e) => Err(e),
    }
}

/// Feeds the sockets of `unfinished` connections `(index, bytes sent)` as they drain, until
/// each took the whole frame or `deadline` passes without any of them taking more; what is
/// left in `unfinished` goes to the service thread. A socket error marks its connection dead.
fn finish_inline(
    conns: &mut [UdsConn],
    header: &[u8; HEADER],
    payload: &[u8],
    unfinished: &mut Vec<(usize, usize)>,
    deadline: Instant,
) {
    while !unfinished.is_empty() {
        let now = Instant::now();
        if now >= deadline {
            return;
        }
        let fds: Vec<_> = unfinished
            .iter()
            .map(|&(index, _)| (conns[index].sock.as_fd(), PollFlags::OUT))
            .collect();
        let Ok(revents) = crate::sys::poll(&fds, Some(deadline - now)) else {
            return;
        };
        drop(fds);
        if revents.iter().all(|r| r.is_empty()) {
            return; // Nobody drained within the budget.
        }
        let mut still = Vec::with_capacity(unfinished.len());
        for (&(index, mut sent), ready) in unfinished.iter().zip(revents) {
            if ready.is_empty() {
                still.push((index, sent));
                continue;
            }
            let conn = &mut conns[index];
            match send_packets(conn.sock.as_fd(), header, payload, &mut sent) {
                Ok(true) => {}
                Ok(false) => still.push((index, sent)),
                Err(_) => conn.dead = true,
            }
        }
        *unfinished = still;
    }
}

/// Sends queued frames until the socket is full; marks the connection dead on errors.
fn flush(conn: &mut UdsConn) {
    while let Some(frame) = conn.queue.front_mut() {
        match send_packets(
            conn.sock.as_fd(),
            &frame.header,
            &frame.payload,
            &mut frame.sent,
        ) {
            Ok(true) => {
                conn.queue.pop_front();
            }
            Ok(false) => return,
            Err(_) => {
                conn.dead = true;
                conn.queue.clear();
                return;
            }
        }
    }
}

impl Attach for UdsWriterShared {
    fn kind(&self) -> Kind {
        Kind::UnixSocket
    }

    fn attach(
        &self,
        conn: ConnId,
        sock: Arc<OwnedFd>,
        hello: Hello,
        fds: Vec<OwnedFd>,
    ) -> Result<(), RejectReason> {
        let depth = hello.history.depth();
        if depth == 0 || depth > MAX_DEPTH || !fds.is_empty() {
            return Err(RejectReason::BadHello);
        }
        let _ = rustix::net::sockopt::set_socket_send_buffer_size(&*sock, SEND_BUFFER);
        let mut state = lock(&self.state);
        let welcome = Message::Welcome {
            sub_capacity: depth,
            completion_capacity: 1,
            channel_len: PACKET as u64,
        };
        crate::sys::send_with_fds(sock.as_fd(), &welcome.encode(), &[])
            .map_err(|_| RejectReason::Resources)?;
        let mut reader = UdsConn {
            conn,
            sock,
            history: hello.history,
            queue: VecDeque::new(),
            dead: false,
        };
        if hello.wants_kept {
            // Queued under the lock every send takes: they go out before any newer sample.
            let replayed = state.kept.len().saturating_sub(depth as usize);
            reader
                .queue
                .extend(state.kept.iter().skip(replayed).cloned());
            flush(&mut reader);
            if !reader.queue.is_empty() {
                self.endpoint.set_wants_write(conn, true);
            }
        }
        state.conns.push(reader);
        self.count_readers(&state);
        Ok(())
    }

    fn detach(&self, conn: ConnId) {
        let mut state = lock(&self.state);
        state.conns.retain(|c| c.conn != conn);
        self.count_readers(&state);
    }

    fn flush(&self, conn: ConnId) {
        let mut state = lock(&self.state);
        let Some(c) = state.conns.iter_mut().find(|c| c.conn == conn) else {
            return;
        };
        flush(c);
        self.endpoint.set_wants_write(conn, !c.queue.is_empty());
    }
}

/// Configuration of a [`UdsReader`].
#[derive(Clone, Copy, Debug)]
pub struct UdsReaderConfig {
    pub history: History,
    /// Ask for the samples the writer keeps for late joiners
    /// ([`UdsWriterConfig::kept_for_late_joiners`]), newest `history` depth of them, before
    /// anything newer: a TRANSIENT_LOCAL reader.
    pub wants_kept: bool,
    /// Larger samples are refused (the connection is dropped): a same-uid peer is trusted with
    /// our memory only up to this much per sample.
    pub max_sample: usize,
    pub connect_timeout: Duration,
}

impl Default for UdsReaderConfig {
    fn default() -> Self {
        UdsReaderConfig {
            history: History::KeepLast(10),
            wants_kept: false,
            max_sample: 4 << 30,
            connect_timeout: Duration::from_secs(2),
        }
    }
}

struct Partial {
    len: usize,
    seq: u64,
    timestamp_ns: u64,
    bytes: Vec<u8>,
}

struct RxState {
    partial: Option<Partial>,
    scratch: Vec<u8>,
    /// The socket's SO_RCVTIMEO as last set (`None`: none, a blocking `recv` waits forever).
    recv_timeout: Option<Duration>,
}

/// How long a receive may block.
#[derive(Clone, Copy)]
enum Wait {
    No,
    For(Duration),
    Forever,
}

/// Receives the samples of one [`UdsWriter`].
pub struct UdsReader {
    sock: Arc<OwnedFd>,
    max_sample: usize,
    rx: Mutex<RxState>,
    closed: AtomicBool,
}

impl UdsReader {
    /// Connects to the writer `key` at `address`.
    ///
    /// # Errors
    /// See [`ConnectError`].
    pub fn connect(
        address: &EndpointAddress,
        key: WriterKey,
        config: UdsReaderConfig,
    ) -> Result<UdsReader, ConnectError> {
        let depth = config.history.depth();
        if depth == 0 || depth > MAX_DEPTH {
            return Err(ConnectError::BadConfig);
        }
        let hello = Hello {
            kind: Kind::UnixSocket,
            history: config.history,
            max_held: 0,
            key,
            wants_kept: config.wants_kept,
        };
        let (sock, _welcome, fds) =
            endpoint::handshake(address, hello, &[], config.connect_timeout)?;
        if !fds.is_empty() {
            return Err(ConnectError::Protocol);
        }
        // Blocking from now on, so that `receive_timeout` waits inside `recv` (one system call
        // per packet instead of a poll and a recv); `receive` asks for MSG_DONTWAIT per call.
        rustix::io::ioctl_fionbio(&sock, false).map_err(|e| ConnectError::Io(e.into()))?;
        Ok(UdsReader {
            sock: Arc::new(sock),
            max_sample: config.max_sample,
            rx: Mutex::new(RxState {
                partial: None,
                scratch: vec![0; PACKET],
                recv_timeout: None,
            }),
            closed: AtomicBool::new(false),
        })
    }

    /// Takes the next complete sample without blocking.
    ///
    /// # Errors
    /// [`ReceiveError::WriterGone`] after the writer hung up; [`ReceiveError::Protocol`] on a
    /// malformed or oversized frame (the connection is then unusable).
    pub fn receive(&self) -> Result<Option<UdsSample>, ReceiveError> {
        self.take(Wait::No)
    }

    /// Takes the next complete sample; blocking, waits in `recv` itself (the socket's receive
    /// timeout is set only when it changes).
    fn take(&self, wait: Wait) -> Result<Option<UdsSample>, ReceiveError> {
        if self.closed.load(SeqCst) {
            return Err(ReceiveError::WriterGone);
        }
        let mut rx = lock(&self.rx);
        let rx = &mut *rx;
        let (flags, timeout) = match wait {
            Wait::No => (RecvFlags::DONTWAIT, rx.recv_timeout),
            Wait::For(timeout) => (RecvFlags::empty(), Some(timeout)),
            Wait::Forever => (RecvFlags::empty(), None),
        };
        if rx.recv_timeout != timeout {
            rustix::net::sockopt::set_socket_timeout(
                &*self.sock,
                rustix::net::sockopt::Timeout::Recv,
                timeout,
            )
            .map_err(|e| ReceiveError::Io(e.into()))?;
            rx.recv_timeout = timeout;
        }
        loop {
            let result = match rx.partial.as_mut() {
                None => recv_packet(self.sock.as_fd(), &mut rx.scratch[..], flags),
                Some(partial) => {
                    // Packets of one sample never exceed what is left of it, so receiving straight
                    // into the sample's spare capacity is exact.
                    let want = partial.len - partial.bytes.len();
                    partial.bytes.reserve_exact(want);
                    crate::sys::retry(|| {
                        rustix::net::recv(
                            self.sock.as_fd(),
                            spare_capacity(&mut partial.bytes),
                            flags,
                        )
                    })
                    .map(|(n, _)| n)
                }
            };
            let n = match result {
                Ok(0) => {
                    self.closed.store(true, SeqCst);
                    return Err(ReceiveError::WriterGone);
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(_) => {
                    self.closed.store(true, SeqCst);
                    return Err(ReceiveError::WriterGone);
                }
            };
            if rx.partial.is_none() {
                let packet = rx.scratch.get(..n).unwrap_or_default();
                let (Some(magic), Some(len), Some(seq), Some(ts)) = (
                    packet.get(..4),
                    read_u64(packet, 8),
                    read_u64(packet, 16),
                    read_u64(packet, 24),
                ) else {
                    return self.protocol_error();
                };
                let Ok(len) = usize::try_from(len) else {
                    return self.protocol_error();
                };
                if magic != MAGIC || len > self.max_sample || n - HEADER > len {
                    return self.protocol_error();
                }
                if n - HEADER == len {
                    // The whole sample in one packet (any up to `PACKET` less the header): one
                    // allocation, which its receivers can share as it is.
                    return Ok(Some(UdsSample {
                        bytes: UdsBytes::Whole(Arc::from(packet.get(HEADER..).unwrap_or_default())),
                        seq,
                        timestamp_ns: ts,
                    }));
                }
                let mut bytes = Vec::new();
                if bytes.try_reserve_exact(len).is_err() {
                    return self.protocol_error();
                }
                bytes.extend_from_slice(packet.get(HEADER..).unwrap_or_default());
                rx.partial = Some(Partial {
                    len,
                    seq,
                    timestamp_ns: ts,
                    bytes,
                });
            }
            if rx.partial.as_ref().is_some_and(|p| p.bytes.len() > p.len) {
                return self.protocol_error();
            }
            if rx.partial.as_ref().is_some_and(|p| p.bytes.len() == p.len) {
                let done = rx.partial.take().expect("internal bug: checked just above");
                return Ok(Some(UdsSample {
                    bytes: UdsBytes::Assembled(done.bytes),
                    seq: done.seq,
                    timestamp_ns: done.timestamp_ns,
                }));
            }
        }
    }

    fn protocol_error(&self) -> Result<Option<UdsSample>, ReceiveError> {
        self.closed.store(true, SeqCst);
        let _ = rustix::net::shutdown(&*self.sock, rustix::net::Shutdown::Both);
        Err(ReceiveError::Protocol)
    }

    /// Blocks until data or a hang-up arrives, or `timeout`.
    ///
    /// # Errors
    /// [`ReceiveError::Io`] if polling fails.
    pub fn wait(&self, timeout: Option<Duration>) -> Result<(), ReceiveError> {
        crate::sys::poll(&[(self.sock.as_fd(), PollFlags::IN)], timeout)
            .map_err(ReceiveError::Io)?;
        Ok(())
    }

    /// Waits for the next sample, blocked in `recv` itself: up to `timeout` for its first
    /// packet and again up to `timeout` for each further packet of a sample that has begun to
    /// arrive. One system call per packet, where [`Self::wait`] and [`Self::receive`] make two
    /// (it matters for small samples: a round trip is two of these). Meant for one receiving
    /// thread: another thread's `receive` waits for this one's to return.
    ///
    /// # Errors
    /// As [`Self::receive`], and [`ReceiveError::Io`] if the receive timeout cannot be set;
    /// `Ok(None)` on timeout.
    pub fn receive_timeout(&self, timeout: Duration) -> Result<Option<UdsSample>, ReceiveError> {
        // SO_RCVTIMEO cannot express zero (it means "forever"), and a microsecond is its unit.
        if timeout < Duration::from_micros(1) {
            return self.receive();
        }
        self.take(Wait::For(timeout))
    }

    /// Waits for the next sample without a timeout: as [`Self::receive_timeout`], minus the
    /// kernel timer a receive timeout arms and cancels around every blocking `recv` (0.3 us
    /// per round trip at 64 B on this VM). Another thread ends the wait through
    /// [`Self::interrupter`].
    ///
    /// # Errors
    /// As [`Self::receive`]; [`ReceiveError::WriterGone`] once interrupted.
    pub fn receive_blocking(&self) -> Result<UdsSample, ReceiveError> {
        loop {
            if let Some(sample) = self.take(Wait::Forever)? {
                return Ok(sample);
            }
        }
    }

    /// [`Self::receive_blocking`], first looking again (a `recv` that does not block, after a
    /// yield) as `spin` decides, while samples arrive densely. Without that it goes straight
    /// to the blocking `recv`: a look before it would cost a system call per sample.
    ///
    /// # Errors
    /// As [`Self::receive_blocking`].
    pub fn receive_spinning(&self, spin: &mut IdleSpin) -> Result<UdsSample, ReceiveError> {
        if let Some(sample) = spin.look_again(|| self.receive())? {
            return Ok(sample);
        }
        spin.sleeping();
        let sample = self.receive_blocking();
        spin.woke();
        sample
    }

    /// A handle that wakes a [`Self::receive_blocking`] from another thread, for good: the
    /// socket is shut down for reading, so this reader then reports the writer gone.
    pub fn interrupter(&self) -> UdsInterrupter {
        UdsInterrupter(Arc::downgrade(&self.sock))
    }

    /// For an external poll loop: readable means call [`Self::receive`].
    pub fn poll_fd(&self) -> BorrowedFd<'_> {
        self.sock.as_fd()
    }
}

/// Ends a [`UdsReader`]'s blocking receive from another thread; see [`UdsReader::interrupter`].
/// It does not keep the reader's socket open: once the reader is dropped there is nothing to
/// interrupt.
pub struct UdsInterrupter(Weak<OwnedFd>);

impl UdsInterrupter {
    pub fn interrupt(&self) {
        if let Some(sock) = self.0.upgrade() {
            let _ = rustix::net::shutdown(&*sock, rustix::net::Shutdown::Read);
        }
    }
}

fn read_u64(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}

fn recv_packet(sock: BorrowedFd<'_>, buf: &mut [u8], flags: RecvFlags) -> io::Result<usize> {
    crate::sys::retry(|| rustix::net::recv(sock, &mut *buf, flags).map(|(n, _)| n))
}

/// A received sample (owned bytes: the socket copied them).
pub struct UdsSample {
    bytes: UdsBytes,
    seq: u64,
    timestamp_ns: u64,
}

/// A sample's bytes as they were received.
#[derive(Debug)]
pub enum UdsBytes {
    /// A sample that came in one packet, in one reference-counted allocation.
    Whole(Arc<[u8]>),
    /// A sample of several packets, received straight into a buffer of its length (which can
    /// be large: it is allocated fallibly, and never copied into another).
    Assembled(Vec<u8>),
}

impl Deref for UdsBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Self::Whole(bytes) => bytes,
            Self::Assembled(bytes) => bytes,
        }
    }
}

impl UdsSample {
    pub fn seq(&self) -> u64 {
        self.seq
    }

    pub fn timestamp_ns(&self) -> u64 {
        self.timestamp_ns
    }

    /// The bytes as received, without a copy.
    pub fn into_bytes(self) -> UdsBytes {
        self.bytes
    }

    /// The bytes in a vector of their own (copied if the sample came in one packet).
    pub fn into_vec(self) -> Vec<u8> {
        match self.bytes {
            UdsBytes::Assembled(bytes) => bytes,
            whole => whole.to_vec(),
        }
    }
}

impl Deref for UdsSample {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.bytes
    }
}

impl fmt::Debug for UdsSample {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "UdsSample(seq {}, {} bytes)", self.seq, self.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader of `writer` with `history`, asking for its kept samples or not, once the
    /// writer counts it.
    fn attached(
        writer: &UdsWriter,
        endpoint: &Endpoint,
        key: WriterKey,
        history: History,
        wants_kept: bool,
    ) -> UdsReader {
        let config = UdsReaderConfig {
            history,
            wants_kept,
            ..UdsReaderConfig::default()
        };
        let before = writer.reader_count();
        let reader = UdsReader::connect(endpoint.address(), key, config).expect("connect");
        let deadline = Instant::now() + Duration::from_secs(10);
        while writer.reader_count() == before {
            assert!(Instant::now() < deadline, "never attached");
            std::thread::sleep(Duration::from_millis(1));
        }
        reader
    }

    /// The next `count` samples of `reader`: (first byte, number) each.
    fn received(reader: &UdsReader, count: usize) -> Vec<(u8, u64)> {
        (0..count)
            .map(|_| {
                let sample = reader
                    .receive_timeout(Duration::from_secs(5))
                    .expect("receive")
                    .expect("a sample");
                (sample[0], sample.seq())
            })
            .collect()
    }

    #[test]
    fn a_late_reader_that_asks_gets_the_kept_samples_before_live_ones() {
        let endpoint = Endpoint::bind().expect("bind");
        let key = WriterKey::from(11u128);
        let config = UdsWriterConfig {
            kept_for_late_joiners: 3,
            ..UdsWriterConfig::default()
        };
        let writer = UdsWriter::create(&endpoint, key, config).expect("create writer");
        for n in 1..=5u8 {
            writer.send(&[n; 16], 0).expect("send without readers");
        }
        let connect = |history, wants_kept| attached(&writer, &endpoint, key, history, wants_kept);
        let all_kept = connect(History::KeepLast(10), true);
        let newest_two = connect(History::KeepLast(2), true);
        let volatile = connect(History::KeepLast(10), false);
        writer.send(&[6; 16], 0).expect("send");
        for (reader, expected) in [
            (&all_kept, &[3u8, 4, 5, 6][..]),
            (&newest_two, &[4, 5, 6]),
            (&volatile, &[6]),
        ] {
            let want: Vec<(u8, u64)> = expected.iter().map(|&n| (n, u64::from(n))).collect();
            assert_eq!(received(reader, expected.len()), want);
        }
    }

    /// Samples another writer sent (a publisher that moved here), kept under their numbers:
    /// a reader connected before gets none of them, a late one that asks gets them first, and
    /// the next sample is numbered after them.
    #[test]
    fn kept_samples_go_to_later_readers_only_under_their_numbers() {
        let endpoint = Endpoint::bind().expect("bind");
        let key = WriterKey::from(12u128);
        let config = UdsWriterConfig {
            kept_for_late_joiners: 2,
            ..UdsWriterConfig::default()
        };
        let writer = UdsWriter::create(&endpoint, key, config).expect("create writer");
        let connect = || attached(&writer, &endpoint, key, History::KeepLast(10), true);
        let before = connect();
        for n in 7..=9u8 {
            writer.keep_for_late_joiners(u64::from(n), &[n; 16], 0);
        }
        assert_eq!(writer.stats().sent, 0, "kept, not sent");
        let late = connect();
        writer.send(&[10; 16], 0).expect("send");
        for (reader, expected) in [(&late, &[8u8, 9, 10][..]), (&before, &[10])] {
            let want: Vec<(u8, u64)> = expected.iter().map(|&n| (n, u64::from(n))).collect();
            assert_eq!(received(reader, expected.len()), want);
        }
        assert!(
            before
                .receive_timeout(Duration::from_millis(200))
                .expect("receive")
                .is_none(),
            "the reader connected before got nothing more"
        );
    }

    /// A sample of several send buffers arrives whole and in order whether the publishing
    /// thread feeds it (default budget) or the service thread finishes it (zero budget).
    #[test]
    fn samples_larger_than_the_send_buffer_arrive_whole_either_way() {
        for budget in [
            Duration::ZERO,
            UdsWriterConfig::default().inline_send_budget,
        ] {
            let config = UdsWriterConfig {
                inline_send_budget: budget,
                ..UdsWriterConfig::default()
            };
            let (_endpoint, writer, reader) = connected_pair_with(7, config, History::KeepAll(4));
            // 3 x 8 MiB: more than the largest send buffer the kernel grants (2 x wmem_max).
            let samples: Vec<Vec<u8>> = (0..3u8)
                .map(|i| (0..8 << 20).map(|b: usize| (b as u8) ^ i).collect())
                .collect();
            std::thread::scope(|scope| {
                let receiving = scope.spawn(|| {
                    let mut got = Vec::new();
                    while got.len() < samples.len() {
                        match reader.receive_timeout(Duration::from_secs(5)) {
                            Ok(Some(sample)) => got.push(sample.into_vec()),
                            other => panic!("no sample: {other:?}"),
                        }
                    }
                    got
                });
                for sample in &samples {
                    writer.send(sample, 0).expect("send");
                }
                let got = receiving.join().expect("receiver");
                assert!(got == samples, "budget {budget:?}: samples differ");
            });
        }
    }

    fn connected_pair(key: u128) -> (Endpoint, UdsWriter, UdsReader) {
        connected_pair_with(key, UdsWriterConfig::default(), History::KeepAll(8))
    }

    /// A writer and one reader with `history`, returned once the writer has accepted the reader.
    fn connected_pair_with(
        key: u128,
        config: UdsWriterConfig,
        history: History,
    ) -> (Endpoint, UdsWriter, UdsReader) {
        let endpoint = Endpoint::bind().expect("bind");
        let writer =
            UdsWriter::create(&endpoint, WriterKey::from(key), config).expect("create writer");
        let reader = UdsReader::connect(
            endpoint.address(),
            WriterKey::from(key),
            UdsReaderConfig {
                history,
                ..UdsReaderConfig::default()
            },
        )
        .expect("connect");
        let deadline = Instant::now() + Duration::from_secs(5);
        while writer.reader_count() == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        (endpoint, writer, reader)
    }

    /// Packets from a writer that break the framing end the link with
    /// [`ReceiveError::Protocol`] instead of becoming samples: a bad magic, a header announcing
    /// more than `max_sample` bytes (refused before anything is reserved for it), more bytes
    /// than the header announced, and a packet shorter than a header.
    #[test]
    fn malformed_frames_end_the_link_with_a_protocol_error() {
        let header = |magic: &[u8; 4], len: u64| {
            let mut header = vec![0u8; HEADER];
            header[..4].copy_from_slice(magic);
            header[8..16].copy_from_slice(&len.to_le_bytes());
            header
        };
        let cases = [
            ("a bad magic", header(b"XXXX", 4)),
            ("a sample over max_sample", header(MAGIC, 4096)),
            (
                "more bytes than announced",
                [header(MAGIC, 2), vec![1, 2, 3, 4]].concat(),
            ),
            ("a packet shorter than a header", vec![0u8; HEADER - 1]),
        ];
        for (what, packet) in cases {
            let endpoint = Endpoint::bind().expect("bind");
            let key = WriterKey::from(11u128);
            let writer = UdsWriter::create(&endpoint, key, UdsWriterConfig::default())
                .expect("create writer");
            let config = UdsReaderConfig {
                max_sample: 1024,
                ..UdsReaderConfig::default()
            };
            let reader = UdsReader::connect(endpoint.address(), key, config).expect("connect");
            let start = Instant::now();
            while writer.reader_count() == 0 {
                assert!(start.elapsed() < Duration::from_secs(10), "never attached");
                std::thread::sleep(Duration::from_millis(1));
            }
            let sock = lock(&writer.shared.state).conns[0].sock.clone();
            rustix::net::send(&*sock, &packet, SendFlags::empty()).expect("send");
            match reader.receive_timeout(Duration::from_secs(10)) {
                Err(ReceiveError::Protocol) => {}
                Err(other) => panic!("{what}: {other:?}, not a protocol error"),
                Ok(Some(_)) => panic!("{what}: taken as a sample"),
                Ok(None) => panic!("{what}: nothing reported"),
            }
            assert!(
                matches!(reader.receive(), Err(ReceiveError::WriterGone)),
                "{what}: the link is still open"
            );
        }
    }

    /// Frames on either side of the stack-assembled size, and a blocking receive after a
    /// receive with a timeout (the socket's timeout is cleared again).
    #[test]
    fn small_and_large_frames_arrive_whole_with_their_numbers() {
        let (_endpoint, writer, reader) = connected_pair(9);
        let edge = SMALL_FRAME - HEADER;
        let sizes = [0, 1, 64, edge - 1, edge, edge + 1, 3 * SMALL_FRAME];
        for (i, &size) in sizes.iter().enumerate() {
            let payload: Vec<u8> = (0..size).map(|b| (b * 7 + i) as u8).collect();
            let seq = writer.send(&payload, 1000 + i as u64).expect("send");
            let sample = if i % 2 == 0 {
                reader.receive_blocking().expect("sample")
            } else {
                reader
                    .receive_timeout(Duration::from_secs(5))
                    .expect("receive")
                    .expect("sample within 5 s")
            };
            assert_eq!(sample.seq(), seq);
            assert_eq!(sample.timestamp_ns(), 1000 + i as u64);
            assert!(*sample == payload[..], "size {size}: bytes differ");
        }
    }

    /// The lock-free reader count follows readers arriving and leaving.
    #[test]
    fn the_reader_count_follows_readers_coming_and_going() {
        let (endpoint, writer, first) = connected_pair(11);
        assert_eq!(writer.reader_count(), 1);
        let second = UdsReader::connect(
            endpoint.address(),
            WriterKey::from(11u128),
            UdsReaderConfig::default(),
        )
        .expect("connect");
        let settled = |count| {
            let deadline = Instant::now() + Duration::from_secs(5);
            while writer.reader_count() != count && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
            writer.reader_count() == count
        };
        assert!(settled(2), "the second reader was never counted");
        let handle = writer.reader_count_handle();
        assert_eq!(handle.get(), 2, "the handle reads the writer's count");
        drop(first);
        // The endpoint sees the hang-up, or a send finds the socket dead.
        let gone_after_sends = |count| {
            (0..5).any(|_| {
                let _ = writer.send(b"x", 0);
                settled(count)
            })
        };
        assert!(gone_after_sends(1), "the first reader was never uncounted");
        drop(second);
        assert!(gone_after_sends(0), "the second reader was never uncounted");
        assert_eq!(writer.stats().readers, 0);
    }

    /// A sample that fits in one packet arrives in one shareable allocation; one of several
    /// packets is assembled in a vector. Both byte for byte, on either side of the limit.
    #[test]
    fn a_one_packet_sample_arrives_whole_and_a_larger_one_assembled() {
        let (_endpoint, writer, reader) =
            connected_pair_with(13, UdsWriterConfig::default(), History::KeepAll(8));
        let largest_whole = PACKET - HEADER;
        for (len, whole) in [
            (0, true),
            (64, true),
            (largest_whole, true),
            (largest_whole + 1, false),
            (3 * PACKET, false),
        ] {
            let payload: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            writer.send(&payload, 7).expect("send");
            let sample = reader
                .receive_timeout(Duration::from_secs(5))
                .expect("receive")
                .expect("a sample");
            assert_eq!(&sample[..], &payload[..], "{len} bytes");
            match sample.into_bytes() {
                UdsBytes::Whole(bytes) => {
                    assert!(whole, "{len} bytes came whole");
                    assert_eq!(&bytes[..], &payload[..]);
                }
                UdsBytes::Assembled(bytes) => {
                    assert!(!whole, "{len} bytes were assembled");
                    assert_eq!(bytes, payload);
                }
            }
        }
    }

    #[test]
    fn a_reader_count_handle_reads_zero_once_the_writer_is_gone() {
        let (_endpoint, writer, _reader) = connected_pair(12);
        let handle = writer.reader_count_handle();
        assert_eq!(handle.get(), 1);
        drop(writer);
        assert_eq!(handle.get(), 0, "a dropped writer has nobody to send to");
    }

    #[test]
    fn a_zero_timeout_does_not_block() {
        let endpoint = Endpoint::bind().expect("bind");
        let _writer = UdsWriter::create(
            &endpoint,
            WriterKey::from(8u128),
            UdsWriterConfig::default(),
        )
        .expect("create writer");
        let reader = UdsReader::connect(
            endpoint.address(),
            WriterKey::from(8u128),
            UdsReaderConfig::default(),
        )
        .expect("connect");
        assert!(reader
            .receive_timeout(Duration::ZERO)
            .expect("receive")
            .is_none());
    }
}
