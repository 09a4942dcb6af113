//! The same-host links as a backend of their context: told of every endpoint like the RTPS
//! network and intra-process delivery are, and following the network's discovery to plan
//! which pairs go over a link.
//!
//! Locks: the network's state, then this backend's plan, never the other way round. Calls
//! from the network ([`DiscoveryFollower`]) come with its state locked; this backend's own
//! calls that need discovery go through [`NetworkHandle::with_discovery`], which locks it
//! first.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, Weak};
use std::time::{Duration, Instant};

use roslite_rtps::participant::{ReaderId, WriterId};
use roslite_rtps::types::{Guid, GuidPrefix, SampleIdentity, SequenceNumber};

use roslite_rtps::discovery::rpc::ReplyRoute;

use super::{service, SameHost, ServiceWriters};
use crate::backends::rtps::{decode_route, Discovery, DiscoveryFollower, NetworkHandle};
use crate::seam::service::{
    LocalClient, LocalServer, ReplyChannel, RequestId, RequestKey, ServiceDrops,
};
use crate::seam::{Backend, LocalPublisher, LocalSubscription, PathView};
use crate::vocabulary::config::LocalTransports;
use crate::vocabulary::events::MatchReports;
use crate::vocabulary::graph::GraphEndpoint;
use crate::vocabulary::log::Logger;

/// A local client's RTPS endpoints, by which its same-host writers and readers are known.
struct ClientEndpoints {
    service: String,
    request_writer: WriterId,
    reply_reader: ReaderId,
    /// The reply reader's GUID: the identity a same-host server's reply must name.
    reply_guid: Guid,
}

/// This context's endpoints by local id, as the network identifies them.
#[derive(Default)]
struct LocalIds {
    publishers: HashMap<u64, WriterId>,
    subscriptions: HashMap<u64, ReaderId>,
    /// Servers' request readers and reply writers.
    servers: HashMap<u64, (ReaderId, WriterId)>,
    clients: HashMap<u64, ClientEndpoints>,
}

struct Plan {
    links: SameHost,
    ids: LocalIds,
}

/// Shared memory and Unix sockets to roslite participants on this host, beside the RTPS
/// network whose discovery it follows.
pub(crate) struct SameHostBackend {
    plan: Mutex<Plan>,
    /// Set once the network is started ([`Self::follow`]); the network starts after this
    /// backend, since its first announcement carries this backend's address.
    network: Arc<OnceLock<NetworkHandle>>,
    /// Itself, for replies that wait for their client's link ([`CarriedReply`]).
    me: Weak<SameHostBackend>,
}

impl SameHostBackend {
    /// Binds this participant's same-host endpoint; `None` (with a log line) when same-host
    /// transports are off or unavailable, and everything stays on UDP.
    pub(crate) fn start(offered: LocalTransports, logger: Logger) -> Option<Arc<Self>> {
        // The links learn first that a peer's process died (its sockets close at once);
        // discovery, told, forgets the peer without waiting for its lease to end.
        let network: Arc<OnceLock<NetworkHandle>> = Arc::default();
        let told = network.clone();
        let peer_gone = Arc::new(move |prefix| {
            if let Some(network) = told.get() {
                network.peer_process_gone(prefix);
            }
        });
        SameHost::start(offered, logger, peer_gone).map(|links| {
            Arc::new_cyclic(|me| Self {
                plan: Mutex::new(Plan {
                    links,
                    ids: LocalIds::default(),
                }),
                network,
                me: me.clone(),
            })
        })
    }

    /// Follows `network`'s discovery from now on.
    pub(crate) fn follow(&self, network: NetworkHandle) {
        let _ = self.network.set(network);
    }

    fn lock(&self) -> MutexGuard<'_, Plan> {
        self.plan.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Local server `server`'s same-host reply writers, and whether the reader `reader` of a
    /// client is paired with them here and every reader paired with them is attached (a
    /// writer's endpoint does not say which readers attached, so all of them); None once the
    /// server is gone.
    fn reply_readiness(&self, server: u64, reader: Guid) -> Option<(Arc<ServiceWriters>, bool)> {
        let mut readiness = None;
        self.with_discovery(|discovery, _, plan| {
            let Some(&(_, reply_writer)) = plan.ids.servers.get(&server) else {
                return;
            };
            let Some(writers) = plan.links.service_writers(reply_writer) else {
                return;
            };
            let ready = plan.links.carries_pair(discovery, reply_writer, reader)
                && writers.readers() >= plan.links.carried_readers(discovery, reply_writer);
            readiness = Some((writers.clone(), ready));
        });
        readiness
    }

    /// `f` with the network's discovery and this backend's plan, locked in that order;
    /// nothing before the network started or after it stopped.
    fn with_discovery(&self, f: impl FnOnce(&Discovery<'_>, &mut MatchReports, &mut Plan)) {
        if let Some(network) = self.network.get() {
            network.with_discovery(|discovery, reports| f(discovery, reports, &mut self.lock()));
        }
    }
}

impl Backend for SameHostBackend {
    fn publisher_added(&self, publisher: LocalPublisher) {
        let id = publisher.description.id;
        self.with_discovery(|discovery, reports, plan| {
            let Some(writer) = discovery.publisher_writer(id) else {
                return; // no RTPS writer: no GUID peers could know it by
            };
            plan.ids.publishers.insert(id, writer);
            plan.links
                .publisher_added(discovery, writer, &publisher, reports);
        });
    }

    fn publisher_removed(&self, _topic: &str, id: u64) {
        let mut plan = self.lock();
        if let Some(writer) = plan.ids.publishers.remove(&id) {
            plan.links.publisher_removed(writer);
        }
    }

    fn subscription_added(&self, subscription: LocalSubscription) {
        let id = subscription.description.id;
        self.with_discovery(|discovery, reports, plan| {
            let Some(reader) = discovery.subscription_reader(id) else {
                return;
            };
            plan.ids.subscriptions.insert(id, reader);
            plan.links
                .subscription_added(discovery, reader, subscription, reports);
        });
    }

    fn subscription_removed(&self, _topic: &str, id: u64) {
        let mut plan = self.lock();
        if let Some(reader) = plan.ids.subscriptions.remove(&id) {
            plan.links.subscription_removed(reader);
        }
    }

    fn service_server_added(&self, server: &LocalServer) {
        let id = server.description.local_id;
        self.with_discovery(|discovery, reports, plan| {
            let Some((request_reader, reply_writer)) = discovery.server_endpoints(id) else {
                return;
            };
            plan.ids.servers.insert(id, (request_reader, reply_writer));
            plan.links.service_server_added(
                discovery,
                request_reader,
                reply_writer,
                server.sink.clone(),
                reports,
            );
        });
    }

    fn service_server_removed(&self, _service: &str, id: u64) {
        let mut plan = self.lock();
        if let Some((request_reader, reply_writer)) = plan.ids.servers.remove(&id) {
            plan.links
                .service_endpoints_removed(reply_writer, request_reader);
        }
    }

    fn service_client_added(&self, client: &LocalClient) {
        let id = client.description.local_id;
        self.with_discovery(|discovery, reports, plan| {
            let Some((request_writer, reply_reader)) = discovery.client_endpoints(id) else {
                return;
            };
            let prefix = discovery.guid_prefix();
            let reply_guid = reply_reader.guid(prefix);
            plan.ids.clients.insert(
                id,
                ClientEndpoints {
                    service: client.description.service.clone(),
                    request_writer,
                    reply_reader,
                    reply_guid,
                },
            );
            plan.links.service_client_added(
                discovery,
                request_writer,
                reply_reader,
                client.sink.clone(),
                reports,
            );
        });
    }

    fn service_client_removed(&self, id: u64) {
        let mut plan = self.lock();
        if let Some(client) = plan.ids.clients.remove(&id) {
            plan.links
                .service_endpoints_removed(client.request_writer, client.reply_reader);
        }
    }

    fn service_client_ready(&self, id: u64) -> bool {
        let plan = self.lock();
        plan.ids.clients.get(&id).is_some_and(|c| {
            plan.links
                .service_client_ready(c.request_writer, c.reply_reader)
        })
    }

    /// Sends the request to same-host servers under the key the RTPS network gave it (its
    /// writer's sequence number, in the lead's sample identity); a request the network did
    /// not number that way reaches no server here.
    fn send_request(
        &self,
        id: u64,
        payload: &[u8],
        key: Option<RequestKey>,
        _register: &mut dyn FnMut(RequestKey),
    ) -> Option<RequestKey> {
        let Some(RequestKey::WriterSn(sn)) = key else {
            return None;
        };
        let (writers, reply_guid) = {
            let plan = self.lock();
            let client = plan.ids.clients.get(&id)?;
            let writers = plan
                .links
                .service_writers(client.request_writer)
                .filter(|w| w.readers() > 0)?
                .clone();
            (writers, client.reply_guid)
        };
        // Outside the lock: a KEEP_ALL server's full queue may hold the send back.
        writers.send(
            SampleIdentity {
                writer_guid: reply_guid,
                sequence_number: SequenceNumber(sn),
            },
            payload,
        );
        key
    }

    /// Answers over the server's same-host reply writers when the address names a client
    /// reply reader whose pair with them is carried here (the RTPS network declines those:
    /// `carries_pair`).
    fn reply_channel(&self, server: u64, address: &[u8]) -> Option<Box<dyn ReplyChannel>> {
        let route = decode_route(address)?;
        let ReplyRoute::SampleIdentity { related } = route else {
            return None;
        };
        let reader = route.reply_reader()?;
        let mut carried = false;
        self.with_discovery(|discovery, _, plan| {
            carried = plan
                .ids
                .servers
                .get(&server)
                .is_some_and(|&(_, reply_writer)| {
                    plan.links.carries_pair(discovery, reply_writer, reader)
                });
        });
        carried.then(|| -> Box<dyn ReplyChannel> {
            Box::new(CarriedReply {
                backend: self.me.clone(),
                server,
                reader,
                identity: related,
            })
        })
    }

    fn reaches_other_processes(&self) -> bool {
        true
    }

    fn paths(&self) -> Option<&dyn PathView> {
        Some(self)
    }
}

/// How long a reply for a request another server received waits for its client's reply
/// reader to attach to this server's reply writer (as long as an RTPS reply waits for its
/// reader to match).
const CARRIED_REPLY_PATIENCE: Duration = Duration::from_secs(30);

/// The answer, from a local server, to a request another server of the same service received
/// (a node moved to this process answers what waited for it on its old host). This server's
/// endpoints may be new, and the client's reply reader not attached to them yet: the reply is
/// sent once every reader paired with the server's same-host reply writers is attached, on a
/// thread of its own if that takes a while, and after [`CARRIED_REPLY_PATIENCE`] regardless.
struct CarriedReply {
    backend: Weak<SameHostBackend>,
    server: u64,
    /// The client's reply reader.
    reader: Guid,
    /// The identity the client's request carried: its reply reader and the request's number.
    identity: SampleIdentity,
}

impl CarriedReply {
    /// Sends `payload` if the client can take it now (or the time is up); true once it was
    /// sent or cannot be any more.
    fn try_send(&self, payload: &[u8], deadline: Instant) -> bool {
        let Some(backend) = self.backend.upgrade() else {
            return true;
        };
        match backend.reply_readiness(self.server, self.reader) {
            None => true,
            Some((writers, ready)) => {
                let send = ready || Instant::now() >= deadline;
                if send {
                    writers.send(self.identity, payload);
                }
                send
            }
        }
    }
}

impl ReplyChannel for CarriedReply {
    fn send(self: Box<Self>, payload: Vec<u8>) {
        let deadline = Instant::now() + CARRIED_REPLY_PATIENCE;
        if self.try_send(&payload, deadline) {
            return;
        }
        let spawned = std::thread::Builder::new()
            .name("roslite-reply".into())
            .spawn(move || {
                while !self.try_send(&payload, deadline) {
                    std::thread::sleep(Duration::from_millis(5));
                }
            });
        drop(spawned); // no thread to be had: the client times out, as for a lost reply
    }

    fn request_id(&self) -> Option<RequestId> {
        Some(service::request_id(self.identity))
    }

    fn reply_address(&self) -> Option<Vec<u8>> {
        Some(service::reply_address(self.identity))
    }
}

impl PathView for SameHostBackend {
    fn remote_subscriptions_by_path(&self, topic: &str) -> (usize, usize) {
        let plan = self.lock();
        let readers = plan
            .links
            .writers
            .iter()
            .filter(|(_, w)| w.publisher.description.topic == topic)
            .map(|(writer, _)| plan.links.connected_readers(*writer))
            .sum();
        (0, readers)
    }

    fn service_servers_by_path(&self, service: &str) -> (usize, usize) {
        let plan = self.lock();
        let servers = plan
            .ids
            .clients
            .values()
            .filter(|c| c.service == service)
            .map(|c| plan.links.connected_readers(c.request_writer))
            .sum();
        (0, servers)
    }

    /// Pairs not yet attached at the publisher's same-host writers
    /// ([`SameHost::unconnected_writer_pairs`]).
    fn unacknowledged_subscriptions(&self, publisher: u64) -> usize {
        let plan = self.lock();
        plan.ids
            .publishers
            .get(&publisher)
            .map_or(0, |writer| plan.links.unconnected_writer_pairs(*writer))
    }

    /// Links of the subscription not yet attached at their writers
    /// ([`SameHost::unconnected_links`]).
    fn unacknowledged_publishers(&self, subscription: u64) -> usize {
        let plan = self.lock();
        plan.ids
            .subscriptions
            .get(&subscription)
            .map_or(0, |reader| plan.links.unconnected_links(*reader))
    }

    /// Clients paired here: links of the server's request reader to their request writers;
    /// known once those links are attached and as many client reply readers are attached to
    /// the server's reply writer.
    fn service_clients(&self, server: u64) -> (usize, usize) {
        let plan = self.lock();
        let Some(&(request_reader, reply_writer)) = plan.ids.servers.get(&server) else {
            return (0, 0);
        };
        let matched = plan.links.links_of(request_reader);
        let requests_attached =
            matched.saturating_sub(plan.links.unconnected_links(request_reader));
        let replies_attached = plan.links.connected_readers(reply_writer);
        (matched, requests_attached.min(replies_attached))
    }

    fn mark_carried(&self, endpoints: &mut [GraphEndpoint]) {
        self.with_discovery(|discovery, _, plan| {
            for endpoint in endpoints.iter_mut().filter(|e| !e.local) {
                if let Some(data) = discovery.remote_endpoint(Guid::from_bytes(endpoint.gid)) {
                    endpoint.transport = plan.links.transport_of(data, discovery);
                }
            }
        });
    }

    fn service_drops(&self) -> ServiceDrops {
        let (malformed, replies_for_other_clients) = self.lock().links.service_drops();
        ServiceDrops {
            malformed,
            replies_for_other_clients,
            replies_abandoned: 0,
        }
    }
}

impl DiscoveryFollower for SameHostBackend {
    fn user_data(&self) -> String {
        self.lock().links.user_data()
    }

    fn participant_discovered(
        &self,
        prefix: GuidPrefix,
        user_data: &[u8],
    ) -> &'static [&'static str] {
        self.lock().links.participant_discovered(prefix, user_data)
    }

    fn participant_lost(&self, prefix: GuidPrefix, reports: &mut MatchReports) {
        self.lock().links.participant_lost(prefix, reports);
    }

    fn endpoints_changed(
        &self,
        discovery: &Discovery<'_>,
        changed: Option<&[Guid]>,
        reports: &mut MatchReports,
    ) {
        self.lock()
            .links
            .remote_endpoints_changed(discovery, changed, reports);
    }

    fn carries_pair(&self, discovery: &Discovery<'_>, writer: WriterId, reader: Guid) -> bool {
        self.lock().links.carries_pair(discovery, writer, reader)
    }

    fn carries_requests(&self, writer: WriterId) -> bool {
        self.lock()
            .links
            .service_writers(writer)
            .is_some_and(|w| w.readers() > 0)
    }
}
