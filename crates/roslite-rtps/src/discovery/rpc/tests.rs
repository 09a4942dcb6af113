use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::endpoint::{HistoryKind, ReaderConfig, WriterConfig};
use crate::sim::LinkConfig;
use crate::sim::{guid, Pair};

const WRITER_NO_KEY: u8 = 0x03;
const READER_NO_KEY: u8 = 0x04;

/// A CDR little-endian payload: encapsulation header, then `body`.
fn cdr(body: &[u8]) -> Vec<u8> {
    let mut out = vec![0x00, 0x01, 0x00, 0x00];
    out.extend_from_slice(body);
    out
}

fn sample(writer: Guid, sn: i64, payload: Vec<u8>, inline_qos: Option<Vec<u8>>) -> ReceivedSample {
    ReceivedSample {
        inline_qos,
        ..ReceivedSample::for_test(writer, SequenceNumber(sn), payload)
    }
}

#[test]
fn the_request_header_reads_back_in_either_byte_order() {
    let header = RequestHeader {
        client_id: 0x0102_0304_0506_0708,
        sequence: 42,
    };
    let little = insert_request_header(&cdr(&[9, 9, 9, 9]), &header.to_bytes());
    assert_eq!(little.len(), 4 + REQUEST_HEADER_LEN + 4);
    assert_eq!(RequestHeader::read(&little), Some(header));
    assert_eq!(strip_request_header(&little), Some(cdr(&[9, 9, 9, 9])));

    let mut big = vec![0x00, 0x00, 0x00, 0x00];
    big.extend_from_slice(&header.client_id.to_be_bytes());
    big.extend_from_slice(&header.sequence.to_be_bytes());
    assert_eq!(RequestHeader::read(&big), Some(header));

    assert_eq!(RequestHeader::read(&cdr(&[0; 15])), None, "one byte short");
    assert_eq!(strip_request_header(&cdr(&[0; 15])), None);
}

#[test]
fn a_client_uses_the_request_header_only_when_every_server_expects_it() {
    use RequestStyle::*;
    assert_eq!(RequestStyle::for_servers([]), SampleIdentity);
    assert_eq!(
        RequestStyle::for_servers([VendorId::ECLIPSE_CYCLONE, VendorId::ECLIPSE_CYCLONE]),
        RequestHeader
    );
    assert_eq!(
        RequestStyle::for_servers([VendorId::ECLIPSE_CYCLONE, VendorId::EPROSIMA]),
        SampleIdentity
    );
}

#[test]
fn a_request_is_routed_by_its_identity_else_by_its_senders_convention() {
    let client = ClientIdentity::new(guid(1, 1, WRITER_NO_KEY), guid(1, 2, READER_NO_KEY));

    // Sample identity: the reply names the client's reply reader and the request's SN.
    let with_identity = sample(
        client.request_writer,
        7,
        cdr(&[1, 0, 0, 0]),
        Some(client.request_inline_qos()),
    );
    let (route, body) = route_request(&with_identity, VendorId::EPROSIMA).unwrap();
    assert_eq!(body, cdr(&[1, 0, 0, 0]));
    assert_eq!(route.reply_reader(), Some(client.reply_reader));
    let (reply, qos) = route.reply(&cdr(&[2, 0, 0, 0]));
    assert_eq!(reply, cdr(&[2, 0, 0, 0]));
    let answered = sample(guid(3, 1, WRITER_NO_KEY), 1, reply, qos);
    assert_eq!(
        client.accept_reply(&answered, VendorId::EPROSIMA),
        Ok((ReplyKey::WriterSn(7), cdr(&[2, 0, 0, 0])))
    );

    // Request header, from Cyclone: the body loses the header, the reply gets it back.
    let header = RequestHeader {
        client_id: client.header_client_id,
        sequence: 3,
    };
    let from_cyclone = sample(
        client.request_writer,
        8,
        insert_request_header(&cdr(&[1, 0, 0, 0]), &header.to_bytes()),
        None,
    );
    let (route, body) = route_request(&from_cyclone, VendorId::ECLIPSE_CYCLONE).unwrap();
    assert_eq!(body, cdr(&[1, 0, 0, 0]));
    assert_eq!(route.reply_reader(), None);
    let (reply, qos) = route.reply(&cdr(&[2, 0, 0, 0]));
    assert_eq!(qos, None);
    let answered = sample(guid(3, 1, WRITER_NO_KEY), 1, reply, None);
    assert_eq!(
        client.accept_reply(&answered, VendorId::ECLIPSE_CYCLONE),
        Ok((ReplyKey::HeaderSequence(3), cdr(&[2, 0, 0, 0])))
    );

    // Neither: answer the request writer itself.
    let bare = sample(client.request_writer, 9, cdr(&[1, 0, 0, 0]), None);
    let (route, _) = route_request(&bare, VendorId::EPROSIMA).unwrap();
    assert_eq!(
        route,
        ReplyRoute::SampleIdentity {
            related: SampleIdentity {
                writer_guid: client.request_writer,
                sequence_number: SequenceNumber(9),
            }
        }
    );

    // Too short for the header Cyclone should have sent; empty.
    let short = sample(client.request_writer, 10, cdr(&[0; 8]), None);
    assert_eq!(
        route_request(&short, VendorId::ECLIPSE_CYCLONE),
        Err(Dropped::Malformed)
    );
    let empty = sample(client.request_writer, 11, Vec::new(), None);
    assert_eq!(
        route_request(&empty, VendorId::EPROSIMA),
        Err(Dropped::Empty)
    );
}

#[test]
fn a_client_keeps_only_its_own_replies() {
    let ours = ClientIdentity::new(guid(1, 1, WRITER_NO_KEY), guid(1, 2, READER_NO_KEY));
    let theirs = ClientIdentity::new(guid(2, 1, WRITER_NO_KEY), guid(2, 2, READER_NO_KEY));
    assert_ne!(ours.header_client_id, theirs.header_client_id);
    let route = ReplyRoute::SampleIdentity {
        related: SampleIdentity {
            writer_guid: theirs.reply_reader,
            sequence_number: SequenceNumber(1),
        },
    };
    let (reply, qos) = route.reply(&cdr(&[0; 4]));
    let s = sample(guid(3, 1, WRITER_NO_KEY), 1, reply, qos);
    assert_eq!(
        ours.accept_reply(&s, VendorId::EPROSIMA),
        Err(Dropped::ForAnotherClient)
    );
    assert!(theirs.accept_reply(&s, VendorId::EPROSIMA).is_ok());

    let header = RequestHeader {
        client_id: theirs.header_client_id,
        sequence: 1,
    };
    let s = sample(
        guid(3, 1, WRITER_NO_KEY),
        2,
        insert_request_header(&cdr(&[0; 4]), &header.to_bytes()),
        None,
    );
    assert_eq!(
        ours.accept_reply(&s, VendorId::ECLIPSE_CYCLONE),
        Err(Dropped::ForAnotherClient)
    );
    let truncated = sample(guid(3, 1, WRITER_NO_KEY), 3, cdr(&[0; 4]), None);
    assert_eq!(
        ours.accept_reply(&truncated, VendorId::ECLIPSE_CYCLONE),
        Err(Dropped::Malformed)
    );
}

/// A reliable KEEP_ALL writer, as a service's request and reply writers are for these tests
/// (all calls are written before the simulation runs).
fn keep_all_writer(guid: Guid) -> WriterConfig {
    let mut config = WriterConfig::new(guid);
    config.history = HistoryKind::KeepAll { max_samples: 1000 };
    config
}

fn keep_all_reader(guid: Guid) -> ReaderConfig {
    let mut config = ReaderConfig::new(guid, true);
    config.history = HistoryKind::KeepAll { max_samples: 1000 };
    config
}

/// A request stream from one client to the server, over a lossy, reordering link.
fn request_link(seed: u64, client: u8, server_reader: Guid) -> Pair {
    let mut pair = Pair::new(
        seed,
        keep_all_writer(guid(client, 1, WRITER_NO_KEY)),
        keep_all_reader(server_reader),
    );
    pair.set_links(0, LinkConfig::rough(0.2), LinkConfig::rough(0.2));
    pair
}

/// Two clients (one in each convention) call one server over reliable links that lose 20 % of
/// datagrams, duplicate and reorder: every call is answered, each client takes exactly its own
/// replies with the keys it sent, and counts the other's as for another client.
#[test]
fn two_clients_in_both_conventions_get_exactly_their_replies_over_lossy_links() {
    for seed in [11, 12, 13] {
        let server_reader = guid(3, 1, READER_NO_KEY);
        let fast = ClientIdentity::new(guid(1, 1, WRITER_NO_KEY), guid(1, 2, READER_NO_KEY));
        let cyclone = ClientIdentity::new(guid(2, 1, WRITER_NO_KEY), guid(2, 2, READER_NO_KEY));
        let mut to_server_fast = request_link(seed, 1, server_reader);
        let mut to_server_cyclone = request_link(seed + 100, 2, server_reader);
        let mut replies = Pair::new(
            seed + 200,
            keep_all_writer(guid(3, 2, WRITER_NO_KEY)),
            keep_all_reader(fast.reply_reader),
        );
        replies.add_reader(keep_all_reader(cyclone.reply_reader));
        replies.set_links(0, LinkConfig::rough(0.2), LinkConfig::rough(0.2));
        replies.set_links(1, LinkConfig::rough(0.2), LinkConfig::rough(0.2));

        const CALLS: i64 = 20;
        let mut fast_keys = Vec::new();
        for call in 0..CALLS {
            let body = cdr(&(call as u32).to_le_bytes());
            let now = to_server_fast.now;
            let sn = to_server_fast
                .writer
                .write(
                    now,
                    Arc::from(body),
                    Some(Arc::from(fast.request_inline_qos())),
                    None,
                )
                .unwrap();
            fast_keys.push(ReplyKey::WriterSn(sn.0));
            to_server_fast.flush();
            let header = RequestHeader {
                client_id: cyclone.header_client_id,
                sequence: call + 1,
            };
            let body =
                insert_request_header(&cdr(&(call as u32).to_le_bytes()), &header.to_bytes());
            to_server_cyclone
                .write_blocking(body, Duration::from_secs(5))
                .unwrap();
        }
        let delivered = |p: &Pair| p.readers[0].received.len() == CALLS as usize;
        assert!(to_server_fast.run_while_not(Duration::from_secs(30), delivered));
        assert!(to_server_cyclone.run_while_not(Duration::from_secs(30), delivered));

        // The server answers each request with its body doubled, as it routed it.
        let requests = to_server_fast.readers[0]
            .received
            .drain(..)
            .map(|s| (s, VendorId::EPROSIMA))
            .chain(
                to_server_cyclone.readers[0]
                    .received
                    .drain(..)
                    .map(|s| (s, VendorId::ECLIPSE_CYCLONE)),
            );
        for (request, vendor) in requests {
            let (route, body) = route_request(&request, vendor).unwrap();
            let mut response = body.clone();
            response.extend_from_slice(&body[4..]);
            let (payload, qos) = route.reply(&response);
            replies
                .writer
                .write(replies.now, Arc::from(payload), qos.map(Arc::from), None)
                .unwrap();
            replies.flush();
        }
        let both = |p: &Pair| {
            p.readers
                .iter()
                .all(|r| r.received.len() == 2 * CALLS as usize)
        };
        assert!(
            replies.run_while_not(Duration::from_secs(30), both),
            "seed {seed}"
        );

        for (index, client, vendor) in [
            (0, fast, VendorId::EPROSIMA),
            (1, cyclone, VendorId::ECLIPSE_CYCLONE),
        ] {
            let mut keys = Vec::new();
            let mut for_others = 0;
            for reply in &replies.readers[index].received {
                match client.accept_reply(reply, vendor) {
                    Ok((key, response)) => {
                        assert_eq!(response.len(), 4 + 8, "body doubled");
                        assert_eq!(response[4..8], response[8..12]);
                        keys.push(key);
                    }
                    Err(Dropped::ForAnotherClient) => for_others += 1,
                    Err(e) => panic!("seed {seed}: {e:?}"),
                }
            }
            assert_eq!(for_others, CALLS, "seed {seed}");
            let expected: Vec<ReplyKey> = if index == 0 {
                fast_keys.clone()
            } else {
                (1..=CALLS).map(ReplyKey::HeaderSequence).collect()
            };
            assert_eq!(
                keys, expected,
                "seed {seed}: every call answered once, in order"
            );
        }
    }
}
