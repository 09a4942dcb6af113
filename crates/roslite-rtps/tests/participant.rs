//! A `Participant` fed with real Fast DDS 3.2.3 (Kilted) and Cyclone DDS 11 discovery traffic
//! from the captures in `tests/data`.
//!
//! The participant takes the GUID prefix of the capture's ROS subscriber process, so the
//! directed traffic in the capture (INFO_DST) is addressed to it; the subscriber's own
//! datagrams then come back as "own" and are ignored. It must discover the publisher, learn
//! its endpoints with the right names, match a reader we create, and announce that reader
//! in a DATA(r) that decodes again. The `ros_discovery_info` sample of the Fast DDS talker is
//! received through a real reader and decoded as `ParticipantEntitiesInfo`.

mod common;

use std::net::Ipv4Addr;
use std::time::Duration;

use common::{rtps_datagrams, CYCLONE, TALKER};
use roslite_rtps::discovery::ros::{self, ParticipantEntitiesInfo, WireDistro};
use roslite_rtps::discovery::{DurabilityKind, ReliabilityKind};
use roslite_rtps::participant::{
    EndpointOptions, EndpointQos, Event, Participant, ParticipantConfig,
};
use roslite_rtps::{
    parse_message, EndpointData, EndpointKind, EntityId, Guid, GuidPrefix, Instant, Locator,
    ReceiveStats, SenderInfo, Submessage, VendorId,
};

const CHATTER: &str = "rt/chatter";
const STRING: &str = "std_msgs::msg::dds_::String_";

fn prefix(hex: &str) -> GuidPrefix {
    let mut p = [0u8; 12];
    for (i, b) in p.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap();
    }
    GuidPrefix(p)
}

/// A participant impersonating `me`, on the loopback ports of participant index `index`.
fn participant(me: GuidPrefix, index: u32) -> Participant {
    let c = ParticipantConfig::localhost(me, 0, index, 4);
    Participant::new(c, Instant::ZERO).unwrap()
}

/// Feeds the datagrams of frames `frames` of a capture, frame `n` at `n` ms, draining
/// transmits and events.
fn replay(
    p: &mut Participant,
    capture: &str,
    frames: std::ops::Range<usize>,
) -> (Vec<Event>, Vec<Vec<u8>>) {
    let mut events = Vec::new();
    let mut sent = Vec::new();
    for d in rtps_datagrams(capture) {
        if !frames.contains(&d.frame) {
            continue;
        }
        let now = Instant::ZERO + Duration::from_millis(d.frame as u64);
        let src = Locator::udpv4(*d.src.ip(), d.src.port());
        p.handle_datagram(now, Some(src), &d.payload);
        if p.poll_timeout().is_some_and(|t| t <= now) {
            p.handle_timeout(now);
        }
        while let Some(out) = p.poll_transmit(now) {
            assert!(out
                .destinations
                .iter()
                .all(|l| l.to_socket_addr().unwrap().ip() == Ipv4Addr::LOCALHOST));
            sent.push(out.bytes.to_vec());
        }
        while let Some(e) = p.poll_event() {
            events.push(e);
        }
    }
    (events, sent)
}

/// The DATA(r)/DATA(w) we sent for `guid`, decoded.
fn our_announcement(sent: &[Vec<u8>], kind: EndpointKind, guid: Guid) -> EndpointData {
    let announcer = match kind {
        EndpointKind::Writer => EntityId::SEDP_PUBLICATIONS_ANNOUNCER,
        EndpointKind::Reader => EntityId::SEDP_SUBSCRIPTIONS_ANNOUNCER,
    };
    let mut found = None;
    for bytes in sent {
        let mut st = ReceiveStats::default();
        parse_message(bytes, &mut st, |rx| {
            if let Submessage::Data(d) = rx.submessage {
                if d.writer_id != announcer {
                    return;
                }
                let Some(pl) = d.payload else { return };
                let sender = SenderInfo::from_receiver(rx.receiver);
                assert_eq!(sender.vendor_id, VendorId::ROSLITE);
                let ed = EndpointData::from_payload(pl.bytes, kind, sender).unwrap();
                if ed.guid == guid {
                    found = Some(ed);
                }
            }
        })
        .unwrap();
        assert_eq!(st.malformed(), 0);
    }
    found.expect("our SEDP announcement was sent")
}

#[test]
fn fastdds_talker_is_discovered_and_matched() {
    let talker = prefix("010f78fd6a3db53900000000");
    let listener = prefix("010f78fd883d494300000000");
    let mut p = participant(listener, 1);
    // The same entity ids the listener used for its graph endpoints (0x103, 0x204), so the
    // talker's directed ros_discovery_info DATA reaches our reader.
    let _info_w = p
        .create_writer(
            Instant::ZERO,
            EndpointOptions::new(ros::DISCOVERY_INFO_TOPIC, ros::DISCOVERY_INFO_TYPE)
                .with_qos(EndpointQos::discovery_info_writer()),
        )
        .unwrap();
    let info_r = p
        .create_reader(
            Instant::ZERO,
            EndpointOptions::new(ros::DISCOVERY_INFO_TOPIC, ros::DISCOVERY_INFO_TYPE)
                .with_qos(EndpointQos::discovery_info_reader()),
        )
        .unwrap();
    let chatter_r = p
        .create_reader(Instant::ZERO, EndpointOptions::new(CHATTER, STRING))
        .unwrap();
    // Up to the talker's shutdown, which starts at frame 195.
    let (events, sent) = replay(&mut p, TALKER, 0..195);

    let talker_guid = Guid::new(talker, EntityId::PARTICIPANT);
    assert!(events.contains(&Event::ParticipantDiscovered(talker_guid)));
    let rp = p.remote_participant(talker).unwrap();
    assert_eq!(rp.vendor_id(), VendorId::EPROSIMA);
    assert_eq!(ros::parse_enclave(rp.user_data()), Some("/"));
    assert!(rp.is_verified());
    assert!(
        p.stats().own_datagrams > 0,
        "the listener's own traffic was recognised"
    );
    assert_eq!(p.stats().receive.malformed(), 0);
    assert_eq!(p.stats().sedp.malformed, 0);
    assert_eq!(p.stats().sedp.prefix_mismatch, 0);

    // The talker's endpoints, with ROS names.
    let chatter_w = p
        .remote_endpoints()
        .find(|e| e.topic_name() == CHATTER && e.kind() == EndpointKind::Writer)
        .expect("the talker's chatter writer");
    assert_eq!(chatter_w.type_name(), STRING);
    assert_eq!(chatter_w.participant(), talker_guid);
    assert_eq!(chatter_w.data().reliability.kind, ReliabilityKind::Reliable);
    assert!(ros::parse_typehash(&chatter_w.data().user_data).is_some());
    let chatter_w = chatter_w.guid();
    for (topic, kind) in [
        ("rt/rosout", EndpointKind::Writer),
        ("rt/parameter_events", EndpointKind::Writer),
        ("rq/motor_powerRequest", EndpointKind::Reader),
        ("rr/motor_powerReply", EndpointKind::Writer),
        ("rq/talker/get_parametersRequest", EndpointKind::Reader),
    ] {
        assert!(
            p.remote_endpoints()
                .any(|e| e.topic_name() == topic && e.kind() == kind),
            "{topic}"
        );
    }
    let names: Vec<_> = p
        .remote_endpoints()
        .filter_map(|e| ros::dds_to_ros(e.topic_name()))
        .collect();
    assert!(names.contains(&(ros::RosTopicKind::ServiceRequest, "/motor_power".into())));

    // Our chatter reader matched the talker's writer.
    assert!(events.contains(&Event::WriterMatched {
        reader: chatter_r,
        remote: chatter_w
    }));
    // And was announced in a DATA(r) that decodes to what we created.
    let ours = our_announcement(&sent, EndpointKind::Reader, chatter_r.guid(listener));
    assert_eq!(ours.topic_name, CHATTER);
    assert_eq!(ours.type_name, STRING);
    assert_eq!(ours.reliability.kind, ReliabilityKind::Reliable);
    assert_eq!(ours.durability, DurabilityKind::Volatile);
    assert_eq!(ours.participant_guid, p.guid());

    // The talker's graph sample arrived on our ros_discovery_info reader.
    let infos: Vec<ParticipantEntitiesInfo> = events
        .iter()
        .filter_map(|e| match e {
            Event::Sample { reader, sample } if *reader == info_r => Some(sample),
            _ => None,
        })
        .map(|s| {
            ParticipantEntitiesInfo::from_payload_any(&s.payload, WireDistro::IronOrLater)
                .unwrap()
                .0
        })
        .collect();
    let last = infos.last().expect("a ros_discovery_info sample");
    assert_eq!(last.gid, talker_guid);
    let talker_node = last
        .nodes
        .iter()
        .find(|n| n.node_name == "talker")
        .expect("node /talker");
    assert_eq!(talker_node.node_namespace, "/");
    assert!(talker_node.writer_gids.contains(&chatter_w));
    // Re-encoding gives a sample that decodes to the same value.
    let again = last.to_payload(WireDistro::IronOrLater).unwrap();
    assert_eq!(
        &ParticipantEntitiesInfo::from_payload(&again, WireDistro::IronOrLater).unwrap(),
        last
    );

    // The talker shuts down: it disposes its endpoints (DATA(w[UD]), DATA(r[UD])) and its
    // participant (DATA(p[UD])).
    let (events, _) = replay(&mut p, TALKER, 195..usize::MAX);
    assert!(events.contains(&Event::WriterUnmatched {
        reader: chatter_r,
        remote: chatter_w
    }));
    assert!(events.contains(&Event::ParticipantLost(talker_guid)));
    assert!(p.stats().sedp.disposals > 0);
    assert_eq!(p.stats().participants_disposed, 1);
    assert_eq!(p.remote_endpoints().count(), 0);
    assert_eq!(p.remote_participants().count(), 0);
}

#[test]
fn cyclone_writer_is_discovered_and_matched() {
    let rclpy = prefix("010f78fd4b6671cb00000000");
    let mut p = participant(rclpy, 1);
    let r = p
        .create_reader(Instant::ZERO, EndpointOptions::new(CHATTER, STRING))
        .unwrap();
    let (events, sent) = replay(&mut p, CYCLONE, 0..usize::MAX);
    let cyclone = p
        .remote_participants()
        .find(|rp| rp.vendor_id() == VendorId::ECLIPSE_CYCLONE)
        .expect("the Cyclone participant");
    assert_eq!(ros::parse_enclave(cyclone.user_data()), Some("/"));
    let cyclone_guid = cyclone.guid();
    assert!(events.contains(&Event::ParticipantDiscovered(cyclone_guid)));
    let w = p
        .remote_endpoints()
        .find(|e| e.participant() == cyclone_guid && e.kind() == EndpointKind::Writer)
        .expect("Cyclone's writer");
    assert_eq!(w.topic_name(), CHATTER);
    assert_eq!(w.type_name(), STRING);
    // Cyclone omits defaults: a writer's absent RELIABILITY means RELIABLE.
    assert_eq!(w.data().reliability.kind, ReliabilityKind::Reliable);
    let wg = w.guid();
    assert!(events.contains(&Event::WriterMatched {
        reader: r,
        remote: wg
    }));
    assert_eq!(p.stats().receive.malformed(), 0);
    assert_eq!(p.stats().sedp.malformed, 0);
    let ours = our_announcement(&sent, EndpointKind::Reader, r.guid(rclpy));
    assert_eq!(ours.topic_name, CHATTER);
    // Cyclone's samples reached the reader.
    let samples = events
        .iter()
        .filter(|e| matches!(e, Event::Sample { reader, .. } if *reader == r))
        .count();
    assert!(samples > 0, "chatter samples from Cyclone");
    // Cyclone's ParticipantMessageData (WLP, RTPS 2.5 §8.4.13: one AUTOMATIC update, frame
    // 241) reached our participant-message reader, matched through bits 10/11 of its
    // PID_BUILTIN_ENDPOINT_SET, and decoded; nothing was counted as malformed.
    assert_ne!(cyclone.data().builtin_endpoints.0 & (3 << 10), 0);
    let wlp = p.stats().wlp;
    assert_eq!(
        (wlp.automatic, wlp.malformed, wlp.prefix_mismatch),
        (1, 0, 0),
        "{wlp:?}"
    );
}

/// Every captured datagram, truncated and with flipped bytes, fed to a participant that has
/// discovered the senders: nothing panics, and the damage is counted, not acted upon.
#[test]
fn damaged_captures_do_not_panic() {
    let listener = prefix("010f78fd883d494300000000");
    let mut p = participant(listener, 1);
    p.create_reader(Instant::ZERO, EndpointOptions::new(CHATTER, STRING))
        .unwrap();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut now = Instant::ZERO;
    for name in [TALKER, CYCLONE] {
        for d in rtps_datagrams(name) {
            for round in 0..4 {
                now += Duration::from_millis(1);
                let mut bytes = d.payload.clone();
                match round {
                    0 => {}
                    1 => bytes.truncate((next() as usize) % (bytes.len() + 1)),
                    _ => {
                        for _ in 0..4 {
                            let i = (next() as usize) % bytes.len();
                            bytes[i] ^= 1 << (next() % 8);
                        }
                    }
                }
                p.handle_datagram(now, None, &bytes);
                if p.poll_timeout().is_some_and(|t| t <= now) {
                    p.handle_timeout(now);
                }
                while p.poll_transmit(now).is_some() {}
                while p.poll_event().is_some() {}
            }
        }
    }
    let st = p.stats();
    assert!(st.receive.malformed() > 0);
    assert!(p.remote_participants().count() <= 64);
}
