//! The path functions (`path_*`): files and directories beneath a granted directory.
//!
//! Every path a guest names is resolved by the kernel with `openat2(RESOLVE_BENEATH |
//! RESOLVE_NO_MAGICLINKS)` from the directory descriptor it is relative to, which refuses
//! absolute paths, `..` above that directory and symlinks leading out of it (`EXDEV`, reported
//! to the guest as `ENOTCAPABLE`). Functions that act on a name rather than open it (mkdir,
//! unlink, rename, ...) resolve the name's parent that way and then act on the last component
//! alone, which the kernel does not follow. A host without `openat2` (Linux before 5.6) gives
//! the guest `ENOSYS` for every path: the sandbox fails closed.

use super::fd::require_writable;
use super::layout::*;
use super::{finish, Errno, FdObject, HostFd, OpenFd, WasiCx, WasiExit};
use crate::memory::GuestMemory;
use rustix::fd::OwnedFd;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};

/// A longer path is `ENAMETOOLONG`, as `PATH_MAX` is on Linux.
const MAX_PATH: u32 = 4096;

const BENEATH: ResolveFlags = ResolveFlags::BENEATH.union(ResolveFlags::NO_MAGICLINKS);

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
