//! ROS 2 discovery settings: `ROS_DOMAIN_ID`, `ROS_AUTOMATIC_DISCOVERY_RANGE`, `ROS_STATIC_PEERS`.
//!
//! Semantics follow docs.ros.org "Improved Dynamic Discovery" (Iron and later, see
//! docs/ros2-interop.md §9):
//!
//! | range            | SPDP goes to                                                    |
//! |------------------|-----------------------------------------------------------------|
//! | `SUBNET`         | 239.255.0.1:7400+250d, plus static peers                        |
//! | `SYSTEM_DEFAULT` | the middleware default, which for this transport is `SUBNET`    |
//! | `LOCALHOST`      | unicast to 127.0.0.1 metatraffic ports of ids 0..probe_count, plus static peers |
//! | `OFF`            | static peers only (no multicast socket, no localhost probes)    |
//!
//! Static peers are contacted whatever the range. A peer given without a port is probed on the
//! metatraffic unicast ports of participant ids `0..localhost_probe_count`, as Fast DDS expands
//! an initial peer without a port (docs/ros2-interop.md §9).
//!
//! Parsing ([`DiscoveryConfig::from_vars`]) is pure; only [`DiscoveryConfig::from_env`] reads
//! the process environment and resolves host names.

use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV4};
use std::process::{Command, Stdio};
use std::str::FromStr;

use crate::ports::{self, PortError, MAX_DOMAIN_ID, SPDP_MULTICAST_GROUP};

/// How many participant ids are probed on 127.0.0.1 (and on static peers given without a
/// port). Fast DDS probes a handful of ids, RustDDS 12; ten covers a typical robot's processes
/// on one host.
pub const DEFAULT_LOCALHOST_PROBE_COUNT: u32 = 10;

/// `ROS_AUTOMATIC_DISCOVERY_RANGE`. Values are case-sensitive, as in `rcl`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DiscoveryRange {
    /// `LOCALHOST`: only participants on this host, found by unicast probes to 127.0.0.1.
    Localhost,
    /// `OFF`: no automatic discovery; only static peers.
    Off,
    /// `SUBNET` (the default): SPDP multicast on the chosen interface.
    #[default]
    Subnet,
    /// `SYSTEM_DEFAULT`: the middleware's default, which for this transport is [`Self::Subnet`].
    SystemDefault,
}

impl DiscoveryRange {
    /// The environment-variable spelling.
    pub fn as_env_value(self) -> &'static str {
        match self {
            DiscoveryRange::Localhost => "LOCALHOST",
            DiscoveryRange::Off => "OFF",
            DiscoveryRange::Subnet => "SUBNET",
            DiscoveryRange::SystemDefault => "SYSTEM_DEFAULT",
        }
    }

    /// Whether this range sends and receives SPDP on 239.255.0.1.
    pub fn uses_multicast(self) -> bool {
        matches!(self, DiscoveryRange::Subnet | DiscoveryRange::SystemDefault)
    }

    /// Whether this range probes 127.0.0.1 by unicast.
    pub fn probes_localhost(self) -> bool {
        matches!(self, DiscoveryRange::Localhost)
    }
}

impl fmt::Display for DiscoveryRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_env_value())
    }
}

impl FromStr for DiscoveryRange {
    type Err = ConfigError;

    fn from_str(value: &str) -> Result<Self, ConfigError> {
        match value {
            "LOCALHOST" => Ok(DiscoveryRange::Localhost),
            "OFF" => Ok(DiscoveryRange::Off),
            "SUBNET" => Ok(DiscoveryRange::Subnet),
            "SYSTEM_DEFAULT" => Ok(DiscoveryRange::SystemDefault),
            _ => Err(ConfigError::InvalidDiscoveryRange {
                value: value.to_owned(),
            }),
        }
    }
}

/// One `ROS_STATIC_PEERS` entry.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum StaticPeer {
    /// A host name, not yet resolved; see [`DiscoveryConfig::resolve_static_peers`].
    Host { name: String, port: Option<u16> },
    /// An IPv4 address; without a port, the metatraffic unicast ports of participant ids
    /// `0..localhost_probe_count` are probed.
    Ip { addr: Ipv4Addr, port: Option<u16> },
}

impl fmt::Display for StaticPeer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (host, port) = match self {
            StaticPeer::Host { name, port } => (name.clone(), port),
            StaticPeer::Ip { addr, port } => (addr.to_string(), port),
        };
        match port {
            Some(port) => write!(f, "{host}:{port}"),
            None => f.write_str(&host),
        }
    }
}

/// Why one `ROS_STATIC_PEERS` entry was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadPeerReason {
    /// Looks like an IPv4 address but is not one (e.g. `10.0.0.300`).
    InvalidIpv4,
    /// Neither an address nor a valid host name (RFC 1123 letters, digits, '-' and '.').
    InvalidHostName,
    /// `:port` is not a number in 1..=65535.
    InvalidPort,
    /// IPv6 addresses need a UDPv6 transport, which roslite does not have yet.
    Ipv6Unsupported,
}

impl fmt::Display for BadPeerReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BadPeerReason::InvalidIpv4 => "not a valid IPv4 address",
            BadPeerReason::InvalidHostName => {
                "not an IPv4 address or a host name (letters, digits, '-' and '.')"
            }
            BadPeerReason::InvalidPort => "the port after ':' must be a number in 1..=65535",
            BadPeerReason::Ipv6Unsupported => {
                "IPv6 peers are not supported by the UDPv4 transport; give an IPv4 address"
            }
        })
    }
}

/// A rejected `ROS_STATIC_PEERS` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadPeer {
    pub entry: String,
    pub reason: BadPeerReason,
}

/// Invalid discovery settings.
#[derive(Debug)]
#[non_exhaustive]
pub enum ConfigError {
    /// `ROS_DOMAIN_ID` is not a non-negative integer.
    DomainIdNotANumber { value: String },
    /// `ROS_DOMAIN_ID` is larger than [`MAX_DOMAIN_ID`].
    DomainIdOutOfRange { domain_id: u64 },
    /// `ROS_AUTOMATIC_DISCOVERY_RANGE` is not one of the four values.
    InvalidDiscoveryRange { value: String },
    /// Some `ROS_STATIC_PEERS` entries are invalid; all of them are listed.
    InvalidStaticPeers { bad: Vec<BadPeer> },
    /// A static peer's host name could not be resolved to an IPv4 address.
    UnresolvableStaticPeer { name: String, source: io::Error },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::DomainIdNotANumber { value } => write!(
                f,
                "ROS_DOMAIN_ID={value:?} is not a number; set it to an integer in \
                 0..={MAX_DOMAIN_ID} or unset it for domain 0"
            ),
            ConfigError::DomainIdOutOfRange { domain_id } => write!(
                f,
                "ROS_DOMAIN_ID={domain_id} is out of range: its RTPS ports would exceed 65535; \
                 use 0..={MAX_DOMAIN_ID} (0..=101 avoids Linux's ephemeral ports)"
            ),
            ConfigError::InvalidDiscoveryRange { value } => write!(
                f,
                "ROS_AUTOMATIC_DISCOVERY_RANGE={value:?} is not valid; use SUBNET (the default), \
                 LOCALHOST, OFF or SYSTEM_DEFAULT (upper case), or unset it"
            ),
            ConfigError::InvalidStaticPeers { bad } => {
                f.write_str("ROS_STATIC_PEERS has invalid entries: ")?;
                for (i, peer) in bad.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{:?}: {}", peer.entry, peer.reason)?;
                }
                f.write_str(
                    " (entries are separated by ';' and are IPv4 addresses or host names, each \
                     with an optional :port)",
                )
            }
            ConfigError::UnresolvableStaticPeer { name, source } => write!(
                f,
                "ROS_STATIC_PEERS entry {name:?} could not be resolved to an IPv4 address ({source}); check the name \
                 or give the address instead"
            ),
        }
    }
}

impl std::error::Error for ConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConfigError::UnresolvableStaticPeer { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Where and how a participant looks for others.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiscoveryConfig {
    /// `ROS_DOMAIN_ID`, 0..=232.
    pub domain_id: u32,
    pub range: DiscoveryRange,
    /// `ROS_STATIC_PEERS`, contacted whatever the range.
    pub static_peers: Vec<StaticPeer>,
    /// Participant ids `0..localhost_probe_count` are probed on 127.0.0.1 (range `LOCALHOST`)
    /// and on static peers given without a port.
    pub localhost_probe_count: u32,
    /// The unicast address to bind and advertise. `None`: 127.0.0.1 for `LOCALHOST` (unless a
    /// static peer is remote), otherwise the address the kernel routes SPDP multicast from; see
    /// [`crate::UdpTransport::bind`].
    pub interface: Option<Ipv4Addr>,
}

impl Default for DiscoveryConfig {
    fn default() -> Self {
        DiscoveryConfig {
            domain_id: 0,
            range: DiscoveryRange::default(),
            static_peers: Vec::new(),
            localhost_probe_count: DEFAULT_LOCALHOST_PROBE_COUNT,
            interface: None,
        }
    }
}

impl DiscoveryConfig {
    /// Reads `ROS_DOMAIN_ID`, `ROS_AUTOMATIC_DISCOVERY_RANGE`, `ROS_STATIC_PEERS` (and the
    /// deprecated `ROS_LOCALHOST_ONLY`) from the process environment, then resolves host names
    /// among the static peers (which may query DNS).
    ///
    /// # Errors
    /// See [`Self::from_vars`] and [`Self::resolve_static_peers`].
    pub fn from_env() -> Result<Self, ConfigError> {
        let mut config = Self::from_vars(|name| {
            std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
        })?;
        config.resolve_static_peers()?;
        Ok(config)
    }

    /// Parses the settings from `get(variable_name)`, without touching the process environment
    /// and without resolving host names.
    ///
    /// - `ROS_DOMAIN_ID`: unset or empty means 0; otherwise an integer in 0..=232.
    /// - `ROS_AUTOMATIC_DISCOVERY_RANGE`: unset or empty means `SUBNET`, unless the deprecated
    ///   `ROS_LOCALHOST_ONLY=1` asks for `LOCALHOST` (as `rcl` in Iron/Jazzy does).
    /// - `ROS_STATIC_PEERS`: `;`-separated IPv4 addresses or host names, each with an optional
    ///   `:port`; blanks around entries and empty entries are ignored.
    ///
    /// # Errors
    /// The first invalid variable, with every bad static-peer entry listed.
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let non_empty = |name: &str| get(name).filter(|v| !v.trim().is_empty());
        let domain_id = match non_empty("ROS_DOMAIN_ID") {
            None => 0,
            Some(value) => parse_domain_id(value.trim())?,
        };
        let range = match non_empty("ROS_AUTOMATIC_DISCOVERY_RANGE") {
            Some(value) => value.trim().parse()?,
            None if non_empty("ROS_LOCALHOST_ONLY").is_some_and(|v| v.trim() == "1") => {
                DiscoveryRange::Localhost
            }
            None => DiscoveryRange::default(),
        };
        let static_peers = match get("ROS_STATIC_PEERS") {
            Some(value) => parse_static_peers(&value)?,
            None => Vec::new(),
        };
        Ok(DiscoveryConfig {
            domain_id,
            range,
            static_peers,
            ..DiscoveryConfig::default()
        })
    }

    /// Replaces every [`StaticPeer::Host`] by its IPv4 addresses, as the system's name service
    /// gives them (`getent ahostsv4`, see `resolve_ipv4`; may query DNS).
    ///
    /// # Errors
    /// [`ConfigError::UnresolvableStaticPeer`] for the first name without an IPv4 address.
    pub fn resolve_static_peers(&mut self) -> Result<(), ConfigError> {
        self.resolve_static_peers_with(GETENT)
    }

    /// [`Self::resolve_static_peers`] with another `getent` program (tests).
    fn resolve_static_peers_with(&mut self, getent: &str) -> Result<(), ConfigError> {
        let mut resolved = Vec::with_capacity(self.static_peers.len());
        for peer in self.static_peers.drain(..) {
            match peer {
                StaticPeer::Host { name, port } => {
                    let addrs = resolve_ipv4(getent, &name).map_err(|source| {
                        ConfigError::UnresolvableStaticPeer {
                            name: name.clone(),
                            source,
                        }
                    })?;
                    for addr in addrs {
                        let peer = StaticPeer::Ip { addr, port };
                        if !resolved.contains(&peer) {
                            resolved.push(peer);
                        }
                    }
                }
                ip @ StaticPeer::Ip { .. } => {
                    if !resolved.contains(&ip) {
                        resolved.push(ip);
                    }
                }
            }
        }
        self.static_peers = resolved;
        Ok(())
    }

    /// Where SPDP announcements go, without duplicates, in this order: the multicast group
    /// (`SUBNET`, `SYSTEM_DEFAULT`), the 127.0.0.1 probes (`LOCALHOST`), the static peers.
    /// Unresolved [`StaticPeer::Host`] entries are skipped; probe ids whose ports would exceed
    /// 65535 are left out.
    ///
    /// # Errors
    /// [`PortError`] if `domain_id` is larger than 232.
    pub fn spdp_destinations(&self) -> Result<Vec<SocketAddrV4>, PortError> {
        let domain = self.domain_id;
        let mut out = Vec::new();
        let mut push = |addr: SocketAddrV4| {
            if !out.contains(&addr) {
                out.push(addr);
            }
        };
        let spdp_port = ports::spdp_multicast_port(domain)?;
        if self.range.uses_multicast() {
            push(SocketAddrV4::new(SPDP_MULTICAST_GROUP, spdp_port));
        }
        let probe = |ip: Ipv4Addr, push: &mut dyn FnMut(SocketAddrV4)| {
            for pid in 0..self.localhost_probe_count {
                match ports::metatraffic_unicast_port(domain, pid) {
                    Ok(port) => push(SocketAddrV4::new(ip, port)),
                    Err(_) => break,
                }
            }
        };
        if self.range.probes_localhost() {
            probe(Ipv4Addr::LOCALHOST, &mut push);
        }
        for peer in &self.static_peers {
            match peer {
                StaticPeer::Ip {
                    addr,
                    port: Some(port),
                } => push(SocketAddrV4::new(*addr, *port)),
                StaticPeer::Ip { addr, port: None } => probe(*addr, &mut push),
                StaticPeer::Host { .. } => {}
            }
        }
        Ok(out)
    }
}

fn parse_domain_id(value: &str) -> Result<u32, ConfigError> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ConfigError::DomainIdNotANumber {
            value: value.to_owned(),
        });
    }
    // All digits: only overflow can fail, which is out of range as well.
    let domain_id = value.parse::<u64>().unwrap_or(u64::MAX);
    match u32::try_from(domain_id) {
        Ok(d) if d <= MAX_DOMAIN_ID => Ok(d),
        _ => Err(ConfigError::DomainIdOutOfRange { domain_id }),
    }
}

/// Parses `ROS_STATIC_PEERS`; reports every bad entry at once.
///
/// # Errors
/// [`ConfigError::InvalidStaticPeers`] listing every rejected entry.
pub fn parse_static_peers(value: &str) -> Result<Vec<StaticPeer>, ConfigError> {
    let mut peers = Vec::new();
    let mut bad = Vec::new();
    for entry in value.split(';').map(str::trim).filter(|e| !e.is_empty()) {
        match parse_static_peer(entry) {
            Ok(peer) => {
                if !peers.contains(&peer) {
                    peers.push(peer);
                }
            }
            Err(reason) => bad.push(BadPeer {
                entry: entry.to_owned(),
                reason,
            }),
        }
    }
    if bad.is_empty() {
        Ok(peers)
    } else {
        Err(ConfigError::InvalidStaticPeers { bad })
    }
}

fn parse_static_peer(entry: &str) -> Result<StaticPeer, BadPeerReason> {
    if let Ok(addr) = entry.parse::<Ipv4Addr>() {
        return Ok(StaticPeer::Ip { addr, port: None });
    }
    if let Ok(addr) = entry.parse::<SocketAddrV4>() {
        if addr.port() == 0 {
            return Err(BadPeerReason::InvalidPort);
        }
        return Ok(StaticPeer::Ip {
            addr: *addr.ip(),
            port: Some(addr.port()),
        });
    }
    if entry.parse::<IpAddr>().is_ok() || entry.parse::<SocketAddr>().is_ok() {
        return Err(BadPeerReason::Ipv6Unsupported);
    }
    if entry.contains("::") || entry.starts_with('[') {
        return Err(BadPeerReason::Ipv6Unsupported);
    }
    let (host, port) = match entry.rsplit_once(':') {
        Some((host, port)) => match port.parse::<u16>() {
            Ok(p) if p != 0 => (host, Some(p)),
            _ => return Err(BadPeerReason::InvalidPort),
        },
        None => (entry, None),
    };
    if let Ok(addr) = host.parse::<Ipv4Addr>() {
        return Ok(StaticPeer::Ip { addr, port });
    }
    validate_host_name(host)?;
    Ok(StaticPeer::Host {
        name: host.to_owned(),
        port,
    })
}

fn validate_host_name(host: &str) -> Result<(), BadPeerReason> {
    let host = host.strip_suffix('.').unwrap_or(host);
    if host.is_empty() || host.len() > 253 {
        return Err(BadPeerReason::InvalidHostName);
    }
    let labels: Vec<&str> = host.split('.').collect();
    for label in &labels {
        let ok = !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if !ok {
            return Err(BadPeerReason::InvalidHostName);
        }
    }
    // RFC 1123 §2.1: a name whose last label is all digits would be read as an address.
    if labels
        .last()
        .is_some_and(|l| l.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(BadPeerReason::InvalidIpv4);
    }
    Ok(())
}

/// The program that resolves host names for [`resolve_ipv4`].
const GETENT: &str = "getent";

/// The IPv4 addresses of host `name`, in the order the system's name service gives them,
/// without duplicates, from `getent ahostsv4 NAME` (glibc's and musl's `getent`; the same
/// lookup as `getaddrinfo` with `AF_INET`, through the system's own configuration: files, DNS,
/// mDNS).
///
/// Why a program and not `getaddrinfo` in this process: a node for a small board is linked
/// statically (docs/footprint.md). Against glibc, `getaddrinfo` brings glibc's name service
/// switch, DNS resolver and dynamic loader into every node, 131 KB of code that costs
/// resident memory in every process whether a name is ever looked up or not, and that at run
/// time needs the shared NSS modules of the very glibc it was linked with anyway; against musl
/// it reads only /etc/hosts and DNS, so names the system resolves otherwise (mDNS's `.local`)
/// would fail in a node and work in `ping`. `getent` resolves as the system does, for every
/// build, at the cost of about 47 KB of code (`std::process`) and a process start, only when
/// `ROS_STATIC_PEERS` names a host.
///
/// # Errors
/// `NotFound` when the name has no IPv4 address or `getent` is not installed (each message
/// says which and how to go on); another kind when `getent` fails otherwise.
fn resolve_ipv4(getent: &str, name: &str) -> io::Result<Vec<Ipv4Addr>> {
    let output = Command::new(getent)
        .args(["ahostsv4", "--", name])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| {
            if e.kind() == io::ErrorKind::NotFound {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!(
                        "`{getent}` was not found, which looks host names up (Debian package \
                         libc-bin)"
                    ),
                )
            } else {
                io::Error::new(e.kind(), format!("`{getent}` could not run: {e}"))
            }
        })?;
    let text = String::from_utf8_lossy(&output.stdout);
    let mut addrs: Vec<Ipv4Addr> = Vec::new();
    for addr in text
        .lines()
        .filter_map(|line| line.split_whitespace().next()?.parse().ok())
    {
        if !addrs.contains(&addr) {
            addrs.push(addr);
        }
    }
    // getent exits with 2 for a key it does not find (getent(1)).
    if addrs.is_empty() && (output.status.success() || output.status.code() == Some(2)) {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            "the name service knows no IPv4 address for it",
        ));
    }
    if addrs.is_empty() {
        return Err(io::Error::other(format!(
            "`{getent} ahostsv4` failed ({})",
            output.status
        )));
    }
    Ok(addrs)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| map.get(name).cloned()
    }

    fn parse(pairs: &[(&str, &str)]) -> Result<DiscoveryConfig, ConfigError> {
        DiscoveryConfig::from_vars(vars(pairs))
    }

    fn lo(port: u16) -> SocketAddrV4 {
        SocketAddrV4::new(Ipv4Addr::LOCALHOST, port)
    }

    #[test]
    fn defaults_when_nothing_is_set() {
        let c = parse(&[]).unwrap();
        assert_eq!(c, DiscoveryConfig::default());
        assert_eq!(c.domain_id, 0);
        assert_eq!(c.range, DiscoveryRange::Subnet);
        assert_eq!(c.localhost_probe_count, DEFAULT_LOCALHOST_PROBE_COUNT);
        assert_eq!(
            c.spdp_destinations().unwrap(),
            vec![SocketAddrV4::new(SPDP_MULTICAST_GROUP, 7400)]
        );
        // Empty values mean "unset", as in rcl.
        let c = parse(&[
            ("ROS_DOMAIN_ID", ""),
            ("ROS_AUTOMATIC_DISCOVERY_RANGE", ""),
            ("ROS_STATIC_PEERS", ""),
        ])
        .unwrap();
        assert_eq!(c, DiscoveryConfig::default());
    }

    #[test]
    fn domain_id() {
        assert_eq!(parse(&[("ROS_DOMAIN_ID", "42")]).unwrap().domain_id, 42);
        assert_eq!(parse(&[("ROS_DOMAIN_ID", " 7 ")]).unwrap().domain_id, 7);
        assert_eq!(parse(&[("ROS_DOMAIN_ID", "232")]).unwrap().domain_id, 232);
        let err = parse(&[("ROS_DOMAIN_ID", "233")]).unwrap_err();
        assert!(
            matches!(err, ConfigError::DomainIdOutOfRange { domain_id: 233 }),
            "{err:?}"
        );
        assert!(err.to_string().contains("use 0..=232"), "{err}");
        let err = parse(&[("ROS_DOMAIN_ID", "99999999999999999999999")]).unwrap_err();
        assert!(
            matches!(err, ConfigError::DomainIdOutOfRange { .. }),
            "{err:?}"
        );
        for bad in ["-1", "one", "1.5", "0x10"] {
            let err = parse(&[("ROS_DOMAIN_ID", bad)]).unwrap_err();
            assert!(
                matches!(err, ConfigError::DomainIdNotANumber { .. }),
                "{bad}: {err:?}"
            );
            assert!(err.to_string().contains("is not a number"), "{err}");
        }
    }

    #[test]
    fn localhost_probes_127_0_0_1() {
        let c = parse(&[
            ("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST"),
            ("ROS_DOMAIN_ID", "1"),
        ])
        .unwrap();
        assert_eq!(c.range, DiscoveryRange::Localhost);
        let dests = c.spdp_destinations().unwrap();
        let expected: Vec<_> = (0..10).map(|pid| lo(7660 + 2 * pid)).collect();
        assert_eq!(dests, expected);
    }

    #[test]
    fn deprecated_localhost_only() {
        let c = parse(&[("ROS_LOCALHOST_ONLY", "1")]).unwrap();
        assert_eq!(c.range, DiscoveryRange::Localhost);
        // The new variable wins.
        let c = parse(&[
            ("ROS_LOCALHOST_ONLY", "1"),
            ("ROS_AUTOMATIC_DISCOVERY_RANGE", "SUBNET"),
        ])
        .unwrap();
        assert_eq!(c.range, DiscoveryRange::Subnet);
        let c = parse(&[("ROS_LOCALHOST_ONLY", "0")]).unwrap();
        assert_eq!(c.range, DiscoveryRange::Subnet);
    }

    #[test]
    fn off_contacts_only_static_peers() {
        let c = parse(&[("ROS_AUTOMATIC_DISCOVERY_RANGE", "OFF")]).unwrap();
        assert_eq!(c.range, DiscoveryRange::Off);
        assert!(c.spdp_destinations().unwrap().is_empty());
        let c = parse(&[
            ("ROS_AUTOMATIC_DISCOVERY_RANGE", "OFF"),
            ("ROS_STATIC_PEERS", "192.0.2.7:7410"),
        ])
        .unwrap();
        assert_eq!(
            c.spdp_destinations().unwrap(),
            vec![SocketAddrV4::new(Ipv4Addr::new(192, 0, 2, 7), 7410)]
        );
    }

    #[test]
    fn system_default_behaves_like_subnet() {
        let c = parse(&[("ROS_AUTOMATIC_DISCOVERY_RANGE", "SYSTEM_DEFAULT")]).unwrap();
        assert_eq!(c.range, DiscoveryRange::SystemDefault);
        assert!(c.range.uses_multicast());
        assert_eq!(
            c.spdp_destinations().unwrap(),
            vec![SocketAddrV4::new(SPDP_MULTICAST_GROUP, 7400)]
        );
    }

    #[test]
    fn invalid_range_names_the_valid_values() {
        for bad in ["localhost", "LAN", "SUBNET "] {
            let result = parse(&[("ROS_AUTOMATIC_DISCOVERY_RANGE", bad)]);
            if bad == "SUBNET " {
                // Surrounding blanks are trimmed.
                assert_eq!(result.unwrap().range, DiscoveryRange::Subnet);
                continue;
            }
            let err = result.unwrap_err();
            assert!(
                matches!(err, ConfigError::InvalidDiscoveryRange { .. }),
                "{err:?}"
            );
            assert_eq!(
                err.to_string(),
                format!(
                    "ROS_AUTOMATIC_DISCOVERY_RANGE={bad:?} is not valid; use SUBNET (the \
                     default), LOCALHOST, OFF or SYSTEM_DEFAULT (upper case), or unset it"
                )
            );
        }
    }

    #[test]
    fn static_peers_are_parsed_and_contacted_in_every_range() {
        let c = parse(&[
            ("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST"),
            (
                "ROS_STATIC_PEERS",
                " 192.0.2.1 ; robot-2.local:7420;;127.0.0.1;192.0.2.1",
            ),
        ])
        .unwrap();
        assert_eq!(
            c.static_peers,
            vec![
                StaticPeer::Ip {
                    addr: Ipv4Addr::new(192, 0, 2, 1),
                    port: None
                },
                StaticPeer::Host {
                    name: "robot-2.local".into(),
                    port: Some(7420)
                },
                StaticPeer::Ip {
                    addr: Ipv4Addr::LOCALHOST,
                    port: None
                },
            ]
        );
        let dests = c.spdp_destinations().unwrap();
        // 10 localhost probes, then 10 probes of 192.0.2.1; 127.0.0.1 is not repeated and the
        // unresolved host name is skipped.
        assert_eq!(dests.len(), 20);
        assert_eq!(dests[0], lo(7410));
        assert_eq!(
            dests[10],
            SocketAddrV4::new(Ipv4Addr::new(192, 0, 2, 1), 7410)
        );
        assert_eq!(
            dests[19],
            SocketAddrV4::new(Ipv4Addr::new(192, 0, 2, 1), 7428)
        );

        for range in ["SUBNET", "SYSTEM_DEFAULT", "OFF"] {
            let c = parse(&[
                ("ROS_AUTOMATIC_DISCOVERY_RANGE", range),
                ("ROS_STATIC_PEERS", "192.0.2.9:7777"),
            ])
            .unwrap();
            assert!(
                c.spdp_destinations()
                    .unwrap()
                    .contains(&SocketAddrV4::new(Ipv4Addr::new(192, 0, 2, 9), 7777)),
                "{range}"
            );
        }
    }

    #[test]
    fn every_bad_static_peer_is_reported() {
        let err = parse(&[(
            "ROS_STATIC_PEERS",
            "192.0.2.1;10.0.0.300;::1;host_with_underscore;good-host;1.2.3.4:0;h:99999;[::1]:7410",
        )])
        .unwrap_err();
        let ConfigError::InvalidStaticPeers { bad } = &err else {
            panic!("{err:?}")
        };
        let got: Vec<(&str, BadPeerReason)> =
            bad.iter().map(|b| (b.entry.as_str(), b.reason)).collect();
        assert_eq!(
            got,
            vec![
                ("10.0.0.300", BadPeerReason::InvalidIpv4),
                ("::1", BadPeerReason::Ipv6Unsupported),
                ("host_with_underscore", BadPeerReason::InvalidHostName),
                ("1.2.3.4:0", BadPeerReason::InvalidPort),
                ("h:99999", BadPeerReason::InvalidPort),
                ("[::1]:7410", BadPeerReason::Ipv6Unsupported),
            ]
        );
        let text = err.to_string();
        assert!(
            text.starts_with(
                "ROS_STATIC_PEERS has invalid entries: \"10.0.0.300\": not a valid IPv4 address; "
            ),
            "{text}"
        );
        assert!(text.contains("\"host_with_underscore\": not an IPv4 address or a host name"));
    }

    /// `peers` after [`DiscoveryConfig::resolve_static_peers_with`] and `getent`.
    fn resolved(peers: Vec<StaticPeer>, getent: &str) -> Vec<StaticPeer> {
        let mut c = DiscoveryConfig {
            static_peers: peers,
            ..DiscoveryConfig::default()
        };
        c.resolve_static_peers_with(getent).unwrap();
        c.static_peers
    }

    const LOCAL_PEER: StaticPeer = StaticPeer::Ip {
        addr: Ipv4Addr::LOCALHOST,
        port: Some(7410),
    };

    #[test]
    fn resolving_keeps_addresses_and_needs_no_lookup_for_them() {
        // No resolver at all: an address needs none.
        assert_eq!(
            resolved(vec![LOCAL_PEER], "/nonexistent/getent"),
            vec![LOCAL_PEER]
        );
    }

    #[test]
    fn a_host_name_resolves_through_the_name_service() {
        let localhost = StaticPeer::Host {
            name: "localhost".into(),
            port: Some(7410),
        };
        // /etc/hosts gives localhost 127.0.0.1; the same peer given as an address is kept once.
        assert_eq!(
            resolved(vec![localhost, LOCAL_PEER], GETENT),
            vec![LOCAL_PEER]
        );
    }

    #[test]
    fn a_missing_resolver_is_named_in_the_error() {
        let mut c = DiscoveryConfig {
            static_peers: vec![StaticPeer::Host {
                name: "robot".into(),
                port: None,
            }],
            ..DiscoveryConfig::default()
        };
        let err = c
            .resolve_static_peers_with("/nonexistent/getent")
            .unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with(
                "ROS_STATIC_PEERS entry \"robot\" could not be resolved to an IPv4 address \
                 (`/nonexistent/getent` was not found"
            ),
            "{text}"
        );
        assert!(text.ends_with("give the address instead"), "{text}");
    }

    #[test]
    fn a_name_without_an_address_is_an_error_and_a_failing_resolver_too() {
        // `true` prints nothing and succeeds: no address. `false` fails with status 1.
        let err = resolve_ipv4("true", "robot").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert!(err.to_string().contains("no IPv4 address"), "{err}");
        let err = resolve_ipv4("false", "robot").unwrap_err();
        assert!(err.to_string().contains("failed"), "{err}");
    }

    #[test]
    fn probes_stop_at_the_last_port_that_fits() {
        let c = DiscoveryConfig {
            domain_id: 232,
            range: DiscoveryRange::Localhost,
            localhost_probe_count: 100,
            ..DiscoveryConfig::default()
        };
        let dests = c.spdp_destinations().unwrap();
        assert_eq!(dests.len(), 63);
        assert_eq!(dests.last(), Some(&lo(65534)));
        let c = DiscoveryConfig {
            domain_id: 233,
            ..DiscoveryConfig::default()
        };
        assert!(c.spdp_destinations().is_err());
    }
}
