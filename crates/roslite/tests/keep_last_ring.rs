//! The ring of a keep-last subscription's same-host link, and the floor a program can put
//! under its depth (`require_keep_last_ring_depth`, which a WebAssembly host sets so that a
//! node it moves keeps every message). A test binary of its own: the floor is process-wide.
//! Loopback only (LOCALHOST discovery), a domain per run.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use roslite::backends::same_host::require_keep_last_ring_depth;
use roslite::msgs::std_msgs::msg::Int32;
use roslite::{LocalTransports, MessageInfo, QosProfile, TypeInfo};
use roslite_cdr::SharedBuf;

mod common;

/// The name of a same-host link's reader thread, which runs a callback itself while the
/// subscription's executor sleeps (inline dispatch).
const LINK_THREAD: &str = "roslite-local-rx";

/// What the subscription's callback saw, and the gate that holds the link's thread in it.
#[derive(Default)]
struct Seen {
    /// Data of every message the callback got, in order.
    data: Vec<i32>,
    /// The callback holds the link's thread, from the first message it got on that thread on.
    link_stalled: bool,
    /// The test let the held callback go.
    released: bool,
}

/// Holds the link's reader thread in a keep-last depth-1 subscription's callback (on the
/// first message it brings itself), publishes `burst` messages meanwhile, lets it go, and
/// returns the data of what the callback got after the one that held it.
fn messages_after_a_stall(domain: u32, burst: i32) -> Vec<i32> {
    let talker_ctx = common::localhost_context(domain, LocalTransports::default());
    let listener_ctx = common::localhost_context(domain, LocalTransports::default());
    let talker = talker_ctx.create_node("ring_talker").unwrap();
    let listener = listener_ctx.create_node("ring_listener").unwrap();
    let seen = Arc::new((Mutex::new(Seen::default()), Condvar::new()));
    let sink = seen.clone();
    let qos = QosProfile::keep_last(1);
    // As a WebAssembly host's while it moves a node: the subscription's queue keeps every
    // message, so what is lost is lost before it, in the link's ring.
    let sub = listener
        .create_serialized_subscription(
            "ring",
            TypeInfo::of::<Int32>(),
            qos,
            move |buf: &SharedBuf, _: &MessageInfo| {
                let data = roslite_cdr::from_bytes::<Int32>(buf.bytes()).unwrap().data;
                let (lock, cvar) = &*sink;
                let mut seen = lock.lock().unwrap();
                seen.data.push(data);
                let on_link = std::thread::current().name() == Some(LINK_THREAD);
                if on_link && !seen.link_stalled {
                    seen.link_stalled = true;
                    cvar.notify_all();
                    while !seen.released {
                        seen = cvar.wait(seen).unwrap();
                    }
                }
            },
        )
        .unwrap();
    sub.keep_every_message(true);
    let spinner = common::spin_in_background(&listener_ctx, &listener);
    let publisher = talker.create_publisher::<Int32>("ring", qos).unwrap();
    let net = talker_ctx.graph();
    assert!(
        common::wait_until(Duration::from_secs(10), || {
            net.remote_subscriptions_by_path("/ring") == (0, 1)
        }),
        "the listener never matched over a same-host path"
    );
    // Until one message's callback runs on the link's thread (not on the executor's, which
    // takes it when it happens to be awake): negative data, not counted below.
    let (lock, cvar) = &*seen;
    let mut marker = -1;
    let stalled = common::wait_until(Duration::from_secs(10), || {
        publisher.publish(Int32 { data: marker }).unwrap();
        marker -= 1;
        let guard = lock.lock().unwrap();
        let (guard, _) = cvar
            .wait_timeout_while(guard, Duration::from_millis(50), |s| !s.link_stalled)
            .unwrap();
        guard.link_stalled
    });
    assert!(stalled, "no message's callback ran on the link's thread");
    for data in 1..=burst {
        publisher.publish(Int32 { data }).unwrap();
    }
    {
        let mut guard = lock.lock().unwrap();
        guard.released = true;
        cvar.notify_all();
    }
    assert!(
        common::wait_until(Duration::from_secs(10), || {
            lock.lock().unwrap().data.last() == Some(&burst)
        }),
        "the burst's last message never arrived"
    );
    // Anything still coming would show up here.
    std::thread::sleep(Duration::from_millis(100));
    listener_ctx.shutdown();
    spinner.join().unwrap();
    let data = lock.lock().unwrap().data.clone();
    data.into_iter().filter(|d| *d > 0).collect()
}

#[test]
fn a_ring_deeper_than_the_subscription_keeps_what_arrives_while_its_thread_is_held() {
    let domain = 160 + std::process::id() % 40;
    let burst = 20;
    // Sized by the subscription (depth 1), the ring keeps the newest of the burst alone.
    assert_eq!(messages_after_a_stall(domain, burst), vec![burst]);
    // Links made from now on hold 32: every message of the burst reaches the callback, the
    // subscription's own depth unchanged.
    require_keep_last_ring_depth(32);
    assert_eq!(
        messages_after_a_stall(domain, burst),
        (1..=burst).collect::<Vec<_>>()
    );
}
