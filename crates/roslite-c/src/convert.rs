//! What crosses the boundary, read and written: QoS profiles, message types and their names,
//! serialized messages' headers, message info and the user data of callbacks. Nothing here
//! touches a handle.

use std::ffi::{c_char, c_void};
use std::time::Duration;

use roslite::serialized::TypeInfo;
use roslite::{Durability, History, Liveliness, MessageInfo, QosProfile, Reliability};

use crate::status::{Failure, ROSLITE_BAD_MESSAGE, ROSLITE_INVALID_QOS, ROSLITE_UNKNOWN_TYPE};
use crate::text::text;

/// `roslite_qos`, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CQos {
    pub history: i32,
    pub depth: u32,
    pub reliability: i32,
    pub durability: i32,
    pub deadline_ns: i64,
    pub lifespan_ns: i64,
    pub liveliness: i32,
    pub liveliness_lease_ns: i64,
}

fn nanos(d: Option<Duration>) -> i64 {
    d.map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

impl From<QosProfile> for CQos {
    fn from(q: QosProfile) -> Self {
        let (history, depth) = match q.history {
            History::KeepLast(depth) => (0, u32::try_from(depth).unwrap_or(u32::MAX)),
            History::KeepAll => (1, 0),
        };
        Self {
            history,
            depth,
            reliability: i32::from(q.reliability == Reliability::BestEffort),
            durability: i32::from(q.durability == Durability::TransientLocal),
            deadline_ns: nanos(q.deadline),
            lifespan_ns: nanos(q.lifespan),
            liveliness: i32::from(q.liveliness == Liveliness::ManualByTopic),
            liveliness_lease_ns: nanos(q.liveliness_lease),
        }
    }
}

/// A duration field: 0 is infinite (none), negative is an error.
fn optional_duration(ns: i64, what: &str) -> Result<Option<Duration>, Failure> {
    match u64::try_from(ns) {
        Ok(0) => Ok(None),
        Ok(ns) => Ok(Some(Duration::from_nanos(ns))),
        Err(_) => Err(Failure::new(
            ROSLITE_INVALID_QOS,
            format!("{what} is {ns} ns; use 0 for infinite or a positive duration"),
        )),
    }
}

fn choice<T>(value: i32, what: &str, options: [(i32, T); 2]) -> Result<T, Failure> {
    let [(a, first), (b, second)] = options;
    if value == a {
        Ok(first)
    } else if value == b {
        Ok(second)
    } else {
        Err(Failure::new(
            ROSLITE_INVALID_QOS,
            format!("{what} is {value}; it must be {a} or {b} (see roslite.h)"),
        ))
    }
}

impl TryFrom<&CQos> for QosProfile {
    type Error = Failure;

    fn try_from(q: &CQos) -> Result<Self, Failure> {
        let depth = usize::try_from(q.depth).unwrap_or(usize::MAX);
        let profile = QosProfile {
            history: choice(
                q.history,
                "history",
                [(0, History::KeepLast(depth)), (1, History::KeepAll)],
            )?,
            reliability: choice(
                q.reliability,
                "reliability",
                [(0, Reliability::Reliable), (1, Reliability::BestEffort)],
            )?,
            durability: choice(
                q.durability,
                "durability",
                [(0, Durability::Volatile), (1, Durability::TransientLocal)],
            )?,
            deadline: optional_duration(q.deadline_ns, "deadline_ns")?,
            lifespan: optional_duration(q.lifespan_ns, "lifespan_ns")?,
            liveliness: choice(
                q.liveliness,
                "liveliness",
                [(0, Liveliness::Automatic), (1, Liveliness::ManualByTopic)],
            )?,
            liveliness_lease: optional_duration(q.liveliness_lease_ns, "liveliness_lease_ns")?,
        };
        profile
            .validate()
            .map_err(|e| Failure::new(ROSLITE_INVALID_QOS, e.to_string()))?;
        Ok(profile)
    }
}

/// # Safety
/// `qos` is null or readable.
pub(crate) unsafe fn qos_of(qos: *const CQos) -> Result<QosProfile, Failure> {
    if qos.is_null() {
        return Err(Failure::invalid_argument(
            "qos is NULL; roslite_qos_profile(ROSLITE_QOS_PROFILE_DEFAULT, &qos) gives the default",
        ));
    }
    QosProfile::try_from(&*qos)
}

/// `roslite_type`.
#[repr(C)]
pub struct CType {
    pub name: *const c_char,
    pub hash: *const c_char,
}

/// Whether `hash` is a RIHS01 type hash: `RIHS01_` and 64 lower-case hex digits.
pub(crate) fn is_type_hash(hash: &str) -> bool {
    hash.strip_prefix("RIHS01_").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// A type from its name and hash, both checked for their form and against the types roslite
/// knows ([`crate::types`]), with its key if it is keyed.
pub(crate) fn type_info(name: &str, hash: &str, kind: &str) -> Result<TypeInfo, Failure> {
    let wrong_name = || {
        Failure::new(
            ROSLITE_UNKNOWN_TYPE,
            format!("type name '{name}' is not of the form 'package/{kind}/Name'"),
        )
    };
    if name.split('/').nth(1) != Some(kind) {
        return Err(wrong_name());
    }
    if !is_type_hash(hash) {
        return Err(Failure::new(
            ROSLITE_UNKNOWN_TYPE,
            format!(
                "type hash '{hash}' of {name} is not 'RIHS01_' and 64 lower-case hex digits \
                 (the generated type's hash)"
            ),
        ));
    }
    let info = TypeInfo::new(name, hash).ok_or_else(wrong_name)?;
    let key = crate::types::check(name, hash)?;
    // The node describes the type on `~/get_type_description` when asked (the size-optimised
    // library, without definitions, cannot: it answers as for an unknown type).
    Ok(info.with_key(key).described_later(crate::types::describe))
}

/// # Safety
/// `ty` is null or points at a `roslite_type` whose strings are valid.
pub(crate) unsafe fn message_type(ty: *const CType) -> Result<TypeInfo, Failure> {
    if ty.is_null() {
        return Err(Failure::invalid_argument("type is NULL"));
    }
    let ty = &*ty;
    type_info(
        text(ty.name, "type->name")?,
        text(ty.hash, "type->hash")?,
        "msg",
    )
}

/// Encapsulation identifiers of serialized data (DDS-XTypes 1.3 §7.6.3.1.2): CDR, PL_CDR,
/// CDR2, D_CDR2 and PL_CDR2, each big- and little-endian.
const ENCAPSULATIONS: [u16; 10] = [0, 1, 2, 3, 6, 7, 8, 9, 10, 11];

/// Refuses bytes that cannot be a serialized message: shorter than the encapsulation header,
/// or with an unknown encapsulation identifier.
pub(crate) fn check_serialized(cdr: &[u8]) -> Result<(), Failure> {
    let Some(header) = cdr.get(..4) else {
        return Err(Failure::new(
            ROSLITE_BAD_MESSAGE,
            format!(
                "{} bytes are not a serialized message: it starts with a 4-byte encapsulation \
                 header (00 01 00 00 for little-endian CDR)",
                cdr.len()
            ),
        ));
    };
    let id = u16::from_be_bytes([header[0], header[1]]);
    if !ENCAPSULATIONS.contains(&id) {
        return Err(Failure::new(
            ROSLITE_BAD_MESSAGE,
            format!(
                "encapsulation identifier {id:#06x} is not CDR, PL_CDR or XCDR2: the bytes are \
                 not a serialized message"
            ),
        ));
    }
    Ok(())
}

/// `roslite_message_info`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CMessageInfo {
    pub source_timestamp_ns: i64,
    pub received_timestamp_ns: i64,
    pub publication_sequence_number: u64,
    pub from_intra_process: bool,
    pub publisher_gid: [u8; 16],
}

impl From<&MessageInfo> for CMessageInfo {
    fn from(info: &MessageInfo) -> Self {
        let ns = |t: roslite::Instant| i64::try_from(t.as_nanos()).unwrap_or(i64::MAX);
        Self {
            source_timestamp_ns: ns(info.source_timestamp),
            received_timestamp_ns: ns(info.received_timestamp),
            publication_sequence_number: info.publication_sequence_number,
            from_intra_process: info.from_intra_process,
            publisher_gid: info.publisher_gid,
        }
    }
}

pub type MessageCallback = unsafe extern "C" fn(*mut c_void, *const u8, usize, *const CMessageInfo);

/// A C caller's user data: roslite only hands it back, on whichever thread spins the node.
#[derive(Clone, Copy)]
pub(crate) struct UserData(pub *mut c_void);

// SAFETY: roslite never dereferences the pointer; the header tells C callers that callbacks
// run on the thread that spins the node's executor.
unsafe impl Send for UserData {}
// SAFETY: as above.
unsafe impl Sync for UserData {}
