//! Endpoint matching: which remote endpoints a local one talks to, and over which locators.
//!
//! A writer and a reader match when (DDS 1.4 §2.2.3, "Supported QoS"; RTPS 2.5 §8.5.4.3)
//! - their topic names and type names are equal (no type-compatibility rules: ROS type
//!   names embed package and message name, and the RIHS01 hash in USER_DATA is
//!   informational only, docs/ros2-interop.md §4);
//! - they share a partition (no partition = the default partition `""`);
//! - every request-vs-offered (RxO) policy the reader requests is met by what the writer
//!   offers. The rules are those `rmw_dds_common` `qos_profile_check_compatible` applies
//!   (docs/ros2-interop.md §6) plus OWNERSHIP (kinds must be equal) and DATA_REPRESENTATION (the
//!   writer's representation must be one the reader accepts), both DDS RxO policies that a
//!   non-ROS peer may set.
//!
//! A partition mismatch is not a QoS incompatibility (DDS raises no status for it); RxO
//! failures are reported with the policy, which becomes an `IncompatibleQos` event.
//!
//! Locators (docs/ros2-interop.md §10): endpoint-specific locators win over the participant's
//! defaults; kinds we cannot send to (Fast DDS shared memory, TCP) are dropped; a remote's
//! loopback locators are only used when the remote is on our host.

use std::fmt;
use std::net::IpAddr;

use super::{data_representation, EndpointData};
use crate::types::{Locator, LocatorKind};

/// A QoS policy that made a writer and a reader incompatible, with the DDS `QosPolicyId_t`
/// values (DDS 1.4 §2.3.3, `*_QOS_POLICY_ID`) as discriminants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum QosPolicy {
    Durability = 2,
    Deadline = 4,
    Ownership = 6,
    Liveliness = 8,
    Reliability = 11,
    DataRepresentation = 23,
}

impl QosPolicy {
    /// The name ROS prints in "Last incompatible policy: …".
    pub fn name(self) -> &'static str {
        match self {
            Self::Durability => "DURABILITY",
            Self::Deadline => "DEADLINE",
            Self::Ownership => "OWNERSHIP",
            Self::Liveliness => "LIVELINESS",
            Self::Reliability => "RELIABILITY",
            Self::DataRepresentation => "DATA_REPRESENTATION",
        }
    }
}

impl fmt::Display for QosPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether a matched pair needs nothing from RTPS that another transport cannot give it, so
/// that transport may carry it ([`crate::participant::Participant::set_carried_elsewhere`]):
/// both sides are [`endpoint_carriable_elsewhere`].
pub fn carriable_elsewhere(writer: &EndpointData, reader: &EndpointData) -> bool {
    endpoint_carriable_elsewhere(writer) && endpoint_carriable_elsewhere(reader)
}

/// One side of [`carriable_elsewhere`]. A reader: VOLATILE or TRANSIENT_LOCAL. A writer: its
/// liveliness lease infinite (WLP tracks finite leases on matched pairs), and either VOLATILE
/// or TRANSIENT_LOCAL with a KEEP_LAST history and an infinite lifespan: a history of known
/// depth whose samples never expire is one the carrying transport keeps and hands to a
/// late-joining TRANSIENT_LOCAL reader itself. A KEEP_ALL or expiring history, a keyed topic's
/// TRANSIENT_LOCAL history (it keeps `depth` samples per instance, which the same-host rings
/// do not), and the TRANSIENT and PERSISTENT kinds stay RTPS's job.
pub fn endpoint_carriable_elsewhere(endpoint: &EndpointData) -> bool {
    use super::DurabilityKind::{TransientLocal, Volatile};
    match endpoint.kind {
        super::EndpointKind::Reader => matches!(endpoint.durability, Volatile | TransientLocal),
        super::EndpointKind::Writer => {
            endpoint.liveliness.lease_duration.to_std().is_none()
                && match endpoint.durability {
                    Volatile => true,
                    TransientLocal => {
                        matches!(endpoint.history, super::History::KeepLast { .. })
                            && endpoint.lifespan.to_std().is_none()
                            && !endpoint.guid.entity_id.is_with_key()
                    }
                    _ => false,
                }
        }
    }
}

/// Whether a writer and a reader are on the same topic: equal topic name, equal type name,
/// and a common partition. Side and QoS are not looked at.
pub fn same_topic(writer: &EndpointData, reader: &EndpointData) -> bool {
    writer.topic_name == reader.topic_name
        && writer.type_name == reader.type_name
        && partitions_intersect(&writer.partitions, &reader.partitions)
}

/// DDS 1.4 §2.2.3.13: an empty PARTITION list means the default partition `""`. Partition
/// names are compared literally (no wildcard expressions; ROS never sets partitions).
fn partitions_intersect(a: &[String], b: &[String]) -> bool {
    fn norm<'a>(p: &'a [String], default: &'a [String]) -> &'a [String] {
        if p.is_empty() {
            default
        } else {
            p
        }
    }
    let default = [String::new()];
    let b = norm(b, &default);
    norm(a, &default).iter().any(|x| b.contains(x))
}

/// Request-vs-offered check of an offering `writer` against a requesting `reader`.
///
/// # Errors
/// The first incompatible policy, in the order reliability, durability, deadline,
/// liveliness, ownership, data representation.
pub fn check_compatible(writer: &EndpointData, reader: &EndpointData) -> Result<(), QosPolicy> {
    // DDS 1.4 §2.2.3.14: BEST_EFFORT < RELIABLE; offered ≥ requested.
    if (writer.reliability.kind as u32) < (reader.reliability.kind as u32) {
        return Err(QosPolicy::Reliability);
    }
    // §2.2.3.4: VOLATILE < TRANSIENT_LOCAL < TRANSIENT < PERSISTENT; offered ≥ requested.
    if writer.durability < reader.durability {
        return Err(QosPolicy::Durability);
    }
    // §2.2.3.7: offered period ≤ requested period (infinite is the largest).
    if writer.deadline > reader.deadline {
        return Err(QosPolicy::Deadline);
    }
    // §2.2.3.11: AUTOMATIC < MANUAL_BY_PARTICIPANT < MANUAL_BY_TOPIC, offered kind ≥ requested
    // and offered lease ≤ requested lease.
    if writer.liveliness.kind < reader.liveliness.kind
        || writer.liveliness.lease_duration > reader.liveliness.lease_duration
    {
        return Err(QosPolicy::Liveliness);
    }
    // §2.2.3.9: the kinds must be equal.
    if writer.ownership != reader.ownership {
        return Err(QosPolicy::Ownership);
    }
    // DDS-XTypes 1.3 §7.6.3.1.1: the writer uses the first representation it lists; the
    // reader must accept it. An empty list means the default, XCDR.
    let offered = writer
        .data_representation
        .first()
        .copied()
        .unwrap_or(data_representation::XCDR);
    let accepted = if reader.data_representation.is_empty() {
        &[data_representation::XCDR][..]
    } else {
        &reader.data_representation[..]
    };
    if !accepted.contains(&offered) {
        return Err(QosPolicy::DataRepresentation);
    }
    Ok(())
}

/// Where a remote participant runs relative to us, judged from the source address of its
/// datagrams.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PeerHost {
    /// Same host: its datagrams came from a loopback address or from one of our addresses.
    Local,
    /// Another host.
    Remote,
    /// No source address was known.
    Unknown,
}

impl PeerHost {
    /// Classifies a peer from the source of its datagram and our own locators.
    pub fn classify(source: Option<&Locator>, own: &[Locator]) -> Self {
        let Some(ip) = source.and_then(udp_ip) else {
            return Self::Unknown;
        };
        if is_loopback(ip) || own.iter().filter_map(udp_ip).any(|o| o == ip) {
            Self::Local
        } else {
            Self::Remote
        }
    }
}

fn udp_ip(l: &Locator) -> Option<IpAddr> {
    l.to_socket_addr().map(|a| a.ip())
}

fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// Whether we can send to `l` at all: UDPv4/UDPv6 with a valid port and a specified
/// address. Other kinds (Fast DDS shared memory 0x10+, TCP) are ignored, not errors.
pub fn is_usable(l: &Locator) -> bool {
    (l.kind == LocatorKind::UDPV4 || l.kind == LocatorKind::UDPV6)
        && udp_ip(l).is_some_and(|ip| !ip.is_unspecified())
}

/// The usable locators of `list` for a peer on `host`: on another host its loopback
/// locators lead back to ourselves and are dropped; on our host, if it offers loopback
/// locators, only those are kept (one copy of every datagram instead of one per interface).
pub fn filter_locators(list: &[Locator], host: PeerHost) -> Vec<Locator> {
    let usable = list.iter().filter(|l| is_usable(l));
    let loopback = |l: &&Locator| udp_ip(l).is_some_and(is_loopback);
    let mut out: Vec<Locator> = match host {
        PeerHost::Remote => usable.filter(|l| !loopback(l)).copied().collect(),
        PeerHost::Local if list.iter().filter(|l| is_usable(l)).any(|l| loopback(&l)) => {
            usable.filter(loopback).copied().collect()
        }
        PeerHost::Local | PeerHost::Unknown => usable.copied().collect(),
    };
    out.dedup();
    out
}

/// Unicast and multicast locators to reach a remote endpoint: its own (usable) locators if
/// it announced any, else its participant's default locators.
pub fn endpoint_locators(
    endpoint: &EndpointData,
    default_unicast: &[Locator],
    default_multicast: &[Locator],
    host: PeerHost,
) -> (Vec<Locator>, Vec<Locator>) {
    let own_unicast = filter_locators(&endpoint.unicast_locators, host);
    let own_multicast = filter_locators(&endpoint.multicast_locators, host);
    if own_unicast.is_empty() && own_multicast.is_empty() {
        (
            filter_locators(default_unicast, host),
            filter_locators(default_multicast, host),
        )
    } else {
        (own_unicast, own_multicast)
    }
}

#[cfg(test)]
mod tests {
    use std::net::{Ipv4Addr, Ipv6Addr};

    use super::*;
    use crate::discovery::{
        DurabilityKind, EndpointKind, Liveliness, LivelinessKind, OwnershipKind, ReliabilityKind,
    };
    use crate::types::{Duration, EntityId, Guid, GuidPrefix};

    fn ep(kind: EndpointKind) -> EndpointData {
        let id = match kind {
            EndpointKind::Writer => EntityId::new([0, 0, 1], EntityId::KIND_WRITER_NO_KEY),
            EndpointKind::Reader => EntityId::new([0, 0, 2], EntityId::KIND_READER_NO_KEY),
        };
        EndpointData::new(
            kind,
            Guid::new(GuidPrefix([1; 12]), id),
            "rt/chatter",
            "std_msgs::msg::dds_::String_",
        )
    }

    #[test]
    fn defaults_are_compatible() {
        let (w, r) = (ep(EndpointKind::Writer), ep(EndpointKind::Reader));
        assert!(same_topic(&w, &r));
        assert_eq!(check_compatible(&w, &r), Ok(()));
    }

    #[test]
    fn rxo_rules_as_ros_applies_them() {
        let w = ep(EndpointKind::Writer);
        let r = ep(EndpointKind::Reader);

        let mut be_w = w.clone();
        be_w.reliability.kind = ReliabilityKind::BestEffort;
        let mut rel_r = r.clone();
        rel_r.reliability.kind = ReliabilityKind::Reliable;
        assert_eq!(check_compatible(&be_w, &rel_r), Err(QosPolicy::Reliability));
        assert_eq!(check_compatible(&w, &rel_r), Ok(()));
        assert_eq!(check_compatible(&be_w, &r), Ok(()));

        let mut tl_r = r.clone();
        tl_r.durability = DurabilityKind::TransientLocal;
        assert_eq!(check_compatible(&w, &tl_r), Err(QosPolicy::Durability));
        let mut tl_w = w.clone();
        tl_w.durability = DurabilityKind::TransientLocal;
        assert_eq!(check_compatible(&tl_w, &tl_r), Ok(()));
        assert_eq!(check_compatible(&tl_w, &r), Ok(()));

        let mut dl_r = r.clone();
        dl_r.deadline = Duration::from_millis(100);
        assert_eq!(check_compatible(&w, &dl_r), Err(QosPolicy::Deadline));
        let mut dl_w = w.clone();
        dl_w.deadline = Duration::from_millis(50);
        assert_eq!(check_compatible(&dl_w, &dl_r), Ok(()));
        dl_w.deadline = Duration::from_millis(200);
        assert_eq!(check_compatible(&dl_w, &dl_r), Err(QosPolicy::Deadline));

        let mut lv_r = r.clone();
        lv_r.liveliness = Liveliness {
            kind: LivelinessKind::ManualByTopic,
            lease_duration: Duration::INFINITE,
        };
        assert_eq!(check_compatible(&w, &lv_r), Err(QosPolicy::Liveliness));
        lv_r.liveliness = Liveliness {
            kind: LivelinessKind::Automatic,
            lease_duration: Duration::from_secs(1),
        };
        assert_eq!(check_compatible(&w, &lv_r), Err(QosPolicy::Liveliness));
        let mut lv_w = w.clone();
        lv_w.liveliness.lease_duration = Duration::from_millis(500);
        assert_eq!(check_compatible(&lv_w, &lv_r), Ok(()));

        let mut ex_w = w.clone();
        ex_w.ownership = OwnershipKind::Exclusive;
        assert_eq!(check_compatible(&ex_w, &r), Err(QosPolicy::Ownership));

        let mut x2_w = w.clone();
        x2_w.data_representation = vec![data_representation::XCDR2];
        assert_eq!(
            check_compatible(&x2_w, &r),
            Err(QosPolicy::DataRepresentation)
        );
        let mut both_r = r.clone();
        both_r.data_representation = vec![data_representation::XCDR, data_representation::XCDR2];
        assert_eq!(check_compatible(&x2_w, &both_r), Ok(()));
        assert_eq!(QosPolicy::Reliability.to_string(), "RELIABILITY");
    }

    #[test]
    fn topic_type_and_partition() {
        let w = ep(EndpointKind::Writer);
        let mut r = ep(EndpointKind::Reader);
        r.type_name = "std_msgs::msg::dds_::Int32_".into();
        assert!(!same_topic(&w, &r));
        let mut r = ep(EndpointKind::Reader);
        r.topic_name = "rt/other".into();
        assert!(!same_topic(&w, &r));
        let mut r = ep(EndpointKind::Reader);
        r.partitions = vec!["a".into()];
        assert!(!same_topic(&w, &r));
        let mut w2 = w.clone();
        w2.partitions = vec!["b".into(), "a".into()];
        assert!(same_topic(&w2, &r));
        r.partitions = vec![String::new()];
        assert!(same_topic(&w, &r));
    }

    #[test]
    fn locator_selection() {
        let lo = Locator::udpv4(Ipv4Addr::LOCALHOST, 7411);
        let lan = Locator::udpv4(Ipv4Addr::new(192, 168, 1, 5), 7411);
        let shm = Locator {
            kind: LocatorKind::FASTDDS_SHM_V3,
            port: 0,
            address: [1; 16],
        };
        let any = Locator::udpv4(Ipv4Addr::UNSPECIFIED, 7411);
        let list = [shm, lo, lan, any];
        assert_eq!(filter_locators(&list, PeerHost::Remote), vec![lan]);
        assert_eq!(filter_locators(&list, PeerHost::Local), vec![lo]);
        assert_eq!(filter_locators(&list, PeerHost::Unknown), vec![lo, lan]);
        assert_eq!(filter_locators(&[lan], PeerHost::Local), vec![lan]);
        assert!(filter_locators(&[shm], PeerHost::Unknown).is_empty());

        let own = [Locator::udpv4(Ipv4Addr::new(10, 0, 0, 1), 7410)];
        let src = |ip: Ipv4Addr| Locator::udpv4(ip, 40000);
        assert_eq!(
            PeerHost::classify(Some(&src(Ipv4Addr::LOCALHOST)), &own),
            PeerHost::Local
        );
        assert_eq!(
            PeerHost::classify(Some(&src(Ipv4Addr::new(10, 0, 0, 1))), &own),
            PeerHost::Local
        );
        assert_eq!(
            PeerHost::classify(Some(&src(Ipv4Addr::new(10, 0, 0, 2))), &own),
            PeerHost::Remote
        );
        assert_eq!(PeerHost::classify(None, &own), PeerHost::Unknown);
        let v6lo = Locator::udpv6(Ipv6Addr::LOCALHOST, 1);
        assert_eq!(PeerHost::classify(Some(&v6lo), &[]), PeerHost::Local);

        let mut e = ep(EndpointKind::Reader);
        let defaults = [lan];
        assert_eq!(
            endpoint_locators(&e, &defaults, &[], PeerHost::Remote),
            (vec![lan], vec![])
        );
        e.unicast_locators = vec![shm];
        assert_eq!(
            endpoint_locators(&e, &defaults, &[], PeerHost::Remote),
            (vec![lan], vec![]),
            "an endpoint with only unusable locators falls back to the defaults"
        );
        let special = Locator::udpv4(Ipv4Addr::new(192, 168, 1, 5), 7001);
        e.unicast_locators = vec![shm, special];
        assert_eq!(
            endpoint_locators(&e, &defaults, &[], PeerHost::Remote),
            (vec![special], vec![])
        );
    }
}
