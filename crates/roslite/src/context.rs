//! The context: one per process (or per independent ROS "world" inside a process), holding what
//! nodes share — domain, command-line arguments, the local topic bus, and shutdown.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use roslite_executor::ShutdownSignal;

use crate::intra::LocalBus;
use crate::log::Severity;
use crate::names::{self, NameError, RemapRule};
use crate::node::{Node, NodeError};

/// Highest `ROS_DOMAIN_ID` whose RTPS ports still fit in 16 bits (7400 + 250 * 232 + ...).
pub const MAX_DOMAIN_ID: u32 = 232;

/// Why a context could not be created.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InitError {
    InvalidDomainId(String),
    /// A `--ros-args` argument that is malformed or unknown.
    InvalidRosArg {
        arg: String,
        reason: &'static str,
    },
    /// The network could not be started (ports, discovery settings).
    Network(String),
    /// `ROSLITE_ROS_DISTRO` names no known distribution.
    UnknownDistro(String),
    /// `ROSLITE_TRANSPORTS` names an unknown transport.
    InvalidTransports(String),
    /// `ROSLITE_RECEIVE_SPIN_US` is not a whole number of microseconds up to the maximum.
    InvalidReceiveSpin(String),
}

impl fmt::Display for InitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidDomainId(value) => write!(
                f,
                "ROS_DOMAIN_ID '{value}' is invalid: use an integer from 0 to {MAX_DOMAIN_ID}, or \
                 unset it for domain 0"
            ),
            Self::InvalidRosArg { arg, reason } => {
                write!(f, "invalid ROS argument '{arg}': {reason}")
            }
            Self::Network(e) => write!(f, "{e} (set ROSLITE_NETWORK=off to run without one)"),
            Self::UnknownDistro(name) => write!(
                f,
                "ROSLITE_ROS_DISTRO='{name}' is not a ROS 2 distribution roslite knows; use \
                 humble, iron, jazzy, kilted or rolling (default: kilted)"
            ),
            Self::InvalidTransports(reason) => write!(f, "ROSLITE_TRANSPORTS: {reason}"),
            Self::InvalidReceiveSpin(value) => {
                f.write_str(&roslite_shm::IdleSpin::invalid_budget(value))
            }
        }
    }
}

impl std::error::Error for InitError {}

/// The ROS-specific command-line arguments (`--ros-args ... [--]`), parsed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RosArgs {
    pub remaps: Vec<RemapRule>,
    /// `-p name:=value` overrides, kept as text until parameters parse them.
    pub params: Vec<(Option<String>, String, String)>,
    pub params_files: Vec<String>,
    pub log_level: Option<Severity>,
    /// `--disable-rosout-logs` (rcl's flag; `--enable-rosout-logs` undoes it): nodes do not
    /// publish their log lines on `/rosout`.
    pub disable_rosout_logs: bool,
    pub enclave: Option<String>,
    /// Everything outside `--ros-args` sections, in order (the program name first).
    pub unparsed: Vec<String>,
}

impl RosArgs {
    /// Parses a full argument vector, as rcl does.
    ///
    /// # Errors
    /// [`InitError::InvalidRosArg`] for a malformed or unknown ROS argument.
    pub fn parse<I, S>(args: I) -> Result<Self, InitError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut out = RosArgs::default();
        let mut args = args.into_iter().map(Into::into);
        let invalid = |arg: &str, reason| InitError::InvalidRosArg {
            arg: arg.to_owned(),
            reason,
        };
        while let Some(arg) = args.next() {
            if arg != "--ros-args" {
                out.unparsed.push(arg);
                continue;
            }
            while let Some(arg) = args.next() {
                let mut value = |flag: &str| {
                    args.next()
                        .ok_or_else(|| invalid(flag, "expects a value after it"))
                };
                match arg.as_str() {
                    "--" => break,
                    "--ros-args" => {}
                    "-r" | "--remap" => {
                        let rule = value(&arg)?;
                        let parsed = RemapRule::parse(&rule).ok_or_else(|| {
                            invalid(&rule, "a remap rule is 'from:=to' or 'node:from:=to'")
                        })?;
                        out.remaps.push(parsed);
                    }
                    "-p" | "--param" => {
                        let text = value(&arg)?;
                        let (lhs, v) = text
                            .split_once(":=")
                            .ok_or_else(|| invalid(&text, "a parameter is 'name:=value'"))?;
                        let (node, name) = match lhs.split_once(':') {
                            Some((node, name)) => (Some(node.to_owned()), name),
                            None => (None, lhs),
                        };
                        out.params.push((node, name.to_owned(), v.to_owned()));
                    }
                    "--params-file" => out.params_files.push(value(&arg)?),
                    "--log-level" => {
                        let level = value(&arg)?;
                        let parsed = Severity::parse(&level).ok_or_else(|| {
                            invalid(&level, "log levels are debug, info, warn, error, fatal")
                        })?;
                        out.log_level = Some(parsed);
                    }
                    "-e" | "--enclave" => out.enclave = Some(value(&arg)?),
                    "--disable-rosout-logs" => out.disable_rosout_logs = true,
                    "--enable-rosout-logs" => out.disable_rosout_logs = false,
                    _ => {
                        return Err(invalid(
                            &arg,
                            "unknown ROS argument; supported: -r/--remap, -p/--param, \
                             --params-file, --log-level, --enable-rosout-logs, \
                             --disable-rosout-logs, -e/--enclave (end the section with --)",
                        ))
                    }
                }
            }
        }
        Ok(out)
    }
}

/// Whether and how a context talks to other processes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum NetworkMode {
    /// Only intra-process delivery: no sockets.
    #[default]
    Off,
    /// RTPS over UDP with this configuration (discovery range, static peers, buffers).
    Rtps(roslite_transport::TransportConfig),
}

/// The ROS 2 distribution whose wire conventions to follow where they differ.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RosDistro {
    /// Humble: `ros_discovery_info` gids are 24 bytes.
    Humble,
    /// Iron, Jazzy, Kilted, Rolling: 16-byte gids (rmw_dds_common#68).
    #[default]
    IronOrLater,
}

impl RosDistro {
    /// Environment variable naming the target distribution.
    pub const ENV: &'static str = "ROSLITE_ROS_DISTRO";

    /// Parses a distribution name (`humble`, `iron`, `jazzy`, `kilted`, `rolling`).
    pub fn parse(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "humble" => Some(Self::Humble),
            "iron" | "jazzy" | "kilted" | "rolling" => Some(Self::IronOrLater),
            _ => None,
        }
    }
}

/// Which same-host transports a context offers to other roslite participants on its host.
/// Between two of them the first transport both offer is used, in the order shared memory,
/// Unix domain socket; otherwise (and with every other peer) UDP. Intra-process delivery within
/// one context is always on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalTransports {
    pub shm: bool,
    pub uds: bool,
    /// How long a same-host reader that found no sample yields the CPU and looks again
    /// before it sleeps, while samples arrive within this time of each other
    /// ([`roslite_shm::IdleSpin`]); zero: it sleeps at once. Default 20 us.
    /// `ROSLITE_RECEIVE_SPIN_US` overrides it.
    pub receive_spin: Duration,
}

impl Default for LocalTransports {
    fn default() -> Self {
        Self {
            shm: true,
            uds: true,
            receive_spin: roslite_shm::IdleSpin::DEFAULT_BUDGET,
        }
    }
}

impl LocalTransports {
    /// Environment variable restricting the transports: a comma-separated subset of `intra`,
    /// `shm`, `uds`, `udp` (default: all). UDP stays on for discovery and non-roslite peers.
    pub const ENV: &'static str = "ROSLITE_TRANSPORTS";

    /// UDP only.
    pub const UDP_ONLY: Self = Self {
        shm: false,
        uds: false,
        receive_spin: roslite_shm::IdleSpin::DEFAULT_BUDGET,
    };

    /// These transports, less those `ROSLITE_TRANSPORTS` leaves out, with the receive spin
    /// `ROSLITE_RECEIVE_SPIN_US` sets. The environment can only restrict the transports a
    /// program allows, so an operator can keep any roslite process off shared memory without
    /// changing it; it can set the spin either way (0 to save CPU, more on a slow board).
    ///
    /// # Errors
    /// A malformed `ROSLITE_TRANSPORTS` or `ROSLITE_RECEIVE_SPIN_US`.
    pub fn adjusted_by_env(self) -> Result<Self, InitError> {
        let mut out = self;
        if let Ok(text) = std::env::var(Self::ENV) {
            if !text.trim().is_empty() {
                let allowed = Self::parse(&text)?;
                out.shm &= allowed.shm;
                out.uds &= allowed.uds;
            }
        }
        if let Some(spin) =
            roslite_shm::IdleSpin::budget_from_env().map_err(InitError::InvalidReceiveSpin)?
        {
            out.receive_spin = spin;
        }
        Ok(out)
    }

    /// Parses the `ROSLITE_RECEIVE_SPIN_US` syntax: whole microseconds, at most
    /// [`roslite_shm::IdleSpin::MAX_BUDGET`] (1000).
    ///
    /// # Errors
    /// [`InitError::InvalidReceiveSpin`], which says what is accepted.
    pub fn parse_receive_spin(text: &str) -> Result<Duration, InitError> {
        roslite_shm::IdleSpin::parse_budget(text)
            .ok_or_else(|| InitError::InvalidReceiveSpin(text.to_string()))
    }

    /// Parses the `ROSLITE_TRANSPORTS` syntax.
    ///
    /// # Errors
    /// Names the unknown entry and lists the known ones.
    pub fn parse(text: &str) -> Result<Self, InitError> {
        let mut out = Self::UDP_ONLY;
        for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            match entry.to_ascii_lowercase().as_str() {
                "shm" => out.shm = true,
                "uds" => out.uds = true,
                "udp" | "intra" => {}
                _ => {
                    return Err(InitError::InvalidTransports(format!(
                        "unknown transport '{entry}'; use a comma-separated list of intra, shm, \
                         uds and udp (e.g. 'uds,udp' to keep same-host traffic off shared \
                         memory)"
                    )))
                }
            }
        }
        Ok(out)
    }
}

/// How to build a [`Context`] other than from the process environment.
#[derive(Clone, Debug, Default)]
pub struct ContextOptions {
    pub domain_id: u32,
    pub args: RosArgs,
    pub network: NetworkMode,
    /// Wire conventions of the ROS distribution the peers run.
    pub ros_distro: RosDistro,
    /// Whether nodes serve the parameter services and publish `/parameter_events`.
    pub parameter_services: crate::params::ParameterServices,
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
    pub(crate) shutdown: Arc<ShutdownSignal>,
    pub(crate) bus: LocalBus,
    pub(crate) parameter_services: crate::params::ParameterServices,
    /// This context's services, for in-process calls.
    pub(crate) services: crate::service::LocalServices,
    next_entity_id: AtomicU64,
    /// Declared last: dropped after the bus, it stops its driver thread.
    network: Option<crate::net::RtpsNetwork>,
}

impl ContextInner {
    pub(crate) fn next_entity_id(&self) -> u64 {
        self.next_entity_id.fetch_add(1, Ordering::Relaxed)
    }

    pub(crate) fn network(&self) -> Option<&crate::net::RtpsNetwork> {
        self.network.as_ref()
    }
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
        let domain_id = match std::env::var("ROS_DOMAIN_ID") {
            Ok(text) if !text.trim().is_empty() => text
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|d| *d <= MAX_DOMAIN_ID)
                .ok_or(InitError::InvalidDomainId(text))?,
            _ => 0,
        };
        let args = RosArgs::parse(std::env::args())?;
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
            parameter_services: crate::params::ParameterServices::from_env(),
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
            crate::log::set_min_severity(level);
        }
        let network = match &options.network {
            NetworkMode::Off => None,
            NetworkMode::Rtps(config) => {
                let mut config = config.clone();
                config.discovery.domain_id = options.domain_id;
                let network = crate::net::RtpsNetwork::start(
                    &config,
                    options.ros_distro,
                    options.local_transports.adjusted_by_env()?,
                    crate::log::Logger::new("roslite.rtps"),
                )
                .map_err(|e| InitError::Network(e.to_string()))?;
                Some(network)
            }
        };
        let context = Self {
            inner: Arc::new(ContextInner {
                domain_id: options.domain_id,
                args: options.args,
                shutdown: ShutdownSignal::new(),
                bus: LocalBus::default(),
                parameter_services: options.parameter_services,
                services: crate::service::LocalServices::default(),
                next_entity_id: AtomicU64::new(1),
                network,
            }),
        };
        if let Some(network) = &context.inner.network {
            context.inner.bus.add_observer(network.transport());
        }
        Ok(context)
    }

    pub fn domain_id(&self) -> u32 {
        self.inner.domain_id
    }

    /// The RTPS network, if this context has one.
    pub fn network(&self) -> Option<&crate::net::RtpsNetwork> {
        self.inner.network.as_ref()
    }

    pub fn args(&self) -> &RosArgs {
        &self.inner.args
    }

    /// A node named `name` in the root namespace (both subject to `__node`/`__ns` remapping).
    ///
    /// # Errors
    /// [`NodeError::Name`] naming the rule a name breaks.
    pub fn create_node(&self, name: &str) -> Result<Node, NodeError> {
        self.create_node_with_namespace(name, "/")
    }

    /// A node in `namespace`; a relative namespace is taken from the root.
    ///
    /// # Errors
    /// [`NodeError::Name`] naming the rule a name breaks.
    pub fn create_node_with_namespace(
        &self,
        name: &str,
        namespace: &str,
    ) -> Result<Node, NodeError> {
        let mut name = name.to_owned();
        let mut namespace = if namespace.is_empty() || namespace.starts_with('/') {
            namespace.to_owned()
        } else {
            format!("/{namespace}")
        };
        if namespace.is_empty() {
            namespace.push('/');
        }
        let original_name = name.clone();
        for rule in &self.inner.args.remaps {
            if rule.node.as_deref().is_some_and(|n| n != original_name) {
                continue;
            }
            match rule.from.as_str() {
                "__node" | "__name" => name = rule.to.clone(),
                "__ns" => namespace = rule.to.clone(),
                _ => {}
            }
        }
        names::validate_node_name(&name)?;
        names::validate_namespace(&namespace)?;
        Node::new(self.clone(), name, namespace)
    }

    /// Registers a transport that carries messages to and from other processes; it is told
    /// about existing endpoints at once and about every later one.
    pub fn add_transport(&self, transport: Arc<dyn crate::transport::Transport>) {
        self.inner.bus.add_observer(transport);
    }

    /// Stops every executor spinning nodes of this context.
    pub fn shutdown(&self) {
        self.inner.shutdown.shutdown();
    }

    /// False once [`Self::shutdown`] was called.
    pub fn ok(&self) -> bool {
        !self.inner.shutdown.is_shutdown()
    }

    pub fn shutdown_signal(&self) -> &Arc<ShutdownSignal> {
        &self.inner.shutdown
    }
}

impl From<NameError> for NodeError {
    fn from(e: NameError) -> Self {
        NodeError::Name(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
