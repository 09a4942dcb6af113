//! One process of the line-follower application (`robot`, `follower` or `both`; the arguments
//! of [`roslite_linetrace::process::Args`]), as an executable of its own so the measured
//! processes carry the nodes and nothing else. The demo and `roslite bench linetrace` build it
//! with the size profile, statically linked (see `roslite_linetrace::node_program`).
//!
//! `no_main`: the C `main` below replaces std's start-up, whose only work a node needs is
//! ignoring SIGPIPE (done here). Its main-thread stack-guard probe (`pthread_getattr_np`, which
//! parses /proc/self/maps with glibc's scanf) would otherwise link glibc's scanf and strtod
//! into the static binary: about 0.2 MB more of the binary resident in every node process.

#![no_main]

use roslite_linetrace::process;

#[no_mangle]
extern "C" fn main(argc: i32, argv: *const *const std::ffi::c_char) -> i32 {
    // SAFETY: called before any other thread exists; SIG_IGN is a valid disposition and
    // mallopt only tunes the allocator.
    unsafe {
        // A peer that closes its Unix socket must give EPIPE, not kill the node (std's start-up
        // does the same).
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        // One malloc arena for all threads: each roslite thread would otherwise get its own
        // (~60 KB resident per node) for the few allocations it makes. musl's allocator has
        // no arenas.
        #[cfg(target_env = "gnu")]
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
    // From main's own argv: without std's start-up, std::env::args is empty on musl (glibc
    // hands argv to initialisers, musl does not).
    let args: Vec<String> = (1..usize::try_from(argc).unwrap_or(0))
        .map(|i| {
            // SAFETY: the C runtime passes argc valid, NUL-terminated strings in argv.
            unsafe { std::ffi::CStr::from_ptr(*argv.add(i)) }
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    match process::Args::parse(&args).and_then(|a| process::run(&a)) {
        Ok(()) => 0,
        Err(message) => {
            eprintln!("roslite-linetrace-node: {message}");
            2
        }
    }
}
