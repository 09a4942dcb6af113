//! Intra-process delivery: the backend that matches publishers and subscriptions, and
//! services and clients, inside one context.
//!
//! Matched topic endpoints are linked directly (delivery by `Arc`, no serialization, or
//! through serialization between two Rust types of one ROS type); a client calls a server of
//! its own type by handing it the typed request. Any other client and server of one service
//! and type in the context (a serialized one on either side: the C ABI's, a Wasm guest's, a
//! tool's; or two Rust types of one ROS type) exchange serialized requests and replies through
//! the server's and client's sinks. It is also the graph of a context without a network.
//!
//! Ownership: it holds type-erased `Arc`s of every live endpoint, keyed by topic. A
//! publisher keeps its own list of matched subscriptions (typed), so publishing takes one read
//! lock and no lookup. Endpoints unregister themselves when their handle is dropped.

use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use roslite_cdr::SharedBuf;

use crate::seam::service::{
    LocalClient, LocalServer, ReplyChannel, ReplySink, RequestKey, RequestSink,
};
use crate::seam::{
    Backend, EndpointRecord, GraphView, LocalPublisher, LocalSubscription, PublisherLink,
};
use crate::vocabulary::events::{report_matches, MatchReports};
use crate::vocabulary::graph::{GraphEndpoint, GraphEndpointKind, GraphQos, RosTopicKind};
use crate::vocabulary::qos::check_compatible;

/// Endpoints of one topic, with their type so publishers can be linked again later.
#[derive(Default)]
struct TopicEndpoints {
    publishers: Vec<(EndpointRecord, Arc<dyn PublisherLink>)>,
    subscriptions: Vec<EndpointRecord>,
    /// Connected pairs: (publisher id, subscription id).
    matched: Vec<(u64, u64)>,
}

/// Which end of a pair an endpoint is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Publisher,
    Subscription,
}

impl TopicEndpoints {
    /// Forgets the pairs of endpoint `id` (which is on `side`), reporting an unmatch to the
    /// other endpoint of each that is still here.
    fn unmatch(&mut self, side: Side, id: u64, reports: &mut MatchReports) {
        let Self {
            publishers,
            subscriptions,
            matched,
        } = self;
        matched.retain(|&(publisher, subscription)| {
            let (this, other) = match side {
                Side::Publisher => (publisher, subscription),
                Side::Subscription => (subscription, publisher),
            };
            if this != id {
                return true;
            }
            let other_record = match side {
                Side::Publisher => subscriptions.iter().find(|r| r.id == other),
                Side::Subscription => publishers.iter().map(|(r, _)| r).find(|r| r.id == other),
            };
            if let Some(record) = other_record {
                reports.push((record.events.clone(), false));
            }
            false
        });
    }
}

/// Intra-process delivery of one context (see the module doc).
#[derive(Default)]
pub(crate) struct LocalBus {
    topics: Mutex<HashMap<String, TopicEndpoints>>,
    /// Live nodes: id, namespace, name.
    nodes: Mutex<Vec<(u64, String, String)>>,
    services: LocalServices,
}

impl LocalBus {
    fn add_publisher(&self, topic: &str, record: EndpointRecord, link: Arc<dyn PublisherLink>) {
        let mut reports = MatchReports::new();
        {
            let mut topics = self.topics.lock().unwrap_or_else(PoisonError::into_inner);
            let endpoints = topics.entry(topic.to_owned()).or_default();
            for subscription in &endpoints.subscriptions {
                if Self::try_match(topic, &record, &link, subscription) {
                    endpoints.matched.push((record.id, subscription.id));
                    reports.push((record.events.clone(), true));
                    reports.push((subscription.events.clone(), true));
                }
            }
            endpoints.publishers.push((record, link));
        }
        report_matches(reports);
    }

    fn add_subscription(&self, topic: &str, record: EndpointRecord) {
        let mut reports = MatchReports::new();
        {
            let mut topics = self.topics.lock().unwrap_or_else(PoisonError::into_inner);
            let endpoints = topics.entry(topic.to_owned()).or_default();
            for (publisher, link) in &endpoints.publishers {
                if Self::try_match(topic, publisher, link, &record) {
                    endpoints.matched.push((publisher.id, record.id));
                    reports.push((publisher.events.clone(), true));
                    reports.push((record.events.clone(), true));
                }
            }
            endpoints.subscriptions.push(record);
        }
        report_matches(reports);
    }

    /// Connects a compatible pair; returns whether it did.
    fn try_match(
        topic: &str,
        publisher: &EndpointRecord,
        link: &Arc<dyn PublisherLink>,
        subscription: &EndpointRecord,
    ) -> bool {
        if publisher.type_name != subscription.type_name {
            subscription.logger.warn(format_args!(
                "topic '{topic}' has a publisher of type '{}' (node '{}') but this subscription \
                 expects '{}'; they will not communicate",
                publisher.type_name, publisher.node, subscription.type_name
            ));
            return false;
        }
        if let Err(policy) = check_compatible(&publisher.qos, &subscription.qos) {
            publisher.events.record(policy);
            subscription.events.record(policy);
            publisher.logger.warn(format_args!(
                "New subscription discovered on topic '{topic}', requesting incompatible QoS. \
                 No messages will be sent to it. Last incompatible policy: {policy}"
            ));
            subscription.logger.warn(format_args!(
                "New publisher discovered on topic '{topic}', offering incompatible QoS. No \
                 messages will be received from it. Last incompatible policy: {policy}"
            ));
            return false;
        }
        let connected = link.connect(subscription);
        if !connected {
            subscription.logger.warn(format_args!(
                "topic '{topic}': cannot connect a publisher and a subscription of type '{}'",
                subscription.type_name
            ));
        }
        connected
    }

    fn remove_publisher(&self, topic: &str, id: u64) {
        let mut reports = MatchReports::new();
        let mut topics = self.topics.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(endpoints) = topics.get_mut(topic) {
            endpoints.publishers.retain(|(record, _)| record.id != id);
            endpoints.unmatch(Side::Publisher, id, &mut reports);
            if endpoints.publishers.is_empty() && endpoints.subscriptions.is_empty() {
                topics.remove(topic);
            }
        }
        drop(topics);
        report_matches(reports);
    }

    fn remove_subscription(&self, topic: &str, id: u64) {
        let mut reports = MatchReports::new();
        let mut topics = self.topics.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(endpoints) = topics.get_mut(topic) {
            endpoints.subscriptions.retain(|record| record.id != id);
            for (_, link) in &endpoints.publishers {
                link.disconnect(id);
            }
            endpoints.unmatch(Side::Subscription, id, &mut reports);
            if endpoints.publishers.is_empty() && endpoints.subscriptions.is_empty() {
                topics.remove(topic);
            }
        }
        drop(topics);
        report_matches(reports);
    }

    fn node_names_by_id(&self) -> HashMap<u64, (String, String)> {
        self.nodes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(id, namespace, name)| (*id, (namespace.clone(), name.clone())))
            .collect()
    }

    /// This context's publishers and subscriptions as graph entries (for a context without
    /// a network, whose graph they are), in no particular order.
    fn graph_endpoints(&self) -> Vec<GraphEndpoint> {
        let nodes = self.node_names_by_id();
        let topics = self.topics.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = |topic: &str, record: &EndpointRecord, kind| {
            graph_endpoint(topic, record, kind, nodes.get(&record.node_id).cloned())
        };
        let out: Vec<GraphEndpoint> = topics
            .iter()
            .flat_map(|(topic, e)| {
                let publishers = e
                    .publishers
                    .iter()
                    .map(|(r, _)| entry(topic, r, GraphEndpointKind::Publisher));
                let subscriptions = e
                    .subscriptions
                    .iter()
                    .map(|r| entry(topic, r, GraphEndpointKind::Subscription));
                publishers.chain(subscriptions)
            })
            .collect();
        out
    }
}

/// `record` as a graph entry; `node` is its node's `(namespace, name)`.
fn graph_endpoint(
    topic: &str,
    record: &EndpointRecord,
    kind: GraphEndpointKind,
    node: Option<(String, String)>,
) -> GraphEndpoint {
    GraphEndpoint {
        kind,
        topic_kind: RosTopicKind::Topic,
        topic: topic.to_owned(),
        type_name: record.type_name.to_owned(),
        type_hash: Some(record.type_hash.to_owned()),
        // No participant, so no GUID: the GID is this context's endpoint id.
        gid: u128::from(record.id).to_be_bytes(),
        node,
        qos: GraphQos::from(&record.qos),
        local: true,
        transport: "intra",
        content_filter: record
            .sink
            .as_ref()
            .and_then(|sink| sink.content_filter())
            .map(|announced| announced.options),
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The context's own services and clients, for in-process calls.
#[derive(Default)]
struct LocalServices {
    by_name: Mutex<HashMap<String, Vec<LocalServiceEntry>>>,
    clients: Mutex<HashMap<u64, LocalClientEntry>>,
    /// Numbers the serialized in-process requests sent while no other backend numbered them.
    next_request: AtomicU64,
}

struct LocalServiceEntry {
    id: u64,
    type_name: &'static str,
    /// The DDS request and response types: what a serialized client matches on.
    dds_types: (&'static str, &'static str),
    service: Weak<dyn Any + Send + Sync>,
    sink: Weak<dyn RequestSink>,
}

struct LocalClientEntry {
    service: String,
    dds_types: (&'static str, &'static str),
    sink: Weak<dyn ReplySink>,
}

/// Answers a request an in-process client sent serialized: the reply goes straight to the
/// client's sink under the request's key.
struct InProcessReply {
    client: Weak<dyn ReplySink>,
    key: RequestKey,
}

impl ReplyChannel for InProcessReply {
    fn send(self: Box<Self>, payload: Vec<u8>) {
        if let Some(client) = self.client.upgrade() {
            client.deliver_reply(self.key, &SharedBuf::from_vec(payload));
        }
    }
}

impl LocalServices {
    fn add(&self, server: &LocalServer) {
        let description = &server.description;
        lock(&self.by_name)
            .entry(description.service.clone())
            .or_default()
            .push(LocalServiceEntry {
                id: description.local_id,
                type_name: server.type_name,
                dds_types: (description.request_dds_type, description.response_dds_type),
                service: server.typed.clone(),
                sink: Arc::downgrade(&server.sink),
            });
    }

    /// The request sink of the first live server client `id` can call, with the client's.
    fn server_for(&self, id: u64) -> Option<(Arc<dyn RequestSink>, Weak<dyn ReplySink>)> {
        let clients = lock(&self.clients);
        let client = clients.get(&id)?;
        let by_name = lock(&self.by_name);
        let server = by_name
            .get(&client.service)?
            .iter()
            .filter(|e| e.dds_types == client.dds_types)
            .find_map(|e| e.sink.upgrade())?;
        Some((server, client.sink.clone()))
    }

    fn remove(&self, name: &str, id: u64) {
        let mut by_name = lock(&self.by_name);
        if let Some(entries) = by_name.get_mut(name) {
            entries.retain(|e| e.id != id);
            if entries.is_empty() {
                by_name.remove(name);
            }
        }
    }

    /// The servers' names with their types (`example_interfaces/srv/AddTwoInts`).
    fn names_and_types(&self) -> Vec<(String, &'static str)> {
        lock(&self.by_name)
            .iter()
            .flat_map(|(name, entries)| entries.iter().map(|e| (name.clone(), e.type_name)))
            .collect()
    }

    /// The live servers of `name` with type `type_name`, as registered.
    fn find(&self, name: &str, type_name: &str) -> Vec<Arc<dyn Any + Send + Sync>> {
        let by_name = lock(&self.by_name);
        by_name.get(name).map_or_else(Vec::new, |entries| {
            entries
                .iter()
                .filter(|e| e.type_name == type_name)
                .filter_map(|e| e.service.upgrade())
                .collect()
        })
    }
}

impl Backend for LocalBus {
    fn node_added(&self, id: u64, namespace: &str, name: &str) {
        lock(&self.nodes).push((id, namespace.to_owned(), name.to_owned()));
    }

    fn node_removed(&self, id: u64) {
        lock(&self.nodes).retain(|(i, _, _)| *i != id);
    }

    fn publisher_added(&self, publisher: LocalPublisher) {
        let topic = publisher.description.topic.clone();
        self.add_publisher(&topic, (*publisher.record).clone(), publisher.link);
    }

    fn publisher_removed(&self, topic: &str, id: u64) {
        self.remove_publisher(topic, id);
    }

    fn subscription_added(&self, subscription: LocalSubscription) {
        let topic = subscription.description.topic.clone();
        self.add_subscription(&topic, (*subscription.record).clone());
    }

    fn subscription_removed(&self, topic: &str, id: u64) {
        self.remove_subscription(topic, id);
    }

    fn service_server_added(&self, server: &LocalServer) {
        self.services.add(server);
    }

    fn service_server_removed(&self, service: &str, id: u64) {
        self.services.remove(service, id);
    }

    /// The first live server of `service` with type `type_name`: the one an in-process client
    /// calls, whichever of several it is (rclcpp leaves that to the middleware too).
    fn in_process_server(
        &self,
        service: &str,
        type_name: &str,
    ) -> Option<Arc<dyn Any + Send + Sync>> {
        self.services.find(service, type_name).into_iter().next()
    }

    fn service_client_added(&self, client: &LocalClient) {
        let description = &client.description;
        lock(&self.services.clients).insert(
            description.local_id,
            LocalClientEntry {
                service: description.service.clone(),
                dds_types: (description.request_dds_type, description.response_dds_type),
                sink: Arc::downgrade(&client.sink),
            },
        );
    }

    fn service_client_removed(&self, id: u64) {
        lock(&self.services.clients).remove(&id);
    }

    /// A server of the client's service and types lives in this context.
    fn service_client_ready(&self, id: u64) -> bool {
        self.services.server_for(id).is_some()
    }

    /// Hands the request to the first server in this context that client `id` can call
    /// (as [`Self::in_process_server`] picks one), under the key a network backend gave it
    /// or else a number of its own; its reply goes straight back to the client.
    fn send_request(
        &self,
        id: u64,
        payload: &[u8],
        key: Option<RequestKey>,
        register: &mut dyn FnMut(RequestKey),
    ) -> Option<RequestKey> {
        let (server, client) = self.services.server_for(id)?;
        let key = key.unwrap_or_else(|| {
            let key =
                RequestKey::InProcess(self.services.next_request.fetch_add(1, Ordering::Relaxed));
            register(key);
            key
        });
        server.deliver_request(
            &SharedBuf::from_vec(payload.to_vec()),
            Box::new(InProcessReply { client, key }),
        );
        Some(key)
    }

    fn graph(&self) -> Option<&dyn GraphView> {
        Some(self)
    }
}

impl GraphView for LocalBus {
    fn endpoints(&self) -> Vec<GraphEndpoint> {
        self.graph_endpoints()
    }

    fn node_names(&self) -> Vec<(String, String)> {
        self.node_names_by_id().into_values().collect()
    }

    fn service_names_and_types(&self) -> Vec<(String, String)> {
        self.services
            .names_and_types()
            .into_iter()
            .map(|(name, ty)| (name, ty.to_owned()))
            .collect()
    }
}
