//! The DDS domain participant as a sans-IO state machine: discovery (SPDP, SEDP), matching,
//! and the routing of datagrams to the writers and readers of [`crate::endpoint`].
//!
//! Inputs are [`Participant::handle_datagram`] (one UDP payload, with its source address if
//! the transport knows it), [`Participant::handle_timeout`] and the API calls
//! (`create_*`, `delete_*`, `write`). Outputs are [`Participant::poll_transmit`] (complete
//! RTPS messages with their destinations), [`Participant::poll_event`] (discovery events and
//! samples) and [`Participant::poll_timeout`] (when to call `handle_timeout` next). Time is
//! always an argument; nothing here reads a clock, opens a socket or draws randomness.
//!
//! Ownership and invariants:
//! - Local endpoints live in `writers`/`readers`, tables (`table.rs`) keyed by entity id that
//!   record what each input touched, so a flush, a timeout and the sample queue visit those
//!   endpoints only; ids are allocated from a counter and never reused. The two SEDP
//!   announcers and two SEDP detectors are ordinary [`Writer`]s/[`Reader`]s kept apart in
//!   `sedp_writers`/`sedp_readers`.
//! - `remotes` holds one [`RemoteParticipant`] per GUID prefix, `remote_endpoints` one
//!   [`RemoteEndpoint`] per endpoint GUID. Every remote endpoint belongs to a known remote
//!   participant: removing a participant removes its endpoints first.
//! - A local endpoint's `matched` set and the proxies inside its writer/reader always agree;
//!   `readers_of_writer` indexes the same relation by remote writer, for DATA addressed to
//!   `ENTITYID_UNKNOWN`.
//! - `local_by_topic` and `remote_by_topic` index every local and remote user endpoint by
//!   topic name: only endpoints of one topic can match, so matching a new endpoint costs the
//!   endpoints of its topic, not all of them.
//! - `ready` holds exactly the unpaused readers with samples ready, as of the readers
//!   touched last (`Table::take_unchecked`).
//! - All maps are `BTreeMap`s: iteration order, and therefore output, is deterministic.
//!
//! See `discovery.rs` for SPDP/SEDP handling and matching, `dispatch.rs` for the receive and
//! transmit paths.

mod config;
mod discovery;
mod dispatch;
mod events;
mod liveliness;
mod table;

#[cfg(test)]
mod batch_tests;
#[cfg(test)]
mod scale_tests;
#[cfg(test)]
mod tests;

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration as StdDuration;

use crate::discovery::sedp::{self, ANNOUNCERS, DETECTORS};
use crate::discovery::spdp::{RemoteParticipant, SpdpAnnouncer, SpdpFilter, BUILTIN_ENDPOINTS};
use crate::discovery::{
    ContentFilterProperty, DurabilityKind, EndpointData, EndpointKind, History, Liveliness,
    ParticipantData, Reliability, ReliabilityKind,
};
use crate::endpoint::{ByteBudget, Drained, Reader, SharedBudgets};
use crate::endpoint::{
    HistoryKind, ReaderConfig, ReaderStats, ReceivedSample, Writer, WriterConfig, WriterStats,
    DATAGRAM_OVERHEAD, MAX_INLINE_QOS,
};
use crate::instant::Instant;
use crate::types::{Duration, EntityId, Guid, GuidPrefix, Locator, SequenceNumber, Time};
use crate::wire::HeaderRepr;

pub use config::{
    ports, EndpointOptions, EndpointQos, ParticipantConfig, ReaderDefaults, WriterDefaults,
    SPDP_MULTICAST_GROUP,
};
pub use events::{
    ConfigError, CreateError, EndpointRef, Event, Limit, ParticipantStats, ReaderId, SedpStats,
    SpdpStats, WlpStats, WorkStats, WriteError, WriterId,
};

use liveliness::{LocalLiveliness, Wlp};
use table::Table;

/// One RTPS message ready to send, to every destination. Its `bytes` may end in a tail sent
/// from the writer's history (a DATA_FRAG's fragment data): send [`crate::WireBytes::parts`] with one
/// `sendmsg`, or use [`crate::WireBytes::to_vec`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Datagram {
    pub destinations: Vec<Locator>,
    pub bytes: crate::message::WireBytes,
}

/// How full a local writer's history is ([`Participant::writer_history`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriterHistory {
    pub samples: usize,
    pub bytes: usize,
    pub max_samples: usize,
    pub max_bytes: usize,
}

/// A remote writer or reader as announced in SEDP, for graph queries (`ros2 topic list`,
/// `ros2 topic info -v`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteEndpoint {
    pub(crate) data: EndpointData,
    pub(crate) discovered_at: Instant,
}

impl RemoteEndpoint {
    pub fn guid(&self) -> Guid {
        self.data.guid
    }

    pub fn kind(&self) -> EndpointKind {
        self.data.kind
    }

    /// The participant it belongs to.
    pub fn participant(&self) -> Guid {
        self.data.participant_guid
    }

    pub fn topic_name(&self) -> &str {
        &self.data.topic_name
    }

    pub fn type_name(&self) -> &str {
        &self.data.type_name
    }

    /// Everything announced: QoS, USER_DATA (`typehash=…;`), locators, vendor.
    pub fn data(&self) -> &EndpointData {
        &self.data
    }

    pub fn discovered_at(&self) -> Instant {
        self.discovered_at
    }
}

/// A local user writer and what discovery knows about it.
struct LocalWriter {
    writer: Drained<Writer>,
    data: EndpointData,
    liveliness: LocalLiveliness,
    matched: BTreeSet<Guid>,
    incompatible: BTreeSet<Guid>,
}

/// A local user reader.
struct LocalReader {
    reader: Drained<Reader>,
    data: EndpointData,
    matched: BTreeSet<Guid>,
    incompatible: BTreeSet<Guid>,
    /// The application has no room: [`Participant::poll_event`] holds this reader's samples
    /// back (see [`Participant::set_reader_paused`]).
    paused: bool,
}

/// A SEDP announcer: a transient-local KEEP_LAST writer plus the current announcement of
/// every live local endpoint.
///
/// The writer's history is not keyed, so it keeps the newest `depth` samples of all
/// endpoints together. Invariant: the newest announcement of every live endpoint is among
/// them, so a late-joining reader receives every live endpoint. Before a write would evict a
/// live announcement, that announcement is written again (`depth` exceeds the number of
/// live endpoints, so this ends).
struct SedpWriter {
    writer: Drained<Writer>,
    depth: usize,
    /// Samples written so far (the history is full once this reaches `depth`).
    written: u64,
    /// Sequence number of the newest sample.
    last_sn: SequenceNumber,
    /// Live endpoint → its current announcement.
    live: BTreeMap<Guid, Announcement>,
    /// Writes the writer refused (cannot happen with KEEP_LAST; counted, not hidden).
    failed: u64,
}

/// The current SEDP sample of one live local endpoint: sequence number, payload, inline QoS.
type Announcement = (SequenceNumber, Arc<[u8]>, Arc<[u8]>);

/// A DDS domain participant. See the module documentation.
pub struct Participant {
    config: ParticipantConfig,
    prefix: GuidPrefix,
    header: HeaderRepr,
    /// Our own locators, to recognise peers on this host by source address.
    own_locators: Vec<Locator>,
    local_data: ParticipantData,
    spdp: SpdpAnnouncer,
    spdp_filter: SpdpFilter,
    /// Destination sets of SPDP announcements to send at the next `poll_transmit`.
    pending_spdp: Vec<Vec<Locator>>,
    /// SPDP disposals to send (shutdown).
    pending_spdp_dispose: Vec<Vec<Locator>>,
    sedp_writers: BTreeMap<EntityId, SedpWriter>,
    sedp_readers: BTreeMap<EntityId, Drained<Reader>>,
    /// The participant-message (WLP) writer and reader, and liveliness bookkeeping.
    wlp: Wlp,
    writers: Table<LocalWriter>,
    readers: Table<LocalReader>,
    /// Local writers with a manual liveliness kind (the only ones with a liveliness timer).
    manual_writers: BTreeSet<EntityId>,
    /// Unpaused local readers with samples ready for [`Participant::poll_event`].
    ready: BTreeSet<EntityId>,
    next_entity_key: u32,
    remotes: BTreeMap<GuidPrefix, RemoteParticipant>,
    remote_endpoints: BTreeMap<Guid, RemoteEndpoint>,
    /// Local user endpoints (writers and readers) by topic name.
    local_by_topic: BTreeMap<String, BTreeSet<EntityId>>,
    /// Remote endpoints by topic name.
    remote_by_topic: BTreeMap<String, BTreeSet<Guid>>,
    /// Remote endpoints announced, changed or removed since the runtime last asked
    /// ([`Participant::take_remote_endpoint_changes`]); `None` once more changed than
    /// `max_remote_endpoints` (the runtime then looks at all of them).
    remote_changes: Option<BTreeSet<Guid>>,
    /// No lease can run out before this (see [`Participant::poll_timeout`]).
    lease_check_at: Option<Instant>,
    /// The datagram being handled came over multicast
    /// ([`Participant::handle_multicast_datagram`]).
    receiving_multicast: bool,
    /// Remote participants whose user data on topics with one of these name prefixes another
    /// transport carries (see [`Participant::set_carried_elsewhere`]).
    carried_elsewhere: BTreeMap<GuidPrefix, Vec<String>>,
    /// Remote writer → local readers matched with it.
    readers_of_writer: BTreeMap<Guid, BTreeSet<EntityId>>,
    events: VecDeque<Event>,
    graph_changed: bool,
    /// Datagrams built but not yet handed out.
    out: VecDeque<Datagram>,
    /// Round-robin position of sample delivery in `poll_event`.
    sample_cursor: Option<EntityId>,
    /// Reused routing buffer.
    scratch: Vec<EntityId>,
    /// `Some(t)`: every endpoint was drained by a `poll_transmit` at `t` and no input came
    /// since, so another `poll_transmit` at `t` has nothing new to collect (saves a walk over
    /// all endpoints at the end of every flush). Every input method resets it.
    drained_at: Option<Instant>,
    /// Datagrams from other participants handled so far: a writer told this before a write
    /// sends the sample without waiting for a batch when input came since its last push
    /// ([`crate::endpoint::Writer::set_inputs_seen`]).
    inputs_handled: u64,
    /// Reassembly bytes of all our readers together, and of each remote participant's writers
    /// (`ReaderDefaults::reassembly_bytes_*`).
    reassembly_total: Arc<ByteBudget>,
    reassembly_budgets: BTreeMap<GuidPrefix, Arc<ByteBudget>>,
    /// Caps already reported with [`Event::LimitReached`].
    limits_reported: BTreeSet<Limit>,
    /// Addresses that have shown to be live: our configuration's, and sources of datagrams
    /// from known participants (with when they were last seen; bounded).
    config_ips: BTreeSet<IpAddr>,
    validated_ips: BTreeMap<IpAddr, Instant>,
    stats: ParticipantStats,
    /// Endpoints [`Participant::poll_timeout`] looked at (it takes `&self`).
    timeout_polls: Cell<u64>,
}

impl Participant {
    /// The smallest `max_datagram_size` accepted: room for the framing, a full inline QoS and
    /// 1 KiB of payload.
    pub const MIN_DATAGRAM_SIZE: usize = MAX_INLINE_QOS + DATAGRAM_OVERHEAD + 1024;

    /// A participant that starts announcing itself at `now`.
    ///
    /// # Errors
    /// [`ConfigError`] for a datagram size below [`Participant::MIN_DATAGRAM_SIZE`] or
    /// participant data that cannot be encoded.
    pub fn new(config: ParticipantConfig, now: Instant) -> Result<Self, ConfigError> {
        if config.max_datagram_size < Self::MIN_DATAGRAM_SIZE {
            return Err(ConfigError::DatagramTooSmall {
                size: config.max_datagram_size,
                min: Self::MIN_DATAGRAM_SIZE,
            });
        }
        let prefix = config.guid_prefix;
        let mut local_data = ParticipantData::new(prefix);
        local_data.domain_id = Some(config.domain_id);
        local_data.domain_tag.clone_from(&config.domain_tag);
        local_data
            .metatraffic_unicast_locators
            .clone_from(&config.metatraffic_unicast);
        local_data
            .metatraffic_multicast_locators
            .clone_from(&config.metatraffic_multicast);
        local_data
            .default_unicast_locators
            .clone_from(&config.default_unicast);
        local_data
            .default_multicast_locators
            .clone_from(&config.default_multicast);
        local_data.lease_duration = Duration::from_std(config.lease_duration);
        local_data.builtin_endpoints = BUILTIN_ENDPOINTS;
        local_data.user_data.clone_from(&config.user_data);
        local_data.entity_name.clone_from(&config.entity_name);
        let spdp = SpdpAnnouncer::new(
            &local_data,
            now,
            config.announce_period,
            config.initial_announcements,
            config.initial_announce_period,
        )
        .map_err(ConfigError::Encode)?;
        let own_locators = config
            .metatraffic_unicast
            .iter()
            .chain(&config.default_unicast)
            .copied()
            .collect();
        let mut p = Participant {
            prefix,
            header: HeaderRepr::new(prefix),
            own_locators,
            spdp_filter: SpdpFilter {
                own: prefix,
                domain_id: config.domain_id,
                domain_tag: config.domain_tag.clone(),
            },
            local_data,
            spdp,
            pending_spdp: Vec::new(),
            pending_spdp_dispose: Vec::new(),
            sedp_writers: BTreeMap::new(),
            sedp_readers: BTreeMap::new(),
            // Placeholders, replaced below once the endpoint configurations can be made.
            wlp: Wlp::new(
                Writer::new(WriterConfig::new(Guid::new(
                    prefix,
                    EntityId::PARTICIPANT_MESSAGE_WRITER,
                ))),
                Reader::new(ReaderConfig::new(
                    Guid::new(prefix, EntityId::PARTICIPANT_MESSAGE_READER),
                    true,
                )),
            ),
            writers: Table::default(),
            readers: Table::default(),
            manual_writers: BTreeSet::new(),
            ready: BTreeSet::new(),
            next_entity_key: 1,
            remotes: BTreeMap::new(),
            remote_endpoints: BTreeMap::new(),
            local_by_topic: BTreeMap::new(),
            remote_by_topic: BTreeMap::new(),
            remote_changes: Some(BTreeSet::new()),
            lease_check_at: None,
            receiving_multicast: false,
            carried_elsewhere: BTreeMap::new(),
            readers_of_writer: BTreeMap::new(),
            events: VecDeque::new(),
            graph_changed: false,
            out: VecDeque::new(),
            sample_cursor: None,
            scratch: Vec::new(),
            drained_at: None,
            inputs_handled: 0,
            reassembly_total: ByteBudget::new(config.reader_defaults.reassembly_bytes_total),
            reassembly_budgets: BTreeMap::new(),
            limits_reported: BTreeSet::new(),
            config_ips: config
                .spdp_destinations
                .iter()
                .chain(&config.metatraffic_unicast)
                .chain(&config.metatraffic_multicast)
                .chain(&config.default_unicast)
                .chain(&config.default_multicast)
                .filter_map(Locator::to_socket_addr)
                .map(|a| a.ip())
                .collect(),
            validated_ips: BTreeMap::new(),
            stats: ParticipantStats::default(),
            timeout_polls: Cell::new(0),
            config,
        };
        let depth = p.config.max_local_endpoints.saturating_add(32);
        for pair in ANNOUNCERS {
            let cfg = p.writer_config(
                Guid::new(prefix, pair.local),
                true,
                true,
                HistoryKind::KeepLast(depth),
            );
            p.sedp_writers.insert(
                pair.local,
                SedpWriter {
                    writer: Drained::new(Writer::new(cfg)),
                    depth,
                    written: 0,
                    last_sn: SequenceNumber::ZERO,
                    live: BTreeMap::new(),
                    failed: 0,
                },
            );
        }
        for pair in DETECTORS {
            let cfg = p.reader_config(
                Guid::new(prefix, pair.local),
                true,
                true,
                HistoryKind::KeepAll {
                    max_samples: p.config.reader_defaults.keep_all_max_samples,
                },
            );
            p.sedp_readers
                .insert(pair.local, Drained::new(Reader::new(cfg)));
        }
        // RTPS 2.5 §8.4.13.3: reliable, transient-local, KEEP_LAST 1.
        let wlp_writer = p.writer_config(
            Guid::new(prefix, EntityId::PARTICIPANT_MESSAGE_WRITER),
            true,
            true,
            HistoryKind::KeepLast(1),
        );
        let wlp_reader = p.reader_config(
            Guid::new(prefix, EntityId::PARTICIPANT_MESSAGE_READER),
            true,
            true,
            HistoryKind::KeepAll {
                max_samples: p.config.reader_defaults.keep_all_max_samples,
            },
        );
        p.wlp = Wlp::new(Writer::new(wlp_writer), Reader::new(wlp_reader));
        // The first announcement goes out with the first `poll_transmit`.
        if p.spdp.due(now) {
            let dests = p.spdp_all_destinations();
            p.pending_spdp.push(dests);
        }
        Ok(p)
    }

    pub fn guid_prefix(&self) -> GuidPrefix {
        self.prefix
    }

    /// Our participant GUID (`<prefix>:000001c1`), the `gid` of `ros_discovery_info`.
    pub fn guid(&self) -> Guid {
        Guid::new(self.prefix, EntityId::PARTICIPANT)
    }

    pub fn config(&self) -> &ParticipantConfig {
        &self.config
    }

    /// What we announce in SPDP.
    pub fn participant_data(&self) -> &ParticipantData {
        &self.local_data
    }

    /// The GUID the next created writer gets (`keyed` as in its options), for USER_DATA that
    /// must name the endpoint itself (Cyclone's service `clientid`/`serviceid`).
    pub fn next_writer_guid(&self, keyed: bool) -> Guid {
        let [_, a, b, c] = self.next_entity_key.to_be_bytes();
        let kind = if keyed {
            EntityId::KIND_WRITER_WITH_KEY
        } else {
            EntityId::KIND_WRITER_NO_KEY
        };
        Guid::new(self.prefix, EntityId::new([a, b, c], kind))
    }

    /// Creates a writer and announces it in SEDP; it is matched with every compatible remote
    /// reader already known, and with later ones as they are discovered.
    ///
    /// # Errors
    /// [`CreateError`]: too many endpoints, empty or unencodable names.
    pub fn create_writer(
        &mut self,
        now: Instant,
        options: EndpointOptions,
    ) -> Result<WriterId, CreateError> {
        let kind = if options.key.is_some() {
            EntityId::KIND_WRITER_WITH_KEY
        } else {
            EntityId::KIND_WRITER_NO_KEY
        };
        self.drained_at = None;
        let (guid, data, payload) = self.prepare_endpoint(EndpointKind::Writer, kind, &options)?;
        let history = self.history_kind(options.qos.history, true);
        let cfg = WriterConfig {
            key: options.key,
            ..self.writer_config(
                guid,
                options.qos.reliable,
                options.qos.transient_local,
                history,
            )
        };
        let liveliness =
            LocalLiveliness::new(options.qos.liveliness, options.qos.liveliness_lease, now);
        if liveliness.is_manual() {
            self.manual_writers.insert(guid.entity_id);
        }
        self.index_local_topic(&data.topic_name, guid.entity_id, true);
        self.writers.insert(
            guid.entity_id,
            LocalWriter {
                writer: Drained::new(Writer::new(cfg)),
                data,
                liveliness,
                matched: BTreeSet::new(),
                incompatible: BTreeSet::new(),
            },
        );
        self.plan_automatic_liveliness(now);
        self.sedp_publish(now, EndpointKind::Writer, guid, payload);
        self.match_local(now, guid.entity_id);
        self.finish_input();
        Ok(WriterId(guid.entity_id))
    }

    /// Creates a reader and announces it in SEDP.
    ///
    /// # Errors
    /// As [`Participant::create_writer`].
    pub fn create_reader(
        &mut self,
        now: Instant,
        options: EndpointOptions,
    ) -> Result<ReaderId, CreateError> {
        let kind = if options.key.is_some() {
            EntityId::KIND_READER_WITH_KEY
        } else {
            EntityId::KIND_READER_NO_KEY
        };
        self.drained_at = None;
        let (guid, data, payload) = self.prepare_endpoint(EndpointKind::Reader, kind, &options)?;
        let history = self.history_kind(options.qos.history, false);
        let cfg = ReaderConfig {
            // An application's reader: a writer matched again continues its stream.
            remember_unmatched_writers: true,
            key: options.key,
            ..self.reader_config(
                guid,
                options.qos.reliable,
                options.qos.transient_local,
                history,
            )
        };
        let mut reader = Reader::new(cfg);
        reader.set_content_filter(data.content_filter.as_ref().map(|f| f.signature()));
        self.index_local_topic(&data.topic_name, guid.entity_id, true);
        self.readers.insert(
            guid.entity_id,
            LocalReader {
                reader: Drained::new(reader),
                data,
                matched: BTreeSet::new(),
                incompatible: BTreeSet::new(),
                paused: false,
            },
        );
        self.sedp_publish(now, EndpointKind::Reader, guid, payload);
        self.match_local(now, guid.entity_id);
        self.finish_input();
        Ok(ReaderId(guid.entity_id))
    }

    /// Announces `filter` as `reader`'s content filter from now on (`None`: no filter): its
    /// SEDP announcement is written again, which writers that filter for readers act on
    /// (Fast DDS's `CHANGED_QOS_READER`), and the reader recognises the new filter's signature
    /// in samples ([`Reader::set_content_filter`]). Unknown ids are ignored.
    ///
    /// # Errors
    /// [`CreateError::Encode`] if the announcement cannot be encoded (a NUL in a string, a
    /// filter too long for one parameter); nothing changes then.
    pub fn set_reader_content_filter(
        &mut self,
        now: Instant,
        reader: ReaderId,
        filter: Option<ContentFilterProperty>,
    ) -> Result<(), CreateError> {
        let Some(r) = self.readers.get(&reader.0) else {
            return Ok(());
        };
        if r.data.content_filter == filter {
            return Ok(());
        }
        let mut data = r.data.clone();
        data.content_filter = filter;
        let payload = sedp::announcement(&data).map_err(CreateError::Encode)?;
        self.drained_at = None;
        let guid = data.guid;
        if let Some(r) = self.readers.get_mut(&reader.0) {
            r.reader
                .set_content_filter(data.content_filter.as_ref().map(|f| f.signature()));
            r.data = data;
        }
        self.sedp_publish(now, EndpointKind::Reader, guid, payload);
        self.finish_input();
        Ok(())
    }

    /// Deletes a writer: its SEDP announcement is disposed, so remote readers unmatch it.
    /// Samples waiting for a batch go out before the disposal; unacknowledged samples are
    /// dropped. Unknown ids are ignored.
    pub fn delete_writer(&mut self, now: Instant, id: WriterId) {
        self.drained_at = None;
        if let Some(w) = self.writers.get_mut(&id.0) {
            w.writer.end_batch();
            self.collect_transmits(now);
        }
        let Some(w) = self.writers.remove(&id.0) else {
            return;
        };
        self.manual_writers.remove(&id.0);
        self.index_local_topic(&w.data.topic_name, id.0, false);
        drop(w);
        self.plan_automatic_liveliness(now);
        self.sedp_dispose(now, EndpointKind::Writer, Guid::new(self.prefix, id.0));
        self.finish_input();
    }

    /// Deletes a reader; remote writers unmatch it. Undelivered samples are dropped.
    pub fn delete_reader(&mut self, now: Instant, id: ReaderId) {
        self.drained_at = None;
        let Some(r) = self.readers.remove(&id.0) else {
            return;
        };
        self.ready.remove(&id.0);
        self.index_local_topic(&r.data.topic_name, id.0, false);
        for remote in &r.matched {
            if let Some(set) = self.readers_of_writer.get_mut(remote) {
                set.remove(&id.0);
                if set.is_empty() {
                    self.readers_of_writer.remove(remote);
                }
            }
        }
        if self.sample_cursor == Some(id.0) {
            self.sample_cursor = None;
        }
        self.sedp_dispose(now, EndpointKind::Reader, Guid::new(self.prefix, id.0));
        self.finish_input();
    }

    /// Writes a sample (serialized payload with its 4-byte encapsulation header) without a
    /// source timestamp.
    ///
    /// # Errors
    /// [`WriteError::UnknownWriter`], or the writer's refusal.
    pub fn write(
        &mut self,
        now: Instant,
        writer: WriterId,
        payload: Arc<[u8]>,
        inline_qos: Option<Arc<[u8]>>,
    ) -> Result<SequenceNumber, WriteError> {
        self.write_with_timestamp(now, writer, payload, inline_qos, None)
    }

    /// Numbers `writer`'s next sample `next` if that is ahead, for samples that went only to
    /// readers served elsewhere (see [`crate::endpoint::Writer::skip_to`]).
    pub fn skip_to(&mut self, writer: WriterId, next: SequenceNumber) {
        self.drained_at = None;
        if let Some(w) = self.writers.get_mut(&writer.0) {
            w.writer.skip_to(next);
        }
    }

    /// `writer`'s application gave up a publication it was to number (see
    /// [`crate::endpoint::Writer::give_up_number`]).
    pub fn give_up_number(&mut self, now: Instant, writer: WriterId) {
        self.drained_at = None;
        if let Some(w) = self.writers.get_mut(&writer.0) {
            w.writer.give_up_number(now);
        }
    }

    /// Takes `samples` into `writer`'s empty history as its samples `first`, `first + 1`, ...,
    /// counted as acknowledged by and sent to every reader matched now, so that only readers
    /// matched later get them: a node moved here from another process goes on with the
    /// history and numbering its old writer had (see
    /// [`crate::endpoint::Writer::adopt_history`]). Returns the number its next sample gets.
    ///
    /// # Errors
    /// [`crate::endpoint::AdoptError::UnknownWriter`], or the writer's refusal.
    pub fn adopt_history(
        &mut self,
        now: Instant,
        writer: WriterId,
        first: SequenceNumber,
        samples: Vec<crate::endpoint::AdoptedSample>,
    ) -> Result<SequenceNumber, crate::endpoint::AdoptError> {
        self.drained_at = None;
        let w = self
            .writers
            .get_mut(&writer.0)
            .ok_or(crate::endpoint::AdoptError::UnknownWriter)?;
        w.writer.adopt_history(now, first, samples)
    }

    /// Writes a sample with a source timestamp (wall clock, sent as INFO_TS). `inline_qos`
    /// is a little-endian parameter list with sentinel (e.g. `PID_RELATED_SAMPLE_IDENTITY`
    /// for service replies).
    ///
    /// # Errors
    /// As [`Participant::write`].
    pub fn write_with_timestamp(
        &mut self,
        now: Instant,
        writer: WriterId,
        payload: Arc<[u8]>,
        inline_qos: Option<Arc<[u8]>>,
        source_timestamp: Option<Time>,
    ) -> Result<SequenceNumber, WriteError> {
        self.drained_at = None;
        let w = self
            .writers
            .get_mut(&writer.0)
            .ok_or(WriteError::UnknownWriter)?;
        w.writer.set_inputs_seen(self.inputs_handled);
        let sn = w
            .writer
            .write(now, payload, inline_qos, source_timestamp)
            .map_err(WriteError::Writer)?;
        let instances_full = w.writer.instance_limit_reached();
        // DDS 1.4 §2.2.3.11: a write asserts the writer's liveliness.
        if w.liveliness.is_manual() {
            self.asserted_by_write(now, writer.0);
        }
        if instances_full {
            self.limit_reached(Limit::MaxKeptInstances, self.config.max_kept_instances);
        }
        Ok(sn)
    }

    /// Stops announcing: queues an SPDP disposal to every destination and every known
    /// participant, so peers drop us at once instead of after our lease. Send what
    /// `poll_transmit` returns, then drop the participant.
    pub fn shutdown(&mut self, now: Instant) {
        self.drained_at = None;
        // Samples waiting for a batch go out before the disposal, which makes peers forget us.
        for w in self.writers.values_mut_all() {
            w.writer.end_batch();
        }
        self.collect_transmits(now);
        let dests = self.spdp_all_destinations();
        self.pending_spdp_dispose.push(dests);
    }

    /// The next event: discovery events first, then samples, round-robin over readers.
    ///
    /// Costs the readers touched since the last call, not all readers: `ready` is brought up
    /// to date from them first.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.drained_at = None;
        if let Some(e) = self.events.pop_front() {
            return Some(e);
        }
        for id in self.readers.take_unchecked() {
            self.stats.work.sample_checks = self.stats.work.sample_checks.saturating_add(1);
            match self.readers.get(&id) {
                Some(r) if !r.paused && r.reader.ready_len() > 0 => self.ready.insert(id),
                _ => self.ready.remove(&id),
            };
        }
        // The first ready reader from the cursor on, round robin.
        let found = match self.sample_cursor {
            Some(s) => self.ready.range(s..).next().or_else(|| self.ready.first()),
            None => self.ready.first(),
        };
        let id = *found?;
        let r = self.readers.get_mut(&id)?;
        let sample = r.reader.poll_sample();
        let instances_full = r.reader.instance_limit_reached();
        if r.reader.ready_len() == 0 {
            self.ready.remove(&id);
        }
        if instances_full {
            self.limit_reached(Limit::MaxKeptInstances, self.config.max_kept_instances);
        }
        let sample = sample?;
        // Next time, start after this reader.
        self.sample_cursor = self
            .ready
            .range((std::ops::Bound::Excluded(id), std::ops::Bound::Unbounded))
            .next()
            .copied();
        Some(Event::Sample {
            reader: ReaderId(id),
            sample,
        })
    }

    /// Holds `reader`'s samples back from [`Participant::poll_event`] (`true`) or lets them
    /// through again: the application's queue for it is full. Its samples then wait in the
    /// reader's queue; a KEEP_ALL reader whose queue fills stops accepting, leaving reliable
    /// samples unacknowledged for the writer to keep (DDS RESOURCE_LIMITS on a KEEP_ALL
    /// reader), so nothing is lost and the writer is held back instead.
    pub fn set_reader_paused(&mut self, reader: ReaderId, paused: bool) {
        if let Some(r) = self.readers.get_mut(&reader.0) {
            r.paused = paused;
        }
    }

    /// The next sample of one reader, bypassing [`Participant::poll_event`].
    pub fn poll_sample(&mut self, reader: ReaderId) -> Option<ReceivedSample> {
        self.drained_at = None;
        self.readers.get_mut(&reader.0)?.reader.poll_sample()
    }

    pub fn stats(&self) -> &ParticipantStats {
        &self.stats
    }

    /// Samples and payload bytes `id`'s history holds now, and its caps on them (a KEEP_ALL
    /// writer's `keep_all_max_samples` and `keep_all_max_bytes`).
    pub fn writer_history(&self, id: WriterId) -> Option<WriterHistory> {
        let w = self.writers.get(&id.0)?;
        let config = w.writer.config();
        Some(WriterHistory {
            samples: w.writer.history_len(),
            bytes: w.writer.history_bytes(),
            max_samples: w.writer.history_capacity(),
            max_bytes: config.max_history_bytes,
        })
    }

    pub fn writer_stats(&self, id: WriterId) -> Option<WriterStats> {
        self.writers.get(&id.0).map(|w| w.writer.stats())
    }

    pub fn reader_stats(&self, id: ReaderId) -> Option<ReaderStats> {
        self.readers.get(&id.0).map(|r| r.reader.stats())
    }

    /// The remote readers a local writer is matched with.
    pub fn writer_matches(&self, id: WriterId) -> impl Iterator<Item = Guid> + '_ {
        self.writers
            .get(&id.0)
            .into_iter()
            .flat_map(|w| w.matched.iter().copied())
    }

    /// Whether some remote reader matched with local writer `id` answered one of its
    /// HEARTBEATs ([`crate::endpoint::Writer::has_synced_reader`]).
    pub fn writer_has_synced_reader(&self, id: WriterId) -> bool {
        self.writers
            .get(&id.0)
            .is_some_and(|w| w.writer.has_synced_reader())
    }

    /// The remote writers a local reader is matched with.
    pub fn reader_matches(&self, id: ReaderId) -> impl Iterator<Item = Guid> + '_ {
        self.readers
            .get(&id.0)
            .into_iter()
            .flat_map(|r| r.matched.iter().copied())
    }

    /// How many of the remote endpoints matched with local endpoint `local` (those of
    /// [`Self::writer_matches`] or [`Self::reader_matches`]) are known to have discovered it:
    /// the SEDP built-in reader of the matched endpoint's participant acknowledged our current
    /// SEDP announcement of `local`. A remote writer sends to a reader only once its
    /// participant discovered that reader, and a remote reader accepts a writer's samples only
    /// once it matched that writer; our own match says only that *we* discovered the remote
    /// endpoint, this says the other side discovered ours.
    ///
    /// RTPS 2.5 §8.5.4.2: the SEDP built-in endpoints are reliable, so the writer's
    /// `ReaderProxy` (§8.4.7.5) of each remote detector learns from its ACKNACKs (§8.4.9.2.8)
    /// which announcements it received; this holds whatever the peer's vendor. A HEARTBEAT or
    /// DATA seen from the peer proves nothing here: writers address them to every reader of
    /// a participant (`ENTITYID_UNKNOWN`), matched or not.
    ///
    /// What remains: a peer acknowledges what it *received*, and may match the endpoint a
    /// moment later. roslite applies SEDP samples within the same
    /// [`Self::handle_datagram`] that received them, before any ACKNACK leaves. Fast DDS
    /// matches on its receiving thread (at once for an announcement without TYPE_INFORMATION,
    /// which roslite does not send) but releases the SEDP reader's lock meanwhile, so an
    /// ACKNACK its event thread builds in that moment may go first. Cyclone DDS hands SEDP
    /// samples to a delivery thread of its own ("builtins" queue) and acknowledges what it
    /// queued, possibly before that thread matched it. Both windows are the time to apply one
    /// sample (microseconds), against a heartbeat round trip for the window this closes. A
    /// count may also fall back for a moment when the SEDP writer's history is full and it
    /// re-announces `local` under a newer sequence number (to keep every live announcement in
    /// it), until each peer acknowledges that copy.
    pub fn acknowledging_matches(&self, local: EndpointRef) -> usize {
        let (side, entity_id, matched) = match local {
            EndpointRef::Writer(id) => (
                EndpointKind::Writer,
                id.0,
                self.writers.get(&id.0).map(|w| &w.matched),
            ),
            EndpointRef::Reader(id) => (
                EndpointKind::Reader,
                id.0,
                self.readers.get(&id.0).map(|r| &r.matched),
            ),
        };
        let announcer_id = sedp::announcer_for(side);
        let (Some(matched), Some(announcer), Some(detector)) = (
            matched,
            self.sedp_writers.get(&announcer_id),
            ANNOUNCERS.iter().find(|pair| pair.local == announcer_id),
        ) else {
            return 0;
        };
        let Some((announced, _, _)) = announcer.live.get(&Guid::new(self.prefix, entity_id)) else {
            return 0;
        };
        matched
            .iter()
            .filter(|remote| {
                let peer_detector = Guid::new(remote.prefix, detector.remote);
                announcer.writer.is_acked_by(&peer_detector, *announced)
            })
            .count()
    }

    /// What we announce in SEDP for a local writer.
    pub fn writer_data(&self, id: WriterId) -> Option<&EndpointData> {
        self.writers.get(&id.0).map(|w| &w.data)
    }

    pub fn reader_data(&self, id: ReaderId) -> Option<&EndpointData> {
        self.readers.get(&id.0).map(|r| &r.data)
    }

    /// Every known remote participant.
    pub fn remote_participants(&self) -> impl Iterator<Item = &RemoteParticipant> {
        self.remotes.values()
    }

    pub fn remote_participant(&self, prefix: GuidPrefix) -> Option<&RemoteParticipant> {
        self.remotes.get(&prefix)
    }

    /// Forgets remote participant `prefix` now, as its lease expiring would: for a caller that
    /// learned by other means that its process is gone (a same-host link whose peer hung up
    /// and no longer listens). Its endpoints are unmatched and removed, and
    /// [`Event::ParticipantLost`] is reported. False if it was not known. Should it still be
    /// alive, its next SPDP announcement discovers it again.
    pub fn remove_remote_participant(&mut self, now: Instant, prefix: GuidPrefix) -> bool {
        if !self.remotes.contains_key(&prefix) {
            return false;
        }
        self.stats.participants_gone = self.stats.participants_gone.saturating_add(1);
        self.remove_participant(now, prefix);
        true
    }

    /// Every known remote endpoint.
    pub fn remote_endpoints(&self) -> impl Iterator<Item = &RemoteEndpoint> {
        self.remote_endpoints.values()
    }

    pub fn remote_endpoint(&self, guid: Guid) -> Option<&RemoteEndpoint> {
        self.remote_endpoints.get(&guid)
    }

    /// When `handle_timeout` must be called next: the next SPDP announcement, the earliest
    /// lease expiry, or an endpoint timer. Always `Some` (SPDP is periodic).
    ///
    /// Costs the endpoints touched since the last flush, not all of them: the others' timers
    /// are indexed (`table.rs`). Lease expiries are checked no earlier than
    /// `lease_check_at`, the earliest a lease could run out (a peer's `last_seen` only moves
    /// forward); `handle_timeout` then looks at them all and plans the next check.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let mut t = self.spdp.deadline();
        let mut consider = |x: Option<Instant>| {
            if let Some(x) = x {
                t = t.min(x);
            }
        };
        consider(self.lease_check_at);
        for w in self.sedp_writers.values() {
            consider(w.writer.poll_timeout());
        }
        for r in self.sedp_readers.values() {
            consider(r.poll_timeout());
        }
        consider(self.wlp.writer.poll_timeout());
        consider(self.wlp.reader.poll_timeout());
        consider(self.liveliness_timeout());
        consider(self.writers.next_indexed_timer());
        consider(self.readers.next_indexed_timer());
        let mut polled = 0u64;
        for (_, w) in self.writers.touched() {
            polled = polled.saturating_add(1);
            consider(w.writer.poll_timeout());
        }
        for (_, r) in self.readers.touched() {
            polled = polled.saturating_add(1);
            consider(r.reader.poll_timeout());
        }
        self.timeout_polls
            .set(self.timeout_polls.get().saturating_add(polled));
        Some(t)
    }

    /// Runs every timer due at `now`: SPDP announcements, lease expiry, endpoint heartbeats,
    /// ACKNACK delays and repairs. Visits the endpoints whose timer is due and those touched
    /// since the last flush, not all of them.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.drained_at = None;
        if self.spdp.due(now) {
            let dests = self.spdp_periodic_destinations(now);
            self.pending_spdp.push(dests);
        }
        if self.lease_check_at.is_some_and(|t| t <= now) {
            let expired: Vec<GuidPrefix> = self
                .remotes
                .values()
                .filter(|r| r.lease_expiry().is_some_and(|t| t <= now))
                .map(|r| r.guid_prefix())
                .collect();
            for prefix in expired {
                self.stats.participants_expired = self.stats.participants_expired.saturating_add(1);
                self.remove_participant(now, prefix);
            }
            self.lease_check_at = self.remotes.values().filter_map(|r| r.lease_expiry()).min();
        }
        // Only endpoints with a timer due: touching the others would forget their memo of
        // having nothing to send (see `Drained`).
        for w in self.sedp_writers.values_mut() {
            w.writer.handle_timeout_if_due(now);
        }
        for r in self.sedp_readers.values_mut() {
            r.handle_timeout_if_due(now);
        }
        self.wlp.writer.handle_timeout_if_due(now);
        self.wlp.reader.handle_timeout_if_due(now);
        let writers: BTreeSet<EntityId> = self
            .writers
            .due(now)
            .into_iter()
            .chain(self.writers.touched().map(|(id, _)| *id))
            .collect();
        for id in writers {
            self.stats.work.timer_checks = self.stats.work.timer_checks.saturating_add(1);
            let due = self
                .writers
                .get(&id)
                .is_some_and(|w| w.writer.timer_due(now));
            if let (true, Some(w)) = (due, self.writers.get_mut(&id)) {
                w.writer.handle_timeout_if_due(now);
            }
        }
        let readers: BTreeSet<EntityId> = self
            .readers
            .due(now)
            .into_iter()
            .chain(self.readers.touched().map(|(id, _)| *id))
            .collect();
        for id in readers {
            self.stats.work.timer_checks = self.stats.work.timer_checks.saturating_add(1);
            let due = self
                .readers
                .get(&id)
                .is_some_and(|r| r.reader.timer_due(now));
            if let (true, Some(r)) = (due, self.readers.get_mut(&id)) {
                r.reader.handle_timeout_if_due(now);
            }
        }
        self.process_sedp_samples(now);
        self.process_wlp_samples(now);
        self.handle_liveliness_timeout(now);
        self.finish_input();
    }

    /// How much this participant walked so far ([`WorkStats`]).
    pub fn work(&self) -> WorkStats {
        let mut work = self.stats.work;
        work.timer_checks = work.timer_checks.saturating_add(self.timeout_polls.get());
        work
    }

    /// The remote endpoints announced, changed or removed since the last call: `None` when
    /// more than `max_remote_endpoints` did (look at all of them then). For a runtime that
    /// follows discovery endpoint by endpoint after [`Event::RemoteEndpointChanged`].
    pub fn take_remote_endpoint_changes(&mut self) -> Option<Vec<Guid>> {
        let changes = self.remote_changes.replace(BTreeSet::new());
        changes.map(|c| c.into_iter().collect())
    }

    // -----------------------------------------------------------------------------------------
    // Helpers

    /// Adds (`present`) or removes local endpoint `id` in the topic index.
    fn index_local_topic(&mut self, topic: &str, id: EntityId, present: bool) {
        index_topic(&mut self.local_by_topic, topic, id, present);
    }

    /// Records that remote endpoint `guid` was announced, changed or removed.
    fn remote_endpoint_changed(&mut self, guid: Guid) {
        let cap = self.config.max_remote_endpoints;
        if let Some(changes) = &mut self.remote_changes {
            changes.insert(guid);
            if changes.len() > cap {
                self.remote_changes = None;
            }
        }
    }

    /// The shared reassembly budgets of writers of participant `prefix`: its own and the total.
    fn reassembly_budgets(&mut self, prefix: GuidPrefix) -> SharedBudgets {
        let limit = self.config.reader_defaults.reassembly_bytes_per_participant;
        let own = self
            .reassembly_budgets
            .entry(prefix)
            .or_insert_with(|| ByteBudget::new(limit))
            .clone();
        SharedBudgets::new(vec![own, self.reassembly_total.clone()])
    }

    /// Bytes held in reassembly for participant `prefix`'s writers, and in all.
    pub fn reassembly_bytes(&self, prefix: GuidPrefix) -> (usize, usize) {
        let own = self.reassembly_budgets.get(&prefix).map_or(0, |b| b.used());
        (own, self.reassembly_total.used())
    }

    fn writer_config(
        &self,
        guid: Guid,
        reliable: bool,
        transient_local: bool,
        history: HistoryKind,
    ) -> WriterConfig {
        let d = &self.config.writer_defaults;
        let max_data_size = self
            .config
            .max_datagram_size
            .saturating_sub(MAX_INLINE_QOS)
            .saturating_sub(DATAGRAM_OVERHEAD);
        WriterConfig {
            guid,
            reliable,
            transient_local,
            history,
            heartbeat_period: d.heartbeat_period,
            nack_response_delay: d.nack_response_delay,
            max_blocking_time: d.max_blocking_time,
            fragment_size: d.fragment_size.min(max_data_size).max(1),
            max_data_size,
            push_mode: d.push_mode,
            max_history_bytes: if history.is_keep_all() {
                d.keep_all_max_bytes
            } else {
                usize::MAX
            },
            batch_window: d.batch_window,
            batch_max_bytes: d.batch_max_bytes,
            key: None,
            max_instances: self.config.max_kept_instances,
        }
    }

    fn reader_config(
        &self,
        guid: Guid,
        reliable: bool,
        transient_local: bool,
        history: HistoryKind,
    ) -> ReaderConfig {
        let d = &self.config.reader_defaults;
        ReaderConfig {
            guid,
            reliable,
            transient_local,
            history,
            heartbeat_response_delay: d.heartbeat_response_delay,
            max_samples_in_reassembly_per_writer: d.max_samples_in_reassembly_per_writer,
            max_sample_size: d.max_sample_size,
            reassembly_timeout: d.reassembly_timeout,
            remember_unmatched_writers: false,
            key: None,
            max_instances: self.config.max_kept_instances,
        }
    }

    fn history_kind(&self, history: History, writer: bool) -> HistoryKind {
        match history {
            History::KeepLast { depth } => {
                HistoryKind::KeepLast(usize::try_from(depth).unwrap_or(usize::MAX))
            }
            History::KeepAll => HistoryKind::KeepAll {
                max_samples: if writer {
                    self.config.writer_defaults.keep_all_max_samples
                } else {
                    self.config.reader_defaults.keep_all_max_samples
                },
            },
        }
    }

    /// Allocates an entity id and builds the SEDP data of a new local endpoint.
    fn prepare_endpoint(
        &mut self,
        side: EndpointKind,
        entity_kind: u8,
        options: &EndpointOptions,
    ) -> Result<(Guid, EndpointData, Vec<u8>), CreateError> {
        if options.topic_name.is_empty() || options.type_name.is_empty() {
            return Err(CreateError::EmptyName);
        }
        let max = self.config.max_local_endpoints;
        if self.writers.len().saturating_add(self.readers.len()) >= max {
            return Err(CreateError::TooManyEndpoints { max });
        }
        let key = self.next_entity_key;
        if key >= 1 << 24 {
            return Err(CreateError::EntityIdsExhausted);
        }
        let [_, a, b, c] = key.to_be_bytes();
        let guid = Guid::new(self.prefix, EntityId::new([a, b, c], entity_kind));
        let q = &options.qos;
        let mut data = EndpointData::new(side, guid, &options.topic_name, &options.type_name);
        data.reliability = Reliability {
            kind: if q.reliable {
                ReliabilityKind::Reliable
            } else {
                ReliabilityKind::BestEffort
            },
            max_blocking_time: Duration::from_std(self.config.writer_defaults.max_blocking_time),
        };
        data.durability = if q.transient_local {
            DurabilityKind::TransientLocal
        } else {
            DurabilityKind::Volatile
        };
        data.history = q.history;
        let dur = |d: Option<StdDuration>| d.map_or(Duration::INFINITE, Duration::from_std);
        data.deadline = dur(q.deadline);
        data.lifespan = dur(q.lifespan);
        data.liveliness = Liveliness {
            kind: q.liveliness,
            lease_duration: dur(q.liveliness_lease),
        };
        data.user_data.clone_from(&options.user_data);
        if side == EndpointKind::Reader {
            data.content_filter.clone_from(&options.content_filter);
        }
        let payload = sedp::announcement(&data).map_err(CreateError::Encode)?;
        self.next_entity_key = key.saturating_add(1);
        Ok((guid, data, payload))
    }

    /// Writes (or re-writes) the SEDP announcement of local endpoint `guid`.
    fn sedp_publish(&mut self, now: Instant, side: EndpointKind, guid: Guid, payload: Vec<u8>) {
        let Some(w) = self.sedp_writers.get_mut(&sedp::announcer_for(side)) else {
            return;
        };
        let payload: Arc<[u8]> = Arc::from(payload);
        let qos: Arc<[u8]> = Arc::from(sedp::announcement_inline_qos(guid));
        w.make_room(now);
        if let Some(sn) = w.write(now, payload.clone(), qos.clone()) {
            w.live.insert(guid, (sn, payload, qos));
        }
    }

    /// Disposes the SEDP announcement of local endpoint `guid`.
    fn sedp_dispose(&mut self, now: Instant, side: EndpointKind, guid: Guid) {
        let Some(w) = self.sedp_writers.get_mut(&sedp::announcer_for(side)) else {
            return;
        };
        w.live.remove(&guid);
        w.make_room(now);
        let qos: Arc<[u8]> = Arc::from(sedp::disposal(guid));
        w.write(now, Arc::from(Vec::new()), qos);
    }

    /// Reports `limit` (set to `value`) the first time it is reached.
    fn limit_reached(&mut self, limit: Limit, value: usize) {
        if self.limits_reported.insert(limit) {
            self.push_event(Event::LimitReached { limit, value });
        }
    }

    /// Queues an event, dropping the oldest beyond `max_pending_events`.
    fn push_event(&mut self, e: Event) {
        if self.events.len() >= self.config.max_pending_events.max(1) {
            self.events.pop_front();
            self.stats.events_dropped = self.stats.events_dropped.saturating_add(1);
        }
        self.events.push_back(e);
    }

    /// Ends an input: reports a graph change once.
    fn finish_input(&mut self) {
        if std::mem::take(&mut self.graph_changed) {
            self.push_event(Event::RemoteEndpointChanged);
        }
    }

    /// Where a periodic announcement goes: the configured destinations, plus the metatraffic
    /// unicast locators of every known participant that does not hear our multicast. One that
    /// announced it listens on a multicast group we send to, and whose own announcements came
    /// over multicast within the last two periods, shares that group with us: a unicast copy
    /// would only double what it receives (every participant of an N-process graph would get
    /// 2 (N - 1) announcements a period instead of N - 1). Fast DDS and Cyclone send periodic
    /// announcements to the multicast group and their configured peers only; a peer heard only
    /// over unicast (LOCALHOST discovery, static peers, multicast lost) keeps its copy.
    /// Replies to newcomers stay unicast.
    fn spdp_periodic_destinations(&self, now: Instant) -> Vec<Locator> {
        let window = self.config.announce_period.saturating_mul(2);
        let mut dests = self.config.spdp_destinations.clone();
        for r in self.remotes.values() {
            let hears_our_multicast = r
                .multicast_heard
                .is_some_and(|t| now.saturating_duration_since(t) <= window)
                && r.data
                    .metatraffic_multicast_locators
                    .iter()
                    .any(|l| l.is_multicast() && self.config.spdp_destinations.contains(l));
            if !hears_our_multicast {
                dests.extend(spdp_reply_locators(r));
            }
        }
        dests.sort();
        dests.dedup();
        dests
    }

    /// Every SPDP destination: the configured ones plus the metatraffic unicast locators of
    /// every known participant.
    fn spdp_all_destinations(&self) -> Vec<Locator> {
        let mut dests = self.config.spdp_destinations.clone();
        for r in self.remotes.values() {
            dests.extend(spdp_reply_locators(r));
        }
        dests.sort();
        dests.dedup();
        dests
    }
}

impl SedpWriter {
    /// Before a write: re-announces live endpoints whose current sample would fall out of
    /// the history (see the type's invariant).
    fn make_room(&mut self, now: Instant) {
        loop {
            let depth = u64::try_from(self.depth).unwrap_or(u64::MAX);
            if self.written < depth {
                return;
            }
            // The oldest sample still held, which the next write evicts.
            let oldest = SequenceNumber(
                self.last_sn
                    .0
                    .saturating_sub(i64::try_from(depth).unwrap_or(i64::MAX))
                    .saturating_add(1),
            );
            let Some((guid, _)) = self.live.iter().find(|(_, (sn, _, _))| *sn == oldest) else {
                return;
            };
            let guid = *guid;
            let Some((_, payload, qos)) = self.live.get(&guid).cloned() else {
                return;
            };
            match self.write(now, payload.clone(), qos.clone()) {
                Some(sn) => {
                    self.live.insert(guid, (sn, payload, qos));
                }
                None => return,
            }
        }
    }

    fn write(
        &mut self,
        now: Instant,
        payload: Arc<[u8]>,
        qos: Arc<[u8]>,
    ) -> Option<SequenceNumber> {
        match self.writer.write(now, payload, Some(qos), None) {
            Ok(sn) => {
                self.written = self.written.saturating_add(1);
                self.last_sn = sn;
                Some(sn)
            }
            Err(_) => {
                self.failed = self.failed.saturating_add(1);
                None
            }
        }
    }
}

/// Adds (`present`) or removes `id` under `topic` in a topic index.
fn index_topic<T: Ord>(
    index: &mut BTreeMap<String, BTreeSet<T>>,
    topic: &str,
    id: T,
    present: bool,
) {
    if present {
        index.entry(topic.to_owned()).or_default().insert(id);
    } else if let Some(set) = index.get_mut(topic) {
        set.remove(&id);
        if set.is_empty() {
            index.remove(topic);
        }
    }
}

/// Where to send SPDP (and SEDP) to a remote participant: its usable metatraffic unicast
/// locators, else its metatraffic multicast ones.
fn spdp_reply_locators(r: &RemoteParticipant) -> Vec<Locator> {
    use crate::discovery::matching::filter_locators;
    let host = r.host();
    let unicast = filter_locators(&r.data().metatraffic_unicast_locators, host);
    if unicast.is_empty() {
        filter_locators(&r.data().metatraffic_multicast_locators, host)
    } else {
        unicast
    }
}
