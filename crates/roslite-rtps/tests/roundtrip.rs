//! Randomized round trips (seeded, reproducible): every submessage `Repr`, in both byte
//! orders, emits to bytes that parse back to an equal `Repr`, alone and inside messages.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use roslite_rtps::wire::{
    AckNackRepr, DataFragRepr, DataRepr, GapRepr, HeaderRepr, HeartbeatFragRepr, HeartbeatRepr,
    InfoDstRepr, InfoReplyRepr, InfoSrcRepr, InfoTsRepr, NackFragRepr, PadRepr, PayloadKind,
    SerializedPayload, SubmessageHeader,
};
use roslite_rtps::{
    parse_message, pid, Count, Endianness, EntityId, FragmentNumber, FragmentNumberSet, GuidPrefix,
    Locator, LocatorKind, ParameterList, ParameterListWriter, ProtocolVersion, ReceiveStats,
    SequenceNumber, SequenceNumberSet, Submessage, Time, VendorId,
};

const ITERATIONS: usize = 400;
const BOTH: [Endianness; 2] = [Endianness::Big, Endianness::Little];

fn entity(rng: &mut SmallRng) -> EntityId {
    EntityId::from_bytes(rng.gen())
}

/// Mostly small, sometimes near the top of the range.
fn sn(rng: &mut SmallRng) -> SequenceNumber {
    SequenceNumber(match rng.gen_range(0..4) {
        0 => rng.gen_range(1..10),
        1 => rng.gen_range(1..i64::from(u32::MAX) * 4),
        2 => rng.gen_range(1..i64::MAX - 1000),
        _ => i64::MAX - rng.gen_range(0..300),
    })
}

fn sn_set(rng: &mut SmallRng) -> SequenceNumberSet {
    let base = SequenceNumber(rng.gen_range(1..i64::MAX / 2));
    let mut set = SequenceNumberSet::with_num_bits(base, rng.gen_range(0..=256)).unwrap();
    for _ in 0..rng.gen_range(0..20) {
        set.insert(SequenceNumber(base.0 + rng.gen_range(0..256)));
    }
    set
}

fn fn_set(rng: &mut SmallRng) -> FragmentNumberSet {
    let base = FragmentNumber(rng.gen_range(1..u32::MAX - 300));
    FragmentNumberSet::from_members(
        base,
        (0..rng.gen_range(0..20)).map(|_| FragmentNumber(base.0 + rng.gen_range(0..256))),
    )
    .unwrap()
}

fn locator(rng: &mut SmallRng) -> Locator {
    Locator {
        kind: LocatorKind(rng.gen_range(-1..20)),
        port: rng.gen(),
        address: rng.gen(),
    }
}

/// A random inline QoS list in byte order `e`.
fn qos_bytes(rng: &mut SmallRng, e: Endianness) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut w = ParameterListWriter::new(&mut buf, e);
    for _ in 0..rng.gen_range(0..4) {
        let len = rng.gen_range(0..40);
        let value: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        let id = [
            pid::KEY_HASH,
            pid::STATUS_INFO,
            pid::RELATED_SAMPLE_IDENTITY,
        ][rng.gen_range(0..3)];
        w.raw(id, &value).unwrap();
    }
    w.finish();
    buf
}

fn bytes4(rng: &mut SmallRng, max_words: usize) -> Vec<u8> {
    (0..4 * rng.gen_range(1..=max_words))
        .map(|_| rng.gen())
        .collect()
}

/// Emits `sm` in order `e`, checks length bookkeeping, parses it back.
fn check(sm: &Submessage<'_>, e: Endianness) {
    let mut buf = Vec::new();
    sm.emit(&mut buf, e);
    assert_eq!(buf.len(), sm.buffer_len(), "{sm:?}");
    assert_eq!(buf.len() % 4, 0, "{sm:?} not padded");
    let header = SubmessageHeader::parse(&buf).unwrap();
    assert_eq!(header.id, sm.id());
    assert_eq!(header.endianness(), e);
    let body_len = header.body_len(buf.len() - 4).unwrap();
    assert_eq!(body_len, buf.len() - 4);
    let back = Submessage::parse(&header, &buf[4..]).unwrap().unwrap();
    assert_eq!(&back, sm, "{e:?}");
}

#[test]
fn fixed_layout_submessages_round_trip() {
    let mut rng = SmallRng::seed_from_u64(0x5eed_0001);
    for _ in 0..ITERATIONS {
        let first = sn(&mut rng);
        let heartbeat = Submessage::Heartbeat(HeartbeatRepr {
            reader_id: entity(&mut rng),
            writer_id: entity(&mut rng),
            first_sn: first,
            last_sn: SequenceNumber(first.0 - 1 + rng.gen_range(0..3).min(i64::MAX - first.0)),
            count: Count(rng.gen()),
            final_flag: rng.gen(),
            liveliness_flag: rng.gen(),
        });
        let heartbeat_frag = Submessage::HeartbeatFrag(HeartbeatFragRepr {
            reader_id: entity(&mut rng),
            writer_id: entity(&mut rng),
            writer_sn: sn(&mut rng),
            last_fragment_num: FragmentNumber(rng.gen_range(1..=u32::MAX)),
            count: Count(rng.gen()),
        });
        let acknack = Submessage::AckNack(AckNackRepr {
            reader_id: entity(&mut rng),
            writer_id: entity(&mut rng),
            reader_sn_state: if rng.gen_bool(0.1) {
                SequenceNumberSet::empty(SequenceNumber(0)) // Fast DDS pre-emptive shape
            } else {
                sn_set(&mut rng)
            },
            count: Count(rng.gen()),
            final_flag: rng.gen(),
        });
        let nack_frag = Submessage::NackFrag(NackFragRepr {
            reader_id: entity(&mut rng),
            writer_id: entity(&mut rng),
            writer_sn: sn(&mut rng),
            fragment_number_state: fn_set(&mut rng),
            count: Count(rng.gen()),
        });
        let gap = Submessage::Gap(GapRepr {
            reader_id: entity(&mut rng),
            writer_id: entity(&mut rng),
            gap_start: sn(&mut rng),
            gap_list: sn_set(&mut rng),
        });
        let info_ts = Submessage::InfoTs(InfoTsRepr {
            timestamp: rng.gen_bool(0.8).then(|| Time {
                seconds: rng.gen(),
                fraction: rng.gen_range(0..u32::MAX),
            }),
        });
        let info_dst = Submessage::InfoDst(InfoDstRepr {
            guid_prefix: GuidPrefix(rng.gen()),
        });
        let info_src = Submessage::InfoSrc(InfoSrcRepr {
            version: ProtocolVersion {
                major: 2,
                minor: rng.gen(),
            },
            vendor_id: VendorId(rng.gen()),
            guid_prefix: GuidPrefix(rng.gen()),
        });
        let info_reply = Submessage::InfoReply(InfoReplyRepr {
            unicast_locators: (0..rng.gen_range(0..4))
                .map(|_| locator(&mut rng))
                .collect(),
            multicast_locators: rng.gen_bool(0.5).then(|| {
                (0..rng.gen_range(0..4))
                    .map(|_| locator(&mut rng))
                    .collect()
            }),
        });
        let pad = Submessage::Pad(PadRepr {
            len: 4 * rng.gen_range(0..20),
        });
        for sm in [
            heartbeat,
            heartbeat_frag,
            acknack,
            nack_frag,
            gap,
            info_ts,
            info_dst,
            info_src,
            info_reply,
            pad,
        ] {
            for e in BOTH {
                check(&sm, e);
            }
        }
    }
}

#[test]
fn data_round_trips() {
    let mut rng = SmallRng::seed_from_u64(0x5eed_0002);
    for _ in 0..ITERATIONS {
        for e in BOTH {
            let qos = qos_bytes(&mut rng, e);
            let payload = bytes4(&mut rng, 64);
            let inline_qos = rng
                .gen_bool(0.5)
                .then(|| ParameterList::parse(&qos, e).unwrap());
            let kind = [None, Some(PayloadKind::Data), Some(PayloadKind::Key)][rng.gen_range(0..3)];
            let sm = Submessage::Data(DataRepr {
                extra_flags: rng.gen(),
                reader_id: entity(&mut rng),
                writer_id: entity(&mut rng),
                writer_sn: sn(&mut rng),
                inline_qos,
                payload: kind.map(|kind| SerializedPayload {
                    kind,
                    bytes: &payload,
                }),
                non_standard_payload: rng.gen(),
            });
            check(&sm, e);
        }
    }
}

#[test]
fn data_frag_round_trips() {
    let mut rng = SmallRng::seed_from_u64(0x5eed_0003);
    for _ in 0..ITERATIONS {
        for e in BOTH {
            let fragment_size: u16 = rng.gen_range(1..=2048);
            let total = rng.gen_range(1..=40u32);
            let sample_size = (total - 1) * u32::from(fragment_size)
                + rng.gen_range(1..=u32::from(fragment_size));
            let start = rng.gen_range(1..=total);
            let count = rng.gen_range(1..=(total - start + 1).min(8)) as u16;
            let offset = (start - 1) as usize * usize::from(fragment_size);
            let len = (usize::from(count) * usize::from(fragment_size))
                .min(sample_size as usize - offset);
            let data: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            let qos = qos_bytes(&mut rng, e);
            let sm = Submessage::DataFrag(DataFragRepr {
                extra_flags: rng.gen(),
                reader_id: entity(&mut rng),
                writer_id: entity(&mut rng),
                writer_sn: sn(&mut rng),
                fragment_starting_num: FragmentNumber(start),
                fragments_in_submessage: count,
                fragment_size,
                sample_size,
                inline_qos: rng
                    .gen_bool(0.3)
                    .then(|| ParameterList::parse(&qos, e).unwrap()),
                key: rng.gen(),
                non_standard_payload: rng.gen(),
                data: &data,
            });
            check(&sm, e);
            if let Submessage::DataFrag(f) = &sm {
                let rebuilt: Vec<u8> = f.fragments().flat_map(|(_, c)| c.iter().copied()).collect();
                assert_eq!(rebuilt, data);
                assert_eq!(f.fragments().count(), usize::from(count));
                assert_eq!(f.total_fragments(), total);
            }
        }
    }
}

/// Random sequences of submessages in random byte orders come out of the receiver unchanged
/// and in order.
#[test]
fn messages_round_trip_through_the_receiver() {
    let mut rng = SmallRng::seed_from_u64(0x5eed_0004);
    let header = HeaderRepr::new(GuidPrefix([0x11; 12]));
    for _ in 0..ITERATIONS {
        let payloads: Vec<Vec<u8>> = (0..4).map(|_| bytes4(&mut rng, 16)).collect();
        let mut subs = Vec::new();
        for p in &payloads {
            subs.push(Submessage::InfoTs(InfoTsRepr {
                timestamp: Some(Time {
                    seconds: rng.gen(),
                    fraction: 0,
                }),
            }));
            subs.push(Submessage::Data(DataRepr {
                extra_flags: 0,
                reader_id: EntityId::UNKNOWN,
                writer_id: entity(&mut rng),
                writer_sn: sn(&mut rng),
                inline_qos: None,
                payload: Some(SerializedPayload {
                    kind: PayloadKind::Data,
                    bytes: p,
                }),
                non_standard_payload: false,
            }));
            subs.push(Submessage::Gap(GapRepr {
                reader_id: entity(&mut rng),
                writer_id: entity(&mut rng),
                gap_start: sn(&mut rng),
                gap_list: sn_set(&mut rng),
            }));
        }
        let mut datagram = Vec::new();
        header.emit(&mut datagram);
        for sm in &subs {
            sm.emit(&mut datagram, BOTH[rng.gen_range(0..2)]);
        }
        let mut stats = ReceiveStats::default();
        let mut i = 0;
        parse_message(&datagram, &mut stats, |rx| {
            assert_eq!(rx.submessage, &subs[i]);
            assert_eq!(rx.receiver.source_guid_prefix, header.guid_prefix);
            i += 1;
        })
        .unwrap();
        assert_eq!(i, subs.len());
        assert_eq!(stats.malformed(), 0);
    }
}
