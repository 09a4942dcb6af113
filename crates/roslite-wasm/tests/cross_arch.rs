//! WebAssembly nodes on another CPU architecture (docs/migration.md, "Another CPU
//! architecture"): the lean host (`roslite-wasm-host`, wasmtime's runtime and wasmi) built for
//! aarch64-unknown-linux-gnu with Debian's cross linker runs under qemu-user in one network
//! namespace; the test process (x86_64) is in another, and the two are joined by a veth pair,
//! so the hosts talk RTPS over UDP as two machines on a LAN would:
//!
//! ```text
//!   roslite-xarch-a-<pid>-<n>                      roslite-xarch-b-<pid>-<n>
//!   qemu-aarch64 roslite-wasm-host                 this test: native sender, x86_64 hosts
//!   xarch 10.214.0.1/30        <---- veth ---->    xarch 10.214.0.2/30
//! ```
//!
//! The guest is the deterministic replier (tests/guests/deterministic_reply.c: every reply
//! depends on all it heard before, through integers, libm's floating point and text on its
//! heap). The aarch64 host must answer byte for byte as an x86_64 host does, on wasmtime (a
//! `.cwasm` compiled on this machine for aarch64, as `roslite wasm compile --target` does) and
//! on wasmi (the `.wasm`); and the replier, moved from x86_64 to aarch64 and back between
//! callbacks, on both engines, must answer as a replier that never moved.
//!
//! Until `roslite host` exists the aarch64 host is driven through the lean host's
//! `--migration-stdio` commands. The aarch64 build is cached in `target/cross-aarch64`; its
//! first build takes minutes (printed, and quoted in docs/migration.md).
//!
//! Without the cross toolchain (Debian's gcc-aarch64-linux-gnu, qemu-user, the Rust target
//! aarch64-unknown-linux-gnu; `cargo xtask test` installs them) the tests print why and are
//! skipped, unless `CI` is set: there they fail.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use roslite::msgs::std_msgs::msg::String as StringMsg;
use roslite_transport::netns::NetNs;
use roslite_wasm::{EngineKind, GuestSpec, Host, HostOptions};

mod common;

const AARCH64: &str = "aarch64-unknown-linux-gnu";
/// Where Debian's libc6-arm64-cross puts the aarch64 C library and loader: qemu-aarch64's
/// `-L`, for the dynamically linked host.
const AARCH64_SYSROOT: &str = "/usr/aarch64-linux-gnu";
const CROSS_LINKER: &str = "aarch64-linux-gnu-gcc";
const QEMU: &str = "qemu-aarch64";
/// The cargo profile of the aarch64 host: see [`aarch64_host_program`].
const PROFILE: &str = "dev";
const DOMAIN: u32 = 44;
/// The replier's node name (its file's stem).
const NODE: &str = "deterministic_reply";
/// How long anything that goes through the emulated host may take: qemu-user runs the
/// aarch64 code about ten times slower than the machine would.
const EMULATED: Duration = Duration::from_secs(60);
/// The emulated host's callback deadline (`--deadline-ms`), for the same reason.
const EMULATED_DEADLINE: Duration = Duration::from_secs(30);

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// What of the cross toolchain is missing, with how to get it; empty when all is there.
fn missing_cross_toolchain() -> Vec<String> {
    let mut missing = Vec::new();
    if !on_path(CROSS_LINKER) {
        missing.push(format!(
            "{CROSS_LINKER} (Debian package gcc-aarch64-linux-gnu)"
        ));
    }
    if !Path::new(AARCH64_SYSROOT)
        .join("lib/ld-linux-aarch64.so.1")
        .exists()
    {
        missing.push(format!(
            "the aarch64 C library in {AARCH64_SYSROOT} (Debian package libc6-arm64-cross)"
        ));
    }
    if !on_path(QEMU) {
        missing.push(format!("{QEMU} (Debian package qemu-user)"));
    }
    let target_installed = Command::new("rustc")
        .args(["--print", "target-libdir", "--target", AARCH64])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .is_some_and(|dir| {
            std::fs::read_dir(dir).is_ok_and(|mut entries| {
                entries.any(|e| {
                    e.is_ok_and(|e| e.file_name().to_string_lossy().starts_with("libstd-"))
                })
            })
        });
    if !target_installed {
        missing.push(format!(
            "Rust's standard library for {AARCH64} (`rustup target add {AARCH64}`)"
        ));
    }
    missing
}

/// Whether the test can run; outside CI a missing toolchain prints why and skips the test,
/// in CI it fails it.
fn cross_toolchain_present(test: &str) -> bool {
    let missing = missing_cross_toolchain();
    if missing.is_empty() {
        return true;
    }
    let what = missing.join(", ");
    assert!(
        !in_ci(),
        "CI is set but the cross-architecture toolchain is not: {what} (`cargo xtask test` \
         installs them)"
    );
    eprintln!(
        "SKIPPED {test}: missing {what}; `cargo xtask test` installs them (with CI=true this \
         is a failure)"
    );
    false
}

/// `roslite-wasm-host` for aarch64, built (or found up to date) in `target/cross-aarch64`
/// with the smallest set of features that runs both engines: wasmtime's runtime (`.cwasm`
/// only, no Cranelift) and wasmi (which needs the instrumentation pass), without `definitions`
/// (the guests use only built-in types). The dev profile: a clean build takes under 4 minutes
/// of a loaded 2-core machine where the release profile's fat LTO takes over 20, and it runs
/// fast enough under qemu (docs/migration.md has the figures). Its own target directory, so
/// the nested cargo does not wait for the lock of the `cargo test` that runs this.
fn aarch64_host_program() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .parent()
            .expect("CARGO_TARGET_TMPDIR is target/tmp")
            .join("cross-aarch64");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let started = Instant::now();
        let output = Command::new(&cargo)
            .current_dir(common::workspace())
            .args(["build", "--profile", PROFILE, "-p", "roslite-wasm"])
            .args(["--no-default-features", "--features", "wasmi"])
            .args(["--bin", "roslite-wasm-host", "--target", AARCH64])
            .arg("--target-dir")
            .arg(&target_dir)
            .output()
            .expect("run cargo");
        assert!(
            output.status.success(),
            "building the aarch64 host failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        // Cargo's folder of the dev profile is named debug.
        let folder = if PROFILE == "dev" { "debug" } else { PROFILE };
        let program = target_dir
            .join(AARCH64)
            .join(folder)
            .join("roslite-wasm-host");
        let size = std::fs::metadata(&program).map(|m| m.len()).unwrap_or(0);
        eprintln!(
            "aarch64 roslite-wasm-host built (or found up to date) in {:.1} s: {} ({:.1} MiB)",
            started.elapsed().as_secs_f64(),
            program.display(),
            size as f64 / (1 << 20) as f64
        );
        program
    })
}

fn replier() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        common::c_guest(
            "crates/roslite-wasm/tests/guests/deterministic_reply.c",
            "deterministic_reply.wasm",
        )
    })
}

/// The replier compiled on this machine for aarch64's wasmtime. Its name is the node's (a
/// guest is named after its file), in a directory of its own.
fn replier_for_aarch64() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let wasm = std::fs::read(replier()).unwrap();
        let code = roslite_wasm::engine::wasmtime_engine::precompile(&wasm, Some(AARCH64)).unwrap();
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("wasm-guests-aarch64");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{NODE}.cwasm"));
        std::fs::write(&path, code).unwrap();
        path
    })
}

/// The module an aarch64 host on `engine` runs the replier from.
fn aarch64_module(engine: EngineKind) -> &'static Path {
    match engine {
        EngineKind::Wasmtime => replier_for_aarch64(),
        EngineKind::Wasmi => replier(),
    }
}

/// Two namespaces joined by a veth pair (module docs): `a` for the aarch64 hosts, `b` for this
/// process's contexts. Each side's multicast route goes over the pair (the harness made it on
/// `lo`), so SPDP multicast crosses it. Deleting the namespaces destroys the pair.
struct JoinedNamespaces {
    a: NetNs,
    b: NetNs,
}

fn joined_namespaces() -> JoinedNamespaces {
    const DEVICE: &str = "xarch";
    let a = NetNs::create("xarch-a").expect("a network namespace");
    let b = NetNs::create("xarch-b").expect("a network namespace");
    // Made inside the two namespaces directly: the machine's own namespace never sees it.
    a.ip(&[
        "link",
        "add",
        DEVICE,
        "type",
        "veth",
        "peer",
        "name",
        DEVICE,
        "netns",
        b.name(),
    ])
    .expect("a veth pair between the namespaces");
    for (ns, address) in [(&a, "10.214.0.1"), (&b, "10.214.0.2")] {
        ns.ip(&["addr", "add", &format!("{address}/30"), "dev", DEVICE])
            .unwrap();
        ns.ip(&["link", "set", DEVICE, "multicast", "on"]).unwrap();
        ns.ip(&["link", "set", DEVICE, "up"]).unwrap();
        ns.ip(&[
            "route",
            "replace",
            "224.0.0.0/4",
            "dev",
            DEVICE,
            "src",
            address,
        ])
        .unwrap();
    }
    JoinedNamespaces { a, b }
}

/// An aarch64 `roslite-wasm-host` under qemu-user in a namespace, driven through stdin; killed
/// on drop if still running.
struct EmulatedHost {
    child: Child,
    stdin: Option<ChildStdin>,
    answers: mpsc::Receiver<String>,
    stderr: Arc<Mutex<String>>,
    what: String,
}

impl EmulatedHost {
    /// `roslite-wasm-host --engine ENGINE --deadline-ms MS [--migration-stdio | --stop-on-stdin]
    /// NODES -- volatile`
    /// (the replier's argument for its volatile topics, as in migration.rs).
    fn start(ns: &NetNs, engine: EngineKind, nodes: &[&Path], migration_stdio: bool) -> Self {
        let mut command = ns.command(QEMU);
        command
            .args(["-L", AARCH64_SYSROOT])
            .arg(aarch64_host_program())
            .args(["--engine", engine.name()])
            // A guest's start (its node, endpoints and their discovery set up by imports it
            // calls) runs within its deadline, and takes over a second of emulated debug code.
            .args(["--deadline-ms", &EMULATED_DEADLINE.as_millis().to_string()])
            .arg(if migration_stdio {
                "--migration-stdio"
            } else {
                "--stop-on-stdin"
            })
            .args(nodes)
            .args(["--", "volatile"])
            .env("ROS_DOMAIN_ID", DOMAIN.to_string())
            .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
            .env_remove("ROS_STATIC_PEERS")
            .env_remove("ROS_LOCALHOST_ONLY")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("start qemu-aarch64");
        let stdin = child.stdin.take();
        let (tx, answers) = mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            // The guests print too ("REPLIED n"): only the host's answers are kept.
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(answer) = line.strip_prefix("migration: ") {
                    let _ = tx.send(answer.to_owned());
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        let mut pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buffer[..n]));
            }
        });
        Self {
            child,
            stdin,
            answers,
            stderr,
            what: format!("the aarch64 host on {}", engine.name()),
        }
    }

    /// Sends one `--migration-stdio` command and waits for its answer; panics with the
    /// host's error.
    fn command(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("the host's stdin is open");
        writeln!(stdin, "{line}").expect("write to the aarch64 host");
        stdin.flush().unwrap();
        match self.answers.recv_timeout(EMULATED) {
            Ok(answer) if answer == "ok" => {}
            Ok(error) => panic!("{}: `{line}`: {error}", self.what),
            Err(_) => panic!(
                "{} did not answer `{line}`; its stderr:\n{}",
                self.what,
                self.stderr.lock().unwrap()
            ),
        }
    }

    /// Sends `stop` and waits for the host to end; panics unless it ended well.
    fn stop(mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = writeln!(stdin, "stop");
        }
        let until = Instant::now() + EMULATED;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < until,
                "{} did not stop; its stderr:\n{}",
                self.what,
                self.stderr.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(
            status.success(),
            "{} ended with {status}; its stderr:\n{}",
            self.what,
            self.stderr.lock().unwrap()
        );
    }
}

impl Drop for EmulatedHost {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A context on RTPS over UDP in `ns`.
fn networked(ns: &NetNs) -> roslite::Context {
    common::networked(ns, DOMAIN)
}

/// The native x86_64 node: publishes numbers on /numbers_in, hears replies on /numbers_out.
struct Sender {
    context: roslite::Context,
    _node: roslite::Node,
    publisher: roslite::Publisher<StringMsg>,
    subscription: roslite::Subscription<StringMsg>,
    replies: mpsc::Receiver<String>,
    spinner: Option<std::thread::JoinHandle<()>>,
}

impl Sender {
    fn new(ns: &NetNs) -> Self {
        let context = networked(ns);
        let node = context.create_node("sender").unwrap();
        let qos = roslite::QosProfile::keep_last(100).reliable();
        let publisher = node.create_publisher("numbers_in", qos).unwrap();
        let (tx, replies) = mpsc::channel();
        let subscription = node
            .create_subscription("numbers_out", qos, move |m: StringMsg| {
                let _ = tx.send(m.data);
            })
            .unwrap();
        let executor = roslite::Executor::new(&context);
        executor.add_node(&node);
        let spinner = Some(std::thread::spawn(move || executor.spin()));
        Self {
            context,
            _node: node,
            publisher,
            subscription,
            replies,
            spinner,
        }
    }

    /// Waits until `replicas` copies of the replier's endpoints matched ours.
    fn await_matched(&self, replicas: usize) {
        let until = Instant::now() + EMULATED;
        while self.publisher.subscription_count() != replicas
            || self.subscription.publisher_count() != replicas
        {
            assert!(
                Instant::now() < until,
                "the replier's endpoints did not match ({} subscriptions, {} publishers, want \
                 {replicas})",
                self.publisher.subscription_count(),
                self.subscription.publisher_count()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Sends `numbers` one at a time, each after the reply to the one before.
    fn exchange(&self, numbers: std::ops::RangeInclusive<u32>) -> Vec<String> {
        numbers
            .map(|n| {
                self.publisher
                    .publish(StringMsg {
                        data: format!("number {n}: hello ünïcode"),
                    })
                    .unwrap();
                self.replies
                    .recv_timeout(EMULATED)
                    .unwrap_or_else(|_| panic!("no reply to number {n}"))
            })
            .collect()
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        self.context.shutdown();
        if let Some(spinner) = self.spinner.take() {
            spinner.join().ok();
        }
    }
}

/// An x86_64 host in this process, in `ns`, running `specs`.
fn local_host(ns: &NetNs, engine: EngineKind, specs: &[GuestSpec]) -> Host {
    Host::start(
        specs,
        &HostOptions {
            engine,
            context: Some(networked(ns)),
            node_args: vec!["volatile".into()],
            ..Default::default()
        },
    )
    .unwrap()
}

fn spec() -> GuestSpec {
    GuestSpec {
        path: replier().to_owned(),
    }
}

/// The replies of the replier run on an x86_64 host throughout, to `1..=count`.
fn on_x86_64(count: u32) -> Vec<String> {
    let ns = NetNs::create("xarch-ref").expect("a network namespace");
    let sender = Sender::new(&ns);
    let host = local_host(&ns, EngineKind::Wasmtime, &[spec()]);
    sender.await_matched(1);
    let replies = sender.exchange(1..=count);
    host.shutdown();
    host.wait();
    replies
}

/// The replier on the emulated aarch64 host answers the x86_64 sender across the veth pair
/// exactly as it answers on x86_64.
fn answers_alike_on_aarch64(engine: EngineKind) {
    const COUNT: u32 = 10;
    let expected = on_x86_64(COUNT);
    let joined = joined_namespaces();
    let sender = Sender::new(&joined.b);
    let started = Instant::now();
    let host = EmulatedHost::start(&joined.a, engine, &[aarch64_module(engine)], false);
    sender.await_matched(1);
    let matched = started.elapsed();
    let replies = sender.exchange(1..=COUNT);
    let exchanged = started.elapsed() - matched;
    eprintln!(
        "aarch64 under qemu, {}: started and matched in {:.2} s, {COUNT} request-replies in \
         {:.0} ms ({:.1} ms each)",
        engine.name(),
        matched.as_secs_f64(),
        exchanged.as_secs_f64() * 1e3,
        exchanged.as_secs_f64() * 1e3 / f64::from(COUNT)
    );
    assert_eq!(
        replies, expected,
        "the replies on aarch64 differ from those on x86_64"
    );
    host.stop();
}

#[test]
fn the_replier_answers_on_aarch64_wasmtime_as_on_x86_64() {
    if cross_toolchain_present("the_replier_answers_on_aarch64_wasmtime_as_on_x86_64") {
        answers_alike_on_aarch64(EngineKind::Wasmtime);
    }
}

#[test]
fn the_replier_answers_on_aarch64_wasmi_as_on_x86_64() {
    if cross_toolchain_present("the_replier_answers_on_aarch64_wasmi_as_on_x86_64") {
        answers_alike_on_aarch64(EngineKind::Wasmi);
    }
}

/// Where the snapshots and journals handed to and from the emulated hosts go.
fn scratch_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cross-arch-moves-{}", std::process::id()))
}

fn scratch(name: &str) -> PathBuf {
    let dir = scratch_dir();
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Moves the replier from the x86_64 `source` to the emulated `target` (on `engine`): the
/// target is prepared from the journal first (its endpoints match while the node still runs
/// here), then the node is frozen here between callbacks and resumed there.
fn x86_64_to_aarch64(
    sender: &Sender,
    source: &Host,
    target: &mut EmulatedHost,
    engine: EngineKind,
) {
    let started = Instant::now();
    let journal = scratch("journal-to-aarch64");
    std::fs::write(&journal, source.journal_of(NODE).unwrap()).unwrap();
    target.command(&format!(
        "prepare {} {}",
        aarch64_module(engine).display(),
        journal.display()
    ));
    sender.await_matched(2);
    let prepared = started.elapsed();
    let snapshot = scratch("snapshot-to-aarch64");
    let bytes = source.freeze_and_snapshot(NODE).unwrap();
    let size = bytes.len();
    std::fs::write(&snapshot, bytes).unwrap();
    let frozen = Instant::now();
    target.command(&format!("complete {}", snapshot.display()));
    let resumed = frozen.elapsed();
    source.end_migrated(NODE).unwrap();
    sender.await_matched(1);
    eprintln!(
        "x86_64 -> aarch64 {}: prepared in {:.2} s, snapshot {size} bytes, resumed {:.0} ms \
         after the freeze",
        engine.name(),
        prepared.as_secs_f64(),
        resumed.as_secs_f64() * 1e3
    );
}

/// Moves the replier from the emulated `source` back to the x86_64 `target`, the same way.
fn aarch64_to_x86_64(
    sender: &Sender,
    source: &mut EmulatedHost,
    engine: EngineKind,
    target: &Host,
) {
    let started = Instant::now();
    let journal = scratch("journal-from-aarch64");
    source.command(&format!("journal {NODE} {}", journal.display()));
    let prepared = target
        .prepare_restore(&spec(), &std::fs::read(&journal).unwrap())
        .unwrap();
    sender.await_matched(2);
    let ready = started.elapsed();
    let snapshot = scratch("snapshot-from-aarch64");
    let frozen = Instant::now();
    source.command(&format!("snapshot {NODE} {}", snapshot.display()));
    let bytes = std::fs::read(&snapshot).unwrap();
    target.complete_restore(prepared, &bytes).unwrap();
    let resumed = frozen.elapsed();
    source.command(&format!("end {NODE}"));
    sender.await_matched(1);
    eprintln!(
        "aarch64 {} -> x86_64: prepared in {:.2} s, snapshot {} bytes, resumed {:.0} ms after \
         the freeze was asked for",
        engine.name(),
        ready.as_secs_f64(),
        bytes.len(),
        resumed.as_secs_f64() * 1e3
    );
}

/// The replier starts on x86_64 (wasmtime), moves to aarch64 (wasmtime, a `.cwasm` compiled
/// for it), back to x86_64 (wasmi), to aarch64 (wasmi) and back to x86_64 (wasmtime, the host
/// it started on), answering three numbers on each: every reply is byte for byte that of a
/// replier that never moved.
#[test]
fn the_replier_moves_to_aarch64_and_back_with_its_state() {
    if !cross_toolchain_present("the_replier_moves_to_aarch64_and_back_with_its_state") {
        return;
    }
    let expected = on_x86_64(15);
    let joined = joined_namespaces();
    let sender = Sender::new(&joined.b);
    let x86_wasmtime = local_host(&joined.b, EngineKind::Wasmtime, &[spec()]);
    let x86_wasmi = local_host(&joined.b, EngineKind::Wasmi, &[]);
    let mut arm_wasmtime = EmulatedHost::start(&joined.a, EngineKind::Wasmtime, &[], true);
    let mut arm_wasmi = EmulatedHost::start(&joined.a, EngineKind::Wasmi, &[], true);
    sender.await_matched(1);
    let mut replies = sender.exchange(1..=3);

    x86_64_to_aarch64(
        &sender,
        &x86_wasmtime,
        &mut arm_wasmtime,
        EngineKind::Wasmtime,
    );
    replies.extend(sender.exchange(4..=6));
    aarch64_to_x86_64(&sender, &mut arm_wasmtime, EngineKind::Wasmtime, &x86_wasmi);
    replies.extend(sender.exchange(7..=9));
    x86_64_to_aarch64(&sender, &x86_wasmi, &mut arm_wasmi, EngineKind::Wasmi);
    replies.extend(sender.exchange(10..=12));
    aarch64_to_x86_64(&sender, &mut arm_wasmi, EngineKind::Wasmi, &x86_wasmtime);
    replies.extend(sender.exchange(13..=15));

    assert_eq!(
        replies, expected,
        "the replies of the replier moved across architectures differ from one that never moved"
    );
    arm_wasmtime.stop();
    arm_wasmi.stop();
    x86_wasmi.shutdown();
    x86_wasmtime.shutdown();
    for host in [&x86_wasmtime, &x86_wasmi] {
        for end in host.wait() {
            assert!(end.outcome.is_ok(), "{}: {:?}", end.name, end.outcome);
        }
    }
    std::fs::remove_dir_all(scratch_dir()).ok();
}
