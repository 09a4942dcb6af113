//! ROS 2 conventions on top of DDS discovery (docs/ros2-interop.md §2-§4): topic and type name
//! mapping, USER_DATA `key=value;` entries, and the `ros_discovery_info` graph message.
//!
//! Names (`ros2/design` article 140, "Topic and Service name mapping to DDS"): a fully
//! qualified ROS name `/a/b` becomes the DDS topic `rt/a/b`; a service `/s` uses the request
//! topic `rq/sRequest` and the reply topic `rr/sReply`. Types: `pkg/msg/Name` becomes
//! `pkg::msg::dds_::Name_` (`rmw_fastrtps_cpp` `_create_type_name`), service halves
//! `pkg::srv::dds_::Name_Request_` / `_Response_`.
//!
//! Graph (`ros2/design` article 170, "Node to participant mapping"): each participant
//! publishes a `rmw_dds_common/msg/ParticipantEntitiesInfo` on the DDS topic
//! `ros_discovery_info` listing its nodes and the GIDs of their readers and writers. Humble's
//! `Gid` is `char[24]` (a GUID padded with zeros), Iron and later use `char[16]`
//! (`rmw_dds_common` commit 5ab4f59); a peer of the other generation cannot decode our
//! samples, so the layout is a [`WireDistro`] setting, and decoding can detect it.

use roslite_cdr::{CdrReader, CdrWriter, DecodeError, EncodeError, Endianness};

use super::{user_data_entries, DurabilityKind, History, ReliabilityKind};
use crate::types::{EntityId, Guid};

/// DDS topic name prefix of ROS topics.
pub const TOPIC_PREFIX: &str = "rt";
/// DDS topic name prefix of service requests.
pub const REQUEST_PREFIX: &str = "rq";
/// DDS topic name prefix of service replies.
pub const REPLY_PREFIX: &str = "rr";
/// The DDS topic of the ROS graph (no prefix).
pub const DISCOVERY_INFO_TOPIC: &str = "ros_discovery_info";
/// Its DDS type name.
pub const DISCOVERY_INFO_TYPE: &str = "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_";
/// The longest DDS topic name ROS allows (`rmw` `RMW_TOPIC_MAX_NAME_LENGTH` + prefix).
pub const MAX_DDS_TOPIC_LEN: usize = 256;

/// QoS of the `ros_discovery_info` writer (docs/ros2-interop.md §3): RELIABLE, TRANSIENT_LOCAL,
/// KEEP_LAST 1.
pub const DISCOVERY_INFO_WRITER_QOS: (ReliabilityKind, DurabilityKind, History) = (
    ReliabilityKind::Reliable,
    DurabilityKind::TransientLocal,
    History::KeepLast { depth: 1 },
);
/// QoS of the `ros_discovery_info` reader: RELIABLE, TRANSIENT_LOCAL, KEEP_ALL.
pub const DISCOVERY_INFO_READER_QOS: (ReliabilityKind, DurabilityKind, History) = (
    ReliabilityKind::Reliable,
    DurabilityKind::TransientLocal,
    History::KeepAll,
);

/// What a DDS topic carries in ROS terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RosTopicKind {
    /// `rt/…`: a topic.
    Topic,
    /// `rq/…Request`: the requests of a service.
    ServiceRequest,
    /// `rr/…Reply`: the replies of a service.
    ServiceReply,
}

/// `/chatter` → `rt/chatter`. A name without the leading `/` is taken as already relative to
/// the root (`chatter` → `rt/chatter`).
pub fn topic_to_dds(ros_name: &str) -> String {
    prefixed(TOPIC_PREFIX, ros_name, "")
}

/// `/motor_power` → `rq/motor_powerRequest`.
pub fn service_request_to_dds(service: &str) -> String {
    prefixed(REQUEST_PREFIX, service, "Request")
}

/// `/motor_power` → `rr/motor_powerReply`.
pub fn service_reply_to_dds(service: &str) -> String {
    prefixed(REPLY_PREFIX, service, "Reply")
}

fn prefixed(prefix: &str, name: &str, suffix: &str) -> String {
    let rest = name.strip_prefix('/').unwrap_or(name);
    format!("{prefix}/{rest}{suffix}")
}

/// The ROS name behind a DDS topic: `rt/chatter` → (Topic, `/chatter`),
/// `rq/motor_powerRequest` → (ServiceRequest, `/motor_power`). `None` for DDS topics outside
/// the ROS conventions (`ros_discovery_info`, plain DDS applications).
pub fn dds_to_ros(dds_name: &str) -> Option<(RosTopicKind, String)> {
    let (prefix, rest) = dds_name.split_once('/')?;
    let (kind, name) = match prefix {
        TOPIC_PREFIX => (RosTopicKind::Topic, rest),
        REQUEST_PREFIX => (RosTopicKind::ServiceRequest, rest.strip_suffix("Request")?),
        REPLY_PREFIX => (RosTopicKind::ServiceReply, rest.strip_suffix("Reply")?),
        _ => return None,
    };
    if name.is_empty() {
        return None;
    }
    Some((kind, format!("/{name}")))
}

/// Which half of a service type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ServiceHalf {
    Request,
    Response,
}

/// `std_msgs/msg/String` → `std_msgs::msg::dds_::String_`; `std_msgs/String` (the short form)
/// is read as a message. `None` unless the name has two or three non-empty `/`-separated
/// parts.
pub fn type_to_dds(ros_type: &str) -> Option<String> {
    let (pkg, kind, name) = split_type(ros_type, "msg")?;
    Some(format!("{pkg}::{kind}::dds_::{name}_"))
}

/// `std_srvs/srv/SetBool` + Request → `std_srvs::srv::dds_::SetBool_Request_`.
pub fn service_type_to_dds(ros_type: &str, half: ServiceHalf) -> Option<String> {
    let (pkg, kind, name) = split_type(ros_type, "srv")?;
    let half = match half {
        ServiceHalf::Request => "Request",
        ServiceHalf::Response => "Response",
    };
    Some(format!("{pkg}::{kind}::dds_::{name}_{half}_"))
}

fn split_type<'a>(ros_type: &'a str, default_kind: &'a str) -> Option<(&'a str, &'a str, &'a str)> {
    let parts: Vec<&str> = ros_type.split('/').collect();
    let (pkg, kind, name) = match parts.as_slice() {
        [pkg, name] => (*pkg, default_kind, *name),
        [pkg, kind, name] => (*pkg, *kind, *name),
        _ => return None,
    };
    if pkg.is_empty() || kind.is_empty() || name.is_empty() {
        return None;
    }
    Some((pkg, kind, name))
}

/// The ROS type behind a DDS type name: `std_msgs::msg::dds_::String_` → `std_msgs/msg/String`,
/// `std_srvs::srv::dds_::SetBool_Request_` → `std_srvs/srv/SetBool_Request` (the service half
/// stays in the name, as `ros2 topic list -t` shows for `rq/` topics).
pub fn dds_to_type(dds_type: &str) -> Option<String> {
    let mut parts = dds_type.split("::");
    let (pkg, kind, dds, name) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || dds != "dds_" || pkg.is_empty() || kind.is_empty() {
        return None;
    }
    let name = name.strip_suffix('_').filter(|n| !n.is_empty())?;
    Some(format!("{pkg}/{kind}/{name}"))
}

// ---------------------------------------------------------------------------------------------
// USER_DATA (docs/ros2-interop.md §4)

/// Participant USER_DATA `enclave=<enclave>;`, as Cyclone writes it (no trailing NUL; Fast DDS
/// adds one, and both are accepted by every parser we know).
pub fn enclave_user_data(enclave: &str) -> Vec<u8> {
    format!("enclave={enclave};").into_bytes()
}

/// The `enclave` entry of participant USER_DATA.
pub fn parse_enclave(user_data: &[u8]) -> Option<&str> {
    user_data_value(user_data, "enclave")
}

/// Endpoint USER_DATA `typehash=<hash>;` (Iron and later; `rmw_dds_common`
/// `encode_type_hash_for_user_data_qos`). `hash` is the `RIHS01_<64 hex>` string.
pub fn typehash_user_data(type_hash: &str) -> Vec<u8> {
    format!("typehash={type_hash};").into_bytes()
}

/// The `typehash` entry of endpoint USER_DATA, if it is a `RIHS01_` hash with 64 hex digits.
pub fn parse_typehash(user_data: &[u8]) -> Option<&str> {
    user_data_value(user_data, "typehash").filter(|h| {
        h.strip_prefix("RIHS01_")
            .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
    })
}

/// The value of entry `key` in `key=value;` USER_DATA.
pub fn user_data_value<'a>(user_data: &'a [u8], key: &str) -> Option<&'a str> {
    user_data_entries(user_data).find_map(|(k, v)| (k == key).then_some(v))
}

/// Which side of a Cyclone service pair an id names (`rmw_cyclonedds_cpp` `rmw_init_cs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CycloneServiceRole {
    /// `clientid=`: on a client's request writer and reply reader.
    Client,
    /// `serviceid=`: on a server's request reader and reply writer.
    Service,
}

impl CycloneServiceRole {
    fn key(self) -> &'static str {
        match self {
            Self::Client => "clientid",
            Self::Service => "serviceid",
        }
    }
}

/// Cyclone's client/service id USER_DATA: `clientid=<id>;` where the id is the 16 bytes in
/// lower-case hex separated by dots, the first one right-aligned in two columns (the
/// `csid_to_string` of `rmw_cyclonedds_cpp`, reproduced so a Cyclone server compares equal
/// strings). A Cyclone server answers a request only once it has matched the reply reader
/// whose id equals the request writer's (`check_for_response_reader`).
pub fn cyclone_service_id_user_data(role: CycloneServiceRole, id: [u8; 16]) -> Vec<u8> {
    let mut s = format!("{}={:>2x}", role.key(), id[0]);
    for b in &id[1..] {
        s.push_str(&format!(".{b:x}"));
    }
    s.push(';');
    s.into_bytes()
}

/// Parses a Cyclone `clientid=`/`serviceid=` entry back into its 16 bytes.
pub fn parse_cyclone_service_id(user_data: &[u8], role: CycloneServiceRole) -> Option<[u8; 16]> {
    let value = user_data_value(user_data, role.key())?;
    let mut out = [0u8; 16];
    let mut parts = value.trim_start().split('.');
    for slot in &mut out {
        let part = parts.next()?;
        if part.is_empty() || part.len() > 2 {
            return None;
        }
        *slot = u8::from_str_radix(part, 16).ok()?;
    }
    parts.next().is_none().then_some(out)
}

// ---------------------------------------------------------------------------------------------
// ros_discovery_info

/// The `Gid` layout a peer's ROS distribution uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WireDistro {
    /// Humble: `char[24]`, the 16-byte GUID then 8 zero bytes.
    Humble,
    /// Iron, Jazzy, Kilted, Rolling: `char[16]`.
    #[default]
    IronOrLater,
}

impl WireDistro {
    /// Bytes of one `Gid` on the wire.
    pub const fn gid_len(self) -> usize {
        match self {
            Self::Humble => 24,
            Self::IronOrLater => 16,
        }
    }
}

/// `rmw_dds_common/msg/NodeEntitiesInfo`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeEntitiesInfo {
    /// `string<=256`.
    pub node_namespace: String,
    /// `string<=256`.
    pub node_name: String,
    pub reader_gids: Vec<Guid>,
    pub writer_gids: Vec<Guid>,
}

/// `rmw_dds_common/msg/ParticipantEntitiesInfo`: the ROS nodes of one participant.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParticipantEntitiesInfo {
    /// The participant GUID (`…000001c1`).
    pub gid: Guid,
    pub nodes: Vec<NodeEntitiesInfo>,
}

/// Bound of node names and namespaces in `NodeEntitiesInfo.msg`.
pub const MAX_NODE_NAME_LEN: usize = 256;

impl ParticipantEntitiesInfo {
    /// Serializes with an encapsulation header (CDR_LE, like both ROS vendors).
    ///
    /// # Errors
    /// [`EncodeError::StringBoundExceeded`] for a node name or namespace over 256 bytes,
    /// [`EncodeError::InteriorNul`] for a name containing NUL.
    pub fn to_payload(&self, distro: WireDistro) -> Result<Vec<u8>, EncodeError> {
        let mut w = CdrWriter::new(Endianness::Little);
        write_gid(&mut w, self.gid, distro);
        w.write_len(self.nodes.len())?;
        for node in &self.nodes {
            w.write_bounded_string(&node.node_namespace, MAX_NODE_NAME_LEN)?;
            w.write_bounded_string(&node.node_name, MAX_NODE_NAME_LEN)?;
            for gids in [&node.reader_gids, &node.writer_gids] {
                w.write_len(gids.len())?;
                for g in gids {
                    write_gid(&mut w, *g, distro);
                }
            }
        }
        Ok(w.finish())
    }

    /// Decodes a payload in the given layout.
    ///
    /// # Errors
    /// Any [`DecodeError`]: truncation, bounds, encapsulation, strings. Sequence lengths are
    /// checked against the remaining bytes before anything is allocated.
    pub fn from_payload(payload: &[u8], distro: WireDistro) -> Result<Self, DecodeError> {
        Self::decode(payload, distro, false)
    }

    /// Decodes a payload of either layout: `preferred` first, then the other one. Also
    /// returns the layout that worked, which tells the peer's ROS generation
    /// (zenoh-plugin-ros2dds #21 does the same detection).
    ///
    /// Detection is strict: the GID padding of the Humble layout must be zero, and the
    /// message must use the whole payload (up to 3 bytes of trailing padding). A Humble
    /// sample read with 16-byte GIDs otherwise "succeeds" with its padding taken as an empty
    /// node list.
    ///
    /// # Errors
    /// The error of the preferred layout when neither decodes.
    pub fn from_payload_any(
        payload: &[u8],
        preferred: WireDistro,
    ) -> Result<(Self, WireDistro), DecodeError> {
        let other = match preferred {
            WireDistro::Humble => WireDistro::IronOrLater,
            WireDistro::IronOrLater => WireDistro::Humble,
        };
        match Self::decode(payload, preferred, true) {
            Ok(v) => Ok((v, preferred)),
            Err(first) => Self::decode(payload, other, true)
                .map(|v| (v, other))
                .map_err(|_| first),
        }
    }

    fn decode(payload: &[u8], distro: WireDistro, strict: bool) -> Result<Self, DecodeError> {
        let mut r = CdrReader::new(payload)?;
        let gid = read_gid(&mut r, distro, strict)?;
        // A node is at least two 5-byte strings and two 4-byte lengths.
        let n = r.read_len(16)?;
        let mut nodes = Vec::with_capacity(n);
        for _ in 0..n {
            let node_namespace = r.read_bounded_string(MAX_NODE_NAME_LEN)?.to_owned();
            let node_name = r.read_bounded_string(MAX_NODE_NAME_LEN)?.to_owned();
            let reader_gids = read_gids(&mut r, distro, strict)?;
            let writer_gids = read_gids(&mut r, distro, strict)?;
            nodes.push(NodeEntitiesInfo {
                node_namespace,
                node_name,
                reader_gids,
                writer_gids,
            });
        }
        if strict && (r.remaining() >= 4 || gid.entity_id != EntityId::PARTICIPANT) {
            return Err(DecodeError::InvalidValue);
        }
        Ok(ParticipantEntitiesInfo { gid, nodes })
    }
}

fn write_gid(w: &mut CdrWriter, g: Guid, distro: WireDistro) {
    w.write_bytes(&g.to_bytes());
    if distro == WireDistro::Humble {
        w.write_bytes(&[0; 8]);
    }
}

fn read_gid(r: &mut CdrReader<'_>, distro: WireDistro, strict: bool) -> Result<Guid, DecodeError> {
    let bytes = r.read_bytes(distro.gid_len())?;
    let (guid, padding) = bytes
        .split_at_checked(16)
        .ok_or(DecodeError::InvalidValue)?;
    if strict && padding.iter().any(|b| *b != 0) {
        return Err(DecodeError::InvalidValue);
    }
    let mut g = [0u8; 16];
    g.copy_from_slice(guid);
    Ok(Guid::from_bytes(g))
}

fn read_gids(
    r: &mut CdrReader<'_>,
    distro: WireDistro,
    strict: bool,
) -> Result<Vec<Guid>, DecodeError> {
    let n = r.read_len(distro.gid_len())?;
    (0..n).map(|_| read_gid(r, distro, strict)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::GuidPrefix;

    #[test]
    fn topic_names() {
        assert_eq!(topic_to_dds("/chatter"), "rt/chatter");
        assert_eq!(topic_to_dds("chatter"), "rt/chatter");
        assert_eq!(topic_to_dds("/a/b/c"), "rt/a/b/c");
        assert_eq!(
            service_request_to_dds("/motor_power"),
            "rq/motor_powerRequest"
        );
        assert_eq!(
            service_reply_to_dds("/talker/get_parameters"),
            "rr/talker/get_parametersReply"
        );
        assert_eq!(
            dds_to_ros("rt/chatter"),
            Some((RosTopicKind::Topic, "/chatter".into()))
        );
        assert_eq!(
            dds_to_ros("rq/talker/get_parametersRequest"),
            Some((
                RosTopicKind::ServiceRequest,
                "/talker/get_parameters".into()
            ))
        );
        assert_eq!(
            dds_to_ros("rr/motor_powerReply"),
            Some((RosTopicKind::ServiceReply, "/motor_power".into()))
        );
        assert_eq!(dds_to_ros("ros_discovery_info"), None);
        assert_eq!(dds_to_ros("rq/motor_power"), None);
        assert_eq!(dds_to_ros("rt/"), None);
        assert_eq!(dds_to_ros("xx/foo"), None);
    }

    #[test]
    fn type_names() {
        assert_eq!(
            type_to_dds("std_msgs/msg/String").as_deref(),
            Some("std_msgs::msg::dds_::String_")
        );
        assert_eq!(
            type_to_dds("std_msgs/String").as_deref(),
            Some("std_msgs::msg::dds_::String_")
        );
        assert_eq!(
            service_type_to_dds("std_srvs/srv/SetBool", ServiceHalf::Request).as_deref(),
            Some("std_srvs::srv::dds_::SetBool_Request_")
        );
        assert_eq!(
            service_type_to_dds("std_srvs/SetBool", ServiceHalf::Response).as_deref(),
            Some("std_srvs::srv::dds_::SetBool_Response_")
        );
        assert_eq!(type_to_dds("String"), None);
        assert_eq!(type_to_dds("a//b"), None);
        assert_eq!(
            dds_to_type("std_msgs::msg::dds_::String_").as_deref(),
            Some("std_msgs/msg/String")
        );
        assert_eq!(
            dds_to_type(DISCOVERY_INFO_TYPE).as_deref(),
            Some("rmw_dds_common/msg/ParticipantEntitiesInfo")
        );
        assert_eq!(dds_to_type("Foo"), None);
        assert_eq!(dds_to_type("a::msg::x::B_"), None);
    }

    #[test]
    fn user_data() {
        assert_eq!(enclave_user_data("/"), b"enclave=/;");
        assert_eq!(parse_enclave(b"enclave=/;\0"), Some("/"));
        assert_eq!(parse_enclave(b"enclave=/;"), Some("/"));
        assert_eq!(parse_enclave(b"foo=bar;"), None);
        let hash = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18";
        let ud = typehash_user_data(hash);
        assert_eq!(parse_typehash(&ud), Some(hash));
        assert_eq!(parse_typehash(b"typehash=RIHS01_abc;"), None);
        assert_eq!(parse_typehash(b"typehash=RIHS02_df66;"), None);
    }

    #[test]
    fn cyclone_ids() {
        let mut id = [0u8; 16];
        id[0] = 0x01;
        id[1] = 0x0f;
        id[15] = 0xab;
        let ud = cyclone_service_id_user_data(CycloneServiceRole::Client, id);
        assert_eq!(ud, b"clientid= 1.f.0.0.0.0.0.0.0.0.0.0.0.0.0.ab;".to_vec());
        assert_eq!(
            parse_cyclone_service_id(&ud, CycloneServiceRole::Client),
            Some(id)
        );
        assert_eq!(
            parse_cyclone_service_id(&ud, CycloneServiceRole::Service),
            None
        );
        let ud = cyclone_service_id_user_data(CycloneServiceRole::Service, [0xfe; 16]);
        assert!(ud.starts_with(b"serviceid=fe.fe."));
        assert_eq!(
            parse_cyclone_service_id(&ud, CycloneServiceRole::Service),
            Some([0xfe; 16])
        );
        assert_eq!(
            parse_cyclone_service_id(b"clientid=1.2.3;", CycloneServiceRole::Client),
            None
        );
    }

    fn sample() -> ParticipantEntitiesInfo {
        let prefix = GuidPrefix([1, 0x0f, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
        ParticipantEntitiesInfo {
            gid: Guid::new(prefix, EntityId::PARTICIPANT),
            nodes: vec![
                NodeEntitiesInfo {
                    node_namespace: "/".into(),
                    node_name: "talker".into(),
                    reader_gids: vec![Guid::new(prefix, EntityId::new([0, 0, 5], 0x04))],
                    writer_gids: vec![
                        Guid::new(prefix, EntityId::new([0, 0, 3], 0x03)),
                        Guid::new(prefix, EntityId::new([0, 0, 4], 0x03)),
                    ],
                },
                NodeEntitiesInfo {
                    node_namespace: "/ns".into(),
                    node_name: "empty".into(),
                    ..Default::default()
                },
            ],
        }
    }

    #[test]
    fn entities_info_round_trips_in_both_layouts() {
        let info = sample();
        for distro in [WireDistro::Humble, WireDistro::IronOrLater] {
            let payload = info.to_payload(distro).unwrap();
            assert_eq!(
                ParticipantEntitiesInfo::from_payload(&payload, distro).unwrap(),
                info
            );
            for preferred in [WireDistro::Humble, WireDistro::IronOrLater] {
                assert_eq!(
                    ParticipantEntitiesInfo::from_payload_any(&payload, preferred).unwrap(),
                    (info.clone(), distro),
                    "{distro:?} payload read preferring {preferred:?}"
                );
            }
        }
        let humble = info.to_payload(WireDistro::Humble).unwrap();
        let iron = info.to_payload(WireDistro::IronOrLater).unwrap();
        assert_eq!(humble.len() - iron.len(), 8 * 4);
    }

    #[test]
    fn entities_info_rejects_garbage() {
        let info = sample();
        let payload = info.to_payload(WireDistro::IronOrLater).unwrap();
        for cut in 0..payload.len() {
            assert!(ParticipantEntitiesInfo::from_payload(
                &payload[..cut],
                WireDistro::IronOrLater
            )
            .is_err());
        }
        // A huge node count is rejected before allocating.
        let mut huge = payload[..4 + 16].to_vec();
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(ParticipantEntitiesInfo::from_payload(&huge, WireDistro::IronOrLater).is_err());
        // A too-long node name.
        let mut long = info.clone();
        long.nodes[0].node_name = "x".repeat(257);
        assert!(long.to_payload(WireDistro::IronOrLater).is_err());
    }

    /// Frame 132 of `kilted-fastdds-talker-listener-setbool.pcap`: the `listener` node's
    /// graph sample (Fast DDS 3.2.3, Kilted), CDR payload of the DATA on `ros_discovery_info`.
    #[test]
    fn entities_info_from_fastdds_capture() {
        let hex = "00010000\
            010f78fd883d494300000000000001c1 01000000 02000000 2f000000 09000000 \
            6c697374656e657200000000 09000000 \
            010f78fd883d49430000000000000504 010f78fd883d49430000000000000704 \
            010f78fd883d49430000000000000904 010f78fd883d49430000000000000b04 \
            010f78fd883d49430000000000000d04 010f78fd883d49430000000000000f04 \
            010f78fd883d49430000000000001104 010f78fd883d49430000000000001304 \
            010f78fd883d49430000000000001404 0a000000 \
            010f78fd883d49430000000000000303 010f78fd883d49430000000000000403 \
            010f78fd883d49430000000000000603 010f78fd883d49430000000000000803 \
            010f78fd883d49430000000000000a03 010f78fd883d49430000000000000c03 \
            010f78fd883d49430000000000000e03 010f78fd883d49430000000000001003 \
            010f78fd883d49430000000000001203 010f78fd883d49430000000000001503";
        let hex: String = hex.split_whitespace().collect();
        let payload: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        let (info, distro) =
            ParticipantEntitiesInfo::from_payload_any(&payload, WireDistro::IronOrLater).unwrap();
        assert_eq!(distro, WireDistro::IronOrLater);
        assert_eq!(info.gid.entity_id, EntityId::PARTICIPANT);
        assert_eq!(info.gid.prefix.to_string(), "010f78fd.883d4943.00000000");
        assert_eq!(info.nodes.len(), 1);
        let node = &info.nodes[0];
        assert_eq!(
            (node.node_namespace.as_str(), node.node_name.as_str()),
            ("/", "listener")
        );
        assert_eq!(node.reader_gids.len(), 9);
        assert_eq!(node.writer_gids.len(), 10);
        assert!(node.reader_gids.iter().all(|g| g.entity_id.is_reader()));
        assert!(node.writer_gids.iter().all(|g| g.entity_id.is_writer()));
        // Re-encoding gives the same bytes (Fast DDS zeroes this message's padding).
        assert_eq!(info.to_payload(WireDistro::IronOrLater).unwrap(), payload);
    }
}
