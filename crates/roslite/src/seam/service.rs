//! Services through the seam: what a backend is handed of a local server or client, how a
//! request is keyed on each path, and the sinks and channels requests and replies go through.

use std::any::Any;
use std::sync::{Arc, Weak};

use roslite_cdr::SharedBuf;

use crate::vocabulary::qos::QosProfile;

/// Correlates a reply with its request, per path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RequestKey {
    /// In-process call number of a typed client calling a server of its own Rust type.
    Local(u64),
    /// In-process number of a serialized request that no network backend numbered (the
    /// context has no network): see `backends::intra`.
    InProcess(u64),
    /// The RTPS sequence number of the request sample (Fast DDS style, and roslite peers).
    WriterSn(i64),
    /// The sequence number in Cyclone's request header.
    CycloneSeq(i64),
}

/// What became of a reply handed to a client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyOutcome {
    Completed,
    /// Addressed to this client but no call is waiting for it (timed out, or a duplicate).
    NoPendingRequest,
    Malformed,
}

/// Which request of which client a server received (rmw's `rmw_request_id_t`): the client's
/// global id as its request names it (the writer GUID of its `related_sample_identity`, where
/// roslite and rmw_fastrtps clients name their reply reader; without one, the request
/// writer's; in Cyclone's convention, the writer whose request header it copies) and the
/// request's sequence number from that client. Requests of one client have increasing
/// numbers. A roslite client's request has the same id over RTPS and over a same-host link,
/// whose lead carries that identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RequestId {
    pub writer_guid: [u8; 16],
    pub sequence_number: i64,
}

/// Sends one serialized reply back the way its request came.
pub trait ReplyChannel: Send {
    /// `payload`: the response, CDR with its encapsulation header.
    fn send(self: Box<Self>, payload: Vec<u8>);

    /// The request this answers, where its path names it globally (None: in-process, or a
    /// path that does not say).
    fn request_id(&self) -> Option<RequestId> {
        None
    }

    /// Where the reply goes, as bytes its backend reads back ([`super::Backend::reply_channel`])
    /// to answer the request from another server of the same service, in another process
    /// (a node moved to another host); None where the path cannot say.
    fn reply_address(&self) -> Option<Vec<u8>> {
        None
    }
}

/// A service as the network sees it: takes serialized requests.
pub trait RequestSink: Send + Sync {
    /// Decodes and queues one request; false (and counted) if it does not decode.
    fn deliver_request(&self, payload: &SharedBuf, reply: Box<dyn ReplyChannel>) -> bool;
}

/// A client as the network sees it: takes serialized replies.
pub trait ReplySink: Send + Sync {
    fn deliver_reply(&self, key: RequestKey, payload: &SharedBuf) -> ReplyOutcome;
}

/// What the network needs to announce a service's or client's two endpoints.
#[derive(Clone, Debug)]
pub struct ServiceEndpointDescription {
    pub local_id: u64,
    pub node_id: u64,
    /// Fully qualified ROS service name.
    pub service: String,
    pub request_dds_type: &'static str,
    pub response_dds_type: &'static str,
    /// The request and response *message* hashes: what rmw announces on each half.
    pub request_type_hash: &'static str,
    pub response_type_hash: &'static str,
    pub qos: QosProfile,
}

/// A service server, as a backend sees it.
#[derive(Clone)]
pub struct LocalServer {
    pub description: ServiceEndpointDescription,
    /// The service's ROS type (`example_interfaces/srv/AddTwoInts`).
    pub type_name: &'static str,
    /// Where serialized requests go.
    pub sink: Arc<dyn RequestSink>,
    /// The typed server, for in-process clients of the same type
    /// ([`super::Backend::in_process_server`]).
    pub typed: Weak<dyn Any + Send + Sync>,
}

/// A service client, as a backend sees it.
#[derive(Clone)]
pub struct LocalClient {
    pub description: ServiceEndpointDescription,
    /// Where serialized replies go.
    pub sink: Arc<dyn ReplySink>,
}

/// Service traffic a backend dropped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServiceDrops {
    /// Requests or replies too short for the Cyclone header they should carry, or with a
    /// malformed same-host lead.
    pub malformed: u64,
    /// Replies addressed to another client of the same service (every client's reply reader
    /// receives every reply; each keeps its own).
    pub replies_for_other_clients: u64,
    /// Replies whose client reader never matched in time, or that overflowed the parking
    /// space.
    pub replies_abandoned: u64,
}

impl std::ops::Add for ServiceDrops {
    type Output = Self;

    fn add(self, other: Self) -> Self {
        Self {
            malformed: self.malformed + other.malformed,
            replies_for_other_clients: self.replies_for_other_clients
                + other.replies_for_other_clients,
            replies_abandoned: self.replies_abandoned + other.replies_abandoned,
        }
    }
}
