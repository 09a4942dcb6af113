//! roslite against real ROS 2 (rclpy over Fast DDS, from the PyPI wheels in ./.venv, which
//! `cargo xtask test` installs), inside a network namespace made for the test: only `lo`, with
//! multicast, so default (SUBNET) discovery works and nothing can leave the machine.

use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use roslite::msgs::std_msgs::msg::String as StringMsg;
use roslite::Executor;
use roslite_transport::netns::NetNs;

mod common;

const DOMAIN: u32 = 0;

fn rclpy(ns: &NetNs, script: &str, args: &[&str]) -> Command {
    common::rclpy_script(ns, DOMAIN, script, args)
}

#[test]
fn rclpy_listener_hears_a_roslite_talker_and_sees_its_node() {
    let ns = NetNs::create("rclpy-listen")
        .expect("create a network namespace (needs root and iproute2)");
    let ctx = common::networked_in(&ns, DOMAIN);
    let node = ctx.create_node("roslite_talker").unwrap();
    let publisher = node.create_publisher::<StringMsg>("chatter", 10).unwrap();
    let listener = rclpy(&ns, "chatter_listener.py", &["20", "5"])
        .spawn()
        .unwrap();
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
    let output = listener.wait_with_output().unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    talker.join().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "rclpy failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("RESULT 5"), "{stdout}");
    assert!(stdout.contains("HEARD from roslite"), "{stdout}");
    let nodes = stdout
        .lines()
        .find(|l| l.starts_with("NODES"))
        .unwrap_or_default();
    assert!(
        nodes.contains("/roslite_talker"),
        "rclpy's graph lacks the roslite node: {nodes}"
    );
}

#[test]
fn roslite_listener_hears_an_rclpy_talker_and_sees_its_node() {
    let ns =
        NetNs::create("rclpy-talk").expect("create a network namespace (needs root and iproute2)");
    let ctx = common::networked_in(&ns, DOMAIN);
    let node = ctx.create_node("roslite_listener").unwrap();
    let heard = Arc::new(Mutex::new(Vec::new()));
    let sink = heard.clone();
    let _sub = node
        .create_subscription("chatter", 10, move |m: StringMsg| {
            sink.lock().unwrap().push(m.data)
        })
        .unwrap();
    let mut talker = rclpy(&ns, "chatter_talker.py", &["20"]).spawn().unwrap();
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    let start = Instant::now();
    while heard.lock().unwrap().len() < 5 && start.elapsed() < Duration::from_secs(20) {
        executor.spin_once(Some(Duration::from_millis(100)));
    }
    // The talker's graph entry comes as transient-local history once discovery completes.
    let py_talker = ("/".to_owned(), "py_talker".to_owned());
    let mut nodes = ctx.network().unwrap().node_names();
    while !nodes.contains(&py_talker) && start.elapsed() < Duration::from_secs(20) {
        executor.spin_once(Some(Duration::from_millis(100)));
        nodes = ctx.network().unwrap().node_names();
    }
    let _ = talker.kill();
    let _ = talker.wait();
    let heard = heard.lock().unwrap();
    assert!(heard.len() >= 5, "heard only {heard:?}");
    assert!(
        heard.iter().all(|m| m.starts_with("from rclpy ")),
        "{heard:?}"
    );
    assert!(
        nodes.contains(&("/".to_owned(), "py_talker".to_owned())),
        "{nodes:?}"
    );
}
