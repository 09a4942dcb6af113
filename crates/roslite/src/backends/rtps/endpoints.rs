//! Local publishers and subscriptions in the RTPS participant: a writer or reader each, and
//! the outlet a publisher's messages go through.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use roslite_rtps::discovery::content_filter::{ContentFilterProperty, DDSSQL};
use roslite_rtps::discovery::ros::{dds_to_ros, topic_to_dds, typehash_user_data};
use roslite_rtps::participant::{EndpointOptions, WriteError as ParticipantWriteError, WriterId};
use roslite_rtps::types::SequenceNumber;

use super::{endpoint_qos, now, NetShared, NetState, RECEIVING};
use crate::seam::{
    ContentFilterAnnouncement, LocalPublisher, LocalSubscription, MessageInfo, Outlet, SendTimeout,
};

/// Carries one local publisher's messages into its RTPS writer.
struct RtpsOutlet {
    shared: Weak<NetShared>,
    writer: WriterId,
    /// Whether the writer must see every sample: it has matched readers or keeps history for
    /// late joiners. Kept by the network as matches come and go, so `publish` reads it
    /// without the network lock.
    active: Arc<AtomicBool>,
}

impl Outlet for RtpsOutlet {
    /// The RTPS writer numbers samples as the publisher numbers its publications: a writer
    /// that sat some out (they went only to readers served elsewhere) skips ahead here, under
    /// the lock the write takes anyway, rather than in a lock taken for every publication it
    /// sits out.
    ///
    /// A keep-all writer whose history is full (readers have not acknowledged
    /// `keep_all_max_samples`) waits for their acknowledgements up to `max_blocking_time`,
    /// then gives up on the sample, as a DDS `write` does, and its number with it (the next
    /// sample takes it); on the network's own threads (a callback run inline) it gives up at
    /// once, since those threads take the acknowledgements.
    fn send(&self, payload: &Arc<[u8]>, info: &MessageInfo) -> Result<(), SendTimeout> {
        let Some(shared) = self.shared.upgrade() else {
            return Ok(());
        };
        // INFO_TS, as Fast DDS and Cyclone send it: subscribers elsewhere learn when this was
        // published (RTPS 2.5 §8.3.7.9), and count its lifespan from then.
        let source_time = super::wall_time_of(info.source_timestamp);
        let mut state = shared.lock();
        let number = i64::try_from(info.publication_sequence_number).unwrap_or(i64::MAX);
        let mut deadline = None;
        let result = loop {
            let now = now();
            state
                .participant
                .skip_to(self.writer, SequenceNumber(number));
            match state.participant.write_with_timestamp(
                now,
                self.writer,
                payload.clone(),
                None,
                Some(source_time),
            ) {
                Ok(_) => break Ok(()),
                Err(ParticipantWriteError::Writer(roslite_rtps::WriteError::Full)) => {
                    // Heartbeats out first: the readers acknowledge what they have.
                    shared.flush_and_notify(&mut state, now);
                    let deadline = *deadline.get_or_insert_with(|| {
                        std::time::Instant::now() + crate::vocabulary::qos::MAX_BLOCKING_TIME
                    });
                    let left = deadline.saturating_duration_since(std::time::Instant::now());
                    let on_network_thread = RECEIVING.with(|r| std::ptr::eq(r.get(), &*shared));
                    if left.is_zero() || on_network_thread {
                        let topic = state
                            .participant
                            .writer_data(self.writer)
                            .and_then(|d| dds_to_ros(&d.topic_name))
                            .map_or_else(|| "?".to_owned(), |(_, name)| name);
                        shared.history_full(&topic, state.participant.writer_history(self.writer));
                        // Never written, but its number is used up, as on the same-host
                        // paths: the readers get a GAP for it and count it lost.
                        state.participant.give_up_number(now, self.writer);
                        break Err(SendTimeout);
                    }
                    shared.writers_waiting.fetch_add(1, Ordering::SeqCst);
                    state = match shared.history_space.wait_timeout(state, left) {
                        Ok((state, _)) => state,
                        Err(poisoned) => poisoned.into_inner().0,
                    };
                    shared.writers_waiting.fetch_sub(1, Ordering::SeqCst);
                }
                Err(e) => {
                    shared.logger.warn(format_args!("RTPS write failed: {e:?}"));
                    break Ok(());
                }
            }
        };
        shared.flush_and_notify(&mut state, now());
        result
    }

    /// The RTPS writer takes the moved publisher's history under its numbers, counted as sent
    /// to every reader matched now, and numbers on from there
    /// (`roslite_rtps::endpoint::Writer::adopt_history`).
    fn adopt(&self, published: u64, kept: &[(Arc<[u8]>, MessageInfo)]) {
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        let next = i64::try_from(published)
            .unwrap_or(i64::MAX)
            .saturating_add(1);
        let first = kept.first().map_or(next, |(_, info)| {
            i64::try_from(info.publication_sequence_number).unwrap_or(i64::MAX)
        });
        let samples = kept
            .iter()
            .map(|(payload, info)| roslite_rtps::AdoptedSample {
                payload: payload.clone(),
                source_timestamp: Some(super::wall_time_of(info.source_timestamp)),
            })
            .collect();
        let now = now();
        let mut state = shared.lock();
        if let Err(e) =
            state
                .participant
                .adopt_history(now, self.writer, SequenceNumber(first), samples)
        {
            shared.logger.warn(format_args!(
                "a moved publisher's history was not taken: {e}"
            ));
        }
        shared.flush_and_notify(&mut state, now);
    }

    /// A volatile writer with no matched RTPS reader sends nothing and keeps nothing for
    /// later readers: skip it (same-host readers are carried by their own outlets).
    fn is_active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }
}

impl NetShared {
    pub(super) fn node_added(&self, id: u64, namespace: &str, name: &str) {
        let now = now();
        let mut state = self.lock();
        state
            .nodes
            .insert(id, (namespace.to_owned(), name.to_owned()));
        state.publish_graph(now);
        self.flush_and_notify(&mut state, now);
    }

    pub(super) fn node_removed(&self, id: u64) {
        let now = now();
        let mut state = self.lock();
        state.nodes.remove(&id);
        state.publish_graph(now);
        self.flush_and_notify(&mut state, now);
    }

    pub(super) fn publisher_added(&self, publisher: LocalPublisher) {
        let d = &publisher.description;
        let options = EndpointOptions::new(&topic_to_dds(&d.topic), d.dds_type_name)
            .with_qos(endpoint_qos(&d.qos))
            .with_user_data(typehash_user_data(d.type_hash))
            .with_key(d.key);
        let now = now();
        let mut state = self.lock();
        match state.participant.create_writer(now, options) {
            Ok(writer) => {
                state.writers_by_local.insert(d.id, writer);
                state.publishers.insert(writer, publisher.clone());
                state.endpoint_nodes.insert(d.id, d.node_id);
                state.publish_graph(now);
                let active = Arc::new(AtomicBool::new(state.writer_needs_samples(writer)));
                state.outlet_activity.insert(writer, active.clone());
                publisher.attach(
                    d.id,
                    Arc::new(RtpsOutlet {
                        shared: self.me.clone(),
                        writer,
                        active,
                    }),
                );
            }
            Err(e) => self.endpoint_refused(format_args!("the publisher on '{}'", d.topic), e),
        }
        self.flush_and_notify(&mut state, now);
        NetState::report_matches_unlocked(state);
    }

    pub(super) fn publisher_removed(&self, _topic: &str, id: u64) {
        let now = now();
        let mut state = self.lock();
        if let Some(writer) = state.writers_by_local.remove(&id) {
            state.publishers.remove(&writer);
            state.outlet_activity.remove(&writer);
            state.participant.delete_writer(now, writer);
            state.endpoint_nodes.remove(&id);
            state.publish_graph(now);
            self.flush_and_notify(&mut state, now);
        }
    }

    pub(super) fn subscription_added(&self, subscription: LocalSubscription) {
        let d = &subscription.description;
        let dds_topic = topic_to_dds(&d.topic);
        let filter = subscription
            .content_filter()
            .map(|f| filter_property(&dds_topic, f));
        let options = EndpointOptions::new(&dds_topic, d.dds_type_name)
            .with_qos(endpoint_qos(&d.qos))
            .with_user_data(typehash_user_data(d.type_hash))
            .with_key(d.key)
            .with_content_filter(filter);
        let now = now();
        let mut state = self.lock();
        match state.participant.create_reader(now, options) {
            Ok(reader) => {
                state.readers_by_local.insert(d.id, reader);
                state.endpoint_nodes.insert(d.id, d.node_id);
                state.subscriptions.insert(reader, subscription.clone());
                state.publish_graph(now);
            }
            Err(e) => {
                self.endpoint_refused(format_args!("the subscription on '{}'", d.topic), e);
            }
        }
        self.flush_and_notify(&mut state, now);
        NetState::report_matches_unlocked(state);
    }

    /// Announces `subscription`'s new content filter in its reader's SEDP data.
    pub(super) fn subscription_filter_changed(&self, subscription: &LocalSubscription) {
        let d = &subscription.description;
        let filter = subscription
            .content_filter()
            .map(|f| filter_property(&topic_to_dds(&d.topic), f));
        let now = now();
        let mut state = self.lock();
        let Some(&reader) = state.readers_by_local.get(&d.id) else {
            return;
        };
        if let Err(e) = state
            .participant
            .set_reader_content_filter(now, reader, filter)
        {
            self.logger.warn(format_args!(
                "the content filter of the subscription on '{}' is not announced: {e:?}",
                d.topic
            ));
        }
        self.flush_and_notify(&mut state, now);
    }

    pub(super) fn subscription_removed(&self, _topic: &str, id: u64) {
        let now = now();
        let mut state = self.lock();
        if let Some(reader) = state.readers_by_local.remove(&id) {
            state.subscriptions.remove(&reader);
            state.participant.delete_reader(now, reader);
            state.endpoint_nodes.remove(&id);
            state.publish_graph(now);
            self.flush_and_notify(&mut state, now);
        }
    }
}

/// A subscription's filter as rmw_fastrtps announces its content-filtered topic: named
/// `<DDS topic>_filtered_name_<n>`, on the subscription's DDS topic, class `DDSSQL`. A Fast DDS
/// writer that can compile it filters for the reader (docs/content-filter.md).
fn filter_property(dds_topic: &str, filter: ContentFilterAnnouncement) -> ContentFilterProperty {
    ContentFilterProperty {
        content_filtered_topic_name: format!("{dds_topic}_filtered_name_{}", filter.number),
        related_topic_name: dds_topic.to_owned(),
        filter_class_name: DDSSQL.to_owned(),
        filter_expression: filter.options.filter_expression,
        expression_parameters: filter.options.expression_parameters,
    }
}
