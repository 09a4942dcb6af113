//! The backend seam: what every backend (intra-process delivery, the RTPS network, the
//! same-host links, a user's own) implements, and what endpoints hand them.
//!
//! A [`Backend`] is told about every node, publisher, subscription, service server and client
//! of its context (`BackendSet` tells each in turn, and a backend added later about those
//! that already exist). For a publisher it may attach an [`Outlet`]: from then on each
//! `publish` serializes the message once (CDR with encapsulation header) and hands the bytes
//! to every outlet that [is active](Outlet::is_active). An outlet with memory of its own
//! (shared memory) may [loan](Outlet::loan) the buffer: the message is then serialized straight
//! into it, and the other outlets get a copy of those bytes only if there are any. For a
//! subscription it keeps the [`LocalSubscription`] and calls [`LocalSubscription::deliver`]
//! with serialized messages it receives; they are decoded (large primitive arrays as views
//! into the buffer) and queued exactly like local ones. Services go the same way
//! ([`service`]), and a backend that knows the ROS graph answers graph queries
//! ([`GraphView`]).
//!
//! Nothing here knows a particular backend: the layers below are the vocabulary
//! ([`crate::vocabulary`]) and the message crates; endpoints and backends sit above.

use std::any::Any;
use std::cell::Cell;
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use roslite_cdr::SharedBuf;
use roslite_executor::Instant;

use crate::vocabulary::content_filter::ContentFilterOptions;
use crate::vocabulary::events::IncompatibleQos;
use crate::vocabulary::graph::GraphEndpoint;
use crate::vocabulary::log::Logger;
use crate::vocabulary::qos::{QosPolicyKind, QosProfile};
use crate::vocabulary::queue::RoomWaiter;

pub mod loan;
pub mod outlet;
pub mod service;
mod set;

pub(crate) use loan::{give_back_send_buffer, take_send_buffer, SEND_BUFFER_MAX};
pub use loan::{Lent, OutletLoan, WriteInto};
pub(crate) use outlet::send_to_each;
pub use outlet::{Outlet, OutletStats, SentInPlace};
pub use service::{LocalClient, LocalServer, ReplyChannel};
pub(crate) use set::BackendSet;

/// What a subscription callback may learn about a message besides its content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageInfo {
    /// When `publish` was called, on this process's `CLOCK_MONOTONIC`, on every path: within
    /// the process and over same-host links the publisher's own reading; over RTPS the
    /// writer's INFO_TS (wall clock, RTPS 2.5 §8.3.7.9) moved onto this clock by the offset
    /// between the two clocks at arrival (the arrival time for a writer that sends none).
    /// A subscription's lifespan counts from it.
    pub source_timestamp: Instant,
    /// When the message reached the subscription's queue.
    pub received_timestamp: Instant,
    /// The publisher's sequence number for this message, from 1.
    pub publication_sequence_number: u64,
    /// Process-local id of the publisher.
    pub publisher_id: u64,
    /// The publisher's id across the ROS graph (rmw's `publisher_gid`): its RTPS writer's GUID,
    /// for a message from another participant (over RTPS or a same-host link); all zero for a
    /// publisher of this context. With `publication_sequence_number` it names one message
    /// wherever it is received (a migrated WebAssembly node's hand-over counts on it).
    pub publisher_gid: [u8; 16],
    pub from_intra_process: bool,
}

impl MessageInfo {
    /// This info as the message reaches subscriptions through its serialized form (another
    /// process, or another type for the same ROS type): not intra-process.
    pub(crate) fn as_serialized(self) -> Self {
        Self {
            from_intra_process: false,
            ..self
        }
    }
}

thread_local! {
    /// Set while the calling thread delivers messages from outside any executor (the RTPS
    /// receive thread, after it released the network state): a subscription may then run its
    /// callback right here when its executor sleeps ([`CallbackGroup::try_run_inline`]).
    static INLINE_DISPATCH: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with inline dispatch allowed on this thread (see [`INLINE_DISPATCH`]). The caller
/// must hold no lock a callback could need: a callback may publish.
// Used by the RTPS backend's receiving threads (`backends/rtps/driver.rs`) once they deliver outside its state lock, and by the
// same-host reader threads.
pub(crate) fn with_inline_dispatch<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            INLINE_DISPATCH.with(|c| c.set(self.0));
        }
    }
    let _reset = Reset(INLINE_DISPATCH.with(|c| c.replace(true)));
    f()
}

/// Whether this thread may run a callback inline (see [`with_inline_dispatch`]).
pub(crate) fn inline_dispatch_allowed() -> bool {
    INLINE_DISPATCH.with(Cell::get)
}

/// What a subscription's content filter says of a serialized message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FilterVerdict {
    /// No filter, or the message passes it.
    Passes,
    /// The filter drops it: neither delivered nor lost.
    FilteredOut,
    /// The bytes the filter reads are not a message of the type: malformed.
    Unreadable,
}

/// A subscription as seen by transports: it takes serialized messages (CDR with the
/// encapsulation header) and decodes them into its own type. A message first meets the
/// subscription's content filter ([`Self::filter`]), on every path.
pub(crate) trait SerializedSink: Send + Sync {
    /// What the subscription's content filter says of `payload` (counted by the
    /// subscription).
    fn filter(&self, payload: &SharedBuf) -> FilterVerdict;

    /// Decodes and queues one message the filter let through; false (and counted) if it does
    /// not decode.
    fn deliver_filtered(&self, payload: &SharedBuf, info: MessageInfo) -> bool;

    /// Decodes and queues one message; false (and counted) if it does not decode. A message
    /// the content filter drops is taken (true) and not queued.
    fn deliver_serialized(&self, payload: &SharedBuf, info: MessageInfo) -> bool {
        match self.filter(payload) {
            FilterVerdict::Passes => self.deliver_filtered(payload, info),
            FilterVerdict::FilteredOut => true,
            FilterVerdict::Unreadable => false,
        }
    }

    /// The subscription's content filter as backends announce it; `None` without one.
    fn content_filter(&self) -> Option<ContentFilterAnnouncement> {
        None
    }

    /// For a keep-all subscription without room for `pending` more messages: keeps `waiter`
    /// to call once its callback took enough; otherwise hands it back (see
    /// [`MessageQueue::wait_for_room`](crate::vocabulary::queue::MessageQueue::wait_for_room)).
    fn wait_for_room(&self, pending: usize, waiter: RoomWaiter) -> Result<(), RoomWaiter>;

    /// Whether one more message fits now (always, but for a full keep-all subscription).
    fn has_room(&self) -> bool;

    /// Whether a message published in this process may be delivered now: [`admit_published`](crate::endpoints::pubsub::admit_published)
    /// with this subscription's queue, QoS and callback group.
    ///
    /// # Errors
    /// As [`admit_published`](crate::endpoints::pubsub::admit_published).
    fn admit_published(
        &self,
        deadline: &mut Option<std::time::Instant>,
    ) -> Result<bool, SendTimeout>;

    /// Delivers a serialized message published in this process, if the content filter lets
    /// it through (before anything waits for room or counts it lost) and
    /// [`Self::admit_published`] lets it in.
    ///
    /// # Errors
    /// As [`admit_published`](crate::endpoints::pubsub::admit_published).
    fn deliver_published_serialized(
        &self,
        payload: &SharedBuf,
        info: MessageInfo,
        deadline: &mut Option<std::time::Instant>,
    ) -> Result<(), SendTimeout> {
        if self.filter(payload) == FilterVerdict::Passes && self.admit_published(deadline)? {
            self.deliver_filtered(payload, info);
        }
        Ok(())
    }
}

/// A subscription's content filter as backends announce it to other processes (the RTPS
/// backend: `PID_CONTENT_FILTER_PROPERTY` in the reader's SEDP data).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContentFilterAnnouncement {
    pub options: ContentFilterOptions,
    /// Unique in this process, taken when the subscription got its filter: rmw_fastrtps names
    /// a content-filtered topic `<DDS topic>_filtered_name_<number>`, and so does roslite.
    pub number: u64,
}

/// What the backends know about one endpoint.
#[derive(Clone)]
pub(crate) struct EndpointRecord {
    pub id: u64,
    pub type_name: &'static str,
    pub dds_type_name: &'static str,
    pub type_hash: &'static str,
    pub key: Option<&'static roslite_cdr::key::KeyStruct>,
    pub qos: QosProfile,
    pub node: String,
    pub node_id: u64,
    pub events: Arc<IncompatibleQos>,
    pub logger: Logger,
    /// An `Arc<PublisherShared<T>>` or `Arc<SubscriptionShared<T>>`.
    pub link: Arc<dyn Any + Send + Sync>,
    /// For subscriptions: where transports deliver serialized messages.
    pub sink: Option<Arc<dyn SerializedSink>>,
}

impl EndpointRecord {
    /// What backends are told of this endpoint on `topic`.
    fn describe(&self, topic: &str) -> EndpointDescription {
        EndpointDescription {
            id: self.id,
            topic: topic.to_owned(),
            type_name: self.type_name,
            dds_type_name: self.dds_type_name,
            type_hash: self.type_hash,
            key: self.key,
            qos: self.qos,
            node: self.node.clone(),
            node_id: self.node_id,
        }
    }
}

/// A publisher as seen by the backends: it accepts subscriptions of its own message type.
pub(crate) trait PublisherLink: Send + Sync {
    /// Links a matched subscription: directly if it has this publisher's Rust type, else
    /// through serialization. False if neither is possible.
    fn connect(&self, subscription: &EndpointRecord) -> bool;
    fn disconnect(&self, subscription_id: u64);
    /// Adds an outlet to other processes (a transport's writer for this topic).
    fn attach_remote(&self, id: u64, outlet: Arc<dyn Outlet>);
    fn detach_remote(&self, id: u64);
}

/// A reliable keep-all reader of an outlet had no room for the message during the whole
/// `max_blocking_time` (`qos::MAX_BLOCKING_TIME`, 100 ms), so it did not
/// get it (DDS `write` returning `TIMEOUT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendTimeout;

/// Learns about a context's nodes and endpoints so it can announce them and carry their data:
/// one implementation per way of reaching other endpoints. Every method but the four of
/// publish/subscribe has a default that carries nothing, so a backend implements what it
/// carries.
pub trait Backend: Send + Sync {
    /// A node was created (`namespace` `/`, `name` `talker`); `id` is process-local.
    fn node_added(&self, _id: u64, _namespace: &str, _name: &str) {}
    fn node_removed(&self, _id: u64) {}
    fn publisher_added(&self, publisher: LocalPublisher);
    fn publisher_removed(&self, topic: &str, id: u64);
    fn subscription_added(&self, subscription: LocalSubscription);
    fn subscription_removed(&self, topic: &str, id: u64);
    /// `subscription`'s content filter changed ([`LocalSubscription::content_filter`]): a
    /// backend that announces filters announces the new one. The filter itself runs in the
    /// subscription, on every path.
    fn subscription_filter_changed(&self, _subscription: &LocalSubscription) {}

    /// A service server was created; its requests may come through this backend.
    fn service_server_added(&self, _server: &LocalServer) {}
    fn service_server_removed(&self, _service: &str, _id: u64) {}
    /// A client was created; this backend may carry its requests ([`Self::send_request`]).
    fn service_client_added(&self, _client: &LocalClient) {}
    fn service_client_removed(&self, _id: u64) {}
    /// Whether a server this backend reaches has matched both halves of client `id`.
    fn service_client_ready(&self, _id: u64) -> bool {
        false
    }
    /// Client `id`'s global id (rmw's `rmw_get_gid_for_client`), as servers in other
    /// processes see it in its requests; None where this backend gives the client none.
    fn service_client_gid(&self, _id: u64) -> Option<[u8; 16]> {
        None
    }
    /// A way to answer, from local server `server`, the request whose reply address
    /// ([`ReplyChannel::reply_address`]) is `address`, written by this kind of backend
    /// (perhaps in another process); None if this backend did not write it or does not serve
    /// `server`.
    fn reply_channel(&self, _server: u64, _address: &[u8]) -> Option<Box<dyn ReplyChannel>> {
        None
    }
    /// A server of `service` in this process with ROS type `type_name`, as registered
    /// ([`LocalServer::typed`]): what a client of the same type calls without serializing.
    fn in_process_server(
        &self,
        _service: &str,
        _type_name: &str,
    ) -> Option<Arc<dyn Any + Send + Sync>> {
        None
    }
    /// Sends a request of client `id` (`payload`: CDR with encapsulation header) if this
    /// backend carries the client's requests, and returns the key it went under; `None` if
    /// it was not sent. The first backend that sends a request numbers it: it runs `register`
    /// with the key before any reply can arrive. Backends after it get that `key` and send
    /// under it (or not at all), so a reply over any of them completes the same call.
    fn send_request(
        &self,
        _id: u64,
        _payload: &[u8],
        _key: Option<service::RequestKey>,
        _register: &mut dyn FnMut(service::RequestKey),
    ) -> Option<service::RequestKey> {
        None
    }
    /// Whether this backend reaches other processes, where a client may find its server.
    fn reaches_other_processes(&self) -> bool {
        false
    }

    /// This backend's view of the ROS graph, if it has one.
    fn graph(&self) -> Option<&dyn GraphView> {
        None
    }

    /// What this backend carries to other processes, for graph queries, if it carries any.
    fn paths(&self) -> Option<&dyn PathView> {
        None
    }
}

/// The ROS graph as one backend knows it. A context answers graph queries from the backend
/// that sees the most: the RTPS network when it has one, else intra-process delivery.
pub trait GraphView: Send + Sync {
    /// Every publisher and subscription known, this context's included, in no particular
    /// order (the context's [`crate::context::Graph`] sorts: a sort here would be kept in every
    /// binary through this trait's vtable, whether it queries the graph or not).
    fn endpoints(&self) -> Vec<GraphEndpoint>;
    /// Nodes known, as `(namespace, name)`, in no particular order, possibly repeated.
    fn node_names(&self) -> Vec<(String, String)>;
    /// Services known with their types (`example_interfaces/srv/AddTwoInts`).
    fn service_names_and_types(&self) -> Vec<(String, String)> {
        self.endpoints()
            .into_iter()
            .filter_map(|e| {
                let ty = e.service_type()?.to_owned();
                Some((e.topic, ty))
            })
            .collect()
    }
    /// Remote publishers and subscriptions' topics with their ROS types, in no particular
    /// order, possibly repeated.
    fn remote_topics(&self) -> Vec<(String, String)> {
        Vec::new()
    }
    /// How many participants (processes, DDS applications) other than this one are known.
    fn remote_participant_count(&self) -> usize {
        0
    }
    /// This context's participant GUID prefix on the wire, if it has one.
    fn guid_prefix(&self) -> Option<[u8; 12]> {
        None
    }
}

/// What one backend carries to other processes: a context sums these over its backends (the
/// RTPS network counts the pairs matched over RTPS, the same-host links their own).
pub trait PathView: Send + Sync {
    /// Remote subscriptions of this context's publishers on `topic` this backend carries, by
    /// path: `(over RTPS, over a same-host link)`.
    fn remote_subscriptions_by_path(&self, _topic: &str) -> (usize, usize) {
        (0, 0)
    }
    /// The servers this context's clients of `service` reach through this backend, by path,
    /// as [`Self::remote_subscriptions_by_path`].
    fn service_servers_by_path(&self, _service: &str) -> (usize, usize) {
        (0, 0)
    }
    /// Of the subscriptions this backend matched with local publisher `publisher` (its id),
    /// how many are not known yet to accept its messages: their side has not discovered it
    /// (see [`Publisher::acknowledged_subscription_count`](crate::Publisher::acknowledged_subscription_count)).
    fn unacknowledged_subscriptions(&self, _publisher: u64) -> usize {
        0
    }
    /// Of the publishers this backend matched with local subscription `subscription` (its
    /// id), how many are not known yet to send to it, as
    /// [`Self::unacknowledged_subscriptions`].
    fn unacknowledged_publishers(&self, _subscription: u64) -> usize {
        0
    }
    /// The clients this backend paired with local server `server` (its id): `(matched,
    /// known)`, where a client is known once what it sends reaches the server and what the
    /// server answers reaches it (over RTPS: its participant acknowledged the SEDP
    /// announcements of the server's request reader and of its reply writer; over a
    /// same-host link: the links of both halves are attached). See
    /// [`SerializedService::acknowledged_client_count`](crate::SerializedService::acknowledged_client_count).
    fn service_clients(&self, _server: u64) -> (usize, usize) {
        (0, 0)
    }
    /// Sets the [`transport`](GraphEndpoint::transport) of those remote `endpoints` whose
    /// pairs with this context this backend carries.
    fn mark_carried(&self, _endpoints: &mut [GraphEndpoint]) {}
    /// Service traffic this backend dropped.
    fn service_drops(&self) -> service::ServiceDrops {
        service::ServiceDrops::default()
    }
}

/// What every local endpoint description carries.
#[derive(Clone, Debug, PartialEq)]
pub struct EndpointDescription {
    /// Process-local id, stable for the endpoint's life.
    pub id: u64,
    /// Fully qualified ROS topic name, e.g. `/chatter`.
    pub topic: String,
    /// `std_msgs/msg/String`.
    pub type_name: &'static str,
    /// `std_msgs::msg::dds_::String_`.
    pub dds_type_name: &'static str,
    /// `RIHS01_...`.
    pub type_hash: &'static str,
    /// The key members of a keyed type (IDL `@key`): its DDS endpoints are keyed.
    pub key: Option<&'static roslite_cdr::key::KeyStruct>,
    pub qos: QosProfile,
    /// Fully qualified name of the owning node.
    pub node: String,
    /// Process-local id of the owning node, as given to [`Backend::node_added`].
    pub node_id: u64,
}

/// A local publisher, as a transport sees it.
#[derive(Clone)]
pub struct LocalPublisher {
    pub description: EndpointDescription,
    pub(crate) record: Arc<EndpointRecord>,
    pub(crate) link: Arc<dyn PublisherLink>,
    pub(crate) events: Arc<IncompatibleQos>,
}

impl LocalPublisher {
    /// The publisher of `record` on `topic`, whose messages reach outlets through `link`.
    pub(crate) fn new(topic: &str, record: EndpointRecord, link: Arc<dyn PublisherLink>) -> Self {
        Self {
            description: record.describe(topic),
            events: record.events.clone(),
            record: Arc::new(record),
            link,
        }
    }

    /// Starts sending this publisher's messages to `outlet`; `outlet_id` identifies it for
    /// [`Self::detach`].
    pub fn attach(&self, outlet_id: u64, outlet: Arc<dyn Outlet>) {
        self.link.attach_remote(outlet_id, outlet);
    }

    pub fn detach(&self, outlet_id: u64) {
        self.link.detach_remote(outlet_id);
    }

    /// Reports a remote subscription this publisher cannot serve (`OFFERED_INCOMPATIBLE_QOS`):
    /// counted in its `incompatible_qos_status` and passed to its callback.
    pub fn report_incompatible_qos(&self, policy: QosPolicyKind) {
        self.events.record(policy);
    }
}

/// A local subscription, as a transport sees it.
#[derive(Clone)]
pub struct LocalSubscription {
    pub description: EndpointDescription,
    pub(crate) record: Arc<EndpointRecord>,
    pub(crate) sink: Arc<dyn SerializedSink>,
    pub(crate) events: Arc<IncompatibleQos>,
}

impl LocalSubscription {
    /// The subscription of `record` on `topic`; `None` if it takes no serialized messages
    /// (a record without a sink is a publisher's).
    pub(crate) fn new(topic: &str, record: EndpointRecord) -> Option<Self> {
        Some(Self {
            description: record.describe(topic),
            sink: record.sink.clone()?,
            events: record.events.clone(),
            record: Arc::new(record),
        })
    }

    /// Decodes and queues a message received from another process; false if the bytes are not
    /// a valid message of this type (the subscription counts it as malformed and drops it).
    /// A message the subscription's content filter drops is taken (true) and not queued:
    /// it is neither delivered nor lost.
    pub fn deliver(&self, payload: &SharedBuf, info: MessageInfo) -> bool {
        self.sink.deliver_serialized(payload, info)
    }

    /// The subscription's content filter, for a backend to announce (`None` without one);
    /// [`Backend::subscription_filter_changed`] says when it changes.
    pub fn content_filter(&self) -> Option<ContentFilterAnnouncement> {
        self.sink.content_filter()
    }

    /// For a keep-all subscription whose callback has [`KEEP_ALL_MAX_SAMPLES`] messages (less
    /// `pending` on their way) to take: keeps `waiter` and calls it once the callback took
    /// one, and returns true; false (dropping `waiter`) when there is room. A path that gets
    /// true stops handing over messages until then, which holds the publisher back.
    ///
    /// [`KEEP_ALL_MAX_SAMPLES`]: crate::vocabulary::qos::KEEP_ALL_MAX_SAMPLES
    pub fn wait_for_room(&self, pending: usize, waiter: impl FnOnce() + Send + 'static) -> bool {
        self.sink.wait_for_room(pending, Box::new(waiter)).is_ok()
    }

    /// Blocks the calling thread (a path's own receiving thread) while this keep-all
    /// subscription has no room for one more message, or until `stop()`, looked at every
    /// 100 ms.
    pub fn block_until_room(&self, stop: impl Fn() -> bool) {
        // The common case, room, allocates nothing.
        if self.sink.has_room() {
            return;
        }
        let room = Arc::new((Mutex::new(false), Condvar::new()));
        let signal = room.clone();
        let waiting = self.wait_for_room(0, move || {
            let (made, changed) = &*signal;
            *made.lock().unwrap_or_else(PoisonError::into_inner) = true;
            changed.notify_all();
        });
        if !waiting {
            return;
        }
        let (made, changed) = &*room;
        let mut made = made.lock().unwrap_or_else(PoisonError::into_inner);
        while !*made && !stop() {
            made = changed
                .wait_timeout(made, std::time::Duration::from_millis(100))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Reports a remote publisher this subscription cannot use (`REQUESTED_INCOMPATIBLE_QOS`):
    /// counted in its `incompatible_qos_status` and passed to its callback.
    pub fn report_incompatible_qos(&self, policy: QosPolicyKind) {
        self.events.record(policy);
    }

    /// Reports `count` messages of one publisher that will never arrive (`SAMPLE_LOST`):
    /// counted in its `message_lost_status` and passed to its callback. Call without holding
    /// a lock the callback could need.
    pub fn report_lost(&self, count: u64) {
        self.events.record_lost(count);
    }
}
