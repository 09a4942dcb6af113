"""rclpy (real ROS 2) manager of a C++ managed node, for the C++ API's lifecycle interop test:
drives the node through its lifecycle services as `ros2 lifecycle` and launch do, counts what
it publishes while it rests in each state, and records the transition events it sends.

Usage: cpp_lifecycle_manager.py <node> <topic> <seconds>. Prints `STATE <label>` for each
get_state answer, `CHANGE <transition> <success>` for each change_state, `HEARD <state> <n>`
for the messages heard on <topic> while the node was in <state>, then `EVENT <start>
<transition> <goal>` for each transition event in the order they came, then DONE. Exits 1,
printing FAILED and why, if the node does not answer."""
import sys
import time

import rclpy
from lifecycle_msgs.msg import Transition, TransitionEvent
from lifecycle_msgs.srv import ChangeState, GetState
from std_msgs.msg import String

target, topic, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
deadline = time.monotonic() + seconds
rclpy.init()
node = rclpy.create_node("py_lifecycle_manager")
heard = []
events = []
node.create_subscription(String, topic, lambda m: heard.append(m.data), 10)
node.create_subscription(TransitionEvent, f"{target}/transition_event", events.append, 10)
get_state = node.create_client(GetState, f"{target}/get_state")
change_state = node.create_client(ChangeState, f"{target}/change_state")


def left():
    return max(0.1, deadline - time.monotonic())


def fail(why):
    print("FAILED", why, flush=True)
    sys.exit(1)


def call(client, request, what):
    future = client.call_async(request)
    rclpy.spin_until_future_complete(node, future, timeout_sec=left())
    if not future.done() or future.result() is None:
        fail(f"no answer to {what}")
    return future.result()


def state():
    label = call(get_state, GetState.Request(), "get_state").current_state.label
    print("STATE", label, flush=True)
    return label


def change(label="", transition_id=0):
    request = ChangeState.Request()
    request.transition = Transition(id=transition_id, label=label)
    success = call(change_state, request, f"change_state {label or transition_id}").success
    print("CHANGE", label or transition_id, success, flush=True)


def listen(seconds):
    """Spins for `seconds`; how many messages came meanwhile."""
    before = len(heard)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.05)
    return len(heard) - before


def wait_for_publisher(name):
    while node.count_publishers(name) == 0:
        if time.monotonic() > deadline:
            fail(f"no publisher of {name} appeared")
        rclpy.spin_once(node, timeout_sec=0.05)
    # Its side discovers this node's subscription a moment later.
    listen(1.0)


for client in (get_state, change_state):
    if not client.wait_for_service(timeout_sec=left()):
        fail(f"{client.srv_name} never appeared")
wait_for_publisher(f"{target}/transition_event")

state()
change("configure")  # its first on_configure throws
state()
change("configure")
state()
wait_for_publisher(topic)
print("HEARD inactive", listen(1.5), flush=True)
change(transition_id=Transition.TRANSITION_ACTIVATE)
state()
active = 0
while active < 5 and time.monotonic() < deadline:
    active += listen(0.2)
print("HEARD active", active, flush=True)
change("deactivate")
state()
listen(0.5)  # what was under way when it deactivated
print("HEARD inactive", listen(1.5), flush=True)
change("shutdown")
state()
listen(0.5)
for event in events:
    print("EVENT", event.start_state.label, event.transition.label, event.goal_state.label)
print("DONE", flush=True)
node.destroy_node()
rclpy.shutdown()
