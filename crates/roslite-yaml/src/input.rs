//! Reading the text to parse from a file or a stream, at most a caller's limit of bytes: a
//! parameter file named `/dev/zero` or an endless pipe must end in an error, not in all of
//! memory.

use std::fmt;
use std::io::Read;

/// Why no text was read.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputError {
    /// Reading failed; the system's words.
    Io(String),
    /// The bytes are not UTF-8; `offset` is that of the first byte that is not.
    NotUtf8 { offset: usize },
    /// There are more than `limit` bytes.
    TooLarge { limit: usize },
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(e) => f.write_str(e),
            Self::NotUtf8 { offset } => {
                write!(f, "not UTF-8 text (byte {offset} is not); save it as UTF-8")
            }
            Self::TooLarge { limit } => write!(f, "larger than {}", bytes(*limit)),
        }
    }
}

impl std::error::Error for InputError {}

/// All of `source` as text, if it holds at most `limit` bytes. At most `limit` + 1 bytes are
/// read, so memory stays bounded whatever `source` is.
///
/// # Errors
///
/// [`InputError::TooLarge`] past `limit` bytes, [`InputError::NotUtf8`], or
/// [`InputError::Io`] with the system's error.
pub fn read_text(source: impl Read, limit: usize) -> Result<String, InputError> {
    let mut data = Vec::new();
    let most = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    source
        .take(most)
        .read_to_end(&mut data)
        .map_err(|e| InputError::Io(e.to_string()))?;
    if data.len() > limit {
        return Err(InputError::TooLarge { limit });
    }
    String::from_utf8(data).map_err(|e| InputError::NotUtf8 {
        offset: e.utf8_error().valid_up_to(),
    })
}

/// A byte count as people read it: `16 MiB (16777216 bytes)`.
pub fn bytes(count: usize) -> String {
    const MIB: usize = 1 << 20;
    const KIB: usize = 1 << 10;
    if count >= MIB && count.is_multiple_of(MIB) {
        format!("{} MiB ({count} bytes)", count / MIB)
    } else if count >= KIB && count.is_multiple_of(KIB) {
        format!("{} KiB ({count} bytes)", count / KIB)
    } else {
        format!("{count} bytes")
    }
}
