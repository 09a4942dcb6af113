// rclcpp's per-class headers (rclcpp/publisher.hpp, which the lifecycle demos include) are all
// in rclcpp/rclcpp.hpp here.
#include <rclcpp/rclcpp.hpp>
