//! Same-host transports for roslite: zero-copy shared memory, and Unix domain sockets.
//!
//! Layers, bottom up:
//! - `sys`: memfd segments (sealed), mappings, futex, eventfd, SCM_RIGHTS. Every system call
//!   and raw mapping of the crate, and nearly all of its `unsafe`, is there. The rest is in
//!   `shm`: three blocks that turn a chunk's address into a slice (a loan's bytes,
//!   `ShmWriter::send_in_place`'s bytes, a received `Sample`'s bytes) and `Send`/`Sync` for
//!   `Sample`. Each rests on that module's chunk ownership rules (one writer until `send`,
//!   immutable until every reader released it), which `sys` cannot see.
//! - `protocol`: the control messages on the Unix socket (hello, welcome, segment, retire).
//! - `channel`: the per-(writer, reader) shared rings: announcements out, releases back.
//! - [`Endpoint`]: a participant's listening abstract Unix socket and its service thread, which
//!   hands connections to writers and notices readers that hang up or die.
//! - [`ShmWriter`]/[`ShmReader`] (zero copy: loan, write in place, send; readers borrow the
//!   bytes from the writer's read-only segments) and [`UdsWriter`]/[`UdsReader`] (frames on a
//!   SOCK_SEQPACKET connection).
//! - [`IdleSpin`]: a reader's short wait (yield and look again) before it sleeps.
//! - `conformance` (feature `conformance`): one test suite for every transport.
//! - `fuzzing` (feature `fuzzing`): a hostile reader against a writer, the body of the
//!   `shm_channel` fuzz target.
//!
//! A writer is found by its endpoint's [`EndpointAddress`] and a [`WriterKey`] (the runtime
//! uses the RTPS writer GUID); two participants can use each other's endpoints when their
//! [`HostId`]s are equal. See `docs/shm.md` for the design.
//!
//! Linux only (memfd seals, abstract sockets, SO_PEERCRED).

mod channel;
#[cfg(feature = "conformance")]
pub mod conformance;
mod endpoint;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod protocol;
mod shm;
mod spin;
mod sys;
mod uds;

use std::fmt;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::AtomicU32;

pub use endpoint::{BadAddress, BindError, Endpoint, EndpointAddress, EndpointStats, HostId};
pub use protocol::{History, RejectReason, WriterKey};
pub use shm::{
    InPlaceError, Loan, LoanUninit, ReaderConfig, Sample, ShmInterrupter, ShmReader, ShmWriter,
    WriterConfig, WriterStats, MAX_LOAN,
};
pub use spin::IdleSpin;
pub use sys::open_fd_count;
pub use uds::{
    UdsBytes, UdsInterrupter, UdsReader, UdsReaderConfig, UdsSample, UdsWriter, UdsWriterConfig,
    UdsWriterStats, PACKET,
};

/// The default byte bound of what a writer queues for one keep-all reader that has not taken
/// it yet ([`WriterConfig::keep_all_max_bytes`], [`UdsWriterConfig::keep_all_max_bytes`]):
/// 64 MiB. With a ring of 1000 entries and 1 MB samples, one stalled reader used to pin a
/// gigabyte of the publisher's memory.
pub const KEEP_ALL_MAX_BYTES: usize = 64 << 20;

/// The send buffer a [`UdsWriter`]'s connection asks for. Not part of the transport API:
/// roslite-bench gives its raw Unix-socket floor the same buffers, so that the floor is never
/// held back by smaller ones.
#[doc(hidden)]
pub const UDS_SEND_BUFFER: usize = uds::SEND_BUFFER;

/// Two futex words in a page of shared memory (a memfd mapped by both processes), for
/// roslite-bench's futex floor: two processes waking each other with nothing else in between.
/// Not part of the transport API; it is here because mapping shared memory takes `unsafe`,
/// which stays in this crate (`sys`).
#[doc(hidden)]
pub struct FutexWords {
    // Field order is drop order: unmapped before the descriptor closes (either order is
    // sound; the mapping holds its own reference to the file).
    map: sys::Mapping,
    fd: OwnedFd,
}

impl FutexWords {
    const LEN: usize = 4096;
    /// The second word's offset: a cache line apart from the first.
    const SECOND: usize = 64;

    /// A fresh zeroed page. Its descriptor is close-on-exec: give the other process a
    /// duplicate of [`Self::fd`] (as its standard input, say) and let it [`Self::open`] it.
    ///
    /// # Errors
    /// When the memfd cannot be made or mapped.
    pub fn create() -> io::Result<Self> {
        let fd = sys::memfd("roslite-bench-futex", Self::LEN)?;
        let map = sys::Mapping::map(fd.as_fd(), Self::LEN, true)?;
        Ok(Self { map, fd })
    }

    /// Maps the page behind `fd`, another process's [`Self::create`]d one.
    ///
    /// # Errors
    /// When `fd` cannot be duplicated or mapped (not a memfd of at least a page, say).
    pub fn open(fd: BorrowedFd<'_>) -> io::Result<Self> {
        let fd = fd.try_clone_to_owned()?;
        let map = sys::Mapping::map(fd.as_fd(), Self::LEN, true)?;
        Ok(Self { map, fd })
    }

    /// The memfd behind the page.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// The first word (the ping side writes it).
    pub fn first(&self) -> &AtomicU32 {
        self.map.atomic_u32(0)
    }

    /// The second word (the echo side writes it).
    pub fn second(&self) -> &AtomicU32 {
        self.map.atomic_u32(Self::SECOND)
    }
}

/// Why a writer could not be created.
#[derive(Debug)]
#[non_exhaustive]
pub enum CreateError {
    /// A live writer at this endpoint already has the key.
    KeyInUse,
}

impl fmt::Display for CreateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CreateError::KeyInUse => {
                f.write_str("a writer with this key already exists at the endpoint")
            }
        }
    }
}

impl std::error::Error for CreateError {}

/// Why a reader could not connect to a writer.
#[derive(Debug)]
#[non_exhaustive]
pub enum ConnectError {
    /// Depth or held-sample quota of 0 or above 65536.
    BadConfig,
    /// The endpoint belongs to another user.
    ForeignUid,
    /// The writer's endpoint refused the reader.
    Rejected(RejectReason),
    /// No welcome within the connect timeout.
    Timeout,
    /// The endpoint answered something malformed (wrong sizes, missing or unsealed memfd).
    Protocol,
    /// Connecting or a socket operation failed (e.g. no endpoint at that address).
    Io(io::Error),
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnectError::BadConfig => f.write_str("reader depth and quota must be 1..=65536"),
            ConnectError::ForeignUid => f.write_str("the endpoint belongs to another user"),
            ConnectError::Rejected(reason) => {
                write!(f, "the writer's endpoint refused: {reason:?}")
            }
            ConnectError::Timeout => f.write_str("the writer's endpoint did not answer in time"),
            ConnectError::Protocol => {
                f.write_str("the writer's endpoint answered a malformed welcome")
            }
            ConnectError::Io(e) => write!(f, "cannot reach the writer's endpoint: {e}"),
        }
    }
}

impl std::error::Error for ConnectError {}

/// Why a sample was not sent.
#[derive(Debug)]
#[non_exhaustive]
pub enum SendError {
    /// A keep-all reader's queue stayed full for `max_blocking_time`; no reader got the sample.
    Timeout,
    /// Larger than [`MAX_LOAN`].
    TooLarge,
    /// A segment could not be created or mapped, or polling failed.
    Io(io::Error),
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SendError::Timeout => {
                f.write_str("a keep-all reader stayed full for max_blocking_time")
            }
            SendError::TooLarge => f.write_str("sample larger than the largest loan"),
            SendError::Io(e) => write!(f, "cannot send: {e}"),
        }
    }
}

impl std::error::Error for SendError {}

/// Why nothing was received.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReceiveError {
    /// The application holds `max_held` samples; drop one first.
    HeldLimit,
    /// The writer closed or died, and every sample it sent has been taken.
    WriterGone,
    /// The writer sent something malformed; the connection is unusable.
    Protocol,
    /// Polling failed.
    Io(io::Error),
}

impl fmt::Display for ReceiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReceiveError::HeldLimit => f.write_str("the reader already holds max_held samples"),
            ReceiveError::WriterGone => f.write_str("the writer hung up"),
            ReceiveError::Protocol => {
                f.write_str("the writer sent a malformed announcement or frame")
            }
            ReceiveError::Io(e) => write!(f, "cannot wait: {e}"),
        }
    }
}

impl std::error::Error for ReceiveError {}

/// A writer's count of attached readers, readable without holding the writer (a publisher asks
/// on every publish whether a same-host outlet has anyone to send to): an atomic load, where
/// reaching the writer through its weak reference cost two atomic read-modify-writes.
#[derive(Clone, Debug)]
pub struct ReaderCount(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl ReaderCount {
    /// Readers attached now (zero once the writer is dropped); may be stale by the time a
    /// sample is sent.
    pub fn get(&self) -> usize {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}
