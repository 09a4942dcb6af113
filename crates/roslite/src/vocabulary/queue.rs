//! A subscription's queue of messages waiting for its callback: its QoS history, and for
//! keep-all the bound the paths from other processes respect ([`KEEP_ALL_MAX_SAMPLES`]). The
//! history itself ([`KeptItems`], per instance for a keyed topic) also keeps a
//! transient-local publisher's messages for late joiners in its process.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::vocabulary::qos::{History, KEEP_ALL_MAX_SAMPLES};

/// The instance of a message of a keyed topic: its key members serialized on their own
/// ([`roslite_cdr::key::KeyStruct::key_of`]).
pub(crate) type InstanceKey = std::sync::Arc<[u8]>;

/// The instance of `payload` (a serialized message with its encapsulation header) of a type
/// with key layout `key`; `None` for a keyless type or a payload the layout cannot read (the
/// message is then kept as a keyless topic's would be).
pub(crate) fn instance_of(
    key: Option<&'static roslite_cdr::key::KeyStruct>,
    payload: &[u8],
) -> Option<InstanceKey> {
    key?.key_of(payload).ok().map(InstanceKey::from)
}

/// Says once per process that a keyed topic's history in this process reached
/// [`kept_instances`](crate::vocabulary::limits::kept_instances), as the RTPS participant
/// says it of its writers and readers.
fn warn_kept_instances_reached() {
    use crate::vocabulary::limits;
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    let limit = roslite_rtps::participant::Limit::MaxKeptInstances;
    crate::vocabulary::log::Logger::new("roslite").warn(format_args!(
        "reached the limit of {} instances kept per keyed topic in this process: {}; set {}= \
         to raise it (this warning is given once)",
        limits::kept_instances(),
        limits::consequence_of(limit),
        limits::variable_of(limit),
    ));
}

/// Messages kept under a [`History`]: a subscription's queue, a transient-local publisher's
/// messages for late joiners. Keep-last keeps the newest `depth` of each instance of a keyed
/// topic (DDS 1.4 §2.2.3.18: "on a per-instance basis"), up to
/// [`kept_instances`](crate::vocabulary::limits::kept_instances) instances' worth, as the RTPS
/// writer's history does; of a keyless topic, the newest `depth`.
#[derive(Debug)]
pub(crate) struct KeptItems<T> {
    items: std::collections::VecDeque<(T, Option<InstanceKey>)>,
}

impl<T> Default for KeptItems<T> {
    fn default() -> Self {
        Self {
            items: std::collections::VecDeque::new(),
        }
    }
}

impl<T> KeptItems<T> {
    /// Appends `item` of `instance` (`None` for a keyless topic), first dropping what a
    /// keep-last `history` has no room for: the oldest of the same instance, and the oldest
    /// of all beyond the instance bound. Returns how many were dropped. A search of the kept
    /// items for the instance's oldest, so a keyed queue's push costs its length; the paths
    /// only push into a queue that holds messages already (an idle one hands them straight
    /// to the callback).
    pub(crate) fn push(&mut self, history: History, item: T, instance: Option<InstanceKey>) -> u64 {
        let mut dropped = 0;
        if let History::KeepLast(depth) = history {
            let depth = depth.max(1);
            let capacity = match &instance {
                None => depth,
                Some(key) => {
                    let same = |kept: &(T, Option<InstanceKey>)| kept.1.as_ref() == Some(key);
                    let mut count = self.items.iter().filter(|kept| same(kept)).count();
                    while count >= depth {
                        if let Some(oldest) = self.items.iter().position(same) {
                            self.items.remove(oldest);
                        }
                        count -= 1;
                        dropped += 1;
                    }
                    depth.saturating_mul(crate::vocabulary::limits::kept_instances())
                }
            };
            while self.items.len() >= capacity {
                self.items.pop_front();
                dropped += 1;
                if instance.is_some() {
                    warn_kept_instances_reached();
                }
            }
        }
        self.items.push_back((item, instance));
        dropped
    }

    pub(crate) fn pop_front(&mut self) -> Option<T> {
        self.items.pop_front().map(|(item, _)| item)
    }

    /// Drops the oldest beyond what keep-last `depth` keeps (per instance of a keyed topic);
    /// returns how many that dropped.
    pub(crate) fn trim(&mut self, depth: usize) -> u64 {
        let old = std::mem::take(&mut self.items);
        let mut kept = Self::default();
        let mut dropped = 0;
        for (item, instance) in old {
            dropped += kept.push(History::KeepLast(depth), item, instance);
        }
        *self = kept;
        dropped
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub(crate) fn clear(&mut self) {
        self.items.clear();
    }

    /// Oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.items.iter().map(|(item, _)| item)
    }

    /// Appends `item` of `instance` to a publisher's history for late joiners (transient
    /// local): keep-last keeps the newest `depth` (of each instance of a keyed topic),
    /// keep-all the newest [`KEEP_ALL_MAX_SAMPLES`], as the RTPS writer does once its readers
    /// acknowledged the oldest (in this process every subscription got them at once).
    pub(crate) fn keep_for_late_joiners(
        &mut self,
        history: History,
        item: T,
        instance: Option<InstanceKey>,
    ) {
        self.push(history, item, instance);
        if history == History::KeepAll && self.len() > KEEP_ALL_MAX_SAMPLES {
            self.pop_front();
        }
    }
}

/// Called once when a full keep-all queue has room again (after the queue's lock is released).
pub(crate) type RoomWaiter = Box<dyn FnOnce() + Send>;

pub(crate) struct MessageQueue<T> {
    items: KeptItems<T>,
    history: History,
    /// One per path waiting (the network, each Unix-socket link).
    room_waiters: Vec<RoomWaiter>,
    /// While set, a keep-last queue drops nothing below [`KEEP_ALL_MAX_SAMPLES`]
    /// ([`Self::set_keep_everything`]).
    keep_everything: bool,
}

impl<T> MessageQueue<T> {
    pub(crate) fn new(history: History) -> Self {
        Self {
            items: KeptItems::default(),
            history,
            room_waiters: Vec::new(),
            keep_everything: false,
        }
    }

    /// [`Self::push_instance`] of a keyless topic's message.
    #[cfg(test)]
    pub(crate) fn push(&mut self, item: T) -> u64 {
        self.push_instance(item, None)
    }

    /// Appends `item` of `instance` (of a keyed topic; `None`: keyless): a keep-last queue
    /// first drops the oldest it has no room for, of the same instance ([`KeptItems`]);
    /// returns how many were dropped. A keep-all queue takes it even beyond its bound: the
    /// bound is for the paths to respect ([`Self::wait_for_room`]), not a reason to lose a
    /// message.
    pub(crate) fn push_instance(&mut self, item: T, instance: Option<InstanceKey>) -> u64 {
        if let (History::KeepLast(_), true) = (self.history, self.keep_everything) {
            let mut dropped =
                self.items
                    .push(History::KeepLast(KEEP_ALL_MAX_SAMPLES), item, instance);
            while self.items.len() > KEEP_ALL_MAX_SAMPLES {
                self.items.pop_front();
                dropped += 1;
            }
            return dropped;
        }
        self.items.push(self.history, item, instance)
    }

    /// While `keep` is set, a keep-last queue keeps every message pushed (up to
    /// [`KEEP_ALL_MAX_SAMPLES`]) instead of its newest `depth`; reset, it drops the oldest
    /// beyond `depth` at once. Returns how many that dropped.
    pub(crate) fn set_keep_everything(&mut self, keep: bool) -> u64 {
        self.keep_everything = keep;
        let History::KeepLast(depth) = self.history else {
            return 0;
        };
        if keep {
            return 0;
        }
        self.items.trim(depth)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Empty, with no path waiting for room: a message may then bypass the queue (only a
    /// [`Self::pop_front`] hands the waiters their room).
    pub(crate) fn is_idle(&self) -> bool {
        self.items.is_empty() && self.room_waiters.is_empty()
    }

    /// How many paths wait for room.
    #[cfg(test)]
    pub(crate) fn waiting_paths(&self) -> usize {
        self.room_waiters.len()
    }

    /// Takes the oldest message, with the waiters to call if this made room (call them after
    /// releasing the queue's lock: they may take others).
    pub(crate) fn pop_front(&mut self) -> (Option<T>, Vec<RoomWaiter>) {
        let item = self.items.pop_front();
        // Nobody waits but on a full keep-all queue: the common take only looks at the list.
        if self.room_waiters.is_empty() || !self.room_for(0) {
            return (item, Vec::new());
        }
        (item, std::mem::take(&mut self.room_waiters))
    }

    /// Whether `pending` more messages (on their way, not yet pushed) fit: always for
    /// keep-last.
    fn room_for(&self, pending: usize) -> bool {
        match self.history {
            History::KeepLast(_) => true,
            History::KeepAll => self.items.len().saturating_add(pending) < KEEP_ALL_MAX_SAMPLES,
        }
    }

    /// With room for one more beyond `pending`, hands `waiter` back; otherwise keeps it (with
    /// any others), to be returned by the [`Self::pop_front`] that makes room.
    pub(crate) fn wait_for_room(
        &mut self,
        pending: usize,
        waiter: RoomWaiter,
    ) -> Result<(), RoomWaiter> {
        if self.room_for(pending) {
            return Err(waiter);
        }
        self.room_waiters.push(waiter);
        Ok(())
    }
}

/// A subscription's [`MessageQueue`] behind its lock, and whether it is idle, readable without
/// the lock: every message a receive thread hands straight to its callback asks that, and
/// the lock cost two atomic read-modify-writes per message.
pub(crate) struct LockedQueue<T> {
    queue: Mutex<MessageQueue<T>>,
    /// [`MessageQueue::is_idle`], stored by every guard as it lets go of the queue.
    idle: AtomicBool,
}

impl<T> LockedQueue<T> {
    pub(crate) fn new(history: History) -> Self {
        Self {
            queue: Mutex::new(MessageQueue::new(history)),
            idle: AtomicBool::new(true),
        }
    }

    pub(crate) fn lock(&self) -> QueueGuard<'_, T> {
        QueueGuard {
            queue: self.queue.lock().unwrap_or_else(PoisonError::into_inner),
            idle: &self.idle,
        }
    }

    /// [`MessageQueue::is_idle`] as the last holder of the lock left the queue. Another thread
    /// may change it right after, just as it could right after a look under the lock.
    pub(crate) fn is_idle(&self) -> bool {
        self.idle.load(Ordering::Acquire)
    }
}

/// The queue, locked; records whether it is idle when dropped (still under the lock).
pub(crate) struct QueueGuard<'a, T> {
    queue: MutexGuard<'a, MessageQueue<T>>,
    idle: &'a AtomicBool,
}

impl<T> Deref for QueueGuard<'_, T> {
    type Target = MessageQueue<T>;
    fn deref(&self) -> &MessageQueue<T> {
        &self.queue
    }
}

impl<T> DerefMut for QueueGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut MessageQueue<T> {
        &mut self.queue
    }
}

impl<T> Drop for QueueGuard<'_, T> {
    fn drop(&mut self) {
        // Runs before the field's own drop: the mutex is still held.
        self.idle.store(self.queue.is_idle(), Ordering::Release);
    }
}

/// What a path asks of a subscription's queue, behind the subscription's lock (both kinds of
/// subscription implement `SerializedSink` with these).
pub(crate) trait SharedQueue {
    /// [`MessageQueue::wait_for_room`] under the lock.
    fn wait_for_room(&self, pending: usize, waiter: RoomWaiter) -> Result<(), RoomWaiter>;
    /// Whether one more message fits now.
    fn has_room(&self) -> bool;
}

impl<T> SharedQueue for LockedQueue<T> {
    fn wait_for_room(&self, pending: usize, waiter: RoomWaiter) -> Result<(), RoomWaiter> {
        self.lock().wait_for_room(pending, waiter)
    }

    fn has_room(&self) -> bool {
        self.lock().room_for(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    fn counting() -> (Arc<AtomicUsize>, impl Fn() -> RoomWaiter) {
        let calls = Arc::new(AtomicUsize::new(0));
        let c = calls.clone();
        (calls, move || {
            let c = c.clone();
            Box::new(move || {
                c.fetch_add(1, Ordering::SeqCst);
            }) as RoomWaiter
        })
    }

    #[test]
    fn a_full_keep_all_queue_keeps_a_waiter_until_a_take_makes_room() {
        let mut q = MessageQueue::new(History::KeepAll);
        let (calls, waiter) = counting();
        assert!(q.wait_for_room(0, waiter()).is_err(), "room: handed back");
        for i in 0..KEEP_ALL_MAX_SAMPLES - 1 {
            q.push(i);
        }
        assert!(q.wait_for_room(0, waiter()).is_err(), "room for one more");
        assert!(
            q.wait_for_room(1, waiter()).is_ok(),
            "not with one on its way"
        );
        q.push(KEEP_ALL_MAX_SAMPLES - 1);
        q.push(KEEP_ALL_MAX_SAMPLES);
        assert_eq!(
            q.items.len(),
            KEEP_ALL_MAX_SAMPLES + 1,
            "nothing is dropped"
        );
        assert!(
            q.wait_for_room(0, waiter()).is_ok(),
            "a second path waits too"
        );
        let (first, w) = q.pop_front();
        assert_eq!(first, Some(0));
        assert!(w.is_empty(), "still full");
        let (_, w) = q.pop_front();
        assert_eq!(w.len(), 2, "room again: both paths");
        w.into_iter().for_each(|w| w());
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        let (_, w) = q.pop_front();
        assert!(w.is_empty(), "each called once");
    }

    /// A batch on its way that alone would fill the queue leaves a waiter behind an empty
    /// queue: the queue is not idle then, so the batch goes through it and a take frees the
    /// waiting path.
    #[test]
    fn an_empty_queue_with_a_waiting_path_is_not_idle() {
        let mut q = MessageQueue::new(History::KeepAll);
        assert!(q.is_idle());
        let (calls, waiter) = counting();
        assert!(q.wait_for_room(KEEP_ALL_MAX_SAMPLES, waiter()).is_ok());
        assert!(q.is_empty() && !q.is_idle());
        q.push(1);
        let (_, w) = q.pop_front();
        w.into_iter().for_each(|w| w());
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert!(q.is_idle());
    }

    /// The idle flag read without the lock follows every change made under it: a push, a
    /// path waiting for room, the take that hands it its room.
    #[test]
    fn a_locked_queue_reports_idle_as_its_last_holder_left_it() {
        let q = LockedQueue::new(History::KeepAll);
        assert!(q.is_idle());
        q.lock().push(1);
        assert!(!q.is_idle(), "a message is queued");
        assert_eq!(q.lock().pop_front().0, Some(1));
        assert!(q.is_idle(), "taken");
        let (calls, waiter) = counting();
        assert!(SharedQueue::wait_for_room(&q, KEEP_ALL_MAX_SAMPLES, waiter()).is_ok());
        assert!(!q.is_idle(), "empty, but a path waits for room");
        {
            let mut guard = q.lock();
            guard.push(2);
            assert!(!q.is_idle());
            let (taken, room) = guard.pop_front();
            assert_eq!(taken, Some(2));
            drop(guard);
            room.into_iter().for_each(|w| w());
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert!(q.is_idle(), "the waiter got its room");
    }

    #[test]
    fn keep_last_always_has_room() {
        let mut q = MessageQueue::new(History::KeepLast(2));
        let (_, waiter) = counting();
        for i in 0..10 {
            q.push(i);
        }
        assert_eq!(q.items.iter().copied().collect::<Vec<_>>(), [8, 9]);
        assert!(q.wait_for_room(100_000, waiter()).is_err());
    }

    /// A keep-last queue told to keep everything drops nothing (below the keep-all bound)
    /// until told to stop, and then keeps its newest `depth` at once.
    #[test]
    fn a_keep_last_queue_keeps_everything_while_asked() {
        let mut q = MessageQueue::new(History::KeepLast(1));
        assert_eq!(q.set_keep_everything(true), 0);
        for i in 0..5 {
            assert_eq!(q.push(i), 0);
        }
        assert_eq!(q.pop_front().0, Some(0));
        assert_eq!(q.items.iter().copied().collect::<Vec<_>>(), [1, 2, 3, 4]);
        assert_eq!(q.set_keep_everything(false), 3);
        assert_eq!(q.items.iter().copied().collect::<Vec<_>>(), [4]);
        assert_eq!(q.push(5), 1);
        assert_eq!(q.items.iter().copied().collect::<Vec<_>>(), [5]);
        q.set_keep_everything(true);
        for i in 0..KEEP_ALL_MAX_SAMPLES + 2 {
            q.push(i);
        }
        assert_eq!(q.items.len(), KEEP_ALL_MAX_SAMPLES);
        assert_eq!(q.items.iter().next(), Some(&2));
    }

    /// DDS 1.4 §2.2.3.18: a keyed topic's keep-last depth is per instance.
    #[test]
    fn a_keep_last_queue_of_a_keyed_topic_keeps_depth_of_each_instance() {
        let (a, b): (InstanceKey, InstanceKey) = (Arc::from([1u8]), Arc::from([2u8]));
        let mut q = MessageQueue::new(History::KeepLast(2));
        assert_eq!(q.push_instance(1, Some(a.clone())), 0);
        for i in 2..6 {
            q.push_instance(i, Some(b.clone()));
        }
        assert_eq!(q.push_instance(6, Some(a.clone())), 0);
        assert_eq!(q.push_instance(7, Some(a.clone())), 1, "1 goes, a's oldest");
        let kept = |q: &MessageQueue<i32>| q.items.iter().copied().collect::<Vec<_>>();
        assert_eq!(kept(&q), [4, 5, 6, 7]);
        // Kept everything while asked, then trimmed to the newest two of each instance.
        q.set_keep_everything(true);
        for i in 8..12 {
            q.push_instance(i, Some(b.clone()));
        }
        assert_eq!(kept(&q), [4, 5, 6, 7, 8, 9, 10, 11]);
        assert_eq!(q.set_keep_everything(false), 4);
        assert_eq!(kept(&q), [6, 7, 10, 11]);
        // A message of no instance (a keyless topic's, or unreadable) keeps `depth` in all.
        assert_eq!(q.push_instance(12, None), 3);
        assert_eq!(kept(&q), [11, 12]);
    }
}
