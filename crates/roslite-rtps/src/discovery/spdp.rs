//! SPDP, the Simple Participant Discovery Protocol (RTPS 2.5 §8.5.3).
//!
//! Each participant periodically sends its `SPDPdiscoveredParticipantData` as a best-effort
//! DATA(p) from the builtin writer `ENTITYID_SPDP_BUILTIN_PARTICIPANT_ANNOUNCER` (0x000100c2)
//! to a list of locators (the SPDP multicast group, unicast probes, static peers, and the
//! metatraffic locators of every participant already known). Receivers keep a proxy per
//! remote participant and drop it when its lease runs out without any message from it
//! (§8.5.3.3: "the participant ... is considered as having left the domain if no message is
//! received within the leaseDuration"), or at once when it disposes its DATA(p).
//!
//! This module holds the pieces that do not need the participant's tables: the announcer
//! (what to send and when), classification of a received DATA(p), and the proxy type
//! [`RemoteParticipant`]. [`crate::participant`] owns the table, the caps and the events.

use std::time::Duration as StdDuration;

use roslite_cdr::Endianness;

use super::matching::PeerHost;
use super::{ParticipantData, SenderInfo};
use crate::error::EmitError;
use crate::instant::Instant;
use crate::parameter_list::{pid, ParameterList, ParameterListWriter};
use crate::receiver::ReceiverState;
use crate::types::{
    BuiltinEndpointSet, Duration, EntityId, Guid, GuidPrefix, Locator, SequenceNumber, VendorId,
};
use crate::wire::{DataRepr, PayloadKind, SerializedPayload};

/// `PID_STATUS_INFO` flags (RTPS 2.5 §9.6.3.9): the instance was disposed.
pub const STATUS_INFO_DISPOSED: u32 = 0x1;
/// The instance was unregistered.
pub const STATUS_INFO_UNREGISTERED: u32 = 0x2;

/// The builtin endpoints this implementation runs: SPDP, the SEDP publications and
/// subscriptions announcers and detectors, and the participant-message (WLP, RTPS 2.5
/// §8.4.13) writer and reader, bits 10 and 11, as Fast DDS and Cyclone announce them
/// (docs/ros2-interop.md §11). A peer only matches builtin endpoints we advertise.
pub const BUILTIN_ENDPOINTS: BuiltinEndpointSet = BuiltinEndpointSet::MINIMAL;

/// Why a received SPDP DATA was not used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpdpRejection {
    /// The parameter list or a value in it is invalid, or the DATA carries neither a
    /// payload nor a disposal.
    Malformed,
    /// The announced GUID prefix differs from the message's source prefix (a relayed or
    /// spoofed announcement).
    PrefixMismatch,
    /// Our own announcement (multicast loopback, or a peer reflecting it).
    Own,
    /// `PID_DOMAIN_ID` names another domain, or `PID_DOMAIN_TAG` another tag.
    ForeignDomain,
}

/// What a valid SPDP DATA says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpdpMessage {
    /// The participant is alive; its current data.
    Announce(Box<ParticipantData>),
    /// The participant is leaving (DATA with `PID_STATUS_INFO` disposed or unregistered).
    Dispose(GuidPrefix),
}

/// Checks received SPDP data against the local participant.
#[derive(Clone, Debug)]
pub struct SpdpFilter {
    pub own: GuidPrefix,
    pub domain_id: u32,
    pub domain_tag: String,
}

impl SpdpFilter {
    /// Classifies a DATA from the SPDP announcer.
    ///
    /// # Errors
    /// The reason the data must be ignored (the caller counts it).
    pub fn classify(
        &self,
        data: &DataRepr<'_>,
        rx: &ReceiverState,
    ) -> Result<SpdpMessage, SpdpRejection> {
        let source = rx.source_guid_prefix;
        if source == self.own {
            return Err(SpdpRejection::Own);
        }
        let status = match data.inline_qos {
            Some(qos) => qos.status_info().map_err(|_| SpdpRejection::Malformed)?,
            None => None,
        };
        if status.is_some_and(|s| s & (STATUS_INFO_DISPOSED | STATUS_INFO_UNREGISTERED) != 0) {
            // RTPS 2.5 §8.5.3.2 / §9.6.3.9: the key is the participant GUID, carried as
            // PID_KEY_HASH; a disposal without one can only concern the sender.
            let key = match data.inline_qos {
                Some(qos) => qos.key_hash().map_err(|_| SpdpRejection::Malformed)?,
                None => None,
            };
            let prefix = key.map_or(source, |k| Guid::from_bytes(k).prefix);
            if prefix != source {
                return Err(SpdpRejection::PrefixMismatch);
            }
            return Ok(SpdpMessage::Dispose(prefix));
        }
        let payload = match data.payload {
            Some(SerializedPayload {
                kind: PayloadKind::Data,
                bytes,
            }) => bytes,
            _ => return Err(SpdpRejection::Malformed),
        };
        let pd = ParticipantData::from_payload(payload, SenderInfo::from_receiver(rx))
            .map_err(|_| SpdpRejection::Malformed)?;
        if pd.guid.prefix == self.own {
            return Err(SpdpRejection::Own);
        }
        if pd.guid.prefix != source {
            return Err(SpdpRejection::PrefixMismatch);
        }
        // Without PID_DOMAIN_ID the domain is implied by the port the datagram arrived on.
        if pd.domain_id.is_some_and(|d| d != self.domain_id) || pd.domain_tag != self.domain_tag {
            return Err(SpdpRejection::ForeignDomain);
        }
        Ok(SpdpMessage::Announce(Box::new(pd)))
    }
}

/// The SPDP writer: a stateless best-effort writer that resends one sample.
///
/// RTPS 2.5 §8.5.3.2 models it as a `StatelessWriter` with a `ReaderLocator` per
/// destination and `resendDataPeriod`; the sample only changes (new sequence number) when
/// the participant's data does.
#[derive(Clone, Debug)]
pub struct SpdpAnnouncer {
    payload: Vec<u8>,
    sn: SequenceNumber,
    period: StdDuration,
    next: Instant,
    /// Announcements still to send at the fast initial rate.
    initial_left: u32,
    initial_period: StdDuration,
}

impl SpdpAnnouncer {
    /// An announcer of `data` whose first announcement is due at `now`; the first
    /// `initial_count` announcements are `initial_period` apart, later ones `period`.
    ///
    /// # Errors
    /// [`EmitError`] if `data` cannot be encoded (a name with NUL, oversize user data).
    pub fn new(
        data: &ParticipantData,
        now: Instant,
        period: StdDuration,
        initial_count: u32,
        initial_period: StdDuration,
    ) -> Result<Self, EmitError> {
        Ok(SpdpAnnouncer {
            payload: data.to_payload(Endianness::Little)?,
            sn: SequenceNumber::FIRST,
            period,
            next: now,
            initial_left: initial_count,
            initial_period,
        })
    }

    /// Replaces the announced data (a new sequence number) and makes an announcement due.
    ///
    /// # Errors
    /// As [`SpdpAnnouncer::new`]; the old data stays in place.
    pub fn update(&mut self, data: &ParticipantData, now: Instant) -> Result<(), EmitError> {
        self.payload = data.to_payload(Endianness::Little)?;
        self.sn = self.sn.checked_add(1).unwrap_or(self.sn);
        self.next = now;
        Ok(())
    }

    /// When the next periodic announcement is due.
    pub fn deadline(&self) -> Instant {
        self.next
    }

    /// Whether a periodic announcement is due; if so, schedules the following one.
    pub fn due(&mut self, now: Instant) -> bool {
        if now < self.next {
            return false;
        }
        let step = if self.initial_left > 0 {
            self.initial_left = self.initial_left.saturating_sub(1);
            self.initial_period
        } else {
            self.period
        };
        self.next = now.saturating_add(step);
        true
    }

    /// The DATA(p) submessage, addressed to the SPDP detector.
    pub fn data(&self) -> DataRepr<'_> {
        DataRepr {
            extra_flags: 0,
            reader_id: EntityId::SPDP_PARTICIPANT_DETECTOR,
            writer_id: EntityId::SPDP_PARTICIPANT_ANNOUNCER,
            writer_sn: self.sn,
            inline_qos: None,
            payload: Some(SerializedPayload {
                kind: PayloadKind::Data,
                bytes: &self.payload,
            }),
            non_standard_payload: false,
        }
    }

    /// The sequence number a disposal uses (one after the last announcement).
    pub fn dispose_sn(&self) -> SequenceNumber {
        self.sn.checked_add(1).unwrap_or(self.sn)
    }
}

/// Inline QoS of a disposal of the instance `key`: `PID_KEY_HASH` + `PID_STATUS_INFO`
/// (disposed | unregistered), little-endian, with sentinel. Both vendors announce endpoint
/// deletion this way (docs/ros2-interop.md §12) and accept it for participants.
pub fn disposal_inline_qos(key: Guid) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut w = ParameterListWriter::new(&mut buf, Endianness::Little);
    // Fixed-size values: cannot exceed a parameter's length limit.
    let _ = w.raw(pid::KEY_HASH, &key.to_bytes());
    let _ = w.raw(
        pid::STATUS_INFO,
        &(STATUS_INFO_DISPOSED | STATUS_INFO_UNREGISTERED).to_be_bytes(),
    );
    w.finish();
    buf
}

/// A DATA submessage without payload that disposes `key`, from `writer_id`.
///
/// `inline_qos` must be the bytes of [`disposal_inline_qos`]; returns `None` if they do not
/// parse (never for those bytes).
pub fn disposal_data<'a>(
    writer_id: EntityId,
    reader_id: EntityId,
    sn: SequenceNumber,
    inline_qos: &'a [u8],
) -> Option<DataRepr<'a>> {
    Some(DataRepr {
        extra_flags: 0,
        reader_id,
        writer_id,
        writer_sn: sn,
        inline_qos: Some(ParameterList::parse(inline_qos, Endianness::Little).ok()?),
        payload: None,
        non_standard_payload: false,
    })
}

/// A remote participant as known from its SPDP announcements: `SPDPdiscoveredParticipantData`
/// plus the lease bookkeeping of RTPS 2.5 §8.5.3.3.
#[derive(Clone, Debug)]
pub struct RemoteParticipant {
    pub(crate) data: ParticipantData,
    pub(crate) last_seen: Instant,
    pub(crate) discovered_at: Instant,
    pub(crate) source: Option<Locator>,
    pub(crate) host: PeerHost,
    /// It sent us something other than SPDP, so it knows us (and is not merely a name in a
    /// possibly spoofed announcement).
    pub(crate) verified: bool,
    /// When we last answered its SPDP with ours directly.
    pub(crate) last_reply: Option<Instant>,
    /// The UDP source of the SPDP announcement that made it known (later announcements do
    /// not change it).
    pub(crate) discovered_from: Option<Locator>,
    /// Bytes of the datagrams it sent us, and bytes we sent to locators it announced that
    /// have not shown to be live (docs/robustness.md §1, amplification).
    pub(crate) received_bytes: u64,
    pub(crate) sent_unvalidated: u64,
    /// When its SPDP announcement last arrived over multicast: while that keeps happening it
    /// shares our multicast group, so our periodic announcements reach it there without a
    /// unicast copy.
    pub(crate) multicast_heard: Option<Instant>,
}

impl RemoteParticipant {
    /// The participant GUID (`<prefix>:000001c1`).
    pub fn guid(&self) -> Guid {
        self.data.guid
    }

    pub fn guid_prefix(&self) -> GuidPrefix {
        self.data.guid.prefix
    }

    pub fn vendor_id(&self) -> VendorId {
        self.data.vendor_id
    }

    /// Everything it announced: locators, builtin endpoints, USER_DATA (`enclave=/;`),
    /// ENTITY_NAME, properties.
    pub fn data(&self) -> &ParticipantData {
        &self.data
    }

    pub fn user_data(&self) -> &[u8] {
        &self.data.user_data
    }

    pub fn lease_duration(&self) -> Duration {
        self.data.lease_duration
    }

    /// When the lease runs out unless another message arrives; `None` for an infinite lease.
    pub fn lease_expiry(&self) -> Option<Instant> {
        let lease = self.data.lease_duration.to_std()?;
        self.last_seen.checked_add(lease)
    }

    /// The last time any valid message from it arrived.
    pub fn last_seen(&self) -> Instant {
        self.last_seen
    }

    pub fn discovered_at(&self) -> Instant {
        self.discovered_at
    }

    /// The UDP source of its last SPDP announcement, if the transport told us.
    pub fn source(&self) -> Option<Locator> {
        self.source
    }

    /// Whether it runs on our host, judged from that source address.
    pub fn host(&self) -> PeerHost {
        self.host
    }

    /// Whether it has sent anything besides SPDP (it has discovered us).
    pub fn is_verified(&self) -> bool {
        self.verified
    }

    /// Whether a datagram from `source` can come from this participant (docs/robustness.md
    /// §1): from the address it was discovered from or one of the unicast addresses it
    /// announced, compared by IP (peers may send from other ports than they receive on).
    /// Unknown sources, and peers on this host (any of whose local addresses may be the
    /// source), always can.
    pub fn may_send_from(&self, source: Option<&Locator>) -> bool {
        let Some(ip) = source.and_then(|s| s.to_socket_addr()).map(|a| a.ip()) else {
            return true;
        };
        if self.host == PeerHost::Local {
            return true;
        }
        let d = &self.data;
        self.discovered_from
            .iter()
            .chain(&d.metatraffic_unicast_locators)
            .chain(&d.default_unicast_locators)
            .filter_map(|l| l.to_socket_addr())
            .any(|a| a.ip() == ip)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ProtocolVersion;
    use crate::wire::HeaderRepr;

    fn rx(prefix: GuidPrefix) -> ReceiverState {
        ReceiverState::new(&HeaderRepr {
            version: ProtocolVersion::V2_2,
            vendor_id: VendorId::EPROSIMA,
            guid_prefix: prefix,
        })
    }

    fn filter() -> SpdpFilter {
        SpdpFilter {
            own: GuidPrefix([1; 12]),
            domain_id: 0,
            domain_tag: String::new(),
        }
    }

    #[test]
    fn classifies_announcements() {
        let remote = GuidPrefix([2; 12]);
        let mut pd = ParticipantData::new(remote);
        pd.domain_id = Some(0);
        let a = SpdpAnnouncer::new(
            &pd,
            Instant::ZERO,
            StdDuration::from_secs(3),
            0,
            StdDuration::ZERO,
        )
        .unwrap();
        let f = filter();
        match f.classify(&a.data(), &rx(remote)) {
            Ok(SpdpMessage::Announce(got)) => {
                assert_eq!(got.guid, pd.guid);
                // The vendor comes from the data (PID_VENDORID), not the header.
                assert_eq!(got.vendor_id, VendorId::ROSLITE);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            f.classify(&a.data(), &rx(GuidPrefix([3; 12]))),
            Err(SpdpRejection::PrefixMismatch)
        );
        assert_eq!(
            f.classify(&a.data(), &rx(GuidPrefix([1; 12]))),
            Err(SpdpRejection::Own)
        );
        pd.domain_id = Some(7);
        let b = SpdpAnnouncer::new(&pd, Instant::ZERO, StdDuration::ZERO, 0, StdDuration::ZERO)
            .unwrap();
        assert_eq!(
            f.classify(&b.data(), &rx(remote)),
            Err(SpdpRejection::ForeignDomain)
        );
        pd.domain_id = None;
        let c = SpdpAnnouncer::new(&pd, Instant::ZERO, StdDuration::ZERO, 0, StdDuration::ZERO)
            .unwrap();
        assert!(matches!(
            f.classify(&c.data(), &rx(remote)),
            Ok(SpdpMessage::Announce(_))
        ));
    }

    #[test]
    fn classifies_disposals() {
        let remote = GuidPrefix([2; 12]);
        let qos = disposal_inline_qos(Guid::new(remote, EntityId::PARTICIPANT));
        let d = disposal_data(
            EntityId::SPDP_PARTICIPANT_ANNOUNCER,
            EntityId::UNKNOWN,
            SequenceNumber(2),
            &qos,
        )
        .unwrap();
        assert_eq!(
            filter().classify(&d, &rx(remote)),
            Ok(SpdpMessage::Dispose(remote))
        );
        assert_eq!(
            filter().classify(&d, &rx(GuidPrefix([5; 12]))),
            Err(SpdpRejection::PrefixMismatch)
        );
        // Neither payload nor disposal.
        let empty = DataRepr {
            inline_qos: None,
            ..d
        };
        assert_eq!(
            filter().classify(&empty, &rx(remote)),
            Err(SpdpRejection::Malformed)
        );
    }

    #[test]
    fn announcer_schedule() {
        let pd = ParticipantData::new(GuidPrefix([2; 12]));
        let ms = StdDuration::from_millis;
        let mut a = SpdpAnnouncer::new(&pd, Instant::ZERO, ms(3000), 2, ms(100)).unwrap();
        assert!(a.due(Instant::ZERO));
        assert!(!a.due(Instant::ZERO));
        assert_eq!(a.deadline(), Instant::ZERO + ms(100));
        assert!(a.due(a.deadline()));
        assert_eq!(a.deadline(), Instant::ZERO + ms(200));
        assert!(a.due(a.deadline()));
        assert_eq!(a.deadline(), Instant::ZERO + ms(3200));
        let sn = a.data().writer_sn;
        a.update(&pd, Instant::ZERO + ms(500)).unwrap();
        assert_eq!(a.data().writer_sn, sn.checked_add(1).unwrap());
        assert_eq!(a.deadline(), Instant::ZERO + ms(500));
    }
}
