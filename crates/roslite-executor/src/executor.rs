//! The single-threaded executor: runs the callbacks of the entities in its callback groups.
//!
//! Ownership: entities (subscriptions, timers, later services and clients) are owned by the
//! user's handles; callback groups hold only `Weak` references, so dropping a handle removes the
//! entity. An entity that gets work calls [`CallbackGroup::notify`], which unparks the executor
//! the group is attached to.
//!
//! Order of work, checked again after every callback:
//! 1. the due timer with the earliest deadline (so message traffic never delays a timer by more
//!    than the one callback already running);
//! 2. otherwise one unit of work from the next ready non-timer entity, round robin, so one busy
//!    subscription cannot starve the others;
//! 3. otherwise sleep until the earliest timer deadline or a notification.

use std::cell::Cell;
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::task::{Context as TaskContext, Poll, Wake, Waker};
use std::time::Duration;

use crate::clock::{Clock, Instant, SteadyClock};
use crate::parker::Parker;

/// Something with callbacks to run.
pub trait Waitable: Send + Sync {
    /// The next instant, on the executor's clock, at which this entity becomes ready by time
    /// alone; the executor sleeps no longer than that. `None` if only a notification can make
    /// it ready (including timers on simulated time, which `/clock` messages advance).
    fn next_deadline(&self) -> Option<Instant> {
        None
    }

    /// For due timers: the deadline being served, used to run the most overdue timer first.
    fn due_key(&self) -> Option<Instant> {
        self.next_deadline()
    }

    /// Whether [`Self::execute`] would run a callback now.
    fn is_ready(&self, now: Instant) -> bool;

    /// Runs at most one callback; returns whether one ran.
    fn execute(&self) -> bool;

    /// Timers are served before other work.
    fn is_timer(&self) -> bool {
        false
    }
}

/// How the callbacks of one group may run relative to each other (rclcpp's callback group
/// types). Only matters for a multi-threaded executor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CallbackGroupKind {
    /// At most one callback of the group runs at a time.
    #[default]
    MutuallyExclusive,
    /// Callbacks of different entities in the group may run in parallel.
    Reentrant,
}

/// A set of entities scheduled together; every node has a default one.
#[derive(Default)]
pub struct CallbackGroup {
    kind: CallbackGroupKind,
    /// Held while a callback of a mutually exclusive group runs.
    busy: AtomicBool,
    entities: Mutex<Vec<Weak<dyn Waitable>>>,
    executor: Mutex<Option<Arc<Parker>>>,
}

impl CallbackGroup {
    /// A mutually exclusive group.
    pub fn new() -> Arc<Self> {
        Self::with_kind(CallbackGroupKind::MutuallyExclusive)
    }

    pub fn with_kind(kind: CallbackGroupKind) -> Arc<Self> {
        Arc::new(Self {
            kind,
            ..Self::default()
        })
    }

    pub fn kind(&self) -> CallbackGroupKind {
        self.kind
    }

    /// Claims the right to run one callback of this group; `None` if a mutually exclusive
    /// group is already running one.
    fn try_claim(&self) -> Option<GroupClaim<'_>> {
        match self.kind {
            CallbackGroupKind::Reentrant => Some(GroupClaim(None)),
            CallbackGroupKind::MutuallyExclusive => self
                .busy
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .ok()
                .map(|_| GroupClaim(Some(&self.busy))),
        }
    }

    /// Adds an entity; the group keeps only a weak reference.
    pub fn add(&self, entity: Weak<dyn Waitable>) {
        self.lock_entities().push(entity);
        self.notify();
    }

    /// Tells the executor this group is attached to that there may be work.
    pub fn notify(&self) {
        if let Some(parker) = &*self.executor.lock().unwrap_or_else(PoisonError::into_inner) {
            parker.unpark();
        }
    }

    /// Runs `entity`'s next callback on the calling thread, if the executor this group is
    /// attached to is single-threaded, asleep and lends its turn ([`Parker::try_lend`]), and
    /// the group can be claimed. Returns whether it ran; if not, the caller notifies as usual.
    ///
    /// For the thread that brings new work from outside any executor (the RTPS receive thread):
    /// the callback runs at once instead of after a wake-up of the executor's thread, as a
    /// DDS listener would, while the executor's guarantees hold (its callbacks never overlap,
    /// a mutually exclusive group runs one at a time). A panic in the callback is re-raised on
    /// the executor's thread.
    pub fn try_run_inline(&self, entity: &dyn Waitable) -> bool {
        self.try_run_inline_with(&mut || entity.execute())
    }

    /// [`Self::try_run_inline`] for a callback the caller runs itself (`run`, which says
    /// whether a callback ran): a subscription hands a message straight to its callback
    /// instead of through its queue. False, without calling `run`, when the turn cannot be
    /// had.
    pub fn try_run_inline_with(&self, run: &mut dyn FnMut() -> bool) -> bool {
        let Some(parker) = self
            .executor
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
        else {
            return false;
        };
        if !parker.try_lend() {
            return false;
        }
        let Some(claim) = self.try_claim() else {
            parker.end_lend(false, None);
            return false;
        };
        let turn = TurnMark::enter(&parker, true, self);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run));
        drop(turn);
        drop(claim);
        match outcome {
            Ok(ran) => {
                parker.end_lend(ran, None);
                ran
            }
            Err(panic) => {
                parker.end_lend(true, Some(panic));
                true
            }
        }
    }

    /// Whether a callback of this group could run while the calling thread blocks: not when
    /// the calling thread is itself running a callback that holds this mutually exclusive
    /// group, or the only turn of the executor this group is attached to (a single-threaded
    /// executor's, or one it lent). A thread about to wait for this group's callbacks to make
    /// progress (a publisher waiting for room in a subscription's queue) gives up at once
    /// then, instead of waiting out its timeout for what cannot happen.
    pub fn can_run_while_this_thread_waits(&self) -> bool {
        let mut turn = TURN.with(Cell::get);
        if turn.executor.is_null() {
            return true;
        }
        let executor = self
            .executor
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map_or(std::ptr::null(), Arc::as_ptr);
        loop {
            if std::ptr::eq(turn.exclusive_group, self) || turn.alone && executor == turn.executor {
                return false;
            }
            if turn.outer.is_null() {
                return true;
            }
            // SAFETY: `outer` points into the box of a `TurnMark` this thread still holds:
            // marks are scoped, so an inner one is dropped (and `TURN` restored) before the
            // outer one frees its box.
            turn = unsafe { *turn.outer };
        }
    }

    fn attach(&self, parker: Arc<Parker>) {
        *self.executor.lock().unwrap_or_else(PoisonError::into_inner) = Some(parker);
    }

    fn live_entities(self: &Arc<Self>, out: &mut Vec<Entry>) {
        let mut entities = self.lock_entities();
        entities.retain(|weak| match weak.upgrade() {
            Some(entity) => {
                out.push((self.clone(), entity));
                true
            }
            None => false,
        });
    }

    fn lock_entities(&self) -> std::sync::MutexGuard<'_, Vec<Weak<dyn Waitable>>> {
        self.entities.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The callback turn the current thread is taking, for
/// [`CallbackGroup::can_run_while_this_thread_waits`]. Pointers serve as identities only,
/// except `outer`, which is followed.
#[derive(Clone, Copy)]
struct Turn {
    /// The parker of the executor whose callback runs (null outside any callback).
    executor: *const Parker,
    /// Whether no other thread can take that executor's turns meanwhile: it is
    /// single-threaded, or the turn is lent (lending is for single-threaded executors only).
    alone: bool,
    /// The mutually exclusive group this turn claimed (null for a reentrant one).
    exclusive_group: *const CallbackGroup,
    /// The turn this thread still holds around this one (a callback spinning another
    /// executor), or null.
    outer: *const Turn,
}

impl Turn {
    const NONE: Self = Self {
        executor: std::ptr::null(),
        alone: false,
        exclusive_group: std::ptr::null(),
        outer: std::ptr::null(),
    };
}

thread_local! {
    static TURN: Cell<Turn> = const { Cell::new(Turn::NONE) };
}

/// Marks the current thread as running a callback of `group` on `executor` until dropped.
/// A nested turn (a callback spinning another executor) keeps the outer one reachable and
/// restores it when done.
struct TurnMark {
    /// The turn this one is nested in, which the nested turn's `outer` points to (boxed, as
    /// the mark itself moves; only nested turns, which are rare, allocate); `None` outside
    /// any callback.
    outer: Option<Box<Turn>>,
}

impl TurnMark {
    fn enter(executor: &Arc<Parker>, alone: bool, group: &CallbackGroup) -> Self {
        let exclusive_group = match group.kind {
            CallbackGroupKind::MutuallyExclusive => std::ptr::from_ref(group),
            CallbackGroupKind::Reentrant => std::ptr::null(),
        };
        let previous = TURN.with(Cell::get);
        let outer = (!previous.executor.is_null()).then(|| Box::new(previous));
        let turn = Turn {
            executor: Arc::as_ptr(executor),
            alone,
            exclusive_group,
            outer: outer
                .as_deref()
                .map_or(std::ptr::null(), std::ptr::from_ref),
        };
        TURN.with(|t| t.set(turn));
        Self { outer }
    }
}

impl Drop for TurnMark {
    fn drop(&mut self) {
        let previous = self.outer.as_deref().copied().unwrap_or(Turn::NONE);
        TURN.with(|t| t.set(previous));
    }
}

/// An entity with the group it belongs to.
type Entry = (Arc<CallbackGroup>, Arc<dyn Waitable>);

/// Releases a mutually exclusive group when the callback is done (even if it panics).
struct GroupClaim<'a>(Option<&'a AtomicBool>);

impl Drop for GroupClaim<'_> {
    fn drop(&mut self) {
        if let Some(busy) = self.0 {
            busy.store(false, Ordering::Release);
        }
    }
}

/// Why [`Executor::spin_until_complete`] returned without a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpinError {
    /// The timeout passed first.
    Timeout,
    /// The executor (or its context) was shut down first.
    Shutdown,
}

impl std::fmt::Display for SpinError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Timeout => f.write_str("timed out before the future completed"),
            Self::Shutdown => f.write_str("shut down before the future completed"),
        }
    }
}

impl std::error::Error for SpinError {}

/// A flag that stops spinning executors; shared with the context so that `shutdown()` or
/// Ctrl-C ends `spin()`.
#[derive(Default)]
pub struct ShutdownSignal {
    stopped: AtomicBool,
    parkers: Mutex<Vec<Weak<Parker>>>,
}

impl ShutdownSignal {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    pub fn is_shutdown(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    pub fn shutdown(&self) {
        self.stopped.store(true, Ordering::Release);
        for parker in self
            .parkers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
        {
            if let Some(parker) = parker.upgrade() {
                parker.refuse_lending();
                parker.unpark();
            }
        }
    }

    fn subscribe(&self, parker: &Arc<Parker>) {
        let mut parkers = self.parkers.lock().unwrap_or_else(PoisonError::into_inner);
        parkers.retain(|p| p.strong_count() > 0);
        parkers.push(Arc::downgrade(parker));
    }
}

/// Runs callbacks on the calling thread, or on several threads with [`Self::spin_threads`].
pub struct Executor {
    clock: Arc<dyn Clock>,
    parker: Arc<Parker>,
    shutdown: Arc<ShutdownSignal>,
    groups: Mutex<Vec<Arc<CallbackGroup>>>,
    /// Round-robin position among non-timer entities.
    next_index: AtomicUsize,
    /// Set while worker threads share this executor, so they pass wake-ups on.
    multi_threaded: AtomicBool,
    /// Cleared by [`Self::keep_callbacks_on_own_threads`]: no turn is lent while asleep.
    lends_turn: AtomicBool,
    /// How many times [`Self::wake`] was called: [`Self::spin_while`] returns to its caller
    /// when it changes.
    wakes: AtomicU64,
}

impl Executor {
    /// An executor on `CLOCK_MONOTONIC` with its own shutdown signal.
    pub fn new() -> Self {
        Self::with_clock(Arc::new(SteadyClock), ShutdownSignal::new())
    }

    pub fn with_clock(clock: Arc<dyn Clock>, shutdown: Arc<ShutdownSignal>) -> Self {
        let parker = Arc::new(Parker::new());
        shutdown.subscribe(&parker);
        Self {
            clock,
            parker,
            shutdown,
            groups: Mutex::new(Vec::new()),
            next_index: AtomicUsize::new(0),
            multi_threaded: AtomicBool::new(false),
            lends_turn: AtomicBool::new(true),
            wakes: AtomicU64::new(0),
        }
    }

    /// Tells sleeping executor threads to look for work again.
    pub fn wake(&self) {
        self.wakes.fetch_add(1, Ordering::AcqRel);
        self.parker.unpark();
    }

    /// Runs every callback on the executor's own threads: no turn is lent to a receive thread
    /// while the executor sleeps (see [`Parker`]). For callbacks that must run on the thread
    /// that spins, such as those into a WebAssembly instance, which that thread owns.
    pub fn keep_callbacks_on_own_threads(&self) {
        self.lends_turn.store(false, Ordering::Release);
    }

    /// Runs callbacks on `threads` threads (the calling one included) until shutdown. Callbacks
    /// of a mutually exclusive group never overlap; those of a reentrant group may.
    ///
    /// `on_thread_start` runs first on every thread (e.g. to apply real-time settings); if it
    /// fails on any thread, spinning is shut down and the first error returned.
    ///
    /// # Errors
    /// The first error of `on_thread_start`.
    pub fn spin_threads<E: Send>(
        &self,
        threads: usize,
        on_thread_start: impl Fn(usize) -> Result<(), E> + Sync,
    ) -> Result<(), E> {
        let threads = threads.max(1);
        self.multi_threaded.store(threads > 1, Ordering::Release);
        let result = std::thread::scope(|scope| {
            let workers: Vec<_> = (1..threads)
                .map(|index| {
                    let on_thread_start = &on_thread_start;
                    scope.spawn(move || {
                        let started = on_thread_start(index);
                        if started.is_ok() {
                            self.spin();
                        } else {
                            self.shutdown.shutdown();
                        }
                        started
                    })
                })
                .collect();
            let mut first = on_thread_start(0);
            if first.is_ok() {
                self.spin();
            } else {
                self.shutdown.shutdown();
            }
            for worker in workers {
                match worker.join() {
                    Ok(Err(e)) if first.is_ok() => first = Err(e),
                    Ok(_) => {}
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            first
        });
        self.multi_threaded.store(false, Ordering::Release);
        result
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    pub fn shutdown_signal(&self) -> &Arc<ShutdownSignal> {
        &self.shutdown
    }

    /// Schedules the group's entities on this executor.
    pub fn add_callback_group(&self, group: Arc<CallbackGroup>) {
        group.attach(self.parker.clone());
        self.groups
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(group);
        self.parker.unpark();
    }

    /// Runs callbacks until shutdown.
    pub fn spin(&self) {
        let mut entities = Vec::new();
        while !self.shutdown.is_shutdown() {
            self.spin_once_with(None, false, &mut entities);
        }
    }

    /// Runs callbacks until `duration` has passed on this executor's clock, or shutdown.
    pub fn spin_for(&self, duration: Duration) {
        let end = self.clock.now() + duration;
        let mut entities = Vec::new();
        while !self.shutdown.is_shutdown() {
            let now = self.clock.now();
            if now >= end {
                return;
            }
            self.spin_once_with(Some(end - now), false, &mut entities);
        }
    }

    /// Runs callbacks until shutdown, until `duration` (if given) has passed on this
    /// executor's clock, or until `go_on` says to stop; `go_on` is asked before the first wait,
    /// after every callback this thread runs and after every [`Self::wake`]. A callback run on
    /// a lent turn does not wake this thread (as in [`Self::spin`]): the thread that received
    /// the work runs it alone.
    pub fn spin_while(&self, duration: Option<Duration>, go_on: &mut dyn FnMut() -> bool) {
        let end = duration.map(|d| self.clock.now() + d);
        let mut entities = Vec::new();
        while !self.shutdown.is_shutdown() && go_on() {
            let timeout = match end {
                Some(end) => {
                    let now = self.clock.now();
                    if now >= end {
                        return;
                    }
                    Some(end - now)
                }
                None => None,
            };
            let wakes = self.wakes.load(Ordering::Acquire);
            self.spin_once_until_woken(timeout, &mut entities, wakes);
        }
    }

    /// [`Self::spin_once`] that also returns (false) when [`Self::wake`] is called meanwhile.
    pub fn spin_once_or_wake(&self, timeout: Option<Duration>) -> bool {
        let wakes = self.wakes.load(Ordering::Acquire);
        self.spin_once_inner_with(timeout, true, &mut Vec::new(), Some(wakes))
    }

    /// Runs every callback that is ready now, without waiting.
    pub fn spin_some(&self) {
        let mut entities = Vec::new();
        while !self.shutdown.is_shutdown() {
            self.snapshot(&mut entities);
            let ran = self.run_one_ready(&entities, self.clock.now());
            entities.clear();
            if !ran {
                return;
            }
        }
    }

    /// Waits up to `timeout` (forever if `None`) for work, then runs one callback.
    /// Returns whether a callback ran.
    pub fn spin_once(&self, timeout: Option<Duration>) -> bool {
        self.spin_once_inner(timeout, true)
    }

    /// [`Self::spin_once`]; `report` says whether the caller needs to learn that a callback
    /// ran on a lent turn (then the lender wakes this thread).
    fn spin_once_inner(&self, timeout: Option<Duration>, report: bool) -> bool {
        self.spin_once_with(timeout, report, &mut Vec::new())
    }

    /// [`Self::spin_once_inner`] with a buffer for the snapshot of entities that `spin` keeps
    /// across calls, so that looking for work allocates nothing. The buffer is left empty: the
    /// executor holds no entity between looks, so dropping one frees it at once.
    fn spin_once_with(
        &self,
        timeout: Option<Duration>,
        report: bool,
        entities: &mut Vec<Entry>,
    ) -> bool {
        self.spin_once_inner_with(timeout, report, entities, None)
    }

    /// [`Self::spin_once_with`] for [`Self::spin_while`], which must hear every wake: returns
    /// false once [`Self::wake`] was called after `wakes` was read.
    fn spin_once_until_woken(
        &self,
        timeout: Option<Duration>,
        entities: &mut Vec<Entry>,
        wakes: u64,
    ) -> bool {
        self.spin_once_inner_with(timeout, false, entities, Some(wakes))
    }

    fn spin_once_inner_with(
        &self,
        timeout: Option<Duration>,
        report: bool,
        entities: &mut Vec<Entry>,
        return_on_wake_after: Option<u64>,
    ) -> bool {
        let wait_end = timeout.map(|t| self.clock.now() + t);
        loop {
            if self.shutdown.is_shutdown() {
                return false;
            }
            let now = self.clock.now();
            // One snapshot serves both the run and, when nothing was ready, the sleep deadline:
            // an entity added meanwhile notifies the parker, so the sleep cannot miss it.
            self.snapshot(entities);
            let ran = self.run_one_ready(entities, now);
            let next_timer = if ran {
                None
            } else {
                entities.iter().filter_map(|(_, e)| e.next_deadline()).min()
            };
            entities.clear();
            if ran {
                return true;
            }
            if wait_end.is_some_and(|end| now >= end) {
                return false;
            }
            let deadline = match (next_timer, wait_end) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            // A single-threaded executor lends its turn while asleep (see `Parker`).
            let lend = !self.multi_threaded.load(Ordering::Acquire)
                && self.lends_turn.load(Ordering::Acquire);
            let runs = self.parker.lent_runs();
            if lend {
                self.parker.open_lending(report);
            }
            self.clock.wait_until(&self.parker, deadline);
            if lend {
                if let Some(panic) = self.parker.close_lending() {
                    std::panic::resume_unwind(panic);
                }
                if self.parker.lent_runs() != runs {
                    return true;
                }
            }
            if return_on_wake_after.is_some_and(|w| self.wakes.load(Ordering::Acquire) != w) {
                return false;
            }
        }
    }

    /// Spins until `future` completes, `timeout` passes, or shutdown.
    ///
    /// # Errors
    /// [`SpinError::Timeout`], [`SpinError::Shutdown`].
    pub fn spin_until_complete<F: Future>(
        &self,
        future: F,
        timeout: Option<Duration>,
    ) -> Result<F::Output, SpinError> {
        let waker = Waker::from(Arc::new(ParkerWaker(self.parker.clone())));
        let mut task = TaskContext::from_waker(&waker);
        let mut future = pin!(future);
        let end = timeout.map(|t| self.clock.now() + t);
        loop {
            if let Poll::Ready(output) = future.as_mut().poll(&mut task) {
                return Ok(output);
            }
            if self.shutdown.is_shutdown() {
                return Err(SpinError::Shutdown);
            }
            let now = self.clock.now();
            match end {
                Some(end) if now >= end => return Err(SpinError::Timeout),
                Some(end) => {
                    self.spin_once(Some(end - now));
                }
                None => {
                    self.spin_once(None);
                }
            }
        }
    }

    /// Fills `entities` (empty) with the live entities of every group.
    fn snapshot(&self, entities: &mut Vec<Entry>) {
        for group in self
            .groups
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
        {
            group.live_entities(entities);
        }
    }

    /// Runs `entity` under its group's claim; false if the group is busy or nothing ran.
    fn run(&self, group: &CallbackGroup, entity: &dyn Waitable) -> bool {
        let Some(_claim) = group.try_claim() else {
            return false;
        };
        let multi_threaded = self.multi_threaded.load(Ordering::Acquire);
        if multi_threaded {
            // Let another thread look for the rest of the work while this one is busy.
            self.parker.unpark();
        }
        let turn = TurnMark::enter(&self.parker, !multi_threaded, group);
        let ran = entity.execute();
        drop(turn);
        drop(_claim);
        if multi_threaded && group.kind == CallbackGroupKind::MutuallyExclusive {
            // Work of this group may have been skipped while it was busy.
            self.parker.unpark();
        }
        ran
    }

    /// Runs one callback: the most overdue due timer, else the next ready entity round robin.
    /// Allocates nothing unless a due timer's group is busy (multi-threaded).
    fn run_one_ready(&self, entities: &[Entry], now: Instant) -> bool {
        let due_timers = || {
            entities
                .iter()
                .filter(|(_, e)| e.is_timer() && e.is_ready(now))
                .filter_map(|entry| entry.1.due_key().map(|key| (key, entry)))
        };
        if let Some((_, (group, timer))) = due_timers().min_by_key(|(key, _)| *key) {
            if self.run(group, timer.as_ref()) {
                return true;
            }
            // Its group is busy on another thread: try the other due timers in order.
            let mut due_timers: Vec<(Instant, &Entry)> = due_timers().collect();
            due_timers.sort_by_key(|(key, _)| *key);
            for (_, (group, timer)) in due_timers {
                if self.run(group, timer.as_ref()) {
                    return true;
                }
            }
        }
        let others = || entities.iter().filter(|(_, e)| !e.is_timer()).enumerate();
        let count = others().count();
        if count == 0 {
            return false;
        }
        let start = self.next_index.load(Ordering::Relaxed) % count;
        for (index, (group, entity)) in others().skip(start).chain(others().take(start)) {
            if entity.is_ready(now) && self.run(group, entity.as_ref()) {
                self.next_index.store(index + 1, Ordering::Relaxed);
                return true;
            }
        }
        false
    }
}

impl Default for Executor {
    fn default() -> Self {
        Self::new()
    }
}

struct ParkerWaker(Arc<Parker>);

impl Wake for ParkerWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

#[cfg(test)]
mod tests;
