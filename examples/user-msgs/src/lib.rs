//! A user package, `user_msgs`, with its own ROS 2 interfaces in `msg/` and `srv/` (`.msg`,
//! `.srv` and `.idl` files).
//!
//! `build.rs` turns the definitions into Rust types with `roslite_msg_gen::build::run`, and this
//! line brings them in as `user_msgs::msg::RobotStatus`, `user_msgs::srv::SetMode`, ...

include!(concat!(env!("OUT_DIR"), "/roslite_interfaces.rs"));
