//! The participant's side of SPDP and SEDP: the remote participant and endpoint tables,
//! their caps, builtin-endpoint matching and user-endpoint matching.

use crate::discovery::matching::{
    carriable_elsewhere, check_compatible, endpoint_locators, filter_locators, same_topic, PeerHost,
};
use crate::discovery::sedp::{self, SedpMessage, ANNOUNCERS, DETECTORS};
use crate::discovery::spdp::{RemoteParticipant, SpdpMessage, SpdpRejection};
use crate::discovery::{
    DurabilityKind, EndpointData, EndpointKind, ParticipantData, ReliabilityKind, SenderInfo,
};
use crate::endpoint::{ReaderProxyInfo, WriterProxyInfo};
use crate::instant::Instant;
use crate::receiver::ReceiverState;
use crate::types::{EntityId, Guid, GuidPrefix, Locator};
use crate::wire::DataRepr;

use super::{
    spdp_reply_locators, EndpointRef, Event, Limit, Participant, ReaderId, RemoteEndpoint, WriterId,
};

fn bump(c: &mut u64) {
    *c = c.saturating_add(1);
}

impl Participant {
    /// A DATA from a remote SPDP announcer (RTPS 2.5 §8.5.3.3).
    pub(super) fn handle_spdp(
        &mut self,
        now: Instant,
        source: Option<Locator>,
        data: &DataRepr<'_>,
        rx: &ReceiverState,
    ) {
        let msg = match self.spdp_filter.classify(data, rx) {
            Ok(m) => m,
            Err(e) => {
                let s = &mut self.stats.spdp;
                bump(match e {
                    SpdpRejection::Malformed => &mut s.malformed,
                    SpdpRejection::PrefixMismatch => &mut s.prefix_mismatch,
                    SpdpRejection::Own => &mut s.own,
                    SpdpRejection::ForeignDomain => &mut s.foreign_domain,
                });
                return;
            }
        };
        match msg {
            SpdpMessage::Dispose(prefix) => {
                bump(&mut self.stats.spdp.disposals);
                if self.remotes.contains_key(&prefix) {
                    bump(&mut self.stats.participants_disposed);
                    self.remove_participant(now, prefix);
                }
            }
            SpdpMessage::Announce(pd) => {
                bump(&mut self.stats.spdp.announcements);
                self.announce_participant(now, source, *pd);
            }
        }
    }

    fn announce_participant(&mut self, now: Instant, source: Option<Locator>, pd: ParticipantData) {
        let prefix = pd.guid.prefix;
        let host = PeerHost::classify(source.as_ref(), &self.own_locators);
        let reply_interval = self.config.initial_announce_period;
        if let Some(r) = self.remotes.get_mut(&prefix) {
            r.last_seen = now;
            if self.receiving_multicast {
                r.multicast_heard = Some(now);
            }
            let old_host = r.host;
            if source.is_some() {
                r.source = source;
                // A datagram from loopback (or from one of our addresses) proves the peer is
                // on this host; later ones arriving over another interface do not disprove it.
                if r.host != PeerHost::Local {
                    r.host = host;
                }
            }
            let mut reroute = r.host != old_host;
            if r.data != pd {
                reroute |= !same_locators(&r.data, &pd);
                r.data = pd;
                self.graph_changed = true;
                // Its lease may have become shorter.
                let expiry = r.lease_expiry();
                self.plan_lease_check(expiry);
            }
            if reroute {
                self.reroute(now, prefix);
            }
            let Some(r) = self.remotes.get_mut(&prefix) else {
                return;
            };
            // It may not have our announcement yet (a lost reply): answer it directly until
            // it talks to us, at most once per initial announce period.
            let due = r
                .last_reply
                .is_none_or(|t| now.saturating_duration_since(t) >= reply_interval);
            if !r.verified && due {
                r.last_reply = Some(now);
                let dests = spdp_reply_locators(r);
                self.queue_spdp(dests);
            }
            return;
        }
        if self.remotes.len() >= self.config.max_remote_participants {
            self.limit_reached(
                Limit::MaxRemoteParticipants,
                self.config.max_remote_participants,
            );
            if !self.evict_one(now) {
                bump(&mut self.stats.participants_rejected);
                return;
            }
        }
        let remote = RemoteParticipant {
            data: pd,
            last_seen: now,
            discovered_at: now,
            source,
            host,
            verified: false,
            last_reply: Some(now),
            discovered_from: source,
            received_bytes: 0,
            sent_unvalidated: 0,
            multicast_heard: self.receiving_multicast.then_some(now),
        };
        let guid = remote.guid();
        self.plan_lease_check(remote.lease_expiry());
        // Answer at once with our SPDP, so the newcomer does not wait for our next period
        // (docs/ros2-interop.md §13); our SEDP follows as soon as the builtin endpoints
        // are matched below.
        let dests = spdp_reply_locators(&remote);
        self.remotes.insert(prefix, remote);
        self.queue_spdp(dests);
        bump(&mut self.stats.participants_discovered);
        self.push_event(Event::ParticipantDiscovered(guid));
        self.graph_changed = true;
        self.match_builtin(now, prefix);
    }

    /// Makes sure leases are checked no later than `expiry` (see `lease_check_at`).
    fn plan_lease_check(&mut self, expiry: Option<Instant>) {
        if let Some(expiry) = expiry {
            self.lease_check_at = Some(self.lease_check_at.map_or(expiry, |t| t.min(expiry)));
        }
    }

    fn queue_spdp(&mut self, dests: Vec<Locator>) {
        if !dests.is_empty() {
            bump(&mut self.stats.spdp.replies);
            self.pending_spdp.push(dests);
        }
    }

    /// Makes room for a new participant by dropping the unverified one (SPDP only, never
    /// talked to us) heard from least recently. Returns whether one was dropped.
    fn evict_one(&mut self, now: Instant) -> bool {
        let victim = self
            .remotes
            .values()
            .filter(|r| !r.verified)
            .min_by_key(|r| (r.last_seen, r.guid_prefix()))
            .map(|r| r.guid_prefix());
        match victim {
            Some(prefix) => {
                bump(&mut self.stats.participants_evicted);
                self.remove_participant(now, prefix);
                true
            }
            None => false,
        }
    }

    /// Matches our builtin SEDP endpoints with those the remote announced
    /// (RTPS 2.5 §8.5.4.3, via `PID_BUILTIN_ENDPOINT_SET`).
    fn match_builtin(&mut self, now: Instant, prefix: GuidPrefix) {
        let Some(r) = self.remotes.get(&prefix) else {
            return;
        };
        let set = r.data.builtin_endpoints;
        let host = r.host;
        let unicast = filter_locators(&r.data.metatraffic_unicast_locators, host);
        let multicast = filter_locators(&r.data.metatraffic_multicast_locators, host);
        for pair in ANNOUNCERS {
            if !set.contains(pair.remote_bit) {
                continue;
            }
            if let Some(w) = self.sedp_writers.get_mut(&pair.local) {
                w.writer.add_reader(
                    now,
                    ReaderProxyInfo {
                        guid: Guid::new(prefix, pair.remote),
                        unicast: unicast.clone(),
                        multicast: multicast.clone(),
                        reliable: true,
                        transient_local: true,
                        expects_inline_qos: false,
                    },
                );
            }
        }
        for pair in DETECTORS {
            if !set.contains(pair.remote_bit) {
                continue;
            }
            let budgets = self.reassembly_budgets(prefix);
            if let Some(rd) = self.sedp_readers.get_mut(&pair.local) {
                rd.add_writer_with_budgets(
                    now,
                    WriterProxyInfo {
                        guid: Guid::new(prefix, pair.remote),
                        unicast: unicast.clone(),
                        multicast: multicast.clone(),
                        reliable: true,
                    },
                    budgets,
                );
            }
        }
        self.match_wlp(now, prefix, set, &unicast, &multicast);
    }

    /// Updates the locators of every proxy of a participant whose announced locators (or
    /// host classification) changed. Adding a known proxy only updates its locators.
    fn reroute(&mut self, now: Instant, prefix: GuidPrefix) {
        self.match_builtin(now, prefix);
        let endpoints: Vec<Guid> = self
            .remote_endpoints
            .range(Guid::new(prefix, EntityId::UNKNOWN)..)
            .take_while(|(g, _)| g.prefix == prefix)
            .map(|(g, _)| *g)
            .collect();
        for remote in endpoints {
            let locals: Vec<EntityId> = self
                .locals_on_topic_of(remote)
                .into_iter()
                .filter(|local| self.is_matched(*local, remote))
                .collect();
            for local in locals {
                self.add_proxy(now, local, remote);
            }
        }
    }

    /// Whether local endpoint `local` is matched with remote endpoint `remote`.
    fn is_matched(&self, local: EntityId, remote: Guid) -> bool {
        if local.is_writer() {
            self.writers
                .get(&local)
                .is_some_and(|w| w.matched.contains(&remote))
        } else {
            self.readers
                .get(&local)
                .is_some_and(|r| r.matched.contains(&remote))
        }
    }

    /// The local endpoints on the topic of known remote endpoint `remote`, of the other side.
    fn locals_on_topic_of(&self, remote: Guid) -> Vec<EntityId> {
        let Some(e) = self.remote_endpoints.get(&remote) else {
            return Vec::new();
        };
        self.locals_on_topic(&e.data.topic_name, e.data.kind)
    }

    /// The local endpoints on `topic` that pair with a remote endpoint of kind `remote_kind`.
    fn locals_on_topic(&self, topic: &str, remote_kind: EndpointKind) -> Vec<EntityId> {
        let Some(ids) = self.local_by_topic.get(topic) else {
            return Vec::new();
        };
        ids.iter()
            .copied()
            .filter(|id| match remote_kind {
                EndpointKind::Writer => !id.is_writer(),
                EndpointKind::Reader => id.is_writer(),
            })
            .collect()
    }

    /// Forgets a remote participant: unmatches and removes its endpoints, unmatches the
    /// builtin endpoints, reports `ParticipantLost`.
    pub(super) fn remove_participant(&mut self, _now: Instant, prefix: GuidPrefix) {
        let Some(r) = self.remotes.remove(&prefix) else {
            return;
        };
        let endpoints: Vec<Guid> = self
            .remote_endpoints
            .range(Guid::new(prefix, EntityId::UNKNOWN)..)
            .take_while(|(g, _)| g.prefix == prefix)
            .map(|(g, _)| *g)
            .collect();
        for guid in endpoints {
            self.remove_remote_endpoint(guid);
        }
        for pair in ANNOUNCERS {
            if let Some(w) = self.sedp_writers.get_mut(&pair.local) {
                w.writer.remove_reader(&Guid::new(prefix, pair.remote));
            }
        }
        for pair in DETECTORS {
            if let Some(rd) = self.sedp_readers.get_mut(&pair.local) {
                rd.remove_writer(&Guid::new(prefix, pair.remote));
            }
        }
        self.unmatch_wlp(prefix);
        self.reassembly_budgets.remove(&prefix);
        // Said again if it comes back (`ParticipantDiscovered`); kept, every restarted peer
        // of this host would leave an entry behind.
        self.carried_elsewhere.remove(&prefix);
        self.push_event(Event::ParticipantLost(r.guid()));
        self.graph_changed = true;
    }

    /// Drains the SEDP detectors and applies what they received.
    pub(super) fn process_sedp_samples(&mut self, now: Instant) {
        for pair in DETECTORS {
            while let Some(sample) = self
                .sedp_readers
                .get_mut(&pair.local)
                .and_then(|rd| rd.poll_sample())
            {
                let prefix = sample.writer.prefix;
                let Some(r) = self.remotes.get(&prefix) else {
                    continue;
                };
                let sender = SenderInfo {
                    vendor_id: r.data.vendor_id,
                    version: r.data.protocol_version,
                };
                match sedp::parse_sample(
                    pair.topic,
                    &sample.payload,
                    sample.status_info,
                    sample.key_hash,
                    sender,
                ) {
                    Ok(SedpMessage::Announce(d)) if d.guid.prefix == prefix => {
                        if d.content_filter_malformed {
                            bump(&mut self.stats.sedp.content_filters_malformed);
                        }
                        self.upsert_remote_endpoint(now, *d);
                    }
                    Ok(SedpMessage::Dispose(g)) if g.prefix == prefix => {
                        bump(&mut self.stats.sedp.disposals);
                        if self.remote_endpoints.contains_key(&g) {
                            self.remove_remote_endpoint(g);
                        }
                    }
                    Ok(_) => bump(&mut self.stats.sedp.prefix_mismatch),
                    Err(_) => bump(&mut self.stats.sedp.malformed),
                }
            }
        }
    }

    fn upsert_remote_endpoint(&mut self, now: Instant, data: EndpointData) {
        let guid = data.guid;
        match self.remote_endpoints.get(&guid) {
            Some(e) if e.data == data => {
                bump(&mut self.stats.sedp.unchanged);
                return;
            }
            Some(e) if e.data.topic_name != data.topic_name || e.data.kind != data.kind => {
                // An endpoint does not move to another topic, but a peer may say it did: its
                // pairs on the old topic end first.
                self.remove_remote_endpoint(guid);
                return self.upsert_remote_endpoint(now, data);
            }
            Some(_) => {
                if let Some(e) = self.remote_endpoints.get_mut(&guid) {
                    e.data = data;
                }
            }
            None => {
                if self.remote_endpoints.len() >= self.config.max_remote_endpoints {
                    bump(&mut self.stats.endpoints_rejected);
                    self.limit_reached(Limit::MaxRemoteEndpoints, self.config.max_remote_endpoints);
                    return;
                }
                super::index_topic(&mut self.remote_by_topic, &data.topic_name, guid, true);
                self.remote_endpoints.insert(
                    guid,
                    RemoteEndpoint {
                        data,
                        discovered_at: now,
                    },
                );
            }
        }
        bump(&mut self.stats.sedp.announcements);
        self.graph_changed = true;
        self.remote_endpoint_changed(guid);
        self.match_remote(now, guid);
    }

    /// Removes a remote endpoint and unmatches it from every local endpoint.
    fn remove_remote_endpoint(&mut self, guid: Guid) {
        let Some(e) = self.remote_endpoints.remove(&guid) else {
            return;
        };
        super::index_topic(&mut self.remote_by_topic, &e.data.topic_name, guid, false);
        self.graph_changed = true;
        self.remote_endpoint_changed(guid);
        // Only endpoints of its topic can be matched with it or find it incompatible.
        for local in self.locals_on_topic(&e.data.topic_name, e.data.kind) {
            self.unmatch(local, guid);
            self.clear_incompatible(local, guid);
        }
    }

    /// Hands the user data exchanged with participant `prefix` on topics whose name starts
    /// with one of `topic_prefixes` to another transport (a runtime's shared memory between
    /// processes of one host): such endpoint pairs, when [`carriable_elsewhere`] (the writer's
    /// liveliness lease infinite; both sides VOLATILE, or the writer TRANSIENT_LOCAL with a
    /// KEEP_LAST history that the other transport keeps), are not matched here, so no DATA,
    /// HEARTBEAT or ACKNACK flows between them, while discovery, graph information and
    /// incompatible-QoS reports go on as before. No prefixes give them back to RTPS. Pairs
    /// already known are re-evaluated.
    pub fn set_carried_elsewhere(
        &mut self,
        now: Instant,
        prefix: GuidPrefix,
        topic_prefixes: &[&str],
    ) {
        self.drained_at = None;
        let wanted: Vec<String> = topic_prefixes.iter().map(|p| (*p).to_owned()).collect();
        let changed = if wanted.is_empty() {
            self.carried_elsewhere.remove(&prefix).is_some()
        } else {
            self.carried_elsewhere.insert(prefix, wanted.clone()) != Some(wanted)
        };
        if !changed {
            return;
        }
        let remotes: Vec<Guid> = self
            .remote_endpoints
            .range(Guid::new(prefix, EntityId::UNKNOWN)..)
            .take_while(|(g, _)| g.prefix == prefix)
            .map(|(g, _)| *g)
            .collect();
        for remote in remotes {
            self.match_remote(now, remote);
        }
        self.finish_input();
    }

    fn is_carried_elsewhere(&self, remote: &EndpointData) -> bool {
        self.carried_elsewhere
            .get(&remote.guid.prefix)
            .is_some_and(|ps| ps.iter().any(|p| remote.topic_name.starts_with(p.as_str())))
    }

    /// Evaluates a (new or changed) remote endpoint against the local endpoints of its topic
    /// (no other can match it).
    fn match_remote(&mut self, now: Instant, guid: Guid) {
        for local in self.locals_on_topic_of(guid) {
            self.evaluate_pair(now, local, guid);
        }
    }

    /// Evaluates a new local endpoint against the known remote endpoints of its topic.
    pub(super) fn match_local(&mut self, now: Instant, local: EntityId) {
        let (want, topic) = if local.is_writer() {
            (
                EndpointKind::Reader,
                self.writers.get(&local).map(|w| &w.data.topic_name),
            )
        } else {
            (
                EndpointKind::Writer,
                self.readers.get(&local).map(|r| &r.data.topic_name),
            )
        };
        let remotes: Vec<Guid> = topic
            .and_then(|t| self.remote_by_topic.get(t))
            .into_iter()
            .flatten()
            .filter(|g| {
                self.remote_endpoints
                    .get(g)
                    .is_some_and(|e| e.data.kind == want)
            })
            .copied()
            .collect();
        for remote in remotes {
            self.evaluate_pair(now, local, remote);
        }
    }

    /// Matches, unmatches or reports incompatibility between a local and a remote endpoint
    /// according to their current data.
    fn evaluate_pair(&mut self, now: Instant, local: EntityId, remote: Guid) {
        self.stats.work.pairs_evaluated = self.stats.work.pairs_evaluated.saturating_add(1);
        let Some(re) = self.remote_endpoints.get(&remote) else {
            return;
        };
        let local_data = if local.is_writer() {
            self.writers.get(&local).map(|w| &w.data)
        } else {
            self.readers.get(&local).map(|r| &r.data)
        };
        let Some(ld) = local_data else {
            return;
        };
        let (w, r) = match re.data.kind {
            EndpointKind::Writer => (&re.data, ld),
            EndpointKind::Reader => (ld, &re.data),
        };
        if w.kind == r.kind {
            return;
        }
        let verdict = same_topic(w, r).then(|| check_compatible(w, r));
        let elsewhere = self.is_carried_elsewhere(&re.data) && carriable_elsewhere(w, r);
        match verdict {
            Some(Ok(())) if elsewhere => {
                self.unmatch(local, remote);
                self.clear_incompatible(local, remote);
            }
            Some(Ok(())) => self.matched_pair(now, local, remote),
            Some(Err(policy)) => {
                self.unmatch(local, remote);
                let newly = if local.is_writer() {
                    self.writers
                        .get_mut(&local)
                        .is_some_and(|w| w.incompatible.insert(remote))
                } else {
                    self.readers
                        .get_mut(&local)
                        .is_some_and(|r| r.incompatible.insert(remote))
                };
                if newly {
                    let local = if local.is_writer() {
                        EndpointRef::Writer(WriterId(local))
                    } else {
                        EndpointRef::Reader(ReaderId(local))
                    };
                    self.push_event(Event::IncompatibleQos {
                        local,
                        remote,
                        policy,
                    });
                }
            }
            None => {
                self.unmatch(local, remote);
                self.clear_incompatible(local, remote);
            }
        }
    }

    fn clear_incompatible(&mut self, local: EntityId, remote: Guid) {
        // Looked at first: mutable access marks an endpoint for the next flush.
        if self
            .writers
            .get(&local)
            .is_some_and(|w| w.incompatible.contains(&remote))
        {
            if let Some(w) = self.writers.get_mut(&local) {
                w.incompatible.remove(&remote);
            }
        }
        if self
            .readers
            .get(&local)
            .is_some_and(|r| r.incompatible.contains(&remote))
        {
            if let Some(r) = self.readers.get_mut(&local) {
                r.incompatible.remove(&remote);
            }
        }
    }

    /// Adds the proxy for a compatible pair and reports it (no-op if already matched).
    fn matched_pair(&mut self, now: Instant, local: EntityId, remote: Guid) {
        self.clear_incompatible(local, remote);
        if self.is_matched(local, remote) {
            return;
        }
        let newly = if local.is_writer() {
            self.writers
                .get_mut(&local)
                .is_some_and(|w| w.matched.insert(remote))
        } else {
            self.readers
                .get_mut(&local)
                .is_some_and(|r| r.matched.insert(remote))
        };
        if !newly {
            return;
        }
        self.add_proxy(now, local, remote);
        if local.is_writer() {
            self.push_event(Event::ReaderMatched {
                writer: WriterId(local),
                remote,
            });
        } else {
            self.readers_of_writer
                .entry(remote)
                .or_default()
                .insert(local);
            self.track_remote_writer(now, remote);
            self.push_event(Event::WriterMatched {
                reader: ReaderId(local),
                remote,
            });
        }
    }

    /// Gives the local endpoint a proxy of `remote` with its current locators (RTPS 2.5
    /// §8.4.7.5 `matched_reader_add`, §8.4.10.4 `matched_writer_add`).
    fn add_proxy(&mut self, now: Instant, local: EntityId, remote: Guid) {
        let Some(re) = self.remote_endpoints.get(&remote) else {
            return;
        };
        let Some(rp) = self.remotes.get(&remote.prefix) else {
            return;
        };
        let (unicast, multicast) = endpoint_locators(
            &re.data,
            &rp.data.default_unicast_locators,
            &rp.data.default_multicast_locators,
            rp.host,
        );
        let reliable = re.data.reliability.kind == ReliabilityKind::Reliable;
        let transient_local = re.data.durability >= DurabilityKind::TransientLocal;
        let expects_inline_qos = re.data.expects_inline_qos;
        let budgets = self.reassembly_budgets(remote.prefix);
        if let Some(w) = self.writers.get_mut(&local) {
            w.writer.add_reader(
                now,
                ReaderProxyInfo {
                    guid: remote,
                    unicast,
                    multicast,
                    reliable,
                    transient_local,
                    expects_inline_qos,
                },
            );
        } else if let Some(r) = self.readers.get_mut(&local) {
            r.reader.add_writer_with_budgets(
                now,
                WriterProxyInfo {
                    guid: remote,
                    unicast,
                    multicast,
                    reliable,
                },
                budgets,
            );
        }
    }

    /// Removes the proxy of a matched pair and reports it (no-op if not matched).
    fn unmatch(&mut self, local: EntityId, remote: Guid) {
        if !self.is_matched(local, remote) {
            return;
        }
        if let Some(w) = self.writers.get_mut(&local) {
            if w.matched.remove(&remote) {
                w.writer.remove_reader(&remote);
                self.push_event(Event::ReaderUnmatched {
                    writer: WriterId(local),
                    remote,
                });
            }
        } else if let Some(r) = self.readers.get_mut(&local) {
            if r.matched.remove(&remote) {
                r.reader.remove_writer(&remote);
                if let Some(set) = self.readers_of_writer.get_mut(&remote) {
                    set.remove(&local);
                    if set.is_empty() {
                        self.readers_of_writer.remove(&remote);
                    }
                }
                self.untrack_remote_writer(remote);
                self.push_event(Event::WriterUnmatched {
                    reader: ReaderId(local),
                    remote,
                });
            }
        }
    }
}

/// Whether two announcements of one participant have the same locators.
fn same_locators(a: &ParticipantData, b: &ParticipantData) -> bool {
    a.metatraffic_unicast_locators == b.metatraffic_unicast_locators
        && a.metatraffic_multicast_locators == b.metatraffic_multicast_locators
        && a.default_unicast_locators == b.default_unicast_locators
        && a.default_multicast_locators == b.default_multicast_locators
}
