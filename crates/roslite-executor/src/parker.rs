//! The executor's sleep: blocks until a deadline or until some entity reports new work.
//!
//! An event count on a futex word: every `unpark` bumps an epoch and wakes all sleepers; a
//! sleeper waits only while the epoch still has the value it saw before checking for work, so a
//! wake-up can never fall between "checked" and "slept". Sleepers wait with
//! `FUTEX_WAIT_BITSET`, whose timeout is an absolute `CLOCK_MONOTONIC` time (futex(2)), so a
//! wake-up is not late by the time it took to turn a deadline into a relative timeout, and no
//! mutex sits on the wake path. Several threads (a multi-threaded executor) may sleep on one
//! parker; callers re-check their conditions after every return.

use std::any::Any;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering::SeqCst};
use std::sync::{Mutex, PoisonError};

use rustix::thread::futex;

use crate::instant::Instant;

/// Lending states (see [`Parker::try_lend`]).
const LEND_CLOSED: u8 = 0;
const LEND_OPEN: u8 = 1;
const LEND_TAKEN: u8 = 2;

/// A wake-up flag with sleeping sides (executor threads) and any number of waking sides
/// (publishers, timers being reset, futures completing, shutdown).
///
/// It also lets a single-threaded executor *lend its turn* while it sleeps: a thread that
/// brings new work (the RTPS receive thread) may run that work's callback itself instead of
/// waking the executor, which saves a thread hop. The executor opens lending right before it
/// sleeps and closes it when it wakes; closing waits for a lent callback to finish, so the
/// executor's callbacks still never overlap.
#[derive(Debug, Default)]
pub struct Parker {
    epoch: AtomicU32,
    sleepers: AtomicU32,
    /// A notification not yet consumed by a sleeper.
    notified: AtomicBool,
    /// `LEND_CLOSED`, `LEND_OPEN` (the executor sleeps and lends its turn) or `LEND_TAKEN`.
    lend: AtomicU8,
    /// Callbacks run on lent turns so far.
    lent_runs: AtomicU64,
    /// Whether a lent run must wake the executor afterwards (its caller waits for "a callback
    /// ran", as `spin_once` does).
    wake_after_lend: AtomicBool,
    /// The executor woke and waits in `close_lending` for its turn back.
    closing: AtomicBool,
    /// A panic of a callback run on a lent turn, re-raised on the executor's thread.
    lent_panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// Set when the executor's context shut down: no callback runs on a lent turn after that
    /// (a receive thread delivering a batch would otherwise run the rest of it).
    lending_refused: AtomicBool,
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

    /// Opens lending before the executor sleeps; `wake_after` makes every lent run wake it.
    pub fn open_lending(&self, wake_after: bool) {
        self.wake_after_lend.store(wake_after, SeqCst);
        self.lend.store(LEND_OPEN, SeqCst);
    }

    /// Closes lending after the executor woke, waiting for a lent callback still running.
    /// Returns a panic such a callback raised, for the executor to re-raise.
    pub fn close_lending(&self) -> Option<Box<dyn Any + Send>> {
        self.closing.store(true, SeqCst);
        loop {
            match self
                .lend
                .compare_exchange(LEND_OPEN, LEND_CLOSED, SeqCst, SeqCst)
            {
                Ok(_) | Err(LEND_CLOSED) => break,
                // A lent callback runs; its end unparks us.
                Err(_) => self.park_until(None),
            }
        }
        self.closing.store(false, SeqCst);
        self.lent_panic
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Takes the sleeping executor's turn. On success the caller runs one callback and then
    /// calls [`Parker::end_lend`]; meanwhile the executor does not run any.
    pub fn try_lend(&self) -> bool {
        if self.lending_refused.load(SeqCst) {
            return false;
        }
        self.lend
            .compare_exchange(LEND_OPEN, LEND_TAKEN, SeqCst, SeqCst)
            .is_ok()
    }

    /// Lends no turn from now on: the executor's context shut down.
    pub fn refuse_lending(&self) {
        self.lending_refused.store(true, SeqCst);
    }

    /// Gives the turn back after a lent run; `panic` is what the callback raised, if anything.
    pub fn end_lend(&self, ran: bool, panic: Option<Box<dyn Any + Send>>) {
        let failed = panic.is_some();
        if let Some(p) = panic {
            *self
                .lent_panic
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(p);
        }
        if ran {
            self.lent_runs.fetch_add(1, SeqCst);
        }
        self.lend.store(LEND_OPEN, SeqCst);
        // Wake the executor if it waits for its turn back (`close_lending`), if its caller
        // wants to know that a callback ran, or to re-raise a panic.
        if failed || self.closing.load(SeqCst) || (ran && self.wake_after_lend.load(SeqCst)) {
            self.unpark();
        }
    }

    /// Whether the executor is asleep in the kernel with its turn lent. The sleep counts too
    /// for a caller waiting for this: lending opens just before the sleep, and a sleep that
    /// returns at once (on a notification left from before it) closes and reopens lending
    /// around one more look for work.
    pub fn is_lending(&self) -> bool {
        self.sleepers.load(SeqCst) > 0 && self.lend.load(SeqCst) == LEND_OPEN
    }

    /// Callbacks run on lent turns so far.
    pub fn lent_runs(&self) -> u64 {
        self.lent_runs.load(SeqCst)
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
