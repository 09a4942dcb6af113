//! What the host keeps for one guest: its handles, its callback slots, its mailbox, and why it
//! stopped.

use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError, Weak};
use std::thread::ThreadId;
use std::time::Instant;

use crate::abi::CallbackKind;
use crate::fault::Fault;
use crate::memory::GuestMemory;
use crate::recorded::Entry;
use crate::waiting::{Park, Resumed, SLEEP_SLICE};

/// A guest's handles: small integers of its own (1, 2, ... in the order given), each naming a
/// handle of the C ABI's table. A guest can reach only what it created, and the numbers it
/// sees depend only on what it did (the migration snapshot keeps them). A number is never
/// given twice, so a stale one cannot reach a newer object; the table keeps only the numbers
/// still held, so a guest that makes and releases objects for ever (a responder per service
/// request, a client per call) holds memory for what it holds, not for what it was given.
#[derive(Default)]
pub struct Handles {
    native: std::collections::BTreeMap<u64, u64>,
    /// How many numbers were given: the last one given.
    given: u64,
}

impl Handles {
    pub fn insert(&mut self, native: u64) -> u64 {
        self.given += 1;
        self.native.insert(self.given, native);
        self.given
    }

    /// How many handles were ever given (released ones included).
    pub fn len(&self) -> usize {
        usize::try_from(self.given).unwrap_or(usize::MAX)
    }

    pub fn is_empty(&self) -> bool {
        self.given == 0
    }

    /// Uses up the next number without an object (journal replay: a number given then to
    /// something not re-created, a service request's responder).
    pub fn skip(&mut self) {
        self.given += 1;
    }

    /// Uses up the numbers up to `count` (a replay reaching the handle count an entry or a
    /// snapshot names: up to 2^32 numbers, at once).
    pub fn skip_to(&mut self, count: u32) {
        self.given = self.given.max(u64::from(count));
    }

    /// Every (guest handle, native handle) the guest holds.
    pub fn held(&self) -> impl Iterator<Item = (i64, u64)> + '_ {
        self.native.iter().map(|(&g, &n)| (g as i64, n))
    }

    /// The guest handle of `native`, if the guest holds it.
    pub fn guest_of(&self, native: u64) -> Option<i64> {
        self.native
            .iter()
            .find(|(_, &n)| n == native)
            .map(|(&g, _)| g as i64)
    }

    /// The native handle behind a guest handle; 0 stays 0 ("none", "the default group").
    pub fn native(&self, guest: i64) -> Option<u64> {
        if guest == 0 {
            return Some(0);
        }
        self.native.get(&u64::try_from(guest).ok()?).copied()
    }

    /// Puts `native` at guest handle `guest` (a kept responder restored after a move), the
    /// numbers before it used up if they were not given yet.
    pub fn put(&mut self, guest: i64, native: u64) -> bool {
        let Some(guest) = u64::try_from(guest).ok().filter(|g| *g > 0) else {
            return false;
        };
        self.given = self.given.max(guest);
        self.native.insert(guest, native);
        true
    }

    pub fn remove(&mut self, guest: i64) -> Option<u64> {
        self.native.remove(&u64::try_from(guest).ok()?)
    }

    /// Every native handle still held, newest first (the order to release them in).
    pub fn drain_newest_first(&mut self) -> Vec<u64> {
        let held: Vec<u64> = self.native.values().rev().copied().collect();
        self.native.clear();
        self.given = 0;
        held
    }
}

/// What a trampoline needs to find its way back into the guest: which guest, which slot.
pub struct SlotTarget {
    pub shared: Arc<GuestShared>,
    pub slot: i32,
    pub kind: CallbackKind,
    /// For errors: "subscription callback of /chatter".
    pub description: String,
}

/// A callback whose guest was busy when it came (its `main` runs, or another callback holds
/// the instance): it waits here until the guest can take it, at its next wait.
pub enum Deferred {
    Message {
        slot: i32,
        bytes: Vec<u8>,
        info: roslite_c::convert::CMessageInfo,
        description: String,
    },
    Timer {
        slot: i32,
        description: String,
    },
    Request {
        slot: i32,
        bytes: Vec<u8>,
        /// The native responder; released unanswered if the guest ends first.
        responder: u64,
        description: String,
    },
    Response {
        slot: i32,
        status: i32,
        bytes: Option<Vec<u8>>,
    },
    /// A status event (message lost, matched, incompatible QoS) with its four arguments.
    Event {
        slot: i32,
        kind: CallbackKind,
        args: [i64; 4],
        description: String,
    },
}

/// The part of a guest other threads may touch.
pub struct GuestShared {
    pub name: String,
    pub thread: OnceLock<ThreadId>,
    pub mailbox: Mutex<VecDeque<Deferred>>,
    /// The guest shut its context down (or the host stops it): its spin loops end.
    pub stopping: AtomicBool,
    /// A wait of the guest already returned early because it was stopping: the guest had its
    /// chance to see that (`rclcpp::ok()`, a loop's own check) and finish; a further wait ends
    /// it ([`Self::ends_waiting`]).
    stop_seen: AtomicBool,
    /// The context the host's guests share, asked directly whether it still runs (every spin
    /// and sleep asks).
    running: roslite::Context,
    /// Executors the guest created, to wake when mail arrives or it stops.
    pub executors: Mutex<Vec<Arc<roslite::Executor>>>,
    /// The guest's instance, which a callback on any thread may take while the guest's `main`
    /// is parked (crate::park); the engine's run holds the only strong reference.
    resident: OnceLock<Weak<Mutex<dyn Resident>>>,
    /// A callback that ran outside the guest's own thread faulted: its parked wait ends.
    faulted: AtomicBool,
    /// Rung when the guest stops, for a parked sleep.
    bell: (Mutex<()>, Condvar),
    /// How often the guest parked, and how many callbacks ran on a thread other than the
    /// guest's own (on the thread that brought their work): [`crate::host::GuestStatistics`].
    pub parks: AtomicU64,
    pub callbacks_elsewhere: AtomicU64,
    /// A migration holds the guest between callbacks: nothing enters it, its `main` is not
    /// resumed ([`Self::wait_while_frozen`]).
    frozen: AtomicBool,
    /// The guest went on on another host: its `main` is not resumed here.
    migrated: AtomicBool,
    /// What the guest made, to make again where it is restored (crate::journal); readable
    /// while the guest runs, to prepare a host it will move to.
    pub journal: Mutex<Vec<Entry>>,
    /// Odd while a journaled import runs, even between them, one more at each edge: the
    /// journal and the host's lists of the guest's endpoints change together inside such an
    /// import (the lists first), so a reader that saw the same even value before and after
    /// read both as one ([`Self::journal_and_peers`]).
    pub journal_changes: AtomicU64,
    /// Set while the guest moves, from the reading of its journal a target is prepared with
    /// until the move ends or fails: the journal only grows meanwhile (nothing is forgotten),
    /// so the journal the snapshot carries continues the one the target replayed.
    pub journal_append_only: AtomicBool,
    /// Set while the journal replays here (crate::journal::replay), before the guest's memory
    /// arrives: its instance's `main` has not run, so no callback may enter it (see
    /// `imports::callbacks::into_guest`).
    pub replaying: AtomicBool,
    /// When the guest last finished a callback, and when it began its first callback after
    /// it was restored here: CLOCK_MONOTONIC ns, 0 for none (a move's downtime is the time
    /// between the first on its old host and the second on its new one).
    pub last_callback_ns: AtomicU64,
    pub first_callback_after_restore_ns: AtomicU64,
    /// How far the guest's monotonic clock is behind the host's, in ns (0 unless restored
    /// here: the time its moves took, which its clock skips).
    pub guest_clock_behind_ns: std::sync::atomic::AtomicI64,
    /// Restored and not yet called back: the next callback's start is noted.
    awaiting_first_callback: AtomicBool,
    /// The fully qualified names of the ROS nodes the guest made, for `roslite migrate` to
    /// find it by.
    pub ros_nodes: Mutex<Vec<String>>,
    /// The native handles of the publishers and subscriptions the guest made, in order: a
    /// move waits until their copies on the target matched as many peers
    /// ([`Self::matched_peers`]).
    pub endpoints: Mutex<Vec<u64>>,
    /// The native handle and callback slot of each subscription the guest made: a copy
    /// prepared for a move waits until each has heard from its publishers
    /// ([`Self::unheard_publishers`]).
    pub subscription_slots: Mutex<Vec<(u64, i32)>>,
    /// The native handles of the service servers the guest made, in order: a move also waits
    /// until their copies on the target are known to as many clients.
    pub services: Mutex<Vec<u64>>,
}

impl GuestShared {
    pub fn new(name: String, running: roslite::Context) -> Arc<Self> {
        Arc::new(Self {
            name,
            thread: OnceLock::new(),
            mailbox: Mutex::new(VecDeque::new()),
            stopping: AtomicBool::new(false),
            stop_seen: AtomicBool::new(false),
            running,
            executors: Mutex::new(Vec::new()),
            resident: OnceLock::new(),
            faulted: AtomicBool::new(false),
            bell: (Mutex::new(()), Condvar::new()),
            parks: AtomicU64::new(0),
            callbacks_elsewhere: AtomicU64::new(0),
            frozen: AtomicBool::new(false),
            migrated: AtomicBool::new(false),
            journal: Mutex::new(Vec::new()),
            journal_changes: AtomicU64::new(0),
            journal_append_only: AtomicBool::new(false),
            replaying: AtomicBool::new(false),
            last_callback_ns: AtomicU64::new(0),
            first_callback_after_restore_ns: AtomicU64::new(0),
            guest_clock_behind_ns: std::sync::atomic::AtomicI64::new(0),
            awaiting_first_callback: AtomicBool::new(false),
            ros_nodes: Mutex::new(Vec::new()),
            endpoints: Mutex::new(Vec::new()),
            subscription_slots: Mutex::new(Vec::new()),
            services: Mutex::new(Vec::new()),
        })
    }

    /// How many of the publishers that know each of the guest's reliable subscriptions
    /// (`acknowledged_publisher_count`) it holds no message of in its mailbox yet, summed over
    /// the subscriptions: 0 once a copy prepared for a move holds something of each, and so
    /// knows the first number it has of each (crate::inflight). Publishers are told apart by
    /// their gid; those of this process (gid zero) count as one.
    pub fn unheard_publishers(&self) -> usize {
        use roslite_c::handles::Object;
        let subscriptions = self.reliable_subscriptions();
        let mailbox = self.mailbox.lock().unwrap_or_else(PoisonError::into_inner);
        subscriptions
            .iter()
            .map(|&(native, slot)| {
                let known = roslite_c::handles::with(native, "subscription", |o| match o {
                    Object::Subscription(s) => Some(s.acknowledged_publisher_count()),
                    _ => None,
                })
                .unwrap_or(0);
                let heard: std::collections::BTreeSet<[u8; 16]> = mailbox
                    .iter()
                    .filter_map(|mail| match mail {
                        Deferred::Message { slot: s, info, .. } if *s == slot => {
                            Some(info.publisher_gid)
                        }
                        _ => None,
                    })
                    .collect();
                known.saturating_sub(heard.len())
            })
            .sum()
    }

    /// For each publisher and subscription the guest made, in order, how many peers it
    /// matched now (subscriptions of a publisher, publishers of a subscription), then for each
    /// service server it made, in order, how many clients it matched (0 once released).
    pub fn matched_peers(&self) -> Vec<u32> {
        use roslite_c::handles::Object;
        self.per_endpoint(|o| match o {
            Object::Publisher(p) => Some(p.subscription_count()),
            Object::Subscription(s) => Some(s.publisher_count()),
            Object::Service(s) => Some(s.client_count()),
            _ => None,
        })
    }

    /// The journal and [`Self::matched_peers`] as of one moment between the guest's journaled
    /// imports: a copy made from that journal lists the same endpoints in the same order,
    /// however the guest makes and releases them meanwhile. Waits at most about a second for
    /// such a moment (a guest making objects without pause), then gives the last reading.
    pub fn journal_and_peers(&self) -> (Vec<Entry>, Vec<u32>) {
        // Before the reading: a release forgotten after it would leave the snapshot's journal
        // shorter than the one the target is prepared with.
        self.journal_append_only.store(true, Ordering::SeqCst);
        let deadline = Instant::now() + std::time::Duration::from_secs(1);
        loop {
            let before = self.journal_changes.load(Ordering::SeqCst);
            let journal = self
                .journal
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            let peers = self.matched_peers();
            let settled =
                before.is_multiple_of(2) && self.journal_changes.load(Ordering::SeqCst) == before;
            if settled || Instant::now() >= deadline {
                return (journal, peers);
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }

    /// As [`Self::matched_peers`], how many of the peers each endpoint matched know it
    /// already: subscriptions that take a publisher's messages, publishers that send to a
    /// subscription, clients that send a server their requests and take its answers
    /// (`acknowledged_subscription_count`, `acknowledged_publisher_count`,
    /// `acknowledged_client_count`; 0 once released). A copy made to move the guest here
    /// misses nothing its peers send only once each of them counts here.
    pub fn acknowledged_peers(&self) -> Vec<u32> {
        use roslite_c::handles::Object;
        self.per_endpoint(|o| match o {
            Object::Publisher(p) => Some(p.acknowledged_subscription_count()),
            Object::Subscription(s) => Some(s.acknowledged_publisher_count()),
            Object::Service(s) => Some(s.acknowledged_client_count()),
            _ => None,
        })
    }

    /// How many publishers and subscriptions the guest made: the entries of
    /// [`Self::matched_peers`] before its services'.
    pub fn topic_endpoint_count(&self) -> usize {
        self.endpoints
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// `count` of each publisher and subscription the guest made, in order, then of each
    /// service server (0 once released).
    fn per_endpoint(
        &self,
        count: impl Fn(&roslite_c::handles::Object) -> Option<usize>,
    ) -> Vec<u32> {
        let endpoints = self
            .endpoints
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let services = self
            .services
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        endpoints
            .iter()
            .chain(&services)
            .map(|&native| {
                roslite_c::handles::with(native, "endpoint", &count).map_or(0, |n| n as u32)
            })
            .collect()
    }

    /// Takes a released object out of the lists the host keeps of the guest's executors,
    /// ROS nodes, endpoints and services, so that they hold what the guest holds, however
    /// many it made and released (a C++ guest's `rclcpp::spin_some(node)` makes an executor
    /// per call).
    pub fn forget(&self, native: u64) {
        if let Ok(executor) = roslite_c::handles::executor(native) {
            self.executors
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .retain(|e| !Arc::ptr_eq(e, &executor));
        }
        if let Ok(node) = roslite_c::handles::node(native) {
            let name = node.fully_qualified_name();
            let mut names = self
                .ros_nodes
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            // One of them: two nodes of one name count twice.
            if let Some(at) = names.iter().position(|n| *n == name) {
                names.remove(at);
            }
        }
        for list in [&self.endpoints, &self.services] {
            list.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .retain(|n| *n != native);
        }
        self.subscription_slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|(n, _)| *n != native);
    }

    /// (native handle, callback slot) of each reliable subscription the guest holds: the
    /// subscriptions a move brings every message to (crate::inflight). A best-effort one may
    /// miss a message for good, and nothing would come to wait for.
    pub fn reliable_subscriptions(&self) -> Vec<(u64, i32)> {
        use roslite_c::handles::Object;
        self.subscription_slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .copied()
            .filter(|&(native, _)| {
                roslite_c::handles::with(native, "subscription", |o| match o {
                    Object::Subscription(s) => {
                        Some(s.qos().reliability == roslite::Reliability::Reliable)
                    }
                    _ => None,
                })
                .unwrap_or(false)
            })
            .collect()
    }

    /// Notes that the guest was restored here: its next callback's start is noted.
    pub fn note_restored(&self) {
        self.awaiting_first_callback.store(true, Ordering::SeqCst);
    }

    /// Makes the guest's instance reachable by callbacks on other threads (once, by the engine).
    pub fn set_resident(&self, resident: Weak<Mutex<dyn Resident>>) {
        let _ = self.resident.set(resident);
    }

    /// Runs `f` on the guest's instance if it is free now (its `main` parked, no other callback
    /// inside); None if it is busy or gone, or if this thread has less stack left than
    /// [`GUEST_STACK`] (a thread of the program's own, or a same-host link's reader thread
    /// started before the host asked roslite for bigger ones in `Host::start`, which get
    /// 64 KiB): the engines need far more, and the work then waits for the guest's own thread.
    pub fn with_resident<R>(&self, f: impl FnOnce(&mut dyn GuestCalls) -> R) -> Option<R> {
        if !self.is_guest_thread() && stack_left().is_some_and(|left| left < GUEST_STACK) {
            return None;
        }
        let resident = self.resident.get()?.upgrade()?;
        let mut slot = resident.try_lock().ok()?;
        if self.is_frozen() {
            return None;
        }
        if !self.is_guest_thread() {
            self.callbacks_elsewhere.fetch_add(1, Ordering::Relaxed);
        }
        Some(enter_resident(&mut *slot, f))
    }

    /// The guest's instance, for a migration (which locks it itself).
    pub fn resident(&self) -> Option<Arc<Mutex<dyn Resident>>> {
        self.resident.get()?.upgrade()
    }

    /// Holds the guest between callbacks for a move: what arrives waits in its mailbox,
    /// every message of it (see [`Self::keep_every_message`]).
    pub fn freeze(&self) {
        self.keep_every_message(true);
        self.frozen.store(true, Ordering::SeqCst);
    }

    pub fn is_frozen(&self) -> bool {
        self.frozen.load(Ordering::SeqCst)
    }

    /// Lets a frozen guest go on (its migration failed).
    pub fn thaw(&self) {
        self.journal_append_only.store(false, Ordering::SeqCst);
        self.frozen.store(false, Ordering::SeqCst);
        self.keep_every_message(false);
        self.ring();
    }

    /// While `keep` is set, the guest's subscriptions keep every message until the host takes
    /// it into the mailbox, whatever their keep-last depth
    /// ([`roslite::serialized::SerializedSubscription::keep_every_message`]): set while the
    /// guest is frozen for a move or prepared to receive one, when a message one copy's
    /// depth-1 queue overwrote before its host's thread ran would reach neither copy (the
    /// move's exactly-once accounting counts on each copy holding every message it was sent).
    pub fn keep_every_message(&self, keep: bool) {
        use roslite_c::handles::Object;
        for &(native, _) in self
            .subscription_slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
        {
            // A subscription the guest deleted meanwhile has nothing to keep.
            let _ = roslite_c::handles::with(native, "subscription", |o| match o {
                Object::Subscription(s) => {
                    s.keep_every_message(keep);
                    Some(())
                }
                _ => None,
            });
        }
    }

    /// Ends a frozen guest here: it went on on another host.
    pub fn end_migrated(&self) {
        self.migrated.store(true, Ordering::SeqCst);
        self.ring();
    }

    pub fn is_migrated(&self) -> bool {
        self.migrated.load(Ordering::SeqCst)
    }

    /// Whether a parked wait should end now: the guest stops, or went on elsewhere.
    pub fn ends_parked_wait(&self) -> bool {
        self.is_stopping() || self.is_migrated()
    }

    /// Waits while the guest is frozen; true if it was migrated away meanwhile.
    pub fn wait_while_frozen(&self) -> bool {
        let (lock, bell) = &self.bell;
        let mut guard = lock.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if self.migrated.load(Ordering::SeqCst) {
                return true;
            }
            if !self.is_frozen() || self.is_stopping() {
                return false;
            }
            guard = bell
                .wait_timeout(guard, SLEEP_SLICE)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    fn ring(&self) {
        self.wake();
        let (lock, bell) = &self.bell;
        let _guard = lock.lock().unwrap_or_else(PoisonError::into_inner);
        bell.notify_all();
    }

    /// Notes that a callback faulted away from the guest's own thread, and wakes that thread.
    pub fn note_fault(&self) {
        self.faulted.store(true, Ordering::SeqCst);
        self.wake();
    }

    pub fn take_fault_flag(&self) -> bool {
        self.faulted.swap(false, Ordering::SeqCst)
    }

    pub fn has_mail(&self) -> bool {
        !self
            .mailbox
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    }

    /// Sleeps until `until` or until the guest stops.
    pub fn sleep_until(&self, until: Instant) {
        let (lock, bell) = &self.bell;
        let mut guard = lock.lock().unwrap_or_else(PoisonError::into_inner);
        while !self.ends_parked_wait() {
            let Some(left) = until.checked_duration_since(Instant::now()) else {
                return;
            };
            if left.is_zero() {
                return;
            }
            // A shutdown of the shared context rings no bell: look again now and then.
            let slice = left.min(SLEEP_SLICE);
            guard = bell
                .wait_timeout(guard, slice)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    pub fn is_guest_thread(&self) -> bool {
        self.thread.get() == Some(&std::thread::current().id())
    }

    pub fn post(&self, deferred: Deferred) {
        self.mailbox
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push_back(deferred);
        self.wake();
    }

    /// Drops the timer ticks waiting in the mailbox.
    pub fn drop_timer_mail(&self) {
        self.mailbox
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|mail| !matches!(mail, Deferred::Timer { .. }));
    }

    pub fn take_mail(&self) -> Option<Deferred> {
        self.mailbox
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
    }

    pub fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.ring();
    }

    /// Whether the guest should end its waiting: it shut its context down, the host stops it,
    /// or the shared context was shut down (SIGINT, SIGTERM).
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst) || !self.running.ok()
    }

    /// Whether a wait (spinning for a time, sleeping) that the guest starts or just ended
    /// should end the guest instead ([`Fault::Stopped`]): the guest is stopping and a wait of
    /// its already returned early for that. The first such wait returns normally, so that a
    /// node that checks whether it should go on (the line follower's loop, rclcpp's
    /// `while (rclcpp::ok())`) finishes its work; one that only ever waits (an mROS 2 loop of
    /// `osDelay`) is ended at its next wait. Only the guest's own thread asks.
    pub fn ends_waiting(&self) -> bool {
        self.is_stopping() && self.stop_seen.swap(true, Ordering::SeqCst)
    }

    /// The executors the guest made, at this moment.
    pub fn executors_now(&self) -> Vec<Arc<roslite::Executor>> {
        self.executors
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Wakes the guest's executors (a wait on them returns).
    pub fn wake(&self) {
        for executor in self
            .executors
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
        {
            executor.wake();
        }
    }
}

/// What an import can do with its guest, whichever engine runs it.
pub trait GuestCalls {
    /// The guest's memory and the host's state for it, borrowed together.
    fn parts(&mut self) -> (GuestMemory<'_>, &mut GuestState);
    /// `roslite_guest_alloc(size)`: 0 when the guest has no memory to give.
    fn alloc(&mut self, size: u32) -> Result<u32, Fault>;
    /// `roslite_guest_free(pointer)`.
    fn free(&mut self, pointer: u32) -> Result<(), Fault>;
    /// `roslite_guest_dispatch(slot, kind, a, b, c, d)`, with a fresh deadline; `during` names
    /// the callback in a fault.
    fn dispatch(
        &mut self,
        slot: i32,
        kind: CallbackKind,
        args: [i64; 4],
        during: &str,
    ) -> Result<i32, Fault>;

    /// Runs (or, rewinding, resumes) the guest's `_start` with a fresh deadline; a return
    /// from `main` or an unwind to park is `Ok`.
    fn start(&mut self) -> Result<(), Fault>;
    /// Calls one of the Asyncify exports (crate::park); a guest without them cannot park, so
    /// it is never asked.
    fn asyncify(&mut self, call: crate::waiting::Asyncify) -> Result<(), Fault>;
    /// Whether a wait that starts now can park the guest: it was prepared with Asyncify and
    /// the wait is `main`'s, not a callback's.
    fn can_park(&mut self) -> bool;
    /// Whether the guest was prepared with Asyncify at all.
    fn can_park_at_all(&mut self) -> bool;

    /// The exported global `name`: None if there is no such export, an error for a type a
    /// snapshot cannot carry (a reference).
    fn exported_global(
        &mut self,
        _name: &str,
    ) -> Option<Result<crate::snapshot::GlobalValue, String>> {
        None
    }
    /// Sets the exported global `name` if it is mutable (an immutable one keeps the value the
    /// module gave it, which a snapshot of the same module carries too).
    fn set_exported_global(
        &mut self,
        name: &str,
        _value: crate::snapshot::GlobalValue,
    ) -> Result<(), String> {
        Err(format!("this guest has no global {name}"))
    }

    /// Every global the module defines, by its index among them, through the exports
    /// crate::instrument added.
    fn globals(&mut self) -> Result<Vec<(u32, crate::snapshot::GlobalValue)>, String> {
        let mut globals = Vec::new();
        for index in 0u32.. {
            match self.exported_global(&crate::instrument::global_export(index)) {
                Some(value) => globals.push((index, value?)),
                None => return Ok(globals),
            }
        }
        Ok(globals)
    }
    /// Sets the mutable ones of `globals` (see [`Self::set_exported_global`]).
    fn set_globals(
        &mut self,
        globals: &[(u32, crate::snapshot::GlobalValue)],
    ) -> Result<(), String> {
        for &(index, value) in globals {
            self.set_exported_global(&crate::instrument::global_export(index), value)?;
        }
        Ok(())
    }
    /// The hash crate::instrument embedded: which module this is; None if uninstrumented.
    fn module_hash(&mut self) -> Option<crate::snapshot::ModuleHash> {
        let mut parts = [0i64; 4];
        for (i, part) in parts.iter_mut().enumerate() {
            match self.exported_global(&crate::instrument::hash_export(i))? {
                Ok(crate::snapshot::GlobalValue::I64(v)) => *part = v,
                _ => return None,
            }
        }
        Some(crate::instrument::hash_from_parts(parts))
    }
    /// Grows the guest's memory to `pages` WebAssembly pages (nothing if it has them).
    fn grow_memory_to(&mut self, _pages: u32) -> Result<(), String> {
        Err("this guest's memory cannot grow".into())
    }

    fn state(&mut self) -> &mut GuestState {
        self.parts().1
    }
}

/// The guest as the host holds it while its `main` is parked: any thread may lock it and call
/// in. Implemented by each engine for its store.
pub trait Resident: Send {
    /// Runs `body` on the guest, reachable by C ABI callbacks on this thread meanwhile.
    fn enter(&mut self, body: &mut dyn FnMut(&mut dyn GuestCalls));
    /// The module's memory before anything ran (a snapshot stores what differs from it).
    fn initial_memory(&mut self) -> Result<Vec<u8>, String>;
}

/// Runs `body` on `resident`'s guest and returns what it returned.
pub fn enter_resident<R>(
    resident: &mut dyn Resident,
    body: impl FnOnce(&mut dyn GuestCalls) -> R,
) -> R {
    let mut body = Some(body);
    let mut out = None;
    resident.enter(&mut |g| out = Some((body.take().expect("entered once"))(g)));
    out.expect("Resident::enter runs its body")
}

/// Everything the host keeps for one guest, owned by the engine's store.
pub struct GuestState {
    pub shared: Arc<GuestShared>,
    pub handles: Handles,
    /// The context every guest of this host shares (a native handle, not the guest's).
    pub context: u64,
    /// Slot targets handed to the C ABI as user data, one per (slot, kind, description):
    /// freed when the guest ends. A native object may still call its target after the guest
    /// released it (a callback already on its way), so none is freed earlier; handing out the
    /// same target again for the same callback keeps them as many as the guest's slots, not
    /// as its calls (a target per service request sent was kept for the guest's whole life).
    pub targets: std::collections::HashMap<(i32, CallbackKind, String), *mut SlotTarget>,
    /// What the guest's last failing call said, for its `last_error` import.
    pub last_error: String,
    /// A fault raised inside a callback, carried out of the host call that ran it.
    pub fault: Option<Fault>,
    /// Set once the guest faulted: nothing is dispatched into it any more.
    pub dead: bool,
    /// Guest allocations to free once the callback being prepared returns.
    pub allocations: Option<Vec<u32>>,
    pub wasi: crate::wasi::WasiState,
    /// How many dispatches into the guest are running (a wait inside one cannot park).
    pub dispatching: u32,
    /// The wait `main` is parked in (None while it runs): set when it starts to unwind, what
    /// the host waits for and what a snapshot records.
    pub parked: Option<Park>,
    /// How the parked wait ended, for the import that parked when it is rewound.
    pub resumed: Option<Resumed>,
    /// Where in guest memory a parked call stack is saved (allocated at the first park).
    pub saved_stack: Option<u32>,
    /// The last message each subscription was given from each publisher.
    pub delivered: Delivered,
    /// The last request each service was given from each client (by its request id, rmw's
    /// `rmw_request_id_t`: the client's gid and the request's sequence number, the same over
    /// RTPS and the same-host paths): after a move the
    /// node is not given again a request it took on its old host.
    pub requests_taken: Delivered,
    /// The service slot of each responder handed to the guest (by its guest handle), for a
    /// snapshot to carry those the guest keeps to answer later.
    pub responder_slots: std::collections::BTreeMap<i64, i32>,
}

/// For each (subscription slot, publisher), the sequence number of the last message the guest
/// was given: a snapshot carries it, so that the host it moves to gives the node each message
/// exactly once (it buffered what arrived while the node moved, some of which the node had).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Delivered {
    last: std::collections::BTreeMap<(i32, [u8; 16]), u64>,
}

impl Delivered {
    /// Whether a message (subscription `slot`, publisher `gid`, number `seq`) is new to the
    /// guest; if so it counts as given. A publisher without a global id (one in this process)
    /// is not tracked.
    pub fn admit(&mut self, slot: i32, gid: [u8; 16], seq: u64) -> bool {
        if gid == [0; 16] || seq == 0 {
            return true;
        }
        let last = self.last.entry((slot, gid)).or_insert(0);
        if seq <= *last {
            return false;
        }
        *last = seq;
        true
    }

    pub fn entries(&self) -> impl Iterator<Item = (i32, [u8; 16], u64)> + '_ {
        self.last
            .iter()
            .map(|(&(slot, gid), &seq)| (slot, gid, seq))
    }

    pub fn from_entries(entries: impl IntoIterator<Item = (i32, [u8; 16], u64)>) -> Self {
        Self {
            last: entries
                .into_iter()
                .map(|(slot, gid, seq)| ((slot, gid), seq))
                .collect(),
        }
    }
}

// SAFETY: the raw target pointers are owned by this state and dereferenced only by the C ABI's
// callbacks of this guest's entities, which are released before the targets are freed.
unsafe impl Send for GuestState {}

impl GuestState {
    pub fn new(shared: Arc<GuestShared>, context: u64, wasi: crate::wasi::WasiState) -> Self {
        Self {
            shared,
            handles: Handles::default(),
            context,
            targets: std::collections::HashMap::new(),
            last_error: String::new(),
            fault: None,
            dead: false,
            allocations: None,
            wasi,
            dispatching: 0,
            parked: None,
            resumed: None,
            saved_stack: None,
            delivered: Delivered::default(),
            requests_taken: Delivered::default(),
            responder_slots: std::collections::BTreeMap::new(),
        }
    }

    /// A dispatch into the guest begins.
    pub fn enter_callback(&mut self) {
        self.dispatching += 1;
        if self
            .shared
            .awaiting_first_callback
            .swap(false, Ordering::Relaxed)
        {
            self.shared
                .first_callback_after_restore_ns
                .store(monotonic_ns(), Ordering::Relaxed);
        }
    }

    /// A dispatch into the guest ended.
    pub fn leave_callback(&mut self) {
        self.dispatching -= 1;
        self.shared
            .last_callback_ns
            .store(monotonic_ns(), Ordering::Relaxed);
    }

    /// A user-data pointer for the C ABI that leads back to `slot` of this guest.
    pub fn target(&mut self, slot: i32, kind: CallbackKind, description: String) -> *mut c_void {
        let shared = &self.shared;
        let target = *self
            .targets
            .entry((slot, kind, description))
            .or_insert_with_key(|(slot, kind, description)| {
                Box::into_raw(Box::new(SlotTarget {
                    shared: shared.clone(),
                    slot: *slot,
                    kind: *kind,
                    description: description.clone(),
                }))
            });
        target.cast()
    }

    /// Releases every runtime object the guest still holds, newest first, then the slot
    /// targets their callbacks pointed at.
    pub fn release_all(&mut self) {
        // Requests that waited for the guest are answered by nobody: their clients time out.
        while let Some(mail) = self.shared.take_mail() {
            if let Deferred::Request { responder, .. } = mail {
                roslite_c::handles::remove(responder).ok();
            }
        }
        for native in self.handles.drain_newest_first() {
            if native != self.context {
                roslite_c::handles::remove(native).ok();
            }
        }
        self.shared
            .executors
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        for (_, target) in self.targets.drain() {
            // SAFETY: made by `Box::into_raw` in `target`; the entities that held it are gone.
            drop(unsafe { Box::from_raw(target) });
        }
    }
}

impl Drop for GuestState {
    fn drop(&mut self) {
        self.release_all();
    }
}

/// CLOCK_MONOTONIC in ns: comparable between processes of one machine (a move's downtime
/// between two hosts on it).
pub fn monotonic_ns() -> u64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}

/// The native stack a thread must have left to run a guest's callback: wasmtime lets Wasm use
/// up to 512 KiB of it (its `max_wasm_stack` default), and the host's frames around it, in a
/// debug build, much of the rest. Threads std spawns have 2 MiB.
pub const GUEST_STACK: usize = 1 << 20;

/// How many bytes of stack this thread has left below the caller (None where it cannot be
/// told).
#[cfg(target_os = "linux")]
fn stack_left() -> Option<usize> {
    use std::cell::Cell;
    thread_local! {
        /// The lowest address of this thread's stack, read once.
        static STACK_LOW: Cell<Option<usize>> = const { Cell::new(None) };
    }
    let low = STACK_LOW.with(|low| {
        if low.get().is_none() {
            low.set(stack_low());
        }
        low.get()
    })?;
    let here = 0u8;
    let sp = std::ptr::addr_of!(here) as usize;
    Some(sp.saturating_sub(low))
}

#[cfg(not(target_os = "linux"))]
fn stack_left() -> Option<usize> {
    None
}

/// The lowest address of this thread's stack (`pthread_getattr_np`).
#[cfg(target_os = "linux")]
fn stack_low() -> Option<usize> {
    let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::uninit();
    // SAFETY: `attr` is written by `pthread_getattr_np` before it is read, and destroyed once.
    unsafe {
        if libc::pthread_getattr_np(libc::pthread_self(), attr.as_mut_ptr()) != 0 {
            return None;
        }
        let mut addr = std::ptr::null_mut();
        let mut size = 0;
        let got = libc::pthread_attr_getstack(attr.as_ptr(), &mut addr, &mut size);
        libc::pthread_attr_destroy(attr.as_mut_ptr());
        (got == 0).then_some(addr as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A context without a network: what the host's own lists need.
    fn offline_context() -> roslite::Context {
        roslite::Context::new(roslite::ContextOptions {
            network: roslite::NetworkMode::Off,
            ..Default::default()
        })
        .unwrap()
    }

    #[test]
    fn handle_numbers_are_never_given_twice_and_the_table_keeps_only_those_held() {
        let mut handles = Handles::default();
        let kept = handles.insert(100);
        // A guest that makes and releases an object for ever (a responder per request).
        for native in 0..10_000u64 {
            let given = handles.insert(1000 + native);
            assert_eq!(handles.remove(given as i64), Some(1000 + native));
            assert_eq!(
                handles.native(given as i64),
                None,
                "released stays released"
            );
        }
        assert_eq!(handles.native.len(), 1, "only the held handle is kept");
        assert_eq!(handles.len(), 10_001, "every number given counts");
        assert_eq!(handles.insert(7), 10_002, "numbers go on, none reused");
        assert_eq!(handles.native(kept as i64), Some(100));
        assert_eq!(handles.guest_of(7), Some(10_002));
        handles.skip();
        assert!(handles.put(10_005, 9));
        assert_eq!(handles.len(), 10_005);
        assert_eq!(handles.insert(11), 10_006);
        assert_eq!(
            handles.held().collect::<Vec<_>>(),
            [(1, 100), (10_002, 7), (10_005, 9), (10_006, 11)]
        );
        assert_eq!(handles.drain_newest_first(), [11, 9, 7, 100]);
        assert!(handles.is_empty());
        // A replay jumps to the count an entry names (up to 2^32 - 1), never back.
        handles.skip_to(u32::MAX);
        handles.skip_to(3);
        assert_eq!(handles.insert(12), u64::from(u32::MAX) + 1);
    }

    #[test]
    fn a_released_executor_leaves_the_guests_list() {
        let context = offline_context();
        let shared = GuestShared::new("executors".into(), context.clone());
        let context = roslite_c::handles::insert(roslite_c::handles::Object::Context(context));
        let mut made = Vec::new();
        for _ in 0..3 {
            let mut native = 0;
            // SAFETY: a valid out-pointer.
            let status =
                unsafe { roslite_c::executor::roslite_executor_create(context, &mut native) };
            assert_eq!(status, roslite_c::ROSLITE_OK);
            shared
                .executors
                .lock()
                .unwrap()
                .push(roslite_c::handles::executor(native).unwrap());
            made.push(native);
        }
        shared.forget(made[1]);
        shared.forget(context); // not an executor: nothing goes
        let left = shared.executors_now();
        assert_eq!(left.len(), 2);
        for (kept, native) in left.iter().zip([made[0], made[2]]) {
            assert!(Arc::ptr_eq(
                kept,
                &roslite_c::handles::executor(native).unwrap()
            ));
        }
        for native in made {
            roslite_c::handles::remove(native).ok();
        }
        roslite_c::handles::remove(context).ok();
    }

    #[test]
    fn one_slot_target_serves_every_call_of_the_same_callback() {
        let context = offline_context();
        let shared = GuestShared::new("targets".into(), context);
        let wasi = crate::wasi::WasiState::new(crate::wasi::WasiConfig::default()).unwrap();
        let mut state = GuestState::new(shared, 0, wasi);
        // A response slot, reused by the guest for request after request.
        let first = state.target(3, CallbackKind::Response, "response callback".into());
        for _ in 0..1000 {
            let again = state.target(3, CallbackKind::Response, "response callback".into());
            assert_eq!(again, first);
        }
        let other_slot = state.target(4, CallbackKind::Response, "response callback".into());
        let other_kind = state.target(3, CallbackKind::Timer, "timer callback".into());
        assert_ne!(other_slot, first);
        assert_ne!(other_kind, first);
        assert_eq!(state.targets.len(), 3);
        // SAFETY: made by `target` above, alive until `state` is dropped.
        let target = unsafe { &*first.cast::<SlotTarget>() };
        assert_eq!((target.slot, target.kind), (3, CallbackKind::Response));
    }
}
