//! The same-host links of one local reader beyond its first, on one thread.
//!
//! A local reader (a subscription, a server's request reader, a client's reply reader) gets a
//! thread of its own for its first same-host link (`links.rs`): it waits on that link's futex
//! (shared memory) or in `recv` (Unix socket), the quickest wake-up there is. A thread for every
//! further link made a reader matched with a publisher in each of 15 other processes cost 15
//! threads: 750 in every process of a graph of 16 processes with 50 topics (`roslite bench
//! scale`), 12 KiB of memory each, and a few dozen such processes reach the kernel's default
//! limit on threads (`kernel.pid_max`, 32 768). A reader's further links share one thread
//! instead, [`SharedThread`], which waits in `epoll` on each link's wake-up descriptor (a
//! shared-memory reader's eventfd, `ShmReader::poll_fd`; a Unix-socket reader's socket). A
//! reader then costs at most two threads, whatever the number of writers it is matched with.
//!
//! - A link is attached at its writer (a handshake with the writer's endpoint, retried while
//!   the writer is not registered there yet) by the context's [`Attacher`], so a peer slow to
//!   answer holds up no link's samples, and is handed to the shared thread once it is attached.
//! - The shared thread takes at most [`BATCH`] samples from a link before it looks at the next,
//!   so a busy writer does not starve the others.
//! - It does not spin before it sleeps (`roslite_shm::IdleSpin`): the spin pays off for a
//!   request and its reply on one link, which the first link's own thread serves.
//! - A keep-all subscription's links all fill one queue: with the queue full, the thread waits
//!   for room (the writers' rings fill and hold them back), as a link's own thread does.
//! - A reader at its quota of held samples (`ReceiveError::HeldLimit`) is looked at again
//!   every millisecond until it lets one go: a release does not signal the eventfd.

use std::collections::HashMap;
use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use rustix::buffer::spare_capacity;
use rustix::event::{epoll, EventfdFlags};

use super::links::{
    Connected, LinkSpec, LinkTarget, Numbering, ReaderInterrupter, ShmBacking, WakeForStop,
    CONNECT_ATTEMPTS, CONNECT_RETRY,
};
use super::service::ConnectedLink;
use roslite_cdr::SharedBuf;
use roslite_shm::ReceiveError;

/// Samples taken from one link before the next link's turn.
const BATCH: usize = 32;

/// How often a link whose reader holds its quota of samples is looked at again.
const HELD_RETRY: Duration = Duration::from_millis(1);

/// The epoll key of [`SharedWake`]'s eventfd; links are keyed from 0 up.
const WAKE_KEY: u64 = u64::MAX;

/// Wakes the shared thread to look at its links: one handed over, a stop requested, or the
/// reader gone.
struct SharedWake {
    fd: OwnedFd,
    attention: AtomicBool,
}

impl WakeForStop for SharedWake {
    fn wake(&self) {
        self.attention.store(true, Ordering::Release);
        // A full counter is readable anyway; nothing else can fail on an eventfd.
        let _ = rustix::io::write(&self.fd, &1u64.to_ne_bytes());
    }
}

impl SharedWake {
    fn drain(&self) {
        let mut count = [0u8; 8];
        let _ = rustix::io::read(&self.fd, &mut count);
    }

    fn wanted(&self) -> bool {
        self.attention.load(Ordering::Acquire)
    }
}

/// What the planner and the shared thread (and the threads attaching links) share.
struct Shared {
    wake: Arc<SharedWake>,
    /// Links attached at their writers, not taken by the thread yet.
    handed: Mutex<Vec<(LinkSpec, Connected)>>,
    /// The reader is gone: the thread ends, and drops its links.
    closed: AtomicBool,
}

/// The planner's handle on a reader's shared link thread; dropping it ends the thread.
pub(super) struct SharedThread {
    shared: Arc<Shared>,
}

impl SharedThread {
    /// Starts the shared thread of the links that deliver to `target`, with `stack` bytes of
    /// stack (callbacks may run on it: inline dispatch).
    pub(super) fn start(target: LinkTarget, stack: usize) -> io::Result<Self> {
        let fd = rustix::event::eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?;
        let epoll = epoll::create(epoll::CreateFlags::CLOEXEC)?;
        epoll::add(
            &epoll,
            &fd,
            epoll::EventData::new_u64(WAKE_KEY),
            epoll::EventFlags::IN,
        )?;
        let shared = Arc::new(Shared {
            wake: Arc::new(SharedWake {
                fd,
                attention: AtomicBool::new(false),
            }),
            handed: Mutex::new(Vec::new()),
            closed: AtomicBool::new(false),
        });
        let thread = ThreadState {
            shared: shared.clone(),
            epoll,
            target,
            slots: HashMap::new(),
            next_key: 0,
        };
        std::thread::Builder::new()
            .name("roslite-rx-many".into())
            .stack_size(stack)
            .spawn(move || thread.run())?;
        Ok(Self { shared })
    }

    /// Has `attacher` attach `link` at its writer, then hand it to this shared thread. A stop
    /// requested meanwhile ends the attempt.
    pub(super) fn add(&self, link: LinkSpec, attacher: &Attacher) -> io::Result<()> {
        if !link.stop.watch(ReaderInterrupter::Shared(
            Arc::downgrade(&self.shared.wake) as Weak<dyn WakeForStop>
        )) {
            return Ok(());
        }
        attacher.attach(link, self.shared.clone())
    }
}

/// A link waiting to be attached at its writer.
struct AttachJob {
    link: LinkSpec,
    to: Arc<Shared>,
    attempts: u32,
    next_attempt: Instant,
}

#[derive(Default)]
struct AttachQueue {
    jobs: Vec<AttachJob>,
    /// A thread works through the queue; it ends when the queue is empty.
    running: bool,
}

/// Attaches the links of a context's shared threads at their writers, one after the other, on
/// one thread that runs while there are links to attach. The handshake with a writer's
/// endpoint takes well under a millisecond, but up to its timeout (2 s) with a peer that does
/// not answer (stopped, overloaded): here that holds up other attachments only, never a
/// sample. A writer not registered at its endpoint yet is tried again
/// [`CONNECT_RETRY`] later, [`CONNECT_ATTEMPTS`] times in all, as a first link's thread does.
#[derive(Default)]
pub(super) struct Attacher {
    queue: Arc<(Mutex<AttachQueue>, Condvar)>,
}

impl Attacher {
    fn attach(&self, link: LinkSpec, to: Arc<Shared>) -> io::Result<()> {
        let (queue, changed) = &*self.queue;
        let mut q = queue.lock().unwrap_or_else(PoisonError::into_inner);
        q.jobs.push(AttachJob {
            link,
            to,
            attempts: 0,
            next_attempt: Instant::now(),
        });
        if q.running {
            changed.notify_one();
            return Ok(());
        }
        let worker = self.queue.clone();
        std::thread::Builder::new()
            .name("roslite-attach".into())
            .stack_size(super::LINK_THREAD_STACK)
            .spawn(move || attach_until_done(&worker))
            .inspect_err(|_| {
                q.jobs.pop();
            })?;
        q.running = true;
        Ok(())
    }
}

/// The attaching thread: takes the job due first, tries it, and ends when none is left.
fn attach_until_done(queue: &(Mutex<AttachQueue>, Condvar)) {
    let (queue, changed) = queue;
    let mut q = queue.lock().unwrap_or_else(PoisonError::into_inner);
    loop {
        q.jobs.retain(|job| {
            let wanted = !job.link.stop.requested() && !job.to.closed.load(Ordering::Acquire);
            if !wanted {
                job.link.connected.store(false, Ordering::Release);
            }
            wanted
        });
        let now = Instant::now();
        let Some(due) = (0..q.jobs.len()).min_by_key(|i| q.jobs[*i].next_attempt) else {
            q.running = false;
            return;
        };
        if q.jobs[due].next_attempt > now {
            let wait = q.jobs[due].next_attempt - now;
            q = changed
                .wait_timeout(q, wait)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            continue;
        }
        let mut job = q.jobs.swap_remove(due);
        drop(q);
        job.attempts += 1;
        match job.link.connect() {
            Ok(reader) => {
                job.link.connected.store(true, Ordering::Release);
                job.to
                    .handed
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push((job.link, reader));
                job.to.wake.wake();
                q = queue.lock().unwrap_or_else(PoisonError::into_inner);
            }
            Err(e) if job.attempts == CONNECT_ATTEMPTS => {
                job.link.attach_failed(&e);
                q = queue.lock().unwrap_or_else(PoisonError::into_inner);
            }
            Err(_) => {
                job.next_attempt = Instant::now() + CONNECT_RETRY;
                q = queue.lock().unwrap_or_else(PoisonError::into_inner);
                q.jobs.push(job);
            }
        }
    }
}

impl Drop for SharedThread {
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::Release);
        self.shared.wake.wake();
    }
}

impl Connected {
    fn poll_fd(&self) -> BorrowedFd<'_> {
        match self {
            Connected::Shm(r) => r.poll_fd(),
            Connected::Uds(r) => r.poll_fd(),
        }
    }
}

/// One link on the shared thread.
struct Slot {
    link: LinkSpec,
    reader: Connected,
    numbering: Numbering,
    /// A service reader counts its connected links while they live.
    _service: Option<ConnectedLink>,
}

/// Why a link gave no sample.
enum Dry {
    /// Nothing there now.
    Empty,
    /// The reader holds its quota of samples.
    Held,
    /// The link ended: its writer went, or it broke (said in the log).
    Ended,
}

impl Slot {
    /// Takes one sample and delivers it to `target`.
    fn take(&mut self, target: &LinkTarget) -> Result<(), Dry> {
        match &self.reader {
            Connected::Shm(r) => match r.receive() {
                Ok(Some(sample)) => {
                    match target {
                        LinkTarget::Topic(s) => {
                            self.link.deliver_shm(s, &mut self.numbering, sample);
                        }
                        LinkTarget::Service(s) => s.deliver(SharedBuf::new(ShmBacking(sample))),
                    }
                    Ok(())
                }
                Ok(None) => Err(Dry::Empty),
                Err(ReceiveError::HeldLimit) => Err(Dry::Held),
                Err(ReceiveError::WriterGone) => Err(Dry::Ended),
                Err(e) => {
                    self.link.link_broke(&e);
                    Err(Dry::Ended)
                }
            },
            Connected::Uds(r) => match r.receive() {
                Ok(Some(sample)) => {
                    match target {
                        LinkTarget::Topic(s) => {
                            self.link.deliver_uds(s, &mut self.numbering, sample);
                        }
                        LinkTarget::Service(s) => s.deliver(super::links::uds_buf(sample)),
                    }
                    Ok(())
                }
                Ok(None) => Err(Dry::Empty),
                Err(_) => Err(Dry::Ended),
            },
        }
    }
}

/// The shared thread's own state.
struct ThreadState {
    shared: Arc<Shared>,
    epoll: OwnedFd,
    target: LinkTarget,
    slots: HashMap<u64, Slot>,
    next_key: u64,
}

impl ThreadState {
    fn run(mut self) {
        let mut events = Vec::with_capacity(64);
        // Whether the shared-memory readers were told this thread is about to sleep (and looked
        // at once more since, so that no sample sent before that goes unseen).
        let mut told_asleep = false;
        loop {
            if self.shared.wake.attention.swap(false, Ordering::AcqRel) {
                if self.shared.closed.load(Ordering::Acquire) {
                    return;
                }
                self.take_handed();
                self.drop_stopped();
                told_asleep = false;
            }
            self.wait_for_room();
            let (took, held) = self.take_samples();
            if took > 0 {
                told_asleep = false;
                continue;
            }
            if !told_asleep {
                for slot in self.slots.values() {
                    if let Connected::Shm(r) = &slot.reader {
                        r.prepare_sleep();
                    }
                }
                told_asleep = true;
                continue;
            }
            let timeout = held.then(|| rustix::time::Timespec {
                tv_sec: 0,
                tv_nsec: HELD_RETRY.as_nanos() as _,
            });
            events.clear();
            if epoll::wait(&self.epoll, spare_capacity(&mut events), timeout.as_ref()).is_err() {
                // Interrupted by a signal; nothing else can fail with a valid epoll and buffer.
                continue;
            }
            told_asleep = false;
            for event in &events {
                let key = event.data.u64();
                if key == WAKE_KEY {
                    self.shared.wake.drain();
                } else if let Some(Slot {
                    reader: Connected::Shm(r),
                    ..
                }) = self.slots.get(&key)
                {
                    r.handle_wake();
                }
            }
        }
    }

    /// Takes the links handed over since the last look.
    fn take_handed(&mut self) {
        let handed = std::mem::take(
            &mut *self
                .shared
                .handed
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for (link, reader) in handed {
            let key = self.next_key;
            self.next_key += 1;
            if let Err(e) = epoll::add(
                &self.epoll,
                reader.poll_fd(),
                epoll::EventData::new_u64(key),
                epoll::EventFlags::IN,
            ) {
                link.attach_failed(&e);
                link.connected.store(false, Ordering::Release);
                continue;
            }
            let service = match &self.target {
                LinkTarget::Service(s) => Some(s.link_connected()),
                LinkTarget::Topic(_) => None,
            };
            self.slots.insert(
                key,
                Slot {
                    link,
                    reader,
                    numbering: Numbering::default(),
                    _service: service,
                },
            );
        }
    }

    /// Drops the links whose stop was requested (samples still queued for them are not wanted
    /// any more).
    fn drop_stopped(&mut self) {
        let stopped: Vec<u64> = self
            .slots
            .iter()
            .filter(|(_, slot)| slot.link.stop.requested())
            .map(|(key, _)| *key)
            .collect();
        for key in stopped {
            self.remove(key);
        }
    }

    /// Ends link `key`; the reader detaches from its writer as it drops.
    fn remove(&mut self, key: u64) -> Option<LinkSpec> {
        let slot = self.slots.remove(&key)?;
        let _ = epoll::delete(&self.epoll, slot.reader.poll_fd());
        slot.link.connected.store(false, Ordering::Release);
        Some(slot.link)
    }

    /// A keep-all subscription with its queue full takes nothing until its callback took a
    /// message, or this thread has something else to look at.
    fn wait_for_room(&self) {
        if let LinkTarget::Topic(subscription) = &self.target {
            if subscription.description.qos.history == crate::vocabulary::qos::History::KeepAll {
                subscription.block_until_room(|| self.shared.wake.wanted());
            }
        }
    }

    /// Takes up to [`BATCH`] samples from each link: how many were taken, and whether some
    /// reader holds its quota.
    fn take_samples(&mut self) -> (usize, bool) {
        let keep_all = matches!(&self.target, LinkTarget::Topic(s)
            if s.description.qos.history == crate::vocabulary::qos::History::KeepAll);
        let mut took = 0;
        let mut held = false;
        let mut ended = Vec::new();
        'links: for (key, slot) in &mut self.slots {
            if slot.link.stop.requested() {
                continue; // dropped at the next look (the stop woke this thread)
            }
            for _ in 0..BATCH {
                if keep_all {
                    if let LinkTarget::Topic(s) = &self.target {
                        if !s.sink.has_room() {
                            break 'links;
                        }
                    }
                }
                match slot.take(&self.target) {
                    Ok(()) => took += 1,
                    Err(Dry::Empty) => break,
                    Err(Dry::Held) => {
                        held = true;
                        break;
                    }
                    Err(Dry::Ended) => {
                        ended.push(*key);
                        break;
                    }
                }
            }
        }
        for key in ended {
            let Some(link) = self.remove(key) else {
                continue;
            };
            if !link.stop.requested() {
                // Finding out whether the writer's process is gone takes up to 100 ms of
                // looking: not on this thread.
                let _ = std::thread::Builder::new()
                    .name("roslite-rx-gone".into())
                    .stack_size(super::LINK_THREAD_STACK)
                    .spawn(move || link.writer_hung_up());
            }
        }
        (took, held)
    }
}
