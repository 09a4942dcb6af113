//! `roslite lifecycle` managing an rclpy managed node (`rclpy.lifecycle.LifecycleNode`, whose
//! state machine is rcl_lifecycle's) inside a network namespace made for the test: the verbs
//! `nodes`, `get`, `list` and `set` against the node's services, with ros2lifecycle's output.

use std::time::Duration;

use roslite_transport::netns::NetNs;

mod common;
use common::{roslite_in, text, Peer};

const DOMAIN: u32 = 179;

/// `roslite lifecycle <args>`: (success, stdout, stderr).
fn lifecycle(ns: &NetNs, args: &[&str]) -> (bool, String, String) {
    let mut all = vec!["lifecycle"];
    all.extend_from_slice(args);
    let out = roslite_in(ns, DOMAIN, &all);
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn roslite_lifecycle_manages_an_rclpy_managed_node() {
    let ns = NetNs::create("lifecycle_cli").expect("create a network namespace (needs root)");
    let peer = Peer::start(&ns, DOMAIN, "lifecycle_peer.py", "node", 60);
    let (ok, nodes, err) = lifecycle(&ns, &["nodes", "--spin-time", "8"]);
    assert!(ok, "{err}");
    assert_eq!(nodes, "/py_managed\n");
    let get = |ns: &NetNs| {
        let (ok, out, err) = lifecycle(ns, &["get", "/py_managed"]);
        assert!(ok, "{err}");
        out
    };
    assert_eq!(get(&ns), "unconfigured [1]\n");
    let (ok, list, err) = lifecycle(&ns, &["list", "py_managed"]);
    assert!(ok, "{err}");
    assert_eq!(
        list,
        "- configure [1]\n\tStart: unconfigured\n\tGoal: configuring\n\
         - shutdown [5]\n\tStart: unconfigured\n\tGoal: shuttingdown\n"
    );
    let (ok, graph, err) = lifecycle(&ns, &["list", "py_managed", "--all"]);
    assert!(ok, "{err}");
    assert_eq!(graph.matches("\tStart: ").count(), 25, "{graph}");

    // Not a transition from unconfigured: refused before anything is sent, saying what is.
    let (ok, out, err) = lifecycle(&ns, &["set", "/py_managed", "activate"]);
    assert!(!ok && out.is_empty(), "{out}");
    assert!(
        err.contains(
            "Unknown transition requested 'activate' for /py_managed, which is unconfigured [1]"
        ) && err.contains("- configure [1]")
            && err.contains("- shutdown [5]"),
        "{err}"
    );
    let limit = Duration::from_secs(10);
    let (ok, out, err) = lifecycle(&ns, &["set", "/py_managed", "configure"]);
    assert!(ok, "{err}");
    assert_eq!(out, "Transitioning successful\n");
    assert!(peer.wait_line(limit, "callback on_configure unconfigured"));
    assert_eq!(get(&ns), "inactive [2]\n");
    // By id, as ros2 lifecycle also takes it.
    let (ok, out, err) = lifecycle(&ns, &["set", "/py_managed", "3"]);
    assert!(ok, "{err}");
    assert_eq!(out, "Transitioning successful\n");
    assert!(peer.wait_line(limit, "callback on_activate inactive"));
    assert_eq!(get(&ns), "active [3]\n");
    let (ok, all, err) = lifecycle(&ns, &["get"]);
    assert!(ok, "{err}");
    assert_eq!(all, "/py_managed: active [3]\n");
    let (ok, _, err) = lifecycle(&ns, &["set", "/py_managed", "shutdown"]);
    assert!(ok, "{err}");
    assert!(peer.wait_line(limit, "callback on_shutdown active"));
    assert_eq!(get(&ns), "finalized [4]\n");
    let (ok, _, err) = lifecycle(&ns, &["set", "/py_managed", "configure"]);
    assert!(
        !ok && err.contains("no transition leaves that state"),
        "{err}"
    );

    // A node that is not managed has no lifecycle services, and the error says so.
    let (ok, _, err) = lifecycle(&ns, &["get", "/nobody", "--timeout", "1"]);
    assert!(!ok);
    assert!(
        err.contains("no lifecycle service '/nobody/get_state' within 1 s"),
        "{err}"
    );
    peer.stop();
}
