//! Zero-copy shared-memory writer and reader.
//!
//! Ownership and invariants:
//! - The writer owns a pool of *segments*: sealed memfds, each cut into equal chunks of a power
//!   of two bytes. It maps them read-write; readers receive them over the Unix socket and can only
//!   map them read-only (`F_SEAL_FUTURE_WRITE`).
//! - Every chunk has a reference count in the writer's *private* memory: one for an open loan,
//!   one per reader that was handed the chunk and has not given it back. The writer tracks, per
//!   reader, exactly which chunks that reader holds, so a release it never handed out is ignored
//!   and a reader that dies gives back exactly what it held. Readers cannot corrupt the pool.
//! - Per reader, a [`Channel`] (a small read-write mapping) carries announcements to the reader
//!   and releases back. A chunk is immutable from `send` until its count drops to zero.
//! - The reader is woken through an eventfd it passed in its hello, only when it said it is
//!   going to sleep; the writer sleeps on a futex in the channel when a keep-all reader is full.
//!
//! Loans are typed: [`LoanUninit`] (chunk reserved, contents unspecified) becomes [`Loan`] once
//! written, and `Loan::send` consumes it. A loan dropped unsent returns its chunk.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::io;
use std::ops::Deref;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{
    AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed, Ordering::SeqCst,
};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use crate::channel::{channel_len, Channel, ChunkRef, Descriptor, Sleep};
use crate::endpoint::{
    self, lock, Attach, ConnId, Endpoint, EndpointAddress, EndpointShared, Watch,
};
use crate::protocol::{Hello, History, Kind, Message, RejectReason, WriterKey, MAX_DEPTH};
use crate::sys::{self, Mapping, SealCheck};
use crate::{ConnectError, CreateError, IdleSpin, ReceiveError, SendError};

/// Smallest chunk: one page.
const MIN_CHUNK: usize = 4096;
/// Segments of small chunks hold this many bytes (fewer, larger segments for big chunks).
const SEGMENT_TARGET: usize = 2 << 20;
const MAX_CHUNKS_PER_SEGMENT: usize = 32;
/// Largest loan: chunks are powers of two and `u64` lengths travel in the channel; 16 GiB is
/// far beyond any ROS message and keeps the arithmetic trivially in range.
pub const MAX_LOAN: usize = 1 << 34;

/// Configuration of a [`ShmWriter`].
#[derive(Clone, Copy, Debug)]
pub struct WriterConfig {
    /// How long `send` waits for room in a full keep-all reader's queue.
    pub max_blocking_time: Duration,
    /// Fully free segments are kept for reuse up to this many bytes; beyond it they are
    /// unmapped (and readers told to unmap them).
    pub retain_free_bytes: usize,
    /// The newest samples kept (their chunks held) for readers that connect later and ask for
    /// them ([`ReaderConfig::wants_kept`]): a TRANSIENT_LOCAL writer's KEEP_LAST depth. 0 (the
    /// default, VOLATILE): none.
    pub kept_for_late_joiners: u32,
    /// Payload bytes one keep-all reader holds at most, announced or taken and not released
    /// (a byte bound beside the ring's `depth` entries, as DDS `RESOURCE_LIMITS`): beyond it
    /// `send` waits for that reader as for a full ring, up to `max_blocking_time`. One sample
    /// larger than the bound still goes to a reader that holds nothing. Default
    /// [`crate::KEEP_ALL_MAX_BYTES`].
    pub keep_all_max_bytes: usize,
    /// Payload bytes one reader may hold at once, announced or taken and not given back (a
    /// sample always fits a reader that holds nothing); beyond it, and beyond its count quota
    /// (its depth plus its `max_held` plus one), it gets no more samples and loses them
    /// ([`WriterStats::quota_drops`]). Default 256 MiB.
    pub max_held_bytes_per_reader: usize,
    /// How long `send`, finding a keep-all reader without room, yields the CPU and looks
    /// again before it sleeps: a reader that keeps up makes room within a microsecond or two,
    /// and while the writer is not marked asleep its takes make no wake-up call (a futex wake
    /// and a context switch each way, per sample, when a writer outruns its reader by a ring).
    /// Zero: it sleeps at once. Default [`IdleSpin::DEFAULT_BUDGET`], as a reader's spin.
    pub room_spin: Duration,
}

impl Default for WriterConfig {
    fn default() -> Self {
        WriterConfig {
            // Fast DDS's default, and what ROS 2 users meet most often.
            max_blocking_time: Duration::from_millis(100),
            retain_free_bytes: 256 << 20,
            kept_for_late_joiners: 0,
            keep_all_max_bytes: crate::KEEP_ALL_MAX_BYTES,
            max_held_bytes_per_reader: 256 << 20,
            room_spin: IdleSpin::DEFAULT_BUDGET,
        }
    }
}

/// Counters and gauges of a writer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriterStats {
    pub readers: usize,
    pub segments: usize,
    /// Bytes of all segments (virtual; pages are only allocated when written).
    pub segment_bytes: usize,
    /// Chunks loaned or held by at least one reader.
    pub chunks_in_use: usize,
    /// Samples overwritten in keep-last readers' queues before they read them.
    pub overwritten: u64,
    /// Readers disconnected because they wrote impossible indices into their channel.
    pub readers_misbehaved: u64,
    /// Releases of chunks the reader did not hold (ignored).
    pub bogus_releases: u64,
    /// Samples sent (to at least one reader or none).
    pub sent: u64,
    /// Bytes of all samples sent.
    pub sent_bytes: u64,
    /// Of `sent_bytes`, those copied into their chunk from a caller's buffer
    /// ([`ShmWriter::send_copy`], [`LoanUninit::copy_from`]) rather than written in place.
    pub copied_bytes: u64,
    /// Wake-up calls made for readers found asleep (a futex wake or an eventfd write); a
    /// reader that was awake, or looking again ([`IdleSpin`]), needed none.
    pub wakeups: u64,
    /// Samples not announced to a reader because it held its quota of chunks (its depth
    /// plus its `max_held` plus one) or [`WriterConfig::max_held_bytes_per_reader`]: that
    /// reader lost them.
    pub quota_drops: u64,
}

struct Segment {
    fd: OwnedFd,
    map: Arc<Mapping>,
    chunk_size: usize,
    refs: Vec<u32>,
    free: Vec<u32>,
}

impl Segment {
    fn bytes(&self) -> usize {
        self.chunk_size * self.refs.len()
    }

    fn fully_free(&self) -> bool {
        self.free.len() == self.refs.len()
    }
}

struct ReaderSlot {
    conn: ConnId,
    sock: Arc<OwnedFd>,
    channel: Arc<Channel>,
    wake: OwnedFd,
    history: History,
    /// What we pushed at each ring index (modulo capacity): the shared slot is not trusted.
    mirror: Vec<ChunkRef>,
    /// Chunks this reader holds (announced and not yet released), with their lengths.
    holds: ChunkMap,
    /// The lengths in `holds`, summed.
    held_bytes: u64,
    /// Chunks it may hold at once: its ring, its quota (`max_held` from its hello) and one in
    /// flight. A reader that never gives chunks back (a process of the same user that does
    /// not follow the protocol) gets no more samples beyond it: it loses them.
    max_holds: usize,
    dead: Arc<AtomicBool>,
}

impl ReaderSlot {
    /// Whether this keep-all reader has no room for one more sample of `len` bytes: its ring
    /// is full, or what it holds (announced, or taken and not given back) would pass
    /// `max_bytes` (one sample always fits a reader that holds nothing). A keep-last reader
    /// never makes the writer wait (its oldest entry is overwritten).
    fn keep_all_blocked(&self, len: u64, max_bytes: u64) -> bool {
        matches!(self.history, History::KeepAll(_))
            && (self.channel.is_full().unwrap_or(false)
                || (!self.holds.is_empty() && self.held_bytes.saturating_add(len) > max_bytes))
    }

    /// Announces `descriptor` at the ring's next index, remembering what it is.
    fn push(&mut self, descriptor: Descriptor) {
        let capacity = self.mirror.len() as u64;
        let at = (self.channel.next_index() % capacity) as usize;
        self.mirror[at] = descriptor.chunk;
        if let Some(old) = self.holds.insert(descriptor.chunk, descriptor.len) {
            self.held_bytes = self.held_bytes.saturating_sub(old);
        }
        self.held_bytes = self.held_bytes.saturating_add(descriptor.len);
        self.channel.push(descriptor);
    }

    /// Takes `chunk` out of what this reader holds; whether it held it.
    fn forget(&mut self, chunk: ChunkRef) -> bool {
        match self.holds.remove(&chunk) {
            Some(len) => {
                self.held_bytes = self.held_bytes.saturating_sub(len);
                true
            }
            None => false,
        }
    }

    /// Whether this reader may be handed one more sample of `len` bytes: it holds fewer than
    /// `max_holds` chunks, and `max_held_bytes` would not be passed (one sample always fits
    /// a reader that holds nothing). Keep-all readers are held to their byte bound by
    /// waiting ([`Self::keep_all_blocked`]) instead.
    fn within_quota(&self, len: u64, max_held_bytes: u64) -> bool {
        self.holds.len() < self.max_holds
            && (matches!(self.history, History::KeepAll(_))
                || self.holds.is_empty()
                || self.held_bytes.saturating_add(len) <= max_held_bytes)
    }

    /// Wakes the reader if it said it went to sleep (its flag is cleared); whether it had.
    fn wake_if_sleeping(&self) -> bool {
        match self.channel.take_reader_sleeping() {
            Some(Sleep::Futex) => self.channel.wake_reader(),
            Some(Sleep::EventFd) => sys::eventfd_signal(self.wake.as_fd()),
            None => return false,
        }
        true
    }
}

/// Chunks (with a length each) hashed by [`ChunkHasher`].
type ChunkMap = HashMap<ChunkRef, u64, BuildHasherDefault<ChunkHasher>>;

/// Hashes a [`ChunkRef`] with a multiply per field instead of SipHash, which was about a tenth
/// of the pinging side's user time in a 64 B back-to-back ping-pong (a lookup and an insert
/// per sample). SipHash's resistance to chosen keys buys nothing here: a set only ever holds
/// chunks this writer handed out; a reader's bogus release is a lookup, never an insert.
#[derive(Default)]
struct ChunkHasher(u64);

impl ChunkHasher {
    /// Odd, with bits spread over the whole word (2^64 over the golden ratio), so the
    /// multiplication carries every input bit into the high bits hashbrown's tags use.
    const MIX: u64 = 0x9e37_79b9_7f4a_7c15;
}

impl Hasher for ChunkHasher {
    fn finish(&self) -> u64 {
        // Folds the well-mixed high half into the low bits the bucket index is taken from.
        self.0 ^ (self.0 >> 32)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u32(u32::from(byte));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0.rotate_left(32) ^ u64::from(n)).wrapping_mul(Self::MIX);
    }
}

#[derive(Default)]
struct WriterState {
    segments: BTreeMap<u32, Segment>,
    next_segment: u32,
    readers: Vec<ReaderSlot>,
    seq: u64,
    free_segment_bytes: usize,
    overwritten: u64,
    readers_misbehaved: u64,
    bogus_releases: u64,
    sent: u64,
    sent_bytes: u64,
    copied_bytes: u64,
    wakeups: u64,
    quota_drops: u64,
    /// The newest sent samples, oldest first, each holding one reference of its chunk
    /// ([`WriterConfig::kept_for_late_joiners`]).
    kept: VecDeque<Descriptor>,
}

pub(crate) struct ShmWriterShared {
    key: WriterKey,
    config: WriterConfig,
    endpoint: Arc<EndpointShared>,
    state: Mutex<WriterState>,
    /// `state.readers.len()`, readable without the lock (a publisher asks on every publish).
    reader_count: Arc<AtomicUsize>,
}

/// Publishes samples of one writer to every reader attached through its endpoint.
pub struct ShmWriter {
    shared: Arc<ShmWriterShared>,
}

impl ShmWriter {
    /// Registers a writer under `key` at `endpoint`; readers connect with the same key.
    ///
    /// # Errors
    /// [`CreateError::KeyInUse`] if a live writer already has this key.
    pub fn create(
        endpoint: &Endpoint,
        key: WriterKey,
        config: WriterConfig,
    ) -> Result<ShmWriter, CreateError> {
        let shared = Arc::new(ShmWriterShared {
            key,
            config,
            endpoint: endpoint.shared().clone(),
            state: Mutex::new(WriterState::default()),
            reader_count: Arc::new(AtomicUsize::new(0)),
        });
        let weak: std::sync::Weak<dyn Attach> = Arc::downgrade(&shared) as _;
        if !endpoint.shared().register(key, weak) {
            return Err(CreateError::KeyInUse);
        }
        Ok(ShmWriter { shared })
    }

    /// Reserves a chunk of `len` bytes. Its contents are unspecified (a reused chunk holds an
    /// older sample) until written.
    ///
    /// # Errors
    /// [`SendError::TooLarge`] beyond [`MAX_LOAN`]; [`SendError::Io`] when no segment can be
    /// created (memory or descriptor limits).
    pub fn loan(&self, len: usize) -> Result<LoanUninit, SendError> {
        let (chunk, (map, offset)) = self
            .shared
            .reserve(len, |map, offset| (map.clone(), offset))?;
        Ok(LoanUninit {
            inner: LoanInner {
                writer: self.shared.clone(),
                map,
                chunk,
                offset,
                len,
                sent: false,
                copied: false,
            },
        })
    }

    /// [`Self::loan`], [`LoanUninit::write_with`] and [`Loan::send_numbered`] in one call (with
    /// `number_from` as there, if any): a chunk of `len` bytes is reserved, `write` fills it in
    /// place and returns how many bytes it used, and the sample is sent. Takes no reference
    /// count of the writer or the segment for the loan, which the three steps do: for a small
    /// message that was a tenth of the publishing side's work.
    ///
    /// # Errors
    /// [`InPlaceError::Write`] with what `write` returned, [`InPlaceError::Send`] as
    /// [`Self::loan`] and [`Loan::send`]; either way the chunk goes back to the pool.
    pub fn send_in_place<E>(
        &self,
        len: usize,
        write: impl FnOnce(&mut [u8]) -> Result<usize, E>,
        number_from: Option<u64>,
        timestamp_ns: u64,
    ) -> Result<u64, InPlaceError<E>> {
        let (chunk, start) = self
            .shared
            .reserve(len, |map, offset| map.chunk_start(offset, len))
            .map_err(InPlaceError::Send)?;
        let hold = ChunkHold {
            writer: &self.shared,
            chunk: Some(chunk),
        };
        // SAFETY: `reserve` handed this chunk out with a count of 1, ours (`hold` gives it
        // back), so nobody else reads or writes it until it is sent. Its segment stays mapped
        // meanwhile: only segments without a chunk in use are retired, and the writer's state
        // keeps the segments while `self` lives. Segments are mapped writable, and
        // `chunk_start` checked that the `len` bytes lie inside the mapping.
        let bytes = unsafe { std::slice::from_raw_parts_mut(start.as_ptr(), len) };
        let used = write(bytes).map_err(InPlaceError::Write)?.min(len);
        let seq = self
            .shared
            .send_chunk(chunk, used, false, timestamp_ns, number_from)
            .map_err(InPlaceError::Send)?;
        hold.sent();
        Ok(seq)
    }

    /// Numbers the next sample `next` (or higher, if samples up to it were already sent), so
    /// readers see the sequence numbers of the caller's own numbering (a ROS publisher's, whose
    /// samples reach this writer only while it has readers).
    pub fn number_from(&self, next: u64) {
        let mut state = lock(&self.shared.state);
        state.seq = state.seq.max(next.saturating_sub(1));
    }

    /// Copies `payload` into a fresh loan and sends it (for callers that already serialized).
    ///
    /// # Errors
    /// As [`ShmWriter::loan`] and [`Loan::send`].
    pub fn send_copy(&self, payload: &[u8], timestamp_ns: u64) -> Result<u64, SendError> {
        self.loan(payload.len())?
            .copy_from(payload)
            .send(timestamp_ns)
    }

    /// Readers attached now, without taking the writer's lock; may be stale by the time a
    /// sample is sent (a reader may attach or go in between).
    pub fn reader_count(&self) -> usize {
        self.shared.reader_count.load(SeqCst)
    }

    /// [`Self::reader_count`] without holding the writer: zero once it is dropped.
    pub fn reader_count_handle(&self) -> crate::ReaderCount {
        crate::ReaderCount(self.shared.reader_count.clone())
    }

    pub fn stats(&self) -> WriterStats {
        let mut state = lock(&self.shared.state);
        self.shared.reclaim(&mut state);
        WriterStats {
            readers: state.readers.len(),
            segments: state.segments.len(),
            segment_bytes: state.segments.values().map(Segment::bytes).sum(),
            chunks_in_use: state
                .segments
                .values()
                .map(|s| s.refs.len() - s.free.len())
                .sum(),
            overwritten: state.overwritten,
            readers_misbehaved: state.readers_misbehaved,
            bogus_releases: state.bogus_releases,
            sent: state.sent,
            sent_bytes: state.sent_bytes,
            copied_bytes: state.copied_bytes,
            wakeups: state.wakeups,
            quota_drops: state.quota_drops,
        }
    }

    pub fn key(&self) -> WriterKey {
        self.shared.key
    }
}

impl Drop for ShmWriter {
    fn drop(&mut self) {
        self.shared.endpoint.deregister(self.shared.key);
        let readers = std::mem::take(&mut lock(&self.shared.state).readers);
        self.shared.reader_count.store(0, SeqCst);
        for reader in readers {
            // Readers see EOF and finish with what is queued; the endpoint forgets the socket
            // when it sees our side hung up.
            let _ = rustix::net::shutdown(reader.sock.as_fd(), rustix::net::Shutdown::Both);
        }
    }
}

impl ShmWriterShared {
    /// Takes a free chunk of at least `len` bytes (reclaiming released ones first, creating a
    /// segment if none is free) with a count of 1, the caller's; `at` sees its segment's
    /// mapping and the chunk's offset in it, under the lock.
    fn reserve<R>(
        &self,
        len: usize,
        at: impl FnOnce(&Arc<Mapping>, usize) -> R,
    ) -> Result<(ChunkRef, R), SendError> {
        if len > MAX_LOAN {
            return Err(SendError::TooLarge);
        }
        let chunk_size = len.max(1).next_power_of_two().max(MIN_CHUNK);
        let mut state = lock(&self.state);
        self.reclaim(&mut state);
        let found = state
            .segments
            .iter()
            .find(|(_, s)| s.chunk_size == chunk_size && !s.free.is_empty())
            .map(|(id, _)| *id);
        let segment_id = match found {
            Some(id) => id,
            None => self
                .new_segment(&mut state, chunk_size)
                .map_err(SendError::Io)?,
        };
        let segment = state
            .segments
            .get_mut(&segment_id)
            .expect("internal bug: segment just found");
        let was_fully_free = segment.fully_free();
        let index = segment
            .free
            .pop()
            .expect("internal bug: segment chosen for a free chunk");
        segment.refs[index as usize] = 1;
        let found = at(&segment.map, index as usize * chunk_size);
        let bytes = segment.bytes();
        if was_fully_free {
            state.free_segment_bytes -= bytes;
        }
        let chunk = ChunkRef {
            segment: segment_id,
            index,
        };
        Ok((chunk, found))
    }

    fn new_segment(&self, state: &mut WriterState, chunk_size: usize) -> io::Result<u32> {
        let chunks = (SEGMENT_TARGET / chunk_size).clamp(1, MAX_CHUNKS_PER_SEGMENT);
        let len = chunk_size * chunks;
        let fd = sys::memfd("roslite-shm-segment", len)?;
        let map = Mapping::map(fd.as_fd(), len, true)?;
        sys::seal_size_and_future_writes(fd.as_fd())?;
        let id = state.next_segment;
        state.next_segment = state
            .next_segment
            .checked_add(1)
            .ok_or(io::ErrorKind::OutOfMemory)?;
        let announce = Message::Segment {
            id,
            chunk_count: chunks as u32,
            chunk_size: chunk_size as u64,
        }
        .encode();
        let mut failed = Vec::new();
        for reader in &state.readers {
            if sys::send_with_fds(reader.sock.as_fd(), &announce, &[fd.as_fd()]).is_err() {
                failed.push(reader.conn);
            }
        }
        for conn in failed {
            // Its socket buffer is full of announcements it never read: it cannot follow.
            self.remove_reader(state, conn);
        }
        state.segments.insert(
            id,
            Segment {
                fd,
                map: Arc::new(map),
                chunk_size,
                refs: vec![0; chunks],
                free: (0..chunks as u32).rev().collect(),
            },
        );
        state.free_segment_bytes += len;
        Ok(id)
    }

    /// Takes back what readers released.
    fn reclaim(&self, state: &mut WriterState) {
        // Released chunks go back to their segments as they are drained (the borrows are of
        // disjoint fields): collecting them first cost an allocation on almost every loan.
        let mut corrupt = Vec::new();
        let WriterState {
            readers,
            segments,
            free_segment_bytes,
            bogus_releases,
            ..
        } = state;
        for reader in readers.iter_mut() {
            let (holds, held_bytes) = (&mut reader.holds, &mut reader.held_bytes);
            let result = reader.channel.drain_completions(|chunk| {
                if let Some(len) = holds.remove(&chunk) {
                    *held_bytes = held_bytes.saturating_sub(len);
                    release_ref(segments, free_segment_bytes, chunk);
                } else {
                    *bogus_releases += 1;
                }
            });
            if result.is_err() {
                corrupt.push(reader.conn);
            }
        }
        for conn in corrupt {
            state.readers_misbehaved += 1;
            self.remove_reader(state, conn);
        }
        self.retire_free_segments(state);
    }

    fn retire_free_segments(&self, state: &mut WriterState) {
        self.retire_free_segments_beyond(state, self.config.retain_free_bytes);
    }

    /// Retires fully free segments while their bytes exceed `retain`.
    fn retire_free_segments_beyond(&self, state: &mut WriterState, retain: usize) {
        while state.free_segment_bytes > retain {
            let Some((&id, _)) = state.segments.iter().find(|(_, s)| s.fully_free()) else {
                break;
            };
            let segment = state
                .segments
                .remove(&id)
                .expect("internal bug: segment just found");
            state.free_segment_bytes -= segment.bytes();
            let retire = Message::Retire { id }.encode();
            for reader in &state.readers {
                let _ = sys::send_with_fds(reader.sock.as_fd(), &retire, &[]);
            }
        }
    }

    fn remove_reader(&self, state: &mut WriterState, conn: ConnId) {
        let Some(position) = state.readers.iter().position(|r| r.conn == conn) else {
            return;
        };
        let reader = state.readers.swap_remove(position);
        self.reader_count.store(state.readers.len(), SeqCst);
        reader.dead.store(true, SeqCst);
        reader.channel.wake_writer();
        let _ = rustix::net::shutdown(reader.sock.as_fd(), rustix::net::Shutdown::Both);
        for chunk in reader.holds.into_keys() {
            unref(state, chunk);
        }
        // What a departed reader pinned (up to its quota) is free now: give it back to the
        // system instead of keeping it for reuse, down to as much as is still in use.
        let in_use: usize = state
            .segments
            .values()
            .filter(|s| !s.fully_free())
            .map(Segment::bytes)
            .sum();
        self.retire_free_segments_beyond(state, in_use.min(self.config.retain_free_bytes));
    }

    /// Sends the loan's chunk; `number_from` as [`ShmWriter::number_from`], under the same lock.
    fn send(
        &self,
        loan: &mut LoanInner,
        timestamp_ns: u64,
        number_from: Option<u64>,
    ) -> Result<u64, SendError> {
        let seq = self.send_chunk(loan.chunk, loan.len, loan.copied, timestamp_ns, number_from)?;
        loan.sent = true;
        Ok(seq)
    }

    /// Sends the first `len` bytes of `chunk`, whose one reference (the caller's) becomes one per
    /// reader; on an error the caller keeps it. `copied`: filled by a copy (for the counters).
    fn send_chunk(
        &self,
        chunk: ChunkRef,
        len: usize,
        copied: bool,
        timestamp_ns: u64,
        number_from: Option<u64>,
    ) -> Result<u64, SendError> {
        let mut deadline = None;
        let mut spin_until = None;
        // No `reclaim` here: the loan being sent reclaimed moments ago, and the next loan will.
        let mut state = lock(&self.state);
        // Keep-all readers without room for one more entry or `len` more bytes: wait (without
        // the lock, so hang-ups are processed) until each took or released enough, or the
        // deadline passes. Only we push, so room cannot disappear.
        let max_bytes = self.config.keep_all_max_bytes as u64;
        loop {
            // The common case (every keep-all reader has room) allocates nothing and reads
            // no clock.
            let blocked = |state: &WriterState| {
                state
                    .readers
                    .iter()
                    .find(|r| r.keep_all_blocked(len as u64, max_bytes))
                    .map(|r| (r.channel.clone(), r.dead.clone()))
            };
            let Some((channel, dead)) = blocked(&state) else {
                break;
            };
            let now = Instant::now();
            let deadline = *deadline.get_or_insert(now + self.config.max_blocking_time);
            // Look again behind a yield before sleeping, unmarked (`WriterConfig::room_spin`).
            if now < *spin_until.get_or_insert((now + self.config.room_spin).min(deadline)) {
                drop(state);
                std::thread::yield_now();
                state = lock(&self.state);
                self.reclaim(&mut state);
                continue;
            }
            // Marked waiting before the last look, so that a take or release after it wakes us.
            let seq = channel.prepare_wait();
            self.reclaim(&mut state);
            match blocked(&state) {
                None => break,
                Some((now_blocking, _)) if !Arc::ptr_eq(&now_blocking, &channel) => continue,
                Some(_) => {}
            }
            if Instant::now() >= deadline {
                return Err(SendError::Timeout);
            }
            drop(state);
            if !dead.load(SeqCst) {
                channel.wait_for_change(seq, deadline);
            }
            state = lock(&self.state);
            self.reclaim(&mut state);
        }
        if let Some(next) = number_from {
            state.seq = state.seq.max(next.saturating_sub(1));
        }
        state.seq += 1;
        let seq = state.seq;
        state.sent += 1;
        state.sent_bytes += len as u64;
        if copied {
            state.copied_bytes += len as u64;
        }
        let descriptor = Descriptor {
            chunk,
            len: len as u64,
            seq,
            timestamp_ns,
        };
        let mut overwritten = Vec::new();
        let mut corrupt = Vec::new();
        let mut wakeups = 0;
        let (mut delivered, mut quota_drops) = (0usize, 0u64);
        let max_held_bytes = self.config.max_held_bytes_per_reader as u64;
        for reader in &mut state.readers {
            let capacity = reader.mirror.len() as u64;
            match reader.channel.is_full() {
                Ok(false) => {}
                Ok(true) => match reader.channel.take_oldest() {
                    Ok(Some(index)) => {
                        let chunk = reader.mirror[(index % capacity) as usize];
                        if reader.forget(chunk) {
                            overwritten.push(chunk);
                        }
                    }
                    Ok(None) => {}
                    Err(_) => {
                        corrupt.push(reader.conn);
                        continue;
                    }
                },
                Err(_) => {
                    corrupt.push(reader.conn);
                    continue;
                }
            }
            if !reader.within_quota(descriptor.len, max_held_bytes) {
                // It keeps what it was given and never gives it back: it loses this sample
                // (its next one shows the gap in the numbering), the writer's memory stays
                // bounded.
                quota_drops += 1;
                continue;
            }
            reader.push(descriptor);
            delivered += 1;
            wakeups += u64::from(reader.wake_if_sleeping());
        }
        state.wakeups += wakeups;
        state.quota_drops += quota_drops;
        state.overwritten += overwritten.len() as u64;
        for chunk in overwritten {
            unref(&mut state, chunk);
        }
        // The loan's own reference becomes one per reader, and one more while the sample is
        // kept for late joiners; with neither the chunk is free.
        let keep = self.config.kept_for_late_joiners as usize;
        if let Some(segment) = state.segments.get_mut(&chunk.segment) {
            segment.refs[chunk.index as usize] += delivered as u32 + u32::from(keep > 0);
        }
        unref(&mut state, chunk);
        if keep > 0 {
            state.kept.push_back(descriptor);
            while state.kept.len() > keep {
                if let Some(old) = state.kept.pop_front() {
                    unref(&mut state, old.chunk);
                }
            }
        }
        for conn in corrupt {
            state.readers_misbehaved += 1;
            self.remove_reader(&mut state, conn);
        }
        Ok(seq)
    }
}

/// Drops one reference of `chunk`; the last one frees it.
fn unref(state: &mut WriterState, chunk: ChunkRef) {
    release_ref(&mut state.segments, &mut state.free_segment_bytes, chunk);
}

/// [`unref`] on the two fields it changes, for callers that hold other fields borrowed.
fn release_ref(
    segments: &mut BTreeMap<u32, Segment>,
    free_segment_bytes: &mut usize,
    chunk: ChunkRef,
) {
    let Some(segment) = segments.get_mut(&chunk.segment) else {
        debug_assert!(false, "internal bug: reference to a retired segment");
        return;
    };
    let count = &mut segment.refs[chunk.index as usize];
    debug_assert!(*count > 0, "internal bug: chunk reference count underflow");
    *count = count.saturating_sub(1);
    if *count == 0 {
        segment.free.push(chunk.index);
        if segment.fully_free() {
            *free_segment_bytes += segment.bytes();
        }
    }
}

impl Attach for ShmWriterShared {
    fn kind(&self) -> Kind {
        Kind::SharedMemory
    }

    fn attach(
        &self,
        conn: ConnId,
        sock: Arc<OwnedFd>,
        hello: Hello,
        fds: Vec<OwnedFd>,
    ) -> Result<(), RejectReason> {
        let depth = hello.history.depth();
        if depth == 0 || depth > MAX_DEPTH || hello.max_held > MAX_DEPTH {
            return Err(RejectReason::BadHello);
        }
        let Ok::<[OwnedFd; 1], _>([wake]) = fds.try_into() else {
            return Err(RejectReason::BadHello);
        };
        // Everything the reader can hold at once: its queue, its quota, one in flight.
        let completion_capacity = depth + hello.max_held + 1;
        let len = channel_len(depth, completion_capacity);
        let channel_fd =
            sys::memfd("roslite-shm-channel", len).map_err(|_| RejectReason::Resources)?;
        sys::seal_size(channel_fd.as_fd()).map_err(|_| RejectReason::Resources)?;
        let map =
            Mapping::map(channel_fd.as_fd(), len, true).map_err(|_| RejectReason::Resources)?;
        let channel =
            Channel::new(map, depth, completion_capacity, true).ok_or(RejectReason::Resources)?;
        let mut state = lock(&self.state);
        let welcome = Message::Welcome {
            sub_capacity: depth,
            completion_capacity,
            channel_len: len as u64,
        };
        sys::send_with_fds(sock.as_fd(), &welcome.encode(), &[channel_fd.as_fd()])
            .map_err(|_| RejectReason::Resources)?;
        for (id, segment) in &state.segments {
            let announce = Message::Segment {
                id: *id,
                chunk_count: segment.refs.len() as u32,
                chunk_size: segment.chunk_size as u64,
            };
            sys::send_with_fds(sock.as_fd(), &announce.encode(), &[segment.fd.as_fd()])
                .map_err(|_| RejectReason::Resources)?;
        }
        let mut reader = ReaderSlot {
            conn,
            sock,
            channel: Arc::new(channel),
            wake,
            history: hello.history,
            mirror: vec![
                ChunkRef {
                    segment: 0,
                    index: 0
                };
                depth as usize
            ],
            holds: ChunkMap::default(),
            held_bytes: 0,
            max_holds: completion_capacity as usize,
            dead: Arc::new(AtomicBool::new(false)),
        };
        if hello.wants_kept {
            // Under the lock every send takes: these come before any newer sample, and each
            // sample reaches the reader exactly once. A fresh channel has room for `depth`.
            let replayed = state.kept.len().saturating_sub(depth as usize);
            for at in replayed..state.kept.len() {
                let descriptor = state.kept[at];
                reader.push(descriptor);
                if let Some(segment) = state.segments.get_mut(&descriptor.chunk.segment) {
                    segment.refs[descriptor.chunk.index as usize] += 1;
                }
            }
            // The reader may have looked, found nothing and gone to sleep since its welcome.
            reader.wake_if_sleeping();
        }
        state.readers.push(reader);
        self.reader_count.store(state.readers.len(), SeqCst);
        Ok(())
    }

    fn detach(&self, conn: ConnId) {
        let mut state = lock(&self.state);
        self.remove_reader(&mut state, conn);
    }
}

struct LoanInner {
    writer: Arc<ShmWriterShared>,
    map: Arc<Mapping>,
    chunk: ChunkRef,
    offset: usize,
    len: usize,
    sent: bool,
    /// Filled by `copy_from` (counted in [`WriterStats::copied_bytes`]).
    copied: bool,
}

impl LoanInner {
    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: the chunk's count is 1 (this loan) until `send`, so nobody else reads or
        // writes it; the writer's segments are mapped writable.
        unsafe { self.map.bytes_mut(self.offset, self.len) }
    }
}

impl Drop for LoanInner {
    fn drop(&mut self) {
        if !self.sent {
            let mut state = lock(&self.writer.state);
            unref(&mut state, self.chunk);
        }
    }
}

/// The one reference of a chunk [`ShmWriter::send_in_place`] reserved: given back unless sent
/// (also when `write` panics).
struct ChunkHold<'a> {
    writer: &'a ShmWriterShared,
    chunk: Option<ChunkRef>,
}

impl ChunkHold<'_> {
    /// The reference went to the readers.
    fn sent(mut self) {
        self.chunk = None;
    }
}

impl Drop for ChunkHold<'_> {
    fn drop(&mut self) {
        if let Some(chunk) = self.chunk {
            unref(&mut lock(&self.writer.state), chunk);
        }
    }
}

/// Why [`ShmWriter::send_in_place`] sent nothing.
#[derive(Debug)]
pub enum InPlaceError<E> {
    /// The caller's `write` failed.
    Write(E),
    /// No chunk, or the send failed (as [`ShmWriter::loan`] and [`Loan::send`]).
    Send(SendError),
}

/// A reserved chunk whose contents are not yet written.
pub struct LoanUninit {
    inner: LoanInner,
}

impl LoanUninit {
    pub fn len(&self) -> usize {
        self.inner.len
    }

    pub fn is_empty(&self) -> bool {
        self.inner.len == 0
    }

    /// Copies `payload` (exactly [`Self::len`] bytes) into the chunk.
    ///
    /// # Panics
    /// If `payload.len()` differs from the loaned length (API misuse).
    pub fn copy_from(mut self, payload: &[u8]) -> Loan {
        assert_eq!(
            payload.len(),
            self.inner.len,
            "copy_from: payload length differs from the loan"
        );
        self.inner.bytes_mut().copy_from_slice(payload);
        self.inner.copied = true;
        Loan { inner: self.inner }
    }

    /// Copies `payload` into the chunk after `lead` zero bytes (a loan of `lead +
    /// payload.len()` bytes), counted as a copy like [`Self::copy_from`].
    ///
    /// # Panics
    /// If the lengths do not add up to the loaned length (API misuse).
    pub fn copy_from_after(mut self, lead: usize, payload: &[u8]) -> Loan {
        assert_eq!(
            lead + payload.len(),
            self.inner.len,
            "copy_from_after: lengths differ from the loan"
        );
        let bytes = self.inner.bytes_mut();
        bytes[..lead].fill(0);
        bytes[lead..].copy_from_slice(payload);
        self.inner.copied = true;
        Loan { inner: self.inner }
    }

    /// Lets `write` fill the chunk in place (serialize into it); `write` returns how many bytes
    /// it used, which becomes the sample's length.
    ///
    /// # Errors
    /// Whatever `write` returns; the chunk goes back to the pool.
    pub fn write_with<E>(
        mut self,
        write: impl FnOnce(&mut [u8]) -> Result<usize, E>,
    ) -> Result<Loan, E> {
        let used = write(self.inner.bytes_mut())?;
        self.inner.len = used.min(self.inner.len);
        Ok(Loan { inner: self.inner })
    }
}

/// A written chunk, ready to send.
pub struct Loan {
    inner: LoanInner,
}

impl Loan {
    pub fn payload(&self) -> &[u8] {
        self.inner
            .map
            .bytes(self.inner.offset, self.inner.len)
            .unwrap_or_default()
    }

    pub fn payload_mut(&mut self) -> &mut [u8] {
        self.inner.bytes_mut()
    }

    /// Announces the chunk to every reader; returns the sample's sequence number.
    ///
    /// Keep-last readers that are `depth` behind lose their oldest unread sample. If a keep-all
    /// reader's queue stays full for `max_blocking_time`, nothing is sent to anyone.
    ///
    /// # Errors
    /// [`SendError::Timeout`] as above; the chunk goes back to the pool.
    pub fn send(mut self, timestamp_ns: u64) -> Result<u64, SendError> {
        let writer = self.inner.writer.clone();
        writer.send(&mut self.inner, timestamp_ns, None)
    }

    /// Keeps the chunk for late joiners as sample `seq` without announcing it to the readers
    /// attached now (they had it from another writer: a publisher that moved here from
    /// another process, docs/migration.md), and numbers the next sample after it. A writer
    /// that keeps nothing ([`WriterConfig::kept_for_late_joiners`]) gives the chunk back.
    pub fn keep_numbered(mut self, seq: u64, timestamp_ns: u64) {
        let writer = self.inner.writer.clone();
        let mut state = lock(&writer.state);
        state.seq = state.seq.max(seq);
        let keep = writer.config.kept_for_late_joiners as usize;
        if keep == 0 {
            // Dropping the loan gives its chunk back.
            return;
        }
        // The loan's one reference becomes the kept one.
        self.inner.sent = true;
        state.kept.push_back(Descriptor {
            chunk: self.inner.chunk,
            len: self.inner.len as u64,
            seq,
            timestamp_ns,
        });
        while state.kept.len() > keep {
            if let Some(old) = state.kept.pop_front() {
                unref(&mut state, old.chunk);
            }
        }
    }

    /// [`Self::send`], numbering the sample `next` or higher as [`ShmWriter::number_from`]
    /// would, under the same lock.
    ///
    /// # Errors
    /// As [`Self::send`].
    pub fn send_numbered(mut self, next: u64, timestamp_ns: u64) -> Result<u64, SendError> {
        let writer = self.inner.writer.clone();
        writer.send(&mut self.inner, timestamp_ns, Some(next))
    }
}

/// Configuration of a [`ShmReader`].
#[derive(Clone, Copy, Debug)]
pub struct ReaderConfig {
    pub history: History,
    /// How many samples the application may hold (not yet dropped) at once.
    pub max_held: u32,
    pub connect_timeout: Duration,
    /// Ask for the samples the writer keeps for late joiners
    /// ([`WriterConfig::kept_for_late_joiners`]), newest `history` depth of them, before
    /// anything newer: a TRANSIENT_LOCAL reader.
    pub wants_kept: bool,
}

impl Default for ReaderConfig {
    fn default() -> Self {
        ReaderConfig {
            history: History::KeepLast(10),
            max_held: 16,
            connect_timeout: Duration::from_secs(2),
            wants_kept: false,
        }
    }
}

struct SegmentView {
    map: Arc<Mapping>,
    chunk_size: usize,
    chunk_count: u32,
}

struct ReaderShared {
    sock: Arc<OwnedFd>,
    /// Held while reading the socket, so that a sample's lookup after "process the socket"
    /// sees whatever the endpoint thread was processing at the same time.
    control_lock: Mutex<()>,
    wake: OwnedFd,
    channel: Channel,
    segments: Mutex<BTreeMap<u32, SegmentView>>,
    /// Serialises releases: samples may be dropped on any thread, the ring has one producer.
    release_lock: Mutex<()>,
    held: AtomicU32,
    max_held: u32,
    closed: AtomicBool,
    protocol_errors: AtomicU64,
}

impl ReaderShared {
    /// Processes control messages queued on the socket (segments, retirements, hang-up).
    fn process_control(&self) {
        let _guard = lock(&self.control_lock);
        loop {
            let mut buf = [0u8; crate::protocol::MAX_LEN + 1];
            let received = match sys::recv_with_fds(self.sock.as_fd(), &mut buf) {
                Ok(received) => received,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(_) => {
                    self.hang_up();
                    return;
                }
            };
            if received.len == 0 {
                self.hang_up();
                return;
            }
            match Message::decode(buf.get(..received.len).unwrap_or_default()) {
                Some(Message::Segment {
                    id,
                    chunk_count,
                    chunk_size,
                }) if !received.truncated => {
                    let mapped = (|| {
                        let len = usize::try_from(chunk_size)
                            .ok()?
                            .checked_mul(chunk_count as usize)?;
                        let [fd]: [OwnedFd; 1] = received.fds.try_into().ok()?;
                        if chunk_count == 0
                            || !sys::check_seals(fd.as_fd(), len, SealCheck::ReadOnly)
                        {
                            return None;
                        }
                        let map = Mapping::map(fd.as_fd(), len, false).ok()?;
                        Some(SegmentView {
                            map: Arc::new(map),
                            chunk_size: chunk_size as usize,
                            chunk_count,
                        })
                    })();
                    match mapped {
                        Some(view) => {
                            lock(&self.segments).insert(id, view);
                        }
                        None => {
                            self.protocol_errors.fetch_add(1, Relaxed);
                        }
                    }
                }
                Some(Message::Retire { id }) => {
                    lock(&self.segments).remove(&id);
                }
                _ => {
                    self.protocol_errors.fetch_add(1, Relaxed);
                }
            }
        }
    }

    /// Marks the reader closed and wakes it wherever it sleeps: on the channel's futex, in an
    /// external poll loop on the eventfd, or on the held count.
    fn hang_up(&self) {
        self.closed.store(true, SeqCst);
        self.channel.wake_reader();
        sys::eventfd_signal(self.wake.as_fd());
        sys::futex_wake_all(&self.held);
    }

    fn release(&self, chunk: ChunkRef) {
        let _guard = lock(&self.release_lock);
        if !self.channel.complete(chunk) {
            self.protocol_errors.fetch_add(1, Relaxed);
        }
        // From the quota to below it: a `wait_for_release` may sleep on the count. Below the
        // quota nobody does, so the common release makes no system call.
        if self.held.fetch_sub(1, SeqCst) >= self.max_held {
            sys::futex_wake_all(&self.held);
        }
    }
}

impl Watch for ReaderShared {
    fn handle_socket(&self) -> bool {
        self.process_control();
        !self.closed.load(SeqCst)
    }
}

/// Receives the samples of one remote (or local) [`ShmWriter`].
pub struct ShmReader {
    shared: Arc<ReaderShared>,
    local: Arc<EndpointShared>,
    watch: ConnId,
}

#[cfg(feature = "fuzzing")]
impl ShmReader {
    /// This reader's channel, which a hostile reader (the `shm_channel` fuzz target, through
    /// [`crate::fuzzing`]) writes into behind the protocol's back.
    pub(crate) fn channel(&self) -> &Channel {
        &self.shared.channel
    }
}

impl Drop for ShmReader {
    fn drop(&mut self) {
        self.local.unwatch_reader(self.watch);
        // The writer reclaims at once; samples still alive keep only their mappings.
        let _ = rustix::net::shutdown(self.shared.sock.as_fd(), rustix::net::Shutdown::Both);
    }
}

impl ShmReader {
    /// Connects to the writer `key` at `address`. The `local` endpoint (this participant's)
    /// watches the connection, so that a writer's death wakes a sleeping reader.
    ///
    /// # Errors
    /// See [`ConnectError`].
    pub fn connect(
        local: &Endpoint,
        address: &EndpointAddress,
        key: WriterKey,
        config: ReaderConfig,
    ) -> Result<ShmReader, ConnectError> {
        let depth = config.history.depth();
        if depth == 0 || depth > MAX_DEPTH || config.max_held == 0 || config.max_held > MAX_DEPTH {
            return Err(ConnectError::BadConfig);
        }
        let wake = sys::eventfd().map_err(ConnectError::Io)?;
        let hello = Hello {
            kind: Kind::SharedMemory,
            history: config.history,
            max_held: config.max_held,
            key,
            wants_kept: config.wants_kept,
        };
        let (sock, welcome, fds) =
            endpoint::handshake(address, hello, &[wake.as_fd()], config.connect_timeout)?;
        let Message::Welcome {
            sub_capacity,
            completion_capacity,
            channel_len: len,
        } = welcome
        else {
            return Err(ConnectError::Protocol);
        };
        let Ok::<[OwnedFd; 1], _>([channel_fd]) = fds.try_into() else {
            return Err(ConnectError::Protocol);
        };
        let len = usize::try_from(len).map_err(|_| ConnectError::Protocol)?;
        if sub_capacity != depth
            || completion_capacity < depth + config.max_held
            || len != channel_len(sub_capacity, completion_capacity)
            || !sys::check_seals(channel_fd.as_fd(), len, SealCheck::SizeOnly)
        {
            return Err(ConnectError::Protocol);
        }
        let map = Mapping::map(channel_fd.as_fd(), len, true).map_err(ConnectError::Io)?;
        let channel = Channel::new(map, sub_capacity, completion_capacity, false)
            .ok_or(ConnectError::Protocol)?;
        let shared = Arc::new(ReaderShared {
            sock: Arc::new(sock),
            control_lock: Mutex::new(()),
            wake,
            channel,
            segments: Mutex::new(BTreeMap::new()),
            release_lock: Mutex::new(()),
            held: AtomicU32::new(0),
            max_held: config.max_held,
            closed: AtomicBool::new(false),
            protocol_errors: AtomicU64::new(0),
        });
        shared.process_control();
        let weak: std::sync::Weak<dyn Watch> = Arc::downgrade(&shared) as _;
        let watch = local
            .shared()
            .watch_reader(shared.sock.clone(), weak)
            .map_err(ConnectError::Io)?;
        Ok(ShmReader {
            shared,
            local: local.shared().clone(),
            watch,
        })
    }

    /// Takes the oldest unread sample, without blocking.
    ///
    /// # Errors
    /// [`ReceiveError::HeldLimit`] while `max_held` samples are alive;
    /// [`ReceiveError::WriterGone`] once the writer closed or died and everything it sent was
    /// taken; [`ReceiveError::Protocol`] if the writer announced a chunk it never mapped for us.
    pub fn receive(&self) -> Result<Option<Sample>, ReceiveError> {
        let shared = &self.shared;
        if shared.held.load(SeqCst) >= shared.max_held {
            return Err(ReceiveError::HeldLimit);
        }
        let descriptor = match shared.channel.pop() {
            Ok(Some(descriptor)) => descriptor,
            Ok(None) if shared.closed.load(SeqCst) => return Err(ReceiveError::WriterGone),
            Ok(None) => return Ok(None),
            Err(_) => return Err(ReceiveError::Protocol),
        };
        shared.held.fetch_add(1, SeqCst);
        let resolve = || {
            let segments = lock(&shared.segments);
            let view = segments.get(&descriptor.chunk.segment)?;
            let len = usize::try_from(descriptor.len).ok()?;
            if descriptor.chunk.index >= view.chunk_count || len > view.chunk_size {
                return None;
            }
            let offset = descriptor.chunk.index as usize * view.chunk_size;
            let start = NonNull::from(view.map.bytes(offset, len)?).cast::<u8>();
            Some((view.map.clone(), start, len))
        };
        let resolved = resolve().or_else(|| {
            // The announcement of a new segment is sent before its first sample: read it.
            shared.process_control();
            resolve()
        });
        let Some((map, start, len)) = resolved else {
            shared.release(descriptor.chunk);
            return Err(ReceiveError::Protocol);
        };
        Ok(Some(Sample {
            reader: self.shared.clone(),
            _map: map,
            start,
            len,
            chunk: descriptor.chunk,
            seq: descriptor.seq,
            timestamp_ns: descriptor.timestamp_ns,
        }))
    }

    /// Blocks until a sample may be available, the writer hangs up, [`Self::interrupter`]
    /// interrupts, or `timeout` (`None`: no timeout, and no kernel timer armed per wait):
    /// asleep on a futex word in the channel, which the writer (or, on a hang-up, the local
    /// endpoint's thread) wakes.
    ///
    /// # Errors
    /// None today; kept for symmetry with the socket transport.
    pub fn wait(&self, timeout: Option<Duration>) -> Result<(), ReceiveError> {
        let shared = &self.shared;
        shared.channel.set_sleeping(Some(Sleep::Futex));
        if !shared.channel.has_pending() && !shared.closed.load(SeqCst) {
            shared.channel.sleep_on_futex(timeout);
        }
        shared.channel.set_sleeping(None);
        Ok(())
    }

    /// Blocks while the application holds `max_held` samples ([`ReceiveError::HeldLimit`]),
    /// until one is dropped (on any thread), the writer hangs up, [`Self::interrupter`]
    /// interrupts, or `timeout` (`None`: no timeout).
    pub fn wait_for_release(&self, timeout: Option<Duration>) {
        let shared = &self.shared;
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            let held = shared.held.load(SeqCst);
            if held < shared.max_held || shared.closed.load(SeqCst) {
                return;
            }
            let left = match deadline {
                None => None,
                Some(deadline) => match deadline.checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => Some(left),
                    _ => return,
                },
            };
            sys::futex_wait(&shared.held, held, left);
        }
    }

    /// Waits for the next sample without a timeout (see [`Self::wait`]). Another thread ends
    /// the wait through [`Self::interrupter`].
    ///
    /// # Errors
    /// As [`Self::receive`]; [`ReceiveError::WriterGone`] once interrupted and every sample
    /// already announced was taken.
    pub fn receive_blocking(&self) -> Result<Sample, ReceiveError> {
        self.receive_spinning(&mut IdleSpin::new(Duration::ZERO))
    }

    /// [`Self::receive_blocking`], looking again before each sleep as `spin` decides (while
    /// samples arrive densely).
    ///
    /// # Errors
    /// As [`Self::receive_blocking`].
    pub fn receive_spinning(&self, spin: &mut IdleSpin) -> Result<Sample, ReceiveError> {
        loop {
            if let Some(sample) = self.receive()? {
                return Ok(sample);
            }
            if let Some(sample) = spin.look_again(|| self.receive())? {
                return Ok(sample);
            }
            spin.sleeping();
            let woke = self.wait(None);
            spin.woke();
            woke?;
        }
    }

    /// A handle that wakes this reader's [`Self::wait`] or [`Self::receive_blocking`] from
    /// another thread, for good: the reader then behaves as if its writer had hung up (it
    /// hands out what was already announced, then reports [`ReceiveError::WriterGone`]).
    pub fn interrupter(&self) -> ShmInterrupter {
        ShmInterrupter(Arc::downgrade(&self.shared))
    }

    /// Waits up to `timeout` for the next sample.
    ///
    /// # Errors
    /// As [`Self::receive`]; `Ok(None)` on timeout.
    pub fn receive_timeout(&self, timeout: Duration) -> Result<Option<Sample>, ReceiveError> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(sample) = self.receive()? {
                return Ok(Some(sample));
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            self.wait(Some(deadline - now))?;
        }
    }

    /// Samples the writer overwrote before this reader took them (keep-last).
    pub fn lost(&self) -> u64 {
        self.shared.channel.lost()
    }

    /// Malformed announcements from the writer (dropped).
    pub fn protocol_errors(&self) -> u64 {
        self.shared.protocol_errors.load(Relaxed)
    }

    /// For an external poll loop: the eventfd (readable: samples arrived, or the writer hung
    /// up, or [`Self::interrupter`] interrupted). Before blocking on it, call
    /// [`Self::prepare_sleep`], and then `receive` once more; after it was readable, call
    /// [`Self::handle_wake`].
    pub fn poll_fd(&self) -> BorrowedFd<'_> {
        self.shared.wake.as_fd()
    }

    /// Tells the writer this reader is about to block in an external poll loop, so the next
    /// sample signals the eventfd.
    pub fn prepare_sleep(&self) {
        self.shared.channel.set_sleeping(Some(Sleep::EventFd));
    }

    /// Drains the eventfd and marks the reader awake.
    pub fn handle_wake(&self) {
        self.shared.channel.set_sleeping(None);
        sys::eventfd_drain(self.shared.wake.as_fd());
    }
}

/// Ends a [`ShmReader`]'s blocking wait from another thread; see [`ShmReader::interrupter`].
/// It does not keep the reader's connection and mappings alive: once the reader is dropped
/// there is nothing to interrupt.
pub struct ShmInterrupter(Weak<ReaderShared>);

impl ShmInterrupter {
    pub fn interrupt(&self) {
        if let Some(reader) = self.0.upgrade() {
            reader.hang_up();
        }
    }
}

/// A received sample: the bytes stay in the writer's shared memory, read in place. Dropping it
/// (on any thread) releases the chunk.
pub struct Sample {
    reader: Arc<ReaderShared>,
    /// Keeps the segment mapped while the sample lives (`start` points into it), also after
    /// the writer retired it or went away.
    _map: Arc<Mapping>,
    /// The first of the sample's `len` bytes in `map`, checked at receive: reading the sample
    /// (several times per message: decode, views, re-publishing) is then no bounds check.
    start: NonNull<u8>,
    len: usize,
    chunk: ChunkRef,
    seq: u64,
    timestamp_ns: u64,
}

impl Sample {
    /// The writer's sequence number: gaps mean overwritten samples.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    pub fn timestamp_ns(&self) -> u64 {
        self.timestamp_ns
    }
}

impl Deref for Sample {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // SAFETY: `start..start + len` was inside `_map` at receive (`Mapping::bytes`), and
        // `_map` keeps that mapping alive as long as `self`; see the module invariants for why
        // nobody writes the chunk while the sample lives.
        unsafe { std::slice::from_raw_parts(self.start.as_ptr(), self.len) }
    }
}

// SAFETY: `start` points into `_map`'s read-only view of shared memory, which every thread may
// read (`Mapping` is `Send` and `Sync`); the pointer itself is never written through.
unsafe impl Send for Sample {}
// SAFETY: as for `Send`: `&Sample` only reads.
unsafe impl Sync for Sample {}

impl fmt::Debug for Sample {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sample(seq {}, {} bytes)", self.seq, self.len)
    }
}

impl Drop for Sample {
    fn drop(&mut self) {
        self.reader.release(self.chunk);
    }
}

#[cfg(test)]
mod tests {
    use std::hash::BuildHasher as _;

    use super::*;

    /// A writer with one keep-all reader that may hold `max_held` samples.
    fn connected(max_held: u32) -> (Endpoint, ShmWriter, Arc<ShmReader>) {
        let endpoint = Endpoint::bind().expect("bind");
        let key = WriterKey::from(7u128);
        let writer = ShmWriter::create(&endpoint, key, WriterConfig::default()).expect("writer");
        let config = ReaderConfig {
            history: History::KeepAll(10),
            max_held,
            ..ReaderConfig::default()
        };
        let reader =
            ShmReader::connect(&endpoint, endpoint.address(), key, config).expect("reader");
        let start = Instant::now();
        while writer.stats().readers != 1 {
            assert!(start.elapsed() < Duration::from_secs(10), "never attached");
            std::thread::sleep(Duration::from_millis(1));
        }
        (endpoint, writer, Arc::new(reader))
    }

    /// The endpoint's service thread looks at what is ready, not at every connection: a
    /// reader hanging up costs it as many descriptors with 4 readers attached as with 64 (a
    /// `poll` of every connection at every wake-up made a graph's attaching quadratic).
    #[test]
    fn the_service_thread_looks_at_what_is_ready_not_at_every_connection() {
        let examined_for_one_hang_up = |readers: usize| {
            let endpoint = Endpoint::bind().expect("bind");
            let key = WriterKey::from(9u128);
            let writer =
                ShmWriter::create(&endpoint, key, WriterConfig::default()).expect("writer");
            let mut attached: Vec<ShmReader> = (0..readers)
                .map(|_| {
                    ShmReader::connect(&endpoint, endpoint.address(), key, ReaderConfig::default())
                        .expect("reader")
                })
                .collect();
            let wait_for = |count: usize| {
                let start = Instant::now();
                while writer.stats().readers != count {
                    assert!(start.elapsed() < Duration::from_secs(10), "never {count}");
                    std::thread::sleep(Duration::from_millis(1));
                }
                // Lets the thread finish with what woke it.
                std::thread::sleep(Duration::from_millis(50));
            };
            wait_for(readers);
            let before = endpoint.stats().descriptors_examined;
            drop(attached.pop());
            wait_for(readers - 1);
            endpoint.stats().descriptors_examined - before
        };
        let few = examined_for_one_hang_up(4);
        let many = examined_for_one_hang_up(64);
        assert!(
            few <= 4 && many <= 4,
            "descriptors looked at for one hang-up: {few} with 4 readers, {many} with 64"
        );
    }

    /// Receives what `reader` has now (the samples are in its ring once it connected) as
    /// (first payload byte, sequence number) pairs.
    fn received_now(reader: &ShmReader) -> Vec<(u8, u64)> {
        let mut got = Vec::new();
        while let Some(sample) = reader.receive().expect("receive") {
            got.push((sample[0], sample.seq()));
        }
        got
    }

    #[test]
    fn a_late_reader_that_asks_gets_the_kept_samples_first_and_one_that_does_not_gets_none() {
        let endpoint = Endpoint::bind().expect("bind");
        let key = WriterKey::from(8u128);
        let config = WriterConfig {
            kept_for_late_joiners: 3,
            ..WriterConfig::default()
        };
        let writer = ShmWriter::create(&endpoint, key, config).expect("writer");
        for n in 1..=5u8 {
            writer.send_copy(&[n; 16], 0).expect("send without readers");
        }
        assert_eq!(writer.stats().chunks_in_use, 3, "the newest 3 are kept");
        let connect = |history, wants_kept| {
            let config = ReaderConfig {
                history,
                wants_kept,
                ..ReaderConfig::default()
            };
            attached(&writer, &endpoint, key, config)
        };
        let all_kept = connect(History::KeepLast(10), true);
        let newest_two = connect(History::KeepLast(2), true);
        let volatile = connect(History::KeepLast(10), false);
        assert_eq!(received_now(&all_kept), [(3, 3), (4, 4), (5, 5)]);
        assert_eq!(
            received_now(&newest_two),
            [(4, 4), (5, 5)],
            "its depth bounds it"
        );
        assert_eq!(
            received_now(&volatile),
            [],
            "a volatile reader gets live samples only"
        );

        writer.send_copy(&[6; 16], 0).expect("send");
        for reader in [&all_kept, &newest_two, &volatile] {
            let sample = reader
                .receive_timeout(Duration::from_secs(5))
                .expect("receive")
                .expect("the live sample");
            assert_eq!((sample[0], sample.seq()), (6, 6));
        }
        drop((all_kept, newest_two, volatile));
        let start = Instant::now();
        loop {
            if writer.stats().chunks_in_use == 3 {
                break; // 4, 5 and 6; the readers' references came back
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "{:?}",
                writer.stats()
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Samples another writer sent (a publisher that moved here), kept under their numbers:
    /// a reader attached before gets none of them, a late one that asks gets them, and the
    /// next sample is numbered after them.
    #[test]
    fn kept_numbered_samples_go_to_later_readers_only() {
        let endpoint = Endpoint::bind().expect("bind");
        let key = WriterKey::from(10u128);
        let config = WriterConfig {
            kept_for_late_joiners: 2,
            ..WriterConfig::default()
        };
        let writer = ShmWriter::create(&endpoint, key, config).expect("writer");
        let reader_config = ReaderConfig {
            history: History::KeepLast(10),
            wants_kept: true,
            ..ReaderConfig::default()
        };
        let before = attached(&writer, &endpoint, key, reader_config);
        for n in 7..=9u8 {
            let loan = writer.loan(16).expect("loan");
            loan.copy_from(&[n; 16]).keep_numbered(u64::from(n), 0);
        }
        assert_eq!(writer.stats().chunks_in_use, 2, "the newest 2 are kept");
        assert_eq!(writer.stats().sent, 0, "kept, not sent");
        let late = attached(&writer, &endpoint, key, reader_config);
        assert_eq!(received_now(&late), [(8, 8), (9, 9)]);
        assert_eq!(
            received_now(&before),
            [],
            "it had them from the other writer"
        );
        writer.send_copy(&[10; 16], 0).expect("send");
        for reader in [&before, &late] {
            let sample = reader
                .receive_timeout(Duration::from_secs(5))
                .expect("receive")
                .expect("the live sample");
            assert_eq!((sample[0], sample.seq()), (10, 10));
        }
    }

    #[test]
    fn a_volatile_writer_keeps_nothing() {
        let endpoint = Endpoint::bind().expect("bind");
        let key = WriterKey::from(9u128);
        let writer = ShmWriter::create(&endpoint, key, WriterConfig::default()).expect("writer");
        writer.send_copy(&[1; 16], 0).expect("send");
        assert_eq!(writer.stats().chunks_in_use, 0);
        let config = ReaderConfig {
            wants_kept: true,
            ..ReaderConfig::default()
        };
        let reader = attached(&writer, &endpoint, key, config);
        assert_eq!(received_now(&reader), []);
    }

    /// A reader connected to `writer`, returned once the writer has attached it (and handed
    /// it whatever it replays: the same lock covers both).
    fn attached(
        writer: &ShmWriter,
        endpoint: &Endpoint,
        key: WriterKey,
        config: ReaderConfig,
    ) -> ShmReader {
        let before = writer.stats().readers;
        let reader = ShmReader::connect(endpoint, endpoint.address(), key, config).expect("reader");
        let start = Instant::now();
        while writer.stats().readers == before {
            assert!(start.elapsed() < Duration::from_secs(10), "never attached");
            std::thread::sleep(Duration::from_millis(1));
        }
        reader
    }

    #[test]
    fn a_sample_sent_in_place_arrives_and_a_failed_write_gives_its_chunk_back() {
        let (_endpoint, writer, reader) = connected(4);
        let seq = writer
            .send_in_place(
                64,
                |chunk| {
                    chunk[..5].copy_from_slice(b"hello");
                    Ok::<_, ()>(5)
                },
                Some(10),
                7,
            )
            .expect("sent");
        assert_eq!(seq, 10, "numbered from the caller's count");
        let sample = reader
            .receive_timeout(Duration::from_secs(5))
            .expect("receive")
            .expect("a sample");
        assert_eq!(
            (&sample[..], sample.seq(), sample.timestamp_ns()),
            (&b"hello"[..], 10, 7)
        );
        drop(sample);

        let failed = writer.send_in_place(64, |_| Err("no"), None, 0);
        assert!(matches!(failed, Err(InPlaceError::Write("no"))));
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            writer.send_in_place(64, |_| -> Result<usize, ()> { panic!("in write") }, None, 0)
        }));
        assert!(panicked.is_err());
        let too_large = writer.send_in_place(MAX_LOAN + 1, |_| Ok::<_, ()>(0), None, 0);
        assert!(matches!(
            too_large,
            Err(InPlaceError::Send(SendError::TooLarge))
        ));
        assert_eq!(writer.stats().chunks_in_use, 0, "every chunk went back");
        assert_eq!(writer.stats().sent, 1);
    }

    #[test]
    fn a_reader_count_handle_follows_the_writer_and_reads_zero_once_it_is_gone() {
        let (_endpoint, writer, _reader) = connected(4);
        let handle = writer.reader_count_handle();
        assert_eq!(handle.get(), 1);
        drop(writer);
        assert_eq!(handle.get(), 0, "a dropped writer has nobody to send to");
    }

    /// Runs `wait_for_release(None)` on a thread of its own (not scoped: a wait nobody ends
    /// must fail the test, not hang it) and checks it is still asleep after a while.
    fn sleeping_until_released(reader: &Arc<ShmReader>) -> std::thread::JoinHandle<()> {
        let waiting = std::thread::spawn({
            let reader = reader.clone();
            move || reader.wait_for_release(None)
        });
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiting.is_finished(), "returned while the quota was held");
        waiting
    }

    fn ends_soon(waiting: std::thread::JoinHandle<()>, what: &str) {
        let start = Instant::now();
        while !waiting.is_finished() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "{what} did not end the wait"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        waiting.join().expect("waiting thread");
    }

    /// A reader at its `max_held` quota sleeps (no polling) until the application drops a
    /// sample, on whatever thread; then the next sample can be taken. An interrupt also ends
    /// the wait.
    #[test]
    fn a_reader_at_its_quota_sleeps_until_a_sample_is_dropped() {
        let (_endpoint, writer, reader) = connected(2);
        for seq in 1..=3u8 {
            writer.send_copy(&[seq; 16], 0).expect("send");
        }
        let first = reader.receive().expect("receive").expect("first sample");
        let _second = reader.receive().expect("receive").expect("second sample");
        assert!(matches!(reader.receive(), Err(ReceiveError::HeldLimit)));
        let waiting = sleeping_until_released(&reader);
        std::thread::spawn(move || drop(first))
            .join()
            .expect("dropping thread");
        ends_soon(waiting, "dropping a sample");
        let third = reader.receive().expect("receive").expect("third sample");
        assert_eq!(third[0], 3);
        let waiting = sleeping_until_released(&reader);
        reader.interrupter().interrupt();
        ends_soon(waiting, "an interrupt");
    }

    /// Polls `fd` for reading up to 10 s; true if it became readable.
    fn readable(fd: std::os::fd::BorrowedFd<'_>) -> bool {
        let flags = rustix::event::PollFlags::IN;
        sys::poll(&[(fd, flags)], Some(Duration::from_secs(10)))
            .expect("poll")
            .first()
            .is_some_and(|f| f.contains(flags))
    }

    /// A reader in an external poll loop: its eventfd becomes readable when a sample is sent
    /// while it sleeps, and when its writer goes away (the loop must learn that too).
    #[test]
    fn an_external_poll_loop_is_woken_by_samples_and_by_the_writer_leaving() {
        let (_endpoint, writer, reader) = connected(4);
        reader.prepare_sleep();
        assert!(reader.receive().expect("receive").is_none());
        writer.send_copy(&[1; 16], 0).expect("send");
        assert!(
            readable(reader.poll_fd()),
            "a sample did not wake the poll loop"
        );
        reader.handle_wake();
        assert_eq!(reader.receive().expect("receive").expect("sample")[0], 1);
        reader.prepare_sleep();
        assert!(reader.receive().expect("receive").is_none());
        drop(writer);
        assert!(
            readable(reader.poll_fd()),
            "the writer's leaving did not wake the poll loop"
        );
        reader.handle_wake();
        assert!(matches!(reader.receive(), Err(ReceiveError::WriterGone)));
    }

    /// Control messages a writer sends that do not parse, or announce a segment the reader
    /// must not map (its memfd is not sealed read-only), are counted and dropped; the reader
    /// keeps receiving.
    #[test]
    fn malformed_control_messages_are_counted_and_dropped() {
        let (_endpoint, writer, reader) = connected(4);
        let sock = lock(&writer.shared.state).readers[0].sock.clone();
        sys::send_with_fds(sock.as_fd(), &[0xff; 7], &[]).expect("send garbage");
        let unsealed = sys::memfd("roslite-test-unsealed", 4096).expect("memfd");
        let announcement = Message::Segment {
            id: 9999,
            chunk_count: 1,
            chunk_size: 4096,
        }
        .encode();
        sys::send_with_fds(sock.as_fd(), &announcement, &[unsealed.as_fd()])
            .expect("send the announcement");
        let start = Instant::now();
        while reader.protocol_errors() < 2 {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "counted {} of 2 malformed messages",
                reader.protocol_errors()
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        writer.send_copy(&[5; 16], 0).expect("send");
        let sample = reader
            .receive_timeout(Duration::from_secs(10))
            .expect("receive")
            .expect("a sample after the malformed messages");
        assert_eq!(sample[0], 5);
        assert_eq!(reader.protocol_errors(), 2);
    }

    /// A descriptor in the ring that names no chunk mapped for this reader (a segment never
    /// announced, or an index or length past its segment) is reported as
    /// [`ReceiveError::Protocol`], not read; the held count it took is given back.
    #[test]
    fn a_descriptor_naming_no_mapped_chunk_is_a_protocol_error() {
        let (_endpoint, writer, reader) = connected(4);
        // Map a real segment first, so that the index and length cases point into one.
        writer.send_copy(&[1; 16], 0).expect("send");
        let real = reader.receive().expect("receive").expect("sample");
        let segment = real.chunk.segment;
        drop(real);
        let bogus = [
            (
                "a segment never announced",
                ChunkRef {
                    segment: 4242,
                    index: 0,
                },
                16,
            ),
            (
                "an index past the segment",
                ChunkRef {
                    segment,
                    index: 1 << 20,
                },
                16,
            ),
            (
                "a length past the chunk",
                ChunkRef { segment, index: 0 },
                1 << 40,
            ),
        ];
        for (what, chunk, len) in bogus {
            lock(&writer.shared.state).readers[0]
                .channel
                .push(Descriptor {
                    chunk,
                    len,
                    seq: 1,
                    timestamp_ns: 0,
                });
            assert!(
                matches!(reader.receive(), Err(ReceiveError::Protocol)),
                "{what}: not reported"
            );
            assert_eq!(
                reader.shared.held.load(SeqCst),
                0,
                "{what}: held count kept"
            );
        }
    }

    /// `count` samples, each sent once the reader thread (waiting with `spin`) has taken the
    /// one before it, and after `before_send` returned; the writer's wake-up calls.
    fn wakeups_in_lockstep(spin: IdleSpin, count: u64, before_send: impl Fn(&ShmReader)) -> u64 {
        let (_endpoint, writer, reader) = connected(4);
        let taken = Arc::new(AtomicU64::new(0));
        let receiving = {
            let (reader, taken) = (reader.clone(), taken.clone());
            std::thread::spawn(move || {
                let mut spin = spin;
                for _ in 0..count {
                    let sample = reader.receive_spinning(&mut spin).expect("sample");
                    taken.store(u64::from_le_bytes(sample[..8].try_into().unwrap()), SeqCst);
                }
            })
        };
        for seq in 1..=count {
            before_send(&reader);
            writer.send_copy(&seq.to_le_bytes(), 0).expect("sent");
            while taken.load(SeqCst) != seq {
                std::thread::yield_now();
            }
        }
        receiving.join().expect("receiving thread");
        writer.stats().wakeups
    }

    #[test]
    fn a_reader_looking_again_needs_no_wake_up_and_one_asleep_gets_one_per_sample() {
        let asleep = |reader: &ShmReader| {
            while !reader.shared.channel.reader_is_asleep() {
                std::thread::yield_now();
            }
        };
        assert_eq!(
            wakeups_in_lockstep(IdleSpin::new(Duration::ZERO), 100, asleep),
            100,
            "each sample was sent to a sleeping reader"
        );
        // Samples come within microseconds of each other, well inside the budget: after the
        // first sleep the reader looks again instead of sleeping, and nobody has to wake it.
        let wakeups = wakeups_in_lockstep(IdleSpin::new(Duration::from_secs(1)), 100, |_| {});
        assert!(wakeups <= 10, "{wakeups} wake-ups for 100 samples");
    }

    /// A reader (a process of the same user, not following the protocol) that takes every
    /// sample from its ring and never gives a chunk back holds at most its quota (depth 4 +
    /// max_held 2 + 1): beyond it the writer hands it nothing more and counts the samples it
    /// lost, and the writer's pool stops growing. When it goes, the writer retires the
    /// segments it had pinned instead of keeping them for reuse.
    #[test]
    fn a_reader_that_never_gives_chunks_back_is_bounded_and_reclaimed_when_it_goes() {
        let endpoint = Endpoint::bind().expect("bind");
        let key = WriterKey::from(11u128);
        let writer = ShmWriter::create(&endpoint, key, WriterConfig::default()).expect("writer");
        let config = ReaderConfig {
            history: History::KeepLast(4),
            max_held: 2,
            ..ReaderConfig::default()
        };
        let hog = attached(&writer, &endpoint, key, config);
        // 1 MiB chunks: two per segment.
        let len = 1 << 20;
        for n in 0..100u64 {
            writer.send_copy(&vec![n as u8; len], 0).expect("send");
            // What a rogue reader does: take the announcement, never release the chunk.
            while let Ok(Some(_)) = hog.shared.channel.pop() {}
        }
        let stats = writer.stats();
        assert_eq!(stats.chunks_in_use, 4 + 2 + 1, "{stats:?}");
        assert_eq!(stats.quota_drops, 100 - 7, "{stats:?}");
        assert!(stats.segments <= 4, "{stats:?}");
        drop(hog);
        let start = Instant::now();
        loop {
            let stats = writer.stats();
            if stats.readers == 0 && stats.chunks_in_use == 0 && stats.segments == 0 {
                break; // every segment it pinned was retired
            }
            assert!(start.elapsed() < Duration::from_secs(10), "{stats:?}");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// A keep-last reader outrun by a writer sending as fast as it can (its ring overflows on
    /// nearly every sample) goes on receiving: no sample is reported malformed, and the
    /// samples sent once the writer slowed down all arrive, and every chunk the reader gives
    /// back is one the writer handed it. How many arrive during the flood depends on the
    /// scheduler and is not checked; the step-by-step forms of the two overruns that broke
    /// this are `channel::tests::a_reader_lapped_between_its_looks_at_the_indices_...` and
    /// `channel::tests::a_writer_whose_reader_emptied_the_ring_before_its_take_...`.
    #[test]
    fn a_keep_last_reader_outrun_by_its_writer_keeps_receiving() {
        /// The first byte of the samples sent after the flood.
        const AFTER: u8 = 2;
        let endpoint = Endpoint::bind().expect("bind");
        let key = WriterKey::from(12u128);
        let writer = ShmWriter::create(&endpoint, key, WriterConfig::default()).expect("writer");
        let config = ReaderConfig {
            history: History::KeepLast(4),
            max_held: 8,
            ..ReaderConfig::default()
        };
        let reader = attached(&writer, &endpoint, key, config);
        let receiving = std::thread::spawn(move || {
            let mut spin = IdleSpin::default();
            let mut after = 0;
            while after < 3 {
                let sample = reader.receive_spinning(&mut spin)?;
                after += u8::from(sample[0] == AFTER);
            }
            Ok::<_, ReceiveError>(reader.lost())
        });
        let flood = Instant::now();
        while flood.elapsed() < Duration::from_millis(300) {
            writer.send_copy(&[1; 64], 0).expect("send");
        }
        for _ in 0..3 {
            std::thread::sleep(Duration::from_millis(5));
            writer.send_copy(&[AFTER; 64], 0).expect("send");
        }
        let start = Instant::now();
        while !receiving.is_finished() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "the samples sent after the flood did not arrive: {:?}",
                writer.stats()
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        let lost = receiving.join().expect("receiving thread");
        assert!(lost.is_ok(), "the reader gave up: {lost:?}");
        let stats = writer.stats();
        assert_eq!(stats.bogus_releases, 0, "{stats:?}");
        assert_eq!(stats.readers_misbehaved, 0, "{stats:?}");
    }

    #[test]
    fn chunk_hashes_spread_over_buckets() {
        let build = BuildHasherDefault::<ChunkHasher>::default();
        let hashes: Vec<u64> = (0..4)
            .flat_map(|segment| (0..256).map(move |index| ChunkRef { segment, index }))
            .map(|chunk| build.hash_one(chunk))
            .collect();
        let mut distinct = hashes.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), hashes.len(), "two chunks hash alike");
        // The low bits pick the bucket: one segment's chunks must not pile into a few.
        let mut buckets: Vec<u64> = hashes[..256].iter().map(|h| h & 0xff).collect();
        buckets.sort_unstable();
        buckets.dedup();
        assert!(
            buckets.len() > 128,
            "256 chunks in {} of 256 buckets",
            buckets.len()
        );
    }
}
