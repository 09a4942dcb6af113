// rclcpp_lifecycle's LifecyclePublisher over roslite's C ABI: an rclcpp::Publisher that sends
// only while its node is active (roslite_lifecycle_publisher_create). Made by
// rclcpp_lifecycle::LifecycleNode::create_publisher.
//
// rclcpp activates a node's publishers in LifecycleNode::on_activate, which an override must
// remember to call; roslite's node activates them itself on entering activating and
// deactivates them on leaving active. So on_activate() and on_deactivate() here have nothing
// left to do: code that calls them compiles and behaves as on rclcpp.
#ifndef ROSLITE_RCLCPP_LIFECYCLE_LIFECYCLE_PUBLISHER_HPP
#define ROSLITE_RCLCPP_LIFECYCLE_LIFECYCLE_PUBLISHER_HPP

#include <rclcpp/rclcpp.hpp>

#include <memory>
#include <string>

namespace rclcpp_lifecycle {

// An entity a lifecycle node activates and deactivates.
class ManagedEntityInterface {
 public:
  virtual ~ManagedEntityInterface() = default;
  virtual void on_activate() = 0;
  virtual void on_deactivate() = 0;
};

template <class T>
class LifecyclePublisher : public ManagedEntityInterface, public rclcpp::Publisher<T> {
 public:
  using SharedPtr = std::shared_ptr<LifecyclePublisher<T>>;

  // A publisher of the lifecycle node `lifecycle_node` (a roslite lifecycle node handle).
  LifecyclePublisher(roslite_handle lifecycle_node, const std::string &topic,
                     const rclcpp::QoS &qos)
      : rclcpp::Publisher<T>(create(lifecycle_node, topic, qos), topic) {}

  void on_activate() override {}
  void on_deactivate() override {}
  bool is_activated() const {
    bool activated = false;
    rclcpp::detail::check(
        roslite_lifecycle_publisher_is_activated(this->publisher_handle(), &activated),
        "is_activated");
    return activated;
  }

 private:
  static rclcpp::detail::Handle create(roslite_handle lifecycle_node, const std::string &topic,
                                       const rclcpp::QoS &qos) {
    roslite_type type = rclcpp::detail::type_of<T>();
    roslite_handle h = 0;
    rclcpp::detail::check(roslite_lifecycle_publisher_create(lifecycle_node, topic.c_str(), &type,
                                                             &qos.get_roslite_qos(), &h),
                          "create_publisher");
    return rclcpp::detail::Handle(h);
  }
};

}  // namespace rclcpp_lifecycle

#endif  // ROSLITE_RCLCPP_LIFECYCLE_LIFECYCLE_PUBLISHER_HPP
