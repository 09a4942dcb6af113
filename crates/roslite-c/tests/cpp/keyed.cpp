// A keyed topic (test_msgs/msg/KeyedLong, whose `key` member is its DDS key) from an
// rclcpp-style node, built against roslite's rclcpp headers by ../cpp_rclpy.rs. Its endpoints
// must be keyed, as rclpy's are, or Fast DDS does not match them.
//   keyed talker N     publishes KeyedLong {key: n % 3, value: n} every 50 ms, n = 1 .. N
//   keyed listener N   prints `got key=K value=V` per message, and ends after N of them
#include <rclcpp/rclcpp.hpp>

#include "test_msgs/msg/keyed_long.hpp"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace std::chrono_literals;

int main(int argc, char **argv) {
  rclcpp::init(argc, argv);
  std::string which = argc > 1 ? argv[1] : "";
  int limit = argc > 2 ? std::atoi(argv[2]) : 10;
  int status = 0;
  if (which == "talker") {
    auto node = rclcpp::Node::make_shared("cpp_keyed_talker");
    auto publisher = node->create_publisher<test_msgs::msg::KeyedLong>("keyed", 10);
    int n = 0;
    auto timer = node->create_wall_timer(50ms, [&]() {
      test_msgs::msg::KeyedLong message;
      ++n;
      message.key = n % 3;
      message.value = n;
      publisher->publish(message);
      if (n == limit) rclcpp::shutdown();
    });
    rclcpp::spin(node);
  } else if (which == "listener") {
    auto node = rclcpp::Node::make_shared("cpp_keyed_listener");
    int heard = 0;
    auto subscription = node->create_subscription<test_msgs::msg::KeyedLong>(
        "keyed", 10, [&](const test_msgs::msg::KeyedLong &message) {
          std::printf("got key=%" PRId32 " value=%" PRId32 "\n", message.key, message.value);
          std::fflush(stdout);
          if (++heard == limit) rclcpp::shutdown();
        });
    rclcpp::spin(node);
  } else {
    status = 2;
  }
  rclcpp::shutdown();
  return status;
}
