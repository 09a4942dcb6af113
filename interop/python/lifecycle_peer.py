"""rclpy (real ROS 2) peer for the managed-node (lifecycle) interop tests.

  lifecycle_peer.py node SECONDS
        an rclpy LifecycleNode `py_managed`: on_configure makes a lifecycle publisher on
        `chatter` and a 100 ms timer publishing "py_managed N"; prints READY once up, and
        `callback on_<name> <state>` as each callback runs (the state its transition started
        from); runs SECONDS
  lifecycle_peer.py manage NODE TOPIC
        manages the lifecycle node NODE through its services, as `ros2 lifecycle` does, while
        listening to TOPIC (std_msgs/String) and NODE/transition_event. Prints
          state <label> <id>                      after each step
          set <transition> <success>              for each change_state
          heard <phase> <count>                   messages heard on TOPIC in each phase
          available <label>:<id> ...              transitions from inactive
          event <id> <label> <start> <goal>       each transition event, at the end
        The phases: `unconfigured` (1 s), `inactive` (1 s), `active` (until 5 heard, at most
        10 s), `deactivated` (1 s after deactivation).
"""
import sys
import time


def run_node(seconds):
    name = "py_managed"
    import rclpy
    from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn
    from std_msgs.msg import String

    class Talker(LifecycleNode):
        def __init__(self):
            super().__init__(name)
            self.publisher = None
            self.timer = None
            self.count = 0

        def note(self, callback, state):
            print(f"callback {callback} {state.label}", flush=True)

        def tick(self):
            self.count += 1
            self.publisher.publish(String(data=f"{name} {self.count}"))

        def on_configure(self, state):
            self.note("on_configure", state)
            self.publisher = self.create_lifecycle_publisher(String, "chatter", 10)
            self.timer = self.create_timer(0.1, self.tick)
            return TransitionCallbackReturn.SUCCESS

        def on_activate(self, state):
            self.note("on_activate", state)
            return super().on_activate(state)

        def on_deactivate(self, state):
            self.note("on_deactivate", state)
            return super().on_deactivate(state)

        def on_cleanup(self, state):
            self.note("on_cleanup", state)
            self.destroy_timer(self.timer)
            self.destroy_lifecycle_publisher(self.publisher)
            return TransitionCallbackReturn.SUCCESS

        def on_shutdown(self, state):
            self.note("on_shutdown", state)
            return TransitionCallbackReturn.SUCCESS

    rclpy.init()
    node = Talker()
    print("READY", flush=True)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.1)


def manage(target, topic):
    import rclpy
    from lifecycle_msgs.msg import Transition, TransitionEvent
    from lifecycle_msgs.srv import ChangeState, GetAvailableTransitions, GetState
    from std_msgs.msg import String

    rclpy.init()
    node = rclpy.create_node("py_lifecycle_manager")
    heard = []
    events = []
    node.create_subscription(String, topic, lambda m: heard.append(m.data), 10)
    node.create_subscription(
        TransitionEvent, target + "/transition_event", events.append, 10)
    get_state = node.create_client(GetState, target + "/get_state")
    change = node.create_client(ChangeState, target + "/change_state")
    available = node.create_client(
        GetAvailableTransitions, target + "/get_available_transitions")
    for client in (get_state, change, available):
        if not client.wait_for_service(timeout_sec=20.0):
            print(f"no service {client.srv_name}", flush=True)
            sys.exit(1)

    def call(client, request):
        future = client.call_async(request)
        rclpy.spin_until_future_complete(node, future, timeout_sec=10.0)
        if future.result() is None:
            print(f"no answer from {client.srv_name}", flush=True)
            sys.exit(1)
        return future.result()

    def state():
        s = call(get_state, GetState.Request()).current_state
        print(f"state {s.label} {s.id}", flush=True)

    def set_(label):
        # As `ros2 lifecycle set` sends it: the label (the id left 0).
        ok = call(change, ChangeState.Request(transition=Transition(label=label))).success
        print(f"set {label} {ok}", flush=True)

    def phase(name, seconds, enough=None):
        start = len(heard)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.05)
            if enough is not None and len(heard) - start >= enough:
                break
        print(f"heard {name} {len(heard) - start}", flush=True)

    # Let the subscriptions match before anything is published.
    time.sleep(1.0)
    state()
    phase("unconfigured", 1.0)
    set_("configure")
    state()
    transitions = call(available, GetAvailableTransitions.Request()).available_transitions
    print("available " + " ".join(
        f"{t.transition.label}:{t.transition.id}" for t in transitions), flush=True)
    phase("inactive", 1.0)
    set_("activate")
    state()
    phase("active", 10.0, enough=5)
    set_("deactivate")
    state()
    # Messages already on their way when it deactivated may still arrive: let them, then count.
    phase("draining", 0.5)
    phase("deactivated", 1.0)
    set_("activate-nonexistent")
    set_("shutdown")
    state()
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.05)
    for e in events:
        print(f"event {e.transition.id} {e.transition.label} "
              f"{e.start_state.label} {e.goal_state.label}", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "node":
        run_node(float(sys.argv[2]))
    elif sys.argv[1] == "manage":
        manage(sys.argv[2], sys.argv[3])
    else:
        sys.exit(f"unknown mode {sys.argv[1]}")
