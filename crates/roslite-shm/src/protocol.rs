//! Control messages on the Unix socket between a reader and a writer's endpoint.
//!
//! Each message is one SOCK_SEQPACKET packet, little-endian, starting with a 4-byte tag.
//!
//! ```text
//! Hello    reader -> writer   "RLH1" kind:u8 history:u8 flags:u8 0:u8 depth:u32 max_held:u32
//!                             key:[u8;16]; flags bit 0: send me the samples you keep for late
//!                             joiners first (a TRANSIENT_LOCAL reader); other bits must be 0
//!                             (+ SCM_RIGHTS [eventfd] for shared memory)
//! Welcome  writer -> reader   "RLW1" sub_capacity:u32 completion_capacity:u32 channel_len:u64
//!                             (+ SCM_RIGHTS [channel memfd] for shared memory)
//! Reject   writer -> reader   "RLR1" reason:u32
//! Segment  writer -> reader   "RLS1" id:u32 chunk_count:u32 chunk_size:u64 (+ [segment memfd])
//! Retire   writer -> reader   "RLX1" id:u32
//! ```
//!
//! Data never travels in these messages: samples are announced in the shared channel (shared
//! memory) or sent as frames (`uds`).

/// Which transport a reader asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    SharedMemory = 1,
    UnixSocket = 2,
}

/// Identifies a writer at its endpoint; the runtime uses the RTPS writer GUID.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WriterKey(pub [u8; 16]);

impl From<u128> for WriterKey {
    fn from(value: u128) -> Self {
        WriterKey(value.to_be_bytes())
    }
}

/// A reader's history, which decides what happens when its queue is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum History {
    /// The writer overwrites this reader's oldest unread sample; never blocks.
    KeepLast(u32),
    /// The writer blocks up to its `max_blocking_time` for room, then fails with a timeout.
    /// The number is the queue's capacity (DDS `max_samples` resource limit).
    KeepAll(u32),
}

impl History {
    pub fn depth(self) -> u32 {
        match self {
            History::KeepLast(depth) | History::KeepAll(depth) => depth,
        }
    }
}

/// Why a writer's endpoint refused a reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RejectReason {
    /// No writer with that key lives at the endpoint (any more).
    UnknownWriter,
    /// The writer exists but speaks the other transport.
    WrongKind,
    /// The hello or its descriptors were malformed, or the depth is 0 or too large.
    BadHello,
    /// The writer could not create the channel (out of memory, descriptor limit).
    Resources,
}

impl RejectReason {
    fn code(self) -> u32 {
        match self {
            RejectReason::UnknownWriter => 1,
            RejectReason::WrongKind => 2,
            RejectReason::BadHello => 3,
            RejectReason::Resources => 4,
        }
    }

    fn from_code(code: u32) -> Option<Self> {
        Some(match code {
            1 => RejectReason::UnknownWriter,
            2 => RejectReason::WrongKind,
            3 => RejectReason::BadHello,
            4 => RejectReason::Resources,
            _ => return None,
        })
    }
}

/// Upper bound of a reader's queue depth and held-sample quota: keeps channel sizes sane.
pub(crate) const MAX_DEPTH: u32 = 1 << 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hello {
    pub(crate) kind: Kind,
    pub(crate) history: History,
    pub(crate) max_held: u32,
    pub(crate) key: WriterKey,
    /// The reader wants the samples the writer keeps for late joiners before anything newer.
    pub(crate) wants_kept: bool,
}

/// Hello flag: [`Hello::wants_kept`].
const WANTS_KEPT: u8 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Message {
    Hello(Hello),
    Welcome {
        sub_capacity: u32,
        completion_capacity: u32,
        channel_len: u64,
    },
    Reject(RejectReason),
    Segment {
        id: u32,
        chunk_count: u32,
        chunk_size: u64,
    },
    Retire {
        id: u32,
    },
}

/// The longest message: `Hello`.
pub(crate) const MAX_LEN: usize = 32;

impl Message {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(MAX_LEN);
        match *self {
            Message::Hello(hello) => {
                out.extend_from_slice(b"RLH1");
                out.push(hello.kind as u8);
                let (history, depth) = match hello.history {
                    History::KeepLast(depth) => (1u8, depth),
                    History::KeepAll(depth) => (2u8, depth),
                };
                out.push(history);
                out.push(if hello.wants_kept { WANTS_KEPT } else { 0 });
                out.push(0);
                out.extend_from_slice(&depth.to_le_bytes());
                out.extend_from_slice(&hello.max_held.to_le_bytes());
                out.extend_from_slice(&hello.key.0);
            }
            Message::Welcome {
                sub_capacity,
                completion_capacity,
                channel_len,
            } => {
                out.extend_from_slice(b"RLW1");
                out.extend_from_slice(&sub_capacity.to_le_bytes());
                out.extend_from_slice(&completion_capacity.to_le_bytes());
                out.extend_from_slice(&channel_len.to_le_bytes());
            }
            Message::Reject(reason) => {
                out.extend_from_slice(b"RLR1");
                out.extend_from_slice(&reason.code().to_le_bytes());
            }
            Message::Segment {
                id,
                chunk_count,
                chunk_size,
            } => {
                out.extend_from_slice(b"RLS1");
                out.extend_from_slice(&id.to_le_bytes());
                out.extend_from_slice(&chunk_count.to_le_bytes());
                out.extend_from_slice(&chunk_size.to_le_bytes());
            }
            Message::Retire { id } => {
                out.extend_from_slice(b"RLX1");
                out.extend_from_slice(&id.to_le_bytes());
            }
        }
        out
    }

    /// Parses one packet; `None` if it is not exactly one well-formed message.
    pub(crate) fn decode(bytes: &[u8]) -> Option<Message> {
        let (tag, body) = bytes.split_first_chunk::<4>()?;
        let u32_at = |at: usize| -> Option<u32> {
            Some(u32::from_le_bytes(body.get(at..at + 4)?.try_into().ok()?))
        };
        let u64_at = |at: usize| -> Option<u64> {
            Some(u64::from_le_bytes(body.get(at..at + 8)?.try_into().ok()?))
        };
        let message = match (tag, body.len()) {
            (b"RLH1", 28) => {
                let kind = match body.first()? {
                    1 => Kind::SharedMemory,
                    2 => Kind::UnixSocket,
                    _ => return None,
                };
                let depth = u32_at(4)?;
                let history = match body.get(1)? {
                    1 => History::KeepLast(depth),
                    2 => History::KeepAll(depth),
                    _ => return None,
                };
                let wants_kept = match body.get(2..4)? {
                    [0, 0] => false,
                    [WANTS_KEPT, 0] => true,
                    _ => return None,
                };
                let key = WriterKey(body.get(12..28)?.try_into().ok()?);
                Message::Hello(Hello {
                    kind,
                    history,
                    max_held: u32_at(8)?,
                    key,
                    wants_kept,
                })
            }
            (b"RLW1", 16) => Message::Welcome {
                sub_capacity: u32_at(0)?,
                completion_capacity: u32_at(4)?,
                channel_len: u64_at(8)?,
            },
            (b"RLR1", 4) => Message::Reject(RejectReason::from_code(u32_at(0)?)?),
            (b"RLS1", 16) => Message::Segment {
                id: u32_at(0)?,
                chunk_count: u32_at(4)?,
                chunk_size: u64_at(8)?,
            },
            (b"RLX1", 4) => Message::Retire { id: u32_at(0)? },
            _ => return None,
        };
        Some(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_round_trips() {
        let messages = [
            Message::Hello(Hello {
                kind: Kind::SharedMemory,
                history: History::KeepAll(7),
                max_held: 3,
                key: WriterKey::from(0x0102_0304_u128),
                wants_kept: true,
            }),
            Message::Hello(Hello {
                kind: Kind::UnixSocket,
                history: History::KeepLast(1),
                max_held: 0,
                key: WriterKey([9; 16]),
                wants_kept: false,
            }),
            Message::Welcome {
                sub_capacity: 4,
                completion_capacity: 9,
                channel_len: 4096,
            },
            Message::Reject(RejectReason::WrongKind),
            Message::Segment {
                id: 5,
                chunk_count: 32,
                chunk_size: 1 << 30,
            },
            Message::Retire { id: u32::MAX },
        ];
        for message in messages {
            let bytes = message.encode();
            assert!(bytes.len() <= MAX_LEN);
            assert_eq!(Message::decode(&bytes), Some(message));
        }
    }

    #[test]
    fn truncated_padded_and_unknown_packets_are_rejected() {
        let hello = Message::Hello(Hello {
            kind: Kind::SharedMemory,
            history: History::KeepLast(2),
            max_held: 1,
            key: WriterKey([1; 16]),
            wants_kept: false,
        })
        .encode();
        for cut in 0..hello.len() {
            assert_eq!(Message::decode(&hello[..cut]), None, "cut at {cut}");
        }
        let mut padded = hello.clone();
        padded.push(0);
        assert_eq!(Message::decode(&padded), None);
        let mut bad_kind = hello.clone();
        bad_kind[4] = 3;
        assert_eq!(Message::decode(&bad_kind), None);
        let mut bad_history = hello.clone();
        bad_history[5] = 0;
        assert_eq!(Message::decode(&bad_history), None);
        for (at, value) in [(6, 2), (6, 0x81), (7, 1)] {
            let mut unknown_flag = hello.clone();
            unknown_flag[at] = value;
            assert_eq!(
                Message::decode(&unknown_flag),
                None,
                "byte {at} = {value:#x}"
            );
        }
        assert_eq!(Message::decode(b"RLR1\x09\0\0\0"), None);
        assert_eq!(Message::decode(b"XXXX\0\0\0\0"), None);
    }
}
