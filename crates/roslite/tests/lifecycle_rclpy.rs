//! A roslite managed (lifecycle) node, managed by rclpy through its five services, inside a
//! network namespace made for the test (only `lo`, multicast on): `interop/python/
//! lifecycle_peer.py manage` configures, activates, deactivates and shuts the node down as
//! `ros2 lifecycle set` does, while listening to the node's lifecycle publisher and its
//! transition events.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use roslite::lifecycle::{CallbackReturn, LifecycleCallbacks, LifecycleNode, LifecycleState};
use roslite::msgs::std_msgs::msg::String as StringMsg;
use roslite::Timer;
use roslite_transport::netns::NetNs;

mod common;
use common::LinePeer;

const DOMAIN: u32 = 178;

/// A talker that publishes "tick N" every 50 ms once configured; its publisher sends only
/// while the node is active.
#[derive(Default)]
struct Ticker {
    timer: Option<Timer>,
    callbacks: Arc<Mutex<Vec<String>>>,
}

impl LifecycleCallbacks for Ticker {
    fn on_configure(&mut self, node: &LifecycleNode, _: LifecycleState) -> CallbackReturn {
        self.callbacks.lock().unwrap().push("on_configure".into());
        let publisher = match node.create_publisher::<StringMsg>("/managed_chatter", 10) {
            Ok(p) => p,
            Err(_) => return CallbackReturn::Failure,
        };
        let mut count = 0;
        let timer = node.create_wall_timer(Duration::from_millis(50), move || {
            count += 1;
            let _ = publisher.publish(StringMsg {
                data: format!("tick {count}"),
            });
        });
        self.timer = timer.ok();
        CallbackReturn::Success
    }
    fn on_activate(&mut self, _: &LifecycleNode, _: LifecycleState) -> CallbackReturn {
        self.callbacks.lock().unwrap().push("on_activate".into());
        CallbackReturn::Success
    }
    fn on_deactivate(&mut self, _: &LifecycleNode, _: LifecycleState) -> CallbackReturn {
        self.callbacks.lock().unwrap().push("on_deactivate".into());
        CallbackReturn::Success
    }
    fn on_shutdown(&mut self, _: &LifecycleNode, previous: LifecycleState) -> CallbackReturn {
        self.callbacks
            .lock()
            .unwrap()
            .push(format!("on_shutdown from {previous}"));
        self.timer = None;
        CallbackReturn::Success
    }
}

#[test]
fn rclpy_manages_a_roslite_lifecycle_node_through_its_services() {
    let ns =
        NetNs::create("lifecycle").expect("create a network namespace (needs root and iproute2)");
    let ctx = common::networked_in(&ns, DOMAIN);
    let callbacks = Arc::new(Mutex::new(Vec::new()));
    let node = LifecycleNode::new(
        ctx.create_node("managed_ticker").unwrap(),
        Ticker {
            callbacks: callbacks.clone(),
            ..Default::default()
        },
    )
    .unwrap();
    let spinner = common::spin_in_background(&ctx, &node);
    let manager = LinePeer::spawn(common::rclpy_script(
        &ns,
        DOMAIN,
        "lifecycle_peer.py",
        &["manage", "/managed_ticker", "/managed_chatter"],
    ));
    let out = manager.finish(Instant::now() + Duration::from_secs(60));
    ctx.shutdown();
    spinner.join().unwrap();
    assert!(
        out.success,
        "the manager failed: {:?}\n{}",
        out.stdout, out.stderr
    );
    let values = |prefix: &str| out.values(prefix);
    assert_eq!(
        values("state "),
        [
            "unconfigured 1",
            "inactive 2",
            "active 3",
            "inactive 2",
            "finalized 4"
        ],
        "{:?}",
        out.stdout
    );
    assert_eq!(
        values("set "),
        [
            "configure True",
            "activate True",
            "deactivate True",
            "activate-nonexistent False",
            "shutdown True"
        ]
    );
    assert_eq!(values("available "), ["cleanup:2 activate:3 shutdown:6"]);
    let heard: Vec<(String, usize)> = values("heard ")
        .iter()
        .map(|l| {
            let (phase, n) = l.split_once(' ').unwrap();
            (phase.to_owned(), n.parse().unwrap())
        })
        .collect();
    let count = |phase: &str| heard.iter().find(|(p, _)| p == phase).unwrap().1;
    assert_eq!(count("unconfigured"), 0, "{heard:?}");
    assert_eq!(
        count("inactive"),
        0,
        "a configured, inactive node publishes nothing: {heard:?}"
    );
    assert!(count("active") >= 5, "{heard:?}");
    assert_eq!(count("deactivated"), 0, "{heard:?}");
    assert_eq!(
        values("event "),
        [
            "1 configure unconfigured configuring",
            "10 transition_success configuring inactive",
            "3 activate inactive activating",
            "30 transition_success activating active",
            "4 deactivate active deactivating",
            "40 transition_success deactivating inactive",
            "6 shutdown inactive shuttingdown",
            "50 transition_success shuttingdown finalized",
        ]
    );
    assert_eq!(
        *callbacks.lock().unwrap(),
        [
            "on_configure",
            "on_activate",
            "on_deactivate",
            "on_shutdown from inactive"
        ]
    );
    assert_eq!(node.current_state(), LifecycleState::Finalized);
}
