//! Liveliness: the Writer Liveliness Protocol (RTPS 2.5 §8.4.13) and the DDS LIVELINESS QoS
//! (DDS 1.4 §2.2.3.11) on both sides.
//!
//! Builtin endpoints: the participant-message writer (0x000200c2) and reader (0x000200c7),
//! reliable, transient-local, KEEP_LAST 1 (§8.4.13.3), matched with a remote participant's
//! counterparts when its `PID_BUILTIN_ENDPOINT_SET` announces them (bits 10/11, §8.5.3.2).
//!
//! Local writers (writer side):
//! - AUTOMATIC: the participant writes an AUTOMATIC_LIVELINESS_UPDATE every third of the
//!   smallest finite lease of its automatic writers (§8.4.13.4); never lost.
//! - MANUAL_BY_PARTICIPANT: asserted by a write on any such writer of ours or by
//!   [`Participant::assert_liveliness`]; remote readers learn it from a
//!   MANUAL_LIVELINESS_UPDATE (written at most every third of the smallest such lease).
//! - MANUAL_BY_TOPIC: asserted by a write on the writer itself or by
//!   [`Participant::assert_writer_liveliness`], which sends a HEARTBEAT with the liveliness
//!   flag (§8.3.8.5, §8.4.13.5).
//! - A manual writer that lets its lease run out raises [`Event::LivelinessLost`] once per
//!   lapse.
//!
//! Remote writers (reader side): every matched remote writer with a finite lease is tracked
//! with the time of its last assertion. DATA/DATA_FRAG from it and HEARTBEATs with the
//! liveliness flag assert it; MANUAL_BY_PARTICIPANT writers are also asserted by a
//! MANUAL_LIVELINESS_UPDATE or by data from a sibling; AUTOMATIC writers are asserted by any
//! message from their participant (its `last_seen`, which an AUTOMATIC_LIVELINESS_UPDATE also
//! renews). When `last assertion + lease` passes, the writer is not alive and every local
//! reader matched with it gets [`Event::LivelinessChanged`]; the next assertion makes it alive
//! again. Writers with the ROS default infinite lease are never tracked, so the receive path
//! costs nothing for them.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration as StdDuration;

use crate::discovery::wlp::{ParticipantMessageData, ParticipantMessageKind};
use crate::discovery::LivelinessKind;
use crate::endpoint::{Drained, Reader, ReaderProxyInfo, Writer, WriterProxyInfo};
use crate::instant::Instant;
use crate::types::{BuiltinEndpointSet, EntityId, Guid, GuidPrefix, Locator};

use super::{Event, Participant, ReaderId, WriteError, WriterId};

/// Assertions per lease: the participant asserts at a third of the smallest lease, so two
/// assertions may be lost before a reader declares a writer not alive.
const ASSERTIONS_PER_LEASE: u32 = 3;

/// A third of `lease`.
fn assertion_period(lease: StdDuration) -> StdDuration {
    lease.checked_div(ASSERTIONS_PER_LEASE).unwrap_or(lease)
}

fn bump(c: &mut u64) {
    *c = c.saturating_add(1);
}

/// The liveliness QoS of a local writer and its bookkeeping.
#[derive(Clone, Copy, Debug)]
pub(super) struct LocalLiveliness {
    pub kind: LivelinessKind,
    /// `None`: infinite.
    pub lease: Option<StdDuration>,
    pub last_assert: Instant,
    /// `LivelinessLost` was reported and no assertion followed yet.
    pub lost: bool,
}

impl LocalLiveliness {
    pub(super) fn new(kind: LivelinessKind, lease: Option<StdDuration>, now: Instant) -> Self {
        LocalLiveliness {
            kind,
            lease,
            last_assert: now,
            lost: false,
        }
    }

    pub(super) fn is_manual(&self) -> bool {
        self.kind != LivelinessKind::Automatic
    }

    /// When the lease runs out, for a manual writer not already reported lost.
    fn expiry(&self) -> Option<Instant> {
        if !self.is_manual() || self.lost {
            return None;
        }
        self.last_assert.checked_add(self.lease?)
    }
}

/// A matched remote writer with a finite lease.
#[derive(Clone, Copy, Debug)]
struct RemoteWriterLiveliness {
    kind: LivelinessKind,
    lease: StdDuration,
    /// Its own last assertion (data, or a HEARTBEAT with the liveliness flag).
    last_assert: Instant,
    alive: bool,
}

/// The participant's WLP state.
pub(super) struct Wlp {
    pub writer: Drained<Writer>,
    pub reader: Drained<Reader>,
    /// When the next AUTOMATIC_LIVELINESS_UPDATE is due; `None` without automatic writers of
    /// finite lease.
    next_automatic: Option<Instant>,
    /// When we last wrote a MANUAL_LIVELINESS_UPDATE.
    last_manual: Option<Instant>,
    /// The last MANUAL_BY_PARTICIPANT assertion of each remote participant.
    remote_manual: BTreeMap<GuidPrefix, Instant>,
    /// Tracked remote writers (matched with at least one local reader, finite lease).
    remote_writers: BTreeMap<Guid, RemoteWriterLiveliness>,
}

impl Wlp {
    pub(super) fn new(writer: Writer, reader: Reader) -> Self {
        Wlp {
            writer: Drained::new(writer),
            reader: Drained::new(reader),
            next_automatic: None,
            last_manual: None,
            remote_manual: BTreeMap::new(),
            remote_writers: BTreeMap::new(),
        }
    }

    /// Remote writers whose lease is being watched.
    #[cfg(test)]
    pub(super) fn tracked_writers(&self) -> usize {
        self.remote_writers.len()
    }
}

/// What a received submessage says about its writer's liveliness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Assertion {
    /// DATA or DATA_FRAG: a write asserts every kind.
    Data,
    /// A HEARTBEAT with the liveliness flag (an explicit manual assertion).
    LivelinessHeartbeat,
}

impl Participant {
    /// Smallest finite lease of our writers of `kind`.
    fn min_lease(&self, kind: LivelinessKind) -> Option<StdDuration> {
        self.writers
            .values()
            .filter(|w| w.liveliness.kind == kind)
            .filter_map(|w| w.liveliness.lease)
            .min()
    }

    /// Re-plans the AUTOMATIC updates after a local writer came or went.
    pub(super) fn plan_automatic_liveliness(&mut self, now: Instant) {
        match self.min_lease(LivelinessKind::Automatic) {
            None => self.wlp.next_automatic = None,
            Some(_) if self.wlp.next_automatic.is_some() => {}
            // The first update goes out at once: peers then count the writer alive.
            Some(_) => self.wlp.next_automatic = Some(now),
        }
    }

    /// Writes one ParticipantMessageData sample of `kind`.
    fn write_participant_message(&mut self, now: Instant, kind: ParticipantMessageKind) {
        let message = ParticipantMessageData::new(self.prefix, kind);
        let payload: Arc<[u8]> = Arc::from(message.to_payload());
        let qos: Arc<[u8]> = Arc::from(message.inline_qos());
        // KEEP_LAST never refuses a write.
        if self.wlp.writer.write(now, payload, Some(qos), None).is_ok() {
            bump(&mut self.stats.wlp.written);
        }
    }

    /// DDS `DomainParticipant::assert_liveliness`: asserts every MANUAL_BY_PARTICIPANT writer
    /// of this participant and tells remote readers with a MANUAL_LIVELINESS_UPDATE.
    pub fn assert_liveliness(&mut self, now: Instant) {
        self.drained_at = None;
        self.assert_manual_by_participant(now, true);
    }

    /// DDS `DataWriter::assert_liveliness`. A MANUAL_BY_TOPIC writer sends a HEARTBEAT with the
    /// liveliness flag to its matched readers; a MANUAL_BY_PARTICIPANT writer asserts the
    /// participant ([`Participant::assert_liveliness`]); an AUTOMATIC writer needs nothing.
    ///
    /// # Errors
    /// [`WriteError::UnknownWriter`].
    pub fn assert_writer_liveliness(
        &mut self,
        now: Instant,
        writer: WriterId,
    ) -> Result<(), WriteError> {
        self.drained_at = None;
        let w = self
            .writers
            .get_mut(&writer.0)
            .ok_or(WriteError::UnknownWriter)?;
        match w.liveliness.kind {
            LivelinessKind::Automatic => {}
            LivelinessKind::ManualByTopic => {
                w.liveliness.last_assert = now;
                w.liveliness.lost = false;
                w.writer.assert_liveliness();
            }
            LivelinessKind::ManualByParticipant => self.assert_manual_by_participant(now, true),
        }
        Ok(())
    }

    /// A write on local writer `id` asserts it (and, for MANUAL_BY_PARTICIPANT, the whole
    /// participant). Remote readers of the writer learn it from the data itself.
    pub(super) fn asserted_by_write(&mut self, now: Instant, id: EntityId) {
        let Some(w) = self.writers.get_mut(&id) else {
            return;
        };
        w.liveliness.last_assert = now;
        w.liveliness.lost = false;
        if w.liveliness.kind == LivelinessKind::ManualByParticipant {
            self.assert_manual_by_participant(now, false);
        }
    }

    /// Asserts all our MANUAL_BY_PARTICIPANT writers. A MANUAL_LIVELINESS_UPDATE goes out if
    /// `always`, or if the last one is older than a third of the smallest such lease.
    fn assert_manual_by_participant(&mut self, now: Instant, always: bool) {
        let mut any = false;
        let manual: Vec<EntityId> = self.manual_writers.iter().copied().collect();
        for id in manual {
            let by_participant = self
                .writers
                .get(&id)
                .is_some_and(|w| w.liveliness.kind == LivelinessKind::ManualByParticipant);
            if let (true, Some(w)) = (by_participant, self.writers.get_mut(&id)) {
                w.liveliness.last_assert = now;
                w.liveliness.lost = false;
                any = true;
            }
        }
        if !any {
            return;
        }
        let due = match (
            self.wlp.last_manual,
            self.min_lease(LivelinessKind::ManualByParticipant),
        ) {
            (None, _) => true,
            (Some(last), Some(lease)) => {
                now.saturating_duration_since(last) >= assertion_period(lease)
            }
            (Some(_), None) => false,
        };
        if always || due {
            self.wlp.last_manual = Some(now);
            self.write_participant_message(now, ParticipantMessageKind::MANUAL_LIVELINESS_UPDATE);
        }
    }

    /// Matches our WLP endpoints with a remote participant's (RTPS 2.5 §8.4.13.3, only those
    /// its builtin endpoint set announces).
    pub(super) fn match_wlp(
        &mut self,
        now: Instant,
        prefix: GuidPrefix,
        set: BuiltinEndpointSet,
        unicast: &[Locator],
        multicast: &[Locator],
    ) {
        if set.contains(BuiltinEndpointSet::PARTICIPANT_MESSAGE_DATA_READER) {
            self.wlp.writer.add_reader(
                now,
                ReaderProxyInfo {
                    guid: Guid::new(prefix, EntityId::PARTICIPANT_MESSAGE_READER),
                    unicast: unicast.to_vec(),
                    multicast: multicast.to_vec(),
                    reliable: true,
                    transient_local: true,
                    expects_inline_qos: false,
                },
            );
        }
        if set.contains(BuiltinEndpointSet::PARTICIPANT_MESSAGE_DATA_WRITER) {
            let budgets = self.reassembly_budgets(prefix);
            self.wlp.reader.add_writer_with_budgets(
                now,
                WriterProxyInfo {
                    guid: Guid::new(prefix, EntityId::PARTICIPANT_MESSAGE_WRITER),
                    unicast: unicast.to_vec(),
                    multicast: multicast.to_vec(),
                    reliable: true,
                },
                budgets,
            );
        }
    }

    /// Forgets a remote participant's WLP proxies and assertions.
    pub(super) fn unmatch_wlp(&mut self, prefix: GuidPrefix) {
        self.wlp
            .writer
            .remove_reader(&Guid::new(prefix, EntityId::PARTICIPANT_MESSAGE_READER));
        self.wlp
            .reader
            .remove_writer(&Guid::new(prefix, EntityId::PARTICIPANT_MESSAGE_WRITER));
        self.wlp.remote_manual.remove(&prefix);
    }

    /// Starts tracking a remote writer just matched with a local reader (alive from now on).
    pub(super) fn track_remote_writer(&mut self, now: Instant, remote: Guid) {
        let Some(e) = self.remote_endpoints.get(&remote) else {
            return;
        };
        let Some(lease) = e.data.liveliness.lease_duration.to_std() else {
            return;
        };
        let kind = e.data.liveliness.kind;
        self.wlp
            .remote_writers
            .entry(remote)
            .or_insert(RemoteWriterLiveliness {
                kind,
                lease,
                last_assert: now,
                alive: true,
            });
    }

    /// Stops tracking a remote writer no local reader is matched with any more.
    pub(super) fn untrack_remote_writer(&mut self, remote: Guid) {
        if !self.readers_of_writer.contains_key(&remote) {
            self.wlp.remote_writers.remove(&remote);
        }
    }

    /// A submessage from remote writer `writer` asserted it (see [`Assertion`]).
    pub(super) fn on_writer_assertion(&mut self, now: Instant, writer: Guid, how: Assertion) {
        if self.wlp.remote_writers.is_empty() {
            return;
        }
        let Some(w) = self.wlp.remote_writers.get_mut(&writer) else {
            return;
        };
        w.last_assert = now;
        if how == Assertion::Data && w.kind == LivelinessKind::ManualByParticipant {
            // DDS 1.4 §2.2.3.11: one entity asserting asserts the whole participant.
            self.wlp.remote_manual.insert(writer.prefix, now);
        }
    }

    /// Drains the WLP reader and applies the updates.
    pub(super) fn process_wlp_samples(&mut self, now: Instant) {
        while let Some(sample) = self.wlp.reader.poll_sample() {
            if sample.payload.is_empty() {
                continue; // a dispose/unregister of an instance: nothing to assert
            }
            let message = match ParticipantMessageData::from_payload(&sample.payload) {
                Ok(m) => m,
                Err(_) => {
                    bump(&mut self.stats.wlp.malformed);
                    continue;
                }
            };
            if message.participant != sample.writer.prefix {
                bump(&mut self.stats.wlp.prefix_mismatch);
                continue;
            }
            match message.kind {
                // Any message renewed the participant's `last_seen`, which asserts its
                // automatic writers; nothing more to do.
                ParticipantMessageKind::AUTOMATIC_LIVELINESS_UPDATE => {
                    bump(&mut self.stats.wlp.automatic);
                }
                ParticipantMessageKind::MANUAL_LIVELINESS_UPDATE => {
                    bump(&mut self.stats.wlp.manual);
                    self.wlp.remote_manual.insert(message.participant, now);
                }
                _ => bump(&mut self.stats.wlp.other_kind),
            }
        }
    }

    /// The last assertion of a tracked remote writer, all sources considered.
    fn effective_assert(&self, guid: Guid, w: &RemoteWriterLiveliness) -> Instant {
        let by_participant = match w.kind {
            LivelinessKind::Automatic => self.remotes.get(&guid.prefix).map(|r| r.last_seen),
            LivelinessKind::ManualByParticipant => {
                self.wlp.remote_manual.get(&guid.prefix).copied()
            }
            LivelinessKind::ManualByTopic => None,
        };
        by_participant.map_or(w.last_assert, |t| t.max(w.last_assert))
    }

    /// The next liveliness deadline: a local manual writer's lease, a tracked remote writer's
    /// lease, or the next AUTOMATIC update.
    pub(super) fn liveliness_timeout(&self) -> Option<Instant> {
        let local = self
            .manual_writers
            .iter()
            .filter_map(|id| self.writers.get(id)?.liveliness.expiry())
            .min();
        let remote = self
            .wlp
            .remote_writers
            .iter()
            .filter(|(_, w)| w.alive)
            .filter_map(|(g, w)| self.effective_assert(*g, w).checked_add(w.lease))
            .min();
        [local, remote, self.wlp.next_automatic]
            .into_iter()
            .flatten()
            .min()
    }

    /// Runs the liveliness timers due at `now` and reports transitions.
    pub(super) fn handle_liveliness_timeout(&mut self, now: Instant) {
        if self.wlp.next_automatic.is_some_and(|t| t <= now) {
            self.write_participant_message(
                now,
                ParticipantMessageKind::AUTOMATIC_LIVELINESS_UPDATE,
            );
            self.wlp.next_automatic = self
                .min_lease(LivelinessKind::Automatic)
                .map(|lease| now.saturating_add(assertion_period(lease)));
        }
        let lost: Vec<EntityId> = self
            .manual_writers
            .iter()
            .copied()
            .filter(|id| {
                self.writers
                    .get(id)
                    .is_some_and(|w| w.liveliness.expiry().is_some_and(|t| t <= now))
            })
            .collect();
        for &id in &lost {
            if let Some(w) = self.writers.get_mut(&id) {
                w.liveliness.lost = true;
            }
        }
        for id in lost {
            self.push_event(Event::LivelinessLost {
                writer: WriterId(id),
            });
        }
        self.refresh_remote_liveliness(now);
    }

    /// Re-evaluates every tracked remote writer: alive while `last assertion + lease` is in
    /// the future. Called after timers and after every datagram that may have asserted one.
    pub(super) fn refresh_remote_liveliness(&mut self, now: Instant) {
        if self.wlp.remote_writers.is_empty() {
            return;
        }
        let changed: Vec<(Guid, bool)> = self
            .wlp
            .remote_writers
            .iter()
            .filter_map(|(g, w)| {
                let alive = self
                    .effective_assert(*g, w)
                    .checked_add(w.lease)
                    .is_none_or(|t| t > now);
                (alive != w.alive).then_some((*g, alive))
            })
            .collect();
        for (writer, alive) in changed {
            if let Some(w) = self.wlp.remote_writers.get_mut(&writer) {
                w.alive = alive;
            }
            let readers: Vec<EntityId> = self
                .readers_of_writer
                .get(&writer)
                .map(|s| s.iter().copied().collect())
                .unwrap_or_default();
            for reader in readers {
                let (alive_count, not_alive_count) = self.liveliness_counts(reader);
                self.push_event(Event::LivelinessChanged {
                    reader: ReaderId(reader),
                    writer,
                    alive,
                    alive_count,
                    not_alive_count,
                });
            }
        }
    }

    /// `(alive_count, not_alive_count)` over the writers matched with local reader `reader`.
    fn liveliness_counts(&self, reader: EntityId) -> (u32, u32) {
        let Some(r) = self.readers.get(&reader) else {
            return (0, 0);
        };
        let not_alive = r
            .matched
            .iter()
            .filter(|g| self.wlp.remote_writers.get(g).is_some_and(|w| !w.alive))
            .count();
        let alive = r.matched.len().saturating_sub(not_alive);
        let c = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        (c(alive), c(not_alive))
    }

    /// `(alive_count, not_alive_count)` of a local reader (DDS `get_liveliness_changed_status`).
    pub fn liveliness_status(&self, reader: ReaderId) -> Option<(u32, u32)> {
        self.readers
            .contains_key(&reader.0)
            .then(|| self.liveliness_counts(reader.0))
    }
}
