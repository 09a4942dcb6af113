//! The parts of a guest's host state that live in roslite's objects rather than in the host's
//! own tables, as the snapshot's host section carries them (docs/migration.md, "Snapshot
//! format"): each node's parameters as they are now (other nodes may have set them since the
//! guest declared them), and the messages and service requests it received and did not take.

use roslite::{Parameter, ParameterType, ParameterValue};

use crate::snapshot::{put_bytes, put_u32, Reader, SnapshotError};

/// A request that waited for the guest when its snapshot was taken: the guest handle of the
/// service it came to, that service's callback slot, where its answer goes (the reply
/// address of roslite's path, `roslite::ServiceResponder::reply_address`) and its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitingRequest {
    pub service: i64,
    pub slot: i32,
    pub address: Vec<u8>,
    pub request: Vec<u8>,
}

pub fn encode_requests(requests: &[WaitingRequest], out: &mut Vec<u8>) {
    put_u32(out, requests.len() as u32);
    for r in requests {
        out.extend_from_slice(&r.service.to_le_bytes());
        out.extend_from_slice(&r.slot.to_le_bytes());
        put_bytes(out, &r.address);
        put_bytes(out, &r.request);
    }
}

pub(crate) fn decode_requests(r: &mut Reader<'_>) -> Result<Vec<WaitingRequest>, SnapshotError> {
    const WHAT: &str = "the waiting requests";
    // Each takes at least 20 bytes.
    let count = r.count(20, WHAT)?;
    let mut requests = Vec::with_capacity(count);
    for _ in 0..count {
        let service = r.u64(WHAT)? as i64;
        let slot = r.u32(WHAT)? as i32;
        let n = r.count(1, WHAT)?;
        let address = r.take(n, WHAT)?.to_vec();
        let n = r.count(1, WHAT)?;
        let request = r.take(n, WHAT)?.to_vec();
        requests.push(WaitingRequest {
            service,
            slot,
            address,
            request,
        });
    }
    Ok(requests)
}

/// A message that waited for the guest when its snapshot was taken: its subscription's callback
/// slot, its bytes and the fields of its `MessageInfo`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitingMessage {
    pub slot: i32,
    pub source_timestamp_ns: i64,
    pub received_timestamp_ns: i64,
    pub sequence_number: u64,
    pub from_intra_process: bool,
    pub publisher_gid: [u8; 16],
    pub bytes: Vec<u8>,
}

pub fn encode_messages(messages: &[WaitingMessage], out: &mut Vec<u8>) {
    put_u32(out, messages.len() as u32);
    for m in messages {
        out.extend_from_slice(&m.slot.to_le_bytes());
        out.extend_from_slice(&m.source_timestamp_ns.to_le_bytes());
        out.extend_from_slice(&m.received_timestamp_ns.to_le_bytes());
        out.extend_from_slice(&m.sequence_number.to_le_bytes());
        out.push(u8::from(m.from_intra_process));
        out.extend_from_slice(&m.publisher_gid);
        put_bytes(out, &m.bytes);
    }
}

pub(crate) fn decode_messages(r: &mut Reader<'_>) -> Result<Vec<WaitingMessage>, SnapshotError> {
    const WHAT: &str = "the waiting messages";
    // Each takes at least 49 bytes.
    let count = r.count(49, WHAT)?;
    let mut messages = Vec::with_capacity(count);
    for _ in 0..count {
        let slot = r.u32(WHAT)? as i32;
        let source_timestamp_ns = r.u64(WHAT)? as i64;
        let received_timestamp_ns = r.u64(WHAT)? as i64;
        let sequence_number = r.u64(WHAT)?;
        let from_intra_process = r.u8(WHAT)? != 0;
        let mut publisher_gid = [0; 16];
        publisher_gid.copy_from_slice(r.take(16, WHAT)?);
        let n = r.count(1, WHAT)?;
        messages.push(WaitingMessage {
            slot,
            source_timestamp_ns,
            received_timestamp_ns,
            sequence_number,
            from_intra_process,
            publisher_gid,
            bytes: r.take(n, WHAT)?.to_vec(),
        });
    }
    Ok(messages)
}

/// A responder the guest kept to answer its request later (outside the request's callback):
/// its guest handle, the guest handle of the service and its callback slot, where the answer
/// goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeptResponder {
    pub handle: i64,
    pub service: i64,
    pub slot: i32,
    pub address: Vec<u8>,
}

pub fn encode_responders(responders: &[KeptResponder], out: &mut Vec<u8>) {
    put_u32(out, responders.len() as u32);
    for r in responders {
        out.extend_from_slice(&r.handle.to_le_bytes());
        out.extend_from_slice(&r.service.to_le_bytes());
        out.extend_from_slice(&r.slot.to_le_bytes());
        put_bytes(out, &r.address);
    }
}

pub(crate) fn decode_responders(r: &mut Reader<'_>) -> Result<Vec<KeptResponder>, SnapshotError> {
    const WHAT: &str = "the kept responders";
    let count = r.count(24, WHAT)?;
    let mut responders = Vec::with_capacity(count);
    for _ in 0..count {
        let handle = r.u64(WHAT)? as i64;
        let service = r.u64(WHAT)? as i64;
        let slot = r.u32(WHAT)? as i32;
        let n = r.count(1, WHAT)?;
        responders.push(KeptResponder {
            handle,
            service,
            slot,
            address: r.take(n, WHAT)?.to_vec(),
        });
    }
    Ok(responders)
}

/// One node's parameters: its guest handle, every declared parameter with its value.
pub type NodeParameters = (i64, Vec<Parameter>);

/// The parameters of each node of a guest, as the host section holds them.
pub fn encode_parameters(nodes: &[NodeParameters], out: &mut Vec<u8>) {
    put_u32(out, nodes.len() as u32);
    for (node, parameters) in nodes {
        out.extend_from_slice(&node.to_le_bytes());
        put_u32(out, parameters.len() as u32);
        for parameter in parameters {
            put_bytes(out, parameter.name.as_bytes());
            encode_value(&parameter.value, out);
        }
    }
}

pub(crate) fn decode_parameters(r: &mut Reader<'_>) -> Result<Vec<NodeParameters>, SnapshotError> {
    // A node takes at least 12 bytes, a parameter at least 5.
    let node_count = r.count(12, "the parameters")?;
    let mut nodes = Vec::with_capacity(node_count);
    for _ in 0..node_count {
        let node = r.u64("the parameters")? as i64;
        let count = r.count(5, "the parameters")?;
        let mut parameters = Vec::with_capacity(count);
        for _ in 0..count {
            let name = text(r, "a parameter's name")?;
            let value = decode_value(r)?;
            parameters.push(Parameter { name, value });
        }
        nodes.push((node, parameters));
    }
    Ok(nodes)
}

fn encode_value(value: &ParameterValue, out: &mut Vec<u8>) {
    out.push(value.parameter_type().code());
    match value {
        ParameterValue::NotSet => {}
        ParameterValue::Bool(v) => out.push(u8::from(*v)),
        ParameterValue::Integer(v) => out.extend_from_slice(&v.to_le_bytes()),
        ParameterValue::Double(v) => out.extend_from_slice(&v.to_bits().to_le_bytes()),
        ParameterValue::String(v) => put_bytes(out, v.as_bytes()),
        ParameterValue::ByteArray(v) => put_bytes(out, v),
        ParameterValue::BoolArray(v) => {
            put_u32(out, v.len() as u32);
            out.extend(v.iter().map(|b| u8::from(*b)));
        }
        ParameterValue::IntegerArray(v) => {
            put_u32(out, v.len() as u32);
            v.iter()
                .for_each(|i| out.extend_from_slice(&i.to_le_bytes()));
        }
        ParameterValue::DoubleArray(v) => {
            put_u32(out, v.len() as u32);
            v.iter()
                .for_each(|d| out.extend_from_slice(&d.to_bits().to_le_bytes()));
        }
        ParameterValue::StringArray(v) => {
            put_u32(out, v.len() as u32);
            v.iter().for_each(|s| put_bytes(out, s.as_bytes()));
        }
    }
}

fn decode_value(r: &mut Reader<'_>) -> Result<ParameterValue, SnapshotError> {
    const WHAT: &str = "a parameter's value";
    let code = r.u8(WHAT)?;
    let ty = ParameterType::from_code(code)
        .ok_or_else(|| SnapshotError::Malformed(format!("unknown parameter type {code}")))?;
    Ok(match ty {
        ParameterType::NotSet => ParameterValue::NotSet,
        ParameterType::Bool => ParameterValue::Bool(r.u8(WHAT)? != 0),
        ParameterType::Integer => ParameterValue::Integer(r.u64(WHAT)? as i64),
        ParameterType::Double => ParameterValue::Double(f64::from_bits(r.u64(WHAT)?)),
        ParameterType::String => ParameterValue::String(text(r, WHAT)?),
        ParameterType::ByteArray => {
            let n = r.count(1, WHAT)?;
            ParameterValue::ByteArray(r.take(n, WHAT)?.to_vec())
        }
        ParameterType::BoolArray => {
            let n = r.count(1, WHAT)?;
            ParameterValue::BoolArray(r.take(n, WHAT)?.iter().map(|b| *b != 0).collect())
        }
        ParameterType::IntegerArray => {
            let n = r.count(8, WHAT)?;
            ParameterValue::IntegerArray(
                (0..n)
                    .map(|_| r.u64(WHAT).map(|v| v as i64))
                    .collect::<Result<_, _>>()?,
            )
        }
        ParameterType::DoubleArray => {
            let n = r.count(8, WHAT)?;
            ParameterValue::DoubleArray(
                (0..n)
                    .map(|_| r.u64(WHAT).map(f64::from_bits))
                    .collect::<Result<_, _>>()?,
            )
        }
        ParameterType::StringArray => {
            let n = r.count(4, WHAT)?;
            ParameterValue::StringArray((0..n).map(|_| text(r, WHAT)).collect::<Result<_, _>>()?)
        }
    })
}

/// A UTF-8 string: its length (u32), its bytes.
fn text(r: &mut Reader<'_>, what: &'static str) -> Result<String, SnapshotError> {
    let n = r.count(1, what)?;
    String::from_utf8(r.take(n, what)?.to_vec())
        .map_err(|_| SnapshotError::Malformed(format!("{what} is not UTF-8")))
}
