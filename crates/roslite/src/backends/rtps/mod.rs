//! ROS 2 on the wire: the RTPS transport that makes a context's endpoints visible to, and
//! able to talk with, other processes (roslite, rclpy/rclcpp over Fast DDS or Cyclone DDS).
//!
//! Ownership and threads: [`RtpsNetwork`] owns one RTPS [`Participant`] (the sans-IO protocol
//! core) and one [`UdpTransport`], both behind `NetShared`. Three kinds of caller drive them:
//! - the bus, through the [`Transport`] trait, when local endpoints come and go (an RTPS writer
//!   or reader is created and announced at once);
//! - publishers, through an [`Outlet`] per local publisher: `publish` hands the serialized
//!   message to the participant and sends the resulting datagrams on the publishing thread,
//!   so a message costs no thread hop;
//! - one driver thread, which receives datagrams, runs the protocol's timers (heartbeats,
//!   announcements, lease expiry) and delivers samples into subscription queues.
//!
//! Everything protocol-related happens under the one `state` mutex; the UDP socket calls are
//! thread-safe on their own and also run under it only to keep datagram order per writer.

use std::collections::HashMap;
use std::net::SocketAddrV4;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::thread::JoinHandle;

use roslite_cdr::SharedBuf;
use roslite_executor::Instant as MonoInstant;
use roslite_msgs::Message as _;
use roslite_rtps::discovery::ros::{
    topic_to_dds, typehash_user_data, NodeEntitiesInfo, ParticipantEntitiesInfo, WireDistro,
};
use roslite_rtps::discovery::{
    EndpointData, EndpointKind as RtpsEndpointKind, History as RtpsHistory, LivelinessKind,
};
use roslite_rtps::participant::{
    EndpointOptions, EndpointQos, EndpointRef, Event, Participant, ParticipantConfig, ReaderId,
    WriteError as ParticipantWriteError, WriterId,
};
use roslite_rtps::types::{Guid, GuidPrefix, Locator, VendorId};
use roslite_rtps::Instant;
use roslite_transport::fault::FaultInjector;
use roslite_transport::{RecvEvent, TransportConfig, UdpTransport, RECV_BUFFER_LEN};

use crate::events::{report_matches, MatchReports};
use crate::log::Logger;
use crate::pubsub::MessageInfo;
use crate::qos::{Durability, History, Liveliness, QosProfile, Reliability};
use crate::transport::{LocalPublisher, LocalSubscription, Outlet, SendTimeout, Transport};

/// Outgoing-link impairment for tests and benches: when `ROSLITE_FAULT_INJECTION` is set (see
/// [`roslite_transport::fault`]), every datagram a network sends goes through a
/// [`FaultInjector`] that delays, drops or duplicates it.
pub use roslite_transport::fault::{FaultConfig, FaultParseError, FAULT_INJECTION_ENV};

/// Why the network could not be started.
#[derive(Debug)]
#[non_exhaustive]
pub enum NetError {
    /// `ROS_AUTOMATIC_DISCOVERY_RANGE`, `ROS_STATIC_PEERS` or `ROS_DOMAIN_ID` is malformed.
    Config(roslite_transport::ConfigError),
    /// No UDP ports could be bound.
    Bind(roslite_transport::BindError),
    /// The RTPS participant refused the configuration.
    Participant(roslite_rtps::participant::ConfigError),
    /// The operating system has no randomness for a GUID prefix.
    Random(std::io::Error),
    /// The driver thread could not be started.
    Spawn(std::io::Error),
    /// `ROSLITE_FAULT_INJECTION` is malformed.
    FaultInjection(FaultParseError),
}

impl std::fmt::Display for NetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Config(e) => write!(f, "network configuration: {e}"),
            Self::Bind(e) => write!(f, "cannot open the RTPS UDP sockets: {e}"),
            Self::Participant(e) => write!(f, "RTPS participant: {e:?}"),
            Self::Random(e) => write!(f, "no randomness for the participant GUID: {e}"),
            Self::Spawn(e) => write!(f, "cannot start the RTPS driver thread: {e}"),
            Self::FaultInjection(e) => write!(f, "{e} (in {FAULT_INJECTION_ENV})"),
        }
    }
}

impl std::error::Error for NetError {}

fn now() -> Instant {
    Instant::from_nanos(MonoInstant::monotonic_now().as_nanos())
}

fn to_locator(addr: SocketAddrV4) -> Locator {
    Locator::udpv4(*addr.ip(), addr.port())
}

/// A fresh GUID prefix: never reused across runs (ros2-wire.md §2.5 pitfall 7).
fn random_prefix() -> Result<GuidPrefix, NetError> {
    let mut bytes = [0u8; 12];
    rustix::rand::getrandom(&mut bytes, rustix::rand::GetRandomFlags::empty())
        .map_err(|e| NetError::Random(e.into()))?;
    Ok(GuidPrefix(bytes))
}

/// The RTPS layer's policy id as the user API names it.
fn policy_kind(policy: roslite_rtps::discovery::matching::QosPolicy) -> crate::qos::QosPolicyKind {
    use crate::qos::QosPolicyKind as Kind;
    use roslite_rtps::discovery::matching::QosPolicy as Wire;
    match policy {
        Wire::Durability => Kind::Durability,
        Wire::Deadline => Kind::Deadline,
        Wire::Liveliness => Kind::Liveliness,
        Wire::Reliability => Kind::Reliability,
        Wire::Ownership => Kind::Ownership,
        Wire::DataRepresentation => Kind::DataRepresentation,
        _ => Kind::Other,
    }
}

/// ROS QoS in the RTPS layer's terms.
fn endpoint_qos(qos: &QosProfile) -> EndpointQos {
    EndpointQos {
        reliable: qos.reliability == Reliability::Reliable,
        transient_local: qos.durability == Durability::TransientLocal,
        history: match qos.history {
            History::KeepLast(depth) => RtpsHistory::KeepLast {
                depth: u32::try_from(depth).unwrap_or(u32::MAX),
            },
            History::KeepAll => RtpsHistory::KeepAll,
        },
        deadline: qos.deadline,
        lifespan: qos.lifespan,
        liveliness: match qos.liveliness {
            Liveliness::Automatic => LivelinessKind::Automatic,
            Liveliness::ManualByTopic => LivelinessKind::ManualByTopic,
        },
        liveliness_lease: qos.liveliness_lease,
    }
}

/// Largest serialized message a subscription accepts from the network. The RTPS layer's
/// default (64 MiB) would drop a 64 MiB image or point cloud, whose CDR payload is the data plus
/// its header; bigger samples are dropped and counted (`samples_too_large`).
pub const MAX_SAMPLE_SIZE: usize = 1 << 30;

/// The `ros_discovery_info` topic (rmw_dds_common), which maps DDS endpoints to ROS nodes.
const DISCOVERY_INFO_TOPIC: &str = "ros_discovery_info";
type DiscoveryInfoMsg = roslite_msgs::rmw_dds_common::msg::ParticipantEntitiesInfo;

/// A service request on its way to its server, with the way back.
type RequestDelivery = (Arc<dyn RequestSink>, SharedBuf, Box<dyn ReplyChannel>);
/// A sample for a local subscription.
/// A sample for a subscription, with the messages of its writer lost right before it.
type Delivery = (LocalSubscription, SharedBuf, MessageInfo, u64);

struct NetState {
    participant: Participant,
    /// Local subscriptions by the RTPS reader that feeds them.
    subscriptions: HashMap<ReaderId, LocalSubscription>,
    readers_by_local: HashMap<u64, ReaderId>,
    writers_by_local: HashMap<u64, WriterId>,
    /// Local publishers by the RTPS writer that carries them (for status reports).
    publishers: HashMap<WriterId, LocalPublisher>,
    /// Local nodes by id: namespace, name.
    nodes: HashMap<u64, (String, String)>,
    /// Which node each local endpoint (by local id) belongs to.
    endpoint_nodes: HashMap<u64, u64>,
    discovery_info_writer: Option<WriterId>,
    discovery_info_reader: Option<ReaderId>,
    /// The latest `ros_discovery_info` of each remote participant.
    remote_graph: HashMap<GuidPrefix, ParticipantEntitiesInfo>,
    /// Layout of our `ros_discovery_info` (Humble: 24-byte gids); peers' samples are read in
    /// either layout.
    wire_distro: WireDistro,
    services: ServiceState,
    /// Shared memory / Unix sockets with roslite peers on this host; `None`: UDP only.
    same_host: Option<crate::same_host::SameHost>,
    /// Samples taken from the participant, handed to subscriptions by the receiving thread
    /// (driver or user-data) once it has released the state lock (a callback may run inline
    /// and publish).
    deliveries: Vec<Delivery>,
    /// Service requests, likewise.
    request_deliveries: Vec<RequestDelivery>,
    /// Matches and unmatches of local endpoints with remote ones, reported likewise.
    match_reports: MatchReports,
    /// A receiving thread is handing over what the participant produced (see
    /// [`Outbox::deliver`]): the other leaves its own to it, so that each subscription gets
    /// its messages in the order they were taken.
    delivering: bool,
    /// Samples were left in the participant's readers because the batch waiting for the
    /// thread handing over was already [`Outbox::MAX_BACKLOG`] long: the driver takes them
    /// once that thread is done.
    held_back: bool,
    /// The activity flag of each local publisher's RTPS outlet.
    outlet_activity: HashMap<WriterId, Arc<AtomicBool>>,
}

impl NetState {
    /// A remote subscription matched (`true`) or left a local publisher's writer; services'
    /// writers are not publishers and report nothing.
    fn report_writer_match(&mut self, writer: WriterId, matched: bool) {
        if let Some(publisher) = self.publishers.get(&writer) {
            self.match_reports.push((publisher.events.clone(), matched));
        }
    }

    /// A remote publisher matched (`true`) or left a local subscription's reader.
    fn report_reader_match(&mut self, reader: ReaderId, matched: bool) {
        if let Some(subscription) = self.subscriptions.get(&reader) {
            // A publisher that went away may have been one of the not alive (the participant
            // counts it out silently): the report's refresh of the liveliness status needs
            // the new count.
            if let Some((_, not_alive)) = self.participant.liveliness_status(reader) {
                subscription.events.note_not_alive(not_alive);
            }
            self.match_reports
                .push((subscription.events.clone(), matched));
        }
    }

    /// Whether local writer `writer` must be given every sample (see [`RtpsOutlet`]).
    fn writer_needs_samples(&self, writer: WriterId) -> bool {
        self.participant.writer_matches(writer).next().is_some()
            || self
                .participant
                .writer_data(writer)
                .is_some_and(|d| d.durability != roslite_rtps::discovery::DurabilityKind::Volatile)
    }

    fn update_outlet_activity(&self, writer: WriterId) {
        if let Some(active) = self.outlet_activity.get(&writer) {
            active.store(self.writer_needs_samples(writer), Ordering::Release);
        }
    }

    /// The remote readers of those of local `writers` on DDS topic `dds_topic`, summed, by
    /// path: `(matched over RTPS, connected over a same-host link)`.
    fn readers_by_path(
        &self,
        writers: impl Iterator<Item = WriterId>,
        dds_topic: &str,
    ) -> (usize, usize) {
        writers
            .filter(|w| {
                self.participant
                    .writer_data(*w)
                    .is_some_and(|d| d.topic_name == dds_topic)
            })
            .fold((0, 0), |(rtps, local), w| {
                (
                    rtps + self.participant.writer_matches(w).count(),
                    local
                        + self
                            .same_host
                            .as_ref()
                            .map_or(0, |s| s.connected_readers(w)),
                )
            })
    }

    /// Re-plans the same-host reader links after endpoints changed.
    fn refresh_same_host(&mut self) {
        if let Some(same_host) = &mut self.same_host {
            same_host.refresh(
                &self.participant,
                &self.subscriptions,
                &mut self.match_reports,
            );
        }
    }

    /// Reports the matches queued by a call on a user's thread (an endpoint added), once the
    /// lock is released.
    fn report_matches_unlocked(mut state: MutexGuard<'_, NetState>) {
        let reports = std::mem::take(&mut state.match_reports);
        drop(state);
        report_matches(reports);
    }
}

impl NetState {
    /// Republishes this participant's full node/endpoint list, as every ROS 2 participant
    /// does on any change (ros2/design article 170).
    fn publish_graph(&mut self, now: Instant) {
        let Some(writer) = self.discovery_info_writer else {
            return;
        };
        let prefix = self.participant.guid_prefix();
        let mut nodes: Vec<(u64, NodeEntitiesInfo)> = self
            .nodes
            .iter()
            .map(|(id, (namespace, name))| {
                let info = NodeEntitiesInfo {
                    node_namespace: namespace.clone(),
                    node_name: name.clone(),
                    ..Default::default()
                };
                (*id, info)
            })
            .collect();
        nodes.sort_by(|a, b| {
            (&a.1.node_namespace, &a.1.node_name).cmp(&(&b.1.node_namespace, &b.1.node_name))
        });
        for server in self.services.servers.values() {
            if let Some((_, node)) = nodes.iter_mut().find(|(id, _)| *id == server.node_id) {
                node.reader_gids.push(server.request_reader.guid(prefix));
                node.writer_gids.push(server.reply_writer.guid(prefix));
            }
        }
        for client in self.services.clients.values() {
            if let Some((_, node)) = nodes.iter_mut().find(|(id, _)| *id == client.node_id) {
                node.writer_gids.push(client.request_writer.guid(prefix));
                node.reader_gids.push(client.reply_reader.guid(prefix));
            }
        }
        for (local_id, node_id) in &self.endpoint_nodes {
            let Some((_, node)) = nodes.iter_mut().find(|(id, _)| id == node_id) else {
                continue;
            };
            if let Some(reader) = self.readers_by_local.get(local_id) {
                node.reader_gids.push(reader.guid(prefix));
            }
            if let Some(writer) = self.writers_by_local.get(local_id) {
                node.writer_gids.push(writer.guid(prefix));
            }
        }
        let info = ParticipantEntitiesInfo {
            gid: Guid::new(prefix, roslite_rtps::types::EntityId::PARTICIPANT),
            nodes: nodes.into_iter().map(|(_, n)| n).collect(),
        };
        if let Ok(payload) = info.to_payload(self.wire_distro) {
            let _ = self
                .participant
                .write(now, writer, Arc::from(payload), None);
        }
    }
}

pub(crate) struct NetShared {
    state: Mutex<NetState>,
    udp: UdpTransport,
    stop: AtomicBool,
    /// The deadline (monotonic nanoseconds, `u64::MAX` for none) the driver thread sleeps
    /// until; written under `state`, see [`NetShared::flush_and_notify`].
    driver_deadline: AtomicU64,
    logger: Logger,
    /// This, for reply channels that outlive a lock guard.
    me: Weak<NetShared>,
    /// Set by `ROSLITE_FAULT_INJECTION`: outgoing datagrams go through it instead of straight
    /// to the socket.
    fault: Option<FaultInjector>,
    /// Publishes waiting (with `state`) for room in a full keep-all writer's history; the
    /// network's threads notify it after each input, which may have acknowledged samples.
    history_space: Condvar,
    writers_waiting: AtomicUsize,
}

impl NetShared {
    fn lock(&self) -> MutexGuard<'_, NetState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends everything the participant has queued.
    fn flush(&self, state: &mut NetState, now: Instant) {
        while let Some(datagram) = state.participant.poll_transmit(now) {
            // The fault injector queues datagrams whole: one copy for every destination.
            let whole = self.fault.as_ref().map(|_| datagram.bytes.to_vec());
            for destination in &datagram.destinations {
                let Some(std::net::SocketAddr::V4(addr)) = destination.to_socket_addr() else {
                    continue;
                };
                if let (Some(fault), Some(whole)) = (&self.fault, &whole) {
                    fault.submit(addr, whole);
                } else if let Err(e) = self.udp.send_parts(addr, &datagram.bytes.parts()) {
                    self.logger.debug(format_args!("sending to {addr}: {e}"));
                }
            }
        }
    }

    /// [`Self::flush`] for callers other than the driver thread (publishers, the bus). Their
    /// input may have armed a timer earlier than the deadline the driver sleeps until (a write
    /// arms the HEARTBEAT that repairs a lost sample 100 ms later; the driver may be waiting for
    /// the next SPDP announcement, seconds away): then the driver is woken to re-plan.
    fn flush_and_notify(&self, state: &mut NetState, now: Instant) {
        self.flush(state, now);
        // On this network's own driver thread (a callback run inline), the driver re-plans
        // before it sleeps again: no wake, and no walk over every endpoint's timers.
        if DRIVING.with(|d| std::ptr::eq(d.get(), self)) {
            return;
        }
        let sleeping_until = self.driver_deadline.load(Ordering::Acquire);
        if let Some(t) = state.participant.poll_timeout() {
            if t.as_nanos() < sleeping_until {
                self.udp.waker().wake();
            }
        }
    }

    /// Pauses `reader` in the participant when its keep-all subscription has no room for
    /// this sample and the others of this call (`pending`) beyond it: its samples then wait in
    /// the RTPS reader, which stops acknowledging once its own queue is full, so the writer
    /// keeps them and is held back. The subscription resumes it once its callback took one
    /// (and wakes the driver to hand over what waited).
    fn hold_back_when_full(
        &self,
        state: &mut NetState,
        pending: &mut Vec<(ReaderId, usize)>,
        reader: ReaderId,
        subscription: &LocalSubscription,
    ) {
        let count = match pending.iter_mut().find(|(r, _)| *r == reader) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                pending.push((reader, 1));
                1
            }
        };
        let me = self.me.clone();
        let full = subscription.wait_for_room(count, move || {
            if let Some(net) = me.upgrade() {
                net.lock().participant.set_reader_paused(reader, false);
                net.udp.waker().wake();
            }
        });
        if full {
            state.participant.set_reader_paused(reader, true);
        }
    }

    /// Wakes publishes waiting for room in a keep-all writer's history (see
    /// [`RtpsOutlet::send`]); call with `state` locked, after an input was handled.
    fn wake_blocked_writers(&self) {
        if self.writers_waiting.load(Ordering::SeqCst) > 0 {
            self.history_space.notify_all();
        }
    }

    /// Hands samples to subscriptions and reports what users should see.
    fn process_events(&self, state: &mut NetState) {
        // Samples of this call on their way to each keep-all subscription (delivered once the
        // lock is released); none allocated for keep-last ones.
        let mut keep_all_pending: Vec<(ReaderId, usize)> = Vec::new();
        loop {
            // While another thread hands over (a callback may run long inline there), take no
            // more than a bounded batch: the rest waits in the readers, whose histories bound
            // it (and whose flow control holds keep-all writers back).
            if state.delivering && state.deliveries.len() >= Outbox::MAX_BACKLOG {
                state.held_back = true;
                break;
            }
            let Some(event) = state.participant.poll_event() else {
                break;
            };
            match event {
                Event::Sample { reader, sample } => {
                    if Some(reader) == state.discovery_info_reader {
                        // Fast DDS pads payloads; Humble peers use 24-byte gids.
                        if let Ok((info, _)) = ParticipantEntitiesInfo::from_payload_any(
                            &sample.payload,
                            state.wire_distro,
                        ) {
                            state.remote_graph.insert(sample.writer.prefix, info);
                        }
                        continue;
                    }
                    if let Some(&local_id) = state.services.server_by_reader.get(&reader) {
                        self.handle_request(state, local_id, sample);
                        continue;
                    }
                    if let Some(&local_id) = state.services.client_by_reader.get(&reader) {
                        handle_reply(state, local_id, sample);
                        continue;
                    }
                    let Some(subscription) = state.subscriptions.get(&reader) else {
                        continue;
                    };
                    if sample.payload.is_empty() {
                        continue; // dispose/unregister: ROS topics are keyless
                    }
                    let info = MessageInfo {
                        source_timestamp: MonoInstant::monotonic_now(),
                        received_timestamp: MonoInstant::ZERO,
                        publication_sequence_number: u64::try_from(sample.sequence_number.0)
                            .unwrap_or(0),
                        publisher_id: 0,
                        from_intra_process: false,
                    };
                    let subscription = subscription.clone();
                    if subscription.description.qos.history == History::KeepAll {
                        self.hold_back_when_full(
                            state,
                            &mut keep_all_pending,
                            reader,
                            &subscription,
                        );
                    }
                    state.deliveries.push((
                        subscription,
                        SharedBuf::from_vec(sample.payload),
                        info,
                        sample.lost_before,
                    ));
                }
                Event::IncompatibleQos { local, policy, .. } => {
                    let topic = match local {
                        EndpointRef::Reader(id) => state
                            .subscriptions
                            .get(&id)
                            .map(|s| s.description.topic.clone()),
                        EndpointRef::Writer(id) => state
                            .participant
                            .writer_data(id)
                            .and_then(|d| roslite_rtps::discovery::ros::dds_to_ros(&d.topic_name))
                            .map(|(_, ros_name)| ros_name),
                    };
                    let topic = topic.as_deref().unwrap_or("?");
                    let kind = policy_kind(policy);
                    // rclcpp's wording, so the message is the one users search for.
                    match local {
                        EndpointRef::Reader(_) => self.logger.warn(format_args!(
                            "New publisher discovered on topic '{topic}', offering incompatible \
                             QoS. No messages will be received from it. Last incompatible \
                             policy: {kind}"
                        )),
                        EndpointRef::Writer(_) => self.logger.warn(format_args!(
                            "New subscription discovered on topic '{topic}', requesting \
                             incompatible QoS. No messages will be sent to it. Last \
                             incompatible policy: {kind}"
                        )),
                    }
                    match local {
                        EndpointRef::Reader(id) => {
                            if let Some(subscription) = state.subscriptions.get(&id) {
                                subscription.report_incompatible_qos(kind);
                            }
                        }
                        EndpointRef::Writer(id) => {
                            if let Some(publisher) = state.publishers.get(&id) {
                                publisher.report_incompatible_qos(kind);
                            }
                        }
                    }
                }
                Event::ParticipantLost(guid) => {
                    state.remote_graph.remove(&guid.prefix);
                    if let Some(same_host) = &mut state.same_host {
                        same_host.participant_lost(guid.prefix, &mut state.match_reports);
                    }
                }
                Event::ParticipantDiscovered(guid) => {
                    let NetState {
                        same_host,
                        participant,
                        ..
                    } = &mut *state;
                    if let Some(same_host) = same_host {
                        same_host.participant_discovered(participant, now(), guid.prefix);
                    }
                }
                Event::RemoteEndpointChanged => state.refresh_same_host(),
                Event::LivelinessChanged {
                    reader,
                    alive,
                    not_alive_count,
                    ..
                } => {
                    if let Some(subscription) = state.subscriptions.get(&reader) {
                        let topic = &subscription.description.topic;
                        if !alive {
                            self.logger.warn(format_args!(
                                "a publisher on '{topic}' missed its liveliness lease"
                            ));
                        }
                        // The alive count is the matches' (all paths) less these.
                        subscription.events.set_not_alive(not_alive_count);
                    }
                }
                Event::LivelinessLost { writer } => {
                    if let Some(publisher) = state.publishers.get(&writer) {
                        publisher.events.liveliness_lost.update(|s| {
                            s.total_count += 1;
                            s.total_count_change += 1;
                        });
                    }
                }
                Event::ReaderMatched { writer, .. } => {
                    state.update_outlet_activity(writer);
                    if state.services.server_by_reply_writer.contains_key(&writer) {
                        self.send_parked_replies(state, now());
                    }
                    state.report_writer_match(writer, true);
                }
                Event::ReaderUnmatched { writer, .. } => {
                    state.update_outlet_activity(writer);
                    state.report_writer_match(writer, false);
                }
                Event::WriterMatched { reader, .. } => state.report_reader_match(reader, true),
                Event::WriterUnmatched { reader, .. } => state.report_reader_match(reader, false),
            }
        }
    }
}

/// Carries one local publisher's messages into its RTPS writer.
struct RtpsOutlet {
    shared: Weak<NetShared>,
    writer: WriterId,
    /// Whether the writer must see every sample: it has matched readers or keeps history for
    /// late joiners. Kept by the network as matches come and go, so `publish` reads it
    /// without the network lock.
    active: Arc<AtomicBool>,
}

impl Outlet for RtpsOutlet {
    /// The RTPS writer numbers samples as the publisher numbers its publications: a writer
    /// that sat some out (they went only to readers served elsewhere) skips ahead here, under
    /// the lock the write takes anyway, rather than in a lock taken for every publication it
    /// sits out.
    ///
    /// A keep-all writer whose history is full (readers have not acknowledged
    /// `keep_all_max_samples`) waits for their acknowledgements up to `max_blocking_time`,
    /// then gives up on the sample, as a DDS `write` does; on the network's own threads (a
    /// callback run inline) it gives up at once, since those threads take the
    /// acknowledgements.
    fn send(&self, payload: &Arc<[u8]>, info: &MessageInfo) -> Result<(), SendTimeout> {
        let Some(shared) = self.shared.upgrade() else {
            return Ok(());
        };
        let mut state = shared.lock();
        let number = i64::try_from(info.publication_sequence_number).unwrap_or(i64::MAX);
        let mut deadline = None;
        let result = loop {
            let now = now();
            state
                .participant
                .skip_to(self.writer, SequenceNumber(number));
            match state
                .participant
                .write(now, self.writer, payload.clone(), None)
            {
                Ok(_) => break Ok(()),
                Err(ParticipantWriteError::Writer(roslite_rtps::WriteError::Full)) => {
                    // Heartbeats out first: the readers acknowledge what they have.
                    shared.flush_and_notify(&mut state, now);
                    let deadline = *deadline.get_or_insert_with(|| {
                        std::time::Instant::now() + crate::qos::MAX_BLOCKING_TIME
                    });
                    let left = deadline.saturating_duration_since(std::time::Instant::now());
                    let on_network_thread = RECEIVING.with(|r| std::ptr::eq(r.get(), &*shared));
                    if left.is_zero() || on_network_thread {
                        break Err(SendTimeout);
                    }
                    shared.writers_waiting.fetch_add(1, Ordering::SeqCst);
                    state = match shared.history_space.wait_timeout(state, left) {
                        Ok((state, _)) => state,
                        Err(poisoned) => poisoned.into_inner().0,
                    };
                    shared.writers_waiting.fetch_sub(1, Ordering::SeqCst);
                }
                Err(e) => {
                    shared.logger.warn(format_args!("RTPS write failed: {e:?}"));
                    break Ok(());
                }
            }
        };
        shared.flush_and_notify(&mut state, now());
        result
    }

    /// A volatile writer with no matched RTPS reader sends nothing and keeps nothing for
    /// later readers: skip it (same-host readers are carried by their own outlets).
    fn is_active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }
}

/// The transport handle the bus holds.
struct NetTransport(Arc<NetShared>);

impl Transport for NetTransport {
    fn node_added(&self, id: u64, namespace: &str, name: &str) {
        let now = now();
        let mut state = self.0.lock();
        state
            .nodes
            .insert(id, (namespace.to_owned(), name.to_owned()));
        state.publish_graph(now);
        self.0.flush_and_notify(&mut state, now);
    }

    fn node_removed(&self, id: u64) {
        let now = now();
        let mut state = self.0.lock();
        state.nodes.remove(&id);
        state.publish_graph(now);
        self.0.flush_and_notify(&mut state, now);
    }

    fn publisher_added(&self, publisher: LocalPublisher) {
        let d = &publisher.description;
        let options = EndpointOptions::new(&topic_to_dds(&d.topic), d.dds_type_name)
            .with_qos(endpoint_qos(&d.qos))
            .with_user_data(typehash_user_data(d.type_hash));
        let now = now();
        let mut state = self.0.lock();
        match state.participant.create_writer(now, options) {
            Ok(writer) => {
                state.writers_by_local.insert(d.id, writer);
                state.publishers.insert(writer, publisher.clone());
                state.endpoint_nodes.insert(d.id, d.node_id);
                let guid = writer.guid(state.participant.guid_prefix());
                let NetState {
                    same_host,
                    participant,
                    match_reports,
                    ..
                } = &mut *state;
                if let Some(same_host) = same_host {
                    same_host.publisher_added(participant, writer, guid, &publisher);
                    same_host.refresh_writer_pairs(participant, match_reports);
                }
                state.publish_graph(now);
                let active = Arc::new(AtomicBool::new(state.writer_needs_samples(writer)));
                state.outlet_activity.insert(writer, active.clone());
                publisher.attach(
                    d.id,
                    Arc::new(RtpsOutlet {
                        shared: Arc::downgrade(&self.0),
                        writer,
                        active,
                    }),
                );
            }
            Err(e) => self.0.logger.warn(format_args!(
                "publisher on '{}' stays local: cannot create its RTPS writer: {e:?}",
                d.topic
            )),
        }
        self.0.flush_and_notify(&mut state, now);
        NetState::report_matches_unlocked(state);
    }

    fn publisher_removed(&self, _topic: &str, id: u64) {
        let now = now();
        let mut state = self.0.lock();
        if let Some(writer) = state.writers_by_local.remove(&id) {
            state.publishers.remove(&writer);
            state.outlet_activity.remove(&writer);
            if let Some(same_host) = &mut state.same_host {
                same_host.publisher_removed(writer);
            }
            state.participant.delete_writer(now, writer);
            state.endpoint_nodes.remove(&id);
            state.publish_graph(now);
            self.0.flush_and_notify(&mut state, now);
        }
    }

    fn subscription_added(&self, subscription: LocalSubscription) {
        let d = &subscription.description;
        let options = EndpointOptions::new(&topic_to_dds(&d.topic), d.dds_type_name)
            .with_qos(endpoint_qos(&d.qos))
            .with_user_data(typehash_user_data(d.type_hash));
        let now = now();
        let mut state = self.0.lock();
        match state.participant.create_reader(now, options) {
            Ok(reader) => {
                state.readers_by_local.insert(d.id, reader);
                state.endpoint_nodes.insert(d.id, d.node_id);
                state.subscriptions.insert(reader, subscription.clone());
                state.refresh_same_host();
                state.publish_graph(now);
            }
            Err(e) => self.0.logger.warn(format_args!(
                "subscription on '{}' stays local: cannot create its RTPS reader: {e:?}",
                d.topic
            )),
        }
        self.0.flush_and_notify(&mut state, now);
        NetState::report_matches_unlocked(state);
    }

    fn subscription_removed(&self, _topic: &str, id: u64) {
        let now = now();
        let mut state = self.0.lock();
        if let Some(reader) = state.readers_by_local.remove(&id) {
            state.subscriptions.remove(&reader);
            if let Some(same_host) = &mut state.same_host {
                same_host.subscription_removed(reader);
            }
            state.participant.delete_reader(now, reader);
            state.endpoint_nodes.remove(&id);
            state.publish_graph(now);
            self.0.flush_and_notify(&mut state, now);
        }
    }
}

/// The running RTPS network of one context; stops its driver thread when dropped.
pub struct RtpsNetwork {
    shared: Arc<NetShared>,
    driver: Option<JoinHandle<()>>,
    /// The thread that blocks on the user-data socket ([`receive_user_data`]); `None` if the
    /// socket could not be given its own thread (the driver then serves it).
    user_receiver: Option<JoinHandle<()>>,
}

impl RtpsNetwork {
    /// Binds the UDP ports, starts the participant and its driver thread.
    ///
    /// # Errors
    /// [`NetError`] if no ports can be bound or the configuration is refused.
    pub(crate) fn start(
        config: &TransportConfig,
        distro: crate::context::RosDistro,
        local_transports: crate::context::LocalTransports,
        logger: Logger,
    ) -> Result<Self, NetError> {
        let fault_config = FaultConfig::from_env().map_err(NetError::FaultInjection)?;
        let mut udp = UdpTransport::bind(config).map_err(NetError::Bind)?;
        let dedicated = match udp.dedicate_user_socket() {
            Ok(()) => true,
            Err(e) => {
                logger.debug(format_args!(
                    "the user-data socket stays with the driver thread: {e}"
                ));
                false
            }
        };
        let locators = udp.local_locators();
        let mut participant_config = ParticipantConfig::new(
            random_prefix()?,
            config.discovery.domain_id,
            udp.participant_id(),
        );
        participant_config.metatraffic_unicast = vec![to_locator(locators.metatraffic_unicast)];
        participant_config.metatraffic_multicast = locators
            .metatraffic_multicast
            .map(to_locator)
            .into_iter()
            .collect();
        participant_config.default_unicast = vec![to_locator(locators.default_unicast)];
        participant_config.spdp_destinations = udp
            .spdp_destinations()
            .iter()
            .copied()
            .map(to_locator)
            .collect();
        participant_config.reader_defaults.max_sample_size = MAX_SAMPLE_SIZE;
        // An impaired link must impair everything: same-host paths would bypass it.
        let local_transports = if fault_config.is_some() {
            crate::context::LocalTransports::UDP_ONLY
        } else {
            local_transports
        };
        let same_host = crate::same_host::SameHost::start(local_transports, logger.clone());
        if let Some(same_host) = &same_host {
            participant_config
                .user_data
                .extend_from_slice(same_host.user_data().as_bytes());
        }
        let now = now();
        let mut participant =
            Participant::new(participant_config, now).map_err(NetError::Participant)?;
        let graph_options = |qos| {
            EndpointOptions::new(DISCOVERY_INFO_TOPIC, DiscoveryInfoMsg::DDS_TYPE_NAME)
                .with_qos(qos)
                .with_user_data(typehash_user_data(DiscoveryInfoMsg::TYPE_HASH))
        };
        let discovery_info_writer = participant
            .create_writer(now, graph_options(EndpointQos::discovery_info_writer()))
            .ok();
        let discovery_info_reader = participant
            .create_reader(now, graph_options(EndpointQos::discovery_info_reader()))
            .ok();
        if let Some(fault) = &fault_config {
            logger.warn(format_args!(
                "{FAULT_INJECTION_ENV} is set: outgoing datagrams are impaired ({fault})"
            ));
        }
        let mut fault_spawn_error = None;
        let shared = Arc::new_cyclic(|me: &Weak<NetShared>| NetShared {
            fault: fault_config.and_then(|fault| {
                let net = me.clone();
                let send = move |addr, bytes: &[u8]| {
                    if let Some(net) = net.upgrade() {
                        // Ignoring an error: a lost datagram is what the injector emulates.
                        let _ = net.udp.send(addr, bytes);
                    }
                };
                FaultInjector::spawn(fault, send)
                    .map_err(|e| fault_spawn_error = Some(e))
                    .ok()
            }),
            state: Mutex::new(NetState {
                participant,
                subscriptions: HashMap::new(),
                readers_by_local: HashMap::new(),
                writers_by_local: HashMap::new(),
                publishers: HashMap::new(),
                nodes: HashMap::new(),
                endpoint_nodes: HashMap::new(),
                discovery_info_writer,
                discovery_info_reader,
                remote_graph: HashMap::new(),
                services: ServiceState::default(),
                same_host,
                deliveries: Vec::new(),
                request_deliveries: Vec::new(),
                match_reports: Vec::new(),
                delivering: false,
                held_back: false,
                outlet_activity: HashMap::new(),
                wire_distro: match distro {
                    crate::context::RosDistro::Humble => WireDistro::Humble,
                    crate::context::RosDistro::IronOrLater => WireDistro::IronOrLater,
                },
            }),
            udp,
            stop: AtomicBool::new(false),
            driver_deadline: AtomicU64::new(0),
            logger,
            me: me.clone(),
            history_space: Condvar::new(),
            writers_waiting: AtomicUsize::new(0),
        });
        if let Some(e) = fault_spawn_error {
            return Err(NetError::Spawn(e));
        }
        let driver = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("roslite-rtps".into())
                .spawn(move || drive(&shared))
                .map_err(NetError::Spawn)?
        };
        let mut network = Self {
            shared,
            driver: Some(driver),
            user_receiver: None,
        };
        if dedicated {
            let shared = network.shared.clone();
            // On failure `drop(network)` stops the driver.
            network.user_receiver = Some(
                std::thread::Builder::new()
                    .name("roslite-data".into())
                    .spawn(move || receive_user_data(&shared))
                    .map_err(NetError::Spawn)?,
            );
        }
        Ok(network)
    }

    pub(crate) fn transport(&self) -> Arc<dyn Transport> {
        Arc::new(NetTransport(self.shared.clone()))
    }

    /// The participant's GUID prefix, as other participants see it.
    pub fn guid_prefix(&self) -> GuidPrefix {
        self.shared.lock().participant.guid_prefix()
    }

    /// Nodes known on the network (remote ones from their `ros_discovery_info`, plus this
    /// context's own), as `(namespace, name)`, sorted.
    pub fn node_names(&self) -> Vec<(String, String)> {
        let state = self.shared.lock();
        let mut nodes: Vec<(String, String)> = state
            .remote_graph
            .values()
            .flat_map(|info| info.nodes.iter())
            .map(|n| (n.node_namespace.clone(), n.node_name.clone()))
            .chain(state.nodes.values().cloned())
            .collect();
        nodes.sort();
        nodes.dedup();
        nodes
    }

    /// Remote topics (ROS names) with their ROS type names, from SEDP.
    pub fn remote_topics(&self) -> Vec<(String, String)> {
        let state = self.shared.lock();
        let mut topics: Vec<(String, String)> = state
            .participant
            .remote_endpoints()
            .filter_map(|e| {
                let (_, ros_name) = roslite_rtps::discovery::ros::dds_to_ros(e.topic_name())?;
                let ros_type = roslite_rtps::discovery::ros::dds_to_type(e.type_name())?;
                Some((ros_name, ros_type))
            })
            .collect();
        topics.sort();
        topics.dedup();
        topics
    }
}

impl Drop for RtpsNetwork {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        self.shared.udp.waker().wake();
        self.shared.udp.release_user_receiver();
        if let Some(receiver) = self.user_receiver.take() {
            let _ = receiver.join();
        }
        if let Some(driver) = self.driver.take() {
            let _ = driver.join();
        }
    }
}

thread_local! {
    /// The network whose driver thread this is (null elsewhere).
    static DRIVING: std::cell::Cell<*const NetShared> = const { std::cell::Cell::new(std::ptr::null()) };
    /// The network whose input this thread handles (its driver or user-data thread; null
    /// elsewhere): a publish here must not wait for acknowledgements only this thread takes.
    static RECEIVING: std::cell::Cell<*const NetShared> = const { std::cell::Cell::new(std::ptr::null()) };
}

/// The driver thread: receive, run timers, deliver, send; until stopped.
fn drive(shared: &NetShared) {
    DRIVING.with(|d| d.set(shared));
    RECEIVING.with(|r| r.set(shared));
    let mut buf = vec![0u8; RECV_BUFFER_LEN];
    let mut outbox = Outbox::default();
    while !shared.stop.load(Ordering::Acquire) {
        let deadline = {
            let state = shared.lock();
            let deadline = state.participant.poll_timeout().map(Instant::as_nanos);
            // Published under the lock, so an input after it sees it and wakes us if needed.
            shared
                .driver_deadline
                .store(deadline.unwrap_or(u64::MAX), Ordering::Release);
            deadline
        };
        let event = shared.udp.recv(&mut buf, deadline);
        let now = now();
        let mut state = shared.lock();
        match event {
            Ok(RecvEvent::Datagram(received)) => {
                let source = to_locator(received.source);
                state
                    .participant
                    .handle_datagram(now, Some(source), &buf[..received.len]);
            }
            Ok(RecvEvent::DeadlineReached | RecvEvent::Woken) => {}
            Err(e) => shared.logger.debug(format_args!("receiving: {e}")),
        }
        // Timers only when one is due (a timer armed meanwhile is in the next deadline).
        if deadline.is_some_and(|d| now.as_nanos() >= d) {
            state.participant.handle_timeout(now);
        }
        shared.process_events(&mut state);
        shared.wake_blocked_writers();
        shared.flush(&mut state, now);
        outbox.deliver(shared, state, Outbox::DRIVER_ROUNDS);
    }
    let now = now();
    let mut state = shared.lock();
    state.participant.shutdown(now);
    shared.flush(&mut state, now);
}

/// Reused buffers for what the participant produced for this process: samples for
/// subscriptions and requests for services.
#[derive(Default)]
struct Outbox {
    deliveries: Vec<Delivery>,
    requests: Vec<RequestDelivery>,
    match_reports: MatchReports,
}

impl Outbox {
    /// Rounds the user-data thread hands over at most in one call before leaving the rest to
    /// the driver's next turn (it has its own socket to read).
    const USER_DATA_ROUNDS: usize = 16;
    /// The driver hands over one round per turn, then runs its timers (the ACKNACKs and
    /// HEARTBEATs a publisher waiting for room needs) before the next: a backlog that built
    /// up behind a slow callback must not hold them back.
    const DRIVER_ROUNDS: usize = 1;
    /// Samples a thread leaves waiting for the one handing over at most (see
    /// [`NetShared::process_events`]).
    const MAX_BACKLOG: usize = 1024;

    /// Takes what the participant produced out of `state`, releases the network lock, then
    /// hands it over (a callback may run inline and publish, which takes the lock). A sleeping
    /// executor lets this thread run the callback itself (no thread hop).
    ///
    /// One thread at a time hands over: both receiving threads take samples from the
    /// participant, and two batches handed over at once would interleave. While another
    /// thread is at it, this one leaves its batch in `state` for it, and the thread handing
    /// over comes back for more, at most `rounds` times; what is left then waits for the
    /// driver's next turn, which comes at once.
    fn deliver<'a>(
        &mut self,
        shared: &'a NetShared,
        mut state: MutexGuard<'a, NetState>,
        rounds: usize,
    ) {
        if state.delivering {
            return;
        }
        state.delivering = true;
        for _ in 0..rounds {
            std::mem::swap(&mut self.deliveries, &mut state.deliveries);
            std::mem::swap(&mut self.requests, &mut state.request_deliveries);
            std::mem::swap(&mut self.match_reports, &mut state.match_reports);
            if self.deliveries.is_empty()
                && self.requests.is_empty()
                && self.match_reports.is_empty()
            {
                state.delivering = false;
                if std::mem::take(&mut state.held_back) {
                    drop(state);
                    shared.udp.waker().wake();
                }
                return;
            }
            drop(state);
            report_matches(self.match_reports.drain(..));
            crate::pubsub::with_inline_dispatch(|| {
                for (subscription, payload, info, lost_before) in self.deliveries.drain(..) {
                    subscription.report_lost(lost_before);
                    subscription.deliver(&payload, info);
                }
                for (server, payload, reply) in self.requests.drain(..) {
                    server.deliver_request(&payload, reply);
                }
            });
            state = shared.lock();
        }
        // Anything still left: the driver takes it on its next turn, at once.
        let more = !(state.deliveries.is_empty()
            && state.request_deliveries.is_empty()
            && state.match_reports.is_empty())
            | std::mem::take(&mut state.held_back);
        state.delivering = false;
        drop(state);
        if more {
            shared.udp.waker().wake();
        }
    }
}

/// The user-data thread: blocks on the user unicast socket and handles each datagram as the
/// driver would (samples, HEARTBEATs, ACKNACKs; callbacks run inline when their executor
/// sleeps). Timers stay with the driver thread, which this thread wakes when its input armed
/// one earlier than the driver's deadline ([`NetShared::flush_and_notify`]).
fn receive_user_data(shared: &NetShared) {
    RECEIVING.with(|r| r.set(shared));
    let mut buf = vec![0u8; RECV_BUFFER_LEN];
    let mut outbox = Outbox::default();
    while !shared.stop.load(Ordering::Acquire) {
        let received = match shared.udp.recv_user(&mut buf) {
            Ok(Some(received)) => received,
            Ok(None) => continue,
            Err(e) => {
                shared
                    .logger
                    .debug(format_args!("receiving user data: {e}"));
                // A persistent error must not spin a core.
                std::thread::sleep(std::time::Duration::from_millis(10));
                continue;
            }
        };
        let now = now();
        let mut state = shared.lock();
        let source = to_locator(received.source);
        state
            .participant
            .handle_datagram(now, Some(source), &buf[..received.len]);
        shared.process_events(&mut state);
        shared.wake_blocked_writers();
        shared.flush_and_notify(&mut state, now);
        outbox.deliver(shared, state, Outbox::USER_DATA_ROUNDS);
    }
}

// ---------------------------------------------------------------------------------------------
// Graph queries (`roslite topic list/info`, `roslite node list`)

pub use roslite_rtps::discovery::ros::RosTopicKind;

/// Which side of a topic an endpoint is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GraphEndpointKind {
    Publisher,
    Subscription,
}

/// The QoS an endpoint announced, in ROS terms. `None` marks what ROS reports as `UNKNOWN`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GraphQos {
    pub reliability: Reliability,
    /// `None` for DDS TRANSIENT and PERSISTENT, which ROS has no names for.
    pub durability: Option<Durability>,
    /// `None` when the endpoint's vendor does not announce its history (see
    /// [`announces_history`]).
    pub history: Option<History>,
    /// `None`: infinite.
    pub deadline: Option<std::time::Duration>,
    /// `None`: infinite.
    pub lifespan: Option<std::time::Duration>,
    /// `None` for DDS MANUAL_BY_PARTICIPANT, which ROS no longer has.
    pub liveliness: Option<Liveliness>,
    /// `None`: infinite.
    pub liveliness_lease: Option<std::time::Duration>,
}

/// One publisher or subscription of the ROS graph, local or remote, as `ros2 topic info -v`
/// shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphEndpoint {
    pub kind: GraphEndpointKind,
    /// Whether `topic` is a topic or one half of a service.
    pub topic_kind: RosTopicKind,
    /// Fully qualified ROS name: `/chatter` (for service halves, the service's name).
    pub topic: String,
    /// ROS type name: `std_msgs/msg/String`.
    pub type_name: String,
    /// `RIHS01_…` from the endpoint's USER_DATA; `None` if it announced none (Humble peers).
    pub type_hash: Option<String>,
    /// The endpoint's GUID, which ROS calls its GID.
    pub gid: [u8; 16],
    /// `(namespace, name)` of the node owning it, from `ros_discovery_info`; `None` until that
    /// arrives, and for plain DDS endpoints.
    pub node: Option<(String, String)>,
    pub qos: GraphQos,
    /// Created by this context rather than discovered.
    pub local: bool,
    /// How this context exchanges user data with the endpoint: `intra` (its own), `shm` or
    /// `uds` (a roslite participant on this host: volatile topics, and transient-local ones
    /// whose writer keeps a KEEP_LAST history that never expires), else `udp`. The same rule
    /// holds between any two roslite participants of one host, so it also says what they use
    /// with each other.
    pub transport: &'static str,
}

impl GraphEndpoint {
    /// For one half of a service, the service's type (`example_interfaces/srv/AddTwoInts`,
    /// from the half's `..._Request` or `..._Response`); `None` for a topic.
    pub fn service_type(&self) -> Option<&str> {
        let suffix = match self.topic_kind {
            RosTopicKind::ServiceRequest => "_Request",
            RosTopicKind::ServiceReply => "_Response",
            RosTopicKind::Topic => return None,
        };
        Some(
            self.type_name
                .strip_suffix(suffix)
                .unwrap_or(&self.type_name),
        )
    }
}

/// Whether a vendor's SEDP announcements carry HISTORY. Fast DDS leaves it out unless
/// `fastdds.serialize_optional_qos` is set, so the decoder's default (KEEP_LAST 1) would be a
/// guess; rmw_fastrtps reports such endpoints' history as UNKNOWN, and so do we.
pub fn announces_history(vendor: VendorId) -> bool {
    vendor != VendorId::EPROSIMA
}

fn graph_qos(data: &EndpointData) -> GraphQos {
    use roslite_rtps::discovery::{DurabilityKind, ReliabilityKind};
    GraphQos {
        reliability: match data.reliability.kind {
            ReliabilityKind::BestEffort => Reliability::BestEffort,
            ReliabilityKind::Reliable => Reliability::Reliable,
        },
        durability: match data.durability {
            DurabilityKind::Volatile => Some(Durability::Volatile),
            DurabilityKind::TransientLocal => Some(Durability::TransientLocal),
            DurabilityKind::Transient | DurabilityKind::Persistent => None,
        },
        history: announces_history(data.vendor_id).then_some(match data.history {
            RtpsHistory::KeepLast { depth } => {
                History::KeepLast(usize::try_from(depth).unwrap_or(usize::MAX))
            }
            RtpsHistory::KeepAll => History::KeepAll,
        }),
        deadline: data.deadline.to_std(),
        lifespan: data.lifespan.to_std(),
        liveliness: match data.liveliness.kind {
            LivelinessKind::Automatic => Some(Liveliness::Automatic),
            LivelinessKind::ManualByTopic => Some(Liveliness::ManualByTopic),
            LivelinessKind::ManualByParticipant => None,
        },
        liveliness_lease: data.liveliness.lease_duration.to_std(),
    }
}

impl From<&QosProfile> for GraphQos {
    /// A profile as the graph shows it; nothing is unknown about a profile we hold.
    fn from(qos: &QosProfile) -> Self {
        GraphQos {
            reliability: qos.reliability,
            durability: Some(qos.durability),
            history: Some(qos.history),
            deadline: qos.deadline,
            lifespan: qos.lifespan,
            liveliness: Some(qos.liveliness),
            liveliness_lease: qos.liveliness_lease,
        }
    }
}

/// `data` in ROS terms; `None` for DDS topics outside the ROS naming conventions
/// (`ros_discovery_info`, plain DDS applications).
fn graph_endpoint(
    data: &EndpointData,
    node: Option<(String, String)>,
    local: bool,
) -> Option<GraphEndpoint> {
    let (topic_kind, topic) = roslite_rtps::discovery::ros::dds_to_ros(&data.topic_name)?;
    let type_name = roslite_rtps::discovery::ros::dds_to_type(&data.type_name)?;
    Some(GraphEndpoint {
        kind: match data.kind {
            RtpsEndpointKind::Writer => GraphEndpointKind::Publisher,
            RtpsEndpointKind::Reader => GraphEndpointKind::Subscription,
        },
        topic_kind,
        topic,
        type_name,
        type_hash: roslite_rtps::discovery::ros::parse_typehash(&data.user_data).map(str::to_owned),
        gid: data.guid.to_bytes(),
        node,
        qos: graph_qos(data),
        local,
        transport: "udp",
    })
}

impl RtpsNetwork {
    /// Every ROS publisher and subscription known: remote ones from SEDP (with their node from
    /// `ros_discovery_info`), then this context's own; sorted by topic, then kind.
    pub fn endpoints(&self) -> Vec<GraphEndpoint> {
        let state = self.shared.lock();
        let remote_node = |guid: Guid| {
            let info = state.remote_graph.get(&guid.prefix)?;
            info.nodes
                .iter()
                .find(|n| n.writer_gids.contains(&guid) || n.reader_gids.contains(&guid))
                .map(|n| (n.node_namespace.clone(), n.node_name.clone()))
        };
        let transport = |data: &EndpointData| {
            state
                .same_host
                .as_ref()
                .map_or("udp", |s| s.transport_of(data, &state.participant))
        };
        let mut out: Vec<GraphEndpoint> = state
            .participant
            .remote_endpoints()
            .filter_map(|e| {
                let mut g = graph_endpoint(e.data(), remote_node(e.guid()), false)?;
                g.transport = transport(e.data());
                Some(g)
            })
            .collect();
        let local_node = |local_id: &u64| {
            let node_id = state.endpoint_nodes.get(local_id)?;
            state.nodes.get(node_id).cloned()
        };
        for (local_id, writer) in &state.writers_by_local {
            if let Some(data) = state.participant.writer_data(*writer) {
                out.extend(graph_endpoint(data, local_node(local_id), true));
            }
        }
        for (local_id, reader) in &state.readers_by_local {
            if let Some(data) = state.participant.reader_data(*reader) {
                out.extend(graph_endpoint(data, local_node(local_id), true));
            }
        }
        for server in state.services.servers.values() {
            let node = state.nodes.get(&server.node_id).cloned();
            if let Some(data) = state.participant.reader_data(server.request_reader) {
                out.extend(graph_endpoint(data, node.clone(), true));
            }
            if let Some(data) = state.participant.writer_data(server.reply_writer) {
                out.extend(graph_endpoint(data, node, true));
            }
        }
        for client in state.services.clients.values() {
            let node = state.nodes.get(&client.node_id).cloned();
            if let Some(data) = state.participant.writer_data(client.request_writer) {
                out.extend(graph_endpoint(data, node.clone(), true));
            }
            if let Some(data) = state.participant.reader_data(client.reply_reader) {
                out.extend(graph_endpoint(data, node, true));
            }
        }
        for e in out.iter_mut().filter(|e| e.local) {
            e.transport = "intra";
        }
        out.sort_by(|a, b| (&a.topic, a.kind, a.gid).cmp(&(&b.topic, b.kind, b.gid)));
        out
    }

    /// How many remote participants (ROS processes, or DDS applications) are known.
    pub fn remote_participant_count(&self) -> usize {
        self.shared.lock().participant.remote_participants().count()
    }

    /// Remote subscriptions matched with this context's publishers on `topic` (a fully
    /// qualified ROS name), summed over those publishers: what `get_subscription_count`
    /// adds to the local count for a tool with one publisher.
    pub fn matched_remote_subscriptions(&self, topic: &str) -> usize {
        let (rtps, local) = self.remote_subscriptions_by_path(topic);
        rtps + local
    }

    /// Remote subscriptions of this context's publishers on `topic`, by path: `(over RTPS,
    /// over a same-host link)`.
    pub fn remote_subscriptions_by_path(&self, topic: &str) -> (usize, usize) {
        let state = self.shared.lock();
        let writers = state.writers_by_local.values().copied();
        state.readers_by_path(writers, &topic_to_dds(topic))
    }

    /// The same-host transport this context uses with the participant of `guid` for volatile
    /// topics (`None`: UDP, as for every non-roslite or other-host peer).
    pub fn same_host_link(&self, guid: Guid) -> Option<crate::same_host::LinkKind> {
        self.shared.lock().same_host.as_ref()?.link_of(guid)
    }
}

#[cfg(test)]
mod graph_tests {
    use roslite_transport::{DiscoveryConfig, DiscoveryRange};

    use super::*;
    use crate::context::{Context, ContextOptions, NetworkMode};

    #[test]
    fn local_endpoints_are_listed_with_their_node_and_qos() {
        // Loopback only; the domain keeps parallel test processes apart.
        let domain_id = 150 + std::process::id() % 50;
        let discovery = DiscoveryConfig {
            domain_id,
            range: DiscoveryRange::Localhost,
            ..Default::default()
        };
        let ctx = Context::new(ContextOptions {
            domain_id,
            network: NetworkMode::Rtps(TransportConfig::new(discovery)),
            ..Default::default()
        })
        .unwrap();
        let node = ctx.create_node_with_namespace("talker", "/robot").unwrap();
        let qos = QosProfile::keep_last(7).transient_local();
        let _publisher = node
            .create_publisher::<roslite_msgs::std_msgs::msg::String>("chatter", qos)
            .unwrap();
        let endpoints: Vec<GraphEndpoint> = ctx
            .network()
            .unwrap()
            .endpoints()
            .into_iter()
            .filter(|e| e.local && e.topic == "/robot/chatter")
            .collect();
        assert_eq!(endpoints.len(), 1, "{endpoints:?}");
        let e = &endpoints[0];
        assert_eq!(e.kind, GraphEndpointKind::Publisher);
        assert_eq!(e.topic_kind, RosTopicKind::Topic);
        assert_eq!(e.topic, "/robot/chatter");
        assert_eq!(e.type_name, "std_msgs/msg/String");
        assert_eq!(
            e.type_hash.as_deref(),
            Some(<roslite_msgs::std_msgs::msg::String as roslite_msgs::Message>::TYPE_HASH)
        );
        assert_eq!(e.node, Some(("/robot".to_owned(), "talker".to_owned())));
        assert_eq!(e.qos.history, Some(History::KeepLast(7)));
        assert_eq!(e.qos.durability, Some(Durability::TransientLocal));
        assert_eq!(e.qos.reliability, Reliability::Reliable);
        assert_eq!(e.qos.deadline, None);
        let prefix = ctx.network().unwrap().guid_prefix();
        assert_eq!(e.gid[..12], prefix.0);
    }
}

// ---------------------------------------------------------------------------------------------
// Services (ros2-wire.md §1.4)
//
// A request and its reply are correlated in one of two styles, chosen by what the other side
// speaks:
// - Fast DDS (and roslite): the request carries inline QoS `related_sample_identity` = {the
//   client's reply-reader GUID, SN unknown}; the reply carries {that GUID, the request's SN}.
//   Sent under both the standard PID 0x0083 and Fast DDS's legacy 0x800f (Humble's Fast DDS
//   2.6 reads only the latter); either is accepted.
// - Cyclone: request and reply payloads start with a 16-byte header {u64 client id, i64
//   sequence} after the encapsulation header; the server copies it into the reply.
// A server recognises the style per request (inline QoS present, else the sender's vendor); a
// client uses Cyclone's only when every matched server is Cyclone.
// With roslite participants on this host, requests and replies go over the same-host links
// instead, the sample identity in a lead before the payload (same_host/service.rs); a request
// is still written to the RTPS writer for its sequence number, the call's key on both paths.

use crate::service::{
    ReplyChannel, ReplyOutcome, ReplySink, RequestKey, RequestSink, ServiceEndpointDescription,
};
use roslite_rtps::parameter_list::{pid, ParameterList, ParameterListWriter};
use roslite_rtps::types::{SampleIdentity, SequenceNumber};
use roslite_rtps::Endianness as RtpsEndianness;

/// Replies waiting for the client's reply reader to match, per server, at most.
const MAX_PARKED_REPLIES: usize = 256;
/// A parked reply whose reader never matched is dropped after this long.
const PARKED_REPLY_LIFETIME_NS: u64 = 30_000_000_000;
/// Length of Cyclone's request header.
const CYCLONE_HEADER_LEN: usize = 16;

#[derive(Default)]
struct ServiceState {
    servers: HashMap<u64, NetServer>,
    server_by_reader: HashMap<ReaderId, u64>,
    server_by_reply_writer: HashMap<WriterId, u64>,
    clients: HashMap<u64, NetClient>,
    client_by_reader: HashMap<ReaderId, u64>,
    parked_replies: Vec<ParkedReply>,
    stats: ServiceNetStats,
}

/// Service traffic the network dropped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServiceNetStats {
    /// Requests or replies too short for the Cyclone header they should carry.
    pub malformed: u64,
    /// Replies addressed to another client of the same service (every client's reply reader
    /// receives every reply; each keeps its own).
    pub replies_for_other_clients: u64,
    /// Replies whose client reader never matched before `PARKED_REPLY_LIFETIME_NS`, or that
    /// overflowed the parking space.
    pub replies_abandoned: u64,
}

struct NetServer {
    node_id: u64,
    request_reader: ReaderId,
    reply_writer: WriterId,
    sink: Arc<dyn RequestSink>,
}

struct NetClient {
    node_id: u64,
    request_writer: WriterId,
    reply_reader: ReaderId,
    sink: Arc<dyn ReplySink>,
    /// Our id in Cyclone's request header.
    cyclone_client_id: u64,
    next_cyclone_seq: i64,
}

/// Where a reply goes and how it is marked.
#[derive(Clone, Debug)]
enum ReplyRoute {
    /// Reply with `related_sample_identity` = `related`; wait for `related.writer_guid` to match
    /// when it names a reader.
    SampleIdentity { related: SampleIdentity },
    /// Copy `header` into the reply; wait for the reply reader whose Cyclone `clientid` equals
    /// the request writer's.
    CycloneHeader {
        header: [u8; CYCLONE_HEADER_LEN],
        request_writer: Guid,
    },
}

struct ParkedReply {
    server: u64,
    route: ReplyRoute,
    payload: Vec<u8>,
    parked_at: Instant,
}

/// The `related_sample_identity` inline QoS, under both PIDs (little-endian, with sentinel).
fn related_identity_inline_qos(identity: SampleIdentity) -> Arc<[u8]> {
    let mut value = Vec::with_capacity(24);
    value.extend_from_slice(&identity.writer_guid.to_bytes());
    value.extend_from_slice(&identity.sequence_number.high().to_le_bytes());
    value.extend_from_slice(&identity.sequence_number.low().to_le_bytes());
    let mut buf = Vec::with_capacity(64);
    let mut w = ParameterListWriter::new(&mut buf, RtpsEndianness::Little);
    // 24 bytes never exceed a parameter's maximum length.
    let _ = w.raw(pid::RELATED_SAMPLE_IDENTITY, &value);
    let _ = w.raw(pid::FASTDDS_RELATED_SAMPLE_IDENTITY, &value);
    w.finish();
    Arc::from(buf)
}

/// The vendor of the participant that wrote `sample`.
fn sender_vendor(state: &NetState, sample: &roslite_rtps::endpoint::ReceivedSample) -> VendorId {
    state
        .participant
        .remote_participant(sample.writer.prefix)
        .map_or(VendorId::UNKNOWN, |p| p.vendor_id())
}

/// The `related_sample_identity` inline QoS of `sample`, read as its sender's `vendor` writes
/// it.
fn sample_related_identity(
    sample: &roslite_rtps::endpoint::ReceivedSample,
    vendor: VendorId,
) -> Option<SampleIdentity> {
    let qos = sample.inline_qos.as_deref()?;
    let list = ParameterList::parse(qos, sample.inline_qos_endianness).ok()?;
    list.related_sample_identity(vendor).ok().flatten()
}

/// Whether `payload` (with encapsulation header) is big-endian CDR.
fn payload_is_big_endian(payload: &[u8]) -> bool {
    payload.get(1).is_some_and(|b| b & 1 == 0)
}

fn cyclone_header_fields(payload: &[u8]) -> Option<(u64, i64)> {
    let header = payload.get(4..4 + CYCLONE_HEADER_LEN)?;
    let (id, seq) = header.split_at(8);
    let id: [u8; 8] = id.try_into().ok()?;
    let seq: [u8; 8] = seq.try_into().ok()?;
    Some(if payload_is_big_endian(payload) {
        (u64::from_be_bytes(id), i64::from_be_bytes(seq))
    } else {
        (u64::from_le_bytes(id), i64::from_le_bytes(seq))
    })
}

/// `payload` without the Cyclone header: encapsulation header, then the message.
fn strip_cyclone_header(payload: &[u8]) -> Option<Vec<u8>> {
    let body = payload.get(4 + CYCLONE_HEADER_LEN..)?;
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(payload.get(..4)?);
    out.extend_from_slice(body);
    Some(out)
}

/// `payload` (encapsulation header, message) with `header` inserted after the encapsulation
/// header. The header is 16 bytes, so the message keeps its 8-byte alignment.
fn insert_cyclone_header(payload: &[u8], header: &[u8; CYCLONE_HEADER_LEN]) -> Vec<u8> {
    let split = payload.len().min(4);
    let mut out = Vec::with_capacity(payload.len() + CYCLONE_HEADER_LEN);
    out.extend_from_slice(&payload[..split]);
    out.extend_from_slice(header);
    out.extend_from_slice(&payload[split..]);
    out
}

/// A 64-bit id for Cyclone's request header, from the request writer's GUID (FNV-1a).
fn cyclone_client_id(guid: Guid) -> u64 {
    guid.to_bytes().iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn user_data_with(type_hash: &str, extra: &[u8]) -> Vec<u8> {
    let mut data = typehash_user_data(type_hash);
    data.extend_from_slice(extra);
    data
}

fn is_reader(guid: Guid) -> bool {
    guid.entity_id.kind & 0x04 != 0
}

impl NetShared {
    /// A request for local server `local_id`: work out the reply route and queue it.
    fn handle_request(
        &self,
        state: &mut NetState,
        local_id: u64,
        sample: roslite_rtps::endpoint::ReceivedSample,
    ) {
        if sample.payload.is_empty() {
            return;
        }
        let Some(server) = state.services.servers.get(&local_id) else {
            return;
        };
        let sink = server.sink.clone();
        let vendor = sender_vendor(state, &sample);
        let (route, payload) = match sample_related_identity(&sample, vendor) {
            Some(identity) if identity.writer_guid != Guid::UNKNOWN => (
                ReplyRoute::SampleIdentity {
                    related: SampleIdentity {
                        writer_guid: identity.writer_guid,
                        sequence_number: sample.sequence_number,
                    },
                },
                sample.payload,
            ),
            _ if vendor == VendorId::ECLIPSE_CYCLONE => {
                let header = sample
                    .payload
                    .get(4..4 + CYCLONE_HEADER_LEN)
                    .and_then(|h| <[u8; CYCLONE_HEADER_LEN]>::try_from(h).ok());
                let (Some(header), Some(body)) = (header, strip_cyclone_header(&sample.payload))
                else {
                    state.services.stats.malformed += 1;
                    return;
                };
                (
                    ReplyRoute::CycloneHeader {
                        header,
                        request_writer: sample.writer,
                    },
                    body,
                )
            }
            // No identity from a non-Cyclone peer: answer the request writer itself, which
            // rmw_fastrtps clients also accept.
            _ => (
                ReplyRoute::SampleIdentity {
                    related: SampleIdentity {
                        writer_guid: sample.writer,
                        sequence_number: sample.sequence_number,
                    },
                },
                sample.payload,
            ),
        };
        let reply = Box::new(NetReply {
            shared: self.weak_self(),
            server: local_id,
            route,
        });
        // Handed to the server after the state lock is released: its callback may run inline
        // on this thread and reply, which takes the lock.
        state
            .request_deliveries
            .push((sink, SharedBuf::from_vec(payload), reply));
    }

    fn weak_self(&self) -> Weak<NetShared> {
        self.me.clone()
    }

    /// Whether the client that sent the request behind `route` can receive the reply from
    /// `reply_writer` yet (rmw_fastrtps and rmw_cyclonedds both wait for this, to survive the
    /// race between discovering the client's two endpoints).
    fn reply_reader_matched(state: &NetState, reply_writer: WriterId, route: &ReplyRoute) -> bool {
        match route {
            ReplyRoute::SampleIdentity { related } => {
                !is_reader(related.writer_guid)
                    || state
                        .participant
                        .writer_matches(reply_writer)
                        .any(|g| g == related.writer_guid)
            }
            ReplyRoute::CycloneHeader { request_writer, .. } => {
                use roslite_rtps::discovery::ros::{parse_cyclone_service_id, CycloneServiceRole};
                let Some(client_id) =
                    state
                        .participant
                        .remote_endpoint(*request_writer)
                        .and_then(|e| {
                            parse_cyclone_service_id(
                                &e.data().user_data,
                                CycloneServiceRole::Client,
                            )
                        })
                else {
                    return true;
                };
                state.participant.writer_matches(reply_writer).any(|g| {
                    state.participant.remote_endpoint(g).is_some_and(|e| {
                        parse_cyclone_service_id(&e.data().user_data, CycloneServiceRole::Client)
                            == Some(client_id)
                    })
                })
            }
        }
    }

    fn write_reply(
        &self,
        state: &mut NetState,
        now: Instant,
        reply_writer: WriterId,
        route: &ReplyRoute,
        payload: &[u8],
    ) {
        let (payload, inline_qos) = match route {
            ReplyRoute::SampleIdentity { related } => (
                Arc::from(payload),
                Some(related_identity_inline_qos(*related)),
            ),
            ReplyRoute::CycloneHeader { header, .. } => {
                (Arc::from(insert_cyclone_header(payload, header)), None)
            }
        };
        if let Err(e) = state
            .participant
            .write(now, reply_writer, payload, inline_qos)
        {
            self.logger
                .warn(format_args!("cannot send a service reply: {e:?}"));
        }
    }

    fn send_reply(&self, server: u64, route: ReplyRoute, payload: Vec<u8>) {
        let now = now();
        let mut state = self.lock();
        let Some(reply_writer) = state.services.servers.get(&server).map(|s| s.reply_writer) else {
            return;
        };
        if Self::reply_reader_matched(&state, reply_writer, &route) {
            self.write_reply(&mut state, now, reply_writer, &route, &payload);
        } else {
            let parked = &mut state.services.parked_replies;
            if parked.iter().filter(|p| p.server == server).count() >= MAX_PARKED_REPLIES {
                state.services.stats.replies_abandoned += 1;
            } else {
                parked.push(ParkedReply {
                    server,
                    route,
                    payload,
                    parked_at: now,
                });
            }
        }
        self.flush_and_notify(&mut state, now);
    }

    /// Sends the parked replies whose readers have matched; drops expired ones.
    fn send_parked_replies(&self, state: &mut NetState, now: Instant) {
        let parked = std::mem::take(&mut state.services.parked_replies);
        for reply in parked {
            let Some(reply_writer) = state
                .services
                .servers
                .get(&reply.server)
                .map(|s| s.reply_writer)
            else {
                continue;
            };
            if Self::reply_reader_matched(state, reply_writer, &reply.route) {
                self.write_reply(state, now, reply_writer, &reply.route, &reply.payload);
            } else if now.as_nanos().saturating_sub(reply.parked_at.as_nanos())
                > PARKED_REPLY_LIFETIME_NS
            {
                state.services.stats.replies_abandoned += 1;
            } else {
                state.services.parked_replies.push(reply);
            }
        }
    }
}

/// A reply for one client of local client `local_id`: find its call and complete it.
fn handle_reply(
    state: &mut NetState,
    local_id: u64,
    sample: roslite_rtps::endpoint::ReceivedSample,
) {
    if sample.payload.is_empty() {
        return;
    }
    let related = sample_related_identity(&sample, sender_vendor(state, &sample));
    let prefix = state.participant.guid_prefix();
    let Some(client) = state.services.clients.get(&local_id) else {
        return;
    };
    let sink = client.sink.clone();
    let (key, payload) = match related {
        Some(identity) => {
            let ours = identity.writer_guid == client.reply_reader.guid(prefix)
                || identity.writer_guid == client.request_writer.guid(prefix);
            if !ours {
                state.services.stats.replies_for_other_clients += 1;
                return;
            }
            (
                RequestKey::WriterSn(identity.sequence_number.0),
                sample.payload,
            )
        }
        None => {
            let (Some((client_id, seq)), Some(body)) = (
                cyclone_header_fields(&sample.payload),
                strip_cyclone_header(&sample.payload),
            ) else {
                state.services.stats.malformed += 1;
                return;
            };
            if client_id != client.cyclone_client_id {
                state.services.stats.replies_for_other_clients += 1;
                return;
            }
            (RequestKey::CycloneSeq(seq), body)
        }
    };
    let _: ReplyOutcome = sink.deliver_reply(key, &SharedBuf::from_vec(payload));
}

/// Sends a server's reply back over RTPS.
struct NetReply {
    shared: Weak<NetShared>,
    server: u64,
    route: ReplyRoute,
}

impl ReplyChannel for NetReply {
    fn send(self: Box<Self>, payload: Vec<u8>) {
        if let Some(shared) = self.shared.upgrade() {
            shared.send_reply(self.server, self.route, payload);
        }
    }
}

impl RtpsNetwork {
    /// Announces a local server's request reader and reply writer.
    pub(crate) fn add_service_server(
        &self,
        d: &ServiceEndpointDescription,
        sink: Arc<dyn RequestSink>,
    ) {
        use roslite_rtps::discovery::ros::{
            cyclone_service_id_user_data, service_reply_to_dds, service_request_to_dds,
            CycloneServiceRole,
        };
        let now = now();
        let mut state = self.shared.lock();
        let qos = endpoint_qos(&d.qos);
        // Cyclone's `serviceid=` names the server in both endpoints' USER_DATA; any unique
        // 16 bytes do, so the GUID the next endpoint will get serves.
        let service_id = cyclone_service_id_user_data(
            CycloneServiceRole::Service,
            state.participant.next_writer_guid(false).to_bytes(),
        );
        let reader_options =
            EndpointOptions::new(&service_request_to_dds(&d.service), d.request_dds_type)
                .with_qos(qos)
                .with_user_data(user_data_with(d.request_type_hash, &service_id));
        let writer_options =
            EndpointOptions::new(&service_reply_to_dds(&d.service), d.response_dds_type)
                .with_qos(qos)
                .with_user_data(user_data_with(d.response_type_hash, &service_id));
        let endpoints = state
            .participant
            .create_reader(now, reader_options)
            .and_then(|r| Ok((r, state.participant.create_writer(now, writer_options)?)));
        match endpoints {
            Ok((request_reader, reply_writer)) => {
                let prefix = state.participant.guid_prefix();
                if let Some(same_host) = &mut state.same_host {
                    same_host.service_server_added(
                        request_reader,
                        reply_writer,
                        reply_writer.guid(prefix),
                        sink.clone(),
                    );
                }
                let s = &mut state.services;
                s.server_by_reader.insert(request_reader, d.local_id);
                s.server_by_reply_writer.insert(reply_writer, d.local_id);
                s.servers.insert(
                    d.local_id,
                    NetServer {
                        node_id: d.node_id,
                        request_reader,
                        reply_writer,
                        sink,
                    },
                );
                state.refresh_same_host();
                state.publish_graph(now);
            }
            Err(e) => self.shared.logger.warn(format_args!(
                "service '{}' stays local: cannot create its RTPS endpoints: {e:?}",
                d.service
            )),
        }
        self.shared.flush_and_notify(&mut state, now);
    }

    pub(crate) fn remove_service_server(&self, local_id: u64) {
        let now = now();
        let mut state = self.shared.lock();
        let Some(server) = state.services.servers.remove(&local_id) else {
            return;
        };
        state
            .services
            .server_by_reader
            .remove(&server.request_reader);
        state
            .services
            .server_by_reply_writer
            .remove(&server.reply_writer);
        state
            .services
            .parked_replies
            .retain(|p| p.server != local_id);
        if let Some(same_host) = &mut state.same_host {
            same_host.service_endpoints_removed(server.reply_writer, server.request_reader);
        }
        state.participant.delete_reader(now, server.request_reader);
        state.participant.delete_writer(now, server.reply_writer);
        state.publish_graph(now);
        self.shared.flush_and_notify(&mut state, now);
    }

    /// Announces a local client's request writer and reply reader.
    pub(crate) fn add_service_client(
        &self,
        d: &ServiceEndpointDescription,
        sink: Arc<dyn ReplySink>,
    ) {
        use roslite_rtps::discovery::ros::{
            cyclone_service_id_user_data, service_reply_to_dds, service_request_to_dds,
            CycloneServiceRole,
        };
        let now = now();
        let mut state = self.shared.lock();
        let qos = endpoint_qos(&d.qos);
        // Cyclone's `clientid=` is the request writer's GUID (rmw_cyclonedds `rmw_init_cs`).
        let prefix = state.participant.guid_prefix();
        let client_id_bytes = state.participant.next_writer_guid(false).to_bytes();
        let client_id = cyclone_service_id_user_data(CycloneServiceRole::Client, client_id_bytes);
        let writer_options =
            EndpointOptions::new(&service_request_to_dds(&d.service), d.request_dds_type)
                .with_qos(qos)
                .with_user_data(user_data_with(d.request_type_hash, &client_id));
        let reader_options =
            EndpointOptions::new(&service_reply_to_dds(&d.service), d.response_dds_type)
                .with_qos(qos)
                .with_user_data(user_data_with(d.response_type_hash, &client_id));
        let endpoints = state
            .participant
            .create_writer(now, writer_options)
            .and_then(|w| Ok((w, state.participant.create_reader(now, reader_options)?)));
        match endpoints {
            Ok((request_writer, reply_reader)) => {
                let cyclone_client_id = cyclone_client_id(request_writer.guid(prefix));
                if let Some(same_host) = &mut state.same_host {
                    same_host.service_client_added(
                        request_writer,
                        request_writer.guid(prefix),
                        reply_reader,
                        reply_reader.guid(prefix),
                        sink.clone(),
                    );
                }
                state
                    .services
                    .client_by_reader
                    .insert(reply_reader, d.local_id);
                state.services.clients.insert(
                    d.local_id,
                    NetClient {
                        node_id: d.node_id,
                        request_writer,
                        reply_reader,
                        sink,
                        cyclone_client_id,
                        next_cyclone_seq: 0,
                    },
                );
                state.refresh_same_host();
                state.publish_graph(now);
            }
            Err(e) => self.shared.logger.warn(format_args!(
                "client of '{}' stays local: cannot create its RTPS endpoints: {e:?}",
                d.service
            )),
        }
        self.shared.flush_and_notify(&mut state, now);
    }

    pub(crate) fn remove_service_client(&self, local_id: u64) {
        let now = now();
        let mut state = self.shared.lock();
        let Some(client) = state.services.clients.remove(&local_id) else {
            return;
        };
        state.services.client_by_reader.remove(&client.reply_reader);
        if let Some(same_host) = &mut state.same_host {
            same_host.service_endpoints_removed(client.request_writer, client.reply_reader);
        }
        state.participant.delete_writer(now, client.request_writer);
        state.participant.delete_reader(now, client.reply_reader);
        state.publish_graph(now);
        self.shared.flush_and_notify(&mut state, now);
    }

    /// Whether a remote server has matched both of the client's endpoints, over RTPS or over
    /// same-host links.
    pub(crate) fn service_client_ready(&self, local_id: u64) -> bool {
        let state = self.shared.lock();
        let Some(client) = state.services.clients.get(&local_id) else {
            return false;
        };
        let over_rtps = state
            .participant
            .writer_matches(client.request_writer)
            .next()
            .is_some()
            && state
                .participant
                .reader_matches(client.reply_reader)
                .next()
                .is_some();
        over_rtps
            || state
                .same_host
                .as_ref()
                .is_some_and(|s| s.service_client_ready(client.request_writer, client.reply_reader))
    }

    /// Sends a request (`payload`: CDR with encapsulation header) for local client
    /// `local_id`. `register` runs with the request's key under the network lock, before any
    /// reply can be handled; it is not called if the request could not be written.
    pub(crate) fn send_service_request(
        &self,
        local_id: u64,
        payload: Vec<u8>,
        register: impl FnOnce(RequestKey),
    ) {
        let now = now();
        let mut state = self.shared.lock();
        let prefix = state.participant.guid_prefix();
        let Some(client) = state.services.clients.get(&local_id) else {
            return;
        };
        let (request_writer, reply_reader) = (client.request_writer, client.reply_reader);
        let same_host = state
            .same_host
            .as_ref()
            .and_then(|s| s.service_writers(request_writer))
            .filter(|w| w.readers() > 0)
            .cloned();
        let matched: Vec<Guid> = state.participant.writer_matches(request_writer).collect();
        // Same-host servers are roslite ones, which read the sample identity.
        let all_cyclone = same_host.is_none()
            && !matched.is_empty()
            && matched.iter().all(|g| {
                state
                    .participant
                    .remote_participant(g.prefix)
                    .is_some_and(|p| p.vendor_id() == VendorId::ECLIPSE_CYCLONE)
            });
        let result = if all_cyclone {
            let Some(client) = state.services.clients.get_mut(&local_id) else {
                return;
            };
            client.next_cyclone_seq += 1;
            let seq = client.next_cyclone_seq;
            let mut header = [0u8; CYCLONE_HEADER_LEN];
            header[..8].copy_from_slice(&client.cyclone_client_id.to_le_bytes());
            header[8..].copy_from_slice(&seq.to_le_bytes());
            state
                .participant
                .write(
                    now,
                    request_writer,
                    Arc::from(insert_cyclone_header(&payload, &header)),
                    None,
                )
                .map(|_| RequestKey::CycloneSeq(seq))
        } else {
            let identity = SampleIdentity {
                writer_guid: reply_reader.guid(prefix),
                sequence_number: SequenceNumber::UNKNOWN,
            };
            // Written to RTPS even with no RTPS server matched: its sequence number is the
            // request's identity on every path.
            state
                .participant
                .write(
                    now,
                    request_writer,
                    Arc::from(&payload[..]),
                    Some(related_identity_inline_qos(identity)),
                )
                .map(|sn| RequestKey::WriterSn(sn.0))
        };
        let same_host_reply_identity = match result {
            Ok(key) => {
                // Registered before any server can see the request.
                register(key);
                match key {
                    RequestKey::WriterSn(sn) => Some(SampleIdentity {
                        writer_guid: reply_reader.guid(prefix),
                        sequence_number: SequenceNumber(sn),
                    }),
                    _ => None,
                }
            }
            Err(e) => {
                self.shared
                    .logger
                    .warn(format_args!("cannot send a service request: {e:?}"));
                None
            }
        };
        self.shared.flush_and_notify(&mut state, now);
        drop(state);
        // Outside the lock: a KEEP_ALL server's full queue may hold the send back.
        if let (Some(writers), Some(identity)) = (same_host, same_host_reply_identity) {
            writers.send(identity, &payload);
        }
    }

    /// What the network dropped of service traffic, over RTPS and same-host links.
    pub fn service_stats(&self) -> ServiceNetStats {
        let state = self.shared.lock();
        let mut stats = state.services.stats;
        if let Some(same_host) = &state.same_host {
            let (malformed, for_other_clients) = same_host.service_drops();
            stats.malformed += malformed;
            stats.replies_for_other_clients += for_other_clients;
        }
        stats
    }

    /// The servers this context's clients of `service` reach, by path: `(matched over RTPS,
    /// connected over a same-host link)`, summed over the clients (a server counts once per
    /// client).
    pub fn service_servers_by_path(&self, service: &str) -> (usize, usize) {
        let dds_topic = roslite_rtps::discovery::ros::service_request_to_dds(service);
        let state = self.shared.lock();
        let writers = state.services.clients.values().map(|c| c.request_writer);
        state.readers_by_path(writers, &dds_topic)
    }
}
