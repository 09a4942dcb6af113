//! Caps that say so: when a process reaches one of the network's caps (remote participants,
//! remote endpoints, local endpoints, reassembly bytes, a keep-all history), it warns once,
//! naming the variable that raises the cap, and keeps working for what fits. Each test runs
//! roslite processes inside a network namespace made for it, with the cap set low.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use roslite_transport::netns::NetNs;

/// `roslite args...` inside `ns` with `env`, stdout and stderr piped.
fn roslite(ns: &NetNs, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut command = ns.command(env!("CARGO_BIN_EXE_roslite"));
    command
        .args(args)
        .env("ROS_DOMAIN_ID", "3")
        .env("RUST_BACKTRACE", "0")
        .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
        .env_remove("ROSLITE_NETWORK")
        .env_remove("ROSLITE_TRANSPORTS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in env {
        command.env(key, value);
    }
    command
}

/// Kills `child` and returns what it printed (stdout, stderr).
fn finish(mut child: Child) -> (String, String) {
    let _ = child.kill();
    let output = child.wait_with_output().expect("collect output");
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// How often `needle` occurs in `text`.
fn count(text: &str, needle: &str) -> usize {
    text.matches(needle).count()
}

/// Publishers of `data: from_<i>` on /limits, ten a second.
fn publishers(ns: &NetNs, n: usize, env: &[(&str, &str)]) -> Vec<Child> {
    (0..n)
        .map(|i| {
            roslite(
                ns,
                &[
                    "topic",
                    "pub",
                    "/limits",
                    "std_msgs/msg/String",
                    &format!("data: from_{i}"),
                    "-r",
                    "10",
                    "-p",
                    "0",
                ],
                env,
            )
            .spawn()
            .expect("start a publisher")
        })
        .collect()
}

/// The distinct publishers an echo of /limits heard (`data: from_<i>` lines).
fn heard(stdout: &str) -> std::collections::BTreeSet<String> {
    stdout
        .lines()
        .filter_map(|l| l.trim().strip_prefix("data: "))
        .map(|s| s.trim_matches('\'').to_owned())
        .collect()
}

fn echo(ns: &NetNs, seconds: &str, env: &[(&str, &str)]) -> (String, String) {
    let child = roslite(
        ns,
        &[
            "topic",
            "echo",
            "/limits",
            "std_msgs/msg/String",
            "--timeout",
            seconds,
        ],
        env,
    )
    .spawn()
    .expect("start the echo");
    let output = child.wait_with_output().expect("echo output");
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn remote_participant_cap_warns_once_and_keeps_those_it_holds() {
    let ns = NetNs::create("cap-parts").expect("create a network namespace");
    let pubs = publishers(&ns, 3, &[]);
    let (stdout, stderr) = echo(&ns, "4", &[("ROSLITE_MAX_REMOTE_PARTICIPANTS", "2")]);
    for p in pubs {
        finish(p);
    }
    let heard = heard(&stdout);
    assert!(
        !heard.is_empty() && heard.len() <= 2,
        "heard {heard:?} of 3 publishers with room for 2\n{stderr}"
    );
    assert_eq!(
        count(&stderr, "ROSLITE_MAX_REMOTE_PARTICIPANTS="),
        1,
        "one warning naming the variable:\n{stderr}"
    );
    assert!(
        stderr.contains("reached the limit of 2 remote participants"),
        "{stderr}"
    );
}

#[test]
fn remote_endpoint_cap_warns_once_and_keeps_those_it_holds() {
    let ns = NetNs::create("cap-ends").expect("create a network namespace");
    // Without parameter services a publisher process announces a handful of endpoints; room
    // for 8 holds at least one process's.
    let lean = [("ROSLITE_PARAMETER_SERVICES", "off")];
    let pubs = publishers(&ns, 3, &lean);
    let (stdout, stderr) = echo(
        &ns,
        "4",
        &[
            ("ROSLITE_MAX_REMOTE_ENDPOINTS", "8"),
            ("ROSLITE_PARAMETER_SERVICES", "off"),
        ],
    );
    for p in pubs {
        finish(p);
    }
    assert!(!heard(&stdout).is_empty(), "heard nobody:\n{stderr}");
    assert_eq!(
        count(&stderr, "ROSLITE_MAX_REMOTE_ENDPOINTS="),
        1,
        "one warning naming the variable:\n{stderr}"
    );
}

#[test]
fn local_endpoint_cap_warns_once_and_the_node_stays_in_the_graph() {
    let ns = NetNs::create("cap-local").expect("create a network namespace");
    // Room for the graph's own writer and reader and /rosout: the parameter services,
    // ~/get_type_description, the parameter events and the publisher itself do not fit
    // (seventeen refusals, one warning).
    let mut capped = roslite(
        &ns,
        &[
            "topic",
            "pub",
            "/limits",
            "std_msgs/msg/String",
            "data: capped",
            "-r",
            "10",
            "-p",
            "0",
            "-n",
            "capped_talker",
        ],
        &[("ROSLITE_MAX_LOCAL_ENDPOINTS", "3")],
    )
    .spawn()
    .expect("start the capped publisher");
    // What fits keeps working: its node is in the graph other processes see.
    let deadline = Instant::now() + Duration::from_secs(20);
    let listed = loop {
        let out = roslite(&ns, &["node", "list"], &[]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if text.contains("/capped_talker") || Instant::now() > deadline {
            break text;
        }
    };
    let still_running = capped.try_wait().unwrap().is_none();
    let (_, stderr) = finish(capped);
    assert!(still_running, "the capped process failed:\n{stderr}");
    assert!(listed.contains("/capped_talker"), "{listed}\n{stderr}");
    assert_eq!(
        count(&stderr, "ROSLITE_MAX_LOCAL_ENDPOINTS="),
        1,
        "one warning naming the variable:\n{stderr}"
    );
    assert!(
        stderr.contains("reached the limit of 3 local RTPS writers and readers"),
        "{stderr}"
    );
}

/// `roslite bench throughput-peer` (the throughput bench's helper) over UDP.
fn throughput_peer(
    ns: &NetNs,
    role: &str,
    history: &str,
    size: &str,
    duration_ms: &str,
    env: &[(&str, &str)],
) -> Child {
    roslite(
        ns,
        &[
            "bench",
            "throughput-peer",
            "--role",
            role,
            "--domain",
            "3",
            "--path",
            "udp",
            "--history",
            history,
            "--depth",
            "10",
            "--size",
            size,
            "--warmup-ms",
            "100",
            "--duration-ms",
            duration_ms,
        ],
        env,
    )
    .spawn()
    .expect("start a throughput peer")
}

/// Reads `child`'s stdout until a line starts with `prefix` or `timeout` passes. The rest of
/// its output is read and dropped, so the child never writes to a closed pipe.
fn wait_for_line(child: &mut Child, prefix: &str, timeout: Duration) -> Option<String> {
    let mut stdout = child.stdout.take()?;
    let (tx, rx) = std::sync::mpsc::channel();
    let prefix = prefix.to_owned();
    std::thread::spawn(move || {
        let mut text = String::new();
        let mut byte = [0u8; 1];
        while let Ok(1) = stdout.read(&mut byte) {
            if byte[0] == b'\n' {
                if text.starts_with(&prefix) {
                    let _ = tx.send(text.clone());
                }
                text.clear();
            } else {
                text.push(char::from(byte[0]));
            }
        }
    });
    rx.recv_timeout(timeout).ok()
}

#[test]
fn reassembly_cap_warns_once_and_smaller_samples_keep_flowing() {
    let ns = NetNs::create("cap-frag").expect("create a network namespace");
    // 256 KiB of fragments per participant: one publisher's 1 MiB samples never fit, the
    // other's 32 KiB ones do.
    let mut sub = throughput_peer(
        &ns,
        "subscriber",
        "keep-last",
        "32768",
        "1500",
        &[("ROSLITE_REASSEMBLY_MAX_BYTES_PER_PARTICIPANT", "256K")],
    );
    std::thread::sleep(Duration::from_millis(300));
    let big = throughput_peer(&ns, "publisher", "keep-last", "1048576", "1500", &[]);
    let small = throughput_peer(&ns, "publisher", "keep-last", "32768", "1500", &[]);
    let result = wait_for_line(&mut sub, "RESULT", Duration::from_secs(40));
    finish(big);
    finish(small);
    let (_, stderr) = finish(sub);
    let result = result.unwrap_or_else(|| panic!("the subscriber got nothing:\n{stderr}"));
    let received: u64 = result
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix("received="))
        .and_then(|n| n.parse().ok())
        .unwrap();
    let bytes: u64 = result
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix("bytes="))
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(received > 0, "{result}");
    assert_eq!(
        bytes,
        received * 32768,
        "only the small samples arrived: {result}"
    );
    assert_eq!(
        count(&stderr, "ROSLITE_REASSEMBLY_MAX_BYTES_PER_PARTICIPANT="),
        1,
        "one warning naming the variable:\n{stderr}"
    );
}

#[test]
fn keep_all_history_cap_warns_once_and_the_stream_resumes() {
    let ns = NetNs::create("cap-hist").expect("create a network namespace");
    let mut sub = throughput_peer(&ns, "subscriber", "keep-all", "16384", "3000", &[]);
    std::thread::sleep(Duration::from_millis(300));
    // A history of 256 KiB: sixteen samples of 16 KiB.
    let mut publisher = throughput_peer(
        &ns,
        "publisher",
        "keep-all",
        "16384",
        "3000",
        &[("ROSLITE_KEEP_ALL_MAX_BYTES", "256K")],
    );
    let started = wait_for_line(&mut publisher, "START", Duration::from_secs(30));
    assert!(started.is_some(), "the publisher did not start");
    // The subscriber stops taking anything (SIGSTOP): its reader stops acknowledging, the
    // publisher's history fills and its publishes time out.
    let pid = sub.id().to_string();
    let signal = |sig: &str| {
        assert!(Command::new("kill")
            .args([sig, &pid])
            .status()
            .unwrap()
            .success());
    };
    signal("-STOP");
    std::thread::sleep(Duration::from_millis(1500));
    signal("-CONT");
    let result = wait_for_line(&mut sub, "RESULT", Duration::from_secs(40));
    let (_, pub_stderr) = finish(publisher);
    let (_, sub_stderr) = finish(sub);
    let result =
        result.unwrap_or_else(|| panic!("the stream did not resume:\n{pub_stderr}\n{sub_stderr}"));
    assert!(result.contains("gaps=0"), "keep-all lost nothing: {result}");
    assert_eq!(
        count(&pub_stderr, "ROSLITE_KEEP_ALL_MAX_BYTES="),
        1,
        "one warning naming the variable:\n{pub_stderr}"
    );
    assert!(
        pub_stderr.contains("found its history full"),
        "{pub_stderr}"
    );
}
