//! The ROS 2 conformance suite, as ROS 2 checks a middleware with `test_msgs`: every
//! `test_msgs` message and service, with the fixtures rclpy's `test_msgs` ships plus edge values
//! (`interop/python/test_msgs_cases.py`), in every direction against real rclpy (Kilted, Fast
//! DDS), inside a network namespace made for the test. The rclpy side is
//! `interop/python/conformance_peer.py`, one process per direction serving every case.
//!
//! Directions, as the table names them:
//! - `echo`, `echo truncated`: rclpy publishes every case; `roslite topic echo --full-length`
//!   and `roslite topic echo` print exactly what `ros2 topic echo` does (rosidl_runtime_py's
//!   `message_to_yaml` of the received message, without and with the default truncation of
//!   strings and arrays at 128).
//! - `pub values`, `pub bytes`: `roslite topic pub` sends every case (its YAML on stdin);
//!   rclpy receives it with the case's values and exactly the bytes rclpy's
//!   `serialize_message` gives (padding bytes aside). Cases with a bounded string rclpy counts
//!   in characters but roslite in bytes are refused by `topic pub` by design (docs/
//!   ros2-interop.md §7; conformance_text.rs checks the refusal) and are not sent here.
//! - `relay values`, `relay bytes`, `relay refuses`: rclpy publishes every case to a roslite
//!   node built on Rust types generated at build time (`interop/test-msgs`, as a user's
//!   build.rs does), which republishes what it decodes; rclpy receives the case's values and
//!   bytes back. A case with a string over its bound in bytes is received, and publishing it
//!   again fails with the bound (`relay refuses`).
//! - `rclpy client`: an rclpy client calls a roslite service server of generated types for
//!   every service case; the server sees the case's request (compared through the generated
//!   types) and the client gets the case's response.
//! - `service call`: `roslite service call` calls an rclpy server for every service case; the
//!   server sees the case's request, and roslite prints the response as rclpy's repr of it.
//! - `graph (rclpy)`: rclpy's graph API gives every roslite endpoint of those topics and
//!   services (subscription, publisher, request reader, reply writer) the type name and
//!   RIHS01 hash of rclpy's own, and lists the services with their types.
//! - `graph (roslite)`: `roslite topic list -t` lists rclpy's topics with their types,
//!   `roslite topic info -v` shows rclpy's publishers with rclpy's type name and hash, and
//!   `roslite service list -t` lists rclpy's services with their types.
//!
//! The suite prints a table of type x direction, passed/total (`cargo test -p roslite-cli
//! --test conformance -- --nocapture`), then fails listing every case that did not pass.
//!
//! test_msgs' keyed types (`KeyedLong`, `KeyedString`, `ComplexNestedKey`, defined in `.idl`
//! only, and `NonKeyedWithNestedKey`, a keyless type holding a keyed one) are cases like the
//! others, in every message direction: roslite's endpoints of a keyed type are keyed, as
//! rclpy's are, or they would not match. Their relay uses the types roslite-msgs ships.

use std::any::Any;
use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Write as _};
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use roslite::{Context, ContextOptions, Executor, Message, NetworkMode, Node, QosProfile};
use roslite_cdr::{from_bytes, to_vec, Endianness};
use roslite_transport::netns::NetNs;
use roslite_transport::{DiscoveryConfig, DiscoveryRange, TransportConfig};
use serde_json::Value;

mod common;
use common::{
    call_lines, difference, failure, field, parallel_map, roslite_command, roslite_in, text, Peer,
    Tally,
};

const DOMAIN: u32 = 0;
const SCRIPT: &str = "conformance_peer.py";
/// `roslite` processes of one direction running at once.
const PARALLEL: usize = 4;
/// The longest any one step waits (discovery plus a case, or a peer's whole direction).
const STEP: Duration = Duration::from_secs(60);

/// Calls `$m!(type)` for every test_msgs message: those of `.msg` files with the types
/// `interop/test-msgs` generates, the keyed ones (`.idl` only) with those roslite-msgs ships,
/// which a user's build does not generate again.
macro_rules! test_msgs_messages {
    ($m:ident) => {
        $m!(test_msgs::msg::Arrays);
        $m!(test_msgs::msg::BasicTypes);
        $m!(test_msgs::msg::BoundedPlainSequences);
        $m!(test_msgs::msg::BoundedSequences);
        $m!(test_msgs::msg::Builtins);
        $m!(test_msgs::msg::Constants);
        $m!(test_msgs::msg::Defaults);
        $m!(test_msgs::msg::Empty);
        $m!(test_msgs::msg::MultiNested);
        $m!(test_msgs::msg::Nested);
        $m!(test_msgs::msg::Strings);
        $m!(test_msgs::msg::UnboundedSequences);
        $m!(test_msgs::msg::WStrings);
        $m!(roslite_msgs::test_msgs::msg::KeyedLong);
        $m!(roslite_msgs::test_msgs::msg::KeyedString);
        $m!(roslite_msgs::test_msgs::msg::NonKeyedWithNestedKey);
        $m!(roslite_msgs::test_msgs::msg::ComplexNestedKey);
    };
}

fn short(ty: &str) -> &str {
    ty.rsplit('/').next().unwrap_or_default()
}

fn decode_hex(hex: &str) -> Vec<u8> {
    (0..hex.len() / 2)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex from the rclpy side"))
        .collect()
}

/// Cases with their numbers.
type Numbered<'a> = Vec<(usize, &'a Value)>;

/// A direction: runs its cases and records them.
type Direction = fn(&NetNs, &[Value], &mut Tally);

/// The message cases (number, case), and the service ones.
fn split(cases: &[Value]) -> (Numbered<'_>, Numbered<'_>) {
    let numbered = cases.iter().enumerate();
    (
        numbered
            .clone()
            .filter(|(_, c)| c["kind"] == "msg")
            .collect(),
        numbered.filter(|(_, c)| c["kind"] == "srv").collect(),
    )
}

// ---- echo and graph (roslite) -------------------------------------------------------------

/// What one `roslite topic echo` printed: each message's text up to its `---` line.
fn echoed(mut child: Child, expected: usize) -> (Vec<String>, String) {
    let stdout = child.stdout.take().expect("stdout");
    let mut messages = Vec::new();
    let mut current = String::new();
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        if line == "---" {
            messages.push(std::mem::take(&mut current));
            if messages.len() == expected {
                break;
            }
        } else {
            current.push_str(&line);
            current.push('\n');
        }
    }
    let _ = child.kill();
    let output = child.wait_with_output().expect("wait for roslite");
    (messages, text(&output.stderr))
}

fn echo_direction(ns: &NetNs, cases: &[Value], tally: &mut Tally) {
    let source = Peer::start(ns, DOMAIN, SCRIPT, "source", 300);
    let (messages, _) = split(cases);
    let mut by_type: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for (_, case) in &messages {
        by_type.entry(field(case, "type")).or_default().push(case);
    }
    // (table direction, the case's expected text, what `topic echo` is given besides).
    let variants: [(&'static str, &str, &[&str]); 2] = [
        ("echo", "echo", &["--full-length"]),
        ("echo truncated", "echo_truncated", &[]),
    ];
    let runs: Vec<(&str, &'static str, &str)> = variants
        .iter()
        .flat_map(|&(direction, key, _)| by_type.keys().map(move |ty| (*ty, direction, key)))
        .collect();
    let results: Vec<(Vec<String>, String)> = std::thread::scope(|scope| {
        let handles: Vec<_> = runs
            .iter()
            .map(|&(ty, direction, _)| {
                let extra = variants.iter().find(|v| v.0 == direction).map(|v| v.2);
                let child = roslite_command(ns, DOMAIN)
                    .args(["topic", "echo", "--timeout", "60"])
                    .args(extra.unwrap_or_default())
                    .args(["--qos-reliability", "reliable"])
                    .args(["--qos-durability", "transient_local"])
                    .args(["--qos-history", "keep_all"])
                    .arg(format!("/conformance/echo/{}", short(ty)))
                    .arg(ty)
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("run roslite topic echo");
                let expected = by_type[ty].len();
                scope.spawn(move || echoed(child, expected))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("an echo thread"))
            .collect()
    });
    for (&(ty, direction, key), (texts, stderr)) in runs.iter().zip(results) {
        let group = &by_type[ty];
        for (i, case) in group.iter().enumerate() {
            let expected = field(case, key);
            let failure = match texts.get(i) {
                _ if texts.len() != group.len() => Some(format!(
                    "topic echo printed {} messages of {}, so they cannot be told apart: {}",
                    texts.len(),
                    group.len(),
                    stderr.trim()
                )),
                Some(got) if got == expected => None,
                Some(got) => Some(difference(expected, got)),
                None => unreachable!("as many texts as cases"),
            };
            tally.record(ty, direction, field(case, "case"), failure);
        }
    }
    roslite_graph(ns, &source, &by_type, tally);
    source.stop();
}

/// `roslite topic list -t` and `topic info -v` on the topics rclpy publishes.
fn roslite_graph(
    ns: &NetNs,
    source: &Peer,
    by_type: &BTreeMap<&str, Vec<&Value>>,
    tally: &mut Tally,
) {
    let list = roslite_in(ns, DOMAIN, &["topic", "list", "-t", "--spin-time", "10"]);
    let listed = text(&list.stdout);
    let endpoints = source.reports();
    let infos: Vec<(&str, String)> = std::thread::scope(|scope| {
        let handles: Vec<_> = by_type
            .keys()
            .map(|ty| {
                scope.spawn(move || {
                    let topic = format!("/conformance/echo/{}", short(ty));
                    let output = roslite_in(ns, DOMAIN, &["topic", "info", "-v", &topic]);
                    (
                        *ty,
                        format!("{}{}", text(&output.stdout), text(&output.stderr)),
                    )
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("an info thread"))
            .collect()
    });
    for (ty, info) in infos {
        let topic = format!("/conformance/echo/{}", short(ty));
        let line = format!("{topic} [{ty}]");
        let failure = (!listed.lines().any(|l| l == line))
            .then(|| format!("`{line}` missing from `topic list -t`:\n{listed}"));
        tally.record(ty, "graph (roslite)", "topic list -t", failure);

        let rclpy = endpoints.iter().find(|e| field(e, "endpoint") == topic);
        let failure = match rclpy {
            None => Some("rclpy reported no publisher of its own".to_owned()),
            Some(endpoint) => {
                let wanted = [
                    "Node name: conformance_source".to_owned(),
                    format!("Topic type: {}", field(endpoint, "type")),
                    format!("Topic type hash: {}", field(endpoint, "hash")),
                    "Endpoint type: PUBLISHER".to_owned(),
                ];
                let block = info
                    .split("\n\n")
                    .find(|b| b.contains("Node name: conformance_source"))
                    .unwrap_or_default();
                wanted
                    .iter()
                    .find(|w| !block.lines().any(|l| l == w.as_str()))
                    .map(|w| format!("`{w}` missing from `topic info -v`:\n{info}"))
            }
        };
        tally.record(ty, "graph (roslite)", "topic info -v", failure);
    }
}

// ---- topic pub -----------------------------------------------------------------------------

/// Sends case `n` with `roslite topic pub` and waits for the sink's report of it.
fn publish_case(
    ns: &NetNs,
    sink: &Peer,
    n: usize,
    case: &Value,
) -> (Option<String>, Option<String>) {
    let mut child = roslite_command(ns, DOMAIN)
        .args(["topic", "pub", "--stdin", "--once", "-w", "1"])
        .args(["--max-wait-time-secs", "60", "--keep-alive", "60"])
        .arg(format!("/conformance/pub/c{n}"))
        .arg(field(case, "type"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run roslite topic pub");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(field(case, "yaml").as_bytes())
        .expect("write the values");
    drop(stdin);
    let report = sink.wait_report(STEP, |r| r["case"].as_u64() == Some(n as u64));
    let _ = child.kill();
    let output = child.wait_with_output().expect("wait for roslite");
    match report {
        Some(report) => (failure(&report, "values"), failure(&report, "bytes")),
        None => {
            let why = format!("rclpy received nothing: {}", text(&output.stderr).trim());
            (Some(why.clone()), Some(why))
        }
    }
}

fn pub_direction(ns: &NetNs, cases: &[Value], tally: &mut Tally) {
    let sink = Peer::start(ns, DOMAIN, SCRIPT, "sink", 600);
    let (messages, _) = split(cases);
    let sent: Vec<(usize, &Value)> = messages
        .into_iter()
        .filter(|(_, c)| c["refused"].is_null())
        .collect();
    let outcomes = parallel_map(&sent, PARALLEL, |&(n, case)| {
        publish_case(ns, &sink, n, case)
    });
    for (&(_, case), (values, bytes)) in sent.iter().zip(outcomes) {
        let (ty, label) = (field(case, "type"), field(case, "case"));
        tally.record(ty, "pub values", label, values);
        tally.record(ty, "pub bytes", label, bytes);
    }
    sink.stop();
}

// ---- generated types: relay, server, graph (rclpy) ----------------------------------------

/// A context whose sockets live in `ns`, with default (SUBNET, multicast) discovery.
fn context_in(ns: &NetNs) -> Context {
    ns.run(|| {
        let discovery = DiscoveryConfig {
            domain_id: DOMAIN,
            range: DiscoveryRange::Subnet,
            ..Default::default()
        };
        Context::new(ContextOptions {
            domain_id: DOMAIN,
            network: NetworkMode::Rtps(TransportConfig::new(discovery)),
            ..Default::default()
        })
    })
    .expect("enter the test namespace")
    .expect("start RTPS inside the namespace")
}

/// Every case kept until read, in order, also for a late subscriber.
fn keep_all() -> QosProfile {
    QosProfile::DEFAULT.reliable().transient_local().keep_all()
}

type Keep = Vec<Box<dyn Any + Send>>;

/// What the relay could not publish again: (type name, error).
type RelayErrors = Arc<Mutex<Vec<(&'static str, String)>>>;

/// Republishes what `/conformance/relay/<Name>/in` brings, as `T` decoded it, on `.../out`.
fn relay<T: Message>(node: &Node, errors: &RelayErrors, keep: &mut Keep) {
    let topic = format!("/conformance/relay/{}", short(T::TYPE_NAME));
    let publisher = Arc::new(
        node.create_publisher::<T>(&format!("{topic}/out"), keep_all())
            .expect("a relay publisher"),
    );
    let out = publisher.clone();
    let errors = errors.clone();
    let subscription = node
        .create_subscription::<T, _>(&format!("{topic}/in"), keep_all(), move |msg: T| {
            if let Err(e) = out.publish(msg) {
                errors.lock().unwrap().push((T::TYPE_NAME, e.to_string()));
            }
        })
        .expect("a relay subscription");
    keep.push(Box::new(publisher));
    keep.push(Box::new(subscription));
}

/// What the generated servers saw: the case number and what differed in its request.
type Served = Arc<Mutex<HashMap<usize, Option<String>>>>;

/// Serves `/conformance/gen/c<n>` with `S`: answers the case's response, and compares the
/// request with the case's through the generated types (their encodings, so NaN equals NaN
/// and -0.0 differs from 0.0).
fn serve<S: roslite::ServiceType>(
    node: &Node,
    n: usize,
    case: &Value,
    served: &Served,
    keep: &mut Keep,
) {
    let expected: S::Request =
        from_bytes(&decode_hex(field(case, "request_cdr"))).expect("the case's request decodes");
    let expected = to_vec(&expected, Endianness::Little).expect("the case's request encodes");
    let response: S::Response =
        from_bytes(&decode_hex(field(case, "response_cdr"))).expect("the case's response decodes");
    let served = served.clone();
    let service = node
        .create_service::<S, _>(
            &format!("/conformance/gen/c{n}"),
            move |request: S::Request| {
                let got = to_vec(&request, Endianness::Little);
                let verdict = match got {
                    Ok(got) if got == expected => None,
                    Ok(got) => Some(format!(
                        "the server got the request {}, expected {}",
                        hex(&got),
                        hex(&expected)
                    )),
                    Err(e) => Some(format!("the request does not encode again: {e}")),
                };
                served.lock().unwrap().insert(n, verdict);
                response.clone()
            },
        )
        .expect("a generated service");
    keep.push(Box::new(service));
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn generated_direction(ns: &NetNs, cases: &[Value], tally: &mut Tally) {
    let ctx = context_in(ns);
    let node = ctx.create_node("conformance_generated").expect("a node");
    let errors: RelayErrors = Arc::default();
    let served: Served = Arc::default();
    let mut keep: Keep = Vec::new();
    macro_rules! relay_message {
        ($ty:ty) => {
            relay::<$ty>(&node, &errors, &mut keep)
        };
    }
    test_msgs_messages!(relay_message);
    let (messages, services) = split(cases);
    for &(n, case) in &services {
        match field(case, "type") {
            "test_msgs/srv/Arrays" => {
                serve::<test_msgs::srv::Arrays>(&node, n, case, &served, &mut keep)
            }
            "test_msgs/srv/BasicTypes" => {
                serve::<test_msgs::srv::BasicTypes>(&node, n, case, &served, &mut keep)
            }
            "test_msgs/srv/Empty" => {
                serve::<test_msgs::srv::Empty>(&node, n, case, &served, &mut keep)
            }
            other => panic!("no generated service type for {other}"),
        }
    }
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let executor = Executor::new(&ctx);
            executor.add_node(&node);
            while !stop.load(Ordering::Relaxed) {
                executor.spin_once(Some(Duration::from_millis(50)));
            }
        });
        let peer = Peer::start(ns, DOMAIN, SCRIPT, "relay", 120);
        let done = peer.wait_line(Duration::from_secs(150), "DONE");
        stop.store(true, Ordering::Relaxed);
        let reports = peer.reports();
        let stderr = if done { String::new() } else { peer.stderr() };
        drop(peer);
        record_generated(
            &messages, &services, &reports, &served, &errors, done, &stderr, tally,
        );
    });
}

#[allow(clippy::too_many_arguments)]
fn record_generated(
    messages: &[(usize, &Value)],
    services: &[(usize, &Value)],
    reports: &[Value],
    served: &Served,
    errors: &RelayErrors,
    done: bool,
    stderr: &str,
    tally: &mut Tally,
) {
    let unfinished = (!done).then(|| format!("the rclpy relay peer did not finish: {stderr}"));
    let report_of =
        |key: &str, n: usize| reports.iter().find(|r| r[key].as_u64() == Some(n as u64));
    let errors = errors.lock().unwrap();
    let errors_of = |ty: &str| {
        errors
            .iter()
            .filter(|(t, _)| *t == ty)
            .map(|(_, e)| e.as_str())
            .collect::<Vec<_>>()
    };
    for &(n, case) in messages {
        let (ty, label) = (field(case, "type"), field(case, "case"));
        if let Some(refused) = case["refused"].as_str() {
            // Received (bounds counted in characters), but not sent again: roslite sends a
            // bounded string only within its bound in bytes (docs/ros2-interop.md §7).
            let errors = errors_of(ty);
            let failure = (!errors.iter().any(|e| e.contains("over its bound of"))).then(|| {
                format!("publishing `{refused}` again did not fail with the bound: {errors:?}")
            });
            tally.record(ty, "relay refuses", label, failure);
            continue;
        }
        let (values, bytes) = match report_of("relay", n) {
            Some(r) => (failure(r, "values"), failure(r, "bytes")),
            None => {
                let why = unfinished
                    .clone()
                    .unwrap_or_else(|| format!("no report; relay errors: {:?}", errors_of(ty)));
                (Some(why.clone()), Some(why))
            }
        };
        tally.record(ty, "relay values", label, values);
        tally.record(ty, "relay bytes", label, bytes);
    }
    for report in reports
        .iter()
        .filter(|r| r["relay"].is_null() && r.get("relay").is_some())
    {
        tally.record(
            field(report, "type"),
            "relay values",
            "extra",
            failure(report, "failure"),
        );
    }
    let served = served.lock().unwrap();
    for &(n, case) in services {
        let (ty, label) = (field(case, "type"), field(case, "case"));
        let server = match served.get(&n) {
            Some(verdict) => verdict.clone(),
            None => Some("the roslite server got no request".to_owned()),
        };
        let client = match report_of("client", n) {
            Some(r) => {
                failure(r, "values").map(|why| format!("the client got a response whose {why}"))
            }
            None => Some(
                unfinished
                    .clone()
                    .unwrap_or_else(|| "no client report".to_owned()),
            ),
        };
        let failure = match (server, client) {
            (None, None) => None,
            (a, b) => Some([a, b].into_iter().flatten().collect::<Vec<_>>().join("; ")),
        };
        tally.record(ty, "rclpy client", label, failure);
    }
    let graph: Vec<&Value> = reports
        .iter()
        .filter(|r| r.get("graph").is_some())
        .collect();
    if graph.is_empty() {
        tally.record(
            "(all)",
            "graph (rclpy)",
            "graph",
            unfinished.or(Some("no graph report".into())),
        );
    }
    for report in graph {
        let what = field(report, "graph");
        let ty = what.split(' ').next().unwrap_or_default();
        tally.record(ty, "graph (rclpy)", what, failure(report, "failure"));
    }
}

// ---- service call --------------------------------------------------------------------------

fn call_direction(ns: &NetNs, cases: &[Value], tally: &mut Tally) {
    let server = Peer::start(ns, DOMAIN, SCRIPT, "serve", 300);
    let (_, services) = split(cases);
    let list = roslite_in(ns, DOMAIN, &["service", "list", "-t", "--spin-time", "10"]);
    let listed = text(&list.stdout);
    for &(n, case) in &services {
        let line = format!("/conformance/call/c{n} [{}]", field(case, "type"));
        let failure = (!listed.lines().any(|l| l == line))
            .then(|| format!("`{line}` missing from `service list -t`:\n{listed}"));
        tally.record(
            field(case, "type"),
            "graph (roslite)",
            "service list -t",
            failure,
        );
    }
    let outputs = parallel_map(&services, PARALLEL, |&(n, case)| {
        let service = format!("/conformance/call/c{n}");
        let args = [
            "service",
            "call",
            &service,
            field(case, "type"),
            field(case, "yaml"),
        ];
        roslite_in(ns, DOMAIN, &[&args[..], &["--timeout", "60"]].concat())
    });
    for (&(n, case), output) in services.iter().zip(outputs) {
        let (ty, label) = (field(case, "type"), field(case, "case"));
        let stdout = text(&output.stdout);
        let printed = match call_lines(&stdout) {
            Some((_, response)) if output.status.success() => {
                let expected = field(case, "response_repr");
                (response != expected)
                    .then(|| format!("the response printed {}", difference(expected, response)))
            }
            _ => Some(format!("call failed: {stdout}{}", text(&output.stderr))),
        };
        let served = |r: &Value| r["served"].as_u64() == Some(n as u64);
        let request = match server.wait_report(Duration::from_secs(5), served) {
            Some(r) => {
                failure(&r, "values").map(|why| format!("the server got a request whose {why}"))
            }
            None => Some("the rclpy server got no request".to_owned()),
        };
        let failure = match (request, printed) {
            (None, None) => None,
            (a, b) => Some([a, b].into_iter().flatten().collect::<Vec<_>>().join("; ")),
        };
        tally.record(ty, "service call", label, failure);
    }
    server.stop();
}

#[test]
fn wire_conformance_against_rclpy() {
    let started = Instant::now();
    let cases = common::cases(SCRIPT);
    let (messages, services) = split(&cases);
    assert!(
        messages.len() > 50,
        "too few message cases: {}",
        messages.len()
    );
    assert!(
        services.len() > 3,
        "too few service cases: {}",
        services.len()
    );
    let ns = NetNs::create("conformance").expect("create a network namespace");
    let mut tally = Tally::default();
    let directions: [(&str, Direction); 4] = [
        ("echo and graph (roslite)", echo_direction),
        ("topic pub", pub_direction),
        ("generated types and graph (rclpy)", generated_direction),
        ("service call", call_direction),
    ];
    for (name, run) in directions {
        let start = Instant::now();
        run(&ns, &cases, &mut tally);
        println!("{name}: {:.1} s", start.elapsed().as_secs_f64());
    }
    println!(
        "{} cases, every direction, in {:.1} s",
        cases.len(),
        started.elapsed().as_secs_f64()
    );
    tally.finish();
}
