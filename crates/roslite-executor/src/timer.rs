//! Periodic timers on absolute deadlines.
//!
//! Deadline arithmetic lives in [`Schedule`], a plain value with no clock of its own, so the
//! rules are testable with made-up instants:
//! - the n-th deadline is `start + n * period`, never "last wake-up + period", so lateness of
//!   one callback does not shift later ones (no drift);
//! - after an overrun that spans several periods, the missed deadlines are skipped, not
//!   replayed back to back (no catch-up burst), as rclcpp's timers do.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::clock::{Clock, Instant};
use crate::executor::Waitable;

/// The deadline bookkeeping of one periodic timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    period: Duration,
    next: Instant,
}

/// What one firing of a timer was for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Firing {
    /// The deadline this call serves.
    pub scheduled: Instant,
    /// Deadlines skipped because the previous call (or the system) overran them.
    pub skipped: u64,
}

impl Schedule {
    /// First deadline one period after `start`.
    ///
    /// # Panics
    /// If `period` is zero (callers validate user input first).
    pub fn new(start: Instant, period: Duration) -> Self {
        assert!(!period.is_zero(), "internal bug: zero timer period");
        Self {
            period,
            next: start + period,
        }
    }

    pub fn period(&self) -> Duration {
        self.period
    }

    pub fn next_deadline(&self) -> Instant {
        self.next
    }

    pub fn is_due(&self, now: Instant) -> bool {
        now >= self.next
    }

    /// Consumes the current deadline and moves to the first future one on the same grid.
    pub fn fire(&mut self, now: Instant) -> Firing {
        let scheduled = self.next;
        let period_ns = self.period.as_nanos().max(1);
        let late_ns = (now - scheduled).as_nanos();
        // Whole periods that have already passed beyond the one being served.
        let skipped = u64::try_from(late_ns / period_ns).unwrap_or(u64::MAX);
        let steps = skipped.saturating_add(1);
        let advance = Duration::from_nanos(
            u64::try_from(period_ns.saturating_mul(u128::from(steps))).unwrap_or(u64::MAX),
        );
        self.next = scheduled + advance;
        Firing { scheduled, skipped }
    }

    /// Restarts the grid one period after `now`.
    /// The next deadline becomes `next`; the ones after it follow on its grid.
    pub fn reset_next(&mut self, next: Instant) {
        self.next = next;
    }

    pub fn reset(&mut self, now: Instant) {
        self.next = now + self.period;
    }
}

/// What a timer callback is told about its call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerCall {
    /// When the call was due.
    pub expected: Instant,
    /// When the callback actually started.
    pub actual: Instant,
    /// Deadlines skipped since the previous call.
    pub skipped: u64,
}

impl TimerCall {
    /// How late the callback started.
    pub fn latency(&self) -> Duration {
        self.actual - self.expected
    }
}

type TimerCallback = Box<dyn FnMut(&TimerCall) + Send>;

/// A periodic timer entity that an executor runs.
pub struct Timer {
    clock: Arc<dyn Clock>,
    schedule: Mutex<Schedule>,
    callback: Mutex<TimerCallback>,
    cancelled: AtomicBool,
}

impl Timer {
    /// A timer whose first deadline is one `period` from now on `clock`.
    pub fn new(
        clock: Arc<dyn Clock>,
        period: Duration,
        callback: impl FnMut(&TimerCall) + Send + 'static,
    ) -> Self {
        let schedule = Schedule::new(clock.now(), period);
        Self {
            clock,
            schedule: Mutex::new(schedule),
            callback: Mutex::new(Box::new(callback)),
            cancelled: AtomicBool::new(false),
        }
    }

    pub fn period(&self) -> Duration {
        self.lock_schedule().period()
    }

    /// Stops the timer until [`Self::reset`].
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }

    /// Re-arms the timer one period from now.
    pub fn reset(&self) {
        self.lock_schedule().reset(self.clock.now());
        self.cancelled.store(false, Ordering::Release);
    }

    /// Time until the next call (zero if due).
    pub fn time_until_trigger(&self) -> Duration {
        self.lock_schedule().next_deadline() - self.clock.now()
    }

    /// Moves the next call to `left` from now, the period staying: the timer keeps a phase it
    /// had elsewhere (a WebAssembly node moved to another host). An executor already asleep
    /// past the new deadline makes the call when it next wakes.
    pub fn set_time_until_trigger(&self, left: Duration) {
        self.lock_schedule().reset_next(self.clock.now() + left);
    }

    fn lock_schedule(&self) -> std::sync::MutexGuard<'_, Schedule> {
        self.schedule.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Waitable for Timer {
    fn next_deadline(&self) -> Option<Instant> {
        if self.is_cancelled() || !self.clock.is_steady() {
            return None;
        }
        Some(self.lock_schedule().next_deadline())
    }

    fn due_key(&self) -> Option<Instant> {
        (!self.is_cancelled()).then(|| self.lock_schedule().next_deadline())
    }

    /// Due by the timer's own clock (simulated time may differ from the executor's).
    fn is_ready(&self, _now: Instant) -> bool {
        !self.is_cancelled() && self.lock_schedule().is_due(self.clock.now())
    }

    fn is_timer(&self) -> bool {
        true
    }

    fn execute(&self) -> bool {
        let now = self.clock.now();
        let firing = {
            let mut schedule = self.lock_schedule();
            if self.is_cancelled() || !schedule.is_due(now) {
                return false;
            }
            schedule.fire(now)
        };
        let call = TimerCall {
            expected: firing.scheduled,
            actual: now,
            skipped: firing.skipped,
        };
        let mut callback = self.callback.lock().unwrap_or_else(PoisonError::into_inner);
        callback(&call);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn at(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    #[test]
    fn deadlines_stay_on_the_grid_despite_late_wakeups() {
        let mut s = Schedule::new(at(0), 10 * MS);
        // Every wake-up is 3 ms late; deadlines must not accumulate that lateness.
        for n in 1..=10_000u64 {
            let firing = s.fire(at(n * 10 + 3));
            assert_eq!(firing.scheduled, at(n * 10));
            assert_eq!(firing.skipped, 0);
        }
        assert_eq!(s.next_deadline(), at(100_010));
    }

    #[test]
    fn a_moved_next_deadline_keeps_the_period_from_there() {
        let mut s = Schedule::new(at(0), 10 * MS);
        s.reset_next(at(3));
        assert_eq!(s.fire(at(3)).scheduled, at(3));
        assert_eq!(s.next_deadline(), at(13));
    }

    #[test]
    fn overrun_skips_missed_deadlines_without_burst() {
        let mut s = Schedule::new(at(0), 10 * MS);
        let firing = s.fire(at(45));
        assert_eq!(
            firing,
            Firing {
                scheduled: at(10),
                skipped: 3
            }
        );
        assert_eq!(s.next_deadline(), at(50));
        assert!(!s.is_due(at(49)));
    }

    #[test]
    fn exactly_on_a_later_deadline_is_not_served_twice() {
        let mut s = Schedule::new(at(0), 10 * MS);
        let firing = s.fire(at(30));
        assert_eq!(firing.skipped, 2);
        assert_eq!(s.next_deadline(), at(40));
    }

    #[test]
    fn reset_restarts_the_grid() {
        let mut s = Schedule::new(at(0), 10 * MS);
        s.reset(at(7));
        assert_eq!(s.next_deadline(), at(17));
    }
}
