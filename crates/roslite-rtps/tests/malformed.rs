//! One regression packet per malformed-input class of docs/robustness.md §1 that concerns the wire
//! layer. Wire-level cases are wrapped in a datagram `[header][valid HEARTBEAT][bad][valid
//! HEARTBEAT]` and must deliver exactly the first heartbeat, drop the rest and bump the named
//! counter. Discovery-level cases must make the decoder return an error (the sample is dropped).

use std::net::Ipv4Addr;

use roslite_rtps::discovery::limits;
use roslite_rtps::wire::{HeaderRepr, SubmessageId};
use roslite_rtps::{
    parse_message, pid, Endianness, EndpointData, EndpointKind, EntityId, Guid, GuidPrefix,
    Locator, LocatorKind, ParameterList, ParameterListWriter, ParseError, ParticipantData,
    ProtocolVersion, ReceiveStats, SenderInfo, SequenceNumber, Submessage, VendorId,
};

// ---------------------------------------------------------------------------------------------
// Byte builders (little endian, E flag set).

fn le32(v: u32) -> [u8; 4] {
    v.to_le_bytes()
}

fn sn(v: i64) -> Vec<u8> {
    let mut b = ((v >> 32) as i32).to_le_bytes().to_vec();
    b.extend_from_slice(&(v as u32).to_le_bytes());
    b
}

fn ids() -> Vec<u8> {
    let mut b = EntityId::UNKNOWN.to_bytes().to_vec();
    b.extend_from_slice(&EntityId::new([0, 0, 1], 0x03).to_bytes());
    b
}

/// A submessage with the E flag and a correct `octetsToNextHeader`.
fn sub(id: SubmessageId, flags: u8, body: &[u8]) -> Vec<u8> {
    let mut b = vec![id.0, flags | 1];
    b.extend_from_slice(&(body.len() as u16).to_le_bytes());
    b.extend_from_slice(body);
    b
}

fn heartbeat_body(first: i64, last: i64) -> Vec<u8> {
    let mut b = ids();
    b.extend(sn(first));
    b.extend(sn(last));
    b.extend_from_slice(&le32(1));
    b
}

fn heartbeat(first: i64, last: i64) -> Vec<u8> {
    sub(SubmessageId::HEARTBEAT, 0, &heartbeat_body(first, last))
}

fn sn_set(base: i64, num_bits: u32, words: usize) -> Vec<u8> {
    let mut b = sn(base);
    b.extend_from_slice(&le32(num_bits));
    b.extend(std::iter::repeat_n(0xff, 4 * words));
    b
}

fn acknack(set: &[u8]) -> Vec<u8> {
    let mut b = ids();
    b.extend_from_slice(set);
    b.extend_from_slice(&le32(1));
    sub(SubmessageId::ACKNACK, 0, &b)
}

fn gap(start: i64, set: &[u8]) -> Vec<u8> {
    let mut b = ids();
    b.extend(sn(start));
    b.extend_from_slice(set);
    sub(SubmessageId::GAP, 0, &b)
}

/// DATA body with the given octetsToInlineQos and writerSN, then `rest`.
fn data(flags: u8, otiq: u16, writer_sn: i64, rest: &[u8]) -> Vec<u8> {
    let mut b = vec![0, 0];
    b.extend_from_slice(&otiq.to_le_bytes());
    b.extend(ids());
    b.extend(sn(writer_sn));
    b.extend_from_slice(rest);
    sub(SubmessageId::DATA, flags, &b)
}

const PAYLOAD: [u8; 8] = [0, 1, 0, 0, 1, 2, 3, 4];

fn data_frag(start: u32, count: u16, size: u16, sample: u32, data_len: usize) -> Vec<u8> {
    let mut b = vec![0, 0];
    b.extend_from_slice(&28u16.to_le_bytes());
    b.extend(ids());
    b.extend(sn(1));
    b.extend_from_slice(&le32(start));
    b.extend_from_slice(&count.to_le_bytes());
    b.extend_from_slice(&size.to_le_bytes());
    b.extend_from_slice(&le32(sample));
    b.extend(std::iter::repeat_n(0xab, data_len));
    sub(SubmessageId::DATA_FRAG, 0, &b)
}

fn header() -> Vec<u8> {
    let mut b = Vec::new();
    HeaderRepr::new(GuidPrefix([5; 12])).emit(&mut b);
    b
}

/// Runs a datagram, returns (delivered submessage ids, result, stats).
fn run(datagram: &[u8]) -> (Vec<SubmessageId>, Result<(), ParseError>, ReceiveStats) {
    let mut stats = ReceiveStats::default();
    let mut ids = Vec::new();
    let r = parse_message(datagram, &mut stats, |rx| ids.push(rx.submessage.id()));
    (ids, r, stats)
}

/// `bad` between two valid heartbeats: the first is delivered, `bad` and the second are
/// dropped, and `counter` counted it.
fn assert_dropped(bad: &[u8], counter: impl Fn(&ReceiveStats) -> u64) {
    let mut d = header();
    d.extend(heartbeat(1, 0));
    d.extend_from_slice(bad);
    d.extend(heartbeat(1, 0));
    let (ids, r, stats) = run(&d);
    assert!(r.is_err(), "accepted: {bad:02x?}");
    assert_eq!(ids, [SubmessageId::HEARTBEAT], "{bad:02x?}");
    assert_eq!(counter(&stats), 1, "{stats:?}");
    assert_eq!(stats.malformed(), 1, "{stats:?}");
}

/// `ok` between two valid heartbeats is delivered and nothing is counted as malformed.
fn assert_accepted(ok: &[u8]) -> Vec<SubmessageId> {
    let mut d = header();
    d.extend(heartbeat(1, 0));
    d.extend_from_slice(ok);
    d.extend(heartbeat(1, 0));
    let (ids, r, stats) = run(&d);
    assert_eq!(r, Ok(()), "{ok:02x?}");
    assert_eq!(stats.malformed(), 0, "{stats:?}");
    ids
}

// ---------------------------------------------------------------------------------------------
// Message framing (RTPS 2.5 §8.3.4.1).

#[test]
fn truncated_header_wrong_magic_unknown_major_version() {
    let h = header();
    let (ids, r, s) = run(&h[..19]);
    assert!(ids.is_empty() && r == Err(ParseError::Truncated) && s.truncated_header == 1);
    let mut magic = h.clone();
    magic[..4].copy_from_slice(b"RTPX");
    assert_eq!(run(&magic).2.bad_magic, 1);
    for major in [0, 1, 3, 255] {
        let mut v = h.clone();
        v[4] = major;
        v.extend(heartbeat(1, 0));
        let (ids, r, s) = run(&v);
        assert!(ids.is_empty() && r == Err(ParseError::Unsupported) && s.unsupported_version == 1);
    }
}

#[test]
fn partial_submessage_header() {
    assert_dropped(&[0x07, 0x01, 0x1c], |s| s.bad_submessage_length);
}

#[test]
fn octets_to_next_header_beyond_datagram() {
    let mut d = header();
    d.extend(heartbeat(1, 0));
    let mut hb = heartbeat(1, 0);
    hb[2..4].copy_from_slice(&0xfff0u16.to_le_bytes());
    d.extend(hb);
    let (ids, r, s) = run(&d);
    assert_eq!(
        (ids.len(), r, s.bad_submessage_length),
        (1, Err(ParseError::Malformed), 1)
    );
}

#[test]
fn octets_to_next_header_zero() {
    // Non-PAD/INFO_TS: extends to the end of the message (here: the last submessage).
    let mut d = header();
    let mut hb = heartbeat(1, 0);
    hb[2..4].copy_from_slice(&[0, 0]);
    d.extend(hb);
    let (ids, r, _) = run(&d);
    assert_eq!((ids, r), (vec![SubmessageId::HEARTBEAT], Ok(())));
    // PAD and INFO_TS(I): literal empty bodies, more submessages follow.
    let ids = assert_accepted(&[0x01, 0x01, 0, 0, 0x09, 0x03, 0, 0]);
    assert_eq!(ids.len(), 4);
    // INFO_TS without I and length 0: the timestamp is missing.
    assert_dropped(&[0x09, 0x01, 0, 0], |s| s.invalid.info_ts);
}

#[test]
fn octets_to_next_header_smaller_than_fixed_part() {
    // RustDDS #280/#281: a HEARTBEAT of 20 instead of 28 bytes, an INFO_DST of 8, a DATA of 12.
    assert_dropped(
        &sub(SubmessageId::HEARTBEAT, 0, &heartbeat_body(1, 0)[..20]),
        |s| s.invalid.heartbeat,
    );
    assert_dropped(&sub(SubmessageId::INFO_DST, 0, &[0; 8]), |s| {
        s.invalid.info_dst
    });
    assert_dropped(&sub(SubmessageId::DATA, 0, &[0; 12]), |s| s.invalid.data);
    assert_dropped(&sub(SubmessageId::INFO_SRC, 0, &[0; 16]), |s| {
        s.invalid.info_src
    });
}

#[test]
fn unknown_and_vendor_submessages_are_skipped() {
    let mut bad = sub(SubmessageId(0x55), 0, &[1; 12]);
    bad.extend(sub(SubmessageId(0x80), 0, &[2; 56]));
    bad.extend(sub(SubmessageId::SEC_PREFIX, 0, &[3; 8]));
    bad.extend(sub(SubmessageId(0xff), 0, &[4; 4]));
    let mut d = header();
    d.extend(&bad);
    d.extend(heartbeat(1, 0));
    let (ids, r, s) = run(&d);
    assert_eq!((ids.len(), r), (1, Ok(())));
    assert_eq!(
        (s.unknown_skipped, s.vendor_skipped, s.malformed()),
        (2, 2, 0)
    );
}

#[test]
fn unknown_flags_are_ignored_and_byte_order_may_change() {
    let mut hb = heartbeat(1, 0);
    hb[1] = 0xf9; // reserved bits set, E set
    let mut be = vec![0x07, 0x00, 0x00, 0x1c];
    be.extend(EntityId::UNKNOWN.to_bytes());
    be.extend(EntityId::new([0, 0, 1], 0x03).to_bytes());
    be.extend([0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    hb.extend(be);
    assert_eq!(assert_accepted(&hb).len(), 4);
}

// ---------------------------------------------------------------------------------------------
// Sequence numbers and sets.

#[test]
fn sequence_numbers_zero_negative_unknown() {
    for bad in [0, -1, SequenceNumber::UNKNOWN.0, i64::MIN] {
        assert_dropped(&data(0x04, 16, bad, &PAYLOAD), |s| s.invalid.data);
    }
    assert_accepted(&data(0x04, 16, i64::MAX, &PAYLOAD));
}

#[test]
fn sequence_number_sets_out_of_range() {
    assert_dropped(&acknack(&sn_set(1, 257, 9)), |s| s.invalid.acknack);
    assert_dropped(&acknack(&sn_set(1, u32::MAX, 0)), |s| s.invalid.acknack);
    assert_dropped(&acknack(&sn_set(0, 1, 1)), |s| s.invalid.acknack);
    assert_dropped(&acknack(&sn_set(-5, 0, 0)), |s| s.invalid.acknack);
    assert_dropped(&acknack(&sn_set(i64::MAX - 2, 8, 1)), |s| s.invalid.acknack);
    assert_dropped(&acknack(&sn_set(1, 64, 1)), |s| s.invalid.acknack); // bitmap cut short
    assert_dropped(&gap(1, &sn_set(0, 0, 0)), |s| s.invalid.gap);
    // Fast DDS's pre-emptive ACKNACK (base 0, no bits) is tolerated, only in ACKNACK.
    assert_accepted(&acknack(&sn_set(0, 0, 0)));
    assert_accepted(&acknack(&sn_set(1, 256, 8)));
}

#[test]
fn heartbeat_validity() {
    assert_dropped(&heartbeat(0, 0), |s| s.invalid.heartbeat);
    assert_dropped(&heartbeat(-1, 5), |s| s.invalid.heartbeat);
    assert_dropped(&heartbeat(5, 3), |s| s.invalid.heartbeat);
    assert_dropped(&heartbeat(1, -1), |s| s.invalid.heartbeat);
    // Empty: last = first - 1.
    assert_accepted(&heartbeat(5, 4));
    // An astronomically large lastSN is valid and costs nothing: it stays an interval.
    assert_accepted(&heartbeat(1, i64::MAX));
    let mut frag = ids();
    frag.extend(sn(1));
    frag.extend_from_slice(&le32(0)); // lastFragmentNum 0
    frag.extend_from_slice(&le32(1));
    assert_dropped(&sub(SubmessageId::HEARTBEAT_FRAG, 0, &frag), |s| {
        s.invalid.heartbeat_frag
    });
}

#[test]
fn gap_validity_and_huge_ranges() {
    assert_dropped(&gap(0, &sn_set(5, 0, 0)), |s| s.invalid.gap);
    assert_dropped(&gap(-7, &sn_set(5, 0, 0)), |s| s.invalid.gap);
    // gapStart > gapList.base: an empty interval, like Cyclone.
    assert_accepted(&gap(10, &sn_set(5, 0, 0)));
    // A 2^40-number range (CVE-2025-64438) parses in O(1) and is exposed as a Range.
    let mut d = header();
    d.extend(gap(1, &sn_set(1 << 40, 256, 8)));
    let mut stats = ReceiveStats::default();
    parse_message(&d, &mut stats, |rx| {
        if let Submessage::Gap(g) = rx.submessage {
            let r = g.irrelevant_range();
            assert_eq!(r.end.0 - r.start.0, (1 << 40) - 1);
            assert_eq!(g.gap_list.iter().count(), 256);
        }
    })
    .unwrap();
}

#[test]
fn nack_frag_validity() {
    let nack = |writer_sn: i64, base: u32, bits: u32, words: usize| {
        let mut b = ids();
        b.extend(sn(writer_sn));
        b.extend_from_slice(&le32(base));
        b.extend_from_slice(&le32(bits));
        b.extend(std::iter::repeat_n(0xff, 4 * words));
        b.extend_from_slice(&le32(1));
        sub(SubmessageId::NACK_FRAG, 0, &b)
    };
    assert_accepted(&nack(3, 1, 32, 1));
    assert_dropped(&nack(0, 1, 32, 1), |s| s.invalid.nack_frag);
    assert_dropped(&nack(3, 0, 32, 1), |s| s.invalid.nack_frag);
    assert_dropped(&nack(3, 1, 300, 10), |s| s.invalid.nack_frag);
    assert_dropped(&nack(3, u32::MAX, 2, 1), |s| s.invalid.nack_frag);
}

// ---------------------------------------------------------------------------------------------
// DATA / DATA_FRAG.

#[test]
fn data_octets_to_inline_qos() {
    assert_accepted(&data(0x04, 16, 1, &PAYLOAD));
    for bad in [0, 4, 12, 18, 40, 0xfffc] {
        assert_dropped(&data(0x04, bad, 1, &PAYLOAD), |s| s.invalid.data);
    }
    // Unused when neither Q, D nor K is set.
    assert_accepted(&data(0x00, 0, 1, &[]));
}

#[test]
fn data_flag_and_payload_consistency() {
    assert_dropped(&data(0x0c, 16, 1, &PAYLOAD), |s| s.invalid.data); // D and K
    assert_dropped(&data(0x04, 16, 1, &[0, 1]), |s| s.invalid.data); // no room for encapsulation
    assert_dropped(&data(0x02, 16, 1, &[]), |s| s.invalid.data); // Q without a list
}

#[test]
fn data_frag_fields() {
    assert_accepted(&data_frag(1, 1, 1024, 4000, 1024));
    // A short last fragment.
    assert_accepted(&data_frag(4, 1, 1024, 4000, 952));
    for (what, bad) in [
        ("fragmentSize 0", data_frag(1, 1, 0, 4000, 16)),
        ("fragmentStartingNum 0", data_frag(0, 1, 1024, 4000, 1024)),
        ("fragmentsInSubmessage 0", data_frag(1, 0, 1024, 4000, 1024)),
        (
            "last fragment number overflows",
            data_frag(u32::MAX, 2, 4, 8, 8),
        ),
        ("starts past the sample", data_frag(5, 1, 1024, 4000, 1024)),
        ("sampleSize 0", data_frag(1, 1, 1024, 0, 16)),
        (
            "body shorter than announced",
            data_frag(1, 2, 1024, 4000, 1500),
        ),
        (
            "short fragment that is not the last",
            data_frag(3, 2, 1024, 4000, 952),
        ),
    ] {
        eprintln!("case: {what}");
        assert_dropped(&bad, |s| s.invalid.data_frag);
    }
    // A 4 GiB sampleSize is accepted at the wire layer without allocating anything: the
    // reassembly layer must cap it (docs/robustness.md §1).
    assert_accepted(&data_frag(1, 1, 1024, u32::MAX, 1024));
}

// ---------------------------------------------------------------------------------------------
// Parameter lists (inline QoS at the wire layer).

fn qos_list(params: &[(u16, &[u8])], sentinel: bool) -> Vec<u8> {
    let mut b = Vec::new();
    for (id, value) in params {
        b.extend_from_slice(&id.to_le_bytes());
        b.extend_from_slice(&(value.len() as u16).to_le_bytes());
        b.extend_from_slice(value);
    }
    if sentinel {
        b.extend_from_slice(&[1, 0, 0, 0]);
    }
    b
}

#[test]
fn inline_qos_parameter_lengths_and_sentinel() {
    let ok = qos_list(&[(0x70, &[7; 16])], true);
    assert_accepted(&data(0x02, 16, 1, &ok));
    let unaligned = qos_list(&[(0x70, &[7; 15])], true);
    assert_dropped(&data(0x02, 16, 1, &unaligned), |s| s.invalid.data);
    let mut overlong = ok.clone();
    overlong[2] = 0x40; // length 64 > remaining
    assert_dropped(&data(0x02, 16, 1, &overlong), |s| s.invalid.data);
    let no_sentinel = qos_list(&[(0x70, &[7; 16])], false);
    assert_dropped(&data(0x06, 16, 1, &no_sentinel), |s| s.invalid.data);
    let mut frag_qos = data_frag(1, 1, 16, 16, 0);
    frag_qos[1] |= 0x02;
    frag_qos.extend(qos_list(&[(0x70, &[7; 15])], true));
    frag_qos.extend([0; 16]);
    let len = (frag_qos.len() - 4) as u16;
    frag_qos[2..4].copy_from_slice(&len.to_le_bytes());
    assert_dropped(&frag_qos, |s| s.invalid.data_frag);
}

#[test]
fn info_reply_locator_count() {
    let mut body = le32(u32::MAX).to_vec();
    body.extend([0; 24]);
    assert_dropped(&sub(SubmessageId::INFO_REPLY, 0, &body), |s| {
        s.invalid.info_reply
    });
    let mut body = le32(2).to_vec();
    body.extend([0; 24]); // only one of two
    assert_dropped(&sub(SubmessageId::INFO_REPLY, 0, &body), |s| {
        s.invalid.info_reply
    });
}

#[test]
fn info_ts_invalid_time() {
    assert_dropped(&sub(SubmessageId::INFO_TS, 0, &[0xff; 8]), |s| {
        s.invalid.info_ts
    });
    assert_accepted(&sub(
        SubmessageId::INFO_TS,
        0,
        &[0xff, 0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0xff],
    ));
}

// ---------------------------------------------------------------------------------------------
// Discovery data: parameter lists, strings, sequences, locators, durations, GUIDs.

const SENDER: SenderInfo = SenderInfo {
    vendor_id: VendorId::UNKNOWN,
    version: ProtocolVersion::V2_5,
};

fn participant() -> ParticipantData {
    let mut p = ParticipantData::new(GuidPrefix([5; 12]));
    p.metatraffic_unicast_locators = vec![Locator::udpv4(Ipv4Addr::LOCALHOST, 7410)];
    p.user_data = b"enclave=/;".to_vec();
    p
}

/// SPDP payload: a valid participant, then `extra` raw parameters, then the sentinel.
fn spdp_with(extra: &[(u16, Vec<u8>)]) -> Result<ParticipantData, ParseError> {
    let mut buf = Vec::new();
    participant()
        .write_parameters(&mut ParameterListWriter::with_encapsulation(
            &mut buf,
            Endianness::Little,
        ))
        .unwrap();
    for (id, value) in extra {
        buf.extend_from_slice(&id.to_le_bytes());
        buf.extend_from_slice(&(value.len() as u16).to_le_bytes());
        buf.extend_from_slice(value);
    }
    buf.extend_from_slice(&[1, 0, 0, 0]);
    ParticipantData::from_payload(&buf, SENDER)
}

/// SPDP payload built only from `params`.
fn spdp_only(params: &[(u16, Vec<u8>)]) -> Result<ParticipantData, ParseError> {
    let mut buf = vec![0, 3, 0, 0];
    buf.extend(qos_list(
        &params
            .iter()
            .map(|(i, v)| (*i, v.as_slice()))
            .collect::<Vec<_>>(),
        true,
    ));
    ParticipantData::from_payload(&buf, SENDER)
}

fn cdr_string(s: &[u8], declared_len: u32) -> Vec<u8> {
    let mut b = le32(declared_len).to_vec();
    b.extend_from_slice(s);
    while b.len() % 4 != 0 {
        b.push(0);
    }
    b
}

#[test]
fn parameter_shorter_than_its_type() {
    // CVE-2021-38445 class: lengths 0 or below the fixed type size.
    assert_eq!(spdp_with(&[(0x02, vec![0; 4])]), Err(ParseError::Malformed)); // lease 4 < 8
    assert_eq!(
        spdp_with(&[(0x32, vec![0; 20])]),
        Err(ParseError::Malformed)
    ); // locator 20 < 24
    assert_eq!(spdp_with(&[(0x0f, vec![])]), Err(ParseError::Malformed)); // domain id 0 bytes
    let guid_short = vec![(0x50u16, vec![5; 8])];
    assert_eq!(spdp_only(&guid_short), Err(ParseError::Malformed));
}

#[test]
fn duplicate_and_unknown_parameters() {
    assert_eq!(
        spdp_with(&[(0x58, le32(1).to_vec())]),
        Err(ParseError::Malformed)
    ); // 2nd set
    assert!(spdp_with(&[(0x0077, vec![0; 4])]).is_ok()); // unknown, ignorable
    assert_eq!(
        spdp_with(&[(0x4077, vec![0; 4])]),
        Err(ParseError::Unsupported)
    ); // must understand
       // Vendor range: skipped, even twice.
    assert!(spdp_with(&[(0x8007, vec![0; 4])]).is_ok());
    assert!(spdp_with(&[(0x8007, vec![0; 4]), (0x8007, vec![1; 4])]).is_ok());
    // A locator list may repeat its PID.
    let l = {
        let mut b = Vec::new();
        let mut w = ParameterListWriter::new(&mut b, Endianness::Little);
        w.param(pid::METATRAFFIC_UNICAST_LOCATOR, |v| {
            v.locator(&Locator::udpv4(Ipv4Addr::new(10, 0, 0, 1), 7410));
            Ok(())
        })
        .unwrap();
        b[4..].to_vec()
    };
    assert_eq!(
        spdp_with(&[(0x32, l)])
            .unwrap()
            .metatraffic_unicast_locators
            .len(),
        2
    );
}

#[test]
fn strings() {
    let name = |v: Vec<u8>| spdp_with(&[(0x62, v)]);
    assert_eq!(
        name(cdr_string(b"ab\0", 3)).unwrap().entity_name.as_deref(),
        Some("ab")
    );
    assert_eq!(
        name(cdr_string(b"ab\0", 0x7fff_ffff)),
        Err(ParseError::Malformed)
    ); // CVE-2023-39946
    assert_eq!(name(cdr_string(b"", 0)), Err(ParseError::Malformed)); // zero length
    assert_eq!(name(cdr_string(b"abc", 3)), Err(ParseError::Malformed)); // no NUL
    assert_eq!(name(cdr_string(b"a\0b\0", 4)), Err(ParseError::Malformed)); // inner NUL
    assert_eq!(
        name(cdr_string(b"\xff\xfe\0", 3)),
        Err(ParseError::Malformed)
    ); // not UTF-8
    let long = vec![b'x'; limits::MAX_NAME_LEN + 1];
    let mut long_z = long.clone();
    long_z.push(0);
    assert_eq!(
        name(cdr_string(&long_z, long_z.len() as u32)),
        Err(ParseError::Malformed)
    );
}

#[test]
fn sequences_checked_before_allocation() {
    // CVE-2025-62599 class: element counts far beyond what the bytes can hold.
    let mut props = le32(u32::MAX).to_vec();
    props.extend(cdr_string(b"a\0", 2));
    assert_eq!(spdp_with(&[(0x59, props)]), Err(ParseError::Malformed));
    let mut props = le32((limits::MAX_PROPERTIES + 1) as u32).to_vec();
    props.extend(std::iter::repeat_n(cdr_string(b"a\0", 2), 200).flatten());
    assert_eq!(spdp_only(&[(0x59, props)]), Err(ParseError::Malformed));
    let mut user_data = le32(0x00ff_ffff).to_vec();
    user_data.extend([1, 2, 3, 4]);
    assert_eq!(spdp_only(&[(0x2c, user_data)]), Err(ParseError::Malformed));
    let big = {
        let mut b = le32((limits::MAX_USER_DATA_LEN + 4) as u32).to_vec();
        b.extend(vec![0; limits::MAX_USER_DATA_LEN + 4]);
        b
    };
    assert_eq!(spdp_only(&[(0x2c, big)]), Err(ParseError::Malformed));
}

fn locator_value(kind: i32, port: u32, address: [u8; 16]) -> Vec<u8> {
    let mut b = kind.to_le_bytes().to_vec();
    b.extend_from_slice(&le32(port));
    b.extend_from_slice(&address);
    b
}

#[test]
fn locators() {
    let v4 = |a: [u8; 4]| {
        let mut addr = [0; 16];
        addr[12..].copy_from_slice(&a);
        addr
    };
    // Port 0 and ports beyond 16 bits on UDP (cyclonedds #1772, RustDDS #286).
    assert_eq!(
        spdp_with(&[(0x31, locator_value(1, 0, v4([127, 0, 0, 1])))]),
        Err(ParseError::Malformed)
    );
    assert_eq!(
        spdp_with(&[(0x31, locator_value(2, 70_000, [0; 16]))]),
        Err(ParseError::Malformed)
    );
    // Unknown kinds (Fast DDS SHM) are kept for the transport layer to ignore; INVALID is dropped.
    let p = spdp_with(&[
        (0x31, locator_value(19, 0, [9; 16])),
        (0x31, locator_value(-1, 0, [0; 16])),
        (0x31, locator_value(1, 7411, v4([239, 255, 0, 1]))), // multicast as unicast: policy
    ])
    .unwrap();
    let kinds: Vec<LocatorKind> = p.default_unicast_locators.iter().map(|l| l.kind).collect();
    assert_eq!(kinds, [LocatorKind::FASTDDS_SHM_V3, LocatorKind::UDPV4]);
    // More than the cap: the extra ones are ignored.
    let many: Vec<(u16, Vec<u8>)> = (0..limits::MAX_LOCATORS + 10)
        .map(|i| (0x31, locator_value(1, 7000 + i as u32, v4([10, 0, 0, 1]))))
        .collect();
    assert_eq!(
        spdp_with(&many).unwrap().default_unicast_locators.len(),
        limits::MAX_LOCATORS
    );
}

#[test]
fn durations() {
    let dur = |s: i32, f: u32| {
        let mut b = s.to_le_bytes().to_vec();
        b.extend_from_slice(&le32(f));
        b
    };
    let lease = |v| {
        spdp_only(&[
            (
                0x50,
                Guid::new(GuidPrefix([5; 12]), EntityId::PARTICIPANT)
                    .to_bytes()
                    .to_vec(),
            ),
            (0x02, v),
        ])
    };
    assert_eq!(lease(dur(-1, 0)), Err(ParseError::Malformed));
    assert_eq!(lease(dur(0, 0)), Err(ParseError::Malformed)); // zero lease
    assert!(lease(dur(i32::MAX, u32::MAX))
        .unwrap()
        .lease_duration
        .is_infinite());
    assert!(lease(dur(0, 1)).is_ok()); // any fraction is a valid binary fraction
}

#[test]
fn guids_of_the_wrong_kind() {
    let guid = |entity| Guid::new(GuidPrefix([5; 12]), entity).to_bytes().to_vec();
    assert_eq!(
        spdp_only(&[]),
        Err(ParseError::Malformed),
        "no participant GUID"
    );
    let writer = EntityId::new([0, 0, 1], 0x03);
    assert_eq!(
        spdp_only(&[(0x50, guid(writer))]),
        Err(ParseError::Malformed)
    );
    assert!(spdp_only(&[(0x50, guid(EntityId::PARTICIPANT))]).is_ok());

    let sedp = |params: &[(u16, Vec<u8>)], kind| {
        let mut all = vec![
            (0x05u16, cdr_string(b"rt/x\0", 5)),
            (0x07, cdr_string(b"T\0", 2)),
        ];
        all.extend_from_slice(params);
        let mut buf = vec![0, 3, 0, 0];
        buf.extend(qos_list(
            &all.iter()
                .map(|(i, v)| (*i, v.as_slice()))
                .collect::<Vec<_>>(),
            true,
        ));
        EndpointData::from_payload(&buf, kind, SENDER)
    };
    assert!(sedp(&[(0x5a, guid(writer))], EndpointKind::Writer).is_ok());
    assert_eq!(
        sedp(&[(0x5a, guid(writer))], EndpointKind::Reader),
        Err(ParseError::Malformed)
    );
    assert_eq!(
        sedp(&[], EndpointKind::Writer),
        Err(ParseError::Malformed),
        "no endpoint GUID"
    );
    let other_participant = Guid::new(GuidPrefix([6; 12]), EntityId::PARTICIPANT)
        .to_bytes()
        .to_vec();
    assert_eq!(
        sedp(
            &[(0x5a, guid(writer)), (0x50, other_participant)],
            EndpointKind::Writer
        ),
        Err(ParseError::Malformed)
    );
    // Enum values outside their range, KEEP_LAST depth 0.
    let history = |kind: u32, depth: i32| {
        let mut v = le32(kind).to_vec();
        v.extend_from_slice(&depth.to_le_bytes());
        sedp(&[(0x5a, guid(writer)), (0x40, v)], EndpointKind::Writer)
    };
    assert!(history(0, 10).is_ok() && history(1, -1).is_ok());
    assert_eq!(history(0, 0), Err(ParseError::Malformed));
    assert_eq!(history(7, 1), Err(ParseError::Malformed));
    let reliability = sedp(
        &[
            (0x5a, guid(writer)),
            (0x1a, vec![9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
        ],
        EndpointKind::Writer,
    );
    assert_eq!(reliability, Err(ParseError::Malformed));
    let boolean = sedp(
        &[(0x5a, guid(writer)), (0x43, vec![2, 0, 0, 0])],
        EndpointKind::Writer,
    );
    assert_eq!(boolean, Err(ParseError::Malformed));
}

#[test]
fn discovery_payload_encapsulation() {
    let mut payload = participant().to_payload(Endianness::Big).unwrap();
    assert!(ParticipantData::from_payload(&payload, SENDER).is_ok());
    payload[1] = 0x01; // CDR_BE, not a parameter list
    assert_eq!(
        ParticipantData::from_payload(&payload, SENDER),
        Err(ParseError::Unsupported)
    );
    payload[1] = 0x12; // PL_CDR2_BE: not what SPDP uses
    assert_eq!(
        ParticipantData::from_payload(&payload, SENDER),
        Err(ParseError::Unsupported)
    );
    let pl = ParameterList::parse(&[1, 0, 0, 0], Endianness::Little).unwrap();
    assert_eq!(
        ParticipantData::from_parameter_list(&pl, SENDER),
        Err(ParseError::Malformed)
    );
}
