//! The operating-system layer: memfd segments, mappings, futexes, eventfds and descriptor
//! passing. Every `unsafe` of the crate is in this file except in `shm`: the three blocks that
//! make slices over chunk memory (a loan, `send_in_place`, a received `Sample`) and `Sample`'s
//! `Send`/`Sync` impls, whose safety rests on the chunk ownership rules of that module.
//!
//! Invariants the rest of the crate relies on:
//! - A [`Mapping`] stays mapped until it is dropped; its length never changes, and the file
//!   behind it is sealed against shrinking (checked by [`check_seals`] before a peer's file is
//!   mapped), so touching any byte inside it cannot raise SIGBUS.
//! - Bytes of a mapping are only ever handed out as slices for ranges that the protocol says
//!   nobody writes while the slice lives (a published chunk is immutable until every reader has
//!   released it). A misbehaving peer process can break that; the effect is confined to the
//!   values of plain bytes (never pointers, lengths or indices, which are read through atomics
//!   and validated).

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::time::Duration;

use rustix::fs::{MemfdFlags, SealFlags};
use rustix::io::Errno;
use rustix::mm::{MapFlags, ProtFlags};
use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags,
};
use rustix::thread::futex;

/// A shared mapping of a whole memfd.
#[derive(Debug)]
pub(crate) struct Mapping {
    base: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain shared memory; all access from several threads goes through
// atomics or through slices whose immutability the protocol guarantees (module invariants).
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps `len` bytes of `fd` shared; `writable` selects PROT_WRITE.
    pub(crate) fn map(fd: BorrowedFd<'_>, len: usize, writable: bool) -> io::Result<Self> {
        if len == 0 {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
        let prot = if writable {
            ProtFlags::READ | ProtFlags::WRITE
        } else {
            ProtFlags::READ
        };
        // SAFETY: a fresh mapping at an address the kernel chooses aliases no Rust object.
        let ptr =
            unsafe { rustix::mm::mmap(std::ptr::null_mut(), len, prot, MapFlags::SHARED, fd, 0) }?;
        let base = NonNull::new(ptr.cast::<u8>()).ok_or(io::Error::from(io::ErrorKind::Other))?;
        Ok(Mapping { base, len })
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The bytes `offset..offset + len`; `None` if outside the mapping.
    pub(crate) fn bytes(&self, offset: usize, len: usize) -> Option<&[u8]> {
        let end = offset.checked_add(len)?;
        if end > self.len {
            return None;
        }
        // SAFETY: in bounds (checked above) and mapped for the life of `self`; see the module
        // invariants for why nobody writes the range while the slice lives.
        Some(unsafe { std::slice::from_raw_parts(self.base.as_ptr().add(offset), len) })
    }

    /// Mutable bytes of a writable mapping.
    ///
    /// # Safety
    /// The caller must own the range exclusively (a loaned chunk) for the life of the slice, and
    /// the mapping must have been made writable.
    // The memory is shared, not owned by `self`: exclusivity comes from the loan, not from
    // `&mut self` (several loans of one segment are alive at once).
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn bytes_mut(&self, offset: usize, len: usize) -> &mut [u8] {
        assert!(
            offset.checked_add(len).is_some_and(|end| end <= self.len),
            "internal bug: chunk outside its segment"
        );
        // SAFETY: in bounds; exclusivity is the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(self.base.as_ptr().add(offset), len) }
    }

    /// Where the `len` bytes at `offset` start, checked to lie inside the mapping; writable
    /// through the pointer only as [`Self::bytes_mut`] allows.
    pub(crate) fn chunk_start(&self, offset: usize, len: usize) -> std::ptr::NonNull<u8> {
        assert!(
            offset.checked_add(len).is_some_and(|end| end <= self.len),
            "internal bug: chunk outside its segment"
        );
        // SAFETY: in bounds (checked above) of a live mapping, so the sum does not wrap.
        unsafe { self.base.add(offset) }
    }

    /// The 8-byte-aligned atomic at `offset`.
    pub(crate) fn atomic_u64(&self, offset: usize) -> &AtomicU64 {
        assert!(
            offset & 7 == 0 && offset + 8 <= self.len,
            "internal bug: atomic outside the channel"
        );
        // SAFETY: aligned (mmap returns page-aligned memory), in bounds, lives as long as
        // `self`; AtomicU64 has the layout of u64 and every bit pattern is valid.
        unsafe { &*self.base.as_ptr().add(offset).cast::<AtomicU64>() }
    }

    /// The 4-byte-aligned atomic at `offset`.
    pub(crate) fn atomic_u32(&self, offset: usize) -> &AtomicU32 {
        assert!(
            offset & 3 == 0 && offset + 4 <= self.len,
            "internal bug: atomic outside the channel"
        );
        // SAFETY: as in `atomic_u64`.
        unsafe { &*self.base.as_ptr().add(offset).cast::<AtomicU32>() }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what `map` mapped; no slice outlives `self` (borrowck).
        let _ = unsafe { rustix::mm::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

/// Creates an anonymous memfd of `len` bytes that can be sealed. Nothing appears in /dev/shm.
pub(crate) fn memfd(name: &str, len: usize) -> io::Result<OwnedFd> {
    let fd = rustix::fs::memfd_create(name, MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING)?;
    rustix::fs::ftruncate(&fd, len as u64)?;
    Ok(fd)
}

/// Fixes the size of a memfd for good: peers can map it without fearing SIGBUS.
pub(crate) fn seal_size(fd: BorrowedFd<'_>) -> io::Result<()> {
    Ok(rustix::fs::fcntl_add_seals(
        fd,
        SealFlags::GROW | SealFlags::SHRINK | SealFlags::SEAL,
    )?)
}

/// Fixes the size and forbids any *new* writable mapping or `write(2)`: the writable mapping
/// the owner made before stays writable, every reader can only map read-only.
pub(crate) fn seal_size_and_future_writes(fd: BorrowedFd<'_>) -> io::Result<()> {
    let seals = SealFlags::GROW | SealFlags::SHRINK | SealFlags::FUTURE_WRITE | SealFlags::SEAL;
    Ok(rustix::fs::fcntl_add_seals(fd, seals)?)
}

/// What a receiver checks before mapping a peer's memfd.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SealCheck {
    /// A data segment: size fixed and read-only for everyone but its creator.
    ReadOnly,
    /// A channel both sides write: size fixed.
    SizeOnly,
}

/// Whether `fd` carries the seals `check` requires and is at least `len` bytes long.
pub(crate) fn check_seals(fd: BorrowedFd<'_>, len: usize, check: SealCheck) -> bool {
    let Ok(seals) = rustix::fs::fcntl_get_seals(fd) else {
        return false;
    };
    let mut needed = SealFlags::SHRINK | SealFlags::SEAL;
    if check == SealCheck::ReadOnly {
        needed |= SealFlags::FUTURE_WRITE;
    }
    let Ok(stat) = rustix::fs::fstat(fd) else {
        return false;
    };
    seals.contains(needed) && u64::try_from(stat.st_size).is_ok_and(|size| size >= len as u64)
}

/// Blocks while `word == expected`, at most `timeout` (`None`: until woken). Shared (not
/// process-private) futex, so a wake from the peer process reaches it. A timeout arms and
/// cancels a kernel timer around every wait (0.25 us per wait on this VM), so waits that
/// another thread can end by a wake go without one.
pub(crate) fn futex_wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    let ts = timeout.map(|t| rustix::time::Timespec {
        tv_sec: t.as_secs().min(i64::MAX as u64) as i64,
        tv_nsec: i64::from(t.subsec_nanos()),
    });
    // EAGAIN (value changed), EINTR and ETIMEDOUT all mean "look again".
    let _ = futex::wait(word, futex::Flags::empty(), expected, ts.as_ref());
}

pub(crate) fn futex_wake_all(word: &AtomicU32) {
    let _ = futex::wake(word, futex::Flags::empty(), u32::MAX);
}

/// Sends one SEQPACKET message with descriptors attached (SCM_RIGHTS).
pub(crate) fn send_with_fds(
    sock: BorrowedFd<'_>,
    bytes: &[u8],
    fds: &[BorrowedFd<'_>],
) -> io::Result<()> {
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(4))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !fds.is_empty() && !control.push(SendAncillaryMessage::ScmRights(fds)) {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    let iov = [io::IoSlice::new(bytes)];
    let sent = retry(|| {
        rustix::net::sendmsg(
            sock,
            &iov,
            &mut control,
            SendFlags::NOSIGNAL | SendFlags::DONTWAIT,
        )
    })?;
    if sent != bytes.len() {
        return Err(io::Error::from(io::ErrorKind::WriteZero));
    }
    Ok(())
}

/// One received SEQPACKET message: its length (0 = peer closed) and the descriptors attached.
pub(crate) struct Received {
    pub(crate) len: usize,
    pub(crate) truncated: bool,
    pub(crate) fds: Vec<OwnedFd>,
}

/// Receives one message without blocking (`WouldBlock` when none is queued).
pub(crate) fn recv_with_fds(sock: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<Received> {
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(4))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let mut iov = [io::IoSliceMut::new(buf)];
    let msg = retry(|| {
        rustix::net::recvmsg(
            sock,
            &mut iov,
            &mut control,
            RecvFlags::DONTWAIT | RecvFlags::CMSG_CLOEXEC,
        )
    })?;
    let mut fds = Vec::new();
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(received) = message {
            fds.extend(received);
        }
    }
    Ok(Received {
        len: msg.bytes,
        truncated: msg.flags.contains(rustix::net::ReturnFlags::TRUNC)
            || msg.flags.contains(rustix::net::ReturnFlags::CTRUNC),
        fds,
    })
}

/// Retries a system call interrupted by a signal; maps the error to `io::Error`.
pub(crate) fn retry<T>(mut call: impl FnMut() -> Result<T, Errno>) -> io::Result<T> {
    loop {
        match call() {
            Err(Errno::INTR) => continue,
            other => return other.map_err(io::Error::from),
        }
    }
}

/// Waits until one of `fds` has one of the requested events, or `timeout` (None = forever).
/// Returns the `revents` of each, in order.
pub(crate) fn poll(
    fds: &[(BorrowedFd<'_>, rustix::event::PollFlags)],
    timeout: Option<Duration>,
) -> io::Result<Vec<rustix::event::PollFlags>> {
    let mut pollfds: Vec<rustix::event::PollFd<'_>> = fds
        .iter()
        .map(|(fd, events)| rustix::event::PollFd::new(fd, *events))
        .collect();
    let ts = timeout.map(|t| rustix::time::Timespec {
        tv_sec: t.as_secs().min(i64::MAX as u64) as i64,
        tv_nsec: i64::from(t.subsec_nanos()),
    });
    match rustix::event::poll(&mut pollfds, ts.as_ref()) {
        Ok(_) | Err(Errno::INTR) => {}
        Err(e) => return Err(e.into()),
    }
    Ok(pollfds.iter().map(|p| p.revents()).collect())
}

/// An epoll instance that reports readiness by the key each descriptor was added with: a wait
/// costs what is ready, not what is watched (`poll(2)` looks at every descriptor it is given).
pub(crate) struct Epoll(OwnedFd);

/// What a descriptor is watched for, and what a wait found.
pub(crate) use rustix::event::epoll::EventFlags as Readiness;

impl Epoll {
    pub(crate) fn new() -> io::Result<Self> {
        Ok(Self(rustix::event::epoll::create(
            rustix::event::epoll::CreateFlags::CLOEXEC,
        )?))
    }

    /// Watches `fd` for `interest` (level-triggered), reported as `key`.
    pub(crate) fn add(&self, fd: BorrowedFd<'_>, key: u64, interest: Readiness) -> io::Result<()> {
        use rustix::event::epoll;
        Ok(epoll::add(
            &self.0,
            fd,
            epoll::EventData::new_u64(key),
            interest,
        )?)
    }

    /// Watches `fd`, added before, for `interest` from now on.
    pub(crate) fn modify(
        &self,
        fd: BorrowedFd<'_>,
        key: u64,
        interest: Readiness,
    ) -> io::Result<()> {
        use rustix::event::epoll;
        Ok(epoll::modify(
            &self.0,
            fd,
            epoll::EventData::new_u64(key),
            interest,
        )?)
    }

    /// Stops watching `fd` (closing it would only once every duplicate is closed).
    pub(crate) fn delete(&self, fd: BorrowedFd<'_>) {
        let _ = rustix::event::epoll::delete(&self.0, fd);
    }

    /// Waits until something is ready and replaces `ready` with it (keys and what each is
    /// ready for); returns with nothing after a signal.
    pub(crate) fn wait(&self, ready: &mut Vec<(u64, Readiness)>) -> io::Result<()> {
        let mut events = Vec::with_capacity(256);
        ready.clear();
        match rustix::event::epoll::wait(&self.0, rustix::buffer::spare_capacity(&mut events), None)
        {
            Ok(_) | Err(Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
        ready.extend(events.iter().map(|e| (e.data.u64(), e.flags)));
        Ok(())
    }
}

/// A nonblocking, close-on-exec eventfd.
pub(crate) fn eventfd() -> io::Result<OwnedFd> {
    use rustix::event::EventfdFlags;
    Ok(rustix::event::eventfd(
        0,
        EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK,
    )?)
}

/// Adds one to an eventfd (wakes its poller). A saturated counter is readable anyway.
pub(crate) fn eventfd_signal(fd: BorrowedFd<'_>) {
    let _ = retry(|| rustix::io::write(fd, &1u64.to_ne_bytes()));
}

/// Empties an eventfd.
pub(crate) fn eventfd_drain(fd: BorrowedFd<'_>) {
    let mut count = [0u8; 8];
    let _ = retry(|| rustix::io::read(fd, &mut count));
}

/// The number of open descriptors of this process (tests check nothing leaks).
pub fn open_fd_count() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |dir| dir.count())
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsFd;

    use super::*;

    #[test]
    fn a_sealed_segment_is_read_only_for_everyone_but_its_creator() {
        let fd = memfd("test-segment", 8192).unwrap();
        let owner = Mapping::map(fd.as_fd(), 8192, true).unwrap();
        seal_size_and_future_writes(fd.as_fd()).unwrap();
        assert!(check_seals(fd.as_fd(), 8192, SealCheck::ReadOnly));
        // What a reader can do with the descriptor it receives:
        assert!(
            Mapping::map(fd.as_fd(), 8192, true).is_err(),
            "writable mapping allowed"
        );
        assert!(rustix::io::write(&fd, b"x").is_err(), "write(2) allowed");
        assert!(
            rustix::fs::ftruncate(&fd, 4096).is_err(),
            "shrinking allowed"
        );
        let reader = Mapping::map(fd.as_fd(), 8192, false).unwrap();
        // SAFETY: the test owns the whole segment.
        unsafe { owner.bytes_mut(4096, 3) }.copy_from_slice(b"abc");
        assert_eq!(reader.bytes(4096, 3), Some(&b"abc"[..]));
        assert_eq!(reader.bytes(8190, 3), None);
    }

    #[test]
    fn an_unsealed_memfd_fails_the_check() {
        let fd = memfd("test-unsealed", 4096).unwrap();
        assert!(!check_seals(fd.as_fd(), 4096, SealCheck::SizeOnly));
        seal_size(fd.as_fd()).unwrap();
        assert!(check_seals(fd.as_fd(), 4096, SealCheck::SizeOnly));
        assert!(!check_seals(fd.as_fd(), 4096, SealCheck::ReadOnly));
        assert!(
            !check_seals(fd.as_fd(), 8192, SealCheck::SizeOnly),
            "shorter than announced"
        );
    }
}
