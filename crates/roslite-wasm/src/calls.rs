//! The seam between the engines and the host's imports: what an import may do with the guest
//! it serves ([`GuestCalls`]), and the thread-local that lets a C ABI callback find the guest
//! whose host call is running on this thread.
//!
//! Re-entry: a guest calls an import (say `executor_spin`), the import calls the C ABI, the C
//! ABI runs a callback, and the callback calls back into the same guest. The engine's handle
//! for that guest (a `Caller` inside the import) is on this thread's stack, so the callback
//! reaches it through `CURRENT`, set for the length of every import. An import never holds a
//! borrow of guest memory across a C ABI call that may run callbacks: it copies what it read
//! first and looks memory up again afterwards (a callback may grow memory).

use std::cell::Cell;
use std::sync::Arc;

use crate::abi::CallbackKind;
use crate::fault::Fault;
use crate::guest::{GuestShared, GuestState};
use crate::memory::GuestMemory;

/// What an import can do with its guest, whichever engine runs it.
pub trait GuestCalls {
    /// The guest's memory and the host's state for it, borrowed together.
    fn parts(&mut self) -> (GuestMemory<'_>, &mut GuestState);
    /// `roslite_guest_alloc(size)`: 0 when the guest has no memory to give.
    fn alloc(&mut self, size: u32) -> Result<u32, Fault>;
    /// `roslite_guest_free(pointer)`.
    fn free(&mut self, pointer: u32) -> Result<(), Fault>;
    /// `roslite_guest_dispatch(slot, kind, a, b, c, d)`, with a fresh deadline; `during` names
    /// the callback in a fault.
    fn dispatch(
        &mut self,
        slot: i32,
        kind: CallbackKind,
        args: [i64; 4],
        during: &str,
    ) -> Result<i32, Fault>;

    /// Runs (or, rewinding, resumes) the guest's `_start` with a fresh deadline; a return
    /// from `main` or an unwind to park is `Ok`.
    fn start(&mut self) -> Result<(), Fault>;
    /// Calls one of the Asyncify exports (crate::park); a guest without them cannot park, so
    /// it is never asked.
    fn asyncify(&mut self, call: crate::park::Asyncify) -> Result<(), Fault>;
    /// Whether a wait that starts now can park the guest: it was prepared with Asyncify and
    /// the wait is `main`'s, not a callback's.
    fn can_park(&mut self) -> bool;
    /// Whether the guest was prepared with Asyncify at all.
    fn can_park_at_all(&mut self) -> bool;

    /// The exported global `name`: None if there is no such export, an error for a type a
    /// snapshot cannot carry (a reference).
    fn exported_global(
        &mut self,
        _name: &str,
    ) -> Option<Result<crate::snapshot::GlobalValue, String>> {
        None
    }
    /// Sets the exported global `name` if it is mutable (an immutable one keeps the value the
    /// module gave it, which a snapshot of the same module carries too).
    fn set_exported_global(
        &mut self,
        name: &str,
        _value: crate::snapshot::GlobalValue,
    ) -> Result<(), String> {
        Err(format!("this guest has no global {name}"))
    }

    /// Every global the module defines, by its index among them, through the exports
    /// crate::instrument added.
    fn globals(&mut self) -> Result<Vec<(u32, crate::snapshot::GlobalValue)>, String> {
        let mut globals = Vec::new();
        for index in 0u32.. {
            match self.exported_global(&crate::instrument::global_export(index)) {
                Some(value) => globals.push((index, value?)),
                None => return Ok(globals),
            }
        }
        Ok(globals)
    }
    /// Sets the mutable ones of `globals` (see [`Self::set_exported_global`]).
    fn set_globals(
        &mut self,
        globals: &[(u32, crate::snapshot::GlobalValue)],
    ) -> Result<(), String> {
        for &(index, value) in globals {
            self.set_exported_global(&crate::instrument::global_export(index), value)?;
        }
        Ok(())
    }
    /// The hash crate::instrument embedded: which module this is; None if uninstrumented.
    fn module_hash(&mut self) -> Option<crate::snapshot::ModuleHash> {
        let mut parts = [0i64; 4];
        for (i, part) in parts.iter_mut().enumerate() {
            match self.exported_global(&crate::instrument::hash_export(i))? {
                Ok(crate::snapshot::GlobalValue::I64(v)) => *part = v,
                _ => return None,
            }
        }
        Some(crate::instrument::hash_from_parts(parts))
    }
    /// Grows the guest's memory to `pages` WebAssembly pages (nothing if it has them).
    fn grow_memory_to(&mut self, _pages: u32) -> Result<(), String> {
        Err("this guest's memory cannot grow".into())
    }

    fn state(&mut self) -> &mut GuestState {
        self.parts().1
    }
}

thread_local! {
    /// The guest whose import runs on this thread (innermost first), while it runs.
    static CURRENT: Cell<Option<*mut (dyn GuestCalls + 'static)>> = const { Cell::new(None) };
}

/// Runs `body` (an import) with `guest` reachable by the C ABI's callbacks on this thread.
pub fn enter<R>(guest: &mut dyn GuestCalls, body: impl FnOnce(&mut dyn GuestCalls) -> R) -> R {
    let pointer: *mut (dyn GuestCalls + '_) = guest;
    // SAFETY: only the lifetime is erased; the pointer is removed from CURRENT before `guest`'s
    // borrow ends (below), so it is never used after.
    let pointer: *mut (dyn GuestCalls + 'static) = unsafe { std::mem::transmute(pointer) };
    let outer = CURRENT.with(|c| c.replace(Some(pointer)));
    struct Restore(Option<*mut (dyn GuestCalls + 'static)>);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(outer);
    // SAFETY: `pointer` came from `guest` just above and is valid for this call.
    body(unsafe { &mut *pointer })
}

/// Whether an import of the guest of `shared` runs on this thread (innermost).
pub fn is_current(shared: &Arc<GuestShared>) -> bool {
    CURRENT.with(Cell::get).is_some_and(|pointer| {
        // SAFETY: as in `with_guest`.
        let guest = unsafe { &mut *pointer };
        Arc::ptr_eq(&guest.state().shared, shared)
    })
}

/// Runs `f` on the guest of `shared` if an import of that guest runs on this thread; `None`
/// otherwise (the callback came on another thread, or the guest is not inside a host call).
pub fn with_guest<R>(
    shared: &Arc<GuestShared>,
    f: impl FnOnce(&mut dyn GuestCalls) -> R,
) -> Option<R> {
    let pointer = CURRENT.with(Cell::get)?;
    // SAFETY: CURRENT holds a guest set by `enter` further up this thread's stack, still
    // borrowed there; the import that set it is inside a C ABI call and does not touch it
    // until this callback returns.
    let guest = unsafe { &mut *pointer };
    if !Arc::ptr_eq(&guest.state().shared, shared) {
        return None;
    }
    Some(f(guest))
}
