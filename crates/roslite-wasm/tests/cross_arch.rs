//! WebAssembly nodes on another CPU architecture (docs/migration.md, "Another CPU
//! architecture"): the lean host (`roslite-wasm-host`, wasmtime's runtime and wasmi) built for
//! aarch64-unknown-linux-gnu with Debian's cross linker runs under qemu-user in one network
//! namespace; the test process (x86_64) is in another, and the two are joined by a veth pair,
//! so the hosts talk RTPS over UDP as two machines on a LAN would:
//!
//! ```text
//!   roslite-xarch-a-<pid>-<n>                      roslite-xarch-b-<pid>-<n>
//!   qemu-aarch64 roslite-wasm-host (aarch64)       this test's native node, x86_64 hosts
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
//! The hosts of the moves are `roslite host`s (the lean host with `--name`), two on each
//! architecture (wasmtime, wasmi), and each move is asked of the node's host over ROS 2, as
//! `roslite migrate` asks it. The aarch64 build is cached in `target/cross-aarch64`; its first
//! build takes minutes (printed, and quoted in docs/migration.md).
//!
//! Without the cross toolchain (Debian's gcc-aarch64-linux-gnu, qemu-user, the Rust target
//! aarch64-unknown-linux-gnu; `cargo xtask test` installs them) the tests print why and are
//! skipped, unless `CI` is set: there they fail.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use roslite::msgs::roslite_interfaces::srv::{MigrateNode, MigrateNode_Request};
use roslite_transport::netns::NetNs;
use roslite_wasm::{EngineKind, GuestSpec, Host, HostOptions};

mod common;

const DOMAIN: u32 = 45;
/// The replier's node name (its file's stem).
const NODE: &str = "deterministic_reply";
/// How long anything that goes through the emulated host may take: qemu-user runs the
/// aarch64 code about ten times slower than the machine would.
const EMULATED: Duration = Duration::from_secs(60);

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}

/// Whether the test can run; outside CI a missing toolchain prints why and skips the test,
/// in CI it fails it.
fn cross_toolchain_present(test: &str) -> bool {
    let missing = roslite_wasm::cross::missing_toolchain();
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
        let (program, took) = roslite_wasm::cross::build_host(&common::workspace(), &target_dir)
            .unwrap_or_else(|e| panic!("{e}"));
        let size = std::fs::metadata(&program).map(|m| m.len()).unwrap_or(0);
        eprintln!(
            "aarch64 roslite-wasm-host built (or found up to date) in {:.1} s: {} ({:.1} MiB)",
            took.as_secs_f64(),
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
        let code = roslite_wasm::engine::wasmtime_engine::precompile(
            &wasm,
            Some(roslite_wasm::cross::AARCH64),
        )
        .unwrap();
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

/// A `roslite-wasm-host` process in a namespace (the aarch64 one under qemu-user), stopped
/// with `stop` on its stdin (`--stop-on-stdin`); killed on drop if still running.
struct HostProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    stderr: Arc<Mutex<String>>,
    what: String,
}

/// Which `roslite-wasm-host` to start.
#[derive(Clone, Copy)]
enum Machine {
    /// The aarch64 build, under qemu-user.
    Aarch64,
    /// This crate's own build, for this machine.
    X86_64,
}

impl HostProcess {
    /// `roslite-wasm-host --engine ENGINE --stop-on-stdin ARGS` in `ns` on `machine` (the
    /// emulated one with a callback deadline of [`EMULATED_DEADLINE`]).
    fn start(ns: &NetNs, machine: Machine, engine: EngineKind, args: &[&OsStr]) -> Self {
        let mut command = match machine {
            Machine::Aarch64 => {
                // `qemu-aarch64 -L SYSROOT HOST --deadline-ms ...`, inside the namespace.
                let emulated = roslite_wasm::cross::command(aarch64_host_program());
                let mut command = ns.command(emulated.get_program());
                command.args(emulated.get_args());
                command
            }
            Machine::X86_64 => ns.command(env!("CARGO_BIN_EXE_roslite-wasm-host")),
        };
        command
            .args(["--engine", engine.name(), "--stop-on-stdin"])
            .args(args)
            .env("ROS_DOMAIN_ID", DOMAIN.to_string())
            .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
            .env_remove("ROS_STATIC_PEERS")
            .env_remove("ROS_LOCALHOST_ONLY")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("start roslite-wasm-host");
        let stdin = child.stdin.take();
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
        let what = match machine {
            Machine::Aarch64 => "the aarch64 host",
            Machine::X86_64 => "the x86_64 host",
        };
        Self {
            child,
            stdin,
            stderr,
            what: format!("{what} on {}", engine.name()),
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

impl Drop for HostProcess {
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

/// The native x86_64 node, in this process.
fn sender(ns: &NetNs) -> common::Sender {
    common::Sender::new(networked(ns), 100, EMULATED)
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
    let sender = sender(&ns);
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
    let sender = sender(&joined.b);
    aarch64_host_program();
    let started = Instant::now();
    let host = HostProcess::start(
        &joined.a,
        Machine::Aarch64,
        engine,
        &[
            aarch64_module(engine).as_os_str(),
            OsStr::new("--"),
            OsStr::new("volatile"),
        ],
    );
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

/// The replier's module for a host `roslite host --module-dir` on `machine` and `engine`,
/// alone in a directory of its own (a host looks the module of a node moved to it up by name,
/// `.cwasm` first on wasmtime).
fn module_dir(machine: Machine, engine: EngineKind) -> PathBuf {
    let name = match (machine, engine) {
        (Machine::Aarch64, EngineKind::Wasmtime) => "aarch64-wasmtime",
        (Machine::Aarch64, EngineKind::Wasmi) => "aarch64-wasmi",
        (Machine::X86_64, EngineKind::Wasmtime) => "x86_64-wasmtime",
        (Machine::X86_64, EngineKind::Wasmi) => "x86_64-wasmi",
    };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("cross-arch-modules")
        .join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let module = match (machine, engine) {
        (Machine::Aarch64, EngineKind::Wasmtime) => replier_for_aarch64().to_owned(),
        (Machine::X86_64, EngineKind::Wasmtime) => {
            let wasm = std::fs::read(replier()).unwrap();
            let code = roslite_wasm::engine::wasmtime_engine::precompile(&wasm, None).unwrap();
            let path = dir.join(format!("{NODE}.cwasm"));
            std::fs::write(&path, code).unwrap();
            path
        }
        (_, EngineKind::Wasmi) => replier().to_owned(),
    };
    let extension = module.extension().unwrap().to_owned();
    let copy = dir.join(NODE).with_extension(extension);
    if copy != module {
        std::fs::copy(&module, &copy).unwrap();
    }
    dir
}

/// The four hosts of the round trip and the names they are known by.
const HOSTS: [(&str, Machine, EngineKind); 4] = [
    ("x86_wasmtime", Machine::X86_64, EngineKind::Wasmtime),
    ("arm_wasmtime", Machine::Aarch64, EngineKind::Wasmtime),
    ("x86_wasmi", Machine::X86_64, EngineKind::Wasmi),
    ("arm_wasmi", Machine::Aarch64, EngineKind::Wasmi),
];

/// `roslite host --name NAME` (the lean host with `--name`) on `machine`, accepting nodes from
/// the other hosts of [`HOSTS`]; running the replier if `runs_replier`.
fn named_host(
    joined: &JoinedNamespaces,
    name: &str,
    machine: Machine,
    engine: EngineKind,
    runs_replier: bool,
) -> HostProcess {
    let others: Vec<&str> = HOSTS
        .iter()
        .map(|(n, _, _)| *n)
        .filter(|n| *n != name)
        .collect();
    let others = others.join(",");
    let dir = module_dir(machine, engine);
    let mut args: Vec<&OsStr> = vec![
        OsStr::new("--name"),
        OsStr::new(name),
        OsStr::new("--accept-from"),
        OsStr::new(&others),
        OsStr::new("--module-dir"),
        dir.as_os_str(),
    ];
    let module = dir.join(match engine {
        EngineKind::Wasmtime => format!("{NODE}.cwasm"),
        EngineKind::Wasmi => format!("{NODE}.wasm"),
    });
    if runs_replier {
        args.push(module.as_os_str());
    }
    // The replier's argument for its volatile topics, as in migration.rs.
    args.extend([OsStr::new("--"), OsStr::new("volatile")]);
    let ns = match machine {
        Machine::Aarch64 => &joined.a,
        Machine::X86_64 => &joined.b,
    };
    HostProcess::start(ns, machine, engine, &args)
}

/// Asks host `from` over ROS 2 (`/roslite_host/FROM/migrate_node`, what `roslite migrate`
/// calls) to move the replier to host `to`; panics with its reason if it did not move.
fn migrate(sender: &common::Sender, from: &str, to: &str) {
    let client = sender
        .node
        .create_client::<MigrateNode>(&format!("/roslite_host/{from}/migrate_node"))
        .unwrap();
    assert!(
        client.wait_for_service(EMULATED),
        "host {from} did not appear on the graph"
    );
    let started = Instant::now();
    let moved = client
        .call(
            MigrateNode_Request {
                node: NODE.into(),
                to: to.into(),
            },
            // Preparing the target, which waits for its copy's endpoints to match, under
            // emulation.
            2 * EMULATED,
        )
        .unwrap_or_else(|e| panic!("move from {from} to {to}: no answer ({e:?})"));
    assert!(moved.success, "move from {from} to {to}: {}", moved.message);
    eprintln!(
        "{from} -> {to}: {:.2} s in all, paused {:.1} ms (snapshot {} bytes taken in {:.1} ms, \
         restored in {:.1} ms)",
        started.elapsed().as_secs_f64(),
        moved.paused_us as f64 / 1e3,
        moved.snapshot_bytes,
        moved.capture_us as f64 / 1e3,
        moved.restore_us as f64 / 1e3
    );
}

/// The replier starts on an x86_64 host (wasmtime), moves to an aarch64 one (wasmtime, a
/// `.cwasm` compiled for it), back to x86_64 (wasmi), to aarch64 (wasmi) and back to the
/// x86_64 host it started on, each move asked of its host over ROS 2 as `roslite migrate`
/// does, answering three numbers on each host: every reply is byte for byte that of a replier
/// that never moved.
#[test]
fn the_replier_moves_to_aarch64_and_back_with_its_state() {
    if !cross_toolchain_present("the_replier_moves_to_aarch64_and_back_with_its_state") {
        return;
    }
    let expected = on_x86_64(15);
    aarch64_host_program();
    let joined = joined_namespaces();
    let sender = sender(&joined.b);
    let hosts: Vec<HostProcess> = HOSTS
        .iter()
        .enumerate()
        .map(|(i, (name, machine, engine))| named_host(&joined, name, *machine, *engine, i == 0))
        .collect();
    sender.await_matched(1);
    let mut replies = sender.exchange(1..=3);
    let route = ["arm_wasmtime", "x86_wasmi", "arm_wasmi", "x86_wasmtime"];
    let mut from = "x86_wasmtime";
    for (leg, to) in route.into_iter().enumerate() {
        migrate(&sender, from, to);
        sender.await_matched(1);
        let first = 4 + 3 * leg as u32;
        replies.extend(sender.exchange(first..=first + 2));
        from = to;
    }
    assert_eq!(
        replies, expected,
        "the replies of the replier moved across architectures differ from one that never moved"
    );
    for host in hosts {
        host.stop();
    }
}
