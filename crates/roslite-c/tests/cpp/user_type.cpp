// An rclcpp node using my_msgs/msg/Reading, a type roslite does not ship, whose header
// `roslite interface generate --lang cpp` wrote (../cpp_api.rs generates it): the API registers
// the type's definition with the runtime when it creates the endpoints, so the node runs
// without my_msgs on $AMENT_PREFIX_PATH.
#include <rclcpp/rclcpp.hpp>

#include "my_msgs/msg/reading.hpp"

#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

using namespace std::chrono_literals;

int main(int argc, char **argv) {
  rclcpp::init(argc, argv);
  auto node = std::make_shared<rclcpp::Node>("cpp_user_type");
  int count = 0;
  double value = 0;
  auto subscription = node->create_subscription<my_msgs::msg::Reading>(
      "reading", 10, [&](const my_msgs::msg::Reading &m) {
        ++count;
        value = m.value;
      });
  auto publisher = node->create_publisher<my_msgs::msg::Reading>("reading", 10);
  my_msgs::msg::Reading message;
  message.value = 21.5;
  message.unit.symbol = "V";
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (count == 0 && std::chrono::steady_clock::now() < deadline) {
    publisher->publish(message);
    rclcpp::spin_some(node);
    std::this_thread::sleep_for(10ms);
  }
  std::printf("user type received %d value %.1f\n", count > 0 ? 1 : 0, value);
  rclcpp::shutdown();
  return count > 0 ? 0 : 1;
}
