//! A reader with a content filter, fed as a Fast DDS writer that filters for it feeds it: the
//! samples it sends carry `PID_CONTENT_FILTER_INFO` with the reader's signature, and the
//! numbers it filtered out come as GAPs (reliable) or not at all (best effort). Those are
//! filtered out, not lost; a writer that does not filter for the reader loses them as before.

use std::net::Ipv4Addr;

use roslite_cdr::Endianness;

use super::*;
use crate::endpoint::{Reader, ReaderStats, WriterProxyInfo};
use crate::instant::Instant;
use crate::parameter_list::{pid, ParameterList, ParameterListWriter};
use crate::types::{Guid, Locator, SequenceNumberSet};
use crate::wire::{DataRepr, GapRepr, PayloadKind, SerializedPayload};

const T0: Instant = Instant::ZERO;
const OURS: [u8; 16] = [0x5a; 16];
const THEIRS: [u8; 16] = [0xa5; 16];

fn writer_guid() -> Guid {
    writer_config(true, HistoryKind::KeepLast(1)).guid
}

fn reader(reliable: bool) -> Reader {
    let mut r = Reader::new(reader_config(0, reliable, HistoryKind::KeepLast(100)));
    let mut info = WriterProxyInfo::new(
        writer_guid(),
        vec![Locator::udpv4(Ipv4Addr::LOCALHOST, 7411)],
    );
    info.reliable = reliable;
    r.add_writer(T0, info);
    r.set_content_filter(Some(OURS));
    r
}

/// An inline QoS with `PID_CONTENT_FILTER_INFO` for `signature` (passed), as Fast DDS writes
/// it (`ContentFilterInfo::cdr_serialize`).
fn filter_info(signature: [u8; 16]) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut w = ParameterListWriter::new(&mut buf, Endianness::Little);
    w.param(pid::CONTENT_FILTER_INFO, |v| {
        v.u32(1);
        v.u32(0x8000_0000);
        v.u32(1);
        v.bytes(&signature);
        Ok(())
    })
    .unwrap();
    w.finish();
    buf
}

const PAYLOAD: [u8; 8] = [0, 1, 0, 0, 7, 0, 0, 0];

fn data<'a>(n: i64, qos: Option<&'a [u8]>) -> DataRepr<'a> {
    DataRepr {
        extra_flags: 0,
        reader_id: EntityId::UNKNOWN,
        writer_id: writer_guid().entity_id,
        writer_sn: sn(n),
        inline_qos: qos.map(|q| ParameterList::parse(q, Endianness::Little).unwrap()),
        payload: Some(SerializedPayload {
            kind: PayloadKind::Data,
            bytes: &PAYLOAD,
        }),
        non_standard_payload: false,
    }
}

fn gap(from: i64, to_before: i64) -> GapRepr {
    GapRepr {
        reader_id: EntityId::UNKNOWN,
        writer_id: writer_guid().entity_id,
        gap_start: sn(from),
        gap_list: SequenceNumberSet::empty(sn(to_before)),
    }
}

/// Samples 1 and 4 arrive (with `qos`), 2 and 3 are skipped: GAPped for a reliable reader,
/// never sent to a best-effort one. The samples delivered and the reader's counts.
fn one_and_four(reliable: bool, qos: Option<&[u8]>) -> (Vec<ReceivedSample>, ReaderStats) {
    let mut r = reader(reliable);
    r.handle_data(T0, writer_guid(), &data(1, qos), None);
    if reliable {
        r.handle_gap(T0, writer_guid(), &gap(2, 4));
    }
    r.handle_data(T0, writer_guid(), &data(4, qos), None);
    let mut got = Vec::new();
    while let Some(s) = r.poll_sample() {
        got.push(s);
    }
    (got, r.stats())
}

#[test]
fn numbers_a_writer_filtering_for_the_reader_skips_are_filtered_not_lost() {
    let ours = filter_info(OURS);
    for reliable in [true, false] {
        let (got, stats) = one_and_four(reliable, Some(&ours));
        assert_eq!(sns(&got), [1, 4], "reliable: {reliable}");
        assert_eq!(got[1].lost_before, 0, "reliable: {reliable}");
        assert_eq!(stats.samples_lost, 0, "reliable: {reliable}");
        assert_eq!(stats.samples_filtered_by_writer, 2, "reliable: {reliable}");
    }
}

#[test]
fn a_writer_that_does_not_filter_for_the_reader_loses_what_it_skips() {
    let theirs = filter_info(THEIRS);
    for qos in [None, Some(theirs.as_slice())] {
        for reliable in [true, false] {
            let (got, stats) = one_and_four(reliable, qos);
            assert_eq!(sns(&got), [1, 4]);
            assert_eq!(got[1].lost_before, 2, "reliable: {reliable}, qos: {qos:?}");
            assert_eq!(stats.samples_lost, 2);
            assert_eq!(stats.samples_filtered_by_writer, 0);
        }
    }
}

#[test]
fn a_changed_filter_still_knows_the_last_signature_and_no_filter_forgets_them() {
    let ours = filter_info(OURS);
    let mut r = reader(true);
    // A new filter: the writer may still filter with the old one.
    r.set_content_filter(Some(THEIRS));
    r.handle_data(T0, writer_guid(), &data(1, Some(&ours)), None);
    r.handle_gap(T0, writer_guid(), &gap(2, 3));
    r.handle_data(T0, writer_guid(), &data(3, Some(&ours)), None);
    assert_eq!(r.stats().samples_lost, 0);
    assert_eq!(r.stats().samples_filtered_by_writer, 1);
    // No filter: what the writer skips from now on is lost again.
    r.set_content_filter(None);
    r.handle_gap(T0, writer_guid(), &gap(4, 5));
    r.handle_data(T0, writer_guid(), &data(5, Some(&ours)), None);
    assert_eq!(r.stats().samples_lost, 1);
    assert_eq!(r.stats().samples_filtered_by_writer, 1);
}
