//! Contexts: `roslite_context_init` from `argc`/`argv` and the environment.

use std::ffi::c_char;

use roslite::Context;

use crate::handles::{self, Object};
use crate::status::{guard, Failure, Status, ROSLITE_ERROR, ROSLITE_INVALID_ARGUMENT};
use crate::text::{put, text};

/// # Safety
/// `argv` is null (with `argc` 0) or holds `argc` NUL-terminated strings; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_context_init(
    argc: i32,
    argv: *const *const c_char,
    out: *mut u64,
) -> Status {
    guard(|| {
        let count = usize::try_from(argc)
            .map_err(|_| Failure::invalid_argument(format!("argc is {argc}")))?;
        if count > 0 && argv.is_null() {
            return Err(Failure::invalid_argument(format!(
                "argv is NULL but argc is {argc}"
            )));
        }
        let mut args = Vec::with_capacity(count);
        for i in 0..count {
            args.push(text(*argv.add(i), &format!("argv[{i}]"))?.to_owned());
        }
        let context = Context::from_env_and_args(args).map_err(|e| {
            let status = match e {
                roslite::InitError::Network(_) => ROSLITE_ERROR,
                _ => ROSLITE_INVALID_ARGUMENT,
            };
            Failure::new(status, e.to_string())
        })?;
        crate::signals::register(&context);
        put(out, handles::insert(Object::Context(context)), "context")
    })
}

#[no_mangle]
pub extern "C" fn roslite_context_shutdown(context: u64) -> Status {
    guard(|| {
        handles::context(context)?.shutdown();
        Ok(())
    })
}

/// # Safety
/// `ok` is writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_context_ok(context: u64, ok: *mut bool) -> Status {
    guard(|| put(ok, handles::context(context)?.ok(), "ok"))
}
