//! `cargo run -p roslite --example add_two_ints_client -- 2 3`: calls /add_two_ints once and
//! prints the sum, waiting up to 10 s for a server.

use std::time::Duration;

use roslite::msgs::example_interfaces::srv::{AddTwoInts, AddTwoInts_Request};
use roslite::{ros_info, Context};

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
    Ok(())
}
