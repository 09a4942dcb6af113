//! The descriptor and path functions: stdio, and files beneath the granted directories.
//!
//! Every path a guest names is resolved by the kernel with `openat2(RESOLVE_BENEATH |
//! RESOLVE_NO_MAGICLINKS)` from the directory descriptor it is relative to, which refuses
//! absolute paths, `..` above that directory and symlinks leading out of it (`EXDEV`, reported
//! to the guest as `ENOTCAPABLE`). Functions that act on a name rather than open it (mkdir,
//! unlink, rename, ...) resolve the name's parent that way and then act on the last component
//! alone, which the kernel does not follow. A host without `openat2` (Linux before 5.6) gives
//! the guest `ENOSYS` for every path: the sandbox fails closed.

use super::{
    finish, Errno, FdObject, HostFd, OpenFd, OutputStream, WasiCx, WasiExit, WasiResult, WasiState,
};
use crate::memory::GuestMemory;
use rustix::fd::OwnedFd;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags, SeekFrom, Timespec, Timestamps};

/// `rights` bits (`typenames.witx`; bit n is the n-th flag).
pub(super) mod rights {
    pub const FD_READ: u64 = 1 << 1;
    pub const FD_WRITE: u64 = 1 << 6;
    pub const FD_ALLOCATE: u64 = 1 << 8;
    pub const FD_READDIR: u64 = 1 << 14;
    pub const FD_FILESTAT_SET_SIZE: u64 = 1 << 22;
    pub const POLL_FD_READWRITE: u64 = 1 << 27;
    /// Every right preview1 defines (`fd_datasync` .. `sock_accept`, 30 flags).
    pub const ALL: u64 = (1 << 30) - 1;
}

/// `filetype` values (`typenames.witx`, a `u8` enum).
pub(super) mod filetype {
    pub const UNKNOWN: u8 = 0;
    pub const BLOCK_DEVICE: u8 = 1;
    pub const CHARACTER_DEVICE: u8 = 2;
    pub const DIRECTORY: u8 = 3;
    pub const REGULAR_FILE: u8 = 4;
    pub const SOCKET_STREAM: u8 = 6;
    pub const SYMBOLIC_LINK: u8 = 7;
}

/// `fdflags` (`u16`).
const FDFLAGS_APPEND: u16 = 1 << 0;
const FDFLAGS_DSYNC: u16 = 1 << 1;
const FDFLAGS_NONBLOCK: u16 = 1 << 2;
const FDFLAGS_RSYNC: u16 = 1 << 3;
const FDFLAGS_SYNC: u16 = 1 << 4;
/// `oflags` (`u16`).
const OFLAGS_CREAT: u16 = 1 << 0;
const OFLAGS_DIRECTORY: u16 = 1 << 1;
const OFLAGS_EXCL: u16 = 1 << 2;
const OFLAGS_TRUNC: u16 = 1 << 3;
/// `lookupflags` (`u32`).
const LOOKUP_SYMLINK_FOLLOW: i32 = 1 << 0;
/// `fstflags` (`u16`).
const FST_ATIM: i32 = 1 << 0;
const FST_ATIM_NOW: i32 = 1 << 1;
const FST_MTIM: i32 = 1 << 2;
const FST_MTIM_NOW: i32 = 1 << 3;

/// Record sizes on wasm32 (`typenames.witx`): `iovec`/`ciovec` {buf: u32, buf_len: u32};
/// `fdstat` {filetype u8 @0, flags u16 @2, rights_base u64 @8, rights_inheriting u64 @16};
/// `filestat` {dev @0, ino @8, filetype u8 @16, nlink @24, size @32, atim @40, mtim @48,
/// ctim @56}; `prestat` {tag u8 @0, pr_name_len u32 @4}; `dirent` {d_next u64 @0, d_ino u64 @8,
/// d_namlen u32 @16, d_type u8 @20}, the name following the record.
const IOVEC_SIZE: u32 = 8;
const FDSTAT_SIZE: usize = 24;
const FILESTAT_SIZE: usize = 64;
const PRESTAT_SIZE: usize = 8;
const DIRENT_SIZE: usize = 24;

/// More iovecs than this in one call is `EINVAL`, as `IOV_MAX` is on Linux.
const MAX_IOVECS: u32 = 1024;
/// A longer path is `ENAMETOOLONG`, as `PATH_MAX` is on Linux.
const MAX_PATH: u32 = 4096;

const BENEATH: ResolveFlags = ResolveFlags::BENEATH.union(ResolveFlags::NO_MAGICLINKS);

/// One entry of a directory listing, for `fd_readdir`.
pub(super) struct ListedEntry {
    name: Vec<u8>,
    inode: u64,
    filetype: u8,
}

fn wasi_filetype(host: FileType) -> u8 {
    match host {
        FileType::RegularFile => filetype::REGULAR_FILE,
        FileType::Directory => filetype::DIRECTORY,
        FileType::Symlink => filetype::SYMBOLIC_LINK,
        FileType::CharacterDevice => filetype::CHARACTER_DEVICE,
        FileType::BlockDevice => filetype::BLOCK_DEVICE,
        FileType::Socket => filetype::SOCKET_STREAM,
        _ => filetype::UNKNOWN,
    }
}

impl WasiState {
    fn open_fd_ref(&self, fd: i32) -> Result<&OpenFd, Errno> {
        usize::try_from(fd)
            .ok()
            .and_then(|index| self.fds.get(index))
            .and_then(Option::as_ref)
            .ok_or(Errno::BADF)
    }

    /// A host file or directory; stdio is `EBADF` here (it has no host descriptor).
    fn host_fd(&self, fd: i32) -> Result<&HostFd, Errno> {
        match &self.open_fd_ref(fd)?.object {
            FdObject::Host(host) => Ok(host),
            _ => Err(Errno::BADF),
        }
    }

    /// A directory that paths can be resolved from.
    fn dir_fd(&self, fd: i32) -> Result<&HostFd, Errno> {
        match &self.open_fd_ref(fd)?.object {
            FdObject::Host(host) if host.filetype == filetype::DIRECTORY => Ok(host),
            _ => Err(Errno::NOTDIR),
        }
    }
}

fn require_writable(host: &HostFd) -> WasiResult {
    if host.grant_writable {
        Ok(())
    } else {
        Err(Errno::ROFS)
    }
}

fn offset(base: u32, by: u32) -> Result<u32, Errno> {
    base.checked_add(by).ok_or(Errno::FAULT)
}

/// The (address, length) pairs of an iovec array, each checked to lie in guest memory.
fn iovecs(memory: &GuestMemory<'_>, iovs: i32, iovs_len: i32) -> Result<Vec<(u32, u32)>, Errno> {
    let count = iovs_len as u32;
    if count > MAX_IOVECS {
        return Err(Errno::INVAL);
    }
    let mut total: u32 = 0;
    (0..count)
        .map(|index| {
            let at = offset(iovs as u32, index * IOVEC_SIZE)?;
            let buf = memory.u32(at)?;
            let len = memory.u32(offset(at, 4)?)?;
            memory.bytes(buf, len)?;
            // The count transferred is returned as a `size` (u32).
            total = total.checked_add(len).ok_or(Errno::INVAL)?;
            Ok((buf, len))
        })
        .collect()
}

/// Reads into each iovec in turn, stopping at the first short read. `read` gets the buffer and
/// the bytes read so far (the offset for `fd_pread`).
fn read_iovecs(
    memory: &mut GuestMemory<'_>,
    iovecs: &[(u32, u32)],
    mut read: impl FnMut(&mut [u8], u64) -> rustix::io::Result<usize>,
) -> Result<u32, Errno> {
    let mut total = 0u32;
    for &(buf, len) in iovecs {
        let count = match read(memory.bytes_mut(buf, len)?, total as u64) {
            Ok(count) => count as u32,
            Err(_) if total > 0 => break,
            Err(error) => return Err(error.into()),
        };
        total += count;
        if count < len {
            break;
        }
    }
    Ok(total)
}

fn write_iovecs(
    memory: &GuestMemory<'_>,
    iovecs: &[(u32, u32)],
    mut write: impl FnMut(&[u8], u64) -> rustix::io::Result<usize>,
) -> Result<u32, Errno> {
    let mut total = 0u32;
    for &(buf, len) in iovecs {
        let count = match write(memory.bytes(buf, len)?, total as u64) {
            Ok(count) => count as u32,
            Err(_) if total > 0 => break,
            Err(error) => return Err(error.into()),
        };
        total += count;
        if count < len {
            break;
        }
    }
    Ok(total)
}

/// A path argument, copied out of guest memory (a path is never longer than `MAX_PATH`).
fn guest_path(memory: &GuestMemory<'_>, path: i32, path_len: i32) -> Result<Vec<u8>, Errno> {
    if path_len as u32 > MAX_PATH {
        return Err(Errno::NAMETOOLONG);
    }
    let bytes = memory.bytes(path as u32, path_len as u32)?;
    if bytes.contains(&0) {
        return Err(Errno::INVAL);
    }
    Ok(bytes.to_vec())
}

/// Opens `path` beneath `dir`: see the module documentation.
fn open_beneath(dir: &OwnedFd, path: &[u8], flags: OFlags, mode: Mode) -> Result<OwnedFd, Errno> {
    if path.first() == Some(&b'/') {
        return Err(Errno::NOTCAPABLE);
    }
    rustix::fs::openat2(dir, path, flags | OFlags::CLOEXEC, mode, BENEATH).map_err(|error| {
        if error == rustix::io::Errno::XDEV {
            Errno::NOTCAPABLE
        } else {
            error.into()
        }
    })
}

/// `path`'s parent directory, opened beneath `dir`, and its last component (never `.`, `..` or
/// empty), for the functions that act on a name.
fn open_parent<'p>(dir: &OwnedFd, path: &'p [u8]) -> Result<(OwnedFd, &'p [u8]), Errno> {
    if path.first() == Some(&b'/') {
        return Err(Errno::NOTCAPABLE);
    }
    let end = path
        .iter()
        .rposition(|&b| b != b'/')
        .map_or(0, |last| last + 1);
    let trimmed = &path[..end];
    let (parent, name) = match trimmed.iter().rposition(|&b| b == b'/') {
        Some(slash) => (&trimmed[..slash], &trimmed[slash + 1..]),
        None => (&b"."[..], trimmed),
    };
    match name {
        b"" => return Err(Errno::NOENT),
        b"." | b".." => return Err(Errno::INVAL),
        _ => {}
    }
    let parent = open_beneath(dir, parent, OFlags::PATH | OFlags::DIRECTORY, Mode::empty())?;
    Ok((parent, name))
}

fn nanoseconds(seconds: i64, nanoseconds: u64) -> u64 {
    (seconds as i128 * 1_000_000_000 + nanoseconds as i128).clamp(0, u64::MAX as i128) as u64
}

/// A `filestat` record for `stat`.
// The `Stat` fields' integer types differ between architectures.
#[allow(clippy::unnecessary_cast)]
fn filestat_record(stat: &rustix::fs::Stat) -> [u8; FILESTAT_SIZE] {
    let mut record = [0u8; FILESTAT_SIZE];
    record[0..8].copy_from_slice(&(stat.st_dev as u64).to_le_bytes());
    record[8..16].copy_from_slice(&(stat.st_ino as u64).to_le_bytes());
    record[16] = wasi_filetype(FileType::from_raw_mode(stat.st_mode as _));
    record[24..32].copy_from_slice(&(stat.st_nlink as u64).to_le_bytes());
    record[32..40].copy_from_slice(&(stat.st_size as u64).to_le_bytes());
    let times = [
        (stat.st_atime as i64, stat.st_atime_nsec as u64),
        (stat.st_mtime as i64, stat.st_mtime_nsec as u64),
        (stat.st_ctime as i64, stat.st_ctime_nsec as u64),
    ];
    for (index, (seconds, nanos)) in times.into_iter().enumerate() {
        let at = 40 + 8 * index;
        record[at..at + 8].copy_from_slice(&nanoseconds(seconds, nanos).to_le_bytes());
    }
    record
}

/// The `Timestamps` for `fd_filestat_set_times` / `path_filestat_set_times`.
fn timestamps(atim: i64, mtim: i64, fst_flags: i32) -> Result<Timestamps, Errno> {
    let one = |value: i64, set: i32, now: i32| -> Result<Timespec, Errno> {
        let value = value as u64;
        match (fst_flags & set != 0, fst_flags & now != 0) {
            (true, true) => Err(Errno::INVAL),
            (true, false) => Ok(Timespec {
                tv_sec: (value / 1_000_000_000) as i64,
                tv_nsec: (value % 1_000_000_000) as _,
            }),
            (false, true) => Ok(Timespec {
                tv_sec: 0,
                tv_nsec: rustix::fs::UTIME_NOW,
            }),
            (false, false) => Ok(Timespec {
                tv_sec: 0,
                tv_nsec: rustix::fs::UTIME_OMIT,
            }),
        }
    };
    Ok(Timestamps {
        last_access: one(atim, FST_ATIM, FST_ATIM_NOW)?,
        last_modification: one(mtim, FST_MTIM, FST_MTIM_NOW)?,
    })
}

fn list_directory(dir: &OwnedFd) -> Result<Vec<ListedEntry>, Errno> {
    let mut reader = rustix::fs::Dir::read_from(dir)?;
    let mut listing = Vec::new();
    while let Some(entry) = reader.read() {
        let entry = entry?;
        listing.push(ListedEntry {
            name: entry.file_name().to_bytes().to_vec(),
            inode: entry.ino(),
            filetype: wasi_filetype(entry.file_type()),
        });
    }
    Ok(listing)
}

pub fn fd_advise(
    cx: &mut WasiCx<'_>,
    fd: i32,
    _offset: i64,
    _len: i64,
    advice: i32,
) -> Result<i32, WasiExit> {
    // Advice may be ignored (`advice` in typenames.witx has six values); only check it.
    finish((|| {
        cx.state.host_fd(fd)?;
        if !(0..=5).contains(&advice) {
            return Err(Errno::INVAL);
        }
        Ok(())
    })())
}

pub fn fd_allocate(cx: &mut WasiCx<'_>, fd: i32, offset: i64, len: i64) -> Result<i32, WasiExit> {
    finish((|| {
        let host = cx.state.host_fd(fd)?;
        require_writable(host)?;
        let flags = rustix::fs::FallocateFlags::empty();
        Ok(rustix::fs::fallocate(
            &host.fd,
            flags,
            offset as u64,
            len as u64,
        )?)
    })())
}

pub fn fd_close(cx: &mut WasiCx<'_>, fd: i32) -> Result<i32, WasiExit> {
    finish((|| {
        cx.state.open_fd(fd)?;
        cx.state.fds[fd as usize] = None;
        Ok(())
    })())
}

pub fn fd_datasync(cx: &mut WasiCx<'_>, fd: i32) -> Result<i32, WasiExit> {
    finish((|| match &cx.state.open_fd_ref(fd)?.object {
        FdObject::Host(host) => Ok(rustix::fs::fdatasync(&host.fd)?),
        _ => Ok(()),
    })())
}

pub fn fd_sync(cx: &mut WasiCx<'_>, fd: i32) -> Result<i32, WasiExit> {
    finish((|| match &cx.state.open_fd_ref(fd)?.object {
        FdObject::Host(host) => Ok(rustix::fs::fsync(&host.fd)?),
        _ => Ok(()),
    })())
}

pub fn fd_fdstat_get(cx: &mut WasiCx<'_>, fd: i32, stat: i32) -> Result<i32, WasiExit> {
    finish((|| {
        let entry = cx.state.open_fd_ref(fd)?;
        // Stdio is a character device without seek rights, which wasi-libc's `isatty` takes
        // for a terminal: stdout is then line-buffered, as a native node's is on a terminal.
        let (filetype, flags) = match &entry.object {
            FdObject::Host(host) => {
                let host_flags = rustix::fs::fcntl_getfl(&host.fd)?;
                let mut flags = 0u16;
                for (host_flag, wasi_flag) in [
                    (OFlags::APPEND, FDFLAGS_APPEND),
                    (OFlags::NONBLOCK, FDFLAGS_NONBLOCK),
                    (OFlags::DSYNC, FDFLAGS_DSYNC),
                    (OFlags::SYNC, FDFLAGS_SYNC),
                ] {
                    if host_flags.contains(host_flag) {
                        flags |= wasi_flag;
                    }
                }
                (host.filetype, flags)
            }
            _ => (filetype::CHARACTER_DEVICE, 0),
        };
        let mut record = [0u8; FDSTAT_SIZE];
        record[0] = filetype;
        record[2..4].copy_from_slice(&flags.to_le_bytes());
        record[8..16].copy_from_slice(&entry.rights_base.to_le_bytes());
        record[16..24].copy_from_slice(&entry.rights_inheriting.to_le_bytes());
        Ok(cx.memory.write(stat as u32, &record)?)
    })())
}

pub fn fd_fdstat_set_flags(cx: &mut WasiCx<'_>, fd: i32, flags: i32) -> Result<i32, WasiExit> {
    finish((|| {
        let flags = flags as u16;
        let host = match &cx.state.open_fd_ref(fd)?.object {
            FdObject::Host(host) => host,
            // Writes to stdio never block and always append: nothing to change.
            _ => return Ok(()),
        };
        // Linux cannot change the sync flags of an open file.
        if flags & (FDFLAGS_DSYNC | FDFLAGS_RSYNC | FDFLAGS_SYNC) != 0 {
            return Err(Errno::NOTSUP);
        }
        let mut host_flags = OFlags::empty();
        if flags & FDFLAGS_APPEND != 0 {
            host_flags |= OFlags::APPEND;
        }
        if flags & FDFLAGS_NONBLOCK != 0 {
            host_flags |= OFlags::NONBLOCK;
        }
        Ok(rustix::fs::fcntl_setfl(&host.fd, host_flags)?)
    })())
}

pub fn fd_fdstat_set_rights(
    cx: &mut WasiCx<'_>,
    fd: i32,
    fs_rights_base: i64,
    fs_rights_inheriting: i64,
) -> Result<i32, WasiExit> {
    finish((|| {
        let entry = cx.state.open_fd(fd)?;
        let (base, inheriting) = (fs_rights_base as u64, fs_rights_inheriting as u64);
        // Rights can only be dropped, never gained.
        if base & !entry.rights_base != 0 || inheriting & !entry.rights_inheriting != 0 {
            return Err(Errno::NOTCAPABLE);
        }
        entry.rights_base = base;
        entry.rights_inheriting = inheriting;
        Ok(())
    })())
}

pub fn fd_filestat_get(cx: &mut WasiCx<'_>, fd: i32, buf: i32) -> Result<i32, WasiExit> {
    finish((|| {
        let record = match &cx.state.open_fd_ref(fd)?.object {
            FdObject::Host(host) => filestat_record(&rustix::fs::fstat(&host.fd)?),
            _ => {
                let mut record = [0u8; FILESTAT_SIZE];
                record[16] = filetype::CHARACTER_DEVICE;
                record
            }
        };
        Ok(cx.memory.write(buf as u32, &record)?)
    })())
}

pub fn fd_filestat_set_size(cx: &mut WasiCx<'_>, fd: i32, size: i64) -> Result<i32, WasiExit> {
    finish((|| {
        let host = cx.state.host_fd(fd)?;
        require_writable(host)?;
        Ok(rustix::fs::ftruncate(&host.fd, size as u64)?)
    })())
}

pub fn fd_filestat_set_times(
    cx: &mut WasiCx<'_>,
    fd: i32,
    atim: i64,
    mtim: i64,
    fst_flags: i32,
) -> Result<i32, WasiExit> {
    finish((|| {
        let host = cx.state.host_fd(fd)?;
        require_writable(host)?;
        Ok(rustix::fs::futimens(
            &host.fd,
            &timestamps(atim, mtim, fst_flags)?,
        )?)
    })())
}

pub fn fd_pread(
    cx: &mut WasiCx<'_>,
    fd: i32,
    iovs: i32,
    iovs_len: i32,
    offset: i64,
    nread: i32,
) -> Result<i32, WasiExit> {
    finish((|| {
        let iovecs = iovecs(&cx.memory, iovs, iovs_len)?;
        cx.memory.bytes(nread as u32, 4)?;
        let host = match &cx.state.open_fd_ref(fd)?.object {
            FdObject::Host(host) => host,
            _ => return Err(Errno::SPIPE),
        };
        let start = offset as u64;
        let total = read_iovecs(&mut cx.memory, &iovecs, |buf, done| {
            rustix::io::pread(&host.fd, buf, start + done)
        })?;
        Ok(cx.memory.put_u32(nread as u32, total)?)
    })())
}

pub fn fd_pwrite(
    cx: &mut WasiCx<'_>,
    fd: i32,
    iovs: i32,
    iovs_len: i32,
    offset: i64,
    nwritten: i32,
) -> Result<i32, WasiExit> {
    finish((|| {
        let iovecs = iovecs(&cx.memory, iovs, iovs_len)?;
        cx.memory.bytes(nwritten as u32, 4)?;
        let host = match &cx.state.open_fd_ref(fd)?.object {
            FdObject::Host(host) => host,
            _ => return Err(Errno::SPIPE),
        };
        let start = offset as u64;
        let total = write_iovecs(&cx.memory, &iovecs, |buf, done| {
            rustix::io::pwrite(&host.fd, buf, start + done)
        })?;
        Ok(cx.memory.put_u32(nwritten as u32, total)?)
    })())
}

pub fn fd_read(
    cx: &mut WasiCx<'_>,
    fd: i32,
    iovs: i32,
    iovs_len: i32,
    nread: i32,
) -> Result<i32, WasiExit> {
    finish((|| {
        let iovecs = iovecs(&cx.memory, iovs, iovs_len)?;
        cx.memory.bytes(nread as u32, 4)?;
        let total = match &cx.state.open_fd_ref(fd)?.object {
            // No input is ever granted: the guest's stdin is at its end.
            FdObject::Stdin => 0,
            FdObject::Stdout | FdObject::Stderr => return Err(Errno::BADF),
            FdObject::Host(host) => read_iovecs(&mut cx.memory, &iovecs, |buf, _| {
                rustix::io::read(&host.fd, buf)
            })?,
        };
        Ok(cx.memory.put_u32(nread as u32, total)?)
    })())
}

pub fn fd_write(
    cx: &mut WasiCx<'_>,
    fd: i32,
    iovs: i32,
    iovs_len: i32,
    nwritten: i32,
) -> Result<i32, WasiExit> {
    finish((|| {
        let iovecs = iovecs(&cx.memory, iovs, iovs_len)?;
        cx.memory.bytes(nwritten as u32, 4)?;
        let stream = match &cx.state.open_fd_ref(fd)?.object {
            FdObject::Stdin => return Err(Errno::BADF),
            FdObject::Stdout => OutputStream::Stdout,
            FdObject::Stderr => OutputStream::Stderr,
            FdObject::Host(host) => {
                let total = write_iovecs(&cx.memory, &iovecs, |buf, _| {
                    rustix::io::write(&host.fd, buf)
                })?;
                return Ok(cx.memory.put_u32(nwritten as u32, total)?);
            }
        };
        // One sink call per write, so that what a guest writes at once stays together.
        let mut bytes = Vec::new();
        for &(buf, len) in &iovecs {
            bytes.extend_from_slice(cx.memory.bytes(buf, len)?);
        }
        cx.state.output.write(stream, &bytes);
        Ok(cx.memory.put_u32(nwritten as u32, bytes.len() as u32)?)
    })())
}

pub fn fd_prestat_get(cx: &mut WasiCx<'_>, fd: i32, buf: i32) -> Result<i32, WasiExit> {
    finish((|| {
        // wasi-libc asks fd 3, 4, ... until `EBADF` to find the preopens.
        let name = cx.state.host_fd(fd)?.preopen.as_ref().ok_or(Errno::BADF)?;
        let mut record = [0u8; PRESTAT_SIZE];
        // Tag 0: `preopentype::dir`, the only kind.
        record[4..8].copy_from_slice(&(name.len() as u32).to_le_bytes());
        Ok(cx.memory.write(buf as u32, &record)?)
    })())
}

pub fn fd_prestat_dir_name(
    cx: &mut WasiCx<'_>,
    fd: i32,
    path: i32,
    path_len: i32,
) -> Result<i32, WasiExit> {
    finish((|| {
        let name = cx.state.host_fd(fd)?.preopen.as_ref().ok_or(Errno::BADF)?;
        if (path_len as u32 as usize) < name.len() {
            return Err(Errno::NAMETOOLONG);
        }
        Ok(cx.memory.write(path as u32, name.as_bytes())?)
    })())
}

pub fn fd_readdir(
    cx: &mut WasiCx<'_>,
    fd: i32,
    buf: i32,
    buf_len: i32,
    cookie: i64,
    bufused: i32,
) -> Result<i32, WasiExit> {
    finish((|| {
        let capacity = cx.memory.bytes(buf as u32, buf_len as u32)?.len();
        cx.memory.bytes(bufused as u32, 4)?;
        let host = match &mut cx.state.open_fd(fd)?.object {
            FdObject::Host(host) if host.filetype == filetype::DIRECTORY => host,
            FdObject::Host(_) => return Err(Errno::NOTDIR),
            _ => return Err(Errno::BADF),
        };
        if cookie == 0 || host.listing.is_none() {
            host.listing = Some(list_directory(&host.fd)?);
        }
        let listing = host.listing.as_deref().unwrap_or_default();
        // Whole records until the buffer is full; the last one may be cut short, which tells
        // the guest (bufused == buf_len) to ask again from its cookie with a larger buffer.
        let mut out = Vec::new();
        let first = usize::try_from(cookie as u64).unwrap_or(usize::MAX);
        for (index, entry) in listing.iter().enumerate().skip(first) {
            if out.len() >= capacity {
                break;
            }
            let mut record = [0u8; DIRENT_SIZE];
            record[0..8].copy_from_slice(&(index as u64 + 1).to_le_bytes());
            record[8..16].copy_from_slice(&entry.inode.to_le_bytes());
            record[16..20].copy_from_slice(&(entry.name.len() as u32).to_le_bytes());
            record[20] = entry.filetype;
            out.extend_from_slice(&record);
            out.extend_from_slice(&entry.name);
        }
        let used = out.len().min(capacity);
        cx.memory.write(buf as u32, &out[..used])?;
        Ok(cx.memory.put_u32(bufused as u32, used as u32)?)
    })())
}

pub fn fd_renumber(cx: &mut WasiCx<'_>, fd: i32, to: i32) -> Result<i32, WasiExit> {
    finish((|| {
        cx.state.open_fd(fd)?;
        cx.state.open_fd(to)?;
        if fd != to {
            cx.state.fds[to as usize] = cx.state.fds[fd as usize].take();
        }
        Ok(())
    })())
}

fn seek(cx: &mut WasiCx<'_>, fd: i32, to: SeekFrom, newoffset: i32) -> WasiResult {
    cx.memory.bytes(newoffset as u32, 8)?;
    let host = match &cx.state.open_fd_ref(fd)?.object {
        FdObject::Host(host) => host,
        _ => return Err(Errno::SPIPE),
    };
    let position = rustix::fs::seek(&host.fd, to)?;
    Ok(cx.memory.put_u64(newoffset as u32, position)?)
}

pub fn fd_seek(
    cx: &mut WasiCx<'_>,
    fd: i32,
    offset: i64,
    whence: i32,
    newoffset: i32,
) -> Result<i32, WasiExit> {
    // `whence`: set, cur, end (typenames.witx).
    let to = match whence {
        0 if offset >= 0 => SeekFrom::Start(offset as u64),
        1 => SeekFrom::Current(offset),
        2 => SeekFrom::End(offset),
        _ => return finish(Err(Errno::INVAL)),
    };
    finish(seek(cx, fd, to, newoffset))
}

pub fn fd_tell(cx: &mut WasiCx<'_>, fd: i32, offset: i32) -> Result<i32, WasiExit> {
    finish(seek(cx, fd, SeekFrom::Current(0), offset))
}

#[allow(clippy::too_many_arguments)]
pub fn path_open(
    cx: &mut WasiCx<'_>,
    fd: i32,
    dirflags: i32,
    path: i32,
    path_len: i32,
    oflags: i32,
    fs_rights_base: i64,
    fs_rights_inheriting: i64,
    fdflags: i32,
    opened_fd: i32,
) -> Result<i32, WasiExit> {
    finish((|| {
        let path = guest_path(&cx.memory, path, path_len)?;
        // Checked first, so that a bad pointer does not leave a descriptor open.
        cx.memory.bytes(opened_fd as u32, 4)?;
        let dir = cx.state.dir_fd(fd)?;

        let (oflags, fdflags) = (oflags as u16, fdflags as u16);
        let rights_base = fs_rights_base as u64;
        let reads = rights_base & (rights::FD_READ | rights::FD_READDIR) != 0;
        let writes = rights_base
            & (rights::FD_WRITE | rights::FD_ALLOCATE | rights::FD_FILESTAT_SET_SIZE)
            != 0;
        if writes || oflags & (OFLAGS_CREAT | OFLAGS_TRUNC) != 0 {
            require_writable(dir)?;
        }
        let mut flags = match (reads, writes) {
            (true, true) => OFlags::RDWR,
            (false, true) => OFlags::WRONLY,
            _ => OFlags::RDONLY,
        };
        for (wasi_flag, host_flag) in [
            (OFLAGS_CREAT, OFlags::CREATE),
            (OFLAGS_DIRECTORY, OFlags::DIRECTORY),
            (OFLAGS_EXCL, OFlags::EXCL),
            (OFLAGS_TRUNC, OFlags::TRUNC),
        ] {
            if oflags & wasi_flag != 0 {
                flags |= host_flag;
            }
        }
        for (wasi_flag, host_flag) in [
            (FDFLAGS_APPEND, OFlags::APPEND),
            (FDFLAGS_DSYNC, OFlags::DSYNC),
            (FDFLAGS_NONBLOCK, OFlags::NONBLOCK),
            (FDFLAGS_RSYNC, OFlags::RSYNC),
            (FDFLAGS_SYNC, OFlags::SYNC),
        ] {
            if fdflags & wasi_flag != 0 {
                flags |= host_flag;
            }
        }
        if dirflags & LOOKUP_SYMLINK_FOLLOW == 0 {
            flags |= OFlags::NOFOLLOW;
        }

        // openat2, unlike openat, refuses a mode without O_CREAT.
        let mode = if flags.contains(OFlags::CREATE) {
            Mode::from_raw_mode(0o666)
        } else {
            Mode::empty()
        };
        let file = open_beneath(&dir.fd, &path, flags, mode)?;
        let stat = rustix::fs::fstat(&file)?;
        let host = HostFd {
            fd: file,
            filetype: wasi_filetype(FileType::from_raw_mode(stat.st_mode)),
            grant_writable: dir.grant_writable,
            preopen: None,
            listing: None,
        };
        let new_fd = cx.state.insert(OpenFd {
            object: FdObject::Host(host),
            rights_base,
            rights_inheriting: fs_rights_inheriting as u64,
        })?;
        Ok(cx.memory.put_u32(opened_fd as u32, new_fd)?)
    })())
}

pub fn path_create_directory(
    cx: &mut WasiCx<'_>,
    fd: i32,
    path: i32,
    path_len: i32,
) -> Result<i32, WasiExit> {
    finish((|| {
        let path = guest_path(&cx.memory, path, path_len)?;
        let dir = cx.state.dir_fd(fd)?;
        require_writable(dir)?;
        let (parent, name) = open_parent(&dir.fd, &path)?;
        Ok(rustix::fs::mkdirat(
            &parent,
            name,
            Mode::from_raw_mode(0o777),
        )?)
    })())
}

pub fn path_filestat_get(
    cx: &mut WasiCx<'_>,
    fd: i32,
    flags: i32,
    path: i32,
    path_len: i32,
    buf: i32,
) -> Result<i32, WasiExit> {
    finish((|| {
        let path = guest_path(&cx.memory, path, path_len)?;
        cx.memory.bytes(buf as u32, FILESTAT_SIZE as u32)?;
        let dir = cx.state.dir_fd(fd)?;
        let mut open_flags = OFlags::PATH;
        if flags & LOOKUP_SYMLINK_FOLLOW == 0 {
            open_flags |= OFlags::NOFOLLOW;
        }
        let target = open_beneath(&dir.fd, &path, open_flags, Mode::empty())?;
        let record = filestat_record(&rustix::fs::fstat(&target)?);
        Ok(cx.memory.write(buf as u32, &record)?)
    })())
}

#[allow(clippy::too_many_arguments)]
pub fn path_filestat_set_times(
    cx: &mut WasiCx<'_>,
    fd: i32,
    flags: i32,
    path: i32,
    path_len: i32,
    atim: i64,
    mtim: i64,
    fst_flags: i32,
) -> Result<i32, WasiExit> {
    finish((|| {
        let path = guest_path(&cx.memory, path, path_len)?;
        let times = timestamps(atim, mtim, fst_flags)?;
        let dir = cx.state.dir_fd(fd)?;
        require_writable(dir)?;
        if flags & LOOKUP_SYMLINK_FOLLOW != 0 {
            // `utimensat` would follow a last-component symlink out of the grant: open the
            // target beneath the directory instead and set the times on what was opened.
            let open_flags = OFlags::RDONLY | OFlags::NONBLOCK;
            let target = open_beneath(&dir.fd, &path, open_flags, Mode::empty())?;
            Ok(rustix::fs::futimens(&target, &times)?)
        } else {
            let (parent, name) = open_parent(&dir.fd, &path)?;
            Ok(rustix::fs::utimensat(
                &parent,
                name,
                &times,
                AtFlags::SYMLINK_NOFOLLOW,
            )?)
        }
    })())
}

#[allow(clippy::too_many_arguments)]
pub fn path_link(
    cx: &mut WasiCx<'_>,
    old_fd: i32,
    old_flags: i32,
    old_path: i32,
    old_path_len: i32,
    new_fd: i32,
    new_path: i32,
    new_path_len: i32,
) -> Result<i32, WasiExit> {
    finish((|| {
        let old_path = guest_path(&cx.memory, old_path, old_path_len)?;
        let new_path = guest_path(&cx.memory, new_path, new_path_len)?;
        let (old_dir, new_dir) = (cx.state.dir_fd(old_fd)?, cx.state.dir_fd(new_fd)?);
        // Both ends writable: a link in a writable grant to a file of a read-only one would
        // make that file writable through the new name.
        require_writable(old_dir)?;
        require_writable(new_dir)?;
        // Following a last-component symlink would link whatever it points to, inside the
        // grant or not.
        if old_flags & LOOKUP_SYMLINK_FOLLOW != 0 {
            return Err(Errno::NOTSUP);
        }
        let (old_parent, old_name) = open_parent(&old_dir.fd, &old_path)?;
        let (new_parent, new_name) = open_parent(&new_dir.fd, &new_path)?;
        let flags = AtFlags::empty();
        Ok(rustix::fs::linkat(
            &old_parent,
            old_name,
            &new_parent,
            new_name,
            flags,
        )?)
    })())
}

pub fn path_readlink(
    cx: &mut WasiCx<'_>,
    fd: i32,
    path: i32,
    path_len: i32,
    buf: i32,
    buf_len: i32,
    bufused: i32,
) -> Result<i32, WasiExit> {
    finish((|| {
        let path = guest_path(&cx.memory, path, path_len)?;
        cx.memory.bytes(buf as u32, buf_len as u32)?;
        cx.memory.bytes(bufused as u32, 4)?;
        let dir = cx.state.dir_fd(fd)?;
        let (parent, name) = open_parent(&dir.fd, &path)?;
        let target = rustix::fs::readlinkat(&parent, name, Vec::new())?;
        // Cut to the buffer, as POSIX `readlink` does.
        let target = target.as_bytes();
        let used = target.len().min(buf_len as u32 as usize);
        cx.memory.write(buf as u32, &target[..used])?;
        Ok(cx.memory.put_u32(bufused as u32, used as u32)?)
    })())
}

pub fn path_remove_directory(
    cx: &mut WasiCx<'_>,
    fd: i32,
    path: i32,
    path_len: i32,
) -> Result<i32, WasiExit> {
    finish((|| {
        let path = guest_path(&cx.memory, path, path_len)?;
        let dir = cx.state.dir_fd(fd)?;
        require_writable(dir)?;
        let (parent, name) = open_parent(&dir.fd, &path)?;
        Ok(rustix::fs::unlinkat(&parent, name, AtFlags::REMOVEDIR)?)
    })())
}

pub fn path_rename(
    cx: &mut WasiCx<'_>,
    fd: i32,
    old_path: i32,
    old_path_len: i32,
    new_fd: i32,
    new_path: i32,
    new_path_len: i32,
) -> Result<i32, WasiExit> {
    finish((|| {
        let old_path = guest_path(&cx.memory, old_path, old_path_len)?;
        let new_path = guest_path(&cx.memory, new_path, new_path_len)?;
        let (old_dir, new_dir) = (cx.state.dir_fd(fd)?, cx.state.dir_fd(new_fd)?);
        require_writable(old_dir)?;
        require_writable(new_dir)?;
        let (old_parent, old_name) = open_parent(&old_dir.fd, &old_path)?;
        let (new_parent, new_name) = open_parent(&new_dir.fd, &new_path)?;
        Ok(rustix::fs::renameat(
            &old_parent,
            old_name,
            &new_parent,
            new_name,
        )?)
    })())
}

/// Not supported: the guest could not follow a symlink out of its grant, but host programs
/// reading the granted directory would, and the link could point anywhere.
pub fn path_symlink(
    cx: &mut WasiCx<'_>,
    _old_path: i32,
    _old_path_len: i32,
    fd: i32,
    _new_path: i32,
    _new_path_len: i32,
) -> Result<i32, WasiExit> {
    finish(
        cx.state
            .dir_fd(fd)
            .and_then(require_writable)
            .and(Err(Errno::NOTSUP)),
    )
}

pub fn path_unlink_file(
    cx: &mut WasiCx<'_>,
    fd: i32,
    path: i32,
    path_len: i32,
) -> Result<i32, WasiExit> {
    finish((|| {
        let path = guest_path(&cx.memory, path, path_len)?;
        let dir = cx.state.dir_fd(fd)?;
        require_writable(dir)?;
        let (parent, name) = open_parent(&dir.fd, &path)?;
        Ok(rustix::fs::unlinkat(&parent, name, AtFlags::empty())?)
    })())
}
