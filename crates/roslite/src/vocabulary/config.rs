//! How a context is configured: `--ros-args`, the ROS distribution whose conventions to
//! follow, the network mode and the same-host transports offered, and what goes wrong in
//! reading them.

use std::fmt;
use std::time::Duration;

use crate::vocabulary::log::Severity;
use crate::vocabulary::names::RemapRule;

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
    /// `ROSLITE_KEEP_ALL_MAX_BYTES` is not a byte count (with an optional K, M or G).
    InvalidKeepAllMaxBytes(String),
    /// `ROSLITE_BATCH_WINDOW_US` is not a whole number of microseconds up to the maximum.
    InvalidBatchWindow(String),
    /// A cap of the network (`ROSLITE_MAX_*`, `ROSLITE_REASSEMBLY_MAX_BYTES*`;
    /// [`crate::limits`]) is not a count (with an optional K, M or G).
    InvalidLimit {
        variable: &'static str,
        value: String,
    },
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
            Self::InvalidKeepAllMaxBytes(value) => write!(
                f,
                "ROSLITE_KEEP_ALL_MAX_BYTES='{value}' is invalid: use a byte count from 1 to \
                 1 TiB, optionally with the suffix K, M or G (e.g. 256M), or unset it for 64M"
            ),
            Self::InvalidBatchWindow(value) => write!(
                f,
                "{BATCH_WINDOW_ENV}='{value}' is invalid: use whole microseconds from 0 (every \
                 sample sent at once) to {MAX_BATCH_WINDOW_US}, or unset it for the default of \
                 {}",
                roslite_rtps::participant::WriterDefaults::default()
                    .batch_window
                    .as_micros()
            ),
            Self::InvalidLimit { variable, value } => write!(
                f,
                "{variable}='{value}' is invalid: use a count from 1 to 1 Ti, optionally with \
                 the suffix K, M or G (e.g. 512 or 64K), or unset it for the default"
            ),
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
    /// ([`roslite_shm::IdleSpin`]), and a shared-memory keep-all writer that found a reader
    /// without room before it sleeps (`roslite_shm::WriterConfig::room_spin`); zero: each
    /// sleeps at once. Default 20 us. `ROSLITE_RECEIVE_SPIN_US` overrides it.
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

/// The environment variable that sets how long, after a UDP publisher sent samples, the
/// samples it writes next wait for more to share their datagram (whole microseconds; 0 sends
/// every sample at once). A lone sample, and one written right after input arrived (a reply),
/// never wait. Default 50 (docs/scale.md, "Throughput"). A malformed value fails context
/// creation.
pub const BATCH_WINDOW_ENV: &str = "ROSLITE_BATCH_WINDOW_US";

/// The largest [`BATCH_WINDOW_ENV`] accepted, in microseconds (100 ms).
pub const MAX_BATCH_WINDOW_US: u64 = 100_000;

/// Parses the [`BATCH_WINDOW_ENV`] syntax.
///
/// # Errors
/// [`InitError::InvalidBatchWindow`], which says what is accepted.
pub fn parse_batch_window(text: &str) -> Result<Duration, InitError> {
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|us| *us <= MAX_BATCH_WINDOW_US)
        .map(Duration::from_micros)
        .ok_or_else(|| InitError::InvalidBatchWindow(text.to_string()))
}

/// The batch window [`BATCH_WINDOW_ENV`] sets, if set.
///
/// # Errors
/// As [`parse_batch_window`].
pub fn batch_window_from_env() -> Result<Option<Duration>, InitError> {
    match std::env::var(BATCH_WINDOW_ENV) {
        Ok(text) if !text.trim().is_empty() => parse_batch_window(&text).map(Some),
        _ => Ok(None),
    }
}

/// Whether nodes serve the six parameter services and publish `/parameter_events` (rclcpp's
/// `start_parameter_services` and `start_parameter_event_publisher`, on by default). Each node
/// with services adds 12 RTPS endpoints and a `/parameter_events` writer; a tiny node that no
/// tool needs to configure can do without them.
///
/// The same holds for the node's other tool-facing service, `~/get_type_description`: when
/// these are disabled, the node's `start_type_description_service` parameter defaults to false
/// (2 RTPS endpoints fewer), and `-p start_type_description_service:=true` still starts it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ParameterServices {
    #[default]
    Enabled,
    /// Parameters still work through the `Node` methods; tools cannot see them.
    Disabled,
}

impl ParameterServices {
    /// Environment variable that disables them for contexts made by `Context::from_env`
    /// (`off`, `0` or `false`).
    pub const ENV: &'static str = "ROSLITE_PARAMETER_SERVICES";

    /// From [`Self::ENV`]: disabled for `off`, `0` or `false`, else enabled.
    pub fn from_env() -> Self {
        match std::env::var(Self::ENV).as_deref().map(str::trim) {
            Ok("off" | "0" | "false") => Self::Disabled,
            _ => Self::Enabled,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_window_takes_whole_microseconds_up_to_the_maximum() {
        assert_eq!(parse_batch_window(" 50 "), Ok(Duration::from_micros(50)));
        assert_eq!(parse_batch_window("0"), Ok(Duration::ZERO));
        assert_eq!(parse_batch_window("100000"), Ok(Duration::from_millis(100)));
        for bad in ["100001", "-1", "5us", "1.5", ""] {
            let e = parse_batch_window(bad).unwrap_err();
            assert_eq!(e, InitError::InvalidBatchWindow(bad.to_string()));
            assert!(e.to_string().contains("ROSLITE_BATCH_WINDOW_US"), "{e}");
        }
    }
}
