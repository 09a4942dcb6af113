//! Messages on their way to the old host when a node moves (docs/migration.md, "A message on
//! its way to the old host").
//!
//! A publisher that sent a message before it knew the target's copy of the node sent it to the
//! source only. If that message reaches the source late (an RTPS writer repairs a datagram the
//! source lost, a same-host socket the source had not read yet) the node must not be
//! snapshotted before it: the target never gets it. The target knows, per subscription and
//! publisher, the first number its copy holds ([`first_held`]); the source, once it holds the
//! node, waits until what it gave the node and what waits in its mailbox reach the number
//! before each of those ([`uncovered`]), so the messages in between travel in the snapshot
//! with the others that waited. The wait is bounded ([`DRAIN_TIMEOUT`]); what is still
//! missing then is counted as lost in the move, and the move goes on.
//!
//! A reliable subscription gets each publisher's messages in order, so the source's messages
//! from a publisher are those up to the highest number it gave or holds: nothing above that
//! can be missing below it. A number the source never gets (the writer dropped it from its
//! history, or a publisher the source has given nothing yet) is not waited for past the bound.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use crate::guest::{Deferred, Delivered};
use crate::snapshot::{Reader, SnapshotError};

/// How long a source holding a node waits for the messages the target's copy does not have.
/// An RTPS writer repairs a lost message once the reader asks, at the writer's next
/// heartbeat: roslite's and Cyclone's come every 100 ms while a reader has not acknowledged a
/// message, a Fast DDS writer's (rclpy's) every few seconds (repairs came 1.3 and 2.3 s after
/// the loss ended in the rclpy test of tests/migration.rs, as for a 3 s period). A same-host
/// message is in the socket already. Moves without a message on its way do not wait at all.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(4);

/// How long the target's copy, once its publishers know it, waits to hear from each of them
/// before it answers with the first numbers it holds ([`crate::host::Prepared::await_heard`]):
/// longer than roslite's and Cyclone's writers' heartbeat period (100 ms), so that such a
/// publisher silent that long has had the source repaired while the node still ran there (a
/// Fast DDS writer heartbeats less often: docs/migration.md says what is not covered). It
/// delays the move, not the node (which runs on its old host meanwhile), and only when a
/// publisher is silent.
pub const HEAR_TIMEOUT: Duration = Duration::from_millis(300);

/// The first message the target's copy of a node holds from one publisher on one
/// subscription: it will have every later one of that publisher (reliability), so the source
/// must bring every earlier one it did not give the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FirstHeld {
    /// The subscription's callback slot.
    pub slot: i32,
    pub publisher_gid: [u8; 16],
    pub sequence_number: u64,
}

/// Messages a source did not have when it took the snapshot, which the target's copy does not
/// have either: numbers `from..=to` of one publisher on one subscription.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Missed {
    pub slot: i32,
    pub publisher_gid: [u8; 16],
    pub from: u64,
    pub to: u64,
}

impl Missed {
    pub fn count(&self) -> u64 {
        self.to - self.from + 1
    }
}

/// How many messages `missed` names.
pub fn missed_count(missed: &[Missed]) -> u64 {
    missed.iter().map(Missed::count).sum()
}

/// Per subscription and publisher, the lowest number among the messages waiting in `mailbox`
/// (a prepared copy's: what it received since its endpoints matched). Publishers without a
/// global id (in the target's own process) are not tracked, as for [`Delivered`].
pub fn first_held(mailbox: &VecDeque<Deferred>) -> Vec<FirstHeld> {
    let mut first: BTreeMap<(i32, [u8; 16]), u64> = BTreeMap::new();
    for (slot, gid, seq) in messages(mailbox) {
        let lowest = first.entry((slot, gid)).or_insert(seq);
        *lowest = (*lowest).min(seq);
    }
    first
        .into_iter()
        .map(|((slot, publisher_gid), sequence_number)| FirstHeld {
            slot,
            publisher_gid,
            sequence_number,
        })
        .collect()
}

/// Puts the messages `carried` from the old host into the target's `mailbox`, each in its
/// publisher's order among the messages the target's copy holds of that publisher on that
/// subscription: before the first it holds with a higher number, after the last with a lower
/// one, and not at all if it holds that number; the messages of a publisher it holds nothing
/// of go first, in their order. The exactly-once check then gives each once and in order.
///
/// Putting all carried messages first is not enough: each copy has gaps of its own, which a
/// depth-1 queue or ring overwrote while its host's thread was late. The old host can carry a
/// higher number without a lower one the target holds (given first, the higher one makes the
/// lower one look given), and the target can lack one the old host carries above the first it
/// holds (so dropping those at or above it would lose that one).
pub fn merge_carried(carried: Vec<Deferred>, mailbox: &mut VecDeque<Deferred>) {
    /// A subscription's callback slot and a publisher's gid.
    type Key = (i32, [u8; 16]);
    // Per (subscription, publisher): the carried messages not yet placed, in order, and how
    // many of the target's messages of it are still to come.
    let mut pending: BTreeMap<Key, VecDeque<(u64, Deferred)>> = BTreeMap::new();
    let mut first = VecDeque::new();
    let mut held_left: BTreeMap<Key, usize> = BTreeMap::new();
    for (key, _) in mailbox.iter().filter_map(tracked) {
        *held_left.entry(key).or_default() += 1;
    }
    for mail in carried {
        match tracked(&mail) {
            Some((key, seq)) if held_left.contains_key(&key) => {
                pending.entry(key).or_default().push_back((seq, mail));
            }
            _ => first.push_back(mail),
        }
    }
    let mut merged = first;
    for mail in std::mem::take(mailbox) {
        let Some((key, seq)) = tracked(&mail) else {
            merged.push_back(mail);
            continue;
        };
        let queue = pending.entry(key).or_default();
        while queue.front().is_some_and(|&(carried, _)| carried <= seq) {
            if let Some((carried, carried_mail)) = queue.pop_front() {
                if carried < seq {
                    merged.push_back(carried_mail);
                }
            }
        }
        merged.push_back(mail);
        let left = held_left.entry(key).or_default();
        *left -= 1;
        if *left == 0 {
            merged.extend(queue.drain(..).map(|(_, carried_mail)| carried_mail));
        }
    }
    *mailbox = merged;
}

/// What a frozen source lacks of what the target's copy does not hold (`first_held`): for
/// each publisher the source gave or holds a message of, the numbers between the highest of
/// those and the target's first. A publisher the source has nothing of is not counted: it
/// cannot tell which of its numbers were meant for it.
pub fn uncovered(
    delivered: &Delivered,
    mailbox: &VecDeque<Deferred>,
    first_held: &[FirstHeld],
) -> Vec<Missed> {
    let mut covered: BTreeMap<(i32, [u8; 16]), u64> = delivered
        .entries()
        .map(|(slot, gid, seq)| ((slot, gid), seq))
        .collect();
    for (slot, gid, seq) in messages(mailbox) {
        let highest = covered.entry((slot, gid)).or_insert(seq);
        *highest = (*highest).max(seq);
    }
    first_held
        .iter()
        .filter_map(|held| {
            let &highest = covered.get(&(held.slot, held.publisher_gid))?;
            (highest + 1 < held.sequence_number).then_some(Missed {
                slot: held.slot,
                publisher_gid: held.publisher_gid,
                from: highest + 1,
                to: held.sequence_number - 1,
            })
        })
        .collect()
}

/// (slot, publisher gid, number) of each tracked message in `mailbox`.
fn messages(mailbox: &VecDeque<Deferred>) -> impl Iterator<Item = (i32, [u8; 16], u64)> + '_ {
    mailbox
        .iter()
        .filter_map(tracked)
        .map(|((slot, gid), seq)| (slot, gid, seq))
}

/// A message's (subscription slot, publisher gid) and number, if its publisher is tracked (it
/// has a global id: not one in this process).
fn tracked(mail: &Deferred) -> Option<((i32, [u8; 16]), u64)> {
    match mail {
        Deferred::Message { slot, info, .. }
            if info.publisher_gid != [0; 16] && info.publication_sequence_number != 0 =>
        {
            Some((
                (*slot, info.publisher_gid),
                info.publication_sequence_number,
            ))
        }
        _ => None,
    }
}

/// `first_held` as `PrepareMigration`'s answer carries it: a count (u32), then each as the
/// subscription's callback slot (i32), the publisher's gid (16 bytes) and the number (u64),
/// little-endian.
pub fn encode_first_held(first_held: &[FirstHeld]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + first_held.len() * 28);
    out.extend_from_slice(&(first_held.len() as u32).to_le_bytes());
    for held in first_held {
        out.extend_from_slice(&held.slot.to_le_bytes());
        out.extend_from_slice(&held.publisher_gid);
        out.extend_from_slice(&held.sequence_number.to_le_bytes());
    }
    out
}

/// Reads [`encode_first_held`]'s bytes, refusing a count the bytes cannot hold or bytes after
/// the table.
pub fn decode_first_held(bytes: &[u8]) -> Result<Vec<FirstHeld>, SnapshotError> {
    const WHAT: &str = "the first numbers held";
    let mut r = Reader::new(bytes);
    let count = r.count(28, WHAT)?;
    let mut table = Vec::with_capacity(count);
    for _ in 0..count {
        let slot = r.u32(WHAT)? as i32;
        let publisher_gid: [u8; 16] = r.take(16, WHAT)?.try_into().expect("took 16 bytes");
        table.push(FirstHeld {
            slot,
            publisher_gid,
            sequence_number: r.u64(WHAT)?,
        });
    }
    if r.left() != 0 {
        return Err(SnapshotError::Malformed(format!(
            "{} bytes after the first numbers held",
            r.left()
        )));
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(slot: i32, gid: u8, seq: u64) -> Deferred {
        Deferred::Message {
            slot,
            bytes: vec![0, 1, 0, 0],
            info: roslite_c::convert::CMessageInfo {
                source_timestamp_ns: 0,
                received_timestamp_ns: 0,
                publication_sequence_number: seq,
                from_intra_process: false,
                publisher_gid: [gid; 16],
            },
            description: String::new(),
        }
    }

    /// Mail that is not a message, which keeps its place.
    fn timer() -> Deferred {
        Deferred::Timer {
            slot: 3,
            description: String::new(),
        }
    }

    fn held(slot: i32, gid: u8, seq: u64) -> FirstHeld {
        FirstHeld {
            slot,
            publisher_gid: [gid; 16],
            sequence_number: seq,
        }
    }

    fn numbers(mailbox: &VecDeque<Deferred>) -> Vec<(i32, u8, u64)> {
        mailbox
            .iter()
            .map(|mail| match mail {
                Deferred::Message { slot, info, .. } => (
                    *slot,
                    info.publisher_gid[0],
                    info.publication_sequence_number,
                ),
                _ => (-1, 0, 0),
            })
            .collect()
    }

    /// Each carried message goes into its publisher's order among the target's messages of
    /// it: 601 carried without 600 goes after the target's 600 (and its own 601 is taken
    /// once); 2297, which the target lacks between 2296 and 2298, goes between them; a
    /// carried number above all the target holds goes after its last; carried messages of
    /// a publisher the target holds nothing of (or of one in its own process) go first;
    /// other mail keeps its place.
    #[test]
    fn carried_messages_go_into_their_publishers_order() {
        let mut mailbox: VecDeque<Deferred> = [
            message(1, 7, 600),
            message(1, 7, 601),
            timer(),
            message(2, 9, 2296),
            message(2, 9, 2298),
            message(1, 7, 602),
        ]
        .into();
        let carried = vec![
            message(1, 7, 601),
            message(2, 9, 2297),
            message(2, 9, 2299),
            message(1, 8, 10),
            message(1, 0, 3),
        ];
        merge_carried(carried, &mut mailbox);
        assert_eq!(
            numbers(&mailbox),
            [
                (1, 8, 10),
                (1, 0, 3),
                (1, 7, 600),
                (1, 7, 601),
                (-1, 0, 0),
                (2, 9, 2296),
                (2, 9, 2297),
                (2, 9, 2298),
                (2, 9, 2299),
                (1, 7, 602),
            ]
        );
    }

    #[test]
    fn the_first_number_held_is_the_lowest_per_subscription_and_publisher() {
        let mailbox: VecDeque<Deferred> = [
            message(1, 7, 12),
            message(1, 7, 11),
            timer(),
            message(2, 7, 40),
            message(1, 8, 3),
            // A publisher of the target's own process: not tracked.
            message(1, 0, 5),
        ]
        .into();
        assert_eq!(
            first_held(&mailbox),
            vec![held(1, 7, 11), held(1, 8, 3), held(2, 7, 40)]
        );
    }

    #[test]
    fn what_the_source_gave_or_holds_covers_up_to_its_highest_number() {
        let delivered = Delivered::from_entries([(1, [7; 16], 3), (1, [8; 16], 9)]);
        let target = [held(1, 7, 5), held(1, 8, 10), held(2, 7, 4), held(1, 9, 6)];
        // Publisher 7 misses number 4; publisher 8 is covered; the source has nothing of slot 2
        // or of publisher 9, so it cannot tell what it lacks of them.
        let missed = uncovered(&delivered, &VecDeque::new(), &target);
        assert_eq!(
            missed,
            vec![Missed {
                slot: 1,
                publisher_gid: [7; 16],
                from: 4,
                to: 4
            }]
        );
        assert_eq!(missed_count(&missed), 1);
        // Number 4 came into the frozen source's mailbox: nothing is missing.
        let mailbox: VecDeque<Deferred> = [message(1, 7, 4)].into();
        assert!(uncovered(&delivered, &mailbox, &target).is_empty());
        // A target that holds more than the source has brought is missing nothing either.
        let mailbox: VecDeque<Deferred> = [message(1, 7, 4), message(1, 7, 5)].into();
        assert!(uncovered(&delivered, &mailbox, &target).is_empty());
    }

    #[test]
    fn the_table_reads_back_as_written_and_cut_anywhere_is_refused() {
        let table = vec![held(1, 7, 11), held(-2, 8, u64::MAX)];
        let bytes = encode_first_held(&table);
        assert_eq!(decode_first_held(&bytes).unwrap(), table);
        for len in 0..bytes.len() {
            assert!(decode_first_held(&bytes[..len]).is_err(), "cut at {len}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode_first_held(&longer).is_err());
        // A count the bytes cannot hold is refused before anything is allocated for it.
        assert!(decode_first_held(&u32::MAX.to_le_bytes()).is_err());
        assert_eq!(decode_first_held(&encode_first_held(&[])).unwrap(), vec![]);
    }
}
