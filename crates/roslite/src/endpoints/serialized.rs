//! Publishers and subscriptions of types known only at run time, carrying serialized messages
//! (CDR with the encapsulation header): what tools such as `roslite topic echo` and
//! `roslite topic pub` use, with `roslite_msg_gen::dynamic` to turn bytes into values.
//!
//! They join the same topics as typed endpoints: a typed publisher serializes once for them,
//! and their messages reach typed subscriptions through the same decode path as messages from
//! other processes.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use roslite_cdr::key::KeyStruct;
use roslite_cdr::SharedBuf;
use roslite_executor::{CallbackGroup, Instant, Waitable};
use roslite_msgs::description::TypeDescription;
use roslite_msgs::Message;

use crate::endpoints::filtering::FilterState;
use crate::endpoints::host::EndpointHost;
use crate::endpoints::pubsub::{admit_published, PublishError};
pub use crate::endpoints::type_cache::Describe;
use crate::endpoints::type_cache::{TypeCache, TypeRegistration};
use crate::seam::{send_to_each, Outlet, SendTimeout};
use crate::seam::{ContentFilterAnnouncement, FilterVerdict, MessageInfo, SerializedSink};
use crate::seam::{EndpointRecord, PublisherLink};
use crate::vocabulary::content_filter::{ContentFilterError, ContentFilterOptions};
use crate::vocabulary::events::{
    IncompatibleQos, IncompatibleQosStatus, MatchedStatus, MessageLostStatus,
};
use crate::vocabulary::qos::{Durability, History, QosProfile};
use crate::vocabulary::queue::{instance_of, KeptItems, LockedQueue, RoomWaiter, SharedQueue};
use crate::vocabulary::snapshot::SnapshotList;
use crate::vocabulary::time::{monotonic_to_wall, wall_to_monotonic};

/// The names of a message type, as the graph and the wire know it, and the description its
/// node serves for it.
// Equality and hashing leave `describe` out: two function pointers to one function need not
// compare equal, and the type is the same whoever would describe it.
#[derive(Clone, Copy, Debug)]
pub struct TypeInfo {
    /// `std_msgs/msg/String`.
    pub type_name: &'static str,
    /// `std_msgs::msg::dds_::String_`.
    pub dds_type_name: &'static str,
    /// `RIHS01_...`.
    pub type_hash: &'static str,
    /// The key members of a keyed type ([`Message::KEY`]).
    pub key: Option<&'static KeyStruct>,
    /// The REP 2011 type description ([`Message::TYPE_DESCRIPTION`]) the node of an endpoint
    /// of this type serves on `~/get_type_description`; without one the node answers that the
    /// type is not in use, as rcl does for a type it does not know.
    pub description: Option<&'static TypeDescription>,
    /// Without a description at hand: what makes it when the node is first asked for it
    /// ([`Self::described_later`]).
    pub describe: Option<Describe>,
}

impl TypeInfo {
    fn identity(
        &self,
    ) -> (
        &'static str,
        &'static str,
        &'static str,
        Option<&'static KeyStruct>,
        Option<&'static TypeDescription>,
    ) {
        (
            self.type_name,
            self.dds_type_name,
            self.type_hash,
            self.key,
            self.description,
        )
    }
}

impl PartialEq for TypeInfo {
    fn eq(&self, other: &Self) -> bool {
        self.identity() == other.identity()
    }
}

impl Eq for TypeInfo {}

impl std::hash::Hash for TypeInfo {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.identity().hash(state);
    }
}

/// Keeps one copy of each distinct run-time type name for the life of the process, so
/// endpoints can hold `&'static str` like generated types do; bounded by the number of
/// distinct types a process uses.
pub(crate) fn intern(text: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(existing) = names.get(text) {
        return existing;
    }
    let leaked: &'static str = Box::leak(text.to_owned().into_boxed_str());
    names.insert(leaked);
    leaked
}

impl TypeInfo {
    /// The names of a generated type.
    pub fn of<T: Message>() -> Self {
        Self {
            type_name: T::TYPE_NAME,
            dds_type_name: T::DDS_TYPE_NAME,
            type_hash: T::TYPE_HASH,
            key: T::KEY,
            description: T::TYPE_DESCRIPTION,
            describe: None,
        }
    }

    /// A type by name (`pkg/msg/Name`) and hash, without a key or a description (see
    /// [`Self::with_key`], [`Self::with_description`]); `None` if the name is not of that form.
    pub fn new(type_name: &str, type_hash: &str) -> Option<Self> {
        let mut parts = type_name.split('/');
        let (Some(package), Some(kind), Some(name), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        if package.is_empty() || kind.is_empty() || name.is_empty() {
            return None;
        }
        Some(Self {
            type_name: intern(type_name),
            dds_type_name: intern(&format!("{package}::{kind}::dds_::{name}_")),
            type_hash: intern(type_hash),
            key: None,
            description: None,
            describe: None,
        })
    }

    /// The type with key members `key` (a keyed IDL type, see [`Message::KEY`]).
    pub fn with_key(self, key: Option<&'static KeyStruct>) -> Self {
        Self { key, ..self }
    }

    /// The type with its REP 2011 description, for a type known only at run time whose
    /// definition is at hand (built from it, and leaked as type names are: once per type and
    /// process).
    pub fn with_description(self, description: Option<&'static TypeDescription>) -> Self {
        Self {
            description,
            ..self
        }
    }

    /// The type with `describe` making its description when a node is first asked for it,
    /// for a type known only at run time whose description costs memory most nodes would
    /// never use (a description at hand, [`Self::with_description`], wins).
    pub fn described_later(self, describe: Describe) -> Self {
        Self {
            describe: Some(describe),
            ..self
        }
    }

    /// Registers this type with `types` for as long as the registration lives.
    pub(crate) fn register_with(&self, types: &Arc<TypeCache>) -> Option<TypeRegistration> {
        match (self.description, self.describe) {
            (None, Some(describe)) => {
                types.register_later(self.type_hash, self.type_name, describe)
            }
            _ => types.register(self.type_hash, self.description),
        }
    }
}

pub(crate) type SerializedCallback = Box<dyn FnMut(&SharedBuf, &MessageInfo) + Send>;

pub(crate) struct SerializedSubscriptionShared {
    pub(crate) id: u64,
    qos: QosProfile,
    queue: LockedQueue<(SharedBuf, MessageInfo)>,
    /// The type's key: a keep-last queue keeps `depth` messages per instance.
    key: Option<&'static KeyStruct>,
    callback: Mutex<SerializedCallback>,
    group: Arc<CallbackGroup>,
    pub(crate) events: Arc<IncompatibleQos>,
    /// The content filter every message meets before it is queued (read by the type's
    /// description, when the type was given one).
    filter: FilterState,
}

impl SerializedSink for SerializedSubscriptionShared {
    fn filter(&self, payload: &SharedBuf) -> FilterVerdict {
        self.filter.check_bytes(payload.bytes())
    }

    fn content_filter(&self) -> Option<ContentFilterAnnouncement> {
        self.filter.announcement()
    }

    fn deliver_filtered(&self, payload: &SharedBuf, mut info: MessageInfo) -> bool {
        info.received_timestamp = Instant::monotonic_now();
        // As a typed subscription does (`Subscription`'s `deliver_incoming`): from a receive
        // thread, a sleeping executor lends its turn, and with nothing queued before it the
        // message goes straight to the callback, without waking the executor's thread (one
        // thread hop less per message; the C ABI's subscriptions are these).
        let inline = crate::seam::inline_dispatch_allowed();
        let straight = inline && self.queue.is_idle();
        if straight
            && self.group.try_run_inline_with(&mut || {
                let mut callback = self.callback.lock().unwrap_or_else(PoisonError::into_inner);
                callback(payload, &info);
                true
            })
        {
            return true;
        }
        {
            let instance = match self.qos.history {
                History::KeepLast(_) => instance_of(self.key, payload.bytes()),
                History::KeepAll => None,
            };
            let mut queue = self.queue.lock();
            queue.push_instance((payload.clone(), info), instance);
        }
        // Asked once: a turn refused just now for the message above is not asked again (the
        // notification wakes the executor if it fell asleep in between).
        if inline && !straight && self.group.try_run_inline(self) {
            return true;
        }
        self.group.notify();
        true
    }

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
}

impl Waitable for SerializedSubscriptionShared {
    fn is_ready(&self, _now: Instant) -> bool {
        !self.queue.lock().is_empty()
    }

    fn execute(&self) -> bool {
        let (next, room) = self.queue.lock().pop_front();
        room.into_iter().for_each(|waiter| waiter());
        let Some((payload, info)) = next else {
            return false;
        };
        let mut callback = self.callback.lock().unwrap_or_else(PoisonError::into_inner);
        callback(&payload, &info);
        true
    }
}

/// Receives serialized messages of a run-time type. Dropping it unsubscribes.
pub struct SerializedSubscription {
    pub(crate) shared: Arc<SerializedSubscriptionShared>,
    topic: String,
    node: Arc<EndpointHost>,
    _type_registration: Option<TypeRegistration>,
}

impl SerializedSubscription {
    pub(crate) fn new(
        node: Arc<EndpointHost>,
        group: Arc<CallbackGroup>,
        topic: String,
        qos: QosProfile,
        ty: TypeInfo,
        filter: FilterState,
        callback: impl FnMut(&SharedBuf, &MessageInfo) + Send + 'static,
    ) -> Self {
        let shared = Arc::new(SerializedSubscriptionShared {
            id: node.backends.next_entity_id(),
            qos,
            queue: LockedQueue::new(qos.history),
            key: ty.key,
            callback: Mutex::new(Box::new(callback)),
            group: group.clone(),
            events: Arc::default(),
            filter,
        });
        let waitable: Arc<dyn Waitable> = shared.clone();
        group.add(Arc::downgrade(&waitable));
        let registration = ty.register_with(&node.types);
        Self {
            shared,
            topic,
            node,
            _type_registration: registration,
        }
    }

    pub fn topic_name(&self) -> &str {
        &self.topic
    }

    /// The QoS the subscription was made with.
    pub fn qos(&self) -> &QosProfile {
        &self.shared.qos
    }

    /// While `keep` is set, the queue of messages waiting for the callback keeps every
    /// message that arrives (up to [`KEEP_ALL_MAX_SAMPLES`](crate::qos::KEEP_ALL_MAX_SAMPLES)),
    /// whatever the keep-last depth; reset, it keeps the newest `depth` again. For a host
    /// whose callback takes each message into a mailbox of its own while it moves the node to
    /// another process (roslite-wasm, docs/migration.md): a shallow queue would overwrite a
    /// message whenever the host's thread is not scheduled before the next one arrives, and
    /// neither copy of the node would ever get it.
    pub fn keep_every_message(&self, keep: bool) {
        self.shared.queue.lock().set_keep_everything(keep);
    }

    /// As [`Subscription::set_content_filter`](crate::Subscription::set_content_filter); the
    /// type must have a description ([`TypeInfo::with_description`]) for a filter to read its
    /// fields.
    ///
    /// # Errors
    /// [`ContentFilterError`], also
    /// [`NoTypeDescription`](crate::content_filter::ContentFilterErrorKind::NoTypeDescription)
    /// for a filter on a type without a description; the filter in place stays.
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

    /// As [`Subscription::content_filter`](crate::Subscription::content_filter).
    pub fn content_filter(&self) -> Option<ContentFilterOptions> {
        self.shared.filter.options()
    }

    /// As [`Subscription::is_cft_enabled`](crate::Subscription::is_cft_enabled).
    pub fn is_cft_enabled(&self) -> bool {
        self.shared.filter.is_enabled()
    }

    /// Messages the content filter dropped so far.
    pub fn filtered_out_count(&self) -> u64 {
        self.shared.filter.filtered_out()
    }

    /// The ROS type name of its messages (`std_msgs/msg/String`).
    pub fn type_name(&self) -> &'static str {
        self.shared.filter.type_name()
    }

    /// Gives the subscription's type the REP 2011 description its content filters read fields
    /// by, when it was made without one (a run-time type whose definition was found later);
    /// the first description given stays.
    pub fn describe_type(&self, description: &'static TypeDescription) {
        self.shared.filter.describe(description);
    }

    /// As [`Subscription::message_lost_status`](crate::Subscription::message_lost_status).
    pub fn message_lost_status(&self) -> MessageLostStatus {
        self.shared.events.take_message_lost()
    }

    /// As [`Subscription::on_message_lost`](crate::Subscription::on_message_lost).
    pub fn on_message_lost(&self, callback: impl FnMut(MessageLostStatus) + Send + 'static) {
        self.shared.events.on_message_lost(Box::new(callback));
    }

    /// As [`Subscription::publisher_count`](crate::Subscription::publisher_count).
    pub fn publisher_count(&self) -> usize {
        self.shared.events.current_matches()
    }

    /// As [`Subscription::acknowledged_publisher_count`](crate::Subscription::acknowledged_publisher_count).
    pub fn acknowledged_publisher_count(&self) -> usize {
        self.node
            .acknowledged_publishers(self.shared.id, self.publisher_count())
    }

    /// As [`Subscription::on_matched`](crate::Subscription::on_matched).
    pub fn on_matched(&self, callback: impl FnMut(MatchedStatus) + Send + 'static) {
        self.shared.events.matched.set_callback(Box::new(callback));
    }

    /// As [`Subscription::on_incompatible_qos`](crate::Subscription::on_incompatible_qos).
    pub fn on_incompatible_qos(
        &self,
        callback: impl FnMut(IncompatibleQosStatus) + Send + 'static,
    ) {
        self.shared.events.set_callback(Box::new(callback));
    }
}

impl Drop for SerializedSubscription {
    fn drop(&mut self) {
        self.node
            .backends
            .subscription_removed(&self.topic, self.shared.id);
    }
}

pub(crate) struct SerializedPublisherShared {
    pub(crate) id: u64,
    qos: QosProfile,
    sequence: AtomicU64,
    /// Local subscriptions (any Rust type), by subscription id.
    sinks: SnapshotList<(u64, Arc<dyn SerializedSink>)>,
    remote: SnapshotList<(u64, Arc<dyn Outlet>)>,
    /// The last `depth` payloads (of each instance of a keyed type) for late-joining
    /// transient-local subscriptions.
    history: Mutex<KeptItems<(SharedBuf, MessageInfo)>>,
    /// The type's key.
    key: Option<&'static KeyStruct>,
    pub(crate) events: Arc<IncompatibleQos>,
}

impl PublisherLink for SerializedPublisherShared {
    fn connect(&self, record: &EndpointRecord) -> bool {
        let Some(sink) = record.sink.clone() else {
            return false;
        };
        // Replayed and matched under the history lock, as a publish keeps and takes its
        // snapshot under it: a message published meanwhile comes once, by one way or the other.
        let history = self.history.lock().unwrap_or_else(PoisonError::into_inner);
        if record.qos.durability == Durability::TransientLocal {
            for (payload, info) in history.iter() {
                sink.deliver_serialized(payload, *info);
            }
        }
        self.sinks.push((record.id, sink));
        true
    }

    fn disconnect(&self, subscription_id: u64) {
        self.sinks.retain(|(id, _)| *id != subscription_id);
    }

    fn attach_remote(&self, id: u64, outlet: Arc<dyn Outlet>) {
        self.remote.push((id, outlet));
    }

    fn detach_remote(&self, id: u64) {
        self.remote.retain(|(i, _)| *i != id);
    }
}

/// A message a transient-local publisher kept for late joiners, as it moves to another
/// process with the publisher ([`SerializedPublisher::kept_for_late_joiners`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeptMessage {
    /// CDR with its encapsulation header.
    pub bytes: Vec<u8>,
    /// When it was published, in ns since the Unix epoch (wall clock: the two processes'
    /// monotonic clocks have nothing in common).
    pub source_time_ns: u64,
    pub publication_sequence_number: u64,
}

/// Why [`SerializedPublisher::continue_from`] refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContinueError {
    /// The publisher published this many messages here already.
    Published(u64),
    /// The kept messages are not numbered one after the other up to the count published.
    NotConsecutive { published: u64 },
}

impl std::fmt::Display for ContinueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Published(n) => write!(
                f,
                "the publisher published {n} message(s) already: it can continue another only before it publishes"
            ),
            Self::NotConsecutive { published } => write!(
                f,
                "the kept messages are not numbered one after the other up to {published}, the count published"
            ),
        }
    }
}

impl std::error::Error for ContinueError {}

/// Publishes serialized messages of a run-time type. Dropping it unadvertises.
pub struct SerializedPublisher {
    pub(crate) shared: Arc<SerializedPublisherShared>,
    topic: String,
    node: Arc<EndpointHost>,
    _type_registration: Option<TypeRegistration>,
}

impl SerializedPublisher {
    pub(crate) fn new(
        node: Arc<EndpointHost>,
        topic: String,
        qos: QosProfile,
        ty: TypeInfo,
    ) -> Self {
        let shared = Arc::new(SerializedPublisherShared {
            key: ty.key,
            id: node.backends.next_entity_id(),
            qos,
            sequence: AtomicU64::new(0),
            sinks: SnapshotList::default(),
            remote: SnapshotList::default(),
            history: Mutex::default(),
            events: Arc::default(),
        });
        let registration = ty.register_with(&node.types);
        Self {
            shared,
            topic,
            node,
            _type_registration: registration,
        }
    }

    pub fn topic_name(&self) -> &str {
        &self.topic
    }

    /// Sends one serialized message (CDR with its 4-byte encapsulation header) to every
    /// matched subscription, local or remote.
    ///
    /// # Errors
    /// [`PublishError::NotSerialized`] if `payload` is too short to hold the header;
    /// [`PublishError::Timeout`] as [`Publisher::publish`](crate::Publisher::publish).
    pub fn publish(&self, payload: &[u8]) -> Result<(), PublishError> {
        if payload.len() < roslite_cdr::Encapsulation::HEADER_LEN {
            return Err(PublishError::NotSerialized);
        }
        let shared = &self.shared;
        let info = MessageInfo {
            source_timestamp: Instant::monotonic_now(),
            received_timestamp: Instant::ZERO,
            publication_sequence_number: shared.sequence.fetch_add(1, Ordering::Relaxed) + 1,
            publisher_id: shared.id,
            publisher_gid: [0; 16],
            from_intra_process: true,
        };
        // Through the only active outlet and nowhere else (no subscription in this context,
        // nothing kept for late joiners): the bytes go straight into its memory (a shared-memory
        // chunk), as a typed publisher serializes into it, instead of into a shared copy first.
        if shared.qos.durability != Durability::TransientLocal && shared.sinks.snapshot().is_empty()
        {
            let remote = shared.remote.snapshot();
            let mut active = remote
                .iter()
                .map(|(_, outlet)| outlet)
                .filter(|outlet| outlet.is_active());
            if let (Some(outlet), None) = (active.next(), active.next()) {
                let mut write = |buf: &mut [u8]| {
                    let used = payload.len().min(buf.len());
                    buf[..used].copy_from_slice(&payload[..used]);
                    Ok(used)
                };
                let serialized = info.as_serialized();
                if let Some(Ok(sent)) = outlet.send_in_place(payload.len(), &mut write, &serialized)
                {
                    return Ok(sent.result?);
                }
            }
        }
        // One copy of the caller's bytes, shared by local and remote receivers.
        let bytes: Arc<[u8]> = Arc::from(payload);
        let local = SharedBuf::from_arc(bytes.clone());
        let sinks = {
            let mut history = shared
                .history
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if shared.qos.durability == Durability::TransientLocal {
                let instance = instance_of(shared.key, &bytes);
                history.keep_for_late_joiners(shared.qos.history, (local.clone(), info), instance);
            }
            // Under the history lock, as `connect` replays and matches (see there).
            shared.sinks.snapshot()
        };
        let mut deadline = None;
        let mut delivered = Ok(());
        for (_, sink) in sinks.iter() {
            delivered =
                delivered.and(sink.deliver_published_serialized(&local, info, &mut deadline));
        }
        // Only the outlets a message would go anywhere through, as a typed publisher does: a
        // volatile RTPS writer whose readers are all reached over shared memory or a Unix
        // socket would otherwise still take every sample into its history and lock the
        // participant for it (about 0.7 us per publish over shm, `roslite bench rtt --api cpp`).
        let remote = shared.remote.snapshot();
        if !remote.is_empty() {
            let info = info.as_serialized();
            let active = remote
                .iter()
                .map(|(_, outlet)| outlet)
                .filter(|outlet| outlet.is_active());
            send_to_each(active, &bytes, &info)?;
        }
        Ok(delivered?)
    }

    /// How many messages this publisher published (the number of the last one).
    pub fn publication_count(&self) -> u64 {
        self.shared.sequence.load(Ordering::Relaxed)
    }

    /// The messages a transient-local publisher keeps for late-joining subscriptions, oldest
    /// first (none for a volatile one): what moves with it to another process
    /// ([`Self::continue_from`]).
    pub fn kept_for_late_joiners(&self) -> Vec<KeptMessage> {
        let history = self
            .shared
            .history
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        history
            .iter()
            .map(|(payload, info)| KeptMessage {
                bytes: payload.bytes().to_vec(),
                source_time_ns: u64::try_from(monotonic_to_wall(info.source_timestamp).as_nanos())
                    .unwrap_or(u64::MAX),
                publication_sequence_number: info.publication_sequence_number,
            })
            .collect()
    }

    /// Goes on as the publisher that published `published` messages elsewhere, the last of
    /// which it kept as `kept` ([`Self::kept_for_late_joiners`] there): a node moved here from
    /// another process (docs/migration.md). Its next message is number `published + 1` on
    /// every path, and a transient-local publisher hands `kept`, under their numbers, to the
    /// subscriptions that match it from now on, here and elsewhere, and to none matched now
    /// (which had them from the old publisher).
    ///
    /// # Errors
    /// [`ContinueError`] if this publisher published already, or `kept` is not numbered
    /// consecutively up to `published`; nothing changes then.
    pub fn continue_from(
        &self,
        published: u64,
        kept: Vec<KeptMessage>,
    ) -> Result<(), ContinueError> {
        let shared = &self.shared;
        let already = shared.sequence.load(Ordering::Relaxed);
        if already > 0 {
            return Err(ContinueError::Published(already));
        }
        let first = published
            .saturating_sub(kept.len() as u64)
            .saturating_add(1);
        let consecutive = kept
            .iter()
            .zip(first..)
            .all(|(m, n)| m.publication_sequence_number == n);
        if !consecutive || kept.len() as u64 > published {
            return Err(ContinueError::NotConsecutive { published });
        }
        let kept = if shared.qos.durability == Durability::TransientLocal {
            kept
        } else {
            Vec::new()
        };
        let now = Instant::monotonic_now();
        let adopted: Vec<(Arc<[u8]>, MessageInfo)> = kept
            .into_iter()
            .map(|m| {
                let info = MessageInfo {
                    source_timestamp: wall_to_monotonic(
                        std::time::Duration::from_nanos(m.source_time_ns),
                        now,
                    ),
                    received_timestamp: Instant::ZERO,
                    publication_sequence_number: m.publication_sequence_number,
                    publisher_id: shared.id,
                    publisher_gid: [0; 16],
                    from_intra_process: true,
                };
                (Arc::from(m.bytes), info)
            })
            .collect();
        {
            let mut history = shared
                .history
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            shared.sequence.store(published, Ordering::Relaxed);
            history.clear();
            for (bytes, info) in &adopted {
                history.keep_for_late_joiners(
                    shared.qos.history,
                    (SharedBuf::from_arc(bytes.clone()), *info),
                    instance_of(shared.key, bytes),
                );
            }
        }
        let serialized: Vec<_> = adopted
            .into_iter()
            .map(|(bytes, info)| (bytes, info.as_serialized()))
            .collect();
        for (_, outlet) in shared.remote.snapshot().iter() {
            outlet.adopt(published, &serialized);
        }
        Ok(())
    }

    /// Local subscriptions currently matched (remote ones are counted by the transport).
    pub fn local_subscription_count(&self) -> usize {
        self.shared.sinks.snapshot().len()
    }

    /// Subscriptions matched now, in this context and in other processes, whatever path their
    /// messages take (rclcpp's `get_subscription_count`).
    pub fn subscription_count(&self) -> usize {
        self.shared.events.current_matches()
    }

    /// As [`Publisher::acknowledged_subscription_count`](crate::Publisher::acknowledged_subscription_count).
    pub fn acknowledged_subscription_count(&self) -> usize {
        self.node
            .acknowledged_subscriptions(self.shared.id, self.subscription_count())
    }

    /// As [`Publisher::on_matched`](crate::Publisher::on_matched).
    pub fn on_matched(&self, callback: impl FnMut(MatchedStatus) + Send + 'static) {
        self.shared.events.matched.set_callback(Box::new(callback));
    }

    /// As [`Publisher::on_incompatible_qos`](crate::Publisher::on_incompatible_qos).
    pub fn on_incompatible_qos(
        &self,
        callback: impl FnMut(IncompatibleQosStatus) + Send + 'static,
    ) {
        self.shared.events.set_callback(Box::new(callback));
    }
}

impl Drop for SerializedPublisher {
    fn drop(&mut self) {
        self.node
            .backends
            .publisher_removed(&self.topic, self.shared.id);
    }
}
