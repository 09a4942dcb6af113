//! roslite with the Humble wire setting (`RosDistro::Humble`) against the DDS stacks of the ROS 2
//! Humble era, as Debian bookworm packages them: Cyclone DDS 0.10 (`cyclonedds-dev`) and Fast
//! DDS 2.9 (`libfastrtps-dev`). No ROS on that side: small peers in `interop/c/cyclone_chatter.c`
//! and `interop/cpp/fastdds_chatter.cpp`, compiled here with `cc`/`c++` into a directory under
//! the target directory, speak `/chatter` by the ROS 2 conventions (`rt/chatter`,
//! `std_msgs::msg::dds_::String_`, plain CDR, reliable, volatile). Both directions against each,
//! each test in a network namespace made for it (only `lo`, with multicast) and a domain of its
//! own.
//!
//! A missing package skips the test with a printed reason, unless `CI` is set: there it fails.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use roslite::msgs::std_msgs::msg::String as StringMsg;
use roslite::{Executor, RosDistro};
use roslite_transport::netns::NetNs;

mod common;
use common::LinePeer;

/// How many messages each side must hear.
const COUNT: usize = 5;

/// Longest a test waits for its peer.
const DEADLINE: Duration = Duration::from_secs(25);

/// Cyclone on `lo` only, with multicast (SPDP to 239.255.0.1 works inside the namespace).
const CYCLONEDDS_URI: &str = r#"<CycloneDDS><Domain id="any"><General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces></General></Domain></CycloneDDS>"#;

/// A Humble-era stack: the Debian package with its headers and library, and the peer source.
struct Stack {
    /// Shown in messages: `Cyclone DDS 0.10`.
    name: &'static str,
    /// The Debian package the peer is built against.
    package: &'static str,
    /// Under the workspace.
    source: &'static str,
    compiler: &'static str,
    /// The Debian package providing `compiler`.
    compiler_package: &'static str,
    flags: &'static [&'static str],
    libs: &'static [&'static str],
    /// What the peer's talker sends: `<prefix><n>`.
    prefix: &'static str,
}

const CYCLONE: Stack = Stack {
    name: "Cyclone DDS 0.10",
    package: "cyclonedds-dev",
    source: "interop/c/cyclone_chatter.c",
    compiler: "cc",
    compiler_package: "gcc",
    flags: &["-std=c11", "-O1", "-Wall"],
    libs: &["-lddsc"],
    prefix: "from cyclone ",
};

const FASTDDS: Stack = Stack {
    name: "Fast DDS 2.9",
    package: "libfastrtps-dev",
    source: "interop/cpp/fastdds_chatter.cpp",
    compiler: "c++",
    compiler_package: "g++",
    flags: &["-std=c++17", "-O1", "-Wall"],
    libs: &["-lfastrtps", "-lfastcdr"],
    prefix: "from fastdds ",
};

/// The installed version of Debian package `package`, if it is installed.
fn debian_version(package: &str) -> Option<String> {
    let out = Command::new("dpkg-query")
        .args(["-W", "-f=${Status}\t${Version}", package])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let (status, version) = text.split_once('\t')?;
    (out.status.success() && status == "install ok installed").then(|| version.to_owned())
}

fn program_exists(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Builds the stack's peer once per test process; `None` (after printing why) if the test must
/// be skipped. Panics if the peer cannot be built although everything is installed, or if a
/// package is missing under CI.
fn peer_binary(stack: &'static Stack) -> Option<PathBuf> {
    static CYCLONE_BIN: OnceLock<Option<PathBuf>> = OnceLock::new();
    static FASTDDS_BIN: OnceLock<Option<PathBuf>> = OnceLock::new();
    let cell = if stack.package == CYCLONE.package {
        &CYCLONE_BIN
    } else {
        &FASTDDS_BIN
    };
    cell.get_or_init(|| build(stack)).clone()
}

fn build(stack: &Stack) -> Option<PathBuf> {
    let version = debian_version(stack.package);
    common::require_package(version.is_some(), stack.package, stack.name).ok()?;
    common::require_package(
        program_exists(stack.compiler),
        stack.compiler_package,
        &format!("the compiler `{}`", stack.compiler),
    )
    .ok()?;
    eprintln!(
        "{}: Debian {} {}",
        stack.name,
        stack.package,
        version.unwrap_or_default()
    );
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("interop-peers");
    std::fs::create_dir_all(&dir).unwrap();
    let source = common::workspace().join(stack.source);
    let stem = source.file_stem().unwrap().to_string_lossy().into_owned();
    // Built under a name of this process, then renamed into place: a concurrent run of this
    // test binary keeps running the file it started.
    let binary = dir.join(&stem);
    let partial = dir.join(format!("{stem}.{}.partial", std::process::id()));
    let out = Command::new(stack.compiler)
        .args(stack.flags)
        .arg("-o")
        .arg(&partial)
        .arg(&source)
        .args(stack.libs)
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", stack.compiler));
    assert!(
        out.status.success(),
        "{} is installed but the {} peer does not build:\n{}",
        stack.package,
        stack.name,
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::rename(&partial, &binary).unwrap();
    Some(binary)
}

fn peer(ns: &NetNs, binary: &Path, domain: u32, args: &[&str]) -> LinePeer {
    let mut command = ns.command(binary);
    command
        .args(args)
        .env("ROS_DOMAIN_ID", domain.to_string())
        .env("CYCLONEDDS_URI", CYCLONEDDS_URI)
        .env_remove("FASTDDS_DEFAULT_PROFILES_FILE")
        .env_remove("FASTRTPS_DEFAULT_PROFILES_FILE");
    LinePeer::spawn(command)
}

/// The counters `n` of messages `"<prefix><n>"`; panics on any other content.
fn counters(messages: &[String], prefix: &str) -> Vec<u64> {
    messages
        .iter()
        .map(|m| {
            m.strip_prefix(prefix)
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("unexpected message {m:?} in {messages:?}"))
        })
        .collect()
}

/// Reliable and in order: once the first message arrived, none may be lost, repeated or
/// reordered.
fn assert_consecutive(counters: &[u64], context: &dyn std::fmt::Display) {
    assert!(
        counters.windows(2).all(|w| w[1] == w[0] + 1),
        "messages lost, repeated or out of order: {counters:?}\n{context}"
    );
}

/// A roslite talker (Humble wire setting) and the stack's listener.
fn stack_hears_roslite(stack: &'static Stack, domain: u32, tag: &str) {
    let Some(binary) = peer_binary(stack) else {
        return;
    };
    let ns = NetNs::create(tag).expect("create a network namespace (needs root and iproute2)");
    let ctx = common::networked_in_distro(&ns, domain, RosDistro::Humble);
    let node = ctx.create_node("roslite_talker").unwrap();
    let publisher = node.create_publisher::<StringMsg>("chatter", 10).unwrap();
    let listener = peer(&ns, &binary, domain, &["listen", "20", &COUNT.to_string()]);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let talker = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                n += 1;
                publisher
                    .publish(StringMsg {
                        data: format!("from roslite {n}"),
                    })
                    .unwrap();
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    let out = listener.finish(Instant::now() + DEADLINE);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    talker.join().unwrap();
    assert!(
        out.success && out.values("RESULT ") == [COUNT.to_string()],
        "the {} listener did not hear {COUNT} messages: {out}",
        stack.name
    );
    let heard = out.values("HEARD ");
    assert_consecutive(&counters(&heard, "from roslite "), &out);
    assert!(
        out.values("MATCHED ") == ["1"],
        "the {} reader should match exactly the roslite writer: {out}",
        stack.name
    );
}

/// The stack's talker and a roslite listener (Humble wire setting).
fn roslite_hears_stack(stack: &'static Stack, domain: u32, tag: &str) {
    let Some(binary) = peer_binary(stack) else {
        return;
    };
    let ns = NetNs::create(tag).expect("create a network namespace (needs root and iproute2)");
    let ctx = common::networked_in_distro(&ns, domain, RosDistro::Humble);
    let node = ctx.create_node("roslite_listener").unwrap();
    let heard = Arc::new(Mutex::new(Vec::new()));
    let sink = heard.clone();
    let _sub = node
        .create_subscription("chatter", 10, move |m: StringMsg| {
            sink.lock().unwrap().push(m.data)
        })
        .unwrap();
    let start = Instant::now();
    // Runs longer than we wait: stopping it is our job.
    let talker = peer(&ns, &binary, domain, &["talk", "60"]);
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    while heard.lock().unwrap().len() < COUNT && start.elapsed() < DEADLINE {
        executor.spin_once(Some(Duration::from_millis(100)));
    }
    let topics = ctx.graph().remote_topics();
    let out = talker.finish(Instant::now());
    assert!(
        out.timed_out,
        "the {} talker exited early: {out}",
        stack.name
    );
    let heard = heard.lock().unwrap().clone();
    assert!(
        heard.len() >= COUNT,
        "heard only {heard:?} from {} in {:?}; SEDP topics {topics:?}\n{out}",
        stack.name,
        start.elapsed()
    );
    assert_consecutive(&counters(&heard, stack.prefix), &out);
    assert!(
        topics.contains(&("/chatter".to_owned(), "std_msgs/msg/String".to_owned())),
        "SEDP did not show the {} writer as /chatter std_msgs/msg/String: {topics:?}",
        stack.name
    );
}

#[test]
fn cyclone_0_10_listener_hears_a_humble_roslite_talker() {
    stack_hears_roslite(&CYCLONE, 30, "humble-cyc-l");
}

#[test]
fn humble_roslite_listener_hears_a_cyclone_0_10_talker() {
    roslite_hears_stack(&CYCLONE, 31, "humble-cyc-t");
}

#[test]
fn fastdds_2_9_listener_hears_a_humble_roslite_talker() {
    stack_hears_roslite(&FASTDDS, 32, "humble-fdds-l");
}

#[test]
fn humble_roslite_listener_hears_a_fastdds_2_9_talker() {
    roslite_hears_stack(&FASTDDS, 33, "humble-fdds-t");
}

/// The Humble wire setting's `ros_discovery_info` as a Humble-era reader sees it: Fast DDS 2.9
/// reads it in Humble's layout (24-byte gids) strictly (`fastdds_chatter graph`), finds the
/// participant's gid (its GUID prefix, entity id 0x000001c1, 8 zero bytes), the roslite node
/// and the gid of its publisher. With Iron's 16-byte layout the sample would not parse.
#[test]
fn fastdds_2_9_reads_humble_ros_discovery_info() {
    let Some(binary) = peer_binary(&FASTDDS) else {
        return;
    };
    let domain = 34;
    let ns = NetNs::create("humble-graph")
        .expect("create a network namespace (needs root and iproute2)");
    let ctx = common::networked_in_distro(&ns, domain, RosDistro::Humble);
    let node = ctx.create_node("roslite_humble").unwrap();
    let _publisher = node.create_publisher::<StringMsg>("chatter", 10).unwrap();
    let prefix: String = ctx
        .graph()
        .guid_prefix()
        .unwrap()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let observer = peer(&ns, &binary, domain, &["graph", "20", "roslite_humble"]);
    let out = observer.finish(Instant::now() + DEADLINE);
    assert!(out.success && out.values("RESULT ") == ["found"], "{out}");
    assert!(
        out.values("BAD ").is_empty(),
        "Fast DDS 2.9 could not read roslite's Humble ros_discovery_info: {out}"
    );
    assert!(
        out.values("PARTICIPANT ")
            .iter()
            .all(|gid| *gid == format!("{prefix}000001c10000000000000000")),
        "participant gid is not the GUID of {prefix} in Humble's 24-byte layout: {out}"
    );
    let node_line = out
        .values("NODE ")
        .into_iter()
        .rev()
        .find(|l| l.starts_with("/ roslite_humble "))
        .unwrap_or_else(|| panic!("no node line: {out}"));
    let writers: usize = node_line.split(' ').nth(3).unwrap().parse().unwrap();
    assert!(writers >= 1, "the node lists no writer: {out}");
    let writer_gids = out.values("WRITER ");
    assert!(
        !writer_gids.is_empty()
            && writer_gids.iter().all(|g| g.len() == 48
                && g.starts_with(&prefix)
                && g.ends_with("0000000000000000")),
        "writer gids are not 24-byte GUIDs of {prefix}: {out}"
    );
}
