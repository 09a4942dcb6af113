//! Building outgoing RTPS messages: a header, then submessages, split into datagrams of a
//! bounded size.
//!
//! The builder tracks the receiver state its own output creates. Callers say which
//! destination and source timestamp the next submessages need ([`MessageBuilder::set_destination`],
//! [`MessageBuilder::set_timestamp`]); the builder inserts INFO_DST / INFO_TS only when that
//! differs from what the receiver will already have, and repeats them at the start of every
//! new datagram, because receiver state does not survive a message boundary
//! (RTPS 2.5 §8.3.4).

use std::ops::Range;
use std::sync::Arc;

use roslite_cdr::Endianness;

use crate::error::BuildError;
use crate::types::{GuidPrefix, Time};
use crate::wire::{HeaderRepr, InfoDstRepr, InfoTsRepr, Submessage, SubmessageHeader};

/// The bytes a datagram ends with when they stay where the writer's history keeps them: the
/// fragment data of a DATA_FRAG (a range of the sample's payload) and the zero padding after
/// it. Sending them together with the datagram's head (one `sendmsg` with several buffers)
/// saves copying every fragment into the datagram, twice as many bytes as the kernel copies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PayloadTail {
    payload: Arc<[u8]>,
    range: Range<usize>,
    padding: usize,
}

impl PayloadTail {
    const ZEROS: [u8; 3] = [0; 3];

    /// `None` unless `range` lies inside `payload` and `padding` is at most 3 bytes.
    pub(crate) fn new(payload: Arc<[u8]>, range: Range<usize>, padding: usize) -> Option<Self> {
        (range.start <= range.end && range.end <= payload.len() && padding <= 3).then_some(Self {
            payload,
            range,
            padding,
        })
    }

    /// The payload bytes.
    pub fn data(&self) -> &[u8] {
        self.payload.get(self.range.clone()).unwrap_or_default()
    }

    /// The zero bytes that pad the submessage to a multiple of 4 after [`Self::data`].
    pub fn padding(&self) -> &'static [u8] {
        Self::ZEROS.get(..self.padding).unwrap_or_default()
    }

    /// Bytes of data and padding.
    pub fn len(&self) -> usize {
        self.range.len().saturating_add(self.padding)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Bytes for the wire (a submessage or a whole datagram): `head`, then the bytes of `tail`, if
/// any, which stay where the writer's history keeps them until sent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WireBytes {
    pub head: Vec<u8>,
    pub tail: Option<PayloadTail>,
}

impl WireBytes {
    /// Bytes that are all in `head`.
    pub fn whole(head: Vec<u8>) -> Self {
        Self { head, tail: None }
    }

    /// Length on the wire.
    pub fn len(&self) -> usize {
        self.head
            .len()
            .saturating_add(self.tail.as_ref().map_or(0, PayloadTail::len))
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Everything in one buffer, as it goes on the wire: `head` itself without a tail.
    pub fn into_vec(self) -> Vec<u8> {
        match self.tail {
            None => self.head,
            Some(_) => self.to_vec(),
        }
    }

    /// Everything in one buffer (a copy), as it goes on the wire.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len());
        for part in self.parts() {
            out.extend_from_slice(part);
        }
        out
    }

    /// The bytes as three buffers to send in order (one `sendmsg`): head, tail data, tail
    /// padding (the last two empty without a tail).
    pub fn parts(&self) -> [&[u8]; 3] {
        match &self.tail {
            None => [&self.head, &[], &[]],
            Some(tail) => [&self.head, tail.data(), tail.padding()],
        }
    }
}

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
    done: Vec<WireBytes>,
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
        self.make_room(sm_len)?;
        sm.emit(&mut self.current, self.endianness);
        self.sealed = sm_len.saturating_sub(SubmessageHeader::LEN) > usize::from(u16::MAX);
        Ok(())
    }

    /// Appends a submessage given as its emitted `head` (little endian, as this builder
    /// writes) followed by `tail`, which ends the datagram: the tail is not copied into it but
    /// sent from where it is ([`WireBytes::parts`]). Preceded by the INFO_DST/INFO_TS it
    /// needs, as [`Self::push`].
    ///
    /// # Errors
    /// As [`Self::push`].
    pub fn push_with_tail(&mut self, head: &[u8], tail: PayloadTail) -> Result<(), BuildError> {
        let sm_len = head.len().saturating_add(tail.len());
        self.make_room(sm_len)?;
        self.current.extend_from_slice(head);
        self.done.push(WireBytes {
            head: std::mem::take(&mut self.current),
            tail: Some(tail),
        });
        self.flush();
        Ok(())
    }

    /// Makes the datagram in progress ready for a submessage of `sm_len` bytes: starts a new
    /// one when it would not fit, then writes the INFO_DST/INFO_TS the submessage needs.
    fn make_room(&mut self, sm_len: usize) -> Result<(), BuildError> {
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
        Ok(())
    }

    /// Whether no submessage has been added since the last [`MessageBuilder::finish`].
    pub fn is_empty(&self) -> bool {
        self.current.is_empty() && self.done.is_empty()
    }

    /// Closes the datagram in progress and returns every datagram built so far, each in one
    /// buffer.
    pub fn finish(&mut self) -> Vec<Vec<u8>> {
        self.finish_datagrams()
            .into_iter()
            .map(WireBytes::into_vec)
            .collect()
    }

    /// As [`Self::finish`], with tails left where they are.
    pub fn finish_datagrams(&mut self) -> Vec<WireBytes> {
        self.flush();
        std::mem::take(&mut self.done)
    }

    fn flush(&mut self) {
        if !self.current.is_empty() {
            self.done
                .push(WireBytes::whole(std::mem::take(&mut self.current)));
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
    fn a_tail_goes_on_the_wire_as_if_copied_and_ends_its_datagram() {
        use crate::types::FragmentNumber;
        use crate::wire::DataFragRepr;
        let header = HeaderRepr::new(GuidPrefix([7; 12]));
        // Sample of 2 fragments of 1000 bytes, the second 999 bytes long (padding needed).
        let payload: Arc<[u8]> = (0..1999u32).map(|i| (i % 251) as u8).collect();
        let frag = |first: u32, data| DataFragRepr {
            extra_flags: 0,
            reader_id: EntityId::UNKNOWN,
            writer_id: EntityId::SEDP_PUBLICATIONS_ANNOUNCER,
            writer_sn: SequenceNumber(3),
            fragment_starting_num: FragmentNumber(first),
            fragments_in_submessage: 1,
            fragment_size: 1000,
            sample_size: 1999,
            inline_qos: None,
            key: false,
            non_standard_payload: false,
            data,
        };
        let ts = Some(Time {
            seconds: 5,
            fraction: 0,
        });
        let build = |tails: bool| {
            let mut b = MessageBuilder::new(header, 4000);
            b.set_destination(GuidPrefix([9; 12]));
            b.set_timestamp(ts);
            for (first, range) in [(1, 0..1000), (2, 1000..1999)] {
                let f = frag(first, &payload[range.clone()]);
                if tails {
                    let mut head = Vec::new();
                    let padding = f.emit_head(&mut head, Endianness::Little);
                    let tail = PayloadTail::new(Arc::clone(&payload), range, padding).unwrap();
                    b.push_with_tail(&head, tail).unwrap();
                } else {
                    b.push(&Submessage::DataFrag(f)).unwrap();
                }
                b.push(&heartbeat(3)).unwrap();
            }
            b.finish_datagrams()
        };
        let copied = build(false);
        let tailed = build(true);
        assert_eq!(
            copied.len(),
            1,
            "without tails everything fits one datagram"
        );
        // Each tail ends its datagram; the heartbeat after it opens the next, with INFO_DST
        // and INFO_TS repeated.
        assert_eq!(tailed.len(), 3);
        assert_eq!(tailed[1].tail.as_ref().unwrap().padding(), &[0]);
        let mut stats = ReceiveStats::default();
        let mut frags = Vec::new();
        for d in &tailed {
            parse_message(&d.to_vec(), &mut stats, |rx| {
                if let Submessage::DataFrag(_) | Submessage::Heartbeat(_) = rx.submessage {
                    assert_eq!(rx.receiver.dest_guid_prefix, GuidPrefix([9; 12]));
                    assert_eq!(rx.receiver.timestamp, ts);
                }
                if let Submessage::DataFrag(f) = rx.submessage {
                    frags.push(f.data.to_vec());
                }
            })
            .unwrap();
        }
        assert_eq!(stats.malformed(), 0);
        assert_eq!(frags.concat(), payload.to_vec());
        // The same submessage bytes as when copied: the whole stream minus the repeated
        // RTPS header and context at the start of each datagram.
        let body = |d: &WireBytes| d.to_vec()[HeaderRepr::LEN..].to_vec();
        let copied_body = body(&copied[0]);
        let context = 16 + 12;
        let tailed_body: Vec<u8> = tailed
            .iter()
            .enumerate()
            .flat_map(|(i, d)| body(d)[if i == 0 { 0 } else { context }..].to_vec())
            .collect();
        assert_eq!(tailed_body, copied_body);
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
