//! The WASI functions called as an engine would, on a `Vec<u8>` standing in for guest memory.

use super::layout::rights;
use super::*;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const MEMORY_SIZE: usize = 64 * 1024;
/// Where the tests put what they pass: results, a path, iovecs, data.
const RESULT_AT: u32 = 512;
const PATH_AT: u32 = 1024;
const IOVECS_AT: u32 = 2048;
const DATA_AT: u32 = 4096;

struct Guest {
    memory: Vec<u8>,
    state: WasiState,
}

impl Guest {
    fn new(config: WasiConfig) -> Self {
        Self {
            memory: vec![0; MEMORY_SIZE],
            state: WasiState::new(config).expect("a valid config"),
        }
    }

    fn call_raw(
        &mut self,
        function: impl FnOnce(&mut WasiCx<'_>) -> Result<i32, WasiExit>,
    ) -> Result<i32, WasiExit> {
        let mut cx = WasiCx {
            memory: GuestMemory::new(&mut self.memory),
            state: &mut self.state,
        };
        function(&mut cx)
    }

    /// Calls a function that does not exit and returns its errno.
    fn call(&mut self, function: impl FnOnce(&mut WasiCx<'_>) -> Result<i32, WasiExit>) -> i32 {
        self.call_raw(function).expect("not proc_exit")
    }

    fn put(&mut self, at: u32, bytes: &[u8]) {
        self.memory[at as usize..at as usize + bytes.len()].copy_from_slice(bytes);
    }
    fn put_u32(&mut self, at: u32, value: u32) {
        self.put(at, &value.to_le_bytes());
    }
    fn put_u64(&mut self, at: u32, value: u64) {
        self.put(at, &value.to_le_bytes());
    }
    fn bytes(&self, at: u32, len: usize) -> &[u8] {
        &self.memory[at as usize..at as usize + len]
    }
    fn u32(&self, at: u32) -> u32 {
        u32::from_le_bytes(self.bytes(at, 4).try_into().unwrap())
    }
    fn u64(&self, at: u32) -> u64 {
        u64::from_le_bytes(self.bytes(at, 8).try_into().unwrap())
    }

    /// `path_open` of `path` relative to `dir`: the new descriptor, or the errno.
    fn open(&mut self, dir: i32, path: &str, oflags: i32, rights: u64) -> Result<i32, i32> {
        self.open_with(dir, path, oflags, rights, 0)
    }

    fn open_with(
        &mut self,
        dir: i32,
        path: &str,
        oflags: i32,
        rights: u64,
        dirflags: i32,
    ) -> Result<i32, i32> {
        self.put(PATH_AT, path.as_bytes());
        let len = path.len() as i32;
        let errno = self.call(|cx| {
            path_open(
                cx,
                dir,
                dirflags,
                PATH_AT as i32,
                len,
                oflags,
                rights as i64,
                rights::ALL as i64,
                0,
                RESULT_AT as i32,
            )
        });
        if errno == 0 {
            Ok(self.u32(RESULT_AT) as i32)
        } else {
            Err(errno)
        }
    }

    /// Calls a path function taking (fd, path, path_len).
    fn on_path(
        &mut self,
        function: fn(&mut WasiCx<'_>, i32, i32, i32) -> Result<i32, WasiExit>,
        dir: i32,
        path: &str,
    ) -> i32 {
        self.put(PATH_AT, path.as_bytes());
        let len = path.len() as i32;
        self.call(|cx| function(cx, dir, PATH_AT as i32, len))
    }

    /// Writes `data` to `fd` with one iovec per piece; the errno and the count written.
    fn write(&mut self, fd: i32, pieces: &[&[u8]]) -> (i32, u32) {
        let mut at = DATA_AT;
        for (index, piece) in pieces.iter().enumerate() {
            self.put(at, piece);
            self.put_u32(IOVECS_AT + 8 * index as u32, at);
            self.put_u32(IOVECS_AT + 8 * index as u32 + 4, piece.len() as u32);
            at += piece.len() as u32;
        }
        let count = pieces.len() as i32;
        let errno = self.call(|cx| fd_write(cx, fd, IOVECS_AT as i32, count, RESULT_AT as i32));
        (errno, self.u32(RESULT_AT))
    }

    /// Reads up to `len` bytes from `fd` with one iovec: the errno and the bytes read.
    fn read(&mut self, fd: i32, len: u32) -> (i32, Vec<u8>) {
        self.put_u32(IOVECS_AT, DATA_AT);
        self.put_u32(IOVECS_AT + 4, len);
        let errno = self.call(|cx| fd_read(cx, fd, IOVECS_AT as i32, 1, RESULT_AT as i32));
        let read = if errno == 0 { self.u32(RESULT_AT) } else { 0 };
        (errno, self.bytes(DATA_AT, read as usize).to_vec())
    }
}

/// A directory under the system's temporary directory, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "roslite-wasi-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn granting(dir: &Path, writable: bool) -> WasiConfig {
    WasiConfig {
        dirs: vec![AllowedDir {
            host: dir.to_path_buf(),
            guest: "/data".into(),
            writable,
        }],
        ..WasiConfig::default()
    }
}

/// The fd the first granted directory gets.
const PREOPEN: i32 = 3;
const READ: u64 = rights::FD_READ | rights::FD_READDIR;
const WRITE: u64 = rights::FD_WRITE;
const OFLAGS_CREAT: i32 = 1;
const OFLAGS_DIRECTORY: i32 = 2;

#[test]
fn args_and_environ_are_laid_out_as_preview1_says() {
    let mut guest = Guest::new(WasiConfig {
        args: vec!["talker".into(), "--ros-args".into()],
        env: vec![("ROS_DOMAIN_ID".into(), "7".into())],
        ..WasiConfig::default()
    });
    assert_eq!(guest.call(|cx| args_sizes_get(cx, 100, 104)), 0);
    assert_eq!((guest.u32(100), guest.u32(104)), (2, 7 + 11));
    assert_eq!(guest.call(|cx| args_get(cx, 200, 300)), 0);
    assert_eq!((guest.u32(200), guest.u32(204)), (300, 307));
    assert_eq!(guest.bytes(300, 18), b"talker\0--ros-args\0");

    assert_eq!(guest.call(|cx| environ_sizes_get(cx, 100, 104)), 0);
    assert_eq!((guest.u32(100), guest.u32(104)), (1, 16));
    assert_eq!(guest.call(|cx| environ_get(cx, 200, 300)), 0);
    assert_eq!(guest.u32(200), 300);
    assert_eq!(guest.bytes(300, 16), b"ROS_DOMAIN_ID=7\0");
}

#[test]
fn nothing_is_granted_by_default() {
    let mut guest = Guest::new(WasiConfig::default());
    guest.put_u32(100, 99);
    guest.put_u32(104, 99);
    assert_eq!(guest.call(|cx| environ_sizes_get(cx, 100, 104)), 0);
    assert_eq!((guest.u32(100), guest.u32(104)), (0, 0));
    assert_eq!(guest.call(|cx| args_sizes_get(cx, 100, 104)), 0);
    assert_eq!((guest.u32(100), guest.u32(104)), (0, 0));
    assert_eq!(
        guest.call(|cx| fd_prestat_get(cx, PREOPEN, 100)),
        Errno::BADF.code(),
        "no preopened directory"
    );
    assert_eq!(
        guest.open(PREOPEN, "etc/passwd", 0, READ),
        Err(Errno::BADF.code())
    );
    assert_eq!(
        guest.open(1, "etc/passwd", 0, READ),
        Err(Errno::NOTDIR.code())
    );
    assert_eq!(
        guest.call(|cx| sock_accept(cx, 1, 0, 100)),
        Errno::NOTCAPABLE.code()
    );
    assert_eq!(
        guest.call(|cx| sock_shutdown(cx, 40, 0)),
        Errno::BADF.code()
    );
    assert_eq!(guest.call(|cx| proc_raise(cx, 2)), Errno::NOSYS.code());
    assert_eq!(guest.call_raw(|cx| proc_exit(cx, 3)), Err(WasiExit(3)));
}

/// What a capturing sink was handed, write by write.
type Captured = Arc<Mutex<Vec<(OutputStream, Vec<u8>)>>>;

fn capturing() -> (WasiConfig, Captured) {
    let captured = Arc::new(Mutex::new(Vec::new()));
    let sink = captured.clone();
    let config = WasiConfig {
        output: Box::new(move |stream: OutputStream, bytes: &[u8]| {
            sink.lock().unwrap().push((stream, bytes.to_vec()))
        }),
        ..WasiConfig::default()
    };
    (config, captured)
}

#[test]
fn stdout_and_stderr_go_to_the_sink_and_stdin_is_at_its_end() {
    let (config, captured) = capturing();
    let mut guest = Guest::new(config);
    assert_eq!(guest.write(1, &[b"hello ", b"world\n"]), (0, 12));
    assert_eq!(guest.write(2, &[b"oops"]), (0, 4));
    assert_eq!(
        *captured.lock().unwrap(),
        vec![
            (OutputStream::Stdout, b"hello world\n".to_vec()),
            (OutputStream::Stderr, b"oops".to_vec()),
        ]
    );
    assert_eq!(guest.write(0, &[b"x"]).0, Errno::BADF.code());
    assert_eq!(guest.read(0, 16), (0, Vec::new()));
    assert_eq!(guest.read(1, 16).0, Errno::BADF.code());

    // Stdio looks like a terminal to wasi-libc: a character device that cannot seek.
    assert_eq!(guest.call(|cx| fd_fdstat_get(cx, 1, 100)), 0);
    assert_eq!(guest.bytes(100, 1)[0], 2);
    assert_eq!(guest.u64(108) & (1 << 2 | 1 << 5), 0);
    assert_eq!(
        guest.call(|cx| fd_seek(cx, 1, 0, 1, 100)),
        Errno::SPIPE.code()
    );
}

#[test]
fn line_sink_hands_over_whole_lines() {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let seen = lines.clone();
    let mut sink = LineSink::new(move |stream, line: &[u8]| {
        seen.lock()
            .unwrap()
            .push((stream, String::from_utf8_lossy(line).into_owned()))
    });
    sink.write(OutputStream::Stdout, b"one\ntw");
    sink.write(OutputStream::Stderr, b"err");
    sink.write(OutputStream::Stdout, b"o\nthree");
    drop(sink);
    let stdout = |text: &str| (OutputStream::Stdout, text.to_string());
    assert_eq!(
        *lines.lock().unwrap(),
        vec![
            stdout("one"),
            stdout("two"),
            stdout("three"),
            (OutputStream::Stderr, "err".to_string())
        ]
    );
}

#[test]
fn clocks_read_the_host_and_monotonic_takes_the_offset() {
    let mut guest = Guest::new(WasiConfig::default());
    assert_eq!(guest.call(|cx| clock_time_get(cx, 0, 0, 100)), 0);
    assert!(
        guest.u64(100) > 1_600_000_000 * 1_000_000_000,
        "realtime is after 2020"
    );
    assert_eq!(guest.call(|cx| clock_time_get(cx, 1, 0, 100)), 0);
    let before = guest.u64(100);
    guest.state.monotonic_offset_ns = 1_000_000_000_000;
    assert_eq!(guest.call(|cx| clock_time_get(cx, 1, 0, 100)), 0);
    assert!(guest.u64(100) >= before + 1_000_000_000_000);
    // A restored guest's clock goes on from the time it read where it was taken.
    guest.state.set_guest_monotonic_ns(5_000_000_000);
    assert_eq!(guest.call(|cx| clock_time_get(cx, 1, 0, 100)), 0);
    let restored = guest.u64(100);
    assert!(
        (5_000_000_000..6_000_000_000).contains(&restored),
        "{restored}"
    );
    assert_eq!(guest.call(|cx| clock_res_get(cx, 1, 100)), 0);
    assert!(guest.u64(100) > 0);
    assert_eq!(
        guest.call(|cx| clock_time_get(cx, 9, 0, 100)),
        Errno::INVAL.code()
    );
}

#[test]
fn random_get_fills_the_buffer() {
    let mut guest = Guest::new(WasiConfig::default());
    assert_eq!(guest.call(|cx| random_get(cx, DATA_AT as i32, 64)), 0);
    assert!(guest.bytes(DATA_AT, 64).iter().any(|&b| b != 0));
}

#[test]
fn a_granted_directory_can_be_read() {
    let dir = TempDir::new();
    std::fs::write(dir.path().join("hello.txt"), b"hello, guest").unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let mut guest = Guest::new(granting(dir.path(), false));

    assert_eq!(guest.call(|cx| fd_prestat_get(cx, PREOPEN, 100)), 0);
    assert_eq!((guest.bytes(100, 1)[0], guest.u32(104)), (0, 5));
    assert_eq!(guest.call(|cx| fd_prestat_dir_name(cx, PREOPEN, 200, 5)), 0);
    assert_eq!(guest.bytes(200, 5), b"/data");
    assert_eq!(
        guest.call(|cx| fd_prestat_get(cx, PREOPEN + 1, 100)),
        Errno::BADF.code()
    );

    let file = guest.open(PREOPEN, "hello.txt", 0, READ).unwrap();
    assert_eq!(file, PREOPEN + 1);
    assert_eq!(guest.read(file, 5), (0, b"hello".to_vec()));
    assert_eq!(guest.call(|cx| fd_tell(cx, file, 100)), 0);
    assert_eq!(guest.u64(100), 5);
    assert_eq!(guest.read(file, 100), (0, b", guest".to_vec()));
    assert_eq!(guest.read(file, 100), (0, Vec::new()), "end of file");
    assert_eq!(guest.call(|cx| fd_seek(cx, file, -5, 2, 100)), 0);
    assert_eq!(guest.u64(100), 7);

    guest.put_u32(IOVECS_AT, DATA_AT);
    guest.put_u32(IOVECS_AT + 4, 4);
    let errno = guest.call(|cx| fd_pread(cx, file, IOVECS_AT as i32, 1, 7, RESULT_AT as i32));
    assert_eq!((errno, guest.bytes(DATA_AT, 4)), (0, &b"gues"[..]));
    let errno = guest.call(|cx| fd_pread(cx, file, IOVECS_AT as i32, 1, -1, RESULT_AT as i32));
    assert_eq!(errno, Errno::INVAL.code());

    assert_eq!(guest.call(|cx| fd_filestat_get(cx, file, 100)), 0);
    assert_eq!(
        (guest.bytes(116, 1)[0], guest.u64(132)),
        (4, 12),
        "regular file, 12 bytes"
    );
    guest.put(PATH_AT, b"sub");
    assert_eq!(
        guest.call(|cx| path_filestat_get(cx, PREOPEN, 0, PATH_AT as i32, 3, 100)),
        0
    );
    assert_eq!(guest.bytes(116, 1)[0], 3, "a directory");
    assert_eq!(
        guest.write(file, &[b"no"]).0,
        Errno::BADF.code(),
        "opened for reading"
    );

    let sub = guest.open(PREOPEN, "sub", OFLAGS_DIRECTORY, READ).unwrap();
    assert_eq!(
        guest.call(|cx| fd_readdir(cx, PREOPEN, DATA_AT as i32, 1024, 0, 100)),
        0
    );
    let names = dirent_names(guest.bytes(DATA_AT, guest.u32(100) as usize));
    assert!(names.contains(&"hello.txt".to_string()) && names.contains(&"sub".to_string()));

    // What a snapshot cannot carry: the two the guest opened, not stdio or the preopen.
    assert_eq!(guest.state.opened_file_count(), 2);
    assert_eq!(guest.call(|cx| fd_close(cx, file)), 0);
    assert_eq!(guest.read(file, 4).0, Errno::BADF.code());
    assert_eq!(guest.call(|cx| fd_close(cx, file)), Errno::BADF.code());
    assert_eq!(guest.call(|cx| fd_close(cx, sub)), 0);
    assert_eq!(guest.state.opened_file_count(), 0);
}

/// The names in a buffer of `dirent` records (24-byte header, `d_namlen` at 16, then the name).
fn dirent_names(mut buffer: &[u8]) -> Vec<String> {
    let mut names = Vec::new();
    while buffer.len() >= 24 {
        let len = u32::from_le_bytes(buffer[16..20].try_into().unwrap()) as usize;
        let Some(name) = buffer.get(24..24 + len) else {
            break;
        };
        names.push(String::from_utf8_lossy(name).into_owned());
        buffer = &buffer[24 + len..];
    }
    names
}

#[test]
fn fd_readdir_continues_from_its_cookie_in_small_buffers() {
    let dir = TempDir::new();
    for name in ["a", "b", "c", "d"] {
        std::fs::write(dir.path().join(name), b"").unwrap();
    }
    let mut guest = Guest::new(granting(dir.path(), false));
    let mut names = Vec::new();
    let mut cookie = 0i64;
    loop {
        // Room for one 25-byte record: each call returns one (and the start of the next).
        let errno = guest.call(|cx| fd_readdir(cx, PREOPEN, DATA_AT as i32, 30, cookie, 100));
        assert_eq!(errno, 0);
        let used = guest.u32(100) as usize;
        if used < 24 {
            break;
        }
        let record = guest.bytes(DATA_AT, used).to_vec();
        let len = u32::from_le_bytes(record[16..20].try_into().unwrap()) as usize;
        names.push(String::from_utf8_lossy(&record[24..24 + len]).into_owned());
        cookie = u64::from_le_bytes(record[0..8].try_into().unwrap()) as i64;
    }
    names.sort();
    assert_eq!(names, [".", "..", "a", "b", "c", "d"]);
}

#[test]
fn paths_cannot_escape_the_granted_directory() {
    let outer = TempDir::new();
    std::fs::write(outer.path().join("secret.txt"), b"host only").unwrap();
    let granted = outer.path().join("granted");
    std::fs::create_dir(&granted).unwrap();
    std::os::unix::fs::symlink("/etc", granted.join("absolute")).unwrap();
    std::os::unix::fs::symlink("..", granted.join("up")).unwrap();
    std::os::unix::fs::symlink("../secret.txt", granted.join("secret-link")).unwrap();
    let mut guest = Guest::new(granting(&granted, true));
    let follow = 1;

    let refused = Err(Errno::NOTCAPABLE.code());
    assert_eq!(guest.open(PREOPEN, "../secret.txt", 0, READ), refused);
    assert_eq!(guest.open(PREOPEN, "/etc/passwd", 0, READ), refused);
    assert_eq!(guest.open(PREOPEN, "absolute/passwd", 0, READ), refused);
    assert_eq!(guest.open(PREOPEN, "up/secret.txt", 0, READ), refused);
    assert_eq!(
        guest.open_with(PREOPEN, "secret-link", 0, READ, follow),
        refused
    );
    assert_eq!(
        guest.open(PREOPEN, "secret-link", 0, READ),
        Err(Errno::LOOP.code()),
        "a last-component symlink is not followed without symlink_follow"
    );
    assert_eq!(
        guest.open(PREOPEN, "../granted/../../etc/passwd", 0, READ),
        refused
    );

    guest.put(PATH_AT, b"../secret.txt");
    let errno = guest.call(|cx| path_filestat_get(cx, PREOPEN, follow, PATH_AT as i32, 13, 100));
    assert_eq!(errno, Errno::NOTCAPABLE.code());
    assert_eq!(
        guest.on_path(path_unlink_file, PREOPEN, "../secret.txt"),
        Errno::NOTCAPABLE.code()
    );
    assert_eq!(
        guest.on_path(path_unlink_file, PREOPEN, "up/secret.txt"),
        Errno::NOTCAPABLE.code()
    );
    assert_eq!(
        guest.on_path(path_create_directory, PREOPEN, "absolute/new"),
        Errno::NOTCAPABLE.code()
    );
    assert_eq!(
        guest.open(PREOPEN, "up/new.txt", OFLAGS_CREAT, WRITE),
        refused
    );
    assert!(outer.path().join("secret.txt").exists());
    assert!(!outer.path().join("new.txt").exists());
}

#[test]
fn a_read_only_grant_refuses_every_write() {
    let dir = TempDir::new();
    std::fs::write(dir.path().join("data.txt"), b"keep").unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let mut guest = Guest::new(granting(dir.path(), false));
    let read_only = Errno::ROFS.code();

    assert_eq!(
        guest.open(PREOPEN, "data.txt", 0, READ | WRITE),
        Err(read_only)
    );
    assert_eq!(
        guest.open(PREOPEN, "new.txt", OFLAGS_CREAT, READ),
        Err(read_only)
    );
    assert_eq!(
        guest.open(PREOPEN, "data.txt", 8, READ),
        Err(read_only),
        "trunc"
    );
    assert_eq!(
        guest.on_path(path_create_directory, PREOPEN, "new"),
        read_only
    );
    assert_eq!(
        guest.on_path(path_unlink_file, PREOPEN, "data.txt"),
        read_only
    );
    assert_eq!(
        guest.on_path(path_remove_directory, PREOPEN, "sub"),
        read_only
    );

    let file = guest.open(PREOPEN, "data.txt", 0, READ).unwrap();
    assert_eq!(
        guest.call(|cx| fd_filestat_set_size(cx, file, 0)),
        read_only
    );
    assert_eq!(std::fs::read(dir.path().join("data.txt")).unwrap(), b"keep");
    assert!(!dir.path().join("new.txt").exists());
    assert!(dir.path().join("sub").exists());
}

#[test]
fn a_writable_grant_can_be_changed() {
    let dir = TempDir::new();
    let mut guest = Guest::new(granting(dir.path(), true));

    let file = guest
        .open(PREOPEN, "out.txt", OFLAGS_CREAT, READ | WRITE)
        .unwrap();
    assert_eq!(guest.write(file, &[b"hello ", b"file"]), (0, 10));
    guest.put(DATA_AT, b"HELLO");
    guest.put_u32(IOVECS_AT, DATA_AT);
    guest.put_u32(IOVECS_AT + 4, 5);
    let errno = guest.call(|cx| fd_pwrite(cx, file, IOVECS_AT as i32, 1, 0, RESULT_AT as i32));
    assert_eq!((errno, guest.u32(RESULT_AT)), (0, 5));
    assert_eq!(guest.call(|cx| fd_sync(cx, file)), 0);
    assert_eq!(
        std::fs::read(dir.path().join("out.txt")).unwrap(),
        b"HELLO file"
    );

    assert_eq!(guest.on_path(path_create_directory, PREOPEN, "logs/"), 0);
    assert!(dir.path().join("logs").is_dir());
    assert_eq!(
        guest.on_path(path_create_directory, PREOPEN, "logs"),
        Errno::EXIST.code()
    );
    guest.put(PATH_AT, b"out.txt");
    guest.put(PATH_AT + 100, b"logs/moved.txt");
    let errno = guest.call(|cx| {
        path_rename(
            cx,
            PREOPEN,
            PATH_AT as i32,
            7,
            PREOPEN,
            PATH_AT as i32 + 100,
            14,
        )
    });
    assert_eq!(errno, 0);
    assert!(dir.path().join("logs/moved.txt").exists());
    assert_eq!(
        guest.on_path(path_remove_directory, PREOPEN, "logs"),
        Errno::NOTEMPTY.code()
    );
    assert_eq!(
        guest.on_path(path_unlink_file, PREOPEN, "logs/moved.txt"),
        0
    );
    assert_eq!(guest.on_path(path_remove_directory, PREOPEN, "logs"), 0);
    assert!(!dir.path().join("logs").exists());
}

#[test]
fn pointers_outside_memory_are_efault_not_a_panic() {
    let (config, captured) = capturing();
    let mut guest = Guest::new(config);
    let end = MEMORY_SIZE as i32;
    let fault = Errno::FAULT.code();

    assert_eq!(
        guest.call(|cx| fd_write(cx, 1, end - 4, 1, RESULT_AT as i32)),
        fault
    );
    guest.put_u32(IOVECS_AT, end as u32 - 2);
    guest.put_u32(IOVECS_AT + 4, 10);
    assert_eq!(
        guest.call(|cx| fd_write(cx, 1, IOVECS_AT as i32, 1, RESULT_AT as i32)),
        fault
    );
    guest.put_u32(IOVECS_AT, u32::MAX);
    assert_eq!(
        guest.call(|cx| fd_read(cx, 0, IOVECS_AT as i32, 1, RESULT_AT as i32)),
        fault
    );
    assert!(
        captured.lock().unwrap().is_empty(),
        "nothing written on a fault"
    );

    assert_eq!(
        guest.call(|cx| fd_write(cx, 1, IOVECS_AT as i32, 0, end)),
        fault
    );
    assert_eq!(guest.call(|cx| clock_time_get(cx, 0, 0, end - 4)), fault);
    assert_eq!(guest.call(|cx| clock_time_get(cx, 0, 0, -1)), fault);
    assert_eq!(guest.call(|cx| random_get(cx, end - 8, 16)), fault);
    assert_eq!(guest.call(|cx| args_sizes_get(cx, end, 0)), fault);
    assert_eq!(guest.call(|cx| fd_fdstat_get(cx, 1, end - 8)), fault);
    assert_eq!(
        guest.call(|cx| fd_prestat_dir_name(cx, 1, end, 4)),
        Errno::BADF.code()
    );
    assert_eq!(
        guest.call(|cx| poll_oneoff_here(cx, end - 8, 0, 1, 100)),
        fault
    );
    assert_eq!(
        guest.call(|cx| poll_oneoff_here(cx, 0, end - 8, 1, 100)),
        fault
    );

    let dir = TempDir::new();
    std::fs::write(dir.path().join("f"), b"").unwrap();
    let mut guest = Guest::new(granting(dir.path(), true));
    let errno = guest.call(|cx| {
        path_open(
            cx,
            PREOPEN,
            0,
            end - 2,
            8,
            0,
            READ as i64,
            0,
            0,
            RESULT_AT as i32,
        )
    });
    assert_eq!(errno, fault);
    guest.put(PATH_AT, b"f");
    let errno =
        guest.call(|cx| path_open(cx, PREOPEN, 0, PATH_AT as i32, 1, 0, READ as i64, 0, 0, end));
    assert_eq!(errno, fault);
    assert_eq!(
        guest.state.open_fd_count(),
        4,
        "no descriptor left open by a fault"
    );
    assert_eq!(
        guest.call(|cx| fd_readdir(cx, PREOPEN, end - 8, 64, 0, 100)),
        fault
    );
}

/// Writes a clock subscription (`subscription_clock` in the union at 16) at `at`.
fn put_clock_subscription(
    guest: &mut Guest,
    at: u32,
    userdata: u64,
    clock: u32,
    timeout_ns: u64,
    absolute: bool,
) {
    guest.put(at, &[0; 48]);
    guest.put_u64(at, userdata);
    guest.put(at + 8, &[0]);
    guest.put_u32(at + 16, clock);
    guest.put_u64(at + 24, timeout_ns);
    guest.put(at + 40, &[absolute as u8, 0]);
}

#[test]
fn poll_oneoff_sleeps_on_clock_subscriptions() {
    let mut guest = Guest::new(WasiConfig::default());
    let (subscriptions, events) = (DATA_AT, DATA_AT + 1024);

    put_clock_subscription(&mut guest, subscriptions, 0xABCD, 1, 30_000_000, false);
    let started = Instant::now();
    let errno = guest.call(|cx| poll_oneoff_here(cx, subscriptions as i32, events as i32, 1, 100));
    assert_eq!(errno, 0);
    assert!(started.elapsed() >= Duration::from_millis(30), "it slept");
    assert_eq!(guest.u32(100), 1);
    assert_eq!(guest.u64(events), 0xABCD);
    assert_eq!(
        guest.bytes(events + 8, 3),
        [0, 0, 0],
        "no error, eventtype clock"
    );

    // An absolute deadline on the monotonic clock as the guest reads it.
    assert_eq!(guest.call(|cx| clock_time_get(cx, 1, 0, 200)), 0);
    let deadline = guest.u64(200) + 20_000_000;
    put_clock_subscription(&mut guest, subscriptions, 7, 1, deadline, true);
    let started = Instant::now();
    let errno = guest.call(|cx| poll_oneoff_here(cx, subscriptions as i32, events as i32, 1, 100));
    assert_eq!((errno, guest.u32(100), guest.u64(events)), (0, 1, 7));
    assert!(started.elapsed() >= Duration::from_millis(19));

    // A descriptor subscription is answered at once, with the one that is not open as EBADF.
    put_clock_subscription(&mut guest, subscriptions, 1, 1, 3_600_000_000_000, false);
    for (index, fd) in [(1u32, 1u32), (2, 50)] {
        let at = subscriptions + 48 * index;
        guest.put(at, &[0; 48]);
        guest.put_u64(at, 10 + index as u64);
        guest.put(at + 8, &[2]);
        guest.put_u32(at + 16, fd);
    }
    let errno = guest.call(|cx| poll_oneoff_here(cx, subscriptions as i32, events as i32, 3, 100));
    assert_eq!(
        (errno, guest.u32(100)),
        (0, 2),
        "the hour-long timer is not due"
    );
    assert_eq!(
        (guest.u64(events), guest.bytes(events + 8, 3)),
        (11, &[0, 0, 2][..])
    );
    let second = events + 32;
    assert_eq!(guest.u64(second), 12);
    assert_eq!(guest.bytes(second + 8, 2), Errno::BADF.0.to_le_bytes());

    assert_eq!(
        guest.call(|cx| poll_oneoff_here(cx, subscriptions as i32, events as i32, 0, 100)),
        Errno::INVAL.code()
    );
    let too_many = MAX_POLL_SUBSCRIPTIONS as i32 + 1;
    assert_eq!(
        guest.call(|cx| poll_oneoff_here(cx, 0, 0, too_many, 100)),
        Errno::NOTSUP.code()
    );
}

#[test]
fn the_fd_table_is_capped() {
    let dir = TempDir::new();
    std::fs::write(dir.path().join("f"), b"").unwrap();
    let mut guest = Guest::new(granting(dir.path(), false));
    let mut opened = Vec::new();
    loop {
        match guest.open(PREOPEN, "f", 0, READ) {
            Ok(fd) => opened.push(fd),
            Err(errno) => {
                assert_eq!(errno, Errno::MFILE.code());
                break;
            }
        }
    }
    assert_eq!(
        opened.len(),
        MAX_OPEN_FDS - 4,
        "stdio and the preopen count too"
    );
    assert_eq!(guest.state.open_fd_count(), MAX_OPEN_FDS);
    assert_eq!(guest.call(|cx| fd_close(cx, 10)), 0);
    assert_eq!(
        guest.open(PREOPEN, "f", 0, READ),
        Ok(10),
        "the lowest free number again"
    );

    let too_many = (0..MAX_OPEN_FDS)
        .map(|index| AllowedDir {
            host: dir.path().to_path_buf(),
            guest: format!("/d{index}"),
            writable: false,
        })
        .collect();
    let config = WasiConfig {
        dirs: too_many,
        ..WasiConfig::default()
    };
    assert!(matches!(
        WasiState::new(config),
        Err(WasiSetupError::TooManyDirs { .. })
    ));
}

#[test]
fn every_function_links_and_answers_with_an_errno() {
    /// Each function with all-zero arguments, as the engine glue would call it.
    macro_rules! each_with_zero_arguments {
        ($( $name:ident ( $( $arg:ident : $ty:ident ),* ) -> $result:ident ; )*) => {
            vec![$( each_with_zero_arguments!(@one $name($($ty),*) -> $result) ),*]
        };
        (@one $name:ident($($ty:ident),*) -> sleeps) => {
            (
                stringify!($name),
                "errno",
                (|cx: &mut WasiCx<'_>| {
                    match crate::wasi::$name(cx, $( 0 as $ty, )* PollPhase::Begin)? {
                        Polled::Done(errno) => Ok(errno),
                        Polled::Sleep(span) => panic!("no subscriptions, yet a sleep of {span:?}"),
                    }
                }) as fn(&mut WasiCx<'_>) -> Result<i32, WasiExit>,
            )
        };
        (@one $name:ident($($ty:ident),*) -> $result:ident) => {
            (
                stringify!($name),
                stringify!($result),
                (|cx: &mut WasiCx<'_>| crate::wasi::$name(cx, $( 0 as $ty ),*))
                    as fn(&mut WasiCx<'_>) -> Result<i32, WasiExit>,
            )
        };
    }
    let functions = crate::wasi::wasi_functions!(each_with_zero_arguments);
    let mut names: Vec<_> = functions.iter().map(|(name, _, _)| *name).collect();
    names.sort();
    names.dedup();
    assert_eq!(
        names.len(),
        46,
        "every wasi_snapshot_preview1 function, once"
    );

    let mut guest = Guest::new(WasiConfig::default());
    for (name, result, function) in functions {
        match (guest.call_raw(function), result) {
            (Ok(errno), "errno") => assert!((0..=76).contains(&errno), "{name}: {errno}"),
            (Err(WasiExit(0)), "noreturn") => {}
            (outcome, _) => panic!("{name}: {outcome:?}"),
        }
    }
}
