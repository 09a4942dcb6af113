// rclcpp_lifecycle's Transition over roslite's C ABI: a transition's id (lifecycle_msgs/msg/
// Transition's TRANSITION_*) and label, as LifecycleNode::trigger_transition takes it.
#ifndef ROSLITE_RCLCPP_LIFECYCLE_TRANSITION_HPP
#define ROSLITE_RCLCPP_LIFECYCLE_TRANSITION_HPP

#include <cstdint>
#include <string>

namespace rclcpp_lifecycle {

class Transition {
 public:
  explicit Transition(uint8_t id, const std::string &label = "") : id_(id), label_(label) {}
  virtual ~Transition() = default;

  uint8_t id() const { return id_; }
  std::string label() const { return label_; }

 private:
  uint8_t id_;
  std::string label_;
};

}  // namespace rclcpp_lifecycle

#endif  // ROSLITE_RCLCPP_LIFECYCLE_TRANSITION_HPP
