// rclcpp_lifecycle's State over roslite's C ABI: a lifecycle state's id (lifecycle_msgs/msg/
// State's PRIMARY_STATE_* and TRANSITION_STATE_*) and its label. Part of the rclcpp_lifecycle
// API of rclcpp_lifecycle/lifecycle_node.hpp.
#ifndef ROSLITE_RCLCPP_LIFECYCLE_STATE_HPP
#define ROSLITE_RCLCPP_LIFECYCLE_STATE_HPP

#include <roslite/roslite.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace rclcpp_lifecycle {

namespace detail {
// The label roslite gives state `id` ("unconfigured", ...); "" for an id that is no state.
inline std::string state_label(uint8_t id) {
  char label[32];
  size_t length = 0;
  if (roslite_lifecycle_state_label(id, label, sizeof label, &length) != ROSLITE_OK) return "";
  return std::string(label, length);
}
}  // namespace detail

class State {
 public:
  State()
      : State(ROSLITE_LIFECYCLE_STATE_UNKNOWN,
              detail::state_label(ROSLITE_LIFECYCLE_STATE_UNKNOWN)) {}
  State(uint8_t id, const std::string &label) : id_(id), label_(label) {}
  virtual ~State() = default;

  uint8_t id() const { return id_; }
  std::string label() const { return label_; }

 private:
  uint8_t id_;
  std::string label_;
};

}  // namespace rclcpp_lifecycle

#endif  // ROSLITE_RCLCPP_LIFECYCLE_STATE_HPP
