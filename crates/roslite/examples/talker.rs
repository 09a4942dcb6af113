//! `cargo run -p roslite --example talker`: publishes std_msgs/String on /chatter at 10 Hz, for
//! rclpy's or rclcpp's listener (or `roslite topic echo /chatter`) to hear. Honours
//! ROS_DOMAIN_ID, ROS_AUTOMATIC_DISCOVERY_RANGE and ROS_STATIC_PEERS.

use std::time::Duration;

use roslite::msgs::std_msgs::msg::String as StringMsg;
use roslite::{ros_info, Context, Executor};

/// Prints an error as its message (`Error: p.yaml:3: ...`); returning it from `main` would print
/// its `Debug` form.
fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = Context::from_env()?;
    let node = ctx.create_node("talker")?;
    let publisher = node.create_publisher::<StringMsg>("chatter", 10)?;
    let logger = node.logger().clone();
    let mut count = 0;
    let _timer = node.create_timer(Duration::from_millis(100), move || {
        count += 1;
        let data = format!("Hello World: {count}");
        ros_info!(logger, "Publishing: '{data}'");
        if let Err(e) = publisher.publish(StringMsg { data }) {
            roslite::ros_error!(logger, "{e}");
        }
    })?;
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    executor.spin_for(Duration::from_secs(
        std::env::var("TALKER_SECONDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(3600),
    ));
    Ok(())
}
