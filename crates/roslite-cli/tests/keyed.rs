//! Keyed topics (test_msgs' IDL types with `@key`, which roslite ships) between rclpy on Fast
//! DDS and `roslite topic echo` / `roslite topic pub`, inside a network namespace each test
//! makes (`unshare --net`, only `lo`, multicast on), so nothing leaves the machine and the
//! default discovery works. Fast DDS matches a keyed topic's endpoints only with keyed ones
//! (entity kinds 0x02/0x07), and its writers send each sample's key hash; `interop/python/
//! keyed_peer.py sniff` reads those off `lo` so the test sees what went over the wire.

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn python() -> PathBuf {
    let python = workspace().join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `cargo xtask test`, which installs the ROS 2 peers",
        python.display()
    );
    python
}

/// `sh -c` running `body` in a network namespace of its own with only `lo` up, multicast on,
/// in domain 0 (the namespace is the test's alone), rclpy on Fast DDS, output piped.
fn in_fresh_namespace(body: &str) -> Command {
    let script = format!(
        "set -e\n\
         ip link set lo up\n\
         ip link set lo multicast on\n\
         ip route add 224.0.0.0/4 dev lo\n\
         {body}"
    );
    let mut command = Command::new("unshare");
    command
        .args(["--net", "sh", "-c", &script])
        .env("ROS_DOMAIN_ID", "0")
        .env("RUST_BACKTRACE", "0")
        .env("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
        // Fast DDS between two processes of one host would use shared memory, which the
        // sniffer cannot see.
        .env("FASTDDS_BUILTIN_TRANSPORTS", "UDPv4")
        .env("ROSLITE_TRANSPORTS", "udp")
        .env_remove("FASTDDS_DEFAULT_PROFILES_FILE")
        .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
        .env_remove("ROS_STATIC_PEERS")
        .env_remove("ROSLITE_NETWORK")
        .env_remove("AMENT_PREFIX_PATH")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Waits for a child, killing it after `limit`.
fn finish(mut child: Child, limit: Duration) -> Output {
    let start = Instant::now();
    while child.try_wait().expect("poll child").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("collect child output")
}

fn run(body: &str) -> String {
    let child = in_fresh_namespace(body)
        .spawn()
        .expect("run unshare (util-linux) to make a network namespace");
    let output = finish(child, Duration::from_secs(90));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "the script failed: {}\nstdout:\n{stdout}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// [`run`] in a directory of its own for the files `body` writes (`roslite-keyed-<tag>-<pid>`
/// under the temporary directory, removed afterwards).
fn run_in_temp_dir(tag: &str, body: &str) -> String {
    let dir = std::env::temp_dir().join(format!("roslite-keyed-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = run(&format!("cd '{}'\n{body}", dir.display()));
    let _ = std::fs::remove_dir_all(&dir);
    out
}

fn peer() -> String {
    format!(
        "'{}' '{}'",
        python().display(),
        workspace().join("interop/python/keyed_peer.py").display()
    )
}

/// rclpy's keyed writers reach `topic echo`, plain and nested keys alike, and what roslite's
/// keyed reader made Fast DDS send carries the key hashes of the samples.
#[test]
fn topic_echo_hears_rclpy_on_keyed_topics() {
    let body = format!(
        "{peer} sniff 12 > sniffed.txt &\n\
         sniffer=$!\n\
         {peer} pub /keyed 12 >/dev/null 2>&1 &\n\
         talker=$!\n\
         echo '=== long'\n\
         '{roslite}' topic echo --once --spin-time 8 --timeout 10 /keyed\n\
         echo '=== complex'\n\
         '{roslite}' topic echo --once --spin-time 8 --timeout 10 /keyed_complex\n\
         kill $talker 2>/dev/null || true\n\
         wait $sniffer || true\n\
         echo '=== sniffed'\n\
         cat sniffed.txt\n",
        peer = peer(),
        roslite = env!("CARGO_BIN_EXE_roslite"),
    );
    let out = run_in_temp_dir("echo", &body);
    let (long, rest) = out
        .split_once("=== long\n")
        .and_then(|(_, r)| r.split_once("=== complex\n"))
        .unwrap_or_else(|| panic!("{out}"));
    let (complex, sniffed) = rest
        .split_once("=== sniffed\n")
        .unwrap_or_else(|| panic!("{out}"));
    let key: i64 = long
        .lines()
        .find_map(|l| l.strip_prefix("key: "))
        .and_then(|k| k.parse().ok())
        .unwrap_or_else(|| panic!("no key echoed: {out}"));
    assert!((0..3).contains(&key), "{out}");
    assert!(long.contains("\nvalue: "), "{out}");
    assert!(
        complex.starts_with(
            "uint32_key: 7\nnested_keys:\n  nested_data:\n    key: nk\n    value: nv\n  some_int: "
        ),
        "{out}"
    );
    assert!(complex.contains("\nfloat64_value: 1.5\n"), "{out}");
    // KeyedLong's key hash is the key itself (a 4-byte key fits 16 bytes): one of 0, 1, 2.
    let plain: Vec<String> = (0..3u8)
        .map(|k| format!("{:02x}{}", k, "0".repeat(30)))
        .collect();
    assert!(
        sniffed
            .lines()
            .filter_map(|l| l.split(' ').nth(3))
            .any(|hash| plain.iter().any(|p| p == hash)),
        "rclpy's KeyedLong samples carry no key hash:\n{sniffed}"
    );
}

/// `topic pub` of a keyed type reaches an rclpy subscription, and its samples carry the key
/// hash Fast DDS computes for the same key (the key in little-endian, zero-padded).
#[test]
fn topic_pub_reaches_rclpy_on_a_keyed_topic() {
    let body = format!(
        "{peer} sniff 10 > sniffed.txt &\n\
         sniffer=$!\n\
         {peer} sub /keyed 10 > received.txt 2>&1 &\n\
         listener=$!\n\
         '{roslite}' topic pub -r 10 -t 40 /keyed test_msgs/msg/KeyedLong \
         '{{key: 16909060, value: 5}}' >/dev/null\n\
         wait $listener || true\n\
         wait $sniffer || true\n\
         echo '=== received'\n\
         cat received.txt\n\
         echo '=== sniffed'\n\
         cat sniffed.txt\n",
        peer = peer(),
        roslite = env!("CARGO_BIN_EXE_roslite"),
    );
    let out = run_in_temp_dir("pub", &body);
    let (received, sniffed) = out
        .split_once("=== received\n")
        .and_then(|(_, r)| r.split_once("=== sniffed\n"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        received.contains("got key=16909060 value=5\n"),
        "rclpy received nothing: {out}"
    );
    // 16909060 = 0x01020304.
    assert!(
        sniffed
            .lines()
            .any(|l| l.ends_with(" 04030201000000000000000000000000")),
        "roslite's samples carry no key hash for key 0x01020304:\n{sniffed}"
    );
}

/// KEEP_LAST depth is per instance (DDS 1.4 §2.2.3.18), up to `ROSLITE_MAX_KEPT_INSTANCES`
/// instances. rclpy's transient-local KEEP_LAST(1) writer of five keys (`keyed_peer.py
/// latched`) hands a late-joining `topic echo` (transient local, depth 1) its history, the
/// newest message of each key, in one go: echo prints all five. With room for two instances,
/// it keeps the two newest, and says once which variable raises the cap.
#[test]
fn topic_echo_keeps_the_newest_of_each_key_up_to_the_instance_cap() {
    let echo = |cap: &str| {
        format!(
            "ROSLITE_MAX_KEPT_INSTANCES={cap} '{roslite}' topic echo --timeout 5 \
             --qos-profile default --qos-durability transient_local --qos-depth 1 \
             /latched test_msgs/msg/KeyedLong 2>&1\n",
            roslite = env!("CARGO_BIN_EXE_roslite"),
        )
    };
    let body = format!(
        "{peer} latched /latched 30 > latched.txt 2>&1 &\n\
         talker=$!\n\
         until grep -q PUBLISHED latched.txt; do sleep 0.2; done\n\
         echo '=== default'\n\
         {default}\
         echo '=== two'\n\
         {two}\
         kill $talker 2>/dev/null || true\n",
        peer = peer(),
        default = echo("1024"),
        two = echo("2"),
    );
    let out = run_in_temp_dir("cap", &body);
    let (default, two) = out
        .split_once("=== default\n")
        .and_then(|(_, r)| r.split_once("=== two\n"))
        .unwrap_or_else(|| panic!("{out}"));
    let pairs = |text: &str| -> Vec<(String, String)> {
        let field = |name: &str| -> Vec<String> {
            text.lines()
                .filter_map(|l| l.strip_prefix(name))
                .map(str::to_owned)
                .collect()
        };
        field("key: ").into_iter().zip(field("value: ")).collect()
    };
    let newest: Vec<(String, String)> = (0..5)
        .map(|key| (key.to_string(), (20 + key).to_string()))
        .collect();
    assert_eq!(pairs(default), newest, "{out}");
    assert!(!default.contains("ROSLITE_MAX_KEPT_INSTANCES"), "{out}");
    assert_eq!(pairs(two), newest[3..], "{out}");
    assert_eq!(
        two.matches("set ROSLITE_MAX_KEPT_INSTANCES=").count(),
        1,
        "one warning naming the variable: {out}"
    );
    assert!(
        two.contains("reached the limit of 2 instances kept per keyed topic"),
        "{out}"
    );
}
