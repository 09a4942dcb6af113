//! A reader's short wait before it sleeps.
//!
//! When a reader finds its ring (or socket) empty, it normally sleeps: on the channel's futex
//! word, or in `recv`. The writer then pays a wake-up system call, and the reader a wait and a
//! context switch back. When samples come in quick succession (a request and its reply, a
//! ping and its echo) the next one is often a few microseconds away. [`IdleSpin`] then yields
//! the CPU and looks again, for at most its budget, before the reader sleeps:
//! - The writer sees the reader awake and skips the wake-up call.
//! - On a CPU shared with the writer, the yield hands the CPU to the writer at once: one
//!   `sched_yield` replaces a futex wake, a futex wait and the scheduler's wake-up work.
//! - On another CPU, the sample is seen within one yield (under a microsecond) instead of
//!   after a cross-CPU wake-up.
//!
//! It spins only while samples arrive densely: after the reader slept and the next sample came
//! within the budget. An idle spell longer than the budget (a 10 Hz topic, a burst that ended)
//! makes it sleep at once next time, so a sparse topic costs no CPU for it. Each look is behind
//! a `sched_yield`, so any other runnable thread on the CPU goes first: what the spin uses is
//! otherwise idle time, at most one budget per sample.
//!
//! Measured with `roslite bench rtt --transport shm|uds --mode back-to-back` pinned to one CPU;
//! see `docs/shm.md` ("Waiting for the next sample").

use std::time::{Duration, Instant};

/// The short wait before sleeping; see the module documentation.
#[derive(Clone, Debug)]
pub struct IdleSpin {
    budget: Duration,
    /// The last idle spell ended within the budget: look again before sleeping.
    dense: bool,
    /// When the reader went to sleep ([`Self::sleeping`]), until [`Self::woke`].
    asleep_since: Option<Instant>,
}

impl IdleSpin {
    /// The default budget: a same-host round trip here takes 4-15 us, so the reply to a
    /// request is within it, while a topic published more than 50,000 times a second is the
    /// densest that keeps a reader spinning between samples.
    pub const DEFAULT_BUDGET: Duration = Duration::from_micros(20);

    /// The longest budget [`Self::parse_budget`] accepts.
    pub const MAX_BUDGET: Duration = Duration::from_millis(1);

    /// Environment variable holding the budget in microseconds (roslite's contexts and the
    /// benchmarks read it).
    pub const ENV: &'static str = "ROSLITE_RECEIVE_SPIN_US";

    /// Looks again for up to `budget` while samples arrive densely; `Duration::ZERO` never
    /// spins (every empty look sleeps at once, as without it).
    pub fn new(budget: Duration) -> Self {
        Self {
            budget,
            dense: false,
            asleep_since: None,
        }
    }

    /// A budget in the syntax of [`Self::ENV`]: whole microseconds, at most
    /// [`Self::MAX_BUDGET`].
    pub fn parse_budget(text: &str) -> Option<Duration> {
        let budget = Duration::from_micros(text.trim().parse().ok()?);
        (budget <= Self::MAX_BUDGET).then_some(budget)
    }

    /// The budget [`Self::ENV`] sets; `None` when it is unset or empty.
    ///
    /// # Errors
    /// The text [`Self::parse_budget`] refused ([`Self::invalid_budget`] says what is wrong).
    pub fn budget_from_env() -> Result<Option<Duration>, String> {
        match std::env::var(Self::ENV) {
            Ok(text) if !text.trim().is_empty() => Self::parse_budget(&text).map(Some).ok_or(text),
            _ => Ok(None),
        }
    }

    /// With the budget [`Self::ENV`] sets, or [`Self::DEFAULT_BUDGET`] when it is unset or
    /// empty.
    ///
    /// # Errors
    /// A value [`Self::parse_budget`] refuses, with what it accepts.
    pub fn from_env() -> Result<Self, String> {
        let budget = Self::budget_from_env().map_err(|text| Self::invalid_budget(&text))?;
        Ok(Self::new(budget.unwrap_or(Self::DEFAULT_BUDGET)))
    }

    /// What is wrong with a budget text [`Self::parse_budget`] refused, and what to write.
    pub fn invalid_budget(text: &str) -> String {
        format!(
            "{}='{text}' is invalid: use whole microseconds from 0 (a same-host reader sleeps as \
             soon as it finds nothing) to {} (default: {})",
            Self::ENV,
            Self::MAX_BUDGET.as_micros(),
            Self::DEFAULT_BUDGET.as_micros()
        )
    }

    /// Called when `look` found nothing: while samples arrive densely, yields and calls `look`
    /// again until it returns something (returned here), fails, or the budget (counted from the
    /// first of these looks that finds nothing) is spent.
    /// `Ok(None)`: the caller should sleep now, between [`Self::sleeping`] and [`Self::woke`].
    ///
    /// # Errors
    /// What `look` returned.
    pub fn look_again<T, E>(
        &mut self,
        mut look: impl FnMut() -> Result<Option<T>, E>,
    ) -> Result<Option<T>, E> {
        if !self.dense {
            return Ok(None);
        }
        // The clock is read from the first fruitless look on: the first look after a yield
        // usually finds the sample (on a shared CPU the yield ran its writer), and a clock read
        // is a noticeable part of a same-host hop. The spin can so last one yield longer than
        // the budget.
        let mut start = None;
        loop {
            std::thread::yield_now();
            if let Some(found) = look()? {
                return Ok(Some(found));
            }
            let start = *start.get_or_insert_with(Instant::now);
            if start.elapsed() >= self.budget {
                self.dense = false;
                return Ok(None);
            }
        }
    }

    /// The reader is about to sleep. Reads the clock only with a budget to compare the sleep
    /// with (`receive_blocking` waits with none).
    pub fn sleeping(&mut self) {
        if !self.budget.is_zero() {
            self.sleeping_at(Instant::now());
        }
    }

    /// The reader's sleep ended (a sample, a hang-up or an interruption).
    pub fn woke(&mut self) {
        if self.asleep_since.is_some() {
            self.woke_at(Instant::now());
        }
    }

    fn sleeping_at(&mut self, now: Instant) {
        if !self.budget.is_zero() {
            self.asleep_since = Some(now);
        }
    }

    fn woke_at(&mut self, now: Instant) {
        if let Some(since) = self.asleep_since.take() {
            self.dense = now.saturating_duration_since(since) < self.budget;
        }
    }
}

impl Default for IdleSpin {
    fn default() -> Self {
        Self::new(Self::DEFAULT_BUDGET)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `look_again`'s answer with a look that never finds anything, and how many looks it took.
    fn looks_while_empty(spin: &mut IdleSpin) -> usize {
        let mut looks = 0;
        let found: Result<Option<()>, ()> = spin.look_again(|| {
            looks += 1;
            Ok(None)
        });
        assert_eq!(found, Ok(None));
        looks
    }

    #[test]
    fn it_spins_only_after_a_short_sleep_and_stops_after_a_long_wait() {
        let budget = Duration::from_micros(20);
        let mut spin = IdleSpin::new(budget);
        let t0 = Instant::now();
        assert_eq!(
            looks_while_empty(&mut spin),
            0,
            "nothing arrived densely yet"
        );

        spin.sleeping_at(t0);
        spin.woke_at(t0 + Duration::from_micros(5));
        let found = spin.look_again(|| Ok::<_, ()>(Some(7)));
        assert_eq!(found, Ok(Some(7)), "a short sleep makes it look again");

        // A spin that finds nothing for the whole budget ends it: the next empty look sleeps.
        assert!(looks_while_empty(&mut spin) >= 1);
        assert_eq!(looks_while_empty(&mut spin), 0);

        spin.sleeping_at(t0);
        spin.woke_at(t0 + budget);
        assert_eq!(
            looks_while_empty(&mut spin),
            0,
            "a sleep of a whole budget is sparse"
        );
    }

    #[test]
    fn a_zero_budget_never_spins_and_errors_pass_through() {
        let mut spin = IdleSpin::new(Duration::ZERO);
        let t0 = Instant::now();
        spin.sleeping_at(t0);
        spin.woke_at(t0);
        assert_eq!(looks_while_empty(&mut spin), 0);

        let mut spin = IdleSpin::new(Duration::from_secs(1));
        spin.sleeping_at(t0);
        spin.woke_at(t0);
        let failed: Result<Option<()>, &str> = spin.look_again(|| Err("hung up"));
        assert_eq!(failed, Err("hung up"));
    }
}
