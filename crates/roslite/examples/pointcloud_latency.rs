//! `cargo run --release -p roslite --example pointcloud_latency -- [--count N] [--mb SIZE]`:
//! one-way latency of a large sensor_msgs/PointCloud2 (55 MB by default) between two contexts
//! of this process, which talk over shared memory (loopback discovery, a domain of their own).
//!
//! Latency is the subscription's callback time minus the publisher's `source_timestamp`
//! (taken when `publish` starts, both on `CLOCK_MONOTONIC`), so it includes serialization.
//! Messages go one at a time, 20 ms apart, each after the previous one arrived. Also prints
//! how long `publish` itself took (the send side) and a memcpy of the same size for scale.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant as StdInstant};

use roslite::msgs::sensor_msgs::msg::{PointCloud2, PointField};
use roslite::{Context, ContextOptions, Executor, Instant, MessageInfo};

fn context(domain_id: u32) -> Context {
    Context::new(ContextOptions::localhost(domain_id)).expect("start an RTPS network on loopback")
}

fn cloud(bytes: usize) -> PointCloud2 {
    let point_step = 16u32;
    let points = (bytes / point_step as usize) as u32;
    let field = |name: &str, offset| PointField {
        name: name.into(),
        offset,
        datatype: 7, // FLOAT32
        count: 1,
    };
    PointCloud2 {
        height: 1,
        width: points,
        fields: vec![
            field("x", 0),
            field("y", 4),
            field("z", 8),
            field("intensity", 12),
        ],
        point_step,
        row_step: points * point_step,
        data: (0..points as usize * point_step as usize)
            .map(|i| (i % 251) as u8)
            .collect(),
        is_dense: true,
        ..Default::default()
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let mut count = 30usize;
    let mut megabytes = 55usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().and_then(|v| v.parse().ok());
        match (arg.as_str(), value) {
            ("--count", Some(v)) => count = v,
            ("--mb", Some(v)) => megabytes = v,
            _ => {
                eprintln!("usage: pointcloud_latency [--count N] [--mb SIZE]");
                std::process::exit(2);
            }
        }
    }
    let domain = 150 + std::process::id() % 50;
    let a = context(domain);
    let b = context(domain);
    let pub_node = a.create_node("lidar").unwrap();
    let sub_node = b.create_node("consumer").unwrap();
    let (tx, rx) = mpsc::channel();
    let _sub = sub_node
        .create_subscription(
            "points",
            2,
            move |m: Arc<PointCloud2>, info: &MessageInfo| {
                let latency = Instant::monotonic_now() - info.source_timestamp;
                // Touch one byte per page the way a consumer would start reading it.
                let sum: u64 = m.data.iter().step_by(4096).map(|&b| u64::from(b)).sum();
                let _ = tx.send((latency, m.data.len(), sum, m.data.is_view()));
            },
        )
        .unwrap();
    let spinner = {
        let (ctx, node) = (b.clone(), sub_node.clone());
        std::thread::spawn(move || {
            let executor = Executor::new(&ctx);
            executor.add_node(&node);
            executor.spin();
        })
    };
    let publisher = pub_node
        .create_publisher::<PointCloud2>("points", 2)
        .unwrap();
    let net = a.graph();
    let start = StdInstant::now();
    while net.remote_subscriptions_by_path("/points").1 != 1 {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the subscription never matched over a same-host link"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let message = Arc::new(cloud(megabytes * 1_000_000));
    let expected_sum: u64 = message
        .data
        .iter()
        .step_by(4096)
        .map(|&b| u64::from(b))
        .sum();
    let mut latencies = Vec::new();
    let mut publish_times = Vec::new();
    let mut views = 0;
    // Two warm-up messages fault in the segment pages on both sides.
    for i in 0..count + 2 {
        let t0 = StdInstant::now();
        publisher.publish_shared(message.clone()).unwrap();
        let publish_time = t0.elapsed();
        let (latency, len, sum, view) = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("a point cloud did not arrive within 10 s");
        assert_eq!((len, sum), (message.data.len(), expected_sum), "corrupt");
        if i >= 2 {
            latencies.push(latency);
            publish_times.push(publish_time);
            views += usize::from(view);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    latencies.sort();
    publish_times.sort();
    let mut copy = vec![0u8; message.data.len()];
    let mut copies = Vec::new();
    for _ in 0..5 {
        let t0 = StdInstant::now();
        copy.copy_from_slice(&message.data);
        copies.push(t0.elapsed());
        std::hint::black_box(&copy);
    }
    copies.sort();
    println!(
        "PointCloud2 {} bytes, {count} messages over {} ({views} decoded as views)",
        message.data.len(),
        net.endpoints()
            .into_iter()
            .find(|e| !e.local && e.topic == "/points")
            .map_or("none", |e| e.transport),
    );
    println!(
        "one-way latency ms: p50 {:.3} p90 {:.3} max {:.3}",
        ms(percentile(&latencies, 0.5)),
        ms(percentile(&latencies, 0.9)),
        ms(*latencies.last().unwrap()),
    );
    println!(
        "publish() ms:       p50 {:.3} p90 {:.3} max {:.3}",
        ms(percentile(&publish_times, 0.5)),
        ms(percentile(&publish_times, 0.9)),
        ms(*publish_times.last().unwrap()),
    );
    println!(
        "memcpy of the data (warm) ms: p50 {:.3}",
        ms(percentile(&copies, 0.5))
    );
    b.shutdown();
    spinner.join().unwrap();
}
