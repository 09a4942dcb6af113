//! ROS 2 services on the wire: how a request and its reply are correlated, in the two
//! conventions ROS 2 middlewares use. Sans-IO: every function takes the samples and the facts
//! discovery knows (the sender's vendor, the GUIDs involved) and says what to send or deliver.
//!
//! A service is a pair of topics, `rq/<service>Request` and `rr/<service>Reply` (see
//! [`super::ros::service_request_to_dds`]); every client's reply reader receives every reply of
//! the service, so a client must recognise its own:
//! - **Sample identity** (Fast DDS, Connext, roslite): the request carries the inline QoS
//!   `related_sample_identity` = {the client's reply-reader GUID, SN unknown}; the reply carries
//!   {that GUID, the request's sequence number} (DDS-RPC 1.0 §7.8.2). It is sent under both the
//!   standard PID 0x0083 and Fast DDS's legacy 0x800f (Humble's Fast DDS 2.6 reads only the
//!   latter); either is accepted.
//! - **Request header** (Cyclone DDS, [`quirks::correlates_by_request_header`]): request and
//!   reply payloads start with a 16-byte header {u64 client id, i64 sequence} right after the
//!   encapsulation header; the server copies it into the reply.
//!
//! A server recognises the convention per request ([`route_request`]: inline QoS present, else
//! the sender's vendor); a client uses the request header only when every matched server
//! expects it ([`RequestStyle::for_servers`]).

use crate::endpoint::ReceivedSample;
use crate::parameter_list::{pid, ParameterList, ParameterListWriter};
use crate::quirks;
use crate::types::{Guid, SampleIdentity, SequenceNumber, VendorId};
use roslite_cdr::Endianness;

/// Length of Cyclone's request header.
pub const REQUEST_HEADER_LEN: usize = 16;

/// Bytes of the CDR encapsulation header that precede the request header in a payload.
const ENCAPSULATION_LEN: usize = 4;

/// How a client marks its requests, chosen from the servers it matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestStyle {
    /// `related_sample_identity` inline QoS; the request's key is its RTPS sequence number.
    SampleIdentity,
    /// Cyclone's request header; the request's key is the header's sequence.
    RequestHeader,
}

impl RequestStyle {
    /// The style for a request to servers of these vendors: the request header only when
    /// there is at least one server and every one expects it (a server that reads sample
    /// identities ignores the header, but would take it for part of the request).
    pub fn for_servers(vendors: impl IntoIterator<Item = VendorId>) -> Self {
        let mut any = false;
        for vendor in vendors {
            if !quirks::correlates_by_request_header(vendor) {
                return Self::SampleIdentity;
            }
            any = true;
        }
        if any {
            Self::RequestHeader
        } else {
            Self::SampleIdentity
        }
    }
}

/// Cyclone's request header: which client, and which of its requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestHeader {
    pub client_id: u64,
    pub sequence: i64,
}

impl RequestHeader {
    /// The header as a client writes it: little-endian, as the request body that follows.
    pub fn to_bytes(self) -> [u8; REQUEST_HEADER_LEN] {
        let mut out = [0u8; REQUEST_HEADER_LEN];
        out[..8].copy_from_slice(&self.client_id.to_le_bytes());
        out[8..].copy_from_slice(&self.sequence.to_le_bytes());
        out
    }

    /// The header of `payload` (encapsulation header, request header, body), read in the
    /// payload's byte order; `None` if the payload is too short to hold one.
    pub fn read(payload: &[u8]) -> Option<Self> {
        let header = payload.get(ENCAPSULATION_LEN..ENCAPSULATION_LEN + REQUEST_HEADER_LEN)?;
        let (id, seq) = header.split_at(8);
        let id: [u8; 8] = id.try_into().ok()?;
        let seq: [u8; 8] = seq.try_into().ok()?;
        Some(if payload_is_big_endian(payload) {
            Self {
                client_id: u64::from_be_bytes(id),
                sequence: i64::from_be_bytes(seq),
            }
        } else {
            Self {
                client_id: u64::from_le_bytes(id),
                sequence: i64::from_le_bytes(seq),
            }
        })
    }
}

/// Whether `payload` (with encapsulation header) is big-endian CDR (CDR_BE or PL_CDR_BE: the
/// low bit of the representation id is 0).
fn payload_is_big_endian(payload: &[u8]) -> bool {
    payload.get(1).is_some_and(|b| b & 1 == 0)
}

/// `payload` without its request header: encapsulation header, then the message; `None` if
/// it is too short to hold one.
pub fn strip_request_header(payload: &[u8]) -> Option<Vec<u8>> {
    let body = payload.get(ENCAPSULATION_LEN + REQUEST_HEADER_LEN..)?;
    let mut out = Vec::with_capacity(ENCAPSULATION_LEN.saturating_add(body.len()));
    out.extend_from_slice(payload.get(..ENCAPSULATION_LEN)?);
    out.extend_from_slice(body);
    Some(out)
}

/// `payload` (encapsulation header, message) with `header` inserted after the encapsulation
/// header. The header is 16 bytes, so the message keeps its 8-byte alignment.
pub fn insert_request_header(payload: &[u8], header: &[u8; REQUEST_HEADER_LEN]) -> Vec<u8> {
    let (encapsulation, message) = payload.split_at(payload.len().min(ENCAPSULATION_LEN));
    let mut out = Vec::with_capacity(payload.len().saturating_add(REQUEST_HEADER_LEN));
    out.extend_from_slice(encapsulation);
    out.extend_from_slice(header);
    out.extend_from_slice(message);
    out
}

/// A client id for the request header, from the client's request-writer GUID (FNV-1a over its
/// 16 bytes): any 64 bits unique per client do, and this needs no state.
pub fn request_header_client_id(request_writer: Guid) -> u64 {
    request_writer
        .to_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
}

/// The `related_sample_identity` inline QoS, under both PIDs (little-endian, with sentinel).
pub fn related_identity_inline_qos(identity: SampleIdentity) -> Vec<u8> {
    let mut value = Vec::with_capacity(24);
    value.extend_from_slice(&identity.writer_guid.to_bytes());
    value.extend_from_slice(&identity.sequence_number.high().to_le_bytes());
    value.extend_from_slice(&identity.sequence_number.low().to_le_bytes());
    let mut buf = Vec::with_capacity(64);
    let mut w = ParameterListWriter::new(&mut buf, Endianness::Little);
    // 24 bytes never exceed a parameter's maximum length.
    let _ = w.raw(pid::RELATED_SAMPLE_IDENTITY, &value);
    let _ = w.raw(pid::FASTDDS_RELATED_SAMPLE_IDENTITY, &value);
    w.finish();
    buf
}

/// The `related_sample_identity` inline QoS of `sample`, read as its sender's `vendor` writes
/// it; `None` if it has none or it is malformed.
pub fn sample_related_identity(
    sample: &ReceivedSample,
    vendor: VendorId,
) -> Option<SampleIdentity> {
    let qos = sample.inline_qos.as_deref()?;
    let list = ParameterList::parse(qos, sample.inline_qos_endianness).ok()?;
    list.related_sample_identity(vendor).ok().flatten()
}

/// Where a server's reply goes and how it is marked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplyRoute {
    /// Reply with `related_sample_identity` = `related`; the client's reply reader is
    /// `related.writer_guid` when that names a reader.
    SampleIdentity { related: SampleIdentity },
    /// Copy `header` into the reply; the client is the one whose reply reader carries the
    /// request writer's Cyclone `clientid`.
    RequestHeader {
        header: [u8; REQUEST_HEADER_LEN],
        request_writer: Guid,
    },
}

impl ReplyRoute {
    /// The reply's payload and inline QoS for `response` (encapsulation header, message).
    pub fn reply(&self, response: &[u8]) -> (Vec<u8>, Option<Vec<u8>>) {
        match self {
            Self::SampleIdentity { related } => (
                response.to_vec(),
                Some(related_identity_inline_qos(*related)),
            ),
            Self::RequestHeader { header, .. } => (insert_request_header(response, header), None),
        }
    }

    /// The reader GUID the reply must reach before it is worth sending, for the sample
    /// identity convention (`None`: no reader to wait for, e.g. a request that named its
    /// writer).
    pub fn reply_reader(&self) -> Option<Guid> {
        match self {
            Self::SampleIdentity { related } if related.writer_guid.entity_id.is_reader() => {
                Some(related.writer_guid)
            }
            _ => None,
        }
    }
}

/// Why a received request or reply is dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dropped {
    /// No payload (a dispose or unregister: service topics are keyless).
    Empty,
    /// Too short for the request header it should carry.
    Malformed,
    /// A reply addressed to another client of the same service.
    ForAnotherClient,
}

/// What a server makes of a request `sample` from a participant of `vendor`: how to route the
/// reply, and the request body (encapsulation header, message).
///
/// # Errors
/// [`Dropped::Empty`] or [`Dropped::Malformed`].
pub fn route_request(
    sample: &ReceivedSample,
    vendor: VendorId,
) -> Result<(ReplyRoute, Vec<u8>), Dropped> {
    if sample.payload.is_empty() {
        return Err(Dropped::Empty);
    }
    match sample_related_identity(sample, vendor) {
        Some(identity) if identity.writer_guid != Guid::UNKNOWN => Ok((
            ReplyRoute::SampleIdentity {
                related: SampleIdentity {
                    writer_guid: identity.writer_guid,
                    sequence_number: sample.sequence_number,
                },
            },
            sample.payload.clone(),
        )),
        _ if quirks::correlates_by_request_header(vendor) => {
            let header = sample
                .payload
                .get(ENCAPSULATION_LEN..ENCAPSULATION_LEN + REQUEST_HEADER_LEN)
                .and_then(|h| <[u8; REQUEST_HEADER_LEN]>::try_from(h).ok());
            let (Some(header), Some(body)) = (header, strip_request_header(&sample.payload)) else {
                return Err(Dropped::Malformed);
            };
            Ok((
                ReplyRoute::RequestHeader {
                    header,
                    request_writer: sample.writer,
                },
                body,
            ))
        }
        // No identity from a peer that does not use the header: answer the request writer
        // itself, which rmw_fastrtps clients also accept.
        _ => Ok((
            ReplyRoute::SampleIdentity {
                related: SampleIdentity {
                    writer_guid: sample.writer,
                    sequence_number: sample.sequence_number,
                },
            },
            sample.payload.clone(),
        )),
    }
}

/// How a reply names the request it answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReplyKey {
    /// The RTPS sequence number of the request sample (sample identity convention).
    WriterSn(i64),
    /// The sequence of the request header.
    HeaderSequence(i64),
}

/// The client a reply may be for: its two endpoints and its request-header id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientIdentity {
    pub request_writer: Guid,
    pub reply_reader: Guid,
    pub header_client_id: u64,
}

impl ClientIdentity {
    /// A client with these endpoints and the header id derived from its request writer.
    pub fn new(request_writer: Guid, reply_reader: Guid) -> Self {
        Self {
            request_writer,
            reply_reader,
            header_client_id: request_header_client_id(request_writer),
        }
    }

    /// What this client makes of a reply `sample` from a participant of `vendor`: which of its
    /// requests it answers, and the response (encapsulation header, message).
    ///
    /// # Errors
    /// [`Dropped`] for an empty or malformed reply, or one for another client.
    pub fn accept_reply(
        &self,
        sample: &ReceivedSample,
        vendor: VendorId,
    ) -> Result<(ReplyKey, Vec<u8>), Dropped> {
        if sample.payload.is_empty() {
            return Err(Dropped::Empty);
        }
        match sample_related_identity(sample, vendor) {
            Some(identity) => {
                let ours = identity.writer_guid == self.reply_reader
                    || identity.writer_guid == self.request_writer;
                if !ours {
                    return Err(Dropped::ForAnotherClient);
                }
                Ok((
                    ReplyKey::WriterSn(identity.sequence_number.0),
                    sample.payload.clone(),
                ))
            }
            None => {
                let (Some(header), Some(body)) = (
                    RequestHeader::read(&sample.payload),
                    strip_request_header(&sample.payload),
                ) else {
                    return Err(Dropped::Malformed);
                };
                if header.client_id != self.header_client_id {
                    return Err(Dropped::ForAnotherClient);
                }
                Ok((ReplyKey::HeaderSequence(header.sequence), body))
            }
        }
    }

    /// The inline QoS of a request in the sample identity convention: it names this client's
    /// reply reader, with the sequence number unknown (the request's own is the key).
    pub fn request_inline_qos(&self) -> Vec<u8> {
        related_identity_inline_qos(SampleIdentity {
            writer_guid: self.reply_reader,
            sequence_number: SequenceNumber::UNKNOWN,
        })
    }
}

#[cfg(test)]
mod tests;
