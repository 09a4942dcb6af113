//! Publishers and subscriptions.
//!
//! Intra-process delivery is zero-copy: `publish` moves the message into one `Arc` and every
//! matched subscription's queue gets a clone of that `Arc`. A callback that takes the message
//! by value gets the original back when it holds the last reference (the usual case with one
//! subscription), and a copy only when others still share it.
//!
//! Toward other processes a message is serialized once per publish, and only when some outlet
//! is active. When an outlet loans memory (a shared-memory chunk), the message is serialized
//! straight into it: no copy on the send side. The other active outlets (RTPS, a Unix socket)
//! then get one copy of those bytes.
//!
//! A loaned message ([`Publisher::loan`], module `loan`) turns that around for bulk data: the
//! message is serialized into the loan first, with holes for its reserved sequences, the
//! application writes the holes in place, and publishing only hands the chunk over.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use roslite_cdr::{DecodeError, EncodeError, Endianness, SharedBuf};
use roslite_executor::{CallbackGroup, Instant, Waitable};
use roslite_msgs::Message;

use crate::endpoints::filtering::FilterState;
use crate::endpoints::host::EndpointHost;
use crate::endpoints::type_cache::TypeRegistration;
pub use crate::seam::MessageInfo;
use crate::seam::{
    give_back_send_buffer, send_to_each, take_send_buffer, Lent, Outlet as RemoteOutlet,
    OutletStats, SendTimeout, SentInPlace,
};
use crate::seam::{
    ContentFilterAnnouncement, EndpointRecord, FilterVerdict, PublisherLink, SerializedSink,
};
use crate::vocabulary::content_filter::{ContentFilterError, ContentFilterOptions};
use crate::vocabulary::events::{
    DeadlineMissedStatus, DeadlineWatch, IncompatibleQos, IncompatibleQosStatus, MatchedStatus,
    MessageLostStatus,
};
use crate::vocabulary::qos::{Durability, History, QosProfile, Reliability};
use crate::vocabulary::queue::{
    instance_of, InstanceKey, KeptItems, LockedQueue, MessageQueue, RoomWaiter, SharedQueue,
};
use crate::vocabulary::snapshot::SnapshotList;

mod loan;

pub use loan::{LoanError, LoanedMessage};

/// Counters of a subscription's queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubscriptionStats {
    /// Messages that reached the queue.
    pub received: u64,
    /// Messages pushed out of a full KEEP_LAST queue before a callback took them.
    pub overwritten: u64,
    /// Messages discarded because their lifespan had passed.
    pub expired: u64,
    /// Serialized messages from other processes that did not decode as this type; dropped.
    pub malformed: u64,
    /// Messages the content filter dropped (not in `received`, and not lost).
    pub filtered_out: u64,
}

/// [`SubscriptionStats`] as they are counted: an atomic add per message instead of a lock.
#[derive(Default)]
struct StatsCounters {
    received: AtomicU64,
    overwritten: AtomicU64,
    expired: AtomicU64,
    malformed: AtomicU64,
}

/// How a publisher's messages left for other processes (see [`Publisher::send_stats`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SendStats {
    /// Publishes serialized (those with at least one active outlet); each was serialized once.
    pub serialized: u64,
    /// Of those, serialized straight into memory an outlet loaned (a shared-memory chunk).
    pub serialized_in_place: u64,
    /// Bytes copied out of a loan for outlets without one (RTPS, a Unix socket) that were
    /// active at the same time.
    pub copied_out_bytes: u64,
    /// Loaned messages published ([`Publisher::loan`]); those that reached an outlet are also
    /// in `serialized` (and in `serialized_in_place` when the loan was an outlet's memory).
    pub loans_published: u64,
    /// Per attached outlet that keeps counters: what it carried and how.
    pub outlets: Vec<OutletStats>,
}

/// Per-publisher counters behind [`SendStats`].
#[derive(Default)]
struct SendCounters {
    serialized: AtomicU64,
    serialized_in_place: AtomicU64,
    copied_out_bytes: AtomicU64,
    loans_published: AtomicU64,
    /// The encoded length of the last message serialized, to size the next one's buffer.
    last_len: AtomicUsize,
}

impl SendCounters {
    /// One message serialized, into an outlet's loan if `in_place`.
    fn count_serialized(&self, in_place: bool) {
        self.serialized.fetch_add(1, Ordering::Relaxed);
        if in_place {
            self.serialized_in_place.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// `bytes` copied out of a loan for the outlets that did not lend it.
    fn copy_out(&self, bytes: &[u8]) -> Arc<[u8]> {
        self.copied_out_bytes
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        Arc::from(bytes)
    }
}

/// One publish's serialized form and where it goes.
struct Outgoing {
    /// The message serialized in place, to send through the outlet that loaned it.
    loan: Option<Lent>,
    /// The serialized bytes for `others`; `None` when there are none.
    payload: Option<Arc<[u8]>>,
    others: ActiveOutlets,
}

/// A snapshot of a publisher's outlets ([`SnapshotList`]).
type OutletList = Arc<[(u64, Arc<dyn RemoteOutlet>)]>;

/// The outlets one message goes to: a snapshot of the publisher's outlets and which of them
/// were active when it was published (asked once: an outlet told it sat a message out must not
/// get it). No allocation for up to 64 outlets.
pub(crate) struct ActiveOutlets {
    all: OutletList,
    first_64: u64,
    /// Active outlets at index 64 and beyond (many serialized subscriptions in this process).
    beyond_64: Vec<usize>,
}

impl ActiveOutlets {
    fn is_active(&self, index: usize) -> bool {
        match index {
            0..64 => self.first_64 & (1 << index) != 0,
            _ => self.beyond_64.contains(&index),
        }
    }

    fn set_inactive(&mut self, index: usize) {
        match index {
            0..64 => self.first_64 &= !(1 << index),
            _ => self.beyond_64.retain(|&i| i != index),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.first_64 == 0 && self.beyond_64.is_empty()
    }

    /// The one active outlet, if exactly one is.
    fn single(&self) -> Option<&Arc<dyn RemoteOutlet>> {
        if !self.beyond_64.is_empty() || self.first_64.count_ones() != 1 {
            return None;
        }
        let (_, outlet) = self.all.get(self.first_64.trailing_zeros() as usize)?;
        Some(outlet)
    }

    /// The active outlets with their position in the snapshot, in attach order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, &Arc<dyn RemoteOutlet>)> {
        self.all
            .iter()
            .enumerate()
            .filter(|(index, _)| self.is_active(*index))
            .map(|(index, (_, outlet))| (index, outlet))
    }
}

/// What [`PublisherShared::serialize_for_others`] did.
enum ToOthers {
    /// Sent already, with this outcome.
    Sent(Result<(), PublishError>),
    /// Serialized, to send after the local hand-off (`None`: no outlet is active).
    Serialized(Result<Option<Outgoing>, EncodeError>),
}

impl Outgoing {
    /// Sends what [`PublisherShared::serialize_for_others`] serialized, or returns why it
    /// could not serialize.
    fn send_serialized(
        outgoing: Result<Option<Self>, EncodeError>,
        info: &MessageInfo,
    ) -> Result<(), PublishError> {
        if let Some(outgoing) = outgoing.map_err(PublishError::Serialize)? {
            outgoing.send(&info.as_serialized())?;
        }
        Ok(())
    }

    /// Serializes `message` once for the `active` outlets: into the first loan one offers,
    /// else into a shared buffer.
    fn serialize<T: Message>(
        message: &T,
        mut active: ActiveOutlets,
        counters: &SendCounters,
    ) -> Result<Self, EncodeError> {
        let mut loan = None;
        for (i, outlet) in active.iter() {
            if let Some(l) = serialize_into_loan(&**outlet, message, &counters.last_len)? {
                loan = Some((i, l));
                break;
            }
        }
        let loan = loan.map(|(i, l)| {
            active.set_inactive(i);
            l
        });
        counters.count_serialized(loan.as_ref().is_some_and(Lent::is_shared_memory));
        let payload = match (&loan, active.is_empty()) {
            (_, true) => None,
            (Some(loan), false) => Some(counters.copy_out(loan.written())),
            (None, false) => Some(serialize_shared(message, &counters.last_len)?),
        };
        Ok(Self {
            loan,
            payload,
            others: active,
        })
    }

    /// Sends through every outlet, also after one timed out.
    ///
    /// # Errors
    /// [`PublishError::Timeout`] if any outlet timed out.
    fn send(self, info: &MessageInfo) -> Result<(), PublishError> {
        let lender = self.loan.map_or(Ok(()), |mut loan| loan.send(info));
        let others = match &self.payload {
            Some(payload) => send_to_each(self.others.iter().map(|(_, o)| o), payload, info),
            None => Ok(()),
        };
        Ok(lender.and(others)?)
    }
}

/// Byte order of everything a publisher serializes.
const ORDER: Endianness = Endianness::Little;

/// Room to ask for beyond the last message's encoded length, so that a message a little longer
/// than the last one (a longer string) still fits the first try.
fn with_slack(last_len: usize) -> usize {
    last_len.saturating_add(last_len / 4).saturating_add(256)
}

/// Runs `attempt` with room for `message`: first the last message's encoded length
/// (`last_len`) plus slack, as most topics carry messages of about one size; only when that
/// was too small, or for the first message, is the length counted beforehand (a second pass
/// over the message, as long as writing it for a small one) and `attempt` run again with it.
/// `None` when `attempt` says there is nothing to write into; stores the length written.
fn with_room_for<T: Message, R>(
    message: &T,
    last_len: &AtomicUsize,
    mut attempt: impl FnMut(usize) -> Option<Result<(R, usize), EncodeError>>,
) -> Option<Result<R, EncodeError>> {
    let last = last_len.load(Ordering::Relaxed);
    let mut done = None;
    if last > 0 {
        match attempt(with_slack(last))? {
            // Longer than the slack allows: counted below, and written at its length.
            Err(EncodeError::BufferTooSmall { .. }) => {}
            other => done = Some(other),
        }
    }
    let done = match done {
        Some(done) => done,
        None => match roslite_cdr::encoded_len(message, ORDER) {
            Ok(len) => attempt(len)?,
            Err(e) => Err(e),
        },
    };
    Some(done.map(|(result, written)| {
        last_len.store(written, Ordering::Relaxed);
        result
    }))
}

/// `message` serialized into a loan of `outlet` (`None`: it lends no memory), sized by
/// [`with_room_for`] (a loan too small goes back).
fn serialize_into_loan<T: Message>(
    outlet: &dyn RemoteOutlet,
    message: &T,
    last_len: &AtomicUsize,
) -> Result<Option<Lent>, EncodeError> {
    with_room_for(message, last_len, |len| {
        let mut loan = outlet.loan(len)?;
        let written = loan.write(&mut |buf| roslite_cdr::to_slice(message, ORDER, buf));
        Some(written.map(|()| {
            let used = loan.written().len();
            (loan, used)
        }))
    })
    .transpose()
}

/// `message` sent through `outlet`, its only destination in other processes, serialized
/// straight into the outlet's memory ([`RemoteOutlet::send_in_place`]), sized by
/// [`with_room_for`]. `None`: the outlet lends no memory (now); nothing was sent.
fn send_in_place<T: Message>(
    outlet: &dyn RemoteOutlet,
    message: &T,
    counters: &SendCounters,
    info: &MessageInfo,
) -> Option<Result<(), PublishError>> {
    let sent = with_room_for(message, &counters.last_len, |len| {
        let mut used = 0;
        let mut write = |buf: &mut [u8]| {
            used = roslite_cdr::to_slice(message, ORDER, buf)?;
            Ok(used)
        };
        let sent = outlet.send_in_place(len, &mut write, info)?;
        Some(sent.map(|sent| (sent, used)))
    })?;
    Some(match sent {
        Ok(SentInPlace {
            result,
            shared_memory,
        }) => {
            counters.count_serialized(shared_memory);
            result.map_err(PublishError::from)
        }
        Err(e) => Err(PublishError::Serialize(e)),
    })
}

/// Up to this length, a message for outlets without a loan is written into the thread's
/// reused buffer and copied out (cheaper for small messages than counting its length first);
/// beyond it, counted and written once at its final size.
const SCRATCH_MAX: usize = 16 * 1024;

/// `message` serialized (little endian) into a new shared buffer of its encoded length. A small
/// message (by `last_len`, the last one's length) is written into the thread's reused buffer
/// and copied out; a large one is counted first, then allocated once at its final size and
/// written once, not zero-filled first (for a 4 MiB message the fill cost as much as the
/// serialization).
fn serialize_shared<T: Message>(
    message: &T,
    last_len: &AtomicUsize,
) -> Result<Arc<[u8]>, EncodeError> {
    if last_len.load(Ordering::Relaxed) <= SCRATCH_MAX {
        let mut buf = take_send_buffer();
        buf.clear();
        let mut w = roslite_cdr::CdrWriter::with_buffer(buf, ORDER);
        message.encode(&mut w)?;
        let buf = w.finish();
        last_len.store(buf.len(), Ordering::Relaxed);
        let shared = Arc::from(&buf[..]);
        give_back_send_buffer(buf);
        return Ok(shared);
    }
    let len = roslite_cdr::encoded_len(message, ORDER)?;
    last_len.store(len, Ordering::Relaxed);
    serialize_counted(message, len)
}

/// `message` serialized into a new shared buffer of `len` bytes, its encoded length.
fn serialize_counted<T: Message>(message: &T, len: usize) -> Result<Arc<[u8]>, EncodeError> {
    let mut payload = Arc::<[u8]>::new_uninit_slice(len);
    let written = match Arc::get_mut(&mut payload) {
        Some(buf) => roslite_cdr::to_uninit_slice(message, ORDER, buf)?,
        // Not reached: a new `Arc` is unique.
        None => 0,
    };
    if written != len {
        // The counted and the written length disagree (a hand-written encoder that is not
        // deterministic): serialize again the plain way.
        return Ok(Arc::from(roslite_cdr::to_vec(message, ORDER)?));
    }
    // SAFETY: `to_uninit_slice` returned `Ok(len)`, so it initialized the first `len` bytes
    // (it writes in order from the start, padding included, and refuses to leave holes), and
    // the buffer is `len` bytes long.
    Ok(unsafe { payload.assume_init() })
}

/// Why a message could not be published.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PublishError {
    /// The message could not be serialized for a subscriber in another process (a bounded
    /// string or sequence is longer than its bound).
    Serialize(EncodeError),
    /// A serialized message shorter than its 4-byte encapsulation header.
    NotSerialized,
    /// A loaned message's bytes did not decode as its own type (its `CdrEncode` and
    /// `CdrDecode` disagree); subscriptions in this process did not get it, those elsewhere
    /// did.
    LoanNotDecodable(DecodeError),
    /// A reliable keep-all subscription had no room for the message for `max_blocking_time`
    /// (100 ms): it does not get this message; every other subscription does. It stopped
    /// taking messages (its callback is blocked or slower than this publisher, or, in this
    /// process, waits for the very callback that publishes). DDS's `write` returns `TIMEOUT`
    /// here, and rclcpp's `publish` throws.
    Timeout,
}

impl std::fmt::Display for PublishError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Serialize(e) => write!(f, "cannot serialize the message: {e}"),
            Self::NotSerialized => f.write_str(
                "a serialized message must start with the 4-byte CDR encapsulation header",
            ),
            Self::LoanNotDecodable(e) => write!(
                f,
                "the loaned message does not decode as its own type ({e}); its encoder and \
                 decoder disagree, so subscriptions in this process did not get it"
            ),
            Self::Timeout => f.write_str(
                "a reliable keep-all subscription had no room for the message for 100 ms \
                 (max_blocking_time) and did not get it; the others did. Its callbacks do not \
                 keep up (or, in this process, wait for the callback publishing): speed them \
                 up, publish less often, spin its node on another executor, or use keep_last",
            ),
        }
    }
}

impl std::error::Error for PublishError {}

impl From<SendTimeout> for PublishError {
    fn from(SendTimeout: SendTimeout) -> Self {
        Self::Timeout
    }
}

/// Whether a message published in this process may go into a subscription's `queue` now.
/// A keep-all subscription takes at most [`KEEP_ALL_MAX_SAMPLES`](crate::vocabulary::qos::KEEP_ALL_MAX_SAMPLES), as from other processes
/// (DDS `RESOURCE_LIMITS`). When it is full, a best-effort one loses the message (false,
/// counted in `events` as a DDS reader rejecting a sample would be), and for a reliable one
/// the publisher waits for room until `deadline`: `max_blocking_time` after the first wait of
/// this publish, shared with the other subscriptions it may wait for. It does not wait when
/// the publishing thread holds the only turn that could run the subscription's callback (a
/// callback of the same single-threaded executor, or of the same mutually exclusive
/// `group`): waiting could not make room there.
///
/// Publishers on several threads may each find the last free place, so the queue can exceed
/// the bound by as many messages as threads publish at once.
///
/// # Errors
/// [`SendTimeout`] when a reliable subscription still had no room: it does not get the
/// message.
pub(crate) fn admit_published(
    queue: &impl SharedQueue,
    qos: &QosProfile,
    group: &CallbackGroup,
    events: &IncompatibleQos,
    deadline: &mut Option<std::time::Instant>,
) -> Result<bool, SendTimeout> {
    if qos.history != History::KeepAll || queue.has_room() {
        return Ok(true);
    }
    if qos.reliability == Reliability::BestEffort {
        events.record_lost(1);
        return Ok(false);
    }
    if !group.can_run_while_this_thread_waits() {
        // The subscription never gets this message: it counts it lost (DDS SAMPLE_LOST), as
        // a same-host link counts the gap a timed-out message leaves in the numbering.
        events.record_lost(1);
        return Err(SendTimeout);
    }
    let deadline = *deadline.get_or_insert_with(|| {
        std::time::Instant::now() + crate::vocabulary::qos::MAX_BLOCKING_TIME
    });
    loop {
        // The take that makes room unparks this thread (and a late unpark after giving up
        // only ends some later `park` early, which its caller re-checks anyway).
        let thread = std::thread::current();
        if queue
            .wait_for_room(0, Box::new(move || thread.unpark()))
            .is_err()
        {
            return Ok(true);
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            events.record_lost(1);
            return Err(SendTimeout);
        }
        std::thread::park_timeout(left);
    }
}

type BoxedCallback<T> = Box<dyn FnMut(Incoming<T>, &MessageInfo) + Send>;

/// A message on its way to a subscription's callback.
#[doc(hidden)]
pub enum Incoming<T> {
    /// Shared already: it waited in the queue, or other subscriptions in this process got it
    /// too.
    Shared(Arc<T>),
    /// Just decoded and handed straight to the callback: nobody else holds it, so the
    /// by-value and by-reference shapes take it without an `Arc` (an allocation and a free per
    /// message), and only the shared shape wraps it.
    Unique(T),
}

impl<T: Clone> Incoming<T> {
    fn into_owned(self) -> T {
        match self {
            Self::Shared(message) => Arc::try_unwrap(message).unwrap_or_else(|m| (*m).clone()),
            Self::Unique(message) => message,
        }
    }

    fn into_shared(self) -> Arc<T> {
        match self {
            Self::Shared(message) => message,
            Self::Unique(message) => Arc::new(message),
        }
    }

    fn get(&self) -> &T {
        match self {
            Self::Shared(message) => message,
            Self::Unique(message) => message,
        }
    }
}

/// The instance of `message` of a keyed type (serialized to find its key: only where a
/// keep-last history keeps it); `None` for a keyless type.
fn typed_instance<T: Message>(message: &T) -> Option<InstanceKey> {
    T::KEY?;
    let bytes = roslite_cdr::to_vec(message, Endianness::Little).ok()?;
    instance_of(T::KEY, &bytes)
}

pub(crate) struct SubscriptionShared<T: Message> {
    pub(crate) id: u64,
    qos: QosProfile,
    queue: LockedQueue<(Arc<T>, MessageInfo)>,
    stats: StatsCounters,
    callback: Mutex<BoxedCallback<T>>,
    /// A message handed straight to `callback` is stamped with its arrival time: the callback
    /// takes a `MessageInfo` ([`SubscriptionCallback::READS_INFO`]), or a deadline watches
    /// arrivals.
    stamps_straight_arrivals: bool,
    group: Arc<CallbackGroup>,
    pub(crate) events: Arc<IncompatibleQos>,
    /// `REQUESTED_DEADLINE_MISSED`, with a QoS deadline.
    deadline: Option<Arc<DeadlineWatch>>,
    /// The content filter every message meets before it is queued.
    filter: FilterState,
}

impl<T: Message> SubscriptionShared<T> {
    /// Hands over a message of this process (a replay for a late joiner) if the content
    /// filter lets it through.
    fn deliver(&self, message: Arc<T>, info: MessageInfo) {
        if self.filter_message(&message) {
            self.deliver_incoming(Incoming::Shared(message), info);
        }
    }

    /// Whether a message of this process passes the content filter. One that does not encode
    /// as the filter reads it (a hand-written type whose description and encoder disagree)
    /// counts as malformed.
    fn filter_message(&self, message: &T) -> bool {
        match self.filter.check_message(message) {
            FilterVerdict::Passes => true,
            FilterVerdict::FilteredOut => false,
            FilterVerdict::Unreadable => {
                self.stats.malformed.fetch_add(1, Ordering::Relaxed);
                false
            }
        }
    }

    /// Hands over a message published in this process, if the content filter lets it
    /// through (first: a filtered-out message neither waits for room nor counts as lost) and
    /// [`admit_published`] lets it in.
    ///
    /// # Errors
    /// As [`admit_published`].
    fn deliver_published(
        &self,
        message: Arc<T>,
        info: MessageInfo,
        deadline: &mut Option<std::time::Instant>,
    ) -> Result<(), SendTimeout> {
        if self.filter_message(&message) && SerializedSink::admit_published(self, deadline)? {
            self.deliver_incoming(Incoming::Shared(message), info);
        }
        Ok(())
    }

    fn deliver_incoming(&self, message: Incoming<T>, mut info: MessageInfo) {
        // From a receive thread, a sleeping executor lends its turn: the callback runs now,
        // without waking the executor's thread (one thread hop less per message).
        let inline = crate::seam::inline_dispatch_allowed();
        // With nothing queued before it, the message goes straight to the callback. (Messages
        // of one publisher come from one thread at a time, in order, so none can be queued
        // behind this one's back; another publisher's have no order to keep.) It goes through
        // the queue with a lifespan (its `take` drops it if it expired on the way) and while
        // a path waits for room in a keep-all queue (its `take` lets the path go on).
        let straight = inline && self.qos.lifespan.is_none() && self.queue.is_idle();
        // The arrival time is read only where something can see it: the queue (`take` hands
        // out the info), or see `stamps_straight_arrivals`. A clock read is a noticeable part
        // of a same-host hop.
        let stamped = !straight || self.stamps_straight_arrivals;
        if stamped {
            self.stamp_arrival(&mut info);
        }
        let mut pending = Some((message, info));
        if straight
            && self.group.try_run_inline_with(&mut || {
                let Some((message, info)) = pending.take() else {
                    return false;
                };
                self.count_received(0);
                let mut callback = self.callback.lock().unwrap_or_else(PoisonError::into_inner);
                callback(message, &info);
                true
            })
        {
            return;
        }
        let Some((message, mut info)) = pending else {
            return; // not reached: the message was handed to the callback
        };
        if !stamped {
            // It was to go straight to the callback, but the executor is busy: it waits in the
            // queue, where `take` hands out its info.
            self.stamp_arrival(&mut info);
        }
        let instance = match self.qos.history {
            History::KeepLast(_) => typed_instance(message.get()),
            History::KeepAll => None,
        };
        let item = (message.into_shared(), info);
        let overwritten = self.queue.lock().push_instance(item, instance);
        self.count_received(overwritten);
        // Asked once: a turn refused just now for the message above is not asked again (the
        // notification wakes the executor if it fell asleep in between).
        if inline && !straight && self.group.try_run_inline(self) {
            return;
        }
        self.group.notify();
    }

    /// Sets `info.received_timestamp` to now, which starts a new deadline period.
    fn stamp_arrival(&self, info: &mut MessageInfo) {
        info.received_timestamp = Instant::monotonic_now();
        if let Some(deadline) = &self.deadline {
            deadline.restart(info.received_timestamp);
        }
    }

    /// One message received, which pushed `overwritten` older ones out of the queue.
    fn count_received(&self, overwritten: u64) {
        if overwritten > 0 {
            self.stats
                .overwritten
                .fetch_add(overwritten, Ordering::Relaxed);
        }
        self.stats.received.fetch_add(1, Ordering::Relaxed);
    }

    fn take(&self) -> Option<(Arc<T>, MessageInfo)> {
        let (taken, room) = {
            let mut queue = self.queue.lock();
            match self.qos.lifespan {
                None => queue.pop_front(),
                Some(lifespan) => self.take_unexpired(&mut queue, lifespan),
            }
        };
        room.into_iter().for_each(|waiter| waiter());
        taken
    }

    /// [`Self::take`] with a lifespan: drops (and counts) the expired messages before the
    /// first one that is not.
    fn take_unexpired(
        &self,
        queue: &mut MessageQueue<(Arc<T>, MessageInfo)>,
        lifespan: std::time::Duration,
    ) -> (Option<(Arc<T>, MessageInfo)>, Vec<RoomWaiter>) {
        let now = Instant::monotonic_now();
        let mut room = Vec::new();
        loop {
            let (item, waiters) = queue.pop_front();
            room.extend(waiters);
            match item {
                Some((_, info)) if now - info.source_timestamp > lifespan => {
                    self.stats.expired.fetch_add(1, Ordering::Relaxed);
                }
                taken => return (taken, room),
            }
        }
    }
}

/// Delivers serialized messages to a subscription in this process.
pub(crate) struct SinkOutlet(pub(crate) Arc<dyn SerializedSink>);

impl RemoteOutlet for SinkOutlet {
    fn send(&self, payload: &Arc<[u8]>, info: &MessageInfo) -> Result<(), SendTimeout> {
        // The subscription may keep views into the payload; sharing it keeps it alive.
        let payload = SharedBuf::from_arc(payload.clone());
        self.0
            .deliver_published_serialized(&payload, *info, &mut None)
    }
}

impl<T: Message> SerializedSink for SubscriptionShared<T> {
    fn wait_for_room(&self, pending: usize, waiter: RoomWaiter) -> Result<(), RoomWaiter> {
        SharedQueue::wait_for_room(&self.queue, pending, waiter)
    }

    fn has_room(&self) -> bool {
        SharedQueue::has_room(&self.queue)
    }

    fn admit_published(
        &self,
        deadline: &mut Option<std::time::Instant>,
    ) -> Result<bool, SendTimeout> {
        admit_published(&self.queue, &self.qos, &self.group, &self.events, deadline)
    }

    fn filter(&self, payload: &SharedBuf) -> FilterVerdict {
        let verdict = self.filter.check_bytes(payload.bytes());
        if verdict == FilterVerdict::Unreadable {
            self.stats.malformed.fetch_add(1, Ordering::Relaxed);
        }
        verdict
    }

    fn content_filter(&self) -> Option<ContentFilterAnnouncement> {
        self.filter.announcement()
    }

    fn deliver_filtered(&self, payload: &SharedBuf, info: MessageInfo) -> bool {
        // `from_shared`: large primitive sequences stay views into the received buffer.
        match roslite_cdr::from_shared::<T>(payload) {
            Ok(message) => {
                self.deliver_incoming(Incoming::Unique(message), info.as_serialized());
                true
            }
            Err(_) => {
                self.stats.malformed.fetch_add(1, Ordering::Relaxed);
                false
            }
        }
    }
}

impl<T: Message> Waitable for SubscriptionShared<T> {
    fn is_ready(&self, _now: Instant) -> bool {
        !self.queue.lock().is_empty()
    }

    fn execute(&self) -> bool {
        let Some((message, info)) = self.take() else {
            return false;
        };
        let mut callback = self.callback.lock().unwrap_or_else(PoisonError::into_inner);
        callback(Incoming::Shared(message), &info);
        true
    }
}

/// How a subscription is made beyond its topic, QoS and callback: rclcpp's
/// `SubscriptionOptions`, with rclcpp's field names (see
/// [`Node::create_subscription_with_options`](crate::Node::create_subscription_with_options)).
#[derive(Clone, Default)]
pub struct SubscriptionOptions {
    /// The callback group the callback runs in; `None`: the node's default group.
    pub callback_group: Option<Arc<CallbackGroup>>,
    /// A content filter (rclcpp's `content_filter_options`): only messages for which its
    /// expression holds reach the callback. An empty expression is no filter.
    pub content_filter_options: ContentFilterOptions,
}

/// Receives messages of type `T` on one topic; its callback runs in the executor spinning its
/// node. Dropping it unsubscribes.
pub struct Subscription<T: Message> {
    pub(crate) shared: Arc<SubscriptionShared<T>>,
    topic: String,
    node: Arc<EndpointHost>,
    _type_registration: Option<TypeRegistration>,
}

impl<T: Message> Subscription<T> {
    pub(crate) fn new<Shape, F: SubscriptionCallback<T, Shape>>(
        node: Arc<EndpointHost>,
        group: Arc<CallbackGroup>,
        topic: String,
        qos: QosProfile,
        filter: FilterState,
        callback: F,
    ) -> Self {
        let deadline = DeadlineWatch::start(qos.deadline, &group);
        let shared = Arc::new(SubscriptionShared {
            id: node.backends.next_entity_id(),
            qos,
            queue: LockedQueue::new(qos.history),
            stats: StatsCounters::default(),
            callback: Mutex::new(callback.into_boxed()),
            stamps_straight_arrivals: F::READS_INFO || deadline.is_some(),
            group: group.clone(),
            events: Arc::default(),
            deadline,
            filter,
        });
        let waitable: Arc<dyn Waitable> = shared.clone();
        group.add(Arc::downgrade(&waitable));
        let registration = node.types.register(T::TYPE_HASH, T::TYPE_DESCRIPTION);
        Self {
            shared,
            topic,
            node,
            _type_registration: registration,
        }
    }

    /// The fully qualified topic name (after expansion and remapping).
    pub fn topic_name(&self) -> &str {
        &self.topic
    }

    pub fn qos(&self) -> &QosProfile {
        &self.shared.qos
    }

    pub fn stats(&self) -> SubscriptionStats {
        let counters = &self.shared.stats;
        SubscriptionStats {
            received: counters.received.load(Ordering::Relaxed),
            overwritten: counters.overwritten.load(Ordering::Relaxed),
            expired: counters.expired.load(Ordering::Relaxed),
            malformed: counters.malformed.load(Ordering::Relaxed),
            filtered_out: self.shared.filter.filtered_out(),
        }
    }

    /// Replaces the content filter: from now on only messages for which `filter_expression`
    /// holds reach the callback, on every path (rclcpp's `set_content_filter`; see
    /// [`crate::content_filter`] for the language). An empty expression removes the filter,
    /// and does nothing without one (where rmw_fastrtps fails). Other processes hear of the
    /// new filter (the RTPS reader announces it again, so a Fast DDS writer filters with it;
    /// [`Self::acknowledged_publisher_count`] falls back until each RTPS peer acknowledged it);
    /// messages already queued stay.
    ///
    /// # Errors
    /// [`ContentFilterError`] saying what is wrong with the expression or a parameter, and
    /// where; the filter in place stays.
    pub fn set_content_filter(
        &self,
        filter_expression: &str,
        expression_parameters: &[&str],
    ) -> Result<(), ContentFilterError> {
        self.shared.filter.set_and_announce(
            (filter_expression, expression_parameters),
            &self.node.backends,
            self.shared.id,
        )
    }

    /// The content filter's expression and parameters, `None` without one (rclcpp's
    /// `get_content_filter`, which throws instead; Rust names take no `get_`).
    pub fn content_filter(&self) -> Option<ContentFilterOptions> {
        self.shared.filter.options()
    }

    /// Whether a content filter is set (rclcpp's name).
    pub fn is_cft_enabled(&self) -> bool {
        self.shared.filter.is_enabled()
    }

    /// `REQUESTED_INCOMPATIBLE_QOS`: publishers this subscription could not match.
    pub fn incompatible_qos_status(&self) -> IncompatibleQosStatus {
        self.shared.events.take()
    }

    /// Calls `callback` whenever an incompatible publisher is found (on the thread that
    /// created the publisher).
    pub fn on_incompatible_qos(
        &self,
        callback: impl FnMut(IncompatibleQosStatus) + Send + 'static,
    ) {
        self.shared.events.set_callback(Box::new(callback));
    }
    /// `LIVELINESS_CHANGED`: matched publishers alive and not alive. Every matched publisher
    /// is alive but those in other processes with a finite liveliness lease (QoS
    /// `liveliness_lease`) that let it run out; the ROS default, an infinite lease, is always
    /// alive.
    pub fn liveliness_changed_status(&self) -> crate::vocabulary::events::LivelinessChangedStatus {
        self.shared.events.liveliness_changed.take()
    }

    /// Calls `callback` on every liveliness change: a publisher matched or went away (on the
    /// thread that created or dropped it in this context, on the network thread for other
    /// processes'), or one's lease ran out or it asserted itself again (on the network
    /// thread).
    pub fn on_liveliness_changed(
        &self,
        callback: impl FnMut(crate::vocabulary::events::LivelinessChangedStatus) + Send + 'static,
    ) {
        self.shared
            .events
            .liveliness_changed
            .set_callback(Box::new(callback));
    }

    /// Publishers matched now, in this context and in other processes, whatever path their
    /// messages take (rclcpp's `get_publisher_count`).
    pub fn publisher_count(&self) -> usize {
        self.shared.events.current_matches()
    }

    /// Of the publishers [`Self::publisher_count`] counts, how many are known to send to this
    /// subscription already. That count says this side discovered a publisher; the publisher
    /// sends here only once its side discovered this subscription, and a message published in
    /// between does not arrive. A publisher in this context counts at once; over RTPS, once
    /// its participant acknowledged this subscription's SEDP announcement (DDSI-RTPS 2.5
    /// §8.5.4.2; see `roslite_rtps::Participant::acknowledging_matches` for the moment that
    /// may remain with other vendors); over a same-host link, once the link's reader attached
    /// to the publisher's writer. Less than `publisher_count` for as long as some publisher
    /// has not got there, which for a peer that never acknowledges is for good.
    pub fn acknowledged_publisher_count(&self) -> usize {
        self.node
            .acknowledged_publishers(self.shared.id, self.publisher_count())
    }

    /// `SUBSCRIPTION_MATCHED`: publishers matched now and so far, with the changes since the
    /// status was last read or passed to the `on_matched` callback.
    pub fn matched_status(&self) -> MatchedStatus {
        self.shared.events.take_matched()
    }

    /// Calls `callback` whenever a publisher matches or goes away: on the thread that created
    /// or dropped the endpoint in this context, on the network thread for other processes'
    /// (rclcpp's `matched_callback`).
    pub fn on_matched(&self, callback: impl FnMut(MatchedStatus) + Send + 'static) {
        self.shared.events.matched.set_callback(Box::new(callback));
    }

    /// `SAMPLE_LOST`: messages of publishers in other processes that will never reach this
    /// subscription, with the increase since the status was last read or passed to the
    /// `on_message_lost` callback (see [`MessageLostStatus`] for what each path counts).
    pub fn message_lost_status(&self) -> MessageLostStatus {
        self.shared.events.take_message_lost()
    }

    /// Calls `callback` whenever messages are found lost (rclcpp's `message_lost_callback`):
    /// on the thread that receives from the path that lost them, right before it delivers
    /// the message after them. Its `total_count_change` is the loss just found: the changes
    /// since the previous callback (or a read of the status), as DDS and rclcpp count them.
    pub fn on_message_lost(&self, callback: impl FnMut(MessageLostStatus) + Send + 'static) {
        self.shared.events.on_message_lost(Box::new(callback));
    }

    /// `REQUESTED_DEADLINE_MISSED`: deadline periods (QoS `deadline`) that ended without a
    /// message, counted from the first message on, whichever path it came by. Always zero
    /// without a deadline. Counted while the node is spun (see [`Self::on_deadline_missed`]).
    pub fn deadline_missed_status(&self) -> DeadlineMissedStatus {
        DeadlineWatch::take_status(self.shared.deadline.as_deref())
    }

    /// Calls `callback` when deadline periods end without a message (rclcpp's
    /// `deadline_callback`). It runs in the executor spinning this node, in the subscription's
    /// callback group, which wakes for the end of each period: like a timer, only while the
    /// node is spun. Never called without a QoS deadline.
    pub fn on_deadline_missed(&self, callback: impl FnMut(DeadlineMissedStatus) + Send + 'static) {
        DeadlineWatch::set_callback(self.shared.deadline.as_deref(), callback);
    }
}

impl<T: Message> Drop for Subscription<T> {
    fn drop(&mut self) {
        self.node
            .backends
            .subscription_removed(&self.topic, self.shared.id);
    }
}

/// The callback shapes a subscription accepts, like rclcpp's: by value (takes ownership), by
/// reference, or as a shared `Arc`, each optionally with [`MessageInfo`].
///
/// Closures must name their parameter type (`|msg: String| ...`) so the shape can be chosen.
pub trait SubscriptionCallback<T, Shape>: Send + 'static {
    /// The callback takes a [`MessageInfo`]: only then is a message handed to it straight
    /// stamped with its arrival time.
    #[doc(hidden)]
    const READS_INFO: bool = false;
    #[doc(hidden)]
    fn into_boxed(self) -> BoxedCallback<T>;
}

/// Markers for [`SubscriptionCallback`] shapes.
pub mod shape {
    pub struct Owned;
    pub struct OwnedWithInfo;
    pub struct Borrowed;
    pub struct BorrowedWithInfo;
    pub struct Shared;
    pub struct SharedWithInfo;
}

impl<T: Message, F: FnMut(T) + Send + 'static> SubscriptionCallback<T, shape::Owned> for F {
    fn into_boxed(mut self) -> BoxedCallback<T> {
        Box::new(move |message, _| self(message.into_owned()))
    }
}

impl<T: Message, F: FnMut(T, &MessageInfo) + Send + 'static>
    SubscriptionCallback<T, shape::OwnedWithInfo> for F
{
    const READS_INFO: bool = true;

    fn into_boxed(mut self) -> BoxedCallback<T> {
        Box::new(move |message, info| self(message.into_owned(), info))
    }
}

impl<T: Message, F: FnMut(&T) + Send + 'static> SubscriptionCallback<T, shape::Borrowed> for F {
    fn into_boxed(mut self) -> BoxedCallback<T> {
        Box::new(move |message, _| self(message.get()))
    }
}

impl<T: Message, F: FnMut(&T, &MessageInfo) + Send + 'static>
    SubscriptionCallback<T, shape::BorrowedWithInfo> for F
{
    const READS_INFO: bool = true;

    fn into_boxed(mut self) -> BoxedCallback<T> {
        Box::new(move |message, info| self(message.get(), info))
    }
}

impl<T: Message, F: FnMut(Arc<T>) + Send + 'static> SubscriptionCallback<T, shape::Shared> for F {
    fn into_boxed(mut self) -> BoxedCallback<T> {
        Box::new(move |message, _| self(message.into_shared()))
    }
}

impl<T: Message, F: FnMut(Arc<T>, &MessageInfo) + Send + 'static>
    SubscriptionCallback<T, shape::SharedWithInfo> for F
{
    const READS_INFO: bool = true;

    fn into_boxed(mut self) -> BoxedCallback<T> {
        Box::new(move |message, info| self(message.into_shared(), info))
    }
}

pub(crate) struct PublisherShared<T: Message> {
    pub(crate) id: u64,
    qos: QosProfile,
    sequence: AtomicU64,
    matched: SnapshotList<Arc<SubscriptionShared<T>>>,
    /// `matched.len()`, read without the lock: most publishers have no subscription in their
    /// own process, and a publish then skips the lock.
    matched_count: AtomicUsize,
    /// The last `depth` messages (of each instance of a keyed type), kept for late-joining
    /// transient-local subscriptions.
    history: Mutex<KeptItems<(Arc<T>, MessageInfo)>>,
    /// Outlets to other processes, by an id the transport chose.
    remote: SnapshotList<(u64, Arc<dyn RemoteOutlet>)>,
    send_counters: SendCounters,
    pub(crate) events: Arc<IncompatibleQos>,
    /// `OFFERED_DEADLINE_MISSED`, with a QoS deadline.
    deadline: Option<Arc<DeadlineWatch>>,
}

impl<T: Message> PublisherShared<T> {
    /// The next message's sequence number and source timestamp (now); a publish starts a
    /// new deadline period.
    fn next_info(&self) -> MessageInfo {
        let now = Instant::monotonic_now();
        if let Some(deadline) = &self.deadline {
            deadline.restart(now);
        }
        MessageInfo {
            source_timestamp: now,
            received_timestamp: Instant::ZERO,
            publication_sequence_number: self.sequence.fetch_add(1, Ordering::Relaxed) + 1,
            publisher_id: self.id,
            publisher_gid: [0; 16],
            from_intra_process: true,
        }
    }

    /// The outlets a message goes to: those active now, in attach order, except the one with
    /// id `except` (which already holds the message in its loan). The outlets are asked
    /// outside the lock (one may call into a transport that attaches outlets), from a
    /// snapshot.
    fn active_outlets(&self, except: Option<u64>) -> ActiveOutlets {
        let mut active = ActiveOutlets {
            all: self.outlets(),
            first_64: 0,
            beyond_64: Vec::new(),
        };
        for (index, (id, outlet)) in active.all.iter().enumerate() {
            if Some(*id) == except {
                continue;
            }
            if !outlet.is_active() {
                continue;
            }
            if index < 64 {
                active.first_64 |= 1 << index;
            } else {
                active.beyond_64.push(index);
            }
        }
        active
    }

    /// A snapshot of the outlets.
    pub(crate) fn outlets(&self) -> OutletList {
        self.remote.snapshot()
    }

    /// Whether a message published now would be kept or delivered in this process (so a loaned
    /// message must be decoded for it).
    fn wants_local(&self) -> bool {
        self.qos.durability == Durability::TransientLocal
            || self.matched_count.load(Ordering::Acquire) > 0
    }

    /// `message` serialized for the active outlets, or already sent: through the only active
    /// outlet, in place, when no subscription in this process takes it (`local` false; one
    /// taking it would otherwise wait behind a blocked send).
    fn serialize_for_others(&self, message: &T, info: &MessageInfo, local: bool) -> ToOthers {
        let active = self.active_outlets(None);
        let alone = active.single().filter(|_| !local);
        if let Some(outlet) = alone {
            let remote = info.as_serialized();
            if let Some(sent) = send_in_place(&**outlet, message, &self.send_counters, &remote) {
                return ToOthers::Sent(sent);
            }
        }
        ToOthers::Serialized(if active.is_empty() {
            Ok(None)
        } else {
            Outgoing::serialize(message, active, &self.send_counters).map(Some)
        })
    }

    /// Keeps `message` for late joiners (transient local) and hands it to every matched
    /// subscription in this context. A wait for room gives up at `deadline`; `None`:
    /// `max_blocking_time` after the wait starts.
    ///
    /// # Errors
    /// [`SendTimeout`] if a reliable keep-all subscription had no room for it (see
    /// [`SubscriptionShared::deliver_published`]); the others got it.
    fn deliver_local(
        &self,
        message: Arc<T>,
        info: MessageInfo,
        mut deadline: Option<std::time::Instant>,
    ) -> Result<(), SendTimeout> {
        let matched = if self.qos.durability == Durability::TransientLocal {
            let mut history = self.history.lock().unwrap_or_else(PoisonError::into_inner);
            history.keep_for_late_joiners(
                self.qos.history,
                (message.clone(), info),
                typed_instance(&*message),
            );
            // Under the history lock, as `connect` replays and matches under it: a
            // subscription matching now gets this message either from the replay or from
            // here, not from both.
            self.matched.snapshot()
        } else if self.matched_count.load(Ordering::Acquire) == 0 {
            return Ok(());
        } else {
            self.matched.snapshot()
        };
        let mut delivered = Ok(());
        if let Some((last, others)) = matched.split_last() {
            for subscription in others {
                let result = subscription.deliver_published(message.clone(), info, &mut deadline);
                delivered = delivered.and(result);
            }
            delivered = delivered.and(last.deliver_published(message, info, &mut deadline));
        }
        delivered
    }
}

impl<T: Message> PublisherLink for PublisherShared<T> {
    fn connect(&self, record: &EndpointRecord) -> bool {
        let transient_local = record.qos.durability == Durability::TransientLocal;
        let history = self.history.lock().unwrap_or_else(PoisonError::into_inner);
        if let Ok(subscription) = record.link.clone().downcast::<SubscriptionShared<T>>() {
            if transient_local {
                for (message, info) in history.iter() {
                    subscription.deliver(message.clone(), *info);
                }
            }
            let count = self.matched.push(subscription);
            self.matched_count.store(count, Ordering::Release);
            return true;
        }
        // Another Rust type for the same ROS type (a tool's dynamic subscription, or a second
        // generated crate): deliver through CDR, like to another process.
        let Some(sink) = record.sink.clone() else {
            return false;
        };
        if transient_local {
            for (message, info) in history.iter() {
                if let Ok(bytes) = roslite_cdr::to_vec(&**message, Endianness::Little) {
                    sink.deliver_serialized(&SharedBuf::from_vec(bytes), *info);
                }
            }
        }
        self.attach_remote(record.id, Arc::new(SinkOutlet(sink)));
        true
    }

    fn disconnect(&self, subscription_id: u64) {
        let count = self.matched.retain(|s| s.id != subscription_id);
        self.matched_count.store(count, Ordering::Release);
        self.detach_remote(subscription_id);
    }

    fn attach_remote(&self, id: u64, outlet: Arc<dyn RemoteOutlet>) {
        self.remote.push((id, outlet));
    }

    fn detach_remote(&self, id: u64) {
        self.remote.retain(|(i, _)| *i != id);
    }
}

/// Publishes messages of type `T` on one topic. Dropping it unadvertises.
pub struct Publisher<T: Message> {
    shared: Arc<PublisherShared<T>>,
    topic: String,
    node: Arc<EndpointHost>,
    _type: PhantomData<fn(T)>,
    _type_registration: Option<TypeRegistration>,
}

impl<T: Message> Publisher<T> {
    pub(crate) fn new(node: Arc<EndpointHost>, topic: String, qos: QosProfile) -> Self {
        let shared = Arc::new(PublisherShared {
            id: node.backends.next_entity_id(),
            qos,
            sequence: AtomicU64::new(0),
            matched: SnapshotList::default(),
            matched_count: AtomicUsize::new(0),
            history: Mutex::default(),
            remote: SnapshotList::default(),
            send_counters: SendCounters::default(),
            events: Arc::default(),
            // As rclcpp's publisher event handlers: in the node's default group.
            deadline: DeadlineWatch::start(qos.deadline, &node.default_group),
        });
        let registration = node.types.register(T::TYPE_HASH, T::TYPE_DESCRIPTION);
        Self {
            shared,
            topic,
            node,
            _type: PhantomData,
            _type_registration: registration,
        }
    }

    pub(crate) fn link(&self) -> (Arc<dyn std::any::Any + Send + Sync>, Arc<dyn PublisherLink>) {
        (self.shared.clone(), self.shared.clone())
    }

    pub(crate) fn id(&self) -> u64 {
        self.shared.id
    }

    pub(crate) fn events(&self) -> Arc<IncompatibleQos> {
        self.shared.events.clone()
    }

    /// Sends `message` to every matched subscription. Local subscriptions receive this very
    /// message (no serialization, no copy of its buffers); subscribers in other processes get
    /// it serialized once for all of them, straight into shared memory when some are on this
    /// host.
    ///
    /// Bulk data can instead be written straight into shared memory: see [`Self::loan`].
    ///
    /// # Errors
    /// [`PublishError::Serialize`] if it must be serialized and cannot be; local subscriptions
    /// have received it even then. A message holding a reserved sequence
    /// ([`Seq::reserved`](roslite_cdr::Seq::reserved)) is meant for [`Self::loan`]: here it
    /// fails with `Serialize(EncodeError::ReservedSequence)` whenever it must be serialized,
    /// and local subscriptions see that sequence empty.
    /// [`PublishError::Timeout`] after waiting `max_blocking_time` (100 ms) for a reliable
    /// keep-all subscription that had no room (in this process: [`KEEP_ALL_MAX_SAMPLES`](crate::vocabulary::qos::KEEP_ALL_MAX_SAMPLES)
    /// queued; at once when this thread holds the only turn that could take them); every
    /// other subscription got the message.
    pub fn publish(&self, message: T) -> Result<(), PublishError> {
        let shared = &self.shared;
        if shared.wants_local() {
            return self.publish_shared(Arc::new(message));
        }
        // Nobody in this process takes or keeps it: nothing to share it with.
        let info = shared.next_info();
        match shared.serialize_for_others(&message, &info, false) {
            ToOthers::Sent(result) => result,
            ToOthers::Serialized(outgoing) => Outgoing::send_serialized(outgoing, &info),
        }
    }

    /// Sends a message that is already shared; subscriptions taking ownership get a copy only
    /// if the caller (or another subscription) still holds it when their callback runs.
    ///
    /// # Errors
    /// As [`Self::publish`].
    pub fn publish_shared(&self, message: Arc<T>) -> Result<(), PublishError> {
        let shared = &self.shared;
        let info = shared.next_info();
        // Serialize before the local hand-off, which may move the last reference away.
        let local = shared.wants_local();
        let outgoing = match shared.serialize_for_others(&message, &info, local) {
            ToOthers::Sent(result) => {
                let delivered = shared.deliver_local(message, info, None);
                return result.and(delivered.map_err(PublishError::from));
            }
            ToOthers::Serialized(outgoing) => outgoing,
        };
        let delivered = shared.deliver_local(message, info, None);
        Outgoing::send_serialized(outgoing, &info).and(delivered.map_err(PublishError::from))
    }

    /// How this publisher's messages left for other processes: serializations, how many went
    /// straight into shared memory, copies made on the send side, and per-outlet counters.
    pub fn send_stats(&self) -> SendStats {
        let counters = &self.shared.send_counters;
        SendStats {
            serialized: counters.serialized.load(Ordering::Relaxed),
            serialized_in_place: counters.serialized_in_place.load(Ordering::Relaxed),
            copied_out_bytes: counters.copied_out_bytes.load(Ordering::Relaxed),
            loans_published: counters.loans_published.load(Ordering::Relaxed),
            outlets: self
                .shared
                .outlets()
                .iter()
                .filter_map(|(_, outlet)| outlet.stats())
                .collect(),
        }
    }

    pub fn topic_name(&self) -> &str {
        &self.topic
    }

    pub fn qos(&self) -> &QosProfile {
        &self.shared.qos
    }

    /// Subscriptions matched now, in this context and in other processes, whatever path
    /// their messages take (rclcpp's `get_subscription_count`). A subscription in another
    /// process counts once discovery has matched it.
    pub fn subscription_count(&self) -> usize {
        self.shared.events.current_matches()
    }

    /// Of the subscriptions [`Self::subscription_count`] counts, how many are known to take
    /// this publisher's messages already. That count says this side discovered a
    /// subscription; the subscription accepts messages only once its side discovered this
    /// publisher. A subscription in this context counts at once; over RTPS, once its
    /// participant acknowledged this publisher's SEDP announcement (DDSI-RTPS 2.5 §8.5.4.2;
    /// see `roslite_rtps::Participant::acknowledging_matches` for the moment that may remain
    /// with other vendors); over a same-host link, once its reader attached to this
    /// publisher's writer (a writer's endpoint does not learn which subscription a reader
    /// serves: the attached readers are counted against the pairs). Less than
    /// `subscription_count` for as long as some subscription has not got there.
    pub fn acknowledged_subscription_count(&self) -> usize {
        self.node
            .acknowledged_subscriptions(self.shared.id, self.subscription_count())
    }

    /// `PUBLICATION_MATCHED`: subscriptions matched now and so far, with the changes since the
    /// status was last read or passed to the `on_matched` callback.
    pub fn matched_status(&self) -> MatchedStatus {
        self.shared.events.take_matched()
    }

    /// Calls `callback` whenever a subscription matches or goes away: on the thread that
    /// created or dropped the endpoint in this context, on the network thread for other
    /// processes' (rclcpp's `matched_callback`).
    pub fn on_matched(&self, callback: impl FnMut(MatchedStatus) + Send + 'static) {
        self.shared.events.matched.set_callback(Box::new(callback));
    }

    /// `OFFERED_INCOMPATIBLE_QOS`: subscriptions this publisher could not match.
    pub fn incompatible_qos_status(&self) -> IncompatibleQosStatus {
        self.shared.events.take()
    }

    /// Calls `callback` whenever an incompatible subscription is found (on the thread that
    /// created the subscription).
    pub fn on_incompatible_qos(
        &self,
        callback: impl FnMut(IncompatibleQosStatus) + Send + 'static,
    ) {
        self.shared.events.set_callback(Box::new(callback));
    }
    /// `LIVELINESS_LOST`: how often this publisher (liveliness MANUAL_BY_TOPIC with a finite
    /// lease) went a whole lease without publishing.
    pub fn liveliness_lost_status(&self) -> crate::vocabulary::events::LivelinessLostStatus {
        self.shared.events.liveliness_lost.take()
    }

    /// Calls `callback` each time liveliness is lost (on the network thread).
    pub fn on_liveliness_lost(
        &self,
        callback: impl FnMut(crate::vocabulary::events::LivelinessLostStatus) + Send + 'static,
    ) {
        self.shared
            .events
            .liveliness_lost
            .set_callback(Box::new(callback));
    }

    /// `OFFERED_DEADLINE_MISSED`: deadline periods (QoS `deadline`) that ended without a
    /// publish (or loaned publish), counted from the first one on, whether or not anything
    /// is matched. Always zero without a deadline. Counted while the node is spun (see
    /// [`Self::on_deadline_missed`]).
    pub fn deadline_missed_status(&self) -> DeadlineMissedStatus {
        DeadlineWatch::take_status(self.shared.deadline.as_deref())
    }

    /// Calls `callback` when deadline periods end without a publish (rclcpp's
    /// `deadline_callback`). It runs in the executor spinning this node, in the node's default
    /// callback group, which wakes for the end of each period: like a timer, only while the
    /// node is spun. Never called without a QoS deadline.
    pub fn on_deadline_missed(&self, callback: impl FnMut(DeadlineMissedStatus) + Send + 'static) {
        DeadlineWatch::set_callback(self.shared.deadline.as_deref(), callback);
    }
}

impl<T: Message> Drop for Publisher<T> {
    fn drop(&mut self) {
        self.node
            .backends
            .publisher_removed(&self.topic, self.shared.id);
    }
}

#[cfg(test)]
mod keep_all_tests {
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    use roslite_msgs::std_msgs::msg::UInt32;

    use crate::vocabulary::qos::KEEP_ALL_MAX_SAMPLES;
    use crate::{Context, ContextOptions, Executor, Node, Publisher, QosProfile, Subscription};

    /// A keep-all subscription on "room" holding `KEEP_ALL_MAX_SAMPLES` messages (0, 1, ...)
    /// from `publisher`, in a node nobody has spun yet.
    struct FullQueue {
        executor: Executor,
        node: Node,
        subscription: Subscription<UInt32>,
        publisher: Publisher<UInt32>,
        _ctx: Context,
    }

    impl FullQueue {
        fn new(callback: impl FnMut(UInt32) + Send + 'static) -> Self {
            let ctx = Context::new(ContextOptions::default()).unwrap();
            let node = ctx.create_node("room").unwrap();
            let executor = Executor::new(&ctx);
            executor.add_node(&node);
            let qos = QosProfile::DEFAULT.keep_all();
            let subscription = node.create_subscription("room", qos, callback).unwrap();
            let publisher = node.create_publisher::<UInt32>("room", qos).unwrap();
            for data in 0..Self::BOUND {
                publisher.publish(UInt32 { data }).unwrap();
            }
            Self {
                executor,
                node,
                subscription,
                publisher,
                _ctx: ctx,
            }
        }

        const BOUND: u32 = KEEP_ALL_MAX_SAMPLES as u32;

        /// Returns once a publish waits for room in the subscription's queue.
        fn until_a_publish_waits(&self) {
            let start = Instant::now();
            while self.subscription.shared.queue.lock().waiting_paths() == 0 {
                assert!(
                    start.elapsed() < Duration::from_secs(60),
                    "the publish never waited"
                );
                std::thread::yield_now();
            }
        }
    }

    /// A publisher waiting for room in a full keep-all queue of this process goes on as soon
    /// as a take makes room: the take unparks it. The wait is given a deadline a minute out,
    /// so the test does not depend on how soon this machine schedules each thread.
    #[test]
    fn a_publish_waiting_for_room_goes_on_when_a_take_makes_room() {
        let got = Arc::new(Mutex::new(Vec::new()));
        let sink = got.clone();
        let full = FullQueue::new(move |m| sink.lock().unwrap().push(m.data));
        let shared = full.subscription.shared.clone();
        let info = full.publisher.shared.next_info();
        let waiting = std::thread::spawn(move || {
            let mut deadline = Some(Instant::now() + Duration::from_secs(60));
            let message = Arc::new(UInt32 {
                data: FullQueue::BOUND,
            });
            shared.deliver_published(message, info, &mut deadline)
        });
        full.until_a_publish_waits();
        full.executor.spin_some();
        assert_eq!(waiting.join().unwrap(), Ok(()), "the take made room");
        full.executor.spin_some();
        let all: Vec<u32> = (0..=FullQueue::BOUND).collect();
        assert_eq!(*got.lock().unwrap(), all);
    }

    /// A subscription matches while a publish of its topic waits for room elsewhere: the
    /// publish delivers from a snapshot of its matched subscriptions and holds no lock that
    /// matching needs. (Holding one made `create_subscription` wait until the publish gave
    /// up: here, with a deadline a minute out, the publish would then time out instead of
    /// going on once the take below makes room.)
    #[test]
    fn a_subscription_matches_while_a_publish_waits_for_room() {
        let full = FullQueue::new(|_| {});
        let shared = full.publisher.shared.clone();
        let info = shared.next_info();
        let waiting = std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(60);
            let message = Arc::new(UInt32 {
                data: FullQueue::BOUND,
            });
            shared.deliver_local(message, info, Some(deadline))
        });
        full.until_a_publish_waits();
        let qos = QosProfile::DEFAULT.keep_all();
        let late = full
            .node
            .create_subscription("room", qos, |_: UInt32| {})
            .unwrap();
        assert_eq!(full.publisher.subscription_count(), 2);
        full.executor.spin_some();
        assert_eq!(waiting.join().unwrap(), Ok(()), "the take made room");
        drop(late);
    }
}

#[cfg(test)]
mod serialize_tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    use super::{send_in_place, serialize_into_loan, serialize_shared, SendCounters, SCRATCH_MAX};
    use crate::seam::{Lent, Outlet, OutletLoan, SendTimeout, SentInPlace, WriteInto};
    use crate::MessageInfo;
    use roslite_cdr::{EncodeError, Endianness};
    use roslite_msgs::geometry_msgs::msg::Twist;
    use roslite_msgs::sensor_msgs::msg::Image;
    use roslite_msgs::std_msgs::msg::String as RosString;

    fn same_as_to_vec<T: crate::Message>(message: &T) {
        let expected = roslite_cdr::to_vec(message, Endianness::Little).unwrap();
        // The reused buffer, then counting first.
        for last_len in [0, SCRATCH_MAX + 1] {
            let last = AtomicUsize::new(last_len);
            let shared = serialize_shared(message, &last).unwrap();
            assert_eq!(&shared[..], &expected[..], "last length {last_len}");
            assert_eq!(last.load(Ordering::Relaxed), expected.len());
        }
    }

    #[test]
    fn shared_serialization_writes_every_byte_as_to_vec_does() {
        same_as_to_vec(&RosString::default());
        // Odd string lengths leave alignment padding before what follows.
        for n in [1, 3, 5, 4096, 40_000] {
            same_as_to_vec(&RosString {
                data: "x".repeat(n),
            });
        }
        same_as_to_vec(&Twist::default());
        let image = Image {
            encoding: "rgb8".into(),
            height: 3,
            width: 333,
            step: 999,
            data: (0..2997u32).map(|i| i as u8).collect::<Vec<u8>>().into(),
            ..Image::default()
        };
        same_as_to_vec(&image);
    }

    /// Lends plain buffers and remembers the length of each one lent (and, for
    /// `send_in_place`, the bytes sent).
    #[derive(Default)]
    struct LendingOutlet {
        lent: Mutex<Vec<usize>>,
        sent: Mutex<Vec<u8>>,
    }

    struct VecLoan {
        buf: Vec<u8>,
        used: usize,
    }

    impl OutletLoan for VecLoan {
        fn write(&mut self, write: &mut WriteInto<'_>) -> Result<(), EncodeError> {
            self.used = write(&mut self.buf)?;
            Ok(())
        }

        fn written(&self) -> &[u8] {
            &self.buf[..self.used]
        }

        fn written_mut(&mut self) -> &mut [u8] {
            &mut self.buf[..self.used]
        }

        fn send(&mut self, _: &MessageInfo) -> Result<(), SendTimeout> {
            Ok(())
        }
    }

    impl Outlet for LendingOutlet {
        fn send(&self, _: &Arc<[u8]>, _: &MessageInfo) -> Result<(), SendTimeout> {
            Ok(())
        }

        fn loan(&self, len: usize) -> Option<Lent> {
            self.lent.lock().unwrap().push(len);
            Some(Lent::Other(Box::new(VecLoan {
                buf: vec![0xEE; len],
                used: 0,
            })))
        }

        fn send_in_place(
            &self,
            len: usize,
            write: &mut WriteInto<'_>,
            _: &MessageInfo,
        ) -> Option<Result<SentInPlace, EncodeError>> {
            self.lent.lock().unwrap().push(len);
            let mut buf = vec![0xEE; len];
            Some(write(&mut buf).map(|used| {
                *self.sent.lock().unwrap() = buf[..used].to_vec();
                SentInPlace {
                    result: Ok(()),
                    shared_memory: true,
                }
            }))
        }
    }

    /// Strings of these lengths in turn, and the room asked for each (loans, or in-place
    /// sends), as `with_room_for` sizes it:
    /// - The first message is counted: its exact length (4 + 4 + 10 + 1 bytes).
    /// - Then sized by the last one with room to spare: 19 + 4 + 256.
    /// - Longer than that (209 + 52 + 256): the first try fails, the message is counted and
    ///   tried again.
    const SIZINGS: [(usize, &[usize]); 4] = [
        (10, &[19]),
        (200, &[279]),
        (1000, &[517, 1009]),
        (3, &[1517]),
    ];

    fn text(len: usize) -> RosString {
        RosString {
            data: "y".repeat(len),
        }
    }

    #[test]
    fn a_loan_is_sized_by_the_last_message_and_counted_only_when_that_is_too_small() {
        let outlet = LendingOutlet::default();
        let last = AtomicUsize::new(0);
        let expect_loans = |message: &RosString, lent: &[usize]| {
            let expected = roslite_cdr::to_vec(message, Endianness::Little).unwrap();
            let loan = serialize_into_loan(&outlet, message, &last)
                .unwrap()
                .unwrap();
            assert_eq!(loan.written(), &expected[..]);
            assert_eq!(last.load(Ordering::Relaxed), expected.len());
            assert_eq!(&*outlet.lent.lock().unwrap(), lent);
            outlet.lent.lock().unwrap().clear();
        };
        for (text_len, lent) in SIZINGS {
            expect_loans(&text(text_len), lent);
        }
    }

    #[test]
    fn a_message_sent_in_place_is_sized_as_a_loan_and_sent_whole() {
        let outlet = LendingOutlet::default();
        let counters = SendCounters::default();
        let info = MessageInfo {
            source_timestamp: crate::Instant::ZERO,
            received_timestamp: crate::Instant::ZERO,
            publication_sequence_number: 1,
            publisher_id: 0,
            publisher_gid: [0; 16],
            from_intra_process: false,
        };
        let expect_sent = |message: &RosString, lent: &[usize]| {
            let expected = roslite_cdr::to_vec(message, Endianness::Little).unwrap();
            let sent = send_in_place(&outlet, message, &counters, &info);
            assert_eq!(sent, Some(Ok(())));
            assert_eq!(&*outlet.sent.lock().unwrap(), &expected);
            assert_eq!(counters.last_len.load(Ordering::Relaxed), expected.len());
            assert_eq!(&*outlet.lent.lock().unwrap(), lent);
            outlet.lent.lock().unwrap().clear();
        };
        // As `serialize_into_loan`: counted first, then the last length with slack, counted
        // again when that was too small.
        for (text_len, lent) in SIZINGS {
            expect_sent(&text(text_len), lent);
        }
        assert_eq!(counters.serialized.load(Ordering::Relaxed), 4);
        assert_eq!(counters.serialized_in_place.load(Ordering::Relaxed), 4);
    }
}

#[cfg(test)]
mod incoming_tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use super::Incoming;

    /// Counts its clones: a by-value callback must get a just-decoded message without one.
    struct CountedClones(Arc<AtomicUsize>);

    impl Clone for CountedClones {
        fn clone(&self) -> Self {
            self.0.fetch_add(1, Ordering::Relaxed);
            Self(self.0.clone())
        }
    }

    #[test]
    fn a_message_held_by_nobody_else_reaches_a_callback_without_a_copy() {
        let clones = Arc::new(AtomicUsize::new(0));
        let unique = Incoming::Unique(CountedClones(clones.clone()));
        assert_eq!(unique.get().0.load(Ordering::Relaxed), 0);
        let _owned = unique.into_owned();
        let _shared = Incoming::Unique(CountedClones(clones.clone())).into_shared();
        let _sole = Incoming::Shared(Arc::new(CountedClones(clones.clone()))).into_owned();
        assert_eq!(clones.load(Ordering::Relaxed), 0, "nobody else held these");

        // Another holder of the same `Arc` (a second subscription in this process) keeps
        // its message: the by-value callback gets a copy.
        let shared = Arc::new(CountedClones(clones.clone()));
        let _copy = Incoming::Shared(shared.clone()).into_owned();
        assert_eq!(clones.load(Ordering::Relaxed), 1);
    }
}
