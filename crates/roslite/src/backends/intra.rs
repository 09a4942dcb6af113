//! The local topic bus: matching of publishers and subscriptions inside one context.
//!
//! This is the registry every transport hangs off. Today it links endpoints in the same process
//! (intra-process delivery by `Arc`, no serialization); remote matches will be recorded beside
//! the local ones without changing the publish/subscribe API.
//!
//! Ownership: the bus holds type-erased `Arc`s of every live endpoint, keyed by topic. A
//! publisher keeps its own list of matched subscriptions (typed), so publishing takes one read
//! lock and no lookup. Endpoints unregister themselves when their handle is dropped.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use crate::events::{report_matches, IncompatibleQos, MatchReports};
use crate::log::Logger;
use crate::net::{GraphEndpoint, GraphEndpointKind, GraphQos, RosTopicKind};
use crate::pubsub::SerializedSink;
use crate::qos::{check_compatible, QosProfile};
use crate::transport::{
    EndpointDescription, LocalPublisher, LocalSubscription, Outlet as RemoteOutlet, Transport,
};

/// What the bus knows about one endpoint.
#[derive(Clone)]
pub(crate) struct EndpointRecord {
    pub id: u64,
    pub type_name: &'static str,
    pub dds_type_name: &'static str,
    pub type_hash: &'static str,
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

/// A publisher as seen by the bus: it accepts subscriptions of its own message type.
pub(crate) trait PublisherLink: Send + Sync {
    /// Links a matched subscription: directly if it has this publisher's Rust type, else
    /// through serialization. False if neither is possible.
    fn connect(&self, subscription: &EndpointRecord) -> bool;
    fn disconnect(&self, subscription_id: u64);
    /// Adds an outlet to other processes (a transport's writer for this topic).
    fn attach_remote(&self, id: u64, outlet: Arc<dyn RemoteOutlet>);
    fn detach_remote(&self, id: u64);
}

type TopicSnapshot = (
    Vec<(EndpointRecord, Arc<dyn PublisherLink>)>,
    Vec<EndpointRecord>,
);

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

#[derive(Default)]
pub(crate) struct LocalBus {
    topics: Mutex<HashMap<String, TopicEndpoints>>,
    observers: Mutex<Vec<Arc<dyn Transport>>>,
    /// Live nodes: id, namespace, name.
    nodes: Mutex<Vec<(u64, String, String)>>,
}

impl LocalBus {
    pub(crate) fn add_publisher(
        &self,
        topic: &str,
        record: EndpointRecord,
        link: Arc<dyn PublisherLink>,
    ) {
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
            endpoints.publishers.push((record.clone(), link.clone()));
        }
        report_matches(reports);
        for observer in self.observers() {
            observer.publisher_added(local_publisher(topic, &record, &link));
        }
    }

    pub(crate) fn add_subscription(&self, topic: &str, record: EndpointRecord) {
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
            endpoints.subscriptions.push(record.clone());
        }
        report_matches(reports);
        for observer in self.observers() {
            if let Some(subscription) = local_subscription(topic, &record) {
                observer.subscription_added(subscription);
            }
        }
    }

    /// Registers a transport; it is told about the endpoints that already exist, then about
    /// every change.
    pub(crate) fn add_observer(&self, observer: Arc<dyn Transport>) {
        let existing: Vec<(String, TopicSnapshot)> = {
            let topics = self.topics.lock().unwrap_or_else(PoisonError::into_inner);
            topics
                .iter()
                .map(|(name, e)| {
                    (
                        name.clone(),
                        (e.publishers.clone(), e.subscriptions.clone()),
                    )
                })
                .collect()
        };
        self.observers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(observer.clone());
        for (topic, (publishers, subscriptions)) in existing {
            for (record, link) in &publishers {
                observer.publisher_added(local_publisher(&topic, record, link));
            }
            for record in &subscriptions {
                if let Some(subscription) = local_subscription(&topic, record) {
                    observer.subscription_added(subscription);
                }
            }
        }
    }

    pub(crate) fn node_added(&self, id: u64, namespace: &str, name: &str) {
        self.nodes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((id, namespace.to_owned(), name.to_owned()));
        for observer in self.observers() {
            observer.node_added(id, namespace, name);
        }
    }

    pub(crate) fn node_removed(&self, id: u64) {
        self.nodes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|(i, _, _)| *i != id);
        for observer in self.observers() {
            observer.node_removed(id);
        }
    }

    fn observers(&self) -> Vec<Arc<dyn Transport>> {
        self.observers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
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

    pub(crate) fn remove_publisher(&self, topic: &str, id: u64) {
        for observer in self.observers() {
            observer.publisher_removed(topic, id);
        }
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

    pub(crate) fn remove_subscription(&self, topic: &str, id: u64) {
        for observer in self.observers() {
            observer.subscription_removed(topic, id);
        }
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

    /// This context's nodes as `(namespace, name)`.
    pub(crate) fn node_names(&self) -> Vec<(String, String)> {
        self.node_names_by_id().into_values().collect()
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
    /// a network, whose graph they are), sorted by topic, then kind.
    pub(crate) fn graph_endpoints(&self) -> Vec<GraphEndpoint> {
        let nodes = self.node_names_by_id();
        let topics = self.topics.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = |topic: &str, record: &EndpointRecord, kind| {
            graph_endpoint(topic, record, kind, nodes.get(&record.node_id).cloned())
        };
        let mut out: Vec<GraphEndpoint> = topics
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
        out.sort_by(|a, b| (&a.topic, a.kind).cmp(&(&b.topic, b.kind)));
        out
    }
}

fn description(topic: &str, record: &EndpointRecord) -> EndpointDescription {
    EndpointDescription {
        id: record.id,
        topic: topic.to_owned(),
        type_name: record.type_name,
        dds_type_name: record.dds_type_name,
        type_hash: record.type_hash,
        qos: record.qos,
        node: record.node.clone(),
        node_id: record.node_id,
    }
}

fn local_publisher(
    topic: &str,
    record: &EndpointRecord,
    link: &Arc<dyn PublisherLink>,
) -> LocalPublisher {
    LocalPublisher {
        description: description(topic, record),
        link: link.clone(),
        events: record.events.clone(),
    }
}

fn local_subscription(topic: &str, record: &EndpointRecord) -> Option<LocalSubscription> {
    let sink = record.sink.clone()?;
    Some(LocalSubscription {
        description: description(topic, record),
        sink,
        events: record.events.clone(),
    })
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
    }
}
