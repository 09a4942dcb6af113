//! Building outgoing RTPS messages: a header, then submessages, split into datagrams of a
//! bounded size.
//!
//! The builder tracks the receiver state its own output creates. Callers say which
//! destination and source timestamp the next submessages need ([`MessageBuilder::set_destination`],
//! [`MessageBuilder::set_timestamp`]); the builder inserts INFO_DST / INFO_TS only when that
//! differs from what the receiver will already have, and repeats them at the start of every
//! new datagram, because receiver state does not survive a message boundary
//! (RTPS 2.5 §8.3.4).

use roslite_cdr::Endianness;

use crate::types::{GuidPrefix, Time};
use crate::wire::{HeaderRepr, InfoDstRepr, InfoTsRepr, Submessage, SubmessageHeader};
use crate::BuildError;

/// Accumulates submessages into datagrams of at most `max_size` bytes.
#[derive(Clone, Debug)]
pub struct MessageBuilder {
    header: HeaderRepr,
    endianness: Endianness,
    max_size: usize,
    /// Datagram in progress; empty when none is open.
    current: Vec<u8>,
    /// The last submessage of `current` has `octetsToNextHeader = 0` ("to the end"), so
    /// nothing may follow it.
    sealed: bool,
    done: Vec<Vec<u8>>,
    want_dst: GuidPrefix,
    want_ts: Option<Time>,
    cur_dst: GuidPrefix,
    cur_ts: Option<Time>,
}

impl MessageBuilder {
    /// Largest UDP payload over IPv4 (65535 − 8 − 20).
    pub const UDP_MAX_PAYLOAD: usize = 65_507;

    /// A builder writing little-endian submessages (the order both reference vendors use).
    pub fn new(header: HeaderRepr, max_size: usize) -> Self {
        MessageBuilder {
            header,
            endianness: Endianness::Little,
            max_size,
            current: Vec::new(),
            sealed: false,
            done: Vec::new(),
            want_dst: GuidPrefix::UNKNOWN,
            want_ts: None,
            cur_dst: GuidPrefix::UNKNOWN,
            cur_ts: None,
        }
    }

    pub fn with_endianness(mut self, endianness: Endianness) -> Self {
        self.endianness = endianness;
        self
    }

    /// Addresses the following submessages to one participant; `GuidPrefix::UNKNOWN` to every
    /// participant that receives the datagram.
    pub fn set_destination(&mut self, prefix: GuidPrefix) {
        self.want_dst = prefix;
    }

    /// Gives the following submessages a source timestamp (`None`: none).
    pub fn set_timestamp(&mut self, timestamp: Option<Time>) {
        self.want_ts = timestamp;
    }

    /// Appends `sm`, preceded by the INFO_DST/INFO_TS it needs, starting a new datagram when
    /// the current one would exceed the maximum size.
    ///
    /// # Errors
    /// [`BuildError::TooLarge`] if the submessage cannot fit even in an empty datagram; send
    /// large samples as DATA_FRAG. Nothing is appended in that case.
    pub fn push(&mut self, sm: &Submessage<'_>) -> Result<(), BuildError> {
        let sm_len = sm.buffer_len();
        let fits_current = !self.current.is_empty()
            && !self.sealed
            && self
                .current
                .len()
                .saturating_add(self.context_len(false))
                .saturating_add(sm_len)
                <= self.max_size;
        if !fits_current {
            let needed = HeaderRepr::LEN
                .saturating_add(self.context_len(true))
                .saturating_add(sm_len);
            if needed > self.max_size {
                return Err(BuildError::TooLarge {
                    needed,
                    max: self.max_size,
                });
            }
            self.flush();
            self.header.emit(&mut self.current);
        }
        self.emit_context();
        sm.emit(&mut self.current, self.endianness);
        self.sealed = sm_len.saturating_sub(SubmessageHeader::LEN) > usize::from(u16::MAX);
        Ok(())
    }

    /// Whether no submessage has been added since the last [`MessageBuilder::finish`].
    pub fn is_empty(&self) -> bool {
        self.current.is_empty() && self.done.is_empty()
    }

    /// Closes the datagram in progress and returns every datagram built so far.
    pub fn finish(&mut self) -> Vec<Vec<u8>> {
        self.flush();
        std::mem::take(&mut self.done)
    }

    fn flush(&mut self) {
        if !self.current.is_empty() {
            self.done.push(std::mem::take(&mut self.current));
        }
        self.sealed = false;
        self.cur_dst = GuidPrefix::UNKNOWN;
        self.cur_ts = None;
    }

    /// Bytes of INFO_DST/INFO_TS needed before the next submessage, in the current datagram
    /// or (`fresh`) in a new one whose receiver state starts from the defaults.
    fn context_len(&self, fresh: bool) -> usize {
        let (dst, ts) = if fresh {
            (GuidPrefix::UNKNOWN, None)
        } else {
            (self.cur_dst, self.cur_ts)
        };
        let mut len = 0;
        if self.want_dst != dst {
            len = InfoDstRepr {
                guid_prefix: self.want_dst,
            }
            .buffer_len();
        }
        if self.want_ts != ts {
            len = InfoTsRepr {
                timestamp: self.want_ts,
            }
            .buffer_len()
            .saturating_add(len);
        }
        len
    }

    fn emit_context(&mut self) {
        if self.want_dst != self.cur_dst {
            InfoDstRepr {
                guid_prefix: self.want_dst,
            }
            .emit(&mut self.current, self.endianness);
            self.cur_dst = self.want_dst;
        }
        if self.want_ts != self.cur_ts {
            InfoTsRepr {
                timestamp: self.want_ts,
            }
            .emit(&mut self.current, self.endianness);
            self.cur_ts = self.want_ts;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::receiver::{parse_message, ReceiveStats};
    use crate::types::{Count, EntityId, SequenceNumber};
    use crate::wire::{DataRepr, HeartbeatRepr, PayloadKind, SerializedPayload};

    fn heartbeat(n: i64) -> Submessage<'static> {
        Submessage::Heartbeat(HeartbeatRepr {
            reader_id: EntityId::UNKNOWN,
            writer_id: EntityId::SEDP_PUBLICATIONS_ANNOUNCER,
            first_sn: SequenceNumber(1),
            last_sn: SequenceNumber(n),
            count: Count(1),
            final_flag: false,
            liveliness_flag: false,
        })
    }

    #[test]
    fn splits_and_repeats_context() {
        let header = HeaderRepr::new(GuidPrefix([7; 12]));
        // header 20 + INFO_DST 16 + INFO_TS 12 + 2 heartbeats of 32 = 112.
        let mut b = MessageBuilder::new(header, 112);
        b.set_destination(GuidPrefix([9; 12]));
        b.set_timestamp(Some(Time {
            seconds: 5,
            fraction: 0,
        }));
        for n in 1..=5 {
            b.push(&heartbeat(n)).unwrap();
        }
        let datagrams = b.finish();
        assert_eq!(datagrams.len(), 3);
        assert!(b.is_empty());
        let mut stats = ReceiveStats::default();
        let mut seen = 0;
        for d in &datagrams {
            assert!(d.len() <= 112);
            parse_message(d, &mut stats, |rx| {
                if let Submessage::Heartbeat(_) = rx.submessage {
                    assert_eq!(rx.receiver.dest_guid_prefix, GuidPrefix([9; 12]));
                    assert_eq!(
                        rx.receiver.timestamp,
                        Some(Time {
                            seconds: 5,
                            fraction: 0
                        })
                    );
                    seen += 1;
                }
            })
            .unwrap();
        }
        assert_eq!(seen, 5);
        assert_eq!(stats.malformed(), 0);
    }

    #[test]
    fn rejects_oversized_and_seals_unbounded() {
        let header = HeaderRepr::new(GuidPrefix([7; 12]));
        let mut b = MessageBuilder::new(header, 40);
        assert_eq!(
            b.push(&heartbeat(1)),
            Err(BuildError::TooLarge {
                needed: 52,
                max: 40
            })
        );
        assert!(b.is_empty());

        let payload = vec![0u8; 70_000];
        let data = Submessage::Data(DataRepr {
            extra_flags: 0,
            reader_id: EntityId::UNKNOWN,
            writer_id: EntityId::new([0, 0, 1], 0x03),
            writer_sn: SequenceNumber(1),
            inline_qos: None,
            payload: Some(SerializedPayload {
                kind: PayloadKind::Data,
                bytes: &payload,
            }),
            non_standard_payload: false,
        });
        let mut b = MessageBuilder::new(header, 200_000);
        b.push(&data).unwrap();
        b.push(&heartbeat(1)).unwrap();
        let datagrams = b.finish();
        assert_eq!(datagrams.len(), 2, "a >64 KiB body must end its message");
        let mut stats = ReceiveStats::default();
        let mut sizes = Vec::new();
        parse_message(&datagrams[0], &mut stats, |rx| {
            if let Submessage::Data(d) = rx.submessage {
                sizes.push(d.payload.map(|p| p.bytes.len()));
            }
        })
        .unwrap();
        assert_eq!(sizes, vec![Some(70_000)]);
    }
}
