//! Hostile datagrams against `roslite topic echo` and `roslite topic pub` as a user runs them
//! (docs/robustness.md §5), inside a network namespace this test creates (only `lo`, so nothing
//! leaves the machine).
//!
//! The attacker is a sans-IO [`Participant`] driven here over real UDP sockets: it takes part
//! in discovery like any peer, then sends datagrams it crafts itself. The roslite processes
//! use UDP only (`ROSLITE_TRANSPORTS=udp`), so their stream crosses the sockets the attacker
//! can reach. Nothing here asserts on time: waits have generous limits and only decide when
//! to give up; the figures (RSS, message counts, bytes) are printed for the record.
//!
//! Needs root (or CAP_SYS_ADMIN + CAP_NET_ADMIN) and iproute2, as the other namespace tests.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use roslite_rtps::discovery::EndpointKind;
use roslite_rtps::message::MessageBuilder;
use roslite_rtps::participant::{EndpointOptions, Event, Participant, ParticipantConfig};
use roslite_rtps::wire::{DataFragRepr, GapRepr, HeaderRepr, HeartbeatRepr};
use roslite_rtps::{
    Count, EntityId, FragmentNumber, Guid, GuidPrefix, Instant, Locator, SequenceNumber,
    SequenceNumberSet, Submessage,
};
use roslite_transport::netns::NetNs;

const CHATTER: &str = "rt/chatter";
const STRING: &str = "std_msgs::msg::dds_::String_";
/// Participant index of the attacker: its ports (7490, 7491) are clear of the roslite
/// processes', which take the lowest free indexes.
const FORGER_INDEX: u32 = 40;

fn namespace(prefix: &str) -> NetNs {
    NetNs::create(prefix).unwrap_or_else(|e| panic!("cannot create a network namespace: {e}"))
}

/// `roslite <args>` inside `ns`: loopback discovery, domain 0, UDP only.
fn roslite(ns: &NetNs, args: &[&str]) -> Command {
    let mut command = ns.command(env!("CARGO_BIN_EXE_roslite"));
    command
        .args(args)
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env("ROS_DOMAIN_ID", "0")
        .env("ROSLITE_TRANSPORTS", "udp")
        .env("RUST_BACKTRACE", "1")
        .env_remove("ROS_STATIC_PEERS")
        .env_remove("ROSLITE_NETWORK")
        .env_remove("AMENT_PREFIX_PATH")
        .stdin(Stdio::null());
    command
}

/// A child process killed when the test ends, however it ends.
struct Background(Child);

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `roslite topic echo /chatter` (reliable), counting the messages it prints; its stderr is
/// collected.
struct Echo {
    child: Background,
    messages: Arc<AtomicU64>,
    stderr: Arc<std::sync::Mutex<String>>,
}

impl Echo {
    fn start(ns: &NetNs) -> Echo {
        let child = roslite(
            ns,
            &[
                "topic",
                "echo",
                "/chatter",
                "std_msgs/msg/String",
                "--qos-reliability",
                "reliable",
            ],
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start roslite topic echo");
        let mut child = Background(child);
        let messages = Arc::new(AtomicU64::new(0));
        let stdout = child.0.stdout.take().expect("piped stdout");
        let counter = messages.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.starts_with("data:") {
                    counter.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        let stderr = Arc::new(std::sync::Mutex::new(String::new()));
        let pipe = child.0.stderr.take().expect("piped stderr");
        let sink = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        Echo {
            child,
            messages,
            stderr,
        }
    }

    fn count(&self) -> u64 {
        self.messages.load(Ordering::Relaxed)
    }

    /// Waits until `n` more messages than `from` were printed; whether they were.
    fn wait_for(&self, from: u64, n: u64, limit: Duration) -> bool {
        wait_until(limit, || self.count() >= from + n)
    }

    /// Resident set size in bytes (`VmRSS` of `/proc/<pid>/status`).
    fn rss(&self) -> u64 {
        rss_of(self.child.0.id())
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

fn rss_of(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read status");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/<pid>/status");
    kb * 1024
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// `roslite topic pub -r 10 /chatter std_msgs/msg/String` with `text` as the data.
fn publisher(ns: &NetNs, text: &str) -> Background {
    let yaml = format!("{{data: '{text}'}}");
    let child = roslite(
        ns,
        &[
            "topic",
            "pub",
            "-r",
            "10",
            "-p",
            "0",
            "/chatter",
            "std_msgs/msg/String",
            &yaml,
        ],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::inherit())
    .spawn()
    .expect("start roslite topic pub");
    Background(child)
}

fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}

/// The attacker: a participant of its own on loopback plus raw sends.
struct Forger {
    participant: Participant,
    meta: UdpSocket,
    user: UdpSocket,
    start: std::time::Instant,
    events: Vec<Event>,
    /// Bytes sent per destination.
    sent: BTreeMap<SocketAddr, u64>,
}

impl Forger {
    /// A participant with GUID prefix `[tag; 12]`; `default_unicast` replaces the locator it
    /// announces for user data (the reflection test names a victim there).
    fn new(tag: u8, default_unicast: Option<SocketAddrV4>) -> Forger {
        let mut config = ParticipantConfig::localhost(GuidPrefix([tag; 12]), 0, FORGER_INDEX, 8);
        let meta_port = 7410 + 2 * FORGER_INDEX as u16;
        let meta = UdpSocket::bind((Ipv4Addr::LOCALHOST, meta_port)).expect("bind metatraffic");
        let user = UdpSocket::bind((Ipv4Addr::LOCALHOST, meta_port + 1)).expect("bind user");
        if let Some(victim) = default_unicast {
            config.default_unicast = vec![Locator::udpv4(*victim.ip(), victim.port())];
        }
        for s in [&meta, &user] {
            s.set_nonblocking(true).unwrap();
        }
        Forger {
            participant: Participant::new(config, Instant::ZERO).unwrap(),
            meta,
            user,
            start: std::time::Instant::now(),
            events: Vec::new(),
            sent: BTreeMap::new(),
        }
    }

    fn now(&self) -> Instant {
        Instant::ZERO + self.start.elapsed()
    }

    fn send(&mut self, to: SocketAddr, bytes: &[u8]) {
        self.meta.send_to(bytes, to).expect("send");
        *self.sent.entry(to).or_default() += bytes.len() as u64;
    }

    /// Runs the participant over the sockets until `done` or `limit`; whether `done` held.
    fn pump_until(
        &mut self,
        limit: Duration,
        mut done: impl FnMut(&Participant, &[Event]) -> bool,
    ) -> bool {
        let until = std::time::Instant::now() + limit;
        let mut buf = vec![0u8; 65536];
        loop {
            let now = self.now();
            if self.participant.poll_timeout().is_some_and(|t| t <= now) {
                self.participant.handle_timeout(now);
            }
            while let Some(d) = self.participant.poll_transmit(now) {
                let bytes = d.bytes.to_vec();
                for l in &d.destinations {
                    if let Some(to) = l.to_socket_addr() {
                        self.send(to, &bytes);
                    }
                }
            }
            while let Some(e) = self.participant.poll_event() {
                self.events.push(e);
            }
            if done(&self.participant, &self.events) {
                return true;
            }
            if std::time::Instant::now() >= until {
                return false;
            }
            let mut idle = true;
            for s in [&self.meta, &self.user] {
                while let Ok((n, from)) = s.recv_from(&mut buf) {
                    idle = false;
                    let SocketAddr::V4(from) = from else { continue };
                    let src = Locator::udpv4(*from.ip(), from.port());
                    self.participant
                        .handle_datagram(self.now(), Some(src), &buf[..n]);
                }
            }
            if idle {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }

    fn pump_for(&mut self, d: Duration) {
        self.pump_until(d, |_, _| false);
    }

    /// A remote endpoint on /chatter of `kind`, once discovered.
    fn chatter_endpoint(&self, kind: EndpointKind) -> Option<Guid> {
        self.participant
            .remote_endpoints()
            .find(|e| e.kind() == kind && e.topic_name() == CHATTER)
            .map(|e| e.guid())
    }

    /// The UDP ports where participant `prefix` said it receives (metatraffic and user).
    fn ports_of(&self, prefix: GuidPrefix) -> Vec<SocketAddr> {
        let r = self
            .participant
            .remote_participant(prefix)
            .expect("known participant");
        let d = r.data();
        d.metatraffic_unicast_locators
            .iter()
            .chain(&d.default_unicast_locators)
            .filter_map(Locator::to_socket_addr)
            .collect()
    }

    /// Sends one RTPS message from participant `prefix` holding `sm` to every port of
    /// participant `to`.
    fn send_as(&mut self, prefix: GuidPrefix, sm: &Submessage<'_>, to: GuidPrefix) -> usize {
        let mut b = MessageBuilder::new(HeaderRepr::new(prefix), 65_000);
        b.push(sm).expect("fits");
        let datagrams = b.finish();
        let ports = self.ports_of(to);
        let mut len = 0;
        for d in &datagrams {
            len = d.len();
            for p in &ports {
                self.send(*p, d);
            }
        }
        len
    }
}

/// Starts echo and a 10 Hz publisher and waits for the stream; then an attacker (sockets
/// made inside `ns`) that has discovered both.
fn stream_with_forger(ns: &NetNs, tag: u8) -> (Echo, Background, Forger) {
    let echo = Echo::start(ns);
    let publisher = publisher(ns, "hello");
    assert!(
        echo.wait_for(0, 3, Duration::from_secs(30)),
        "the stream never started; echo's stderr:\n{}",
        echo.stderr()
    );
    let mut forger = ns
        .run(|| Forger::new(tag, None))
        .unwrap_or_else(|e| panic!("{e}"));
    let found = forger.pump_until(Duration::from_secs(30), |p, _| {
        p.remote_endpoints()
            .filter(|e| e.topic_name() == CHATTER)
            .count()
            >= 2
    });
    assert!(
        found,
        "the attacker never discovered the publisher and echo"
    );
    (echo, publisher, forger)
}

/// Issue 34 item 1: one DATA_FRAG claiming the last fragment of a 60 MiB sample, then one
/// from each of 16 invented writers, must cost the subscriber about what they carry, not what
/// their headers claim (docs/robustness.md §1, "DATA and DATA_FRAG").
#[test]
fn forged_last_fragments_do_not_grow_the_subscriber() {
    const WRITERS: usize = 16;
    const SAMPLE: u32 = 60 << 20;
    const FRAGMENT: u16 = 1024;
    let ns = namespace("frag-rss");
    let (echo, _publisher, mut forger) = stream_with_forger(&ns, 0xf1);
    let reader = forger
        .chatter_endpoint(EndpointKind::Reader)
        .expect("echo's reader");
    // Invented writers, announced in SEDP like any: the subscriber matches them.
    let now = forger.now();
    let writers: Vec<_> = (0..WRITERS)
        .map(|_| {
            forger
                .participant
                .create_writer(now, EndpointOptions::new(CHATTER, STRING))
                .unwrap()
        })
        .collect();
    // The subscriber's reliable reader answers each new writer with a pre-emptive ACKNACK:
    // once every writer has one, the subscriber has matched them all.
    let matched = forger.pump_until(Duration::from_secs(30), |p, _| {
        writers
            .iter()
            .all(|w| p.writer_stats(*w).is_some_and(|s| s.acknacks_received > 0))
    });
    assert!(matched, "echo did not match the invented writers");
    let prefix = forger.participant.guid_prefix();
    let before = echo.rss();
    // The last fragment only: 16 bytes of a 60 MiB + 16 sample.
    let tail = [0x5au8; 16];
    let last = (SAMPLE / u32::from(FRAGMENT)) + 1;
    let frag_for = |forger: &mut Forger, w: roslite_rtps::participant::WriterId| {
        let frag = DataFragRepr {
            extra_flags: 0,
            reader_id: reader.entity_id,
            writer_id: w.entity_id(),
            writer_sn: SequenceNumber(1),
            fragment_starting_num: FragmentNumber(last),
            fragments_in_submessage: 1,
            fragment_size: FRAGMENT,
            sample_size: SAMPLE + 16,
            inline_qos: None,
            key: false,
            non_standard_payload: false,
            data: &tail,
        };
        forger.send_as(prefix, &Submessage::DataFrag(frag), reader.prefix)
    };
    let len = frag_for(&mut forger, writers[0]);
    // The publisher's next messages come through the same socket after it.
    assert!(echo.wait_for(echo.count(), 3, Duration::from_secs(30)));
    let after_one = echo.rss();
    for w in &writers[1..] {
        frag_for(&mut forger, *w);
    }
    forger.pump_for(Duration::from_millis(200));
    assert!(echo.wait_for(echo.count(), 3, Duration::from_secs(30)));
    let after_all = echo.rss();
    println!(
        "echo RSS: {:.1} MiB before, {:.1} MiB after one {len}-byte DATA_FRAG, {:.1} MiB after \
         one from each of {WRITERS} writers",
        mib(before),
        mib(after_one),
        mib(after_all)
    );
    assert!(
        after_all.saturating_sub(before) < 16 << 20,
        "RSS grew from {:.1} to {:.1} MiB",
        mib(before),
        mib(after_all)
    );
}

/// Issue 34 item 2: one forged HEARTBEAT with a huge `firstSN`, or one GAP with a huge range,
/// naming the real publisher's writer, must not silence it.
#[test]
fn forged_heartbeat_and_gap_do_not_silence_the_publisher() {
    let ns = namespace("hb-forge");
    let (echo, _publisher, mut forger) = stream_with_forger(&ns, 0xf2);
    let writer = forger
        .chatter_endpoint(EndpointKind::Writer)
        .expect("the publisher's writer");
    let reader = forger
        .chatter_endpoint(EndpointKind::Reader)
        .expect("echo's reader");
    let huge = SequenceNumber(1 << 62);
    let hb = HeartbeatRepr {
        reader_id: EntityId::UNKNOWN,
        writer_id: writer.entity_id,
        first_sn: huge,
        last_sn: huge,
        count: Count(0x3fff_ffff),
        final_flag: false,
        liveliness_flag: false,
    };
    let gap = GapRepr {
        reader_id: EntityId::UNKNOWN,
        writer_id: writer.entity_id,
        gap_start: SequenceNumber(1),
        gap_list: SequenceNumberSet::empty(huge),
    };
    for (what, sm) in [
        ("HEARTBEAT", Submessage::Heartbeat(hb)),
        ("GAP", Submessage::Gap(gap)),
    ] {
        let len = forger.send_as(writer.prefix, &sm, reader.prefix);
        let from = echo.count();
        std::thread::sleep(Duration::from_secs(3));
        let in_3s = echo.count() - from;
        println!("after one forged {len}-byte {what}: {in_3s} messages in the next 3 s");
        assert!(
            echo.wait_for(from, 10, Duration::from_secs(30)),
            "the stream stopped after a forged {what} ({} messages after it); echo's stderr:\n{}",
            echo.count() - from,
            echo.stderr()
        );
    }
}

/// Issue 34 item 3: an invented participant whose reader names a victim's address as its
/// locator must not make the publisher send the victim more than a small multiple (3) of what
/// the invented participant sent it.
#[test]
fn unvalidated_locator_gets_at_most_three_times_what_its_announcer_sent() {
    let ns = namespace("reflect");
    let victim_addr = SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 42), 9999);
    let victim = ns
        .run(|| UdpSocket::bind(victim_addr).expect("bind the victim"))
        .unwrap_or_else(|e| panic!("{e}"));
    victim
        .set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let received = Arc::new(AtomicU64::new(0));
    let counter = received.clone();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 65536];
        loop {
            match victim.recv_from(&mut buf) {
                Ok((n, _)) => {
                    counter.fetch_add(n as u64, Ordering::Relaxed);
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => return,
            }
        }
    });
    let big = "x".repeat(60_000);
    let _publisher = publisher(&ns, &big);
    let mut forger = ns
        .run(|| Forger::new(0xf3, Some(victim_addr)))
        .unwrap_or_else(|e| panic!("{e}"));
    let now = forger.now();
    forger
        .participant
        .create_reader(now, EndpointOptions::new(CHATTER, STRING))
        .unwrap();
    let found = forger.pump_until(Duration::from_secs(30), |_, events| {
        events
            .iter()
            .any(|e| matches!(e, Event::WriterMatched { .. }))
    });
    assert!(found, "the attacker never discovered the publisher");
    forger.pump_for(Duration::from_secs(3));
    let writer = forger
        .chatter_endpoint(EndpointKind::Writer)
        .expect("the publisher's writer");
    let ports = forger.ports_of(writer.prefix);
    let sent: u64 = forger
        .sent
        .iter()
        .filter(|(to, _)| ports.contains(to))
        .map(|(_, n)| *n)
        .sum();
    let reflected = received.load(Ordering::Relaxed);
    println!(
        "the attacker sent the publisher {sent} bytes; the publisher sent the victim \
         {reflected} bytes in 3 s"
    );
    assert!(sent > 0);
    assert!(
        reflected <= 3 * sent,
        "amplified {:.1}x ({reflected} bytes for {sent})",
        reflected as f64 / sent as f64
    );
}
