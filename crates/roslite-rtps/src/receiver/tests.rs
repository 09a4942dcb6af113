use super::*;
use crate::types::{Count, EntityId, SequenceNumber};
use crate::wire::{HeartbeatRepr, InfoDstRepr, InfoReplyRepr, InfoSrcRepr, InfoTsRepr};
use roslite_cdr::Endianness;

fn header() -> HeaderRepr {
    HeaderRepr {
        version: ProtocolVersion::V2_2,
        vendor_id: VendorId::EPROSIMA,
        guid_prefix: GuidPrefix([1; 12]),
    }
}

fn heartbeat() -> Submessage<'static> {
    Submessage::Heartbeat(HeartbeatRepr {
        reader_id: EntityId::UNKNOWN,
        writer_id: EntityId::SEDP_PUBLICATIONS_ANNOUNCER,
        first_sn: SequenceNumber(1),
        last_sn: SequenceNumber(0),
        count: Count(3),
        final_flag: true,
        liveliness_flag: false,
    })
}

fn message(subs: &[Submessage<'_>], e: Endianness) -> Vec<u8> {
    let mut buf = Vec::new();
    header().emit(&mut buf);
    for sm in subs {
        sm.emit(&mut buf, e);
    }
    buf
}

/// Parses and returns (receiver state, submessage id) for every delivered submessage.
fn collect(
    datagram: &[u8],
    stats: &mut ReceiveStats,
) -> (Vec<(ReceiverState, SubmessageId)>, Result<(), ParseError>) {
    let mut seen = Vec::new();
    let r = parse_message(datagram, stats, |rx| {
        seen.push((rx.receiver.clone(), rx.submessage.id()));
    });
    (seen, r)
}

#[test]
fn info_submessages_change_state_in_order() {
    let ts = Time {
        seconds: 100,
        fraction: 1,
    };
    let other = GuidPrefix([2; 12]);
    let reply = Locator::udpv4(std::net::Ipv4Addr::LOCALHOST, 7411);
    let subs = [
        Submessage::InfoTs(InfoTsRepr {
            timestamp: Some(ts),
        }),
        Submessage::InfoDst(InfoDstRepr {
            guid_prefix: GuidPrefix([9; 12]),
        }),
        Submessage::InfoReply(InfoReplyRepr {
            unicast_locators: vec![reply],
            multicast_locators: None,
        }),
        heartbeat(),
        Submessage::InfoTs(InfoTsRepr { timestamp: None }),
        heartbeat(),
        Submessage::InfoSrc(InfoSrcRepr {
            version: ProtocolVersion::V2_5,
            vendor_id: VendorId::ECLIPSE_CYCLONE,
            guid_prefix: other,
        }),
        heartbeat(),
    ];
    let mut stats = ReceiveStats::default();
    // Mixed byte order in one message is legal: emit every other submessage big-endian.
    let mut buf = Vec::new();
    header().emit(&mut buf);
    for (i, sm) in subs.iter().enumerate() {
        sm.emit(
            &mut buf,
            if i % 2 == 0 {
                Endianness::Big
            } else {
                Endianness::Little
            },
        );
    }
    let (seen, r) = collect(&buf, &mut stats);
    r.unwrap();
    assert_eq!(stats.submessages, 8);
    assert_eq!(stats.malformed(), 0);
    let hbs: Vec<&ReceiverState> = seen
        .iter()
        .filter(|(_, id)| *id == SubmessageId::HEARTBEAT)
        .map(|(s, _)| s)
        .collect();
    assert_eq!(hbs.len(), 3);
    assert_eq!(hbs[0].timestamp, Some(ts));
    assert_eq!(hbs[0].dest_guid_prefix, GuidPrefix([9; 12]));
    assert!(hbs[0].is_for(GuidPrefix([9; 12])) && !hbs[0].is_for(other));
    assert_eq!(hbs[0].unicast_reply_locators, vec![reply]);
    assert_eq!(hbs[0].source_vendor_id, VendorId::EPROSIMA);
    assert_eq!(hbs[1].timestamp, None, "INFO_TS with I flag invalidates");
    assert_eq!(hbs[2].source_guid_prefix, other);
    assert_eq!(hbs[2].source_vendor_id, VendorId::ECLIPSE_CYCLONE);
    assert!(
        hbs[2].unicast_reply_locators.is_empty(),
        "INFO_SRC resets reply locators"
    );
    assert_eq!(
        hbs[2].dest_guid_prefix,
        GuidPrefix([9; 12]),
        "INFO_SRC keeps the destination"
    );
    assert_eq!(
        hbs[2]
            .source_guid(EntityId::SEDP_PUBLICATIONS_ANNOUNCER)
            .prefix,
        other
    );
}

#[test]
fn skips_unknown_and_vendor_submessages_by_length() {
    let mut buf = message(&[heartbeat()], Endianness::Little);
    // Unknown standard id 0x7e and vendor id 0x80 (Fast DDS trailer shape), then a heartbeat.
    buf.extend_from_slice(&[0x7e, 0x01, 0x04, 0x00, 1, 2, 3, 4]);
    buf.extend_from_slice(&[0x80, 0x01, 0x08, 0x00]);
    buf.extend_from_slice(&[0xff; 8]);
    heartbeat().emit(&mut buf, Endianness::Big);
    let mut stats = ReceiveStats::default();
    let (seen, r) = collect(&buf, &mut stats);
    r.unwrap();
    assert_eq!(seen.len(), 2);
    assert_eq!((stats.unknown_skipped, stats.vendor_skipped), (1, 1));
    assert_eq!(stats.malformed(), 0);
}

#[test]
fn invalid_submessage_drops_the_rest() {
    let mut buf = message(&[heartbeat()], Endianness::Little);
    let bad_at = buf.len();
    heartbeat().emit(&mut buf, Endianness::Little);
    heartbeat().emit(&mut buf, Endianness::Little);
    // firstSN = 0 in the second heartbeat.
    buf[bad_at + 4 + 8 + 4] = 0;
    let mut stats = ReceiveStats::default();
    let (seen, r) = collect(&buf, &mut stats);
    assert_eq!(r, Err(ParseError::Malformed));
    assert_eq!(
        seen.len(),
        1,
        "the valid first heartbeat was delivered, the third dropped"
    );
    assert_eq!(stats.invalid.heartbeat, 1);
    assert_eq!(stats.malformed(), 1);
}

#[test]
fn header_and_framing_errors_are_counted() {
    let mut stats = ReceiveStats::default();
    let good = message(&[heartbeat()], Endianness::Little);
    assert_eq!(
        parse_message(&good[..19], &mut stats, |_| {}),
        Err(ParseError::Truncated)
    );
    let mut magic = good.clone();
    magic[3] = b'X';
    assert_eq!(
        parse_message(&magic, &mut stats, |_| {}),
        Err(ParseError::Malformed)
    );
    let mut version = good.clone();
    version[4] = 3;
    assert_eq!(
        parse_message(&version, &mut stats, |_| {}),
        Err(ParseError::Unsupported)
    );
    // Partial submessage header.
    assert_eq!(
        parse_message(&good[..22], &mut stats, |_| {}),
        Err(ParseError::Truncated)
    );
    // octetsToNextHeader past the end.
    assert_eq!(
        parse_message(&good[..good.len() - 1], &mut stats, |_| {}),
        Err(ParseError::Malformed)
    );
    assert_eq!(stats.truncated_header, 1);
    assert_eq!(stats.bad_magic, 1);
    assert_eq!(stats.unsupported_version, 1);
    assert_eq!(stats.bad_submessage_length, 2);
    assert_eq!(stats.datagrams, 5);
    // A header-only message is valid and empty.
    assert_eq!(parse_message(&good[..20], &mut stats, |_| {}), Ok(()));
}

#[test]
fn zero_octets_to_next_header_extends_to_end() {
    let mut buf = message(&[heartbeat()], Endianness::Little);
    buf[22] = 0;
    buf[23] = 0;
    let mut stats = ReceiveStats::default();
    let (seen, r) = collect(&buf, &mut stats);
    r.unwrap();
    assert_eq!(seen.len(), 1);
    // PAD and INFO_TS with length 0 are literal zero-length bodies followed by more.
    let mut buf = message(&[], Endianness::Little);
    buf.extend_from_slice(&[0x01, 0x01, 0x00, 0x00]); // PAD
    buf.extend_from_slice(&[0x09, 0x03, 0x00, 0x00]); // INFO_TS, I flag
    heartbeat().emit(&mut buf, Endianness::Little);
    let (seen, r) = collect(&buf, &mut stats);
    r.unwrap();
    let ids: Vec<_> = seen.iter().map(|(_, id)| *id).collect();
    assert_eq!(
        ids,
        [
            SubmessageId::PAD,
            SubmessageId::INFO_TS,
            SubmessageId::HEARTBEAT
        ]
    );
}
