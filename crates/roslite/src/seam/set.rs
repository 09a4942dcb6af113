//! The backends of one context, as its nodes and endpoints reach them: every change is told to
//! each backend in turn, and a backend added later is told what already exists.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use roslite_executor::ShutdownSignal;

use super::service::{LocalClient, LocalServer, RequestKey};
use super::{Backend, GraphView, LocalPublisher, LocalSubscription, PathView};
use crate::vocabulary::graph::GraphEndpoint;
use crate::vocabulary::snapshot::SnapshotList;

/// What exists now, for a backend added later.
#[derive(Default)]
struct Live {
    nodes: Vec<(u64, String, String)>,
    publishers: Vec<LocalPublisher>,
    subscriptions: Vec<LocalSubscription>,
    servers: Vec<LocalServer>,
    clients: Vec<LocalClient>,
}

/// A context's backends, in the order they were added (intra-process delivery first).
/// Additions are told to them in that order, removals in the reverse order, so that a backend
/// never hears of an endpoint's removal after one added later did.
pub(crate) struct BackendSet {
    /// Read on every service call and graph query: a snapshot costs one reference count.
    backends: SnapshotList<Arc<dyn Backend>>,
    live: Mutex<Live>,
    next_entity_id: AtomicU64,
    shutdown: Arc<ShutdownSignal>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl BackendSet {
    /// A set of `backends`, in that order, for a context that has no node yet (nothing to
    /// replay: [`Self::add`], which replays, stays out of binaries that never add a backend
    /// later).
    pub(crate) fn new(shutdown: Arc<ShutdownSignal>, backends: Vec<Arc<dyn Backend>>) -> Self {
        let list = SnapshotList::default();
        for backend in backends {
            list.push(backend);
        }
        Self {
            backends: list,
            live: Mutex::default(),
            next_entity_id: AtomicU64::new(1),
            shutdown,
        }
    }

    /// A process-local id for a new node or endpoint.
    pub(crate) fn next_entity_id(&self) -> u64 {
        self.next_entity_id.fetch_add(1, Ordering::Relaxed)
    }

    pub(crate) fn shutdown(&self) -> &Arc<ShutdownSignal> {
        &self.shutdown
    }

    fn all(&self) -> Arc<[Arc<dyn Backend>]> {
        self.backends.snapshot()
    }

    /// Adds a backend; it is told about the nodes and endpoints that exist now, then about
    /// every change.
    pub(crate) fn add(&self, backend: Arc<dyn Backend>) {
        let live = lock(&self.live);
        let nodes = live.nodes.clone();
        let publishers = live.publishers.clone();
        let subscriptions = live.subscriptions.clone();
        let servers = live.servers.clone();
        let clients = live.clients.clone();
        self.backends.push(backend.clone());
        drop(live);
        for (id, namespace, name) in &nodes {
            backend.node_added(*id, namespace, name);
        }
        for publisher in publishers {
            backend.publisher_added(publisher);
        }
        for subscription in subscriptions {
            backend.subscription_added(subscription);
        }
        for server in &servers {
            backend.service_server_added(server);
        }
        for client in &clients {
            backend.service_client_added(client);
        }
    }

    /// `f` over the graph as the backend that sees most of it knows it: the last added with a
    /// view (the RTPS network when there is one, else intra-process delivery).
    pub(crate) fn with_graph<R>(&self, f: impl FnOnce(&dyn GraphView) -> R) -> Option<R> {
        let backends = self.all();
        backends.iter().rev().find_map(|b| b.graph()).map(f)
    }

    pub(crate) fn node_added(&self, id: u64, namespace: &str, name: &str) {
        lock(&self.live)
            .nodes
            .push((id, namespace.to_owned(), name.to_owned()));
        for backend in self.all().iter() {
            backend.node_added(id, namespace, name);
        }
    }

    pub(crate) fn node_removed(&self, id: u64) {
        lock(&self.live).nodes.retain(|(i, _, _)| *i != id);
        for backend in self.all().iter().rev() {
            backend.node_removed(id);
        }
    }

    pub(crate) fn publisher_added(&self, publisher: LocalPublisher) {
        lock(&self.live).publishers.push(publisher.clone());
        for backend in self.all().iter() {
            backend.publisher_added(publisher.clone());
        }
    }

    pub(crate) fn publisher_removed(&self, topic: &str, id: u64) {
        lock(&self.live)
            .publishers
            .retain(|p| p.description.id != id);
        for backend in self.all().iter().rev() {
            backend.publisher_removed(topic, id);
        }
    }

    pub(crate) fn subscription_added(&self, subscription: LocalSubscription) {
        lock(&self.live).subscriptions.push(subscription.clone());
        for backend in self.all().iter() {
            backend.subscription_added(subscription.clone());
        }
    }

    pub(crate) fn subscription_removed(&self, topic: &str, id: u64) {
        lock(&self.live)
            .subscriptions
            .retain(|s| s.description.id != id);
        for backend in self.all().iter().rev() {
            backend.subscription_removed(topic, id);
        }
    }

    /// Subscription `id`'s content filter changed: every backend is told.
    pub(crate) fn subscription_filter_changed(&self, id: u64) {
        let subscription = lock(&self.live)
            .subscriptions
            .iter()
            .find(|s| s.description.id == id)
            .cloned();
        if let Some(subscription) = subscription {
            for backend in self.all().iter() {
                backend.subscription_filter_changed(&subscription);
            }
        }
    }

    pub(crate) fn service_server_added(&self, server: LocalServer) {
        for backend in self.all().iter() {
            backend.service_server_added(&server);
        }
        lock(&self.live).servers.push(server);
    }

    pub(crate) fn service_server_removed(&self, service: &str, id: u64) {
        lock(&self.live)
            .servers
            .retain(|s| s.description.local_id != id);
        for backend in self.all().iter().rev() {
            backend.service_server_removed(service, id);
        }
    }

    pub(crate) fn service_client_added(&self, client: LocalClient) {
        for backend in self.all().iter() {
            backend.service_client_added(&client);
        }
        lock(&self.live).clients.push(client);
    }

    pub(crate) fn service_client_removed(&self, id: u64) {
        lock(&self.live)
            .clients
            .retain(|c| c.description.local_id != id);
        for backend in self.all().iter().rev() {
            backend.service_client_removed(id);
        }
    }

    /// A way to answer from local server `server` the request at reply `address`
    /// ([`Backend::reply_channel`]).
    pub(crate) fn reply_channel(
        &self,
        server: u64,
        address: &[u8],
    ) -> Option<Box<dyn super::ReplyChannel>> {
        self.all()
            .iter()
            .find_map(|b| b.reply_channel(server, address))
    }

    /// Whether any backend reaches a server that matched client `id`.
    pub(crate) fn service_client_ready(&self, id: u64) -> bool {
        self.all().iter().any(|b| b.service_client_ready(id))
    }

    /// Client `id`'s global id ([`Backend::service_client_gid`]), from the first backend that
    /// gives it one.
    pub(crate) fn service_client_gid(&self, id: u64) -> Option<[u8; 16]> {
        self.all().iter().find_map(|b| b.service_client_gid(id))
    }

    /// A typed server of `service` in this process (see [`Backend::in_process_server`]).
    pub(crate) fn in_process_server(
        &self,
        service: &str,
        type_name: &str,
    ) -> Option<Arc<dyn Any + Send + Sync>> {
        self.all()
            .iter()
            .find_map(|b| b.in_process_server(service, type_name))
    }

    /// Sends a request of client `id` through every backend that carries the client's
    /// requests, under the key the first of them gave it ([`Backend::send_request`]); false
    /// if none sent it. Backends that reach other processes go first: the RTPS network numbers
    /// every request it writes (its writer's sequence number), and the others send under that.
    pub(crate) fn send_request(
        &self,
        id: u64,
        payload: &[u8],
        register: &mut dyn FnMut(RequestKey),
    ) -> bool {
        let backends = self.all();
        let (remote, local): (Vec<_>, Vec<_>) =
            backends.iter().partition(|b| b.reaches_other_processes());
        let mut key = None;
        for backend in remote.into_iter().chain(local) {
            if let Some(sent) = backend.send_request(id, payload, key, register) {
                key = Some(sent);
            }
        }
        key.is_some()
    }

    /// `f` folded over every backend that carries something to other processes.
    pub(crate) fn fold_paths<T>(&self, init: T, f: impl Fn(T, &dyn PathView) -> T) -> T {
        self.all().iter().filter_map(|b| b.paths()).fold(init, f)
    }

    /// Every ROS endpoint the graph knows, each remote one marked with the path this
    /// context uses with it.
    pub(crate) fn graph_endpoints(&self) -> Vec<GraphEndpoint> {
        let mut endpoints = self.with_graph(|g| g.endpoints()).unwrap_or_default();
        for paths in self.all().iter().filter_map(|b| b.paths()) {
            paths.mark_carried(&mut endpoints);
        }
        endpoints
    }

    /// Whether some backend reaches other processes (a client may find a server there).
    pub(crate) fn reaches_other_processes(&self) -> bool {
        self.all().iter().any(|b| b.reaches_other_processes())
    }
}
