//! The network's two receiving threads: the driver (every socket, the protocol's timers) and
//! the user-data thread (the user unicast socket alone), and how each hands what the
//! participant produced to the process outside the network lock.

use std::sync::atomic::Ordering;
use std::sync::MutexGuard;

use roslite_rtps::Instant;
use roslite_transport::{RecvEvent, SocketKind, RECV_BUFFER_LEN};

use super::{now, to_locator, Delivery, NetShared, NetState, ServiceDelivery, DRIVING, RECEIVING};
use crate::vocabulary::events::{report_matches, MatchReports};

/// The driver thread: receive, run timers, deliver, send; until stopped.
pub(super) fn drive(shared: &NetShared) {
    DRIVING.with(|d| d.set(shared));
    RECEIVING.with(|r| r.set(shared));
    let mut buf = vec![0u8; RECV_BUFFER_LEN];
    let mut outbox = Outbox::default();
    while !shared.stop.load(Ordering::Acquire) {
        let deadline = {
            let state = shared.lock();
            let deadline = state.participant.poll_timeout().map(Instant::as_nanos);
            // Published under the lock, so an input after it sees it and wakes us if needed.
            shared
                .driver_deadline
                .store(deadline.unwrap_or(u64::MAX), Ordering::Release);
            deadline
        };
        let event = shared.udp.recv(&mut buf, deadline);
        let now = now();
        let mut state = shared.lock();
        match event {
            Ok(RecvEvent::Datagram(received)) => {
                let source = Some(to_locator(received.source));
                let datagram = &buf[..received.len];
                if received.kind == SocketKind::Multicast {
                    state
                        .participant
                        .handle_multicast_datagram(now, source, datagram);
                } else {
                    state.participant.handle_datagram(now, source, datagram);
                }
            }
            Ok(RecvEvent::DeadlineReached | RecvEvent::Woken) => {}
            Err(e) => shared.logger.debug(format_args!("receiving: {e}")),
        }
        // Timers only when one is due (a timer armed meanwhile is in the next deadline).
        if deadline.is_some_and(|d| now.as_nanos() >= d) {
            state.participant.handle_timeout(now);
        }
        shared.process_events(&mut state);
        shared.wake_blocked_writers();
        shared.flush(&mut state, now);
        outbox.deliver(shared, state, Outbox::DRIVER_ROUNDS);
    }
    let now = now();
    let mut state = shared.lock();
    state.participant.shutdown(now);
    shared.flush(&mut state, now);
}

/// Reused buffers for what the participant produced for this process: samples for
/// subscriptions and requests for services.
#[derive(Default)]
pub(super) struct Outbox {
    deliveries: Vec<Delivery>,
    services: Vec<ServiceDelivery>,
    match_reports: MatchReports,
}

impl Outbox {
    /// Rounds the user-data thread hands over at most in one call before leaving the rest to
    /// the driver's next turn (it has its own socket to read).
    const USER_DATA_ROUNDS: usize = 16;
    /// The driver hands over one round per turn, then runs its timers (the ACKNACKs and
    /// HEARTBEATs a publisher waiting for room needs) before the next: a backlog that built
    /// up behind a slow callback must not hold them back.
    const DRIVER_ROUNDS: usize = 1;
    /// Samples a thread leaves waiting for the one handing over at most (see
    /// [`NetShared::process_events`]).
    pub(super) const MAX_BACKLOG: usize = 1024;

    /// Takes what the participant produced out of `state`, releases the network lock, then
    /// hands it over (a callback may run inline and publish, which takes the lock). A sleeping
    /// executor lets this thread run the callback itself (no thread hop).
    ///
    /// One thread at a time hands over: both receiving threads take samples from the
    /// participant, and two batches handed over at once would interleave. While another
    /// thread is at it, this one leaves its batch in `state` for it, and the thread handing
    /// over comes back for more, at most `rounds` times; what is left then waits for the
    /// driver's next turn, which comes at once.
    fn deliver<'a>(
        &mut self,
        shared: &'a NetShared,
        mut state: MutexGuard<'a, NetState>,
        rounds: usize,
    ) {
        if state.delivering {
            return;
        }
        state.delivering = true;
        for _ in 0..rounds {
            std::mem::swap(&mut self.deliveries, &mut state.deliveries);
            std::mem::swap(&mut self.services, &mut state.service_deliveries);
            std::mem::swap(&mut self.match_reports, &mut state.match_reports);
            if self.deliveries.is_empty()
                && self.services.is_empty()
                && self.match_reports.is_empty()
            {
                state.delivering = false;
                if std::mem::take(&mut state.held_back) {
                    drop(state);
                    shared.udp.waker().wake();
                }
                return;
            }
            drop(state);
            report_matches(self.match_reports.drain(..));
            crate::seam::with_inline_dispatch(|| {
                for (subscription, payload, info, lost_before) in self.deliveries.drain(..) {
                    subscription.report_lost(lost_before);
                    subscription.deliver(&payload, info);
                }
                for delivery in self.services.drain(..) {
                    match delivery {
                        ServiceDelivery::Request(server, payload, reply) => {
                            server.deliver_request(&payload, reply);
                        }
                        ServiceDelivery::Reply(client, key, payload) => {
                            let _ = client.deliver_reply(key, &payload);
                        }
                    }
                }
            });
            state = shared.lock();
        }
        // Anything still left: the driver takes it on its next turn, at once.
        let more = !(state.deliveries.is_empty()
            && state.service_deliveries.is_empty()
            && state.match_reports.is_empty())
            | std::mem::take(&mut state.held_back);
        state.delivering = false;
        drop(state);
        if more {
            shared.udp.waker().wake();
        }
    }
}

/// The user-data thread: blocks on the user unicast socket and handles each datagram as the
/// driver would (samples, HEARTBEATs, ACKNACKs; callbacks run inline when their executor
/// sleeps). Timers stay with the driver thread, which this thread wakes when its input armed
/// one earlier than the driver's deadline ([`NetShared::flush_and_notify`]).
pub(super) fn receive_user_data(shared: &NetShared) {
    RECEIVING.with(|r| r.set(shared));
    let mut buf = vec![0u8; RECV_BUFFER_LEN];
    let mut outbox = Outbox::default();
    while !shared.stop.load(Ordering::Acquire) {
        let received = match shared.udp.recv_user(&mut buf) {
            Ok(Some(received)) => received,
            Ok(None) => continue,
            Err(e) => {
                shared
                    .logger
                    .debug(format_args!("receiving user data: {e}"));
                // A persistent error must not spin a core.
                std::thread::sleep(std::time::Duration::from_millis(10));
                continue;
            }
        };
        let now = now();
        let mut state = shared.lock();
        let source = to_locator(received.source);
        state
            .participant
            .handle_datagram(now, Some(source), &buf[..received.len]);
        shared.process_events(&mut state);
        shared.wake_blocked_writers();
        shared.flush_and_notify(&mut state, now);
        outbox.deliver(shared, state, Outbox::USER_DATA_ROUNDS);
    }
}
