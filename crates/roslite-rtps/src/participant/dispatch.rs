//! The receive path (one datagram → submessages → endpoints) and the transmit path
//! (endpoints' [`Transmit`]s → RTPS messages per destination set).
//!
//! Receive (RTPS 2.5 §8.3.4 and §8.3.7): [`parse_message`] validates and walks the datagram
//! and keeps the receiver state; each valid submessage is routed here:
//! - DATA from the SPDP announcer → SPDP handling (from anyone, known or not);
//! - every other submessage needs a known source participant, whose lease it refreshes;
//! - writer → reader submessages (DATA, DATA_FRAG, HEARTBEAT, HEARTBEAT_FRAG, GAP) go to the
//!   reader named by readerId, or, for `ENTITYID_UNKNOWN` (Cyclone sends SPDP/SEDP that way),
//!   to every local reader matched with the writer;
//! - reader → writer submessages (ACKNACK, NACK_FRAG) go to the writer named by writerId;
//! - after an INFO_DST for another participant, submessages are skipped ([`crate::receiver::ReceiverState::is_for`]).
//!
//! Transmit: every endpoint's pending [`Transmit`]s are grouped by destination set and packed
//! with one [`MessageBuilder`] per set, which adds INFO_DST for directed traffic and repeats
//! INFO_DST/INFO_TS at the start of every datagram.

use std::collections::BTreeMap;

use crate::discovery::sedp::DETECTORS;
use crate::discovery::spdp::{disposal_data, disposal_inline_qos};
use crate::endpoint::{Reader, Transmit, Writer};
use crate::instant::Instant;
use crate::message::MessageBuilder;
use crate::receiver::{parse_message, ReceivedSubmessage};
use crate::types::{EntityId, Guid, GuidPrefix, Locator};
use crate::wire::{Submessage, SubmessageHeader};

use super::liveliness::Assertion;
use super::{Datagram, Limit, Participant};

fn bump(c: &mut u64) {
    *c = c.saturating_add(1);
}

/// Where a writer → reader submessage goes.
enum Target {
    /// One of our SEDP detectors.
    Builtin(EntityId),
    /// Our participant-message (WLP) reader.
    Wlp,
    /// Local user readers, in `Participant::scratch`.
    Users,
}

impl Participant {
    /// [`Participant::handle_datagram`] for a datagram that arrived on the SPDP multicast
    /// group: a peer heard there shares the group, so periodic announcements reach it without
    /// a unicast copy.
    pub fn handle_multicast_datagram(
        &mut self,
        now: Instant,
        source: Option<Locator>,
        datagram: &[u8],
    ) {
        self.receiving_multicast = true;
        self.handle_datagram(now, source, datagram);
        self.receiving_multicast = false;
    }

    /// Processes one received datagram. `source` is the UDP source address, if known: it
    /// tells whether a new peer runs on this host (for its loopback locators).
    ///
    /// Malformed input is counted in [`Participant::stats`] and dropped; nothing is returned.
    pub fn handle_datagram(&mut self, now: Instant, source: Option<Locator>, datagram: &[u8]) {
        self.drained_at = None;
        let mut receive = std::mem::take(&mut self.stats.receive);
        let mut own = false;
        let mut from: Option<GuidPrefix> = None;
        // Malformed remainders are already counted in `receive`.
        let _ = parse_message(datagram, &mut receive, |rx| {
            if rx.receiver.source_guid_prefix == self.prefix {
                own = true;
                return;
            }
            from.get_or_insert(rx.receiver.source_guid_prefix);
            self.on_submessage(now, source, rx);
        });
        self.stats.receive = receive;
        if own {
            bump(&mut self.stats.own_datagrams);
        }
        if from.is_some() {
            self.inputs_handled = self.inputs_handled.wrapping_add(1);
        }
        if let Some(r) = from.and_then(|p| self.remotes.get_mut(&p)) {
            let len = u64::try_from(datagram.len()).unwrap_or(u64::MAX);
            r.received_bytes = r.received_bytes.saturating_add(len);
            if let Some(ip) = source.and_then(|s| s.to_socket_addr()).map(|a| a.ip()) {
                self.validated_ips.insert(ip, now);
                let cap = self
                    .config
                    .max_remote_participants
                    .saturating_mul(4)
                    .max(16);
                while self.validated_ips.len() > cap {
                    let oldest = self.validated_ips.iter().min_by_key(|(_, t)| **t);
                    let Some((ip, _)) = oldest.map(|(ip, t)| (*ip, *t)) else {
                        break;
                    };
                    self.validated_ips.remove(&ip);
                }
            }
        }
        self.process_sedp_samples(now);
        self.process_wlp_samples(now);
        self.refresh_remote_liveliness(now);
        self.finish_input();
    }

    fn on_submessage(&mut self, now: Instant, source: Option<Locator>, rx: ReceivedSubmessage<'_>) {
        let state = rx.receiver;
        let sm = rx.submessage;
        if matches!(
            sm,
            Submessage::InfoDst(_)
                | Submessage::InfoSrc(_)
                | Submessage::InfoTs(_)
                | Submessage::InfoReply(_)
                | Submessage::Pad(_)
        ) {
            return;
        }
        if !state.is_for(self.prefix) {
            bump(&mut self.stats.not_for_us);
            return;
        }
        let src = state.source_guid_prefix;
        if let Submessage::Data(d) = sm {
            if d.writer_id == EntityId::SPDP_PARTICIPANT_ANNOUNCER {
                self.handle_spdp(now, source, d, state);
                return;
            }
        }
        let Some(remote) = self.remotes.get_mut(&src) else {
            bump(&mut self.stats.from_unknown_participant);
            return;
        };
        // A writer's control traffic must come from where its participant was discovered
        // (docs/robustness.md §1): one datagram naming it from elsewhere could otherwise
        // declare its samples irrelevant.
        if matches!(
            sm,
            Submessage::Heartbeat(_) | Submessage::HeartbeatFrag(_) | Submessage::Gap(_)
        ) && !remote.may_send_from(source.as_ref())
        {
            bump(&mut self.stats.control_from_elsewhere);
            return;
        }
        // RTPS 2.5 §8.5.3.3: any message from the participant renews its lease. It also
        // proves the participant has discovered us.
        remote.last_seen = now;
        remote.verified = true;
        match sm {
            Submessage::Data(d) => {
                let writer = Guid::new(src, d.writer_id);
                self.on_writer_assertion(now, writer, Assertion::Data);
                self.route_to_readers(writer, d.reader_id, |r| {
                    r.handle_data(now, writer, d, state.timestamp)
                });
            }
            Submessage::DataFrag(f) => {
                let writer = Guid::new(src, f.writer_id);
                self.on_writer_assertion(now, writer, Assertion::Data);
                self.route_to_readers(writer, f.reader_id, |r| {
                    r.handle_data_frag(now, writer, f, state.timestamp)
                });
                if self.evict_reassembly_hog(src, f.data.len()) {
                    self.route_to_readers(writer, f.reader_id, |r| {
                        r.handle_data_frag(now, writer, f, state.timestamp)
                    });
                }
            }
            Submessage::Heartbeat(h) => {
                let writer = Guid::new(src, h.writer_id);
                // RTPS 2.5 §8.3.8.5: the L flag asserts the writer's liveliness.
                if h.liveliness_flag {
                    self.on_writer_assertion(now, writer, Assertion::LivelinessHeartbeat);
                }
                self.route_to_readers(writer, h.reader_id, |r| r.handle_heartbeat(now, writer, h));
            }
            Submessage::HeartbeatFrag(h) => {
                let writer = Guid::new(src, h.writer_id);
                self.route_to_readers(writer, h.reader_id, |r| {
                    r.handle_heartbeat_frag(now, writer, h)
                });
            }
            Submessage::Gap(g) => {
                let writer = Guid::new(src, g.writer_id);
                self.route_to_readers(writer, g.reader_id, |r| r.handle_gap(now, writer, g));
            }
            Submessage::AckNack(a) => {
                let reader = Guid::new(src, a.reader_id);
                self.route_to_writer(a.writer_id, |w| w.handle_acknack(now, reader, a));
            }
            Submessage::NackFrag(n) => {
                let reader = Guid::new(src, n.reader_id);
                self.route_to_writer(n.writer_id, |w| w.handle_nack_frag(now, reader, n));
            }
            _ => {}
        }
    }

    /// After a DATA_FRAG from participant `src` found the total reassembly budget full: if
    /// another remote participant holds more than `src` would with `len` more bytes, drops all
    /// of that one's reassemblies (docs/robustness.md §1: strangers cannot keep the total to
    /// themselves). Returns whether it did, so the fragment can be tried again.
    fn evict_reassembly_hog(&mut self, src: GuidPrefix, len: usize) -> bool {
        let total = &self.reassembly_total;
        if total.used().saturating_add(len) <= total.limit() {
            let limit = self.config.reader_defaults.reassembly_bytes_per_participant;
            if self
                .reassembly_budgets
                .get(&src)
                .is_some_and(|b| b.used().saturating_add(len) > b.limit())
            {
                self.limit_reached(Limit::ReassemblyBytesPerParticipant, limit);
            }
            return false;
        }
        let limit = total.limit();
        self.limit_reached(Limit::ReassemblyBytesTotal, limit);
        let mut wanted = false;
        for r in self.sedp_readers.values_mut() {
            wanted |= r.take_wants_shared_room();
        }
        wanted |= self.wlp.reader.take_wants_shared_room();
        for r in self.readers.values_mut_all() {
            wanted |= r.reader.take_wants_shared_room();
        }
        let own = self.reassembly_budgets.get(&src).map_or(0, |b| b.used());
        let Some((hog, held)) = self
            .reassembly_budgets
            .iter()
            .map(|(p, b)| (*p, b.used()))
            .max_by_key(|(p, used)| (*used, *p))
        else {
            return false;
        };
        if !wanted || hog == src || held <= own.saturating_add(len) {
            return false;
        }
        for r in self.sedp_readers.values_mut() {
            r.discard_reassemblies_from(hog);
        }
        self.wlp.reader.discard_reassemblies_from(hog);
        for r in self.readers.values_mut_all() {
            r.reader.discard_reassemblies_from(hog);
        }
        bump(&mut self.stats.reassembly_hog_evictions);
        true
    }

    /// Resolves the local readers of a writer → reader submessage.
    fn resolve_readers(&mut self, writer: Guid, reader_id: EntityId) -> Option<Target> {
        if writer.entity_id == EntityId::PARTICIPANT_MESSAGE_WRITER {
            return (reader_id.is_unknown() || reader_id == EntityId::PARTICIPANT_MESSAGE_READER)
                .then_some(Target::Wlp);
        }
        if writer.entity_id.is_builtin() {
            let pair = DETECTORS.iter().find(|p| p.remote == writer.entity_id)?;
            return (reader_id.is_unknown() || reader_id == pair.local)
                .then_some(Target::Builtin(pair.local));
        }
        self.scratch.clear();
        if reader_id.is_unknown() {
            let set = self.readers_of_writer.get(&writer)?;
            self.scratch.extend(set.iter().copied());
        } else {
            let r = self.readers.get(&reader_id)?;
            if !r.matched.contains(&writer) {
                return None;
            }
            self.scratch.push(reader_id);
        }
        Some(Target::Users)
    }

    fn route_to_readers(
        &mut self,
        writer: Guid,
        reader_id: EntityId,
        mut f: impl FnMut(&mut Reader),
    ) {
        match self.resolve_readers(writer, reader_id) {
            Some(Target::Builtin(id)) => {
                if let Some(r) = self.sedp_readers.get_mut(&id) {
                    f(r);
                }
            }
            Some(Target::Wlp) => f(&mut self.wlp.reader),
            Some(Target::Users) => {
                let ids = std::mem::take(&mut self.scratch);
                for id in &ids {
                    if let Some(r) = self.readers.get_mut(id) {
                        f(&mut r.reader);
                    }
                }
                self.scratch = ids;
            }
            None => bump(&mut self.stats.unroutable),
        }
    }

    fn route_to_writer(&mut self, writer_id: EntityId, f: impl FnOnce(&mut Writer)) {
        if let Some(w) = self.sedp_writers.get_mut(&writer_id) {
            f(&mut w.writer);
        } else if writer_id == EntityId::PARTICIPANT_MESSAGE_WRITER {
            f(&mut self.wlp.writer);
        } else if let Some(w) = self.writers.get_mut(&writer_id) {
            f(&mut w.writer);
        } else {
            bump(&mut self.stats.unroutable);
        }
    }

    /// The next datagram to send: SPDP announcements and everything the endpoints want sent,
    /// packed per destination set into messages of at most `max_datagram_size` bytes.
    /// Call until it returns `None` after every input.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Datagram> {
        if self.out.is_empty() && self.drained_at != Some(now) {
            self.collect_transmits(now);
            // Every endpoint's `poll_transmit` ran until `None` at `now`.
            self.drained_at = Some(now);
        }
        let d = loop {
            let mut d = self.out.pop_front()?;
            let len = u64::try_from(d.bytes.len()).unwrap_or(u64::MAX);
            d.destinations.retain(|l| self.may_send_to(l, len));
            if !d.destinations.is_empty() {
                break d;
            }
        };
        bump(&mut self.stats.datagrams_sent);
        self.stats.bytes_sent = self
            .stats
            .bytes_sent
            .saturating_add(u64::try_from(d.bytes.len()).unwrap_or(u64::MAX));
        Some(d)
    }

    /// Whether `len` bytes may go to `to` (docs/robustness.md §1, amplification): always to an
    /// address of our configuration or one that sent us a datagram of a known participant
    /// (compared by IP: peers send from other ports than they announce). Otherwise `to` was
    /// announced by a peer that has not shown it is there, possibly a third party named to
    /// reflect our traffic at it: as QUIC does before it validates an address (RFC 9000
    /// §8), the announcer gets at most 3 bytes sent there per byte it sent us.
    fn may_send_to(&mut self, to: &Locator, len: u64) -> bool {
        const FACTOR: u64 = 3;
        let Some(ip) = to.to_socket_addr().map(|a| a.ip()) else {
            return true;
        };
        if self.config_ips.contains(&ip) || self.validated_ips.contains_key(&ip) {
            return true;
        }
        let owner = self
            .remotes
            .values()
            .find(|r| {
                let d = &r.data;
                d.metatraffic_unicast_locators
                    .iter()
                    .chain(&d.metatraffic_multicast_locators)
                    .chain(&d.default_unicast_locators)
                    .chain(&d.default_multicast_locators)
                    .any(|l| l == to)
            })
            .map(|r| r.guid_prefix())
            .or_else(|| {
                self.remote_endpoints
                    .values()
                    .find(|e| {
                        let d = &e.data;
                        d.unicast_locators
                            .iter()
                            .chain(&d.multicast_locators)
                            .any(|l| l == to)
                    })
                    .map(|e| e.guid().prefix)
            });
        let Some(r) = owner.and_then(|p| self.remotes.get_mut(&p)) else {
            // Named by nobody we know (any more): nothing to charge, nothing to reflect.
            bump(&mut self.stats.amplification_limited);
            return false;
        };
        let sent = r.sent_unvalidated.saturating_add(len);
        if sent > r.received_bytes.saturating_mul(FACTOR) {
            bump(&mut self.stats.amplification_limited);
            return false;
        }
        r.sent_unvalidated = sent;
        self.stats.bytes_to_unvalidated = self.stats.bytes_to_unvalidated.saturating_add(len);
        true
    }

    pub(super) fn collect_transmits(&mut self, now: Instant) {
        let mut packer = Packer {
            header: self.header,
            max: self.config.max_datagram_size,
            groups: BTreeMap::new(),
            dropped: 0,
        };
        for dests in std::mem::take(&mut self.pending_spdp) {
            packer.push_spdp(dests, &Submessage::Data(self.spdp.data()));
        }
        if !self.pending_spdp_dispose.is_empty() {
            let qos = disposal_inline_qos(self.guid());
            if let Some(d) = disposal_data(
                EntityId::SPDP_PARTICIPANT_ANNOUNCER,
                EntityId::SPDP_PARTICIPANT_DETECTOR,
                self.spdp.dispose_sn(),
                &qos,
            ) {
                for dests in std::mem::take(&mut self.pending_spdp_dispose) {
                    packer.push_spdp(dests, &Submessage::Data(d));
                }
            }
        }
        for w in self.sedp_writers.values_mut() {
            while let Some(t) = w.writer.poll_transmit(now) {
                packer.push(&t);
            }
        }
        for r in self.sedp_readers.values_mut() {
            while let Some(t) = r.poll_transmit(now) {
                packer.push(&t);
            }
        }
        while let Some(t) = self.wlp.writer.poll_transmit(now) {
            packer.push(&t);
        }
        while let Some(t) = self.wlp.reader.poll_transmit(now) {
            packer.push(&t);
        }
        // Only the endpoints an input touched: the others were drained and have not changed
        // (their due timers touch them through `handle_timeout`).
        let polled = self.writers.flush(|w| {
            while let Some(t) = w.writer.poll_transmit(now) {
                packer.push(&t);
            }
            w.writer.poll_timeout()
        });
        let polled = polled.saturating_add(self.readers.flush(|r| {
            while let Some(t) = r.reader.poll_transmit(now) {
                packer.push(&t);
            }
            r.reader.poll_timeout()
        }));
        self.stats.work.transmit_polls = self.stats.work.transmit_polls.saturating_add(polled);
        self.stats.transmit_dropped = self.stats.transmit_dropped.saturating_add(packer.dropped);
        for (dests, mut builder) in packer.groups {
            for built in builder.finish_datagrams() {
                self.out.push_back(Datagram {
                    destinations: dests.clone(),
                    bytes: built,
                });
            }
        }
    }
}

/// Groups submessages by destination set.
struct Packer {
    header: crate::wire::HeaderRepr,
    max: usize,
    groups: BTreeMap<Vec<Locator>, MessageBuilder>,
    dropped: u64,
}

impl Packer {
    fn group(&mut self, mut dests: Vec<Locator>) -> Option<&mut MessageBuilder> {
        dests.sort();
        dests.dedup();
        if dests.is_empty() {
            self.dropped = self.dropped.saturating_add(1);
            return None;
        }
        let (header, max) = (self.header, self.max);
        Some(
            self.groups
                .entry(dests)
                .or_insert_with(|| MessageBuilder::new(header, max)),
        )
    }

    fn push_spdp(&mut self, dests: Vec<Locator>, sm: &Submessage<'_>) {
        let Some(b) = self.group(dests) else {
            return;
        };
        b.set_destination(GuidPrefix::UNKNOWN);
        b.set_timestamp(None);
        if b.push(sm).is_err() {
            self.dropped = self.dropped.saturating_add(1);
        }
    }

    /// Adds one endpoint transmit. Its submessages are re-parsed so that INFO_TS/INFO_DST
    /// become builder state: the builder then repeats them after every datagram boundary and
    /// resets them between transmits.
    fn push(&mut self, t: &Transmit) {
        let Some(b) = self.group(t.destinations.clone()) else {
            return;
        };
        b.set_destination(t.dst_prefix.unwrap_or(GuidPrefix::UNKNOWN));
        b.set_timestamp(None);
        let mut dropped = 0u64;
        for emitted in &t.submessages {
            if let Some(tail) = &emitted.tail {
                if b.push_with_tail(&emitted.head, tail.clone()).is_err() {
                    dropped = dropped.saturating_add(1);
                }
                continue;
            }
            match reparse(&emitted.head) {
                Some(Submessage::InfoTs(ts)) => b.set_timestamp(ts.timestamp),
                Some(Submessage::InfoDst(d)) => b.set_destination(d.guid_prefix),
                Some(sm) => {
                    if b.push(&sm).is_err() {
                        dropped = dropped.saturating_add(1);
                    }
                }
                None => dropped = dropped.saturating_add(1),
            }
        }
        self.dropped = self.dropped.saturating_add(dropped);
    }
}

/// Parses one emitted submessage (header + body).
fn reparse(raw: &[u8]) -> Option<Submessage<'_>> {
    let sh = SubmessageHeader::parse(raw).ok()?;
    let after = raw.get(SubmessageHeader::LEN..)?;
    let len = sh.body_len(after.len()).ok()?;
    let body = after.get(..len)?;
    Submessage::parse(&sh, body).ok().flatten()
}
