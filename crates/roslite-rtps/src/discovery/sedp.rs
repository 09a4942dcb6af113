//! SEDP, the Simple Endpoint Discovery Protocol (RTPS 2.5 §8.5.4).
//!
//! Two reliable, transient-local builtin topics carry the endpoints of each participant:
//! DATA(w) from the publications announcer (0x000003c2) to the publications detector
//! (0x000003c7), DATA(r) from the subscriptions announcer (0x000004c2) to the subscriptions
//! detector (0x000004c7). Each sample is keyed by the endpoint GUID; deleting an endpoint
//! disposes its instance (§8.5.4.2: "the Writer ... will unregister/dispose the instance").
//! A builtin endpoint is matched with a remote participant's counterpart only if that
//! participant announced it in `PID_BUILTIN_ENDPOINT_SET` (§8.5.3.2, §8.5.4.3).
//!
//! This module maps builtin endpoints to their set bits and converts between samples and
//! [`EndpointData`]; the stateful writers and readers come from [`crate::endpoint`] and are
//! run by [`crate::participant`].

use roslite_cdr::Endianness;

use super::spdp::{disposal_inline_qos, STATUS_INFO_DISPOSED, STATUS_INFO_UNREGISTERED};
use super::{EndpointData, EndpointKind, SenderInfo};
use crate::error::{EmitError, ParseError};
use crate::parameter_list::{pid, ParameterList, ParameterListWriter};
use crate::types::{BuiltinEndpointSet, EntityId, Guid};

/// One builtin SEDP endpoint of ours and the remote endpoint it pairs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BuiltinPair {
    /// Our endpoint.
    pub local: EntityId,
    /// The remote participant's counterpart.
    pub remote: EntityId,
    /// The bit the remote participant must announce for `remote` (RTPS 2.5 §9.3.2,
    /// `BuiltinEndpointSet_t`).
    pub remote_bit: u32,
    /// What the endpoint carries.
    pub topic: EndpointKind,
}

/// Our SEDP writers, each paired with the remote detector.
pub const ANNOUNCERS: [BuiltinPair; 2] = [
    BuiltinPair {
        local: EntityId::SEDP_PUBLICATIONS_ANNOUNCER,
        remote: EntityId::SEDP_PUBLICATIONS_DETECTOR,
        remote_bit: BuiltinEndpointSet::PUBLICATIONS_DETECTOR,
        topic: EndpointKind::Writer,
    },
    BuiltinPair {
        local: EntityId::SEDP_SUBSCRIPTIONS_ANNOUNCER,
        remote: EntityId::SEDP_SUBSCRIPTIONS_DETECTOR,
        remote_bit: BuiltinEndpointSet::SUBSCRIPTIONS_DETECTOR,
        topic: EndpointKind::Reader,
    },
];

/// Our SEDP readers, each paired with the remote announcer.
pub const DETECTORS: [BuiltinPair; 2] = [
    BuiltinPair {
        local: EntityId::SEDP_PUBLICATIONS_DETECTOR,
        remote: EntityId::SEDP_PUBLICATIONS_ANNOUNCER,
        remote_bit: BuiltinEndpointSet::PUBLICATIONS_ANNOUNCER,
        topic: EndpointKind::Writer,
    },
    BuiltinPair {
        local: EntityId::SEDP_SUBSCRIPTIONS_DETECTOR,
        remote: EntityId::SEDP_SUBSCRIPTIONS_ANNOUNCER,
        remote_bit: BuiltinEndpointSet::SUBSCRIPTIONS_ANNOUNCER,
        topic: EndpointKind::Reader,
    },
];

/// The announcer that publishes endpoints of side `kind`.
pub fn announcer_for(kind: EndpointKind) -> EntityId {
    match kind {
        EndpointKind::Writer => EntityId::SEDP_PUBLICATIONS_ANNOUNCER,
        EndpointKind::Reader => EntityId::SEDP_SUBSCRIPTIONS_ANNOUNCER,
    }
}

/// The side of the endpoints a detector receives, if `id` is one of ours.
pub fn detector_topic(id: EntityId) -> Option<EndpointKind> {
    DETECTORS.iter().find(|p| p.local == id).map(|p| p.topic)
}

/// The serialized DATA(w)/DATA(r) of a local endpoint (PL_CDR_LE).
///
/// # Errors
/// As [`EndpointData::to_payload`].
pub fn announcement(data: &EndpointData) -> Result<Vec<u8>, EmitError> {
    data.to_payload(Endianness::Little)
}

/// The inline QoS of the sample that disposes endpoint `guid`: `PID_KEY_HASH` (the GUID) and
/// `PID_STATUS_INFO` = disposed | unregistered, sent with an empty payload (a DATA without D
/// or K flag), the form Fast DDS uses and Cyclone accepts (docs/ros2-interop.md §12).
pub fn disposal(guid: Guid) -> Vec<u8> {
    disposal_inline_qos(guid)
}

/// The inline QoS of an announcement of endpoint `guid`: `PID_KEY_HASH` = the GUID
/// (RTPS 2.5 §9.6.3.8; SEDP is keyed by it, and Fast DDS sends it too).
pub fn announcement_inline_qos(guid: Guid) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut w = ParameterListWriter::new(&mut buf, Endianness::Little);
    // A 16-byte value always fits a parameter.
    let _ = w.raw(pid::KEY_HASH, &guid.to_bytes());
    w.finish();
    buf
}

/// What a received SEDP sample says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SedpMessage {
    /// A new or updated endpoint.
    Announce(Box<EndpointData>),
    /// The endpoint was deleted.
    Dispose(Guid),
}

/// Decodes a sample received by a detector for side `kind`.
///
/// `status_info` and `key_hash` come from the sample's inline QoS. A disposal names its
/// endpoint by the key hash, else by `PID_ENDPOINT_GUID` (or `PID_KEY_HASH`) in the payload.
///
/// # Errors
/// [`ParseError`] for a sample that is neither a valid announcement nor an identifiable
/// disposal.
pub fn parse_sample(
    kind: EndpointKind,
    payload: &[u8],
    status_info: Option<u32>,
    key_hash: Option<[u8; 16]>,
    sender: SenderInfo,
) -> Result<SedpMessage, ParseError> {
    if status_info.is_some_and(|s| s & (STATUS_INFO_DISPOSED | STATUS_INFO_UNREGISTERED) != 0) {
        if let Some(key) = key_hash {
            return Ok(SedpMessage::Dispose(Guid::from_bytes(key)));
        }
        let pl = ParameterList::from_payload(payload)?;
        let value = pl
            .get(pid::ENDPOINT_GUID)
            .or_else(|| pl.get(pid::KEY_HASH))
            .ok_or(ParseError::Malformed)?;
        let bytes: [u8; 16] = value
            .get(..16)
            .and_then(|b| b.try_into().ok())
            .ok_or(ParseError::Malformed)?;
        return Ok(SedpMessage::Dispose(Guid::from_bytes(bytes)));
    }
    let data = EndpointData::from_payload(payload, kind, sender)?;
    Ok(SedpMessage::Announce(Box::new(data)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{GuidPrefix, ProtocolVersion, VendorId};

    const SENDER: SenderInfo = SenderInfo {
        vendor_id: VendorId::UNKNOWN,
        version: ProtocolVersion::V2_5,
    };

    #[test]
    fn announcement_round_trip() {
        let guid = Guid::new(
            GuidPrefix([4; 12]),
            EntityId::new([0, 0, 9], EntityId::KIND_READER_NO_KEY),
        );
        let d = EndpointData::new(
            EndpointKind::Reader,
            guid,
            "rt/chatter",
            "std_msgs::msg::dds_::String_",
        );
        let payload = announcement(&d).unwrap();
        assert_eq!(
            parse_sample(EndpointKind::Reader, &payload, None, None, SENDER),
            Ok(SedpMessage::Announce(Box::new(d)))
        );
        assert!(parse_sample(EndpointKind::Writer, &payload, None, None, SENDER).is_err());
    }

    #[test]
    fn disposal_round_trip() {
        let guid = Guid::new(
            GuidPrefix([4; 12]),
            EntityId::new([0, 0, 9], EntityId::KIND_WRITER_NO_KEY),
        );
        let qos = disposal(guid);
        let qos = ParameterList::parse(&qos, Endianness::Little).unwrap();
        let status = qos.status_info().unwrap();
        let key = qos.key_hash().unwrap();
        assert_eq!(status, Some(3));
        assert_eq!(
            parse_sample(EndpointKind::Writer, &[], status, key, SENDER),
            Ok(SedpMessage::Dispose(guid))
        );
        // The other form: the key serialized in the payload, no key hash.
        let mut payload = Vec::new();
        let mut w = ParameterListWriter::with_encapsulation(&mut payload, Endianness::Little);
        w.param(pid::ENDPOINT_GUID, |v| {
            v.guid(guid);
            Ok(())
        })
        .unwrap();
        w.finish();
        assert_eq!(
            parse_sample(EndpointKind::Writer, &payload, status, None, SENDER),
            Ok(SedpMessage::Dispose(guid))
        );
        assert!(parse_sample(EndpointKind::Writer, &[], status, None, SENDER).is_err());
        let a = announcement_inline_qos(guid);
        let a = ParameterList::parse(&a, Endianness::Little).unwrap();
        assert_eq!(a.key_hash().unwrap(), Some(guid.to_bytes()));
        assert_eq!(a.status_info().unwrap(), None);
    }

    #[test]
    fn pairs() {
        assert_eq!(
            detector_topic(EntityId::SEDP_PUBLICATIONS_DETECTOR),
            Some(EndpointKind::Writer)
        );
        assert_eq!(detector_topic(EntityId::SEDP_PUBLICATIONS_ANNOUNCER), None);
        assert_eq!(
            announcer_for(EndpointKind::Reader),
            EntityId::SEDP_SUBSCRIPTIONS_ANNOUNCER
        );
        let bits: u32 = ANNOUNCERS
            .iter()
            .chain(DETECTORS.iter())
            .map(|p| p.remote_bit)
            .sum();
        assert_eq!(bits, 0x3c);
    }
}
