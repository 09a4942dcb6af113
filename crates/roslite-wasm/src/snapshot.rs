//! The snapshot of a parked guest (docs/migration.md, "Snapshot format"): its linear memory as
//! the 4 KiB chunks that differ from the module's initial image, every global it defines, and
//! the host's state for it (an opaque section here, [`crate::migrate::HostState`]), behind a header
//! naming the format version, the guest ABI and the module, and a SHA-256 of everything before
//! it. The body is LZ4-compressed.
//!
//! Decoding trusts nothing: a snapshot comes over the network from another host. Every length
//! is checked against what is left and against the caps given before anything is allocated,
//! and the checksum is checked before the body is even decompressed.

use sha2::{Digest, Sha256};

use crate::abi::ABI_VERSION;

/// The first eight bytes of every snapshot.
pub const MAGIC: &[u8; 8] = b"RLWASMSS";
/// This format's version; a snapshot of another version is refused by it.
pub const FORMAT_VERSION: u16 = 1;
/// The granularity of memory differences.
pub const CHUNK_BYTES: u32 = 4096;
/// A WebAssembly page.
pub const PAGE_BYTES: u32 = 65536;
const CODEC_LZ4: u8 = 1;
const HEADER_BYTES: usize = 8 + 2 + 2 + 32 + 1 + 4 + 4;
const CHECKSUM_BYTES: usize = 32;
/// The most bytes an LZ4 block makes of one compressed byte.
const LZ4_MAX_EXPANSION: u64 = 255;

/// A SHA-256 of the module the snapshot belongs to ([`crate::instrument::module_hash`]).
pub type ModuleHash = [u8; 32];

#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub module_hash: ModuleHash,
    /// The guest's memory size, in WebAssembly pages.
    pub memory_pages: u32,
    /// (chunk index, [`CHUNK_BYTES`] bytes) for every chunk that differs from the module's
    /// initial image, in increasing order.
    pub chunks: Vec<(u32, Vec<u8>)>,
    /// Every global the module defines, by its index among them.
    pub globals: Vec<(u32, GlobalValue)>,
    /// The host's state for the guest ([`crate::migrate::HostState`], encoded).
    pub host: Vec<u8>,
}

/// A global's value, by its type; floats as their bits, so that a NaN's payload survives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GlobalValue {
    I32(i32),
    I64(i64),
    F32(u32),
    F64(u64),
}

impl GlobalValue {
    fn tag(self) -> u8 {
        match self {
            Self::I32(_) => 0,
            Self::I64(_) => 1,
            Self::F32(_) => 2,
            Self::F64(_) => 3,
        }
    }

    fn bits(self) -> u64 {
        match self {
            Self::I32(v) => v as u32 as u64,
            Self::I64(v) => v as u64,
            Self::F32(v) => v as u64,
            Self::F64(v) => v,
        }
    }
}

/// Why a snapshot is refused: each says what the sender or the user must look at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotError {
    /// Shorter than its header or its lengths say: cut off on the way.
    Truncated {
        needed: usize,
        left: usize,
        what: &'static str,
    },
    /// Not a roslite snapshot at all.
    NotASnapshot,
    /// Written by a roslite with another snapshot format.
    FormatVersion { found: u16 },
    /// Taken from a guest of another guest ABI.
    AbiVersion { found: u16 },
    /// The checksum does not match the content: altered or damaged.
    Checksum,
    /// Taken from another module than the one it would be restored into.
    ModuleMismatch {
        snapshot: ModuleHash,
        module: ModuleHash,
    },
    /// Claims more memory than this host grants a guest.
    MemoryOverCap { bytes: u64, cap: u64 },
    /// Inconsistent inside (a chunk beyond the memory, chunks out of order, a bad tag, bytes
    /// left over).
    Malformed(String),
}

fn hex(hash: &ModuleHash) -> String {
    hash.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

impl std::fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Truncated { needed, left, what } => write!(
                f,
                "the snapshot is truncated: {what} needs {needed} bytes, {left} are left"
            ),
            Self::NotASnapshot => f.write_str("not a roslite snapshot (its first bytes are wrong)"),
            Self::FormatVersion { found } => write!(
                f,
                "snapshot format {found}; this host reads format {FORMAT_VERSION}: use the same roslite version on both hosts"
            ),
            Self::AbiVersion { found } => write!(
                f,
                "the snapshot is of a guest of ABI version {found}; this host runs version {ABI_VERSION}"
            ),
            Self::Checksum => f.write_str(
                "the snapshot's checksum does not match its content: it was altered or damaged on the way",
            ),
            Self::ModuleMismatch { snapshot, module } => write!(
                f,
                "the snapshot is of module {}..., this host's module is {}...: give both hosts the same .wasm",
                hex(snapshot),
                hex(module)
            ),
            Self::MemoryOverCap { bytes, cap } => write!(
                f,
                "the snapshot's memory is {bytes} bytes, more than the {cap} bytes this host grants a guest (--max-memory-mib)"
            ),
            Self::Malformed(what) => write!(f, "the snapshot is malformed: {what}"),
        }
    }
}

impl std::error::Error for SnapshotError {}

/// The bytes of `snapshot`.
pub fn encode(snapshot: &Snapshot) -> Vec<u8> {
    seal(&snapshot.module_hash, &body(snapshot))
}

/// The body of `snapshot` as [`seal`] takes it: memory size, chunks, globals, host state.
pub fn body(snapshot: &Snapshot) -> Vec<u8> {
    let mut body = Vec::new();
    put_u32(&mut body, snapshot.memory_pages);
    put_u32(&mut body, snapshot.chunks.len() as u32);
    for (index, bytes) in &snapshot.chunks {
        debug_assert_eq!(bytes.len(), CHUNK_BYTES as usize);
        put_u32(&mut body, *index);
        body.extend_from_slice(bytes);
    }
    put_u32(&mut body, snapshot.globals.len() as u32);
    for (index, value) in &snapshot.globals {
        put_u32(&mut body, *index);
        body.push(value.tag());
        body.extend_from_slice(&value.bits().to_le_bytes());
    }
    put_u32(&mut body, snapshot.host.len() as u32);
    body.extend_from_slice(&snapshot.host);
    body
}

/// The bytes of a snapshot of the module `module_hash` whose body (before compression) is
/// `body`: the header, the compressed body and the checksum. [`body`] lays one out; the
/// fuzzer seals bodies of its own, as a sender that forges snapshots could.
pub fn seal(module_hash: &ModuleHash, body: &[u8]) -> Vec<u8> {
    let compressed = lz4_flex::block::compress(body);
    let mut out = Vec::with_capacity(HEADER_BYTES + compressed.len() + CHECKSUM_BYTES);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(ABI_VERSION as u16).to_le_bytes());
    out.extend_from_slice(module_hash);
    out.push(CODEC_LZ4);
    put_u32(&mut out, body.len() as u32);
    put_u32(&mut out, compressed.len() as u32);
    out.extend_from_slice(&compressed);
    let checksum: [u8; 32] = Sha256::digest(&out).into();
    out.extend_from_slice(&checksum);
    out
}

/// What a host accepts.
#[derive(Clone, Copy, Debug)]
pub struct Caps {
    /// The most linear memory a guest may have (the host's `--max-memory-mib`).
    pub max_memory_bytes: u64,
    /// The most host state (endpoints, parameters, buffered messages) a snapshot may carry.
    pub max_host_bytes: u32,
}

/// Reads a snapshot, checking everything it claims against `caps`.
pub fn decode(bytes: &[u8], caps: Caps) -> Result<Snapshot, SnapshotError> {
    let mut header = Reader::new(bytes);
    if header.take(MAGIC.len(), "the header")? != MAGIC {
        return Err(SnapshotError::NotASnapshot);
    }
    let version = header.u16("the header")?;
    if version != FORMAT_VERSION {
        return Err(SnapshotError::FormatVersion { found: version });
    }
    let abi = header.u16("the header")?;
    if u32::from(abi) != ABI_VERSION {
        return Err(SnapshotError::AbiVersion { found: abi });
    }
    let module_hash: ModuleHash = header.take(32, "the header")?.try_into().expect("32");
    let codec = header.u8("the header")?;
    let body_len = header.u32("the header")?;
    let compressed_len = header.u32("the header")? as usize;
    let compressed = header.take(compressed_len, "the compressed body")?;
    let signed = bytes.len() - header.left();
    let checksum = header.take(CHECKSUM_BYTES, "the checksum")?;
    if header.left() != 0 {
        return Err(SnapshotError::Malformed(format!(
            "{} bytes after the checksum",
            header.left()
        )));
    }
    let computed: [u8; 32] = Sha256::digest(&bytes[..signed]).into();
    if computed[..] != *checksum {
        return Err(SnapshotError::Checksum);
    }
    if codec != CODEC_LZ4 {
        return Err(SnapshotError::Malformed(format!("unknown codec {codec}")));
    }
    // The body holds at most the whole memory and the host state: refuse a larger claim
    // before allocating for it.
    let body_cap = caps.max_memory_bytes + u64::from(caps.max_host_bytes) + (1 << 20);
    if u64::from(body_len) > body_cap {
        return Err(SnapshotError::MemoryOverCap {
            bytes: u64::from(body_len),
            cap: caps.max_memory_bytes,
        });
    }
    // LZ4 makes at most 255 bytes of each compressed one (a match grows by 255 per length
    // byte): a larger claim is a lie, refused before a buffer of its size is allocated.
    if u64::from(body_len) > compressed_len as u64 * LZ4_MAX_EXPANSION {
        return Err(SnapshotError::Malformed(format!(
            "a body of {body_len} bytes claimed for {compressed_len} compressed bytes (LZ4 expands at most {LZ4_MAX_EXPANSION} times)"
        )));
    }
    let body = lz4_flex::block::decompress(compressed, body_len as usize)
        .map_err(|e| SnapshotError::Malformed(format!("the body does not decompress: {e}")))?;
    let mut r = Reader::new(&body);
    let memory_pages = r.u32("the memory size")?;
    let memory_bytes = u64::from(memory_pages) * u64::from(PAGE_BYTES);
    if memory_bytes > caps.max_memory_bytes {
        return Err(SnapshotError::MemoryOverCap {
            bytes: memory_bytes,
            cap: caps.max_memory_bytes,
        });
    }
    let chunk_limit = memory_pages * (PAGE_BYTES / CHUNK_BYTES);
    let chunk_count = r.u32("the chunk count")?;
    if chunk_count > chunk_limit {
        return Err(SnapshotError::Malformed(format!(
            "{chunk_count} memory chunks in a memory of {chunk_limit}"
        )));
    }
    let mut chunks = Vec::with_capacity(chunk_count as usize);
    let mut previous = None;
    for _ in 0..chunk_count {
        let index = r.u32("a memory chunk")?;
        if index >= chunk_limit || previous.is_some_and(|p| index <= p) {
            return Err(SnapshotError::Malformed(format!(
                "memory chunk {index} is out of order or beyond the memory"
            )));
        }
        previous = Some(index);
        chunks.push((
            index,
            r.take(CHUNK_BYTES as usize, "a memory chunk")?.to_vec(),
        ));
    }
    // Each global takes 13 bytes.
    let global_count = r.count(13, "the globals")?;
    let mut globals = Vec::with_capacity(global_count);
    for _ in 0..global_count {
        let index = r.u32("a global")?;
        let tag = r.u8("a global")?;
        let bits = r.u64("a global")?;
        let value = match tag {
            0 => GlobalValue::I32(bits as u32 as i32),
            1 => GlobalValue::I64(bits as i64),
            2 => GlobalValue::F32(bits as u32),
            3 => GlobalValue::F64(bits),
            other => {
                return Err(SnapshotError::Malformed(format!(
                    "global {index} has the unknown type {other}"
                )))
            }
        };
        globals.push((index, value));
    }
    let host_len = r.u32("the host state")?;
    if host_len > caps.max_host_bytes {
        return Err(SnapshotError::Malformed(format!(
            "{host_len} bytes of host state, more than the {} accepted",
            caps.max_host_bytes
        )));
    }
    let host = r.take(host_len as usize, "the host state")?.to_vec();
    if r.left() != 0 {
        return Err(SnapshotError::Malformed(format!(
            "{} bytes after the host state",
            r.left()
        )));
    }
    Ok(Snapshot {
        module_hash,
        memory_pages,
        chunks,
        globals,
        host,
    })
}

/// The chunks of `memory` that differ from `initial` (the module's memory before its `main`
/// ran; shorter if the guest grew its memory since).
pub fn differing_chunks(memory: &[u8], initial: &[u8]) -> Vec<(u32, Vec<u8>)> {
    memory
        .chunks(CHUNK_BYTES as usize)
        .enumerate()
        .filter(|(i, chunk)| {
            let start = i * CHUNK_BYTES as usize;
            let before = initial.get(start..start + chunk.len());
            match before {
                Some(before) => before != *chunk,
                // Grown since: differs unless still zero.
                None => chunk.iter().any(|&b| b != 0),
            }
        })
        .map(|(i, chunk)| (i as u32, chunk.to_vec()))
        .collect()
}

/// Writes `v` little-endian, as [`Reader::u32`] reads it.
pub(crate) fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Writes `bytes` after their length (u32), as a count and [`Reader::take`] read them.
pub(crate) fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_u32(out, bytes.len() as u32);
    out.extend_from_slice(bytes);
}

/// A cursor over untrusted bytes.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    pub(crate) fn left(&self) -> usize {
        self.bytes.len()
    }

    pub(crate) fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], SnapshotError> {
        if n > self.bytes.len() {
            return Err(SnapshotError::Truncated {
                needed: n,
                left: self.bytes.len(),
                what,
            });
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    /// A count (u32) of items of `item_bytes` each, refused if they cannot all be there: a
    /// count is never trusted to size an allocation.
    pub(crate) fn count(
        &mut self,
        item_bytes: usize,
        what: &'static str,
    ) -> Result<usize, SnapshotError> {
        let count = self.u32(what)? as usize;
        let needed = count.saturating_mul(item_bytes);
        if needed > self.left() {
            return Err(SnapshotError::Truncated {
                needed,
                left: self.left(),
                what,
            });
        }
        Ok(count)
    }

    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8, SnapshotError> {
        Ok(self.take(1, what)?[0])
    }

    pub(crate) fn u16(&mut self, what: &'static str) -> Result<u16, SnapshotError> {
        Ok(u16::from_le_bytes(
            self.take(2, what)?.try_into().expect("2"),
        ))
    }

    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32, SnapshotError> {
        Ok(u32::from_le_bytes(
            self.take(4, what)?.try_into().expect("4"),
        ))
    }

    pub(crate) fn u64(&mut self, what: &'static str) -> Result<u64, SnapshotError> {
        Ok(u64::from_le_bytes(
            self.take(8, what)?.try_into().expect("8"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAPS: Caps = Caps {
        max_memory_bytes: 4 << 20,
        max_host_bytes: 1 << 20,
    };

    fn sample() -> Snapshot {
        let mut memory = vec![0u8; 2 * PAGE_BYTES as usize];
        let initial = memory.clone();
        memory[5] = 1;
        memory[3 * CHUNK_BYTES as usize + 7] = 0xAB;
        memory[2 * PAGE_BYTES as usize - 1] = 9;
        Snapshot {
            module_hash: [7; 32],
            memory_pages: 2,
            chunks: differing_chunks(&memory, &initial),
            globals: vec![
                (0, GlobalValue::I32(65536)),
                (1, GlobalValue::I64(-3)),
                (2, GlobalValue::F32(f32::NAN.to_bits() | 1)),
                (3, GlobalValue::F64(0.5f64.to_bits())),
            ],
            host: b"host state".to_vec(),
        }
    }

    #[test]
    fn a_snapshot_reads_back_as_written() {
        let snapshot = sample();
        assert_eq!(
            snapshot.chunks.iter().map(|c| c.0).collect::<Vec<_>>(),
            [0, 3, 31]
        );
        assert_eq!(decode(&encode(&snapshot), CAPS).unwrap(), snapshot);
    }

    #[test]
    fn a_snapshot_cut_anywhere_is_refused() {
        let bytes = encode(&sample());
        for len in 0..bytes.len() {
            assert!(
                decode(&bytes[..len], CAPS).is_err(),
                "cut at {len} accepted"
            );
        }
    }

    #[test]
    fn an_altered_byte_is_a_checksum_error() {
        let bytes = encode(&sample());
        for at in [
            HEADER_BYTES + 3,
            bytes.len() - CHECKSUM_BYTES - 1,
            bytes.len() - 1,
        ] {
            let mut altered = bytes.clone();
            altered[at] ^= 0x40;
            assert_eq!(
                decode(&altered, CAPS),
                Err(SnapshotError::Checksum),
                "at {at}"
            );
        }
    }

    #[test]
    fn a_snapshot_beyond_the_memory_cap_is_refused() {
        let error = decode(
            &encode(&sample()),
            Caps {
                max_memory_bytes: PAGE_BYTES.into(),
                ..CAPS
            },
        )
        .unwrap_err();
        assert!(
            matches!(error, SnapshotError::MemoryOverCap { bytes: 131072, .. }),
            "{error}"
        );
        assert!(error.to_string().contains("--max-memory-mib"), "{error}");
    }

    /// A forged header that claims a body far larger than its compressed bytes could make
    /// is refused before the body's buffer is allocated; the most compressible body (zeros)
    /// stays within the bound.
    #[test]
    fn a_body_larger_than_lz4_can_make_of_its_bytes_is_refused() {
        let zeros = vec![0u8; 4 << 20];
        let compressed = lz4_flex::block::compress(&zeros);
        assert!(zeros.len() as u64 <= compressed.len() as u64 * LZ4_MAX_EXPANSION);

        let mut forged = seal(&[7; 32], b"tiny");
        let body_len_at = HEADER_BYTES - 8;
        forged[body_len_at..body_len_at + 4].copy_from_slice(&(3u32 << 20).to_le_bytes());
        let signed = forged.len() - CHECKSUM_BYTES;
        let checksum: [u8; 32] = Sha256::digest(&forged[..signed]).into();
        forged[signed..].copy_from_slice(&checksum);
        let refused = decode(&forged, CAPS).unwrap_err().to_string();
        assert!(
            refused.contains("a body of 3145728 bytes claimed for 5 compressed bytes"),
            "{refused}"
        );
    }

    #[test]
    fn other_formats_and_abis_are_named() {
        let bytes = encode(&sample());
        let mut other = bytes.clone();
        other[8] = 2;
        assert_eq!(
            decode(&other, CAPS),
            Err(SnapshotError::FormatVersion { found: 2 })
        );
        let mut other = bytes.clone();
        other[10] = 9;
        assert_eq!(
            decode(&other, CAPS),
            Err(SnapshotError::AbiVersion { found: 9 })
        );
        assert_eq!(
            decode(b"not a snapshot at all", CAPS),
            Err(SnapshotError::NotASnapshot)
        );
    }

    #[test]
    fn chunks_that_became_zero_or_grew_count_as_different() {
        let initial = vec![1u8; CHUNK_BYTES as usize];
        let mut memory = vec![0u8; 3 * CHUNK_BYTES as usize];
        memory[2 * CHUNK_BYTES as usize] = 5;
        let chunks = differing_chunks(&memory, &initial);
        assert_eq!(chunks.iter().map(|c| c.0).collect::<Vec<_>>(), [0, 2]);
    }
}
