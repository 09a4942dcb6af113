//! SEDP endpoint data: `DiscoveredWriterData` / `DiscoveredReaderData`
//! (RTPS 2.5 §8.5.4.2–§8.5.4.4, §9.6.2.2; DDS 1.4 §2.2.3 for the defaults).

use roslite_cdr::Endianness;

use super::content_filter::ContentFilterProperty;
use super::{
    check_unknown, data_representation, limits, push_locator, read_common, DurabilityKind,
    EndpointKind, History, Liveliness, LivelinessKind, OwnershipKind, Reliability, ReliabilityKind,
    Seen, SenderInfo, Value,
};
use crate::error::{EmitError, ParseError};
use crate::parameter_list::{pid, ParameterId, ParameterList, ParameterListWriter};
use crate::types::{Duration, EntityId, Guid, Locator, ProtocolVersion, VendorId};

/// The parameters decoded below that may appear at most once.
const SINGLE_VALUED: [ParameterId; 17] = [
    pid::ENDPOINT_GUID,
    pid::KEY_HASH,
    pid::PARTICIPANT_GUID,
    pid::TOPIC_NAME,
    pid::TYPE_NAME,
    pid::RELIABILITY,
    pid::DURABILITY,
    pid::HISTORY,
    pid::DEADLINE,
    pid::LIFESPAN,
    pid::LIVELINESS,
    pid::OWNERSHIP,
    pid::PARTITION,
    pid::USER_DATA,
    pid::EXPECTS_INLINE_QOS,
    pid::DATA_REPRESENTATION,
    pid::CONTENT_FILTER_PROPERTY,
];

/// One remote (or local) reader or writer as announced in SEDP.
///
/// Only what matching, ROS 2 and content filters need is decoded. Skipped: LATENCY_BUDGET, DESTINATION_ORDER,
/// PRESENTATION, TOPIC_DATA, GROUP_DATA, TIME_BASED_FILTER, TYPE_CONSISTENCY, the XCDR2-encoded
/// TYPE_INFORMATION (Fast-DDS#1762) and KEY_HASH (Fast DDS repeats the endpoint GUID there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndpointData {
    pub kind: EndpointKind,
    /// `PID_ENDPOINT_GUID`.
    pub guid: Guid,
    /// `PID_PARTICIPANT_GUID`, or derived from the endpoint's prefix when absent (Cyclone
    /// omits it; Fast-DDS PR #1382).
    pub participant_guid: Guid,
    pub topic_name: String,
    pub type_name: String,
    pub reliability: Reliability,
    pub durability: DurabilityKind,
    pub history: History,
    pub deadline: Duration,
    pub liveliness: Liveliness,
    pub lifespan: Duration,
    pub ownership: OwnershipKind,
    pub partitions: Vec<String>,
    pub user_data: Vec<u8>,
    /// Endpoint-specific locators; when empty use the participant's default locators.
    pub unicast_locators: Vec<Locator>,
    pub multicast_locators: Vec<Locator>,
    pub expects_inline_qos: bool,
    pub data_representation: Vec<i16>,
    /// A reader's content filter (`PID_CONTENT_FILTER_PROPERTY`, see
    /// [`content_filter`](super::content_filter)); `None` for writers and unfiltered readers.
    pub content_filter: Option<ContentFilterProperty>,
    /// The announcement carried a `PID_CONTENT_FILTER_PROPERTY` that does not decode: the
    /// filter was dropped and the endpoint kept (the filter only tells writers what the
    /// reader would drop anyway), as Fast DDS does; the participant counts it.
    pub content_filter_malformed: bool,
    pub protocol_version: ProtocolVersion,
    pub vendor_id: VendorId,
}

impl EndpointData {
    /// The DDS default `max_blocking_time` of RELIABILITY.
    pub const DEFAULT_MAX_BLOCKING_TIME: Duration = Duration {
        seconds: 0,
        fraction: 0x1999_999a,
    };

    /// Data with every policy at its DDS default for `kind`'s side, announced by
    /// [`VendorId::ROSLITE`].
    pub fn new(kind: EndpointKind, guid: Guid, topic_name: &str, type_name: &str) -> Self {
        let reliability = Reliability {
            kind: match kind {
                EndpointKind::Writer => ReliabilityKind::Reliable,
                EndpointKind::Reader => ReliabilityKind::BestEffort,
            },
            max_blocking_time: Self::DEFAULT_MAX_BLOCKING_TIME,
        };
        EndpointData {
            kind,
            guid,
            participant_guid: Guid::new(guid.prefix, EntityId::PARTICIPANT),
            topic_name: topic_name.to_owned(),
            type_name: type_name.to_owned(),
            reliability,
            durability: DurabilityKind::Volatile,
            history: History::KeepLast { depth: 1 },
            deadline: Duration::INFINITE,
            liveliness: Liveliness {
                kind: LivelinessKind::Automatic,
                lease_duration: Duration::INFINITE,
            },
            lifespan: Duration::INFINITE,
            ownership: OwnershipKind::Shared,
            partitions: Vec::new(),
            user_data: Vec::new(),
            unicast_locators: Vec::new(),
            multicast_locators: Vec::new(),
            expects_inline_qos: false,
            data_representation: vec![data_representation::XCDR],
            content_filter: None,
            content_filter_malformed: false,
            protocol_version: ProtocolVersion::CURRENT,
            vendor_id: VendorId::ROSLITE,
        }
    }

    /// Decodes a serialized SEDP payload.
    ///
    /// # Errors
    /// As [`ParameterList::from_payload`] and [`EndpointData::from_parameter_list`].
    pub fn from_payload(
        payload: &[u8],
        kind: EndpointKind,
        sender: SenderInfo,
    ) -> Result<Self, ParseError> {
        Self::from_parameter_list(&ParameterList::from_payload(payload)?, kind, sender)
    }

    /// Decodes SEDP data for an endpoint on side `kind` (publications writer `0x000003c2`
    /// announces writers, subscriptions writer `0x000004c2` readers).
    ///
    /// # Errors
    /// [`ParseError::Malformed`] if the endpoint GUID (or the `PID_KEY_HASH` fallback), topic
    /// name or type name is missing or empty; if the GUID's entity kind is not of side
    /// `kind`; if the participant GUID is not a participant with the endpoint's prefix; for a
    /// KEEP_LAST depth of 0; and for any malformed value (module docs).
    /// [`ParseError::Unsupported`] for a must-understand parameter we do not know.
    pub fn from_parameter_list(
        pl: &ParameterList<'_>,
        kind: EndpointKind,
        sender: SenderInfo,
    ) -> Result<Self, ParseError> {
        let e = pl.endianness();
        let mut d = EndpointData::new(kind, Guid::UNKNOWN, "", "");
        d.protocol_version = sender.version;
        d.vendor_id = sender.vendor_id;
        let (mut guid, mut key_hash, mut participant) = (None, None, None);
        let (mut topic, mut type_name) = (None, None);
        let mut representations = None;
        let mut seen = Seen::default();
        for p in pl.iter() {
            let mut v = Value::new(p.value, e);
            if read_common(
                p.id,
                &mut v,
                &mut seen,
                &mut d.protocol_version,
                &mut d.vendor_id,
            )? {
                continue;
            }
            if SINGLE_VALUED.contains(&p.id) {
                seen.once(p.id)?;
            }
            match p.id {
                pid::ENDPOINT_GUID => guid = Some(v.guid()?),
                pid::KEY_HASH => key_hash = Some(v.guid()?),
                pid::PARTICIPANT_GUID => participant = Some(v.guid()?),
                pid::TOPIC_NAME => topic = Some(v.name()?),
                pid::TYPE_NAME => type_name = Some(v.name()?),
                pid::RELIABILITY => {
                    let kind = match v.u32()? {
                        0x01 => ReliabilityKind::BestEffort,
                        0x02 => ReliabilityKind::Reliable,
                        _ => return Err(ParseError::Malformed),
                    };
                    d.reliability = Reliability {
                        kind,
                        max_blocking_time: v.duration()?,
                    };
                }
                pid::DURABILITY => {
                    d.durability = match v.u32()? {
                        0x00 => DurabilityKind::Volatile,
                        0x01 => DurabilityKind::TransientLocal,
                        0x02 => DurabilityKind::Transient,
                        0x03 => DurabilityKind::Persistent,
                        _ => return Err(ParseError::Malformed),
                    };
                }
                pid::HISTORY => {
                    let kind = v.u32()?;
                    let depth = v.i32()?;
                    d.history = match (kind, u32::try_from(depth)) {
                        (0x00, Ok(depth @ 1..)) => History::KeepLast { depth },
                        (0x01, _) => History::KeepAll,
                        _ => return Err(ParseError::Malformed),
                    };
                }
                pid::DEADLINE => d.deadline = v.duration()?,
                pid::LIFESPAN => d.lifespan = v.duration()?,
                pid::LIVELINESS => {
                    let kind = match v.u32()? {
                        0x00 => LivelinessKind::Automatic,
                        0x01 => LivelinessKind::ManualByParticipant,
                        0x02 => LivelinessKind::ManualByTopic,
                        _ => return Err(ParseError::Malformed),
                    };
                    d.liveliness = Liveliness {
                        kind,
                        lease_duration: v.duration()?,
                    };
                }
                pid::OWNERSHIP => {
                    d.ownership = match v.u32()? {
                        0x00 => OwnershipKind::Shared,
                        0x01 => OwnershipKind::Exclusive,
                        _ => return Err(ParseError::Malformed),
                    };
                }
                pid::PARTITION => {
                    let n = v.len(5, limits::MAX_PARTITIONS)?;
                    d.partitions = (0..n).map(|_| v.name()).collect::<Result<_, _>>()?;
                }
                pid::USER_DATA => d.user_data = v.octet_seq(limits::MAX_USER_DATA_LEN)?,
                pid::UNICAST_LOCATOR => push_locator(&mut d.unicast_locators, v.locator()?),
                pid::MULTICAST_LOCATOR => push_locator(&mut d.multicast_locators, v.locator()?),
                pid::EXPECTS_INLINE_QOS => d.expects_inline_qos = v.bool()?,
                pid::DATA_REPRESENTATION => {
                    let n = v.len(2, limits::MAX_DATA_REPRESENTATIONS)?;
                    representations = Some((0..n).map(|_| v.i16()).collect::<Result<_, _>>()?);
                }
                pid::CONTENT_FILTER_PROPERTY => match ContentFilterProperty::read(&mut v) {
                    Ok(filter) => d.content_filter = filter,
                    Err(_) => d.content_filter_malformed = true,
                },
                other => check_unknown(other)?,
            }
        }
        // Old SEDP keyed endpoints by PID_KEY_HASH alone.
        d.guid = guid.or(key_hash).ok_or(ParseError::Malformed)?;
        let side_ok = match kind {
            EndpointKind::Writer => d.guid.entity_id.is_writer(),
            EndpointKind::Reader => d.guid.entity_id.is_reader(),
        };
        if !side_ok {
            return Err(ParseError::Malformed);
        }
        d.participant_guid = participant.unwrap_or(Guid::new(d.guid.prefix, EntityId::PARTICIPANT));
        if d.participant_guid != Guid::new(d.guid.prefix, EntityId::PARTICIPANT) {
            return Err(ParseError::Malformed);
        }
        d.topic_name = topic
            .filter(|t| !t.is_empty())
            .ok_or(ParseError::Malformed)?;
        d.type_name = type_name
            .filter(|t| !t.is_empty())
            .ok_or(ParseError::Malformed)?;
        if let Some(representations) = representations {
            d.data_representation = representations;
        }
        Ok(d)
    }

    /// Appends the parameters (without sentinel). Reliability and durability are always
    /// written explicitly, because the two reference vendors disagree on what to omit.
    ///
    /// # Errors
    /// [`EmitError`] for a string with a NUL or a value too long for a parameter.
    pub fn write_parameters(&self, w: &mut ParameterListWriter<'_>) -> Result<(), EmitError> {
        let duration = |d: Duration| {
            move |v: &mut crate::parameter_list::ValueWriter<'_>| {
                v.duration(d);
                Ok(())
            }
        };
        w.param(pid::ENDPOINT_GUID, |v| {
            v.guid(self.guid);
            Ok(())
        })?;
        w.param(pid::PARTICIPANT_GUID, |v| {
            v.guid(self.participant_guid);
            Ok(())
        })?;
        w.param(pid::TOPIC_NAME, |v| v.string(&self.topic_name))?;
        w.param(pid::TYPE_NAME, |v| v.string(&self.type_name))?;
        w.param(pid::PROTOCOL_VERSION, |v| {
            v.bytes(&[self.protocol_version.major, self.protocol_version.minor]);
            Ok(())
        })?;
        w.raw(pid::VENDORID, &self.vendor_id.0)?;
        for (id, list) in [
            (pid::UNICAST_LOCATOR, &self.unicast_locators),
            (pid::MULTICAST_LOCATOR, &self.multicast_locators),
        ] {
            for l in list {
                w.param(id, |v| {
                    v.locator(l);
                    Ok(())
                })?;
            }
        }
        if self.expects_inline_qos {
            w.raw(pid::EXPECTS_INLINE_QOS, &[1])?;
        }
        w.param(pid::RELIABILITY, |v| {
            v.u32(self.reliability.kind as u32);
            v.duration(self.reliability.max_blocking_time);
            Ok(())
        })?;
        w.param(pid::DURABILITY, |v| {
            v.u32(self.durability as u32);
            Ok(())
        })?;
        w.param(pid::HISTORY, |v| {
            let (kind, depth) = match self.history {
                History::KeepLast { depth } => (0, i32::try_from(depth).unwrap_or(i32::MAX)),
                History::KeepAll => (1, -1),
            };
            v.u32(kind);
            v.i32(depth);
            Ok(())
        })?;
        w.param(pid::DEADLINE, duration(self.deadline))?;
        w.param(pid::LIVELINESS, |v| {
            v.u32(self.liveliness.kind as u32);
            v.duration(self.liveliness.lease_duration);
            Ok(())
        })?;
        w.param(pid::LIFESPAN, duration(self.lifespan))?;
        if self.ownership != OwnershipKind::Shared {
            w.param(pid::OWNERSHIP, |v| {
                v.u32(self.ownership as u32);
                Ok(())
            })?;
        }
        if !self.partitions.is_empty() {
            w.param(pid::PARTITION, |v| {
                v.u32(u32::try_from(self.partitions.len()).unwrap_or(u32::MAX));
                self.partitions.iter().try_for_each(|p| v.string(p))
            })?;
        }
        if !self.user_data.is_empty() {
            w.param(pid::USER_DATA, |v| v.octet_seq(&self.user_data))?;
        }
        w.param(pid::DATA_REPRESENTATION, |v| {
            v.u32(u32::try_from(self.data_representation.len()).unwrap_or(u32::MAX));
            self.data_representation.iter().for_each(|r| v.i16(*r));
            Ok(())
        })?;
        if let Some(filter) = &self.content_filter {
            w.param(pid::CONTENT_FILTER_PROPERTY, |v| filter.write(v))?;
        }
        Ok(())
    }

    /// A complete serialized payload: encapsulation header, parameters, sentinel.
    ///
    /// # Errors
    /// As [`EndpointData::write_parameters`].
    pub fn to_payload(&self, endianness: Endianness) -> Result<Vec<u8>, EmitError> {
        let mut buf = Vec::new();
        let mut w = ParameterListWriter::with_encapsulation(&mut buf, endianness);
        self.write_parameters(&mut w)?;
        w.finish();
        Ok(buf)
    }
}
