// rclcpp-style nodes in the patterns of ros2/examples (minimal publisher, subscriber, service,
// client, timer, parameters, multithreaded executor), built against roslite's rclcpp headers
// by ../c_abi.rs. First argument: which node.
#include <rclcpp/rclcpp.hpp>

#include "builtin_interfaces/msg/time.hpp"
#include "example_interfaces/srv/add_two_ints.hpp"
#include "std_msgs/msg/string.hpp"
#include "std_srvs/srv/set_bool.hpp"
#include "std_srvs/srv/trigger.hpp"

#include <chrono>
#include <cinttypes>
#include <functional>
#include <memory>
#include <string>

using namespace std::chrono_literals;
using std::placeholders::_1;
using std::placeholders::_2;

// minimal_publisher's member-function timer.
class MinimalPublisher : public rclcpp::Node {
 public:
  explicit MinimalPublisher(int count) : Node("minimal_publisher"), count_(0), limit_(count) {
    publisher_ = this->create_publisher<std_msgs::msg::String>("topic", 10);
    timer_ = this->create_wall_timer(50ms, std::bind(&MinimalPublisher::timer_callback, this));
  }

 private:
  void timer_callback() {
    auto message = std_msgs::msg::String();
    message.data = "Hello, world! " + std::to_string(++count_);
    RCLCPP_INFO(this->get_logger(), "Publishing: '%s'", message.data.c_str());
    publisher_->publish(message);
    if (count_ == limit_) rclcpp::shutdown();
  }
  rclcpp::TimerBase::SharedPtr timer_;
  rclcpp::Publisher<std_msgs::msg::String>::SharedPtr publisher_;
  int count_, limit_;
};

// minimal_subscriber with std::bind and each callback shape.
class MinimalSubscriber : public rclcpp::Node {
 public:
  explicit MinimalSubscriber(int count) : Node("minimal_subscriber"), limit_(count) {
    subscription_ = this->create_subscription<std_msgs::msg::String>(
        "topic", 10, std::bind(&MinimalSubscriber::topic_callback, this, _1));
    by_reference_ = this->create_subscription<std_msgs::msg::String>(
        "topic", rclcpp::QoS(10).reliable(),
        [this](const std_msgs::msg::String &msg) { by_reference_count_ += !msg.data.empty(); });
    unique_ = this->create_subscription<std_msgs::msg::String>(
        "topic", 10, [this](std_msgs::msg::String::UniquePtr msg) { unique_count_ += !!msg; });
    with_info_ = this->create_subscription<std_msgs::msg::String>(
        "topic", 10,
        [this](std_msgs::msg::String::ConstSharedPtr, const rclcpp::MessageInfo &info) {
          last_sequence_ = info.publication_sequence_number();
        });
  }

 private:
  void topic_callback(const std_msgs::msg::String::SharedPtr msg) {
    RCLCPP_INFO(this->get_logger(), "I heard: '%s'", msg->data.c_str());
    if (++count_ == limit_) {
      std::printf("shapes: reference %d unique %d last sequence %" PRIu64 "\n",
                  by_reference_count_, unique_count_, last_sequence_);
      std::fflush(stdout);
      rclcpp::shutdown();
    }
  }
  rclcpp::Subscription<std_msgs::msg::String>::SharedPtr subscription_, by_reference_, unique_,
      with_info_;
  int count_ = 0, limit_, by_reference_count_ = 0, unique_count_ = 0;
  uint64_t last_sequence_ = 0;
};

// minimal_service's free-function callback.
static void add(const std::shared_ptr<example_interfaces::srv::AddTwoInts::Request> request,
                std::shared_ptr<example_interfaces::srv::AddTwoInts::Response> response) {
  response->sum = request->a + request->b;
  RCLCPP_INFO(rclcpp::get_logger("rclcpp"), "Incoming request\na: %" PRId64 " b: %" PRId64,
              request->a, request->b);
}

static int client(int argc, char **argv) {
  (void)argc;
  (void)argv;
  auto node = rclcpp::Node::make_shared("minimal_client");
  auto client = node->create_client<example_interfaces::srv::AddTwoInts>("add_two_ints");
  while (!client->wait_for_service(1s)) {
    if (!rclcpp::ok()) return 1;
    RCLCPP_INFO(node->get_logger(), "service not available, waiting again...");
  }
  auto request = std::make_shared<example_interfaces::srv::AddTwoInts::Request>();
  request->a = 41;
  request->b = 1;
  auto result_future = client->async_send_request(request);
  if (rclcpp::spin_until_future_complete(node, result_future) !=
      rclcpp::FutureReturnCode::SUCCESS) {
    RCLCPP_ERROR(node->get_logger(), "service call failed :(");
    return 1;
  }
  auto result = result_future.get();
  std::printf("Result of add_two_ints: %" PRId64 "\n", result->sum);
  // The callback form.
  bool called = false;
  auto shared = client->async_send_request(
      request, [&called](rclcpp::Client<example_interfaces::srv::AddTwoInts>::SharedFuture f) {
        called = f.get()->sum == 42;
      });
  rclcpp::spin_until_future_complete(node, shared.future, 10s);
  std::printf("callback form: %s\n", called ? "called" : "not called");
  return 0;
}

static int parameters() {
  auto node = std::make_shared<rclcpp::Node>("param_node");
  int64_t rate = node->declare_parameter<int64_t>("rate", 1);
  std::string label = node->declare_parameter("label", std::string("none"));
  auto handle = node->add_on_set_parameters_callback(
      [](const std::vector<rclcpp::Parameter> &parameters) {
        rcl_interfaces::msg::SetParametersResult result;
        for (const auto &p : parameters)
          if (p.get_name() == "rate" && p.as_int() < 0) {
            result.successful = false;
            result.reason = "rate must not be negative";
          }
        return result;
      });
  auto refused = node->set_parameter(rclcpp::Parameter("rate", -1));
  node->set_parameters({rclcpp::Parameter("label", "from C++")});
  std::printf("rate %" PRId64 " label %s refused %d (%s) now %s %" PRId64 "\n", rate,
              label.c_str(), !refused.successful, refused.reason.c_str(),
              node->get_parameter("label").as_string().c_str(),
              node->get_parameter("rate").as_int());
  RCLCPP_INFO_STREAM(node->get_logger(), "streamed " << rate);
  for (int i = 0; i < 3; i++) RCLCPP_WARN_ONCE(node->get_logger(), "once");
  for (int i = 0; i < 3; i++) RCLCPP_INFO_THROTTLE(node->get_logger(), *node->get_clock(), 1000, "throttled");
  return 0;
}

// multithreaded_executor: two timers in a reentrant group run at the same time.
static int multithreaded() {
  auto node = std::make_shared<rclcpp::Node>("multi");
  auto group = node->create_callback_group(rclcpp::CallbackGroupType::Reentrant);
  std::atomic<int> inside{0}, most{0}, ticks{0};
  auto work = [&] {
    int now = ++inside;
    int seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {}
    std::this_thread::sleep_for(30ms);
    --inside;
    if (++ticks >= 20) rclcpp::shutdown();
  };
  auto a = node->create_wall_timer(10ms, work, group);
  auto b = node->create_wall_timer(10ms, work, group);
  rclcpp::executors::MultiThreadedExecutor executor(rclcpp::ExecutorOptions(), 2);
  executor.add_node(node);
  executor.spin();
  std::printf("most at once: %d\n", most.load());
  return 0;
}

// Shuts down a moment after the last message, so that it leaves before the process does.
static void rclpy_done() {
  std::thread([] {
    std::this_thread::sleep_for(500ms);
    rclcpp::shutdown();
  }).detach();
}

// For rclpy: /chatter both ways, std_srvs services both ways, parameters rclpy reads and sets.
static int chatter_talker(int count) {
  auto node = std::make_shared<rclcpp::Node>("cpp_talker");
  auto publisher = node->create_publisher<std_msgs::msg::String>("chatter", 10);
  int n = 0;
  auto timer = node->create_wall_timer(100ms, [&]() {
    std_msgs::msg::String message;
    message.data = "from C++ " + std::to_string(++n);
    publisher->publish(message);
    if (n == count) rclpy_done();
  });
  rclcpp::spin(node);
  return 0;
}

static int chatter_listener(int count) {
  auto node = std::make_shared<rclcpp::Node>("cpp_listener");
  int heard = 0;
  auto subscription = node->create_subscription<std_msgs::msg::String>(
      "chatter", 10, [&](const std_msgs::msg::String &message) {
        std::printf("HEARD %s\n", message.data.c_str());
        std::fflush(stdout);
        if (++heard == count) rclcpp::shutdown();
      });
  rclcpp::spin(node);
  return heard == count ? 0 : 1;
}

static int motor_server() {
  auto node = std::make_shared<rclcpp::Node>("cpp_motor");
  int triggers = 0;
  auto set_bool = node->create_service<std_srvs::srv::SetBool>(
      "motor_power", [](const std::shared_ptr<std_srvs::srv::SetBool::Request> request,
                        std::shared_ptr<std_srvs::srv::SetBool::Response> response) {
        response->success = request->data;
        response->message = request->data ? "motor on" : "motor off";
      });
  auto trigger = node->create_service<std_srvs::srv::Trigger>(
      "trigger", [&triggers](const std::shared_ptr<rmw_request_id_t>,
                             const std::shared_ptr<std_srvs::srv::Trigger::Request>,
                             std::shared_ptr<std_srvs::srv::Trigger::Response> response) {
        response->success = true;
        response->message = "triggered " + std::to_string(++triggers);
      });
  rclcpp::spin(node);
  return 0;
}

static int motor_client() {
  auto node = std::make_shared<rclcpp::Node>("cpp_motor_client");
  auto client = node->create_client<std_srvs::srv::SetBool>("motor_power");
  if (!client->wait_for_service(20s)) return 1;
  for (bool on : {true, false}) {
    auto request = std::make_shared<std_srvs::srv::SetBool::Request>();
    request->data = on;
    auto future = client->async_send_request(request);
    if (rclcpp::spin_until_future_complete(node, future, 10s) != rclcpp::FutureReturnCode::SUCCESS)
      return 2;
    auto response = future.get();
    std::printf("REPLY %d %s\n", response->success ? 1 : 0, response->message.c_str());
  }
  return 0;
}

// A SetBool server whose calls are introspected with their contents, as the rclpy peer
// `introspection_peer.py client` expects them.
static int introspected_server() {
  auto node = std::make_shared<rclcpp::Node>("cpp_introspected_server");
  auto service = node->create_service<std_srvs::srv::SetBool>(
      "motor_power", [](const std::shared_ptr<std_srvs::srv::SetBool::Request> request,
                        std::shared_ptr<std_srvs::srv::SetBool::Response> response) {
        response->success = request->data;
        response->message = request->data ? "on" : "off";
      });
  service->configure_introspection(node->get_clock(), rclcpp::SystemDefaultsQoS(),
                                   RCL_SERVICE_INTROSPECTION_CONTENTS);
  rclcpp::spin(node);
  return 0;
}

// A SetBool client whose calls are introspected with their contents; it calls twice (data
// true, then false) once its events have a listener.
static int introspected_client() {
  auto node = std::make_shared<rclcpp::Node>("cpp_introspected_client");
  auto client = node->create_client<std_srvs::srv::SetBool>("motor_power");
  client->configure_introspection(node->get_clock(), rclcpp::SystemDefaultsQoS(),
                                  RCL_SERVICE_INTROSPECTION_CONTENTS);
  if (!client->wait_for_service(20s)) return 1;
  for (int i = 0; i < 400 && node->count_subscribers("/motor_power/_service_event") < 1; i++)
    std::this_thread::sleep_for(50ms);
  // A moment more for the listener's side to match our event writer.
  std::this_thread::sleep_for(500ms);
  for (bool on : {true, false}) {
    auto request = std::make_shared<std_srvs::srv::SetBool::Request>();
    request->data = on;
    auto future = client->async_send_request(request);
    if (rclcpp::spin_until_future_complete(node, future, 10s) != rclcpp::FutureReturnCode::SUCCESS)
      return 2;
    auto response = future.get();
    std::printf("REPLY %d %s\n", response->success ? 1 : 0, response->message.c_str());
  }
  return 0;
}

static int param_node() {
  auto node = std::make_shared<rclcpp::Node>("cpp_params");
  node->declare_parameter("rate", 1);
  node->declare_parameter("label", std::string("none"));
  auto handle = node->add_on_set_parameters_callback(
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
  std::printf("READY\n");
  std::fflush(stdout);
  rclcpp::spin(node);
  std::printf("FINAL rate %" PRId64 " label %s\n", node->get_parameter("rate").as_int(),
              node->get_parameter("label").as_string().c_str());
  return 0;
}

// A node on simulated time (run with `--ros-args -p use_sim_time:=true`): waits for /clock,
// then prints what now() says and the Time/Duration arithmetic typical code does with it.
static int sim_time() {
  auto node = std::make_shared<rclcpp::Node>("cpp_sim_time");
  rclcpp::Clock::SharedPtr clock = node->get_clock();
  std::printf("READY before /clock %" PRId64 "\n", node->now().nanoseconds());
  std::fflush(stdout);
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (rclcpp::ok() && clock->now().nanoseconds() == 0 &&
         std::chrono::steady_clock::now() < deadline)
    rclcpp::spin_some(node);
  rclcpp::Time now = node->now();
  builtin_interfaces::msg::Time stamp = now;
  rclcpp::Time from_stamp(stamp);
  rclcpp::Duration half(0, 500000000u);
  rclcpp::Time later = now + half + rclcpp::Duration(1s);
  rclcpp::Duration elapsed = later - now;
  std::printf("SIM now %" PRId64 " ns %.3f s stamp %d.%09u back %" PRId64
              " later %.3f elapsed %.3f s %" PRId64 " ns ros %d\n",
              now.nanoseconds(), now.seconds(), int(stamp.sec), unsigned(stamp.nanosec),
              from_stamp.nanoseconds(), later.seconds(), elapsed.seconds(),
              elapsed.nanoseconds(), clock->get_clock_type() == RCL_ROS_TIME ? 1 : 0);
  return now.nanoseconds() == 0 ? 1 : 0;
}

int main(int argc, char **argv) {
  rclcpp::init(argc, argv);
  std::string which = argc > 1 ? argv[1] : "";
  int count = argc > 2 ? std::atoi(argv[2]) : 10;
  int status = 0;
  if (which == "talker") {
    rclcpp::spin(std::make_shared<MinimalPublisher>(count));
  } else if (which == "listener") {
    rclcpp::spin(std::make_shared<MinimalSubscriber>(count));
  } else if (which == "server") {
    auto node = rclcpp::Node::make_shared("add_two_ints_server");
    auto service = node->create_service<example_interfaces::srv::AddTwoInts>("add_two_ints", &add);
    rclcpp::spin(node);
  } else if (which == "client") {
    status = client(argc, argv);
  } else if (which == "chatter_talker") {
    status = chatter_talker(count);
  } else if (which == "chatter_listener") {
    status = chatter_listener(count);
  } else if (which == "motor_server") {
    status = motor_server();
  } else if (which == "motor_client") {
    status = motor_client();
  } else if (which == "introspected_server") {
    status = introspected_server();
  } else if (which == "introspected_client") {
    status = introspected_client();
  } else if (which == "param_node") {
    status = param_node();
  } else if (which == "parameters") {
    status = parameters();
  } else if (which == "sim_time") {
    status = sim_time();
  } else if (which == "multithreaded") {
    status = multithreaded();
  } else {
    status = 2;
  }
  rclcpp::shutdown();
  return status;
}
