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
    let (result, reads) = record_reads(|| body(&mut *g));
    if result == Ok(roslite_c::ROSLITE_OK) {
        let shared = g.state().shared.clone();
        shared
            .journal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(Entry {
                import: import.to_owned(),
                args: args.to_vec(),
                reads,
                handles_before,
            });
    }
    result
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
pub fn replay(state: &mut GuestState, entries: &[Entry], parks: bool) -> Result<(), ReplayError> {
    for entry in entries {
        let fail = |message: String| ReplayError {
            import: entry.import.clone(),
            message,
        };
        while (state.handles.len() as u32) < entry.handles_before {
            state.handles.skip();
        }
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
        let mut guest = Replaying {
            memory,
            state: &mut *state,
            parks,
        };
        let g: &mut dyn GuestCalls = &mut guest;
        let import = entry.import.as_str();
        let args = &entry.args;
        let result = crate::abi::roslite_imports!(call_by_name[g, import, args])
            .ok_or_else(|| fail("not an import of this host".into()))?;
        match result {
            Ok(roslite_c::ROSLITE_OK) => {}
            Ok(status) => return Err(fail(format!("status {status}: {}", guest.state.last_error))),
            Err(fault) => return Err(fail(fault.to_string())),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
