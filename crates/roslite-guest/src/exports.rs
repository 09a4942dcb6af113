//! What the guest gives the host: memory for what the host hands over
//! (`roslite_guest_alloc`/`roslite_guest_free`) and the one entry for every callback
//! (`roslite_guest_dispatch`), which finds the closure registered under a slot number.

use std::alloc::Layout;
use std::cell::RefCell;
use std::rc::Rc;

/// The dispatch kinds of docs/wasm.md.
pub(crate) mod kind {
    pub const MESSAGE: i32 = 1;
    pub const TIMER: i32 = 2;
    pub const REQUEST: i32 = 3;
    pub const RESPONSE: i32 = 4;
    pub const MESSAGE_LOST: i32 = 5;
    pub const MATCHED: i32 = 6;
    pub const INCOMPATIBLE_QOS: i32 = 7;
    pub const PARAMETERS: i32 = 8;
}

/// The arguments of one `roslite_guest_dispatch` call after the slot.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DispatchCall {
    pub kind: i32,
    pub a: i64,
    pub b: i64,
    pub c: i64,
    pub d: i64,
}

type SlotCallback = Rc<RefCell<Box<dyn FnMut(DispatchCall) -> i32>>>;

// Outside wasm nothing calls the exports, so only the unit tests reach what they use.
#[cfg_attr(not(target_family = "wasm"), allow(dead_code))]
struct SlotEntry {
    callback: SlotCallback,
    /// A response slot: the host calls it once, then the dispatcher frees it.
    once: bool,
}

/// Registered callbacks by slot number minus one: slot 0 is never handed out, so a zeroed
/// argument can never reach a live callback.
#[derive(Default)]
struct SlotTable {
    callbacks: Vec<Option<SlotEntry>>,
    vacant: Vec<u32>,
}

thread_local! {
    // The guest has one thread; thread_local! is how safe Rust keeps a mutable global.
    static SLOTS: RefCell<SlotTable> = RefCell::new(SlotTable::default());
}

/// A registered callback; dropping it unregisters it (the host must not be able to call it
/// any more by then: drop the entity's handle first).
#[derive(Debug)]
pub(crate) struct Slot(u32);

impl Slot {
    pub(crate) fn number(&self) -> u32 {
        self.0
    }

    pub(crate) fn register(callback: impl FnMut(DispatchCall) -> i32 + 'static) -> Slot {
        Slot(register_entry(callback, false))
    }

    /// Registers a callback the host calls once (a service response); the dispatcher frees
    /// it after that call, [`unregister`] before it if it will never come.
    pub(crate) fn register_once(callback: impl FnMut(DispatchCall) -> i32 + 'static) -> u32 {
        register_entry(callback, true)
    }
}

fn register_entry(callback: impl FnMut(DispatchCall) -> i32 + 'static, once: bool) -> u32 {
    let number = SLOTS.with_borrow_mut(|table| match table.vacant.pop() {
        Some(number) => number,
        None => {
            table.callbacks.push(None);
            u32::try_from(table.callbacks.len()).expect("fewer than 2^32 callbacks")
        }
    });
    let callback: Box<dyn FnMut(DispatchCall) -> i32> = Box::new(callback);
    SLOTS.with_borrow_mut(|table| {
        table.callbacks[number as usize - 1] = Some(SlotEntry {
            callback: Rc::new(RefCell::new(callback)),
            once,
        });
    });
    number
}

impl Drop for Slot {
    fn drop(&mut self) {
        unregister(self.0);
    }
}

pub(crate) fn unregister(number: u32) {
    SLOTS.with_borrow_mut(|table| {
        if let Some(entry) = table.callbacks.get_mut((number as usize).wrapping_sub(1)) {
            if entry.take().is_some() {
                table.vacant.push(number);
            }
        }
    });
}

/// Calls the callback in `slot`. The table is not borrowed during the call: a callback may
/// create or drop entities (and so slots), and the host may dispatch again from inside one of
/// its imports (an on-set-parameters callback runs inside `parameter_set`). A callback already
/// running is not entered again; the call returns 0 (for kind 8: refuse).
#[cfg_attr(not(target_family = "wasm"), allow(dead_code))]
pub(crate) fn dispatch(slot: u32, call: DispatchCall) -> i32 {
    let found = SLOTS.with_borrow(|table| {
        table
            .callbacks
            .get((slot as usize).wrapping_sub(1))
            .and_then(Option::as_ref)
            .map(|entry| (entry.callback.clone(), entry.once))
    });
    let Some((callback, once)) = found else {
        return 0;
    };
    let result = match callback.try_borrow_mut() {
        Ok(mut callback) => callback(call),
        Err(_) => 0,
    };
    if once {
        // Unless the callback freed the slot itself (and a new one took the number).
        SLOTS.with_borrow_mut(|table| {
            let entry = &mut table.callbacks[slot as usize - 1];
            if entry
                .as_ref()
                .is_some_and(|held| Rc::ptr_eq(&held.callback, &callback))
            {
                *entry = None;
                table.vacant.push(slot);
            }
        });
    }
    result
}

/// Every block starts with its size, so `free` (which the host calls with the pointer only)
/// can rebuild the layout. Eight bytes keep the block 8-aligned for `int64_t` and `double`
/// arrays of parameter values.
const HEADER: usize = 8;

/// `size` bytes, 8-aligned, that [`free`] gives back; null if there is no memory left.
#[cfg_attr(not(target_family = "wasm"), allow(dead_code))]
pub(crate) fn allocate(size: usize) -> *mut u8 {
    let Some(layout) = size
        .checked_add(HEADER)
        .and_then(|total| Layout::from_size_align(total, HEADER).ok())
    else {
        return std::ptr::null_mut();
    };
    // SAFETY: the layout's size is at least HEADER, never zero.
    let block = unsafe { std::alloc::alloc(layout) };
    if block.is_null() {
        return block;
    }
    // SAFETY: the block has HEADER bytes for the size, aligned to 8.
    unsafe {
        block.cast::<usize>().write(layout.size());
        block.add(HEADER)
    }
}

/// Gives back a block from [`allocate`]; null is ignored.
///
/// # Safety
/// `pointer` is null or came from [`allocate`] and was not freed since.
pub(crate) unsafe fn free(pointer: *mut u8) {
    if pointer.is_null() {
        return;
    }
    // SAFETY: per the contract the header sits HEADER bytes before and holds the block size.
    unsafe {
        let block = pointer.sub(HEADER);
        let size = block.cast::<usize>().read();
        std::alloc::dealloc(block, Layout::from_size_align_unchecked(size, HEADER));
    }
}

#[cfg(target_family = "wasm")]
mod wasm_exports {
    /// `roslite_guest_dispatch(slot, kind, a, b, c, d) -> i32`.
    #[no_mangle]
    pub extern "C" fn roslite_guest_dispatch(
        slot: u32,
        kind: i32,
        a: i64,
        b: i64,
        c: i64,
        d: i64,
    ) -> i32 {
        super::dispatch(slot, super::DispatchCall { kind, a, b, c, d })
    }

    /// `roslite_guest_alloc(size) -> pointer` (0: no memory).
    #[no_mangle]
    pub extern "C" fn roslite_guest_alloc(size: usize) -> *mut u8 {
        super::allocate(size)
    }

    /// `roslite_guest_free(pointer)`.
    ///
    /// # Safety
    /// The host passes only pointers `roslite_guest_alloc` returned.
    #[no_mangle]
    pub unsafe extern "C" fn roslite_guest_free(pointer: *mut u8) {
        // SAFETY: as the host promises.
        unsafe { super::free(pointer) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn a_block_is_aligned_writable_and_given_back() {
        let pointer = allocate(24);
        assert!(!pointer.is_null());
        assert_eq!(pointer as usize % 8, 0);
        // SAFETY: 24 bytes were allocated.
        unsafe {
            pointer.cast::<u64>().add(2).write(7);
            free(pointer);
            free(std::ptr::null_mut());
        }
    }

    #[test]
    fn a_dropped_slot_is_not_called_and_its_number_is_reused() {
        let calls = Rc::new(Cell::new(0));
        let counter = calls.clone();
        let slot = Slot::register(move |_| {
            counter.set(counter.get() + 1);
            0
        });
        let number = slot.number();
        assert_ne!(number, 0);
        let timer = DispatchCall {
            kind: kind::TIMER,
            a: 0,
            b: 0,
            c: 0,
            d: 0,
        };
        dispatch(number, timer);
        drop(slot);
        dispatch(number, timer);
        assert_eq!(calls.get(), 1);
        assert_eq!(Slot::register(|_| 0).number(), number);
        assert_eq!(dispatch(0, timer), 0);
    }

    #[test]
    fn a_response_slot_is_freed_after_its_one_call() {
        let number = Slot::register_once(|_| 1);
        let response = DispatchCall {
            kind: kind::RESPONSE,
            a: 0,
            b: 0,
            c: 0,
            d: 0,
        };
        assert_eq!(dispatch(number, response), 1);
        assert_eq!(dispatch(number, response), 0);
    }

    #[test]
    fn a_callback_may_register_and_drop_slots_while_it_runs() {
        let inner = Rc::new(RefCell::new(None));
        let keep = inner.clone();
        let slot = Slot::register(move |call| {
            *keep.borrow_mut() = Some(Slot::register(|_| 2));
            let nested = keep.borrow().as_ref().map(Slot::number).unwrap();
            dispatch(nested, call)
        });
        let timer = DispatchCall {
            kind: kind::TIMER,
            a: 0,
            b: 0,
            c: 0,
            d: 0,
        };
        assert_eq!(dispatch(slot.number(), timer), 2);
        inner.borrow_mut().take();
    }
}
