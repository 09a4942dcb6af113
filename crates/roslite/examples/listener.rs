//! `cargo run -p roslite --example listener`: prints std_msgs/String from /chatter, e.g. from
//! rclpy's talker. Honours ROS_DOMAIN_ID, ROS_AUTOMATIC_DISCOVERY_RANGE and ROS_STATIC_PEERS.

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
    let node = ctx.create_node("listener")?;
    let logger = node.logger().clone();
    let _sub = node.create_subscription("chatter", 10, move |msg: &StringMsg| {
        ros_info!(logger, "I heard: [{}]", msg.data);
    })?;
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    executor.spin_for(Duration::from_secs(
        std::env::var("LISTENER_SECONDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(3600),
    ));
    Ok(())
}
