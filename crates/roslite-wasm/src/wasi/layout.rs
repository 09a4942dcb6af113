//! The preview1 values and record layouts (`typenames.witx` of WASI preview1) the descriptor
//! and path functions share.

use super::Errno;
use rustix::fs::{FileType, Timespec, Timestamps};

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
pub(super) const FDFLAGS_APPEND: u16 = 1 << 0;
pub(super) const FDFLAGS_DSYNC: u16 = 1 << 1;
pub(super) const FDFLAGS_NONBLOCK: u16 = 1 << 2;
pub(super) const FDFLAGS_RSYNC: u16 = 1 << 3;
pub(super) const FDFLAGS_SYNC: u16 = 1 << 4;
/// `oflags` (`u16`).
pub(super) const OFLAGS_CREAT: u16 = 1 << 0;
pub(super) const OFLAGS_DIRECTORY: u16 = 1 << 1;
pub(super) const OFLAGS_EXCL: u16 = 1 << 2;
pub(super) const OFLAGS_TRUNC: u16 = 1 << 3;
/// `lookupflags` (`u32`).
pub(super) const LOOKUP_SYMLINK_FOLLOW: i32 = 1 << 0;
/// `fstflags` (`u16`).
pub(super) const FST_ATIM: i32 = 1 << 0;
pub(super) const FST_ATIM_NOW: i32 = 1 << 1;
pub(super) const FST_MTIM: i32 = 1 << 2;
pub(super) const FST_MTIM_NOW: i32 = 1 << 3;

/// Record sizes on wasm32 (`typenames.witx`): `iovec`/`ciovec` {buf: u32, buf_len: u32};
/// `fdstat` {filetype u8 @0, flags u16 @2, rights_base u64 @8, rights_inheriting u64 @16};
/// `filestat` {dev @0, ino @8, filetype u8 @16, nlink @24, size @32, atim @40, mtim @48,
/// ctim @56}; `prestat` {tag u8 @0, pr_name_len u32 @4}; `dirent` {d_next u64 @0, d_ino u64 @8,
/// d_namlen u32 @16, d_type u8 @20}, the name following the record.
pub(super) const IOVEC_SIZE: u32 = 8;
pub(super) const FDSTAT_SIZE: usize = 24;
pub(super) const FILESTAT_SIZE: usize = 64;
pub(super) const PRESTAT_SIZE: usize = 8;
pub(super) const DIRENT_SIZE: usize = 24;

pub(super) fn wasi_filetype(host: FileType) -> u8 {
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

pub(super) fn nanoseconds(seconds: i64, nanoseconds: u64) -> u64 {
    (seconds as i128 * 1_000_000_000 + nanoseconds as i128).clamp(0, u64::MAX as i128) as u64
}

/// A `filestat` record for `stat`.
// The `Stat` fields' integer types differ between architectures.
#[allow(clippy::unnecessary_cast)]
pub(super) fn filestat_record(stat: &rustix::fs::Stat) -> [u8; FILESTAT_SIZE] {
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
pub(super) fn timestamps(atim: i64, mtim: i64, fst_flags: i32) -> Result<Timestamps, Errno> {
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
