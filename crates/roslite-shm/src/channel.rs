//! The channel: a small shared mapping per (writer, reader) pair holding two rings.
//!
//! ```text
//! offset  field                      written by
//!      0  magic                      writer (once)
//!     64  sub_head        u64        writer: samples announced
//!    128  sub_tail        u64        reader (consumes) and writer (drops the oldest, keep-last)
//!    192  reader_sleeping u32        reader: 1 asleep on this futex, 2 on its eventfd; writer
//!                                    clears it when it wakes the reader
//!    256  comp_head       u64        reader: chunks released
//!    320  comp_tail       u64        writer: releases taken back
//!    384  writer_waiting  u32        writer sets before blocking for room (keep-all)
//!    388  space_seq       u32        futex word the writer sleeps on; reader bumps it
//!    448  lost            u64        writer: samples dropped for this reader (keep-last)
//!    512  sub slots       sub_capacity x 32 bytes  (chunk, len, seq, timestamp_ns)
//!         comp slots      completion_capacity x 8 bytes (chunk)
//! ```
//!
//! Hot fields sit on their own cache lines. Both processes map the channel read-write, so each
//! side validates what the other writes (indices within capacity, chunks it actually handed
//! out); nothing in it is a pointer. The sample *bytes* live in separate, read-only-for-readers
//! segments.
//!
//! The submission ring is single-producer (the writer) and single-consumer, except that the
//! writer of a keep-last reader may also take the oldest entry with a CAS on `sub_tail` when the
//! ring is full. The reader therefore takes an entry by reading it and then CASing `sub_tail`
//! from `t` to `t + 1`; if the CAS fails the writer took it first and the read is discarded. The
//! writer only rewrites slot `t` after `sub_tail` has moved past `t`, so a successful CAS means
//! the read saw the complete entry. The writer's take CASes `sub_tail` from the very value that
//! showed the ring full, so it never moves `sub_tail` past `sub_head` when the reader emptied
//! the ring in between.

use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release, SeqCst};
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::time::Instant;

use crate::sys::{self, Mapping};

const MAGIC: u64 = u64::from_le_bytes(*b"RLSHCH01");
const OFF_MAGIC: usize = 0;
const OFF_SUB_HEAD: usize = 64;
const OFF_SUB_TAIL: usize = 128;
const OFF_READER_SLEEPING: usize = 192;
const OFF_COMP_HEAD: usize = 256;
const OFF_COMP_TAIL: usize = 320;
const OFF_WRITER_WAITING: usize = 384;
const OFF_SPACE_SEQ: usize = 388;
const OFF_LOST: usize = 448;
const OFF_SLOTS: usize = 512;
const SUB_SLOT: usize = 32;
const COMP_SLOT: usize = 8;

const SLEEP_FUTEX: u32 = 1;
const SLEEP_EVENTFD: u32 = 2;

/// How a reader waits: on the `reader_sleeping` futex word itself (lowest latency), or on the
/// eventfd it passed in its hello (to sit in an external poll loop).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sleep {
    Futex,
    EventFd,
}

/// A chunk of a writer's pool: segment id and index inside it, packed for the rings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ChunkRef {
    pub(crate) segment: u32,
    pub(crate) index: u32,
}

impl ChunkRef {
    fn pack(self) -> u64 {
        (u64::from(self.segment) << 32) | u64::from(self.index)
    }

    fn unpack(word: u64) -> Self {
        ChunkRef {
            segment: (word >> 32) as u32,
            index: word as u32,
        }
    }
}

/// One announced sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Descriptor {
    pub(crate) chunk: ChunkRef,
    pub(crate) len: u64,
    pub(crate) seq: u64,
    pub(crate) timestamp_ns: u64,
}

/// The peer wrote indices that no correct peer can produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Corrupt;

/// Bytes a channel with these capacities needs, rounded to pages.
pub(crate) fn channel_len(sub_capacity: u32, completion_capacity: u32) -> usize {
    let raw =
        OFF_SLOTS + sub_capacity as usize * SUB_SLOT + completion_capacity as usize * COMP_SLOT;
    raw.div_ceil(4096) * 4096
}

#[derive(Debug)]
pub(crate) struct Channel {
    map: Mapping,
    sub_capacity: u64,
    completion_capacity: u64,
}

impl Channel {
    /// Wraps a mapping of at least [`channel_len`] bytes. `fresh`: the writer initialises it.
    pub(crate) fn new(
        map: Mapping,
        sub_capacity: u32,
        completion_capacity: u32,
        fresh: bool,
    ) -> Option<Self> {
        if sub_capacity == 0
            || completion_capacity == 0
            || map.len() < channel_len(sub_capacity, completion_capacity)
        {
            return None;
        }
        let channel = Channel {
            map,
            sub_capacity: u64::from(sub_capacity),
            completion_capacity: u64::from(completion_capacity),
        };
        if fresh {
            channel.map.atomic_u64(OFF_MAGIC).store(MAGIC, Release);
        } else if channel.map.atomic_u64(OFF_MAGIC).load(Acquire) != MAGIC {
            return None;
        }
        Some(channel)
    }

    fn u64_at(&self, offset: usize) -> &AtomicU64 {
        self.map.atomic_u64(offset)
    }

    fn u32_at(&self, offset: usize) -> &AtomicU32 {
        self.map.atomic_u32(offset)
    }

    fn sub_slot(&self, index: u64) -> usize {
        OFF_SLOTS + (index % self.sub_capacity) as usize * SUB_SLOT
    }

    fn comp_slot(&self, index: u64) -> usize {
        OFF_SLOTS
            + self.sub_capacity as usize * SUB_SLOT
            + (index % self.completion_capacity) as usize * COMP_SLOT
    }

    // ---- writer side -------------------------------------------------------------------

    /// Entries announced but not yet taken; `Corrupt` if the reader moved `sub_tail` outside
    /// what is possible.
    pub(crate) fn queued(&self) -> Result<u64, Corrupt> {
        let head = self.u64_at(OFF_SUB_HEAD).load(Relaxed);
        let tail = self.u64_at(OFF_SUB_TAIL).load(Acquire);
        match head.checked_sub(tail) {
            Some(queued) if queued <= self.sub_capacity => Ok(queued),
            _ => Err(Corrupt),
        }
    }

    pub(crate) fn is_full(&self) -> Result<bool, Corrupt> {
        Ok(self.queued()? >= self.sub_capacity)
    }

    /// Index the next [`Self::push`] uses; the writer keeps its own copy of what it pushed
    /// there, so it never needs to trust the shared slot.
    pub(crate) fn next_index(&self) -> u64 {
        self.u64_at(OFF_SUB_HEAD).load(Relaxed)
    }

    /// Announces a sample. The caller checked the ring is not full.
    pub(crate) fn push(&self, descriptor: Descriptor) {
        let head = self.u64_at(OFF_SUB_HEAD).load(Relaxed);
        let slot = self.sub_slot(head);
        self.u64_at(slot).store(descriptor.chunk.pack(), Relaxed);
        self.u64_at(slot + 8).store(descriptor.len, Relaxed);
        self.u64_at(slot + 16).store(descriptor.seq, Relaxed);
        self.u64_at(slot + 24)
            .store(descriptor.timestamp_ns, Relaxed);
        // SeqCst pairs with the reader's `reader_sleeping` store and re-check (Dekker): either
        // the reader sees this entry, or we see it asleep and wake it. Wrapping: a reader that
        // ignores the protocol may have set both indices to the top of their range (the ring
        // then looked empty); the wrapped head shows as corrupt at the next look (`queued`).
        self.u64_at(OFF_SUB_HEAD)
            .store(head.wrapping_add(1), SeqCst);
    }

    /// Takes the oldest entry back from a full ring (keep-last overwrite). Returns its index,
    /// or `None` if the reader made room meanwhile.
    pub(crate) fn take_oldest(&self) -> Result<Option<u64>, Corrupt> {
        self.take_oldest_observed(|| {})
    }

    /// [`Self::take_oldest`], calling `before_take` between each look at the ring and the
    /// take: a test stands for a reader that runs in that gap.
    ///
    /// The take moves `sub_tail` from exactly the value that showed the ring full. Loading it
    /// afresh for the CAS let a reader that emptied the ring in between (the writer preempted
    /// for a moment) see the writer push `sub_tail` past `sub_head`, an impossible ring it
    /// took for corruption, and had the writer drop its hold on a chunk the reader had
    /// already taken and was still reading.
    pub(crate) fn take_oldest_observed(
        &self,
        mut before_take: impl FnMut(),
    ) -> Result<Option<u64>, Corrupt> {
        let head = self.u64_at(OFF_SUB_HEAD).load(Relaxed);
        loop {
            let tail = self.u64_at(OFF_SUB_TAIL).load(Acquire);
            match head.checked_sub(tail) {
                Some(queued) if queued < self.sub_capacity => return Ok(None),
                Some(queued) if queued == self.sub_capacity => {}
                _ => return Err(Corrupt),
            }
            before_take();
            if self
                .u64_at(OFF_SUB_TAIL)
                .compare_exchange(tail, tail + 1, AcqRel, Acquire)
                .is_ok()
            {
                self.u64_at(OFF_LOST).fetch_add(1, Relaxed);
                return Ok(Some(tail));
            }
        }
    }

    /// How the reader said it is about to block, if it did; clears the flag so that only one
    /// wake is sent per sleep.
    pub(crate) fn take_reader_sleeping(&self) -> Option<Sleep> {
        let flag = self.u32_at(OFF_READER_SLEEPING);
        if flag.load(SeqCst) == 0 {
            return None;
        }
        match flag.swap(0, SeqCst) {
            SLEEP_FUTEX => Some(Sleep::Futex),
            SLEEP_EVENTFD => Some(Sleep::EventFd),
            _ => None,
        }
    }

    /// Wakes a reader sleeping on the flag word (after [`Self::take_reader_sleeping`] cleared
    /// it, or because its writer hung up).
    pub(crate) fn wake_reader(&self) {
        self.u32_at(OFF_READER_SLEEPING).store(0, SeqCst);
        sys::futex_wake_all(self.u32_at(OFF_READER_SLEEPING));
    }

    /// Chunks the reader released since the last call, each passed to `release`.
    pub(crate) fn drain_completions(
        &self,
        mut release: impl FnMut(ChunkRef),
    ) -> Result<(), Corrupt> {
        let head = self.u64_at(OFF_COMP_HEAD).load(Acquire);
        let tail = self.u64_at(OFF_COMP_TAIL).load(Relaxed);
        match head.checked_sub(tail) {
            Some(count) if count <= self.completion_capacity => {}
            _ => return Err(Corrupt),
        }
        for index in tail..head {
            release(ChunkRef::unpack(
                self.u64_at(self.comp_slot(index)).load(Relaxed),
            ));
        }
        self.u64_at(OFF_COMP_TAIL).store(head, Release);
        Ok(())
    }

    /// Blocks until the ring has room, `deadline`, or `give_up()` (peer gone).
    #[cfg(test)]
    pub(crate) fn wait_for_room(
        &self,
        deadline: Instant,
        give_up: impl Fn() -> bool,
    ) -> Result<bool, Corrupt> {
        loop {
            if !self.is_full()? {
                return Ok(true);
            }
            let now = Instant::now();
            if now >= deadline || give_up() {
                return Ok(false);
            }
            let seq = self.prepare_wait();
            if !self.is_full()? || give_up() {
                continue;
            }
            self.wait_for_change(seq, deadline);
        }
    }

    /// Before a writer checks whether it must wait for this reader: the value to pass to
    /// [`Self::wait_for_change`]. Marks the writer waiting, so that the reader's next take
    /// ([`Self::pop`]) or release ([`Self::complete`]) wakes it.
    pub(crate) fn prepare_wait(&self) -> u32 {
        let seq = self.u32_at(OFF_SPACE_SEQ).load(SeqCst);
        self.u32_at(OFF_WRITER_WAITING).store(1, SeqCst);
        seq
    }

    /// Sleeps until the reader took or released something since [`Self::prepare_wait`]
    /// returned `seq`, or `deadline`.
    pub(crate) fn wait_for_change(&self, seq: u32, deadline: Instant) {
        let now = Instant::now();
        if now < deadline {
            sys::futex_wait(self.u32_at(OFF_SPACE_SEQ), seq, Some(deadline - now));
        }
    }

    /// Wakes the writer if it waits for this reader (after a take or a release).
    fn wake_writer_if_waiting(&self) {
        if self.u32_at(OFF_WRITER_WAITING).load(SeqCst) != 0 {
            self.u32_at(OFF_WRITER_WAITING).store(0, SeqCst);
            self.wake_writer();
        }
    }

    /// Wakes a writer blocked in [`Self::wait_for_change`] (the reader made room, or the writer's
    /// own endpoint saw the reader die).
    pub(crate) fn wake_writer(&self) {
        self.u32_at(OFF_SPACE_SEQ).fetch_add(1, SeqCst);
        sys::futex_wake_all(self.u32_at(OFF_SPACE_SEQ));
    }

    // ---- reader side -------------------------------------------------------------------

    /// Takes the oldest announced sample; `Corrupt` if the writer's indices are impossible.
    pub(crate) fn pop(&self) -> Result<Option<Descriptor>, Corrupt> {
        self.pop_observed(|| {})
    }

    /// [`Self::pop`], calling `between_loads` after each look at `sub_tail` and before the look
    /// at `sub_head`: a test stands for a writer that runs in that gap.
    ///
    /// The two indices cannot be read at one instant. A keep-last writer moves `sub_tail`
    /// too (it drops the oldest entry of a full ring), so a reader delayed between the two
    /// loads (preempted, or simply slower than a writer sending millions of samples a second)
    /// can see a head more than a ring ahead of a tail that has long moved on. That is the
    /// writer lapping us, not a corrupt ring: it shows as `sub_tail` having moved since. Only
    /// when `sub_tail` did not move (both indices only grow, so the head read lies between
    /// two identical tails) does an out-of-range distance prove the writer wrote nonsense.
    pub(crate) fn pop_observed(
        &self,
        mut between_loads: impl FnMut(),
    ) -> Result<Option<Descriptor>, Corrupt> {
        loop {
            let tail = self.u64_at(OFF_SUB_TAIL).load(Acquire);
            between_loads();
            let head = self.u64_at(OFF_SUB_HEAD).load(Acquire);
            match head.checked_sub(tail) {
                Some(0) => return Ok(None),
                Some(queued) if queued <= self.sub_capacity => {}
                _ if self.u64_at(OFF_SUB_TAIL).load(Acquire) != tail => continue, // lapped
                _ => return Err(Corrupt),
            }
            let slot = self.sub_slot(tail);
            let descriptor = Descriptor {
                chunk: ChunkRef::unpack(self.u64_at(slot).load(Relaxed)),
                len: self.u64_at(slot + 8).load(Relaxed),
                seq: self.u64_at(slot + 16).load(Relaxed),
                timestamp_ns: self.u64_at(slot + 24).load(Relaxed),
            };
            if self
                .u64_at(OFF_SUB_TAIL)
                .compare_exchange(tail, tail + 1, AcqRel, Acquire)
                .is_ok()
            {
                self.wake_writer_if_waiting();
                return Ok(Some(descriptor));
            }
        }
    }

    /// Whether an entry is waiting (after [`Self::set_sleeping`], decides whether to block).
    pub(crate) fn has_pending(&self) -> bool {
        self.u64_at(OFF_SUB_HEAD).load(SeqCst) != self.u64_at(OFF_SUB_TAIL).load(SeqCst)
    }

    /// Whether the reader announced it is about to block (the writer would wake it).
    #[cfg(test)]
    pub(crate) fn reader_is_asleep(&self) -> bool {
        self.u32_at(OFF_READER_SLEEPING).load(SeqCst) != 0
    }

    /// Announces how this reader is about to block (`None`: it is awake).
    pub(crate) fn set_sleeping(&self, sleep: Option<Sleep>) {
        let value = match sleep {
            None => 0,
            Some(Sleep::Futex) => SLEEP_FUTEX,
            Some(Sleep::EventFd) => SLEEP_EVENTFD,
        };
        self.u32_at(OFF_READER_SLEEPING).store(value, SeqCst);
    }

    /// Blocks while the reader is marked asleep on the futex (see [`Self::set_sleeping`]).
    pub(crate) fn sleep_on_futex(&self, timeout: Option<std::time::Duration>) {
        sys::futex_wait(self.u32_at(OFF_READER_SLEEPING), SLEEP_FUTEX, timeout);
    }

    /// Returns a chunk to the writer; false if the completion ring is full (cannot happen while
    /// the reader respects its held-sample quota).
    pub(crate) fn complete(&self, chunk: ChunkRef) -> bool {
        let head = self.u64_at(OFF_COMP_HEAD).load(Relaxed);
        let tail = self.u64_at(OFF_COMP_TAIL).load(Acquire);
        if head.wrapping_sub(tail) >= self.completion_capacity {
            return false;
        }
        self.u64_at(self.comp_slot(head))
            .store(chunk.pack(), Relaxed);
        // SeqCst pairs with the writer's `prepare_wait` and its look at the completions
        // after it (Dekker): either it sees this release, or we see it waiting and wake it.
        // Wrapping, as in `push`: the writer can write this word too, and it checks it.
        self.u64_at(OFF_COMP_HEAD)
            .store(head.wrapping_add(1), SeqCst);
        self.wake_writer_if_waiting();
        true
    }

    /// Writes `value` at `offset` (rounded down to 8, wrapped into the mapping): what a peer
    /// that ignores the protocol can do to the mapping it shares with us.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn scribble(&self, offset: usize, value: u64) {
        let offset = (offset % self.map.len()) & !7;
        self.u64_at(offset).store(value, SeqCst);
    }

    /// Samples the writer dropped for this reader because it fell `depth` behind.
    pub(crate) fn lost(&self) -> u64 {
        self.u64_at(OFF_LOST).load(Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn pair(sub: u32, comp: u32) -> (Channel, Channel) {
        let len = channel_len(sub, comp);
        let fd = sys::memfd("test-channel", len).unwrap();
        let writer = Channel::new(
            Mapping::map(std::os::fd::AsFd::as_fd(&fd), len, true).unwrap(),
            sub,
            comp,
            true,
        )
        .unwrap();
        let reader = Channel::new(
            Mapping::map(std::os::fd::AsFd::as_fd(&fd), len, true).unwrap(),
            sub,
            comp,
            false,
        )
        .unwrap();
        (writer, reader)
    }

    fn descriptor(seq: u64) -> Descriptor {
        Descriptor {
            chunk: ChunkRef {
                segment: 1,
                index: seq as u32,
            },
            len: seq * 10,
            seq,
            timestamp_ns: seq + 100,
        }
    }

    #[test]
    fn entries_arrive_in_order_through_two_mappings() {
        let (writer, reader) = pair(4, 8);
        for seq in 0..3 {
            writer.push(descriptor(seq));
        }
        for seq in 0..3 {
            assert_eq!(reader.pop(), Ok(Some(descriptor(seq))));
        }
        assert_eq!(reader.pop(), Ok(None));
    }

    #[test]
    fn keep_last_take_oldest_only_when_full() {
        let (writer, reader) = pair(2, 4);
        writer.push(descriptor(0));
        assert_eq!(writer.take_oldest(), Ok(None));
        writer.push(descriptor(1));
        assert_eq!(writer.take_oldest(), Ok(Some(0)));
        writer.push(descriptor(2));
        assert_eq!(reader.pop(), Ok(Some(descriptor(1))));
        assert_eq!(reader.pop(), Ok(Some(descriptor(2))));
        assert_eq!(reader.lost(), 1);
    }

    /// What a keep-last writer does for each sample: drop the oldest entry of a full ring,
    /// then announce.
    fn send_keep_last(writer: &Channel, seq: u64) {
        if writer.is_full().unwrap() {
            writer.take_oldest().unwrap();
        }
        writer.push(descriptor(seq));
    }

    /// A reader that looked at `sub_tail`, then was outrun by a keep-last writer by more than
    /// a ring (it sent `3 x depth` samples, dropping the oldest each time) before the reader
    /// looked at `sub_head`: the distance between the two looks is beyond the ring, but the
    /// writer is correct. The reader takes the oldest entry still in the ring (keep-last:
    /// it lost older ones, it must not give up on the writer), and the rest after it.
    #[test]
    fn a_reader_lapped_between_its_looks_at_the_indices_takes_what_the_ring_holds() {
        let (writer, reader) = pair(4, 8);
        send_keep_last(&writer, 0);
        let mut lapped = false;
        let popped = reader.pop_observed(|| {
            if !lapped {
                lapped = true;
                for seq in 1..=12 {
                    send_keep_last(&writer, seq);
                }
            }
        });
        assert_eq!(popped, Ok(Some(descriptor(9))), "lapping is not corruption");
        for seq in 10..=12 {
            assert_eq!(reader.pop(), Ok(Some(descriptor(seq))));
        }
        assert_eq!(reader.pop(), Ok(None));
        assert_eq!(reader.lost(), 9);
    }

    /// A keep-last writer that saw its reader's ring full, then was preempted while the
    /// reader took every entry: the ring is no longer full, so the writer takes nothing, and
    /// the reader goes on with the next sample. (The writer used to take the entry after the
    /// last one, moving `sub_tail` past `sub_head`: the reader's next look found an impossible
    /// ring and ended the link.)
    #[test]
    fn a_writer_whose_reader_emptied_the_ring_before_its_take_takes_nothing() {
        let (writer, reader) = pair(4, 8);
        for seq in 0..4 {
            writer.push(descriptor(seq));
        }
        assert_eq!(writer.is_full(), Ok(true));
        let mut drained = Vec::new();
        let taken = writer.take_oldest_observed(|| {
            while let Ok(Some(d)) = reader.pop() {
                drained.push(d.seq);
            }
        });
        assert_eq!(taken, Ok(None), "the ring had room when the writer took");
        assert_eq!(drained, [0, 1, 2, 3]);
        assert_eq!(reader.lost(), 0);
        writer.push(descriptor(4));
        assert_eq!(reader.pop(), Ok(Some(descriptor(4))));
        assert_eq!(reader.pop(), Ok(None));
    }

    /// The same gap when the reader took only some entries: the writer takes nothing either
    /// (the ring has room); when the reader took none, the writer takes the oldest.
    #[test]
    fn a_writer_takes_the_oldest_only_from_the_ring_it_saw_full() {
        let (writer, reader) = pair(4, 8);
        for seq in 0..4 {
            writer.push(descriptor(seq));
        }
        let mut once = true;
        let taken = writer.take_oldest_observed(|| {
            if std::mem::take(&mut once) {
                assert_eq!(reader.pop(), Ok(Some(descriptor(0))));
            }
        });
        assert_eq!(taken, Ok(None));
        writer.push(descriptor(4));
        assert_eq!(writer.take_oldest_observed(|| {}), Ok(Some(1)));
        writer.push(descriptor(5));
        for seq in 2..=5 {
            assert_eq!(reader.pop(), Ok(Some(descriptor(seq))));
        }
        assert_eq!(reader.lost(), 1);
    }

    #[test]
    fn completions_come_back_and_a_full_completion_ring_refuses() {
        let (writer, reader) = pair(2, 2);
        assert!(reader.complete(ChunkRef {
            segment: 3,
            index: 1
        }));
        assert!(reader.complete(ChunkRef {
            segment: 3,
            index: 2
        }));
        assert!(!reader.complete(ChunkRef {
            segment: 3,
            index: 3
        }));
        let mut back = Vec::new();
        writer
            .drain_completions(|chunk| back.push(chunk.index))
            .unwrap();
        assert_eq!(back, [1, 2]);
        assert!(reader.complete(ChunkRef {
            segment: 3,
            index: 3
        }));
    }

    #[test]
    fn impossible_indices_from_the_peer_are_reported_not_trusted() {
        let (writer, reader) = pair(2, 2);
        // A reader that moves its tail past the writer's head.
        reader.u64_at(OFF_SUB_TAIL).store(5, Relaxed);
        assert_eq!(writer.queued(), Err(Corrupt));
        // A reader that claims more completions than the ring holds.
        reader.u64_at(OFF_COMP_HEAD).store(10, Relaxed);
        assert_eq!(writer.drain_completions(|_| {}), Err(Corrupt));
        // A writer whose head runs more than a ring ahead.
        writer.u64_at(OFF_SUB_TAIL).store(0, Relaxed);
        writer.u64_at(OFF_SUB_HEAD).store(3, Relaxed);
        assert_eq!(reader.pop(), Err(Corrupt));
    }

    /// Found by the `shm_channel` fuzz target: a peer that sets both indices of a ring to the
    /// top of their range makes it look empty, and the next push or release overflowed the
    /// index (a panic in builds with overflow checks). The index wraps instead, and the other
    /// side sees the ring corrupt at its next look.
    #[test]
    fn indices_at_the_top_of_their_range_wrap_and_show_as_corrupt() {
        let (writer, reader) = pair(2, 2);
        reader.u64_at(OFF_SUB_TAIL).store(u64::MAX, Relaxed);
        reader.u64_at(OFF_SUB_HEAD).store(u64::MAX, Relaxed);
        assert_eq!(writer.queued(), Ok(0));
        writer.push(descriptor(1));
        assert_eq!(writer.queued(), Err(Corrupt));
        assert_eq!(reader.pop(), Err(Corrupt));
        writer.u64_at(OFF_COMP_TAIL).store(u64::MAX, Relaxed);
        writer.u64_at(OFF_COMP_HEAD).store(u64::MAX, Relaxed);
        assert!(reader.complete(ChunkRef {
            segment: 0,
            index: 1
        }));
        assert_eq!(writer.drain_completions(|_| {}), Err(Corrupt));
    }

    #[test]
    fn a_blocked_writer_wakes_when_the_reader_takes_an_entry() {
        let (writer, reader) = pair(1, 2);
        writer.push(descriptor(0));
        let far = Instant::now() + Duration::from_secs(30);
        std::thread::scope(|scope| {
            let waiter = scope.spawn(|| writer.wait_for_room(far, || false));
            // Whether the pop happens before or after the writer sleeps, it must return true.
            assert_eq!(reader.pop(), Ok(Some(descriptor(0))));
            assert_eq!(waiter.join().unwrap(), Ok(true));
        });
    }

    #[test]
    fn waiting_for_room_gives_up_at_the_deadline() {
        let (writer, _reader) = pair(1, 2);
        writer.push(descriptor(0));
        assert_eq!(
            writer.wait_for_room(Instant::now() + Duration::from_millis(20), || false),
            Ok(false)
        );
    }
}
