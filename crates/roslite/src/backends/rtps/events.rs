//! What the participant reports after each input, routed to where it belongs: samples to
//! subscriptions, services and the graph; status changes to the endpoints they concern.

use roslite_cdr::SharedBuf;
use roslite_executor::Instant as MonoInstant;
use roslite_rtps::discovery::ros::ParticipantEntitiesInfo;
use roslite_rtps::endpoint::ReceivedSample;
use roslite_rtps::participant::{EndpointRef, Event, ReaderId};

use super::driver::Outbox;
use super::{now, policy_kind, NetShared, NetState};
use crate::seam::MessageInfo;
use crate::vocabulary::qos::History;

impl NetShared {
    /// Hands samples to subscriptions and reports what users should see.
    pub(super) fn process_events(&self, state: &mut NetState) {
        // Samples of this call on their way to each keep-all subscription (delivered once the
        // lock is released); none allocated for keep-last ones.
        let mut keep_all_pending: Vec<(ReaderId, usize)> = Vec::new();
        loop {
            // While another thread hands over (a callback may run long inline there), take no
            // more than a bounded batch: the rest waits in the readers, whose histories bound
            // it (and whose flow control holds keep-all writers back).
            if state.delivering && state.deliveries.len() >= Outbox::MAX_BACKLOG {
                state.held_back = true;
                break;
            }
            let Some(event) = state.participant.poll_event() else {
                break;
            };
            match event {
                Event::Sample { reader, sample } => {
                    self.route_sample(state, reader, sample, &mut keep_all_pending);
                }
                Event::IncompatibleQos { local, policy, .. } => {
                    self.report_incompatible_qos(state, local, policy_kind(policy));
                }
                Event::ParticipantLost(guid) => {
                    state.remote_graph.remove(&guid.prefix);
                    if let Some(follower) = self.follower() {
                        follower.participant_lost(guid.prefix, &mut state.match_reports);
                    }
                }
                Event::ParticipantDiscovered(guid) => self.participant_discovered(state, guid),
                Event::RemoteEndpointChanged => state.endpoints_changed(self.follower()),
                Event::LivelinessChanged {
                    reader,
                    alive,
                    not_alive_count,
                    ..
                } => self.report_liveliness_changed(state, reader, alive, not_alive_count),
                Event::LivelinessLost { writer } => {
                    if let Some(publisher) = state.publishers.get(&writer) {
                        publisher.events.liveliness_lost.update(|s| {
                            s.total_count += 1;
                            s.total_count_change += 1;
                        });
                    }
                }
                Event::ReaderMatched { writer, .. } => {
                    state.update_outlet_activity(writer);
                    if state.services.server_by_reply_writer.contains_key(&writer) {
                        self.send_parked_replies(state, now());
                    }
                    state.report_writer_match(writer, true);
                }
                Event::ReaderUnmatched { writer, .. } => {
                    state.update_outlet_activity(writer);
                    state.report_writer_match(writer, false);
                }
                Event::LimitReached { limit, value } => self.logger.warn(format_args!(
                    "reached the limit of {value} {}: {}; set {}= to raise it (this warning \
                     is given once)",
                    limit_what(limit),
                    crate::vocabulary::limits::consequence_of(limit),
                    crate::vocabulary::limits::variable_of(limit),
                )),
                Event::WriterMatched { reader, .. } => state.report_reader_match(reader, true),
                Event::WriterUnmatched { reader, .. } => state.report_reader_match(reader, false),
            }
        }
    }

    /// A remote participant appeared: the follower (same-host links) may take some of its
    /// topics, which the participant then leaves unmatched. Done here, before the peer's SEDP
    /// endpoints arrive, so no pair matches over RTPS first.
    fn participant_discovered(&self, state: &mut NetState, guid: roslite_rtps::types::Guid) {
        let Some(follower) = self.follower() else {
            return;
        };
        let Some(user_data) = state
            .participant
            .remote_participant(guid.prefix)
            .map(|p| p.user_data().to_vec())
        else {
            return;
        };
        let carried = follower.participant_discovered(guid.prefix, &user_data);
        if !carried.is_empty() {
            state
                .participant
                .set_carried_elsewhere(now(), guid.prefix, carried);
        }
    }

    /// A sample for one of this participant's readers: the graph's, a service's or client's,
    /// or a subscription's.
    fn route_sample(
        &self,
        state: &mut NetState,
        reader: ReaderId,
        sample: ReceivedSample,
        keep_all_pending: &mut Vec<(ReaderId, usize)>,
    ) {
        if Some(reader) == state.discovery_info_reader {
            // Fast DDS pads payloads; Humble peers use 24-byte gids.
            if let Ok((info, _)) =
                ParticipantEntitiesInfo::from_payload_any(&sample.payload, state.wire_distro)
            {
                state.remote_graph.insert(sample.writer.prefix, info);
            }
            return;
        }
        if let Some(&local_id) = state.services.server_by_reader.get(&reader) {
            self.handle_request(state, local_id, sample);
            return;
        }
        if let Some(&local_id) = state.services.client_by_reader.get(&reader) {
            super::services::handle_reply(state, local_id, sample);
            return;
        }
        let Some(subscription) = state.subscriptions.get(&reader) else {
            return;
        };
        if sample.payload.is_empty() {
            // A dispose or unregister: ROS 2 hands the application samples with data only
            // (rmw_fastrtps and rmw_cyclonedds skip the others).
            return;
        }
        let info = MessageInfo {
            source_timestamp: source_instant(&sample),
            received_timestamp: MonoInstant::ZERO,
            publication_sequence_number: u64::try_from(sample.sequence_number.0).unwrap_or(0),
            publisher_id: 0,
            publisher_gid: sample.writer.to_bytes(),
            from_intra_process: false,
        };
        let subscription = subscription.clone();
        if subscription.description.qos.history == History::KeepAll {
            self.hold_back_when_full(state, keep_all_pending, reader, &subscription);
        }
        state.deliveries.push((
            subscription,
            SharedBuf::from_vec(sample.payload),
            info,
            sample.lost_before,
        ));
    }

    fn report_incompatible_qos(
        &self,
        state: &NetState,
        local: EndpointRef,
        kind: crate::vocabulary::qos::QosPolicyKind,
    ) {
        let topic = match local {
            EndpointRef::Reader(id) => state
                .subscriptions
                .get(&id)
                .map(|s| s.description.topic.clone()),
            EndpointRef::Writer(id) => state
                .participant
                .writer_data(id)
                .and_then(|d| roslite_rtps::discovery::ros::dds_to_ros(&d.topic_name))
                .map(|(_, ros_name)| ros_name),
        };
        let topic = topic.as_deref().unwrap_or("?");
        // rclcpp's wording, so the message is the one users search for.
        match local {
            EndpointRef::Reader(id) => {
                self.logger.warn(format_args!(
                    "New publisher discovered on topic '{topic}', offering incompatible QoS. No \
                     messages will be received from it. Last incompatible policy: {kind}"
                ));
                if let Some(subscription) = state.subscriptions.get(&id) {
                    subscription.report_incompatible_qos(kind);
                }
            }
            EndpointRef::Writer(id) => {
                self.logger.warn(format_args!(
                    "New subscription discovered on topic '{topic}', requesting incompatible \
                     QoS. No messages will be sent to it. Last incompatible policy: {kind}"
                ));
                if let Some(publisher) = state.publishers.get(&id) {
                    publisher.report_incompatible_qos(kind);
                }
            }
        }
    }

    fn report_liveliness_changed(
        &self,
        state: &NetState,
        reader: ReaderId,
        alive: bool,
        not_alive_count: u32,
    ) {
        if let Some(subscription) = state.subscriptions.get(&reader) {
            let topic = &subscription.description.topic;
            if !alive {
                self.logger.warn(format_args!(
                    "a publisher on '{topic}' missed its liveliness lease"
                ));
            }
            // The alive count is the matches' (all paths) less these.
            subscription.events.set_not_alive(not_alive_count);
        }
    }
}

/// What a cap counts, in a warning.
fn limit_what(limit: roslite_rtps::participant::Limit) -> &'static str {
    use roslite_rtps::participant::Limit;
    match limit {
        Limit::MaxRemoteEndpoints => "remote endpoints",
        Limit::MaxRemoteParticipants => "remote participants",
        Limit::ReassemblyBytesPerParticipant => "bytes of fragments held for one participant",
        Limit::ReassemblyBytesTotal => "bytes of fragments held for all participants",
        Limit::MaxKeptInstances => "instances kept per keyed topic",
        _ => "entries",
    }
}

/// When the message was published, on this process's monotonic clock: the sample's source
/// timestamp (INFO_TS, wall clock; RTPS 2.5 §8.3.7.9) moved onto the monotonic clock by the
/// two clocks' offset now; the arrival time when the writer sent none.
fn source_instant(sample: &ReceivedSample) -> MonoInstant {
    let now = MonoInstant::monotonic_now();
    match sample.source_timestamp.and_then(|t| t.to_unix()) {
        Some(sent) => crate::vocabulary::time::wall_to_monotonic(sent, now),
        None => now,
    }
}
