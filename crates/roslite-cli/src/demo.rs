//! The demo: talker and listener nodes in one process over intra-process delivery.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use roslite::msgs::std_msgs::msg::String as StringMsg;
use roslite::{Context, ContextOptions, Executor, Instant, MessageInfo, NetworkMode, RosArgs};

use crate::stats::Summary;

#[derive(clap::Args)]
pub struct DemoArgs {
    /// How long to run, in seconds.
    #[arg(long, default_value_t = 3.0)]
    duration: f64,
    /// Talker publish rate in Hz.
    #[arg(long, default_value_t = 10.0)]
    rate: f64,
}

pub fn run(args: &DemoArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.duration.is_finite() && args.duration > 0.0,
        "--duration must be a positive number of seconds"
    );
    anyhow::ensure!(
        args.rate.is_finite() && args.rate > 0.0,
        "--rate must be a positive number of Hz"
    );
    // Intra-process only: the demo opens no sockets, so nothing leaves this process.
    let ctx = Context::new(ContextOptions {
        args: RosArgs::parse(std::env::args())?,
        network: NetworkMode::Off,
        ..Default::default()
    })?;
    let talker = ctx.create_node("talker")?;
    let listener = ctx.create_node("listener")?;

    let latencies = Arc::new(Mutex::new(Vec::new()));
    let sink = latencies.clone();
    let _subscription = listener.create_subscription(
        "chatter",
        10,
        move |msg: &StringMsg, info: &MessageInfo| {
            let latency = Instant::monotonic_now() - info.source_timestamp;
            println!(
                "[listener] I heard: '{}'  latency {:.1} us",
                msg.data,
                latency.as_secs_f64() * 1e6
            );
            sink.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(latency);
        },
    )?;

    let publisher = talker.create_publisher::<StringMsg>("chatter", 10)?;
    let mut count = 0u64;
    let _timer = talker.create_timer(Duration::from_secs_f64(1.0 / args.rate), move || {
        count += 1;
        let data = format!("Hello World: {count}");
        println!("[talker] Publishing: '{data}'");
        if let Err(e) = publisher.publish(StringMsg { data }) {
            eprintln!("[talker] publish failed: {e}");
        }
    })?;

    // ROSLITE_RT_PRIORITY, ROSLITE_CPU_AFFINITY, ROSLITE_MLOCKALL, ROSLITE_TIMER_SLACK_NS apply.
    let executor = Executor::from_env(&ctx)?;
    executor.add_node(&talker);
    executor.add_node(&listener);
    executor.spin_for(Duration::from_secs_f64(args.duration));

    let latencies = latencies
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    match Summary::of(&latencies) {
        Some(s) => println!(
            "\n{} messages over intra-process delivery; latency publish -> callback start: \
             min {:.1} us, mean {:.1} us (stddev {:.1}), p50 {:.1} us, p99 {:.1} us, max {:.1} us",
            s.count, s.min_us, s.mean_us, s.stddev_us, s.p50_us, s.p99_us, s.max_us
        ),
        None => println!("\nno messages were received"),
    }
    Ok(())
}
