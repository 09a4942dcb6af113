//! SIGINT and SIGTERM as a shutdown of every context, as `rclcpp::init` installs them.
//!
//! A signal handler may only do what is async-signal-safe: it writes one byte to a pipe, and a
//! thread of ours reads it and shuts the contexts down. A second signal finds the default
//! disposition restored, and ends the process as it would have without roslite.

use std::sync::{Mutex, OnceLock, PoisonError, Weak};

use roslite::{Context, ShutdownSignal};

use crate::status::{guard, Failure, Status};

/// The shutdown signals of the contexts created through this ABI.
static CONTEXTS: Mutex<Vec<Weak<ShutdownSignal>>> = Mutex::new(Vec::new());
static WRITE_END: OnceLock<i32> = OnceLock::new();

pub fn register(context: &Context) {
    let mut contexts = CONTEXTS.lock().unwrap_or_else(PoisonError::into_inner);
    contexts.retain(|c| c.strong_count() > 0);
    contexts.push(std::sync::Arc::downgrade(context.shutdown_signal()));
}

extern "C" fn on_signal(signal: i32) {
    if let Some(&fd) = WRITE_END.get() {
        let byte = 1u8;
        // SAFETY: write(2) and signal(2) are async-signal-safe; `fd` is our pipe's write end.
        unsafe {
            libc::write(fd, std::ptr::from_ref(&byte).cast(), 1);
            libc::signal(signal, libc::SIG_DFL);
        }
    }
}

fn install() -> Result<(), Failure> {
    let mut fds = [0i32; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Failure::new(
            crate::ROSLITE_ERROR,
            format!(
                "cannot create the signal pipe: {}",
                std::io::Error::last_os_error()
            ),
        ));
    }
    let read_end = fds[0];
    let _ = WRITE_END.set(fds[1]);
    std::thread::Builder::new()
        .name("roslite-signals".into())
        .spawn(move || loop {
            let mut byte = 0u8;
            // SAFETY: reads one byte into `byte` from our pipe's read end.
            let n = unsafe { libc::read(read_end, std::ptr::from_mut(&mut byte).cast(), 1) };
            if n == 1 {
                let contexts = CONTEXTS.lock().unwrap_or_else(PoisonError::into_inner);
                for signal in contexts.iter().filter_map(Weak::upgrade) {
                    signal.shutdown();
                }
            } else if n == 0 {
                return;
            }
        })
        .map_err(|e| {
            Failure::new(
                crate::ROSLITE_ERROR,
                format!("cannot start the signal thread: {e}"),
            )
        })?;
    let handler = on_signal as extern "C" fn(i32) as libc::sighandler_t;
    // SAFETY: installs a handler that only does async-signal-safe work.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
    Ok(())
}

#[no_mangle]
pub extern "C" fn roslite_install_signal_handlers() -> Status {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    guard(|| {
        INSTALLED
            .get_or_init(|| install().map_err(|f| f.message))
            .clone()
            .map_err(|message| Failure::new(crate::ROSLITE_ERROR, message))
    })
}
