//! A guest's linear memory as the host sees it: bounds-checked reads and writes at guest
//! addresses (`u32` offsets), little-endian as WebAssembly is.
//!
//! Every guest pointer the host follows goes through here, so a guest that passes a pointer
//! past its memory gets [`OutOfBounds`] (an error status for the call), never a host fault.

use std::fmt;

/// A guest address range that lies outside the guest's memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfBounds {
    pub address: u32,
    pub length: u64,
    pub memory_size: usize,
}

impl fmt::Display for OutOfBounds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "guest range {:#x}..+{} lies outside its {}-byte memory",
            self.address, self.length, self.memory_size
        )
    }
}

impl std::error::Error for OutOfBounds {}

/// The guest's memory for the length of one host call.
pub struct GuestMemory<'a> {
    bytes: &'a mut [u8],
}

/// Ranges of guest memory read: (address, the bytes read).
pub type Reads = Vec<(u32, Vec<u8>)>;

thread_local! {
    /// What the journaled import running on this thread read of guest memory
    /// ([`record_reads`]); None when nothing records.
    static READS: std::cell::RefCell<Option<Reads>> = const { std::cell::RefCell::new(None) };
    /// Whether [`READS`] records now.
    static RECORDING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `body`, returning with its result every range of guest memory it read (address and
/// bytes, as read): what replaying a journaled import needs (crate::journal).
pub fn record_reads<R>(body: impl FnOnce() -> R) -> (R, Reads) {
    let outer = READS.with(|r| r.replace(Some(Vec::new())));
    let was_recording = RECORDING.with(|f| f.replace(true));
    let result = body();
    RECORDING.with(|f| f.set(was_recording));
    let reads = READS.with(|r| r.replace(outer)).unwrap_or_default();
    (result, reads)
}

fn note_read(address: u32, bytes: &[u8]) {
    // Every read of guest memory passes here (a publish's bytes too): only a journaled
    // import's reads are kept, and the others pay one flag.
    if !RECORDING.with(std::cell::Cell::get) {
        return;
    }
    READS.with(|r| {
        if let Some(reads) = r.borrow_mut().as_mut() {
            reads.push((address, bytes.to_vec()));
        }
    });
}

impl<'a> GuestMemory<'a> {
    pub fn new(bytes: &'a mut [u8]) -> Self {
        Self { bytes }
    }

    pub fn size(&self) -> usize {
        self.bytes.len()
    }

    /// The whole memory (for a snapshot).
    pub fn all(&self) -> &[u8] {
        self.bytes
    }

    fn range(&self, address: u32, length: u64) -> Result<std::ops::Range<usize>, OutOfBounds> {
        let start = address as u64;
        let end = start.checked_add(length);
        match end {
            Some(end) if end <= self.bytes.len() as u64 => Ok(start as usize..end as usize),
            _ => Err(OutOfBounds {
                address,
                length,
                memory_size: self.bytes.len(),
            }),
        }
    }

    pub fn bytes(&self, address: u32, length: u32) -> Result<&[u8], OutOfBounds> {
        let range = self.range(address, length as u64)?;
        note_read(address, &self.bytes[range.clone()]);
        Ok(&self.bytes[range])
    }

    pub fn bytes_mut(&mut self, address: u32, length: u32) -> Result<&mut [u8], OutOfBounds> {
        let range = self.range(address, length as u64)?;
        Ok(&mut self.bytes[range])
    }

    pub fn write(&mut self, address: u32, data: &[u8]) -> Result<(), OutOfBounds> {
        let range = self.range(address, data.len() as u64)?;
        self.bytes[range].copy_from_slice(data);
        Ok(())
    }

    fn array<const N: usize>(&self, address: u32) -> Result<[u8; N], OutOfBounds> {
        let range = self.range(address, N as u64)?;
        let mut out = [0; N];
        out.copy_from_slice(&self.bytes[range]);
        note_read(address, &out);
        Ok(out)
    }

    pub fn u8(&self, address: u32) -> Result<u8, OutOfBounds> {
        Ok(self.array::<1>(address)?[0])
    }
    pub fn u16(&self, address: u32) -> Result<u16, OutOfBounds> {
        self.array(address).map(u16::from_le_bytes)
    }
    pub fn u32(&self, address: u32) -> Result<u32, OutOfBounds> {
        self.array(address).map(u32::from_le_bytes)
    }
    pub fn i32(&self, address: u32) -> Result<i32, OutOfBounds> {
        self.array(address).map(i32::from_le_bytes)
    }
    pub fn u64(&self, address: u32) -> Result<u64, OutOfBounds> {
        self.array(address).map(u64::from_le_bytes)
    }
    pub fn i64(&self, address: u32) -> Result<i64, OutOfBounds> {
        self.array(address).map(i64::from_le_bytes)
    }
    pub fn f64(&self, address: u32) -> Result<f64, OutOfBounds> {
        self.array(address).map(f64::from_le_bytes)
    }

    pub fn put_u8(&mut self, address: u32, value: u8) -> Result<(), OutOfBounds> {
        self.write(address, &[value])
    }
    pub fn put_u16(&mut self, address: u32, value: u16) -> Result<(), OutOfBounds> {
        self.write(address, &value.to_le_bytes())
    }
    pub fn put_u32(&mut self, address: u32, value: u32) -> Result<(), OutOfBounds> {
        self.write(address, &value.to_le_bytes())
    }
    pub fn put_i32(&mut self, address: u32, value: i32) -> Result<(), OutOfBounds> {
        self.write(address, &value.to_le_bytes())
    }
    pub fn put_u64(&mut self, address: u32, value: u64) -> Result<(), OutOfBounds> {
        self.write(address, &value.to_le_bytes())
    }
    pub fn put_i64(&mut self, address: u32, value: i64) -> Result<(), OutOfBounds> {
        self.write(address, &value.to_le_bytes())
    }
    pub fn put_f64(&mut self, address: u32, value: f64) -> Result<(), OutOfBounds> {
        self.write(address, &value.to_le_bytes())
    }

    /// A NUL-terminated string at `address`, at most `limit` bytes before the NUL; `None` for
    /// a null pointer. The bytes, not yet checked for UTF-8.
    pub fn c_string(&self, address: u32, limit: usize) -> Result<Option<&[u8]>, OutOfBounds> {
        if address == 0 {
            return Ok(None);
        }
        let start = address as usize;
        if start >= self.bytes.len() {
            return Err(OutOfBounds {
                address,
                length: 1,
                memory_size: self.bytes.len(),
            });
        }
        let window = &self.bytes[start..self.bytes.len().min(start.saturating_add(limit + 1))];
        match window.iter().position(|&b| b == 0) {
            Some(end) => {
                note_read(address, &window[..=end]);
                Ok(Some(&window[..end]))
            }
            None => Err(OutOfBounds {
                address,
                length: window.len() as u64 + 1,
                memory_size: self.bytes.len(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_inside_and_refuses_outside() {
        let mut bytes = vec![0u8; 64];
        let mut memory = GuestMemory::new(&mut bytes);
        memory.put_u64(8, 0x0102_0304_0506_0708).unwrap();
        assert_eq!(memory.u64(8).unwrap(), 0x0102_0304_0506_0708);
        assert_eq!(memory.u8(8).unwrap(), 0x08, "little-endian");
        assert!(memory.put_u64(60, 1).is_err());
        assert!(memory.bytes(u32::MAX, 2).is_err());
        assert!(
            memory.bytes(64, 0).is_ok(),
            "an empty range at the end is inside"
        );
    }

    #[test]
    fn c_strings_end_at_nul_within_the_limit() {
        let mut bytes = b"\0abc\0defg".to_vec();
        let memory = GuestMemory::new(&mut bytes);
        assert_eq!(memory.c_string(1, 16).unwrap(), Some(&b"abc"[..]));
        assert_eq!(memory.c_string(0, 16).unwrap(), None);
        assert!(memory.c_string(5, 16).is_err(), "no NUL before the end");
        assert!(memory.c_string(1, 2).is_err(), "longer than the limit");
    }
}
