use std::fmt;

/// Why a payload could not be decoded. Small and `Copy`: peers that send bad data are counted,
/// not reported with allocations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DecodeError {
    /// The payload ended before the value did.
    Truncated { needed: usize, remaining: usize },
    /// The encapsulation identifier is not plain or parameter-list CDR.
    UnsupportedEncapsulation(u16),
    /// A string length of zero (the NUL must be counted) or a missing NUL terminator.
    MalformedString,
    /// String bytes are not UTF-8.
    InvalidUtf8,
    /// A bool byte other than 0 or 1.
    InvalidBool(u8),
    /// A sequence longer than the bound its type declares.
    BoundExceeded { len: usize, bound: usize },
    /// A bounded string or wide string (`string<=N`, `wstring<=N`) with more characters than
    /// its bound, even counted as leniently as any ROS 2 client library counts: in Unicode
    /// characters (rclpy), not bytes (rclcpp's `string`) or UTF-16 units (its `wstring`).
    StringBoundExceeded { chars: usize, bound: usize },
    /// An enumerated or otherwise constrained value out of range (e.g. a UTF-16 surrogate).
    InvalidValue,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated { needed, remaining } => {
                write!(
                    f,
                    "payload truncated: needed {needed} bytes, {remaining} remain"
                )
            }
            Self::UnsupportedEncapsulation(id) => {
                write!(
                    f,
                    "unsupported encapsulation 0x{id:04x} (expected CDR_BE/CDR_LE)"
                )
            }
            Self::MalformedString => f.write_str("malformed string (zero length or missing NUL)"),
            Self::InvalidUtf8 => f.write_str("string is not valid UTF-8"),
            Self::InvalidBool(b) => write!(f, "invalid bool byte 0x{b:02x}"),
            Self::BoundExceeded { len, bound } => {
                write!(
                    f,
                    "a sequence of {len} elements exceeds its declared bound {bound}"
                )
            }
            Self::StringBoundExceeded { chars, bound } => write!(
                f,
                "a bounded string of {chars} characters exceeds its bound of {bound} \
                 characters, which no ROS 2 client library sends (rclpy counts the bound in \
                 characters, rclcpp in bytes)"
            ),
            Self::InvalidValue => f.write_str("value out of range for its type"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Why a value could not be encoded. These are API misuse, reported to the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeError {
    /// A bounded sequence holds more elements than its bound.
    BoundExceeded { len: usize, bound: usize },
    /// A `string<=N` holds more than N bytes of UTF-8. Sent bounds are counted the strict way,
    /// in bytes as rclcpp counts them (rclpy counts characters), so that every ROS 2 client
    /// library accepts what roslite sends.
    StringBoundExceeded {
        bytes: usize,
        chars: usize,
        bound: usize,
    },
    /// A `wstring<=N` holds more than N UTF-16 code units, as rclcpp counts them (rclpy counts
    /// characters; one outside the Basic Multilingual Plane is two units).
    WStringBoundExceeded {
        units: usize,
        chars: usize,
        bound: usize,
    },
    /// A length does not fit the 32-bit CDR length field.
    TooLong(usize),
    /// A string contains an interior NUL, which CDR strings cannot carry.
    InteriorNul,
    /// The caller's buffer (e.g. a loan sized beforehand) holds fewer bytes than the value
    /// needs.
    BufferTooSmall { needed: usize, capacity: usize },
    /// A reserved sequence ([`crate::Seq::reserved`]) met a writer that must write every
    /// element (a growable buffer, or a slice not meant to keep holes): it has none to write.
    ReservedSequence { len: usize },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BoundExceeded { len, bound } => write!(
                f,
                "length {len} exceeds the declared bound {bound}; shorten the field or raise \
                 the bound in the interface definition"
            ),
            Self::StringBoundExceeded {
                bytes,
                chars,
                bound,
            } => write!(
                f,
                "the string is {bytes} bytes of UTF-8 ({chars} characters), over its bound of \
                 {bound}: roslite sends at most {bound} bytes, as rclcpp counts the bound \
                 (rclpy counts characters), so that every ROS 2 node accepts it; shorten it to \
                 {bound} bytes"
            ),
            Self::WStringBoundExceeded {
                units,
                chars,
                bound,
            } => write!(
                f,
                "the wide string is {units} UTF-16 code units ({chars} characters; one outside \
                 the Basic Multilingual Plane takes two), over its bound of {bound}: roslite \
                 sends at most {bound} units, as rclcpp counts the bound (rclpy counts \
                 characters), so that every ROS 2 node accepts it; shorten it to {bound} units"
            ),
            Self::TooLong(len) => write!(f, "length {len} does not fit a 32-bit CDR length"),
            Self::InteriorNul => f.write_str("string contains a NUL byte, which CDR cannot carry"),
            Self::BufferTooSmall { needed, capacity } => write!(
                f,
                "the value needs {needed} bytes, the buffer holds {capacity}"
            ),
            Self::ReservedSequence { len } => write!(
                f,
                "a reserved sequence of {len} elements has no contents to encode; fill it in \
                 place through a loan (roslite's Publisher::loan) or give it elements"
            ),
        }
    }
}

impl std::error::Error for EncodeError {}
