//! The ROS graph over RTPS: this participant's `ros_discovery_info` (which nodes own which
//! endpoints) and the graph built from SEDP and the peers' `ros_discovery_info`.

use std::sync::Arc;

use roslite_rtps::discovery::ros::{
    dds_to_ros, dds_to_type, parse_typehash, service_request_to_dds, topic_to_dds,
    NodeEntitiesInfo, ParticipantEntitiesInfo,
};
use roslite_rtps::discovery::History as RtpsHistory;
use roslite_rtps::discovery::{EndpointData, EndpointKind as RtpsEndpointKind, LivelinessKind};
use roslite_rtps::participant::EndpointRef;
use roslite_rtps::quirks;
use roslite_rtps::types::Guid;
use roslite_rtps::Instant;

use super::{NetShared, NetState};
use crate::seam::service::ServiceDrops;
use crate::seam::{GraphView, PathView};
use crate::vocabulary::content_filter::ContentFilterOptions;
use crate::vocabulary::graph::{GraphEndpoint, GraphEndpointKind, GraphQos};
use crate::vocabulary::qos::{Durability, History, Liveliness, Reliability};

impl NetState {
    /// Republishes this participant's full node/endpoint list, as every ROS 2 participant
    /// does on any change (ros2/design article 170).
    pub(super) fn publish_graph(&mut self, now: Instant) {
        let Some(writer) = self.discovery_info_writer else {
            return;
        };
        let prefix = self.participant.guid_prefix();
        let mut nodes: Vec<(u64, NodeEntitiesInfo)> = self
            .nodes
            .iter()
            .map(|(id, (namespace, name))| {
                let info = NodeEntitiesInfo {
                    node_namespace: namespace.clone(),
                    node_name: name.clone(),
                    ..Default::default()
                };
                (*id, info)
            })
            .collect();
        nodes.sort_by(|a, b| {
            (&a.1.node_namespace, &a.1.node_name).cmp(&(&b.1.node_namespace, &b.1.node_name))
        });
        for server in self.services.servers.values() {
            if let Some((_, node)) = nodes.iter_mut().find(|(id, _)| *id == server.node_id) {
                node.reader_gids.push(server.request_reader.guid(prefix));
                node.writer_gids.push(server.reply_writer.guid(prefix));
            }
        }
        for client in self.services.clients.values() {
            if let Some((_, node)) = nodes.iter_mut().find(|(id, _)| *id == client.node_id) {
                node.writer_gids.push(client.request_writer.guid(prefix));
                node.reader_gids.push(client.reply_reader.guid(prefix));
            }
        }
        for (local_id, node_id) in &self.endpoint_nodes {
            let Some((_, node)) = nodes.iter_mut().find(|(id, _)| id == node_id) else {
                continue;
            };
            if let Some(reader) = self.readers_by_local.get(local_id) {
                node.reader_gids.push(reader.guid(prefix));
            }
            if let Some(writer) = self.writers_by_local.get(local_id) {
                node.writer_gids.push(writer.guid(prefix));
            }
        }
        let info = ParticipantEntitiesInfo {
            gid: Guid::new(prefix, roslite_rtps::types::EntityId::PARTICIPANT),
            nodes: nodes.into_iter().map(|(_, n)| n).collect(),
        };
        if let Ok(payload) = info.to_payload(self.wire_distro) {
            let _ = self
                .participant
                .write(now, writer, Arc::from(payload), None);
        }
    }
}

fn graph_qos(data: &EndpointData) -> GraphQos {
    use roslite_rtps::discovery::{DurabilityKind, ReliabilityKind};
    GraphQos {
        reliability: match data.reliability.kind {
            ReliabilityKind::BestEffort => Reliability::BestEffort,
            ReliabilityKind::Reliable => Reliability::Reliable,
        },
        durability: match data.durability {
            DurabilityKind::Volatile => Some(Durability::Volatile),
            DurabilityKind::TransientLocal => Some(Durability::TransientLocal),
            DurabilityKind::Transient | DurabilityKind::Persistent => None,
        },
        history: quirks::announces_history(data.vendor_id).then_some(match data.history {
            RtpsHistory::KeepLast { depth } => {
                History::KeepLast(usize::try_from(depth).unwrap_or(usize::MAX))
            }
            RtpsHistory::KeepAll => History::KeepAll,
        }),
        deadline: data.deadline.to_std(),
        lifespan: data.lifespan.to_std(),
        liveliness: match data.liveliness.kind {
            LivelinessKind::Automatic => Some(Liveliness::Automatic),
            LivelinessKind::ManualByTopic => Some(Liveliness::ManualByTopic),
            LivelinessKind::ManualByParticipant => None,
        },
        liveliness_lease: data.liveliness.lease_duration.to_std(),
    }
}

/// `data` in ROS terms; `None` for DDS topics outside the ROS naming conventions
/// (`ros_discovery_info`, plain DDS applications).
fn graph_endpoint(
    data: &EndpointData,
    node: Option<(String, String)>,
    local: bool,
) -> Option<GraphEndpoint> {
    let (topic_kind, topic) = dds_to_ros(&data.topic_name)?;
    let type_name = dds_to_type(&data.type_name)?;
    Some(GraphEndpoint {
        kind: match data.kind {
            RtpsEndpointKind::Writer => GraphEndpointKind::Publisher,
            RtpsEndpointKind::Reader => GraphEndpointKind::Subscription,
        },
        topic_kind,
        topic,
        type_name,
        type_hash: parse_typehash(&data.user_data).map(str::to_owned),
        gid: data.guid.to_bytes(),
        node,
        qos: graph_qos(data),
        local,
        transport: "udp",
        content_filter: data.content_filter.as_ref().map(|f| ContentFilterOptions {
            filter_expression: f.filter_expression.clone(),
            expression_parameters: f.expression_parameters.clone(),
        }),
    })
}

impl GraphView for NetShared {
    /// Every ROS publisher and subscription known: remote ones from SEDP (with their node from
    /// `ros_discovery_info`), then this context's own.
    fn endpoints(&self) -> Vec<GraphEndpoint> {
        let state = self.lock();
        let remote_node = |guid: Guid| {
            let info = state.remote_graph.get(&guid.prefix)?;
            info.nodes
                .iter()
                .find(|n| n.writer_gids.contains(&guid) || n.reader_gids.contains(&guid))
                .map(|n| (n.node_namespace.clone(), n.node_name.clone()))
        };
        let mut out: Vec<GraphEndpoint> = state
            .participant
            .remote_endpoints()
            .filter_map(|e| graph_endpoint(e.data(), remote_node(e.guid()), false))
            .collect();
        let local_node = |local_id: &u64| {
            let node_id = state.endpoint_nodes.get(local_id)?;
            state.nodes.get(node_id).cloned()
        };
        for (local_id, writer) in &state.writers_by_local {
            if let Some(data) = state.participant.writer_data(*writer) {
                out.extend(graph_endpoint(data, local_node(local_id), true));
            }
        }
        for (local_id, reader) in &state.readers_by_local {
            if let Some(data) = state.participant.reader_data(*reader) {
                out.extend(graph_endpoint(data, local_node(local_id), true));
            }
        }
        for server in state.services.servers.values() {
            let node = state.nodes.get(&server.node_id).cloned();
            if let Some(data) = state.participant.reader_data(server.request_reader) {
                out.extend(graph_endpoint(data, node.clone(), true));
            }
            if let Some(data) = state.participant.writer_data(server.reply_writer) {
                out.extend(graph_endpoint(data, node, true));
            }
        }
        for client in state.services.clients.values() {
            let node = state.nodes.get(&client.node_id).cloned();
            if let Some(data) = state.participant.writer_data(client.request_writer) {
                out.extend(graph_endpoint(data, node.clone(), true));
            }
            if let Some(data) = state.participant.reader_data(client.reply_reader) {
                out.extend(graph_endpoint(data, node, true));
            }
        }
        for e in out.iter_mut().filter(|e| e.local) {
            e.transport = "intra";
        }
        out
    }

    /// Nodes known on the network (remote ones from their `ros_discovery_info`, plus this
    /// context's own), as `(namespace, name)`, possibly repeated.
    fn node_names(&self) -> Vec<(String, String)> {
        let state = self.lock();
        let nodes: Vec<(String, String)> = state
            .remote_graph
            .values()
            .flat_map(|info| info.nodes.iter())
            .map(|n| (n.node_namespace.clone(), n.node_name.clone()))
            .chain(state.nodes.values().cloned())
            .collect();
        nodes
    }

    /// Remote topics (ROS names) with their ROS type names, from SEDP.
    fn remote_topics(&self) -> Vec<(String, String)> {
        let state = self.lock();
        let topics: Vec<(String, String)> = state
            .participant
            .remote_endpoints()
            .filter_map(|e| {
                let (_, ros_name) = dds_to_ros(e.topic_name())?;
                let ros_type = dds_to_type(e.type_name())?;
                Some((ros_name, ros_type))
            })
            .collect();
        topics
    }

    fn remote_participant_count(&self) -> usize {
        self.lock().participant.remote_participants().count()
    }

    fn guid_prefix(&self) -> Option<[u8; 12]> {
        Some(self.lock().participant.guid_prefix().0)
    }
}

/// What RTPS carries: the pairs matched over RTPS (the same-host backend counts its own).
impl PathView for NetShared {
    fn remote_subscriptions_by_path(&self, topic: &str) -> (usize, usize) {
        let state = self.lock();
        let writers = state.writers_by_local.values().copied();
        (state.rtps_readers(writers, &topic_to_dds(topic)), 0)
    }

    fn service_servers_by_path(&self, service: &str) -> (usize, usize) {
        let dds_topic = service_request_to_dds(service);
        let state = self.lock();
        let writers = state.services.clients.values().map(|c| c.request_writer);
        (state.rtps_readers(writers, &dds_topic), 0)
    }

    /// RTPS 2.5 §8.5.4.2: the remote participant has not acknowledged our SEDP announcement
    /// of the publisher's writer
    /// ([`roslite_rtps::Participant::acknowledging_matches`]).
    fn unacknowledged_subscriptions(&self, publisher: u64) -> usize {
        let state = self.lock();
        state.writers_by_local.get(&publisher).map_or(0, |&writer| {
            let participant = &state.participant;
            participant
                .writer_matches(writer)
                .count()
                .saturating_sub(participant.acknowledging_matches(EndpointRef::Writer(writer)))
        })
    }

    fn unacknowledged_publishers(&self, subscription: u64) -> usize {
        let state = self.lock();
        state
            .readers_by_local
            .get(&subscription)
            .map_or(0, |&reader| {
                let participant = &state.participant;
                participant
                    .reader_matches(reader)
                    .count()
                    .saturating_sub(participant.acknowledging_matches(EndpointRef::Reader(reader)))
            })
    }

    /// The remote request writers matched with the server's request reader; known as far as
    /// their participants acknowledged both the request reader's and the reply writer's
    /// SEDP announcements (RTPS 2.5 §8.5.4.2).
    fn service_clients(&self, server: u64) -> (usize, usize) {
        let state = self.lock();
        let Some(s) = state.services.servers.get(&server) else {
            return (0, 0);
        };
        let participant = &state.participant;
        let matched = participant.reader_matches(s.request_reader).count();
        let requests_known =
            participant.acknowledging_matches(EndpointRef::Reader(s.request_reader));
        let replies_known = participant.acknowledging_matches(EndpointRef::Writer(s.reply_writer));
        (matched, requests_known.min(replies_known).min(matched))
    }

    fn service_drops(&self) -> ServiceDrops {
        self.service_drops()
    }
}

#[cfg(test)]
mod graph_tests {
    use roslite_transport::{DiscoveryConfig, DiscoveryRange};

    use roslite_transport::TransportConfig;

    use super::*;
    use crate::context::{Context, ContextOptions, NetworkMode};
    use crate::vocabulary::graph::{GraphEndpointKind, RosTopicKind};
    use crate::vocabulary::qos::{Durability, QosProfile, Reliability};

    #[test]
    fn local_endpoints_are_listed_with_their_node_and_qos() {
        // Loopback only; the domain keeps parallel test processes apart.
        let domain_id = 150 + std::process::id() % 50;
        let discovery = DiscoveryConfig {
            domain_id,
            range: DiscoveryRange::Localhost,
            ..Default::default()
        };
        let ctx = Context::new(ContextOptions {
            domain_id,
            network: NetworkMode::Rtps(TransportConfig::new(discovery)),
            ..Default::default()
        })
        .unwrap();
        let node = ctx.create_node_with_namespace("talker", "/robot").unwrap();
        let qos = QosProfile::keep_last(7).transient_local();
        let _publisher = node
            .create_publisher::<roslite_msgs::std_msgs::msg::String>("chatter", qos)
            .unwrap();
        let endpoints: Vec<GraphEndpoint> = ctx
            .graph()
            .endpoints()
            .into_iter()
            .filter(|e| e.local && e.topic == "/robot/chatter")
            .collect();
        assert_eq!(endpoints.len(), 1, "{endpoints:?}");
        let e = &endpoints[0];
        assert_eq!(e.kind, GraphEndpointKind::Publisher);
        assert_eq!(e.topic_kind, RosTopicKind::Topic);
        assert_eq!(e.topic, "/robot/chatter");
        assert_eq!(e.type_name, "std_msgs/msg/String");
        assert_eq!(
            e.type_hash.as_deref(),
            Some(<roslite_msgs::std_msgs::msg::String as roslite_msgs::Message>::TYPE_HASH)
        );
        assert_eq!(e.node, Some(("/robot".to_owned(), "talker".to_owned())));
        assert_eq!(e.qos.history, Some(History::KeepLast(7)));
        assert_eq!(e.qos.durability, Some(Durability::TransientLocal));
        assert_eq!(e.qos.reliability, Reliability::Reliable);
        assert_eq!(e.qos.deadline, None);
        let prefix = ctx.graph().guid_prefix().unwrap();
        assert_eq!(e.gid[..12], prefix);
    }
}
