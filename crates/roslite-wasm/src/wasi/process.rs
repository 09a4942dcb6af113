//! The functions about the guest's process rather than its files: arguments, environment,
//! clocks, randomness, exit, signals, scheduling, and the socket calls (never granted).

use super::{finish, Errno, WasiCx, WasiExit, WasiResult, WasiState};
use crate::memory::GuestMemory;
use rustix::time::ClockId;

/// Lays out NUL-terminated strings for `args_get` / `environ_get`: the array of pointers at
/// `pointers`, the strings one after another at `buffer`.
fn write_string_list(
    memory: &mut GuestMemory<'_>,
    strings: &[Vec<u8>],
    pointers: u32,
    buffer: u32,
) -> WasiResult {
    let mut at = buffer;
    for (index, string) in strings.iter().enumerate() {
        let slot = pointers.checked_add(4 * index as u32).ok_or(Errno::FAULT)?;
        memory.put_u32(slot, at)?;
        memory.write(at, string)?;
        at = at.checked_add(string.len() as u32).ok_or(Errno::FAULT)?;
    }
    Ok(())
}

fn write_list_sizes(
    memory: &mut GuestMemory<'_>,
    strings: &[Vec<u8>],
    count: u32,
    buffer_size: u32,
) -> WasiResult {
    let total: usize = strings.iter().map(Vec::len).sum();
    memory.put_u32(count, strings.len() as u32)?;
    memory.put_u32(
        buffer_size,
        u32::try_from(total).map_err(|_| Errno::OVERFLOW)?,
    )?;
    Ok(())
}

pub fn args_get(cx: &mut WasiCx<'_>, argv: i32, argv_buf: i32) -> Result<i32, WasiExit> {
    finish(write_string_list(
        &mut cx.memory,
        &cx.state.args,
        argv as u32,
        argv_buf as u32,
    ))
}

pub fn args_sizes_get(cx: &mut WasiCx<'_>, argc: i32, argv_buf_size: i32) -> Result<i32, WasiExit> {
    finish(write_list_sizes(
        &mut cx.memory,
        &cx.state.args,
        argc as u32,
        argv_buf_size as u32,
    ))
}

pub fn environ_get(cx: &mut WasiCx<'_>, environ: i32, environ_buf: i32) -> Result<i32, WasiExit> {
    finish(write_string_list(
        &mut cx.memory,
        &cx.state.env,
        environ as u32,
        environ_buf as u32,
    ))
}

pub fn environ_sizes_get(
    cx: &mut WasiCx<'_>,
    environ_count: i32,
    environ_buf_size: i32,
) -> Result<i32, WasiExit> {
    finish(write_list_sizes(
        &mut cx.memory,
        &cx.state.env,
        environ_count as u32,
        environ_buf_size as u32,
    ))
}

/// The host clock behind a WASI `clockid` (`realtime`, `monotonic`, `process_cputime_id`,
/// `thread_cputime_id`, in that order).
fn host_clock(id: i32) -> Result<ClockId, Errno> {
    match id {
        0 => Ok(ClockId::Realtime),
        1 => Ok(ClockId::Monotonic),
        2 => Ok(ClockId::ProcessCPUTime),
        3 => Ok(ClockId::ThreadCPUTime),
        _ => Err(Errno::INVAL),
    }
}

fn timespec_ns(time: rustix::time::Timespec) -> i128 {
    time.tv_sec as i128 * 1_000_000_000 + time.tv_nsec as i128
}

impl WasiState {
    /// The guest's reading of a clock in nanoseconds: the host's, plus the monotonic offset for
    /// the monotonic clock.
    pub(super) fn clock_now_ns(&self, clock: ClockId) -> u64 {
        let mut now = timespec_ns(rustix::time::clock_gettime(clock));
        if clock == ClockId::Monotonic {
            now += self.monotonic_offset_ns as i128;
        }
        now.clamp(0, u64::MAX as i128) as u64
    }
}

pub fn clock_res_get(cx: &mut WasiCx<'_>, id: i32, resolution: i32) -> Result<i32, WasiExit> {
    finish((|| {
        let clock = host_clock(id)?;
        let ns = timespec_ns(rustix::time::clock_getres(clock)).max(1) as u64;
        cx.memory.put_u64(resolution as u32, ns)?;
        Ok(())
    })())
}

pub fn clock_time_get(
    cx: &mut WasiCx<'_>,
    id: i32,
    _precision: i64,
    time: i32,
) -> Result<i32, WasiExit> {
    finish((|| {
        let now = cx.state.clock_now_ns(host_clock(id)?);
        cx.memory.put_u64(time as u32, now)?;
        Ok(())
    })())
}

pub fn proc_exit(_cx: &mut WasiCx<'_>, rval: i32) -> Result<i32, WasiExit> {
    Err(WasiExit(rval as u32))
}

/// Signals are not part of the sandbox: a guest cannot raise one on the host.
pub fn proc_raise(_cx: &mut WasiCx<'_>, _sig: i32) -> Result<i32, WasiExit> {
    finish(Err(Errno::NOSYS))
}

pub fn sched_yield(_cx: &mut WasiCx<'_>) -> Result<i32, WasiExit> {
    std::thread::yield_now();
    finish(Ok(()))
}

pub fn random_get(cx: &mut WasiCx<'_>, buf: i32, buf_len: i32) -> Result<i32, WasiExit> {
    finish((|| {
        let target = cx.memory.bytes_mut(buf as u32, buf_len as u32)?;
        let mut filled = 0;
        while filled < target.len() {
            match rustix::rand::getrandom(
                &mut target[filled..],
                rustix::rand::GetRandomFlags::empty(),
            ) {
                Ok(count) => filled += count,
                Err(rustix::io::Errno::INTR) => {}
                Err(error) => return Err(error.into()),
            }
        }
        Ok(())
    })())
}

/// A socket call: no socket is ever granted, so every descriptor lacks the capability (and one
/// that is not open is `EBADF`, as for any call).
fn no_socket(cx: &mut WasiCx<'_>, fd: i32) -> Result<i32, WasiExit> {
    finish(cx.state.open_fd(fd).and(Err(Errno::NOTCAPABLE)))
}

pub fn sock_accept(
    cx: &mut WasiCx<'_>,
    fd: i32,
    _flags: i32,
    _result_fd: i32,
) -> Result<i32, WasiExit> {
    no_socket(cx, fd)
}

pub fn sock_recv(
    cx: &mut WasiCx<'_>,
    fd: i32,
    _ri_data: i32,
    _ri_data_len: i32,
    _ri_flags: i32,
    _ro_datalen: i32,
    _ro_flags: i32,
) -> Result<i32, WasiExit> {
    no_socket(cx, fd)
}

pub fn sock_send(
    cx: &mut WasiCx<'_>,
    fd: i32,
    _si_data: i32,
    _si_data_len: i32,
    _si_flags: i32,
    _so_datalen: i32,
) -> Result<i32, WasiExit> {
    no_socket(cx, fd)
}

pub fn sock_shutdown(cx: &mut WasiCx<'_>, fd: i32, _how: i32) -> Result<i32, WasiExit> {
    no_socket(cx, fd)
}
