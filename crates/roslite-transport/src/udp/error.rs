//! What [`UdpTransport`](super::UdpTransport) reports: per-operation errors ([`BindError`], [`SendError`],
//! [`RecvError`]) and non-fatal [`TransportNote`]s from binding.

use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};

use rustix::io::Errno;

use super::{SocketKind, MAX_UDP_PAYLOAD};
use crate::config::DiscoveryRange;
use crate::ports::{self, PortError};

/// Something the caller may want to log after [`UdpTransport::bind`](super::UdpTransport::bind); never fatal.
#[derive(Debug)]
#[non_exhaustive]
pub enum TransportNote {
    /// No interface was configured; the unicast address was taken from the kernel's route to
    /// `route_to` (no packet is sent to find it).
    InterfaceChosen {
        interface: Ipv4Addr,
        route_to: SocketAddrV4,
    },
    /// The kernel has no route to `route_to` (`source` says why), or the route has no source
    /// address (`source` is `None`; e.g. a route through `lo` without `src 127.0.0.1`);
    /// 127.0.0.1 is used, so only peers on this host can reach this participant.
    InterfaceFallback {
        route_to: SocketAddrV4,
        source: Option<io::Error>,
    },
    /// The kernel capped `SO_RCVBUF` (`net.core.rmem_max`).
    RecvBufferCapped { requested: usize, granted: usize },
    /// The kernel capped `SO_SNDBUF` (`net.core.wmem_max`).
    SendBufferCapped { requested: usize, granted: usize },
    /// A multicast socket option (`IP_MULTICAST_IF`, `IP_MULTICAST_ALL`) was refused as
    /// unknown (`ENOPROTOOPT`), as qemu-user 7.2 (Debian bookworm's) refuses them for the
    /// program it emulates; the sockets work without it, with the kernel's defaults: multicast
    /// leaves by the route to 224.0.0.0/4, and the SPDP socket also hears groups other sockets
    /// joined.
    MulticastOptionUnsupported { option: &'static str },
}

impl fmt::Display for TransportNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransportNote::InterfaceChosen {
                interface,
                route_to,
            } => write!(
                f,
                "advertising {interface}, the address the kernel uses to reach {route_to}; set \
                 the transport interface to choose another"
            ),
            TransportNote::InterfaceFallback { route_to, source } => {
                match source {
                    Some(e) => write!(f, "no route to {route_to} ({e})")?,
                    None => write!(f, "the route to {route_to} has no source address")?,
                }
                write!(
                    f,
                    "; advertising 127.0.0.1, so only participants on this host can reach this \
                     one; connect a network or set ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST"
                )
            }
            TransportNote::RecvBufferCapped { requested, granted } => write!(
                f,
                "receive buffer capped by the kernel: requested {requested} bytes, got \
                 {granted} (as reported, i.e. doubled); raise it with `sysctl -w \
                 net.core.rmem_max={requested}` to avoid drops in bursts"
            ),
            TransportNote::SendBufferCapped { requested, granted } => write!(
                f,
                "send buffer capped by the kernel: requested {requested} bytes, got {granted} \
                 (as reported, i.e. doubled); raise it with `sysctl -w \
                 net.core.wmem_max={requested}`"
            ),
            TransportNote::MulticastOptionUnsupported { option } => write!(
                f,
                "the socket option {option} is not supported here (ENOPROTOOPT; qemu-user \
                 7.2 does not emulate it); going on with the kernel's default"
            ),
        }
    }
}

/// [`UdpTransport::bind`](super::UdpTransport::bind) failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum BindError {
    /// A socket `option` (or `socket(2)` itself) failed.
    Socket {
        kind: SocketKind,
        option: &'static str,
        source: io::Error,
    },
    /// `bind(2)` failed for a reason other than a port in use by another participant.
    Bind {
        kind: SocketKind,
        address: SocketAddrV4,
        source: io::Error,
    },
    /// The configuration cannot work; `reason` says why and what to change.
    InvalidConfig { reason: String },
    /// `IP_ADD_MEMBERSHIP` failed.
    JoinMulticast {
        group: Ipv4Addr,
        interface: Ipv4Addr,
        source: io::Error,
    },
    /// Every participant id in `0..tried` has its ports taken.
    NoFreeParticipantId {
        domain_id: u32,
        tried: u32,
        /// The configured limit; larger than `tried` when higher ids would exceed port 65535.
        limit: u32,
    },
    /// The domain's ports do not fit in 16 bits.
    Port(PortError),
    /// The waker's eventfd could not be created.
    Waker { source: io::Error },
    /// The epoll instance watching the sockets could not be created or filled.
    Epoll { source: io::Error },
}

impl fmt::Display for BindError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BindError::Socket {
                kind,
                option,
                source,
            } => {
                write!(f, "cannot set {option} on the {kind} socket: {source}")?;
                if source.raw_os_error() == Some(Errno::NOBUFS.raw_os_error())
                    || source.raw_os_error() == Some(Errno::MFILE.raw_os_error())
                {
                    f.write_str("; close some sockets or raise the open-file limit (ulimit -n)")?;
                }
                Ok(())
            }
            BindError::Bind {
                kind,
                address,
                source,
            } => {
                write!(f, "cannot bind the {kind} socket to {address}: {source}")?;
                match source.kind() {
                    io::ErrorKind::AddrNotAvailable => write!(
                        f,
                        "; {} is not an address of this host (see `ip -4 addr`): configure \
                         another interface",
                        address.ip()
                    ),
                    io::ErrorKind::AddrInUse => write!(
                        f,
                        "; another program holds port {} without SO_REUSEADDR: stop it or use \
                         ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST",
                        address.port()
                    ),
                    io::ErrorKind::PermissionDenied => {
                        f.write_str("; a security policy forbids this port: use another domain")
                    }
                    _ => Ok(()),
                }
            }
            BindError::InvalidConfig { reason } => {
                write!(f, "invalid transport configuration: {reason}")
            }
            BindError::JoinMulticast {
                group,
                interface,
                source,
            } => write!(
                f,
                "cannot join multicast group {group} on interface {interface}: {source}; make \
                 sure the interface is up with multicast enabled (`ip link set DEV multicast \
                 on`) or use ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST"
            ),
            BindError::NoFreeParticipantId {
                domain_id,
                tried,
                limit,
            } => {
                // Ports of the ids tried, end exclusive; both exist because ids 0..tried fit.
                let first = ports::metatraffic_unicast_port(*domain_id, 0).unwrap_or(0);
                let end = u32::from(first) + 2 * tried;
                write!(
                    f,
                    "all participant ids 0..{tried} for domain {domain_id} are in use (ports \
                     {first}..{end}); set ROS_DOMAIN_ID to another domain or stop other \
                     participants"
                )?;
                if tried < limit {
                    write!(f, " (ids from {tried} on would need ports above 65535)")
                } else {
                    f.write_str(", or raise TransportConfig::participant_id_limit")
                }
            }
            BindError::Port(e) => e.fmt(f),
            BindError::Epoll { source } => write!(
                f,
                "cannot create the epoll instance that waits for the sockets: {source}; raise \
                 the open-file limit (ulimit -n) or the epoll limits (/proc/sys/fs/epoll)"
            ),
            BindError::Waker { source } => write!(
                f,
                "cannot create the waker's eventfd: {source}; raise the open-file limit \
                 (ulimit -n)"
            ),
        }
    }
}

impl std::error::Error for BindError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BindError::Socket { source, .. }
            | BindError::Bind { source, .. }
            | BindError::JoinMulticast { source, .. }
            | BindError::Waker { source }
            | BindError::Epoll { source } => Some(source),
            BindError::Port(e) => Some(e),
            BindError::InvalidConfig { .. } | BindError::NoFreeParticipantId { .. } => None,
        }
    }
}

impl From<PortError> for BindError {
    fn from(e: PortError) -> Self {
        BindError::Port(e)
    }
}

/// [`UdpTransport::send`](super::UdpTransport::send) failed. Every variant is also counted in
/// [`TransportStats::send_errors`](super::TransportStats::send_errors).
#[derive(Debug)]
#[non_exhaustive]
pub enum SendError {
    /// `destination` is 0.0.0.0 or port 0.
    InvalidDestination { destination: SocketAddrV4 },
    /// The socket refused the datagram (unreachable network, no route, ...).
    Io {
        destination: SocketAddrV4,
        source: io::Error,
    },
    /// A multicast destination while the discovery range does not use multicast.
    MulticastDisabled {
        destination: SocketAddrV4,
        range: DiscoveryRange,
    },
    /// Larger than [`MAX_UDP_PAYLOAD`]; fragment at the RTPS level (DATA_FRAG).
    TooLarge { len: usize },
    /// The socket's send buffer is full; the datagram was not sent.
    WouldBlock { destination: SocketAddrV4 },
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SendError::InvalidDestination { destination } => write!(
                f,
                "cannot send to {destination}: not a usable destination (unspecified address or \
                 port 0); check the peer's advertised locators"
            ),
            SendError::Io {
                destination,
                source,
            } => {
                write!(f, "cannot send to {destination}: {source}")
            }
            SendError::MulticastDisabled { destination, range } => write!(
                f,
                "cannot send to multicast {destination}: ROS_AUTOMATIC_DISCOVERY_RANGE={range} \
                 does not use multicast; send to the peer's unicast locators instead"
            ),
            SendError::TooLarge { len } => write!(
                f,
                "a {len}-byte datagram exceeds the UDPv4 maximum of {MAX_UDP_PAYLOAD} bytes; \
                 fragment the sample (DATA_FRAG)"
            ),
            SendError::WouldBlock { destination } => write!(
                f,
                "send buffer full, datagram to {destination} dropped; retry later or raise \
                 TransportConfig::send_buffer_bytes"
            ),
        }
    }
}

impl std::error::Error for SendError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SendError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// [`UdpTransport::recv`](super::UdpTransport::recv) failed; transient per-datagram errors are counted instead.
#[derive(Debug)]
#[non_exhaustive]
pub enum RecvError {
    /// `poll(2)` failed.
    Poll { source: io::Error },
    /// `recvfrom(2)` failed on the socket of `kind`.
    Recv { kind: SocketKind, source: io::Error },
}

impl fmt::Display for RecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecvError::Poll { source } => write!(f, "waiting for datagrams failed: {source}"),
            RecvError::Recv { kind, source } => {
                write!(f, "receiving on the {kind} socket failed: {source}")
            }
        }
    }
}

impl std::error::Error for RecvError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RecvError::Poll { source } | RecvError::Recv { source, .. } => Some(source),
        }
    }
}
