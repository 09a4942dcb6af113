//! Same-host fast paths between roslite participants: shared memory, else a Unix domain socket.
//! A backend of their own beside the RTPS network (`SameHostBackend`, `backend.rs`).
//!
//! Discovery stays RTPS: this backend follows the network's
//! (`backends::rtps::DiscoveryFollower`). Each roslite participant
//! advertises in its SPDP USER_DATA where its `roslite_shm::Endpoint` listens, which host it
//! runs on (boot id, network namespace, uid) and which same-host transports it offers:
//!
//! ```text
//! enclave=/;roslite_host=<boot id>/<netns inode>/<uid>;roslite_local=@<name>;roslite_via=shm,uds;
//! ```
//!
//! Two participants with equal hosts use the first transport both offer (shared memory, then
//! Unix socket) for their `rt/` topics, and their services' `rq/` and `rr/` topics, whose
//! writers have an infinite liveliness lease (the ROS default) and are VOLATILE, or
//! TRANSIENT_LOCAL with a KEEP_LAST history and no lifespan (`matching::carriable_elsewhere`);
//! the RTPS participant is told to leave those pairs unmatched
//! (`Participant::set_carried_elsewhere`), so nothing is sent twice. A TRANSIENT_LOCAL
//! publisher's same-host writers keep its newest `depth` samples and hand them to a
//! TRANSIENT_LOCAL subscription that connects later, before anything newer. Everything else
//! (discovery, KEEP_ALL or expiring transient-local histories, and every non-roslite peer)
//! stays on UDP. How services correlate replies on these links: `same_host/service.rs`.
//! Both sides decide from the same announcements, so there is nothing to negotiate.
//!
//! Writers: each local publisher gets a shared-memory writer and a Unix-socket writer (only the
//! transports offered), keyed by its RTPS writer GUID, each behind an outlet that is active
//! while it has connected readers. The shared-memory outlet loans a chunk of the encoded size
//! and the publisher serializes the message straight into it (no copy on the send side); the
//! Unix-socket outlet sends the serialized bytes it is handed. Readers: for each (local subscription, remote writer)
//! pair that should flow here, a thread connects to the writer's endpoint and delivers what
//! arrives; shared-memory samples are decoded in place (views into the writer's read-only
//! segment), never copied. Services' readers and writers are handled alike, but outside the
//! publishers' outlets (`service.rs`).
//!
//! The files: this one plans the links from discovery (`SameHost`); `backend.rs` is the
//! backend its context and the RTPS network call; `outlets.rs` holds the outlets publishers
//! send through, `links.rs` the reader threads, `service.rs` the services' writers and
//! readers.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use roslite_rtps::discovery::matching::{carriable_elsewhere, endpoint_carriable_elsewhere};
use roslite_rtps::discovery::ros::user_data_value;
use roslite_rtps::discovery::{DurabilityKind, EndpointData, EndpointKind, History as RtpsHistory};
use roslite_rtps::participant::{ReaderId, WriterId};
use roslite_rtps::types::{Guid, GuidPrefix};
use roslite_shm::{
    Endpoint, EndpointAddress, HostId, ShmWriter, UdsWriter, UdsWriterConfig, WriterConfig,
    WriterKey,
};

use crate::backends::rtps::Discovery;
use crate::seam::service::{ReplySink, RequestSink};
use crate::seam::{LocalPublisher, LocalSubscription};
use crate::vocabulary::config::LocalTransports;
use crate::vocabulary::events::MatchReports;
use crate::vocabulary::log::Logger;

/// Which same-host transport carries a pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinkKind {
    SharedMemory,
    UnixSocket,
}

impl LinkKind {
    pub fn name(self) -> &'static str {
        match self {
            Self::SharedMemory => "shm",
            Self::UnixSocket => "uds",
        }
    }
}

/// The topics whose pairs go over a same-host link: ROS topics, and services' request and
/// reply topics.
const CARRIED_TOPIC_PREFIXES: [&str; 3] = ["rt/", "rq/", "rr/"];

/// Whether `dds_topic` is one a same-host link may carry ([`CARRIED_TOPIC_PREFIXES`]).
fn carried_topic(dds_topic: &str) -> bool {
    CARRIED_TOPIC_PREFIXES
        .iter()
        .any(|prefix| dds_topic.starts_with(prefix))
}

const KEY_HOST: &str = "roslite_host";
const KEY_ADDRESS: &str = "roslite_local";
const KEY_VIA: &str = "roslite_via";

mod backend;
mod links;
mod outlets;
mod service;

pub(crate) use backend::SameHostBackend;

use links::{LinkSpec, LinkStop, LinkTarget, ReaderLink};
use outlets::{ShmOutlet, UdsOutlet};
pub(crate) use service::ServiceWriters;
use service::{SameHostServiceStats, ServiceInlet, ServiceReader};

/// Told that a remote participant's process is gone (on a link's thread, no lock held).
pub(crate) type PeerGone = Arc<dyn Fn(GuidPrefix) + Send + Sync>;

/// Samples a subscription may hold (queued or kept by callbacks) beyond its depth before the
/// reader waits for one to be released.
const HELD_SLACK: u32 = 32;

struct Peer {
    kind: LinkKind,
    address: EndpointAddress,
}

/// The writers of one local publisher.
struct LocalWriter {
    shm: Option<Arc<ShmWriter>>,
    uds: Option<Arc<UdsWriter>>,
    publisher: LocalPublisher,
}

/// The key a writer registers under at its endpoint: its RTPS GUID for shared memory; for
/// the Unix socket the same with the entity kind's top bit set (user writers are kinds 0x02
/// and 0x03, so no GUID has that form).
fn writer_key(guid: Guid, kind: LinkKind) -> WriterKey {
    let mut key = guid.to_bytes();
    if kind == LinkKind::UnixSocket {
        key[15] |= 0x80;
    }
    WriterKey(key)
}

/// How many samples a writer's same-host writers keep for late-joining TRANSIENT_LOCAL
/// subscriptions: its KEEP_LAST depth when it is TRANSIENT_LOCAL and a same-host link may carry
/// its pairs (`endpoint_carriable_elsewhere`), else none (its pairs stay on RTPS, whose writer
/// keeps the history).
fn kept_for_late_joiners(writer: &EndpointData) -> u32 {
    match writer.history {
        RtpsHistory::KeepLast { depth }
            if writer.durability == DurabilityKind::TransientLocal
                && endpoint_carriable_elsewhere(writer) =>
        {
            depth.max(1)
        }
        _ => 0,
    }
}

/// Whether remote endpoint `remote` and local endpoint `local` (a writer and a reader, either
/// way round) match: same topic, compatible QoS.
fn pair_matches(remote: &EndpointData, local: &EndpointData) -> bool {
    let (writer, reader) = match remote.kind {
        EndpointKind::Writer => (remote, local),
        EndpointKind::Reader => (local, remote),
    };
    roslite_rtps::discovery::matching::same_topic(writer, reader)
        && roslite_rtps::discovery::matching::check_compatible(writer, reader).is_ok()
}

/// Outlet ids must not collide with the RTPS outlet's (the publisher's local id).
const SHM_OUTLET: u64 = 1 << 62;
const UDS_OUTLET: u64 = 1 << 61;

/// The links planned from discovery, and this context's endpoints they serve.
pub(crate) struct SameHost {
    endpoint: Arc<Endpoint>,
    host: String,
    offered: LocalTransports,
    peers: HashMap<GuidPrefix, Peer>,
    writers: HashMap<WriterId, LocalWriter>,
    /// Local subscriptions by the RTPS reader peers know them by.
    subscriptions: HashMap<ReaderId, LocalSubscription>,
    links: HashMap<(ReaderId, Guid), ReaderLink>,
    /// Pairs of a local writer and a remote reader carried here, as discovery sees them (the
    /// remote side connects to the writer on its own): what the publisher counts as matched.
    writer_pairs: HashSet<(WriterId, Guid)>,
    /// Same-host writers of local clients' request writers and servers' reply writers.
    service_writers: HashMap<WriterId, Arc<ServiceWriters>>,
    /// Local servers' request readers and clients' reply readers.
    service_readers: HashMap<ReaderId, Arc<ServiceReader>>,
    service_stats: Arc<SameHostServiceStats>,
    logger: Logger,
    peer_gone: PeerGone,
}

impl SameHost {
    /// Binds this participant's endpoint; `None` (with a log line) when same-host transports
    /// are off or unavailable, and everything stays on UDP.
    pub(crate) fn start(
        offered: LocalTransports,
        logger: Logger,
        peer_gone: PeerGone,
    ) -> Option<Self> {
        if !offered.shm && !offered.uds {
            return None;
        }
        let host = match HostId::current() {
            Ok(h) => h.to_string(),
            Err(e) => {
                logger.warn(format_args!(
                    "same-host transports off: cannot read this host's identity: {e}"
                ));
                return None;
            }
        };
        match Endpoint::bind() {
            Ok(endpoint) => Some(Self {
                endpoint: Arc::new(endpoint),
                host,
                offered,
                peers: HashMap::new(),
                writers: HashMap::new(),
                subscriptions: HashMap::new(),
                links: HashMap::new(),
                writer_pairs: HashSet::new(),
                service_writers: HashMap::new(),
                service_readers: HashMap::new(),
                service_stats: Arc::default(),
                logger,
                peer_gone,
            }),
            Err(e) => {
                logger.warn(format_args!(
                    "same-host transports off: cannot bind the local endpoint: {e}"
                ));
                None
            }
        }
    }

    /// What to append to the participant's USER_DATA.
    pub(crate) fn user_data(&self) -> String {
        let mut via = Vec::new();
        if self.offered.shm {
            via.push("shm");
        }
        if self.offered.uds {
            via.push("uds");
        }
        format!(
            "{KEY_HOST}={};{KEY_ADDRESS}={};{KEY_VIA}={};",
            self.host,
            self.endpoint.address(),
            via.join(",")
        )
    }

    /// The link a remote participant gets, from its USER_DATA; `None`: UDP.
    fn link_for(&self, user_data: &[u8]) -> Option<(LinkKind, EndpointAddress)> {
        if user_data_value(user_data, KEY_HOST)? != self.host {
            return None;
        }
        let address: EndpointAddress = user_data_value(user_data, KEY_ADDRESS)?.parse().ok()?;
        let via: HashSet<&str> = user_data_value(user_data, KEY_VIA)?.split(',').collect();
        let kind = if self.offered.shm && via.contains("shm") {
            LinkKind::SharedMemory
        } else if self.offered.uds && via.contains("uds") {
            LinkKind::UnixSocket
        } else {
            return None;
        };
        Some((kind, address))
    }

    /// A remote participant appeared with `user_data`: if it shares our host, its topics
    /// move here (the topic prefixes carried, for the RTPS participant to leave unmatched).
    pub(crate) fn participant_discovered(
        &mut self,
        prefix: GuidPrefix,
        user_data: &[u8],
    ) -> &'static [&'static str] {
        let Some((kind, address)) = self.link_for(user_data) else {
            return &[];
        };
        self.peers.insert(prefix, Peer { kind, address });
        &CARRIED_TOPIC_PREFIXES
    }

    /// A remote participant is gone: its pairs end (each unmatch is added to `reports`).
    pub(crate) fn participant_lost(&mut self, prefix: GuidPrefix, reports: &mut MatchReports) {
        self.peers.remove(&prefix);
        self.links.retain(|(_, writer), link| {
            let keep = writer.prefix != prefix;
            if let (false, Some(events)) = (keep, &link.events) {
                reports.push((events.clone(), false));
            }
            keep
        });
        let writers = &self.writers;
        self.writer_pairs.retain(|(writer, reader)| {
            let keep = reader.prefix != prefix;
            if let (false, Some(w)) = (keep, writers.get(writer)) {
                reports.push((w.publisher.events.clone(), false));
            }
            keep
        });
    }

    /// The link used with the participant of `guid`, if any.
    pub(crate) fn link_of(&self, guid: Guid) -> Option<LinkKind> {
        self.peers.get(&guid.prefix).map(|p| p.kind)
    }

    /// Whether the pair of remote endpoint `remote` and local endpoint `local` (a writer and
    /// a reader, either way round) is carried here; the RTPS participant leaves exactly these
    /// pairs unmatched.
    fn carried(&self, remote: &EndpointData, local: &EndpointData) -> bool {
        self.peers.contains_key(&remote.guid.prefix)
            && carried_topic(&remote.topic_name)
            && carriable_elsewhere(remote, local)
    }

    /// [`Self::carried`] for a pair that also matches.
    fn carries(&self, remote: &EndpointData, local: &EndpointData) -> bool {
        pair_matches(remote, local) && self.carried(remote, local)
    }

    /// The transport this participant uses with remote endpoint `remote` (for graph queries):
    /// `shm`/`uds` where its pairs are carried here, else `udp`. A writer's pairs are carried
    /// or not by the writer's QoS alone (every reader it matches is VOLATILE or
    /// TRANSIENT_LOCAL); a reader's also depend on the writer's history, so it is judged
    /// against this participant's writers on its topic, or by its own QoS when there are none.
    pub(crate) fn transport_of(
        &self,
        remote: &EndpointData,
        discovery: &Discovery<'_>,
    ) -> &'static str {
        let Some(kind) = self.link_of(remote.guid) else {
            return "udp";
        };
        let by_its_qos =
            || carried_topic(&remote.topic_name) && endpoint_carriable_elsewhere(remote);
        let carried = match remote.kind {
            EndpointKind::Writer => by_its_qos(),
            EndpointKind::Reader => {
                let mut ours = self
                    .writers
                    .keys()
                    .filter_map(|writer| discovery.writer_data(*writer))
                    .filter(|writer| pair_matches(remote, writer))
                    .peekable();
                if ours.peek().is_some() {
                    ours.any(|writer| self.carried(remote, writer))
                } else {
                    by_its_qos()
                }
            }
        };
        if carried {
            kind.name()
        } else {
            "udp"
        }
    }

    /// A local publisher got RTPS writer `writer`: give it same-host writers too.
    pub(crate) fn publisher_added(
        &mut self,
        discovery: &Discovery<'_>,
        writer: WriterId,
        publisher: &LocalPublisher,
    ) {
        let guid = writer.guid(discovery.guid_prefix());
        let kept_for_late_joiners = discovery
            .writer_data(writer)
            .map_or(0, kept_for_late_joiners);
        let (shm, uds) = self.create_writers(guid, kept_for_late_joiners);
        let (shm, uds) = (shm.map(Arc::new), uds.map(Arc::new));
        let id = publisher.description.id;
        let keeps = kept_for_late_joiners > 0;
        if let Some(w) = &shm {
            publisher.attach(id | SHM_OUTLET, Arc::new(ShmOutlet::new(w, keeps)));
        }
        if let Some(w) = &uds {
            publisher.attach(id | UDS_OUTLET, Arc::new(UdsOutlet::new(w, keeps)));
        }
        self.writers.insert(
            writer,
            LocalWriter {
                shm,
                uds,
                publisher: publisher.clone(),
            },
        );
    }

    /// A shared-memory and a Unix-socket writer (those offered) for local RTPS writer `guid`,
    /// keeping its newest `kept_for_late_joiners` samples; one that cannot be created is
    /// logged and left out.
    fn create_writers(
        &self,
        guid: Guid,
        kept_for_late_joiners: u32,
    ) -> (Option<ShmWriter>, Option<UdsWriter>) {
        let max_blocking_time = crate::vocabulary::qos::MAX_BLOCKING_TIME;
        let keep_all_max_bytes = crate::vocabulary::qos::keep_all_max_bytes()
            .unwrap_or(crate::vocabulary::qos::KEEP_ALL_MAX_BYTES);
        let shm = self
            .offered
            .shm
            .then(|| {
                ShmWriter::create(
                    &self.endpoint,
                    writer_key(guid, LinkKind::SharedMemory),
                    WriterConfig {
                        max_blocking_time,
                        kept_for_late_joiners,
                        keep_all_max_bytes,
                        ..WriterConfig::default()
                    },
                )
            })
            .and_then(|r| {
                r.map_err(|e| {
                    self.logger
                        .warn(format_args!("no shared-memory writer: {e}"))
                })
                .ok()
            });
        let uds = self
            .offered
            .uds
            .then(|| {
                UdsWriter::create(
                    &self.endpoint,
                    writer_key(guid, LinkKind::UnixSocket),
                    UdsWriterConfig {
                        max_blocking_time,
                        kept_for_late_joiners,
                        keep_all_max_bytes,
                        ..UdsWriterConfig::default()
                    },
                )
            })
            .and_then(|r| {
                r.map_err(|e| self.logger.warn(format_args!("no Unix-socket writer: {e}")))
                    .ok()
            });
        (shm, uds)
    }

    /// A local server got request reader `request_reader` and reply writer `reply_writer`
    /// (GUID `reply_guid`): requests from same-host clients reach `sink`, and its replies go
    /// back over same-host writers of its own. Call [`Self::refresh`] after.
    pub(crate) fn service_server_added(
        &mut self,
        request_reader: ReaderId,
        reply_writer: WriterId,
        reply_guid: Guid,
        sink: Arc<dyn RequestSink>,
    ) {
        let (shm, uds) = self.create_writers(reply_guid, 0);
        let replies = Arc::new(ServiceWriters { shm, uds });
        let inlet = ServiceInlet::Requests {
            sink,
            replies: Arc::downgrade(&replies),
        };
        self.service_writers.insert(reply_writer, replies);
        self.service_readers.insert(
            request_reader,
            Arc::new(ServiceReader::new(inlet, self.service_stats.clone())),
        );
    }

    /// A local client got request writer `request_writer` (GUID `request_guid`) and reply
    /// reader `reply_reader` (GUID `reply_guid`): its requests also go to same-host servers,
    /// and their replies addressed to it reach `sink`. Call [`Self::refresh`] after.
    pub(crate) fn service_client_added(
        &mut self,
        request_writer: WriterId,
        request_guid: Guid,
        reply_reader: ReaderId,
        reply_guid: Guid,
        sink: Arc<dyn ReplySink>,
    ) {
        let (shm, uds) = self.create_writers(request_guid, 0);
        self.service_writers
            .insert(request_writer, Arc::new(ServiceWriters { shm, uds }));
        let inlet = ServiceInlet::Replies {
            sink,
            reply_reader: reply_guid,
        };
        self.service_readers.insert(
            reply_reader,
            Arc::new(ServiceReader::new(inlet, self.service_stats.clone())),
        );
    }

    /// A local server or client is gone: its same-host writer stops (readers see the end) and
    /// its reader's links end.
    pub(crate) fn service_endpoints_removed(&mut self, writer: WriterId, reader: ReaderId) {
        self.service_writers.remove(&writer);
        self.service_readers.remove(&reader);
        self.links.retain(|(r, _), _| *r != reader);
    }

    /// The same-host writers of a local client's request writer or server's reply writer.
    pub(crate) fn service_writers(&self, writer: WriterId) -> Option<&Arc<ServiceWriters>> {
        self.service_writers.get(&writer)
    }

    /// Whether a local client can call a same-host server: some server's request reader is
    /// connected to the client's request writer, and the client's reply reader to some
    /// server's reply writer (as RTPS readiness asks both endpoints to have matched).
    pub(crate) fn service_client_ready(
        &self,
        request_writer: WriterId,
        reply_reader: ReaderId,
    ) -> bool {
        self.connected_readers(request_writer) > 0
            && self
                .service_readers
                .get(&reply_reader)
                .is_some_and(|r| r.connected_links() > 0)
    }

    /// Same-host service traffic dropped so far: `(malformed, replies for other clients)`.
    pub(crate) fn service_drops(&self) -> (u64, u64) {
        (
            self.service_stats.malformed.load(Ordering::Relaxed),
            self.service_stats
                .replies_for_other_clients
                .load(Ordering::Relaxed),
        )
    }

    pub(crate) fn publisher_removed(&mut self, writer: WriterId) {
        self.writer_pairs.retain(|(w, _)| *w != writer);
        if let Some(w) = self.writers.remove(&writer) {
            let id = w.publisher.description.id;
            w.publisher.detach(id | SHM_OUTLET);
            w.publisher.detach(id | UDS_OUTLET);
        }
    }

    pub(crate) fn subscription_added(&mut self, reader: ReaderId, subscription: LocalSubscription) {
        self.subscriptions.insert(reader, subscription);
    }

    pub(crate) fn subscription_removed(&mut self, reader: ReaderId) {
        self.subscriptions.remove(&reader);
        self.links.retain(|(r, _), _| *r != reader);
    }

    /// Readers connected to local writer `writer` (a publisher's, a client's request writer
    /// or a server's reply writer) over same-host links.
    pub(crate) fn connected_readers(&self, writer: WriterId) -> usize {
        if let Some(w) = self.service_writers.get(&writer) {
            return w.readers();
        }
        self.writers.get(&writer).map_or(0, |w| {
            w.shm.as_ref().map_or(0, |s| s.stats().readers)
                + w.uds.as_ref().map_or(0, |u| u.stats().readers)
        })
    }

    /// Starts and stops reader links so that every carried (remote writer, local
    /// subscription) pair has one, and follows the carried (local writer, remote reader)
    /// pairs. Called whenever endpoints change; each match and unmatch is added to `reports`.
    pub(crate) fn refresh(&mut self, discovery: &Discovery<'_>, reports: &mut MatchReports) {
        self.refresh_writer_pairs(discovery, reports);
        let readers: Vec<(ReaderId, &EndpointData, LinkTarget)> = self
            .subscriptions
            .iter()
            .map(|(reader, s)| (*reader, LinkTarget::Topic(Box::new(s.clone()))))
            .chain(
                self.service_readers
                    .iter()
                    .map(|(reader, s)| (*reader, LinkTarget::Service(s.clone()))),
            )
            .filter_map(|(reader, target)| Some((reader, discovery.reader_data(reader)?, target)))
            .collect();
        let mut wanted: HashMap<(ReaderId, Guid), (EndpointData, LinkTarget)> = HashMap::new();
        for data in discovery.remote_endpoints() {
            if data.kind != EndpointKind::Writer || !self.peers.contains_key(&data.guid.prefix) {
                continue;
            }
            for (reader, local, target) in &readers {
                if self.carries(data, local) {
                    wanted.insert((*reader, data.guid), ((*local).clone(), target.clone()));
                }
            }
        }
        self.links.retain(|pair, link| {
            let keep = wanted.contains_key(pair);
            if let (false, Some(events)) = (keep, &link.events) {
                reports.push((events.clone(), false));
            }
            keep
        });
        for (pair, (local, target)) in wanted {
            if self.links.contains_key(&pair) {
                continue;
            }
            let Some(peer) = self.peers.get(&pair.1.prefix) else {
                continue;
            };
            let stop = Arc::new(LinkStop::default());
            let link = LinkSpec {
                endpoint: self.endpoint.clone(),
                kind: peer.kind,
                address: peer.address.clone(),
                writer: pair.1,
                history: match local.history {
                    RtpsHistory::KeepLast { depth } => roslite_shm::History::KeepLast(depth.max(1)),
                    RtpsHistory::KeepAll => roslite_shm::History::KeepAll(1000),
                },
                wants_kept: local.durability == DurabilityKind::TransientLocal,
                target,
                stop: stop.clone(),
                receive_spin: self.offered.receive_spin,
                logger: self.logger.clone(),
                peer_gone: self.peer_gone.clone(),
            };
            let events = match &link.target {
                LinkTarget::Topic(subscription) => Some(subscription.events.clone()),
                LinkTarget::Service(_) => None,
            };
            let spawned = std::thread::Builder::new()
                .name("roslite-local-rx".into())
                .stack_size(64 << 10)
                .spawn(move || link.run());
            match spawned {
                Ok(_) => {
                    if let Some(events) = &events {
                        reports.push((events.clone(), true));
                    }
                    self.links.insert(pair, ReaderLink { stop, events });
                }
                Err(e) => self
                    .logger
                    .warn(format_args!("cannot start a same-host reader: {e}")),
            }
        }
    }

    /// [`Self::refresh`] for the publishers' side: all a new local publisher needs.
    pub(crate) fn refresh_writer_pairs(
        &mut self,
        discovery: &Discovery<'_>,
        reports: &mut MatchReports,
    ) {
        let mut wanted = HashSet::new();
        for data in discovery.remote_endpoints() {
            if data.kind != EndpointKind::Reader || !self.peers.contains_key(&data.guid.prefix) {
                continue;
            }
            for writer in self.writers.keys() {
                let Some(local) = discovery.writer_data(*writer) else {
                    continue;
                };
                if self.carries(data, local) {
                    wanted.insert((*writer, data.guid));
                }
            }
        }
        let writers = &self.writers;
        let mut report = |writer: &WriterId, matched: bool| {
            if let Some(w) = writers.get(writer) {
                reports.push((w.publisher.events.clone(), matched));
            }
        };
        for pair in self.writer_pairs.difference(&wanted) {
            report(&pair.0, false);
        }
        for pair in wanted.difference(&self.writer_pairs) {
            report(&pair.0, true);
        }
        self.writer_pairs = wanted;
    }
}
