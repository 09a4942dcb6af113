//! Status, handles and the context: `last_error`, `release`, `context_*`.

use super::*;

pub fn last_error(g: &mut dyn GuestCalls, buffer: i32, capacity: i32) -> ImportResult {
    // Up to `capacity` bytes, no NUL; the full length is returned, so a guest whose buffer
    // was too small can ask again (docs/wasm.md).
    let (mut memory, state) = g.parts();
    let text = state.last_error.as_bytes();
    let n = text.len().min(capacity.max(0) as usize);
    if memory.write(pointer(buffer), &text[..n]).is_err() {
        return Ok(-1);
    }
    Ok(i32::try_from(text.len()).unwrap_or(i32::MAX))
}

pub fn release(g: &mut dyn GuestCalls, handle: i64) -> ImportResult {
    let outcome = (|| {
        let state = g.state();
        let native = state.handles.remove(handle).ok_or_else(|| {
            Refusal(
                ROSLITE_INVALID_HANDLE,
                format!("{handle} is not a handle this node holds (released, or never created)"),
            )
        })?;
        if native == state.context {
            return Ok(ROSLITE_OK);
        }
        state.shared.forget(native);
        Ok(roslite_c::handles::roslite_release(native))
    })();
    finish(g, outcome)
}

pub fn context_init(g: &mut dyn GuestCalls, _argc: i32, _argv: i32, out: i32) -> ImportResult {
    // Every guest of a host shares the host's context (one participant); its command line
    // (`roslite run ... --ros-args ...`) is the context's, and the guest's own argv repeats it.
    let outcome = (|| {
        check_out(g, out, 8, "context")?;
        let context = g.state().context;
        hand_out(g, ROSLITE_OK, context, out)
    })();
    finish(g, outcome)
}

pub(super) fn is_context(g: &mut dyn GuestCalls, handle: i64) -> Step<()> {
    let native = native(g, handle)?;
    if native != g.state().context {
        return Err(Refusal(
            ROSLITE_INVALID_HANDLE,
            format!("{handle} is not a context"),
        ));
    }
    Ok(())
}

pub fn context_shutdown(g: &mut dyn GuestCalls, context: i64) -> ImportResult {
    // A guest's shutdown ends that guest's spinning, not the context the others share.
    let outcome = is_context(g, context).map(|()| {
        g.state().shared.stop();
        ROSLITE_OK
    });
    finish(g, outcome)
}

pub fn context_ok(g: &mut dyn GuestCalls, context: i64, ok: i32) -> ImportResult {
    let outcome = (|| {
        is_context(g, context)?;
        let (mut memory, state) = g.parts();
        let mut native_ok = false;
        // SAFETY: a valid out-pointer.
        let status =
            unsafe { roslite_c::context::roslite_context_ok(state.context, &mut native_ok) };
        if status != ROSLITE_OK {
            return Ok(status);
        }
        let running = native_ok && !state.shared.is_stopping();
        memory.put_u8(pointer(ok), u8::from(running))?;
        Ok(ROSLITE_OK)
    })();
    finish(g, outcome)
}

pub fn install_signal_handlers(g: &mut dyn GuestCalls) -> ImportResult {
    // The host installed them: SIGINT/SIGTERM shut the shared context down.
    finish(g, Ok(ROSLITE_OK))
}
