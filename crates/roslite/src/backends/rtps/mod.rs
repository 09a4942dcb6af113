//! ROS 2 on the wire: the RTPS transport that makes a context's endpoints visible to, and
//! able to talk with, other processes (roslite, rclpy/rclcpp over Fast DDS or Cyclone DDS).
//!
//! Ownership and threads: [`RtpsNetwork`] owns one RTPS [`Participant`] (the sans-IO protocol
//! core) and one [`UdpTransport`], both behind `NetShared`. Three kinds of caller drive them:
//! - the context's backends, through the [`Backend`] trait, when local endpoints come and go
//!   (an RTPS writer or reader is created and announced at once);
//! - publishers, through an [`Outlet`](crate::seam::Outlet) per local publisher: `publish` hands the serialized
//!   message to the participant and sends the resulting datagrams on the publishing thread,
//!   so a message costs no thread hop;
//! - one driver thread, which receives datagrams, runs the protocol's timers (heartbeats,
//!   announcements, lease expiry) and delivers samples into subscription queues.
//!
//! Everything protocol-related happens under the one `state` mutex; the UDP socket calls are
//! thread-safe on their own and also run under it only to keep datagram order per writer.
//!
//! The same-host links are a backend of their own beside this one; they follow this network's
//! discovery (`follower`) to learn which pairs they carry, and the participant leaves those
//! pairs unmatched.
//!
//! The files: this one starts and stops the network and holds its state; `endpoints` carries
//! local publishers and subscriptions, `services` servers and clients, `graph` the ROS graph,
//! `events` routes what the participant reports, `driver` runs the receiving threads, and
//! `follower` is what a backend beside this one reads of its discovery.

mod driver;
mod endpoints;
mod events;
mod follower;
mod graph;
mod services;

#[cfg(test)]
pub(crate) use follower::EmptyRuntime;
pub(crate) use follower::{Discovery, DiscoveryFollower, NetworkHandle};
pub(crate) use services::{decode_route, encode_route};

use std::collections::HashMap;
use std::net::SocketAddrV4;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::thread::JoinHandle;

use roslite_cdr::SharedBuf;
use roslite_executor::Instant as MonoInstant;
use roslite_msgs::Message as _;
use roslite_rtps::discovery::ros::{typehash_user_data, WireDistro};
use roslite_rtps::discovery::{History as RtpsHistory, LivelinessKind};
use roslite_rtps::participant::{
    CreateError, EndpointOptions, EndpointQos, Participant, ParticipantConfig, ReaderId,
    WriterHistory, WriterId,
};
use roslite_rtps::types::{GuidPrefix, Locator, Time};
use roslite_rtps::Instant;
use roslite_transport::fault::FaultInjector;
use roslite_transport::{TransportConfig, UdpTransport};

use crate::seam::service::{
    LocalClient, LocalServer, ReplyChannel, ReplySink, RequestKey, RequestSink,
};
use crate::seam::{Backend, GraphView, LocalPublisher, LocalSubscription, MessageInfo, PathView};
use crate::vocabulary::config::RosDistro;
use crate::vocabulary::events::{report_matches, MatchReports};
use crate::vocabulary::log::Logger;
use crate::vocabulary::qos::{Durability, History, Liveliness, QosProfile, Reliability};
use roslite_rtps::discovery::ros::ParticipantEntitiesInfo;
use services::ServiceState;

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

/// `instant` (monotonic, this process) as the wall-clock time INFO_TS carries.
fn wall_time_of(instant: MonoInstant) -> Time {
    Time::from_unix(crate::vocabulary::time::monotonic_to_wall(instant))
}

fn to_locator(addr: SocketAddrV4) -> Locator {
    Locator::udpv4(*addr.ip(), addr.port())
}

/// A fresh GUID prefix: never reused across runs (docs/ros2-interop.md §13).
fn random_prefix() -> Result<GuidPrefix, NetError> {
    let mut bytes = [0u8; 12];
    rustix::rand::getrandom(&mut bytes, rustix::rand::GetRandomFlags::empty())
        .map_err(|e| NetError::Random(e.into()))?;
    Ok(GuidPrefix(bytes))
}

/// The RTPS layer's policy id as the user API names it.
fn policy_kind(
    policy: roslite_rtps::discovery::matching::QosPolicy,
) -> crate::vocabulary::qos::QosPolicyKind {
    use crate::vocabulary::qos::QosPolicyKind as Kind;
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

/// Service traffic on its way to a local server or client, handed over once the state lock is
/// released: the server's callback may run inline, and a reply completes a call whose owner's
/// function (a C caller's response callback) may do anything, the network included.
enum ServiceDelivery {
    /// A request, with the way back.
    Request(Arc<dyn RequestSink>, SharedBuf, Box<dyn ReplyChannel>),
    /// A reply for the client call of this key.
    Reply(Arc<dyn ReplySink>, RequestKey, SharedBuf),
}
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
    /// Samples taken from the participant, handed to subscriptions by the receiving thread
    /// (driver or user-data) once it has released the state lock (a callback may run inline
    /// and publish).
    deliveries: Vec<Delivery>,
    /// Service requests and replies, likewise.
    service_deliveries: Vec<ServiceDelivery>,
    /// Matches and unmatches of local endpoints with remote ones, reported likewise.
    match_reports: MatchReports,
    /// A receiving thread is handing over what the participant produced (see
    /// [`Outbox::deliver`](driver::Outbox::deliver)): the other leaves its own to it, so that each subscription gets
    /// its messages in the order they were taken.
    delivering: bool,
    /// Samples were left in the participant's readers because the batch waiting for the
    /// thread handing over was already [`Outbox::MAX_BACKLOG`](driver::Outbox::MAX_BACKLOG) long: the driver takes them
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

    /// Whether local writer `writer` must be given every sample (see `endpoints::RtpsOutlet`).
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

    /// The remote readers matched over RTPS with those of local `writers` on DDS topic
    /// `dds_topic`, summed.
    fn rtps_readers(&self, writers: impl Iterator<Item = WriterId>, dds_topic: &str) -> usize {
        writers
            .filter(|w| {
                self.participant
                    .writer_data(*w)
                    .is_some_and(|d| d.topic_name == dds_topic)
            })
            .map(|w| self.participant.writer_matches(w).count())
            .sum()
    }

    /// Tells the follower, if any, that endpoints changed.
    fn endpoints_changed(&mut self, follower: Option<&dyn DiscoveryFollower>) {
        // Taken even without a follower: the participant keeps them until asked.
        let changed = self.participant.take_remote_endpoint_changes();
        if let Some(follower) = follower {
            let (discovery, reports) = Discovery::split(self);
            follower.endpoints_changed(&discovery, changed.as_deref(), reports);
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
    /// The backend that carries some pairs by other means (the same-host links), told what
    /// discovery finds.
    follower: Option<Arc<dyn DiscoveryFollower>>,
    /// The caps of this process that warn once: local RTPS endpoints, a keep-all writer's
    /// history ([`NetShared::endpoint_refused`], [`NetShared::history_full`]).
    local_endpoints_cap_warned: AtomicBool,
    history_cap_warned: AtomicBool,
}

impl NetShared {
    fn lock(&self) -> MutexGuard<'_, NetState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `what` (a publisher on '/x', say) got no RTPS writer or reader: it stays in this
    /// process. Reaching the cap on local endpoints is said once, with the variable that
    /// raises it; any other refusal each time.
    fn endpoint_refused(&self, what: std::fmt::Arguments<'_>, e: CreateError) {
        if let CreateError::TooManyEndpoints { max } = e {
            if !self
                .local_endpoints_cap_warned
                .swap(true, Ordering::Relaxed)
            {
                self.logger.warn(format_args!(
                    "reached the limit of {max} local RTPS writers and readers: {what} and \
                     further new endpoints reach only this process, while those created \
                     before keep working; set {}= to raise it (this warning is given once)",
                    crate::vocabulary::limits::MAX_LOCAL_ENDPOINTS_ENV
                ));
            }
            return;
        }
        self.logger.warn(format_args!(
            "{what} stays in this process: cannot create its RTPS endpoint: {e}"
        ));
    }

    /// A keep-all publisher on `topic` gave up on a sample: its RTPS writer's history stayed
    /// full for `max_blocking_time` (`history`: how full, and the caps). Said once.
    fn history_full(&self, topic: &str, history: Option<WriterHistory>) {
        if self.history_cap_warned.swap(true, Ordering::Relaxed) {
            return;
        }
        let held = history.map_or_else(String::new, |h| {
            format!(
                " (it holds {} of at most {} samples, {} of at most {} bytes)",
                h.samples, h.max_samples, h.bytes, h.max_bytes
            )
        });
        self.logger.warn(format_args!(
            "a keep-all publisher on '{topic}' found its history full{held}: a subscriber over \
             UDP has not acknowledged those samples, so publish waits up to max_blocking_time \
             and then returns Timeout; the sample cap is DDS max_samples, the byte cap \
             {}= raises (this warning is given once)",
            crate::vocabulary::qos::KEEP_ALL_MAX_BYTES_ENV
        ));
    }

    fn follower(&self) -> Option<&dyn DiscoveryFollower> {
        self.follower.as_deref()
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

    /// [`Self::flush`] for callers other than the driver thread (publishers, the backend calls). Their
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
    /// `endpoints::RtpsOutlet::send`); call with `state` locked, after an input was handled.
    fn wake_blocked_writers(&self) {
        if self.writers_waiting.load(Ordering::SeqCst) > 0 {
            self.history_space.notify_all();
        }
    }
}

/// The running RTPS network of one context; stops its driver thread when dropped.
pub struct RtpsNetwork {
    shared: Arc<NetShared>,
    driver: Option<JoinHandle<()>>,
    /// The thread that blocks on the user-data socket ([`receive_user_data`](driver::receive_user_data)); `None` if the
    /// socket could not be given its own thread (the driver then serves it).
    user_receiver: Option<JoinHandle<()>>,
}

impl RtpsNetwork {
    /// Binds the UDP ports, starts the participant and its driver thread. `follower` (the
    /// same-host links) is told what discovery finds from the first datagram on; `fault`
    /// (`ROSLITE_FAULT_INJECTION`, read by the caller) impairs every datagram sent.
    ///
    /// # Errors
    /// [`NetError`] if no ports can be bound or the configuration is refused.
    pub(crate) fn start(
        config: &TransportConfig,
        distro: RosDistro,
        follower: Option<Arc<dyn DiscoveryFollower>>,
        fault_config: Option<FaultConfig>,
        logger: Logger,
    ) -> Result<Self, NetError> {
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
        // Validated when the context was made.
        crate::vocabulary::limits::NetworkLimits::from_env()
            .unwrap_or_default()
            .apply(&mut participant_config);
        participant_config.writer_defaults.keep_all_max_bytes =
            crate::vocabulary::qos::keep_all_max_bytes()
                .unwrap_or(crate::vocabulary::qos::KEEP_ALL_MAX_BYTES);
        // Validated when the context was made.
        if let Ok(Some(window)) = crate::vocabulary::config::batch_window_from_env() {
            participant_config.writer_defaults.batch_window = window;
        }
        if let Some(follower) = &follower {
            participant_config
                .user_data
                .extend_from_slice(follower.user_data().as_bytes());
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
                deliveries: Vec::new(),
                service_deliveries: Vec::new(),
                match_reports: Vec::new(),
                delivering: false,
                held_back: false,
                outlet_activity: HashMap::new(),
                wire_distro: match distro {
                    RosDistro::Humble => WireDistro::Humble,
                    RosDistro::IronOrLater => WireDistro::IronOrLater,
                },
            }),
            udp,
            stop: AtomicBool::new(false),
            driver_deadline: AtomicU64::new(0),
            logger,
            me: me.clone(),
            history_space: Condvar::new(),
            writers_waiting: AtomicUsize::new(0),
            follower,
            local_endpoints_cap_warned: AtomicBool::new(false),
            history_cap_warned: AtomicBool::new(false),
        });
        if let Some(e) = fault_spawn_error {
            return Err(NetError::Spawn(e));
        }
        let driver = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("roslite-rtps".into())
                .spawn(move || driver::drive(&shared))
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
                    .spawn(move || driver::receive_user_data(&shared))
                    .map_err(NetError::Spawn)?,
            );
        }
        Ok(network)
    }

    /// This network as a backend of its context.
    pub(crate) fn backend(&self) -> Arc<dyn Backend> {
        Arc::new(RtpsBackend(self.shared.clone()))
    }

    /// What the network's follower reaches it through.
    pub(crate) fn handle(&self) -> NetworkHandle {
        NetworkHandle(Arc::downgrade(&self.shared))
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

/// The network as its context's backends see it.
struct RtpsBackend(Arc<NetShared>);

impl Backend for RtpsBackend {
    fn node_added(&self, id: u64, namespace: &str, name: &str) {
        self.0.node_added(id, namespace, name);
    }

    fn node_removed(&self, id: u64) {
        self.0.node_removed(id);
    }

    fn publisher_added(&self, publisher: LocalPublisher) {
        self.0.publisher_added(publisher);
    }

    fn publisher_removed(&self, topic: &str, id: u64) {
        self.0.publisher_removed(topic, id);
    }

    fn subscription_added(&self, subscription: LocalSubscription) {
        self.0.subscription_added(subscription);
    }

    fn subscription_removed(&self, topic: &str, id: u64) {
        self.0.subscription_removed(topic, id);
    }

    fn subscription_filter_changed(&self, subscription: &LocalSubscription) {
        self.0.subscription_filter_changed(subscription);
    }

    fn service_server_added(&self, server: &LocalServer) {
        self.0.add_service_server(server);
    }

    fn service_server_removed(&self, _service: &str, id: u64) {
        self.0.remove_service_server(id);
    }

    fn service_client_added(&self, client: &LocalClient) {
        self.0.add_service_client(client);
    }

    fn service_client_removed(&self, id: u64) {
        self.0.remove_service_client(id);
    }

    fn service_client_ready(&self, id: u64) -> bool {
        self.0.service_client_ready(id)
    }

    fn service_client_gid(&self, id: u64) -> Option<[u8; 16]> {
        self.0.service_client_gid(id)
    }

    fn reply_channel(
        &self,
        server: u64,
        address: &[u8],
    ) -> Option<Box<dyn crate::seam::ReplyChannel>> {
        self.0.reply_channel(server, address)
    }

    /// Every client's requests are written here first, whoever serves them: the RTPS
    /// writer's sequence number is the request's key on every path.
    fn send_request(
        &self,
        id: u64,
        payload: &[u8],
        _key: Option<RequestKey>,
        register: &mut dyn FnMut(RequestKey),
    ) -> Option<RequestKey> {
        self.0.send_service_request(id, payload, register)
    }

    fn reaches_other_processes(&self) -> bool {
        true
    }

    fn graph(&self) -> Option<&dyn GraphView> {
        Some(&*self.0)
    }

    fn paths(&self) -> Option<&dyn PathView> {
        Some(&*self.0)
    }
}
