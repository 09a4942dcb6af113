//! A participant's same-host endpoint: one listening abstract Unix socket and one service thread.
//!
//! Readers connect to the endpoint of the writer they want and say which writer in their hello
//! ([`crate::protocol`]). The service thread accepts, checks the peer's uid, hands the
//! connection to the writer, and from then on watches every connection: a hang-up (the peer
//! closed it or died, the kernel closes a killed process's sockets at once) makes the writer
//! reclaim everything that reader held. For Unix-socket writers it also finishes sends that
//! would have blocked.
//!
//! The listening socket lives in the abstract namespace: nothing is created in the file
//! system, and the name disappears with the socket, even when the process is SIGKILLed.
//! Abstract sockets have no permission bits, so every accepted connection is checked with
//! SO_PEERCRED and refused unless it comes from our own uid (and the reader checks the same of
//! the listener).

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use rustix::event::PollFlags;
use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType};

use crate::protocol::{Hello, Kind, Message, RejectReason, WriterKey};
use crate::sys;

/// Where a participant's endpoint listens: a name in the abstract Unix-socket namespace of its
/// network namespace. Text form: `@` followed by the name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EndpointAddress(String);

impl EndpointAddress {
    fn socket_address(&self) -> io::Result<SocketAddrUnix> {
        Ok(SocketAddrUnix::new_abstract_name(self.0.as_bytes())?)
    }

    /// Whether an endpoint still listens at this address. False only when a connection is
    /// refused: nothing listens under that name any more, so the participant that bound it is
    /// gone (its endpoint was dropped, or its process ended: the kernel removes a killed
    /// process's abstract socket with it). True when in doubt. The connection, if accepted, is
    /// closed at once, before any hello; the endpoint drops it without a word.
    pub fn is_listening(&self) -> bool {
        let Ok(sock) = rustix::net::socket_with(
            AddressFamily::UNIX,
            SocketType::SEQPACKET,
            SocketFlags::CLOEXEC | SocketFlags::NONBLOCK,
            None,
        ) else {
            return true;
        };
        let Ok(address) = self.socket_address() else {
            return true;
        };
        !matches!(
            sys::retry(|| rustix::net::connect(&sock, &address)),
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::CONNREFUSED.raw_os_error())
        )
    }
}

impl fmt::Display for EndpointAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "@{}", self.0)
    }
}

/// The text is not `@` followed by 1 to 100 printable ASCII characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadAddress;

impl fmt::Display for BadAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not an endpoint address (expected @ and 1 to 100 printable ASCII characters)")
    }
}

impl std::error::Error for BadAddress {}

impl FromStr for EndpointAddress {
    type Err = BadAddress;

    fn from_str(text: &str) -> Result<Self, BadAddress> {
        let name = text.strip_prefix('@').ok_or(BadAddress)?;
        if name.is_empty() || name.len() > 100 || !name.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(BadAddress);
        }
        Ok(EndpointAddress(name.to_owned()))
    }
}

/// What two participants compare to know they can use each other's endpoints: the same boot of
/// the same kernel, the same network namespace (abstract sockets are per namespace) and the same
/// uid (endpoints refuse other users). Text form: `boot_id/netns_inode/uid`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HostId {
    pub boot_id: String,
    pub netns_inode: u64,
    pub uid: u32,
}

impl HostId {
    /// This thread's identity, from `/proc/sys/kernel/random/boot_id` and the network
    /// namespace of the calling thread (`/proc/thread-self/ns/net`; `/proc/self/ns/net`, the
    /// process's first thread's, on kernels before 3.17): an endpoint bound on a thread that
    /// entered another namespace than the process's (a test harness's) lives in that one.
    ///
    /// # Errors
    /// When /proc is not mounted.
    pub fn current() -> io::Result<HostId> {
        use std::os::unix::fs::MetadataExt;
        let boot_id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")?
            .trim()
            .to_owned();
        let netns_inode = std::fs::metadata("/proc/thread-self/ns/net")
            .or_else(|_| std::fs::metadata("/proc/self/ns/net"))?
            .ino();
        Ok(HostId {
            boot_id,
            netns_inode,
            uid: rustix::process::geteuid().as_raw(),
        })
    }
}

impl fmt::Display for HostId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.boot_id, self.netns_inode, self.uid)
    }
}

impl FromStr for HostId {
    type Err = BadAddress;

    fn from_str(text: &str) -> Result<Self, BadAddress> {
        let mut parts = text.split('/');
        let (Some(boot_id), Some(netns), Some(uid), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(BadAddress);
        };
        if boot_id.is_empty() || boot_id.len() > 64 {
            return Err(BadAddress);
        }
        Ok(HostId {
            boot_id: boot_id.to_owned(),
            netns_inode: netns.parse().map_err(|_| BadAddress)?,
            uid: uid.parse().map_err(|_| BadAddress)?,
        })
    }
}

/// Why [`Endpoint::bind`] failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum BindError {
    /// Creating, binding or listening on the socket failed.
    Socket(io::Error),
    /// The service thread could not be started.
    Thread(io::Error),
}

impl fmt::Display for BindError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BindError::Socket(e) => write!(f, "cannot listen on an abstract Unix socket: {e}"),
            BindError::Thread(e) => write!(f, "cannot start the endpoint service thread: {e}"),
        }
    }
}

impl std::error::Error for BindError {}

/// Counters of the endpoint; peer misbehaviour is counted here, never returned to the user.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EndpointStats {
    /// Connections refused because they came from another uid.
    pub foreign_uid_refused: u64,
    /// Hellos that were malformed or named no writer of that kind.
    pub hellos_rejected: u64,
    /// Readers dropped after they hung up (closed or died).
    pub readers_hung_up: u64,
    /// Descriptors the service thread looked at after its waits: what was ready, not every
    /// connection it watches.
    pub descriptors_examined: u64,
}

/// A writer as the service thread sees it (implemented by the shared-memory and Unix-socket
/// writers).
pub(crate) trait Attach: Send + Sync {
    fn kind(&self) -> Kind;
    /// Takes a connection whose hello named this writer: sends the welcome (and, for shared
    /// memory, the segments) before the writer publishes to it.
    fn attach(
        &self,
        conn: ConnId,
        sock: Arc<OwnedFd>,
        hello: Hello,
        fds: Vec<OwnedFd>,
    ) -> Result<(), RejectReason>;
    /// The peer hung up, misbehaved, or the endpoint is closing.
    fn detach(&self, conn: ConnId);
    /// The socket became writable again. The writer calls
    /// [`EndpointShared::set_wants_write`] itself, under its own lock, so that a concurrent
    /// send's request is never overwritten by a stale answer.
    fn flush(&self, _conn: ConnId) {}
}

/// A local reader whose writer's socket the service thread watches: announcements are processed
/// as they arrive and a hang-up wakes the reader even while it sleeps on a futex.
pub(crate) trait Watch: Send + Sync {
    /// Processes what arrived; false once the writer hung up.
    fn handle_socket(&self) -> bool;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct ConnId(pub(crate) u64);

struct Watched {
    sock: Arc<OwnedFd>,
    owner: Weak<dyn Attach>,
    wants_write: bool,
}

#[derive(Default)]
struct Registry {
    writers: HashMap<WriterKey, Weak<dyn Attach>>,
    watched: HashMap<ConnId, Watched>,
    readers: HashMap<ConnId, (Arc<OwnedFd>, Weak<dyn Watch>)>,
}

/// What an [`Epoll`](sys::Epoll) key of the service thread names: its top two bits say what
/// kind of descriptor it is, the rest which one.
const KEY_KIND: u64 = 3 << 62;
/// The doorbell (rung to stop the thread) and the listening socket have fixed keys.
const KEY_DOORBELL: u64 = 0;
const KEY_LISTENER: u64 = 1;
/// A connection accepted whose hello has not come yet.
const KEY_PENDING: u64 = 1 << 62;
/// A writer's connection to a reader ([`Registry::watched`]), by its [`ConnId`].
const KEY_WATCHED: u64 = 2 << 62;
/// A local reader's connection to its writer ([`Registry::readers`]), by its [`ConnId`].
const KEY_READER: u64 = 3 << 62;

/// What a writer's connection to a reader is watched for: the reader's hang-up (it never
/// sends after its hello), and, while a send waits, room to write.
fn watched_interest(wants_write: bool) -> sys::Readiness {
    let interest = sys::Readiness::IN | sys::Readiness::RDHUP;
    if wants_write {
        interest | sys::Readiness::OUT
    } else {
        interest
    }
}

pub(crate) struct EndpointShared {
    address: EndpointAddress,
    doorbell: OwnedFd,
    /// What the service thread waits on. Connections are added and removed where the registry
    /// changes, under its lock, so the thread's wait costs what is ready, not the number of
    /// connections (a `poll` of every connection at every wake-up made attaching the links of
    /// a graph of 16 processes with 50 topics each cost more than its discovery did).
    epoll: sys::Epoll,
    stop: AtomicBool,
    registry: Mutex<Registry>,
    next_conn: AtomicU64,
    foreign_uid_refused: AtomicU64,
    hellos_rejected: AtomicU64,
    readers_hung_up: AtomicU64,
    descriptors_examined: AtomicU64,
}

impl EndpointShared {
    pub(crate) fn register(&self, key: WriterKey, writer: Weak<dyn Attach>) -> bool {
        let mut registry = lock(&self.registry);
        if registry
            .writers
            .get(&key)
            .is_some_and(|w| w.strong_count() > 0)
        {
            return false;
        }
        registry.writers.insert(key, writer);
        true
    }

    pub(crate) fn deregister(&self, key: WriterKey) {
        lock(&self.registry).writers.remove(&key);
    }

    /// Watches a local reader's socket until [`Self::unwatch_reader`].
    pub(crate) fn watch_reader(
        &self,
        sock: Arc<OwnedFd>,
        reader: Weak<dyn Watch>,
    ) -> io::Result<ConnId> {
        let conn = ConnId(self.next_conn.fetch_add(1, Relaxed));
        let mut registry = lock(&self.registry);
        self.epoll.add(
            sock.as_fd(),
            KEY_READER | conn.0,
            sys::Readiness::IN | sys::Readiness::RDHUP,
        )?;
        registry.readers.insert(conn, (sock, reader));
        Ok(conn)
    }

    pub(crate) fn unwatch_reader(&self, conn: ConnId) {
        let mut registry = lock(&self.registry);
        if let Some((sock, _)) = registry.readers.remove(&conn) {
            self.epoll.delete(sock.as_fd());
        }
    }

    /// Stops watching a writer's connection `conn` to a reader; what was watched, if it was.
    fn unwatch_writer_conn(&self, conn: ConnId) -> Option<Watched> {
        let mut registry = lock(&self.registry);
        let watched = registry.watched.remove(&conn)?;
        self.epoll.delete(watched.sock.as_fd());
        Some(watched)
    }

    /// Asks the service thread to wait for `conn` to become writable (or to stop waiting).
    pub(crate) fn set_wants_write(&self, conn: ConnId, wants: bool) {
        let mut registry = lock(&self.registry);
        let Some(watched) = registry.watched.get_mut(&conn) else {
            return;
        };
        if std::mem::replace(&mut watched.wants_write, wants) != wants {
            // Fails only for a descriptor not added, which a registered connection is not.
            let _ = self.epoll.modify(
                watched.sock.as_fd(),
                KEY_WATCHED | conn.0,
                watched_interest(wants),
            );
        }
    }
}

/// One participant's same-host endpoint (see the module docs).
pub struct Endpoint {
    shared: Arc<EndpointShared>,
    service: Option<JoinHandle<()>>,
}

impl Endpoint {
    /// Listens on a fresh abstract name and starts the service thread.
    ///
    /// # Errors
    /// [`BindError`] when the socket or the thread cannot be created.
    pub fn bind() -> Result<Endpoint, BindError> {
        let mut random = [0u8; 8];
        rustix::rand::getrandom(&mut random, rustix::rand::GetRandomFlags::empty())
            .map_err(|e| BindError::Socket(e.into()))?;
        let name = format!(
            "roslite-{}-{:016x}",
            std::process::id(),
            u64::from_le_bytes(random)
        );
        let address = EndpointAddress(name);
        let listener = rustix::net::socket_with(
            AddressFamily::UNIX,
            SocketType::SEQPACKET,
            SocketFlags::CLOEXEC | SocketFlags::NONBLOCK,
            None,
        )
        .map_err(|e| BindError::Socket(e.into()))?;
        let socket_address = address.socket_address().map_err(BindError::Socket)?;
        rustix::net::bind(&listener, &socket_address).map_err(|e| BindError::Socket(e.into()))?;
        rustix::net::listen(&listener, 128).map_err(|e| BindError::Socket(e.into()))?;
        let doorbell = sys::eventfd().map_err(BindError::Socket)?;
        let epoll = sys::Epoll::new().map_err(BindError::Socket)?;
        epoll
            .add(doorbell.as_fd(), KEY_DOORBELL, sys::Readiness::IN)
            .and_then(|()| epoll.add(listener.as_fd(), KEY_LISTENER, sys::Readiness::IN))
            .map_err(BindError::Socket)?;
        let shared = Arc::new(EndpointShared {
            address,
            doorbell,
            epoll,
            stop: AtomicBool::new(false),
            registry: Mutex::new(Registry::default()),
            next_conn: AtomicU64::new(1),
            foreign_uid_refused: AtomicU64::new(0),
            hellos_rejected: AtomicU64::new(0),
            readers_hung_up: AtomicU64::new(0),
            descriptors_examined: AtomicU64::new(0),
        });
        let service_shared = shared.clone();
        let service = std::thread::Builder::new()
            .name("roslite-shm".into())
            .spawn(move || serve(&service_shared, listener))
            .map_err(BindError::Thread)?;
        Ok(Endpoint {
            shared,
            service: Some(service),
        })
    }

    /// The address to advertise in discovery.
    pub fn address(&self) -> &EndpointAddress {
        &self.shared.address
    }

    pub fn stats(&self) -> EndpointStats {
        EndpointStats {
            foreign_uid_refused: self.shared.foreign_uid_refused.load(Relaxed),
            hellos_rejected: self.shared.hellos_rejected.load(Relaxed),
            readers_hung_up: self.shared.readers_hung_up.load(Relaxed),
            descriptors_examined: self.shared.descriptors_examined.load(Relaxed),
        }
    }

    pub(crate) fn shared(&self) -> &Arc<EndpointShared> {
        &self.shared
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.shared.stop.store(true, Relaxed);
        sys::eventfd_signal(self.shared.doorbell.as_fd());
        if let Some(service) = self.service.take() {
            let _ = service.join();
        }
    }
}

/// Connects to a writer's endpoint and exchanges hello and welcome. Returns the socket, the
/// welcome and its descriptors.
pub(crate) fn handshake(
    address: &EndpointAddress,
    hello: Hello,
    fds: &[std::os::fd::BorrowedFd<'_>],
    timeout: Duration,
) -> Result<(OwnedFd, Message, Vec<OwnedFd>), crate::ConnectError> {
    use crate::ConnectError;
    let sock = connect_unchecked(address).map_err(ConnectError::Io)?;
    let peer =
        rustix::net::sockopt::socket_peercred(&sock).map_err(|e| ConnectError::Io(e.into()))?;
    if peer.uid != rustix::process::geteuid() {
        return Err(ConnectError::ForeignUid);
    }
    exchange_hello(sock, hello, fds, timeout)
}

/// A connection to the endpoint at `address`, whoever owns it: [`handshake`] checks the owner
/// next; the conformance suite's stand-in for another user's reader does not.
pub(crate) fn connect_unchecked(address: &EndpointAddress) -> io::Result<OwnedFd> {
    let sock = rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )?;
    let socket_address = address.socket_address()?;
    sys::retry(|| rustix::net::connect(&sock, &socket_address))?;
    Ok(sock)
}

/// Sends `hello` on a connected socket and waits up to `timeout` for the endpoint's answer.
pub(crate) fn exchange_hello(
    sock: OwnedFd,
    hello: Hello,
    fds: &[std::os::fd::BorrowedFd<'_>],
    timeout: Duration,
) -> Result<(OwnedFd, Message, Vec<OwnedFd>), crate::ConnectError> {
    use crate::ConnectError;
    rustix::io::ioctl_fionbio(&sock, true).map_err(|e| ConnectError::Io(e.into()))?;
    sys::send_with_fds(sock.as_fd(), &Message::Hello(hello).encode(), fds)
        .map_err(ConnectError::Io)?;
    // A signal ends `poll` early with nothing ready (a profiler's timer, a program's own
    // handler): wait again for the rest of the time instead of calling that a timeout.
    let deadline = std::time::Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let revents =
            sys::poll(&[(sock.as_fd(), PollFlags::IN)], Some(left)).map_err(ConnectError::Io)?;
        if revents.first().is_some_and(|r| !r.is_empty()) {
            break;
        }
        if left.is_zero() {
            return Err(ConnectError::Timeout);
        }
    }
    let mut buf = [0u8; crate::protocol::MAX_LEN];
    let received = sys::recv_with_fds(sock.as_fd(), &mut buf).map_err(ConnectError::Io)?;
    if received.len == 0 {
        return Err(ConnectError::Protocol);
    }
    match Message::decode(buf.get(..received.len).unwrap_or_default()) {
        Some(Message::Reject(reason)) => Err(ConnectError::Rejected(reason)),
        Some(welcome @ Message::Welcome { .. }) if !received.truncated => {
            Ok((sock, welcome, received.fds))
        }
        _ => Err(ConnectError::Protocol),
    }
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding one of our locks leaves plain bookkeeping behind, never a broken
    // invariant that the next user could trip on worse than the panic did.
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The service thread: accept, handshake, watch for hang-ups and writability.
fn serve(shared: &EndpointShared, listener: OwnedFd) {
    let mut pending: HashMap<u64, OwnedFd> = HashMap::new();
    let mut next_pending = 0u64;
    let mut ready = Vec::new();
    loop {
        if shared.stop.load(Relaxed) {
            break;
        }
        if shared.epoll.wait(&mut ready).is_err() {
            // Only EINVAL/ENOMEM are possible; back off instead of spinning.
            std::thread::sleep(Duration::from_millis(10));
            continue;
        }
        shared
            .descriptors_examined
            .fetch_add(ready.len() as u64, Relaxed);
        for &(key, readiness) in &ready {
            match (key, key & KEY_KIND) {
                (KEY_DOORBELL, _) => sys::eventfd_drain(shared.doorbell.as_fd()),
                (KEY_LISTENER, _) => accept_all(shared, &listener, |sock| {
                    let key = KEY_PENDING | next_pending;
                    next_pending += 1;
                    if shared
                        .epoll
                        .add(sock.as_fd(), key, sys::Readiness::IN)
                        .is_ok()
                    {
                        pending.insert(key, sock);
                    }
                }),
                (_, KEY_PENDING) => {
                    if let Some(sock) = pending.remove(&key) {
                        shared.epoll.delete(sock.as_fd());
                        handle_hello(shared, sock);
                    }
                }
                (_, KEY_READER) => handle_reader(shared, ConnId(key & !KEY_KIND)),
                (_, KEY_WATCHED) => handle_watched(shared, ConnId(key & !KEY_KIND), readiness),
                _ => {}
            }
        }
    }
    // Closing: every writer forgets its readers; dropping the sockets makes readers see EOF.
    let all: Vec<ConnId> = lock(&shared.registry).watched.keys().copied().collect();
    for conn in all {
        drop_conn(shared, conn);
    }
}

/// A local reader's connection to its writer has something: announcements, or the hang-up.
fn handle_reader(shared: &EndpointShared, conn: ConnId) {
    let reader = lock(&shared.registry)
        .readers
        .get(&conn)
        .map(|(_, reader)| reader.clone());
    let Some(reader) = reader else {
        return; // unwatched since the wait returned
    };
    if !reader
        .upgrade()
        .is_some_and(|reader| reader.handle_socket())
    {
        shared.unwatch_reader(conn);
    }
}

/// A writer's connection to a reader is readable (the reader hung up, or misbehaves) or
/// writable (a waiting send can go on).
fn handle_watched(shared: &EndpointShared, conn: ConnId, readiness: sys::Readiness) {
    let watched = lock(&shared.registry)
        .watched
        .get(&conn)
        .map(|w| (w.sock.clone(), w.owner.clone()));
    let Some((sock, owner)) = watched else {
        return; // dropped since the wait returned
    };
    let gone = sys::Readiness::HUP | sys::Readiness::ERR | sys::Readiness::RDHUP;
    if readiness.intersects(gone | sys::Readiness::IN) {
        // After the hello a reader never sends anything: input is EOF or misbehaviour.
        let mut byte = [0u8; 1];
        let eof_or_data = !matches!(
            rustix::net::recv(sock.as_fd(), &mut byte, rustix::net::RecvFlags::DONTWAIT),
            Err(rustix::io::Errno::AGAIN)
        );
        if eof_or_data || readiness.intersects(gone) {
            drop_conn(shared, conn);
            return;
        }
    }
    if readiness.contains(sys::Readiness::OUT) {
        if let Some(owner) = owner.upgrade() {
            owner.flush(conn);
        }
    }
}

fn drop_conn(shared: &EndpointShared, conn: ConnId) {
    if let Some(watched) = shared.unwatch_writer_conn(conn) {
        shared.readers_hung_up.fetch_add(1, Relaxed);
        if let Some(owner) = watched.owner.upgrade() {
            owner.detach(conn);
        }
        let _ = rustix::net::shutdown(watched.sock.as_fd(), rustix::net::Shutdown::Both);
    }
}

fn accept_all(shared: &EndpointShared, listener: &OwnedFd, mut pending: impl FnMut(OwnedFd)) {
    let me = rustix::process::geteuid();
    while let Ok(sock) = sys::retry(|| {
        rustix::net::accept_with(listener, SocketFlags::CLOEXEC | SocketFlags::NONBLOCK)
    }) {
        match rustix::net::sockopt::socket_peercred(&sock) {
            Ok(cred) if cred.uid == me => pending(sock),
            _ => {
                shared.foreign_uid_refused.fetch_add(1, Relaxed);
            }
        }
    }
}

fn handle_hello(shared: &EndpointShared, sock: OwnedFd) {
    let mut buf = [0u8; crate::protocol::MAX_LEN + 1];
    let Ok(received) = sys::recv_with_fds(sock.as_fd(), &mut buf) else {
        return;
    };
    if received.len == 0 && !received.truncated {
        return; // closed before its hello: a probe (`EndpointAddress::is_listening`)
    }
    let hello = match Message::decode(buf.get(..received.len).unwrap_or_default()) {
        Some(Message::Hello(hello)) if !received.truncated => hello,
        _ => return reject(shared, &sock, RejectReason::BadHello),
    };
    let owner = lock(&shared.registry)
        .writers
        .get(&hello.key)
        .and_then(Weak::upgrade);
    let Some(owner) = owner else {
        return reject(shared, &sock, RejectReason::UnknownWriter);
    };
    if owner.kind() != hello.kind {
        return reject(shared, &sock, RejectReason::WrongKind);
    }
    let conn = ConnId(shared.next_conn.fetch_add(1, Relaxed));
    let sock = Arc::new(sock);
    // Watch first: a hang-up racing with the attach is then still seen.
    {
        let mut registry = lock(&shared.registry);
        if shared
            .epoll
            .add(sock.as_fd(), KEY_WATCHED | conn.0, watched_interest(false))
            .is_err()
        {
            drop(registry);
            return reject(shared, &sock, RejectReason::Resources);
        }
        registry.watched.insert(
            conn,
            Watched {
                sock: sock.clone(),
                owner: Arc::downgrade(&owner),
                wants_write: false,
            },
        );
    }
    if let Err(reason) = owner.attach(conn, sock.clone(), hello, received.fds) {
        shared.unwatch_writer_conn(conn);
        reject(shared, &sock, reason);
    }
}

fn reject(shared: &EndpointShared, sock: &OwnedFd, reason: RejectReason) {
    shared.hellos_rejected.fetch_add(1, Relaxed);
    let _ = sys::send_with_fds(sock.as_fd(), &Message::Reject(reason).encode(), &[]);
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;
    use std::time::{Duration, Instant};

    use super::*;
    use crate::protocol::{History, Kind};
    use crate::ConnectError;

    static SIGNALLED: AtomicBool = AtomicBool::new(false);

    extern "C" fn note_signal(_: libc::c_int) {
        SIGNALLED.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Found by the `shm_channel` fuzz target (libFuzzer's timer signal): a signal that
    /// arrived while a reader waited for the endpoint's answer ended the wait with
    /// `ConnectError::Timeout` at once. The wait goes on for the rest of the timeout instead.
    /// Here the endpoint answers after 300 ms and the connecting thread gets a signal at 50 ms.
    #[test]
    fn a_signal_during_the_hello_does_not_end_the_wait_for_the_answer() {
        // SAFETY: installs a handler that only stores to an atomic (async-signal-safe), for a
        // signal nothing else in this test binary uses.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = note_signal as *const () as usize;
            assert_eq!(
                libc::sigaction(libc::SIGUSR1, &action, std::ptr::null_mut()),
                0
            );
        }
        let address = EndpointAddress(format!("roslite-test-slow-endpoint-{}", std::process::id()));
        let listener = rustix::net::socket_with(
            AddressFamily::UNIX,
            SocketType::SEQPACKET,
            SocketFlags::CLOEXEC,
            None,
        )
        .expect("socket");
        rustix::net::bind(&listener, &address.socket_address().expect("address")).expect("bind");
        rustix::net::listen(&listener, 1).expect("listen");
        let slow_endpoint = std::thread::spawn(move || {
            let sock = rustix::net::accept(&listener).expect("accept");
            // The reader connects, then says hello: wait for it (the receive does not).
            let ready = sys::poll(
                &[(sock.as_fd(), PollFlags::IN)],
                Some(Duration::from_secs(5)),
            );
            assert!(
                ready.expect("poll").first().is_some_and(|r| !r.is_empty()),
                "no hello"
            );
            let mut buf = [0u8; crate::protocol::MAX_LEN + 1];
            sys::recv_with_fds(sock.as_fd(), &mut buf).expect("the hello");
            std::thread::sleep(Duration::from_millis(300));
            let reject = Message::Reject(RejectReason::UnknownWriter).encode();
            // Fails if the reader gave up already: the assertions below say so.
            let _ = sys::send_with_fds(sock.as_fd(), &reject, &[]);
            std::thread::sleep(Duration::from_millis(100));
        });
        // SAFETY: pthread_self has no preconditions.
        let me = unsafe { libc::pthread_self() };
        let signaller = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            // SAFETY: `me` is the test's thread, alive until it joins this one.
            unsafe { libc::pthread_kill(me, libc::SIGUSR1) };
        });
        let hello = Hello {
            kind: Kind::SharedMemory,
            history: History::KeepLast(1),
            max_held: 1,
            key: crate::WriterKey::from(1u128),
            wants_kept: false,
        };
        let start = Instant::now();
        let outcome = handshake(&address, hello, &[], Duration::from_secs(5));
        let waited = start.elapsed();
        signaller.join().expect("signaller");
        slow_endpoint.join().expect("slow endpoint");
        assert!(
            SIGNALLED.load(std::sync::atomic::Ordering::SeqCst),
            "the signal came"
        );
        assert!(
            matches!(
                outcome,
                Err(ConnectError::Rejected(RejectReason::UnknownWriter))
            ),
            "after {waited:?}: {:?}",
            outcome.err()
        );
        assert!(waited >= Duration::from_millis(250), "{waited:?}");
    }
}
