// Generates `user_msgs::msg` and `user_msgs::srv` from `msg/` and `srv/`; on a definition error
// the build fails with `file:line: what was expected`.
fn main() {
    roslite_msg_gen::build::run("user_msgs");
}
