//! Counting the RTPS traffic of a network namespace: a raw packet socket on its loopback
//! device sees every datagram the processes inside send one another (unicast and multicast,
//! once each: as received, not again as sent), and [`Classifier::classify`] sorts each one by
//! the endpoint it comes from or goes to.
//!
//! Each submessage that names an endpoint (DATA, DATA_FRAG, HEARTBEAT, HEARTBEAT_FRAG, GAP,
//! ACKNACK, NACK_FRAG) is sorted by its writer:
//! SPDP (`0x000100c2`), SEDP (the publication and subscription announcers, `0x000003c2` and
//! `0x000004c2`), WLP (`0x000200c2`), `ros_discovery_info` (a user writer whose SEDP
//! announcement, seen in the same capture, names that topic; traffic seen before the
//! announcement moves there when a [`Snapshot`] is resolved), other builtin endpoints
//! (type lookup, ...), and other user endpoints. Bytes are the UDP payload (the RTPS message),
//! split by submessage: a participant packs what goes to one destination into one datagram
//! (an SPDP reply and the SEDP samples behind it, say). The RTPS header and INFO_* submessages
//! count with the submessage after them. A datagram counts once, under its first such
//! submessage's class.
//!
//! The capture thread must not fall behind: its socket gets a 32 MiB receive buffer (as root,
//! `SO_RCVBUFFORCE`), and [`Capture::counts`] compares its total with the loopback device's
//! own packet counter (`/proc/thread-self/net/dev` inside the namespace), so a capture that
//! missed datagrams says so ([`Counts::missed`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context as _;
use roslite_transport::netns::NetNs;
use rustix::net::{AddressFamily, RecvFlags, SocketType};
use serde::Serialize;

/// What a submessage carries, by the writer it comes from or goes to (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    Spdp,
    Sedp,
    Wlp,
    DiscoveryInfo,
    OtherBuiltin,
    User,
    /// Not RTPS over UDP/IPv4 (IGMP, ICMP, IPv6), or no endpoint named.
    Other,
}

const CLASSES: usize = 7;

/// One datagram sorted: the class of its first submessage that names an endpoint, and its
/// bytes by class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sorted {
    pub first: Class,
    pub bytes: [u64; CLASSES],
    /// The GUID of the first submessage's writer when it is a user writer (see [`Snapshot`]).
    first_user_writer: Option<Guid>,
    /// The [`Class::User`] bytes by writer GUID, where the writer's participant is known.
    user_writers: Vec<(Guid, u64)>,
}

impl Sorted {
    fn new(first: Class, first_user_writer: Option<Guid>) -> Self {
        Sorted {
            first,
            bytes: [0; CLASSES],
            first_user_writer,
            user_writers: Vec::new(),
        }
    }

    fn add_bytes(&mut self, class: Class, user_writer: Option<Guid>, bytes: u64) {
        self.bytes[class as usize] += bytes;
        if let Some(guid) = user_writer {
            match self.user_writers.iter_mut().find(|(g, _)| *g == guid) {
                Some((_, sum)) => *sum += bytes,
                None => self.user_writers.push((guid, bytes)),
            }
        }
    }
}

/// An endpoint's GUID: its participant's prefix, then its entity id (RTPS 2.5 §8.2.4.1).
type Guid = [u8; 16];

/// Datagrams and bytes of one class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub datagrams: u64,
    pub bytes: u64,
}

impl Tally {
    fn since(self, earlier: Tally) -> Tally {
        Tally {
            datagrams: self.datagrams.saturating_sub(earlier.datagrams),
            bytes: self.bytes.saturating_sub(earlier.bytes),
        }
    }
}

/// Traffic counted so far, by class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub spdp: Tally,
    pub sedp: Tally,
    pub wlp: Tally,
    pub ros_discovery_info: Tally,
    pub other_builtin: Tally,
    pub user: Tally,
    pub other: Tally,
    /// Packets the loopback device received that the capture did not see (0 when it kept up).
    pub missed: u64,
}

impl Counts {
    /// Adds one datagram: counted under its first class, its bytes under theirs.
    fn add(&mut self, sorted: &Sorted) {
        self.tally(sorted.first).datagrams += 1;
        for class in [
            Class::Spdp,
            Class::Sedp,
            Class::Wlp,
            Class::DiscoveryInfo,
            Class::OtherBuiltin,
            Class::User,
            Class::Other,
        ] {
            self.tally(class).bytes += sorted.bytes[class as usize];
        }
    }

    fn tally(&mut self, class: Class) -> &mut Tally {
        match class {
            Class::Spdp => &mut self.spdp,
            Class::Sedp => &mut self.sedp,
            Class::Wlp => &mut self.wlp,
            Class::DiscoveryInfo => &mut self.ros_discovery_info,
            Class::OtherBuiltin => &mut self.other_builtin,
            Class::User => &mut self.user,
            Class::Other => &mut self.other,
        }
    }

    /// Discovery proper: SPDP, SEDP and `ros_discovery_info`.
    pub fn discovery(&self) -> Tally {
        let mut sum = Tally::default();
        for t in [self.spdp, self.sedp, self.ros_discovery_info] {
            sum.datagrams += t.datagrams;
            sum.bytes += t.bytes;
        }
        sum
    }

    /// Every RTPS datagram, whatever its class.
    pub fn rtps(&self) -> Tally {
        let mut sum = self.discovery();
        for t in [self.wlp, self.other_builtin, self.user] {
            sum.datagrams += t.datagrams;
            sum.bytes += t.bytes;
        }
        sum
    }

    /// What was counted after `earlier`.
    pub fn since(&self, earlier: &Counts) -> Counts {
        Counts {
            spdp: self.spdp.since(earlier.spdp),
            sedp: self.sedp.since(earlier.sedp),
            wlp: self.wlp.since(earlier.wlp),
            ros_discovery_info: self.ros_discovery_info.since(earlier.ros_discovery_info),
            other_builtin: self.other_builtin.since(earlier.other_builtin),
            user: self.user.since(earlier.user),
            other: self.other.since(earlier.other),
            missed: self.missed.saturating_sub(earlier.missed),
        }
    }
}

/// The capture's raw count at one moment, before [`Capture::resolve`] applies what the capture
/// learned since.
///
/// A writer's samples may come before its SEDP announcement: Fast DDS (rmw_fastrtps) announces
/// the `ros_discovery_info` writer again after the node's other endpoints, and sends that
/// writer's samples to the readers it has already matched in the meantime. Such traffic is
/// first sorted as [`Class::User`]; kept here by writer, it moves to `ros_discovery_info` once
/// the announcement shows up, in every snapshot resolved from then on.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    counts: Counts,
    /// [`Class::User`] traffic by writer; at most [`MAX_TRACKED_WRITERS`] writers (beyond that,
    /// a late-announced writer's earlier traffic stays under `user`).
    user_by_writer: BTreeMap<Guid, Tally>,
}

/// More user writers than any graph the benches build (64 processes x 500 endpoints x 2).
const MAX_TRACKED_WRITERS: usize = 1 << 16;

impl Snapshot {
    /// Adds one datagram (see [`Counts::add`]), keeping its user traffic by writer.
    fn add(&mut self, sorted: &Sorted) {
        self.counts.add(sorted);
        if let Some(guid) = sorted.first_user_writer {
            if let Some(tally) = self.tally_of(guid) {
                tally.datagrams += 1;
            }
        }
        for &(guid, bytes) in &sorted.user_writers {
            if let Some(tally) = self.tally_of(guid) {
                tally.bytes += bytes;
            }
        }
    }

    fn tally_of(&mut self, writer: Guid) -> Option<&mut Tally> {
        let room = self.user_by_writer.len() < MAX_TRACKED_WRITERS;
        if room || self.user_by_writer.contains_key(&writer) {
            Some(self.user_by_writer.entry(writer).or_default())
        } else {
            None
        }
    }

    /// The counts with the user traffic of `discovery_info_writers` moved to
    /// `ros_discovery_info`.
    fn resolve(&self, discovery_info_writers: &BTreeSet<Guid>) -> Counts {
        let mut counts = self.counts;
        for (guid, tally) in &self.user_by_writer {
            if discovery_info_writers.contains(guid) {
                counts.user = counts.user.since(*tally);
                counts.ros_discovery_info.datagrams += tally.datagrams;
                counts.ros_discovery_info.bytes += tally.bytes;
            }
        }
        counts
    }
}

/// Sorts datagrams into classes, learning `ros_discovery_info` writers from SEDP as it goes.
#[derive(Default)]
pub struct Classifier {
    /// GUIDs of the writers of `ros_discovery_info`.
    discovery_info_writers: BTreeSet<Guid>,
}

const SPDP_WRITER: [u8; 4] = [0x00, 0x01, 0x00, 0xc2];
const SEDP_PUBLICATIONS_WRITER: [u8; 4] = [0x00, 0x00, 0x03, 0xc2];
const SEDP_SUBSCRIPTIONS_WRITER: [u8; 4] = [0x00, 0x00, 0x04, 0xc2];
const WLP_WRITER: [u8; 4] = [0x00, 0x02, 0x00, 0xc2];
const DISCOVERY_INFO_TOPIC: &str = "ros_discovery_info";

impl Classifier {
    /// Sorts one IPv4 packet (from its IP header on).
    pub fn classify(&mut self, packet: &[u8]) -> Sorted {
        let other = |len: usize| {
            let mut sorted = Sorted::new(Class::Other, None);
            sorted.bytes[Class::Other as usize] = len as u64;
            sorted
        };
        let Some(rtps) = udp_payload(packet) else {
            return other(packet.len());
        };
        self.classify_rtps(rtps)
            .unwrap_or_else(|| other(rtps.len()))
    }

    /// Sorts one RTPS message (RTPS 2.5 §9.4: a 20-byte header, then submessages each with a
    /// 4-byte header whose flags' bit 0 gives the byte order). Every submessage's bytes go to
    /// its class; the header and INFO_* submessages to the class of the submessage after them
    /// (the last one's to the class before).
    fn classify_rtps(&mut self, rtps: &[u8]) -> Option<Sorted> {
        if rtps.get(..4)? != b"RTPS" {
            return None;
        }
        let source: [u8; 12] = rtps.get(8..20)?.try_into().ok()?;
        let mut destination: Option<[u8; 12]> = None;
        let mut sorted: Option<Sorted> = None;
        // Bytes not yet given to a class: the header, then INFO_* submessages.
        let mut pending = 20u64;
        let mut last = None;
        let mut at = 20;
        while let Some(header) = rtps.get(at..at + 4) {
            let (id, flags) = (header[0], header[1]);
            let little = flags & 1 == 1;
            let raw = [header[2], header[3]];
            let len = usize::from(if little {
                u16::from_le_bytes(raw)
            } else {
                u16::from_be_bytes(raw)
            });
            let body_start = at + 4;
            // Length 0 on the last submessage means "to the end of the message".
            let body_end = if len == 0 {
                rtps.len()
            } else {
                body_start + len
            };
            let body = rtps.get(body_start..body_end)?;
            let size = (body_end - at) as u64;
            let ids = match id {
                // INFO_DST: the destination participant of what follows.
                0x0e => {
                    destination = body.get(..12).and_then(|p| p.try_into().ok());
                    None
                }
                // DATA, DATA_FRAG: extraFlags, octetsToInlineQos, readerId, writerId.
                0x15 | 0x16 => Some(body.get(8..12)?),
                // ACKNACK, HEARTBEAT, GAP, NACK_FRAG, HEARTBEAT_FRAG: readerId, writerId.
                0x06 | 0x07 | 0x08 | 0x12 | 0x13 => Some(body.get(4..8)?),
                _ => None,
            };
            match ids {
                Some(writer) => {
                    let writer: [u8; 4] = writer.try_into().ok()?;
                    // The writer's participant: the sender for writer-to-reader submessages,
                    // the destination for a reader's ACKNACK and NACK_FRAG.
                    let writer_prefix = match id {
                        0x06 | 0x12 => destination,
                        _ => Some(source),
                    };
                    if id == 0x15 && writer == SEDP_PUBLICATIONS_WRITER {
                        self.learn_from_sedp(body, flags);
                    }
                    let (class, user_writer) = self.class_of(writer, writer_prefix);
                    let s = sorted.get_or_insert_with(|| Sorted::new(class, user_writer));
                    s.add_bytes(class, user_writer, size + std::mem::take(&mut pending));
                    last = Some((class, user_writer));
                }
                None => pending += size,
            }
            if len == 0 {
                break;
            }
            at = body_end;
        }
        let mut sorted = sorted?;
        let (class, user_writer) = last?;
        sorted.add_bytes(class, user_writer, pending);
        Some(sorted)
    }

    /// The class of a submessage of `writer` (entity id) in participant `prefix`, and for a
    /// user writer not known to write `ros_discovery_info`, its GUID.
    fn class_of(&self, writer: [u8; 4], prefix: Option<[u8; 12]>) -> (Class, Option<Guid>) {
        match writer {
            SPDP_WRITER => (Class::Spdp, None),
            SEDP_PUBLICATIONS_WRITER | SEDP_SUBSCRIPTIONS_WRITER => (Class::Sedp, None),
            WLP_WRITER => (Class::Wlp, None),
            // RTPS 2.5 §9.3.1.2: entity kinds 0xc0..0xff are builtin.
            [_, _, _, kind] if kind & 0xc0 == 0xc0 => (Class::OtherBuiltin, None),
            _ => {
                let guid = prefix.map(|p| {
                    let mut guid = [0u8; 16];
                    guid[..12].copy_from_slice(&p);
                    guid[12..].copy_from_slice(&writer);
                    guid
                });
                match guid {
                    Some(guid) if self.discovery_info_writers.contains(&guid) => {
                        (Class::DiscoveryInfo, None)
                    }
                    guid => (Class::User, guid),
                }
            }
        }
    }

    /// Reads a SEDP publication announcement (DATA body, submessage `flags`): when its topic
    /// is `ros_discovery_info`, remembers its endpoint GUID (PID_ENDPOINT_GUID, 0x005a).
    fn learn_from_sedp(&mut self, body: &[u8], flags: u8) {
        let little = flags & 1 == 1;
        let word = |b: &[u8], little: bool| -> Option<usize> {
            let b = [*b.first()?, *b.get(1)?];
            Some(usize::from(if little {
                u16::from_le_bytes(b)
            } else {
                u16::from_be_bytes(b)
            }))
        };
        let Some(to_inline_qos) = body.get(2..4).and_then(|b| word(b, little)) else {
            return;
        };
        // RTPS 2.5 §9.4.5.3: octetsToInlineQos counts from the end of that field (body
        // offset 4). With the Q flag (0x02) an inline QoS parameter list comes first, in the
        // submessage's byte order; the serialized payload follows its sentinel.
        let mut at = 4 + to_inline_qos;
        if flags & 0x02 != 0 {
            loop {
                let (Some(pid), Some(len)) = (
                    body.get(at..).and_then(|b| word(b, little)),
                    body.get(at + 2..).and_then(|b| word(b, little)),
                ) else {
                    return;
                };
                at += 4 + len;
                if pid == 0x0001 {
                    break;
                }
            }
        }
        let payload_little = match body.get(at..at + 2) {
            Some([0x00, 0x03]) => true,
            Some([0x00, 0x02]) => false,
            _ => return,
        };
        at += 4;
        let mut topic: Option<String> = None;
        let mut guid: Option<Guid> = None;
        while let Some(header) = body.get(at..at + 4) {
            let (Some(pid), Some(len)) = (
                word(header, payload_little),
                word(&header[2..], payload_little),
            ) else {
                return;
            };
            let pid = pid & 0x3fff;
            let Some(value) = body.get(at + 4..at + 4 + len) else {
                return;
            };
            match pid {
                // PID_SENTINEL
                0x0001 => break,
                // PID_TOPIC_NAME: a CDR string (length with the NUL, then the bytes).
                0x0005 => {
                    topic = value
                        .get(4..)
                        .map(|s| String::from_utf8_lossy(s).trim_end_matches('\0').to_owned());
                }
                0x005a => guid = value.get(..16).and_then(|g| g.try_into().ok()),
                _ => {}
            }
            at += 4 + len;
        }
        if let (Some(topic), Some(guid)) = (topic, guid) {
            if topic == DISCOVERY_INFO_TOPIC {
                self.discovery_info_writers.insert(guid);
            }
        }
    }
}

/// The UDP payload of an IPv4 packet, if it is UDP.
fn udp_payload(packet: &[u8]) -> Option<&[u8]> {
    let first = *packet.first()?;
    if first >> 4 != 4 {
        return None;
    }
    let header_len = usize::from(first & 0x0f) * 4;
    if *packet.get(9)? != 17 {
        return None;
    }
    let total = usize::from(u16::from_be_bytes([*packet.get(2)?, *packet.get(3)?]));
    let udp = packet.get(header_len..total.min(packet.len()))?;
    udp.get(8..)
}

/// A capture running on its own thread inside a network namespace; stopped when dropped.
pub struct Capture {
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Capture {
    /// Starts capturing on every device of `ns`, on a thread of its own inside it.
    ///
    /// # Errors
    /// When the thread cannot enter the namespace (that needs CAP_SYS_ADMIN) or open its raw
    /// socket (CAP_NET_RAW).
    pub fn start_in(ns: &NetNs) -> anyhow::Result<Self> {
        let enter = ns.entry();
        let state = Arc::new(Mutex::new(State::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready) = std::sync::mpsc::channel();
        let thread = {
            let (state, stop) = (state.clone(), stop.clone());
            std::thread::Builder::new()
                .name("roslite-capture".into())
                .spawn(move || {
                    let socket = enter()
                        .context("entering the namespace")
                        .and_then(|()| open_socket());
                    let socket = match socket {
                        Ok(socket) => {
                            let _ = ready_tx.send(Ok(()));
                            socket
                        }
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    };
                    run(&socket, &state, &stop);
                })
                .context("starting the capture thread")?
        };
        ready.recv().context("the capture thread ended at once")??;
        Ok(Self {
            state,
            stop,
            thread: Some(thread),
        })
    }

    /// What was counted so far, sorted with what the capture knows now.
    pub fn counts(&self) -> Counts {
        self.resolve(&self.snapshot())
    }

    /// What was counted so far, to be sorted later by [`Capture::resolve`] (when writers
    /// announced since are known).
    pub fn snapshot(&self) -> Snapshot {
        self.lock().snapshot.clone()
    }

    /// `snapshot`'s counts, sorted with what the capture knows now.
    pub fn resolve(&self, snapshot: &Snapshot) -> Counts {
        snapshot.resolve(&self.lock().classifier.discovery_info_writers)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What the capture thread shares: the classifier (which knows the `ros_discovery_info`
/// writers) and the count so far.
#[derive(Default)]
struct State {
    classifier: Classifier,
    snapshot: Snapshot,
}

impl Drop for Capture {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn open_socket() -> anyhow::Result<rustix::fd::OwnedFd> {
    let socket = rustix::net::socket(
        AddressFamily::PACKET,
        SocketType::DGRAM,
        Some(rustix::net::eth::ALL),
    )
    .context("opening a raw packet socket (needs CAP_NET_RAW: run as root)")?;
    ignore_outgoing(&socket)
        .context("setting PACKET_IGNORE_OUTGOING on the capture socket (needs Linux 4.20)")?;
    // Root may exceed net.core.rmem_max; otherwise the kernel's cap applies.
    if rustix::net::sockopt::set_socket_recv_buffer_size_force(&socket, 32 << 20).is_err() {
        let _ = rustix::net::sockopt::set_socket_recv_buffer_size(&socket, 32 << 20);
    }
    rustix::net::sockopt::set_socket_timeout(
        &socket,
        rustix::net::sockopt::Timeout::Recv,
        Some(Duration::from_millis(50)),
    )
    .context("setting the capture socket's timeout")?;
    Ok(socket)
}

/// A packet socket sees each datagram on `lo` twice: once as sent (`PACKET_OUTGOING`), once as
/// received. Only the received copy is wanted, so the kernel is told to leave out the other
/// (packet(7), `PACKET_IGNORE_OUTGOING`).
fn ignore_outgoing(socket: &rustix::fd::OwnedFd) -> std::io::Result<()> {
    use std::os::fd::AsRawFd as _;
    let on: libc::c_int = 1;
    // SAFETY: `socket` is an open descriptor for the whole call; the option value is a c_int
    // that outlives the call, passed with its exact size.
    let result = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_PACKET,
            libc::PACKET_IGNORE_OUTGOING,
            std::ptr::from_ref(&on).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if result == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn run(socket: &rustix::fd::OwnedFd, state: &Mutex<State>, stop: &AtomicBool) {
    let mut buf = vec![0u8; 1 << 16];
    let device_start = loopback_rx_packets();
    let mut seen = 0u64;
    while !stop.load(Ordering::Acquire) {
        match rustix::net::recv(socket, &mut buf[..], RecvFlags::empty()) {
            Ok((len, _)) => {
                let len = len.min(buf.len());
                seen += 1;
                let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
                let sorted = state.classifier.classify(&buf[..len]);
                state.snapshot.add(&sorted);
            }
            Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => {
                // Idle: the moment to compare with the device's own counter.
                if let (Some(start), Some(now)) = (device_start, loopback_rx_packets()) {
                    let device = now.saturating_sub(start);
                    state
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .snapshot
                        .counts
                        .missed = device.saturating_sub(seen);
                }
            }
            Err(_) => break,
        }
    }
}

/// Packets `lo` received, from `/proc/thread-self/net/dev` (this thread's namespace).
fn loopback_rx_packets() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/net/dev").ok()?;
    parse_rx_packets(&text, "lo")
}

/// The receive packet count of `device` in the text of `/proc/net/dev`.
fn parse_rx_packets(text: &str, device: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (name, fields) = line.split_once(':')?;
        if name.trim() != device {
            return None;
        }
        // Receive: bytes, packets, ...
        fields.split_whitespace().nth(1)?.parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IPv4/UDP packet around `payload`.
    fn udp(payload: &[u8]) -> Vec<u8> {
        let total = u16::try_from(20 + 8 + payload.len()).unwrap();
        let mut p = vec![
            0x45, 0, 0, 0, 0, 0, 0, 0, 64, 17, 0, 0, 127, 0, 0, 1, 127, 0, 0, 1,
        ];
        p[2..4].copy_from_slice(&total.to_be_bytes());
        p.extend_from_slice(&[0x1c, 0xe8, 0x1c, 0xe8]);
        p.extend_from_slice(&(total - 20).to_be_bytes());
        p.extend_from_slice(&[0, 0]);
        p.extend_from_slice(payload);
        p
    }

    fn rtps(prefix: u8, submessages: &[(u8, Vec<u8>)]) -> Vec<u8> {
        let flagged: Vec<(u8, u8, Vec<u8>)> = submessages
            .iter()
            .map(|(id, b)| (*id, 1, b.clone()))
            .collect();
        rtps_flagged(prefix, &flagged)
    }

    fn rtps_flagged(prefix: u8, submessages: &[(u8, u8, Vec<u8>)]) -> Vec<u8> {
        let mut m = b"RTPS".to_vec();
        m.extend_from_slice(&[2, 3, 1, 15]);
        m.extend_from_slice(&[prefix; 12]);
        for (id, flags, body) in submessages {
            m.push(*id);
            m.push(*flags);
            m.extend_from_slice(&u16::try_from(body.len()).unwrap().to_le_bytes());
            m.extend_from_slice(body);
        }
        m
    }

    /// A DATA body from `writer` carrying `payload` (no inline QoS).
    fn data(writer: [u8; 4], payload: &[u8]) -> Vec<u8> {
        let mut b = vec![0, 0, 16, 0];
        b.extend_from_slice(&[0, 0, 0, 0]);
        b.extend_from_slice(&writer);
        b.extend_from_slice(&[0, 0, 0, 0, 1, 0, 0, 0]);
        b.extend_from_slice(payload);
        b
    }

    fn parameter(pid: u16, value: &[u8]) -> Vec<u8> {
        let mut v = pid.to_le_bytes().to_vec();
        v.extend_from_slice(&u16::try_from(value.len()).unwrap().to_le_bytes());
        v.extend_from_slice(value);
        v
    }

    #[test]
    fn datagrams_are_sorted_by_their_writer() {
        let mut c = Classifier::default();
        let spdp = rtps(1, &[(0x15, data(SPDP_WRITER, &[0, 3, 0, 0]))]);
        assert_eq!(c.classify(&udp(&spdp)).first, Class::Spdp);
        let user_writer = [0, 0, 0x12, 0x03];
        let heartbeat = |writer: [u8; 4]| {
            let mut b = vec![0, 0, 0, 0];
            b.extend_from_slice(&writer);
            b.extend_from_slice(&[0; 20]);
            b
        };
        let hb = rtps(2, &[(0x09, vec![0; 8]), (0x07, heartbeat(user_writer))]);
        assert_eq!(c.classify(&udp(&hb)).first, Class::User);
        // Participant 2 announces that writer on ros_discovery_info: from then on it counts
        // as discovery.
        let mut guid = [2u8; 16];
        guid[12..].copy_from_slice(&user_writer);
        let announcement = discovery_info_announcement(2, user_writer);
        // With inline QoS (the Q flag), as roslite's and Fast DDS's announcers send it.
        let mut inline_qos = parameter(0x0070, &guid);
        inline_qos.extend(parameter(0x0001, &[]));
        inline_qos.extend_from_slice(&announcement);
        let sedp = rtps_flagged(
            2,
            &[(0x15, 0x03, data(SEDP_PUBLICATIONS_WRITER, &inline_qos))],
        );
        assert_eq!(c.classify(&udp(&sedp)).first, Class::Sedp);
        assert_eq!(c.classify(&udp(&hb)).first, Class::DiscoveryInfo);
        let mut plain = Classifier::default();
        let sedp = rtps(2, &[(0x15, data(SEDP_PUBLICATIONS_WRITER, &announcement))]);
        assert_eq!(plain.classify(&udp(&sedp)).first, Class::Sedp);
        assert_eq!(plain.classify(&udp(&hb)).first, Class::DiscoveryInfo);
        // The same entity id of another participant is still a user writer.
        let other = rtps(3, &[(0x07, heartbeat(user_writer))]);
        assert_eq!(c.classify(&udp(&other)).first, Class::User);
        // An ACKNACK names the writer's participant in the INFO_DST before it.
        let mut info_dst = vec![2u8; 12];
        info_dst.truncate(12);
        let acknack = rtps(3, &[(0x0e, info_dst), (0x06, heartbeat(user_writer))]);
        assert_eq!(c.classify(&udp(&acknack)).first, Class::DiscoveryInfo);
        assert_eq!(c.classify(&udp(&heartbeat(WLP_WRITER))).first, Class::Other);
        let wlp = rtps(4, &[(0x07, heartbeat(WLP_WRITER))]);
        assert_eq!(c.classify(&udp(&wlp)).first, Class::Wlp);
        let lookup = rtps(4, &[(0x07, heartbeat([0, 3, 0, 0xc3]))]);
        assert_eq!(c.classify(&udp(&lookup)).first, Class::OtherBuiltin);
        assert_eq!(c.classify(&[0x60, 0, 0, 0]).first, Class::Other);
        // Packed: an SPDP reply, then the SEDP announcement behind it in the same datagram.
        // The announcement is learned from, and each submessage's bytes go to its class.
        let mut packed_classifier = Classifier::default();
        let spdp_body = data(SPDP_WRITER, &[0, 3, 0, 0]);
        let sedp_body = data(SEDP_PUBLICATIONS_WRITER, &announcement);
        let packed = rtps(
            2,
            &[
                (0x09, vec![0; 8]),
                (0x15, spdp_body.clone()),
                (0x15, sedp_body.clone()),
            ],
        );
        let sorted = packed_classifier.classify(&udp(&packed));
        assert_eq!(sorted.first, Class::Spdp);
        // The header and the INFO_TS count with the SPDP DATA after them.
        assert_eq!(
            sorted.bytes[Class::Spdp as usize],
            (20 + 12 + 4 + spdp_body.len()) as u64
        );
        assert_eq!(
            sorted.bytes[Class::Sedp as usize],
            (4 + sedp_body.len()) as u64
        );
        assert_eq!(sorted.bytes.iter().sum::<u64>(), packed.len() as u64);
        assert_eq!(
            packed_classifier.classify(&udp(&hb)).first,
            Class::DiscoveryInfo
        );
        let mut counts = Counts::default();
        counts.add(&sorted);
        assert_eq!(counts.spdp.datagrams, 1);
        assert_eq!(counts.sedp.datagrams, 0);
        assert_eq!(counts.discovery().bytes, packed.len() as u64);
    }

    /// The serialized payload of a SEDP publication sample announcing `writer` of participant
    /// `prefix` (every prefix byte `prefix`) on ros_discovery_info.
    fn discovery_info_announcement(prefix: u8, writer: [u8; 4]) -> Vec<u8> {
        let mut guid = [prefix; 16];
        guid[12..].copy_from_slice(&writer);
        let mut topic = (u32::try_from(DISCOVERY_INFO_TOPIC.len()).unwrap() + 1)
            .to_le_bytes()
            .to_vec();
        topic.extend_from_slice(DISCOVERY_INFO_TOPIC.as_bytes());
        topic.push(0);
        while topic.len() % 4 != 0 {
            topic.push(0);
        }
        let mut announcement = vec![0x00, 0x03, 0, 0];
        announcement.extend(parameter(0x0005, &topic));
        announcement.extend(parameter(0x005a, &guid));
        announcement.extend(parameter(0x0001, &[]));
        announcement
    }

    #[test]
    fn traffic_before_its_writers_announcement_moves_to_discovery_info() {
        let writer = [0, 0, 0x01, 0x03];
        let sample = udp(&rtps(5, &[(0x15, data(writer, &[0, 1, 0, 0, 7, 7, 7, 7]))]));
        let mut state = State::default();
        let add = |state: &mut State, packet: &[u8]| {
            let sorted = state.classifier.classify(packet);
            state.snapshot.add(&sorted);
        };
        add(&mut state, &sample);
        add(&mut state, &sample);
        let early = state.snapshot.clone();
        let known = &state.classifier.discovery_info_writers;
        assert_eq!(early.resolve(known).user.datagrams, 2);
        assert_eq!(early.resolve(known).ros_discovery_info.datagrams, 0);
        // The announcement comes last (as Fast DDS sends it): the two samples counted before it
        // are ros_discovery_info's, in the earlier snapshot too.
        add(
            &mut state,
            &udp(&rtps(
                5,
                &[(
                    0x15,
                    data(
                        SEDP_PUBLICATIONS_WRITER,
                        &discovery_info_announcement(5, writer),
                    ),
                )],
            )),
        );
        add(&mut state, &sample);
        let known = &state.classifier.discovery_info_writers;
        let early = early.resolve(known);
        assert_eq!(early.user, Tally::default());
        assert_eq!(early.ros_discovery_info.datagrams, 2);
        assert_eq!(
            early.ros_discovery_info.bytes,
            2 * (sample.len() as u64 - 28)
        );
        let now = state.snapshot.resolve(known);
        assert_eq!(now.ros_discovery_info.datagrams, 3);
        assert_eq!(now.user, Tally::default());
        assert_eq!(now.since(&early).ros_discovery_info.datagrams, 1);
        // The same entity id in another participant stays a user writer.
        let other = udp(&rtps(6, &[(0x15, data(writer, &[0, 1, 0, 0]))]));
        add(&mut state, &other);
        let known = &state.classifier.discovery_info_writers;
        assert_eq!(state.snapshot.resolve(known).user.datagrams, 1);
    }

    /// Needs root (a network namespace and a raw socket), as `cargo xtask test` runs.
    #[test]
    fn each_datagram_on_loopback_counts_once() {
        use std::net::{Ipv4Addr, UdpSocket};
        let ns = NetNs::create("capture-once").expect("create a network namespace (run as root)");
        let capture = Capture::start_in(&ns).expect("start the capture");
        let writer = [0, 0, 0x12, 0x03];
        let heartbeat = {
            let mut b = vec![0, 0, 0, 0];
            b.extend_from_slice(&writer);
            b.extend_from_slice(&[0; 20]);
            rtps(7, &[(0x07, b)])
        };
        const EACH: u64 = 5;
        let group = Ipv4Addr::new(239, 255, 0, 1);
        ns.run(|| {
            let receiver = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)).unwrap();
            receiver
                .join_multicast_v4(&group, &Ipv4Addr::LOCALHOST)
                .unwrap();
            let port = receiver.local_addr().unwrap().port();
            let sender = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
            sender.set_multicast_loop_v4(true).unwrap();
            for _ in 0..EACH {
                sender
                    .send_to(&heartbeat, (Ipv4Addr::LOCALHOST, port))
                    .unwrap();
                sender.send_to(&heartbeat, (group, port)).unwrap();
            }
            let mut buf = [0u8; 512];
            for _ in 0..2 * EACH {
                receiver.recv(&mut buf).unwrap();
            }
        })
        .expect("send inside the namespace");
        // The capture reads on its own thread: wait until it has the datagrams (or more).
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while capture.counts().user.datagrams < 2 * EACH && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        // Idle for a few of the socket's 50 ms timeouts, when it compares with the device.
        std::thread::sleep(Duration::from_millis(300));
        let counts = capture.counts();
        assert_eq!(counts.user.datagrams, 2 * EACH, "{counts:?}");
        assert_eq!(counts.user.bytes, 2 * EACH * heartbeat.len() as u64);
        assert_eq!(counts.missed, 0, "{counts:?}");
    }

    #[test]
    fn device_counters_parse() {
        let text = "Inter-|   Receive                                                |  Transmit\n \
                    face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets\n    \
                    lo:   12345      67    0    0    0     0          0         0    12345      67\n";
        assert_eq!(parse_rx_packets(text, "lo"), Some(67));
        assert_eq!(parse_rx_packets(text, "eth0"), None);
    }
}
