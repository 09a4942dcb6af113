//! Timers calling a C function.

use std::ffi::c_void;
use std::sync::Arc;

use crate::convert::UserData;
use crate::handles::{self, Object};
use crate::status::{guard, Failure, Status};
use crate::text::{duration, put};

pub type TimerCallback = unsafe extern "C" fn(*mut c_void);

unsafe fn create(
    node: u64,
    group: u64,
    period_ns: i64,
    callback: Option<TimerCallback>,
    user_data: *mut c_void,
    out: *mut u64,
    wall: bool,
) -> Status {
    guard(|| {
        let node = handles::node(node)?;
        let group = handles::group_of(&node, group)?;
        let period = duration(period_ns, "period_ns")?;
        let callback = callback.ok_or_else(|| Failure::invalid_argument("callback is NULL"))?;
        let user = UserData(user_data);
        let call = move || {
            let user = user;
            // SAFETY: the caller promised `callback` takes `user_data` for the timer's life.
            unsafe { callback(user.0) };
        };
        let timer = match (group, wall) {
            (Some(group), true) => node.create_wall_timer_in(&group, period, call)?,
            (Some(group), false) => node.create_timer_in(&group, period, call)?,
            (None, true) => node.create_wall_timer(period, call)?,
            (None, false) => node.create_timer(period, call)?,
        };
        put(
            out,
            handles::insert(Object::Timer(Arc::new(timer))),
            "timer",
        )
    })
}

/// # Safety
/// `out` is writable; `callback` stays callable with `user_data` while the timer lives.
#[no_mangle]
pub unsafe extern "C" fn roslite_wall_timer_create(
    node: u64,
    period_ns: i64,
    callback: Option<TimerCallback>,
    user_data: *mut c_void,
    out: *mut u64,
) -> Status {
    create(node, 0, period_ns, callback, user_data, out, true)
}

/// # Safety
/// As [`roslite_wall_timer_create`].
#[no_mangle]
pub unsafe extern "C" fn roslite_timer_create(
    node: u64,
    period_ns: i64,
    callback: Option<TimerCallback>,
    user_data: *mut c_void,
    out: *mut u64,
) -> Status {
    create(node, 0, period_ns, callback, user_data, out, false)
}

#[no_mangle]
pub extern "C" fn roslite_timer_cancel(timer: u64) -> Status {
    guard(|| {
        handles::timer(timer)?.cancel();
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn roslite_timer_reset(timer: u64) -> Status {
    guard(|| {
        handles::timer(timer)?.reset();
        Ok(())
    })
}

/// # Safety
/// As [`roslite_wall_timer_create`].
#[no_mangle]
pub unsafe extern "C" fn roslite_wall_timer_create_in(
    node: u64,
    group: u64,
    period_ns: i64,
    callback: Option<TimerCallback>,
    user_data: *mut c_void,
    out: *mut u64,
) -> Status {
    create(node, group, period_ns, callback, user_data, out, true)
}

/// # Safety
/// As [`roslite_wall_timer_create`].
#[no_mangle]
pub unsafe extern "C" fn roslite_timer_create_in(
    node: u64,
    group: u64,
    period_ns: i64,
    callback: Option<TimerCallback>,
    user_data: *mut c_void,
    out: *mut u64,
) -> Status {
    create(node, group, period_ns, callback, user_data, out, false)
}
