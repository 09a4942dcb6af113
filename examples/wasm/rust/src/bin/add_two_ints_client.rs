//! Calls /add_two_ints with the two integers of its command line, once waiting for the reply
//! and once with a callback, as `roslite`'s client example does.

use std::time::Duration;

use roslite_guest::msgs::example_interfaces::srv::{AddTwoInts, AddTwoInts_Request};
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
    let numbers: Vec<i64> = std::env::args()
        .skip(1)
        .take_while(|a| a != "--ros-args")
        .map(|a| a.parse())
        .collect::<Result<_, _>>()
        .map_err(|e| format!("arguments must be two integers: {e}"))?;
    let [a, b] = numbers[..] else {
        return Err("usage: add_two_ints_client <a> <b>".into());
    };
    let ctx = Context::from_env()?;
    let node = ctx.create_node("add_two_ints_client")?;
    let client = node.create_client::<AddTwoInts>("add_two_ints")?;
    if !client.wait_for_service(Duration::from_secs(10)) {
        return Err("service /add_two_ints not available after 10 s".into());
    }
    let response = client.call(AddTwoInts_Request { a, b }, Duration::from_secs(5))?;
    ros_info!(node.logger(), "Result of add_two_ints: {}", response.sum);

    let logger = node.logger().clone();
    let done = ctx.clone();
    client.call_with(AddTwoInts_Request { a: b, b: a }, move |reply| {
        match reply {
            Ok(response) => ros_info!(logger, "Result of the asynchronous call: {}", response.sum),
            Err(e) => ros_error!(logger, "{e}"),
        }
        done.shutdown();
    })?;
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    executor.spin_for(Duration::from_secs(5));
    Ok(())
}
