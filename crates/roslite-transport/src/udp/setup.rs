//! Opening a participant's sockets: choosing the interface, claiming a participant id, joining
//! the SPDP group, reading back the granted buffer sizes.

use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};

use socket2::{Domain, Protocol, SockAddr, Socket, Type};

use super::{BindError, SocketBufferSizes, SocketKind, TransportConfig, TransportNote};
use crate::config::{DiscoveryConfig, DiscoveryRange, StaticPeer};
use crate::ports::{self, SPDP_MULTICAST_GROUP};

pub(super) struct UnicastOptions<'a> {
    pub(super) config: &'a TransportConfig,
    pub(super) interface: Ipv4Addr,
    pub(super) uses_multicast: bool,
}

fn socket_error(kind: SocketKind, option: &'static str) -> impl FnOnce(io::Error) -> BindError {
    move |source| BindError::Socket {
        kind,
        option,
        source,
    }
}

/// `result` of setting a multicast `option` that the kernel's defaults can stand in for: refused
/// as unknown (`ENOPROTOOPT`, as qemu-user 7.2 refuses `IP_MULTICAST_IF` and
/// `IP_MULTICAST_ALL`), it becomes a note (once), and the socket goes on without it.
fn optional_multicast_option(
    result: io::Result<()>,
    kind: SocketKind,
    option: &'static str,
    notes: &mut Vec<TransportNote>,
) -> Result<(), BindError> {
    match result {
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::NOPROTOOPT.raw_os_error()) => {
            let noted = notes.iter().any(|n| {
                matches!(n, TransportNote::MulticastOptionUnsupported { option: o } if *o == option)
            });
            if !noted {
                notes.push(TransportNote::MulticastOptionUnsupported { option });
            }
            Ok(())
        }
        other => other.map_err(socket_error(kind, option)),
    }
}

fn new_udp_socket(kind: SocketKind) -> Result<Socket, BindError> {
    // socket2 sets SOCK_CLOEXEC on Linux.
    let socket = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))
        .map_err(socket_error(kind, "socket(AF_INET, SOCK_DGRAM)"))?;
    socket
        .set_nonblocking(true)
        .map_err(socket_error(kind, "O_NONBLOCK"))?;
    Ok(socket)
}

fn unicast_socket(
    kind: SocketKind,
    options: &UnicastOptions<'_>,
    notes: &mut Vec<TransportNote>,
) -> Result<Socket, BindError> {
    let socket = new_udp_socket(kind)?;
    let config = options.config;
    if config.recv_buffer_bytes > 0 {
        socket
            .set_recv_buffer_size(config.recv_buffer_bytes)
            .map_err(socket_error(kind, "SO_RCVBUF"))?;
    }
    if config.send_buffer_bytes > 0 {
        socket
            .set_send_buffer_size(config.send_buffer_bytes)
            .map_err(socket_error(kind, "SO_SNDBUF"))?;
    }
    if options.uses_multicast {
        optional_multicast_option(
            socket.set_multicast_if_v4(&options.interface),
            kind,
            "IP_MULTICAST_IF",
            notes,
        )?;
        socket
            .set_multicast_ttl_v4(1)
            .map_err(socket_error(kind, "IP_MULTICAST_TTL"))?;
        socket
            .set_multicast_loop_v4(true)
            .map_err(socket_error(kind, "IP_MULTICAST_LOOP"))?;
    }
    Ok(socket)
}

/// `Ok(false)`: the port is taken, try the next participant id.
fn try_bind(socket: &Socket, kind: SocketKind, address: SocketAddrV4) -> Result<bool, BindError> {
    match socket.bind(&SockAddr::from(address)) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::AddrInUse => Ok(false),
        Err(source) => Err(BindError::Bind {
            kind,
            address,
            source,
        }),
    }
}

pub(super) fn bind_unicast(
    options: &UnicastOptions<'_>,
    notes: &mut Vec<TransportNote>,
) -> Result<(u32, Socket, Socket), BindError> {
    let config = options.config;
    let domain_id = config.discovery.domain_id;
    let bind_ip = if options.interface.is_loopback() {
        options.interface
    } else {
        Ipv4Addr::UNSPECIFIED
    };
    let fitting = ports::max_participant_id(domain_id).map_or(0, |max| max.saturating_add(1));
    let tried = config.participant_id_limit.min(fitting);
    for participant_id in 0..tried {
        let meta_address = SocketAddrV4::new(
            bind_ip,
            ports::metatraffic_unicast_port(domain_id, participant_id)?,
        );
        let user_address = SocketAddrV4::new(
            bind_ip,
            ports::user_unicast_port(domain_id, participant_id)?,
        );
        let metatraffic = unicast_socket(SocketKind::Metatraffic, options, notes)?;
        if !try_bind(&metatraffic, SocketKind::Metatraffic, meta_address)? {
            continue;
        }
        let user = unicast_socket(SocketKind::User, options, notes)?;
        if !try_bind(&user, SocketKind::User, user_address)? {
            continue;
        }
        return Ok((participant_id, metatraffic, user));
    }
    Err(BindError::NoFreeParticipantId {
        domain_id,
        tried,
        limit: config.participant_id_limit,
    })
}

pub(super) fn open_multicast(
    config: &TransportConfig,
    interface: Ipv4Addr,
    spdp_port: u16,
    notes: &mut Vec<TransportNote>,
) -> Result<Socket, BindError> {
    let kind = SocketKind::Multicast;
    let socket = new_udp_socket(kind)?;
    socket
        .set_reuse_address(true)
        .map_err(socket_error(kind, "SO_REUSEADDR"))?;
    socket
        .set_reuse_port(true)
        .map_err(socket_error(kind, "SO_REUSEPORT"))?;
    // Only datagrams for groups this socket joined, not for every group joined on the host.
    optional_multicast_option(
        socket.set_multicast_all_v4(false),
        kind,
        "IP_MULTICAST_ALL",
        notes,
    )?;
    if config.recv_buffer_bytes > 0 {
        socket
            .set_recv_buffer_size(config.recv_buffer_bytes)
            .map_err(socket_error(kind, "SO_RCVBUF"))?;
    }
    // Bound to the group address: unicast datagrams to port 7400+250d are not ours.
    let address = SocketAddrV4::new(SPDP_MULTICAST_GROUP, spdp_port);
    socket
        .bind(&SockAddr::from(address))
        .map_err(|source| BindError::Bind {
            kind,
            address,
            source,
        })?;
    socket
        .join_multicast_v4(&SPDP_MULTICAST_GROUP, &interface)
        .map_err(|source| BindError::JoinMulticast {
            group: SPDP_MULTICAST_GROUP,
            interface,
            source,
        })?;
    Ok(socket)
}

pub(super) fn buffer_sizes(
    config: &TransportConfig,
    socket: &Socket,
    notes: &mut Vec<TransportNote>,
) -> Result<SocketBufferSizes, BindError> {
    let kind = SocketKind::Metatraffic;
    let recv_granted = socket
        .recv_buffer_size()
        .map_err(socket_error(kind, "SO_RCVBUF"))?;
    let send_granted = socket
        .send_buffer_size()
        .map_err(socket_error(kind, "SO_SNDBUF"))?;
    let sizes = SocketBufferSizes {
        recv_requested: config.recv_buffer_bytes,
        recv_granted,
        send_requested: config.send_buffer_bytes,
        send_granted,
    };
    // socket(7): the kernel doubles the value set, after capping it at rmem_max/wmem_max.
    if recv_granted < sizes.recv_requested.saturating_mul(2) {
        notes.push(TransportNote::RecvBufferCapped {
            requested: sizes.recv_requested,
            granted: recv_granted,
        });
    }
    if send_granted < sizes.send_requested.saturating_mul(2) {
        notes.push(TransportNote::SendBufferCapped {
            requested: sizes.send_requested,
            granted: send_granted,
        });
    }
    Ok(sizes)
}

pub(super) fn choose_interface(
    discovery: &DiscoveryConfig,
    spdp_port: u16,
    notes: &mut Vec<TransportNote>,
) -> Result<Ipv4Addr, BindError> {
    if let Some(interface) = discovery.interface {
        if interface.is_unspecified() || interface.is_multicast() || interface.is_broadcast() {
            return Err(BindError::InvalidConfig {
                reason: format!(
                    "interface {interface} cannot be advertised to peers; give the unicast \
                     address of a local interface (e.g. 127.0.0.1)"
                ),
            });
        }
        return Ok(interface);
    }
    let remote_peer = discovery.static_peers.iter().find_map(|peer| match peer {
        StaticPeer::Ip { addr, port } if !addr.is_loopback() => {
            Some(SocketAddrV4::new(*addr, port.unwrap_or(spdp_port)))
        }
        _ => None,
    });
    let route_to = match discovery.range {
        DiscoveryRange::Subnet | DiscoveryRange::SystemDefault => {
            SocketAddrV4::new(SPDP_MULTICAST_GROUP, spdp_port)
        }
        DiscoveryRange::Localhost | DiscoveryRange::Off => match remote_peer {
            Some(peer) => peer,
            None => return Ok(Ipv4Addr::LOCALHOST),
        },
    };
    match route_source(route_to) {
        Ok(interface) if !interface.is_unspecified() => {
            if !interface.is_loopback() {
                notes.push(TransportNote::InterfaceChosen {
                    interface,
                    route_to,
                });
            }
            Ok(interface)
        }
        Ok(_) => {
            notes.push(TransportNote::InterfaceFallback {
                route_to,
                source: None,
            });
            Ok(Ipv4Addr::LOCALHOST)
        }
        Err(source) => {
            notes.push(TransportNote::InterfaceFallback {
                route_to,
                source: Some(source),
            });
            Ok(Ipv4Addr::LOCALHOST)
        }
    }
}

/// The source address the kernel would use towards `destination`. `connect(2)` on a UDP
/// socket only looks up the route; nothing is sent.
fn route_source(destination: SocketAddrV4) -> io::Result<Ipv4Addr> {
    let socket = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
    socket.connect(&SockAddr::from(destination))?;
    match socket.local_addr()?.as_socket_ipv4() {
        Some(local) => Ok(*local.ip()),
        None => Err(io::Error::other("not an IPv4 socket address")),
    }
}
