//! Checked byte cursor and endian-aware writers shared by all wire types.
//!
//! Invariant: every read goes through [`Reader::take`], which checks the remaining length
//! before slicing, so no parser in this crate indexes a buffer directly.

use roslite_cdr::Endianness;

use crate::error::ParseError;

/// The endianness flag, bit 0 of every submessage's flags (RTPS 2.5 §9.4.5.1.2). Defined
/// here, beside the readers and writers it steers, and re-exported as `wire::FLAG_E`.
pub const FLAG_E: u8 = 0x01;

/// Endianness selected by the E flag of a submessage (RTPS 2.5 §9.4.5.1.2: "E=0 means big
/// endian, E=1 means little endian").
pub(crate) fn endianness_of(flags: u8) -> Endianness {
    if flags & FLAG_E != 0 {
        Endianness::Little
    } else {
        Endianness::Big
    }
}

/// The E flag value that selects `e`.
pub(crate) fn e_flag(e: Endianness) -> u8 {
    match e {
        Endianness::Little => FLAG_E,
        Endianness::Big => 0,
    }
}

/// A forward-only cursor over untrusted bytes.
#[derive(Clone, Debug)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    e: Endianness,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8], e: Endianness) -> Self {
        Self { buf, pos: 0, e }
    }

    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// The unread bytes.
    pub(crate) fn rest(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or(&[])
    }

    /// Takes the next `n` bytes.
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], ParseError> {
        let end = self.pos.checked_add(n).ok_or(ParseError::Truncated)?;
        let bytes = self.buf.get(self.pos..end).ok_or(ParseError::Truncated)?;
        self.pos = end;
        Ok(bytes)
    }

    pub(crate) fn skip(&mut self, n: usize) -> Result<(), ParseError> {
        self.take(n).map(|_| ())
    }

    /// Skips padding so that the position is a multiple of `align` (CDR alignment relative to
    /// the start of this reader's buffer).
    pub(crate) fn align(&mut self, align: usize) -> Result<(), ParseError> {
        let misalign = self.pos.checked_rem(align).unwrap_or(0);
        if misalign == 0 {
            return Ok(());
        }
        self.skip(align.saturating_sub(misalign))
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], ParseError> {
        let bytes = self.take(N)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, ParseError> {
        Ok(u8::from_ne_bytes(self.array()?))
    }

    pub(crate) fn u16(&mut self) -> Result<u16, ParseError> {
        let b = self.array()?;
        Ok(match self.e {
            Endianness::Big => u16::from_be_bytes(b),
            Endianness::Little => u16::from_le_bytes(b),
        })
    }

    pub(crate) fn i16(&mut self) -> Result<i16, ParseError> {
        let b = self.array()?;
        Ok(match self.e {
            Endianness::Big => i16::from_be_bytes(b),
            Endianness::Little => i16::from_le_bytes(b),
        })
    }

    pub(crate) fn u32(&mut self) -> Result<u32, ParseError> {
        let b = self.array()?;
        Ok(match self.e {
            Endianness::Big => u32::from_be_bytes(b),
            Endianness::Little => u32::from_le_bytes(b),
        })
    }

    pub(crate) fn i32(&mut self) -> Result<i32, ParseError> {
        let b = self.array()?;
        Ok(match self.e {
            Endianness::Big => i32::from_be_bytes(b),
            Endianness::Little => i32::from_le_bytes(b),
        })
    }
}

pub(crate) fn put_u16(buf: &mut Vec<u8>, e: Endianness, v: u16) {
    buf.extend_from_slice(&match e {
        Endianness::Big => v.to_be_bytes(),
        Endianness::Little => v.to_le_bytes(),
    });
}

pub(crate) fn put_i16(buf: &mut Vec<u8>, e: Endianness, v: i16) {
    buf.extend_from_slice(&match e {
        Endianness::Big => v.to_be_bytes(),
        Endianness::Little => v.to_le_bytes(),
    });
}

pub(crate) fn put_u32(buf: &mut Vec<u8>, e: Endianness, v: u32) {
    buf.extend_from_slice(&match e {
        Endianness::Big => v.to_be_bytes(),
        Endianness::Little => v.to_le_bytes(),
    });
}

pub(crate) fn put_i32(buf: &mut Vec<u8>, e: Endianness, v: i32) {
    buf.extend_from_slice(&match e {
        Endianness::Big => v.to_be_bytes(),
        Endianness::Little => v.to_le_bytes(),
    });
}

/// Appends zero bytes until `buf.len() - start` is a multiple of 4.
pub(crate) fn pad4_from(buf: &mut Vec<u8>, start: usize) {
    let len = buf.len().saturating_sub(start);
    let padded = pad4(len);
    buf.resize(buf.len().saturating_add(padded.saturating_sub(len)), 0);
}

/// `len` rounded up to a multiple of 4 (saturating; wire lengths are far below `usize::MAX`).
pub(crate) const fn pad4(len: usize) -> usize {
    len.saturating_add(3) & !3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_endiannesses_and_never_overruns() {
        let bytes = [0x01, 0x02, 0x03, 0x04, 0x05];
        let mut le = Reader::new(&bytes, Endianness::Little);
        assert_eq!(le.u32(), Ok(0x0403_0201));
        assert_eq!(le.u16(), Err(ParseError::Truncated));
        assert_eq!(le.u8(), Ok(0x05));
        assert_eq!(le.u8(), Err(ParseError::Truncated));
        let mut be = Reader::new(&bytes, Endianness::Big);
        assert_eq!(be.u16(), Ok(0x0102));
        assert_eq!(be.take(usize::MAX), Err(ParseError::Truncated));
        assert_eq!(be.rest(), &[0x03, 0x04, 0x05]);
    }

    #[test]
    fn aligns_relative_to_start() {
        let bytes = [0u8; 9];
        let mut r = Reader::new(&bytes, Endianness::Little);
        r.skip(1).unwrap();
        r.align(4).unwrap();
        assert_eq!(r.position(), 4);
        r.align(4).unwrap();
        assert_eq!(r.position(), 4);
        r.skip(5).unwrap();
        assert_eq!(r.align(4), Err(ParseError::Truncated));
    }

    #[test]
    fn pads_to_four() {
        let mut buf = vec![1, 2, 3, 4, 5];
        pad4_from(&mut buf, 0);
        assert_eq!(buf.len(), 8);
        pad4_from(&mut buf, 1);
        assert_eq!(buf.len(), 9);
        assert_eq!(pad4(0), 0);
        assert_eq!(pad4(13), 16);
    }
}
