// The parts of rclcpp's API that take the single-threaded path in a WebAssembly node, in the
// patterns of ros2/examples: a service and an async client whose future is completed by
// spin_until_future_complete (and by get() on its own), a response callback with a shared
// future, parameters read without exceptions, and a MultiThreadedExecutor on one thread.
// Built by ../guest_build.rs; it runs only with the host.
#include <rclcpp/rclcpp.hpp>

#include "example_interfaces/srv/add_two_ints.hpp"
#include "std_msgs/msg/string.hpp"

#include <chrono>
#include <cinttypes>
#include <memory>

using namespace std::chrono_literals;
using AddTwoInts = example_interfaces::srv::AddTwoInts;

int main(int argc, char **argv)
{
  rclcpp::init(argc, argv);
  auto node = std::make_shared<rclcpp::Node>("wasm_services");
  auto service = node->create_service<AddTwoInts>(
      "add_two_ints", [](const std::shared_ptr<AddTwoInts::Request> request,
                         std::shared_ptr<AddTwoInts::Response> response) {
        response->sum = request->a + request->b;
      });
  auto client = node->create_client<AddTwoInts>("add_two_ints");
  if (!client->wait_for_service(1s)) return 1;

  auto request = std::make_shared<AddTwoInts::Request>();
  request->a = 2;
  request->b = 3;
  auto result = client->async_send_request(request);
  if (rclcpp::spin_until_future_complete(node, result) != rclcpp::FutureReturnCode::SUCCESS)
    return 1;
  RCLCPP_INFO(node->get_logger(), "sum: %" PRId64, result.get()->sum);

  // get() without spinning first: the future spins the client's node itself.
  auto direct = client->async_send_request(request);
  if (direct.wait_for(0s) == std::future_status::ready) RCLCPP_INFO(node->get_logger(), "early");
  RCLCPP_INFO(node->get_logger(), "sum again: %" PRId64, direct.get()->sum);

  client->async_send_request(request, [node](rclcpp::Client<AddTwoInts>::SharedFuture future) {
    RCLCPP_INFO(node->get_logger(), "callback sum: %" PRId64, future.get()->sum);
  });

  node->declare_parameter("rate", 10);
  std::string wrong_type;
  if (node->get_parameter("rate", wrong_type)) return 1;

  auto publisher = node->create_publisher<std_msgs::msg::String>("chatter", 10);
  int ticks = 0;
  auto timer = node->create_wall_timer(10ms, [&] {
    std_msgs::msg::String message;
    message.data = "tick";
    publisher->publish(message);
    if (++ticks == 5) rclcpp::shutdown();
  });
  rclcpp::executors::MultiThreadedExecutor executor;
  executor.add_node(node);
  executor.spin();
  return 0;
}
