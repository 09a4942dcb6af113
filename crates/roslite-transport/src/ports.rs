//! Well-known UDP ports of the RTPS UDPv4 PSM.
//!
//! See DDSI-RTPS 2.5 §9.6.1.1 "Default port numbers": every port is
//! `PB + DG·domain + offset (+ PG·participant_id for unicast)`, with the parameter values of
//! §9.6.1.1 Table 9.8. Only the SPDP ports are "well known"; every other locator must come from
//! what a peer advertises (see docs/ros2-interop.md §10).
//!
//! | traffic              | port                          | domain 0         |
//! |----------------------|-------------------------------|------------------|
//! | SPDP multicast       | PB + DG·d + d0                | 7400             |
//! | metatraffic unicast  | PB + DG·d + d1 + PG·pid       | 7410, 7412, …    |
//! | user multicast       | PB + DG·d + d2                | 7401             |
//! | user unicast         | PB + DG·d + d3 + PG·pid       | 7411, 7413, …    |

use std::fmt;
use std::net::Ipv4Addr;

/// Port base (RTPS 2.5 §9.6.1.1).
pub const PB: u16 = 7400;
/// Domain id gain.
pub const DG: u16 = 250;
/// Participant id gain.
pub const PG: u16 = 2;
/// Offset of the metatraffic (SPDP) multicast port.
pub const D0: u16 = 0;
/// Offset of the metatraffic unicast port.
pub const D1: u16 = 10;
/// Offset of the user-traffic multicast port.
pub const D2: u16 = 1;
/// Offset of the user-traffic unicast port.
pub const D3: u16 = 11;

/// The SPDP multicast group for IPv4 (RTPS 2.5 §9.6.1.4.1, `239.255.0.1`).
pub const SPDP_MULTICAST_GROUP: Ipv4Addr = Ipv4Addr::new(239, 255, 0, 1);

/// The largest ROS domain id: `7400 + 250·232 + 11 = 65411` is the last domain whose ports
/// fit in 16 bits (ROS 2 "The ROS_DOMAIN_ID"; 0..=101 also stays below Linux's ephemeral range).
pub const MAX_DOMAIN_ID: u32 = 232;

/// The four port kinds of the default mapping.
///
/// Declared in the spec's order (d0, d1, d2, d3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PortKind {
    /// SPDP multicast, `PB + DG·d + d0`.
    MetatrafficMulticast,
    /// Metatraffic unicast, `PB + DG·d + d1 + PG·pid`.
    MetatrafficUnicast,
    /// User-traffic multicast, `PB + DG·d + d2`.
    UserMulticast,
    /// User-traffic unicast, `PB + DG·d + d3 + PG·pid`.
    UserUnicast,
}

impl PortKind {
    fn offset(self) -> u16 {
        match self {
            PortKind::MetatrafficMulticast => D0,
            PortKind::MetatrafficUnicast => D1,
            PortKind::UserMulticast => D2,
            PortKind::UserUnicast => D3,
        }
    }

    fn is_unicast(self) -> bool {
        matches!(self, PortKind::MetatrafficUnicast | PortKind::UserUnicast)
    }

    fn formula(self) -> &'static str {
        match self {
            PortKind::MetatrafficMulticast => "7400 + 250·domain + 0",
            PortKind::MetatrafficUnicast => "7400 + 250·domain + 10 + 2·participant_id",
            PortKind::UserMulticast => "7400 + 250·domain + 1",
            PortKind::UserUnicast => "7400 + 250·domain + 11 + 2·participant_id",
        }
    }
}

impl fmt::Display for PortKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PortKind::MetatrafficMulticast => "SPDP multicast",
            PortKind::MetatrafficUnicast => "metatraffic unicast",
            PortKind::UserMulticast => "user multicast",
            PortKind::UserUnicast => "user unicast",
        })
    }
}

/// A port of the default mapping does not fit in 16 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortError {
    pub kind: PortKind,
    pub domain_id: u32,
    /// `None` for the multicast kinds, which have no participant id.
    pub participant_id: Option<u32>,
}

impl fmt::Display for PortError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the {} port {} for domain {}",
            self.kind,
            self.kind.formula(),
            self.domain_id
        )?;
        if let Some(pid) = self.participant_id {
            write!(f, " and participant id {pid}")?;
        }
        f.write_str(" exceeds 65535; ")?;
        if self.domain_id > MAX_DOMAIN_ID {
            write!(
                f,
                "ROS domain ids must be 0..={MAX_DOMAIN_ID} (0..=101 avoids Linux's ephemeral \
                 ports): set ROS_DOMAIN_ID to a smaller value"
            )
        } else {
            match max_participant_id(self.domain_id) {
                Some(max) => write!(
                    f,
                    "participant ids in domain {} must be 0..={max}: use a smaller domain id \
                     for more participants",
                    self.domain_id
                ),
                None => f.write_str("use a smaller domain id"),
            }
        }
    }
}

impl std::error::Error for PortError {}

/// The port of `kind` for `domain_id` and `participant_id` (ignored for the multicast kinds).
///
/// # Errors
/// [`PortError`] if the port does not fit in 16 bits.
pub fn port(kind: PortKind, domain_id: u32, participant_id: u32) -> Result<u16, PortError> {
    let pid_term = if kind.is_unicast() {
        u64::from(PG) * u64::from(participant_id)
    } else {
        0
    };
    let port =
        u64::from(PB) + u64::from(DG) * u64::from(domain_id) + u64::from(kind.offset()) + pid_term;
    u16::try_from(port).map_err(|_| PortError {
        kind,
        domain_id,
        participant_id: kind.is_unicast().then_some(participant_id),
    })
}

/// `PB + DG·domain + d0`: 7400 for domain 0.
///
/// # Errors
/// [`PortError`] if the port does not fit in 16 bits (domain > 232).
pub fn spdp_multicast_port(domain_id: u32) -> Result<u16, PortError> {
    port(PortKind::MetatrafficMulticast, domain_id, 0)
}

/// `PB + DG·domain + d1 + PG·participant_id`: 7410, 7412, … for domain 0.
///
/// # Errors
/// [`PortError`] if the port does not fit in 16 bits.
pub fn metatraffic_unicast_port(domain_id: u32, participant_id: u32) -> Result<u16, PortError> {
    port(PortKind::MetatrafficUnicast, domain_id, participant_id)
}

/// `PB + DG·domain + d2`: 7401 for domain 0.
///
/// # Errors
/// [`PortError`] if the port does not fit in 16 bits (domain > 232).
pub fn user_multicast_port(domain_id: u32) -> Result<u16, PortError> {
    port(PortKind::UserMulticast, domain_id, 0)
}

/// `PB + DG·domain + d3 + PG·participant_id`: 7411, 7413, … for domain 0.
///
/// # Errors
/// [`PortError`] if the port does not fit in 16 bits.
pub fn user_unicast_port(domain_id: u32, participant_id: u32) -> Result<u16, PortError> {
    port(PortKind::UserUnicast, domain_id, participant_id)
}

/// The largest participant id whose unicast ports fit in 16 bits in `domain_id`, or `None` if
/// not even participant 0 fits.
pub fn max_participant_id(domain_id: u32) -> Option<u32> {
    // The user unicast port (d3 = 11) is the larger of the two unicast ports.
    let base = u64::from(PB) + u64::from(DG) * u64::from(domain_id) + u64::from(D3);
    let room = u64::from(u16::MAX).checked_sub(base)?;
    u32::try_from(room / u64::from(PG)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domain_0_ports() {
        assert_eq!(spdp_multicast_port(0), Ok(7400));
        assert_eq!(user_multicast_port(0), Ok(7401));
        assert_eq!(metatraffic_unicast_port(0, 0), Ok(7410));
        assert_eq!(user_unicast_port(0, 0), Ok(7411));
        assert_eq!(metatraffic_unicast_port(0, 1), Ok(7412));
        assert_eq!(user_unicast_port(0, 1), Ok(7413));
        assert_eq!(metatraffic_unicast_port(0, 120), Ok(7650));
        assert_eq!(user_unicast_port(0, 120), Ok(7651));
    }

    #[test]
    fn domain_1_ports() {
        assert_eq!(spdp_multicast_port(1), Ok(7650));
        assert_eq!(user_multicast_port(1), Ok(7651));
        assert_eq!(metatraffic_unicast_port(1, 0), Ok(7660));
        assert_eq!(user_unicast_port(1, 0), Ok(7661));
        assert_eq!(metatraffic_unicast_port(1, 2), Ok(7664));
    }

    #[test]
    fn domain_232_is_the_last_that_fits() {
        assert_eq!(spdp_multicast_port(232), Ok(65400));
        assert_eq!(user_multicast_port(232), Ok(65401));
        assert_eq!(metatraffic_unicast_port(232, 0), Ok(65410));
        assert_eq!(user_unicast_port(232, 0), Ok(65411));
        assert_eq!(max_participant_id(232), Some(62));
        assert_eq!(user_unicast_port(232, 62), Ok(65535));
        assert_eq!(metatraffic_unicast_port(232, 62), Ok(65534));
        let err = metatraffic_unicast_port(232, 63).unwrap_err();
        assert_eq!(
            err,
            PortError {
                kind: PortKind::MetatrafficUnicast,
                domain_id: 232,
                participant_id: Some(63)
            }
        );
        assert!(
            err.to_string()
                .contains("participant ids in domain 232 must be 0..=62"),
            "{err}"
        );
    }

    #[test]
    fn overflow_is_an_error_not_a_wrap() {
        let err = spdp_multicast_port(233).unwrap_err();
        assert_eq!(err.participant_id, None);
        assert!(err.to_string().contains("must be 0..=232"), "{err}");
        assert!(user_unicast_port(0, u32::MAX).is_err());
        assert!(spdp_multicast_port(u32::MAX).is_err());
        assert_eq!(max_participant_id(233), None);
        assert_eq!(max_participant_id(0), Some((65535 - 7411) / 2));
    }
}
