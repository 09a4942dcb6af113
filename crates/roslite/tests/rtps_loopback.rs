//! Two contexts, each with its own RTPS participant, talking over UDP on 127.0.0.1 with
//! LOCALHOST discovery (unicast probes, no multicast), as two processes would.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use roslite::msgs::std_msgs::msg::String as StringMsg;
use roslite::{Context, ContextOptions, Executor, NetworkMode, QosProfile};
use roslite_transport::{DiscoveryConfig, DiscoveryRange, TransportConfig};

/// A domain of its own per test process, so parallel runs do not discover each other.
fn test_domain(offset: u32) -> u32 {
    40 + (std::process::id() % 50) + offset
}

fn networked(domain_id: u32) -> Context {
    let discovery = DiscoveryConfig {
        domain_id,
        range: DiscoveryRange::Localhost,
        ..Default::default()
    };
    Context::new(ContextOptions {
        domain_id,
        network: NetworkMode::Rtps(TransportConfig::new(discovery)),
        ..Default::default()
    })
    .expect("start an RTPS network on loopback")
}

#[test]
fn reliable_messages_cross_between_participants_over_udp() {
    let domain = test_domain(0);
    let talker_ctx = networked(domain);
    let listener_ctx = networked(domain);
    let talker = talker_ctx.create_node("talker").unwrap();
    let listener = listener_ctx.create_node("listener").unwrap();
    let received = Arc::new(Mutex::new(Vec::new()));
    let sink = received.clone();
    let _sub = listener
        .create_subscription(
            "chatter",
            QosProfile::keep_last(100),
            move |m: StringMsg| sink.lock().unwrap().push(m.data),
        )
        .unwrap();
    let spinner = {
        let ctx = listener_ctx.clone();
        let node = listener.clone();
        std::thread::spawn(move || {
            let executor = Executor::new(&ctx);
            executor.add_node(&node);
            executor.spin();
        })
    };
    let publisher = talker
        .create_publisher::<StringMsg>("chatter", QosProfile::keep_last(100))
        .unwrap();
    // Discovery first: publish probes until one arrives.
    let start = Instant::now();
    while received.lock().unwrap().is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no message crossed within 20 s"
        );
        publisher
            .publish(StringMsg {
                data: "probe".into(),
            })
            .unwrap();
        std::thread::sleep(Duration::from_millis(50));
    }
    // Matched: every reliable message now arrives, in order.
    for n in 0..50 {
        publisher
            .publish(StringMsg {
                data: format!("hello {n}"),
            })
            .unwrap();
    }
    let start = Instant::now();
    loop {
        let got: Vec<String> = received
            .lock()
            .unwrap()
            .iter()
            .filter(|m| m.starts_with("hello"))
            .cloned()
            .collect();
        if got.len() == 50 {
            let expected: Vec<String> = (0..50).map(|n| format!("hello {n}")).collect();
            assert_eq!(got, expected);
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "only {} of 50 arrived",
            got.len()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    listener_ctx.shutdown();
    spinner.join().unwrap();
    let topics = talker_ctx.network().unwrap().remote_topics();
    assert!(
        topics.contains(&("/chatter".to_owned(), "std_msgs/msg/String".to_owned())),
        "{topics:?}"
    );
}
