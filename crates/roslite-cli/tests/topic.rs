//! `roslite topic` and `roslite node` between processes, as a user runs them.
//!
//! Every process a test starts uses LOCALHOST discovery (loopback only) and a domain of its own,
//! so parallel tests and other test binaries do not see each other. The rclpy interop test runs
//! inside a network namespace it creates (`unshare -n`), where nothing can leave the machine.

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A domain for one test of this process (`offset` < 10), in 100..200.
fn test_domain(offset: u32) -> u32 {
    100 + (std::process::id() % 10) * 10 + offset
}

/// `roslite <args>` on loopback in `domain`.
fn roslite(domain: u32, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_roslite"));
    command
        .args(args)
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env("ROS_DOMAIN_ID", domain.to_string())
        .env("RUST_BACKTRACE", "0")
        .env_remove("ROS_STATIC_PEERS")
        .env_remove("ROSLITE_NETWORK")
        .env_remove("AMENT_PREFIX_PATH")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// A child process killed when the test ends, however it ends.
struct Background(Child);

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
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

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn success(output: &Output) -> String {
    assert!(
        output.status.success(),
        "roslite failed: {}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        text(&output.stdout),
        text(&output.stderr)
    );
    text(&output.stdout)
}

/// Runs `roslite <args>`, which must succeed; its stdout.
fn succeed(domain: u32, args: &[&str]) -> String {
    success(&roslite(domain, args).output().expect("run roslite"))
}

/// Runs `roslite <args>`, which must fail; its stderr.
fn failure(domain: u32, args: &[&str]) -> String {
    let output = roslite(domain, args).output().expect("run roslite");
    assert!(
        !output.status.success(),
        "roslite {args:?} succeeded:\n{}",
        text(&output.stdout)
    );
    text(&output.stderr)
}

/// Runs `roslite <args>` until it succeeds with a stdout that satisfies `done` (discovery of a
/// process that just started can take a moment on a loaded machine), at most 20 s; returns the
/// last stdout, failing the test if that run failed.
fn until(domain: u32, args: &[&str], done: impl Fn(&str) -> bool) -> String {
    let start = Instant::now();
    loop {
        let output = roslite(domain, args).output().expect("run roslite");
        if output.status.success() && done(&text(&output.stdout))
            || start.elapsed() > Duration::from_secs(20)
        {
            return success(&output);
        }
    }
}

/// `roslite topic pub` of std_msgs/String on /chatter at 5 Hz until killed.
fn background_talker(domain: u32, node: &str, extra: &[&str]) -> Background {
    let mut args = vec![
        "topic",
        "pub",
        "-n",
        node,
        "-r",
        "5",
        "/chatter",
        "std_msgs/msg/String",
        "data: hello",
    ];
    args.extend_from_slice(extra);
    background(roslite(domain, &args))
}

/// Starts `command` with its output going nowhere (errors to the test's stderr).
fn background(mut command: Command) -> Background {
    let child = command
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start roslite");
    Background(child)
}

#[test]
fn pub_times_and_echo_once_exchange_a_message() {
    let domain = test_domain(0);
    let publisher = roslite(
        domain,
        &[
            "topic",
            "pub",
            "--times",
            "3",
            "--rate",
            "10",
            "--max-wait-time-secs",
            "30",
            "/cmd_vel",
            "geometry_msgs/msg/Twist",
            "{linear: {x: 2.0}, angular: {z: -1.5}}",
        ],
    )
    .spawn()
    .expect("start roslite topic pub");
    // The type comes from discovery: echo waits for the publisher to appear.
    let echo = roslite(
        domain,
        &[
            "topic",
            "echo",
            "--once",
            "--spin-time",
            "20",
            "--timeout",
            "30",
            "/cmd_vel",
        ],
    )
    .output()
    .expect("run roslite topic echo");
    let published = finish(publisher, Duration::from_secs(40));
    assert_eq!(
        success(&echo),
        "\
linear:
  x: 2.0
  y: 0.0
  z: 0.0
angular:
  x: 0.0
  y: 0.0
  z: -1.5
---
"
    );
    let published = success(&published);
    let shown = "geometry_msgs.msg.Twist(linear=geometry_msgs.msg.Vector3(x=2.0, y=0.0, \
                 z=0.0), angular=geometry_msgs.msg.Vector3(x=0.0, y=0.0, z=-1.5))";
    assert!(
        published.contains(&format!(
            "publisher: beginning loop\npublishing #1: {shown}\n\npublishing #2: {shown}\n\n\
             publishing #3: {shown}\n\n"
        )),
        "{published}"
    );
    assert!(!published.contains("publishing #4"), "{published}");
}

#[test]
fn topic_list_shows_a_topic_published_by_another_process() {
    let domain = test_domain(1);
    let _talker = background_talker(domain, "list_talker", &[]);
    // The talker's node also publishes /parameter_events and /rosout, as every rclcpp node
    // does.
    let out = until(domain, &["topic", "list", "-t"], |out| {
        out.contains("/chatter") && out.contains("/parameter_events") && out.contains("/rosout")
    });
    assert_eq!(
        out,
        "/chatter [std_msgs/msg/String]\n\
         /parameter_events [rcl_interfaces/msg/ParameterEvent]\n\
         /rosout [rcl_interfaces/msg/Log]\n"
    );
    let out = succeed(domain, &["topic", "list"]);
    assert_eq!(out, "/chatter\n/parameter_events\n/rosout\n");
    let out = succeed(domain, &["topic", "list", "-v"]);
    assert_eq!(
        out,
        "Published topics:\n * /chatter [std_msgs/msg/String] 1 publisher\n \
         * /parameter_events [rcl_interfaces/msg/ParameterEvent] 1 publisher\n \
         * /rosout [rcl_interfaces/msg/Log] 1 publisher\n\n\
         Subscribed topics:\n\n"
    );
}

#[test]
fn topic_info_verbose_shows_the_publisher_with_its_node_and_qos() {
    let domain = test_domain(2);
    let _talker = background_talker(
        domain,
        "info_talker",
        &["--qos-depth", "7", "--qos-durability", "transient_local"],
    );
    let out = until(domain, &["topic", "info", "-v", "/chatter"], |out| {
        out.contains("Node name: info_talker")
    });
    // The GID is the publisher's random GUID: check its shape, then the rest exactly. The
    // talker is a roslite process on this host and its history is KEEP_LAST, so even as
    // TRANSIENT_LOCAL it is reached over shared memory.
    let gid_line = out
        .lines()
        .find(|l| l.starts_with("GID: "))
        .unwrap_or_else(|| panic!("no GID line in {out}"));
    let gid: Vec<&str> = gid_line["GID: ".len()..].split('.').collect();
    assert!(
        gid.len() == 16
            && gid
                .iter()
                .all(|b| b.len() == 2 && b.bytes().all(|c| c.is_ascii_hexdigit())),
        "{gid_line}"
    );
    let expected = format!(
        "\
Type: std_msgs/msg/String

Publisher count: 1

Node name: info_talker
Node namespace: /
Topic type: std_msgs/msg/String
Topic type hash: RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18
Endpoint type: PUBLISHER
{gid_line}
Transport: shm
QoS profile:
  Reliability: RELIABLE
  History (Depth): KEEP_LAST (7)
  Durability: TRANSIENT_LOCAL
  Lifespan: Infinite
  Deadline: Infinite
  Liveliness: AUTOMATIC
  Liveliness lease duration: Infinite

Subscription count: 0

"
    );
    assert_eq!(out, expected);
    let out = succeed(domain, &["topic", "info", "chatter"]);
    assert_eq!(
        out,
        "Type: std_msgs/msg/String\nPublisher count: 1\nSubscription count: 0\n"
    );
}

#[test]
fn node_list_shows_the_publishing_process_node() {
    let domain = test_domain(3);
    let _talker = background_talker(domain, "node_talker", &[]);
    let _hidden = background(roslite(
        domain,
        &["topic", "pub", "-r", "5", "/other", "std_msgs/msg/Empty"],
    ));
    let out = until(domain, &["node", "list", "-a"], |out| {
        out.lines().count() >= 2
    });
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].starts_with("/_roslite_cli_"), "{out}");
    assert_eq!(lines[1], "/node_talker");
    // The tool's own nodes are hidden, like ros2cli's `_ros2cli_<pid>`.
    let out = succeed(domain, &["node", "list"]);
    assert_eq!(out, "/node_talker\n");
    let out = succeed(domain, &["node", "list", "-c"]);
    assert_eq!(out, "1\n");
    // ros2node's `info`: the talker's topics, its parameter services and
    // ~/get_type_description; a bare name means the root namespace.
    let out = succeed(domain, &["node", "info", "node_talker"]);
    assert_eq!(
        out,
        "/node_talker
  Subscribers:

  Publishers:
    /chatter: std_msgs/msg/String
    /parameter_events: rcl_interfaces/msg/ParameterEvent
    /rosout: rcl_interfaces/msg/Log
  Service Servers:
    /node_talker/describe_parameters: rcl_interfaces/srv/DescribeParameters
    /node_talker/get_parameter_types: rcl_interfaces/srv/GetParameterTypes
    /node_talker/get_parameters: rcl_interfaces/srv/GetParameters
    /node_talker/get_type_description: type_description_interfaces/srv/GetTypeDescription
    /node_talker/list_parameters: rcl_interfaces/srv/ListParameters
    /node_talker/set_parameters: rcl_interfaces/srv/SetParameters
    /node_talker/set_parameters_atomically: rcl_interfaces/srv/SetParametersAtomically
  Service Clients:

  Action Servers:

  Action Clients:

"
    );
    // ros2service's `type` and `find` on the same graph: the hidden tool node's own
    // parameter services count only with -a.
    let out = succeed(domain, &["service", "type", "/node_talker/get_parameters"]);
    assert_eq!(out, "rcl_interfaces/srv/GetParameters\n");
    let find = |extra: &[&str]| {
        let mut args = vec!["service", "find", "rcl_interfaces/GetParameters"];
        args.extend_from_slice(extra);
        succeed(domain, &args)
    };
    assert_eq!(find(&[]), "/node_talker/get_parameters\n");
    assert_eq!(find(&["-c", "-a"]), "2\n");
    let stderr = failure(
        domain,
        &["service", "type", "/nobody", "--spin-time", "0.3"],
    );
    assert!(stderr.contains("Unknown service '/nobody'"), "{stderr}");
    let stderr = failure(domain, &["node", "info", "/nobody", "--spin-time", "0.5"]);
    assert!(stderr.contains("Unable to find node '/nobody'"), "{stderr}");
}

#[test]
fn unknown_topics_types_and_fields_are_explained() {
    let domain = test_domain(4);
    let stderr = failure(domain, &["topic", "info", "/nobody", "--spin-time", "0.3"]);
    assert!(stderr.contains("Unknown topic '/nobody'"), "{stderr}");
    let stderr = failure(domain, &["topic", "echo", "/nobody", "--spin-time", "0.3"]);
    assert!(stderr.contains("Pass the type"), "{stderr}");
    // Values are checked before anything touches the network; the codec's message is shown.
    let stderr = failure(
        domain,
        &[
            "topic",
            "pub",
            "--once",
            "/x",
            "std_msgs/msg/String",
            "dta: 1",
        ],
    );
    assert!(stderr.contains("(did you mean `data`?)"), "{stderr}");
    let stderr = failure(
        domain,
        &["topic", "pub", "--once", "/x", "std_msgs/msg/Nope", "{}"],
    );
    assert!(
        stderr.contains("unknown message type 'std_msgs/msg/Nope'"),
        "{stderr}"
    );
    let stderr = failure(
        domain,
        &[
            "topic",
            "pub",
            "--once",
            "-w",
            "1",
            "--max-wait-time-secs",
            "0.3",
            "/x",
            "std_msgs/msg/String",
        ],
    );
    assert!(
        stderr.contains("Timed out waiting for subscribers"),
        "{stderr}"
    );
}

/// `topic hz`, `bw`, `type` and `find` on a talker publishing std_msgs/String at 10 Hz.
#[test]
fn hz_bw_type_and_find_describe_a_talker() {
    let domain = test_domain(5);
    let _talker = background(roslite(
        domain,
        &[
            "topic",
            "pub",
            "-n",
            "rate_talker",
            "-r",
            "10",
            "/chatter",
            "std_msgs/msg/String",
            "data: hello",
        ],
    ));
    let out = until(domain, &["topic", "type", "/chatter"], |out| {
        !out.is_empty()
    });
    assert_eq!(out, "std_msgs/msg/String\n");
    let out = until(domain, &["topic", "find", "std_msgs/msg/String"], |out| {
        !out.is_empty()
    });
    assert_eq!(out, "/chatter\n");
    let out = succeed(domain, &["topic", "find", "-c", "std_msgs/String"]);
    assert_eq!(out, "1\n", "the short type name finds it too");
    let stderr = failure(domain, &["topic", "type", "/nobody", "--spin-time", "0.3"]);
    assert!(stderr.contains("Unknown topic '/nobody'"), "{stderr}");

    let hz = roslite(
        domain,
        &[
            "topic",
            "hz",
            "/chatter",
            "--spin-time",
            "20",
            "--timeout",
            "5",
        ],
    )
    .output()
    .unwrap();
    let hz = success(&hz);
    let rates: Vec<f64> = hz
        .lines()
        .filter_map(|l| l.strip_prefix("average rate: "))
        .map(|r| r.parse().expect("a rate"))
        .collect();
    // About 3 lines in 5 s (the first a second after the second message). The band only
    // checks the unit and the arithmetic: the talker's timer sets the rate.
    assert!(!rates.is_empty(), "{hz}");
    for rate in &rates {
        assert!(
            (4.0..25.0).contains(rate),
            "10 Hz measured as {rate}:\n{hz}"
        );
    }
    let detail = hz.lines().nth(1).unwrap_or_default();
    assert!(
        detail.starts_with("\tmin: ") && detail.contains("s max: ") && detail.contains(" window: "),
        "{hz}"
    );

    let bw = roslite(
        domain,
        &[
            "topic",
            "bw",
            "/chatter",
            "--spin-time",
            "20",
            "--timeout",
            "4",
        ],
    )
    .output()
    .unwrap();
    let bw = success(&bw);
    assert!(bw.starts_with("Subscribed to [/chatter]\n"), "{bw}");
    let sizes = bw
        .lines()
        .find_map(|l| l.strip_prefix("\tMessage size mean: "))
        .unwrap_or_else(|| panic!("no size line:\n{bw}"));
    // Every message is the same String: mean, min and max agree, in bytes (the
    // encapsulation header, the length, "hello" and its NUL, padded as the writer pads).
    let figures: Vec<&str> = sizes.split(" B").map(str::trim).collect();
    assert!(
        figures.len() >= 3
            && figures[0] == figures[1].trim_start_matches("min: ")
            && figures[0] == figures[2].trim_start_matches("max: "),
        "{bw}"
    );
    let size: u32 = figures[0].parse().expect("bytes");
    assert!((14..=16).contains(&size), "{bw}");
    assert!(
        bw.lines()
            .any(|l| l.contains(" B/s from ") && l.ends_with(" messages")),
        "{bw}"
    );
}

/// `param dump`, `load` and `delete` against a `topic pub` process, whose node is spun
/// between messages so that its parameter services answer.
#[test]
fn param_dump_load_and_delete_reach_a_talkers_node() {
    let domain = test_domain(6);
    let _talker = background_talker(domain, "param_talker", &[]);
    let listed = until(domain, &["param", "list", "/param_talker"], |out| {
        out.contains("use_sim_time")
    });
    assert_eq!(listed, "  start_type_description_service\n  use_sim_time\n");
    let dump = succeed(domain, &["param", "dump", "/param_talker"]);
    assert_eq!(
        dump,
        "/param_talker:\n  ros__parameters:\n    start_type_description_service: true\n    \
         use_sim_time: false\n\n",
        "ros2 prints the file and a line after it"
    );
    // The dump, plus an entry for every node: loaded back, the node's own parameter is set,
    // the read-only one and the undeclared one refused, each reported as ros2 reports it.
    let dir = std::env::temp_dir().join(format!("roslite-param-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("params.yaml");
    std::fs::write(
        &file,
        format!("{dump}/**:\n  ros__parameters:\n    gain: 2.0\n"),
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let load = roslite(domain, &["param", "load", "/param_talker", file])
        .output()
        .unwrap();
    assert_eq!(success(&load), "Set parameter use_sim_time successful\n");
    let read_only = "Set parameter start_type_description_service failed: parameter \
                     'start_type_description_service' cannot be set because it is read-only\n";
    assert_eq!(
        text(&load.stderr),
        format!("Set parameter gain failed: parameter 'gain' has not been declared\n{read_only}")
    );
    let load = roslite(
        domain,
        &["param", "load", "param_talker", file, "--no-use-wildcard"],
    )
    .output()
    .unwrap();
    assert_eq!(success(&load), "Set parameter use_sim_time successful\n");
    assert_eq!(text(&load.stderr), read_only, "the '/**' entry is left out");
    std::fs::write(
        dir.join("other.yaml"),
        "/other:\n  ros__parameters:\n    x: 1\n",
    )
    .unwrap();
    let other = dir.join("other.yaml");
    let stderr = failure(
        domain,
        &["param", "load", "/param_talker", other.to_str().unwrap()],
    );
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        stderr.contains("does not contain parameters for /param_talker"),
        "{stderr}"
    );
    // use_sim_time is statically typed: it cannot be undeclared.
    let stderr = failure(
        domain,
        &["param", "delete", "/param_talker", "use_sim_time"],
    );
    assert!(
        stderr.starts_with("Deleting parameter failed: "),
        "{stderr}"
    );
}

/// A `topic pub` process's node describes the type it publishes on `~/get_type_description`
/// (from the definition the tool loaded, as an rclpy tool's node does), and `service call`
/// reaches it.
#[test]
fn a_talkers_node_describes_the_type_it_publishes() {
    let domain = test_domain(7);
    let _talker = background_talker(domain, "described_talker", &[]);
    let request = "{type_name: std_msgs/msg/String, type_hash: \
                   RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18, \
                   include_type_sources: true}";
    let out = succeed(
        domain,
        &[
            "service",
            "call",
            "/described_talker/get_type_description",
            "type_description_interfaces/srv/GetTypeDescription",
            request,
        ],
    );
    for part in [
        "successful=True",
        "type_name='std_msgs/msg/String'",
        "name='data'",
        "encoding='msg'",
        "semantically meaningful message.",
    ] {
        assert!(out.contains(part), "no {part:?} in:\n{out}");
    }
    let unknown = succeed(
        domain,
        &[
            "service",
            "call",
            "/described_talker/get_type_description",
            "type_description_interfaces/srv/GetTypeDescription",
            "{type_hash: RIHS01_00}",
        ],
    );
    assert!(
        unknown.contains("successful=False, failure_reason='Failed to parse type hash'"),
        "{unknown}"
    );
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `sh -c` running `body` in a network namespace of its own (`unshare --net`) with only `lo`
/// up, multicast on, so default discovery works and nothing leaves; in domain 0, without the
/// discovery and interface settings of the test's environment, output piped.
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
        .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
        .env_remove("ROS_STATIC_PEERS")
        .env_remove("ROSLITE_NETWORK")
        .env_remove("AMENT_PREFIX_PATH")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// `topic echo --once` hears rclpy's talker (Fast DDS), and `topic info -v`, `node info` and
/// `topic hz` describe it, all inside a network namespace made for the test: only `lo`, with
/// multicast, so default discovery works and stays inside.
#[test]
fn echo_once_hears_an_rclpy_talker_in_a_network_namespace() {
    let python = workspace().join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `cargo xtask test`, which installs the ROS 2 peers",
        python.display()
    );
    let talker = workspace().join("interop/python/chatter_talker.py");
    let body = format!(
        "'{python}' '{talker}' 30 >/dev/null 2>&1 &\n\
         talker=$!\n\
         '{roslite}' topic echo --once --spin-time 20 --timeout 30 /chatter\n\
         '{roslite}' topic info -v /chatter\n\
         echo '=== node info'\n\
         '{roslite}' node info /py_talker\n\
         echo '=== hz'\n\
         '{roslite}' topic hz /chatter --timeout 2.5\n\
         kill $talker\n",
        python = python.display(),
        talker = talker.display(),
        roslite = env!("CARGO_BIN_EXE_roslite"),
    );
    let child = in_fresh_namespace(&body)
        .env("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
        .env_remove("FASTDDS_DEFAULT_PROFILES_FILE")
        .spawn()
        .expect("run unshare (util-linux) to make a network namespace");
    let out = success(&finish(child, Duration::from_secs(60)));
    let (echo, rest) = out
        .split_once("---\n")
        .unwrap_or_else(|| panic!("no message echoed: {out}"));
    let (info, rest) = rest
        .split_once("=== node info\n")
        .unwrap_or_else(|| panic!("{out}"));
    let (node_info, hz) = rest
        .split_once("=== hz\n")
        .unwrap_or_else(|| panic!("{out}"));
    assert!(echo.starts_with("data: from rclpy "), "{out}");
    assert_eq!(echo.lines().count(), 1, "{out}");
    assert!(info.starts_with("Type: std_msgs/msg/String\n"), "{out}");
    assert!(info.contains("\nNode name: py_talker\n"), "{out}");
    // Fast DDS does not announce its history, and rclpy says UNKNOWN as well.
    assert!(info.contains("\n  History (Depth): UNKNOWN\n"), "{out}");
    // An rclpy node as ros2 node info shows it: its topics and its services (Kilted's nodes
    // also serve their type descriptions).
    assert!(
        node_info.starts_with(
            "/py_talker\n  Subscribers:\n\n  Publishers:\n    /chatter: std_msgs/msg/String\n"
        ),
        "{out}"
    );
    for service in [
        "    /py_talker/get_parameters: rcl_interfaces/srv/GetParameters\n",
        "    /py_talker/get_type_description: \
         type_description_interfaces/srv/GetTypeDescription\n",
    ] {
        assert!(node_info.contains(service), "{service} missing: {out}");
    }
    // rclpy's talker publishes about every 100 ms (the unit and arithmetic are checked).
    let rate: f64 = hz
        .lines()
        .find_map(|l| l.strip_prefix("average rate: "))
        .unwrap_or_else(|| panic!("no rate: {out}"))
        .parse()
        .expect("a rate");
    assert!((4.0..25.0).contains(&rate), "{out}");
}

/// `topic echo` reports lost messages as ros2 does ("A message was lost!!!" with the change and
/// the total, before the message after the gap), and leaves them out with
/// `--no-lost-messages`. Inside a network namespace made for the test, a best-effort
/// `topic pub` sends 200 messages a second over UDP (`ROSLITE_TRANSPORTS=udp`; shared memory
/// would bypass the drops) while nftables drops 30 % of the user-data datagrams (odd ports:
/// RTPS user traffic; discovery, on even ports, is left alone).
#[test]
fn echo_reports_lost_messages_unless_told_not_to() {
    let body = format!(
        "nft -f - <<'RULES'\n\
         table inet lossy {{\n  chain input {{\n    type filter hook input priority 0; policy accept;\n    \
         udp dport & 1 == 1 numgen random mod 100 < 30 drop\n  }}\n}}\n\
         RULES\n\
         '{roslite}' topic pub -r 200 --qos-reliability best_effort /lossy std_msgs/msg/String \
         'data: x' >/dev/null 2>&1 &\n\
         talker=$!\n\
         echo '=== reported'\n\
         '{roslite}' topic echo --spin-time 20 --timeout 4 /lossy\n\
         echo '=== quiet'\n\
         '{roslite}' topic echo --spin-time 20 --timeout 4 --no-lost-messages /lossy\n\
         kill $talker\n",
        roslite = env!("CARGO_BIN_EXE_roslite"),
    );
    let child = in_fresh_namespace(&body)
        .env("ROSLITE_TRANSPORTS", "udp")
        .spawn()
        .expect("run unshare (util-linux) to make a network namespace");
    let out = success(&finish(child, Duration::from_secs(90)));
    let (reported, quiet) = out
        .split_once("=== quiet\n")
        .unwrap_or_else(|| panic!("no second echo: {out}"));
    let messages = |text: &str| text.matches("data: x\n---\n").count();
    let reports: Vec<(u64, u64)> = reported
        .split("A message was lost!!!\n\ttotal count change:")
        .skip(1)
        .map(|rest| {
            let (change, rest) = rest.split_once("\n\ttotal count: ").expect("total line");
            let total = rest.split_once("---\n").expect("--- after the report").0;
            (
                change.parse().expect("change"),
                total.parse().expect("total"),
            )
        })
        .collect();
    println!(
        "{} messages, {} loss reports (last {:?}); quiet: {} messages",
        messages(reported),
        reports.len(),
        reports.last(),
        messages(quiet)
    );
    assert!(messages(reported) > 100, "{reported}");
    assert!(
        !reports.is_empty(),
        "dropped datagrams were not reported: {reported}"
    );
    // Each report's change is the step from the previous total.
    let mut total = 0;
    for (change, new_total) in &reports {
        assert!(*change > 0 && total + change == *new_total, "{reports:?}");
        total = *new_total;
    }
    assert!(messages(quiet) > 100, "{quiet}");
    assert!(!quiet.contains("A message was lost"), "{quiet}");
}
