//! What the host keeps for one guest: its handles, its callback slots, its mailbox, and why it
//! stopped.

use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::ThreadId;

use crate::abi::CallbackKind;
use crate::fault::Fault;

/// A guest's handles: small integers of its own (index + 1), each naming a handle of the C
/// ABI's table. A guest can reach only what it created, and the numbers it sees depend only on
/// what it did (the migration snapshot keeps them).
#[derive(Default)]
pub struct Handles {
    native: Vec<Option<u64>>,
}

impl Handles {
    pub fn insert(&mut self, native: u64) -> u64 {
        self.native.push(Some(native));
        self.native.len() as u64
    }

    /// The native handle behind a guest handle; 0 stays 0 ("none", "the default group").
    pub fn native(&self, guest: i64) -> Option<u64> {
        if guest == 0 {
            return Some(0);
        }
        let index = usize::try_from(guest).ok()?.checked_sub(1)?;
        self.native.get(index).copied().flatten()
    }

    pub fn remove(&mut self, guest: i64) -> Option<u64> {
        let index = usize::try_from(guest).ok()?.checked_sub(1)?;
        self.native.get_mut(index)?.take()
    }

    /// Every native handle still held, newest first (the order to release them in).
    pub fn drain_newest_first(&mut self) -> Vec<u64> {
        let held: Vec<u64> = self.native.iter().rev().flatten().copied().collect();
        self.native.clear();
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

/// A callback that arrived on a thread other than the guest's (an asynchronous reply comes
/// on a network thread): it waits here until the guest's thread runs it.
pub struct Deferred {
    pub slot: i32,
    pub kind: CallbackKind,
    pub status: i32,
    pub bytes: Option<Vec<u8>>,
}

/// The part of a guest other threads may touch.
pub struct GuestShared {
    pub name: String,
    pub thread: Mutex<Option<ThreadId>>,
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
}

impl GuestShared {
    pub fn new(name: String, running: roslite::Context) -> Arc<Self> {
        Arc::new(Self {
            name,
            thread: Mutex::new(None),
            mailbox: Mutex::new(VecDeque::new()),
            stopping: AtomicBool::new(false),
            stop_seen: AtomicBool::new(false),
            running,
            executors: Mutex::new(Vec::new()),
        })
    }

    pub fn is_guest_thread(&self) -> bool {
        *self.thread.lock().unwrap_or_else(PoisonError::into_inner)
            == Some(std::thread::current().id())
    }

    pub fn post(&self, deferred: Deferred) {
        self.mailbox
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push_back(deferred);
        self.wake();
    }

    pub fn take_mail(&self) -> Option<Deferred> {
        self.mailbox
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
    }

    pub fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.wake();
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

    fn wake(&self) {
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

/// Everything the host keeps for one guest, owned by the engine's store.
pub struct GuestState {
    pub shared: Arc<GuestShared>,
    pub handles: Handles,
    /// The context every guest of this host shares (a native handle, not the guest's).
    pub context: u64,
    /// Slot targets handed to the C ABI as user data; freed when the guest ends.
    pub targets: Vec<*mut SlotTarget>,
    /// What the guest's last failing call said, for its `last_error` import.
    pub last_error: String,
    /// A fault raised inside a callback, carried out of the host call that ran it.
    pub fault: Option<Fault>,
    /// Set once the guest faulted: nothing is dispatched into it any more.
    pub dead: bool,
    /// Guest allocations to free once the callback being prepared returns.
    pub allocations: Option<Vec<u32>>,
    pub wasi: crate::wasi::WasiState,
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
            targets: Vec::new(),
            last_error: String::new(),
            fault: None,
            dead: false,
            allocations: None,
            wasi,
        }
    }

    /// A user-data pointer for the C ABI that leads back to `slot` of this guest.
    pub fn target(&mut self, slot: i32, kind: CallbackKind, description: String) -> *mut c_void {
        let target = Box::into_raw(Box::new(SlotTarget {
            shared: self.shared.clone(),
            slot,
            kind,
            description,
        }));
        self.targets.push(target);
        target.cast()
    }

    /// Releases every runtime object the guest still holds, newest first, then the slot
    /// targets their callbacks pointed at.
    pub fn release_all(&mut self) {
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
        for target in self.targets.drain(..) {
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
