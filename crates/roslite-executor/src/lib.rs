//! Time, timers and the executor that runs roslite callbacks.
//!
//! Layers:
//! - [`instant`]: [`Instant`], nanoseconds on a monotonic time line.
//! - [`clock`]: `CLOCK_MONOTONIC`, the [`Clock`] trait, and a [`VirtualClock`]
//!   for deterministic tests.
//! - [`parker`]: the executor's sleep, woken by deadlines or by entities with new work.
//! - [`timer`]: drift-free periodic [`Schedule`]s and the [`Timer`] entity; [`rate`]: the same
//!   deadlines for loops.
//! - [`sim`]: simulated time driven by `/clock`.
//! - [`rt`]: real-time thread settings that fail loudly.
//! - [`executor`]: [`CallbackGroup`]s of [`Waitable`] entities and the [`Executor`] that runs
//!   them, timers first.
//!
//! Nothing here knows about messages or transports: subscriptions, services and clients are
//! `Waitable`s defined by the `roslite` crate.

pub mod clock;
pub mod executor;
pub mod instant;
pub mod parker;
pub mod rate;
pub mod rt;
pub mod sim;
pub mod timer;

pub use clock::{Clock, Instant, SteadyClock, VirtualClock};
pub use executor::{
    CallbackGroup, CallbackGroupKind, Executor, ShutdownSignal, SpinError, Waitable,
};
pub use parker::Parker;
pub use rate::Rate;
pub use rt::{RealtimeOptions, RtError};
pub use sim::{Notify, SimClock};
pub use timer::{Firing, Schedule, Timer, TimerCall};
