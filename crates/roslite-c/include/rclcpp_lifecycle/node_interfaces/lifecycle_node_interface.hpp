// rclcpp_lifecycle's LifecycleNodeInterface over roslite's C ABI: the six transition callbacks
// a managed node overrides, each given the primary state its transition started from, and what
// they answer. Every default succeeds, as rclcpp's do.
#ifndef ROSLITE_RCLCPP_LIFECYCLE_NODE_INTERFACES_LIFECYCLE_NODE_INTERFACE_HPP
#define ROSLITE_RCLCPP_LIFECYCLE_NODE_INTERFACES_LIFECYCLE_NODE_INTERFACE_HPP

#include <roslite/roslite.h>
#include <rclcpp_lifecycle/state.hpp>

#include <cstdint>

namespace rclcpp_lifecycle {
namespace node_interfaces {

class LifecycleNodeInterface {
 public:
  // lifecycle_msgs/msg/Transition's TRANSITION_CALLBACK_* ids.
  enum class CallbackReturn : uint8_t {
    SUCCESS = ROSLITE_LIFECYCLE_CALLBACK_SUCCESS,
    FAILURE = ROSLITE_LIFECYCLE_CALLBACK_FAILURE,
    ERROR = ROSLITE_LIFECYCLE_CALLBACK_ERROR,
  };

  virtual ~LifecycleNodeInterface() = default;

  // unconfigured -> inactive.
  virtual CallbackReturn on_configure(const State &) { return CallbackReturn::SUCCESS; }
  // inactive -> unconfigured.
  virtual CallbackReturn on_cleanup(const State &) { return CallbackReturn::SUCCESS; }
  // Any primary state but finalized -> finalized.
  virtual CallbackReturn on_shutdown(const State &) { return CallbackReturn::SUCCESS; }
  // inactive -> active.
  virtual CallbackReturn on_activate(const State &) { return CallbackReturn::SUCCESS; }
  // active -> inactive.
  virtual CallbackReturn on_deactivate(const State &) { return CallbackReturn::SUCCESS; }
  // After a callback answered ERROR (or threw): SUCCESS returns the node to unconfigured,
  // anything else finalizes it.
  virtual CallbackReturn on_error(const State &) { return CallbackReturn::SUCCESS; }

 protected:
  LifecycleNodeInterface() = default;
};

}  // namespace node_interfaces
}  // namespace rclcpp_lifecycle

#endif  // ROSLITE_RCLCPP_LIFECYCLE_NODE_INTERFACES_LIFECYCLE_NODE_INTERFACE_HPP
