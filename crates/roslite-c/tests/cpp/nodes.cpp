// rclcpp-style nodes in the patterns of ros2/examples (minimal publisher, subscriber, service,
// client, timer, parameters, multithreaded executor), built against roslite's rclcpp headers
// by ../c_abi.rs. First argument: which node.
#include <rclcpp/rclcpp.hpp>

#include "hand_written_types.hpp"

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
  } else if (which == "parameters") {
    status = parameters();
  } else if (which == "multithreaded") {
    status = multithreaded();
  } else {
    status = 2;
  }
  rclcpp::shutdown();
  return status;
}
