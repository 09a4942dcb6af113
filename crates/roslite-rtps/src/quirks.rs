//! Vendor quirks: each one a named predicate with the vendor it concerns and why it exists.
//! Code elsewhere calls these instead of comparing vendor ids inline, so every
//! deviation from the spec is listed here.
//!
//! It depends on the value types only, so that every layer, down to the parameter lists, can
//! ask it.

use crate::types::{SequenceNumberSet, VendorId};

/// Whether a vendor-specific parameter id or submessage defined by `owner` may be interpreted
/// in a message from `sender`.
///
/// RTPS 2.5 §9.6.2.2.1: the vendor-specific range (bit 15) is private to each vendor, and ids
/// collide: 0x8007 is Fast DDS `PID_NETWORK_CONFIGURATION_SET` but Cyclone's participant
/// version info (Fast-DDS#2285, PR #4291). `VENDORID_UNKNOWN` owns nothing.
pub fn interprets_vendor_pid(sender: VendorId, owner: VendorId) -> bool {
    sender == owner && sender != VendorId::UNKNOWN
}

/// Fast DDS (eProsima 0x010f) and RTI send "pre-emptive" ACKNACKs with `bitmapBase = 0,
/// numBits = 0` before they have seen a HEARTBEAT, although RTPS 2.5 §8.3.5.5 requires
/// `bitmapBase ≥ 1`. Cyclone patches them to base 1 in non-strict mode; this crate accepts them
/// from any vendor and keeps base 0, so a writer sees "acknowledges nothing, requests nothing"
/// and should answer with a HEARTBEAT. `reader_sn_state` is the ACKNACK's.
pub fn is_preemptive_acknack(reader_sn_state: &SequenceNumberSet) -> bool {
    reader_sn_state.base().0 == 0 && reader_sn_state.num_bits() == 0
}

/// Fast DDS 3 (eProsima) appends a vendor-specific submessage with id 0x80 and a 56-byte body to
/// almost every datagram. It carries nothing a non-Fast-DDS peer needs; the receiver skips it by
/// length like any vendor-specific submessage. Its `wire::SubmessageId` value, as a plain byte
/// so that this module needs only the value types.
pub const FASTDDS_TRAILER_SUBMESSAGE: u8 = 0x80;

/// Fast DDS writes string-like USER_DATA (`enclave=/;`) with a trailing NUL (11 bytes), Cyclone
/// without (10 bytes) (docs/ros2-interop.md §4). Returns the bytes without one trailing NUL.
pub fn user_data_without_nul(bytes: &[u8]) -> &[u8] {
    bytes.strip_suffix(&[0]).unwrap_or(bytes)
}

/// Cyclone DDS (Eclipse 0x0110) correlates service replies with a 16-byte request header in
/// the payload instead of the `related_sample_identity` inline QoS that Fast DDS, Connext and
/// the DDS-RPC specification (§7.8.2) use: a request from it without that inline QoS carries
/// the header, and a client must send the header when every server it matched is Cyclone
/// (see [`crate::discovery::rpc`]).
pub fn correlates_by_request_header(vendor: VendorId) -> bool {
    vendor == VendorId::ECLIPSE_CYCLONE
}

/// Whether a vendor's SEDP announcements carry HISTORY. Fast DDS (eProsima) leaves it out
/// unless `fastdds.serialize_optional_qos` is set, so the decoder's default (KEEP_LAST 1)
/// would be a guess; rmw_fastrtps reports such endpoints' history as UNKNOWN, and so should a
/// graph built from SEDP.
pub fn announces_history(vendor: VendorId) -> bool {
    vendor != VendorId::EPROSIMA
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Count, EntityId, SequenceNumber};
    use crate::wire::AckNackRepr;

    #[test]
    fn vendor_pid_ownership() {
        assert!(interprets_vendor_pid(
            VendorId::EPROSIMA,
            VendorId::EPROSIMA
        ));
        assert!(!interprets_vendor_pid(
            VendorId::ECLIPSE_CYCLONE,
            VendorId::EPROSIMA
        ));
        assert!(!interprets_vendor_pid(VendorId::UNKNOWN, VendorId::UNKNOWN));
    }

    #[test]
    fn preemptive_acknack_shape() {
        let mut ack = AckNackRepr {
            reader_id: EntityId::SEDP_PUBLICATIONS_DETECTOR,
            writer_id: EntityId::SEDP_PUBLICATIONS_ANNOUNCER,
            reader_sn_state: SequenceNumberSet::empty(SequenceNumber(0)),
            count: Count(1),
            final_flag: false,
        };
        assert!(is_preemptive_acknack(&ack.reader_sn_state));
        ack.reader_sn_state = SequenceNumberSet::empty(SequenceNumber(1));
        assert!(!is_preemptive_acknack(&ack.reader_sn_state));
    }

    #[test]
    fn strips_one_nul() {
        assert_eq!(user_data_without_nul(b"enclave=/;\0"), b"enclave=/;");
        assert_eq!(user_data_without_nul(b"enclave=/;"), b"enclave=/;");
    }
}
