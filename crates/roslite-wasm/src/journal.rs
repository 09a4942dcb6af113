//! The journal of what a guest made: every call of an import that creates or changes a runtime
//! object (a node, a publisher, a timer, a parameter, ...), kept with its arguments and the
//! bytes of guest memory it read. A guest restored from a snapshot on another host gets its
//! objects back by replaying the journal there ([`replay`]): the same import functions run
//! with the same arguments over the bytes they read then, so the new objects get exactly the
//! checks, callbacks and handle numbers the old ones had, without a second description of
//! each import.

use crate::fault::Fault;
use crate::guest::{GuestCalls, GuestState};
use crate::imports::ImportResult;
use crate::memory::{record_reads, GuestMemory};

pub use crate::recorded::Entry;

/// The imports the journal keeps (when they succeed).
pub const JOURNALED: &[&str] = &[
    "context_init",
    "node_create",
    "callback_group_create",
    "type_register",
    "publisher_create",
    "subscription_create",
    "subscription_on_message_lost",
    "on_matched",
    "on_incompatible_qos",
    "timer_create",
    "timer_cancel",
    "service_create",
    "client_create",
    "service_configure_introspection",
    "client_configure_introspection",
    "parameter_declare",
    "parameter_set",
    "parameter_add_on_set_callback",
    "executor_create",
    "executor_add_node",
    "release",
];

/// Whether the journal keeps calls of `import` (evaluated when the imports are linked).
pub const fn is_journaled(import: &str) -> bool {
    let mut i = 0;
    while i < JOURNALED.len() {
        if str_eq(JOURNALED[i], import) {
            return true;
        }
        i += 1;
    }
    false
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Runs a journaled import (`body`) and keeps it in the guest's journal if it succeeded.
pub fn record(
    g: &mut dyn GuestCalls,
    import: &'static str,
    args: &[i64],
    body: impl FnOnce(&mut dyn GuestCalls) -> ImportResult,
) -> ImportResult {
    let handles_before = g.state().handles.len() as u32;
    // Odd from here until the journal says what the import changed (GuestShared::
    // journal_and_peers), whatever the import returns.
    struct Changing(std::sync::Arc<crate::guest::GuestShared>);
    impl Drop for Changing {
        fn drop(&mut self) {
            self.0
                .journal_changes
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
    let shared = g.state().shared.clone();
    shared
        .journal_changes
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let _changing = Changing(shared);
    let (result, reads) = record_reads(|| body(&mut *g));
    if result == Ok(roslite_c::ROSLITE_OK) {
        let state = g.state();
        let mut journal = state
            .shared
            .journal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let held = |h: i64| state.handles.native(h).is_some();
        let moving = state
            .shared
            .journal_append_only
            .load(std::sync::atomic::Ordering::SeqCst);
        if !moving && import == "release" && forget_released(&mut journal, args[0], held) {
            return result;
        }
        let entry = Entry {
            import: import.to_owned(),
            args: args.to_vec(),
            reads,
            handles_before,
        };
        if !moving {
            forget_superseded(&mut journal, &entry);
        }
        journal.push(entry);
    }
    result
}

/// Takes out of `journal` the earlier sets of the parameter `entry` sets (`parameter_set` of
/// the same node and name): the last set gives the value a replay ends with, so a node that
/// sets a parameter for ever keeps one entry for it.
fn forget_superseded(journal: &mut Vec<Entry>, entry: &Entry) {
    if entry.import != "parameter_set" {
        return;
    }
    let name = parameter_name(entry);
    if name.is_none() {
        return;
    }
    journal.retain(|e| {
        !(e.import == "parameter_set"
            && e.args.first() == entry.args.first()
            && parameter_name(e) == name)
    });
}

/// The name a `parameter_set` entry set, as it read it (with its NUL).
fn parameter_name(entry: &Entry) -> Option<&[u8]> {
    let at = u32::try_from(*entry.args.get(1)?).ok()?;
    entry
        .reads
        .iter()
        .find(|(address, _)| *address == at)
        .map(|(_, bytes)| bytes.as_slice())
}

/// The arguments of a journaled import that are guest handles (the others: pointers, slots,
/// a timer's period).
fn handle_args(import: &str) -> &'static [usize] {
    match import {
        "subscription_create" | "service_create" | "timer_create" | "executor_add_node" => &[0, 1],
        "context_init" => &[],
        _ => &[0],
    }
}

/// The imports that give the guest a handle: the first number after their `handles_before`
/// (a number given between two imports, a service request's responder, comes after it).
const MAKERS: &[&str] = &[
    "context_init",
    "node_create",
    "callback_group_create",
    "publisher_create",
    "subscription_create",
    "timer_create",
    "service_create",
    "client_create",
    "parameter_add_on_set_callback",
    "executor_create",
];

/// The guest handle `entry` made, if it is one of the [`MAKERS`].
pub(crate) fn made_by(entry: &Entry) -> Option<i64> {
    MAKERS
        .contains(&entry.import.as_str())
        .then(|| i64::from(entry.handles_before) + 1)
}

/// For a guest that released handle `released`: takes out of `journal` the entry that made
/// it and every entry that named it (its callbacks, a timer's cancel, an executor's
/// `add_node`, a node's parameters), and returns true, so that neither they nor the release
/// are replayed and a guest that makes and releases objects for ever keeps a journal of what
/// it holds. False, with the journal as it was, when one of those entries made a handle the
/// guest still holds (`held`: a publisher of a released node), which the replay must make
/// again, or one that an entry staying names. The release of a handle no entry made (a
/// service request's responder) is forgotten: it would replay as nothing.
///
/// A replay still gives the later objects their numbers: each remaining entry keeps its
/// `handles_before`, and the numbers of what was taken out are skipped.
pub fn forget_released(
    journal: &mut Vec<Entry>,
    released: i64,
    held: impl Fn(i64) -> bool,
) -> bool {
    if !forget_one(journal, released, &held) {
        return false;
    }
    // A release kept because something held then needed what it released (a node whose
    // publisher lived on) may be forgotten now. `forget_one` leaves the journal as it was
    // when it cannot forget, so a kept release is only taken out to try and put back.
    'again: loop {
        for i in (0..journal.len()).rev() {
            if journal[i].import != "release" {
                continue;
            }
            let release = journal.remove(i);
            if forget_one(journal, release.args[0], &held) {
                continue 'again;
            }
            journal.insert(i, release);
        }
        return true;
    }
}

/// The guest handles `entry` names among its arguments ([`handle_args`]).
fn named_handles(entry: &Entry) -> impl Iterator<Item = i64> + '_ {
    handle_args(&entry.import)
        .iter()
        .filter_map(|&a| entry.args.get(a).copied())
}

/// [`forget_released`] for `released` alone.
fn forget_one(journal: &mut Vec<Entry>, released: i64, held: &impl Fn(i64) -> bool) -> bool {
    let Some(maker) = journal.iter().rposition(|e| made_by(e) == Some(released)) else {
        // Nothing replayed made it (a service request's responder): its release would
        // replay as nothing.
        return true;
    };
    let names_it = |e: &Entry| named_handles(e).any(|h| h == released);
    let mut gone: Vec<usize> = std::iter::once(maker)
        .chain((maker + 1..journal.len()).filter(|&i| names_it(&journal[i])))
        .collect();
    let still_needed = gone[1..]
        .iter()
        .any(|&i| made_by(&journal[i]).is_some_and(held));
    // What the other entries taken out made, released already (kept when their own release
    // could not be forgotten): their releases go too, and an entry that stays and names one
    // would not replay without it.
    let made_too: Vec<i64> = gone[1..]
        .iter()
        .filter_map(|&i| made_by(&journal[i]))
        .collect();
    let mut named_by_one_that_stays = false;
    for (i, e) in journal.iter().enumerate() {
        let names_one = named_handles(e).any(|h| made_too.contains(&h));
        if names_one && !gone.contains(&i) {
            if e.import == "release" {
                gone.push(i);
            } else {
                named_by_one_that_stays = true;
            }
        }
    }
    if still_needed || named_by_one_that_stays {
        return false;
    }
    gone.sort_unstable();
    for &i in gone.iter().rev() {
        journal.remove(i);
    }
    true
}

/// An import's argument from its widened form.
trait FromWide {
    fn from_wide(v: i64) -> Self;
}

impl FromWide for i32 {
    fn from_wide(v: i64) -> Self {
        v as i32
    }
}

impl FromWide for i64 {
    fn from_wide(v: i64) -> Self {
        v
    }
}

macro_rules! call_by_name {
    ([$g:ident, $import:ident, $args:ident] $($name:ident($($arg:ident: $ty:ty),* $(,)?);)*) => {
        match $import {
            $(
                stringify!($name) => {
                    let mut values = $args.iter().copied();
                    let _ = &mut values;
                    Some(crate::imports::$name(
                        $g,
                        $( <$ty as FromWide>::from_wide(values.next().unwrap_or(0)) ),*
                    ))
                }
            )*
            _ => None,
        }
    };
}

/// The guest as a replayed import sees it: its new state, and a memory holding only what the
/// import read when it first ran.
struct Replaying<'a> {
    memory: Vec<u8>,
    state: &'a mut GuestState,
    parks: bool,
}

impl GuestCalls for Replaying<'_> {
    fn parts(&mut self) -> (GuestMemory<'_>, &mut GuestState) {
        (GuestMemory::new(&mut self.memory), self.state)
    }

    fn alloc(&mut self, _size: u32) -> Result<u32, Fault> {
        Err(replay_only("roslite_guest_alloc"))
    }

    fn free(&mut self, _pointer: u32) -> Result<(), Fault> {
        Err(replay_only("roslite_guest_free"))
    }

    fn dispatch(
        &mut self,
        _slot: i32,
        _kind: crate::abi::CallbackKind,
        _args: [i64; 4],
        during: &str,
    ) -> Result<i32, Fault> {
        Err(replay_only(during))
    }

    fn start(&mut self) -> Result<(), Fault> {
        Err(replay_only("main"))
    }

    fn asyncify(&mut self, call: crate::waiting::Asyncify) -> Result<(), Fault> {
        Err(replay_only(call.export()))
    }

    fn can_park(&mut self) -> bool {
        false
    }

    fn can_park_at_all(&mut self) -> bool {
        self.parks
    }
}

fn replay_only(what: &str) -> Fault {
    Fault::Abi(format!(
        "replaying the guest's journal would have entered the guest ({what})"
    ))
}

/// Why a journal did not replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayError {
    pub import: String,
    pub message: String,
}

impl std::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "re-creating the node's objects failed at {}: {}",
            self.import, self.message
        )
    }
}

impl std::error::Error for ReplayError {}

/// Re-creates what `entries` made, in `state` (a guest that has not run): each call as it was,
/// over the bytes it read. `parks`: whether the guest can park (as the original could).
///
/// A callback an import raises meanwhile does not enter the guest: an on-set-parameters
/// callback accepts (the journal keeps only the sets the guest's callbacks accepted, and what
/// the callback changed in the guest comes with its memory), any other waits in the mailbox.
pub fn replay(state: &mut GuestState, entries: &[Entry], parks: bool) -> Result<(), ReplayError> {
    let _replaying = ReplayFlag::raise(state);
    for entry in entries {
        let fail = |message: String| ReplayError {
            import: entry.import.clone(),
            message,
        };
        state.handles.skip_to(entry.handles_before);
        if entry.import == "release" && state.handles.native(entry.args[0]).is_none() {
            continue; // a responder's, never replayed
        }
        let size = entry
            .reads
            .iter()
            .map(|(at, bytes)| *at as usize + bytes.len())
            .max()
            .unwrap_or(0);
        let mut memory = vec![0u8; size];
        for (at, bytes) in &entry.reads {
            memory[*at as usize..*at as usize + bytes.len()].copy_from_slice(bytes);
        }
        let result = call_replaying(state, &entry.import, &entry.args, &mut memory, parks)
            .ok_or_else(|| fail("not an import of this host".into()))?;
        match result {
            Ok(roslite_c::ROSLITE_OK) => {}
            Ok(status) => return Err(fail(format!("status {status}: {}", state.last_error))),
            Err(fault) => return Err(fail(fault.to_string())),
        }
    }
    Ok(())
}

/// Calls `import` as a replayed one sees the guest ([`Replaying`]): over `memory`, which keeps
/// what the import wrote. None if the host has no such import.
fn call_replaying(
    state: &mut GuestState,
    import: &str,
    args: &[i64],
    memory: &mut Vec<u8>,
    parks: bool,
) -> Option<ImportResult> {
    let mut guest = Replaying {
        memory: std::mem::take(memory),
        state,
        parks,
    };
    let g: &mut dyn GuestCalls = &mut guest;
    let result = crate::abi::roslite_imports!(call_by_name[g, import, args]);
    *memory = guest.memory;
    result
}

/// `GuestShared::replaying`, set while it lives: no callback enters the guest meanwhile.
struct ReplayFlag(std::sync::Arc<crate::guest::GuestShared>);

impl ReplayFlag {
    fn raise(state: &GuestState) -> Self {
        state
            .shared
            .replaying
            .store(true, std::sync::atomic::Ordering::SeqCst);
        Self(state.shared.clone())
    }
}

impl Drop for ReplayFlag {
    fn drop(&mut self) {
        self.0
            .replaying
            .store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Calls the host's `import` for `state` with `args` over `memory` (guest addresses from 0;
/// what the import writes stays there) outside any engine, as a replay does: a callback the
/// call raises waits in the guest's mailbox, and the guest's allocator and dispatch are out of
/// reach (a fault). The `guest_imports` fuzz target calls every import this way, with what a
/// hostile guest could pass. None if the host has no such import.
pub fn call_outside_engine(
    state: &mut GuestState,
    import: &str,
    args: &[i64],
    memory: &mut Vec<u8>,
) -> Option<ImportResult> {
    let _replaying = ReplayFlag::raise(state);
    call_replaying(state, import, args, memory, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A journal as `record` keeps it, with the handles it gave and the guest still holds.
    #[derive(Default)]
    struct Kept {
        journal: Vec<Entry>,
        given: i64,
        held: std::collections::BTreeSet<i64>,
    }

    impl Kept {
        /// A journaled call; the handle it made, if it is a maker.
        fn call(&mut self, import: &str, args: &[i64]) -> i64 {
            let entry = Entry {
                import: import.into(),
                args: args.to_vec(),
                reads: Vec::new(),
                handles_before: self.given as u32,
            };
            if made_by(&entry).is_some() {
                self.given += 1;
                self.held.insert(self.given);
            }
            self.journal.push(entry);
            self.given
        }

        fn release(&mut self, handle: i64) {
            assert!(self.held.remove(&handle));
            let held = |h: i64| self.held.contains(&h);
            if !forget_released(&mut self.journal, handle, held) {
                self.call("release", &[handle]);
            }
        }

        /// A number given without an import (a service request's responder).
        fn responder(&mut self) -> i64 {
            self.given += 1;
            self.held.insert(self.given);
            self.given
        }

        fn imports(&self) -> Vec<&str> {
            self.journal.iter().map(|e| e.import.as_str()).collect()
        }
    }

    #[test]
    fn a_guest_that_makes_and_releases_objects_for_ever_keeps_a_journal_of_what_it_holds() {
        let mut k = Kept::default();
        let context = k.call("context_init", &[]);
        let node = k.call("node_create", &[context]);
        let executor = k.call("executor_create", &[context]);
        k.call("executor_add_node", &[executor, node]);
        let base = k.imports().len();
        for _ in 0..1000 {
            // A client per call; a timer that is cancelled; a subscription with callbacks.
            let client = k.call("client_create", &[node]);
            k.release(client);
            let timer = k.call("timer_create", &[node, 0, 1_000_000]);
            k.call("timer_cancel", &[timer]);
            k.release(timer);
            let sub = k.call("subscription_create", &[node, 0]);
            k.call("on_matched", &[sub]);
            k.call("subscription_on_message_lost", &[sub]);
            k.release(sub);
        }
        assert_eq!(k.journal.len(), base, "{:?}", k.imports());
        // The numbers go on: the next object's entry says how many were given before it.
        let publisher = k.call("publisher_create", &[node]);
        assert_eq!(publisher, 3 * 1000 + 4);
        assert_eq!(
            k.journal.last().unwrap().handles_before,
            publisher as u32 - 1
        );
    }

    #[test]
    fn what_a_released_object_made_that_is_still_held_keeps_its_journal() {
        let mut k = Kept::default();
        let context = k.call("context_init", &[]);
        let node = k.call("node_create", &[context]);
        let group = k.call("callback_group_create", &[node]);
        let timer = k.call("timer_create", &[node, group, 5]);
        // The group goes while its timer stays: both entries must replay.
        k.release(group);
        assert_eq!(
            k.imports(),
            [
                "context_init",
                "node_create",
                "callback_group_create",
                "timer_create",
                "release"
            ]
        );
        // The timer goes too, and the group's kept release with it.
        k.release(timer);
        assert_eq!(k.imports(), ["context_init", "node_create"]);
        // The period argument of a timer is not a handle: a timer whose period equals a
        // released handle's number does not go with it.
        let other = k.call("node_create", &[context]);
        let timer = k.call("timer_create", &[node, 0, other]);
        k.release(other);
        assert!(k.imports().contains(&"timer_create"));
        assert!(k.held.contains(&timer));
        // A responder's number (given between imports) was made by no entry: its release
        // is not kept either.
        let responder = k.responder();
        let before = k.imports().len();
        k.release(responder);
        assert_eq!(k.imports().len(), before);
        // Once nothing made on the node is held, the node goes with the group it made and
        // that group's kept release.
        k.release(timer);
        k.release(node);
        assert_eq!(k.imports(), ["context_init"]);
        // A group of a released node that another entry still names (a timer of another
        // node in it) keeps the node's entries.
        let node = k.call("node_create", &[context]);
        let group = k.call("callback_group_create", &[node]);
        let elsewhere = k.call("node_create", &[context]);
        k.call("timer_create", &[elsewhere, group, 5]);
        k.release(group);
        let before = k.imports().len();
        k.release(node);
        assert_eq!(k.imports().len(), before + 1, "{:?}", k.imports());
    }

    /// A `parameter_set` entry of `node`, its name read at `at`.
    fn set(node: i64, at: u32, name: &str, value: u8) -> Entry {
        Entry {
            import: "parameter_set".into(),
            args: vec![node, i64::from(at), 4000],
            reads: vec![(at, format!("{name}\0").into_bytes()), (4000, vec![value])],
            handles_before: 2,
        }
    }

    #[test]
    fn a_parameter_set_again_keeps_only_its_last_set() {
        let mut journal = Vec::new();
        let mut push = |e: Entry| {
            forget_superseded(&mut journal, &e);
            journal.push(e);
        };
        for value in 0..100 {
            // The same name from another address is the same parameter.
            push(set(2, 100 + u32::from(value % 3), "speed", value));
            push(set(2, 200, "gain", value));
            push(set(3, 300, "speed", value));
        }
        let values: Vec<(i64, &[u8], u8)> = journal
            .iter()
            .map(|e| (e.args[0], parameter_name(e).unwrap(), e.reads[1].1[0]))
            .collect();
        assert_eq!(
            values,
            [
                (2, &b"speed\0"[..], 99),
                (2, &b"gain\0"[..], 99),
                (3, &b"speed\0"[..], 99)
            ]
        );
    }

    #[test]
    fn a_release_kept_for_what_was_still_held_goes_with_the_last_of_it() {
        let mut k = Kept::default();
        let context = k.call("context_init", &[]);
        for _ in 0..100 {
            let node = k.call("node_create", &[context]);
            let publisher = k.call("publisher_create", &[node]);
            k.call("on_matched", &[publisher]);
            k.release(node);
            assert_eq!(
                k.imports(),
                [
                    "context_init",
                    "node_create",
                    "publisher_create",
                    "on_matched",
                    "release"
                ]
            );
            k.release(publisher);
            assert_eq!(k.imports(), ["context_init"]);
        }
    }

    #[test]
    fn the_journaled_imports_are_imports() {
        let mut names = Vec::new();
        macro_rules! collect {
            ($($name:ident($($arg:ident: $ty:ty),* $(,)?);)*) => {
                $( names.push(stringify!($name)); )*
            };
        }
        crate::abi::roslite_imports!(collect);
        for journaled in JOURNALED {
            assert!(names.contains(journaled), "{journaled} is not an import");
            assert!(is_journaled(journaled));
        }
        assert!(!is_journaled("publish"));
        assert!(!is_journaled("executor_spin"));
    }
}
