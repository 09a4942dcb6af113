//! How another backend follows this network's discovery: the same-host links are a backend of
//! their own beside RTPS, but which pairs they carry is decided from what RTPS discovers (the
//! peers' SPDP USER_DATA, their SEDP endpoints) and from the RTPS identity of this context's
//! endpoints (the GUIDs peers know them by).
//!
//! Two directions, one lock order (the network's state, then the follower's own):
//! - the network pushes discovery to its [`DiscoveryFollower`] with its state locked, so a
//!   peer's topics are taken off RTPS before its SEDP endpoints can match them;
//! - the follower pulls, from its own backend calls, through a [`NetworkHandle`]: the
//!   network's state is locked for the call and read through a [`Discovery`] view.
//!
//! A follower never takes the network's lock while it holds its own.

use std::collections::HashMap;
use std::sync::Weak;

use roslite_rtps::discovery::EndpointData;
use roslite_rtps::participant::{Participant, ReaderId, WriterId};
use roslite_rtps::types::{Guid, GuidPrefix};

use super::services::ServiceState;
use super::{NetShared, NetState};
use crate::vocabulary::events::MatchReports;

/// A backend that carries some of this network's pairs by other means and follows its
/// discovery to know which. Every method runs with the network's state locked: it must not
/// call back into the network.
pub(crate) trait DiscoveryFollower: Send + Sync {
    /// What to append to this participant's SPDP USER_DATA (read once, at start).
    fn user_data(&self) -> String;

    /// Remote participant `prefix` was discovered with `user_data`: the DDS topic prefixes
    /// (`rt/`, ...) whose pairs with it the follower carries, which the RTPS participant then
    /// leaves unmatched; empty when it carries none.
    fn participant_discovered(
        &self,
        prefix: GuidPrefix,
        user_data: &[u8],
    ) -> &'static [&'static str];

    /// Remote participant `prefix` is gone: its pairs end (each unmatch added to `reports`).
    fn participant_lost(&self, prefix: GuidPrefix, reports: &mut MatchReports);

    /// Remote endpoints `changed` (appeared, changed or went; `None`: more than discovery
    /// kept track of, so any): re-plan the pairs carried.
    fn endpoints_changed(
        &self,
        discovery: &Discovery<'_>,
        changed: Option<&[Guid]>,
        reports: &mut MatchReports,
    );

    /// Whether servers reached by other means read the requests of local request writer
    /// `writer`: the requests then carry the sample identity, the convention those servers
    /// read.
    fn carries_requests(&self, writer: WriterId) -> bool;

    /// Whether the follower carries the pair of local writer `writer` and remote reader
    /// `reader` (which the RTPS participant then leaves unmatched): a service reply for that
    /// reader goes its way.
    fn carries_pair(&self, discovery: &Discovery<'_>, writer: WriterId, reader: Guid) -> bool;
}

/// The network's discovery and its local endpoints' RTPS identities, read-only, as a
/// [`DiscoveryFollower`] sees them.
pub(crate) struct Discovery<'a> {
    participant: &'a Participant,
    writers_by_local: &'a HashMap<u64, WriterId>,
    readers_by_local: &'a HashMap<u64, ReaderId>,
    services: &'a ServiceState,
}

impl<'a> Discovery<'a> {
    /// The view of `state`, and its queue of match reports beside it.
    pub(super) fn split(state: &'a mut NetState) -> (Self, &'a mut MatchReports) {
        let NetState {
            participant,
            writers_by_local,
            readers_by_local,
            services,
            match_reports,
            ..
        } = state;
        (
            Self {
                participant,
                writers_by_local,
                readers_by_local,
                services,
            },
            match_reports,
        )
    }

    pub(crate) fn guid_prefix(&self) -> GuidPrefix {
        self.participant.guid_prefix()
    }

    /// Every endpoint of another participant discovered.
    pub(crate) fn remote_endpoints(&self) -> impl Iterator<Item = &'a EndpointData> {
        self.participant.remote_endpoints().map(|e| e.data())
    }

    pub(crate) fn remote_endpoint(&self, guid: Guid) -> Option<&'a EndpointData> {
        self.participant.remote_endpoint(guid).map(|e| e.data())
    }

    /// A local writer as this participant announced it.
    pub(crate) fn writer_data(&self, writer: WriterId) -> Option<&'a EndpointData> {
        self.participant.writer_data(writer)
    }

    /// A local reader as this participant announced it.
    pub(crate) fn reader_data(&self, reader: ReaderId) -> Option<&'a EndpointData> {
        self.participant.reader_data(reader)
    }

    /// The RTPS writer of local publisher `local_id`.
    pub(crate) fn publisher_writer(&self, local_id: u64) -> Option<WriterId> {
        self.writers_by_local.get(&local_id).copied()
    }

    /// The RTPS reader of local subscription `local_id`.
    pub(crate) fn subscription_reader(&self, local_id: u64) -> Option<ReaderId> {
        self.readers_by_local.get(&local_id).copied()
    }

    /// Local server `local_id`'s request reader and reply writer.
    pub(crate) fn server_endpoints(&self, local_id: u64) -> Option<(ReaderId, WriterId)> {
        self.services
            .servers
            .get(&local_id)
            .map(|s| (s.request_reader, s.reply_writer))
    }

    /// Local client `local_id`'s request writer and reply reader.
    pub(crate) fn client_endpoints(&self, local_id: u64) -> Option<(WriterId, ReaderId)> {
        self.services
            .clients
            .get(&local_id)
            .map(|c| (c.request_writer, c.reply_reader))
    }
}

/// What a [`Discovery`] view borrows besides the participant, empty: for tests that drive a
/// follower from a bare participant.
#[cfg(test)]
#[derive(Default)]
pub(crate) struct EmptyRuntime {
    writers_by_local: HashMap<u64, WriterId>,
    readers_by_local: HashMap<u64, ReaderId>,
    services: ServiceState,
}

#[cfg(test)]
impl EmptyRuntime {
    /// `participant`'s discovery, with no endpoints of this runtime's own.
    pub(crate) fn view<'a>(&'a self, participant: &'a Participant) -> Discovery<'a> {
        Discovery {
            participant,
            writers_by_local: &self.writers_by_local,
            readers_by_local: &self.readers_by_local,
            services: &self.services,
        }
    }
}

/// The network as its follower reaches it; holds no network alive.
#[derive(Clone)]
pub(crate) struct NetworkHandle(pub(super) Weak<NetShared>);

impl NetworkHandle {
    /// Runs `f` with the network's state locked (`None` once the network stopped); the match
    /// reports `f` adds are made once the lock is released.
    pub(crate) fn with_discovery<R>(
        &self,
        f: impl FnOnce(&Discovery<'_>, &mut MatchReports) -> R,
    ) -> Option<R> {
        let shared = self.0.upgrade()?;
        let mut state = shared.lock();
        let (discovery, reports) = Discovery::split(&mut state);
        let result = f(&discovery, reports);
        NetState::report_matches_unlocked(state);
        Some(result)
    }

    /// The follower learned that the process of remote participant `prefix` is gone (its
    /// same-host endpoint hung up and no longer listens): discovery forgets it now rather than
    /// at the end of its lease. The driver thread, woken, reports the loss as it would an
    /// expired lease (every pair with it unmatched). Must not be called with the follower's
    /// own lock held.
    pub(crate) fn peer_process_gone(&self, prefix: GuidPrefix) {
        let Some(shared) = self.0.upgrade() else {
            return;
        };
        let mut state = shared.lock();
        if state
            .participant
            .remove_remote_participant(super::now(), prefix)
        {
            shared.logger.debug(format_args!(
                "participant {prefix:?} is gone: its same-host endpoint closed"
            ));
            drop(state);
            shared.udp.waker().wake();
        }
    }
}
