// An rclcpp node as a WebAssembly guest for the rclpy tests (../guests_rclpy.rs): parameters
// `rate` and `label` (its on-set callback refuses a negative rate) and `role`; a publisher on
// /wasm_chatter and a subscription on /wasm_chatter_in, so that rclpy's graph API has
// endpoints to list; and std_srvs services each way:
//
// - role "server" (the default): serves std_srvs/SetBool on /motor_power and std_srvs/Trigger
//   on /trigger, as interop/python/service_peer.py's `call` expects;
// - role "client": calls rclpy's /motor_power (service_peer.py `serve`) with true and false and
//   prints `REPLY <success> <message>` for each, then `CLIENT DONE`;
// - role "introspected_client": the same, its calls introspected with their contents (for
//   interop/python/introspection_peer.py `server`), once the events have a listener.
//
// It prints `START <fully qualified name> rate <r> label <l>` when up, `PARAMS rate <r> label
// <l>` whenever the values it reads change, and `FINAL ...` when shut down.
#include <rclcpp/rclcpp.hpp>

#include "std_msgs/msg/string.hpp"
#include "std_srvs/srv/set_bool.hpp"
#include "std_srvs/srv/trigger.hpp"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>

using namespace std::chrono_literals;

static void print_params(const char *what, const rclcpp::Node &node)
{
  std::printf("%s rate %" PRId64 " label %s\n", what, node.get_parameter("rate").as_int(),
              node.get_parameter("label").as_string().c_str());
  std::fflush(stdout);
}

static int call_rclpy(const rclcpp::Node::SharedPtr &node, bool introspected)
{
  auto client = node->create_client<std_srvs::srv::SetBool>("motor_power");
  if (introspected)
    client->configure_introspection(node->get_clock(), rclcpp::SystemDefaultsQoS(),
                                    RCL_SERVICE_INTROSPECTION_CONTENTS);
  if (!client->wait_for_service(30s)) {
    std::printf("CLIENT no service\n");
    return 1;
  }
  if (introspected) {
    for (int i = 0; i < 400 && node->count_subscribers("/motor_power/_service_event") < 1; i++)
      rclcpp::sleep_for(50ms);
    // A moment more for the listener's side to match our event writer.
    rclcpp::sleep_for(500ms);
  }
  for (bool on : {true, false}) {
    auto request = std::make_shared<std_srvs::srv::SetBool::Request>();
    request->data = on;
    auto future = client->async_send_request(request);
    if (rclcpp::spin_until_future_complete(node, future, 10s) != rclcpp::FutureReturnCode::SUCCESS) {
      std::printf("CLIENT timeout\n");
      return 2;
    }
    auto response = future.get();
    std::printf("REPLY %d %s\n", response->success ? 1 : 0, response->message.c_str());
    std::fflush(stdout);
  }
  std::printf("CLIENT DONE\n");
  std::fflush(stdout);
  return 0;
}

int main(int argc, char **argv)
{
  rclcpp::init(argc, argv);
  auto node = std::make_shared<rclcpp::Node>("wasm_cpp_node");
  node->declare_parameter("rate", 1);
  node->declare_parameter("label", std::string("none"));
  std::string role = node->declare_parameter("role", std::string("server"));
  auto check = node->add_on_set_parameters_callback(
      [](const std::vector<rclcpp::Parameter> &parameters) {
        rcl_interfaces::msg::SetParametersResult result;
        for (const auto &p : parameters)
          if (p.get_name() == "rate" && p.get_type() == rclcpp::PARAMETER_INTEGER &&
              p.as_int() < 0) {
            result.successful = false;
            result.reason = "rate must not be negative";
          }
        return result;
      });
  std::printf("START %s rate %" PRId64 " label %s role %s\n",
              node->get_fully_qualified_name().c_str(), node->get_parameter("rate").as_int(),
              node->get_parameter("label").as_string().c_str(), role.c_str());
  std::fflush(stdout);

  auto publisher = node->create_publisher<std_msgs::msg::String>("wasm_chatter", 10);
  auto subscription = node->create_subscription<std_msgs::msg::String>(
      "wasm_chatter_in", 10, [](const std_msgs::msg::String &message) {
        std::printf("HEARD %s\n", message.data.c_str());
        std::fflush(stdout);
      });
  int64_t seen_rate = node->get_parameter("rate").as_int();
  std::string seen_label = node->get_parameter("label").as_string();
  int n = 0;
  auto timer = node->create_wall_timer(100ms, [&]() {
    std_msgs::msg::String message;
    message.data = "from Wasm C++ " + std::to_string(++n);
    publisher->publish(message);
    int64_t rate = node->get_parameter("rate").as_int();
    std::string label = node->get_parameter("label").as_string();
    if (rate != seen_rate || label != seen_label) {
      seen_rate = rate;
      seen_label = label;
      print_params("PARAMS", *node);
    }
  });

  rclcpp::Service<std_srvs::srv::SetBool>::SharedPtr set_bool;
  rclcpp::Service<std_srvs::srv::Trigger>::SharedPtr trigger;
  int status = 0;
  if (role == "client" || role == "introspected_client") {
    status = call_rclpy(node, role == "introspected_client");
  } else {
    int triggers = 0;
    set_bool = node->create_service<std_srvs::srv::SetBool>(
        "motor_power", [](const std::shared_ptr<std_srvs::srv::SetBool::Request> request,
                          std::shared_ptr<std_srvs::srv::SetBool::Response> response) {
          response->success = request->data;
          response->message = request->data ? "motor on" : "motor off";
          std::printf("SERVED motor_power %d\n", request->data ? 1 : 0);
          std::fflush(stdout);
        });
    trigger = node->create_service<std_srvs::srv::Trigger>(
        "trigger", [&triggers](const std::shared_ptr<std_srvs::srv::Trigger::Request>,
                               std::shared_ptr<std_srvs::srv::Trigger::Response> response) {
          response->success = true;
          response->message = "triggered " + std::to_string(++triggers);
        });
    rclcpp::spin(node);
  }
  print_params("FINAL", *node);
  rclcpp::shutdown();
  return status;
}
