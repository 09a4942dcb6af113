//! The executor's sleep: blocks until a deadline or until some entity reports new work.
//!
//! An event count on a futex word: every `unpark` bumps an epoch and wakes all sleepers; a
//! sleeper waits only while the epoch still has the value it saw before checking for work, so a
//! wake-up can never fall between "checked" and "slept". Sleepers wait with
//! `FUTEX_WAIT_BITSET`, whose timeout is an absolute `CLOCK_MONOTONIC` time (futex(2)), so a
//! wake-up is not late by the time it took to turn a deadline into a relative timeout, and no
//! mutex sits on the wake path. Several threads (a multi-threaded executor) may sleep on one
//! parker; callers re-check their conditions after every return.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::SeqCst};

use rustix::thread::futex;

use crate::clock::Instant;

/// A wake-up flag with sleeping sides (executor threads) and any number of waking sides
/// (publishers, timers being reset, futures completing, shutdown).
#[derive(Debug, Default)]
pub struct Parker {
    epoch: AtomicU32,
    sleepers: AtomicU32,
    /// A notification not yet consumed by a sleeper.
    notified: AtomicBool,
}

impl Parker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Wakes every sleeper, or makes the next sleep return at once.
    pub fn unpark(&self) {
        self.notified.store(true, SeqCst);
        self.epoch.fetch_add(1, SeqCst);
        if self.sleepers.load(SeqCst) > 0 {
            // Nothing useful can be done if the kernel refuses a wake; sleepers still time out.
            let _ = futex::wake(&self.epoch, futex::Flags::PRIVATE, i32::MAX as u32);
        }
    }

    /// Consumes a pending notification, if any.
    pub fn take_notification(&self) -> bool {
        self.notified.swap(false, SeqCst)
    }

    /// Sleeps until unparked, until `deadline` on `CLOCK_MONOTONIC`, or spuriously; callers
    /// re-check what they wait for.
    pub fn park_until(&self, deadline: Option<Instant>) {
        let epoch = self.epoch.load(SeqCst);
        if self.take_notification() {
            return;
        }
        if deadline.is_some_and(|d| Instant::monotonic_now() >= d) {
            return;
        }
        let timeout = deadline.map(|d| rustix::time::Timespec {
            tv_sec: (d.as_nanos() / 1_000_000_000) as i64,
            tv_nsec: (d.as_nanos() % 1_000_000_000) as i64,
        });
        self.sleepers.fetch_add(1, SeqCst);
        // Returns at once if the epoch moved since it was read (EAGAIN), at the deadline
        // (ETIMEDOUT), on a wake, or on a signal (EINTR): all mean "look again".
        let _ = futex::wait_bitset(
            &self.epoch,
            futex::Flags::PRIVATE,
            epoch,
            timeout.as_ref(),
            NonZeroU32::MAX,
        );
        self.sleepers.fetch_sub(1, SeqCst);
        self.take_notification();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;

    #[test]
    fn notification_before_park_is_not_lost() {
        let parker = Parker::new();
        parker.unpark();
        parker.park_until(None);
        assert!(!parker.take_notification());
    }

    #[test]
    fn deadline_ends_the_sleep() {
        let parker = Parker::new();
        let deadline = Instant::monotonic_now() + Duration::from_millis(5);
        parker.park_until(Some(deadline));
        assert!(Instant::monotonic_now() >= deadline);
    }

    #[test]
    fn unpark_wakes_every_sleeper() {
        let parker = Arc::new(Parker::new());
        let sleepers: Vec<_> = (0..2)
            .map(|_| {
                let parker = parker.clone();
                std::thread::spawn(move || parker.park_until(None))
            })
            .collect();
        // Keep notifying until both sleepers have returned (each consumes one notification).
        while sleepers.iter().any(|s| !s.is_finished()) {
            parker.unpark();
            std::thread::yield_now();
        }
        for sleeper in sleepers {
            sleeper.join().unwrap();
        }
    }
}
