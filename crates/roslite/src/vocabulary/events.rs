//! Endpoint status events users can observe (rclcpp's QoS event callbacks).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use roslite_executor::{CallbackGroup, Instant, Waitable};

use crate::vocabulary::qos::QosPolicyKind;

/// A communication status with change counts (DDS 1.4 §2.2.4.1): each `*_change` field counts
/// the change "since the last time the listener was called or the status was read", so a
/// callback is handed the changes since the one before it (as rclcpp's QoS event callbacks
/// are: the RMW takes the status for each), and reading the status after a callback ran shows
/// only what changed since.
pub(crate) trait Status: Copy {
    /// Zeroes the change counts, keeping the totals.
    fn clear_changes(&mut self);
}

/// `OFFERED_INCOMPATIBLE_QOS` on a publisher, `REQUESTED_INCOMPATIBLE_QOS` on a subscription.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IncompatibleQosStatus {
    /// Incompatible peers seen so far.
    pub total_count: u32,
    /// Increase since the status was last read or passed to the callback.
    pub total_count_change: u32,
    /// The policy that failed most recently.
    pub last_policy: Option<QosPolicyKind>,
}

/// Status plus an optional user callback, shared between an endpoint and the backends.
#[derive(Default)]
pub(crate) struct IncompatibleQos {
    incompatible: StatusEvent<IncompatibleQosStatus>,
    /// The endpoint's liveliness events (kept here: every transport already holds this).
    pub(crate) liveliness_changed: StatusEvent<LivelinessChangedStatus>,
    pub(crate) liveliness_lost: StatusEvent<LivelinessLostStatus>,
    /// Its matches, from every source: the context's own endpoints and every transport's.
    pub(crate) matched: StatusEvent<MatchedStatus>,
    /// A subscription's messages that never reached it (every transport reports its own).
    pub(crate) message_lost: StatusEvent<MessageLostStatus>,
    /// Of a subscription's matched publishers, those whose liveliness lease ran out (only
    /// the network tracks leases: the other paths carry infinite ones).
    not_alive: AtomicU32,
}

impl IncompatibleQos {
    pub(crate) fn record(&self, policy: QosPolicyKind) {
        self.incompatible.update(|status| {
            status.total_count += 1;
            status.total_count_change += 1;
            status.last_policy = Some(policy);
        });
    }

    /// Reads the status and resets the change count.
    pub(crate) fn take(&self) -> IncompatibleQosStatus {
        self.incompatible.take()
    }

    pub(crate) fn set_callback(&self, callback: StatusCallback<IncompatibleQosStatus>) {
        self.incompatible.set_callback(callback);
    }

    /// An endpoint of the other kind matched this one (`true`) or went away (`false`).
    pub(crate) fn record_match(&self, matched: bool) {
        self.matched.update(|s| {
            if matched {
                s.total_count = s.total_count.saturating_add(1);
                s.total_count_change = s.total_count_change.saturating_add(1);
                s.current_count = s.current_count.saturating_add(1);
                s.current_count_change = s.current_count_change.saturating_add(1);
            } else if s.current_count > 0 {
                s.current_count -= 1;
                s.current_count_change = s.current_count_change.saturating_sub(1);
            }
        });
        self.refresh_liveliness();
    }

    /// Sets how many of a subscription's matched publishers are not alive (the network's
    /// count over the publishers it tracks, after a lease ran out, an assertion, or an
    /// unmatch) and reports the liveliness change, if any.
    pub(crate) fn set_not_alive(&self, not_alive: u32) {
        self.note_not_alive(not_alive);
        self.refresh_liveliness();
    }

    /// [`Self::set_not_alive`] without reporting: for a match report about to follow, which
    /// reports both changes at once.
    pub(crate) fn note_not_alive(&self, not_alive: u32) {
        self.not_alive.store(not_alive, Ordering::Release);
    }

    /// `LIVELINESS_CHANGED` from the matches: every matched publisher is alive but those
    /// [`Self::set_not_alive`] counted (DDS 1.4 §2.2.4.1; a publisher with the ROS default
    /// infinite lease is always alive). Calls back only when a count changed. A publisher's
    /// status is computed alike and never shown.
    fn refresh_liveliness(&self) {
        let matched = self.matched.get().current_count;
        let not_alive = self.not_alive.load(Ordering::Acquire).min(matched);
        let alive = matched - not_alive;
        self.liveliness_changed.update_if(|s| {
            if (s.alive_count, s.not_alive_count) == (alive, not_alive) {
                return false;
            }
            let change = |new: u32, old: u32| (i64::from(new) - i64::from(old)) as i32;
            s.alive_count_change = s
                .alive_count_change
                .saturating_add(change(alive, s.alive_count));
            s.not_alive_count_change = s
                .not_alive_count_change
                .saturating_add(change(not_alive, s.not_alive_count));
            s.alive_count = alive;
            s.not_alive_count = not_alive;
            true
        });
    }

    /// The match status with its change counts reset.
    pub(crate) fn take_matched(&self) -> MatchedStatus {
        self.matched.take()
    }

    /// Endpoints matched now.
    pub(crate) fn current_matches(&self) -> usize {
        self.matched.get().current_count as usize
    }

    /// Sets the lost-message callback (`on_message_lost` of either kind of subscription).
    pub(crate) fn on_message_lost(&self, callback: StatusCallback<MessageLostStatus>) {
        self.message_lost.set_callback(callback);
    }

    /// The lost-message status with its change count reset.
    pub(crate) fn take_message_lost(&self) -> MessageLostStatus {
        self.message_lost.take()
    }

    /// `count` messages of a publisher were lost on the way to this subscription.
    pub(crate) fn record_lost(&self, count: u64) {
        if count > 0 {
            self.message_lost.update(|s| {
                s.total_count = s.total_count.saturating_add(count);
                s.total_count_change = s.total_count_change.saturating_add(count);
            });
        }
    }
}

/// `SAMPLE_LOST` on a subscription (rclcpp's `message_lost` event, `QOSMessageLostInfo`):
/// messages of a matched publisher in another process that will never reach it, counted from
/// the first message received from that publisher on (what it published before the match is
/// not lost). Each path reports its own: over RTPS the sequence numbers a best-effort reader
/// saw overtaken and those a reliable writer declared gone (its keep-last history dropped
/// them first); over shared memory and Unix sockets the samples the writer overwrote or
/// timed out for a slow keep-last or keep-all reader. Messages replaced in the subscription's
/// own keep-last queue are not lost: they arrived (see `SubscriptionStats::overwritten`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MessageLostStatus {
    /// Messages lost so far.
    pub total_count: u64,
    /// Increase since the status was last read or passed to the callback.
    pub total_count_change: u64,
}

/// Match changes collected under a lock (intra-process delivery's, the network's) and reported once it is
/// released, because a user's callback may create or drop endpoints: each endpoint's events,
/// matched (`true`) or unmatched.
pub(crate) type MatchReports = Vec<(Arc<IncompatibleQos>, bool)>;

/// Reports collected [`MatchReports`]; call without holding a lock.
pub(crate) fn report_matches(reports: impl IntoIterator<Item = (Arc<IncompatibleQos>, bool)>) {
    for (events, matched) in reports {
        events.record_match(matched);
    }
}

/// `PUBLICATION_MATCHED` on a publisher, `SUBSCRIPTION_MATCHED` on a subscription (rclcpp's
/// `MatchedInfo`): endpoints of the other kind it exchanges messages with, in this context
/// and in other processes, whatever path the messages take.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MatchedStatus {
    /// Matches so far, including those that ended.
    pub total_count: u32,
    /// Increase of `total_count` since the status was last read or passed to the callback.
    pub total_count_change: u32,
    /// Endpoints matched now.
    pub current_count: u32,
    /// Change of `current_count` since the status was last read or passed to the callback.
    pub current_count_change: i32,
}

/// `LIVELINESS_CHANGED` on a subscription: how many matched publishers are alive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LivelinessChangedStatus {
    /// Matched publishers currently asserting their liveliness within their lease.
    pub alive_count: u32,
    /// Matched publishers whose lease ran out.
    pub not_alive_count: u32,
    /// Changes since the status was last read or passed to the callback.
    pub alive_count_change: i32,
    pub not_alive_count_change: i32,
}

/// `LIVELINESS_LOST` on a publisher: times it failed to assert its liveliness (MANUAL_BY_TOPIC:
/// by publishing) within its lease.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LivelinessLostStatus {
    pub total_count: u32,
    /// Increase since the status was last read or passed to the callback.
    pub total_count_change: u32,
}

type StatusCallback<S> = Box<dyn FnMut(S) + Send>;

/// A status with an optional user callback.
pub(crate) struct StatusEvent<S> {
    status: Mutex<S>,
    callback: Mutex<Option<StatusCallback<S>>>,
    /// Whether `callback` holds one: read under the status lock, which must not wait for the
    /// callback's lock (a callback may read the status).
    has_callback: AtomicBool,
}

impl<S: Default> Default for StatusEvent<S> {
    fn default() -> Self {
        Self {
            status: Mutex::default(),
            callback: Mutex::new(None),
            has_callback: AtomicBool::new(false),
        }
    }
}

impl<S: Status> StatusEvent<S> {
    /// Applies `change` and hands the callback, if there is one, the status with the changes
    /// since it was last read or handed over; handing it over resets them (see [`Status`]).
    pub(crate) fn update(&self, change: impl FnOnce(&mut S)) {
        self.update_if(|status| {
            change(status);
            true
        });
    }

    /// [`Self::update`] when `change` returns true; otherwise nothing changed and nobody is
    /// called.
    pub(crate) fn update_if(&self, change: impl FnOnce(&mut S) -> bool) {
        let snapshot = {
            let mut status = self.status.lock().unwrap_or_else(PoisonError::into_inner);
            if !change(&mut status) {
                return;
            }
            let snapshot = *status;
            if self.has_callback.load(Ordering::Acquire) {
                status.clear_changes();
            }
            snapshot
        };
        if let Some(callback) = &mut *self.callback.lock().unwrap_or_else(PoisonError::into_inner) {
            callback(snapshot);
        }
    }

    pub(crate) fn get(&self) -> S {
        *self.status.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Reads the status and resets its change counts.
    pub(crate) fn take(&self) -> S {
        let mut status = self.status.lock().unwrap_or_else(PoisonError::into_inner);
        let snapshot = *status;
        status.clear_changes();
        snapshot
    }

    pub(crate) fn set_callback(&self, callback: StatusCallback<S>) {
        *self.callback.lock().unwrap_or_else(PoisonError::into_inner) = Some(callback);
        self.has_callback.store(true, Ordering::Release);
    }
}

impl Status for IncompatibleQosStatus {
    fn clear_changes(&mut self) {
        self.total_count_change = 0;
    }
}

impl Status for MatchedStatus {
    fn clear_changes(&mut self) {
        self.total_count_change = 0;
        self.current_count_change = 0;
    }
}

impl Status for LivelinessChangedStatus {
    fn clear_changes(&mut self) {
        self.alive_count_change = 0;
        self.not_alive_count_change = 0;
    }
}

impl Status for LivelinessLostStatus {
    fn clear_changes(&mut self) {
        self.total_count_change = 0;
    }
}

impl Status for MessageLostStatus {
    fn clear_changes(&mut self) {
        self.total_count_change = 0;
    }
}

impl Status for DeadlineMissedStatus {
    fn clear_changes(&mut self) {
        self.total_count_change = 0;
    }
}

/// `REQUESTED_DEADLINE_MISSED` on a subscription, `OFFERED_DEADLINE_MISSED` on a publisher
/// (rclcpp's `RequestedDeadlineMissedInfo` / `OfferedDeadlineMissedInfo`; ROS topics have one
/// instance, so there is no instance handle).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeadlineMissedStatus {
    /// Deadline periods that passed without a message since the first one.
    pub total_count: u32,
    /// Increase since the status was last read or passed to the callback.
    pub total_count_change: u32,
}

/// Watches one endpoint's QoS deadline (DDS 1.4 §2.2.3.7: a reader expects, a writer
/// commits to, a new sample at least once per period). The first message starts the watch;
/// every message starts a new period; each period that ends without one counts one miss. It
/// is an entity of the endpoint's callback group, so the executor wakes for the end of the
/// period (its [`Waitable::next_deadline`]) and the user's callback runs there, as rclcpp
/// runs QoS event callbacks: only while the node is spun.
pub(crate) struct DeadlineWatch {
    period: Duration,
    /// When the current period ends, in `CLOCK_MONOTONIC` nanoseconds; 0 before the first
    /// message.
    due_ns: AtomicU64,
    pub(crate) status: StatusEvent<DeadlineMissedStatus>,
    group: Arc<CallbackGroup>,
}

impl DeadlineWatch {
    /// A watch over `period` in `group`, or `None` without a deadline. The caller keeps the
    /// watch; the group holds it weakly, so dropping the endpoint ends it.
    pub(crate) fn start(period: Option<Duration>, group: &Arc<CallbackGroup>) -> Option<Arc<Self>> {
        let watch = Arc::new(Self {
            period: period.filter(|p| !p.is_zero())?,
            due_ns: AtomicU64::new(0),
            status: StatusEvent::default(),
            group: group.clone(),
        });
        let entity: Arc<dyn Waitable> = watch.clone();
        group.add(Arc::downgrade(&entity));
        Some(watch)
    }

    /// A message went out or came in at `now`: a new period starts.
    pub(crate) fn restart(&self, now: Instant) {
        let due = (now + self.period).as_nanos();
        // The latest start wins (messages may arrive on several threads). Before the first
        // message the executor sleeps without this deadline: it must look again.
        if self.due_ns.fetch_max(due, Ordering::AcqRel) == 0 {
            self.group.notify();
        }
    }

    /// Counts the periods that ended by `now` without a message and moves on to the period
    /// `now` falls in; returns how many were missed.
    fn check(&self, now: Instant) -> u32 {
        let period = u64::try_from(self.period.as_nanos())
            .unwrap_or(u64::MAX)
            .max(1);
        let mut due = self.due_ns.load(Ordering::Acquire);
        loop {
            if due == 0 || now.as_nanos() < due {
                return 0;
            }
            let missed = (now.as_nanos() - due) / period + 1;
            let next = due.saturating_add(missed.saturating_mul(period));
            // A message that restarted the period meanwhile wins: nothing was missed then.
            match self
                .due_ns
                .compare_exchange(due, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return u32::try_from(missed).unwrap_or(u32::MAX),
                Err(now_due) => due = now_due,
            }
        }
    }

    /// The status of an endpoint's watch, if it has one (zero without a deadline), with its
    /// change count reset.
    pub(crate) fn take_status(watch: Option<&Self>) -> DeadlineMissedStatus {
        watch.map_or_else(DeadlineMissedStatus::default, |w| w.status.take())
    }

    /// Sets the user's callback of an endpoint's watch; without a deadline there is none to
    /// call.
    pub(crate) fn set_callback(
        watch: Option<&Self>,
        callback: impl FnMut(DeadlineMissedStatus) + Send + 'static,
    ) {
        if let Some(watch) = watch {
            watch.status.set_callback(Box::new(callback));
        }
    }
}

impl Waitable for DeadlineWatch {
    fn next_deadline(&self) -> Option<Instant> {
        match self.due_ns.load(Ordering::Acquire) {
            0 => None,
            due => Some(Instant::from_nanos(due)),
        }
    }

    fn is_ready(&self, now: Instant) -> bool {
        self.next_deadline().is_some_and(|due| now >= due)
    }

    fn execute(&self) -> bool {
        let missed = self.check(Instant::monotonic_now());
        if missed == 0 {
            return false;
        }
        self.status.update(|s| {
            s.total_count = s.total_count.saturating_add(missed);
            s.total_count_change = s.total_count_change.saturating_add(missed);
        });
        true
    }
}

#[cfg(test)]
mod deadline_tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn at(ms: u64) -> Instant {
        Instant::from_nanos(1_000_000_000 + ms * 1_000_000)
    }

    #[test]
    fn nothing_is_missed_before_the_first_message() {
        let group = CallbackGroup::new();
        let watch = DeadlineWatch::start(Some(100 * MS), &group).unwrap();
        assert_eq!(watch.next_deadline(), None);
        assert!(!watch.is_ready(at(10_000)));
        assert_eq!(watch.check(at(10_000)), 0);
    }

    #[test]
    fn each_period_without_a_message_counts_once() {
        let group = CallbackGroup::new();
        let watch = DeadlineWatch::start(Some(100 * MS), &group).unwrap();
        watch.restart(at(0));
        assert_eq!(watch.next_deadline(), Some(at(100)));
        assert!(!watch.is_ready(at(99)));
        assert_eq!(watch.check(at(99)), 0);
        // Looked at late: the two periods that ended (at 100 and 200 ms) count, the watch
        // moves to the period ending at 300 ms.
        assert!(watch.is_ready(at(250)));
        assert_eq!(watch.check(at(250)), 2);
        assert_eq!(watch.next_deadline(), Some(at(300)));
        assert_eq!(watch.check(at(250)), 0);
        assert_eq!(watch.check(at(300)), 1);
        // A message starts a new period from its own time.
        watch.restart(at(320));
        assert_eq!(watch.next_deadline(), Some(at(420)));
        assert_eq!(watch.check(at(419)), 0);
    }

    #[test]
    fn an_older_message_does_not_move_the_deadline_back() {
        let group = CallbackGroup::new();
        let watch = DeadlineWatch::start(Some(100 * MS), &group).unwrap();
        watch.restart(at(50));
        watch.restart(at(20));
        assert_eq!(watch.next_deadline(), Some(at(150)));
    }

    #[test]
    fn no_deadline_means_no_watch_and_the_group_forgets_a_dropped_one() {
        let group = CallbackGroup::new();
        assert!(DeadlineWatch::start(None, &group).is_none());
        assert!(DeadlineWatch::start(Some(Duration::ZERO), &group).is_none());
        let watch = DeadlineWatch::start(Some(MS), &group).unwrap();
        let weak = Arc::downgrade(&watch);
        drop(watch);
        assert!(
            weak.upgrade().is_none(),
            "the group must hold the watch weakly"
        );
    }

    #[test]
    fn a_miss_updates_the_status_and_calls_back() {
        let group = CallbackGroup::new();
        let watch = DeadlineWatch::start(Some(MS), &group).unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        watch
            .status
            .set_callback(Box::new(move |s| sink.lock().unwrap().push(s)));
        assert!(
            !watch.execute(),
            "nothing to report before the first message"
        );
        watch.restart(Instant::monotonic_now());
        std::thread::sleep(3 * MS);
        assert!(watch.execute());
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 1);
        assert!(seen[0].total_count >= 1 && seen[0].total_count == seen[0].total_count_change);
        // The callback took the change.
        let status = DeadlineWatch::take_status(Some(&watch));
        assert_eq!(
            status,
            DeadlineMissedStatus {
                total_count_change: 0,
                ..seen[0]
            }
        );
    }
}

#[cfg(test)]
mod status_tests {
    use super::*;

    fn lost(total_count: u64, total_count_change: u64) -> MessageLostStatus {
        MessageLostStatus {
            total_count,
            total_count_change,
        }
    }

    fn record(event: &StatusEvent<MessageLostStatus>, count: u64) {
        event.update(|s| {
            s.total_count += count;
            s.total_count_change += count;
        });
    }

    #[test]
    fn without_a_callback_changes_add_up_until_the_status_is_read() {
        let event = StatusEvent::<MessageLostStatus>::default();
        record(&event, 2);
        record(&event, 3);
        assert_eq!(event.get(), lost(5, 5), "get does not reset");
        assert_eq!(event.take(), lost(5, 5));
        assert_eq!(event.take(), lost(5, 0));
        record(&event, 1);
        assert_eq!(event.take(), lost(6, 1));
    }

    #[test]
    fn each_callback_is_handed_the_changes_since_the_last_callback_or_read() {
        let event = StatusEvent::<MessageLostStatus>::default();
        record(&event, 4);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        event.set_callback(Box::new(move |s| sink.lock().unwrap().push(s)));
        // Unread changes from before the callback was set are handed to its first call.
        record(&event, 2);
        record(&event, 3);
        assert_eq!(event.take(), lost(9, 0), "the callbacks took every change");
        record(&event, 1);
        assert_eq!(*seen.lock().unwrap(), [lost(6, 6), lost(9, 3), lost(10, 1)]);
    }

    #[test]
    fn a_callback_may_read_the_status() {
        let event = Arc::new(StatusEvent::<MessageLostStatus>::default());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (sink, reader) = (seen.clone(), Arc::downgrade(&event));
        event.set_callback(Box::new(move |s| {
            let now = reader.upgrade().map(|e| e.take());
            sink.lock().unwrap().push((s, now));
        }));
        record(&event, 2);
        assert_eq!(*seen.lock().unwrap(), [(lost(2, 2), Some(lost(2, 0)))]);
    }

    fn liveliness(
        alive_count: u32,
        not_alive_count: u32,
        alive_count_change: i32,
        not_alive_count_change: i32,
    ) -> LivelinessChangedStatus {
        LivelinessChangedStatus {
            alive_count,
            not_alive_count,
            alive_count_change,
            not_alive_count_change,
        }
    }

    #[test]
    fn liveliness_follows_matches_less_the_publishers_whose_lease_ran_out() {
        let events = IncompatibleQos::default();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        events
            .liveliness_changed
            .set_callback(Box::new(move |s| sink.lock().unwrap().push(s)));
        events.record_match(true);
        events.record_match(true);
        // One lease runs out, then the publisher asserts itself again.
        events.set_not_alive(1);
        events.set_not_alive(1);
        events.set_not_alive(0);
        events.set_not_alive(1);
        // The one not alive goes away: counted out with its match, in one report.
        events.note_not_alive(0);
        events.record_match(false);
        assert_eq!(
            *seen.lock().unwrap(),
            [
                liveliness(1, 0, 1, 0),
                liveliness(2, 0, 1, 0),
                liveliness(1, 1, -1, 1),
                liveliness(2, 0, 1, -1),
                liveliness(1, 1, -1, 1),
                liveliness(1, 0, 0, -1),
            ],
            "a report per change, none when nothing changed"
        );
        assert_eq!(events.liveliness_changed.take(), liveliness(1, 0, 0, 0));
    }

    #[test]
    fn every_status_clears_only_its_changes() {
        let mut matched = MatchedStatus {
            total_count: 3,
            total_count_change: 1,
            current_count: 2,
            current_count_change: -1,
        };
        matched.clear_changes();
        assert_eq!(
            matched,
            MatchedStatus {
                total_count: 3,
                current_count: 2,
                ..MatchedStatus::default()
            }
        );
        let mut alive = LivelinessChangedStatus {
            alive_count: 1,
            not_alive_count: 2,
            alive_count_change: -1,
            not_alive_count_change: 1,
        };
        alive.clear_changes();
        assert_eq!(
            alive,
            LivelinessChangedStatus {
                alive_count: 1,
                not_alive_count: 2,
                ..LivelinessChangedStatus::default()
            }
        );
        let mut incompatible = IncompatibleQosStatus {
            total_count: 2,
            total_count_change: 2,
            last_policy: Some(QosPolicyKind::Durability),
        };
        incompatible.clear_changes();
        assert_eq!(
            incompatible,
            IncompatibleQosStatus {
                total_count: 2,
                total_count_change: 0,
                last_policy: Some(QosPolicyKind::Durability),
            }
        );
        let mut unasserted = LivelinessLostStatus {
            total_count: 4,
            total_count_change: 4,
        };
        unasserted.clear_changes();
        assert_eq!(
            (unasserted.total_count, unasserted.total_count_change),
            (4, 0)
        );
        let mut missed = DeadlineMissedStatus {
            total_count: 5,
            total_count_change: 2,
        };
        missed.clear_changes();
        assert_eq!((missed.total_count, missed.total_count_change), (5, 0));
    }
}
