//! Deterministic simulation tests of discovery and data exchange between participants.
//!
//! `Swarm` is a small virtual-clock harness: participants on 127.0.0.1 with the well-known
//! ports, an in-memory network with fixed latency and seeded loss, and event logs. Nothing
//! here sleeps or opens a socket; seconds of protocol time run in milliseconds.

use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::discovery::matching::{PeerHost, QosPolicy};
use crate::discovery::ros;
use crate::receiver::{parse_message, ReceiveStats};
use crate::sim::{LinkConfig, SimNetwork};
use crate::types::Count;
use crate::wire::{DataRepr, PayloadKind, SerializedPayload, Submessage};

pub(super) const CHATTER: &str = "rt/chatter";
pub(super) const STRING: &str = "std_msgs::msg::dds_::String_";

pub(super) fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn at(t: Duration) -> Instant {
    Instant::ZERO + t
}

/// A CDR_LE `std_msgs/String` payload.
pub(super) fn string_payload(s: &str) -> Arc<[u8]> {
    let mut v = vec![0, 1, 0, 0];
    v.extend_from_slice(&u32::try_from(s.len() + 1).unwrap().to_le_bytes());
    v.extend_from_slice(s.as_bytes());
    v.push(0);
    while v.len() % 4 != 0 {
        v.push(0);
    }
    Arc::from(v)
}

pub(super) fn payload_text(p: &[u8]) -> String {
    let n = u32::from_le_bytes(p[4..8].try_into().unwrap()) as usize;
    String::from_utf8(p[8..8 + n - 1].to_vec()).unwrap()
}

struct Node {
    p: Participant,
    /// Unicast locators (metatraffic, user) that reach this node.
    locators: Vec<Locator>,
    events: Vec<Event>,
    /// Silenced nodes neither send nor receive nor run timers (a crashed process).
    alive: bool,
    /// A stopped process (SIGSTOP): like a silenced node, but the datagrams sent to it wait
    /// in its sockets' buffers (`Some`, oldest first, at most [`STOPPED_INBOX`]) and are
    /// handled when it runs again ([`Swarm::resume`]).
    stopped: Option<Vec<(Locator, Vec<u8>)>>,
    /// The node's acknowledgements of SEDP announcements are cut out of what it sends
    /// ([`without_sedp_acknacks`]): a peer that receives and applies discovery, but never
    /// says so.
    mutes_sedp_acks: bool,
}

/// Datagrams a stopped node's sockets hold; later ones are dropped, as a full socket
/// receive buffer drops them.
const STOPPED_INBOX: usize = 256;

/// `message` without its ACKNACK submessages to an SEDP announcer (RTPS 2.5 §9.4.5.1: each
/// submessage header gives its length; ACKNACK's body starts with readerId, writerId).
fn without_sedp_acknacks(message: &[u8]) -> Vec<u8> {
    const HEADER: usize = 20;
    let mut out = message[..HEADER.min(message.len())].to_vec();
    let mut at = HEADER;
    while at + 4 <= message.len() {
        let little = message[at + 1] & 0x01 != 0;
        let len_bytes = [message[at + 2], message[at + 3]];
        let len = usize::from(if little {
            u16::from_le_bytes(len_bytes)
        } else {
            u16::from_be_bytes(len_bytes)
        });
        // Length 0 on anything but PAD and INFO_TS: the submessage runs to the end.
        let end = if len == 0 {
            message.len()
        } else {
            (at + 4 + len).min(message.len())
        };
        let body = &message[at + 4..end];
        let to_announcer = message[at] == crate::wire::SubmessageId::ACKNACK.0
            && body.len() >= 8
            && [
                EntityId::SEDP_PUBLICATIONS_ANNOUNCER,
                EntityId::SEDP_SUBSCRIPTIONS_ANNOUNCER,
            ]
            .iter()
            .any(|id| body[4..8] == id.to_bytes());
        if !to_announcer {
            out.extend_from_slice(&message[at..end]);
        }
        at = end;
    }
    out
}

pub(super) struct Swarm {
    nodes: Vec<Node>,
    pub(super) now: Instant,
    net: SimNetwork,
    /// Datagrams sent whose last bytes came from a writer's history (a DATA_FRAG's data).
    with_tail: usize,
}

fn config(i: u32) -> ParticipantConfig {
    let mut prefix = [0u8; 12];
    prefix[0] = 0xaa;
    prefix[11] = u8::try_from(i).unwrap() + 1;
    let mut c = ParticipantConfig::localhost(GuidPrefix(prefix), 0, i, 4);
    c.entity_name = Some(format!("node{i}"));
    c
}

impl Swarm {
    pub(super) fn new(n: u32, seed: u64) -> Self {
        Self::new_with(n, seed, |_| {})
    }

    /// [`Swarm::new`] with each participant's configuration changed by `change`.
    pub(super) fn new_with(n: u32, seed: u64, change: impl Fn(&mut ParticipantConfig)) -> Self {
        let mut s = Swarm {
            nodes: Vec::new(),
            now: Instant::ZERO,
            net: SimNetwork::new(seed),
            with_tail: 0,
        };
        for i in 0..n {
            let mut c = config(i);
            change(&mut c);
            s.add(c);
        }
        s
    }

    /// Every link loses `loss` of the datagrams, duplicates and reorders 5 %.
    fn rough(mut self, loss: f64) -> Self {
        self.net.set_default_link(LinkConfig::rough(loss));
        self
    }

    fn add(&mut self, c: ParticipantConfig) -> usize {
        let locators = c
            .metatraffic_unicast
            .iter()
            .chain(&c.default_unicast)
            .copied()
            .collect();
        let p = Participant::new(c, self.now).unwrap();
        self.nodes.push(Node {
            p,
            locators,
            events: Vec::new(),
            alive: true,
            stopped: None,
            mutes_sedp_acks: false,
        });
        self.nodes.len() - 1
    }

    pub(super) fn p(&mut self, i: usize) -> &mut Participant {
        &mut self.nodes[i].p
    }

    /// Sends what every node wants sent now and collects their events.
    pub(super) fn flush(&mut self) {
        for i in 0..self.nodes.len() {
            if !self.nodes[i].alive {
                continue;
            }
            let now = self.now;
            let from = *self.nodes[i].locators.last().unwrap();
            while let Some(d) = self.nodes[i].p.poll_transmit(now) {
                assert!(d.bytes.len() <= self.nodes[i].p.config().max_datagram_size);
                self.with_tail += usize::from(d.bytes.tail.is_some());
                let mut bytes = d.bytes.to_vec();
                if self.nodes[i].mutes_sedp_acks {
                    bytes = without_sedp_acknacks(&bytes);
                }
                for dest in &d.destinations {
                    self.net.send(from, *dest, bytes.clone(), now);
                }
            }
            while let Some(e) = self.nodes[i].p.poll_event() {
                self.nodes[i].events.push(e);
            }
        }
    }

    fn next_time(&self) -> Option<Instant> {
        let timers = self
            .nodes
            .iter()
            .filter(|n| n.alive)
            .filter_map(|n| n.p.poll_timeout());
        self.net
            .next_delivery_time()
            .into_iter()
            .chain(timers)
            .min()
    }

    /// Runs the protocol until `until` (virtual time).
    fn run_until(&mut self, until: Instant) {
        loop {
            self.flush();
            let Some(next) = self.next_time() else {
                self.now = until;
                return;
            };
            if next > until {
                self.now = until;
                return;
            }
            self.now = self.now.max(next);
            let now = self.now;
            while let Some((from, to, bytes)) = self.net.poll_delivery(now) {
                if let Some(n) = self.nodes.iter_mut().find(|n| n.locators.contains(&to)) {
                    if let Some(inbox) = &mut n.stopped {
                        if inbox.len() < STOPPED_INBOX {
                            inbox.push((from, bytes));
                        }
                    } else if n.alive {
                        n.p.handle_datagram(now, Some(from), &bytes);
                    }
                }
            }
            for n in self.nodes.iter_mut().filter(|n| n.alive) {
                if n.p.poll_timeout().is_some_and(|t| t <= now) {
                    n.p.handle_timeout(now);
                }
            }
        }
    }

    pub(super) fn run_for(&mut self, d: Duration) {
        let until = self.now + d;
        self.run_until(until);
    }

    /// Stops node `i` as SIGSTOP does: no timers, nothing sent, datagrams kept for later.
    fn stop(&mut self, i: usize) {
        self.nodes[i].alive = false;
        self.nodes[i].stopped = Some(Vec::new());
    }

    /// Lets stopped node `i` run again (SIGCONT): it first handles what waited in its
    /// sockets (all of it at this instant, as a process catching up does), then its timers
    /// when `timers_first` is false; with `timers_first` its overdue timers run first (the
    /// driver thread woke before the receiving one).
    fn resume(&mut self, i: usize, timers_first: bool) {
        let now = self.now;
        let inbox = self.nodes[i].stopped.take().unwrap_or_default();
        let node = &mut self.nodes[i];
        node.alive = true;
        if timers_first && node.p.poll_timeout().is_some_and(|t| t <= now) {
            node.p.handle_timeout(now);
        }
        for (from, bytes) in inbox {
            node.p.handle_datagram(now, Some(from), &bytes);
            // The runtime takes the samples after each datagram, as `flush` does.
            while let Some(e) = node.p.poll_event() {
                node.events.push(e);
            }
        }
        if node.p.poll_timeout().is_some_and(|t| t <= now) {
            node.p.handle_timeout(now);
        }
    }

    pub(super) fn events(&mut self, i: usize) -> Vec<Event> {
        std::mem::take(&mut self.nodes[i].events)
    }

    pub(super) fn samples(&mut self, i: usize) -> Vec<String> {
        let mut out = Vec::new();
        let mut rest = Vec::new();
        for e in std::mem::take(&mut self.nodes[i].events) {
            match e {
                Event::Sample { sample, .. } => out.push(payload_text(&sample.payload)),
                other => rest.push(other),
            }
        }
        self.nodes[i].events = rest;
        out
    }
}

pub(super) fn chatter(qos: EndpointQos) -> EndpointOptions {
    EndpointOptions::new(CHATTER, STRING)
        .with_qos(qos)
        .with_user_data(ros::typehash_user_data(
            "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18",
        ))
}

fn has(events: &[Event], f: impl Fn(&Event) -> bool) -> bool {
    events.iter().any(f)
}

#[test]
fn two_participants_discover_each_other_quickly() {
    let mut s = Swarm::new(2, 1);
    s.run_for(ms(50));
    let g0 = s.p(0).guid();
    let g1 = s.p(1).guid();
    let e0 = s.events(0);
    let e1 = s.events(1);
    assert!(e0.contains(&Event::ParticipantDiscovered(g1)), "{e0:?}");
    assert!(e1.contains(&Event::ParticipantDiscovered(g0)), "{e1:?}");
    let r = s.p(0).remote_participant(g1.prefix).unwrap();
    assert_eq!(r.user_data(), b"enclave=/;");
    assert_eq!(r.data().entity_name.as_deref(), Some("node1"));
    assert!(r.is_verified(), "SEDP traffic flowed");
    assert_eq!(r.host(), PeerHost::Local);
}

#[test]
fn writer_and_reader_match_and_exchange_100_samples_at_20_percent_loss() {
    let mut s = Swarm::new(2, 7).rough(0.2);
    let w = s
        .p(0)
        .create_writer(Instant::ZERO, chatter(EndpointQos::ros_default()))
        .unwrap();
    let r = s
        .p(1)
        .create_reader(
            Instant::ZERO,
            chatter(EndpointQos {
                history: History::KeepAll,
                ..EndpointQos::ros_default()
            }),
        )
        .unwrap();
    s.run_for(Duration::from_secs(2));
    let wg = w.guid(s.p(0).guid_prefix());
    let rg = r.guid(s.p(1).guid_prefix());
    let e0 = s.events(0);
    let e1 = s.events(1);
    assert!(
        e0.contains(&Event::ReaderMatched {
            writer: w,
            remote: rg
        }),
        "{e0:?}"
    );
    assert!(
        e1.contains(&Event::WriterMatched {
            reader: r,
            remote: wg
        }),
        "{e1:?}"
    );
    let remote = s.p(1).remote_endpoint(wg).unwrap();
    assert_eq!(remote.topic_name(), CHATTER);
    assert_eq!(remote.type_name(), STRING);
    assert!(ros::parse_typehash(&remote.data().user_data).is_some());

    // 100 samples, one every 10 ms; the writer's KEEP_LAST 10 is enough at this rate.
    for i in 0..100 {
        let now = s.now;
        s.p(0)
            .write(now, w, string_payload(&format!("hello {i}")), None)
            .unwrap();
        s.run_for(ms(10));
    }
    s.run_for(Duration::from_secs(3));
    let got = s.samples(1);
    let want: Vec<String> = (0..100).map(|i| format!("hello {i}")).collect();
    assert_eq!(got, want, "in order, without loss or duplicates");
    let net = s.net.stats();
    assert!(
        net.dropped * 10 > net.sent,
        "the network really lost datagrams: {net:?}"
    );
    assert_eq!(s.p(1).stats().receive.malformed(), 0);
}

#[test]
fn three_participants_all_receive() {
    let mut s = Swarm::new(3, 3).rough(0.2);
    let w = s
        .p(0)
        .create_writer(Instant::ZERO, chatter(EndpointQos::ros_default()))
        .unwrap();
    for i in 1..3 {
        s.p(i)
            .create_reader(Instant::ZERO, chatter(EndpointQos::ros_default()))
            .unwrap();
    }
    s.run_for(Duration::from_secs(2));
    assert_eq!(s.p(0).writer_matches(w).count(), 2);
    for i in 0..3 {
        assert_eq!(s.p(i).remote_participants().count(), 2);
    }
    for i in 0..100 {
        let now = s.now;
        s.p(0)
            .write(now, w, string_payload(&format!("m{i}")), None)
            .unwrap();
        s.run_for(ms(10));
    }
    s.run_for(Duration::from_secs(3));
    let want: Vec<String> = (0..100).map(|i| format!("m{i}")).collect();
    assert_eq!(s.samples(1), want);
    assert_eq!(s.samples(2), want);
}

#[test]
fn best_effort_writer_and_reliable_reader_are_incompatible() {
    let mut s = Swarm::new(2, 1);
    let w = s
        .p(0)
        .create_writer(Instant::ZERO, chatter(EndpointQos::sensor_data()))
        .unwrap();
    let r = s
        .p(1)
        .create_reader(Instant::ZERO, chatter(EndpointQos::ros_default()))
        .unwrap();
    s.run_for(Duration::from_secs(1));
    let wg = w.guid(s.p(0).guid_prefix());
    let rg = r.guid(s.p(1).guid_prefix());
    let e0 = s.events(0);
    let e1 = s.events(1);
    assert!(e0.contains(&Event::IncompatibleQos {
        local: EndpointRef::Writer(w),
        remote: rg,
        policy: QosPolicy::Reliability
    }));
    assert!(e1.contains(&Event::IncompatibleQos {
        local: EndpointRef::Reader(r),
        remote: wg,
        policy: QosPolicy::Reliability
    }));
    assert!(!has(&e1, |e| matches!(e, Event::WriterMatched { .. })));
    // Reported once, although the SEDP data keeps being (re)sent.
    assert_eq!(
        e1.iter()
            .filter(|e| matches!(e, Event::IncompatibleQos { .. }))
            .count(),
        1
    );
    let now = s.now;
    s.p(0).write(now, w, string_payload("x"), None).unwrap();
    s.run_for(Duration::from_secs(1));
    assert!(s.samples(1).is_empty());
}

#[test]
fn different_type_does_not_match() {
    let mut s = Swarm::new(2, 1);
    let w = s
        .p(0)
        .create_writer(Instant::ZERO, chatter(EndpointQos::ros_default()))
        .unwrap();
    s.p(1)
        .create_reader(
            Instant::ZERO,
            EndpointOptions::new(CHATTER, "std_msgs::msg::dds_::Int32_"),
        )
        .unwrap();
    s.run_for(Duration::from_secs(1));
    let e1 = s.events(1);
    assert!(!has(&e1, |e| matches!(
        e,
        Event::WriterMatched { .. } | Event::IncompatibleQos { .. }
    )));
    assert_eq!(s.p(0).writer_matches(w).count(), 0);
    // Both still know the other's endpoint for graph queries.
    assert_eq!(s.p(1).remote_endpoints().count(), 1);
}

#[test]
fn silent_participant_expires_after_its_lease() {
    let mut s = Swarm::new(1, 1);
    let mut c = config(1);
    c.lease_duration = Duration::from_secs(2);
    c.announce_period = ms(500);
    let b = s.add(c);
    let w = s
        .p(b)
        .create_writer(Instant::ZERO, chatter(EndpointQos::ros_default()))
        .unwrap();
    let r = s
        .p(0)
        .create_reader(Instant::ZERO, chatter(EndpointQos::ros_default()))
        .unwrap();
    s.run_for(Duration::from_secs(1));
    let wg = w.guid(s.p(b).guid_prefix());
    assert!(s.events(0).contains(&Event::WriterMatched {
        reader: r,
        remote: wg
    }));
    // The process dies: nothing more from it.
    s.nodes[b].alive = false;
    let died = s.now;
    s.run_for(ms(1900));
    assert!(
        s.p(0).remote_participant(wg.prefix).is_some(),
        "not before the lease"
    );
    s.run_for(ms(200));
    let e0 = s.events(0);
    assert!(
        e0.contains(&Event::WriterUnmatched {
            reader: r,
            remote: wg
        }),
        "{e0:?}"
    );
    let lost = Guid::new(wg.prefix, EntityId::PARTICIPANT);
    let pos_unmatch = e0
        .iter()
        .position(|e| matches!(e, Event::WriterUnmatched { .. }))
        .unwrap();
    let pos_lost = e0
        .iter()
        .position(|e| *e == Event::ParticipantLost(lost))
        .unwrap();
    assert!(pos_unmatch < pos_lost, "endpoints go first");
    assert!(s.now - died <= Duration::from_millis(2100));
    assert_eq!(s.p(0).remote_endpoints().count(), 0);
    assert_eq!(s.p(0).stats().participants_expired, 1);
}

#[test]
fn deleting_a_writer_unmatches_it_remotely() {
    let mut s = Swarm::new(2, 5).rough(0.1);
    let w = s
        .p(0)
        .create_writer(Instant::ZERO, chatter(EndpointQos::ros_default()))
        .unwrap();
    let r = s
        .p(1)
        .create_reader(Instant::ZERO, chatter(EndpointQos::ros_default()))
        .unwrap();
    s.run_for(Duration::from_secs(1));
    let wg = w.guid(s.p(0).guid_prefix());
    assert!(s.events(1).contains(&Event::WriterMatched {
        reader: r,
        remote: wg
    }));
    let now = s.now;
    s.p(0).delete_writer(now, w);
    s.run_for(Duration::from_secs(1));
    let e1 = s.events(1);
    assert!(
        e1.contains(&Event::WriterUnmatched {
            reader: r,
            remote: wg
        }),
        "{e1:?}"
    );
    assert!(e1.contains(&Event::RemoteEndpointChanged));
    assert!(s.p(1).remote_endpoint(wg).is_none());
    assert_eq!(
        s.p(0).write(now, w, string_payload("x"), None),
        Err(WriteError::UnknownWriter)
    );
}

#[test]
fn transient_local_late_joiner_gets_history() {
    let mut s = Swarm::new(1, 9).rough(0.2);
    let qos = EndpointQos {
        transient_local: true,
        history: History::KeepLast { depth: 5 },
        ..EndpointQos::ros_default()
    };
    let w = s.p(0).create_writer(Instant::ZERO, chatter(qos)).unwrap();
    for i in 0..10 {
        s.p(0)
            .write(Instant::ZERO, w, string_payload(&format!("old {i}")), None)
            .unwrap();
    }
    s.run_for(Duration::from_secs(1));
    // The late joiner starts now.
    let b = s.add(config(1));
    let now = s.now;
    s.p(b).create_reader(now, chatter(qos)).unwrap();
    s.run_for(Duration::from_secs(3));
    let want: Vec<String> = (5..10).map(|i| format!("old {i}")).collect();
    assert_eq!(s.samples(b), want);
}

/// A keyed topic's KEEP_LAST histories keep `depth` samples of at most `max_kept_instances`
/// instances: the writer's and the late joiner's queue each say so once, naming the cap, and
/// the reader still gets what fits.
#[test]
fn reaching_the_kept_instances_says_so_once() {
    static KEY: roslite_cdr::key::KeyStruct = roslite_cdr::key::KeyStruct {
        members: &[roslite_cdr::key::KeyMember {
            in_key: true,
            element: roslite_cdr::key::KeyElement::Primitive { size: 4 },
            collection: roslite_cdr::key::KeyCollection::Single,
        }],
    };
    let keyed = || {
        EndpointOptions::new("rt/keyed", "test_msgs::msg::dds_::Keyed_")
            .with_qos(EndpointQos {
                transient_local: true,
                history: History::KeepLast { depth: 1 },
                ..EndpointQos::ros_default()
            })
            .with_key(Some(&KEY))
    };
    let mut s = Swarm::new_with(1, 12, |c| c.max_kept_instances = 3);
    let w = s.p(0).create_writer(Instant::ZERO, keyed()).unwrap();
    for round in 0..2 {
        for key in 0u32..5 {
            let mut payload = vec![0, 1, 0, 0];
            payload.extend_from_slice(&key.to_le_bytes());
            s.p(0)
                .write(Instant::ZERO, w, payload.into(), None)
                .unwrap_or_else(|e| panic!("round {round}, key {key}: {e:?}"));
        }
    }
    assert_eq!(s.p(0).writer_history(w).map(|h| h.samples), Some(3));
    let limits = |events: Vec<Event>| -> Vec<Event> {
        events
            .into_iter()
            .filter(|e| matches!(e, Event::LimitReached { .. }))
            .collect()
    };
    let reached = |value| Event::LimitReached {
        limit: Limit::MaxKeptInstances,
        value,
    };
    s.run_for(Duration::from_millis(100));
    assert_eq!(limits(s.events(0)), [reached(3)]);
    // A late joiner keeping two instances gets the writer's three in one datagram.
    let mut c = config(1);
    c.max_kept_instances = 2;
    let b = s.add(c);
    let now = s.now;
    s.p(b).create_reader(now, keyed()).unwrap();
    s.run_for(Duration::from_secs(2));
    let events = s.events(b);
    let samples = events
        .iter()
        .filter(|e| matches!(e, Event::Sample { .. }))
        .count();
    assert_eq!(samples, 2);
    assert_eq!(limits(events), [reached(2)]);
    let text = Limit::MaxKeptInstances.to_string();
    assert!(text.contains("max_kept_instances"), "{text}");
}

#[test]
fn volatile_reader_of_transient_local_writer_gets_no_history() {
    let mut s = Swarm::new(1, 9);
    let qos = EndpointQos {
        transient_local: true,
        ..EndpointQos::ros_default()
    };
    let w = s.p(0).create_writer(Instant::ZERO, chatter(qos)).unwrap();
    s.p(0)
        .write(Instant::ZERO, w, string_payload("old"), None)
        .unwrap();
    let b = s.add(config(1));
    s.p(b)
        .create_reader(Instant::ZERO, chatter(EndpointQos::ros_default()))
        .unwrap();
    s.run_for(Duration::from_secs(1));
    assert!(s.samples(b).is_empty());
    let now = s.now;
    s.p(0).write(now, w, string_payload("new"), None).unwrap();
    s.run_for(Duration::from_secs(1));
    assert_eq!(s.samples(b), vec!["new".to_string()]);
}

/// A hand-made SPDP DATA(p) datagram from participant `prefix`.
pub(super) fn spdp_datagram(prefix: GuidPrefix, domain: u32) -> Vec<u8> {
    let mut pd = ParticipantData::new(prefix);
    pd.domain_id = Some(domain);
    pd.metatraffic_unicast_locators = vec![Locator::udpv4(Ipv4Addr::LOCALHOST, 9999)];
    let payload = pd.to_payload(roslite_cdr::Endianness::Little).unwrap();
    let data = Submessage::Data(DataRepr {
        extra_flags: 0,
        reader_id: EntityId::SPDP_PARTICIPANT_DETECTOR,
        writer_id: EntityId::SPDP_PARTICIPANT_ANNOUNCER,
        writer_sn: SequenceNumber(1),
        inline_qos: None,
        payload: Some(SerializedPayload {
            kind: PayloadKind::Data,
            bytes: &payload,
        }),
        non_standard_payload: false,
    });
    let mut b = crate::MessageBuilder::new(HeaderRepr::new(prefix), 65_000);
    b.push(&data).unwrap();
    b.finish().remove(0)
}

#[test]
fn participant_cap_holds_under_a_flood_of_spdp_guids() {
    let mut c = config(0);
    c.max_remote_participants = 8;
    let mut p = Participant::new(c, Instant::ZERO).unwrap();
    for i in 0..1000u32 {
        let mut prefix = [0x55u8; 12];
        prefix[8..].copy_from_slice(&i.to_be_bytes());
        let now = at(ms(u64::from(i)));
        p.handle_datagram(now, None, &spdp_datagram(GuidPrefix(prefix), 0));
        while p.poll_transmit(now).is_some() {}
        while p.poll_event().is_some() {}
        assert!(p.remote_participants().count() <= 8);
    }
    let st = p.stats();
    assert_eq!(st.spdp.announcements, 1000);
    assert_eq!(st.participants_discovered, 1000);
    assert_eq!(st.participants_evicted, 992);
    assert_eq!(p.remote_participants().count(), 8);
    // Another domain is ignored outright.
    p.handle_datagram(at(ms(2000)), None, &spdp_datagram(GuidPrefix([9; 12]), 3));
    assert_eq!(p.stats().spdp.foreign_domain, 1);
    // The pending-event queue is bounded too.
    assert!(p.events.len() <= p.config.max_pending_events);
}

#[test]
fn verified_participants_are_not_evicted_by_a_flood() {
    let mut s = Swarm::new(1, 1);
    let mut c = config(1);
    c.max_remote_participants = 2;
    let b = s.add(c);
    s.run_for(Duration::from_secs(1));
    let g0 = s.p(0).guid();
    assert!(s.p(b).remote_participant(g0.prefix).unwrap().is_verified());
    for i in 0..50u32 {
        let mut prefix = [0x66u8; 12];
        prefix[8..].copy_from_slice(&i.to_be_bytes());
        let now = s.now;
        s.p(b)
            .handle_datagram(now, None, &spdp_datagram(GuidPrefix(prefix), 0));
    }
    assert!(s.p(b).remote_participant(g0.prefix).is_some());
    assert_eq!(s.p(b).remote_participants().count(), 2);
}

#[test]
fn remote_endpoint_cap_holds() {
    let mut s = Swarm::new(1, 1);
    let mut c = config(1);
    c.max_remote_endpoints = 4;
    let b = s.add(c);
    for i in 0..10 {
        s.p(0)
            .create_writer(
                Instant::ZERO,
                EndpointOptions::new(&format!("rt/t{i}"), STRING),
            )
            .unwrap();
    }
    s.run_for(Duration::from_secs(2));
    assert_eq!(s.p(b).remote_endpoints().count(), 4);
    assert!(s.p(b).stats().endpoints_rejected >= 6);
    // Said once, naming the cap (issue 34 item 4).
    let reached: Vec<Event> = s
        .events(b)
        .into_iter()
        .filter(|e| matches!(e, Event::LimitReached { .. }))
        .collect();
    assert_eq!(
        reached,
        vec![Event::LimitReached {
            limit: Limit::MaxRemoteEndpoints,
            value: 4
        }]
    );
    let text = Limit::MaxRemoteEndpoints.to_string();
    assert!(text.contains("max_remote_endpoints"), "{text}");
}

/// A writer's HEARTBEAT and GAP from an address its participant was neither discovered at
/// nor announced are dropped (issue 34 item 2).
#[test]
fn control_traffic_from_elsewhere_is_dropped() {
    let mut p = Participant::new(config(0), Instant::ZERO).unwrap();
    let peer = GuidPrefix([0x77; 12]);
    let home = Locator::udpv4(Ipv4Addr::new(10, 0, 0, 1), 7410);
    let mut pd = ParticipantData::new(peer);
    pd.domain_id = Some(0);
    pd.metatraffic_unicast_locators = vec![Locator::udpv4(Ipv4Addr::new(10, 0, 0, 1), 9999)];
    let payload = pd.to_payload(roslite_cdr::Endianness::Little).unwrap();
    let spdp = Submessage::Data(DataRepr {
        extra_flags: 0,
        reader_id: EntityId::SPDP_PARTICIPANT_DETECTOR,
        writer_id: EntityId::SPDP_PARTICIPANT_ANNOUNCER,
        writer_sn: SequenceNumber(1),
        inline_qos: None,
        payload: Some(SerializedPayload {
            kind: PayloadKind::Data,
            bytes: &payload,
        }),
        non_standard_payload: false,
    });
    let message = |sm: &Submessage<'_>| {
        let mut b = crate::MessageBuilder::new(HeaderRepr::new(peer), 65_000);
        b.push(sm).unwrap();
        b.finish().remove(0)
    };
    p.handle_datagram(Instant::ZERO, Some(home), &message(&spdp));
    assert!(p.remote_participant(peer).is_some());
    let hb = Submessage::Heartbeat(crate::wire::HeartbeatRepr {
        reader_id: EntityId::UNKNOWN,
        writer_id: EntityId::new([0, 0, 1], EntityId::KIND_WRITER_NO_KEY),
        first_sn: SequenceNumber(1 << 40),
        last_sn: SequenceNumber(1 << 40),
        count: Count(1),
        final_flag: false,
        liveliness_flag: false,
    });
    let elsewhere = Locator::udpv4(Ipv4Addr::new(10, 0, 0, 66), 7410);
    p.handle_datagram(Instant::ZERO, Some(elsewhere), &message(&hb));
    assert_eq!(p.stats().control_from_elsewhere, 1);
    // From its own address (another port) it is routed as usual.
    let other_port = Locator::udpv4(Ipv4Addr::new(10, 0, 0, 1), 5555);
    p.handle_datagram(Instant::ZERO, Some(other_port), &message(&hb));
    assert_eq!(p.stats().control_from_elsewhere, 1);
}

#[test]
fn local_endpoint_cap_and_names() {
    let mut c = config(0);
    c.max_local_endpoints = 2;
    let mut p = Participant::new(c, Instant::ZERO).unwrap();
    p.create_writer(Instant::ZERO, EndpointOptions::new("rt/a", STRING))
        .unwrap();
    assert_eq!(
        p.create_reader(Instant::ZERO, EndpointOptions::new("", STRING)),
        Err(CreateError::EmptyName)
    );
    assert_eq!(
        p.create_writer(Instant::ZERO, EndpointOptions::new("rt/\0", STRING)),
        Err(CreateError::Encode(crate::EmitError::InteriorNul))
    );
    p.create_reader(Instant::ZERO, EndpointOptions::new("rt/a", STRING))
        .unwrap();
    assert_eq!(
        p.create_reader(Instant::ZERO, EndpointOptions::new("rt/b", STRING)),
        Err(CreateError::TooManyEndpoints { max: 2 })
    );
}

#[test]
fn entity_ids_follow_the_fast_dds_scheme() {
    let mut p = Participant::new(config(0), Instant::ZERO).unwrap();
    let w = p
        .create_writer(
            Instant::ZERO,
            EndpointOptions::new(ros::DISCOVERY_INFO_TOPIC, ros::DISCOVERY_INFO_TYPE),
        )
        .unwrap();
    let r = p
        .create_reader(
            Instant::ZERO,
            EndpointOptions::new(ros::DISCOVERY_INFO_TOPIC, ros::DISCOVERY_INFO_TYPE),
        )
        .unwrap();
    assert_eq!(w.entity_id(), EntityId::new([0, 0, 1], 0x03));
    assert_eq!(r.entity_id(), EntityId::new([0, 0, 2], 0x04));
    static KEY: roslite_cdr::key::KeyStruct = roslite_cdr::key::KeyStruct {
        members: &[roslite_cdr::key::KeyMember {
            in_key: true,
            element: roslite_cdr::key::KeyElement::Primitive { size: 4 },
            collection: roslite_cdr::key::KeyCollection::Single,
        }],
    };
    let opts = EndpointOptions::new("k", "T").with_key(Some(&KEY));
    let kw = p.create_writer(Instant::ZERO, opts).unwrap();
    assert_eq!(kw.entity_id(), EntityId::new([0, 0, 3], 0x02));
}

#[test]
fn sedp_announcer_keeps_every_live_endpoint_for_late_joiners() {
    // A tiny SEDP history (max_local_endpoints + 32) churned far beyond its depth.
    let mut s = Swarm::new(1, 2);
    {
        let p = s.p(0);
        let mut keep = Vec::new();
        for i in 0..3 {
            keep.push(
                p.create_writer(
                    Instant::ZERO,
                    EndpointOptions::new(&format!("rt/k{i}"), STRING),
                )
                .unwrap(),
            );
        }
        for i in 0..200 {
            let w = p
                .create_writer(
                    Instant::ZERO,
                    EndpointOptions::new(&format!("rt/x{i}"), STRING),
                )
                .unwrap();
            p.delete_writer(Instant::ZERO, w);
        }
    }
    let mut c = config(1);
    c.max_local_endpoints = 8;
    let b = s.add(c);
    s.run_for(Duration::from_secs(2));
    let mut topics: Vec<String> = s
        .p(b)
        .remote_endpoints()
        .map(|e| e.topic_name().to_owned())
        .collect();
    topics.sort();
    assert_eq!(topics, vec!["rt/k0", "rt/k1", "rt/k2"]);
}

#[test]
fn spdp_dispose_on_shutdown_drops_us_at_once() {
    let mut s = Swarm::new(2, 1);
    s.run_for(ms(500));
    let g0 = s.p(0).guid();
    s.events(1);
    // Node 1 gives node 0's topics to another transport (a same-host peer's shared memory);
    // what it keeps for that goes with node 0.
    let now = s.now;
    s.p(1).set_carried_elsewhere(now, g0.prefix, &["rt/"]);
    assert_eq!(s.p(1).carried_elsewhere.len(), 1);
    s.p(0).shutdown(now);
    s.flush();
    s.nodes[0].alive = false;
    s.run_for(ms(10));
    assert!(s.events(1).contains(&Event::ParticipantLost(g0)));
    assert_eq!(s.p(1).stats().participants_disposed, 1);
    assert!(s.p(1).carried_elsewhere.is_empty());
}

#[test]
fn datagrams_respect_the_size_limit_and_reparse() {
    let mut c = config(0);
    c.max_datagram_size = Participant::MIN_DATAGRAM_SIZE;
    let mut s = Swarm::new(0, 1);
    s.add(c);
    s.add(config(1));
    let w = s
        .p(0)
        .create_writer(Instant::ZERO, chatter(EndpointQos::ros_default()))
        .unwrap();
    s.p(1)
        .create_reader(Instant::ZERO, chatter(EndpointQos::ros_default()))
        .unwrap();
    s.run_for(Duration::from_secs(1));
    let big = "y".repeat(20_000);
    let now = s.now;
    s.p(0).write(now, w, string_payload(&big), None).unwrap();
    s.run_for(Duration::from_secs(1));
    assert_eq!(s.samples(1), vec![big]);
    assert_eq!(s.p(0).stats().transmit_dropped, 0);
}

#[test]
fn large_samples_go_out_from_the_history_and_reassemble_at_20_percent_loss() {
    let mut s = Swarm::new(2, 11).rough(0.2);
    let reliable = EndpointQos {
        history: History::KeepAll,
        ..EndpointQos::ros_default()
    };
    let w = s
        .p(0)
        .create_writer(Instant::ZERO, chatter(reliable))
        .unwrap();
    s.p(1)
        .create_reader(Instant::ZERO, chatter(reliable))
        .unwrap();
    s.run_for(Duration::from_secs(2));
    // Odd lengths, so the last fragment of each needs padding after its data.
    let samples: Vec<String> = (0..3)
        .map(|i| {
            char::from(b'a' + i)
                .to_string()
                .repeat(200_001 + usize::from(i))
        })
        .collect();
    for sample in &samples {
        let now = s.now;
        s.p(0).write(now, w, string_payload(sample), None).unwrap();
        s.run_for(ms(20));
    }
    s.run_for(Duration::from_secs(5));
    assert_eq!(s.samples(1), samples, "every sample, whole and in order");
    assert!(
        s.with_tail >= 3 * 200_000 / 65_000,
        "fragments were not sent from the history: {} datagrams with a tail",
        s.with_tail
    );
    assert_eq!(s.p(1).stats().receive.malformed(), 0);
    assert_eq!(s.p(0).stats().transmit_dropped, 0);
}

#[test]
fn our_sedp_data_reparses() {
    let mut p = Participant::new(config(0), Instant::ZERO).unwrap();
    let mut other = config(1);
    other.guid_prefix = GuidPrefix([0xbb; 12]);
    let mut q = Participant::new(other, Instant::ZERO).unwrap();
    // Let q discover p so that p's SEDP announcer sends to q.
    let r = p
        .create_reader(Instant::ZERO, chatter(EndpointQos::ros_default()))
        .unwrap();
    let mut datagrams = Vec::new();
    for _ in 0..3 {
        while let Some(d) = p.poll_transmit(Instant::ZERO) {
            datagrams.push(d);
        }
        while let Some(d) = q.poll_transmit(Instant::ZERO) {
            p.handle_datagram(Instant::ZERO, None, &d.bytes.to_vec());
        }
    }
    let mut found = None;
    for d in &datagrams {
        let mut st = ReceiveStats::default();
        parse_message(&d.bytes.to_vec(), &mut st, |rx| {
            if let Submessage::Data(data) = rx.submessage {
                if data.writer_id == EntityId::SEDP_SUBSCRIPTIONS_ANNOUNCER {
                    let pl = data.payload.unwrap();
                    found = Some(
                        EndpointData::from_payload(
                            pl.bytes,
                            EndpointKind::Reader,
                            crate::SenderInfo::from_receiver(rx.receiver),
                        )
                        .unwrap(),
                    );
                }
            }
        })
        .unwrap();
        assert_eq!(st.malformed(), 0);
    }
    let d = found.unwrap_or_else(|| {
        panic!(
            "no DATA(r): {:?} {:?} {}",
            p.stats(),
            p.remote_participants().count(),
            datagrams.len()
        )
    });
    assert_eq!(d.guid, r.guid(p.guid_prefix()));
    assert_eq!(d.topic_name, CHATTER);
    assert_eq!(d.type_name, STRING);
    assert_eq!(d.reliability.kind, ReliabilityKind::Reliable);
    assert_eq!(d.durability, DurabilityKind::Volatile);
    assert_eq!(d.history, History::KeepLast { depth: 10 });
    assert_eq!(d.vendor_id, crate::VendorId::ROSLITE);
}

#[path = "liveliness_tests.rs"]
mod liveliness;

#[path = "acknowledged_tests.rs"]
mod acknowledged;

#[test]
fn a_paused_reader_holds_its_samples_back_until_resumed() {
    let mut s = Swarm::new(2, 17);
    let keep_all = EndpointQos {
        history: History::KeepAll,
        ..EndpointQos::ros_default()
    };
    let w = s
        .p(0)
        .create_writer(Instant::ZERO, chatter(keep_all))
        .unwrap();
    let r = s
        .p(1)
        .create_reader(Instant::ZERO, chatter(keep_all))
        .unwrap();
    s.run_for(Duration::from_secs(1));
    s.samples(1);
    s.p(1).set_reader_paused(r, true);
    let sent: Vec<String> = (0..20).map(|i| format!("m{i}")).collect();
    for text in &sent {
        let now = s.now;
        s.p(0).write(now, w, string_payload(text), None).unwrap();
        s.run_for(ms(10));
    }
    s.run_for(Duration::from_secs(1));
    assert!(s.samples(1).is_empty(), "nothing comes out while paused");
    s.p(1).set_reader_paused(r, false);
    s.run_for(ms(10));
    assert_eq!(s.samples(1), sent, "every sample, in order, once resumed");
}

/// What [`stall_stream`] saw.
#[derive(Debug)]
struct Stalled {
    written: u64,
    received: u64,
    /// The sum of the samples' `lost_before`.
    reported_lost: u64,
    /// The highest sequence number received.
    last: i64,
}

/// One side of a reliable KEEP_LAST 10 stream (writer in node 0, reader in node 1, 50
/// samples a second) stopped (SIGSTOP) for `stall`, then running again ([`Swarm::resume`]
/// with `timers_first`), and 10 s of samples after.
fn stall_stream(stopped: usize, stall: Duration, timers_first: bool) -> Stalled {
    let mut s = Swarm::new(2, 23);
    let w = s
        .p(0)
        .create_writer(Instant::ZERO, chatter(EndpointQos::ros_default()))
        .unwrap();
    s.p(1)
        .create_reader(Instant::ZERO, chatter(EndpointQos::ros_default()))
        .unwrap();
    s.run_for(Duration::from_secs(1));
    s.events(0);
    s.events(1);
    let mut n = 0u64;
    let mut write_for = |s: &mut Swarm, d: Duration, writing: bool| {
        let until = s.now + d;
        while s.now < until {
            if writing {
                let now = s.now;
                s.p(0)
                    .write(now, w, string_payload(&format!("m{n}")), None)
                    .unwrap();
                n += 1;
            }
            s.run_for(ms(20));
        }
    };
    write_for(&mut s, Duration::from_secs(2), true);
    s.stop(stopped);
    // A stopped publisher writes nothing; a stopped subscriber misses what is written.
    write_for(&mut s, stall, stopped == 1);
    s.resume(stopped, timers_first);
    write_for(&mut s, Duration::from_secs(10), true);
    // Everything written has been acknowledged or given up by now.
    write_for(&mut s, Duration::from_secs(2), false);
    let mut received = 0;
    let mut lost = 0;
    let mut last = 0;
    for e in s.events(1) {
        if let Event::Sample { sample, .. } = e {
            received += 1;
            lost += sample.lost_before;
            last = last.max(sample.sequence_number.0);
        }
    }
    Stalled {
        written: n,
        received,
        reported_lost: lost,
        last,
    }
}

/// A subscriber process stopped (SIGSTOP) for longer than the participant lease: the
/// publisher's participant loses it, the subscriber (which handles the datagrams waiting in
/// its sockets before it looks at its leases, or after) may keep the publisher. Each side
/// that lost the other finds it again. The reliable KEEP_LAST stream must resume (every
/// sample written after the subscriber's return arrives), and the samples written while it
/// was stopped are reported lost, not silently skipped.
#[test]
fn a_reliable_keep_last_stream_resumes_after_a_subscriber_stall_longer_than_the_lease() {
    for timers_first in [false, true] {
        let seen = stall_stream(1, Duration::from_secs(25), timers_first);
        assert_eq!(
            seen.last,
            i64::try_from(seen.written).unwrap(),
            "the stream resumed up to the last sample (timers first: {timers_first}): {seen:?}"
        );
        assert_eq!(
            seen.received + seen.reported_lost,
            seen.written,
            "every sample arrived or was reported lost (timers first: {timers_first}): {seen:?}"
        );
        assert!(seen.reported_lost > 0, "{seen:?}");
    }
}

/// The same with the publisher stopped: the subscriber's participant loses it and finds it
/// again, while the publisher kept the subscriber's proxies (it answers the subscriber's
/// ACKNACKs, whose count starts again, after [`crate::endpoint::ACKNACK_COUNT_RESET_AFTER`]).
#[test]
fn a_reliable_keep_last_stream_resumes_after_a_publisher_stall_longer_than_the_lease() {
    for timers_first in [false, true] {
        let seen = stall_stream(0, Duration::from_secs(25), timers_first);
        assert_eq!(
            seen.last,
            i64::try_from(seen.written).unwrap(),
            "the stream resumed (timers first: {timers_first}): {seen:?}"
        );
        assert_eq!(
            seen.received + seen.reported_lost,
            seen.written,
            "every sample arrived or was reported lost (timers first: {timers_first}): {seen:?}"
        );
    }
}

/// The filter a reader announces, as peers see it (`RemoteEndpoint::data`).
fn announced_filter(
    s: &mut Swarm,
    reader: Guid,
) -> Option<crate::discovery::ContentFilterProperty> {
    s.p(0)
        .remote_endpoint(reader)?
        .data()
        .content_filter
        .clone()
}

#[test]
fn a_readers_content_filter_is_announced_and_follows_its_changes() {
    let mut s = Swarm::new(2, 3);
    let filter = |expression: &str| crate::discovery::ContentFilterProperty {
        content_filtered_topic_name: "rt/chatter_filtered_name_0".into(),
        related_topic_name: CHATTER.into(),
        filter_class_name: crate::discovery::content_filter::DDSSQL.into(),
        filter_expression: expression.into(),
        expression_parameters: vec!["'x'".into()],
    };
    let options =
        chatter(EndpointQos::ros_default()).with_content_filter(Some(filter("data = %0")));
    let r = s.p(1).create_reader(Instant::ZERO, options).unwrap();
    let guid = s.p(1).reader_data(r).unwrap().guid;
    s.run_for(ms(200));
    assert_eq!(announced_filter(&mut s, guid), Some(filter("data = %0")));

    let now = s.now;
    s.p(1)
        .set_reader_content_filter(now, r, Some(filter("data <> %0")))
        .unwrap();
    s.run_for(ms(200));
    assert_eq!(announced_filter(&mut s, guid), Some(filter("data <> %0")));

    let now = s.now;
    s.p(1).set_reader_content_filter(now, r, None).unwrap();
    s.run_for(ms(200));
    assert_eq!(announced_filter(&mut s, guid), None);
    assert!(
        s.p(0).remote_endpoint(guid).is_some(),
        "the reader is still there"
    );
    // A NUL cannot be announced: refused, and nothing changes.
    let now = s.now;
    assert!(s
        .p(1)
        .set_reader_content_filter(now, r, Some(filter("data = 'a\0'")))
        .is_err());
    assert_eq!(s.p(1).reader_data(r).unwrap().content_filter, None);
}
