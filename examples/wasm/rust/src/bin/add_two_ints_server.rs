//! Serves example_interfaces/AddTwoInts on /add_two_ints, as `roslite`'s example does, with
//! a parameter `offset` (added to every sum; refused when negative) to show parameters.

use roslite_guest::msgs::example_interfaces::srv::{
    AddTwoInts, AddTwoInts_Request, AddTwoInts_Response,
};
use roslite_guest::{ros_info, spin, Context, SetParametersResult};

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
    let _offset_check = node.add_on_set_parameters_callback(|parameters| {
        let negative = parameters
            .iter()
            .any(|p| p.name == "offset" && p.value.as_i64().is_some_and(|v| v < 0));
        if negative {
            SetParametersResult::rejected("offset must not be negative")
        } else {
            SetParametersResult::success()
        }
    });
    node.declare_parameter("offset", 0i64)?;
    let logger = node.logger().clone();
    let parameters = node.clone();
    let _service = node.create_service::<AddTwoInts, _>(
        "add_two_ints",
        move |request: AddTwoInts_Request| {
            let offset = parameters
                .get_parameter("offset")
                .ok()
                .and_then(|p| p.value.as_i64())
                .unwrap_or(0);
            ros_info!(
                logger,
                "Incoming request: a: {} b: {}",
                request.a,
                request.b
            );
            AddTwoInts_Response {
                sum: request.a.wrapping_add(request.b).wrapping_add(offset),
            }
        },
    )?;
    spin(&node);
    Ok(())
}
