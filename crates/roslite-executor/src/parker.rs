//! The executor's sleep: blocks until a deadline or until some entity reports new work.

use std::sync::{Condvar, Mutex, PoisonError};

use crate::clock::Instant;

/// A wake-up flag with a sleeping side (the executor) and any number of waking sides
/// (publishers, timers being reset, futures completing, shutdown).
///
/// A notification that arrives while nobody is waiting is remembered, so a wake-up between
/// "checked for work" and "went to sleep" is never lost.
#[derive(Debug, Default)]
pub struct Parker {
    notified: Mutex<bool>,
    condvar: Condvar,
}

impl Parker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Wakes the sleeper, or makes its next sleep return at once.
    pub fn unpark(&self) {
        let mut notified = self.notified.lock().unwrap_or_else(PoisonError::into_inner);
        if !*notified {
            *notified = true;
            self.condvar.notify_one();
        }
    }

    /// Consumes a pending notification, if any.
    pub fn take_notification(&self) -> bool {
        let mut notified = self.notified.lock().unwrap_or_else(PoisonError::into_inner);
        std::mem::replace(&mut *notified, false)
    }

    /// Sleeps until unparked or until `deadline` on `CLOCK_MONOTONIC`.
    pub fn park_until(&self, deadline: Option<Instant>) {
        let mut notified = self.notified.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if std::mem::replace(&mut *notified, false) {
                return;
            }
            match deadline {
                None => {
                    notified = self.condvar.wait(notified).unwrap_or_else(PoisonError::into_inner);
                }
                Some(deadline) => {
                    let now = Instant::monotonic_now();
                    if now >= deadline {
                        return;
                    }
                    // The condvar takes a relative timeout; recomputing it from the absolute
                    // deadline on every (spurious) wake-up keeps the sleep from drifting.
                    notified = self
                        .condvar
                        .wait_timeout(notified, deadline - now)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                }
            }
        }
    }
}
