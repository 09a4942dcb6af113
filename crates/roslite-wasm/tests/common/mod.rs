//! What the tests that build guests share: the workspace, generated message types, the guest
//! toolchain, and building a C or C++ guest.
#![allow(dead_code)] // each test binary uses a part

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use roslite_wasm::guest_build::Toolchain;

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Generated message types of the packages the guests use (C or C++), under the test
/// directory's `dir`.
pub fn generated(lang: roslite_msg_gen::native::Lang, dir: &str) -> PathBuf {
    use roslite_msg_gen::native;
    let mut set = roslite_msg_gen::registry::InterfaceSet::new();
    roslite_msg_gen::build::add_builtin_interfaces(&mut set).unwrap();
    set.check().unwrap();
    let packages: Vec<String> = ["std_msgs", "std_srvs", "geometry_msgs"]
        .iter()
        .map(|p| (*p).to_owned())
        .collect();
    let interfaces = native::select(&set, &packages, true).unwrap();
    let files = native::generate(&set, &interfaces, lang).unwrap();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(dir);
    native::write(&dir, &files).unwrap();
    dir
}

pub fn toolchain() -> &'static Toolchain {
    static TOOLCHAIN: OnceLock<Toolchain> = OnceLock::new();
    TOOLCHAIN.get_or_init(|| Toolchain::find().unwrap_or_else(|e| panic!("{e}")))
}

pub fn out(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("wasm-guests");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// `source` (relative to the workspace) built into a C guest.
pub fn c_guest(source: &str, name: &str) -> PathBuf {
    static GENERATED: OnceLock<PathBuf> = OnceLock::new();
    let generated = GENERATED
        .get_or_init(|| generated(roslite_msg_gen::native::Lang::C, "wasm-rclpy-generated-c"));
    let wasm = out(name);
    toolchain()
        .compile_c(&[&workspace().join(source)], &[generated], &wasm)
        .unwrap_or_else(|e| panic!("{e}"));
    wasm
}

/// `source` (relative to the workspace) built into a C++ guest.
pub fn cpp_guest(source: &str, name: &str) -> PathBuf {
    static GENERATED: OnceLock<PathBuf> = OnceLock::new();
    let generated = GENERATED.get_or_init(|| {
        generated(
            roslite_msg_gen::native::Lang::Cpp,
            "wasm-rclpy-generated-cpp",
        )
    });
    let wasm = out(name);
    toolchain()
        .compile_cpp(&[&workspace().join(source)], &[generated], &wasm)
        .unwrap_or_else(|e| panic!("{e}"));
    wasm
}

/// A context on RTPS over UDP inside `ns` on `domain` (its sockets made on a thread inside it):
/// contexts of one test process that talk as separate participants, each datagram taken by a
/// receive thread.
pub fn networked(ns: &roslite_transport::netns::NetNs, domain: u32) -> roslite::Context {
    networked_with(ns, domain, roslite::LocalTransports::UDP_ONLY)
}

/// As [`networked`], offering the same-host `transports` beside UDP.
#[allow(dead_code)] // not every test file that shares this module uses it
pub fn networked_with(
    ns: &roslite_transport::netns::NetNs,
    domain: u32,
    transports: roslite::LocalTransports,
) -> roslite::Context {
    ns.run(|| {
        let discovery = roslite_transport::DiscoveryConfig {
            domain_id: domain,
            range: roslite_transport::DiscoveryRange::Subnet,
            ..Default::default()
        };
        roslite::Context::new(roslite::ContextOptions {
            domain_id: domain,
            network: roslite::NetworkMode::Rtps(roslite_transport::TransportConfig::new(discovery)),
            local_transports: transports,
            ..Default::default()
        })
    })
    .expect("enter the test namespace")
    .expect("start RTPS inside the namespace")
}

/// The native side of the tests of the deterministic replier (guests/deterministic_reply.c):
/// publishes numbers on /numbers_in (reliable, keep-last `depth`), hears the replies on
/// /numbers_out, spinning on a thread of its own; waits at most `patience` for anything.
pub struct Sender {
    pub context: roslite::Context,
    pub node: roslite::Node,
    pub publisher: roslite::Publisher<roslite::msgs::std_msgs::msg::String>,
    pub subscription: roslite::Subscription<roslite::msgs::std_msgs::msg::String>,
    pub replies: std::sync::mpsc::Receiver<String>,
    spinner: Option<std::thread::JoinHandle<()>>,
    patience: std::time::Duration,
}

impl Sender {
    pub fn new(context: roslite::Context, depth: usize, patience: std::time::Duration) -> Self {
        use roslite::msgs::std_msgs::msg::String as StringMsg;
        let node = context.create_node("sender").unwrap();
        let qos = roslite::QosProfile::keep_last(depth).reliable();
        let publisher = node.create_publisher("numbers_in", qos).unwrap();
        let (tx, replies) = std::sync::mpsc::channel();
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
            node,
            publisher,
            subscription,
            replies,
            spinner,
            patience,
        }
    }

    /// Waits until `replicas` copies of the replier's endpoints matched ours.
    pub fn await_matched(&self, replicas: usize) {
        let until = std::time::Instant::now() + self.patience;
        while self.publisher.subscription_count() != replicas
            || self.subscription.publisher_count() != replicas
        {
            assert!(
                std::time::Instant::now() < until,
                "the replier's endpoints did not match ({} subscriptions, {} publishers, want \
                 {replicas})",
                self.publisher.subscription_count(),
                self.subscription.publisher_count()
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// Publishes number `n` ("number N: hello ünïcode").
    pub fn send(&self, n: u32) {
        self.publisher
            .publish(roslite::msgs::std_msgs::msg::String {
                data: format!("number {n}: hello ünïcode"),
            })
            .unwrap();
    }

    /// Sends `numbers` one at a time, each after the reply to the one before.
    pub fn exchange(&self, numbers: std::ops::RangeInclusive<u32>) -> Vec<String> {
        numbers
            .map(|n| {
                self.send(n);
                self.replies
                    .recv_timeout(self.patience)
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

/// Drops every UDP datagram that arrives in `ns` for port `to` (from port `from` only, if
/// given): the process listening there receives none of them, and its peers' RTPS writers
/// repair what it missed once the rule is lifted ([`lift_drop`]).
pub fn drop_datagrams_to(ns: &roslite_transport::netns::NetNs, to: u16, from: Option<u16>) {
    let from = from.map_or(String::new(), |p| format!("udp sport {p} "));
    drop_rule(ns, &format!("{from}udp dport {to} counter drop"));
}

/// Lifts the rule of [`drop_datagrams_to`].
pub fn lift_drop(ns: &roslite_transport::netns::NetNs) {
    drop_rule(ns, "");
}

fn drop_rule(ns: &roslite_transport::netns::NetNs, rule: &str) {
    // Declaring the table first makes the delete succeed whether or not it exists.
    ns.nft(&format!(
        "table inet roslite_in_flight {{}}\ndelete table inet roslite_in_flight\n\
         table inet roslite_in_flight {{\n  chain input {{\n    type filter hook input \
         priority 0; policy accept;\n    {rule}\n  }}\n}}\n"
    ))
    .expect("an nftables rule in the test namespace");
}

/// The served counts in the state guest's answers ("served=N ...") to calls 2, 3, ... (call 1
/// came before); fails the test unless call k was answered served=k, each request served
/// exactly once and in turn.
#[allow(dead_code)] // not every test file that shares this module uses it
pub fn served_in_turn(answers: &[String]) -> Vec<u32> {
    let served: Vec<u32> = answers
        .iter()
        .map(|a| {
            a.strip_prefix("served=")
                .and_then(|rest| rest.split(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("an answer not of the guest: {a}"))
        })
        .collect();
    if let Some(at) = (0..served.len()).find(|&i| served[i] != i as u32 + 2) {
        panic!(
            "a request was served twice or not at all: call {} was answered served={} ({:?} \
             around it, of {})",
            at + 2,
            served[at],
            &served[at.saturating_sub(2)..(at + 3).min(served.len())],
            served.len()
        );
    }
    served
}

/// Sets its flag when dropped, however the scope that holds it ends: a test whose assertion
/// fails inside `std::thread::scope` still stops the scope's threads that loop until the flag
/// is set, so the test fails with its message instead of waiting for them for ever.
pub struct StopOnDrop<'a>(pub &'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}
