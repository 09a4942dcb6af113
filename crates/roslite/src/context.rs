//! The context: one per process (or per independent ROS "world" inside a process), holding what
//! nodes share — domain, command-line arguments, its backends, and shutdown.

use std::sync::Arc;

use roslite_executor::ShutdownSignal;

use crate::backends::intra::LocalBus;
use crate::backends::rtps::{DiscoveryFollower, FaultConfig, NetError, RtpsNetwork};
use crate::backends::same_host::SameHostBackend;
use crate::seam::service::ServiceDrops;
use crate::seam::{Backend, BackendSet};
pub use crate::vocabulary::config::{
    InitError, LocalTransports, NetworkMode, ParameterServices, RosArgs, RosDistro, MAX_DOMAIN_ID,
};
use crate::vocabulary::graph::GraphEndpoint;

/// How to build a [`Context`] other than from the process environment.
#[derive(Clone, Debug, Default)]
pub struct ContextOptions {
    pub domain_id: u32,
    pub args: RosArgs,
    pub network: NetworkMode,
    /// Wire conventions of the ROS distribution the peers run.
    pub ros_distro: RosDistro,
    /// Whether nodes serve the parameter services and publish `/parameter_events` (and the
    /// default of their `start_type_description_service` parameter).
    pub parameter_services: ParameterServices,
    /// Same-host transports offered to other roslite participants (further restricted by
    /// `ROSLITE_TRANSPORTS` when set).
    pub local_transports: LocalTransports,
}

impl ContextOptions {
    /// RTPS in `domain_id` that only looks for peers on this host, whatever the environment
    /// says: `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST` semantics (unicast SPDP probes to
    /// 127.0.0.1, no multicast socket) and no static peers. What examples, tests and
    /// benchmarks run on.
    pub fn localhost(domain_id: u32) -> Self {
        let discovery = roslite_transport::DiscoveryConfig {
            domain_id,
            range: roslite_transport::DiscoveryRange::Localhost,
            ..Default::default()
        };
        ContextOptions {
            domain_id,
            network: NetworkMode::Rtps(roslite_transport::TransportConfig::new(discovery)),
            ..Default::default()
        }
    }
}

pub(crate) struct ContextInner {
    pub(crate) domain_id: u32,
    pub(crate) args: RosArgs,
    pub(crate) parameter_services: ParameterServices,
    /// Intra-process delivery first, then the RTPS network and the same-host links beside it
    /// when there is one, then any added with [`Context::add_backend`].
    pub(crate) backends: Arc<BackendSet>,
    /// Declared last: dropped after the backends, it stops its threads.
    _network: Option<RtpsNetwork>,
}

/// Shared state of all nodes created from it. Cheap to clone.
#[derive(Clone)]
pub struct Context {
    pub(crate) inner: Arc<ContextInner>,
}

impl Context {
    /// A context from `ROS_DOMAIN_ID` and the process arguments.
    ///
    /// # Errors
    /// [`InitError`] for a bad domain id or ROS argument.
    pub fn from_env() -> Result<Self, InitError> {
        Self::from_env_and_args(std::env::args())
    }

    /// A context from `ROS_DOMAIN_ID` and the other variables [`Self::from_env`] reads, with
    /// the command line `args` (the program name first, as `argv`; `--ros-args ... [--]`
    /// parsed as rcl does): what a C or C++ node's `init(argc, argv)` gives.
    ///
    /// # Errors
    /// [`InitError`] for a bad domain id or ROS argument.
    pub fn from_env_and_args<I, S>(args: I) -> Result<Self, InitError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let domain_id = match std::env::var("ROS_DOMAIN_ID") {
            Ok(text) if !text.trim().is_empty() => text
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|d| *d <= MAX_DOMAIN_ID)
                .ok_or(InitError::InvalidDomainId(text))?,
            _ => 0,
        };
        let args = RosArgs::parse(args)?;
        let network = match std::env::var("ROSLITE_NETWORK")
            .ok()
            .as_deref()
            .map(str::trim)
        {
            Some("off" | "0" | "false") => NetworkMode::Off,
            _ => NetworkMode::Rtps(
                roslite_transport::TransportConfig::from_env()
                    .map_err(|e| InitError::Network(e.to_string()))?,
            ),
        };
        let ros_distro = match std::env::var(RosDistro::ENV) {
            Ok(name) if !name.trim().is_empty() => {
                RosDistro::parse(&name).ok_or(InitError::UnknownDistro(name))?
            }
            _ => RosDistro::default(),
        };
        Self::new(ContextOptions {
            domain_id,
            args,
            network,
            ros_distro,
            parameter_services: ParameterServices::from_env(),
            local_transports: match std::env::var(LocalTransports::ENV) {
                Ok(text) if !text.trim().is_empty() => LocalTransports::parse(&text)?,
                _ => LocalTransports::default(),
            },
        })
    }

    /// A context with explicit options.
    ///
    /// # Errors
    /// [`InitError::InvalidDomainId`] if the domain id is out of range.
    pub fn new(options: ContextOptions) -> Result<Self, InitError> {
        if options.domain_id > MAX_DOMAIN_ID {
            return Err(InitError::InvalidDomainId(options.domain_id.to_string()));
        }
        if let Some(level) = options.args.log_level {
            crate::vocabulary::log::set_min_severity(level);
        }
        // Read again where publishers are made; a malformed value is refused here, once.
        crate::vocabulary::qos::keep_all_max_bytes()?;
        // Read again where the network starts; likewise.
        crate::vocabulary::limits::NetworkLimits::from_env()?;
        crate::vocabulary::config::batch_window_from_env()?;
        let mut initial: Vec<Arc<dyn Backend>> = vec![Arc::new(LocalBus::default())];
        let network = match &options.network {
            NetworkMode::Off => None,
            NetworkMode::Rtps(config) => {
                let mut config = config.clone();
                config.discovery.domain_id = options.domain_id;
                let logger = crate::vocabulary::log::Logger::new("roslite.rtps");
                let mut local_transports = options.local_transports.adjusted_by_env()?;
                let fault = FaultConfig::from_env()
                    .map_err(|e| InitError::Network(NetError::FaultInjection(e).to_string()))?;
                // An impaired link must impair everything: same-host paths would bypass it.
                if fault.is_some() {
                    local_transports = LocalTransports::UDP_ONLY;
                }
                let same_host = SameHostBackend::start(local_transports, logger.clone());
                let follower = same_host
                    .clone()
                    .map(|s| -> Arc<dyn DiscoveryFollower> { s });
                let network =
                    RtpsNetwork::start(&config, options.ros_distro, follower, fault, logger)
                        .map_err(|e| InitError::Network(e.to_string()))?;
                // RTPS before the same-host links: they look up the RTPS identity of each
                // endpoint the network was told of first.
                initial.push(network.backend());
                if let Some(same_host) = same_host {
                    same_host.follow(network.handle());
                    initial.push(same_host);
                }
                Some(network)
            }
        };
        let backends = Arc::new(BackendSet::new(ShutdownSignal::new(), initial));
        Ok(Self {
            inner: Arc::new(ContextInner {
                domain_id: options.domain_id,
                args: options.args,
                parameter_services: options.parameter_services,
                backends,
                _network: network,
            }),
        })
    }

    pub fn domain_id(&self) -> u32 {
        self.inner.domain_id
    }

    /// The ROS graph as this context sees it: its own endpoints and, with a network, every
    /// one discovered.
    pub fn graph(&self) -> Graph {
        Graph {
            backends: self.inner.backends.clone(),
        }
    }

    /// Whether this context talks to other processes (RTPS, and the same-host links beside
    /// it); false under [`NetworkMode::Off`].
    pub fn has_network(&self) -> bool {
        self.inner.backends.reaches_other_processes()
    }

    pub fn args(&self) -> &RosArgs {
        &self.inner.args
    }

    /// Adds a backend that carries messages (and, if it implements them, service calls) to
    /// and from other processes; it is told about existing nodes and endpoints at once and
    /// about every later one.
    pub fn add_backend(&self, backend: Arc<dyn Backend>) {
        self.inner.backends.add(backend);
    }

    /// Stops every executor spinning nodes of this context.
    pub fn shutdown(&self) {
        self.inner.backends.shutdown().shutdown();
    }

    /// False once [`Self::shutdown`] was called.
    pub fn ok(&self) -> bool {
        !self.inner.backends.shutdown().is_shutdown()
    }

    pub fn shutdown_signal(&self) -> &Arc<ShutdownSignal> {
        self.inner.backends.shutdown()
    }
}

/// `pairs` sorted, each once.
fn sorted_set(mut pairs: Vec<(String, String)>) -> Vec<(String, String)> {
    pairs.sort();
    pairs.dedup();
    pairs
}

/// The ROS graph as one context sees it (see [`Context::graph`]): from the RTPS network when
/// the context has one (every participant discovered, and this context), else this context's
/// own nodes and endpoints. Cheap to keep; each query reads the graph as it is then.
#[derive(Clone)]
pub struct Graph {
    backends: Arc<BackendSet>,
}

impl Graph {
    /// Every ROS publisher and subscription known (services' halves included), sorted by
    /// topic, then kind.
    pub fn endpoints(&self) -> Vec<GraphEndpoint> {
        let mut endpoints = self.backends.graph_endpoints();
        endpoints.sort_by(|a, b| (&a.topic, a.kind, a.gid).cmp(&(&b.topic, b.kind, b.gid)));
        endpoints
    }

    /// Nodes known, as `(namespace, name)`, sorted.
    pub fn node_names(&self) -> Vec<(String, String)> {
        sorted_set(
            self.backends
                .with_graph(|g| g.node_names())
                .unwrap_or_default(),
        )
    }

    /// Services known with their types (`example_interfaces/srv/AddTwoInts`), unsorted.
    pub fn service_names_and_types(&self) -> Vec<(String, String)> {
        self.backends
            .with_graph(|g| g.service_names_and_types())
            .unwrap_or_default()
    }

    /// Topics (ROS names) of other participants with their ROS types, sorted.
    pub fn remote_topics(&self) -> Vec<(String, String)> {
        sorted_set(
            self.backends
                .with_graph(|g| g.remote_topics())
                .unwrap_or_default(),
        )
    }

    /// How many other participants (ROS processes, DDS applications) are known.
    pub fn remote_participant_count(&self) -> usize {
        self.backends
            .with_graph(|g| g.remote_participant_count())
            .unwrap_or_default()
    }

    /// Subscriptions of other participants matched with this context's publishers on `topic`
    /// (a fully qualified ROS name), summed over those publishers: what
    /// `get_subscription_count` adds to the local count for a tool with one publisher.
    pub fn matched_remote_subscriptions(&self, topic: &str) -> usize {
        let (rtps, same_host) = self.remote_subscriptions_by_path(topic);
        rtps + same_host
    }

    /// As [`Self::matched_remote_subscriptions`], by path: `(over RTPS, over a same-host
    /// link)`.
    pub fn remote_subscriptions_by_path(&self, topic: &str) -> (usize, usize) {
        self.backends.fold_paths((0, 0), |(rtps, same_host), p| {
            let (more_rtps, more_same_host) = p.remote_subscriptions_by_path(topic);
            (rtps + more_rtps, same_host + more_same_host)
        })
    }

    /// The servers this context's clients of `service` reach, by path: `(matched over RTPS,
    /// connected over a same-host link)`, summed over the clients.
    pub fn service_servers_by_path(&self, service: &str) -> (usize, usize) {
        self.backends.fold_paths((0, 0), |(rtps, same_host), p| {
            let (more_rtps, more_same_host) = p.service_servers_by_path(service);
            (rtps + more_rtps, same_host + more_same_host)
        })
    }

    /// This context's RTPS participant GUID prefix (the first 12 bytes of its endpoints'
    /// GIDs); `None` without a network.
    pub fn guid_prefix(&self) -> Option<[u8; 12]> {
        self.backends.with_graph(|g| g.guid_prefix()).flatten()
    }

    /// Service traffic the network dropped (malformed, for other clients, abandoned).
    pub fn service_stats(&self) -> ServiceDrops {
        self.backends
            .fold_paths(ServiceDrops::default(), |sum, p| sum + p.service_drops())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocabulary::log::Severity;

    #[test]
    fn ros_args_sections() {
        let args = RosArgs::parse([
            "prog",
            "--flag",
            "--ros-args",
            "-r",
            "chatter:=talk",
            "-p",
            "rate:=5",
            "--log-level",
            "warn",
            "--",
            "user",
            "--ros-args",
            "-r",
            "__node:=renamed",
        ])
        .unwrap();
        assert_eq!(args.unparsed, ["prog", "--flag", "user"]);
        assert_eq!(args.remaps.len(), 2);
        assert_eq!(args.params, [(None, "rate".to_owned(), "5".to_owned())]);
        assert_eq!(args.log_level, Some(Severity::Warn));
    }

    #[test]
    fn bad_ros_args_are_explained() {
        let e = RosArgs::parse(["p", "--ros-args", "-r", "nonsense"]).unwrap_err();
        assert!(e.to_string().contains("'from:=to'"), "{e}");
        let e = RosArgs::parse(["p", "--ros-args", "--frobnicate"]).unwrap_err();
        assert!(e.to_string().contains("unknown ROS argument"), "{e}");
        let e = RosArgs::parse(["p", "--ros-args", "-r"]).unwrap_err();
        assert!(e.to_string().contains("expects a value"), "{e}");
    }

    #[test]
    fn node_name_and_namespace_remapping() {
        let args = RosArgs::parse([
            "p",
            "--ros-args",
            "-r",
            "__ns:=/robot",
            "-r",
            "talker:__node:=speaker",
        ])
        .unwrap();
        let ctx = Context::new(ContextOptions {
            domain_id: 0,
            args,
            ..Default::default()
        })
        .unwrap();
        let node = ctx.create_node("talker").unwrap();
        assert_eq!(node.fully_qualified_name(), "/robot/speaker");
        let other = ctx.create_node("listener").unwrap();
        assert_eq!(other.fully_qualified_name(), "/robot/listener");
    }

    #[test]
    fn distro_names() {
        assert_eq!(RosDistro::parse("Humble"), Some(RosDistro::Humble));
        assert_eq!(RosDistro::parse("kilted"), Some(RosDistro::IronOrLater));
        assert_eq!(RosDistro::parse("foxy"), None);
        let e = InitError::UnknownDistro("foxy".into());
        assert!(
            e.to_string()
                .contains("humble, iron, jazzy, kilted or rolling"),
            "{e}"
        );
    }

    #[test]
    fn invalid_domain() {
        let e = Context::new(ContextOptions {
            domain_id: 300,
            ..Default::default()
        })
        .err()
        .unwrap();
        assert!(e.to_string().contains("from 0 to 232"), "{e}");
    }
}
