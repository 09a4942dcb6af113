//! The thread-local that lets a C ABI callback find the guest whose host call is running on
//! this thread ([`crate::guest::GuestCalls`] is what it can do with it).
//!
//! Re-entry: a guest calls an import (say `executor_spin`), the import calls the C ABI, the C
//! ABI runs a callback, and the callback calls back into the same guest. The engine's handle
//! for that guest (a `Caller` inside the import) is on this thread's stack, so the callback
//! reaches it through `CURRENT`, set for the length of every import. An import never holds a
//! borrow of guest memory across a C ABI call that may run callbacks: it copies what it read
//! first and looks memory up again afterwards (a callback may grow memory).

use std::cell::Cell;
use std::sync::Arc;

use crate::guest::{GuestCalls, GuestShared};

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
