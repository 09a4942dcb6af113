//! Nothing panics: random datagrams, structure-aware random submessages, and bit flips,
//! byte overwrites and truncations of every real datagram in the reference captures, fed to
//! the receiver and to the discovery decoders. Seeded, so a failure names a reproducible
//! iteration. (The cargo-fuzz target in `fuzz/` runs the same entry point open-ended.)

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use roslite_rtps::wire::HeaderRepr;
use roslite_rtps::{
    parse_message, EndpointData, EndpointKind, EntityId, GuidPrefix, ParticipantData, ReceiveStats,
    SenderInfo, Submessage,
};

/// The whole receive path for one datagram: parse, and decode whatever looks like discovery.
fn receive(datagram: &[u8], stats: &mut ReceiveStats) {
    let _ = parse_message(datagram, stats, |rx| {
        let sender = SenderInfo::from_receiver(rx.receiver);
        if let Submessage::Data(d) = rx.submessage {
            if let Some(p) = d.payload {
                let _ = ParticipantData::from_payload(p.bytes, sender);
                let _ = EndpointData::from_payload(p.bytes, EndpointKind::Writer, sender);
                let _ = EndpointData::from_payload(p.bytes, EndpointKind::Reader, sender);
            }
            if let Some(q) = d.inline_qos {
                let _ = q.related_sample_identity(sender.vendor_id);
                let _ = q.key_hash();
                let _ = q.status_info();
            }
        }
        if let Submessage::DataFrag(f) = rx.submessage {
            assert!(f.fragments().count() <= usize::from(f.fragments_in_submessage));
        }
    });
}

fn run_case(what: &str, i: usize, input: &[u8], stats: &mut ReceiveStats) {
    let r = catch_unwind(AssertUnwindSafe(|| receive(input, stats)));
    if r.is_err() {
        panic!("{what} iteration {i} panicked on input {input:02x?}");
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = SmallRng::seed_from_u64(0xf022_0001);
    let mut stats = ReceiveStats::default();
    for i in 0..5_000 {
        let len = rng.gen_range(0..300);
        let mut input: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        if rng.gen_bool(0.7) && input.len() >= 6 {
            input[..4].copy_from_slice(b"RTPS");
            input[4] = 2;
        }
        run_case("random", i, &input, &mut stats);
    }
    assert_eq!(stats.datagrams, 5_000);
}

/// Valid header, then random submessages of known kinds with random flags, lengths and
/// bodies: reaches the per-kind validators far more often than uniform noise.
#[test]
fn random_submessages_never_panic() {
    const IDS: [u8; 16] = [
        0x01, 0x06, 0x07, 0x08, 0x09, 0x0c, 0x0d, 0x0e, 0x0f, 0x12, 0x13, 0x15, 0x16, 0x31, 0x80,
        0x00,
    ];
    let mut rng = SmallRng::seed_from_u64(0xf022_0002);
    let mut stats = ReceiveStats::default();
    for i in 0..20_000 {
        let mut d = Vec::new();
        HeaderRepr::new(GuidPrefix(rng.gen())).emit(&mut d);
        for _ in 0..rng.gen_range(1..5) {
            let id = IDS[rng.gen_range(0..IDS.len())];
            let body_len: usize = rng.gen_range(0..120);
            d.push(id);
            d.push(rng.gen());
            let declared = if rng.gen_bool(0.9) {
                body_len as u16
            } else {
                rng.gen()
            };
            d.extend_from_slice(&declared.to_le_bytes());
            // Bodies biased towards small numbers so lengths and counts are plausible.
            d.extend((0..body_len).map(|_| {
                if rng.gen_bool(0.6) {
                    rng.gen_range(0..4)
                } else {
                    rng.gen()
                }
            }));
        }
        run_case("submessages", i, &d, &mut stats);
    }
    assert!(
        stats.submessages > 1_000,
        "random submessages never validated: {stats:?}"
    );
    assert!(stats.invalid.total() > 1_000, "{stats:?}");
}

#[test]
fn mutated_captures_never_panic() {
    let mut corpus = Vec::new();
    for name in common::ALL {
        corpus.extend(common::rtps_datagrams(name).into_iter().map(|d| d.payload));
    }
    assert_eq!(corpus.len(), 240 + 335 + 144 + 326);
    let mut rng = SmallRng::seed_from_u64(0xf022_0003);
    let mut stats = ReceiveStats::default();
    let mut input = Vec::new();
    for i in 0..12_000 {
        let original = &corpus[rng.gen_range(0..corpus.len())];
        // Most datagrams are small; cap the copy so the 64 KiB DATA_FRAGs don't dominate.
        let keep = if original.len() > 4096 && rng.gen_bool(0.8) {
            4096
        } else {
            original.len()
        };
        input.clear();
        input.extend_from_slice(&original[..keep]);
        match rng.gen_range(0..4) {
            0 => {
                for _ in 0..rng.gen_range(1..8) {
                    let bit = rng.gen_range(0..input.len() * 8);
                    input[bit / 8] ^= 1 << (bit % 8);
                }
            }
            1 => {
                for _ in 0..rng.gen_range(1..4) {
                    let at = rng.gen_range(0..input.len());
                    input[at] = [0x00, 0xff, 0x7f, 0x80, 0x01][rng.gen_range(0..5)];
                }
            }
            2 => input.truncate(rng.gen_range(0..input.len())),
            _ => {
                // Corrupt a length field: a 16-bit little-endian word after the header.
                if input.len() > 24 {
                    let at = rng.gen_range(20..input.len() - 2);
                    let v: u16 = rng.gen();
                    input[at..at + 2].copy_from_slice(&v.to_le_bytes());
                }
            }
        }
        run_case("bit flip", i, &input, &mut stats);
    }
    assert!(
        stats.malformed() > 1_000,
        "mutations were not noticed: {stats:?}"
    );
}

/// Every prefix of a few real datagrams (all cut points).
#[test]
fn every_truncation_of_real_datagrams() {
    let mut stats = ReceiveStats::default();
    for name in common::ALL {
        let datagrams = common::rtps_datagrams(name);
        for d in datagrams
            .iter()
            .filter(|d| d.payload.len() < 2000)
            .step_by(7)
        {
            for cut in 0..d.payload.len() {
                run_case(name, cut, &d.payload[..cut], &mut stats);
            }
        }
    }
    assert!(stats.datagrams > 10_000);
}

/// Mutations of real SPDP/SEDP payloads straight into the decoders.
#[test]
fn mutated_discovery_payloads_never_panic() {
    let mut payloads = Vec::new();
    for name in common::ALL {
        for d in common::rtps_datagrams(name) {
            let _ = parse_message(&d.payload, &mut ReceiveStats::default(), |rx| {
                if let Submessage::Data(data) = rx.submessage {
                    let builtin = [
                        EntityId::SPDP_PARTICIPANT_ANNOUNCER,
                        EntityId::SEDP_PUBLICATIONS_ANNOUNCER,
                        EntityId::SEDP_SUBSCRIPTIONS_ANNOUNCER,
                    ];
                    if let (true, Some(p)) = (builtin.contains(&data.writer_id), data.payload) {
                        payloads.push((p.bytes.to_vec(), SenderInfo::from_receiver(rx.receiver)));
                    }
                }
            });
        }
    }
    assert!(payloads.len() > 100);
    let mut rng = SmallRng::seed_from_u64(0xf022_0004);
    let mut accepted = 0;
    for i in 0..10_000 {
        let (original, sender) = &payloads[rng.gen_range(0..payloads.len())];
        let mut p = original.clone();
        for _ in 0..rng.gen_range(1..6) {
            let at = rng.gen_range(0..p.len());
            p[at] = if rng.gen_bool(0.5) {
                rng.gen()
            } else {
                p[at] ^ (1 << rng.gen_range(0..8))
            };
        }
        let r = catch_unwind(|| {
            let a = ParticipantData::from_payload(&p, *sender).is_ok();
            let b = EndpointData::from_payload(&p, EndpointKind::Writer, *sender).is_ok();
            let c = EndpointData::from_payload(&p, EndpointKind::Reader, *sender).is_ok();
            a || b || c
        });
        match r {
            Ok(ok) => accepted += usize::from(ok),
            Err(_) => panic!("discovery iteration {i} panicked on {p:02x?}"),
        }
    }
    // Many single-byte changes hit values that stay valid (names, ports, user data).
    assert!(accepted > 100, "{accepted}");
}
