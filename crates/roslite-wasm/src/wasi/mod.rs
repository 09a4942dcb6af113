//! WASI preview1 (`wasi_snapshot_preview1`) for guests, written here rather than taken from
//! `wasmtime-wasi` / `wasi-common`:
//!
//! - one implementation serves both engines: wasmi cannot use wasmtime's, and two WASI layers
//!   would behave differently in the corners (errnos, what is granted);
//! - `wasmtime-wasi` pulls in tokio, cap-std and their trees (tens of MB of build and binary) for
//!   what a ROS 2 node uses of WASI: arguments, environment, clocks, sleeping, randomness,
//!   stdout/stderr and now and then a file;
//! - all per-guest state is in [`WasiState`], plain data the host owns, so a later migration
//!   snapshot does not have to reach into another crate's file descriptor tables.
//!
//! A guest sees only what the host grants it ([`WasiConfig`]): the arguments, the environment
//! variables it was allowed (none by default), and the directories it was allowed (none by
//! default) as preopened file descriptors 3, 4, ... Every preview1 function exists with its
//! exact signature so that any guest links; what is not granted or not supported answers with a
//! WASI errno (`ENOTCAPABLE`, `EBADF`, `ENOSYS`, ...), never a trap. Sockets are never granted.
//!
//! The calling convention, for the engine glue: every function is
//! `fn(cx: &mut WasiCx<'_>, i32|i64, ...) -> Result<i32, WasiExit>`, the `Ok` value being the
//! errno (0: success) and [`WasiExit`] meaning `proc_exit`. `wasi_functions!` lists them all.
//! Layouts of the records in guest memory follow `typenames.witx` of WASI preview1
//! (wasm32: pointers and `size` are 4 bytes, records naturally aligned).

mod fd;
mod layout;
mod output;
mod path;
mod poll;
mod process;
#[cfg(test)]
mod tests;

pub use fd::{
    fd_advise, fd_allocate, fd_close, fd_datasync, fd_fdstat_get, fd_fdstat_set_flags,
    fd_fdstat_set_rights, fd_filestat_get, fd_filestat_set_size, fd_filestat_set_times, fd_pread,
    fd_prestat_dir_name, fd_prestat_get, fd_pwrite, fd_read, fd_readdir, fd_renumber, fd_seek,
    fd_sync, fd_tell, fd_write,
};
pub use output::{LineSink, OutputSink, OutputStream, ProcessOutput};
pub use path::{
    path_create_directory, path_filestat_get, path_filestat_set_times, path_link, path_open,
    path_readlink, path_remove_directory, path_rename, path_symlink, path_unlink_file,
};
pub use poll::{poll_oneoff, poll_oneoff_here, PollPhase, Polled, MAX_POLL_SUBSCRIPTIONS};
pub use process::{
    args_get, args_sizes_get, clock_res_get, clock_time_get, environ_get, environ_sizes_get,
    proc_exit, proc_raise, random_get, sched_yield, sock_accept, sock_recv, sock_send,
    sock_shutdown,
};

use crate::memory::{GuestMemory, OutOfBounds};
use layout::{filetype, rights};
use rustix::fd::OwnedFd;
use rustix::fs::{Mode, OFlags};
use std::fmt;
use std::path::PathBuf;

/// The highest number of file descriptors a guest has open at once, stdio and preopens
/// included: descriptors are numbered `0..MAX_OPEN_FDS`. A node needs a handful; the cap keeps a
/// guest that leaks descriptors from holding host descriptors without bound.
pub const MAX_OPEN_FDS: usize = 64;

/// A WASI errno (`errno` in `typenames.witx`, a `u16` enum; the numbers are the enum's order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Errno(pub u16);

impl Errno {
    pub const SUCCESS: Errno = Errno(0);
    pub const TOOBIG: Errno = Errno(1);
    pub const ACCES: Errno = Errno(2);
    pub const AGAIN: Errno = Errno(6);
    pub const BADF: Errno = Errno(8);
    pub const BUSY: Errno = Errno(10);
    pub const EXIST: Errno = Errno(20);
    pub const FAULT: Errno = Errno(21);
    pub const FBIG: Errno = Errno(22);
    pub const INTR: Errno = Errno(27);
    pub const INVAL: Errno = Errno(28);
    pub const IO: Errno = Errno(29);
    pub const ISDIR: Errno = Errno(31);
    pub const LOOP: Errno = Errno(32);
    pub const MFILE: Errno = Errno(33);
    pub const MLINK: Errno = Errno(34);
    pub const NAMETOOLONG: Errno = Errno(37);
    pub const NFILE: Errno = Errno(41);
    pub const NODEV: Errno = Errno(43);
    pub const NOENT: Errno = Errno(44);
    pub const NOMEM: Errno = Errno(48);
    pub const NOSPC: Errno = Errno(51);
    pub const NOSYS: Errno = Errno(52);
    pub const NOTDIR: Errno = Errno(54);
    pub const NOTEMPTY: Errno = Errno(55);
    pub const NOTSUP: Errno = Errno(58);
    pub const NXIO: Errno = Errno(60);
    pub const OVERFLOW: Errno = Errno(61);
    pub const PERM: Errno = Errno(63);
    pub const PIPE: Errno = Errno(64);
    pub const ROFS: Errno = Errno(69);
    pub const SPIPE: Errno = Errno(70);
    pub const TIMEDOUT: Errno = Errno(73);
    pub const TXTBSY: Errno = Errno(74);
    pub const XDEV: Errno = Errno(75);
    pub const NOTCAPABLE: Errno = Errno(76);

    /// The value a preview1 function returns.
    pub const fn code(self) -> i32 {
        self.0 as i32
    }
}

impl From<OutOfBounds> for Errno {
    fn from(_: OutOfBounds) -> Self {
        Errno::FAULT
    }
}

impl From<rustix::io::Errno> for Errno {
    fn from(host: rustix::io::Errno) -> Self {
        use rustix::io::Errno as Host;
        const HOST_TO_WASI: &[(Host, Errno)] = &[
            (Host::TOOBIG, Errno::TOOBIG),
            (Host::ACCESS, Errno::ACCES),
            (Host::AGAIN, Errno::AGAIN),
            (Host::BADF, Errno::BADF),
            (Host::BUSY, Errno::BUSY),
            (Host::EXIST, Errno::EXIST),
            (Host::FBIG, Errno::FBIG),
            (Host::INTR, Errno::INTR),
            (Host::INVAL, Errno::INVAL),
            (Host::IO, Errno::IO),
            (Host::ISDIR, Errno::ISDIR),
            (Host::LOOP, Errno::LOOP),
            (Host::MFILE, Errno::MFILE),
            (Host::MLINK, Errno::MLINK),
            (Host::NAMETOOLONG, Errno::NAMETOOLONG),
            (Host::NFILE, Errno::NFILE),
            (Host::NODEV, Errno::NODEV),
            (Host::NOENT, Errno::NOENT),
            (Host::NOMEM, Errno::NOMEM),
            (Host::NOSPC, Errno::NOSPC),
            (Host::DQUOT, Errno::NOSPC),
            (Host::NOSYS, Errno::NOSYS),
            (Host::NOTDIR, Errno::NOTDIR),
            (Host::NOTEMPTY, Errno::NOTEMPTY),
            (Host::OPNOTSUPP, Errno::NOTSUP),
            (Host::NXIO, Errno::NXIO),
            (Host::OVERFLOW, Errno::OVERFLOW),
            (Host::PERM, Errno::PERM),
            (Host::PIPE, Errno::PIPE),
            (Host::ROFS, Errno::ROFS),
            (Host::SPIPE, Errno::SPIPE),
            (Host::TIMEDOUT, Errno::TIMEDOUT),
            (Host::TXTBSY, Errno::TXTBSY),
            (Host::XDEV, Errno::XDEV),
        ];
        HOST_TO_WASI
            .iter()
            .find(|(h, _)| *h == host)
            .map_or(Errno::IO, |&(_, wasi)| wasi)
    }
}

/// What a function's body returns before it becomes the errno.
type WasiResult = Result<(), Errno>;

/// The guest called `proc_exit` with this exit code: the glue ends the guest's run (a trap in
/// wasmtime and wasmi) and reports the code, which is not an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WasiExit(pub u32);

impl fmt::Display for WasiExit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the guest exited with code {}", self.0)
    }
}

impl std::error::Error for WasiExit {}

fn finish(result: WasiResult) -> Result<i32, WasiExit> {
    Ok(match result {
        Ok(()) => Errno::SUCCESS.code(),
        Err(errno) => errno.code(),
    })
}

/// A host directory the guest may use, seen by the guest under `guest` (e.g. `/data`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllowedDir {
    pub host: PathBuf,
    pub guest: String,
    /// Whether the guest may create, write, truncate, rename or remove beneath it.
    pub writable: bool,
}

/// What the host grants a guest. The default grants nothing: no arguments, no environment, no
/// directories; output goes to the process's stdout and stderr.
pub struct WasiConfig {
    pub args: Vec<String>,
    /// The environment variables the guest was allowed, and only those.
    pub env: Vec<(String, String)>,
    pub dirs: Vec<AllowedDir>,
    pub output: Box<dyn OutputSink>,
    /// Asked when the guest is about to sleep (`poll_oneoff`): true ends the guest there, as
    /// `proc_exit(0)` would (the host stops a node that waits on after it was stopped).
    pub ends_sleeping: Option<Box<dyn FnMut() -> bool + Send>>,
}

impl Default for WasiConfig {
    fn default() -> Self {
        Self {
            args: Vec::new(),
            env: Vec::new(),
            dirs: Vec::new(),
            output: Box::new(ProcessOutput),
            ends_sleeping: None,
        }
    }
}

/// Why a [`WasiConfig`] could not become a [`WasiState`].
#[derive(Debug)]
pub enum WasiSetupError {
    /// An argument or environment entry holds a NUL (or a variable name an `=`), which the
    /// guest's C strings cannot carry.
    BadString(String),
    TooManyDirs {
        granted: usize,
        max: usize,
    },
    OpenDir {
        host: PathBuf,
        error: std::io::Error,
    },
}

impl fmt::Display for WasiSetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadString(text) => write!(f, "{text:?} cannot be passed to a guest"),
            Self::TooManyDirs { granted, max } => {
                write!(
                    f,
                    "{granted} directories granted; a guest can have at most {max}"
                )
            }
            Self::OpenDir { host, error } => {
                write!(
                    f,
                    "cannot open granted directory {}: {error}",
                    host.display()
                )
            }
        }
    }
}

impl std::error::Error for WasiSetupError {}

/// What an open guest file descriptor refers to.
enum FdObject {
    Stdin,
    Stdout,
    Stderr,
    Host(HostFd),
}

/// A host file or directory the guest opened (or was given as a preopen).
struct HostFd {
    fd: OwnedFd,
    /// The WASI `filetype` of what `fd` refers to.
    filetype: u8,
    /// Whether the grant this descriptor was reached through is writable.
    grant_writable: bool,
    /// The guest path of a preopen (`fd_prestat_get`); `None` for what the guest opened.
    preopen: Option<String>,
    /// The directory's entries as `fd_readdir` last listed them, read again when the guest
    /// starts over at cookie 0; the cookie is an index into it.
    listing: Option<Vec<fd::ListedEntry>>,
}

struct OpenFd {
    object: FdObject,
    rights_base: u64,
    rights_inheriting: u64,
}

/// One guest's WASI state: what it was granted and what it has open.
pub struct WasiState {
    /// Each argument with its terminating NUL, as `args_get` lays them out.
    args: Vec<Vec<u8>>,
    /// Each `NAME=value` with its terminating NUL.
    env: Vec<Vec<u8>>,
    /// Indexed by guest fd; `None` is a closed descriptor. Never longer than `MAX_OPEN_FDS`.
    fds: Vec<Option<OpenFd>>,
    output: Box<dyn OutputSink>,
    ends_sleeping: Option<Box<dyn FnMut() -> bool + Send>>,
    /// Added to every monotonic clock reading (and monotonic deadline) the guest sees, so that a
    /// guest moved to another host keeps a monotonic clock that does not jump back.
    pub monotonic_offset_ns: i64,
}

impl WasiState {
    /// Whether the host ends the guest instead of letting it sleep ([`WasiConfig::ends_sleeping`]).
    pub(crate) fn ends_sleeping(&mut self) -> bool {
        self.ends_sleeping.as_mut().is_some_and(|ends| ends())
    }

    pub fn new(config: WasiConfig) -> Result<Self, WasiSetupError> {
        let max_dirs = MAX_OPEN_FDS - 3;
        if config.dirs.len() > max_dirs {
            return Err(WasiSetupError::TooManyDirs {
                granted: config.dirs.len(),
                max: max_dirs,
            });
        }
        let c_string = |text: String| {
            if text.contains('\0') {
                return Err(WasiSetupError::BadString(text));
            }
            let mut bytes = text.into_bytes();
            bytes.push(0);
            Ok(bytes)
        };
        let args = config
            .args
            .into_iter()
            .map(c_string)
            .collect::<Result<_, _>>()?;
        let env = config
            .env
            .into_iter()
            .map(|(name, value)| {
                if name.is_empty() || name.contains('=') {
                    return Err(WasiSetupError::BadString(name));
                }
                c_string(format!("{name}={value}"))
            })
            .collect::<Result<_, _>>()?;

        let stdio_rights = rights::POLL_FD_READWRITE;
        let mut fds: Vec<Option<OpenFd>> = vec![
            Some(OpenFd {
                object: FdObject::Stdin,
                rights_base: rights::FD_READ | stdio_rights,
                rights_inheriting: 0,
            }),
            Some(OpenFd {
                object: FdObject::Stdout,
                rights_base: rights::FD_WRITE | stdio_rights,
                rights_inheriting: 0,
            }),
            Some(OpenFd {
                object: FdObject::Stderr,
                rights_base: rights::FD_WRITE | stdio_rights,
                rights_inheriting: 0,
            }),
        ];
        for dir in config.dirs {
            let fd = rustix::fs::open(
                &dir.host,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|error| WasiSetupError::OpenDir {
                host: dir.host.clone(),
                error: error.into(),
            })?;
            fds.push(Some(OpenFd {
                object: FdObject::Host(HostFd {
                    fd,
                    filetype: filetype::DIRECTORY,
                    grant_writable: dir.writable,
                    preopen: Some(dir.guest),
                    listing: None,
                }),
                // All rights, even for a read-only grant: wasi-libc masks what it asks of
                // `path_open` with the directory's inheriting rights, and a write asked of a
                // read-only grant should fail at open with EROFS rather than open read-only
                // and fail at the first write.
                rights_base: rights::ALL,
                rights_inheriting: rights::ALL,
            }));
        }
        Ok(Self {
            args,
            env,
            fds,
            output: config.output,
            ends_sleeping: config.ends_sleeping,
            monotonic_offset_ns: 0,
        })
    }

    /// How many files and directories the guest opened itself (not stdio, not preopens):
    /// what a snapshot cannot carry to another host.
    pub fn opened_file_count(&self) -> usize {
        self.fds
            .iter()
            .flatten()
            .filter(|fd| matches!(&fd.object, FdObject::Host(host) if host.preopen.is_none()))
            .count()
    }

    /// The monotonic clock as the guest reads it, in ns.
    pub fn guest_monotonic_ns(&self) -> u64 {
        self.clock_now_ns(rustix::time::ClockId::Monotonic)
    }

    /// Sets the guest's monotonic clock to read `guest_ns` now (a restored guest goes on from
    /// the time it read on the host it came from).
    pub fn set_guest_monotonic_ns(&mut self, guest_ns: u64) {
        self.monotonic_offset_ns = 0;
        let host_ns = self.clock_now_ns(rustix::time::ClockId::Monotonic);
        self.monotonic_offset_ns = (i128::from(guest_ns) - i128::from(host_ns))
            .clamp(i128::from(i64::MIN), i128::from(i64::MAX))
            as i64;
    }

    /// How many descriptors the guest has open, stdio and preopens included.
    pub fn open_fd_count(&self) -> usize {
        self.fds.iter().filter(|fd| fd.is_some()).count()
    }

    fn open_fd_ref(&self, fd: i32) -> Result<&OpenFd, Errno> {
        usize::try_from(fd)
            .ok()
            .and_then(|index| self.fds.get(index))
            .and_then(Option::as_ref)
            .ok_or(Errno::BADF)
    }

    fn open_fd(&mut self, fd: i32) -> Result<&mut OpenFd, Errno> {
        usize::try_from(fd)
            .ok()
            .and_then(|index| self.fds.get_mut(index))
            .and_then(Option::as_mut)
            .ok_or(Errno::BADF)
    }

    /// The lowest closed descriptor number at 3 or above, for a newly opened file.
    fn insert(&mut self, entry: OpenFd) -> Result<u32, Errno> {
        let free = self.fds.iter().skip(3).position(Option::is_none);
        let index = match free {
            Some(position) => position + 3,
            None if self.fds.len() < MAX_OPEN_FDS => {
                self.fds.push(None);
                self.fds.len() - 1
            }
            None => return Err(Errno::MFILE),
        };
        self.fds[index] = Some(entry);
        Ok(index as u32)
    }
}

/// What a WASI function works on for the length of one call.
pub struct WasiCx<'a> {
    pub memory: GuestMemory<'a>,
    pub state: &'a mut WasiState,
}

/// Every `wasi_snapshot_preview1` function, in the core WebAssembly types of its arguments
/// (`i32` for pointers, sizes, fds, flags and enums; `i64` for 64-bit values) in the order of
/// `wasi_snapshot_preview1.witx`, for the engine glue to register each with both engines from
/// this one list. `$m` is called once with every entry as
/// `name(arg: type, ...) -> result;`, where `result` is `errno` (the core function returns
/// the `i32` errno), `noreturn` (`proc_exit`, whose core function returns nothing: the glue
/// turns its [`WasiExit`] into the end of the run) or `sleeps` (`poll_oneoff`: the Rust
/// function takes a [`PollPhase`] more and may ask for a sleep, [`Polled`], which the glue
/// parks the guest for, crate::park). Each entry's Rust function is `$crate::wasi::name`.
macro_rules! wasi_functions {
    // `[...]`, when given, comes before the list for the callback (the linker and error type).
    ($m:ident $([$($extra:tt)*])?) => {
        $m! {
            $([$($extra)*])?
            args_get(argv: i32, argv_buf: i32) -> errno;
            args_sizes_get(argc: i32, argv_buf_size: i32) -> errno;
            environ_get(environ: i32, environ_buf: i32) -> errno;
            environ_sizes_get(environ_count: i32, environ_buf_size: i32) -> errno;
            clock_res_get(id: i32, resolution: i32) -> errno;
            clock_time_get(id: i32, precision: i64, time: i32) -> errno;
            fd_advise(fd: i32, offset: i64, len: i64, advice: i32) -> errno;
            fd_allocate(fd: i32, offset: i64, len: i64) -> errno;
            fd_close(fd: i32) -> errno;
            fd_datasync(fd: i32) -> errno;
            fd_fdstat_get(fd: i32, stat: i32) -> errno;
            fd_fdstat_set_flags(fd: i32, flags: i32) -> errno;
            fd_fdstat_set_rights(fd: i32, fs_rights_base: i64, fs_rights_inheriting: i64) -> errno;
            fd_filestat_get(fd: i32, buf: i32) -> errno;
            fd_filestat_set_size(fd: i32, size: i64) -> errno;
            fd_filestat_set_times(fd: i32, atim: i64, mtim: i64, fst_flags: i32) -> errno;
            fd_pread(fd: i32, iovs: i32, iovs_len: i32, offset: i64, nread: i32) -> errno;
            fd_prestat_get(fd: i32, buf: i32) -> errno;
            fd_prestat_dir_name(fd: i32, path: i32, path_len: i32) -> errno;
            fd_pwrite(fd: i32, iovs: i32, iovs_len: i32, offset: i64, nwritten: i32) -> errno;
            fd_read(fd: i32, iovs: i32, iovs_len: i32, nread: i32) -> errno;
            fd_readdir(fd: i32, buf: i32, buf_len: i32, cookie: i64, bufused: i32) -> errno;
            fd_renumber(fd: i32, to: i32) -> errno;
            fd_seek(fd: i32, offset: i64, whence: i32, newoffset: i32) -> errno;
            fd_sync(fd: i32) -> errno;
            fd_tell(fd: i32, offset: i32) -> errno;
            fd_write(fd: i32, iovs: i32, iovs_len: i32, nwritten: i32) -> errno;
            path_create_directory(fd: i32, path: i32, path_len: i32) -> errno;
            path_filestat_get(fd: i32, flags: i32, path: i32, path_len: i32, buf: i32) -> errno;
            path_filestat_set_times(
                fd: i32, flags: i32, path: i32, path_len: i32, atim: i64, mtim: i64, fst_flags: i32
            ) -> errno;
            path_link(
                old_fd: i32, old_flags: i32, old_path: i32, old_path_len: i32,
                new_fd: i32, new_path: i32, new_path_len: i32
            ) -> errno;
            path_open(
                fd: i32, dirflags: i32, path: i32, path_len: i32, oflags: i32,
                fs_rights_base: i64, fs_rights_inheriting: i64, fdflags: i32, opened_fd: i32
            ) -> errno;
            path_readlink(
                fd: i32, path: i32, path_len: i32, buf: i32, buf_len: i32, bufused: i32
            ) -> errno;
            path_remove_directory(fd: i32, path: i32, path_len: i32) -> errno;
            path_rename(
                fd: i32, old_path: i32, old_path_len: i32, new_fd: i32, new_path: i32,
                new_path_len: i32
            ) -> errno;
            path_symlink(
                old_path: i32, old_path_len: i32, fd: i32, new_path: i32, new_path_len: i32
            ) -> errno;
            path_unlink_file(fd: i32, path: i32, path_len: i32) -> errno;
            poll_oneoff(subscriptions: i32, events: i32, nsubscriptions: i32, nevents: i32) -> sleeps;
            proc_exit(rval: i32) -> noreturn;
            proc_raise(sig: i32) -> errno;
            sched_yield() -> errno;
            random_get(buf: i32, buf_len: i32) -> errno;
            sock_accept(fd: i32, flags: i32, result_fd: i32) -> errno;
            sock_recv(
                fd: i32, ri_data: i32, ri_data_len: i32, ri_flags: i32, ro_datalen: i32,
                ro_flags: i32
            ) -> errno;
            sock_send(fd: i32, si_data: i32, si_data_len: i32, si_flags: i32, so_datalen: i32) -> errno;
            sock_shutdown(fd: i32, how: i32) -> errno;
        }
    };
}
pub(crate) use wasi_functions;
