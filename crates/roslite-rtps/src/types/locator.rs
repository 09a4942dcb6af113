//! `Locator_t`: where to send to (RTPS 2.5 §8.3.2, §9.3.2).

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

use roslite_cdr::Endianness;

use crate::bytes::{put_i32, put_u32, Reader};
use crate::error::ParseError;

/// The transport a locator belongs to. Unknown kinds are preserved, never rejected: peers
/// advertise transports we do not speak (Fast DDS shared memory) next to UDP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocatorKind(pub i32);

impl LocatorKind {
    pub const INVALID: LocatorKind = LocatorKind(-1);
    pub const RESERVED: LocatorKind = LocatorKind(0);
    pub const UDPV4: LocatorKind = LocatorKind(1);
    pub const UDPV6: LocatorKind = LocatorKind(2);
    pub const TCPV4: LocatorKind = LocatorKind(4);
    pub const TCPV6: LocatorKind = LocatorKind(8);
    /// Fast DDS shared memory uses `16 + major version` so that SHM never connects across
    /// incompatible Fast DDS majors: 18 for Fast DDS 2.x, 19 (0x13) for 3.x
    /// (docs/ros2-interop.md §10). Only usable between Fast DDS processes on one host; never
    /// send to it.
    pub const FASTDDS_SHM_V2: LocatorKind = LocatorKind(18);
    pub const FASTDDS_SHM_V3: LocatorKind = LocatorKind(19);

    pub fn is_udp(self) -> bool {
        self == Self::UDPV4 || self == Self::UDPV6
    }
}

/// A transport kind, port and 16-byte address.
///
/// ```text
/// 0...............8..............16..............24..............32
/// +---------------+---------------+---------------+---------------+
/// |                           long kind                           |
/// +---------------+---------------+---------------+---------------+
/// |                       unsigned long port                      |
/// +---------------+---------------+---------------+---------------+
/// |                                                               |
/// +                    octet[16] address                          +
/// |          (UDPv4: 12 zero octets, then the IPv4 address)       |
/// +                                                               +
/// |                                                               |
/// +---------------+---------------+---------------+---------------+
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Locator {
    pub kind: LocatorKind,
    pub port: u32,
    pub address: [u8; 16],
}

impl Locator {
    /// Bytes on the wire.
    pub const WIRE_LEN: usize = 24;

    /// `LOCATOR_INVALID`.
    pub const INVALID: Locator = Locator {
        kind: LocatorKind::INVALID,
        port: 0,
        address: [0; 16],
    };

    pub fn udpv4(ip: Ipv4Addr, port: u16) -> Self {
        let mut address = [0u8; 16];
        if let Some(tail) = address.get_mut(12..) {
            tail.copy_from_slice(&ip.octets());
        }
        Locator {
            kind: LocatorKind::UDPV4,
            port: u32::from(port),
            address,
        }
    }

    pub fn udpv6(ip: Ipv6Addr, port: u16) -> Self {
        Locator {
            kind: LocatorKind::UDPV6,
            port: u32::from(port),
            address: ip.octets(),
        }
    }

    pub fn from_socket_addr(addr: SocketAddr) -> Self {
        match addr {
            SocketAddr::V4(a) => Self::udpv4(*a.ip(), a.port()),
            SocketAddr::V6(a) => Self::udpv6(*a.ip(), a.port()),
        }
    }

    /// The UDP socket address, if this is a UDPv4/UDPv6 locator with a port in 1..=65535.
    pub fn to_socket_addr(&self) -> Option<SocketAddr> {
        let port = u16::try_from(self.port).ok().filter(|p| *p != 0)?;
        if self.kind == LocatorKind::UDPV4 {
            let mut v4 = [0u8; 4];
            v4.copy_from_slice(self.address.get(12..)?);
            Some(SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::from(v4), port)))
        } else if self.kind == LocatorKind::UDPV6 {
            Some(SocketAddr::V6(SocketAddrV6::new(
                Ipv6Addr::from(self.address),
                port,
                0,
                0,
            )))
        } else {
            None
        }
    }

    /// Validity of a UDP locator's port: RTPS ports are 32-bit on the wire but UDP ports are
    /// 16-bit, and 0 is not a port one can send to (cyclonedds #1772, RustDDS #286).
    /// Locators of other kinds are not judged here.
    /// Whether it names a multicast group (IPv4 224.0.0.0/4, IPv6 ff00::/8).
    pub fn is_multicast(&self) -> bool {
        self.to_socket_addr().is_some_and(|a| a.ip().is_multicast())
    }

    pub fn has_valid_port(&self) -> bool {
        !self.kind.is_udp() || (1..=u32::from(u16::MAX)).contains(&self.port)
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, ParseError> {
        let kind = LocatorKind(r.i32()?);
        let port = r.u32()?;
        let address = r.array()?;
        Ok(Locator {
            kind,
            port,
            address,
        })
    }

    pub(crate) fn write(&self, buf: &mut Vec<u8>, e: Endianness) {
        put_i32(buf, e, self.kind.0);
        put_u32(buf, e, self.port);
        buf.extend_from_slice(&self.address);
    }
}

impl fmt::Display for Locator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_socket_addr() {
            Some(addr) => write!(f, "udp/{addr}"),
            None => write!(
                f,
                "kind{}/port{}/{:02x?}",
                self.kind.0, self.port, self.address
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn udp_locators() {
        let l = Locator::udpv4(Ipv4Addr::LOCALHOST, 7410);
        assert_eq!(l.to_socket_addr(), Some("127.0.0.1:7410".parse().unwrap()));
        assert_eq!(l.to_string(), "udp/127.0.0.1:7410");
        let v6: SocketAddr = "[::1]:7411".parse().unwrap();
        assert_eq!(Locator::from_socket_addr(v6).to_socket_addr(), Some(v6));
        let mut bad = l;
        bad.port = 0;
        assert!(!bad.has_valid_port() && bad.to_socket_addr().is_none());
        bad.port = 70_000;
        assert!(!bad.has_valid_port() && bad.to_socket_addr().is_none());
        let shm = Locator {
            kind: LocatorKind::FASTDDS_SHM_V3,
            port: 0,
            address: [0; 16],
        };
        assert!(shm.has_valid_port() && shm.to_socket_addr().is_none());
    }

    #[test]
    fn wire_round_trip() {
        let l = Locator::udpv4(Ipv4Addr::new(10, 1, 2, 3), 7400);
        for e in [Endianness::Big, Endianness::Little] {
            let mut b = Vec::new();
            l.write(&mut b, e);
            assert_eq!(b.len(), Locator::WIRE_LEN);
            assert_eq!(Locator::read(&mut Reader::new(&b, e)), Ok(l));
        }
    }
}
