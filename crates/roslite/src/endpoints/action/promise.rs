//! A value that arrives once, from any thread, for any number of readers: blocking
//! ([`Promise::wait`]) or polled as a future ([`Promise::poll_value`]). Action futures are
//! views of one.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::{Duration, Instant};

pub(crate) struct Promise<T> {
    slot: Mutex<Slot<T>>,
    arrived: Condvar,
}

struct Slot<T> {
    value: Option<T>,
    wakers: Vec<Waker>,
}

impl<T: Clone> Promise<T> {
    pub(crate) fn new() -> Self {
        Self {
            slot: Mutex::new(Slot {
                value: None,
                wakers: Vec::new(),
            }),
            arrived: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Slot<T>> {
        self.slot.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sets the value unless one came first; true if this one was kept.
    pub(crate) fn fulfill(&self, value: T) -> bool {
        let wakers = {
            let mut slot = self.lock();
            if slot.value.is_some() {
                return false;
            }
            slot.value = Some(value);
            std::mem::take(&mut slot.wakers)
        };
        self.arrived.notify_all();
        for waker in wakers {
            waker.wake();
        }
        true
    }

    pub(crate) fn value(&self) -> Option<T> {
        self.lock().value.clone()
    }

    /// Waits up to `timeout` for the value.
    pub(crate) fn wait(&self, timeout: Duration) -> Option<T> {
        let deadline = Instant::now() + timeout;
        let mut slot = self.lock();
        loop {
            if let Some(value) = &slot.value {
                return Some(value.clone());
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            slot = self
                .arrived
                .wait_timeout(slot, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    pub(crate) fn poll_value(&self, cx: &mut TaskContext<'_>) -> Poll<T> {
        let mut slot = self.lock();
        match &slot.value {
            Some(value) => Poll::Ready(value.clone()),
            None => {
                if !slot.wakers.iter().any(|w| w.will_wake(cx.waker())) {
                    slot.wakers.push(cx.waker().clone());
                }
                Poll::Pending
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn the_first_value_wins_and_every_reader_sees_it() {
        let promise = Arc::new(Promise::new());
        let writer = promise.clone();
        let thread = std::thread::spawn(move || writer.fulfill(7));
        assert_eq!(promise.wait(Duration::from_secs(60)), Some(7));
        assert!(thread.join().unwrap());
        assert!(!promise.fulfill(8));
        assert_eq!(promise.value(), Some(7));
    }
}
