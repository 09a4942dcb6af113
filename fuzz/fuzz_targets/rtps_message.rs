//! The datagram receive path: the message receiver, then SPDP/SEDP decoding of every DATA
//! payload and the inline-QoS accessors; the raw input is also decoded directly as a
//! discovery payload so the parameter-list decoders are reached without a valid RTPS frame.

#![no_main]

use libfuzzer_sys::fuzz_target;
use roslite_rtps::{
    parse_message, EndpointData, EndpointKind, ParticipantData, ProtocolVersion, ReceiveStats,
    SenderInfo, Submessage, VendorId,
};

fn decode_discovery(payload: &[u8], sender: SenderInfo) {
    let _ = ParticipantData::from_payload(payload, sender);
    let _ = EndpointData::from_payload(payload, EndpointKind::Writer, sender);
    let _ = EndpointData::from_payload(payload, EndpointKind::Reader, sender);
}

fuzz_target!(|data: &[u8]| {
    let mut stats = ReceiveStats::default();
    let _ = parse_message(data, &mut stats, |rx| {
        let sender = SenderInfo::from_receiver(rx.receiver);
        if let Submessage::Data(d) = rx.submessage {
            if let Some(p) = d.payload {
                decode_discovery(p.bytes, sender);
            }
            if let Some(q) = d.inline_qos {
                let _ = q.related_sample_identity(sender.vendor_id);
                let _ = (q.key_hash(), q.status_info());
            }
        }
    });
    let sender = SenderInfo { vendor_id: VendorId::EPROSIMA, version: ProtocolVersion::V2_2 };
    decode_discovery(data, sender);
});
