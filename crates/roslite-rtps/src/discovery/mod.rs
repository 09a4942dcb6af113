//! SPDP and SEDP built-in topic data as typed values (RTPS 2.5 §8.5.3, §8.5.4, §9.6.2.2).
//!
//! [`ParticipantData`] is the payload of SPDP `DATA(p)`; [`EndpointData`] of SEDP `DATA(w)` and
//! `DATA(r)`. Both decode from a validated [`ParameterList`](crate::ParameterList) and encode
//! back to one. Decoding rules:
//!
//! - Absent parameters take the DDS 1.4 §2.2.3 defaults, which differ by side for reliability
//!   (writers RELIABLE, readers BEST_EFFORT): Cyclone omits every policy equal to its default.
//! - Unknown standard parameters are skipped, unless they carry the must-understand bit, which
//!   rejects the whole sample ([`ParseError::Unsupported`], RTPS 2.5 §9.6.2.2.1).
//!   Vendor-specific parameters (bit 15) are skipped: their meaning depends on the sender's
//!   vendor, and none of them is needed to talk to ROS 2 peers (see
//!   [`quirks::interprets_vendor_pid`]).
//! - Every length is checked before anything is allocated, strings and sequences are bounded
//!   by [`limits`], a value shorter than its type, a duplicate single-valued parameter, a
//!   negative duration or an out-of-range enum is [`ParseError::Malformed`].

pub mod content_filter;
mod endpoint;
pub mod matching;
mod participant;
pub mod ros;
pub mod rpc;
pub mod sedp;
pub mod spdp;
pub mod wlp;

use roslite_cdr::Endianness;

pub use content_filter::ContentFilterProperty;
pub use endpoint::EndpointData;
pub use participant::ParticipantData;

use crate::bytes::Reader;
use crate::error::ParseError;
use crate::parameter_list::{pid, ParameterId};
use crate::quirks;
use crate::types::{Duration, Guid, Locator, LocatorKind, ProtocolVersion, VendorId};

/// Bounds on what a remote participant may make us store (docs/robustness.md §1-§2).
pub mod limits {
    /// Topic, type, entity and partition names, in bytes.
    pub const MAX_NAME_LEN: usize = 512;
    /// USER_DATA bytes (ROS 2 sends `enclave=/;` and `typehash=RIHS01_…;`, under 100 bytes).
    pub const MAX_USER_DATA_LEN: usize = 8192;
    /// Locators kept per list; further ones are ignored.
    pub const MAX_LOCATORS: usize = 32;
    /// Entries of PROPERTY_LIST.
    pub const MAX_PROPERTIES: usize = 64;
    /// Property names and values, in bytes.
    pub const MAX_PROPERTY_LEN: usize = 1024;
    /// Entries of PARTITION.
    pub const MAX_PARTITIONS: usize = 64;
    /// Entries of DATA_REPRESENTATION.
    pub const MAX_DATA_REPRESENTATIONS: usize = 8;
}

/// `DataRepresentationId_t` values (DDS-XTypes 1.3 §7.6.3.1.1).
pub mod data_representation {
    pub const XCDR: i16 = 0;
    pub const XML: i16 = 1;
    pub const XCDR2: i16 = 2;
}

/// Who sent the data being decoded, from the receiver state (RTPS header or INFO_SRC).
/// Supplies defaults for absent PROTOCOL_VERSION/VENDORID and decides whether
/// vendor-specific parameters may be interpreted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SenderInfo {
    pub vendor_id: VendorId,
    pub version: ProtocolVersion,
}

impl SenderInfo {
    pub fn from_receiver(state: &crate::receiver::ReceiverState) -> Self {
        SenderInfo {
            vendor_id: state.source_vendor_id,
            version: state.source_version,
        }
    }
}

/// Which side an endpoint is on. Decides reliability defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EndpointKind {
    Reader,
    Writer,
}

/// `ReliabilityQosPolicyKind` on the wire (RTPS 2.5 §9.3.2; DDS 1.4 §2.2.3.14).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum ReliabilityKind {
    BestEffort = 0x01,
    Reliable = 0x02,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reliability {
    pub kind: ReliabilityKind,
    /// DDS default 100 ms.
    pub max_blocking_time: Duration,
}

/// `DurabilityQosPolicyKind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u32)]
pub enum DurabilityKind {
    Volatile = 0x00,
    TransientLocal = 0x01,
    Transient = 0x02,
    Persistent = 0x03,
}

/// `HistoryQosPolicy`: local to each side, never a matching criterion (docs/ros2-interop.md §6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum History {
    KeepLast { depth: u32 },
    KeepAll,
}

/// `LivelinessQosPolicyKind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u32)]
pub enum LivelinessKind {
    Automatic = 0x00,
    ManualByParticipant = 0x01,
    ManualByTopic = 0x02,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Liveliness {
    pub kind: LivelinessKind,
    pub lease_duration: Duration,
}

/// `OwnershipQosPolicyKind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum OwnershipKind {
    Shared = 0x00,
    Exclusive = 0x01,
}

/// `key=value;` entries of ROS 2 USER_DATA (`enclave=/;`, `typehash=RIHS01_…;`), tolerating
/// the trailing NUL Fast DDS adds. Entries that are not UTF-8 or lack `=` are skipped.
pub fn user_data_entries(user_data: &[u8]) -> impl Iterator<Item = (&str, &str)> {
    quirks::user_data_without_nul(user_data)
        .split(|b| *b == b';')
        .filter_map(|entry| std::str::from_utf8(entry).ok()?.split_once('='))
}

/// Rejects a parameter we do not decode if it is a standard must-understand one.
fn check_unknown(id: ParameterId) -> Result<(), ParseError> {
    if id.must_understand() && !id.is_vendor_specific() {
        return Err(ParseError::Unsupported);
    }
    Ok(())
}

/// Records single-valued parameters to reject duplicates (docs/robustness.md §1).
#[derive(Default)]
struct Seen(Vec<ParameterId>);

impl Seen {
    fn once(&mut self, id: ParameterId) -> Result<(), ParseError> {
        if self.0.contains(&id) {
            return Err(ParseError::Malformed);
        }
        self.0.push(id);
        Ok(())
    }
}

/// A value reader: any read past the value's `parameterLength` is a malformed parameter, not a
/// truncated message (CVE-2021-38445: lengths shorter than the type).
struct Value<'a>(Reader<'a>);

impl<'a> Value<'a> {
    fn new(bytes: &'a [u8], e: Endianness) -> Self {
        Value(Reader::new(bytes, e))
    }

    fn u32(&mut self) -> Result<u32, ParseError> {
        self.0
            .align(4)
            .and_then(|()| self.0.u32())
            .map_err(|_| ParseError::Malformed)
    }

    fn i32(&mut self) -> Result<i32, ParseError> {
        self.0
            .align(4)
            .and_then(|()| self.0.i32())
            .map_err(|_| ParseError::Malformed)
    }

    fn i16(&mut self) -> Result<i16, ParseError> {
        self.0
            .align(2)
            .and_then(|()| self.0.i16())
            .map_err(|_| ParseError::Malformed)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], ParseError> {
        self.0.array().map_err(|_| ParseError::Malformed)
    }

    fn bool(&mut self) -> Result<bool, ParseError> {
        match self.array::<1>()? {
            [0] => Ok(false),
            [1] => Ok(true),
            _ => Err(ParseError::Malformed),
        }
    }

    fn guid(&mut self) -> Result<Guid, ParseError> {
        Ok(Guid::from_bytes(self.array()?))
    }

    fn version(&mut self) -> Result<ProtocolVersion, ParseError> {
        let [major, minor] = self.array()?;
        Ok(ProtocolVersion { major, minor })
    }

    /// A duration that must not be negative (DDS durations are ≥ 0 or infinite).
    fn duration(&mut self) -> Result<Duration, ParseError> {
        let d = Duration {
            seconds: self.i32()?,
            fraction: self.u32()?,
        };
        if d.seconds < 0 {
            return Err(ParseError::Malformed);
        }
        Ok(d)
    }

    /// A locator; `None` for `LOCATOR_KIND_INVALID` (a placeholder some senders use).
    fn locator(&mut self) -> Result<Option<Locator>, ParseError> {
        self.0.align(4).map_err(|_| ParseError::Malformed)?;
        let l = Locator::read(&mut self.0).map_err(|_| ParseError::Malformed)?;
        if l.kind == LocatorKind::INVALID {
            return Ok(None);
        }
        if !l.has_valid_port() {
            return Err(ParseError::Malformed);
        }
        Ok(Some(l))
    }

    /// A sequence or string length, checked against the remaining bytes (each element needs
    /// at least `min_elem` bytes) and against `max` before the caller allocates.
    fn len(&mut self, min_elem: usize, max: usize) -> Result<usize, ParseError> {
        let n = usize::try_from(self.u32()?).map_err(|_| ParseError::Malformed)?;
        if n > max || n.saturating_mul(min_elem) > self.0.remaining() {
            return Err(ParseError::Malformed);
        }
        Ok(n)
    }

    fn octet_seq(&mut self, max: usize) -> Result<Vec<u8>, ParseError> {
        let n = self.len(1, max)?;
        Ok(self.0.take(n).map_err(|_| ParseError::Malformed)?.to_vec())
    }

    /// A CDR string: length counting the NUL (so ≥ 1), UTF-8, NUL-terminated, no inner NUL
    /// (CVE-2023-39946: a length past the end).
    fn string(&mut self, max: usize) -> Result<String, ParseError> {
        let n = self.len(1, max.saturating_add(1))?;
        let bytes = self.0.take(n).map_err(|_| ParseError::Malformed)?;
        let Some((&0, text)) = bytes.split_last() else {
            return Err(ParseError::Malformed);
        };
        if text.contains(&0) {
            return Err(ParseError::Malformed);
        }
        std::str::from_utf8(text)
            .map(str::to_owned)
            .map_err(|_| ParseError::Malformed)
    }

    fn name(&mut self) -> Result<String, ParseError> {
        self.string(limits::MAX_NAME_LEN)
    }
}

/// Pushes a locator unless the list is at its cap.
fn push_locator(list: &mut Vec<Locator>, l: Option<Locator>) {
    if let Some(l) = l {
        if list.len() < limits::MAX_LOCATORS {
            list.push(l);
        }
    }
}

/// Reads the parameters common to both built-in topics; returns `false` if `id` is not one.
fn read_common(
    id: ParameterId,
    v: &mut Value<'_>,
    seen: &mut Seen,
    version: &mut ProtocolVersion,
    vendor: &mut VendorId,
) -> Result<bool, ParseError> {
    match id {
        pid::PROTOCOL_VERSION => {
            seen.once(id)?;
            *version = v.version()?;
        }
        pid::VENDORID => {
            seen.once(id)?;
            *vendor = VendorId(v.array()?);
        }
        _ => return Ok(false),
    }
    Ok(true)
}

#[cfg(test)]
mod tests;
