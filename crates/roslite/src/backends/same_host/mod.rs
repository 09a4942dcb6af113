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
//! TRANSIENT_LOCAL with a KEEP_LAST history, no lifespan and a keyless type
//! (`matching::carriable_elsewhere`);
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
//! pair that should flow here, a link connects to the writer's endpoint and delivers what
//! arrives; shared-memory samples are decoded in place (views into the writer's read-only
//! segment), never copied. A local reader's first link runs on a thread of its own, and its
//! further links share one more thread (`shared_thread.rs`): two threads a reader, whatever the
//! number of writers it is matched with. Services' readers and writers are handled alike, but outside the
//! publishers' outlets (`service.rs`).
//!
//! The files: this one plans the links from discovery (`SameHost`); `backend.rs` is the
//! backend its context and the RTPS network call; `outlets.rs` holds the outlets publishers
//! send through, `links.rs` the links and a reader's first link's thread, `shared_thread.rs`
//! the thread its further links share, `service.rs` the services' writers and readers.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
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
mod shared_thread;
#[cfg(test)]
mod tests;

pub(crate) use backend::SameHostBackend;

use links::{LinkSpec, LinkStop, LinkTarget, ReaderLink};
use outlets::{ShmOutlet, UdsOutlet};
pub(crate) use service::ServiceWriters;
use service::{SameHostServiceStats, ServiceInlet, ServiceReader};
use shared_thread::{Attacher, SharedThread};

/// Clears its flag when dropped: a thread's "still running", also when it panics.
struct RunningUntilDropped(Arc<AtomicBool>);

impl Drop for RunningUntilDropped {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// Told that a remote participant's process is gone (on a link's thread, no lock held).
pub(crate) type PeerGone = Arc<dyn Fn(GuidPrefix) + Send + Sync>;

/// The stack a link's reader thread gets unless the program asked for more
/// ([`require_link_thread_stack`]): what roslite's own delivery and a native callback run
/// inline need.
const LINK_THREAD_STACK: usize = 64 << 10;

/// The stack link reader threads started from now on get ([`require_link_thread_stack`]).
static LINK_STACK: AtomicUsize = AtomicUsize::new(LINK_THREAD_STACK);

/// Gives the reader threads of same-host links started from now on at least `bytes` of
/// stack. A link's reader thread runs the subscription's or server's callback itself when
/// its executor lends its turn (inline dispatch); a program whose callbacks need a deep stack
/// (a WebAssembly host: wasmtime lets a guest use 512 KiB of it) asks for it before it makes
/// its endpoints. Threads are given 64 KiB otherwise; the memory a stack costs is what it
/// touches.
pub fn require_link_thread_stack(bytes: usize) {
    LINK_STACK.fetch_max(bytes, Ordering::Relaxed);
}

/// The fewest samples the same-host ring (or Unix-socket queue) of a keep-last subscription's
/// link holds ([`require_keep_last_ring_depth`]); 1: its depth alone decides.
static KEEP_LAST_RING_FLOOR: AtomicU32 = AtomicU32::new(1);

/// The deepest ring [`require_keep_last_ring_depth`] asks for.
pub const MAX_KEEP_LAST_RING_FLOOR: u32 = 1024;

/// Gives the links of volatile keep-last subscriptions made from now on a ring of at least
/// `depth` samples (at most [`MAX_KEEP_LAST_RING_FLOOR`]), whatever the subscription's depth.
///
/// A link's ring sits between the writer and the link's reader thread: the writer overwrites
/// its oldest unread sample when it is full. Sized by the subscription's depth, a depth-1
/// subscription loses a message whenever its link thread is not scheduled before the next
/// one arrives, before the subscription's queue ever saw it. A program that must see each
/// message its queue could keep (a WebAssembly host: a node it moves to another process
/// keeps every message while it moves, docs/migration.md) asks for a deeper ring before it
/// makes its endpoints. The subscription's queue still keeps its depth, so what a callback
/// sees is unchanged. A shared-memory channel stays one page up to a depth of 69 (48 bytes a
/// slot with its releases, after 776), and a sample holds its chunk only while it waits unread.
pub fn require_keep_last_ring_depth(depth: u32) {
    KEEP_LAST_RING_FLOOR.fetch_max(depth.min(MAX_KEEP_LAST_RING_FLOOR), Ordering::Relaxed);
}

/// The ring a link to local reader `local` gets. A TRANSIENT_LOCAL reader's ring keeps its
/// depth: the writer replays as many of its kept samples as the ring holds, and a late joiner
/// is owed its depth of them, not the floor's. Not a keyed topic's reader: its depth is per
/// instance, which one ring cannot keep, so it gets the floor like a volatile one, and the
/// subscription's queue keeps `depth` of each instance (a keyed topic's transient-local
/// writers stay on RTPS, so nothing is replayed into it).
fn link_history(local: &EndpointData) -> roslite_shm::History {
    let keyed = local.guid.entity_id.is_with_key();
    match local.history {
        RtpsHistory::KeepLast { depth }
            if local.durability == DurabilityKind::TransientLocal && !keyed =>
        {
            roslite_shm::History::KeepLast(depth.max(1))
        }
        RtpsHistory::KeepLast { depth } => roslite_shm::History::KeepLast(
            depth
                .max(KEEP_LAST_RING_FLOOR.load(Ordering::Relaxed))
                .max(1),
        ),
        RtpsHistory::KeepAll => roslite_shm::History::KeepAll(1000),
    }
}

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
    /// Whether the thread of a local reader's first link (`links.rs`) still runs: while it
    /// does, the reader's further links go to its [`SharedThread`].
    first_link_running: HashMap<ReaderId, Arc<AtomicBool>>,
    /// The thread a local reader's further links share.
    shared_threads: HashMap<ReaderId, SharedThread>,
    /// Attaches the links of the shared threads at their writers.
    attacher: Attacher,
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
    /// Remote endpoints re-planned so far (see [`Self::pairs_planned`]).
    pairs_planned: u64,
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
                first_link_running: HashMap::new(),
                shared_threads: HashMap::new(),
                attacher: Attacher::default(),
                writer_pairs: HashSet::new(),
                service_writers: HashMap::new(),
                service_readers: HashMap::new(),
                service_stats: Arc::default(),
                logger,
                peer_gone,
                pairs_planned: 0,
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

    /// Whether the pair of local writer `writer` and remote reader `reader` is carried here, as
    /// discovery knows them now (false for one it does not know).
    pub(crate) fn carries_pair(
        &self,
        discovery: &Discovery<'_>,
        writer: WriterId,
        reader: Guid,
    ) -> bool {
        match (
            discovery.remote_endpoint(reader),
            discovery.writer_data(writer),
        ) {
            (Some(remote), Some(local)) => self.carries(remote, local),
            _ => false,
        }
    }

    /// The remote readers paired here with local writer `writer`, as discovery knows them now.
    pub(crate) fn carried_readers(&self, discovery: &Discovery<'_>, writer: WriterId) -> usize {
        let Some(local) = discovery.writer_data(writer) else {
            return 0;
        };
        discovery
            .remote_endpoints()
            .filter(|remote| remote.kind == EndpointKind::Reader && self.carries(remote, local))
            .count()
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

    /// A local publisher got RTPS writer `writer`: give it same-host writers too, and count
    /// its pairs with same-host readers.
    pub(crate) fn publisher_added(
        &mut self,
        discovery: &Discovery<'_>,
        writer: WriterId,
        publisher: &LocalPublisher,
        reports: &mut MatchReports,
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
        self.local_writer_added(discovery, writer, reports);
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
                        room_spin: self.offered.receive_spin,
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
    /// back over same-host writers of its own.
    pub(crate) fn service_server_added(
        &mut self,
        discovery: &Discovery<'_>,
        request_reader: ReaderId,
        reply_writer: WriterId,
        sink: Arc<dyn RequestSink>,
        reports: &mut MatchReports,
    ) {
        let reply_guid = reply_writer.guid(discovery.guid_prefix());
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
        self.local_reader_added(discovery, request_reader, reports);
    }

    /// A local client got request writer `request_writer` (GUID `request_guid`) and reply
    /// reader `reply_reader` (GUID `reply_guid`): its requests also go to same-host servers,
    /// and their replies addressed to it reach `sink`.
    pub(crate) fn service_client_added(
        &mut self,
        discovery: &Discovery<'_>,
        request_writer: WriterId,
        reply_reader: ReaderId,
        sink: Arc<dyn ReplySink>,
        reports: &mut MatchReports,
    ) {
        let request_guid = request_writer.guid(discovery.guid_prefix());
        let reply_guid = reply_reader.guid(discovery.guid_prefix());
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
        self.local_reader_added(discovery, reply_reader, reports);
    }

    /// A local server or client is gone: its same-host writer stops (readers see the end) and
    /// its reader's links end.
    pub(crate) fn service_endpoints_removed(&mut self, writer: WriterId, reader: ReaderId) {
        self.service_writers.remove(&writer);
        self.service_readers.remove(&reader);
        self.reader_removed(reader);
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

    /// A local subscription got RTPS reader `reader`: its links to same-host writers start.
    pub(crate) fn subscription_added(
        &mut self,
        discovery: &Discovery<'_>,
        reader: ReaderId,
        subscription: LocalSubscription,
        reports: &mut MatchReports,
    ) {
        self.subscriptions.insert(reader, subscription);
        self.local_reader_added(discovery, reader, reports);
    }

    pub(crate) fn subscription_removed(&mut self, reader: ReaderId) {
        self.subscriptions.remove(&reader);
        self.reader_removed(reader);
    }

    /// Local reader `reader` is gone: its links and their threads end.
    fn reader_removed(&mut self, reader: ReaderId) {
        self.links.retain(|(r, _), _| *r != reader);
        self.first_link_running.remove(&reader);
        self.shared_threads.remove(&reader);
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

    /// Links of local reader `reader`: the remote writers it is paired with here.
    pub(crate) fn links_of(&self, reader: ReaderId) -> usize {
        self.links.keys().filter(|(r, _)| *r == reader).count()
    }

    /// Links of local subscription reader `reader` (each counted as a match) whose reader is
    /// not attached at its writer yet: the writer does not send to it until it is.
    pub(crate) fn unconnected_links(&self, reader: ReaderId) -> usize {
        self.links
            .iter()
            .filter(|((r, _), link)| *r == reader && !link.connected.load(Ordering::Acquire))
            .count()
    }

    /// Pairs of local publisher writer `writer` with remote readers (each counted as a match)
    /// beyond the readers attached at its same-host writers: those readers do not receive
    /// from it yet. A writer's endpoint does not learn which reader attached, so this counts
    /// (a reader attached for a pair that discovery has already ended may make up for one
    /// not attached yet, for as long as that reader takes to go).
    pub(crate) fn unconnected_writer_pairs(&self, writer: WriterId) -> usize {
        let pairs = self
            .writer_pairs
            .iter()
            .filter(|(w, _)| *w == writer)
            .count();
        pairs.saturating_sub(self.connected_readers(writer))
    }

    /// Re-plans every pair: each remote endpoint as [`Self::remote_endpoint_changed`] does.
    /// For when discovery cannot say which endpoints changed; costs remote x local endpoints.
    pub(crate) fn refresh(&mut self, discovery: &Discovery<'_>, reports: &mut MatchReports) {
        let remotes: Vec<Guid> = discovery.remote_endpoints().map(|d| d.guid).collect();
        for guid in remotes {
            self.remote_endpoint_changed(discovery, guid, reports);
        }
    }

    /// Remote endpoints `changed` (announced, changed or gone; `None`: any) since the last
    /// call: re-plans their pairs only.
    pub(crate) fn remote_endpoints_changed(
        &mut self,
        discovery: &Discovery<'_>,
        changed: Option<&[Guid]>,
        reports: &mut MatchReports,
    ) {
        match changed {
            Some(guids) => {
                for guid in guids {
                    self.remote_endpoint_changed(discovery, *guid, reports);
                }
            }
            None => self.refresh(discovery, reports),
        }
    }

    /// Starts and stops the links and follows the writer pairs of remote endpoint `guid`, as
    /// discovery knows it now (gone: its pairs end). Costs this context's endpoints, not the
    /// remote ones: what discovery reports endpoint by endpoint stays linear in the graph.
    fn remote_endpoint_changed(
        &mut self,
        discovery: &Discovery<'_>,
        guid: Guid,
        reports: &mut MatchReports,
    ) {
        self.pairs_planned = self.pairs_planned.saturating_add(1);
        let data = discovery.remote_endpoint(guid);
        let is_writer = data.is_none_or(|d| d.kind == EndpointKind::Writer);
        let is_reader = data.is_none_or(|d| d.kind == EndpointKind::Reader);
        if is_writer {
            let readers: Vec<(ReaderId, LinkTarget)> = self.reader_targets();
            for (reader, target) in readers {
                let local = discovery.reader_data(reader);
                let wanted = match (data, local) {
                    (Some(remote), Some(local)) => self.carries(remote, local),
                    _ => false,
                };
                self.plan_link(reader, guid, wanted, local, target, reports);
            }
        }
        if is_reader {
            let writers: Vec<WriterId> = self.writers.keys().copied().collect();
            for writer in writers {
                let wanted = match (data, discovery.writer_data(writer)) {
                    (Some(remote), Some(local)) => self.carries(remote, local),
                    _ => false,
                };
                self.plan_writer_pair(writer, guid, wanted, reports);
            }
        }
    }

    /// Plans the pairs of local reader `reader` (a subscription's, a server's request reader
    /// or a client's reply reader) with every remote writer: for a reader just added.
    fn local_reader_added(
        &mut self,
        discovery: &Discovery<'_>,
        reader: ReaderId,
        reports: &mut MatchReports,
    ) {
        let Some(target) = self.reader_target(reader) else {
            return;
        };
        let local = discovery.reader_data(reader);
        let remotes: Vec<&EndpointData> = discovery
            .remote_endpoints()
            .filter(|d| d.kind == EndpointKind::Writer)
            .collect();
        for remote in remotes {
            let wanted = local.is_some_and(|local| self.carries(remote, local));
            self.plan_link(reader, remote.guid, wanted, local, target.clone(), reports);
        }
    }

    /// Plans the pairs of local publisher writer `writer` with every remote reader: for a
    /// publisher just added.
    fn local_writer_added(
        &mut self,
        discovery: &Discovery<'_>,
        writer: WriterId,
        reports: &mut MatchReports,
    ) {
        let Some(local) = discovery.writer_data(writer) else {
            return;
        };
        let remotes: Vec<&EndpointData> = discovery
            .remote_endpoints()
            .filter(|d| d.kind == EndpointKind::Reader)
            .collect();
        for remote in remotes {
            let wanted = self.carries(remote, local);
            self.plan_writer_pair(writer, remote.guid, wanted, reports);
        }
    }

    /// Every local reader a link can deliver to, with where it delivers.
    fn reader_targets(&self) -> Vec<(ReaderId, LinkTarget)> {
        self.subscriptions
            .iter()
            .map(|(reader, s)| (*reader, LinkTarget::Topic(Box::new(s.clone()))))
            .chain(
                self.service_readers
                    .iter()
                    .map(|(reader, s)| (*reader, LinkTarget::Service(s.clone()))),
            )
            .collect()
    }

    fn reader_target(&self, reader: ReaderId) -> Option<LinkTarget> {
        if let Some(s) = self.subscriptions.get(&reader) {
            return Some(LinkTarget::Topic(Box::new(s.clone())));
        }
        self.service_readers
            .get(&reader)
            .map(|s| LinkTarget::Service(s.clone()))
    }

    /// Makes the link of (local `reader`, remote writer `writer`) exist iff `wanted`: a new
    /// one starts a reader thread and counts as a match, an ended one as an unmatch.
    fn plan_link(
        &mut self,
        reader: ReaderId,
        writer: Guid,
        wanted: bool,
        local: Option<&EndpointData>,
        target: LinkTarget,
        reports: &mut MatchReports,
    ) {
        let pair = (reader, writer);
        let have = self.links.contains_key(&pair);
        if have && !wanted {
            if let Some(events) = self
                .links
                .remove(&pair)
                .and_then(|link| link.events.clone())
            {
                reports.push((events, false));
            }
            return;
        }
        if have || !wanted {
            return;
        }
        let (Some(local), Some(peer)) = (local, self.peers.get(&writer.prefix)) else {
            return;
        };
        let stop = Arc::new(LinkStop::default());
        let connected = Arc::new(AtomicBool::new(false));
        let link = LinkSpec {
            endpoint: self.endpoint.clone(),
            kind: peer.kind,
            address: peer.address.clone(),
            writer,
            history: link_history(local),
            wants_kept: local.durability == DurabilityKind::TransientLocal,
            target,
            stop: stop.clone(),
            connected: connected.clone(),
            receive_spin: self.offered.receive_spin,
            logger: self.logger.clone(),
            peer_gone: self.peer_gone.clone(),
        };
        let events = match &link.target {
            LinkTarget::Topic(subscription) => Some(subscription.events.clone()),
            LinkTarget::Service(_) => None,
        };
        match self.start_link(reader, link) {
            Ok(_) => {
                if let Some(events) = &events {
                    reports.push((events.clone(), true));
                }
                self.links.insert(
                    pair,
                    ReaderLink {
                        stop,
                        connected,
                        events,
                    },
                );
            }
            Err(e) => self
                .logger
                .warn(format_args!("cannot start a same-host reader: {e}")),
        }
    }

    /// Starts `link` of local reader `reader`: on a thread of its own if it is the reader's
    /// only running link, else on the reader's shared thread (`shared_thread.rs`).
    fn start_link(&mut self, reader: ReaderId, link: LinkSpec) -> std::io::Result<()> {
        let stack = LINK_STACK.load(Ordering::Relaxed);
        let first_running = self
            .first_link_running
            .get(&reader)
            .is_some_and(|running| running.load(Ordering::Acquire));
        if first_running {
            let shared = match self.shared_threads.entry(reader) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(SharedThread::start(link.target.clone(), stack)?)
                }
            };
            return shared.add(link, &self.attacher);
        }
        let running = Arc::new(AtomicBool::new(true));
        let ended = RunningUntilDropped(running.clone());
        std::thread::Builder::new()
            .name("roslite-local-rx".into())
            .stack_size(stack)
            .spawn(move || {
                let _ended = ended;
                link.run();
            })?;
        self.first_link_running.insert(reader, running);
        Ok(())
    }

    /// Makes the pair of local publisher writer `writer` and remote reader `reader` counted
    /// iff `wanted` (the remote side connects on its own).
    fn plan_writer_pair(
        &mut self,
        writer: WriterId,
        reader: Guid,
        wanted: bool,
        reports: &mut MatchReports,
    ) {
        let pair = (writer, reader);
        let changed = if wanted {
            self.writer_pairs.insert(pair)
        } else {
            self.writer_pairs.remove(&pair)
        };
        if let (true, Some(w)) = (changed, self.writers.get(&writer)) {
            reports.push((w.publisher.events.clone(), wanted));
        }
    }

    /// Remote endpoints looked at by the planning so far, one per endpoint and change: what
    /// a test counts to see the planning follow discovery endpoint by endpoint.
    #[cfg(test)]
    pub(crate) fn pairs_planned(&self) -> u64 {
        self.pairs_planned
    }
}
