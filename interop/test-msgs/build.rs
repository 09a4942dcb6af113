// Generates `test_msgs::msg` and `test_msgs::srv` from `msg/` and `srv/`, as a user crate's
// build script does; roslite-msgs ships test_msgs' Fibonacci action, this crate adds the rest.
fn main() {
    roslite_msg_gen::build::run("test_msgs");
}
