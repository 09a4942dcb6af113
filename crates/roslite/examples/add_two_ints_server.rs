//! `cargo run -p roslite --example add_two_ints_server`: serves example_interfaces/AddTwoInts
//! on /add_two_ints, for rclpy's or rclcpp's client, `roslite service call /add_two_ints
//! example_interfaces/srv/AddTwoInts '{a: 1, b: 2}'`, or the `add_two_ints_client` example.
//! Honours ROS_DOMAIN_ID, ROS_AUTOMATIC_DISCOVERY_RANGE and ROS_STATIC_PEERS.

use roslite::msgs::example_interfaces::srv::{AddTwoInts, AddTwoInts_Request, AddTwoInts_Response};
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
    let node = ctx.create_node("add_two_ints_server")?;
    let logger = node.logger().clone();
    let _service = node.create_service::<AddTwoInts, _>(
        "add_two_ints",
        move |request: AddTwoInts_Request| {
            ros_info!(
                logger,
                "Incoming request: a: {} b: {}",
                request.a,
                request.b
            );
            AddTwoInts_Response {
                sum: request.a.wrapping_add(request.b),
            }
        },
    )?;
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    executor.spin();
    Ok(())
}
