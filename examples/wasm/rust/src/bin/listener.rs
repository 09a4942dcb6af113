//! Logs std_msgs/String from /chatter, as `roslite`'s listener example does, from inside a
//! roslite Wasm host.

use roslite_guest::msgs::std_msgs::msg::String as StringMsg;
use roslite_guest::{ros_info, spin, Context};

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
    let _subscription = node.create_subscription("chatter", 10, move |msg: &StringMsg| {
        ros_info!(logger, "I heard: [{}]", msg.data);
    })?;
    spin(&node);
    Ok(())
}
