//! Services over RTPS: a server's request reader and reply writer, a client's request writer
//! and reply reader, announced as rmw does, with requests and replies correlated in the
//! convention of whoever is on the other side (see `roslite_rtps::discovery::rpc`).
//!
//! With roslite participants on this host, requests and replies go over the same-host links
//! (a backend of their own, `backends/same_host/service.rs`) as well, the sample identity in a
//! lead before the payload; every request is still written to the RTPS writer first, for its
//! sequence number, the call's key on both paths.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use roslite_cdr::SharedBuf;
use roslite_rtps::discovery::ros::{
    cyclone_service_id_user_data, parse_cyclone_service_id, service_reply_to_dds,
    service_request_to_dds, typehash_user_data, CycloneServiceRole,
};
use roslite_rtps::discovery::rpc::{
    insert_request_header, route_request, ClientIdentity, Dropped, ReplyKey, ReplyRoute,
    RequestHeader, RequestStyle,
};
use roslite_rtps::endpoint::ReceivedSample;
use roslite_rtps::participant::{EndpointOptions, ReaderId, WriterId};
use roslite_rtps::types::{Guid, SampleIdentity, SequenceNumber, VendorId};
use roslite_rtps::Instant;

use super::{endpoint_qos, now, Discovery, NetShared, NetState, ServiceDelivery};
use crate::seam::service::{
    LocalClient, LocalServer, ReplyChannel, ReplySink, RequestId, RequestKey, RequestSink,
    ServiceDrops,
};

/// Replies waiting for the client's reply reader to match, per server, at most.
const MAX_PARKED_REPLIES: usize = 256;
/// A parked reply whose reader never matched is dropped after this long.
const PARKED_REPLY_LIFETIME_NS: u64 = 30_000_000_000;
#[derive(Default)]
pub(super) struct ServiceState {
    pub(super) servers: HashMap<u64, NetServer>,
    pub(super) server_by_reader: HashMap<ReaderId, u64>,
    pub(super) server_by_reply_writer: HashMap<WriterId, u64>,
    pub(super) clients: HashMap<u64, NetClient>,
    pub(super) client_by_reader: HashMap<ReaderId, u64>,
    parked_replies: Vec<ParkedReply>,
    stats: ServiceDrops,
}

pub(super) struct NetServer {
    pub(super) node_id: u64,
    pub(super) request_reader: ReaderId,
    pub(super) reply_writer: WriterId,
    sink: Arc<dyn RequestSink>,
}

pub(super) struct NetClient {
    pub(super) node_id: u64,
    pub(super) request_writer: WriterId,
    pub(super) reply_reader: ReaderId,
    sink: Arc<dyn ReplySink>,
    /// Its endpoints' GUIDs and its id in Cyclone's request header.
    identity: ClientIdentity,
    next_header_sequence: i64,
}

struct ParkedReply {
    server: u64,
    route: ReplyRoute,
    payload: Vec<u8>,
    parked_at: Instant,
}

/// The vendor of the participant that wrote `sample`.
fn sender_vendor(state: &NetState, sample: &ReceivedSample) -> VendorId {
    state
        .participant
        .remote_participant(sample.writer.prefix)
        .map_or(VendorId::UNKNOWN, |p| p.vendor_id())
}

fn user_data_with(type_hash: &str, extra: &[u8]) -> Vec<u8> {
    let mut data = typehash_user_data(type_hash);
    data.extend_from_slice(extra);
    data
}

impl NetShared {
    /// A request for local server `local_id`: work out the reply route and queue it.
    pub(super) fn handle_request(
        &self,
        state: &mut NetState,
        local_id: u64,
        sample: ReceivedSample,
    ) {
        let Some(server) = state.services.servers.get(&local_id) else {
            return;
        };
        let sink = server.sink.clone();
        let vendor = sender_vendor(state, &sample);
        let (route, payload) = match route_request(&sample, vendor) {
            Ok(routed) => routed,
            Err(Dropped::Malformed) => {
                state.services.stats.malformed += 1;
                return;
            }
            Err(_) => return,
        };
        let reply = Box::new(NetReply {
            shared: self.weak_self(),
            server: local_id,
            route,
        });
        // Handed to the server after the state lock is released: its callback may run inline
        // on this thread and reply, which takes the lock.
        state.service_deliveries.push(ServiceDelivery::Request(
            sink,
            SharedBuf::from_vec(payload),
            reply,
        ));
    }

    fn weak_self(&self) -> Weak<NetShared> {
        self.me.clone()
    }

    /// Whether the client that sent the request behind `route` can receive the reply from
    /// `reply_writer` yet (rmw_fastrtps and rmw_cyclonedds both wait for this, to survive the
    /// race between discovering the client's two endpoints).
    fn reply_reader_matched(state: &NetState, reply_writer: WriterId, route: &ReplyRoute) -> bool {
        match route {
            ReplyRoute::SampleIdentity { .. } => route.reply_reader().is_none_or(|reader| {
                state
                    .participant
                    .writer_matches(reply_writer)
                    .any(|g| g == reader)
            }),
            ReplyRoute::RequestHeader { request_writer, .. } => {
                let Some(client_id) =
                    state
                        .participant
                        .remote_endpoint(*request_writer)
                        .and_then(|e| {
                            parse_cyclone_service_id(
                                &e.data().user_data,
                                CycloneServiceRole::Client,
                            )
                        })
                else {
                    return true;
                };
                state.participant.writer_matches(reply_writer).any(|g| {
                    state.participant.remote_endpoint(g).is_some_and(|e| {
                        parse_cyclone_service_id(&e.data().user_data, CycloneServiceRole::Client)
                            == Some(client_id)
                    })
                })
            }
        }
    }

    fn write_reply(
        &self,
        state: &mut NetState,
        now: Instant,
        reply_writer: WriterId,
        route: &ReplyRoute,
        payload: &[u8],
    ) {
        let (payload, inline_qos) = route.reply(payload);
        if let Err(e) = state.participant.write(
            now,
            reply_writer,
            Arc::from(payload),
            inline_qos.map(Arc::from),
        ) {
            self.logger
                .warn(format_args!("cannot send a service reply: {e:?}"));
        }
    }

    fn send_reply(&self, server: u64, route: ReplyRoute, payload: Vec<u8>) {
        let now = now();
        let mut state = self.lock();
        let Some(reply_writer) = state.services.servers.get(&server).map(|s| s.reply_writer) else {
            return;
        };
        if Self::reply_reader_matched(&state, reply_writer, &route) {
            self.write_reply(&mut state, now, reply_writer, &route, &payload);
        } else {
            let parked = &mut state.services.parked_replies;
            if parked.iter().filter(|p| p.server == server).count() >= MAX_PARKED_REPLIES {
                state.services.stats.replies_abandoned += 1;
            } else {
                parked.push(ParkedReply {
                    server,
                    route,
                    payload,
                    parked_at: now,
                });
            }
        }
        self.flush_and_notify(&mut state, now);
    }

    /// Sends the parked replies whose readers have matched; drops expired ones.
    pub(super) fn send_parked_replies(&self, state: &mut NetState, now: Instant) {
        let parked = std::mem::take(&mut state.services.parked_replies);
        for reply in parked {
            let Some(reply_writer) = state
                .services
                .servers
                .get(&reply.server)
                .map(|s| s.reply_writer)
            else {
                continue;
            };
            if Self::reply_reader_matched(state, reply_writer, &reply.route) {
                self.write_reply(state, now, reply_writer, &reply.route, &reply.payload);
            } else if now.as_nanos().saturating_sub(reply.parked_at.as_nanos())
                > PARKED_REPLY_LIFETIME_NS
            {
                state.services.stats.replies_abandoned += 1;
            } else {
                state.services.parked_replies.push(reply);
            }
        }
    }
}

/// A reply for local client `local_id`: find its call and complete it.
pub(super) fn handle_reply(state: &mut NetState, local_id: u64, sample: ReceivedSample) {
    let vendor = sender_vendor(state, &sample);
    let Some(client) = state.services.clients.get(&local_id) else {
        return;
    };
    let sink = client.sink.clone();
    let (key, payload) = match client.identity.accept_reply(&sample, vendor) {
        Ok((ReplyKey::WriterSn(sn), payload)) => (RequestKey::WriterSn(sn), payload),
        Ok((ReplyKey::HeaderSequence(seq), payload)) => (RequestKey::CycloneSeq(seq), payload),
        Err(Dropped::ForAnotherClient) => {
            state.services.stats.replies_for_other_clients += 1;
            return;
        }
        Err(Dropped::Malformed) => {
            state.services.stats.malformed += 1;
            return;
        }
        Err(Dropped::Empty) => return,
    };
    // Completed once the state lock is released (see `ServiceDelivery`).
    state.service_deliveries.push(ServiceDelivery::Reply(
        sink,
        key,
        SharedBuf::from_vec(payload),
    ));
}

/// Sends a server's reply back over RTPS.
struct NetReply {
    shared: Weak<NetShared>,
    server: u64,
    route: ReplyRoute,
}

impl ReplyChannel for NetReply {
    fn send(self: Box<Self>, payload: Vec<u8>) {
        if let Some(shared) = self.shared.upgrade() {
            shared.send_reply(self.server, self.route, payload);
        }
    }

    fn reply_address(&self) -> Option<Vec<u8>> {
        Some(encode_route(&self.route))
    }

    fn request_id(&self) -> Option<RequestId> {
        Some(match &self.route {
            ReplyRoute::SampleIdentity { related } => RequestId {
                writer_guid: related.writer_guid.to_bytes(),
                sequence_number: related.sequence_number.0,
            },
            ReplyRoute::RequestHeader {
                header,
                request_writer,
            } => RequestId {
                writer_guid: request_writer.to_bytes(),
                // The header as the client wrote it; every Cyclone client roslite meets
                // writes little-endian CDR (a big-endian one would be numbered wrongly here).
                sequence_number: i64::from_le_bytes(header[8..16].try_into().ok()?),
            },
        })
    }
}

/// A reply route as bytes ([`ReplyChannel::reply_address`]): tag 1, the related sample
/// identity's writer GUID (16) and sequence number (i64 LE); or tag 2, the Cyclone request
/// header (16) and the request writer's GUID (16). A request that came over a same-host link
/// has the same tag-1 address as over RTPS (its lead carries that sample identity), so either
/// path of another process can answer it.
pub(crate) fn encode_route(route: &ReplyRoute) -> Vec<u8> {
    let mut out = Vec::with_capacity(33);
    match route {
        ReplyRoute::SampleIdentity { related } => {
            out.push(1);
            out.extend_from_slice(&related.writer_guid.to_bytes());
            out.extend_from_slice(&related.sequence_number.0.to_le_bytes());
        }
        ReplyRoute::RequestHeader {
            header,
            request_writer,
        } => {
            out.push(2);
            out.extend_from_slice(header);
            out.extend_from_slice(&request_writer.to_bytes());
        }
    }
    out
}

pub(crate) fn decode_route(bytes: &[u8]) -> Option<ReplyRoute> {
    let (&tag, rest) = bytes.split_first()?;
    let (first, second) = (rest.get(..16)?, rest.get(16..)?);
    let guid = |b: &[u8]| -> Option<Guid> { Some(Guid::from_bytes(b.try_into().ok()?)) };
    match tag {
        1 if second.len() == 8 => Some(ReplyRoute::SampleIdentity {
            related: SampleIdentity {
                writer_guid: guid(first)?,
                sequence_number: SequenceNumber(i64::from_le_bytes(second.try_into().ok()?)),
            },
        }),
        2 if second.len() == 16 => Some(ReplyRoute::RequestHeader {
            header: first.try_into().ok()?,
            request_writer: guid(second)?,
        }),
        _ => None,
    }
}

impl NetShared {
    /// A way to answer, from local server `server`, the request routed as `address` says
    /// ([`encode_route`]), which another server (in another process) received.
    pub(super) fn reply_channel(
        &self,
        server: u64,
        address: &[u8],
    ) -> Option<Box<dyn ReplyChannel>> {
        let route = decode_route(address)?;
        let mut state = self.lock();
        let reply_writer = state.services.servers.get(&server)?.reply_writer;
        // A client whose reply reader the same-host links reach is answered there: the RTPS
        // writer leaves that pair unmatched, so its reply would wait for a match that never
        // comes.
        if let (Some(reader), Some(follower)) = (route.reply_reader(), self.follower()) {
            let (discovery, _) = Discovery::split(&mut state);
            if follower.carries_pair(&discovery, reply_writer, reader) {
                return None;
            }
        }
        drop(state);
        Some(Box::new(NetReply {
            shared: self.weak_self(),
            server,
            route,
        }))
    }

    /// Announces a local server's request reader and reply writer.
    pub(super) fn add_service_server(&self, server: &LocalServer) {
        let d = &server.description;
        let sink = server.sink.clone();
        let now = now();
        let mut state = self.lock();
        let qos = endpoint_qos(&d.qos);
        // Cyclone's `serviceid=` names the server in both endpoints' USER_DATA; any unique
        // 16 bytes do, so the GUID the next endpoint will get serves.
        let service_id = cyclone_service_id_user_data(
            CycloneServiceRole::Service,
            state.participant.next_writer_guid(false).to_bytes(),
        );
        let reader_options =
            EndpointOptions::new(&service_request_to_dds(&d.service), d.request_dds_type)
                .with_qos(qos)
                .with_user_data(user_data_with(d.request_type_hash, &service_id));
        let writer_options =
            EndpointOptions::new(&service_reply_to_dds(&d.service), d.response_dds_type)
                .with_qos(qos)
                .with_user_data(user_data_with(d.response_type_hash, &service_id));
        let endpoints = match state.participant.create_reader(now, reader_options) {
            Ok(r) => match state.participant.create_writer(now, writer_options) {
                Ok(w) => Ok((r, w)),
                Err(e) => {
                    // Half a server answers nobody: its reader goes too.
                    state.participant.delete_reader(now, r);
                    Err(e)
                }
            },
            Err(e) => Err(e),
        };
        match endpoints {
            Ok((request_reader, reply_writer)) => {
                let s = &mut state.services;
                s.server_by_reader.insert(request_reader, d.local_id);
                s.server_by_reply_writer.insert(reply_writer, d.local_id);
                s.servers.insert(
                    d.local_id,
                    NetServer {
                        node_id: d.node_id,
                        request_reader,
                        reply_writer,
                        sink,
                    },
                );
                state.publish_graph(now);
            }
            Err(e) => {
                self.endpoint_refused(format_args!("the service '{}'", d.service), e);
            }
        }
        self.flush_and_notify(&mut state, now);
    }

    pub(super) fn remove_service_server(&self, local_id: u64) {
        let now = now();
        let mut state = self.lock();
        let Some(server) = state.services.servers.remove(&local_id) else {
            return;
        };
        state
            .services
            .server_by_reader
            .remove(&server.request_reader);
        state
            .services
            .server_by_reply_writer
            .remove(&server.reply_writer);
        state
            .services
            .parked_replies
            .retain(|p| p.server != local_id);
        state.participant.delete_reader(now, server.request_reader);
        state.participant.delete_writer(now, server.reply_writer);
        state.publish_graph(now);
        self.flush_and_notify(&mut state, now);
    }

    /// Announces a local client's request writer and reply reader.
    pub(super) fn add_service_client(&self, client: &LocalClient) {
        let d = &client.description;
        let sink = client.sink.clone();
        let now = now();
        let mut state = self.lock();
        let qos = endpoint_qos(&d.qos);
        // Cyclone's `clientid=` is the request writer's GUID (rmw_cyclonedds `rmw_init_cs`).
        let prefix = state.participant.guid_prefix();
        let client_id_bytes = state.participant.next_writer_guid(false).to_bytes();
        let client_id = cyclone_service_id_user_data(CycloneServiceRole::Client, client_id_bytes);
        let writer_options =
            EndpointOptions::new(&service_request_to_dds(&d.service), d.request_dds_type)
                .with_qos(qos)
                .with_user_data(user_data_with(d.request_type_hash, &client_id));
        let reader_options =
            EndpointOptions::new(&service_reply_to_dds(&d.service), d.response_dds_type)
                .with_qos(qos)
                .with_user_data(user_data_with(d.response_type_hash, &client_id));
        let endpoints = match state.participant.create_writer(now, writer_options) {
            Ok(w) => match state.participant.create_reader(now, reader_options) {
                Ok(r) => Ok((w, r)),
                Err(e) => {
                    // Half a client gets no replies: its writer goes too.
                    state.participant.delete_writer(now, w);
                    Err(e)
                }
            },
            Err(e) => Err(e),
        };
        match endpoints {
            Ok((request_writer, reply_reader)) => {
                let identity =
                    ClientIdentity::new(request_writer.guid(prefix), reply_reader.guid(prefix));
                state
                    .services
                    .client_by_reader
                    .insert(reply_reader, d.local_id);
                state.services.clients.insert(
                    d.local_id,
                    NetClient {
                        node_id: d.node_id,
                        request_writer,
                        reply_reader,
                        sink,
                        identity,
                        next_header_sequence: 0,
                    },
                );
                state.publish_graph(now);
            }
            Err(e) => {
                self.endpoint_refused(format_args!("the client of '{}'", d.service), e);
            }
        }
        self.flush_and_notify(&mut state, now);
    }

    pub(super) fn remove_service_client(&self, local_id: u64) {
        let now = now();
        let mut state = self.lock();
        let Some(client) = state.services.clients.remove(&local_id) else {
            return;
        };
        state.services.client_by_reader.remove(&client.reply_reader);
        state.participant.delete_writer(now, client.request_writer);
        state.participant.delete_reader(now, client.reply_reader);
        state.publish_graph(now);
        self.flush_and_notify(&mut state, now);
    }

    /// Whether a remote server has matched both of the client's endpoints over RTPS.
    pub(super) fn service_client_ready(&self, local_id: u64) -> bool {
        let state = self.lock();
        let Some(client) = state.services.clients.get(&local_id) else {
            return false;
        };
        // The server's request reader answered a HEARTBEAT of ours: it knows where our
        // numbering stands, so a request written now is live to it. A volatile reader that
        // has matched us but not yet heard a HEARTBEAT takes the first one as the start of
        // the stream: a request lost on its way before that would be acknowledged and never
        // served (rclcpp clients race the same way; rmw_fastrtps#390).
        state
            .participant
            .writer_has_synced_reader(client.request_writer)
            && state
                .participant
                .reader_matches(client.reply_reader)
                .next()
                .is_some()
    }

    /// The GUID of client `local_id`'s reply reader: what its requests name as their
    /// `related_sample_identity`, and so what servers see as the client (rmw_fastrtps's
    /// `rmw_get_gid_for_client` gives the same).
    pub(super) fn service_client_gid(&self, local_id: u64) -> Option<[u8; 16]> {
        let state = self.lock();
        let client = state.services.clients.get(&local_id)?;
        Some(client.identity.reply_reader.to_bytes())
    }

    /// Sends a request (`payload`: CDR with encapsulation header) for local client
    /// `local_id`. `register` runs with the request's key under the network lock, before any
    /// reply can be handled; it is not called if the request could not be written.
    pub(super) fn send_service_request(
        &self,
        local_id: u64,
        payload: &[u8],
        register: &mut dyn FnMut(RequestKey),
    ) -> Option<RequestKey> {
        let now = now();
        let mut state = self.lock();
        let client = state.services.clients.get(&local_id)?;
        let request_writer = client.request_writer;
        let client_identity = client.identity;
        // Servers reached by the follower (roslite ones on this host) read the sample identity.
        let style = if self
            .follower()
            .is_some_and(|f| f.carries_requests(request_writer))
        {
            RequestStyle::SampleIdentity
        } else {
            RequestStyle::for_servers(state.participant.writer_matches(request_writer).map(|g| {
                state
                    .participant
                    .remote_participant(g.prefix)
                    .map_or(VendorId::UNKNOWN, |p| p.vendor_id())
            }))
        };
        let result = match style {
            RequestStyle::RequestHeader => {
                let client = state.services.clients.get_mut(&local_id)?;
                client.next_header_sequence += 1;
                let header = RequestHeader {
                    client_id: client.identity.header_client_id,
                    sequence: client.next_header_sequence,
                };
                state
                    .participant
                    .write(
                        now,
                        request_writer,
                        Arc::from(insert_request_header(payload, &header.to_bytes())),
                        None,
                    )
                    .map(|_| RequestKey::CycloneSeq(header.sequence))
            }
            // Written to RTPS even with no RTPS server matched: its sequence number is the
            // request's identity on every path.
            RequestStyle::SampleIdentity => state
                .participant
                .write(
                    now,
                    request_writer,
                    Arc::from(payload),
                    Some(Arc::from(client_identity.request_inline_qos())),
                )
                .map(|sn| RequestKey::WriterSn(sn.0)),
        };
        let key = match result {
            Ok(key) => {
                // Registered before any server can see the request.
                register(key);
                Some(key)
            }
            Err(e) => {
                self.logger
                    .warn(format_args!("cannot send a service request: {e:?}"));
                None
            }
        };
        self.flush_and_notify(&mut state, now);
        key
    }

    /// What the network dropped of service traffic over RTPS.
    pub(super) fn service_drops(&self) -> ServiceDrops {
        self.lock().services.stats
    }
}
