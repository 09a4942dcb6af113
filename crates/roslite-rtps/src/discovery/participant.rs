//! SPDP participant data, `SPDPdiscoveredParticipantData` (RTPS 2.5 §8.5.3.2, §9.6.2.2).

use roslite_cdr::Endianness;

use super::{check_unknown, limits, push_locator, read_common, Seen, SenderInfo, Value};
use crate::error::{EmitError, ParseError};
use crate::parameter_list::{pid, ParameterList, ParameterListWriter};
use crate::types::{
    BuiltinEndpointSet, Duration, EntityId, Guid, GuidPrefix, Locator, ProtocolVersion, VendorId,
};

/// What one participant announces about itself in SPDP `DATA(p)`.
///
/// What the reference peers send (docs/ros2-interop.md §12, and the golden test): Fast DDS 3.2 —
/// lease 20 s, builtin endpoints 0x0000fc3f, USER_DATA `enclave=/;` + NUL, ENTITY_NAME `/`,
/// four `fastdds.*`/`PARTICIPANT_TYPE` properties; Cyclone 11 — lease 10 s, USER_DATA without
/// NUL, properties `__ProcessName`, `__Pid`, `__Hostname`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParticipantData {
    /// `PID_PARTICIPANT_GUID`; the entity id is always `ENTITYID_PARTICIPANT`.
    pub guid: Guid,
    pub protocol_version: ProtocolVersion,
    pub vendor_id: VendorId,
    pub domain_id: Option<u32>,
    /// `PID_DOMAIN_TAG`; participants with different tags must not communicate.
    pub domain_tag: String,
    pub default_unicast_locators: Vec<Locator>,
    pub default_multicast_locators: Vec<Locator>,
    pub metatraffic_unicast_locators: Vec<Locator>,
    pub metatraffic_multicast_locators: Vec<Locator>,
    /// Default 100 s (RTPS 2.5 §9.6.2.2, default of `PID_PARTICIPANT_LEASE_DURATION`).
    pub lease_duration: Duration,
    pub builtin_endpoints: BuiltinEndpointSet,
    pub user_data: Vec<u8>,
    pub entity_name: Option<String>,
    /// `PID_PROPERTY_LIST` name/value pairs (binary properties are ignored).
    pub properties: Vec<(String, String)>,
}

impl ParticipantData {
    /// The spec's default lease duration.
    pub const DEFAULT_LEASE_DURATION: Duration = Duration::from_secs(100);

    /// Data for a roslite participant with spec defaults: current protocol version,
    /// [`VendorId::ROSLITE`], no locators, the minimal builtin endpoint set.
    pub fn new(prefix: GuidPrefix) -> Self {
        ParticipantData {
            guid: Guid::new(prefix, EntityId::PARTICIPANT),
            protocol_version: ProtocolVersion::CURRENT,
            vendor_id: VendorId::ROSLITE,
            domain_id: None,
            domain_tag: String::new(),
            default_unicast_locators: Vec::new(),
            default_multicast_locators: Vec::new(),
            metatraffic_unicast_locators: Vec::new(),
            metatraffic_multicast_locators: Vec::new(),
            lease_duration: Self::DEFAULT_LEASE_DURATION,
            builtin_endpoints: BuiltinEndpointSet::MINIMAL,
            user_data: Vec::new(),
            entity_name: None,
            properties: Vec::new(),
        }
    }

    /// Decodes a serialized SPDP payload (`PL_CDR_LE`/`PL_CDR_BE` + parameter list).
    ///
    /// # Errors
    /// As [`ParameterList::from_payload`] and [`ParticipantData::from_parameter_list`].
    pub fn from_payload(payload: &[u8], sender: SenderInfo) -> Result<Self, ParseError> {
        Self::from_parameter_list(&ParameterList::from_payload(payload)?, sender)
    }

    /// Decodes SPDP data.
    ///
    /// The caller should also check that `guid.prefix` equals the message's source GUID
    /// prefix; this layer does not know it.
    ///
    /// # Errors
    /// [`ParseError::Malformed`] if `PID_PARTICIPANT_GUID` is missing or not a participant
    /// GUID, for a zero or negative lease, and for any malformed value (see the module
    /// docs); [`ParseError::Unsupported`] for a must-understand parameter we do not know.
    pub fn from_parameter_list(
        pl: &ParameterList<'_>,
        sender: SenderInfo,
    ) -> Result<Self, ParseError> {
        let e = pl.endianness();
        let mut d = ParticipantData::new(GuidPrefix::UNKNOWN);
        d.protocol_version = sender.version;
        d.vendor_id = sender.vendor_id;
        d.builtin_endpoints = BuiltinEndpointSet(0);
        let mut guid = None;
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
            match p.id {
                pid::PARTICIPANT_GUID => {
                    seen.once(p.id)?;
                    guid = Some(v.guid()?);
                }
                pid::DOMAIN_ID => {
                    seen.once(p.id)?;
                    d.domain_id = Some(v.u32()?);
                }
                pid::DOMAIN_TAG => {
                    seen.once(p.id)?;
                    d.domain_tag = v.name()?;
                }
                pid::DEFAULT_UNICAST_LOCATOR => {
                    push_locator(&mut d.default_unicast_locators, v.locator()?);
                }
                pid::DEFAULT_MULTICAST_LOCATOR => {
                    push_locator(&mut d.default_multicast_locators, v.locator()?);
                }
                pid::METATRAFFIC_UNICAST_LOCATOR => {
                    push_locator(&mut d.metatraffic_unicast_locators, v.locator()?);
                }
                pid::METATRAFFIC_MULTICAST_LOCATOR => {
                    push_locator(&mut d.metatraffic_multicast_locators, v.locator()?);
                }
                pid::PARTICIPANT_LEASE_DURATION => {
                    seen.once(p.id)?;
                    d.lease_duration = v.duration()?;
                    // A zero lease would expire the participant immediately on every check.
                    if d.lease_duration == Duration::ZERO {
                        return Err(ParseError::Malformed);
                    }
                }
                pid::BUILTIN_ENDPOINT_SET => {
                    seen.once(p.id)?;
                    d.builtin_endpoints = BuiltinEndpointSet(v.u32()?);
                }
                pid::USER_DATA => {
                    seen.once(p.id)?;
                    d.user_data = v.octet_seq(limits::MAX_USER_DATA_LEN)?;
                }
                pid::ENTITY_NAME => {
                    seen.once(p.id)?;
                    d.entity_name = Some(v.name()?);
                }
                pid::PROPERTY_LIST => {
                    seen.once(p.id)?;
                    d.properties = read_properties(&mut v)?;
                }
                other => check_unknown(other)?,
            }
        }
        let guid = guid.ok_or(ParseError::Malformed)?;
        if guid.entity_id != EntityId::PARTICIPANT {
            return Err(ParseError::Malformed);
        }
        d.guid = guid;
        Ok(d)
    }

    /// Appends the parameters (without sentinel).
    ///
    /// # Errors
    /// [`EmitError`] for a string with a NUL or a value too long for a parameter.
    pub fn write_parameters(&self, w: &mut ParameterListWriter<'_>) -> Result<(), EmitError> {
        w.param(pid::PROTOCOL_VERSION, |v| {
            v.bytes(&[self.protocol_version.major, self.protocol_version.minor]);
            Ok(())
        })?;
        w.raw(pid::VENDORID, &self.vendor_id.0)?;
        w.param(pid::PARTICIPANT_GUID, |v| {
            v.guid(self.guid);
            Ok(())
        })?;
        if let Some(domain) = self.domain_id {
            w.param(pid::DOMAIN_ID, |v| {
                v.u32(domain);
                Ok(())
            })?;
        }
        if !self.domain_tag.is_empty() {
            w.param(pid::DOMAIN_TAG, |v| v.string(&self.domain_tag))?;
        }
        for (id, list) in [
            (
                pid::METATRAFFIC_UNICAST_LOCATOR,
                &self.metatraffic_unicast_locators,
            ),
            (
                pid::METATRAFFIC_MULTICAST_LOCATOR,
                &self.metatraffic_multicast_locators,
            ),
            (pid::DEFAULT_UNICAST_LOCATOR, &self.default_unicast_locators),
            (
                pid::DEFAULT_MULTICAST_LOCATOR,
                &self.default_multicast_locators,
            ),
        ] {
            for l in list {
                w.param(id, |v| {
                    v.locator(l);
                    Ok(())
                })?;
            }
        }
        w.param(pid::PARTICIPANT_LEASE_DURATION, |v| {
            v.duration(self.lease_duration);
            Ok(())
        })?;
        w.param(pid::BUILTIN_ENDPOINT_SET, |v| {
            v.u32(self.builtin_endpoints.0);
            Ok(())
        })?;
        if let Some(name) = &self.entity_name {
            w.param(pid::ENTITY_NAME, |v| v.string(name))?;
        }
        if !self.user_data.is_empty() {
            w.param(pid::USER_DATA, |v| v.octet_seq(&self.user_data))?;
        }
        if !self.properties.is_empty() {
            w.param(pid::PROPERTY_LIST, |v| {
                v.u32(u32::try_from(self.properties.len()).unwrap_or(u32::MAX));
                for (name, value) in &self.properties {
                    v.string(name)?;
                    v.string(value)?;
                }
                // binary_value: sequence<BinaryProperty_t>, empty.
                v.u32(0);
                Ok(())
            })?;
        }
        Ok(())
    }

    /// A complete serialized payload: encapsulation header, parameters, sentinel.
    ///
    /// # Errors
    /// As [`ParticipantData::write_parameters`].
    pub fn to_payload(&self, endianness: Endianness) -> Result<Vec<u8>, EmitError> {
        let mut buf = Vec::new();
        let mut w = ParameterListWriter::with_encapsulation(&mut buf, endianness);
        self.write_parameters(&mut w)?;
        w.finish();
        Ok(buf)
    }
}

/// `PropertyQosPolicy` (DDS-Security 1.1 §7.2.1): `sequence<Property_t>` of (name, value)
/// strings, then `sequence<BinaryProperty_t>`, which is ignored. Fast DDS omits the binary
/// sequence, Cyclone sends it empty.
fn read_properties(v: &mut Value<'_>) -> Result<Vec<(String, String)>, ParseError> {
    // An entry is at least two 5-byte strings plus alignment.
    let n = v.len(12, limits::MAX_PROPERTIES)?;
    let mut props = Vec::with_capacity(n);
    for _ in 0..n {
        let name = v.string(limits::MAX_PROPERTY_LEN)?;
        let value = v.string(limits::MAX_PROPERTY_LEN)?;
        props.push((name, value));
    }
    Ok(props)
}
