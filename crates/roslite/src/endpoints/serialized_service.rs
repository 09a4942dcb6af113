//! Service servers of types known only at run time: requests and responses are CDR bytes with
//! the encapsulation header (what the C ABI and tools serve). They join the same service as
//! typed servers do, on every path but the typed in-process one (a typed client in this
//! process reaches them through the backends).

use std::any::Any;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use roslite_cdr::SharedBuf;
use roslite_executor::{CallbackGroup, Instant, Waitable};
use roslite_msgs::description::TypeDescription;

use crate::endpoints::host::EndpointHost;
use crate::endpoints::introspection::{
    EventPublisherFactory, Introspection, IntrospectionError, IntrospectionState, SerializedEvents,
    ServiceEventKind, ServiceEvents,
};
use crate::endpoints::serialized::TypeInfo;
use crate::endpoints::service::ServiceStats;
use crate::endpoints::type_cache::TypeRegistration;
use crate::seam::service::{
    LocalServer, ReplyChannel, RequestId, RequestSink, ServiceEndpointDescription,
};
use crate::vocabulary::qos::QosProfile;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The way back to the client of one request: answer it once, from the callback or later
/// from any thread (rclcpp's deferred `send_response`). Dropped unanswered, the client times
/// out.
pub struct ServiceResponder {
    reply: Box<dyn ReplyChannel>,
    stats: Arc<Mutex<ServiceStats>>,
    introspection: Arc<Introspection<SerializedEvents>>,
}

impl ServiceResponder {
    /// Where the answer goes, as bytes [`SerializedService::responder_to`] of another server of
    /// the same service (in another process) can answer from, over whichever path reaches the
    /// client from there; None for a request from this process. For restoring state: a node moved to another host answers there the requests
    /// it had received but not answered.
    pub fn reply_address(&self) -> Option<Vec<u8>> {
        self.reply.reply_address()
    }

    /// Which request this answers (the client identity its request names and its sequence
    /// number from that client, as rmw's `rmw_request_id_t`), the same whichever path it
    /// came by (RTPS, shared memory or a Unix socket); None for one from this process.
    pub fn request_id(&self) -> Option<RequestId> {
        self.reply.request_id()
    }

    /// Sends `response` (CDR with the encapsulation header) to the client.
    pub fn send(self, response: &[u8]) {
        lock(&self.stats).replies_sent += 1;
        if self.introspection.is_on() {
            let id = request_id_or_zeros(self.reply.as_ref());
            self.introspection.response(
                ServiceEventKind::ResponseSent,
                id.writer_guid,
                id.sequence_number,
                self.introspection
                    .wants_contents()
                    .then(|| SharedBuf::from_vec(response.to_vec())),
            );
        }
        self.reply.send(response.to_vec());
    }
}

/// The client and call a request's reply channel names, for introspection; zeros where the
/// path does not say (a client in this process without a network).
fn request_id_or_zeros(reply: &dyn ReplyChannel) -> RequestId {
    reply.request_id().unwrap_or(RequestId {
        writer_guid: [0; 16],
        sequence_number: 0,
    })
}

type RequestCallback = Box<dyn FnMut(&SharedBuf, ServiceResponder) + Send>;

struct SerializedServiceShared {
    id: u64,
    qos: QosProfile,
    queue: Mutex<VecDeque<(SharedBuf, Box<dyn ReplyChannel>)>>,
    callback: Mutex<RequestCallback>,
    group: Arc<CallbackGroup>,
    stats: Arc<Mutex<ServiceStats>>,
    introspection: Arc<Introspection<SerializedEvents>>,
    make_events: EventPublisherFactory,
}

impl RequestSink for SerializedServiceShared {
    fn deliver_request(&self, payload: &SharedBuf, reply: Box<dyn ReplyChannel>) -> bool {
        {
            let mut queue = lock(&self.queue);
            let mut stats = lock(&self.stats);
            stats.requests_received += 1;
            stats.overwritten_requests +=
                self.qos.history.push(&mut queue, (payload.clone(), reply));
        }
        if crate::seam::inline_dispatch_allowed() && self.group.try_run_inline(self) {
            return true;
        }
        self.group.notify();
        true
    }
}

impl Waitable for SerializedServiceShared {
    fn is_ready(&self, _now: Instant) -> bool {
        !lock(&self.queue).is_empty()
    }

    fn execute(&self) -> bool {
        let Some((request, reply)) = lock(&self.queue).pop_front() else {
            return false;
        };
        if self.introspection.is_on() {
            let id = request_id_or_zeros(reply.as_ref());
            self.introspection.request(
                ServiceEventKind::RequestReceived,
                id.writer_guid,
                id.sequence_number,
                Some(request.clone()),
                None,
            );
        }
        let responder = ServiceResponder {
            reply,
            stats: self.stats.clone(),
            introspection: self.introspection.clone(),
        };
        let mut callback = lock(&self.callback);
        callback(&request, responder);
        true
    }
}

/// Serves one service whose type is known only at run time. Dropping it stops serving.
pub struct SerializedService {
    shared: Arc<SerializedServiceShared>,
    name: String,
    type_name: &'static str,
    node: Arc<EndpointHost>,
    service_type: Option<TypeRegistration>,
}

impl SerializedService {
    /// A server of `name` (resolved) of service type `type_name`
    /// (`example_interfaces/srv/AddTwoInts`), whose requests and responses are `request` and
    /// `response`.
    pub(crate) fn new(
        node: Arc<EndpointHost>,
        group: &Arc<CallbackGroup>,
        name: String,
        (type_name, request, response): (&'static str, TypeInfo, TypeInfo),
        qos: QosProfile,
        callback: RequestCallback,
        (introspection, make_events): (Introspection<SerializedEvents>, EventPublisherFactory),
    ) -> Self {
        let shared = Arc::new(SerializedServiceShared {
            id: node.backends.next_entity_id(),
            qos,
            queue: Mutex::new(VecDeque::new()),
            callback: Mutex::new(callback),
            group: group.clone(),
            stats: Arc::default(),
            introspection: Arc::new(introspection),
            make_events,
        });
        let waitable: Arc<dyn Waitable> = shared.clone();
        group.add(Arc::downgrade(&waitable));
        // No typed server behind it: in-process typed clients go through the backends.
        let typed: Weak<dyn Any + Send + Sync> = Weak::<()>::new();
        node.backends.service_server_added(LocalServer {
            description: ServiceEndpointDescription {
                local_id: shared.id,
                node_id: node.node_id,
                service: name.clone(),
                request_dds_type: request.dds_type_name,
                response_dds_type: response.dds_type_name,
                request_type_hash: request.type_hash,
                response_type_hash: response.type_hash,
                qos,
            },
            type_name,
            sink: shared.clone(),
            typed,
        });
        Self {
            shared,
            name,
            type_name,
            node,
            service_type: None,
        }
    }

    /// The fully qualified service name (after expansion and remapping).
    pub fn service_name(&self) -> &str {
        &self.name
    }

    /// Has the node serve `description` on `~/get_type_description` for the service type
    /// whose hash is `type_hash`, for as long as this server lives, as a typed server's node
    /// does by itself (rcl registers a server's service type; this server knows only its
    /// request and response types). A later call replaces the earlier one.
    pub fn register_service_type(
        &mut self,
        type_hash: &str,
        description: &'static TypeDescription,
    ) {
        self.service_type = self.node.types.register(type_hash, Some(description));
    }

    /// As [`Self::register_service_type`], with the description made by `describe` (given
    /// the service type's name, `type_name`) when the node is first asked for it.
    pub fn register_service_type_later(
        &mut self,
        type_hash: &str,
        type_name: &'static str,
        describe: crate::endpoints::serialized::Describe,
    ) {
        self.service_type = self
            .node
            .types
            .register_later(type_hash, type_name, describe);
    }

    pub fn stats(&self) -> ServiceStats {
        *lock(&self.shared.stats)
    }

    /// Publishes this server's calls on `<service>/_service_event`, or stops, as a typed
    /// server's [`Service::configure_introspection`](crate::Service::configure_introspection)
    /// does; `events` gives the service's event type and the encoder of its events, asked
    /// for only when introspection is turned on.
    ///
    /// # Errors
    /// [`IntrospectionError::Qos`] for an invalid `qos`; what `events` returns.
    pub fn configure_introspection(
        &self,
        qos: QosProfile,
        state: IntrospectionState,
        events: impl FnOnce() -> Result<ServiceEvents, IntrospectionError>,
    ) -> Result<(), IntrospectionError> {
        let shared = &self.shared;
        shared.introspection.configure(state, |topic| {
            SerializedEvents::new(&shared.make_events, topic, qos, events).map(Box::new)
        })
    }

    /// The service's type (`example_interfaces/srv/AddTwoInts`).
    pub fn service_type_name(&self) -> &'static str {
        self.type_name
    }

    /// What this server publishes of its calls.
    pub fn introspection_state(&self) -> IntrospectionState {
        self.shared.introspection.state()
    }

    /// Clients in other processes matched now (their request writers paired with this
    /// server's request reader), whatever path their requests take.
    pub fn client_count(&self) -> usize {
        self.node
            .backends
            .fold_paths(0, |n, paths| n + paths.service_clients(self.shared.id).0)
    }

    /// Of the clients [`Self::client_count`] counts, how many are known to reach this server
    /// both ways: their requests are sent here, and its answers are taken by them. As for
    /// [`Subscription::acknowledged_publisher_count`](crate::Subscription::acknowledged_publisher_count),
    /// matching on this side is not enough (the client may not have discovered this server
    /// yet, and a request sent in that moment does not reach it): over RTPS a client counts
    /// once its participant acknowledged the SEDP announcements of both of this server's
    /// endpoints, over a same-host link once the links of both halves are attached.
    pub fn acknowledged_client_count(&self) -> usize {
        self.node
            .backends
            .fold_paths(0, |n, paths| n + paths.service_clients(self.shared.id).1)
    }

    /// A responder that answers, from this server, the request another server of the same
    /// service received, at its [`ServiceResponder::reply_address`]; None if no path of this
    /// context can read the address. It is for restoring state (a node moved to another host
    /// answers the requests its old host received), not for answering requests this server
    /// did not receive otherwise.
    pub fn responder_to(&self, address: &[u8]) -> Option<ServiceResponder> {
        let reply = self.node.backends.reply_channel(self.shared.id, address)?;
        Some(ServiceResponder {
            reply,
            stats: self.shared.stats.clone(),
            introspection: self.shared.introspection.clone(),
        })
    }
}

impl Drop for SerializedService {
    fn drop(&mut self) {
        self.node
            .backends
            .service_server_removed(&self.name, self.shared.id);
    }
}
