//! Wakes a thread blocked in [`crate::UdpTransport::recv`]: a `pending` flag plus an
//! `eventfd(2)` polled next to the sockets.
//!
//! The flag lets `recv` see a wake without a syscall even while sockets keep it busy, and lets
//! repeated wakes skip the eventfd write. Invariant: `pending` is set *before* the eventfd is
//! written, so a receiver that finds the flag clear and then polls is woken by the write. Any
//! number of wakes before the receiver looks collapse into one [`crate::RecvEvent::Woken`].

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;

use rustix::event::{eventfd, EventfdFlags};
use rustix::io::Errno;

#[derive(Debug)]
struct Inner {
    pending: AtomicBool,
    fd: OwnedFd,
}

/// A cloneable, `Send + Sync` handle that wakes the transport's blocked `recv`.
#[derive(Clone, Debug)]
pub struct Waker {
    inner: Arc<Inner>,
}

impl Waker {
    pub(crate) fn new() -> io::Result<Self> {
        let fd = eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?;
        Ok(Waker {
            inner: Arc::new(Inner {
                pending: AtomicBool::new(false),
                fd,
            }),
        })
    }

    /// Makes the current or next `recv` return [`crate::RecvEvent::Woken`].
    pub fn wake(&self) {
        if self.inner.pending.swap(true, SeqCst) {
            // Already pending: whoever set the flag writes (or wrote) the eventfd.
            return;
        }
        let one = 1u64.to_ne_bytes();
        loop {
            match rustix::io::write(&self.inner.fd, &one) {
                Err(Errno::INTR) => continue,
                // EAGAIN: the counter is saturated, so the eventfd is readable anyway.
                // eventfd(2) documents no other error for an 8-byte write.
                _ => return,
            }
        }
    }

    /// Consumes a pending wake; returns whether there was one. Also empties the eventfd.
    pub(crate) fn take(&self) -> bool {
        let pending = self.inner.pending.swap(false, SeqCst);
        let mut count = [0u8; 8];
        loop {
            match rustix::io::read(&self.inner.fd, &mut count) {
                Err(Errno::INTR) => continue,
                // EAGAIN: not written yet (or already drained); a later write only causes one
                // extra poll wake-up, which `recv` absorbs.
                _ => return pending,
            }
        }
    }

    /// Whether a wake is pending, without consuming it (no syscall).
    pub(crate) fn is_pending(&self) -> bool {
        self.inner.pending.load(SeqCst)
    }
}

impl AsFd for Waker {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.inner.fd.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn waker_and_transport_cross_threads() {
        assert_send_sync::<Waker>();
        assert_send_sync::<crate::UdpTransport>();
    }

    #[test]
    fn wakes_collapse_and_are_consumed_once() {
        let waker = Waker::new().unwrap();
        assert!(!waker.take());
        waker.wake();
        waker.clone().wake();
        assert!(waker.is_pending());
        assert!(waker.take());
        assert!(!waker.is_pending());
        assert!(!waker.take());
    }
}
