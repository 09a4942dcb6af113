//! Placeholder until the WASI implementation lands (a few functions to run first guests).

use crate::memory::GuestMemory;

pub struct WasiConfig {
    pub args: Vec<String>,
}

pub struct WasiState {
    pub args: Vec<String>,
}

impl WasiState {
    pub fn new(config: WasiConfig) -> Self {
        Self { args: config.args }
    }
}

pub struct WasiCx<'a> {
    pub memory: GuestMemory<'a>,
    pub state: &'a mut WasiState,
}

#[derive(Debug)]
pub struct WasiExit(pub i32);

#[macro_export]
macro_rules! wasi_functions {
    ($m:ident) => {
        $m! {
            fd_write(fd: i32, iovs: i32, iovs_len: i32, nwritten: i32);
            proc_exit(code: i32);
            args_sizes_get(argc: i32, argv_buf_size: i32);
            args_get(argv: i32, argv_buf: i32);
            environ_sizes_get(count: i32, size: i32);
            environ_get(environ: i32, environ_buf: i32);
            clock_time_get(id: i32, precision: i64, time: i32);
            fd_close(fd: i32);
            fd_seek(fd: i32, offset: i64, whence: i32, newoffset: i32);
            fd_fdstat_get(fd: i32, stat: i32);
            fd_prestat_get(fd: i32, prestat: i32);
            fd_prestat_dir_name(fd: i32, path: i32, path_len: i32);
            random_get(buf: i32, len: i32);
            poll_oneoff(subs: i32, events: i32, n: i32, nevents: i32);
            sched_yield();
            fd_read(fd: i32, iovs: i32, iovs_len: i32, nread: i32);
        }
    };
}

pub fn fd_write(
    cx: &mut WasiCx<'_>,
    fd: i32,
    iovs: i32,
    n: i32,
    nwritten: i32,
) -> Result<i32, WasiExit> {
    let mut total = 0u32;
    let mut out = Vec::new();
    for i in 0..n as u32 {
        let Ok(base) = cx.memory.u32(iovs as u32 + 8 * i) else {
            return Ok(21);
        };
        let Ok(len) = cx.memory.u32(iovs as u32 + 8 * i + 4) else {
            return Ok(21);
        };
        let Ok(b) = cx.memory.bytes(base, len) else {
            return Ok(21);
        };
        out.extend_from_slice(b);
        total += len;
    }
    use std::io::Write;
    match fd {
        1 => {
            let _ = std::io::stdout().write_all(&out);
        }
        2 => {
            let _ = std::io::stderr().write_all(&out);
        }
        _ => return Ok(8),
    }
    if cx.memory.put_u32(nwritten as u32, total).is_err() {
        return Ok(21);
    }
    Ok(0)
}
pub fn proc_exit(_cx: &mut WasiCx<'_>, code: i32) -> Result<i32, WasiExit> {
    Err(WasiExit(code))
}
pub fn args_sizes_get(cx: &mut WasiCx<'_>, argc: i32, size: i32) -> Result<i32, WasiExit> {
    let n = cx.state.args.len() as u32;
    let s: usize = cx.state.args.iter().map(|a| a.len() + 1).sum();
    if cx.memory.put_u32(argc as u32, n).is_err()
        || cx.memory.put_u32(size as u32, s as u32).is_err()
    {
        return Ok(21);
    }
    Ok(0)
}
pub fn args_get(cx: &mut WasiCx<'_>, argv: i32, buf: i32) -> Result<i32, WasiExit> {
    let mut at = buf as u32;
    let args = cx.state.args.clone();
    for (i, a) in args.iter().enumerate() {
        if cx.memory.put_u32(argv as u32 + 4 * i as u32, at).is_err() {
            return Ok(21);
        }
        let mut b = a.as_bytes().to_vec();
        b.push(0);
        if cx.memory.write(at, &b).is_err() {
            return Ok(21);
        }
        at += b.len() as u32;
    }
    Ok(0)
}
pub fn environ_sizes_get(cx: &mut WasiCx<'_>, count: i32, size: i32) -> Result<i32, WasiExit> {
    if cx.memory.put_u32(count as u32, 0).is_err() || cx.memory.put_u32(size as u32, 0).is_err() {
        return Ok(21);
    }
    Ok(0)
}
pub fn environ_get(_cx: &mut WasiCx<'_>, _e: i32, _b: i32) -> Result<i32, WasiExit> {
    Ok(0)
}
pub fn clock_time_get(cx: &mut WasiCx<'_>, id: i32, _p: i64, time: i32) -> Result<i32, WasiExit> {
    let clock = if id == 0 {
        rustix::time::ClockId::Realtime
    } else {
        rustix::time::ClockId::Monotonic
    };
    let t = rustix::time::clock_gettime(clock);
    let ns = t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64;
    if cx.memory.put_u64(time as u32, ns).is_err() {
        return Ok(21);
    }
    Ok(0)
}
pub fn fd_close(_cx: &mut WasiCx<'_>, _fd: i32) -> Result<i32, WasiExit> {
    Ok(8)
}
pub fn fd_seek(_cx: &mut WasiCx<'_>, _fd: i32, _o: i64, _w: i32, _n: i32) -> Result<i32, WasiExit> {
    Ok(8)
}
pub fn fd_fdstat_get(cx: &mut WasiCx<'_>, fd: i32, stat: i32) -> Result<i32, WasiExit> {
    if !(0..=2).contains(&fd) {
        return Ok(8);
    }
    if cx
        .memory
        .bytes_mut(stat as u32, 24)
        .map(|b| {
            b.fill(0);
            b[0] = 2;
        })
        .is_err()
    {
        return Ok(21);
    }
    Ok(0)
}
pub fn fd_prestat_get(_cx: &mut WasiCx<'_>, _fd: i32, _p: i32) -> Result<i32, WasiExit> {
    Ok(8)
}
pub fn fd_prestat_dir_name(
    _cx: &mut WasiCx<'_>,
    _fd: i32,
    _p: i32,
    _l: i32,
) -> Result<i32, WasiExit> {
    Ok(8)
}
pub fn random_get(cx: &mut WasiCx<'_>, buf: i32, len: i32) -> Result<i32, WasiExit> {
    match cx.memory.bytes_mut(buf as u32, len as u32) {
        Ok(b) => {
            for (i, x) in b.iter_mut().enumerate() {
                *x = i as u8;
            }
            Ok(0)
        }
        Err(_) => Ok(21),
    }
}
pub fn poll_oneoff(
    _cx: &mut WasiCx<'_>,
    _s: i32,
    _e: i32,
    _n: i32,
    _ne: i32,
) -> Result<i32, WasiExit> {
    Ok(52)
}
pub fn sched_yield(_cx: &mut WasiCx<'_>) -> Result<i32, WasiExit> {
    Ok(0)
}
pub fn fd_read(_cx: &mut WasiCx<'_>, _fd: i32, _i: i32, _n: i32, _r: i32) -> Result<i32, WasiExit> {
    Ok(8)
}
