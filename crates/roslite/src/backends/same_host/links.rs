//! A same-host link's reader side: a (local reader, remote writer) pair's link connects to
//! the writer's endpoint and delivers what arrives; how a link is stopped; and the thread of a
//! local reader's first link, which waits on that link alone (its further links share a
//! thread: `shared_thread.rs`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use roslite_cdr::{Backing, SharedBuf};
use roslite_executor::Instant as MonoInstant;
use roslite_rtps::types::Guid;
use roslite_shm::{
    Endpoint, EndpointAddress, IdleSpin, ReaderConfig, ShmInterrupter, ShmReader, UdsInterrupter,
    UdsReader, UdsReaderConfig,
};

use super::service::ServiceReader;
use super::{writer_key, LinkKind, PeerGone, HELD_SLACK};
use crate::seam::loan::SAMPLE_LEAD;
use crate::seam::{LocalSubscription, MessageInfo};
use crate::vocabulary::events::IncompatibleQos;
use crate::vocabulary::log::Logger;

pub(super) struct ReaderLink {
    pub(super) stop: Arc<LinkStop>,
    /// The link's reader is attached at the writer ([`LinkSpec::connected`]).
    pub(super) connected: Arc<AtomicBool>,
    /// The subscription's events, told when the link goes (a service's reader has none).
    pub(super) events: Option<Arc<IncompatibleQos>>,
}

impl Drop for ReaderLink {
    fn drop(&mut self) {
        self.stop.request();
    }
}

/// Tells a reader thread to end. Reader threads block without a timeout (a timeout arms a
/// kernel timer per wait: a shared-memory reader's futex wait, a Unix-socket reader's `recv`),
/// so a request also wakes the reader through its interrupter.
#[derive(Default)]
pub(super) struct LinkStop {
    pub(super) requested: AtomicBool,
    pub(super) interrupter: Mutex<Option<ReaderInterrupter>>,
}

pub(super) enum ReaderInterrupter {
    Shm(ShmInterrupter),
    Uds(UdsInterrupter),
    /// The link is one of a reader's shared thread (`shared_thread.rs`): that thread looks at its
    /// links' stop requests when woken.
    Shared(Weak<dyn WakeForStop>),
}

/// A thread serving several links, woken to look at their stop requests (the shared thread's
/// eventfd). Here, not beside that thread, so that the links know nothing of the thread that
/// serves them.
pub(super) trait WakeForStop: Send + Sync {
    fn wake(&self);
}

impl LinkStop {
    fn request(&self) {
        self.requested.store(true, Ordering::Release);
        let interrupter = self
            .interrupter
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match &*interrupter {
            Some(ReaderInterrupter::Shm(shm)) => shm.interrupt(),
            Some(ReaderInterrupter::Uds(uds)) => uds.interrupt(),
            Some(ReaderInterrupter::Shared(wake)) => {
                if let Some(wake) = wake.upgrade() {
                    wake.wake();
                }
            }
            None => {}
        }
    }

    pub(super) fn requested(&self) -> bool {
        self.requested.load(Ordering::Acquire)
    }

    /// Lets [`Self::request`] wake the reader `interrupter` belongs to; false if a stop was
    /// requested already (the flag is read after the interrupter is in place, so no request
    /// goes unseen).
    pub(super) fn watch(&self, interrupter: ReaderInterrupter) -> bool {
        *self
            .interrupter
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(interrupter);
        !self.requested()
    }
}

/// A same-host sample as the subscription's buffer: decoded in place.
pub(super) struct ShmBacking(pub(super) roslite_shm::Sample);

impl Backing for ShmBacking {
    fn bytes(&self) -> &[u8] {
        &self.0
    }
}

/// The local reader a link delivers to.
#[derive(Clone)]
pub(super) enum LinkTarget {
    Topic(Box<LocalSubscription>),
    Service(Arc<ServiceReader>),
}

pub(super) struct LinkSpec {
    pub(super) endpoint: Arc<Endpoint>,
    pub(super) kind: LinkKind,
    pub(super) address: EndpointAddress,
    pub(super) writer: Guid,
    pub(super) history: roslite_shm::History,
    /// A TRANSIENT_LOCAL subscription: the writer's kept samples come first.
    pub(super) wants_kept: bool,
    pub(super) target: LinkTarget,
    pub(super) stop: Arc<LinkStop>,
    /// Set while the reader is attached at the writer: from then on the writer sends it every
    /// sample it publishes. Its `Welcome` is sent, and the reader added to those it sends
    /// to, under the one lock every send takes (`roslite_shm`'s `attach`), so a publish that
    /// starts after `connect` returned reaches this reader.
    pub(super) connected: Arc<AtomicBool>,
    /// [`IdleSpin`]'s budget for this link's reader.
    pub(super) receive_spin: Duration,
    pub(super) logger: Logger,
    /// Called when the writer's participant turns out to be gone ([`Self::writer_hung_up`]).
    pub(super) peer_gone: PeerGone,
}

pub(super) fn info_for(seq: u64, timestamp_ns: u64, writer: Guid) -> MessageInfo {
    MessageInfo {
        // The publisher's CLOCK_MONOTONIC at publish: meaningful on one host.
        source_timestamp: MonoInstant::from_nanos(timestamp_ns),
        received_timestamp: MonoInstant::ZERO,
        // The same numbering as the writer's RTPS sequence numbers (the RTPS outlet skips to
        // each message's number), so a message is one message on either path.
        publication_sequence_number: seq,
        publisher_id: 0,
        publisher_gid: writer.to_bytes(),
        from_intra_process: false,
    }
}

/// A link's reader once attached at its writer.
pub(super) enum Connected {
    Shm(ShmReader),
    Uds(UdsReader),
}

/// Connection attempts a link makes before it gives up, [`CONNECT_RETRY`] apart.
pub(super) const CONNECT_ATTEMPTS: u32 = 20;
pub(super) const CONNECT_RETRY: Duration = Duration::from_millis(50);

impl LinkSpec {
    /// One attempt to attach this link's reader at its writer.
    pub(super) fn connect(&self) -> Result<Connected, roslite_shm::ConnectError> {
        let key = writer_key(self.writer, self.kind);
        match self.kind {
            LinkKind::SharedMemory => {
                let depth = self.history.depth();
                ShmReader::connect(
                    &self.endpoint,
                    &self.address,
                    key,
                    ReaderConfig {
                        history: self.history,
                        max_held: depth.saturating_add(HELD_SLACK),
                        wants_kept: self.wants_kept,
                        ..ReaderConfig::default()
                    },
                )
                .map(Connected::Shm)
            }
            LinkKind::UnixSocket => UdsReader::connect(
                &self.address,
                key,
                UdsReaderConfig {
                    history: self.history,
                    wants_kept: self.wants_kept,
                    ..UdsReaderConfig::default()
                },
            )
            .map(Connected::Uds),
        }
    }

    /// Attaches this link's reader at its writer, retrying for a moment: the writer may be
    /// announced before its endpoint registered it. `None` when a stop was requested, or when
    /// every attempt failed (said once: samples from that writer are lost).
    pub(super) fn connect_retrying(&self) -> Option<Connected> {
        for attempt in 1..=CONNECT_ATTEMPTS {
            if self.stop.requested() {
                return None;
            }
            match self.connect() {
                Ok(connected) => {
                    self.connected.store(true, Ordering::Release);
                    return Some(connected);
                }
                Err(e) if attempt == CONNECT_ATTEMPTS => self.attach_failed(&e),
                Err(_) => std::thread::sleep(CONNECT_RETRY),
            }
        }
        None
    }

    /// Says that this link could not be attached at its writer, once: nothing else would show
    /// why the writer's messages never arrive.
    pub(super) fn attach_failed(&self, error: &dyn std::fmt::Display) {
        self.logger.warn(format_args!(
            "same-host link to writer {:?} failed, samples from it are lost: {error}",
            self.writer
        ));
    }

    /// A link on a thread of its own: connects, then delivers until the link ends.
    pub(super) fn run(self) {
        let Some(reader) = self.connect_retrying() else {
            return;
        };
        match (&reader, &self.target) {
            (Connected::Shm(r), LinkTarget::Topic(subscription)) => {
                self.receive_shm(r, subscription);
            }
            (Connected::Shm(r), LinkTarget::Service(service)) => {
                self.receive_service_shm(r, service);
            }
            (Connected::Uds(r), LinkTarget::Topic(subscription)) => {
                self.receive_uds(r, subscription);
            }
            (Connected::Uds(r), LinkTarget::Service(service)) => {
                self.receive_service_uds(r, service);
            }
        }
        self.connected.store(false, Ordering::Release);
        if !self.stop.requested() {
            self.writer_hung_up();
        }
    }

    /// The writer hung up without this side asking. A writer deleted in an orderly way leaves
    /// its participant's endpoint listening (discovery then says it went); when nothing listens
    /// there any more, the participant's process is gone (a killed process's sockets close at
    /// once), and discovery is told now rather than at the end of the peer's lease.
    pub(super) fn writer_hung_up(&self) {
        // A dying process's sockets close one after the other: its listener may outlive this
        // connection by a moment.
        for _ in 0..5 {
            if self.stop.requested() {
                return;
            }
            if !self.address.is_listening() {
                (self.peer_gone)(self.writer.prefix);
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits on the channel's futex without a timeout (after looking again while samples
    /// arrive densely) until a sample arrives, the writer hangs up, or [`LinkStop::request`]
    /// interrupts the wait.
    fn receive_shm(&self, reader: &ShmReader, subscription: &LocalSubscription) {
        if !self
            .stop
            .watch(ReaderInterrupter::Shm(reader.interrupter()))
        {
            return;
        }
        let mut numbering = Numbering::default();
        let mut spin = IdleSpin::new(self.receive_spin);
        let keep_all =
            subscription.description.qos.history == crate::vocabulary::qos::History::KeepAll;
        while !self.stop.requested() {
            // As over a Unix socket: a keep-all subscription with `KEEP_ALL_MAX_SAMPLES`
            // queued takes no more until its callback took one; the ring fills and the writer
            // is held back. (Its quota of held samples does not bound it: a decoded message
            // need not keep its sample.)
            if keep_all {
                subscription.block_until_room(|| self.stop.requested());
            }
            match reader.receive_spinning(&mut spin) {
                // Samples still in the ring are not wanted any more.
                Ok(_) if self.stop.requested() => return,
                Ok(sample) => self.deliver_shm(subscription, &mut numbering, sample),
                // The subscription holds its quota of samples: sleep until one is dropped.
                Err(roslite_shm::ReceiveError::HeldLimit) => reader.wait_for_release(None),
                Err(roslite_shm::ReceiveError::WriterGone) => return,
                Err(e) => return self.link_broke(&e),
            }
        }
    }

    /// The link ends for something other than its writer leaving (a malformed ring, a failed
    /// wait): said once, since nothing else would show why the writer's messages stopped.
    pub(super) fn link_broke(&self, error: &roslite_shm::ReceiveError) {
        self.logger.warn(format_args!(
            "same-host link to writer {:?} ended, samples from it are lost: {error}",
            self.writer
        ));
    }

    /// Blocks in `recv` itself (one system call per packet, as a plain socket reader would;
    /// a `poll` before each `recv` cost a system call per sample more) until a sample arrives,
    /// the writer hangs up, or [`LinkStop::request`] shuts the socket down.
    fn receive_uds(&self, reader: &UdsReader, subscription: &LocalSubscription) {
        if !self
            .stop
            .watch(ReaderInterrupter::Uds(reader.interrupter()))
        {
            return;
        }
        let mut numbering = Numbering::default();
        let mut spin = IdleSpin::new(self.receive_spin);
        let keep_all =
            subscription.description.qos.history == crate::vocabulary::qos::History::KeepAll;
        loop {
            // A keep-all subscription with `KEEP_ALL_MAX_SAMPLES` queued: read no more until
            // its callback takes one; the socket fills and the writer is held back.
            if keep_all {
                subscription.block_until_room(|| self.stop.requested());
            }
            let Ok(sample) = reader.receive_spinning(&mut spin) else {
                return;
            };
            if self.stop.requested() {
                return; // samples still queued in the socket are not wanted any more
            }
            self.deliver_uds(subscription, &mut numbering, sample);
        }
    }

    /// Hands a shared-memory sample to the subscription (decoded in place), after counting
    /// the messages skipped before it as lost.
    pub(super) fn deliver_shm(
        &self,
        subscription: &LocalSubscription,
        numbering: &mut Numbering,
        sample: roslite_shm::Sample,
    ) {
        subscription.report_lost(numbering.lost_before(sample.seq()));
        let info = info_for(sample.seq(), sample.timestamp_ns(), self.writer);
        let len = sample.len();
        // Shorter than the lead: not from a roslite writer.
        if let Some(buf) = SharedBuf::new(ShmBacking(sample)).into_slice(SAMPLE_LEAD..len) {
            crate::seam::with_inline_dispatch(|| subscription.deliver(&buf, info));
        }
    }

    /// [`Self::deliver_shm`] for a Unix-socket sample.
    pub(super) fn deliver_uds(
        &self,
        subscription: &LocalSubscription,
        numbering: &mut Numbering,
        sample: roslite_shm::UdsSample,
    ) {
        subscription.report_lost(numbering.lost_before(sample.seq()));
        let info = info_for(sample.seq(), sample.timestamp_ns(), self.writer);
        let buf = uds_buf(sample);
        crate::seam::with_inline_dispatch(|| subscription.deliver(&buf, info));
    }
}

/// A Unix-socket sample's bytes as a buffer, without copying them.
pub(super) fn uds_buf(sample: roslite_shm::UdsSample) -> SharedBuf {
    match sample.into_bytes() {
        roslite_shm::UdsBytes::Whole(bytes) => SharedBuf::from_arc(bytes),
        roslite_shm::UdsBytes::Assembled(bytes) => SharedBuf::from_vec(bytes),
    }
}

impl LinkSpec {
    /// [`Self::receive_shm`] for a service's reader: every sample goes to it (requests and
    /// replies are not numbered per link, and a service keeps no history to block on).
    fn receive_service_shm(&self, reader: &ShmReader, service: &Arc<ServiceReader>) {
        if !self
            .stop
            .watch(ReaderInterrupter::Shm(reader.interrupter()))
        {
            return;
        }
        let _connected = service.link_connected();
        let mut spin = IdleSpin::new(self.receive_spin);
        while !self.stop.requested() {
            match reader.receive_spinning(&mut spin) {
                Ok(_) if self.stop.requested() => return,
                Ok(sample) => service.deliver(SharedBuf::new(ShmBacking(sample))),
                Err(roslite_shm::ReceiveError::HeldLimit) => reader.wait_for_release(None),
                Err(roslite_shm::ReceiveError::WriterGone) => return,
                Err(e) => return self.link_broke(&e),
            }
        }
    }

    /// [`Self::receive_uds`] for a service's reader.
    fn receive_service_uds(&self, reader: &UdsReader, service: &Arc<ServiceReader>) {
        if !self
            .stop
            .watch(ReaderInterrupter::Uds(reader.interrupter()))
        {
            return;
        }
        let _connected = service.link_connected();
        let mut spin = IdleSpin::new(self.receive_spin);
        while let Ok(sample) = reader.receive_spinning(&mut spin) {
            if self.stop.requested() {
                return;
            }
            service.deliver(uds_buf(sample));
        }
    }
}

/// The publisher's numbers seen on one same-host link. Its writer numbers samples as the
/// publisher numbers its messages and sends it every one while this reader is connected, so
/// a number skipped after the first sample is a message lost on the way: overwritten in the
/// ring or the writer's queue for this (slow, keep-last) reader, or timed out for it
/// (keep-all, `max_blocking_time`).
#[derive(Default)]
pub(super) struct Numbering {
    pub(super) last: Option<u64>,
}

impl Numbering {
    /// Messages skipped right before `seq`.
    fn lost_before(&mut self, seq: u64) -> u64 {
        let lost = self
            .last
            .map_or(0, |last| seq.saturating_sub(last).saturating_sub(1));
        self.last = Some(self.last.map_or(seq, |last| last.max(seq)));
        lost
    }
}
