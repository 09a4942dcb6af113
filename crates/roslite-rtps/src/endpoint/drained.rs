//! A memo that an endpoint has nothing to send, so a participant with many endpoints does not
//! walk every idle one after each datagram.
//!
//! Sound because of the endpoint contract (module docs): output changes only through an input
//! (a `&mut` method) or through a timer, and `poll_timeout` covers the timers. The memo is set
//! when `poll_transmit` returns `None` and records `poll_timeout` at that moment; any mutable
//! access to the endpoint (through [`DerefMut`]) forgets it. So while it holds, the endpoint's
//! own `poll_transmit` would return `None` for every `now` before the recorded deadline.

use std::ops::{Deref, DerefMut};

use super::reader::Reader;
use super::received::ReceivedSample;
use super::transmit::Transmit;
use super::writer::Writer;
use crate::instant::Instant;

/// The outputs of a sans-IO endpoint the memo stands in for, and its timer input.
pub trait Transmitter {
    fn poll_transmit(&mut self, now: Instant) -> Option<Transmit>;
    fn poll_timeout(&self) -> Option<Instant>;
    fn handle_timeout(&mut self, now: Instant);
}

impl Transmitter for Writer {
    fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        Writer::poll_transmit(self, now)
    }
    fn poll_timeout(&self) -> Option<Instant> {
        Writer::poll_timeout(self)
    }
    fn handle_timeout(&mut self, now: Instant) {
        Writer::handle_timeout(self, now)
    }
}

impl Transmitter for Reader {
    fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        Reader::poll_transmit(self, now)
    }
    fn poll_timeout(&self) -> Option<Instant> {
        Reader::poll_timeout(self)
    }
    fn handle_timeout(&mut self, now: Instant) {
        Reader::handle_timeout(self, now)
    }
}

/// An endpoint plus the memo. Reads go straight through ([`Deref`]); writes through
/// [`DerefMut`] forget the memo; [`Drained::poll_transmit`] and [`Drained::poll_timeout`] use
/// it.
#[derive(Debug)]
pub struct Drained<E> {
    endpoint: E,
    /// `Some(deadline)`: drained, and nothing to send before `deadline` (`None`: no timer).
    quiet_until: Option<Option<Instant>>,
}

impl<E: Transmitter> Drained<E> {
    pub fn new(endpoint: E) -> Self {
        Self {
            endpoint,
            quiet_until: None,
        }
    }

    /// The endpoint's next transmit, without asking it when the memo says it has none.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        if let Some(deadline) = self.quiet_until {
            let before_timer = match deadline {
                Some(t) => now < t,
                None => true,
            };
            if before_timer {
                return None;
            }
        }
        let transmit = self.endpoint.poll_transmit(now);
        self.quiet_until = match transmit {
            Some(_) => None,
            None => Some(self.endpoint.poll_timeout()),
        };
        transmit
    }

    /// The endpoint's next timer (recorded while the memo holds).
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self.quiet_until {
            Some(deadline) => deadline,
            None => self.endpoint.poll_timeout(),
        }
    }

    /// Whether a timer of the endpoint is due at `now` (its `handle_timeout` has work).
    pub fn timer_due(&self, now: Instant) -> bool {
        self.poll_timeout().is_some_and(|t| t <= now)
    }

    /// Runs the endpoint's timers if one is due; an endpoint with none due keeps its memo.
    pub fn handle_timeout_if_due(&mut self, now: Instant) {
        if self.timer_due(now) {
            Transmitter::handle_timeout(self.deref_mut(), now);
        }
    }
}

impl Drained<Reader> {
    /// [`Reader::poll_sample`], keeping the memo when no sample waits: the participant asks
    /// its SEDP and WLP readers after every datagram, and an empty queue changes nothing.
    pub fn poll_sample(&mut self) -> Option<ReceivedSample> {
        if self.endpoint.ready_len() == 0 {
            return None;
        }
        self.deref_mut().poll_sample()
    }
}

impl<E> Deref for Drained<E> {
    type Target = E;
    fn deref(&self) -> &E {
        &self.endpoint
    }
}

impl<E> DerefMut for Drained<E> {
    fn deref_mut(&mut self) -> &mut E {
        self.quiet_until = None;
        &mut self.endpoint
    }
}
