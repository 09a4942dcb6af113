//! Services and clients: ROS 2 request/reply.
//!
//! A [`Service`] queues requests and answers them from its callback on the executor spinning
//! its node. A [`Client`] sends requests and completes each call when the reply arrives, on
//! whichever thread receives it (the RTPS driver thread for remote servers, a same-host link's
//! thread for a roslite server on this host, the server's executor thread for a server in this
//! process), so [`Client::call`] blocks without anyone
//! spinning the client's node.
//!
//! Paths: a client whose context has a server of the same name and type calls it directly,
//! without serialization (as intra-process topics do). Otherwise the request goes out on
//! `rq/<service>Request` and the reply comes back on `rr/<service>Reply`: over shared memory or
//! a Unix socket to a roslite server on this host (`same_host::service`, the sample identity in
//! a lead before the payload), else over RTPS, correlated in the style of whoever is on the
//! other side (see `roslite_rtps::discovery::rpc`: Fast DDS's related-sample-identity inline QoS, or Cyclone's
//! 16-byte header in the payload).

use std::any::Any;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::{Duration, Instant as StdInstant};

use roslite_cdr::{Endianness, SharedBuf};
use roslite_executor::{CallbackGroup, Instant, Waitable};
use roslite_msgs::description::TypeDescription;
use roslite_msgs::{Message, Service as ServiceType};

use crate::endpoints::host::EndpointHost;
use crate::endpoints::introspection::{
    EventOutlet, EventPublisherFactory, Introspection, IntrospectionError, IntrospectionState,
    SerializedEvents, ServiceEventKind, ServiceEvents, TypedEvents, TypedIntrospection,
};
use crate::endpoints::serialized::TypeInfo;
use crate::endpoints::type_cache::TypeRegistration;
use crate::seam::service::{
    LocalClient, LocalServer, ReplyChannel, ReplyOutcome, ReplySink, RequestId, RequestKey,
    RequestSink, ServiceEndpointDescription,
};
use crate::seam::BackendSet;
use crate::vocabulary::qos::QosProfile;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// rmw's `rmw_qos_profile_services_default`: reliable, volatile, keep last 10.
pub fn services_default_qos() -> QosProfile {
    QosProfile::keep_last(10)
}

/// Why a call produced no response.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallError {
    /// No reply within the timeout. `server_available` tells whether any server was matched
    /// when the request was sent: if not, the request was lost and
    /// [`Client::wait_for_service`] before calling is the fix.
    Timeout {
        service: String,
        timeout: Duration,
        server_available: bool,
    },
    /// This context has no network and no server of this service, so nothing could answer.
    NoServer { service: String },
    /// The request could not be serialized (a bounded string or sequence over its bound).
    Serialize(roslite_cdr::EncodeError),
    /// The reply did not decode as this service's response type.
    MalformedResponse { service: String },
    /// The context shut down, or the client was dropped, before the reply arrived.
    Cancelled,
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Timeout {
                service,
                timeout,
                server_available: true,
            } => write!(
                f,
                "no reply from service '{service}' within {timeout:?} (a server was matched; \
                 it may be slow or its executor not spinning)"
            ),
            Self::Timeout {
                service, timeout, ..
            } => write!(
                f,
                "no reply from service '{service}' within {timeout:?}: no server was available \
                 when the request was sent; call wait_for_service() first, and check the \
                 service name and type"
            ),
            Self::NoServer { service } => write!(
                f,
                "service '{service}' has no server in this process and the network is off \
                 (ROSLITE_NETWORK=off): nothing can answer"
            ),
            Self::Serialize(e) => write!(f, "cannot serialize the request: {e}"),
            Self::MalformedResponse { service } => write!(
                f,
                "the reply from service '{service}' is not a valid response of its type"
            ),
            Self::Cancelled => f.write_str("the call was cancelled before a reply arrived"),
        }
    }
}

impl std::error::Error for CallError {}

/// Counters of a client.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientStats {
    pub requests_sent: u64,
    pub replies_received: u64,
    /// Replies addressed to this client that matched no waiting call; dropped.
    pub unmatched_replies: u64,
    /// Replies that did not decode; dropped.
    pub malformed_replies: u64,
    /// Calls that ended in a timeout.
    pub timeouts: u64,
}

/// Counters of a service.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServiceStats {
    pub requests_received: u64,
    pub replies_sent: u64,
    /// Requests from other processes that did not decode; dropped.
    pub malformed_requests: u64,
    /// Requests pushed out of a full queue (KEEP_LAST) before the callback took them.
    pub overwritten_requests: u64,
}

// ---------------------------------------------------------------------------------------------
// Pending calls

/// What to do with a call's result instead of keeping it for a waiting thread or future.
type OnDone<R> = Box<dyn FnOnce(Result<R, CallError>) + Send>;

struct CallSlot<R> {
    result: Option<Result<R, CallError>>,
    waker: Option<Waker>,
    on_done: Option<OnDone<R>>,
    done: bool,
}

/// One outstanding call: completed by whoever receives the reply.
pub(crate) struct PendingCall<R> {
    slot: Mutex<CallSlot<R>>,
    done: Condvar,
}

impl<R> PendingCall<R> {
    fn new() -> Arc<Self> {
        Self::with_on_done(None)
    }

    fn with_on_done(on_done: Option<OnDone<R>>) -> Arc<Self> {
        Arc::new(Self {
            slot: Mutex::new(CallSlot {
                result: None,
                waker: None,
                on_done,
                done: false,
            }),
            done: Condvar::new(),
        })
    }

    fn complete(&self, result: Result<R, CallError>) {
        let (waker, on_done) = {
            let mut slot = lock(&self.slot);
            if slot.done {
                return;
            }
            slot.done = true;
            let on_done = slot.on_done.take();
            if on_done.is_none() {
                slot.result = Some(result);
                (slot.waker.take(), None)
            } else {
                (None, on_done.map(|f| (f, result)))
            }
        };
        // Outside the lock: the caller's function may do anything.
        if let Some((on_done, result)) = on_done {
            on_done(result);
            return;
        }
        self.done.notify_all();
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Servers

enum Responder<S: ServiceType> {
    /// Completes the calling client's call in this process; the id is the client's and the
    /// call's, for introspection.
    Local(Box<dyn FnOnce(S::Response) + Send>, RequestId),
    Remote(Box<dyn ReplyChannel>),
}

impl<S: ServiceType> Responder<S> {
    /// The client and call this answers, as introspection names them; zeros where the path
    /// does not say.
    fn request_id(&self) -> RequestId {
        match self {
            Self::Local(_, id) => *id,
            Self::Remote(channel) => channel.request_id().unwrap_or(RequestId {
                writer_guid: [0; 16],
                sequence_number: 0,
            }),
        }
    }
}

type ServiceCallback<S> =
    Box<dyn FnMut(<S as ServiceType>::Request) -> <S as ServiceType>::Response + Send + 'static>;

/// A callback that answers later, through the [`ServiceReply`] it is given.
pub(crate) type DeferredServiceCallback<S> =
    Box<dyn FnMut(<S as ServiceType>::Request, ServiceReply<S>) + Send + 'static>;

/// How a server answers: from its callback's return value, or later.
pub(crate) enum ServiceHandler<S: ServiceType> {
    Immediate(ServiceCallback<S>),
    Deferred(DeferredServiceCallback<S>),
}

/// The way back to the client of one request, for a server that answers after its callback
/// returned (rclcpp's deferred `send_response`): an action server answers a result request
/// when the goal ends. Dropping it unanswered leaves the client waiting, as a lost reply would.
pub struct ServiceReply<S: ServiceType> {
    responder: Responder<S>,
    service: Weak<ServiceShared<S>>,
}

impl<S: ServiceType> ServiceReply<S> {
    /// The GUID prefix of the participant the request came from, where its path names it
    /// (a client in another process); `None` for a client in this context.
    pub(crate) fn client_participant(&self) -> Option<[u8; 12]> {
        match &self.responder {
            Responder::Local(..) => None,
            Responder::Remote(channel) => {
                let id = channel.request_id()?;
                id.writer_guid[..12].try_into().ok()
            }
        }
    }

    /// A reply into `channel`, for a server's tests.
    #[cfg(test)]
    pub(crate) fn into_channel(channel: Box<dyn ReplyChannel>) -> Self {
        Self {
            responder: Responder::Remote(channel),
            service: Weak::new(),
        }
    }

    /// Sends `response` to the client that made the request, from the calling thread.
    pub fn send(self, response: S::Response) {
        if let Some(service) = self.service.upgrade() {
            lock(&service.stats).replies_sent += 1;
            service.introspect_response(&self.responder, &response);
        }
        respond(self.responder, response);
    }
}

/// Hands `response` to the caller: completes an in-process call, or serializes it into the
/// reply channel.
fn respond<S: ServiceType>(responder: Responder<S>, response: S::Response) {
    match responder {
        Responder::Local(complete, _) => complete(response),
        Responder::Remote(channel) => match roslite_cdr::to_vec(&response, Endianness::Little) {
            Ok(bytes) => channel.send(bytes),
            Err(e) => {
                // The caller times out; the server's log says why.
                crate::vocabulary::log::Logger::new("roslite.service")
                    .error(format_args!("cannot serialize a response: {e}"));
            }
        },
    }
}

pub(crate) struct ServiceShared<S: ServiceType> {
    id: u64,
    qos: QosProfile,
    queue: Mutex<VecDeque<(S::Request, Responder<S>)>>,
    callback: Mutex<ServiceHandler<S>>,
    group: Arc<CallbackGroup>,
    stats: Mutex<ServiceStats>,
    /// This service itself, for the replies of a deferred handler to count themselves.
    weak_self: std::sync::OnceLock<Weak<ServiceShared<S>>>,
    introspection: TypedIntrospection<S>,
    make_events: EventPublisherFactory,
}

impl<S: ServiceType> ServiceShared<S> {
    /// Publishes `REQUEST_RECEIVED` for `request`, if introspection is on (rcl does when the
    /// server takes the request, before its callback).
    fn introspect_request(&self, responder: &Responder<S>, request: &S::Request) {
        if self.introspection.is_on() {
            let id = responder.request_id();
            self.introspection.request(
                ServiceEventKind::RequestReceived,
                id.writer_guid,
                id.sequence_number,
                self.introspection.wants_contents().then(|| request.clone()),
                None,
            );
        }
    }

    /// Publishes `RESPONSE_SENT` for `response`, if introspection is on.
    fn introspect_response(&self, responder: &Responder<S>, response: &S::Response) {
        if self.introspection.is_on() {
            let id = responder.request_id();
            self.introspection.response(
                ServiceEventKind::ResponseSent,
                id.writer_guid,
                id.sequence_number,
                self.introspection
                    .wants_contents()
                    .then(|| response.clone()),
            );
        }
    }

    fn enqueue(&self, request: S::Request, responder: Responder<S>) {
        {
            let mut queue = lock(&self.queue);
            let mut stats = lock(&self.stats);
            stats.requests_received += 1;
            stats.overwritten_requests += self.qos.history.push(&mut queue, (request, responder));
        }
        // From the network's receive thread, a sleeping executor lends its turn: the request
        // is answered at once, without waking the executor's thread.
        if crate::seam::inline_dispatch_allowed() && self.group.try_run_inline(self) {
            return;
        }
        self.group.notify();
    }
}

impl<S: ServiceType> RequestSink for ServiceShared<S> {
    fn deliver_request(&self, payload: &SharedBuf, reply: Box<dyn ReplyChannel>) -> bool {
        match roslite_cdr::from_shared::<S::Request>(payload) {
            Ok(request) => {
                self.enqueue(request, Responder::Remote(reply));
                true
            }
            Err(_) => {
                lock(&self.stats).malformed_requests += 1;
                false
            }
        }
    }
}

impl<S: ServiceType> Waitable for ServiceShared<S> {
    fn is_ready(&self, _now: Instant) -> bool {
        !lock(&self.queue).is_empty()
    }

    fn execute(&self) -> bool {
        let Some((request, responder)) = lock(&self.queue).pop_front() else {
            return false;
        };
        self.introspect_request(&responder, &request);
        let mut handler = lock(&self.callback);
        match &mut *handler {
            ServiceHandler::Immediate(callback) => {
                let response = callback(request);
                drop(handler);
                // Counted first: the caller may look at the count as soon as the reply
                // reaches it.
                lock(&self.stats).replies_sent += 1;
                self.introspect_response(&responder, &response);
                respond(responder, response);
            }
            ServiceHandler::Deferred(callback) => {
                let weak = self.weak_self.get().cloned().unwrap_or_default();
                callback(
                    request,
                    ServiceReply {
                        responder,
                        service: weak,
                    },
                );
            }
        }
        true
    }
}

/// Serves one ROS 2 service; its callback runs in the executor spinning its node. Dropping it
/// stops serving.
pub struct Service<S: ServiceType> {
    shared: Arc<ServiceShared<S>>,
    name: String,
    node: Arc<EndpointHost>,
    _type_registration: Option<TypeRegistration>,
}

impl<S: ServiceType> Service<S> {
    pub(crate) fn new(
        node: Arc<EndpointHost>,
        group: &Arc<CallbackGroup>,
        name: String,
        qos: QosProfile,
        callback: ServiceHandler<S>,
        (introspection, make_events): (TypedIntrospection<S>, EventPublisherFactory),
    ) -> Self {
        let shared = Arc::new(ServiceShared::<S> {
            id: node.backends.next_entity_id(),
            qos,
            queue: Mutex::new(VecDeque::new()),
            callback: Mutex::new(callback),
            group: group.clone(),
            stats: Mutex::default(),
            weak_self: std::sync::OnceLock::new(),
            introspection,
            make_events,
        });
        let _ = shared.weak_self.set(Arc::downgrade(&shared));
        let waitable: Arc<dyn Waitable> = shared.clone();
        group.add(Arc::downgrade(&waitable));
        let any: Arc<dyn Any + Send + Sync> = shared.clone();
        node.backends.service_server_added(LocalServer {
            description: endpoint_description::<S>(&node, shared.id, &name, qos),
            type_name: S::TYPE_NAME,
            sink: shared.clone(),
            typed: Arc::downgrade(&any),
        });
        // rcl registers a server's service type (not its request and response types).
        let registration = node.types.register(S::TYPE_HASH, S::TYPE_DESCRIPTION);
        Self {
            shared,
            name,
            node,
            _type_registration: registration,
        }
    }

    /// The fully qualified service name (after expansion and remapping).
    pub fn service_name(&self) -> &str {
        &self.name
    }

    pub fn stats(&self) -> ServiceStats {
        *lock(&self.shared.stats)
    }

    /// Publishes this server's calls on `<service>/_service_event` (`state` `Metadata` or
    /// `Contents`), or stops (`Off`): rclcpp's and rclpy's `configure_introspection`. The
    /// events' publisher is made with `qos` when introspection is turned on (rclpy users
    /// pass `qos_profile_system_default`, [`QosProfile::SYSTEM_DEFAULT`]) and keeps it until
    /// it is turned off; stamps come from the node's ROS clock.
    ///
    /// # Errors
    /// [`IntrospectionError::Qos`] for an invalid `qos`.
    pub fn configure_introspection(
        &self,
        qos: QosProfile,
        state: IntrospectionState,
    ) -> Result<(), IntrospectionError> {
        let shared = &self.shared;
        shared.introspection.configure(state, |topic| {
            qos.validate()?;
            Ok(Box::new(TypedEvents::<S>::new(
                &shared.make_events,
                topic,
                qos,
            )?))
        })
    }

    /// What this server publishes of its calls.
    pub fn introspection_state(&self) -> IntrospectionState {
        self.shared.introspection.state()
    }
}

impl<S: ServiceType> Drop for Service<S> {
    fn drop(&mut self) {
        self.node
            .backends
            .service_server_removed(&self.name, self.shared.id);
    }
}

fn endpoint_description<S: ServiceType>(
    node: &EndpointHost,
    local_id: u64,
    name: &str,
    qos: QosProfile,
) -> ServiceEndpointDescription {
    ServiceEndpointDescription {
        local_id,
        node_id: node.node_id,
        service: name.to_owned(),
        request_dds_type: <S::Request as Message>::DDS_TYPE_NAME,
        response_dds_type: <S::Response as Message>::DDS_TYPE_NAME,
        request_type_hash: <S::Request as Message>::TYPE_HASH,
        response_type_hash: <S::Response as Message>::TYPE_HASH,
        qos,
    }
}

// ---------------------------------------------------------------------------------------------
// Clients

/// Sees each response a client takes, before its call completes (introspection).
type ResponseObserver<R> = Box<dyn Fn(RequestKey, &R) + Send + Sync>;

/// A client's state, for a typed response `R` or serialized bytes.
pub(crate) struct ClientShared<R> {
    id: u64,
    service: String,
    pending: Mutex<HashMap<RequestKey, Arc<PendingCall<R>>>>,
    next_local: AtomicU64,
    stats: Mutex<ClientStats>,
    decode: fn(&SharedBuf) -> Option<R>,
    on_response: std::sync::OnceLock<ResponseObserver<R>>,
}

impl<R: Send + 'static> ClientShared<R> {
    fn new(id: u64, service: String, decode: fn(&SharedBuf) -> Option<R>) -> Self {
        Self {
            id,
            service,
            pending: Mutex::new(HashMap::new()),
            next_local: AtomicU64::new(1),
            stats: Mutex::default(),
            decode,
            on_response: std::sync::OnceLock::new(),
        }
    }

    /// Counts `response` to the call `call` pending under `key`, shows it to the observer,
    /// and completes the call.
    fn take_response(&self, key: RequestKey, call: &PendingCall<R>, response: R) {
        lock(&self.stats).replies_received += 1;
        if let Some(observe) = self.on_response.get() {
            observe(key, &response);
        }
        call.complete(Ok(response));
    }

    /// Waits up to `timeout` for `call`; a timeout is counted and reported.
    fn wait(
        &self,
        call: &PendingCall<R>,
        timeout: Duration,
        server_available: bool,
    ) -> Result<R, CallError> {
        let deadline = StdInstant::now() + timeout;
        let mut slot = lock(&call.slot);
        loop {
            if let Some(result) = slot.result.take() {
                return result;
            }
            let now = StdInstant::now();
            if now >= deadline {
                break;
            }
            slot = call
                .done
                .wait_timeout(slot, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        drop(slot);
        lock(&self.stats).timeouts += 1;
        Err(CallError::Timeout {
            service: self.service.clone(),
            timeout,
            server_available,
        })
    }

    /// Sends a serialized request through the backend that carries this client's requests
    /// and registers its call.
    fn send_remote(
        &self,
        backends: &BackendSet,
        payload: Vec<u8>,
        call: &Arc<PendingCall<R>>,
    ) -> RequestKey {
        let mut sent = None;
        backends.send_request(self.id, &payload, &mut |key| {
            // Runs under the network lock, before any reply can be processed.
            lock(&self.pending).insert(key, call.clone());
            sent = Some(key);
        });
        lock(&self.stats).requests_sent += 1;
        // Not sent (the client's endpoints could not be created): the call stays pending
        // until its timeout, as a lost request would.
        sent.unwrap_or(RequestKey::Local(u64::MAX))
    }

    fn cancel_all(&self) {
        for (_, call) in lock(&self.pending).drain() {
            call.complete(Err(CallError::Cancelled));
        }
    }
}

impl<R: Send + 'static> ReplySink for ClientShared<R> {
    fn deliver_reply(&self, key: RequestKey, payload: &SharedBuf) -> ReplyOutcome {
        let Some(call) = lock(&self.pending).remove(&key) else {
            lock(&self.stats).unmatched_replies += 1;
            return ReplyOutcome::NoPendingRequest;
        };
        match (self.decode)(payload) {
            Some(response) => {
                self.take_response(key, &call, response);
                ReplyOutcome::Completed
            }
            None => {
                lock(&self.stats).malformed_replies += 1;
                call.complete(Err(CallError::MalformedResponse {
                    service: self.service.clone(),
                }));
                ReplyOutcome::Malformed
            }
        }
    }
}

/// Polls `ready` until it holds (true), `timeout` passes or the context shuts down (false).
fn wait_until_ready(node: &EndpointHost, timeout: Duration, ready: impl Fn() -> bool) -> bool {
    let start = StdInstant::now();
    loop {
        if ready() {
            return true;
        }
        let elapsed = start.elapsed();
        if elapsed >= timeout || node.backends.shutdown().is_shutdown() {
            return false;
        }
        // Discovery completes in milliseconds at best; a short poll costs nothing real.
        std::thread::sleep((timeout - elapsed).min(Duration::from_millis(5)));
    }
}

/// The sequence number of the request sent under `key`, as introspection reports it.
fn sequence_number(key: RequestKey) -> i64 {
    match key {
        RequestKey::Local(n) | RequestKey::InProcess(n) => i64::try_from(n).unwrap_or(i64::MAX),
        RequestKey::WriterSn(n) | RequestKey::CycloneSeq(n) => n,
    }
}

/// Client `id`'s global id, which its introspection events name. Without a network the
/// client has no GUID: a process-local id stands in, its entity id the client's own number.
fn client_gid(node: &EndpointHost, id: u64) -> [u8; 16] {
    node.backends.service_client_gid(id).unwrap_or_else(|| {
        let mut gid = [0; 16];
        gid[8..].copy_from_slice(&id.to_be_bytes());
        gid
    })
}

/// Has `client` publish `RESPONSE_RECEIVED` through `introspection` for each response it
/// takes, with a copy (`copy`) of the response when contents are introspected.
fn observe_responses<R: Send + 'static, O: EventOutlet<Response = R> + ?Sized>(
    client: &ClientShared<R>,
    introspection: &Arc<Introspection<O>>,
    gid: [u8; 16],
    copy: fn(&R) -> R,
) {
    let introspection = introspection.clone();
    let _ = client.on_response.set(Box::new(move |key, response: &R| {
        if introspection.is_on() {
            introspection.response(
                ServiceEventKind::ResponseReceived,
                gid,
                sequence_number(key),
                introspection.wants_contents().then(|| copy(response)),
            );
        }
    }));
}

/// Calls one ROS 2 service. Cheap to share between threads (`&Client` is enough to call).
pub struct Client<S: ServiceType> {
    shared: Arc<ClientShared<S::Response>>,
    node: Arc<EndpointHost>,
    /// The client as servers see it (rmw's client gid), which its introspection events name.
    gid: [u8; 16],
    introspection: Arc<TypedIntrospection<S>>,
    make_events: EventPublisherFactory,
    _type_registration: Option<TypeRegistration>,
}

impl<S: ServiceType> Client<S> {
    pub(crate) fn new(
        node: Arc<EndpointHost>,
        name: String,
        qos: QosProfile,
        (introspection, make_events): (TypedIntrospection<S>, EventPublisherFactory),
    ) -> Self {
        let shared = Arc::new(ClientShared::new(
            node.backends.next_entity_id(),
            name,
            |payload| roslite_cdr::from_shared::<S::Response>(payload).ok(),
        ));
        node.backends.service_client_added(LocalClient {
            description: endpoint_description::<S>(&node, shared.id, &shared.service, qos),
            sink: shared.clone(),
        });
        let gid = client_gid(&node, shared.id);
        let introspection = Arc::new(introspection);
        observe_responses(&shared, &introspection, gid, S::Response::clone);
        let registration = node.types.register(S::TYPE_HASH, S::TYPE_DESCRIPTION);
        Self {
            shared,
            node,
            gid,
            introspection,
            make_events,
            _type_registration: registration,
        }
    }

    /// Publishes this client's calls on `<service>/_service_event` (`state` `Metadata` or
    /// `Contents`), or stops (`Off`): rclcpp's and rclpy's `configure_introspection`. The
    /// events' publisher is made with `qos` when introspection is turned on and keeps it
    /// until it is turned off; stamps come from the node's ROS clock.
    ///
    /// # Errors
    /// [`IntrospectionError::Qos`] for an invalid `qos`.
    pub fn configure_introspection(
        &self,
        qos: QosProfile,
        state: IntrospectionState,
    ) -> Result<(), IntrospectionError> {
        self.introspection.configure(state, |topic| {
            qos.validate()?;
            Ok(Box::new(TypedEvents::<S>::new(
                &self.make_events,
                topic,
                qos,
            )?))
        })
    }

    /// What this client publishes of its calls.
    pub fn introspection_state(&self) -> IntrospectionState {
        self.introspection.state()
    }

    /// The fully qualified service name (after expansion and remapping).
    pub fn service_name(&self) -> &str {
        &self.shared.service
    }

    pub fn stats(&self) -> ClientStats {
        *lock(&self.shared.stats)
    }

    /// Whether a server can be called now: one in this process, or a remote one whose request
    /// reader and reply writer have both matched this client (rclcpp's `service_is_ready`).
    pub fn service_is_ready(&self) -> bool {
        self.in_process_server().is_some()
            || self.node.backends.service_client_ready(self.shared.id)
    }

    /// The first live server of this client's service in this process with type `S`.
    fn in_process_server(&self) -> Option<Arc<ServiceShared<S>>> {
        self.node
            .backends
            .in_process_server(&self.shared.service, S::TYPE_NAME)?
            .downcast::<ServiceShared<S>>()
            .ok()
    }

    /// Waits up to `timeout` for [`Self::service_is_ready`]; false if it never was.
    pub fn wait_for_service(&self, timeout: Duration) -> bool {
        wait_until_ready(&self.node, timeout, || self.service_is_ready())
    }

    /// Sends `request`; the future resolves with the response. Dropping the future forgets
    /// the call (a late reply is then counted as unmatched).
    ///
    /// # Errors
    /// [`CallError::NoServer`] when no server can ever answer (network off and none in this
    /// process); [`CallError::Serialize`].
    pub fn call_async(&self, request: S::Request) -> Result<ResponseFuture<S>, CallError> {
        let call = PendingCall::new();
        let key = self.start_call(request, &call)?;
        Ok(ResponseFuture {
            call,
            client: Arc::downgrade(&self.shared),
            key,
            _service: PhantomData,
        })
    }

    /// Sends `request`; `on_reply` gets the response (or why there is none:
    /// [`CallError::Cancelled`] when the client goes first) on the thread that received it.
    /// The call stays pending until then: [`Self::forget`] drops it.
    ///
    /// # Errors
    /// As [`Self::call_async`].
    pub fn call_with(
        &self,
        request: S::Request,
        on_reply: impl FnOnce(Result<S::Response, CallError>) + Send + 'static,
    ) -> Result<RequestKey, CallError> {
        let call = PendingCall::with_on_done(Some(Box::new(on_reply)));
        self.start_call(request, &call)
    }

    /// Forgets the call of `key`: its reply, if one comes, is counted as unmatched and
    /// dropped, and its `on_reply` is never called. False if it was not pending.
    pub fn forget(&self, key: RequestKey) -> bool {
        lock(&self.shared.pending).remove(&key).is_some()
    }

    /// Sends `request` to the server in this process, or else to the network, with `call`
    /// pending under the returned key.
    fn start_call(
        &self,
        request: S::Request,
        call: &Arc<PendingCall<S::Response>>,
    ) -> Result<RequestKey, CallError> {
        let backends = &self.node.backends;
        // Kept for the REQUEST_SENT event only when it carries contents.
        let mut introspected = None;
        let sent_at = self.introspection.is_on().then(|| self.introspection.now());
        let key = if let Some(server) = self.in_process_server() {
            let n = self.shared.next_local.fetch_add(1, Ordering::Relaxed);
            let key = RequestKey::Local(n);
            lock(&self.shared.pending).insert(key, call.clone());
            let client = Arc::downgrade(&self.shared);
            let complete = move |response| {
                let Some(client) = client.upgrade() else {
                    return;
                };
                // Gone from `pending`: the caller timed out or dropped its future.
                let Some(call) = lock(&client.pending).remove(&key) else {
                    lock(&client.stats).unmatched_replies += 1;
                    return;
                };
                client.take_response(key, &call, response);
            };
            if self.introspection.wants_contents() {
                introspected = Some(request.clone());
            }
            let id = RequestId {
                writer_guid: self.gid,
                sequence_number: sequence_number(key),
            };
            server.enqueue(request, Responder::Local(Box::new(complete), id));
            lock(&self.shared.stats).requests_sent += 1;
            key
        } else if backends.reaches_other_processes()
            || backends.service_client_ready(self.shared.id)
        {
            let payload =
                roslite_cdr::to_vec(&request, Endianness::Little).map_err(CallError::Serialize)?;
            let key = self.shared.send_remote(backends, payload, call);
            introspected = Some(request);
            key
        } else {
            return Err(CallError::NoServer {
                service: self.shared.service.clone(),
            });
        };
        if sent_at.is_some() {
            self.introspection.request(
                ServiceEventKind::RequestSent,
                self.gid,
                sequence_number(key),
                introspected,
                sent_at,
            );
        }
        Ok(key)
    }

    /// Sends `request` and waits up to `timeout` for the response. Must not be called from a
    /// callback of the single-threaded executor that also runs the server, which could then
    /// never answer.
    ///
    /// # Errors
    /// [`CallError::Timeout`] (saying whether a server was there), or as
    /// [`Self::call_async`].
    pub fn call(&self, request: S::Request, timeout: Duration) -> Result<S::Response, CallError> {
        let server_available = self.service_is_ready();
        let future = self.call_async(request)?;
        self.shared.wait(&future.call, timeout, server_available)
    }
}

impl<S: ServiceType> Drop for Client<S> {
    fn drop(&mut self) {
        self.node.backends.service_client_removed(self.shared.id);
        self.shared.cancel_all();
    }
}

/// The response of one [`Client::call_async`].
pub struct ResponseFuture<S: ServiceType> {
    call: Arc<PendingCall<S::Response>>,
    client: Weak<ClientShared<S::Response>>,
    key: RequestKey,
    _service: PhantomData<fn() -> S>,
}

impl<S: ServiceType> Future for ResponseFuture<S> {
    type Output = Result<S::Response, CallError>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let mut slot = lock(&self.call.slot);
        match slot.result.take() {
            Some(result) => Poll::Ready(result),
            None => {
                slot.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

impl<S: ServiceType> Drop for ResponseFuture<S> {
    fn drop(&mut self) {
        if let Some(client) = self.client.upgrade() {
            lock(&client.pending).remove(&self.key);
        }
    }
}

/// A client whose service type is known only at run time (tools such as `roslite service
/// call`, the C ABI, Wasm guests): requests and responses are CDR bytes with the
/// encapsulation header. It calls servers in other processes and in its own context.
pub struct SerializedClient {
    shared: Arc<ClientShared<SharedBuf>>,
    node: Arc<EndpointHost>,
    service_type: Option<TypeRegistration>,
    /// `pkg/srv/Name_Request`.
    request_type: &'static str,
    gid: [u8; 16],
    introspection: Arc<Introspection<SerializedEvents>>,
    make_events: EventPublisherFactory,
}

impl SerializedClient {
    /// A client of `service` whose requests and replies are `request` and `response`, as
    /// CDR bytes.
    pub(crate) fn new(
        node: Arc<EndpointHost>,
        service: String,
        request: TypeInfo,
        response: TypeInfo,
        (introspection, make_events): (Introspection<SerializedEvents>, EventPublisherFactory),
    ) -> Self {
        let shared = Arc::new(ClientShared::new(
            node.backends.next_entity_id(),
            service,
            |payload| Some(payload.clone()),
        ));
        node.backends.service_client_added(LocalClient {
            description: ServiceEndpointDescription {
                local_id: shared.id,
                node_id: node.node_id,
                service: shared.service.clone(),
                request_dds_type: request.dds_type_name,
                response_dds_type: response.dds_type_name,
                request_type_hash: request.type_hash,
                response_type_hash: response.type_hash,
                qos: services_default_qos(),
            },
            sink: shared.clone(),
        });
        let gid = client_gid(&node, shared.id);
        let introspection = Arc::new(introspection);
        observe_responses(&shared, &introspection, gid, SharedBuf::clone);
        Self {
            shared,
            node,
            service_type: None,
            request_type: request.type_name,
            gid,
            introspection,
            make_events,
        }
    }

    /// Publishes this client's calls on `<service>/_service_event`, or stops, as a typed
    /// client's [`Client::configure_introspection`] does; `events` gives the service's event
    /// type and the encoder of its events, asked for only when introspection is turned on.
    ///
    /// # Errors
    /// [`IntrospectionError::Qos`] for an invalid `qos`; what `events` returns.
    pub fn configure_introspection(
        &self,
        qos: QosProfile,
        state: IntrospectionState,
        events: impl FnOnce() -> Result<ServiceEvents, IntrospectionError>,
    ) -> Result<(), IntrospectionError> {
        self.introspection.configure(state, |topic| {
            SerializedEvents::new(&self.make_events, topic, qos, events).map(Box::new)
        })
    }

    /// The service's type (`example_interfaces/srv/AddTwoInts`), from its request type's name.
    pub fn service_type_name(&self) -> &'static str {
        self.request_type
            .strip_suffix("_Request")
            .unwrap_or(self.request_type)
    }

    /// What this client publishes of its calls.
    pub fn introspection_state(&self) -> IntrospectionState {
        self.introspection.state()
    }

    /// Sends `request` as a call pending under `call`, and publishes its `REQUEST_SENT` when
    /// introspection is on.
    fn send(&self, request: &[u8], call: &Arc<PendingCall<SharedBuf>>) -> RequestKey {
        let sent_at = self.introspection.is_on().then(|| self.introspection.now());
        let key = self
            .shared
            .send_remote(&self.node.backends, request.to_vec(), call);
        if sent_at.is_some() {
            self.introspection.request(
                ServiceEventKind::RequestSent,
                self.gid,
                sequence_number(key),
                self.introspection
                    .wants_contents()
                    .then(|| SharedBuf::from_vec(request.to_vec())),
                sent_at,
            );
        }
        key
    }

    pub fn service_name(&self) -> &str {
        &self.shared.service
    }

    /// Has the node serve `description` on `~/get_type_description` for the service type
    /// whose hash is `type_hash`, for as long as this client lives, as a typed client's node
    /// does by itself (rcl registers a client's service type; this client knows only its
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

    pub fn stats(&self) -> ClientStats {
        *lock(&self.shared.stats)
    }

    /// Whether a server in this context, or a remote one that matched this client, can be
    /// called.
    pub fn service_is_ready(&self) -> bool {
        self.node.backends.service_client_ready(self.shared.id)
    }

    /// Waits up to `timeout` for [`Self::service_is_ready`].
    pub fn wait_for_service(&self, timeout: Duration) -> bool {
        wait_until_ready(&self.node, timeout, || self.service_is_ready())
    }

    /// Sends a serialized request; `on_reply` gets the serialized response (or why there is
    /// none: [`CallError::Cancelled`] when the client goes first) on the thread that received
    /// it. The returned key forgets the call ([`Self::forget`]).
    ///
    /// # Errors
    /// [`CallError::NoServer`] without a network or a server in this context.
    pub fn call_with(
        &self,
        request: &[u8],
        on_reply: impl FnOnce(Result<SharedBuf, CallError>) + Send + 'static,
    ) -> Result<RequestKey, CallError> {
        let backends = &self.node.backends;
        if !backends.reaches_other_processes() && !backends.service_client_ready(self.shared.id) {
            return Err(CallError::NoServer {
                service: self.shared.service.clone(),
            });
        }
        let call = PendingCall::with_on_done(Some(Box::new(on_reply)));
        Ok(self.send(request, &call))
    }

    /// Forgets the call of `key` (rclcpp's `remove_pending_request`): its reply, if one comes,
    /// is counted as unmatched and dropped. False if it was not pending.
    pub fn forget(&self, key: RequestKey) -> bool {
        lock(&self.shared.pending).remove(&key).is_some()
    }

    /// Whether the call of `key` still waits for its reply.
    pub fn is_pending(&self, key: RequestKey) -> bool {
        lock(&self.shared.pending).contains_key(&key)
    }

    /// Sends a serialized request and waits up to `timeout` for the serialized response.
    ///
    /// # Errors
    /// [`CallError::NoServer`] without a network or a server in this context;
    /// [`CallError::Timeout`].
    pub fn call(&self, request: &[u8], timeout: Duration) -> Result<SharedBuf, CallError> {
        let backends = &self.node.backends;
        if !backends.reaches_other_processes() && !backends.service_client_ready(self.shared.id) {
            return Err(CallError::NoServer {
                service: self.shared.service.clone(),
            });
        }
        let server_available = self.service_is_ready();
        let call = PendingCall::new();
        let key = self.send(request, &call);
        let result = self.shared.wait(&call, timeout, server_available);
        lock(&self.shared.pending).remove(&key);
        result
    }
}

impl Drop for SerializedClient {
    fn drop(&mut self) {
        self.node.backends.service_client_removed(self.shared.id);
        self.shared.cancel_all();
    }
}
