//! Keyed topics as rclpy (Fast DDS 3.2.3, Kilted) puts them on the wire, from
//! `tests/data/kilted-fastdds-keyed.pcap` (its README says how it was recorded): the endpoints
//! of a keyed type have the entity kinds with key, and [`KeyHasher`] computes, sample by sample,
//! the `PID_KEY_HASH` rclpy sent, plain and MD5 alike.

mod common;

use std::collections::BTreeMap;

use roslite_cdr::key::{KeyCollection, KeyElement, KeyMember, KeyStruct};
use roslite_rtps::endpoint::KeyHasher;
use roslite_rtps::wire::PayloadKind;
use roslite_rtps::{
    parse_message, EndpointData, EndpointKind, EntityId, Guid, ReceiveStats, SenderInfo, Submessage,
};

const fn member(in_key: bool, element: KeyElement) -> KeyMember {
    KeyMember {
        in_key,
        element,
        collection: KeyCollection::Single,
    }
}

// test_msgs/msg/*.idl (Kilted).
static KEYED_LONG: KeyStruct = KeyStruct {
    members: &[
        member(true, KeyElement::Primitive { size: 4 }),
        member(false, KeyElement::Primitive { size: 4 }),
    ],
};
static KEYED_STRING: KeyStruct = KeyStruct {
    members: &[
        member(true, KeyElement::String { bound: None }),
        member(false, KeyElement::String { bound: None }),
    ],
};
static NON_KEYED_WITH_NESTED_KEY: KeyStruct = KeyStruct {
    members: &[
        member(true, KeyElement::Struct(&KEYED_STRING)),
        member(true, KeyElement::Primitive { size: 4 }),
    ],
};
static COMPLEX_NESTED_KEY: KeyStruct = KeyStruct {
    members: &[
        member(true, KeyElement::Primitive { size: 4 }),
        member(true, KeyElement::Struct(&NON_KEYED_WITH_NESTED_KEY)),
        member(false, KeyElement::Primitive { size: 8 }),
    ],
};

/// A sample's payload and the key hash it came with.
type Sample = (Vec<u8>, Option<[u8; 16]>);

/// What the capture holds: SEDP endpoints, and each user DATA once by (writer, sequence
/// number).
#[derive(Default)]
struct Keyed {
    endpoints: Vec<EndpointData>,
    samples: BTreeMap<(Guid, i64), Sample>,
}

fn read() -> Keyed {
    let mut out = Keyed::default();
    let mut stats = ReceiveStats::default();
    for d in common::rtps_datagrams(common::KEYED) {
        parse_message(&d.payload, &mut stats, |rx| {
            let Submessage::Data(data) = rx.submessage else {
                return;
            };
            let sender = SenderInfo::from_receiver(rx.receiver);
            let sedp = match data.writer_id {
                EntityId::SEDP_PUBLICATIONS_ANNOUNCER => Some(EndpointKind::Writer),
                EntityId::SEDP_SUBSCRIPTIONS_ANNOUNCER => Some(EndpointKind::Reader),
                _ => None,
            };
            match (sedp, data.payload) {
                (Some(kind), Some(p)) => {
                    out.endpoints
                        .push(EndpointData::from_payload(p.bytes, kind, sender).unwrap());
                }
                (None, Some(p)) if p.kind == PayloadKind::Data && !data.writer_id.is_builtin() => {
                    let key_hash = data.inline_qos.and_then(|q| q.key_hash().unwrap());
                    out.samples.insert(
                        (rx.receiver.source_guid(data.writer_id), data.writer_sn.0),
                        (p.bytes.to_vec(), key_hash),
                    );
                }
                _ => {}
            }
        })
        .unwrap();
    }
    assert_eq!(stats.malformed(), 0, "{stats:?}");
    out
}

#[test]
fn keyed_endpoints_have_the_entity_kinds_with_key() {
    let keyed = read();
    let side = |kind: EndpointKind| match kind {
        EndpointKind::Writer => "writer",
        EndpointKind::Reader => "reader",
    };
    let kinds: BTreeMap<(&str, &str), u8> = keyed
        .endpoints
        .iter()
        .filter(|e| ["rt/kl", "rt/ks", "rt/kc", "rt/kn"].contains(&e.topic_name.as_str()))
        .map(|e| ((e.topic_name.as_str(), side(e.kind)), e.guid.entity_id.kind))
        .collect();
    let expected: BTreeMap<(&str, &str), u8> = [
        (("rt/kl", "writer"), EntityId::KIND_WRITER_WITH_KEY),
        (("rt/kl", "reader"), EntityId::KIND_READER_WITH_KEY),
        (("rt/ks", "writer"), EntityId::KIND_WRITER_WITH_KEY),
        (("rt/ks", "reader"), EntityId::KIND_READER_WITH_KEY),
        (("rt/kc", "writer"), EntityId::KIND_WRITER_WITH_KEY),
        (("rt/kc", "reader"), EntityId::KIND_READER_WITH_KEY),
        // Keys nested in a keyless struct do not make it keyed.
        (("rt/kn", "writer"), EntityId::KIND_WRITER_NO_KEY),
        (("rt/kn", "reader"), EntityId::KIND_READER_NO_KEY),
    ]
    .into_iter()
    .collect();
    assert_eq!(kinds, expected);
}

#[test]
fn key_hashes_are_those_rclpy_sent() {
    let keyed = read();
    let layouts: BTreeMap<&str, &'static KeyStruct> = [
        ("test_msgs::msg::dds_::KeyedLong_", &KEYED_LONG),
        ("test_msgs::msg::dds_::KeyedString_", &KEYED_STRING),
        (
            "test_msgs::msg::dds_::ComplexNestedKey_",
            &COMPLEX_NESTED_KEY,
        ),
    ]
    .into_iter()
    .collect();
    let type_of: BTreeMap<Guid, &str> = keyed
        .endpoints
        .iter()
        .filter(|e| e.kind == EndpointKind::Writer)
        .map(|e| (e.guid, e.type_name.as_str()))
        .collect();
    let mut hashers: BTreeMap<Guid, (KeyHasher, i64)> = BTreeMap::new();
    let mut checked: BTreeMap<&str, usize> = BTreeMap::new();
    let mut md5 = 0;
    for ((writer, sn), (payload, key_hash)) in &keyed.samples {
        let type_name = type_of[writer];
        let Some(layout) = layouts.get(type_name) else {
            assert_eq!(*key_hash, None, "{type_name} is keyless");
            continue;
        };
        let (hasher, last) = hashers
            .entry(*writer)
            .or_insert_with(|| (KeyHasher::new(layout), 0));
        // The hash of a string key depends on every key the writer serialized before, so the
        // capture must hold them all.
        assert_eq!(
            *sn,
            *last + 1,
            "{type_name}: a sample is missing before {sn}"
        );
        *last = *sn;
        let computed = hasher.key_hash(payload).unwrap();
        assert_eq!(Some(computed), *key_hash, "{type_name} sample {sn}");
        let plain = computed[4..].iter().all(|b| *b == 0) || computed[..4] == [3, 0, 0, 0];
        if !plain {
            md5 += 1;
        }
        *checked.entry(type_name).or_default() += 1;
    }
    assert_eq!(checked.len(), 3, "{checked:?}");
    assert!(checked.values().all(|n| *n >= 6), "{checked:?}");
    assert!(md5 >= 6, "only {md5} MD5 key hashes");
}
