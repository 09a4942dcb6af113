//! Publishes std_msgs/String on /chatter every 100 ms, as `roslite`'s talker example does,
//! from inside a roslite Wasm host.

use std::time::Duration;

use roslite_guest::msgs::std_msgs::msg::String as StringMsg;
use roslite_guest::{ros_error, ros_info, Context, Executor};

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
    let _timer = node.create_wall_timer(Duration::from_millis(100), move || {
        count += 1;
        let data = format!("Hello World: {count}");
        ros_info!(logger, "Publishing: '{data}'");
        if let Err(e) = publisher.publish(StringMsg { data }) {
            ros_error!(logger, "{e}");
        }
    })?;
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    executor.spin();
    Ok(())
}
