use std::net::Ipv4Addr;

use super::*;
use crate::parameter_list::{ParameterList, ParameterListWriter};
use crate::types::{BuiltinEndpointSet, EntityId, GuidPrefix};

const SENDER: SenderInfo = SenderInfo {
    vendor_id: VendorId::UNKNOWN,
    version: ProtocolVersion::V2_5,
};

fn participant() -> ParticipantData {
    let mut p = ParticipantData::new(GuidPrefix([3; 12]));
    p.domain_id = Some(42);
    p.domain_tag = "lab".into();
    p.default_unicast_locators = vec![Locator::udpv4(Ipv4Addr::LOCALHOST, 7411)];
    p.default_multicast_locators = vec![Locator::udpv4(Ipv4Addr::new(239, 255, 0, 1), 7401)];
    p.metatraffic_unicast_locators = vec![
        Locator::udpv4(Ipv4Addr::LOCALHOST, 7410),
        Locator {
            kind: LocatorKind::FASTDDS_SHM_V3,
            port: 0,
            address: [5; 16],
        },
    ];
    p.metatraffic_multicast_locators = vec![Locator::udpv4(Ipv4Addr::new(239, 255, 0, 1), 7400)];
    p.lease_duration = Duration::from_secs(20);
    p.builtin_endpoints = BuiltinEndpointSet(0xfc3f);
    p.user_data = b"enclave=/;".to_vec();
    p.entity_name = Some("/".into());
    p.properties = vec![
        ("__Pid".into(), "26194".into()),
        ("k".into(), String::new()),
    ];
    p
}

fn endpoint(kind: EndpointKind) -> EndpointData {
    let entity = match kind {
        EndpointKind::Writer => EntityId::new([0, 0, 0x12], EntityId::KIND_WRITER_NO_KEY),
        EndpointKind::Reader => EntityId::new([0, 0, 0x13], EntityId::KIND_READER_NO_KEY),
    };
    let mut d = EndpointData::new(
        kind,
        Guid::new(GuidPrefix([3; 12]), entity),
        "rt/chatter",
        "std_msgs::msg::dds_::String_",
    );
    d.durability = DurabilityKind::TransientLocal;
    d.history = History::KeepLast { depth: 10 };
    d.deadline = Duration::from_millis(250);
    d.liveliness = Liveliness {
        kind: LivelinessKind::ManualByTopic,
        lease_duration: Duration::from_secs(3),
    };
    d.ownership = OwnershipKind::Exclusive;
    d.partitions = vec!["a".into(), "bc".into()];
    d.user_data = b"typehash=RIHS01_df66;".to_vec();
    d.unicast_locators = vec![Locator::udpv4(Ipv4Addr::LOCALHOST, 7001)];
    d.expects_inline_qos = kind == EndpointKind::Reader;
    d.data_representation = vec![data_representation::XCDR, data_representation::XCDR2];
    d
}

#[test]
fn participant_round_trips_in_both_byte_orders() {
    let p = participant();
    for e in [Endianness::Big, Endianness::Little] {
        let payload = p.to_payload(e).unwrap();
        assert_eq!(
            ParticipantData::from_payload(&payload, SENDER),
            Ok(p.clone())
        );
    }
}

#[test]
fn endpoint_round_trips_in_both_byte_orders() {
    for kind in [EndpointKind::Writer, EndpointKind::Reader] {
        let d = endpoint(kind);
        for e in [Endianness::Big, Endianness::Little] {
            let payload = d.to_payload(e).unwrap();
            assert_eq!(
                EndpointData::from_payload(&payload, kind, SENDER),
                Ok(d.clone())
            );
        }
    }
}

/// What Cyclone sends for a default-QoS writer: names, GUID, HISTORY and nothing else.
fn minimal(entity_kind: u8, e: Endianness) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut w = ParameterListWriter::with_encapsulation(&mut buf, e);
    w.param(pid::TOPIC_NAME, |v| v.string("rt/chatter"))
        .unwrap();
    w.param(pid::TYPE_NAME, |v| v.string("std_msgs::msg::dds_::String_"))
        .unwrap();
    w.param(pid::ENDPOINT_GUID, |v| {
        v.guid(Guid::new(
            GuidPrefix([4; 12]),
            EntityId::new([0, 0, 2], entity_kind),
        ));
        Ok(())
    })
    .unwrap();
    w.finish();
    buf
}

#[test]
fn absent_policies_take_side_specific_defaults() {
    let e = Endianness::Little;
    let writer = EndpointData::from_payload(
        &minimal(EntityId::KIND_WRITER_NO_KEY, e),
        EndpointKind::Writer,
        SENDER,
    )
    .unwrap();
    assert_eq!(writer.reliability.kind, ReliabilityKind::Reliable);
    assert_eq!(
        writer.reliability.max_blocking_time.to_std(),
        Some(std::time::Duration::from_millis(100))
    );
    assert_eq!(writer.durability, DurabilityKind::Volatile);
    assert_eq!(writer.history, History::KeepLast { depth: 1 });
    assert!(writer.deadline.is_infinite() && writer.lifespan.is_infinite());
    assert_eq!(writer.liveliness.kind, LivelinessKind::Automatic);
    assert!(writer.liveliness.lease_duration.is_infinite());
    assert_eq!(
        writer.participant_guid,
        Guid::new(GuidPrefix([4; 12]), EntityId::PARTICIPANT)
    );
    assert_eq!(writer.data_representation, vec![data_representation::XCDR]);
    assert_eq!(writer.vendor_id, SENDER.vendor_id);

    let reader = EndpointData::from_payload(
        &minimal(EntityId::KIND_READER_NO_KEY, e),
        EndpointKind::Reader,
        SENDER,
    )
    .unwrap();
    assert_eq!(reader.reliability.kind, ReliabilityKind::BestEffort);

    // A reader GUID announced as a writer is rejected.
    let wrong = EndpointData::from_payload(
        &minimal(EntityId::KIND_READER_NO_KEY, e),
        EndpointKind::Writer,
        SENDER,
    );
    assert_eq!(wrong, Err(ParseError::Malformed));
}

#[test]
fn must_understand_and_vendor_parameters() {
    let e = Endianness::Big;
    let with = |id: ParameterId| {
        let mut buf = Vec::new();
        let mut w = ParameterListWriter::new(&mut buf, e);
        participant().write_parameters(&mut w).unwrap();
        w.raw(id, &[0; 4]).unwrap();
        w.finish();
        buf
    };
    let decode = |bytes: &[u8]| {
        ParticipantData::from_parameter_list(&ParameterList::parse(bytes, e).unwrap(), SENDER)
    };
    assert!(
        decode(&with(ParameterId(0x0077))).is_ok(),
        "unknown, not must-understand"
    );
    assert_eq!(
        decode(&with(ParameterId(0x4077))),
        Err(ParseError::Unsupported)
    );
    assert!(
        decode(&with(ParameterId(0x8007))).is_ok(),
        "vendor-specific: skipped"
    );
    assert!(
        decode(&with(ParameterId(0xc007))).is_ok(),
        "vendor-specific + M: not ours"
    );
    assert_eq!(
        decode(&with(pid::DOMAIN_ID)),
        Err(ParseError::Malformed),
        "duplicate"
    );
}

#[test]
fn user_data_entries_tolerate_nul() {
    let entries: Vec<_> = user_data_entries(b"enclave=/;\0").collect();
    assert_eq!(entries, [("enclave", "/")]);
    let entries: Vec<_> = user_data_entries(b"typehash=RIHS01_ab;clientid=1;junk;").collect();
    assert_eq!(entries, [("typehash", "RIHS01_ab"), ("clientid", "1")]);
}

#[test]
fn pairs_another_transport_may_carry_are_those_whose_history_it_can_keep() {
    use super::matching::carriable_elsewhere;
    let writer = |durability, history, lifespan, lease| {
        let mut d = EndpointData::new(EndpointKind::Writer, Guid::UNKNOWN, "rt/t", "T");
        (d.durability, d.history, d.lifespan) = (durability, history, lifespan);
        d.liveliness.lease_duration = lease;
        d
    };
    let reader = |durability| {
        let mut d = EndpointData::new(EndpointKind::Reader, Guid::UNKNOWN, "rt/t", "T");
        d.durability = durability;
        d
    };
    // A keyed topic's writer: its history keeps `depth` per instance.
    let keyed = |mut d: EndpointData| {
        d.guid = crate::sim::guid(1, 1, crate::types::EntityId::KIND_WRITER_WITH_KEY);
        d
    };
    let (volatile, local) = (DurabilityKind::Volatile, DurabilityKind::TransientLocal);
    let (last, all) = (History::KeepLast { depth: 3 }, History::KeepAll);
    let (forever, a_minute) = (Duration::INFINITE, Duration::from_secs(60));
    let cases = [
        (
            writer(volatile, all, forever, forever),
            reader(volatile),
            true,
        ),
        (
            writer(volatile, last, a_minute, forever),
            reader(volatile),
            true,
        ),
        (writer(local, last, forever, forever), reader(local), true),
        (
            writer(local, last, forever, forever),
            reader(volatile),
            true,
        ),
        (writer(local, all, forever, forever), reader(local), false),
        (writer(local, last, a_minute, forever), reader(local), false),
        (
            writer(volatile, last, forever, a_minute),
            reader(volatile),
            false,
        ),
        (
            writer(DurabilityKind::Transient, last, forever, forever),
            reader(local),
            false,
        ),
        (
            writer(local, last, forever, forever),
            reader(DurabilityKind::Persistent),
            false,
        ),
        (
            keyed(writer(local, last, forever, forever)),
            reader(local),
            false,
        ),
        (
            keyed(writer(volatile, last, forever, forever)),
            reader(volatile),
            true,
        ),
    ];
    for (i, (w, r, carriable)) in cases.iter().enumerate() {
        assert_eq!(carriable_elsewhere(w, r), *carriable, "case {i}");
    }
}

fn filtered_reader() -> EndpointData {
    let mut d = endpoint(EndpointKind::Reader);
    d.content_filter = Some(ContentFilterProperty {
        content_filtered_topic_name: "rt/chatter_filtered_name_0".into(),
        related_topic_name: "rt/chatter".into(),
        filter_class_name: content_filter::DDSSQL.into(),
        filter_expression: "data LIKE %0".into(),
        expression_parameters: vec!["'Hello%'".into()],
    });
    d
}

#[test]
fn a_readers_content_filter_round_trips_in_both_byte_orders() {
    let d = filtered_reader();
    for e in [Endianness::Big, Endianness::Little] {
        let payload = d.to_payload(e).unwrap();
        let back = EndpointData::from_payload(&payload, EndpointKind::Reader, SENDER).unwrap();
        assert_eq!(back, d);
        assert!(!back.content_filter_malformed);
    }
}

/// A DATA(r) with `value` as its `PID_CONTENT_FILTER_PROPERTY`.
fn reader_with_filter_value(value: &[u8]) -> Vec<u8> {
    let d = endpoint(EndpointKind::Reader);
    let mut buf = Vec::new();
    let mut w = ParameterListWriter::with_encapsulation(&mut buf, Endianness::Little);
    d.write_parameters(&mut w).unwrap();
    w.raw(pid::CONTENT_FILTER_PROPERTY, value).unwrap();
    w.finish();
    buf
}

#[test]
fn a_malformed_content_filter_is_dropped_and_the_reader_kept() {
    let good = filtered_reader().to_payload(Endianness::Little).unwrap();
    let list = ParameterList::from_payload(&good).unwrap();
    let value = list.get(pid::CONTENT_FILTER_PROPERTY).unwrap();
    // A string length past the end, a parameter count past any bound, a truncated value.
    let mut past_end = value.to_vec();
    past_end[..4].copy_from_slice(&0x7fff_ffffu32.to_le_bytes());
    let truncated = value[..value.len() / 2].to_vec();
    for broken in [past_end, truncated, vec![0; 4]] {
        let payload = reader_with_filter_value(&broken);
        let d = EndpointData::from_payload(&payload, EndpointKind::Reader, SENDER).unwrap();
        assert_eq!(d.content_filter, None);
        assert!(d.content_filter_malformed);
        assert_eq!(
            d.guid,
            endpoint(EndpointKind::Reader).guid,
            "the reader is kept"
        );
    }
    // Two properties: a duplicate single-valued parameter, as for every other one.
    let mut twice = Vec::new();
    let mut w = ParameterListWriter::with_encapsulation(&mut twice, Endianness::Little);
    filtered_reader().write_parameters(&mut w).unwrap();
    w.raw(pid::CONTENT_FILTER_PROPERTY, value).unwrap();
    w.finish();
    assert_eq!(
        EndpointData::from_payload(&twice, EndpointKind::Reader, SENDER),
        Err(ParseError::Malformed)
    );
}
