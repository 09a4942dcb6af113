//! What each publisher of a guest carries to its next host (docs/migration.md, "Snapshot
//! format", the publishers' section): how many messages it published, so that its numbering
//! goes on there, and for a transient-local one the messages it keeps for late joiners, which
//! its re-created publisher keeps in their place (`roslite::SerializedPublisher::
//! continue_from`).

use roslite::KeptMessage;

use crate::snapshot::{put_bytes, put_u32, Reader, SnapshotError};

/// One publisher of the guest as it moves: its guest handle, the count of messages it
/// published (the number of the last) and those it keeps for late joiners, oldest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CarriedPublisher {
    pub handle: i64,
    pub published: u64,
    pub kept: Vec<KeptMessage>,
}

/// A count (u32), then each publisher as its guest handle (i64), the count published (u64) and
/// a count of kept messages (u32), each as its publication sequence number (u64), its source
/// time in ns since the Unix epoch (u64) and its bytes (u32 length, CDR with its encapsulation
/// header).
pub fn encode_publishers(publishers: &[CarriedPublisher], out: &mut Vec<u8>) {
    put_u32(out, publishers.len() as u32);
    for p in publishers {
        out.extend_from_slice(&p.handle.to_le_bytes());
        out.extend_from_slice(&p.published.to_le_bytes());
        put_u32(out, p.kept.len() as u32);
        for m in &p.kept {
            out.extend_from_slice(&m.publication_sequence_number.to_le_bytes());
            out.extend_from_slice(&m.source_time_ns.to_le_bytes());
            put_bytes(out, &m.bytes);
        }
    }
}

pub(crate) fn decode_publishers(
    r: &mut Reader<'_>,
) -> Result<Vec<CarriedPublisher>, SnapshotError> {
    const WHAT: &str = "the publishers";
    // A publisher takes at least 20 bytes, a kept message at least 20.
    let count = r.count(20, WHAT)?;
    let mut publishers = Vec::with_capacity(count);
    for _ in 0..count {
        let handle = r.u64(WHAT)? as i64;
        let published = r.u64(WHAT)?;
        let kept_count = r.count(20, WHAT)?;
        let mut kept = Vec::with_capacity(kept_count);
        for _ in 0..kept_count {
            let publication_sequence_number = r.u64(WHAT)?;
            let source_time_ns = r.u64(WHAT)?;
            let n = r.count(1, WHAT)?;
            kept.push(KeptMessage {
                bytes: r.take(n, WHAT)?.to_vec(),
                source_time_ns,
                publication_sequence_number,
            });
        }
        publishers.push(CarriedPublisher {
            handle,
            published,
            kept,
        });
    }
    Ok(publishers)
}
