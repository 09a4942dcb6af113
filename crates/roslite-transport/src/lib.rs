//! The UDPv4 transport for RTPS, with ROS 2 discovery-range semantics.
//!
//! Layers, bottom up:
//! - [`ports`]: the RTPS 2.5 §9.6.1.1 default port mapping (pure arithmetic, checked).
//! - [`config`]: `ROS_DOMAIN_ID`, `ROS_AUTOMATIC_DISCOVERY_RANGE`, `ROS_STATIC_PEERS` and the
//!   SPDP destinations they imply (pure, apart from [`DiscoveryConfig::from_env`]).
//! - [`udp`]: [`UdpTransport`], one participant's sockets (metatraffic unicast, user unicast,
//!   SPDP multicast), a `poll` loop with absolute `CLOCK_MONOTONIC` deadlines, and a
//!   [`Waker`].
//! - `netns` (feature `netns`): a test harness that makes throw-away network namespaces, so
//!   tests can use multicast and drop packets without touching the host's networks.
//!
//! Addresses are plain `std::net` types; the runtime converts them to and from RTPS
//! `Locator`s. This crate knows nothing about RTPS messages: it moves datagrams.
//!
//! Linux only.

pub mod config;
pub mod fault;
#[cfg(feature = "netns")]
pub mod netns;
pub mod ports;
pub mod udp;
mod waker;

pub use config::{
    BadPeer, BadPeerReason, ConfigError, DiscoveryConfig, DiscoveryRange, StaticPeer,
    DEFAULT_LOCALHOST_PROBE_COUNT,
};
pub use ports::{
    metatraffic_unicast_port, spdp_multicast_port, user_multicast_port, user_unicast_port,
    PortError, PortKind, MAX_DOMAIN_ID, SPDP_MULTICAST_GROUP,
};
pub use udp::{
    monotonic_ns, BindError, Locators, Received, RecvError, RecvEvent, SendError,
    SocketBufferSizes, SocketKind, TransportConfig, TransportNote, TransportStats, UdpTransport,
    MAX_UDP_PAYLOAD, RECV_BUFFER_LEN, USER_RECV_TIMEOUT,
};
pub use waker::Waker;
