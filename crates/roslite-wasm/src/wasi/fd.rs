//! The descriptor functions (`fd_*`): stdio, and the files and directories a guest opened
//! beneath its grants.

use super::layout::*;
use super::{
    finish, Errno, FdObject, HostFd, OutputStream, WasiCx, WasiExit, WasiResult, WasiState,
};
use crate::memory::GuestMemory;
use rustix::fd::OwnedFd;
use rustix::fs::{OFlags, SeekFrom};

/// More iovecs than this in one call is `EINVAL`, as `IOV_MAX` is on Linux.
const MAX_IOVECS: u32 = 1024;

/// One entry of a directory listing, for `fd_readdir`.
pub(super) struct ListedEntry {
    name: Vec<u8>,
    inode: u64,
    filetype: u8,
}

impl WasiState {
    /// A host file or directory; stdio is `EBADF` here (it has no host descriptor).
    pub(super) fn host_fd(&self, fd: i32) -> Result<&HostFd, Errno> {
        match &self.open_fd_ref(fd)?.object {
            FdObject::Host(host) => Ok(host),
            _ => Err(Errno::BADF),
        }
    }

    /// A directory that paths can be resolved from.
    pub(super) fn dir_fd(&self, fd: i32) -> Result<&HostFd, Errno> {
        match &self.open_fd_ref(fd)?.object {
            FdObject::Host(host) if host.filetype == filetype::DIRECTORY => Ok(host),
            _ => Err(Errno::NOTDIR),
        }
    }
}

pub(super) fn require_writable(host: &HostFd) -> WasiResult {
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
        // A `filesize` above i64::MAX is no offset a host file can have.
        let start = u64::try_from(offset).map_err(|_| Errno::INVAL)?;
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
        // A `filesize` above i64::MAX is no offset a host file can have.
        let start = u64::try_from(offset).map_err(|_| Errno::INVAL)?;
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
