//! A hostile reader against a shared-memory writer: the body of the `shm_channel` fuzz target
//! (`fuzz/`, docs/robustness.md "Fuzzing"). Not part of the transport API.
//!
//! A reader and its writer share the channel mapping read-write (docs/shm.md), so a process of
//! the same user that ignores the protocol can write anything into it at any moment. The writer
//! must survive that and keep serving its other readers exactly as before, and the reader's own
//! code must survive what a writer could write there. The input drives one writer, one honest
//! reader and one hostile reader in this process: sends, the hostile reader's takes and
//! releases, releases of chunks it never got, and writes of any word anywhere in its channel.
//!
//! Properties, for every input: nothing panics (overflow checks are on in fuzz builds); every
//! send returns a sample number or times out; the honest reader receives every sample sent,
//! in order, each with the bytes it was sent with (a chunk the hostile reader got freed early
//! and reused would change them); and once both readers are gone nothing is left in use.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::channel::ChunkRef;
use crate::{
    Endpoint, History, ReaderConfig, SendError, ShmReader, ShmWriter, WriterConfig, WriterKey,
};

/// The honest reader's depth. It takes what waits before a send would pass it, so it never
/// loses a sample to keep-last, however long the input.
const HONEST_DEPTH: u32 = 4096;

/// How long connecting, attaching and reclaiming may take before the harness calls it a hang
/// (the endpoint's thread answers; on a loaded machine that can take seconds).
const PATIENCE: Duration = Duration::from_secs(10);

/// What a run did, so a test can show that the seeds reach the paths they are meant to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostileRun {
    /// Samples the writer sent (the honest reader got each).
    pub sent: u64,
    /// Samples the hostile reader took.
    pub hostile_received: u64,
    /// The writer's `readers_misbehaved` at the end: 1 when it cut the hostile reader off.
    pub readers_misbehaved: u64,
    /// The writer's `bogus_releases` at the end.
    pub bogus_releases: u64,
}

/// Runs one input (see the module documentation). Byte 0 sets the hostile reader up (history,
/// depth, quota) and whether the writer keeps samples for late joiners; each further record
/// is an operation byte and its arguments.
pub fn hostile_reader(data: &[u8]) -> HostileRun {
    let Some((&setup, ops)) = data.split_first() else {
        return HostileRun::default();
    };
    let endpoint = Endpoint::bind().expect("bind an endpoint");
    let key = WriterKey::from(0x5eed_u128);
    let writer_config = WriterConfig {
        // Keeps a run short when the hostile keep-all reader stops taking.
        max_blocking_time: Duration::from_micros(200),
        room_spin: Duration::ZERO,
        kept_for_late_joiners: u32::from(setup >> 6),
        ..WriterConfig::default()
    };
    let kept = writer_config.kept_for_late_joiners as usize;
    let writer = ShmWriter::create(&endpoint, key, writer_config).expect("create the writer");
    let depth = u32::from(setup & 7) + 1;
    let hostile_config = ReaderConfig {
        history: if setup & 8 != 0 {
            History::KeepAll(depth)
        } else {
            History::KeepLast(depth)
        },
        max_held: u32::from((setup >> 4) & 3) + 1,
        connect_timeout: PATIENCE,
        ..ReaderConfig::default()
    };
    let honest_config = ReaderConfig {
        history: History::KeepLast(HONEST_DEPTH),
        max_held: 1,
        connect_timeout: PATIENCE,
        ..ReaderConfig::default()
    };
    let hostile = ShmReader::connect(&endpoint, endpoint.address(), key, hostile_config)
        .expect("connect the hostile reader");
    let honest = ShmReader::connect(&endpoint, endpoint.address(), key, honest_config)
        .expect("connect the honest reader");
    wait_until("both readers are attached", || writer.stats().readers == 2);

    let mut input = ops.iter().copied();
    let mut sent: VecDeque<(u64, usize)> = VecDeque::new();
    let mut next_seq = 1u64;
    let mut held = VecDeque::new();
    let mut run = HostileRun::default();
    while let Some(op) = input.next() {
        // An operation's arguments past the end of the input read as zeros.
        let mut next = || input.next().unwrap_or(0);
        match op % 6 {
            0 => {
                // Up to 16 KiB: chunks of several sizes, so segments come and go.
                let len = usize::from(next()) * 64 + usize::from(next() % 64);
                if sent.len() >= HONEST_DEPTH as usize {
                    drain(&honest, &mut sent);
                }
                match writer.send_copy(&payload(next_seq, len), 0) {
                    Ok(seq) => {
                        assert_eq!(seq, next_seq, "samples are numbered one by one");
                        sent.push_back((seq, len));
                        next_seq += 1;
                    }
                    Err(SendError::Timeout) => {}
                    Err(e) => panic!("a send failed otherwise than by timing out: {e}"),
                }
            }
            1 => {
                if let Ok(Some(sample)) = hostile.receive() {
                    held.push_back(sample);
                    run.hostile_received += 1;
                }
            }
            2 => drop(held.pop_front()),
            3 => {
                let offset = usize::from(u16::from_le_bytes([next(), next()]));
                hostile.channel().scribble(offset, word(&mut next));
            }
            4 => {
                let chunk = ChunkRef {
                    segment: u32::from(next() % 8),
                    index: u32::from(next() % 40),
                };
                let _ = hostile.channel().complete(chunk);
            }
            _ => drain(&honest, &mut sent),
        }
    }
    drain(&honest, &mut sent);
    assert!(
        sent.is_empty(),
        "the honest reader never got samples {:?}",
        sent.iter().map(|(seq, _)| seq).collect::<Vec<_>>()
    );
    run.sent = next_seq - 1;
    let stats = writer.stats();
    run.readers_misbehaved = stats.readers_misbehaved;
    run.bogus_releases = stats.bogus_releases;
    drop(held);
    drop(hostile);
    drop(honest);
    wait_until("both readers are detached and nothing is in use", || {
        let stats = writer.stats();
        stats.readers == 0 && stats.chunks_in_use <= kept
    });
    run
}

/// A word the hostile reader writes: the values that sit at the edges of the ring's arithmetic
/// more often than a uniform draw would give them.
fn word(next: &mut impl FnMut() -> u8) -> u64 {
    match next() % 8 {
        0 => 0,
        1 => u64::MAX,
        2 => u64::MAX - u64::from(next()),
        3 => u64::from(next()),
        4 => 1 << (next() % 64),
        _ => u64::from_le_bytes(std::array::from_fn(|_| next())),
    }
}

/// The bytes of sample `seq`: each depends on the number and its place.
fn payload(seq: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u64).wrapping_mul(131).wrapping_add(seq) as u8)
        .collect()
}

/// Takes everything waiting for the honest reader and checks it against what was sent.
fn drain(honest: &ShmReader, sent: &mut VecDeque<(u64, usize)>) {
    loop {
        match honest.receive() {
            Ok(Some(sample)) => {
                let (seq, len) = sent.pop_front().unwrap_or_else(|| {
                    panic!("sample {} arrived but was never sent", sample.seq())
                });
                assert_eq!(
                    sample.seq(),
                    seq,
                    "the honest reader's samples come in order"
                );
                assert!(
                    *sample == payload(seq, len)[..],
                    "sample {seq} changed between its send and its receive"
                );
            }
            Ok(None) => return,
            Err(e) => panic!("the honest reader failed: {e}"),
        }
    }
}

fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(start.elapsed() < PATIENCE, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_micros(100));
    }
}
