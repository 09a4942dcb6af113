//! Timers.

use super::*;

pub fn timer_create(
    g: &mut dyn GuestCalls,
    node: i64,
    group: i64,
    period_ns: i64,
    wall: i32,
    slot: i32,
    out: i32,
) -> ImportResult {
    let outcome = (|| {
        let node = native(g, node)?;
        let group = native(g, group)?;
        check_out(g, out, 8, "timer")?;
        let description = format!(
            "timer callback (period {:?})",
            Duration::from_nanos(period_ns.max(0) as u64)
        );
        let user = g.state().target(slot, CallbackKind::Timer, description);
        let mut timer = 0;
        // SAFETY: `user` lives until the guest ends; a valid out-pointer.
        let status = unsafe {
            if wall != 0 {
                roslite_c::timer::roslite_wall_timer_create_in(
                    node,
                    group,
                    period_ns,
                    Some(on_timer),
                    user,
                    &mut timer,
                )
            } else {
                roslite_c::timer::roslite_timer_create_in(
                    node,
                    group,
                    period_ns,
                    Some(on_timer),
                    user,
                    &mut timer,
                )
            }
        };
        hand_out(g, status, timer, out)
    })();
    finish(g, outcome)
}

pub fn timer_cancel(g: &mut dyn GuestCalls, timer: i64) -> ImportResult {
    let outcome = native(g, timer).map(|t| roslite_c::timer::roslite_timer_cancel(t));
    finish(g, outcome)
}

pub fn timer_reset(g: &mut dyn GuestCalls, timer: i64) -> ImportResult {
    let outcome = native(g, timer).map(|t| roslite_c::timer::roslite_timer_reset(t));
    finish(g, outcome)
}
