//! Simulated time (ROS `use_sim_time`): a clock that only `/clock` messages move.
//!
//! Timers on a [`SimClock`] report no sleep deadline to the executor (it cannot know when the
//! next `/clock` message comes); instead, every [`SimClock::set`] notifies the listeners
//! (callback groups, [`crate::Rate`]s), whose timers then compare their deadlines with the new
//! time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use crate::clock::{Clock, Instant};
use crate::executor::CallbackGroup;
use crate::parker::Parker;

/// Something to poke when simulated time moves.
pub trait Notify: Send + Sync {
    fn notify(&self);
}

impl Notify for CallbackGroup {
    fn notify(&self) {
        CallbackGroup::notify(self);
    }
}

impl Notify for Parker {
    fn notify(&self) {
        self.unpark();
    }
}

/// ROS time driven by `/clock` (rosgraph_msgs/Clock), in nanoseconds since the epoch.
#[derive(Default)]
pub struct SimClock {
    now: AtomicU64,
    listeners: Mutex<Vec<Weak<dyn Notify>>>,
}

impl SimClock {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Sets the time (a `/clock` message arrived) and wakes everything waiting on it. Time may
    /// jump backwards (a bag restarting); timers then wait for the new time to reach their
    /// deadline again.
    pub fn set(&self, now: Instant) {
        self.now.store(now.as_nanos(), Ordering::Release);
        let mut listeners = self
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        listeners.retain(|listener| match listener.upgrade() {
            Some(listener) => {
                listener.notify();
                true
            }
            None => false,
        });
    }

    /// Registers something to notify on every time change; held weakly.
    pub fn add_listener(&self, listener: Weak<dyn Notify>) {
        self.listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(listener);
    }
}

/// How often a sleeper on simulated time re-checks even without a notification, so a missed
/// wake-up can only delay it, never block it forever.
const SIM_RECHECK: Duration = Duration::from_millis(100);

impl Clock for SimClock {
    fn now(&self) -> Instant {
        Instant::from_nanos(self.now.load(Ordering::Acquire))
    }

    fn is_steady(&self) -> bool {
        false
    }

    /// Waits for a notification from [`SimClock::set`] (or `parker`'s owner); the deadline is
    /// in simulated time, so it cannot be slept to directly.
    fn wait_until(&self, parker: &Parker, deadline: Option<Instant>) {
        if deadline.is_some_and(|d| self.now() >= d) {
            return;
        }
        parker.park_until(Some(Instant::monotonic_now() + SIM_RECHECK));
    }
}
