//! Executor behaviour on a virtual clock: deterministic, no sleeps.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::*;
use crate::{Timer, VirtualClock};

const MS: Duration = Duration::from_millis(1);

fn virtual_executor() -> (Arc<VirtualClock>, Executor, Arc<CallbackGroup>) {
    let clock = Arc::new(VirtualClock::new(Instant::from_nanos(1_000_000_000)));
    let executor = Executor::with_clock(clock.clone(), ShutdownSignal::new());
    let group = CallbackGroup::new();
    executor.add_callback_group(group.clone());
    (clock, executor, group)
}

/// A stand-in for a subscription: a queue of work items, each taking `cost` of virtual time.
struct BusyQueue {
    clock: Arc<VirtualClock>,
    cost: Duration,
    queue: Mutex<VecDeque<u32>>,
    ran: AtomicUsize,
}

impl Waitable for BusyQueue {
    fn is_ready(&self, _now: Instant) -> bool {
        !self.queue.lock().unwrap().is_empty()
    }

    fn execute(&self) -> bool {
        if self.queue.lock().unwrap().pop_front().is_none() {
            return false;
        }
        self.clock.advance(self.cost);
        self.ran.fetch_add(1, Ordering::SeqCst);
        true
    }
}

#[test]
fn timers_run_in_deadline_order() {
    let (clock, executor, group) = virtual_executor();
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut timers = Vec::new();
    for (name, period_ms) in [("a", 30u64), ("b", 20), ("c", 50)] {
        let log = log.clone();
        let timer: Arc<dyn Waitable> = Arc::new(Timer::new(
            clock.clone(),
            MS * period_ms as u32,
            move |call| {
                log.lock()
                    .unwrap()
                    .push((call.expected.as_nanos() / 1_000_000, name));
            },
        ));
        group.add(Arc::downgrade(&timer));
        timers.push(timer);
    }
    executor.spin_for(95 * MS);
    let log = log.lock().unwrap().clone();
    let times: Vec<u64> = log.iter().map(|(t, _)| *t - 1000).collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "not in deadline order: {log:?}"
    );
    let names: Vec<&str> = log.iter().map(|(_, n)| *n).collect();
    // b every 20 ms, a every 30, c every 50; the tie at t=60 goes to the timer added first.
    assert_eq!(times, [20, 30, 40, 50, 60, 60, 80, 90]);
    assert_eq!(names, ["b", "a", "b", "c", "a", "b", "b", "a"]);
}

#[test]
fn no_drift_over_many_periods() {
    let (clock, executor, group) = virtual_executor();
    let calls = Arc::new(Mutex::new(Vec::new()));
    let calls2 = calls.clone();
    let clock2 = clock.clone();
    let timer: Arc<dyn Waitable> = Arc::new(Timer::new(clock.clone(), 10 * MS, move |call| {
        calls2.lock().unwrap().push(*call);
        // Each callback takes 3 ms: with relative sleeps the period would stretch to 13 ms.
        clock2.advance(3 * MS);
    }));
    group.add(Arc::downgrade(&timer));
    executor.spin_for(Duration::from_secs(100));
    let calls = calls.lock().unwrap();
    assert_eq!(calls.len(), 10_000);
    let start = 1_000_000_000u64;
    for (n, call) in calls.iter().enumerate() {
        assert_eq!(
            call.expected.as_nanos(),
            start + (n as u64 + 1) * 10_000_000
        );
        assert_eq!(call.latency(), Duration::ZERO);
        assert_eq!(call.skipped, 0);
    }
}

#[test]
fn overrun_does_not_cause_a_catch_up_burst() {
    let (clock, executor, group) = virtual_executor();
    let calls = Arc::new(Mutex::new(Vec::new()));
    let calls2 = calls.clone();
    let clock2 = clock.clone();
    let timer: Arc<dyn Waitable> = Arc::new(Timer::new(clock.clone(), 10 * MS, move |call| {
        calls2.lock().unwrap().push(*call);
        if calls2.lock().unwrap().len() == 2 {
            clock2.advance(35 * MS);
        }
    }));
    group.add(Arc::downgrade(&timer));
    executor.spin_for(95 * MS);
    let expected: Vec<u64> = calls
        .lock()
        .unwrap()
        .iter()
        .map(|c| (c.expected.as_nanos() - 1_000_000_000) / 1_000_000)
        .collect();
    // Call 2 (t=20) overran to t=55: the t=30 call runs once, late, then 40 and 50 are
    // skipped rather than replayed back to back, and the grid resumes at 60.
    assert_eq!(expected, [10, 20, 30, 60, 70, 80, 90]);
    let calls = calls.lock().unwrap();
    assert_eq!(calls[2].skipped, 2);
    assert_eq!(calls[2].latency(), 25 * MS);
    assert_eq!(calls[3].latency(), Duration::ZERO);
}

#[test]
fn busy_subscription_does_not_starve_a_timer() {
    let (clock, executor, group) = virtual_executor();
    let busy = Arc::new(BusyQueue {
        clock: clock.clone(),
        cost: Duration::from_micros(700),
        queue: Mutex::new((0..100_000).collect()),
        ran: AtomicUsize::new(0),
    });
    let busy_dyn: Arc<dyn Waitable> = busy.clone();
    group.add(Arc::downgrade(&busy_dyn));
    let latencies = Arc::new(Mutex::new(Vec::new()));
    let latencies2 = latencies.clone();
    let timer: Arc<dyn Waitable> = Arc::new(Timer::new(clock.clone(), 10 * MS, move |call| {
        latencies2.lock().unwrap().push(call.latency());
    }));
    group.add(Arc::downgrade(&timer));
    executor.spin_for(Duration::from_millis(1005));
    let latencies = latencies.lock().unwrap();
    assert_eq!(latencies.len(), 100);
    // A due timer waits at most for the one subscription callback already running.
    assert!(
        latencies.iter().all(|l| *l < Duration::from_micros(700)),
        "{latencies:?}"
    );
    assert!(busy.ran.load(Ordering::SeqCst) > 1000);
}

#[test]
fn dropped_entities_leave_the_executor() {
    let (clock, executor, group) = virtual_executor();
    let count = Arc::new(AtomicUsize::new(0));
    let count2 = count.clone();
    let timer: Arc<dyn Waitable> = Arc::new(Timer::new(clock.clone(), 10 * MS, move |_| {
        count2.fetch_add(1, Ordering::SeqCst);
    }));
    group.add(Arc::downgrade(&timer));
    executor.spin_for(25 * MS);
    drop(timer);
    executor.spin_for(100 * MS);
    assert_eq!(count.load(Ordering::SeqCst), 2);
}

#[test]
fn spin_until_complete_and_timeout() {
    let (_clock, executor, _group) = virtual_executor();
    assert_eq!(executor.spin_until_complete(async { 7 }, None), Ok(7));
    let never = std::future::pending::<()>();
    assert_eq!(
        executor.spin_until_complete(never, Some(50 * MS)),
        Err(SpinError::Timeout)
    );
}

#[test]
fn shutdown_stops_spin() {
    let (_clock, executor, _group) = virtual_executor();
    executor.shutdown_signal().shutdown();
    executor.spin();
    assert!(!executor.spin_once(None));
}

/// Wakes `executor` every millisecond until the returned flag is set.
fn keep_waking(
    executor: &Arc<Executor>,
) -> (
    Arc<std::sync::atomic::AtomicBool>,
    std::thread::JoinHandle<()>,
) {
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (executor, stop) = (executor.clone(), done.clone());
    let thread = std::thread::spawn(move || {
        while !stop.load(Ordering::SeqCst) {
            executor.wake();
            std::thread::sleep(MS);
        }
    });
    (done, thread)
}

/// `wake` returns to a caller that asked to hear it, with no work: `spin_once_or_wake` (which
/// would otherwise wait for ever) returns false, and `spin_while` asks its caller again.
#[test]
fn a_wake_returns_to_a_caller_that_asked_for_it() {
    let executor = Arc::new(Executor::new());
    let (done, waker) = keep_waking(&executor);
    assert!(!executor.spin_once_or_wake(None));
    let mut asked = 0;
    executor.spin_while(None, &mut || {
        asked += 1;
        asked < 3
    });
    assert_eq!(asked, 3);
    done.store(true, Ordering::SeqCst);
    waker.join().unwrap();
}

/// `spin_while` runs the callbacks that come, asks its caller after each, and ends at its
/// duration or at shutdown.
#[test]
fn spin_while_runs_callbacks_until_told_or_timed_out() {
    let (_clock, executor, group) = virtual_executor();
    let ran = Arc::new(AtomicUsize::new(0));
    let entities: Vec<Arc<dyn Waitable>> = (0..3)
        .map(|_| {
            let ran = ran.clone();
            one_shot(move || {
                ran.fetch_add(1, Ordering::SeqCst);
            })
        })
        .collect();
    for entity in &entities {
        group.add(Arc::downgrade(entity));
    }
    let mut asked = 0;
    executor.spin_while(None, &mut || {
        asked += 1;
        ran.load(Ordering::SeqCst) < 2
    });
    assert_eq!(
        ran.load(Ordering::SeqCst),
        2,
        "stopped when told, after the second"
    );
    assert_eq!(asked, 3);
    // On the virtual clock a duration passes only when advanced: zero ends at once.
    executor.spin_while(Some(Duration::ZERO), &mut || true);
    assert_eq!(ran.load(Ordering::SeqCst), 2);
    executor.shutdown_signal().shutdown();
    executor.spin_while(None, &mut || true);
    assert_eq!(ran.load(Ordering::SeqCst), 2, "nothing runs after shutdown");
}

/// A one-shot entity whose callback runs `body` once.
struct OneShot<F: Fn() + Send + Sync> {
    pending: std::sync::atomic::AtomicBool,
    body: F,
}

impl<F: Fn() + Send + Sync> Waitable for OneShot<F> {
    fn is_ready(&self, _now: Instant) -> bool {
        self.pending.load(Ordering::SeqCst)
    }

    fn execute(&self) -> bool {
        if !self.pending.swap(false, Ordering::SeqCst) {
            return false;
        }
        (self.body)();
        true
    }
}

fn one_shot(body: impl Fn() + Send + Sync + 'static) -> Arc<dyn Waitable> {
    Arc::new(OneShot {
        pending: std::sync::atomic::AtomicBool::new(true),
        body,
    })
}

/// Per callback, in completion order: whether the other callback had started meanwhile.
type Meetings = Arc<Mutex<Vec<bool>>>;

/// Two callbacks that each wait (up to 2 s) for the other to start: they finish together only
/// if they run in parallel.
fn rendezvous_pair(group: &Arc<CallbackGroup>) -> (Vec<Arc<dyn Waitable>>, Meetings) {
    let met = Arc::new(Mutex::new(Vec::new()));
    let arrived = Arc::new(AtomicUsize::new(0));
    let entities: Vec<Arc<dyn Waitable>> = (0..2)
        .map(|_| {
            let arrived = arrived.clone();
            let met = met.clone();
            one_shot(move || {
                arrived.fetch_add(1, Ordering::SeqCst);
                let start = std::time::Instant::now();
                while arrived.load(Ordering::SeqCst) < 2 && start.elapsed() < Duration::from_secs(2)
                {
                    std::thread::yield_now();
                }
                met.lock()
                    .unwrap()
                    .push(arrived.load(Ordering::SeqCst) == 2);
            })
        })
        .collect();
    for entity in &entities {
        group.add(Arc::downgrade(entity));
    }
    (entities, met)
}

fn spin_two_threads_until(executor: &Executor, done: impl Fn() -> bool + Sync) {
    let shutdown = executor.shutdown_signal().clone();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !done() {
                std::thread::sleep(Duration::from_millis(1));
            }
            shutdown.shutdown();
        });
        executor.spin_threads(2, |_| Ok::<(), ()>(())).unwrap();
    });
}

#[test]
fn reentrant_group_runs_callbacks_in_parallel() {
    let executor = Executor::new();
    let group = CallbackGroup::with_kind(CallbackGroupKind::Reentrant);
    executor.add_callback_group(group.clone());
    let (_entities, met) = rendezvous_pair(&group);
    spin_two_threads_until(&executor, || met.lock().unwrap().len() == 2);
    assert_eq!(*met.lock().unwrap(), [true, true]);
}

#[test]
fn mutually_exclusive_group_never_overlaps() {
    let executor = Executor::new();
    let group = CallbackGroup::with_kind(CallbackGroupKind::MutuallyExclusive);
    executor.add_callback_group(group.clone());
    let (_entities, met) = rendezvous_pair(&group);
    spin_two_threads_until(&executor, || met.lock().unwrap().len() == 2);
    // The first callback waited in vain for the second, which could not start.
    assert_eq!(*met.lock().unwrap(), [false, true]);
}

#[test]
fn two_exclusive_groups_run_in_parallel() {
    let executor = Executor::new();
    let a = CallbackGroup::new();
    let b = CallbackGroup::new();
    executor.add_callback_group(a.clone());
    executor.add_callback_group(b.clone());
    let (mut entities, met) = rendezvous_pair(&a);
    // Move the second entity into group b.
    let second = entities.pop().unwrap();
    *a.entities.lock().unwrap() = vec![Arc::downgrade(&entities[0])];
    b.add(Arc::downgrade(&second));
    spin_two_threads_until(&executor, || met.lock().unwrap().len() == 2);
    assert_eq!(*met.lock().unwrap(), [true, true]);
}

#[test]
fn failing_thread_setup_stops_all_threads_and_reports() {
    let executor = Executor::new();
    let result = executor.spin_threads(
        3,
        |index| if index == 2 { Err("no rtprio") } else { Ok(()) },
    );
    assert_eq!(result, Err("no rtprio"));
}

/// A queue whose callback records the thread it ran on (or panics on request).
struct ThreadProbe {
    queue: Mutex<VecDeque<bool>>,
    ran_on: Mutex<Vec<std::thread::ThreadId>>,
}

impl Waitable for ThreadProbe {
    fn is_ready(&self, _now: Instant) -> bool {
        !self.queue.lock().unwrap().is_empty()
    }

    fn execute(&self) -> bool {
        let Some(panic) = self.queue.lock().unwrap().pop_front() else {
            return false;
        };
        self.ran_on
            .lock()
            .unwrap()
            .push(std::thread::current().id());
        assert!(!panic, "callback panic on request");
        true
    }
}

/// A sleeping single-threaded executor lends its turn: the notifier runs the callback, the
/// executor's `spin_once` reports it, and a panic comes out of the executor's `spin_once`.
/// Real threads, but no timing assertion: every wait ends on an event.
#[test]
fn a_sleeping_executor_lends_its_turn_to_the_notifier() {
    let executor = Arc::new(Executor::new());
    let group = CallbackGroup::new();
    executor.add_callback_group(group.clone());
    let probe = Arc::new(ThreadProbe {
        queue: Mutex::new(VecDeque::new()),
        ran_on: Mutex::new(Vec::new()),
    });
    let entity: Arc<dyn Waitable> = probe.clone();
    group.add(Arc::downgrade(&entity));
    // Not asleep: no lending.
    probe.queue.lock().unwrap().push_back(false);
    assert!(!group.try_run_inline(probe.as_ref()));
    assert!(executor.spin_once(Some(Duration::ZERO)));

    let spinner = {
        let executor = executor.clone();
        std::thread::spawn(move || executor.spin_once(Some(Duration::from_secs(60))))
    };
    // Once the spinner sleeps and lends its turn, the notifier runs the new work.
    while !executor.parker.is_lending() {
        std::thread::yield_now();
    }
    probe.queue.lock().unwrap().push_back(false);
    assert!(group.try_run_inline(probe.as_ref()));
    assert!(spinner.join().unwrap(), "spin_once saw the lent run");
    let me = std::thread::current().id();
    assert_eq!(probe.ran_on.lock().unwrap().last(), Some(&me));

    let spinner = {
        let executor = executor.clone();
        std::thread::spawn(move || executor.spin_once(Some(Duration::from_secs(60))))
    };
    while !executor.parker.is_lending() {
        std::thread::yield_now();
    }
    probe.queue.lock().unwrap().push_back(true);
    assert!(group.try_run_inline(probe.as_ref()));
    assert!(
        spinner.join().is_err(),
        "the panic reached the executor's thread"
    );
}

/// An entity whose one callback records what `can_run_while_this_thread_waits` answers for
/// each of `groups`, in order; it is ready once `arm`ed.
struct Asker {
    entity: Arc<OneShot<Box<dyn Fn() + Send + Sync>>>,
    answers: Arc<Mutex<Vec<bool>>>,
}

impl Asker {
    fn new(asking: &Arc<CallbackGroup>, groups: &[&Arc<CallbackGroup>]) -> Self {
        let answers = Arc::new(Mutex::new(Vec::new()));
        let record = answers.clone();
        let groups: Vec<Arc<CallbackGroup>> = groups.iter().map(|g| Arc::clone(g)).collect();
        let entity = Arc::new(OneShot {
            pending: std::sync::atomic::AtomicBool::new(false),
            body: Box::new(move || {
                let answers = groups.iter().map(|g| g.can_run_while_this_thread_waits());
                record.lock().unwrap().extend(answers);
            }) as Box<dyn Fn() + Send + Sync>,
        });
        let waitable: Arc<dyn Waitable> = entity.clone();
        asking.add(Arc::downgrade(&waitable));
        Self { entity, answers }
    }

    fn arm(&self) {
        self.entity.pending.store(true, Ordering::SeqCst);
    }

    fn answers(&self) -> Vec<bool> {
        self.answers.lock().unwrap().clone()
    }
}

/// A thread waiting for a group's callbacks gives up at once when it holds that group's only
/// turn: in a callback of a single-threaded executor (its own turn or a lent one), for every
/// group of that executor; in a callback of a mutually exclusive group, for that group on any
/// executor; and so for the turns of callbacks around the asking one (a callback spinning
/// another executor). Other executors' groups, a reentrant group of a multi-threaded executor,
/// a group no executor serves yet, and any group asked outside callbacks can still run.
#[test]
fn a_group_knows_when_the_waiting_thread_holds_its_only_turn() {
    let single = Arc::new(Executor::new());
    let (own, sibling) = (CallbackGroup::new(), CallbackGroup::new());
    single.add_callback_group(own.clone());
    single.add_callback_group(sibling.clone());
    let other = Arc::new(Executor::new());
    let elsewhere = CallbackGroup::new();
    other.add_callback_group(elsewhere.clone());
    let unattached = CallbackGroup::new();
    let all = [&own, &sibling, &elsewhere, &unattached];

    let outside: Vec<bool> = all
        .iter()
        .map(|g| g.can_run_while_this_thread_waits())
        .collect();
    assert_eq!(outside, [true; 4], "outside callbacks");

    let asker = Asker::new(&own, &all);
    asker.arm();
    assert!(single.spin_once(Some(Duration::ZERO)));
    assert_eq!(
        asker.answers(),
        [false, false, true, true],
        "in a callback of a single-threaded executor"
    );

    // A lent turn: the executor sleeps, and this thread runs the new work's callback.
    let asker = Asker::new(&own, &all);
    let spinner = {
        let single = single.clone();
        std::thread::spawn(move || single.spin_once(Some(Duration::from_secs(60))))
    };
    while !single.parker.is_lending() {
        std::thread::yield_now();
    }
    asker.arm();
    assert!(own.try_run_inline(asker.entity.as_ref()));
    assert!(spinner.join().unwrap(), "spin_once saw the lent run");
    assert_eq!(
        asker.answers(),
        [false, false, true, true],
        "on a lent turn"
    );

    // A callback of `single` spins `other`: in the inner callback this thread holds both
    // executors' only turns.
    let inner = Asker::new(&elsewhere, &all);
    inner.arm();
    let spins_other = {
        let other = other.clone();
        one_shot(move || assert!(other.spin_once(Some(Duration::ZERO))))
    };
    own.add(Arc::downgrade(&spins_other));
    assert!(single.spin_once(Some(Duration::ZERO)));
    assert_eq!(
        inner.answers(),
        [false, false, false, true],
        "in a callback of an executor spun from another executor's callback"
    );

    let multi = Executor::new();
    let exclusive = CallbackGroup::new();
    let reentrant = CallbackGroup::with_kind(CallbackGroupKind::Reentrant);
    multi.add_callback_group(exclusive.clone());
    multi.add_callback_group(reentrant.clone());
    let from_exclusive = Asker::new(&exclusive, &[&exclusive, &reentrant]);
    let from_reentrant = Asker::new(&reentrant, &[&exclusive, &reentrant]);
    from_exclusive.arm();
    from_reentrant.arm();
    spin_two_threads_until(&multi, || {
        from_exclusive.answers().len() == 2 && from_reentrant.answers().len() == 2
    });
    assert_eq!(
        from_exclusive.answers(),
        [false, true],
        "in a mutually exclusive group's callback on two threads"
    );
    assert_eq!(
        from_reentrant.answers(),
        [true, true],
        "in a reentrant group's callback on two threads"
    );
}
