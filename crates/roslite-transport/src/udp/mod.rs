//! The UDPv4 transport: one participant's sockets, a poll loop over them, and a waker.
//!
//! Ownership and invariants:
//! - A [`UdpTransport`] owns four or five file descriptors: the metatraffic unicast socket
//!   (SPDP unicast, SEDP, WLP), the user unicast socket (user DATA, HEARTBEAT, ACKNACK), the
//!   SPDP multicast socket when the range uses multicast, the [`Waker`]'s eventfd, and an
//!   epoll instance watching all of them.
//! - Waiting uses `epoll_wait` (the interest list stays registered, where `poll` would add and
//!   remove a wait-queue entry per descriptor on every call: that difference is measurable on
//!   a 64-byte round trip). `epoll_wait` counts its timeout in whole milliseconds, so a
//!   deadline closer than that is waited for with `ppoll`, which has nanoseconds.
//! - Unicast sockets are bound *without* `SO_REUSEADDR`/`SO_REUSEPORT`, so a bind failing with
//!   `EADDRINUSE` means another participant owns that participant id (RTPS 2.5 §9.6.1.1: try
//!   ids upward). Only the SPDP multicast socket shares its port.
//! - Every socket is non-blocking. [`UdpTransport::recv`] returns at most one datagram per call;
//!   it remembers which sockets `poll` reported readable and drains them round-robin before it
//!   polls again, so a busy socket costs one `recvfrom` per datagram. The first datagram after
//!   a `poll` is usually alone (request/reply traffic): unless it is large (a fragment train) or
//!   a periodic probe finds more, the socket is not read again until `poll` says so, which
//!   saves the `recvfrom` that would only return `EAGAIN`.
//! - Nothing here allocates per datagram: the caller lends the receive buffer.
//! - All methods take `&self` and the transport is `Send + Sync`: share it in an `Arc` with one
//!   thread in `recv` and any number sending. (Several threads may call `recv`; each datagram
//!   goes to one of them.)
//! - Addresses advertised in [`Locators`] are never `0.0.0.0`.
//!
//! Linux only (eventfd, `IP_MULTICAST_ALL`, `SO_REUSEPORT` semantics).

use std::fmt;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering::Relaxed};

use rustix::event::{epoll, PollFd, PollFlags, Timespec};
use rustix::fd::OwnedFd;
use rustix::io::Errno;
use rustix::net::{RecvFlags, SendFlags};
use socket2::Socket;

use crate::config::{ConfigError, DiscoveryConfig, DiscoveryRange};
use crate::ports::{self, SPDP_MULTICAST_GROUP};
use crate::waker::Waker;

mod error;
mod setup;

pub use error::{BindError, RecvError, SendError, TransportNote};

/// The largest UDP payload over IPv4: 65535 − 20 (IP header) − 8 (UDP header).
pub const MAX_UDP_PAYLOAD: usize = 65_507;
/// A receive buffer of this size never truncates a datagram.
pub const RECV_BUFFER_LEN: usize = 65_536;
/// Participant ids `0..120` are tried by default.
pub const DEFAULT_PARTICIPANT_ID_LIMIT: u32 = 120;
/// Requested `SO_RCVBUF`: 4 MiB absorbs bursts of fragmented samples.
pub const DEFAULT_RECV_BUFFER_BYTES: usize = 4 << 20;
/// Requested `SO_SNDBUF`.
pub const DEFAULT_SEND_BUFFER_BYTES: usize = 1 << 20;

/// How to open a [`UdpTransport`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransportConfig {
    pub discovery: DiscoveryConfig,
    /// Participant ids `0..participant_id_limit` are tried in order (fewer if the ports of the
    /// larger ids would exceed 65535).
    pub participant_id_limit: u32,
    /// Requested `SO_RCVBUF` for every socket; 0 keeps the kernel default. A kernel cap
    /// (`net.core.rmem_max`) is reported as a [`TransportNote`], never as an error.
    pub recv_buffer_bytes: usize,
    /// Requested `SO_SNDBUF` for the unicast sockets; 0 keeps the kernel default.
    pub send_buffer_bytes: usize,
}

impl Default for TransportConfig {
    fn default() -> Self {
        TransportConfig::new(DiscoveryConfig::default())
    }
}

impl TransportConfig {
    /// `discovery` with the default id limit and buffer sizes.
    pub fn new(discovery: DiscoveryConfig) -> Self {
        TransportConfig {
            discovery,
            participant_id_limit: DEFAULT_PARTICIPANT_ID_LIMIT,
            recv_buffer_bytes: DEFAULT_RECV_BUFFER_BYTES,
            send_buffer_bytes: DEFAULT_SEND_BUFFER_BYTES,
        }
    }

    /// [`DiscoveryConfig::from_env`] with the defaults above.
    ///
    /// # Errors
    /// See [`DiscoveryConfig::from_env`].
    pub fn from_env() -> Result<Self, ConfigError> {
        Ok(TransportConfig::new(DiscoveryConfig::from_env()?))
    }
}

/// Which socket a datagram arrived on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SocketKind {
    /// The metatraffic unicast socket (port `7410 + 250d + 2·pid`).
    Metatraffic,
    /// The SPDP multicast socket (239.255.0.1, port `7400 + 250d`).
    Multicast,
    /// The user unicast socket (port `7411 + 250d + 2·pid`).
    User,
}

impl fmt::Display for SocketKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SocketKind::Metatraffic => "metatraffic unicast",
            SocketKind::Multicast => "SPDP multicast",
            SocketKind::User => "user unicast",
        })
    }
}

/// The locators a participant advertises in SPDP (RTPS 2.5 §8.5.3.2 `ParticipantProxy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Locators {
    /// `PID_METATRAFFIC_UNICAST_LOCATOR`.
    pub metatraffic_unicast: SocketAddrV4,
    /// `PID_METATRAFFIC_MULTICAST_LOCATOR`: 239.255.0.1:7400+250d when the range uses
    /// multicast.
    pub metatraffic_multicast: Option<SocketAddrV4>,
    /// `PID_DEFAULT_UNICAST_LOCATOR`.
    pub default_unicast: SocketAddrV4,
    /// `PID_DEFAULT_MULTICAST_LOCATOR`: always `None`; no user-traffic multicast socket is
    /// opened, writers send user data by unicast to each reader.
    pub default_multicast: Option<SocketAddrV4>,
}

impl Locators {
    /// Every advertised address.
    pub fn iter(&self) -> impl Iterator<Item = SocketAddrV4> {
        [
            Some(self.metatraffic_unicast),
            self.metatraffic_multicast,
            Some(self.default_unicast),
            self.default_multicast,
        ]
        .into_iter()
        .flatten()
    }
}

/// A datagram now in the first `len` bytes of the caller's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Received {
    pub len: usize,
    pub source: SocketAddrV4,
    pub kind: SocketKind,
}

/// What ended a [`UdpTransport::recv`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecvEvent {
    Datagram(Received),
    /// The deadline passed with nothing to receive.
    DeadlineReached,
    /// [`Waker::wake`] was called (possibly several times) since the last `Woken`.
    Woken,
}

/// Counters since [`UdpTransport::bind`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransportStats {
    pub datagrams_received: u64,
    pub bytes_received: u64,
    pub datagrams_sent: u64,
    pub bytes_sent: u64,
    /// Failed sends (every [`SendError`]).
    pub send_errors: u64,
    /// Datagrams dropped because they were larger than the caller's buffer.
    pub truncated: u64,
    /// Datagrams dropped for a transient receive error (e.g. an ICMP error report).
    pub recv_errors: u64,
}

/// Socket buffer sizes, as `getsockopt` reports them. Linux reports twice the usable size it
/// accounts for (socket(7) `SO_RCVBUF`), so `granted == 2 * requested` means "not capped".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SocketBufferSizes {
    pub recv_requested: usize,
    pub recv_granted: usize,
    pub send_requested: usize,
    pub send_granted: usize,
}

/// The current `CLOCK_MONOTONIC` time in nanoseconds, the clock of `recv` deadlines.
pub fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    // CLOCK_MONOTONIC is never negative.
    (t.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(t.tv_nsec as u64)
}

#[derive(Debug, Default)]
struct Counters {
    datagrams_received: AtomicU64,
    bytes_received: AtomicU64,
    datagrams_sent: AtomicU64,
    bytes_sent: AtomicU64,
    send_errors: AtomicU64,
    truncated: AtomicU64,
    recv_errors: AtomicU64,
}

fn bump(counter: &AtomicU64, by: u64) {
    counter.fetch_add(by, Relaxed);
}

/// Socket index in the `ready` bit set and round-robin order.
const METATRAFFIC: usize = 0;
/// A first datagram after `poll` at least this long keeps its socket in the drain set: large
/// datagrams are fragments, which come in trains.
const TRAIN_DATAGRAM_LEN: usize = 8 * 1024;
/// Every this many lone small datagrams, the socket is read once more anyway, so a burst of
/// small datagrams is found and drained without a `poll` per datagram.
const PROBE_EVERY: u32 = 8;
const USER: usize = 1;
const MULTICAST: usize = 2;

enum Attempt {
    Datagram(Received),
    /// A datagram was consumed but not returned (truncated, transient error).
    Dropped,
    /// Nothing to read (EAGAIN).
    Empty,
}

/// One participant's UDPv4 sockets.
#[derive(Debug)]
pub struct UdpTransport {
    domain_id: u32,
    range: DiscoveryRange,
    participant_id: u32,
    interface: Ipv4Addr,
    metatraffic: Socket,
    user: Socket,
    multicast: Option<Socket>,
    waker: Waker,
    /// Level-triggered interest in every socket (event data: its index) and the waker (event
    /// data: [`WAKER_SLOT`]).
    epoll: OwnedFd,
    /// Bit `i` set: [`UdpTransport::recv`] serves socket `i` (all of them, unless the user
    /// socket was handed to a thread of its own with [`UdpTransport::dedicate_user_socket`]).
    served: u8,
    locators: Locators,
    spdp_destinations: Vec<SocketAddrV4>,
    buffers: SocketBufferSizes,
    notes: Vec<TransportNote>,
    counters: Counters,
    /// Bit `i` set: socket `i` may have datagrams queued (`poll` said so or nothing tried yet).
    /// Atomic only so that `recv` can take `&self`; a bit lost to a race between two receiving
    /// threads costs one extra `poll`, which is level-triggered, so no datagram waits.
    ready: AtomicU8,
    /// Bit `i` set: `poll` reported socket `i` readable and no datagram was read from it since
    /// (the next one is the first of its batch; see [`UdpTransport::recv`]).
    polled: AtomicU8,
    /// Lone small datagrams since the last probe (see [`PROBE_EVERY`]).
    lone: AtomicU32,
    /// Where the round-robin scan starts.
    next: AtomicUsize,
}

/// How long [`UdpTransport::recv_user`] blocks at most, so its thread notices a stop even if
/// [`UdpTransport::release_user_receiver`] could not wake it. The release wakes it (Linux
/// wakes a reader blocked on a socket whose receive side is shut), so this is only a safety
/// net, and long: each expiry wakes an idle process (at 500 ms, two of the eight wake-ups a
/// second of an idle process among 16, docs/scale.md).
pub const USER_RECV_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Event data of the waker in the epoll set (the sockets use their indices).
const WAKER_SLOT: u64 = 8;

/// An epoll instance watching the sockets (event data: [`METATRAFFIC`], [`USER`],
/// [`MULTICAST`]) and the waker, level-triggered.
fn watch_all(
    metatraffic: &Socket,
    user: &Socket,
    multicast: Option<&Socket>,
    waker: &Waker,
) -> std::io::Result<OwnedFd> {
    let epoll = epoll::create(epoll::CreateFlags::CLOEXEC)?;
    let interest = epoll::EventFlags::IN;
    epoll::add(
        &epoll,
        metatraffic,
        epoll::EventData::new_u64(METATRAFFIC as u64),
        interest,
    )?;
    epoll::add(
        &epoll,
        user,
        epoll::EventData::new_u64(USER as u64),
        interest,
    )?;
    if let Some(m) = multicast {
        epoll::add(
            &epoll,
            m,
            epoll::EventData::new_u64(MULTICAST as u64),
            interest,
        )?;
    }
    epoll::add(
        &epoll,
        waker.as_fd(),
        epoll::EventData::new_u64(WAKER_SLOT),
        interest,
    )?;
    Ok(epoll)
}

impl UdpTransport {
    /// Binds the metatraffic and user unicast sockets at the first participant id whose two
    /// ports are free (RTPS 2.5 §9.6.1.1), and, when the range uses multicast, the SPDP
    /// multicast socket: `SO_REUSEADDR` + `SO_REUSEPORT` on 239.255.0.1:7400+250d so every
    /// participant on the host shares the port, `IP_MULTICAST_ALL` off, joined on the
    /// interface.
    ///
    /// The interface (the unicast address bound and advertised) is
    /// `config.discovery.interface` if set; otherwise 127.0.0.1 for `LOCALHOST` and for `OFF`
    /// without static peers, and otherwise the source address of the kernel's route to
    /// 239.255.0.1 (`SUBNET`) or to the first non-loopback static peer (found with `connect(2)`
    /// on a UDP socket, which sends nothing), falling back to 127.0.0.1 with a
    /// [`TransportNote`]. A loopback interface is bound as is; any other is bound as 0.0.0.0
    /// (so same-host peers reach us on 127.0.0.1 too) and advertised as itself.
    ///
    /// Unicast sockets send multicast with `IP_MULTICAST_IF` = interface, TTL 1 and
    /// `IP_MULTICAST_LOOP` on, so participants in other processes on this host hear our SPDP.
    /// Where `IP_MULTICAST_IF` or `IP_MULTICAST_ALL` is unknown (qemu-user 7.2), the
    /// kernel's default stands and a [`TransportNote`] says so.
    /// Our own multicast socket hears it too: the RTPS layer must ignore datagrams carrying its
    /// own GUID prefix. (When the interface is `lo`, the kernel delivers multicast to every
    /// member through `lo` whatever `IP_MULTICAST_LOOP` says.)
    ///
    /// # Errors
    /// [`BindError`]; a capped socket buffer is a [`TransportNote`], not an error.
    pub fn bind(config: &TransportConfig) -> Result<Self, BindError> {
        let discovery = &config.discovery;
        let domain_id = discovery.domain_id;
        let spdp_port = ports::spdp_multicast_port(domain_id)?;
        if config.participant_id_limit == 0 {
            return Err(BindError::InvalidConfig {
                reason: "participant_id_limit is 0, so no participant id can be tried; use at \
                         least 1 (default 120)"
                    .into(),
            });
        }
        let mut notes = Vec::new();
        let interface = setup::choose_interface(discovery, spdp_port, &mut notes)?;
        let uses_multicast = discovery.range.uses_multicast();
        let options = setup::UnicastOptions {
            config,
            interface,
            uses_multicast,
        };
        let (participant_id, metatraffic, user) = setup::bind_unicast(&options, &mut notes)?;
        let multicast = if uses_multicast {
            Some(setup::open_multicast(
                config, interface, spdp_port, &mut notes,
            )?)
        } else {
            None
        };
        let buffers = setup::buffer_sizes(config, &metatraffic, &mut notes)?;
        let waker = Waker::new().map_err(|source| BindError::Waker { source })?;
        let epoll = watch_all(&metatraffic, &user, multicast.as_ref(), &waker)
            .map_err(|source| BindError::Epoll { source })?;

        let metatraffic_unicast = SocketAddrV4::new(
            interface,
            ports::metatraffic_unicast_port(domain_id, participant_id)?,
        );
        let locators = Locators {
            metatraffic_unicast,
            metatraffic_multicast: uses_multicast
                .then_some(SocketAddrV4::new(SPDP_MULTICAST_GROUP, spdp_port)),
            default_unicast: SocketAddrV4::new(
                interface,
                ports::user_unicast_port(domain_id, participant_id)?,
            ),
            default_multicast: None,
        };
        let own_port = metatraffic_unicast.port();
        let spdp_destinations = discovery
            .spdp_destinations()?
            .into_iter()
            .filter(|d| !(d.port() == own_port && (*d.ip() == interface || d.ip().is_loopback())))
            .collect();
        let served = if multicast.is_some() { 0b111 } else { 0b011 };
        Ok(UdpTransport {
            domain_id,
            range: discovery.range,
            participant_id,
            interface,
            metatraffic,
            user,
            multicast,
            waker,
            epoll,
            served,
            locators,
            spdp_destinations,
            buffers,
            notes,
            counters: Counters::default(),
            ready: AtomicU8::new(served),
            polled: AtomicU8::new(0),
            lone: AtomicU32::new(0),
            next: AtomicUsize::new(0),
        })
    }

    pub fn domain_id(&self) -> u32 {
        self.domain_id
    }

    pub fn range(&self) -> DiscoveryRange {
        self.range
    }

    /// The participant id whose ports this transport holds.
    pub fn participant_id(&self) -> u32 {
        self.participant_id
    }

    /// The unicast address advertised in every unicast locator.
    pub fn interface(&self) -> Ipv4Addr {
        self.interface
    }

    /// The addresses to advertise in SPDP; never 0.0.0.0.
    pub fn local_locators(&self) -> Locators {
        self.locators
    }

    /// Where to send SPDP announcements ([`DiscoveryConfig::spdp_destinations`] without this
    /// participant's own metatraffic port). Send them with [`Self::send_metatraffic`].
    pub fn spdp_destinations(&self) -> &[SocketAddrV4] {
        &self.spdp_destinations
    }

    /// Socket buffer sizes requested and granted.
    pub fn socket_buffers(&self) -> SocketBufferSizes {
        self.buffers
    }

    /// Non-fatal findings of [`Self::bind`], for the caller to log.
    pub fn notes(&self) -> &[TransportNote] {
        &self.notes
    }

    /// A handle that wakes a blocked [`Self::recv`] from any thread.
    pub fn waker(&self) -> Waker {
        self.waker.clone()
    }

    pub fn stats(&self) -> TransportStats {
        let c = &self.counters;
        TransportStats {
            datagrams_received: c.datagrams_received.load(Relaxed),
            bytes_received: c.bytes_received.load(Relaxed),
            datagrams_sent: c.datagrams_sent.load(Relaxed),
            bytes_sent: c.bytes_sent.load(Relaxed),
            send_errors: c.send_errors.load(Relaxed),
            truncated: c.truncated.load(Relaxed),
            recv_errors: c.recv_errors.load(Relaxed),
        }
    }

    /// Sends one datagram from the user unicast socket (user traffic).
    ///
    /// # Errors
    /// [`SendError`]; the datagram was not sent.
    pub fn send(&self, destination: SocketAddrV4, datagram: &[u8]) -> Result<(), SendError> {
        self.send_on(&self.user, destination, &[datagram])
    }

    /// [`Self::send`] for a datagram given as consecutive parts (one `sendmsg`, so a large
    /// payload is sent from where it is instead of being copied behind its header first).
    ///
    /// # Errors
    /// [`SendError`]; the datagram was not sent.
    pub fn send_parts(&self, destination: SocketAddrV4, parts: &[&[u8]]) -> Result<(), SendError> {
        self.send_on(&self.user, destination, parts)
    }

    /// Sends one datagram from the metatraffic unicast socket (SPDP, SEDP, WLP).
    ///
    /// # Errors
    /// [`SendError`]; the datagram was not sent.
    pub fn send_metatraffic(
        &self,
        destination: SocketAddrV4,
        datagram: &[u8],
    ) -> Result<(), SendError> {
        self.send_on(&self.metatraffic, destination, &[datagram])
    }

    fn send_on(
        &self,
        socket: &Socket,
        destination: SocketAddrV4,
        parts: &[&[u8]],
    ) -> Result<(), SendError> {
        let len = parts.iter().map(|p| p.len()).sum::<usize>();
        let result = self.try_send(socket, destination, parts, len);
        match &result {
            Ok(()) => {
                bump(&self.counters.datagrams_sent, 1);
                bump(&self.counters.bytes_sent, len as u64);
            }
            Err(_) => bump(&self.counters.send_errors, 1),
        }
        result
    }

    fn try_send(
        &self,
        socket: &Socket,
        destination: SocketAddrV4,
        parts: &[&[u8]],
        len: usize,
    ) -> Result<(), SendError> {
        if destination.ip().is_unspecified() || destination.port() == 0 {
            return Err(SendError::InvalidDestination { destination });
        }
        if destination.ip().is_multicast() && !self.range.uses_multicast() {
            return Err(SendError::MulticastDisabled {
                destination,
                range: self.range,
            });
        }
        if len > MAX_UDP_PAYLOAD {
            return Err(SendError::TooLarge { len });
        }
        // Several parts (a header and a payload sent in place) go out with one sendmsg; a
        // datagram in one buffer with sendto.
        let mut non_empty = parts.iter().filter(|p| !p.is_empty());
        let single = match (non_empty.next(), non_empty.next()) {
            (first, None) => Some(first.copied().unwrap_or_default()),
            _ => None,
        };
        // The runtime sends at most a head, a payload and its padding: no allocation for those.
        const ON_STACK: usize = 4;
        let mut on_stack = [std::io::IoSlice::new(&[]); ON_STACK];
        let on_heap: Vec<std::io::IoSlice<'_>>;
        let slices: &[std::io::IoSlice<'_>] = match single {
            Some(_) => &[],
            None => {
                let mut non_empty = parts.iter().filter(|p| !p.is_empty());
                if parts.iter().filter(|p| !p.is_empty()).count() <= ON_STACK {
                    let mut count = 0;
                    for (slot, part) in on_stack.iter_mut().zip(&mut non_empty) {
                        *slot = std::io::IoSlice::new(part);
                        count += 1;
                    }
                    &on_stack[..count]
                } else {
                    on_heap = non_empty.map(|p| std::io::IoSlice::new(p)).collect();
                    &on_heap
                }
            }
        };
        loop {
            let sent = match single {
                Some(datagram) => {
                    rustix::net::sendto(socket, datagram, SendFlags::empty(), &destination)
                }
                None => rustix::net::sendmsg_addr(
                    socket,
                    &destination,
                    slices,
                    &mut rustix::net::SendAncillaryBuffer::default(),
                    SendFlags::empty(),
                ),
            };
            match sent {
                Ok(_) => return Ok(()),
                Err(Errno::INTR) => continue,
                Err(Errno::AGAIN) => return Err(SendError::WouldBlock { destination }),
                Err(e) => {
                    return Err(SendError::Io {
                        destination,
                        source: e.into(),
                    })
                }
            }
        }
    }

    /// Waits for one datagram, for `deadline` (absolute `CLOCK_MONOTONIC` nanoseconds, see
    /// [`monotonic_ns`]; `None` waits forever), or for a [`Waker::wake`], whichever comes
    /// first. A pending wake is reported before queued datagrams (checked with one atomic load
    /// per call, so a busy socket cannot delay it); the datagrams are returned by the next
    /// calls.
    ///
    /// The datagram is written to the start of `buf`. Datagrams longer than `buf` are dropped
    /// and counted in [`TransportStats::truncated`]; a buffer of [`RECV_BUFFER_LEN`] bytes never
    /// truncates. Sockets are served round-robin.
    ///
    /// # Errors
    /// [`RecvError`] if `poll` or `recvfrom` fails for a reason other than a signal (retried)
    /// or a transient per-datagram error (counted in [`TransportStats::recv_errors`]).
    pub fn recv(&self, buf: &mut [u8], deadline: Option<u64>) -> Result<RecvEvent, RecvError> {
        let count = if self.multicast.is_some() { 3 } else { 2 };
        loop {
            if self.waker.is_pending() && self.waker.take() {
                return Ok(RecvEvent::Woken);
            }
            loop {
                let ready = self.ready.load(Relaxed);
                if ready == 0 {
                    break;
                }
                let next = self.next.load(Relaxed);
                let Some(index) = (0..count)
                    .map(|k| (next + k) % count)
                    .find(|i| ready & (1 << i) != 0)
                else {
                    debug_assert!(
                        false,
                        "internal bug: ready bit for a socket that does not exist"
                    );
                    self.ready.store(0, Relaxed);
                    break;
                };
                match self.recv_on(index, buf, RecvFlags::DONTWAIT)? {
                    Attempt::Datagram(received) => {
                        self.next.store((index + 1) % count, Relaxed);
                        let bit = 1u8 << index;
                        let first = self.polled.fetch_and(!bit, Relaxed) & bit != 0;
                        if first && !self.keep_draining(received.len) {
                            // Most likely alone: let `poll` tell (level-triggered, so a
                            // datagram queued meanwhile is reported at once).
                            self.ready.fetch_and(!bit, Relaxed);
                        }
                        return Ok(RecvEvent::Datagram(received));
                    }
                    Attempt::Dropped => {}
                    Attempt::Empty => {
                        self.ready.fetch_and(!(1 << index), Relaxed);
                        self.polled.fetch_and(!(1 << index), Relaxed);
                    }
                }
            }

            let left = match deadline {
                None => None,
                Some(deadline) => {
                    let now = monotonic_ns();
                    if now >= deadline {
                        return Ok(RecvEvent::DeadlineReached);
                    }
                    Some(deadline - now)
                }
            };
            let waited = match left {
                Some(left) if left < 1_000_000 => self.wait_precisely(count, left),
                _ => self.wait(count, left),
            };
            let (readable, woken) = match waited {
                Ok((readable, woken)) => (readable & self.served, woken),
                Err(Errno::INTR) => continue,
                Err(e) => return Err(RecvError::Poll { source: e.into() }),
            };
            self.ready.fetch_or(readable, Relaxed);
            self.polled.fetch_or(readable, Relaxed);
            // A readable eventfd whose wake was already taken (see `Waker::take`) only
            // needs draining.
            if woken && self.waker.take() {
                return Ok(RecvEvent::Woken);
            }
        }
    }

    /// Hands the user unicast socket (user DATA, HEARTBEAT, ACKNACK) to a thread of its own,
    /// which then calls [`Self::recv_user`]; [`Self::recv`] serves the other sockets and the
    /// waker. Call before sharing the transport.
    ///
    /// Why: a thread that only waits for user traffic can block in `recvfrom` itself, one
    /// system call per datagram, where waiting on several descriptors costs an `epoll_wait`
    /// before it; on a 64-byte round trip over loopback that is several microseconds (as
    /// Cyclone DDS's separate receive thread for its data socket avoids too).
    ///
    /// # Errors
    /// The socket could not be made blocking with a receive timeout, or removed from the
    /// epoll set; the transport is then unchanged.
    pub fn dedicate_user_socket(&mut self) -> std::io::Result<()> {
        if self.served & (1 << USER) == 0 {
            return Ok(());
        }
        self.user.set_read_timeout(Some(USER_RECV_TIMEOUT))?;
        self.user.set_nonblocking(false)?;
        epoll::delete(&self.epoll, &self.user)?;
        self.served &= !(1 << USER);
        self.ready.fetch_and(self.served, Relaxed);
        self.polled.fetch_and(self.served, Relaxed);
        Ok(())
    }

    /// Blocks until a datagram arrives on the dedicated user socket (see
    /// [`Self::dedicate_user_socket`]), for at most [`USER_RECV_TIMEOUT`], or until
    /// [`Self::release_user_receiver`]. `Ok(None)`: nothing arrived (timeout, release, or a
    /// datagram dropped and counted, e.g. truncated); the caller checks whether to stop and
    /// calls again.
    ///
    /// # Errors
    /// As [`Self::recv`], for the user socket.
    pub fn recv_user(&self, buf: &mut [u8]) -> Result<Option<Received>, RecvError> {
        match self.recv_on(USER, buf, RecvFlags::empty())? {
            // An empty datagram (invalid RTPS) reads the same as a released socket: nothing.
            Attempt::Datagram(received) if received.len > 0 => Ok(Some(received)),
            Attempt::Datagram(_) | Attempt::Dropped | Attempt::Empty => Ok(None),
        }
    }

    /// Makes every present and future [`Self::recv_user`] return at once: shuts the user
    /// socket's receive side (on an unconnected UDP socket Linux reports `ENOTCONN` but still
    /// wakes blocked readers, which then read nothing). For stopping the receiving thread.
    pub fn release_user_receiver(&self) {
        let _ = rustix::net::shutdown(&self.user, rustix::net::Shutdown::Read);
    }

    /// Waits with `epoll_wait` for up to `left` nanoseconds rounded *down* to whole
    /// milliseconds (an early return is harmless: the caller finds its deadline not reached
    /// and waits again; a late one would delay a timer). Returns the readable sockets as bits
    /// of their indices and whether the waker fired.
    fn wait(&self, count: usize, left: Option<u64>) -> Result<(u8, bool), Errno> {
        let timeout = left.map(|ns| {
            let ms = ns / 1_000_000;
            Timespec {
                tv_sec: (ms / 1000) as i64,
                tv_nsec: ((ms % 1000) * 1_000_000) as i64,
            }
        });
        let mut events = [epoll::Event {
            flags: epoll::EventFlags::empty(),
            data: epoll::EventData::new_u64(0),
        }; 4];
        let n = epoll::wait(&self.epoll, &mut events[..], timeout.as_ref())?;
        let mut readable = 0u8;
        let mut woken = false;
        for event in &events[..n] {
            match event.data.u64() {
                WAKER_SLOT => woken = true,
                i if (i as usize) < count => readable |= 1 << i,
                _ => {}
            }
        }
        Ok((readable, woken))
    }

    /// Waits with `ppoll` for up to `left` nanoseconds exactly (see [`Self::wait`]).
    fn wait_precisely(&self, count: usize, left: u64) -> Result<(u8, bool), Errno> {
        let timeout = Timespec {
            tv_sec: (left / 1_000_000_000) as i64,
            tv_nsec: (left % 1_000_000_000) as i64,
        };
        // The served sockets (with their indices), then the waker.
        let sockets = [
            Some(self.metatraffic.as_fd()),
            Some(self.user.as_fd()),
            self.multicast.as_ref().map(|s| s.as_fd()),
        ];
        let mut indices = [0usize; 3];
        let mut fds: [PollFd<'_>; 4] =
            std::array::from_fn(|_| PollFd::from_borrowed_fd(self.waker.as_fd(), PollFlags::IN));
        let mut used = 0;
        for (index, fd) in sockets.iter().enumerate().take(count) {
            if let Some(fd) = fd.filter(|_| self.served & (1 << index) != 0) {
                indices[used] = index;
                fds[used] = PollFd::from_borrowed_fd(fd, PollFlags::IN);
                used += 1;
            }
        }
        // fds[used] is the waker already.
        let fds = &mut fds[..=used];
        rustix::event::poll(fds, Some(&timeout))?;
        let wakeable = PollFlags::IN | PollFlags::ERR | PollFlags::HUP;
        let readable = fds[..used]
            .iter()
            .zip(indices)
            .filter(|(fd, _)| fd.revents().intersects(wakeable))
            .fold(0u8, |bits, (_, i)| bits | (1 << i));
        Ok((readable, fds[used].revents().contains(PollFlags::IN)))
    }

    /// Whether a socket whose first datagram after `poll` was `len` bytes long is read again
    /// before the next `poll`: for large datagrams (fragment trains), and every
    /// [`PROBE_EVERY`]th small one (a probe that finds a burst keeps draining it, since the
    /// datagrams after the first are read without consulting this).
    fn keep_draining(&self, len: usize) -> bool {
        if len >= TRAIN_DATAGRAM_LEN {
            return true;
        }
        let lone = self.lone.fetch_add(1, Relaxed).wrapping_add(1);
        if lone >= PROBE_EVERY {
            self.lone.store(0, Relaxed);
            return true;
        }
        false
    }

    fn recv_on(
        &self,
        index: usize,
        buf: &mut [u8],
        flags: RecvFlags,
    ) -> Result<Attempt, RecvError> {
        let (socket, kind) = match index {
            METATRAFFIC => (&self.metatraffic, SocketKind::Metatraffic),
            USER => (&self.user, SocketKind::User),
            MULTICAST => match &self.multicast {
                Some(socket) => (socket, SocketKind::Multicast),
                None => return Ok(Attempt::Empty),
            },
            _ => return Ok(Attempt::Empty),
        };
        let capacity = buf.len();
        loop {
            match rustix::net::recvfrom(socket, &mut *buf, RecvFlags::TRUNC | flags) {
                Ok((_, len, source)) => {
                    // With MSG_TRUNC, `len` is the datagram's real length.
                    if len > capacity {
                        bump(&self.counters.truncated, 1);
                        return Ok(Attempt::Dropped);
                    }
                    let Some(source) = source.and_then(|a| SocketAddrV4::try_from(a).ok()) else {
                        bump(&self.counters.recv_errors, 1);
                        return Ok(Attempt::Dropped);
                    };
                    bump(&self.counters.datagrams_received, 1);
                    bump(&self.counters.bytes_received, len as u64);
                    return Ok(Attempt::Datagram(Received { len, source, kind }));
                }
                Err(Errno::INTR) => continue,
                Err(Errno::AGAIN) => return Ok(Attempt::Empty),
                // Asynchronous ICMP reports about an earlier send; the next datagram is fine.
                Err(
                    Errno::CONNREFUSED
                    | Errno::HOSTUNREACH
                    | Errno::NETUNREACH
                    | Errno::HOSTDOWN
                    | Errno::MSGSIZE,
                ) => {
                    bump(&self.counters.recv_errors, 1);
                    return Ok(Attempt::Dropped);
                }
                Err(e) => {
                    return Err(RecvError::Recv {
                        kind,
                        source: e.into(),
                    })
                }
            }
        }
    }
}
