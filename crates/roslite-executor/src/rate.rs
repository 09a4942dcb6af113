//! A loop helper that runs at a fixed rate on absolute deadlines (rclcpp's `Rate`).

use std::sync::Arc;
use std::time::Duration;

use crate::clock::{Clock, Instant};
use crate::parker::Parker;
use crate::sim::{Notify, SimClock};
use crate::timer::{Firing, Schedule};

/// `loop { work(); rate.sleep(); }` runs `work` once per period. Deadlines are absolute, so the
/// loop never drifts; after an overrun `sleep` returns at once and the missed deadlines are
/// skipped, not replayed in a burst.
pub struct Rate {
    clock: Arc<dyn Clock>,
    schedule: Schedule,
    parker: Arc<Parker>,
}

impl Rate {
    /// A rate whose first deadline is one period from now.
    ///
    /// # Panics
    /// If `period` is zero.
    pub fn new(clock: Arc<dyn Clock>, period: Duration) -> Self {
        assert!(!period.is_zero(), "Rate period must be greater than zero");
        let schedule = Schedule::new(clock.now(), period);
        Self {
            clock,
            schedule,
            parker: Arc::new(Parker::new()),
        }
    }

    /// A rate on simulated time; `/clock` updates wake its sleeps.
    pub fn on_sim_clock(clock: Arc<SimClock>, period: Duration) -> Self {
        let rate = Self::new(clock.clone(), period);
        let parker: Arc<dyn Notify> = rate.parker.clone();
        clock.add_listener(Arc::downgrade(&parker));
        rate
    }

    /// `hz` iterations per second.
    ///
    /// # Panics
    /// If `hz` is not a positive finite number.
    pub fn from_hz(clock: Arc<dyn Clock>, hz: f64) -> Self {
        assert!(
            hz.is_finite() && hz > 0.0,
            "Rate frequency must be positive"
        );
        Self::new(clock, Duration::from_secs_f64(1.0 / hz))
    }

    pub fn period(&self) -> Duration {
        self.schedule.period()
    }

    /// The deadline the next `sleep` waits for.
    pub fn next_deadline(&self) -> Instant {
        self.schedule.next_deadline()
    }

    /// Sleeps until the next deadline; returns which deadline it served and how many were
    /// skipped because the loop body overran.
    pub fn sleep(&mut self) -> Firing {
        let deadline = self.schedule.next_deadline();
        loop {
            let now = self.clock.now();
            if now >= deadline {
                return self.schedule.fire(now);
            }
            self.clock.wait_until(&self.parker, Some(deadline));
        }
    }

    /// Restarts the grid one period from now.
    pub fn reset(&mut self) {
        self.schedule.reset(self.clock.now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::VirtualClock;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn rate_loop_does_not_drift_with_slow_bodies() {
        let clock = Arc::new(VirtualClock::new(Instant::ZERO));
        let mut rate = Rate::new(clock.clone(), 10 * MS);
        for n in 1..=1000u64 {
            clock.advance(7 * MS);
            let firing = rate.sleep();
            assert_eq!(firing.scheduled, Instant::from_nanos(n * 10_000_000));
            assert_eq!(clock.now(), firing.scheduled);
        }
    }

    #[test]
    fn rate_overrun_returns_at_once_then_resumes_the_grid() {
        let clock = Arc::new(VirtualClock::new(Instant::ZERO));
        let mut rate = Rate::new(clock.clone(), 10 * MS);
        rate.sleep(); // t = 10
        clock.advance(34 * MS); // body overran to t = 44
        let late = rate.sleep();
        assert_eq!(
            (late.scheduled, late.skipped),
            (Instant::from_nanos(20_000_000), 2)
        );
        assert_eq!(
            clock.now(),
            Instant::from_nanos(44_000_000),
            "no sleep after an overrun"
        );
        let next = rate.sleep();
        assert_eq!(next.scheduled, Instant::from_nanos(50_000_000));
        assert_eq!(clock.now(), Instant::from_nanos(50_000_000));
    }

    #[test]
    fn rate_on_sim_time_waits_for_clock_messages() {
        let clock = SimClock::new();
        clock.set(Instant::from_nanos(1_000_000_000));
        let mut rate = Rate::on_sim_clock(clock.clone(), Duration::from_secs(1));
        let driver = {
            let clock = clock.clone();
            std::thread::spawn(move || {
                for step in 1..=20u64 {
                    std::thread::sleep(Duration::from_millis(2));
                    clock.set(Instant::from_nanos(1_000_000_000 + step * 250_000_000));
                }
            })
        };
        let first = rate.sleep();
        assert_eq!(first.scheduled, Instant::from_nanos(2_000_000_000));
        assert!(clock.now() >= Instant::from_nanos(2_000_000_000));
        driver.join().unwrap();
    }
}
