//! Error types of the wire layer.
//!
//! Parsing input from the network yields the small [`ParseError`]: a peer that sends bad bytes
//! is not an application error, the receiver counts it in [`ReceiveStats`](crate::ReceiveStats)
//! and drops the message. Building output that cannot be represented on the wire is API misuse
//! and yields [`EmitError`] or [`BuildError`].

use std::fmt;

/// Why bytes from the wire were rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParseError {
    /// The input ended before a fixed-size field did.
    Truncated,
    /// A field holds a value the spec declares invalid (a length pointing outside the
    /// submessage, a sequence number ≤ 0, a bitmap with more than 256 bits, ...).
    Malformed,
    /// Well formed but not something this implementation can process (RTPS major version ≠ 2,
    /// a must-understand parameter we do not understand, an unknown encapsulation).
    Unsupported,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Truncated => "input truncated",
            Self::Malformed => "malformed input",
            Self::Unsupported => "unsupported input",
        })
    }
}

impl std::error::Error for ParseError {}

/// Why a value could not be written in wire form. Always caller error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EmitError {
    /// A parameter value or string is longer than its 16- or 32-bit length field allows.
    TooLong { len: usize, max: usize },
    /// A string contains a NUL byte, which a CDR string cannot carry.
    InteriorNul,
}

impl fmt::Display for EmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLong { len, max } => {
                write!(
                    f,
                    "value of {len} bytes exceeds the wire limit of {max} bytes"
                )
            }
            Self::InteriorNul => f.write_str("string contains a NUL byte, which CDR cannot carry"),
        }
    }
}

impl std::error::Error for EmitError {}

/// Why [`MessageBuilder`](crate::MessageBuilder) could not add a submessage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BuildError {
    /// The submessage (with the RTPS header and the INFO_DST/INFO_TS it needs) does not fit in
    /// one datagram of the configured maximum size; send it as DATA_FRAG instead.
    TooLarge { needed: usize, max: usize },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLarge { needed, max } => write!(
                f,
                "submessage needs a {needed}-byte datagram but the maximum is {max}; \
                 fragment the sample with DATA_FRAG"
            ),
        }
    }
}

impl std::error::Error for BuildError {}
