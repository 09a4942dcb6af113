//! `cargo run -p roslite --example lifecycle_talker`: a managed (lifecycle) node,
//! `/lifecycle_talker`, that publishes std_msgs/String on /lifecycle_chatter once a second, but
//! only while it is active. It starts unconfigured; manage it from another terminal:
//!
//! ```text
//! roslite lifecycle set /lifecycle_talker configure   # makes its publisher and timer
//! roslite lifecycle set /lifecycle_talker activate    # messages flow
//! roslite lifecycle set /lifecycle_talker deactivate  # they stop
//! roslite lifecycle get /lifecycle_talker
//! ```
//!
//! (`ros2 lifecycle` works the same.) Honours ROS_DOMAIN_ID, ROS_AUTOMATIC_DISCOVERY_RANGE and
//! ROS_STATIC_PEERS.

use std::time::Duration;

use roslite::lifecycle::{CallbackReturn, LifecycleCallbacks, LifecycleNode, LifecycleState};
use roslite::msgs::std_msgs::msg::String as StringMsg;
use roslite::{ros_error, ros_info, Context, Executor, Timer};

/// What the talker holds between transitions: made in `on_configure`, released in
/// `on_cleanup` and `on_shutdown`.
#[derive(Default)]
struct Talker {
    timer: Option<Timer>,
}

impl LifecycleCallbacks for Talker {
    fn on_configure(&mut self, node: &LifecycleNode, _: LifecycleState) -> CallbackReturn {
        let publisher = match node.create_publisher::<StringMsg>("lifecycle_chatter", 10) {
            Ok(publisher) => publisher,
            Err(e) => {
                ros_error!(node.logger(), "cannot create the publisher: {e}");
                return CallbackReturn::Failure;
            }
        };
        let logger = node.logger().clone();
        let mut count = 0;
        // The timer runs in every state; the publisher sends only while the node is active.
        let timer = node.create_wall_timer(Duration::from_secs(1), move || {
            count += 1;
            let data = format!("Lifecycle HelloWorld #{count}");
            if publisher.is_activated() {
                ros_info!(logger, "Publishing: '{data}'");
            }
            if let Err(e) = publisher.publish(StringMsg { data }) {
                ros_error!(logger, "{e}");
            }
        });
        match timer {
            Ok(timer) => self.timer = Some(timer),
            Err(e) => {
                ros_error!(node.logger(), "cannot create the timer: {e}");
                return CallbackReturn::Failure;
            }
        }
        ros_info!(node.logger(), "on_configure: publisher and timer made");
        CallbackReturn::Success
    }

    fn on_activate(&mut self, node: &LifecycleNode, _: LifecycleState) -> CallbackReturn {
        ros_info!(node.logger(), "on_activate: publishing");
        CallbackReturn::Success
    }

    fn on_deactivate(&mut self, node: &LifecycleNode, _: LifecycleState) -> CallbackReturn {
        ros_info!(node.logger(), "on_deactivate: quiet");
        CallbackReturn::Success
    }

    fn on_cleanup(&mut self, node: &LifecycleNode, _: LifecycleState) -> CallbackReturn {
        self.timer = None;
        ros_info!(node.logger(), "on_cleanup: publisher and timer released");
        CallbackReturn::Success
    }

    fn on_shutdown(&mut self, node: &LifecycleNode, previous: LifecycleState) -> CallbackReturn {
        self.timer = None;
        ros_info!(node.logger(), "on_shutdown from {previous}");
        CallbackReturn::Success
    }
}

/// Prints an error as its message; returning it from `main` would print its `Debug` form.
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
    let node = LifecycleNode::new(ctx.create_node("lifecycle_talker")?, Talker::default())?;
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
