//! Very large data (the zero-copy and shared-memory study of docs/experiments.md), checked for
//! delivery and content, never timed (`roslite bench large` has the figures):
//!
//! - a 55 MB `sensor_msgs/PointCloud2` crosses from this process to a child process (this test
//!   binary run again, `child_large_subscriber`) intact, over the default transport (shared
//!   memory: the child's `data` is a view into a `memfd` mapping, never copied) and with UDP
//!   forced (`LocalTransports::UDP_ONLY`, as `ROSLITE_TRANSPORTS=udp`; DATA_FRAG on loopback);
//! - the study's `std_msgs/UInt64MultiArray` crosses to a child process too, at 10 million
//!   elements (80 MB; the bench runs the study's 100 million);
//! - intra-process, the study's full 100-million-element array (800 MB) reaches the
//!   subscription as the very vector that was published.
//!
//! Loopback only (LOCALHOST discovery), a domain per test.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use roslite::msgs::sensor_msgs::msg::PointCloud2;
use roslite::msgs::std_msgs::msg::UInt64MultiArray;
use roslite::{Context, ContextOptions, Executor, LocalTransports, MessageInfo, QosProfile};

mod common;

const CLOUD_BYTES: usize = 55_000_000;
const CHILD_KIND: &str = "ROSLITE_LARGE_CHILD";
const CHILD_DOMAIN: &str = "ROSLITE_LARGE_DOMAIN";
const CHILD_TRANSPORTS: &str = "ROSLITE_LARGE_TRANSPORTS";

fn test_domain(offset: u32) -> u32 {
    debug_assert!(offset < 4);
    10 + (std::process::id() % 7) * 4 + offset
}

fn transports_named(name: &str) -> LocalTransports {
    match name {
        "udp" => LocalTransports::UDP_ONLY,
        _ => LocalTransports::default(),
    }
}

/// Position-sensitive checksum of little-endian 64-bit words (the last one zero-padded); the
/// same as `roslite bench large`'s.
fn checksum_bytes(bytes: &[u8]) -> u64 {
    let mut chunks = bytes.chunks_exact(8);
    let mut h = 0x9e37_79b9_7f4a_7c15u64;
    for c in &mut chunks {
        h = h.rotate_left(7) ^ u64::from_le_bytes(c.try_into().unwrap());
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut last = [0u8; 8];
        last[..rest.len()].copy_from_slice(rest);
        h = h.rotate_left(7) ^ u64::from_le_bytes(last);
    }
    h
}

fn checksum_u64(values: &[u64]) -> u64 {
    values
        .iter()
        .fold(0x9e37_79b9_7f4a_7c15u64, |h, &x| h.rotate_left(7) ^ x)
}

/// The zero-copy study's array: element i is (i + 1) mod 255, element 0 is `first`.
fn study_array(elements: usize, first: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (0..elements as u64).map(|i| (i + 1) % 255).collect();
    v[0] = first;
    v
}

/// What holds `ptr`, from `/proc/self/maps`: `memfd` for a shared-memory segment.
fn mapping_of(ptr: *const u8) -> String {
    let addr = ptr as usize;
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    for line in maps.lines() {
        let mut fields = line.split_whitespace();
        let (start, end) = fields.next().unwrap().split_once('-').unwrap();
        let start = usize::from_str_radix(start, 16).unwrap();
        let end = usize::from_str_radix(end, 16).unwrap();
        if (start..end).contains(&addr) {
            let name = fields.nth(4).unwrap_or("");
            return if name.starts_with("/memfd:") {
                "memfd".into()
            } else if name.is_empty() {
                "anon".into()
            } else {
                name.replace(' ', "_")
            };
        }
    }
    "unmapped".into()
}

// -------------------------------------------------------------------------------------------
// The child: a subscriber in another process

/// Run by the process-to-process tests in a child process: subscribes, prints `READY`, then
/// `GOT <len> <checksum> <view 0/1> <mapping>` for the first message and returns.
#[test]
#[ignore = "run by the process-to-process tests of this file in a child process"]
fn child_large_subscriber() {
    let kind = std::env::var(CHILD_KIND).expect("run by the parent test");
    let domain: u32 = std::env::var(CHILD_DOMAIN).unwrap().parse().unwrap();
    let transports = transports_named(&std::env::var(CHILD_TRANSPORTS).unwrap());
    let ctx = common::localhost_context(domain, transports);
    let node = ctx.create_node("large_listener").unwrap();
    let (tx, rx) = mpsc::channel::<String>();
    let report = |len: usize, sum: u64, view: bool, ptr: *const u8| {
        format!("GOT {len} {sum} {} {}", u8::from(view), mapping_of(ptr))
    };
    let _cloud_sub;
    let _array_sub;
    if kind == "cloud" {
        let tx = tx.clone();
        _cloud_sub = node
            .create_subscription("large_data/cloud", 1, move |m: Arc<PointCloud2>| {
                let line = report(
                    m.data.len(),
                    checksum_bytes(&m.data),
                    m.data.is_view(),
                    m.data.as_ptr(),
                );
                let _ = tx.send(line);
            })
            .unwrap();
    } else {
        _array_sub = node
            .create_subscription("large_data/array", 1, move |m: Arc<UInt64MultiArray>| {
                let line = report(
                    m.data.len(),
                    checksum_u64(&m.data),
                    m.data.is_view(),
                    m.data.as_ptr().cast(),
                );
                let _ = tx.send(line);
            })
            .unwrap();
    }
    let spinner = {
        let (ctx, node) = (ctx.clone(), node.clone());
        std::thread::spawn(move || {
            let executor = Executor::new(&ctx);
            executor.add_node(&node);
            executor.spin();
        })
    };
    println!("READY");
    let line = rx
        .recv_timeout(Duration::from_secs(120))
        .expect("nothing arrived within 120 s");
    println!("{line}");
    ctx.shutdown();
    spinner.join().unwrap();
}

/// The child process, killed when dropped.
struct ChildSubscriber {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl ChildSubscriber {
    fn start(kind: &str, domain: u32, transports: &str) -> Self {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--ignored",
                "--exact",
                "child_large_subscriber",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env(CHILD_KIND, kind)
            .env(CHILD_DOMAIN, domain.to_string())
            .env(CHILD_TRANSPORTS, transports)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the child subscriber");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut me = Self { child, lines };
        me.expect("READY", Duration::from_secs(30));
        me
    }

    /// The rest of the next line starting with `prefix`, within `timeout`.
    fn expect(&mut self, prefix: &str, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                // The harness may have written "test child_large_subscriber ... " first.
                Ok(line) => {
                    if let Some((_, rest)) = line.split_once(prefix) {
                        return rest.trim().to_owned();
                    }
                }
                Err(e) => panic!("the child printed no {prefix:?} within {timeout:?}: {e}"),
            }
        }
    }

    /// The next `GOT` line, publishing with `publish` until it comes (a publisher that
    /// matched first may see its first message missed by a reader still matching).
    fn receive(
        &mut self,
        mut publish: impl FnMut(),
        limit: Duration,
    ) -> (usize, u64, bool, String) {
        let start = Instant::now();
        loop {
            publish();
            if let Ok(line) = self.lines.recv_timeout(Duration::from_secs(15)) {
                if let Some((_, rest)) = line.split_once("GOT ") {
                    let f: Vec<&str> = rest.split_whitespace().collect();
                    return (
                        f[0].parse().unwrap(),
                        f[1].parse().unwrap(),
                        f[2] == "1",
                        f[3].to_owned(),
                    );
                }
            }
            assert!(
                start.elapsed() < limit,
                "no message arrived within {limit:?}"
            );
        }
    }
}

impl Drop for ChildSubscriber {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until `topic` has a subscription in another process; the transport carrying it.
fn await_remote_subscription(ctx: &Context, topic: &str) -> &'static str {
    let net = ctx.graph();
    let start = Instant::now();
    loop {
        let (rtps, local) = net.remote_subscriptions_by_path(topic);
        if rtps + local > 0 {
            return net
                .endpoints()
                .into_iter()
                .find(|e| {
                    !e.local
                        && e.topic == topic
                        && e.kind == roslite::graph::GraphEndpointKind::Subscription
                })
                .map_or("udp", |e| e.transport);
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the child's subscription on {topic} never matched"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn cloud_crosses(domain: u32, transports: &str) -> (&'static str, String) {
    let mut child = ChildSubscriber::start("cloud", domain, transports);
    let ctx = common::localhost_context(domain, transports_named(transports));
    let node = ctx.create_node("lidar").unwrap();
    let publisher = node
        .create_publisher::<PointCloud2>("large_data/cloud", 1)
        .unwrap();
    let transport = await_remote_subscription(&ctx, "/large_data/cloud");
    let message = Arc::new(common::xyzi_cloud(CLOUD_BYTES, 0));
    let expected = checksum_bytes(&message.data);
    let (len, sum, view, mapping) = child.receive(
        || publisher.publish_shared(message.clone()).unwrap(),
        Duration::from_secs(60),
    );
    assert_eq!(len, CLOUD_BYTES, "over {transport}");
    assert_eq!(
        sum, expected,
        "the point cloud arrived corrupted over {transport}"
    );
    // Over every transport the receiver's data points into what was received, not a copy.
    assert!(
        view,
        "the point cloud's data was copied on decode ({transport})"
    );
    ctx.shutdown();
    (transport, mapping)
}

#[test]
fn point_cloud_of_55_mb_crosses_processes_over_shared_memory_without_a_copy() {
    let (transport, mapping) = cloud_crosses(test_domain(0), "default");
    assert_eq!(transport, "shm", "two roslite processes of one host");
    assert_eq!(
        mapping, "memfd",
        "the receiver's data must be read in place in the writer's segment"
    );
}

#[test]
fn point_cloud_of_55_mb_crosses_processes_over_udp() {
    let (transport, _) = cloud_crosses(test_domain(1), "udp");
    assert_eq!(transport, "udp");
}

/// The study's inter-process case at a tenth of its size (80 MB; `roslite bench large` runs
/// the 800 MB one).
#[test]
fn u64_array_of_80_mb_crosses_processes_intact() {
    let domain = test_domain(2);
    let mut child = ChildSubscriber::start("array", domain, "default");
    let ctx = common::localhost_context(domain, LocalTransports::default());
    let node = ctx.create_node("large_data").unwrap();
    let publisher = node
        .create_publisher::<UInt64MultiArray>("large_data/array", 1)
        .unwrap();
    let transport = await_remote_subscription(&ctx, "/large_data/array");
    let elements = 10_000_000;
    let values = study_array(elements, 7);
    let expected = checksum_u64(&values);
    let message = Arc::new(UInt64MultiArray {
        data: values.into(),
        ..Default::default()
    });
    let (len, sum, _view, _) = child.receive(
        || publisher.publish_shared(message.clone()).unwrap(),
        Duration::from_secs(60),
    );
    assert_eq!((len, sum), (elements, expected), "over {transport}");
    ctx.shutdown();
}

/// The study's intra-process case at full size: 100 million elements (800 MB) reach the
/// subscription as the very vector that was published.
#[test]
fn u64_array_of_800_mb_is_handed_over_intra_process_without_a_copy() {
    let ctx = Context::new(ContextOptions::default()).unwrap();
    let node = ctx.create_node("large_data").unwrap();
    let (tx, rx) = mpsc::channel::<UInt64MultiArray>();
    let _sub = node
        .create_subscription(
            "large_data/array",
            QosProfile::keep_last(1),
            move |m: UInt64MultiArray, _: &MessageInfo| {
                let _ = tx.send(m);
            },
        )
        .unwrap();
    let publisher = node
        .create_publisher::<UInt64MultiArray>("large_data/array", 1)
        .unwrap();
    let spinner = {
        let (ctx, node) = (ctx.clone(), node.clone());
        std::thread::spawn(move || {
            let executor = Executor::new(&ctx);
            executor.add_node(&node);
            executor.spin();
        })
    };
    let elements = 100_000_000;
    let values = study_array(elements, 1);
    let expected = checksum_u64(&values);
    let address = values.as_ptr();
    publisher
        .publish(UInt64MultiArray {
            data: values.into(),
            ..Default::default()
        })
        .unwrap();
    let got = rx.recv_timeout(Duration::from_secs(60)).unwrap();
    assert_eq!(got.data.len(), elements);
    assert_eq!(got.data.as_ptr(), address, "the 800 MB array was copied");
    assert_eq!(checksum_u64(&got.data), expected);
    drop(got);
    ctx.shutdown();
    spinner.join().unwrap();
}

/// Why a received `u64` array is copied on decode today: CDR aligns the elements to 8 counted
/// from the end of the 4-byte encapsulation header, so they sit at 4 mod 8 from the start of
/// the payload. A view needs them aligned in memory, i.e. the payload placed at an address
/// that is 4 mod 8; transports place it at a page or allocation start (0 mod 8).
#[test]
fn u64_views_need_the_payload_at_4_mod_8() {
    let message = UInt64MultiArray {
        data: study_array(1000, 3).into(),
        ..Default::default()
    };
    let payload = roslite_cdr::to_vec(&message, roslite_cdr::Endianness::Little).unwrap();
    // Decodes `payload` placed at an address that is `residue` mod 8.
    let is_view_at = |residue: usize| {
        let mut backing = vec![0u8; payload.len() + 8];
        let offset = (residue + 8 - backing.as_ptr() as usize % 8) % 8;
        backing[offset..offset + payload.len()].copy_from_slice(&payload);
        // The vector's heap buffer does not move into the SharedBuf.
        let buf = roslite_cdr::SharedBuf::from_vec(backing)
            .slice(offset..offset + payload.len())
            .unwrap();
        assert_eq!(buf.bytes().as_ptr() as usize % 8, residue);
        let decoded: UInt64MultiArray = roslite_cdr::from_shared(&buf).unwrap();
        assert_eq!(decoded, message);
        decoded.data.is_view()
    };
    assert!(is_view_at(4), "payload at 4 mod 8: the elements are a view");
    assert!(
        !is_view_at(0),
        "payload at 0 mod 8 (a page or allocation start): the elements are copied"
    );
}
