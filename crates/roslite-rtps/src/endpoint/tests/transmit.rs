//! Packing a [`Transmit`] into datagrams, and the reader's KEEP_ALL back-pressure.

use std::time::Duration;

use super::*;
use crate::endpoint::transmit::TransmitBuilder;
use crate::endpoint::{Reader, Transmit, WriterProxyInfo};
use crate::instant::Instant;
use crate::receiver::{parse_message, ReceiveStats};
use crate::types::{GuidPrefix, Locator, Time};
use crate::wire::{
    DataRepr, HeaderRepr, HeartbeatRepr, PayloadKind, SerializedPayload, Submessage,
};

fn data_sm(sn_: i64, bytes: &[u8]) -> Submessage<'_> {
    Submessage::Data(DataRepr {
        extra_flags: 0,
        reader_id: EntityId::UNKNOWN,
        writer_id: EntityId::new([0, 0, 1], EntityId::KIND_WRITER_NO_KEY),
        writer_sn: sn(sn_),
        inline_qos: None,
        payload: Some(SerializedPayload {
            kind: PayloadKind::Data,
            bytes,
        }),
        non_standard_payload: false,
    })
}

#[test]
fn datagrams_repeat_destination_and_timestamp_after_a_split() {
    let body = payload(0, 400);
    let ts = |s| {
        Some(Time {
            seconds: s,
            fraction: 0,
        })
    };
    let mut b = TransmitBuilder::default();
    for i in 1..=6 {
        // Samples 1-3 at t=10, 4-5 at t=20, 6 without a timestamp.
        b.set_timestamp(match i {
            1..=3 => ts(10),
            4 | 5 => ts(20),
            _ => None,
        });
        b.push(&data_sm(i, &body));
    }
    let t: Transmit = b
        .finish(vec![Locator::INVALID], Some(GuidPrefix([9; 12])))
        .unwrap();
    let header = HeaderRepr::new(GuidPrefix([1; 12]));
    // Room for about two DATA per datagram.
    let datagrams = t.datagrams(&header, 20 + 16 + 12 + 2 * 428);
    assert!(datagrams.len() >= 3);
    let mut seen = Vec::new();
    let mut stats = ReceiveStats::default();
    for d in &datagrams {
        assert!(d.len() <= 20 + 16 + 12 + 2 * 428);
        parse_message(d, &mut stats, |rx| {
            if let Submessage::Data(data) = rx.submessage {
                assert_eq!(rx.receiver.dest_guid_prefix, GuidPrefix([9; 12]));
                seen.push((data.writer_sn.0, rx.receiver.timestamp.map(|t| t.seconds)));
            }
        })
        .unwrap();
    }
    assert_eq!(
        seen,
        vec![
            (1, Some(10)),
            (2, Some(10)),
            (3, Some(10)),
            (4, Some(20)),
            (5, Some(20)),
            (6, None)
        ]
    );
    assert_eq!(stats.malformed(), 0);
}

#[test]
fn oversized_submessage_gets_its_own_datagram_and_seals_it() {
    let big = payload(0, 70_000);
    let mut b = TransmitBuilder::default();
    b.push(&data_sm(1, &big));
    b.push(&Submessage::Heartbeat(HeartbeatRepr {
        reader_id: EntityId::UNKNOWN,
        writer_id: EntityId::new([0, 0, 1], EntityId::KIND_WRITER_NO_KEY),
        first_sn: sn(1),
        last_sn: sn(1),
        count: crate::types::Count(1),
        final_flag: true,
        liveliness_flag: false,
    }));
    let t = b.finish(vec![Locator::INVALID], None).unwrap();
    let datagrams = t.datagrams(&HeaderRepr::new(GuidPrefix([1; 12])), 200_000);
    assert_eq!(datagrams.len(), 2, "a body over 64 KiB ends its message");
}

#[test]
fn keep_all_reader_queue_holds_samples_back_until_polled() {
    let writer = writer_config(true, HistoryKind::KeepLast(1)).guid;
    let mut r = Reader::new(reader_config(
        0,
        true,
        HistoryKind::KeepAll { max_samples: 3 },
    ));
    let t0 = Instant::ZERO;
    r.add_writer(t0, WriterProxyInfo::new(writer, vec![Locator::INVALID]));
    let body = payload(0, 16);
    for i in 1..=6 {
        if let Submessage::Data(d) = data_sm(i, &body) {
            r.handle_data(t0, writer, &d, None);
        }
    }
    assert_eq!(r.ready_len(), 3);
    assert_eq!(
        r.stats().samples_rejected,
        0,
        "reliable samples wait, they are not dropped"
    );
    // The ACKNACK only acknowledges what the application could take.
    let at = t0 + Duration::from_millis(5);
    let t = r.poll_transmit(at).unwrap();
    let mut stats = ReceiveStats::default();
    let dg = &t.datagrams(&HeaderRepr::new(GuidPrefix([3; 12])), 65_000)[0];
    let mut base = None;
    parse_message(dg, &mut stats, |rx| {
        if let Submessage::AckNack(a) = rx.submessage {
            base = Some(a.reader_sn_state.base());
        }
    })
    .unwrap();
    assert_eq!(base, Some(sn(4)));
    let got: Vec<i64> = std::iter::from_fn(|| r.poll_sample())
        .map(|s| s.sequence_number.0)
        .collect();
    assert_eq!(got, (1..=6).collect::<Vec<_>>());
}
