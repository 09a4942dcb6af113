//! Executors: spinning nodes' callbacks on the calling thread, or on several.

use std::sync::Arc;

use crate::handles::{self, Object};
use crate::status::{guard, Failure, Status, ROSLITE_ERROR};
use crate::text::{duration, put, timeout};

/// # Safety
/// `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_executor_create(context: u64, out: *mut u64) -> Status {
    guard(|| {
        let context = handles::context(context)?;
        let executor = roslite::Executor::from_env(&context)
            .map_err(|e| Failure::new(ROSLITE_ERROR, e.to_string()))?;
        put(
            out,
            handles::insert(Object::Executor(Arc::new(executor))),
            "executor",
        )
    })
}

#[no_mangle]
pub extern "C" fn roslite_executor_add_node(executor: u64, node: u64) -> Status {
    guard(|| {
        let executor = handles::executor(executor)?;
        executor.add_node(&handles::node(node)?);
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn roslite_executor_spin(executor: u64) -> Status {
    guard(|| {
        handles::executor(executor)?.spin();
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn roslite_executor_spin_threads(executor: u64, threads: usize) -> Status {
    guard(|| {
        if threads == 0 {
            return Err(Failure::invalid_argument("threads is 0; give at least 1"));
        }
        handles::executor(executor)?
            .spin_threads(threads)
            .map_err(|e| Failure::new(ROSLITE_ERROR, e.to_string()))
    })
}

#[no_mangle]
pub extern "C" fn roslite_executor_spin_some(executor: u64) -> Status {
    guard(|| {
        handles::executor(executor)?.spin_some();
        Ok(())
    })
}

/// # Safety
/// `ran` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_executor_spin_once(
    executor: u64,
    timeout_ns: i64,
    ran: *mut bool,
) -> Status {
    guard(|| {
        let did = handles::executor(executor)?.spin_once(timeout(timeout_ns));
        if !ran.is_null() {
            ran.write(did);
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn roslite_executor_spin_for(executor: u64, duration_ns: i64) -> Status {
    guard(|| {
        let limit = duration(duration_ns, "duration_ns")?;
        handles::executor(executor)?.spin_for(limit);
        Ok(())
    })
}
