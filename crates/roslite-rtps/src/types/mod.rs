//! RTPS value types used inside submessages and discovery data (DDSI-RTPS 2.5 §8.2, §9.3).
//!
//! These are plain `Copy` values. Their wire forms are written by the submessage and parameter
//! list code; the helpers here only convert between a value and its fixed-size bytes.

mod locator;
mod seq;
mod time;

use std::fmt;

pub use locator::{Locator, LocatorKind};
pub use seq::{FragmentNumber, FragmentNumberSet, SequenceNumber, SequenceNumberSet};
pub use time::{Duration, Time};

/// The 12-byte prefix shared by every entity of one participant (RTPS 2.5 §8.2.4.3, §9.3.1.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GuidPrefix(pub [u8; 12]);

impl GuidPrefix {
    /// `GUIDPREFIX_UNKNOWN`: all zeros. In INFO_DST it means "every participant".
    pub const UNKNOWN: GuidPrefix = GuidPrefix([0; 12]);

    pub fn is_unknown(&self) -> bool {
        self.0 == [0; 12]
    }
}

impl fmt::Display for GuidPrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, chunk) in self.0.chunks(4).enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            for b in chunk {
                write!(f, "{b:02x}")?;
            }
        }
        Ok(())
    }
}

/// Identifies an entity within a participant: a 3-byte key and a 1-byte kind
/// (RTPS 2.5 §8.2.4.3, §9.3.1.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EntityId {
    pub key: [u8; 3],
    pub kind: u8,
}

impl EntityId {
    // RTPS 2.5 §9.3.1.2, Table 9.1: predefined (builtin) entity ids.
    pub const UNKNOWN: EntityId = EntityId::new([0, 0, 0], 0x00);
    pub const PARTICIPANT: EntityId = EntityId::new([0, 0, 1], 0xc1);
    pub const SEDP_TOPICS_ANNOUNCER: EntityId = EntityId::new([0, 0, 2], 0xc2);
    pub const SEDP_TOPICS_DETECTOR: EntityId = EntityId::new([0, 0, 2], 0xc7);
    pub const SEDP_PUBLICATIONS_ANNOUNCER: EntityId = EntityId::new([0, 0, 3], 0xc2);
    pub const SEDP_PUBLICATIONS_DETECTOR: EntityId = EntityId::new([0, 0, 3], 0xc7);
    pub const SEDP_SUBSCRIPTIONS_ANNOUNCER: EntityId = EntityId::new([0, 0, 4], 0xc2);
    pub const SEDP_SUBSCRIPTIONS_DETECTOR: EntityId = EntityId::new([0, 0, 4], 0xc7);
    pub const SPDP_PARTICIPANT_ANNOUNCER: EntityId = EntityId::new([0, 1, 0], 0xc2);
    pub const SPDP_PARTICIPANT_DETECTOR: EntityId = EntityId::new([0, 1, 0], 0xc7);
    pub const PARTICIPANT_MESSAGE_WRITER: EntityId = EntityId::new([0, 2, 0], 0xc2);
    pub const PARTICIPANT_MESSAGE_READER: EntityId = EntityId::new([0, 2, 0], 0xc7);
    // DDS-XTypes 1.3 §7.6.3.3.4: TypeLookup service endpoints (announced by Fast DDS 3).
    pub const TYPE_LOOKUP_REQUEST_WRITER: EntityId = EntityId::new([0, 3, 0], 0xc3);
    pub const TYPE_LOOKUP_REQUEST_READER: EntityId = EntityId::new([0, 3, 0], 0xc4);
    pub const TYPE_LOOKUP_REPLY_WRITER: EntityId = EntityId::new([0, 3, 1], 0xc3);
    pub const TYPE_LOOKUP_REPLY_READER: EntityId = EntityId::new([0, 3, 1], 0xc4);

    // RTPS 2.5 §9.3.1.2: the low six bits of the kind octet.
    pub const KIND_UNKNOWN: u8 = 0x00;
    pub const KIND_PARTICIPANT: u8 = 0x01;
    pub const KIND_WRITER_WITH_KEY: u8 = 0x02;
    pub const KIND_WRITER_NO_KEY: u8 = 0x03;
    pub const KIND_READER_NO_KEY: u8 = 0x04;
    pub const KIND_READER_WITH_KEY: u8 = 0x07;
    pub const KIND_WRITER_GROUP: u8 = 0x08;
    pub const KIND_READER_GROUP: u8 = 0x09;
    // ... and the two high bits.
    pub const KIND_BUILTIN: u8 = 0xc0;
    pub const KIND_VENDOR_SPECIFIC: u8 = 0x40;

    pub const fn new(key: [u8; 3], kind: u8) -> Self {
        Self { key, kind }
    }

    pub const fn from_bytes(b: [u8; 4]) -> Self {
        Self {
            key: [b[0], b[1], b[2]],
            kind: b[3],
        }
    }

    pub const fn to_bytes(self) -> [u8; 4] {
        [self.key[0], self.key[1], self.key[2], self.kind]
    }

    /// The entity-kind bits without the builtin/vendor-specific bits.
    const fn base_kind(self) -> u8 {
        self.kind & 0x3f
    }

    /// A writer, with or without key (RTPS 2.5 §9.3.1.2; groups excluded).
    pub const fn is_writer(self) -> bool {
        matches!(
            self.base_kind(),
            Self::KIND_WRITER_WITH_KEY | Self::KIND_WRITER_NO_KEY
        )
    }

    /// A reader, with or without key.
    pub const fn is_reader(self) -> bool {
        matches!(
            self.base_kind(),
            Self::KIND_READER_NO_KEY | Self::KIND_READER_WITH_KEY
        )
    }

    pub const fn is_with_key(self) -> bool {
        matches!(
            self.base_kind(),
            Self::KIND_WRITER_WITH_KEY | Self::KIND_READER_WITH_KEY
        )
    }

    pub const fn is_no_key(self) -> bool {
        matches!(
            self.base_kind(),
            Self::KIND_WRITER_NO_KEY | Self::KIND_READER_NO_KEY
        )
    }

    /// Builtin entities have both high kind bits set (`0xc0`).
    pub const fn is_builtin(self) -> bool {
        self.kind & 0xc0 == Self::KIND_BUILTIN
    }

    pub const fn is_vendor_specific(self) -> bool {
        self.kind & 0xc0 == Self::KIND_VENDOR_SPECIFIC
    }

    pub const fn is_unknown(self) -> bool {
        self.key[0] == 0 && self.key[1] == 0 && self.key[2] == 0 && self.kind == 0
    }
}

impl fmt::Display for EntityId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, d] = self.to_bytes();
        write!(f, "{a:02x}{b:02x}{c:02x}{d:02x}")
    }
}

/// Globally unique entity identifier: prefix + entity id (RTPS 2.5 §8.2.4.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Guid {
    pub prefix: GuidPrefix,
    pub entity_id: EntityId,
}

impl Guid {
    pub const UNKNOWN: Guid = Guid {
        prefix: GuidPrefix::UNKNOWN,
        entity_id: EntityId::UNKNOWN,
    };

    pub const fn new(prefix: GuidPrefix, entity_id: EntityId) -> Self {
        Self { prefix, entity_id }
    }

    pub fn from_bytes(b: [u8; 16]) -> Self {
        let mut prefix = [0u8; 12];
        let mut id = [0u8; 4];
        let (p, e) = b.split_at(12);
        prefix.copy_from_slice(p);
        id.copy_from_slice(e);
        Self {
            prefix: GuidPrefix(prefix),
            entity_id: EntityId::from_bytes(id),
        }
    }

    pub fn to_bytes(self) -> [u8; 16] {
        let mut out = [0u8; 16];
        let (p, e) = out.split_at_mut(12);
        p.copy_from_slice(&self.prefix.0);
        e.copy_from_slice(&self.entity_id.to_bytes());
        out
    }
}

impl fmt::Display for Guid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.prefix, self.entity_id)
    }
}

/// The implementation that sent a message (RTPS 2.5 §8.3.3.1.3, §9.3.1.5; assigned by the
/// OMG, list at <https://www.dds-foundation.org/dds-rtps-vendor-and-product-ids/>).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VendorId(pub [u8; 2]);

impl VendorId {
    /// `VENDORID_UNKNOWN`.
    pub const UNKNOWN: VendorId = VendorId([0x00, 0x00]);
    pub const RTI_CONNEXT: VendorId = VendorId([0x01, 0x01]);
    pub const OPENDDS: VendorId = VendorId([0x01, 0x03]);
    pub const EPROSIMA: VendorId = VendorId([0x01, 0x0f]);
    pub const ECLIPSE_CYCLONE: VendorId = VendorId([0x01, 0x10]);
    pub const RUSTDDS: VendorId = VendorId([0x01, 0x12]);
    pub const DUST_DDS: VendorId = VendorId([0x01, 0x13]);

    /// What roslite puts in the RTPS header and `PID_VENDORID`: [`VendorId::UNKNOWN`].
    ///
    /// The project has no OMG-assigned vendor id. Impersonating eProsima (0x010f) or Cyclone
    /// (0x0110) would make peers apply that vendor's private parameter ids, submessages and
    /// same-host shortcuts (shared memory, data sharing) to us (docs/ros2-interop.md §12). An
    /// unassigned value such as 0x01ff could be handed to another vendor later, after which we
    /// would impersonate *them*. `VENDORID_UNKNOWN` is the spec's own "no vendor" value: it can
    /// never collide with a real vendor and no peer attaches vendor-specific behaviour to it.
    pub const ROSLITE: VendorId = VendorId::UNKNOWN;
}

impl fmt::Display for VendorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02x}{:02x}", self.0[0], self.0[1])
    }
}

/// RTPS protocol version (RTPS 2.5 §8.3.3.1.2, §9.3.1.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProtocolVersion {
    pub major: u8,
    pub minor: u8,
}

impl ProtocolVersion {
    pub const V2_1: ProtocolVersion = ProtocolVersion { major: 2, minor: 1 };
    pub const V2_2: ProtocolVersion = ProtocolVersion { major: 2, minor: 2 };
    pub const V2_3: ProtocolVersion = ProtocolVersion { major: 2, minor: 3 };
    pub const V2_4: ProtocolVersion = ProtocolVersion { major: 2, minor: 4 };
    pub const V2_5: ProtocolVersion = ProtocolVersion { major: 2, minor: 5 };
    /// The version this crate implements and sends.
    pub const CURRENT: ProtocolVersion = Self::V2_5;
}

impl Default for ProtocolVersion {
    fn default() -> Self {
        Self::CURRENT
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// `Count_t`: HEARTBEAT/ACKNACK/NACK_FRAG counters that let receivers drop duplicates
/// (RTPS 2.5 §9.4.2.7). Compared with serial-number arithmetic by the state machines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Count(pub i32);

/// Identifies one sample: its writer and that writer's sequence number (DDS-RPC 1.0 §7.8.2,
/// `SampleIdentity`; carried in `PID_RELATED_SAMPLE_IDENTITY`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SampleIdentity {
    pub writer_guid: Guid,
    pub sequence_number: SequenceNumber,
}

impl SampleIdentity {
    /// `SAMPLE_IDENTITY_UNKNOWN`: unknown GUID, `SEQUENCENUMBER_UNKNOWN`.
    pub const UNKNOWN: SampleIdentity = SampleIdentity {
        writer_guid: Guid::UNKNOWN,
        sequence_number: SequenceNumber::UNKNOWN,
    };
}

/// `BuiltinEndpointSet_t` bit mask advertised in SPDP (RTPS 2.5 §8.5.3.2, §9.3.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct BuiltinEndpointSet(pub u32);

impl BuiltinEndpointSet {
    pub const PARTICIPANT_ANNOUNCER: u32 = 1 << 0;
    pub const PARTICIPANT_DETECTOR: u32 = 1 << 1;
    pub const PUBLICATIONS_ANNOUNCER: u32 = 1 << 2;
    pub const PUBLICATIONS_DETECTOR: u32 = 1 << 3;
    pub const SUBSCRIPTIONS_ANNOUNCER: u32 = 1 << 4;
    pub const SUBSCRIPTIONS_DETECTOR: u32 = 1 << 5;
    pub const PARTICIPANT_PROXY_ANNOUNCER: u32 = 1 << 6;
    pub const PARTICIPANT_PROXY_DETECTOR: u32 = 1 << 7;
    pub const PARTICIPANT_STATE_ANNOUNCER: u32 = 1 << 8;
    pub const PARTICIPANT_STATE_DETECTOR: u32 = 1 << 9;
    pub const PARTICIPANT_MESSAGE_DATA_WRITER: u32 = 1 << 10;
    pub const PARTICIPANT_MESSAGE_DATA_READER: u32 = 1 << 11;
    // DDS-XTypes 1.3 §7.6.3.3.4.
    pub const TYPE_LOOKUP_REQUEST_WRITER: u32 = 1 << 12;
    pub const TYPE_LOOKUP_REQUEST_READER: u32 = 1 << 13;
    pub const TYPE_LOOKUP_REPLY_WRITER: u32 = 1 << 14;
    pub const TYPE_LOOKUP_REPLY_READER: u32 = 1 << 15;
    pub const TOPICS_ANNOUNCER: u32 = 1 << 28;
    pub const TOPICS_DETECTOR: u32 = 1 << 29;

    /// SPDP + SEDP publications/subscriptions + participant message, both directions: the set
    /// a minimal participant without TypeLookup implements.
    pub const MINIMAL: BuiltinEndpointSet = BuiltinEndpointSet(
        Self::PARTICIPANT_ANNOUNCER
            | Self::PARTICIPANT_DETECTOR
            | Self::PUBLICATIONS_ANNOUNCER
            | Self::PUBLICATIONS_DETECTOR
            | Self::SUBSCRIPTIONS_ANNOUNCER
            | Self::SUBSCRIPTIONS_DETECTOR
            | Self::PARTICIPANT_MESSAGE_DATA_WRITER
            | Self::PARTICIPANT_MESSAGE_DATA_READER,
    );

    pub const fn contains(self, bits: u32) -> bool {
        self.0 & bits == bits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entity_kind_predicates() {
        let user_writer = EntityId::new([0, 0, 0x12], 0x03);
        assert!(user_writer.is_writer() && user_writer.is_no_key());
        assert!(!user_writer.is_builtin() && !user_writer.is_reader());
        assert!(EntityId::SEDP_PUBLICATIONS_ANNOUNCER.is_writer());
        assert!(EntityId::SEDP_PUBLICATIONS_ANNOUNCER.is_builtin());
        assert!(EntityId::SEDP_PUBLICATIONS_ANNOUNCER.is_with_key());
        assert!(EntityId::SPDP_PARTICIPANT_DETECTOR.is_reader());
        assert!(!EntityId::PARTICIPANT.is_writer() && !EntityId::PARTICIPANT.is_reader());
        assert!(EntityId::UNKNOWN.is_unknown());
        assert!(EntityId::new([1, 2, 3], 0x43).is_vendor_specific());
    }

    #[test]
    fn guid_bytes_round_trip_and_display() {
        let mut b = [0u8; 16];
        for (i, x) in b.iter_mut().enumerate() {
            *x = i as u8;
        }
        let g = Guid::from_bytes(b);
        assert_eq!(g.to_bytes(), b);
        assert_eq!(g.entity_id, EntityId::new([12, 13, 14], 15));
        assert_eq!(g.to_string(), "00010203.04050607.08090a0b:0c0d0e0f");
        assert!(GuidPrefix::UNKNOWN.is_unknown() && !g.prefix.is_unknown());
    }

    #[test]
    fn vendor_and_endpoint_set() {
        assert_eq!(VendorId::ROSLITE, VendorId::UNKNOWN);
        assert_ne!(VendorId::ROSLITE, VendorId::EPROSIMA);
        assert_eq!(BuiltinEndpointSet::MINIMAL.0, 0x0c3f);
        assert!(BuiltinEndpointSet(0xfc3f).contains(BuiltinEndpointSet::MINIMAL.0));
    }
}
