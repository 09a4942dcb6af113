// rclcpp_lifecycle's LifecycleNode over roslite's C ABI (roslite_lifecycle_node_create), header-
// only: managed nodes written for rclcpp_lifecycle (a LifecycleNode subclass overriding
// on_configure, on_activate, ... and spun through get_node_base_interface()) compile unchanged
// and are managed by `ros2 lifecycle`, launch and rclpy as rclcpp ones are.
//
// A LifecycleNode is an rclcpp::Node (every Node method is there, as rclcpp_lifecycle offers
// them) with ROS 2's default lifecycle state machine, its five services and its
// ~/transition_event publisher. Differences from rclcpp_lifecycle a node may notice:
// - publishers from create_publisher are activated by the node itself on entering activating
//   and deactivated on leaving active, whether or not an override calls the base on_activate
//   or on_deactivate (which are kept, and succeed) or the publishers' on_activate();
// - get_current_state() and the transition calls return the State by value;
// - destroying a node that is not finalized while the context runs shuts it down, as rclcpp's
//   does since Jazzy; as there, a subclass is already destroyed by then, so the base's
//   on_shutdown runs, not the subclass's (call shutdown() first to run yours).
//
// Needs the generated C++ types of lifecycle_msgs on the include path (`roslite interface
// generate --lang cpp --out DIR lifecycle_msgs`, or --builtin), as rclcpp_lifecycle's header
// includes them.
#ifndef ROSLITE_RCLCPP_LIFECYCLE_LIFECYCLE_NODE_HPP
#define ROSLITE_RCLCPP_LIFECYCLE_LIFECYCLE_NODE_HPP

#include <rclcpp/rclcpp.hpp>
#include <rclcpp_lifecycle/lifecycle_publisher.hpp>
#include <rclcpp_lifecycle/node_interfaces/lifecycle_node_interface.hpp>
#include <rclcpp_lifecycle/state.hpp>
#include <rclcpp_lifecycle/transition.hpp>

#if !__has_include("lifecycle_msgs/msg/state.hpp")
#error "rclcpp_lifecycle needs the generated C++ types of lifecycle_msgs: run `roslite \
interface generate --lang cpp --out DIR lifecycle_msgs` and put DIR on the include path"
#endif
#include "lifecycle_msgs/msg/state.hpp"
#include "lifecycle_msgs/msg/transition.hpp"
#include "lifecycle_msgs/msg/transition_description.hpp"
#include "lifecycle_msgs/msg/transition_event.hpp"
#include "lifecycle_msgs/srv/change_state.hpp"
#include "lifecycle_msgs/srv/get_available_states.hpp"
#include "lifecycle_msgs/srv/get_available_transitions.hpp"
#include "lifecycle_msgs/srv/get_state.hpp"

#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace rclcpp_lifecycle {

class LifecycleNode : public rclcpp::Node, public node_interfaces::LifecycleNodeInterface {
 public:
  using SharedPtr = std::shared_ptr<LifecycleNode>;
  using ConstSharedPtr = std::shared_ptr<const LifecycleNode>;
  using WeakPtr = std::weak_ptr<LifecycleNode>;
  using CallbackReturn = node_interfaces::LifecycleNodeInterface::CallbackReturn;
  using Callback = std::function<CallbackReturn(const State &)>;

  template <class... Args>
  static SharedPtr make_shared(Args &&...args) {
    return std::make_shared<LifecycleNode>(std::forward<Args>(args)...);
  }

  explicit LifecycleNode(const std::string &node_name,
                         const rclcpp::NodeOptions &options = rclcpp::NodeOptions(),
                         bool enable_communication_interface = true)
      : LifecycleNode(node_name, "", options, enable_communication_interface) {}
  LifecycleNode(const std::string &node_name, const std::string &namespace_,
                const rclcpp::NodeOptions &options = rclcpp::NodeOptions(),
                bool /* enable_communication_interface: the services always run */ = true)
      : rclcpp::Node(node_name, namespace_, options) {
    // Bound to the virtual methods, as the register_on_* functions replace them.
    callbacks_[slot(ROSLITE_LIFECYCLE_STATE_CONFIGURING)] = [this](const State &s) {
      return on_configure(s);
    };
    callbacks_[slot(ROSLITE_LIFECYCLE_STATE_CLEANINGUP)] = [this](const State &s) {
      return on_cleanup(s);
    };
    callbacks_[slot(ROSLITE_LIFECYCLE_STATE_SHUTTINGDOWN)] = [this](const State &s) {
      return on_shutdown(s);
    };
    callbacks_[slot(ROSLITE_LIFECYCLE_STATE_ACTIVATING)] = [this](const State &s) {
      return on_activate(s);
    };
    callbacks_[slot(ROSLITE_LIFECYCLE_STATE_DEACTIVATING)] = [this](const State &s) {
      return on_deactivate(s);
    };
    callbacks_[slot(ROSLITE_LIFECYCLE_STATE_ERRORPROCESSING)] = [this](const State &s) {
      return on_error(s);
    };
    roslite_handle h = 0;
    rclcpp::detail::check(
        roslite_lifecycle_node_create(get_roslite_handle(), &LifecycleNode::dispatch, this, &h),
        "creating the lifecycle node");
    lifecycle_ = rclcpp::detail::Handle(h);
  }

  // Shuts the node down now (unless it is finalized or the context was shut down), while this
  // base is whole: see the header's comment.
  ~LifecycleNode() override { lifecycle_ = rclcpp::detail::Handle(); }

  // shared_from_this() of a LifecycleNode is one, as in rclcpp_lifecycle.
  SharedPtr shared_from_this() {
    return std::static_pointer_cast<LifecycleNode>(rclcpp::Node::shared_from_this());
  }
  ConstSharedPtr shared_from_this() const {
    return std::static_pointer_cast<const LifecycleNode>(rclcpp::Node::shared_from_this());
  }

  // A publisher that sends only while the node is active.
  template <class T>
  std::shared_ptr<LifecyclePublisher<T>> create_publisher(
      const std::string &topic, const rclcpp::QoS &qos,
      const rclcpp::PublisherOptions & = rclcpp::PublisherOptions()) {
    return std::make_shared<LifecyclePublisher<T>>(lifecycle_.get(), topic, qos);
  }

  // The base callbacks an override may call: the node's publishers are activated and
  // deactivated already, so they only succeed.
  CallbackReturn on_activate(const State &) override { return CallbackReturn::SUCCESS; }
  CallbackReturn on_deactivate(const State &) override { return CallbackReturn::SUCCESS; }

  // Runs `callback` for a transition instead of the virtual method.
  bool register_on_configure(Callback callback) {
    return keep(ROSLITE_LIFECYCLE_STATE_CONFIGURING, std::move(callback));
  }
  bool register_on_cleanup(Callback callback) {
    return keep(ROSLITE_LIFECYCLE_STATE_CLEANINGUP, std::move(callback));
  }
  bool register_on_shutdown(Callback callback) {
    return keep(ROSLITE_LIFECYCLE_STATE_SHUTTINGDOWN, std::move(callback));
  }
  bool register_on_activate(Callback callback) {
    return keep(ROSLITE_LIFECYCLE_STATE_ACTIVATING, std::move(callback));
  }
  bool register_on_deactivate(Callback callback) {
    return keep(ROSLITE_LIFECYCLE_STATE_DEACTIVATING, std::move(callback));
  }
  bool register_on_error(Callback callback) {
    return keep(ROSLITE_LIFECYCLE_STATE_ERRORPROCESSING, std::move(callback));
  }

  // The state the node is in (a transition state while a transition's callback runs).
  State get_current_state() const {
    uint8_t id = ROSLITE_LIFECYCLE_STATE_UNKNOWN;
    rclcpp::detail::check(roslite_lifecycle_node_state(lifecycle_.get(), &id),
                          "get_current_state");
    return State(id, detail::state_label(id));
  }

  // Each runs its transition and returns the primary state the node rests in afterwards. A
  // transition that cannot start from the current state is logged and leaves the node where it
  // is, as in rclcpp; `cb_return_code` then says ERROR.
  State configure() { return run_transition(ROSLITE_LIFECYCLE_TRANSITION_CONFIGURE, nullptr); }
  State configure(CallbackReturn &cb_return_code) {
    return run_transition(ROSLITE_LIFECYCLE_TRANSITION_CONFIGURE, nullptr, &cb_return_code);
  }
  State cleanup() { return run_transition(ROSLITE_LIFECYCLE_TRANSITION_CLEANUP, nullptr); }
  State cleanup(CallbackReturn &cb_return_code) {
    return run_transition(ROSLITE_LIFECYCLE_TRANSITION_CLEANUP, nullptr, &cb_return_code);
  }
  State activate() { return run_transition(ROSLITE_LIFECYCLE_TRANSITION_ACTIVATE, nullptr); }
  State activate(CallbackReturn &cb_return_code) {
    return run_transition(ROSLITE_LIFECYCLE_TRANSITION_ACTIVATE, nullptr, &cb_return_code);
  }
  State deactivate() { return run_transition(ROSLITE_LIFECYCLE_TRANSITION_DEACTIVATE, nullptr); }
  State deactivate(CallbackReturn &cb_return_code) {
    return run_transition(ROSLITE_LIFECYCLE_TRANSITION_DEACTIVATE, nullptr, &cb_return_code);
  }
  // From whichever primary state the node is in.
  State shutdown() { return run_transition(0, "shutdown"); }
  State shutdown(CallbackReturn &cb_return_code) {
    return run_transition(0, "shutdown", &cb_return_code);
  }
  State trigger_transition(uint8_t transition_id) { return run_transition(transition_id, nullptr); }
  State trigger_transition(uint8_t transition_id, CallbackReturn &cb_return_code) {
    return run_transition(transition_id, nullptr, &cb_return_code);
  }
  State trigger_transition(const Transition &transition) {
    return trigger_transition(transition.id());
  }
  State trigger_transition(const Transition &transition, CallbackReturn &cb_return_code) {
    return trigger_transition(transition.id(), cb_return_code);
  }

  // The roslite lifecycle node handle (roslite_lifecycle_node_*).
  roslite_handle get_roslite_lifecycle_handle() const { return lifecycle_.get(); }

 private:
  static constexpr size_t kCallbacks = 6;
  // Where the callback of transition state `state` (10 to 15) is kept.
  static constexpr size_t slot(uint8_t state) {
    return size_t(state - ROSLITE_LIFECYCLE_STATE_CONFIGURING);
  }

  bool keep(uint8_t state, Callback callback) {
    callbacks_[slot(state)] = std::move(callback);
    return true;
  }

  State run_transition(uint8_t id, const char *label, CallbackReturn *cb_return_code = nullptr) {
    uint8_t state = ROSLITE_LIFECYCLE_STATE_UNKNOWN;
    uint8_t answer = ROSLITE_LIFECYCLE_CALLBACK_ERROR;
    roslite_status status =
        roslite_lifecycle_node_trigger(lifecycle_.get(), id, label, &state, &answer);
    if (status == ROSLITE_INVALID_TRANSITION) {
      RCLCPP_ERROR(get_logger(), "%s", roslite_last_error());
      if (cb_return_code) *cb_return_code = CallbackReturn::ERROR;
      return get_current_state();
    }
    rclcpp::detail::check(status, "trigger_transition");
    if (cb_return_code) *cb_return_code = CallbackReturn(answer);
    return State(state, detail::state_label(state));
  }

  // The C callback: runs the callback of `transition_state`. An exception counts as ERROR, as
  // rclcpp counts it, and never reaches roslite.
  static uint8_t dispatch(void *user, uint8_t transition_state, uint8_t previous_state) {
    auto *self = static_cast<LifecycleNode *>(user);
    if (transition_state < ROSLITE_LIFECYCLE_STATE_CONFIGURING ||
        slot(transition_state) >= kCallbacks || !self->callbacks_[slot(transition_state)])
      return ROSLITE_LIFECYCLE_CALLBACK_SUCCESS;
    State previous(previous_state, detail::state_label(previous_state));
#if defined(__wasi__)
    // No exceptions on Wasm: a throw ends the node.
    return uint8_t(self->callbacks_[slot(transition_state)](previous));
#else
    try {
      return uint8_t(self->callbacks_[slot(transition_state)](previous));
    } catch (const std::exception &e) {
      RCLCPP_ERROR(self->get_logger(),
                   "the callback of lifecycle state '%s' threw: %s; the transition ends in an "
                   "error",
                   detail::state_label(transition_state).c_str(), e.what());
    } catch (...) {
      RCLCPP_ERROR(self->get_logger(),
                   "the callback of lifecycle state '%s' threw; the transition ends in an error",
                   detail::state_label(transition_state).c_str());
    }
    return ROSLITE_LIFECYCLE_CALLBACK_ERROR;
#endif
  }

  Callback callbacks_[kCallbacks];
  rclcpp::detail::Handle lifecycle_;
};

}  // namespace rclcpp_lifecycle

#endif  // ROSLITE_RCLCPP_LIFECYCLE_LIFECYCLE_NODE_HPP
