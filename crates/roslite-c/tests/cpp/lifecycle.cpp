// Managed nodes written against roslite's rclcpp_lifecycle headers, driven by ../cpp_api.rs and
// ../cpp_rclpy.rs. First argument: which.
//
//   lifecycle talker [throw-once]   a node in the shape of the ROS 2 demos' lifecycle_talker,
//                                   managed from outside (rclpy); with throw-once its first
//                                   on_configure throws
//   lifecycle self                  the node managed from its own code, printing each outcome
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "lifecycle_msgs/msg/transition.hpp"

#include "rclcpp/publisher.hpp"
#include "rclcpp/rclcpp.hpp"

#include "rclcpp_lifecycle/lifecycle_node.hpp"
#include "rclcpp_lifecycle/lifecycle_publisher.hpp"

#include "std_msgs/msg/string.hpp"

using namespace std::chrono_literals;
using CallbackReturn = rclcpp_lifecycle::node_interfaces::LifecycleNodeInterface::CallbackReturn;

// Publishes a numbered greeting every 100 ms once configured; its publisher sends only while
// the node is active, which the timer reports either way.
class ManagedTalker : public rclcpp_lifecycle::LifecycleNode {
 public:
  explicit ManagedTalker(const std::string &node_name, bool throw_once = false,
                         bool intra_process_comms = false)
      : rclcpp_lifecycle::LifecycleNode(
            node_name, rclcpp::NodeOptions().use_intra_process_comms(intra_process_comms)),
        throw_once_(throw_once) {}

  void publish() {
    auto message = std::make_unique<std_msgs::msg::String>();
    message->data = "managed greeting #" + std::to_string(++count_);
    if (!publisher_->is_activated()) {
      RCLCPP_INFO(get_logger(), "publisher inactive: '%s' is not sent", message->data.c_str());
    } else {
      RCLCPP_INFO(get_logger(), "publisher active: sending '%s'", message->data.c_str());
    }
    publisher_->publish(std::move(message));
  }

  CallbackReturn on_configure(const rclcpp_lifecycle::State &previous) override {
    if (throw_once_) {
      throw_once_ = false;
      throw std::runtime_error("the device is not ready yet");
    }
    publisher_ = this->create_publisher<std_msgs::msg::String>("managed_chatter", 10);
    timer_ = this->create_wall_timer(100ms, [this]() { publish(); });
    RCUTILS_LOG_INFO_NAMED(get_name(), "on_configure() from %s", previous.label().c_str());
    return CallbackReturn::SUCCESS;
  }

  CallbackReturn on_activate(const rclcpp_lifecycle::State &state) override {
    rclcpp_lifecycle::LifecycleNode::on_activate(state);
    publisher_->on_activate();
    RCUTILS_LOG_INFO_NAMED(get_name(), "on_activate() from %s", state.label().c_str());
    return CallbackReturn::SUCCESS;
  }

  CallbackReturn on_deactivate(const rclcpp_lifecycle::State &state) override {
    rclcpp_lifecycle::LifecycleNode::on_deactivate(state);
    RCUTILS_LOG_INFO_NAMED(get_name(), "on_deactivate() from %s", state.label().c_str());
    return CallbackReturn::SUCCESS;
  }

  CallbackReturn on_cleanup(const rclcpp_lifecycle::State &state) override {
    timer_.reset();
    publisher_.reset();
    RCUTILS_LOG_INFO_NAMED(get_name(), "on_cleanup() from %s", state.label().c_str());
    return CallbackReturn::SUCCESS;
  }

  CallbackReturn on_shutdown(const rclcpp_lifecycle::State &state) override {
    timer_.reset();
    publisher_.reset();
    RCUTILS_LOG_INFO_NAMED(get_name(), "on_shutdown() from %s", state.label().c_str());
    std::printf("SHUTDOWN from %s\n", state.label().c_str());
    std::fflush(stdout);
    return CallbackReturn::SUCCESS;
  }

  CallbackReturn on_error(const rclcpp_lifecycle::State &state) override {
    RCUTILS_LOG_WARN_NAMED(get_name(), "on_error() from %s", state.label().c_str());
    std::printf("ERROR handled from %s\n", state.label().c_str());
    std::fflush(stdout);
    return CallbackReturn::SUCCESS;
  }

  bool publisher_activated() const { return publisher_ && publisher_->is_activated(); }

 private:
  std::shared_ptr<rclcpp_lifecycle::LifecyclePublisher<std_msgs::msg::String>> publisher_;
  std::shared_ptr<rclcpp::TimerBase> timer_;
  size_t count_ = 0;
  bool throw_once_;
};

static int talker(bool throw_once) {
  rclcpp::executors::SingleThreadedExecutor executor;
  auto node = std::make_shared<ManagedTalker>("lc_talker", throw_once);
  executor.add_node(node->get_node_base_interface());
  std::printf("READY %s\n", node->get_current_state().label().c_str());
  std::fflush(stdout);
  executor.spin();
  return 0;
}

// Runs `transition` (which fills in its callback's result) and prints where it left the node.
template <class F>
static rclcpp_lifecycle::State step(const char *what, F transition) {
  CallbackReturn result = CallbackReturn::ERROR;
  rclcpp_lifecycle::State state = transition(result);
  std::printf("%s: %s (%d) result %d\n", what, state.label().c_str(), int(state.id()),
              int(result));
  return state;
}

// A node whose on_activate throws on request, to show that an exception is an error.
class Flaky : public rclcpp_lifecycle::LifecycleNode {
 public:
  Flaky() : rclcpp_lifecycle::LifecycleNode("flaky", "/checks") {}
  bool throw_in_activate = true;
  CallbackReturn on_activate(const rclcpp_lifecycle::State &) override {
    if (throw_in_activate) throw 7;  // not even a std::exception
    return CallbackReturn::SUCCESS;
  }
};

static int self_managed() {
  using rclcpp_lifecycle::Transition;
  using lifecycle_msgs::msg::State;
  auto node = std::make_shared<ManagedTalker>("self_talker");
  rclcpp_lifecycle::State start = node->get_current_state();
  std::printf("start: %s (%d)\n", start.label().c_str(), int(start.id()));
  step("configure", [&](CallbackReturn &r) { return node->configure(r); });
  std::printf("publisher activated %d\n", int(node->publisher_activated()));
  auto active = step("activate by Transition", [&](CallbackReturn &r) {
    return node->trigger_transition(
        Transition(lifecycle_msgs::msg::Transition::TRANSITION_ACTIVATE), r);
  });
  std::printf("publisher activated %d, primary active %d\n", int(node->publisher_activated()),
              int(active.id() == State::PRIMARY_STATE_ACTIVE));
  step("configure again", [&](CallbackReturn &r) { return node->configure(r); });
  step("deactivate", [&](CallbackReturn &r) { return node->deactivate(r); });
  std::printf("publisher activated %d\n", int(node->publisher_activated()));
  step("cleanup by id", [&](CallbackReturn &r) {
    return node->trigger_transition(lifecycle_msgs::msg::Transition::TRANSITION_CLEANUP, r);
  });

  // A registered callback replaces the virtual one; a base LifecycleNode has no subclass.
  auto plain = rclcpp_lifecycle::LifecycleNode::make_shared("plain", "/checks");
  plain->register_on_configure([](const rclcpp_lifecycle::State &) {
    std::printf("registered on_configure ran\n");
    return CallbackReturn::FAILURE;
  });
  step("plain configure", [&](CallbackReturn &r) { return plain->configure(r); });
  std::shared_ptr<rclcpp_lifecycle::LifecycleNode> same = plain->shared_from_this();
  std::printf("shared_from_this is the node %d\n", int(same == plain));

  auto flaky = std::make_shared<Flaky>();
  flaky->configure();
  step("flaky activate", [&](CallbackReturn &r) { return flaky->activate(r); });
  flaky->throw_in_activate = false;
  flaky->configure();
  step("flaky activate again", [&](CallbackReturn &r) { return flaky->activate(r); });
  step("flaky shutdown", [&](CallbackReturn &r) { return flaky->shutdown(r); });

  step("shutdown", [&](CallbackReturn &r) { return node->shutdown(r); });
  return 0;
}

int main(int argc, char **argv) {
  std::setvbuf(stdout, nullptr, _IONBF, BUFSIZ);
  rclcpp::init(argc, argv);
  std::string mode = argc > 1 ? argv[1] : "";
  int status = 2;
  if (mode == "talker")
    status = talker(argc > 2 && std::string(argv[2]) == "throw-once");
  else if (mode == "self")
    status = self_managed();
  rclcpp::shutdown();
  return status;
}
